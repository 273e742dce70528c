// Package netdma models the packet engines that move data between a
// network interface's buffer memory and a link: a send engine (memory to
// link) and a receive engine (link to memory). The LANai has one of each
// next to its host DMA engine (MY-P13 «three DMA engines»: one between
// host memory and NI memory, two between NI memory and the network), and
// every packet is staged through that memory (MY-P15 «All inbound and
// outbound network packets must also be staged through this memory»).
// Unlike rtl/dma's descriptor engine, these work packet by packet and flit
// by flit: the send engine puts a packet on the link as fast as its reads
// and the link allow, the receive engine takes a packet's flits only while
// it is armed with a buffer (unarmed, the link holds the packet back).
//
// Both engines talk to the memory through one mem.Channel each and to the
// link through a link.Dir, and tell their owner about a finished packet
// through a callback (OnSent, OnReceived). They are not registered with
// the deadlock watchdog: the board that owns them reports them in its own
// Idle and State.
//
// Timing, in link cycles (the engines run on the link clock): the send
// engine in one edge sends a flit if its data has been read, takes read
// data, requests the next burst (at most two bursts ahead of the link,
// each burst aligned to Burst bytes) and starts the next queued packet;
// it finishes a packet when it hands the tail flit to the link. The
// receive engine in one edge takes write acknowledgements (the last one
// completes the packet), pushes write beats, starts a burst write once it
// holds a whole aligned burst (or the packet has ended) and takes one flit
// while it holds less than two bursts.
package netdma

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Packet is a send request: Len bytes at Addr of the engine's memory go to
// node Dst, Route rides on the head flit (a source route; nil for none)
// and Tag comes back in OnSent.
type Packet struct {
	Dst   int
	Addr  uint64
	Len   int
	Tag   uint64
	Route []byte
}

// SendBuilder configures a Sender.
type SendBuilder struct {
	env       *env.Env
	clk       clock.Clock
	port      *mem.Channel
	flitBytes int
	burst     int
	queue     int
	node      int
}

// MakeSendBuilder returns a builder with a 64-byte burst and a one-packet
// queue; env, clock, memory and flit size must be set.
func MakeSendBuilder() SendBuilder { return SendBuilder{burst: 64, queue: 1} }

// WithEnv sets the simulation.
func (b SendBuilder) WithEnv(e *env.Env) SendBuilder { b.env = e; return b }

// WithClock sets the engine's clock (the link's).
func (b SendBuilder) WithClock(c clock.Clock) SendBuilder { b.clk = c; return b }

// WithMemory sets the channel to the buffer memory the engine reads.
func (b SendBuilder) WithMemory(ch *mem.Channel) SendBuilder { b.port = ch; return b }

// WithFlitBytes sets the bytes of a packet each flit carries.
func (b SendBuilder) WithFlitBytes(n int) SendBuilder { b.flitBytes = n; return b }

// WithBurst sets the memory read burst in bytes (reads are aligned to it).
func (b SendBuilder) WithBurst(n int) SendBuilder { b.burst = n; return b }

// WithQueueDepth sets how many packets the engine holds, the one it is
// sending included.
func (b SendBuilder) WithQueueDepth(n int) SendBuilder { b.queue = n; return b }

// WithNode sets the node number the engine stamps on flits (Src) and puts
// in packet ids (node << 40 | count).
func (b SendBuilder) WithNode(n int) SendBuilder { b.node = n; return b }

// Build creates the send engine name; it connects itself as the memory
// channel's master and declares the signals name.state and name.queued.
func (b SendBuilder) Build(name string) (*Sender, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": send engine: no env")
	case !b.clk.Valid():
		return nil, errors.New(name + ": send engine: no clock")
	case b.port == nil:
		return nil, errors.New(name + ": send engine: no memory channel")
	case b.flitBytes < 1 || b.flitBytes > link.MaxFlitBytes:
		return nil, fmt.Errorf("%s: send engine: flit of %d bytes, need 1 to %d", name, b.flitBytes, link.MaxFlitBytes)
	case b.burst < 1:
		return nil, fmt.Errorf("%s: send engine: burst %d bytes, need at least 1", name, b.burst)
	case b.queue < 1:
		return nil, fmt.Errorf("%s: send engine: queue depth %d, need at least 1", name, b.queue)
	case b.node < 0:
		return nil, fmt.Errorf("%s: send engine: node %d", name, b.node)
	}
	s := &Sender{env: b.env, port: b.port, flitBytes: b.flitBytes, burst: b.burst, depth: b.queue, node: b.node}
	s.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, s)
	s.port.ConnectMaster(s)
	s.sigState = b.env.Waves.String(name, "state")
	s.sigState.SetString(0, "IDLE")
	s.sigQueue = b.env.Waves.Integer(name, "queued", 8)
	return s, nil
}

// Sender is the send engine: it reads a packet from memory in bursts and
// puts it on the link flit by flit, the route on the head, as fast as the
// link takes it; when it has handed the tail flit to the link (the
// packet's bytes are all out of memory) it calls OnSent.
type Sender struct {
	*clock.Ticking
	env       *env.Env
	port      *mem.Channel
	out       *link.Dir
	flitBytes int
	burst     int
	depth     int
	node      int
	onSent    func(now clock.Time, p Packet)

	jobs    queue.Queue[sendJob]
	cur     *sendJob
	reqOff  int    // bytes requested from memory
	data    []byte // the packet's bytes read so far (a fresh array per packet: flits keep slices of it)
	sentOff int
	seq     int
	info    *link.PacketInfo // the current packet's shared part
	nextID  uint64

	packets, bytes uint64
	sigState       *waves.Signal
	sigQueue       *waves.Signal
}

type sendJob struct {
	pkt Packet
	id  uint64
}

// Connect makes out the direction the engine sends on.
func (s *Sender) Connect(out *link.Dir) {
	s.out = out
	out.SetSender(s)
}

// OnSent sets what runs when a packet's tail has gone to the link.
func (s *Sender) OnSent(fn func(now clock.Time, p Packet)) { s.onSent = fn }

// Free returns the packets the engine can still take.
func (s *Sender) Free() int { return s.depth - s.jobs.Len() }

// Submit queues a packet. A packet beyond Free, or an empty one, is a
// checker error (ni.send) and is dropped.
func (s *Sender) Submit(now clock.Time, p Packet) {
	if s.Free() <= 0 {
		s.env.Report(now, s.Name(), "ni.send", "packet to %d submitted while the send engine is full", p.Dst)
		return
	}
	if p.Len < 1 {
		s.env.Report(now, s.Name(), "ni.send", "empty packet to %d", p.Dst)
		return
	}
	s.nextID++
	s.jobs.Push(sendJob{pkt: p, id: uint64(s.node)<<40 | s.nextID})
	s.sigQueue.Set(now, uint64(s.jobs.Len()))
	s.Wake(now)
}

// Packets and Bytes count the packets sent and their bytes.
func (s *Sender) Packets() uint64 { return s.packets }
func (s *Sender) Bytes() uint64   { return s.bytes }

// Tick implements clock.Ticker: send a flit, take read data, request the
// next burst, start the next packet.
func (s *Sender) Tick(now clock.Time) bool {
	progress := false
	if s.cur != nil && len(s.data) > s.sentOff && s.out.CanSend(now, 0) {
		left := s.cur.pkt.Len - s.sentOff
		n := min(s.flitBytes, left)
		if len(s.data)-s.sentOff >= n {
			end := s.sentOff + n
			if s.sentOff == 0 {
				s.info = &link.PacketInfo{ID: s.cur.id, Src: s.node, Dst: s.cur.pkt.Dst, Route: s.cur.pkt.Route}
			}
			f := link.Flit{Info: s.info, Seq: int32(s.seq), Head: s.sentOff == 0, Tail: n == left, Data: s.data[s.sentOff:end:end], Size: int32(s.flitBytes), Stamp: now}
			if f.Head {
				f.Carries = link.HasRoute // the route rides on the head
			}
			s.out.Send(now, &f)
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
	if s.cur != nil && s.reqOff < s.cur.pkt.Len && s.reqOff-s.sentOff < 2*s.burst && s.port.Down.CanPush(now) {
		addr := s.cur.pkt.Addr + uint64(s.reqOff)
		burst := uint64(s.burst)
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
		// Waiting for memory data (the memory wakes us) or for the link
		// (its credit return wakes us); a busy serialiser needs a timer.
		if !s.out.Idle(now) {
			s.WakeAt(s.out.BusyUntil())
		}
	}
	return progress
}

func (s *Sender) finish(now clock.Time) {
	p := s.cur.pkt
	s.packets++
	s.bytes += uint64(p.Len)
	if s.env.Trace.Enabled() {
		s.env.Trace.Emit(now, s.Clock().CycleAt(now), s.Name(), "ni.sent", trace.Int("dst", int64(p.Dst)),
			trace.Int("len", int64(p.Len)), trace.Addr("sram", p.Addr))
	}
	s.cur = nil
	s.sigState.SetString(now, "IDLE")
	if s.onSent != nil {
		s.onSent(now, p)
	}
}

// Idle reports that the engine holds no packet.
func (s *Sender) Idle() bool { return s.cur == nil && s.jobs.Len() == 0 }

// State describes the packet in progress and the queue.
func (s *Sender) State() string {
	if s.cur == nil {
		return fmt.Sprintf("%d queued", s.jobs.Len())
	}
	return fmt.Sprintf("packet to %d: %d/%d bytes sent, %d queued", s.cur.pkt.Dst, s.sentOff, s.cur.pkt.Len, s.jobs.Len())
}

// Received is a packet the receive engine has stored: Len bytes at Addr,
// Bad if the link's CRC check failed; Packet and Src are the link-level
// packet number and sender (trustworthy even when the CRC failed).
type Received struct {
	Addr   uint64
	Len    int
	Bad    bool
	Packet uint64
	Src    int
}

// RecvBuilder configures a Receiver.
type RecvBuilder struct {
	env   *env.Env
	clk   clock.Clock
	port  *mem.Channel
	burst int
}

// MakeRecvBuilder returns a builder with a 64-byte burst; env, clock and
// memory must be set.
func MakeRecvBuilder() RecvBuilder { return RecvBuilder{burst: 64} }

// WithEnv sets the simulation.
func (b RecvBuilder) WithEnv(e *env.Env) RecvBuilder { b.env = e; return b }

// WithClock sets the engine's clock (the link's).
func (b RecvBuilder) WithClock(c clock.Clock) RecvBuilder { b.clk = c; return b }

// WithMemory sets the channel to the buffer memory the engine writes.
func (b RecvBuilder) WithMemory(ch *mem.Channel) RecvBuilder { b.port = ch; return b }

// WithBurst sets the memory write burst in bytes (writes are aligned to
// it).
func (b RecvBuilder) WithBurst(n int) RecvBuilder { b.burst = n; return b }

// Build creates the receive engine name; it connects itself as the memory
// channel's master and declares the signal name.state.
func (b RecvBuilder) Build(name string) (*Receiver, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": receive engine: no env")
	case !b.clk.Valid():
		return nil, errors.New(name + ": receive engine: no clock")
	case b.port == nil:
		return nil, errors.New(name + ": receive engine: no memory channel")
	case b.burst < 1:
		return nil, fmt.Errorf("%s: receive engine: burst %d bytes, need at least 1", name, b.burst)
	}
	r := &Receiver{env: b.env, port: b.port, burst: b.burst}
	r.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, r)
	r.port.ConnectMaster(r)
	r.sigState = b.env.Waves.String(name, "state")
	r.sigState.SetString(0, "UNARMED")
	return r, nil
}

// Receiver is the receive engine: armed with a buffer, it takes a
// packet's flits from the link as they arrive and writes them into the
// buffer in bursts; once the tail's data is in memory (the last write
// acknowledged) it calls OnReceived with the length and the link's CRC
// verdict and is unarmed again. A packet longer than the buffer is cut at
// its end (a checker error, ni.recv). Unarmed, it takes nothing.
type Receiver struct {
	*clock.Ticking
	env        *env.Env
	port       *mem.Channel
	in         *link.Dir
	burst      int
	onReceived func(now clock.Time, d Received)

	armed    bool
	addr     uint64
	maxLen   int
	got      int    // bytes of the packet taken from the link
	written  int    // bytes handed to memory
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

// Connect makes in the direction the engine receives from.
func (r *Receiver) Connect(in *link.Dir) {
	r.in = in
	in.SetReceiver(r)
}

// OnReceived sets what runs when a packet is in memory.
func (r *Receiver) OnReceived(fn func(now clock.Time, d Received)) { r.onReceived = fn }

// Armed reports whether the engine has a buffer.
func (r *Receiver) Armed() bool { return r.armed }

// Arm gives the engine the buffer of max bytes at addr for the next
// packet; arming an armed engine is a checker error (ni.recv).
func (r *Receiver) Arm(now clock.Time, addr uint64, max int) {
	if r.armed {
		r.env.Report(now, r.Name(), "ni.recv", "armed while armed")
		return
	}
	r.armed, r.addr, r.maxLen = true, addr, max
	r.got, r.written, r.tail, r.bad, r.overflow, r.lastReq = 0, 0, false, false, false, nil
	r.sigState.SetString(now, "ARMED")
	r.Wake(now)
}

// Packets and Bytes count the packets stored and their bytes.
func (r *Receiver) Packets() uint64 { return r.packets }
func (r *Receiver) Bytes() uint64   { return r.bytes }

// Tick implements clock.Ticker: finish a packet whose last write is
// acknowledged, push write beats, write a burst, take a flit.
func (r *Receiver) Tick(now clock.Time) bool {
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
	burst := r.burst
	if r.armed && len(r.beats) == 0 && r.lastReq == nil && len(r.pending) > 0 {
		addr := r.addr + uint64(r.written)
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
					r.env.Report(now, r.Name(), "ni.recv", "packet %d from node %d is longer than the %d-byte buffer", f.Packet(), f.Src(), r.maxLen)
				}
				take = take[:max(0, r.maxLen-r.got)]
			}
			if f.Head {
				r.pkt, r.src = f.Packet(), f.Src()
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

func (r *Receiver) complete(now clock.Time) {
	r.packets++
	r.bytes += uint64(r.got)
	if r.env.Trace.Enabled() {
		r.env.Trace.Emit(now, r.Clock().CycleAt(now), r.Name(), "ni.received", trace.Int("len", int64(r.got)),
			trace.Addr("sram", r.addr), trace.Bool("bad", r.bad))
	}
	r.armed, r.lastReq = false, nil
	r.sigState.SetString(now, "UNARMED")
	if r.onReceived != nil {
		r.onReceived(now, Received{Addr: r.addr, Len: r.got, Bad: r.bad, Packet: r.pkt, Src: r.src})
	}
}

// Idle reports that the engine holds no part of a packet (or is unarmed).
func (r *Receiver) Idle() bool { return r.got == 0 || !r.armed }

// State describes the buffer and the packet in progress.
func (r *Receiver) State() string {
	if !r.armed {
		return "unarmed"
	}
	return fmt.Sprintf("armed at %#x, %d bytes received, %d written", r.addr, r.got, r.written)
}
