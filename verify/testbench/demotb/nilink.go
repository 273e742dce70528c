package demotb

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/waves"
)

// LinkOut packetises the byte stream of the transmit FIFO: it collects
// chunks into flits of flitBytes of payload, flitBytes/packetBytes flits to
// a packet, and pushes one flit per cycle into the link.
type LinkOut struct {
	*clock.Ticking
	env       *env.Env
	in        *fifo.FIFO[[]byte]
	out       *link.Dir
	flitBytes int
	pktBytes  int
	total     int // bytes of the whole message

	buf      []byte
	taken    int // bytes popped from the FIFO
	sent     int // bytes sent in flits
	pkt      uint64
	inPkt    int // bytes of the current packet already sent
	seq      int
	info     *link.PacketInfo // the current packet's shared part
	sigState *waves.Signal
	packets  *check.Conservation[uint64] // shared with LinkIn
}

func newLinkOut(e *env.Env, name string, clk clock.Clock, in *fifo.FIFO[[]byte], out *link.Dir, flitBytes, pktBytes, total int) *LinkOut {
	o := &LinkOut{env: e, in: in, out: out, flitBytes: flitBytes, pktBytes: pktBytes, total: total}
	o.Ticking = clock.NewTicking(name, e.Engine, clk, o)
	o.sigState = e.Waves.String(name, "state")
	o.sigState.SetString(0, "IDLE")
	e.Register(o)
	return o
}

// Tick implements clock.Ticker: send a flit, then take a chunk.
func (o *LinkOut) Tick(now clock.Time) bool {
	progress := o.send(now)
	if c, ok := o.in.Peek(now); ok && len(o.buf) < 2*o.flitBytes {
		o.in.Pop(now)
		o.buf = append(o.buf, c...)
		o.taken += len(c)
		progress = true
	}
	switch {
	case o.sent == o.total:
		o.sigState.SetString(now, "IDLE")
	case progress:
		o.sigState.SetString(now, "SEND")
	default:
		o.sigState.SetString(now, "WAIT")
	}
	return progress
}

func (o *LinkOut) send(now clock.Time) bool {
	left := o.total - o.sent
	if left == 0 {
		return false
	}
	pktLeft := min(o.pktBytes-o.inPkt, left)
	n := min(o.flitBytes, pktLeft)
	if len(o.buf) < n || !o.out.Tx(0).CanPush(now) {
		return false
	}
	if o.inPkt == 0 {
		o.info = &link.PacketInfo{ID: o.pkt, Src: 0, Dst: 1}
	}
	f := link.Flit{Info: o.info, Seq: int32(o.seq), Head: o.inPkt == 0, Tail: n == pktLeft, Data: append([]byte(nil), o.buf[:n]...)}
	o.out.Tx(0).Push(now, f)
	o.buf = o.buf[n:]
	o.sent += n
	o.inPkt += n
	o.seq++
	if f.Tail {
		o.packets.Sent(now, f.Packet())
		o.pkt++
		o.inPkt, o.seq = 0, 0
	}
	return true
}

// Idle implements check.Unit.
func (o *LinkOut) Idle() bool { return len(o.buf) == 0 }

// State implements check.Unit.
func (o *LinkOut) State() string {
	return fmt.Sprintf("%d of %d bytes sent, %d buffered", o.sent, o.total, len(o.buf))
}

// LinkIn depacketises: it takes flits from the link and pushes their payload
// into the receive FIFO in chunks of the FIFO width. A flit whose packet
// failed the CRC is counted as a checker violation (the demo has no
// retransmission).
type LinkIn struct {
	*clock.Ticking
	packets *check.Conservation[uint64]
	order   *check.Ordering[int]
	env     *env.Env
	in      *link.Dir
	out     *fifo.FIFO[[]byte]
	width   int
	pending []byte
}

func newLinkIn(e *env.Env, name string, clk clock.Clock, in *link.Dir, out *fifo.FIFO[[]byte], width int) *LinkIn {
	i := &LinkIn{env: e, in: in, out: out, width: width}
	i.Ticking = clock.NewTicking(name, e.Engine, clk, i)
	e.Register(i)
	return i
}

// Tick implements clock.Ticker: push a chunk, then take the next flit.
func (i *LinkIn) Tick(now clock.Time) bool {
	progress := false
	if len(i.pending) > 0 && i.out.CanPush(now) {
		n := min(i.width, len(i.pending))
		i.out.Push(now, append([]byte(nil), i.pending[:n]...))
		i.pending = i.pending[n:]
		progress = true
	}
	if len(i.pending) == 0 {
		if f, ok := i.in.Rx(0).Pop(now); ok {
			if f.Bad {
				i.env.Report(now, i.Name(), "demo.crc", "packet %d failed the link CRC check", f.Packet())
			}
			if f.Tail {
				i.packets.Received(now, f.Packet())
				i.order.Observe(now, f.Src(), f.Packet())
			}
			i.pending = append(i.pending, f.Data...)
			progress = true
		}
	}
	return progress // a full FIFO wakes us when it drains
}

// Idle implements check.Unit.
func (i *LinkIn) Idle() bool { return len(i.pending) == 0 }

// State implements check.Unit.
func (i *LinkIn) State() string { return fmt.Sprintf("%d bytes waiting for the FIFO", len(i.pending)) }
