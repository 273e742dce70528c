package lanai

import (
	"fmt"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// sendEngine is the send DMA engine: it reads a packet from SRAM in bursts
// and puts it on the link flit by flit, the source route on the head, as
// fast as the link takes it; when it has handed the tail flit to the link
// (the packet's bytes are all out of SRAM) it raises SendDone.
type sendEngine struct {
	*clock.Ticking
	card      *Card
	port      *mem.Channel
	out       *link.Dir
	flitBytes int

	jobs    queue.Queue[sendJob]
	cur     *sendJob
	reqOff  int    // bytes requested from SRAM
	data    []byte // the packet's bytes read so far (a fresh array per packet: flits keep slices of it)
	sentOff int
	seq     int
	nextID  uint64

	packets, bytes uint64
	sigState       *waves.Signal
	sigQueue       *waves.Signal
}

type sendJob struct {
	pkt   firmware.Packet
	route []byte
	id    uint64
}

func newSendEngine(c *Card, name string, clk clock.Clock, flitBytes int) *sendEngine {
	s := &sendEngine{card: c, port: c.sram.Port(portSend), flitBytes: flitBytes}
	s.Ticking = clock.NewTicking(name, c.env.Engine, clk, s)
	s.port.ConnectMaster(s)
	s.sigState = c.env.Waves.String(name, "state")
	s.sigState.SetString(0, "IDLE")
	s.sigQueue = c.env.Waves.Integer(name, "queued", 8)
	return s
}

func (s *sendEngine) connect(out *link.Dir) {
	s.out = out
	out.SetSender(s)
}

func (s *sendEngine) free() int { return s.card.cfg.SendQueue - s.jobs.Len() }

func (s *sendEngine) submit(now clock.Time, p firmware.Packet, route []byte) {
	if s.free() <= 0 {
		s.card.env.Report(now, s.Name(), "ni.send", "packet to %d submitted while the send engine is full", p.Dst)
		return
	}
	if p.Len < 1 {
		s.card.env.Report(now, s.Name(), "ni.send", "empty packet to %d", p.Dst)
		return
	}
	s.nextID++
	s.jobs.Push(sendJob{pkt: p, route: route, id: uint64(s.card.node)<<40 | s.nextID})
	s.sigQueue.Set(now, uint64(s.jobs.Len()))
	s.Wake(now)
}

// Tick implements clock.Ticker: send a flit, take read data, request the
// next burst, start the next packet.
func (s *sendEngine) Tick(now clock.Time) bool {
	progress := false
	if s.cur != nil && len(s.data) > s.sentOff && s.out.CanSend(now, 0) {
		left := s.cur.pkt.Len - s.sentOff
		n := min(s.flitBytes, left)
		if len(s.data)-s.sentOff >= n {
			end := s.sentOff + n
			f := link.Flit{Packet: s.cur.id, Seq: s.seq, Head: s.sentOff == 0, Tail: n == left,
				Src: s.card.node, Dst: s.cur.pkt.Dst, Data: s.data[s.sentOff:end:end], Size: s.flitBytes, Stamp: now}
			if f.Head {
				f.Route = s.cur.route
			}
			s.out.Send(now, f)
			s.sentOff += n
			s.seq++
			progress = true
			if f.Tail {
				s.finish(now)
			}
		}
	}
	for {
		b, ok := s.port.Up.Pop(now)
		if !ok {
			break
		}
		s.data = append(s.data, b.Data...)
		progress = true
	}
	if s.cur != nil && s.reqOff < s.cur.pkt.Len && s.reqOff-s.sentOff < 2*s.card.cfg.NetBurst && s.port.Down.CanPush(now) {
		addr := uint64(s.cur.pkt.SRAM) + uint64(s.reqOff)
		burst := uint64(s.card.cfg.NetBurst)
		n := min(int(burst-addr%burst), s.cur.pkt.Len-s.reqOff)
		s.port.Down.Push(now, mem.Beat{Req: &mem.Req{Op: mem.Read, Addr: addr, Len: n, Class: "senddma", Master: s.Name()}, First: true, Last: true})
		s.reqOff += n
		progress = true
	}
	if s.cur == nil && s.jobs.Len() > 0 {
		j := s.jobs.Pop()
		s.cur = &j
		s.reqOff, s.sentOff, s.seq, s.data = 0, 0, 0, make([]byte, 0, j.pkt.Len)
		s.sigState.SetString(now, "SEND")
		s.sigQueue.Set(now, uint64(s.jobs.Len()))
		progress = true
	}
	if s.cur != nil && !progress {
		// Waiting for SRAM data (the memory wakes us) or for the link
		// (its credit return wakes us); a busy serialiser needs a timer.
		if !s.out.Idle(now) {
			s.WakeAt(s.out.BusyUntil())
		}
	}
	return progress
}

func (s *sendEngine) finish(now clock.Time) {
	p := s.cur.pkt
	s.packets++
	s.bytes += uint64(p.Len)
	if s.card.env.Trace.Enabled() {
		s.card.env.Trace.Emit(now, s.Clock().CycleAt(now), s.Name(), "ni.sent", trace.Int("dst", int64(p.Dst)),
			trace.Int("len", int64(p.Len)), trace.Addr("sram", uint64(p.SRAM)))
	}
	s.cur = nil
	s.sigState.SetString(now, "IDLE")
	s.card.raise(now, firmware.HWEvent{Kind: firmware.SendDone, Tag: p.Tag, Addr: p.SRAM, Len: p.Len})
}

func (s *sendEngine) idle() bool { return s.cur == nil && s.jobs.Len() == 0 }

func (s *sendEngine) state() string {
	if s.cur == nil {
		return fmt.Sprintf("%d queued", s.jobs.Len())
	}
	return fmt.Sprintf("packet to %d: %d/%d bytes sent, %d queued", s.cur.pkt.Dst, s.sentOff, s.cur.pkt.Len, s.jobs.Len())
}

// recvEngine is the receive DMA engine: armed with an SRAM buffer, it
// takes a packet's flits from the link as they arrive and writes them into
// the buffer in bursts; once the tail's data is in SRAM it raises
// RecvDone with the length and the link's CRC verdict. Unarmed, it takes
// nothing, and the link holds the packet back.
type recvEngine struct {
	*clock.Ticking
	card *Card
	port *mem.Channel
	in   *link.Dir

	armed    bool
	addr     uint32
	maxLen   int
	got      int    // bytes of the packet taken from the link
	written  int    // bytes handed to SRAM
	pending  []byte // taken, not yet written
	beats    []mem.Beat
	tail     bool // the tail has been taken
	bad      bool
	pkt      uint64 // the packet's link-level number and sender
	src      int
	lastReq  *mem.Req
	overflow bool

	packets, bytes uint64
	sigState       *waves.Signal
}

func newRecvEngine(c *Card, name string, clk clock.Clock) *recvEngine {
	r := &recvEngine{card: c, port: c.sram.Port(portRecv)}
	r.Ticking = clock.NewTicking(name, c.env.Engine, clk, r)
	r.port.ConnectMaster(r)
	r.sigState = c.env.Waves.String(name, "state")
	r.sigState.SetString(0, "UNARMED")
	return r
}

func (r *recvEngine) connect(in *link.Dir) {
	r.in = in
	in.SetReceiver(r)
}

func (r *recvEngine) arm(now clock.Time, addr uint32, max int) {
	if r.armed {
		r.card.env.Report(now, r.Name(), "ni.recv", "armed while armed")
		return
	}
	r.armed, r.addr, r.maxLen = true, addr, max
	r.got, r.written, r.tail, r.bad, r.overflow, r.lastReq = 0, 0, false, false, false, nil
	r.sigState.SetString(now, "ARMED")
	r.Wake(now)
}

// Tick implements clock.Ticker: finish a packet whose last write is
// acknowledged, push write beats, write a burst, take a flit.
func (r *recvEngine) Tick(now clock.Time) bool {
	progress := false
	for {
		b, ok := r.port.Up.Pop(now)
		if !ok {
			break
		}
		progress = true
		if b.Req == r.lastReq {
			r.complete(now)
		}
	}
	for len(r.beats) > 0 && r.port.Down.CanPush(now) {
		r.port.Down.Push(now, r.beats[0])
		r.beats = r.beats[1:]
		progress = true
	}
	burst := r.card.cfg.NetBurst
	if r.armed && len(r.beats) == 0 && r.lastReq == nil && len(r.pending) > 0 {
		addr := uint64(r.addr) + uint64(r.written)
		n := min(len(r.pending), burst-int(addr%uint64(burst)))
		if n == len(r.pending) && !r.tail && n < burst-int(addr%uint64(burst)) {
			n = 0 // wait for a whole burst unless the packet has ended
		}
		if !r.tail && r.written+n >= r.maxLen {
			n = 0 // the buffer's last bytes wait for the tail (an overlong packet is cut there)
		}
		if n > 0 {
			last := r.tail && n == len(r.pending)
			req := &mem.Req{Op: mem.Write, Addr: addr, Len: n, Posted: !last, Class: "recvdma", Master: r.Name()}
			r.beats = mem.WriteBeats(req, r.pending[:n], r.port.Width)
			r.pending = r.pending[n:]
			r.written += n
			if last {
				r.lastReq = req
			}
			for len(r.beats) > 0 && r.port.Down.CanPush(now) {
				r.port.Down.Push(now, r.beats[0])
				r.beats = r.beats[1:]
			}
			progress = true
		}
	}
	if r.armed && !r.tail && len(r.pending) < 2*burst {
		if f, ok := r.in.Rx(0).Pop(now); ok {
			progress = true
			take := f.Data
			if r.got+len(take) > r.maxLen {
				if !r.overflow {
					r.overflow = true
					r.card.env.Report(now, r.Name(), "ni.recv", "packet %d from node %d is longer than the %d-byte buffer", f.Packet, f.Src, r.maxLen)
				}
				take = take[:max(0, r.maxLen-r.got)]
			}
			if f.Head {
				r.pkt, r.src = f.Packet, f.Src
			}
			r.pending = append(r.pending, take...)
			r.got += len(take)
			if f.Tail {
				r.tail, r.bad = true, f.Bad
				r.sigState.SetString(now, "STORE")
				if r.got == 0 {
					r.complete(now)
				}
			} else {
				r.sigState.SetString(now, "RECV")
			}
		}
	}
	return progress
}

func (r *recvEngine) complete(now clock.Time) {
	r.packets++
	r.bytes += uint64(r.got)
	if r.card.env.Trace.Enabled() {
		r.card.env.Trace.Emit(now, r.Clock().CycleAt(now), r.Name(), "ni.received", trace.Int("len", int64(r.got)),
			trace.Addr("sram", uint64(r.addr)), trace.Bool("bad", r.bad))
	}
	r.armed, r.lastReq = false, nil
	r.sigState.SetString(now, "UNARMED")
	r.card.raise(now, firmware.HWEvent{Kind: firmware.RecvDone, Addr: r.addr, Len: r.got, Bad: r.bad, Tag: r.pkt, Src: r.src})
}

func (r *recvEngine) idle() bool { return r.got == 0 || !r.armed }

func (r *recvEngine) state() string {
	if !r.armed {
		return "unarmed"
	}
	return fmt.Sprintf("armed at %#x, %d bytes received, %d written", r.addr, r.got, r.written)
}
