// Package mchub models the hub of DEC's first-generation Memory Channel
// (cashmere-2l-memory-channel.txt section 2.1): a remote-write network in
// which a store to a transmit region is «collected by the source MC
// adapter, forwarded to destination MC adapters through a hub» (MC-P4).
// The hub is the bus the paper calls it, «as the Memory Channel is a bus
// interconnect» (MC-P5): one packet on it at a time, every write brought to
// every adapter but its sender, and to the sender too only when the
// write's header asks for loop-back (Write.Loopback: «only if loop-back
// through the hub has been enabled for the region», MC-P8). Receive
// filtering by the 8 KB page (MC-P6) is the adapters' job, with their
// receive tables; the hub has no page map. The bus serialises all writes
// into one global order, so that writes to one region «will appear in the
// same order in every receive region» (MC-P9). It is lossless: a write
// waits in its input buffer, back-pressuring the sender through the link's
// credits, until every output has room for it.
//
// A write travels as a packet of link.Flits on VC 0 (Format.Packet): the
// head flit's Meta is the *Write (source, MC address, length, the source's
// sequence number, the loop-back bit), the flits' Data carry its bytes.
// The hub forwards the flits unchanged except that each copy's Dst is its
// output port and the head's Meta is a copy of the Write with Order set to
// the global sequence number. A packet whose tail arrived with a bad link
// CRC (link.Flit.Bad) keeps its tail as it is, so every receiver sees it
// bad (the next link's CRC is computed over the corrupted data and
// matches).
//
// The hub is cut-through per packet. It picks a write as soon as the head
// flit is in an input buffer and moves each flit over the bus as it
// arrives, having first reserved room for the whole packet in every output
// queue, so packets never interleave on an output and a packet once
// started never waits for an output. Why: the first-generation hub passes
// a packet on as it comes; store-and-forward would add a whole packet's
// serialisation to every write's latency and need input buffers as large
// as the largest packet. The price is that of a bus: while a packet
// trickles in at link rate the hub serves no other input.
//
// Timing, in hub cycles (the MC1 preset runs the hub on the link clock;
// B = BusBytesPerCycle, D = WithDelay):
//
//   - A flit of s serialisation cycles sent at edge t on a link of wire
//     delay d is in the hub's input buffer from edge t+s+d (rtl/link).
//   - When no write is in service, the hub picks the next input, in
//     round-robin order after the last one picked, whose head flit is in
//     its buffer. The pick fixes the write's place in the global order. A
//     write whose tail is taken at edge c frees the hub for a pick at c:
//     arbitration overlaps the last flit's transfer (assumed: hidden
//     arbitration, as on PCI; the paper gives none).
//   - The picked write is granted when every output queue it goes to has
//     room for all its flits: free slots as of the previous edge, less
//     those reserved for flits still in the forwarding pipeline. Until
//     then the hub waits with the pick (its input is not popped, so the
//     sender runs out of credits): a slow receiver stalls the whole bus.
//   - From the edge after the grant the hub takes the write's flits from
//     its input, each as soon as it is there and the bus is free. A flit
//     of s wire bytes taken at edge c holds the bus for k = ceil(s/B)
//     cycles (c..c+k-1), so the next flit, of this write or the next, is
//     taken at c+k at the earliest; it enters the output queues at
//     c+k-1+D and can leave on the output link from c+k+D. The hub moves
//     at most B bytes per cycle in all, one link's worth with MC1,
//     whatever the outputs; BusyCycles counts the cycles the bus carried
//     flits.
//   - Each output sends its head flit whenever its link can take it
//     (serialiser free and a credit): link bandwidth is honoured.
//
// A write whose only receiver would be its sender without loop-back (a
// one-port hub) is ordered and consumed. The hub talks to the links only
// through their receive buffers and the sender API, so its results do not
// depend on the order in which components tick within a picosecond.
//
// The package holds the hub hardware only: switch/star wires it to a link
// per port (StarBuilder), and the traffic endpoints that drive it in tests
// and scenarios, with their page maps (receive filters) and checkers, are
// switch/fabric's MCEndpoint.
package mchub

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// mutReorder is a test-only fault (see env.DeclareMutation).
var mutReorder = env.DeclareMutation("mchub.reorder",
	"each hub output holds back every Nth write it is about to send and sends it after the next one "+
		"(caught by the global order scoreboard, per receiver, and per-source order)")

// Builder configures a Hub.
type Builder struct {
	env      *env.Env
	clk      clock.Clock
	ports    int
	depth    int
	delay    int
	format   Format
	busBytes int
}

// MakeBuilder returns a builder with defaults: 4 ports, output queues of
// 16 flits, a forwarding delay of 1 cycle, 32-byte flits without header
// bytes and a bus of 4 bytes per cycle. MC1 returns the first-generation
// preset.
func MakeBuilder() Builder {
	return Builder{ports: 4, depth: 16, delay: 1, format: Format{FlitBytes: 32}, busBytes: 4}
}

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithClock sets the hub clock (required); the delay counts its cycles.
func (b Builder) WithClock(c clock.Clock) Builder { b.clk = c; return b }

// WithPorts sets the number of ports (one adapter each).
func (b Builder) WithPorts(n int) Builder { b.ports = n; return b }

// WithQueueDepth sets each output queue's depth in flits. A write must fit
// in one queue: it may have at most this many flits.
func (b Builder) WithQueueDepth(flits int) Builder { b.depth = flits; return b }

// WithDelay sets the forwarding delay: the cycles from taking a flit from
// an input to its entering the output queues.
func (b Builder) WithDelay(cycles int) Builder { b.delay = cycles; return b }

// WithFormat sets the packet format the adapters use (the hub counts a
// write's flits with it).
func (b Builder) WithFormat(f Format) Builder { b.format = f; return b }

// WithBusBytesPerCycle sets the width of the hub bus: a flit of s wire
// bytes takes ceil(s/n) hub cycles to cross it.
func (b Builder) WithBusBytesPerCycle(n int) Builder { b.busBytes = n; return b }

// Clock returns the configured clock.
func (b Builder) Clock() clock.Clock { return b.clk }

// Ports returns the configured number of ports.
func (b Builder) Ports() int { return b.ports }

// QueueDepth returns the configured output queue depth in flits.
func (b Builder) QueueDepth() int { return b.depth }

// Delay returns the configured forwarding delay in cycles.
func (b Builder) Delay() int { return b.delay }

// Format returns the configured packet format.
func (b Builder) Format() Format { return b.format }

// BusBytesPerCycle returns the configured hub bus width in bytes per cycle.
func (b Builder) BusBytesPerCycle() int { return b.busBytes }

// Validate checks the parameters.
func (b Builder) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("mc hub: no env")
	case !b.clk.Valid():
		return errors.New("mc hub: no clock")
	case b.ports < 1 || b.ports > 1024:
		return fmt.Errorf("mc hub ports %d must be in 1..1024", b.ports)
	case b.depth < 1:
		return fmt.Errorf("mc hub queue depth %d flits must be at least 1", b.depth)
	case b.delay < 0:
		return fmt.Errorf("mc hub delay %d cycles must not be negative", b.delay)
	case b.busBytes < 1:
		return fmt.Errorf("mc hub bus width %d bytes per cycle must be at least 1", b.busBytes)
	}
	if err := b.format.Validate(); err != nil {
		return fmt.Errorf("mc hub format: %w", err)
	}
	return nil
}

// Build creates the hub named name and its output queues (name.Out[i]),
// and registers it with the watchdog.
func (b Builder) Build(name string) (*Hub, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h := &Hub{env: b.env, delay: b.delay, depth: b.depth, format: b.format, busBytes: b.busBytes,
		reorderEvery: b.env.Mutation(mutReorder)}
	h.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, h)
	for i := range b.ports {
		q, err := fifo.MakeBuilder[link.Flit]().WithEnv(b.env).WithDepth(b.depth).WithWidth(8 * b.format.FlitBytes).
			Build(fmt.Sprintf("%s.Out[%d]", name, i))
		if err != nil {
			return nil, err
		}
		q.SetConsumer(h)
		h.ports = append(h.ports, &port{q: q})
	}
	reg := b.env.Waves
	h.sigState = reg.String(name, "state")
	// serving is the number i of the input port (the link of adapter i)
	// whose packet the hub forwards or last forwarded; order counts the
	// writes put in the global order so far.
	h.sigServing = reg.Integer(name, "serving", waves.WidthFor(uint64(b.ports)))
	h.sigOrder = reg.Integer(name, "order", 32)
	h.sigState.SetString(0, "IDLE")
	b.env.Register(h)
	return h, nil
}

// PortStats are one port's counters.
type PortStats struct {
	// InPackets and InFlits count what the hub took from the port's input.
	InPackets, InFlits uint64
	// OutPackets and OutFlits count what the hub sent on the port's output.
	OutPackets, OutFlits uint64
	// WaitCycles adds up the cycles writes from the port waited between
	// their pick and their grant for room in the destination queues.
	WaitCycles uint64
}

type port struct {
	in, out  *link.Dir
	q        *fifo.FIFO[link.Flit]
	reserved int // slots promised to flits in the forwarding pipeline
	txW      *Write
	txData   []byte // data of the packet being sent, for the trace
	stats    PortStats

	// mchub.reorder: heads sent or held, the held write's flits, and the
	// stage (0 sending, 1 holding a write, 2 sending the next one, 3
	// sending the held one)
	heads int
	held  []link.Flit
	mut   uint8
}

// Disposal of a picked write.
const (
	forward = iota // to its destinations (possibly none)
	invalid        // malformed: reported and consumed
)

// xfer is the write being forwarded.
type xfer struct {
	in      int
	pkt     uint64
	w       *Write // the ordered copy (nil unless forwarded)
	orig    *Write
	kind    int
	dests   []int
	flits   int // expected (forward)
	moved   int
	granted bool
	picked  clock.Time
	data    []byte // for the trace
	// infos are the forwarded copies' shared parts, one per destination
	// (made at the first flit forwarded).
	infos []link.PacketInfo
}

type landing struct {
	at   clock.Time
	port int
	f    link.Flit
}

// Hub is a clocked Memory Channel hub.
type Hub struct {
	*clock.Ticking
	env    *env.Env
	delay  int
	depth  int
	format Format
	ports  []*port

	// the bus width, the edge from which the bus can take the next flit,
	// and the cycles it has carried flits
	busBytes int
	busFree  clock.Time
	busy     uint64

	rr      int
	cur     *xfer
	line    []landing // forwarding pipeline, in time order
	order   uint64
	onOrder func(now clock.Time, w *Write, dests []int)

	reorderEvery int // test-only fault: every reorderEvery-th write per output

	sigState, sigServing, sigOrder *waves.Signal
}

// Attach connects port p: in is the link direction whose receiver is the
// hub, out the direction the hub sends on. Attach wires the hub's side with
// Dir.Connect (in.Connect(nil, hub), out.Connect(hub, nil)); the adapter at
// the other end must wire its own side afterwards, naming the hub
// (in.Connect(adapter, hub), out.Connect(hub, adapter)), or use
// Port.Connect of a Star.
func (h *Hub) Attach(p int, in, out *link.Dir) error {
	switch {
	case p < 0 || p >= len(h.ports):
		return fmt.Errorf("%s: attach: port %d is not in 0..%d", h.Name(), p, len(h.ports)-1)
	case in == nil || out == nil:
		return fmt.Errorf("%s: attach: port %d needs both an input and an output direction", h.Name(), p)
	case h.ports[p].in != nil:
		return fmt.Errorf("%s: attach: port %d is already attached", h.Name(), p)
	}
	h.ports[p].in, h.ports[p].out = in, out
	in.Connect(nil, h)
	out.Connect(h, nil)
	return nil
}

// OnOrder sets a callback run when a write has been forwarded: w carries
// its global Order, dests its destination ports: every port but the
// source, and the source too with loop-back.
func (h *Hub) OnOrder(fn func(now clock.Time, w *Write, dests []int)) { h.onOrder = fn }

// Ports returns the number of ports.
func (h *Hub) Ports() int { return len(h.ports) }

// Format returns the packet format the adapters use.
func (h *Hub) Format() Format { return h.format }

// Queue returns the output queue of port p.
func (h *Hub) Queue(p int) *fifo.FIFO[link.Flit] { return h.ports[p].q }

// Stats returns the counters of port p.
func (h *Hub) Stats(p int) PortStats { return h.ports[p].stats }

// BusyCycles returns the hub cycles the bus has carried flits: its
// utilisation over a stretch of cycles is the growth of BusyCycles divided
// by the cycles.
func (h *Hub) BusyCycles() uint64 { return h.busy }

// Tick implements clock.Ticker, stages ordered output first: send the
// outputs' head flits, move flits out of the forwarding pipeline into the
// output queues, copy the next flit of the write being forwarded, and pick
// or grant the next write.
func (h *Hub) Tick(now clock.Time) bool {
	busy := h.transmit(now)
	landed := h.land(now)
	copied := h.copy(now)
	picked := h.arbitrate(now)
	h.setState(now)
	return busy || landed || copied || picked
}

// transmit sends each output queue's visible head flit when the link can
// take it. It reports whether an output must poll its link: a queue holds
// flits while the serialiser is busy. (An output waiting for a credit is
// woken by the link when the credit returns.)
func (h *Hub) transmit(now clock.Time) bool {
	busy := false
	for i, p := range h.ports {
		if p.out == nil {
			continue
		}
		if h.reorderEvery > 0 && h.reorder(now, i, p) {
			busy = true
			continue
		}
		f, ok := p.q.Peek(now)
		if !ok {
			busy = busy || p.q.Len() > 0
			continue
		}
		if !p.out.CanSend(now, int(f.VC)) {
			busy = busy || !p.out.Idle(now)
			continue
		}
		p.q.Pop(now)
		h.send(now, i, p, f)
		busy = busy || p.q.Len() > 0
	}
	return busy
}

// reorder is the mchub.reorder fault at output i: it takes every
// reorderEvery-th write off the queue into a side buffer, lets the next
// write go first and then sends the held one. It reports whether it used
// the output this cycle (the normal path must not).
func (h *Hub) reorder(now clock.Time, i int, p *port) bool {
	switch p.mut {
	case 0:
		f, ok := p.q.Peek(now)
		if !ok || !f.Head {
			return false
		}
		if (p.heads+1)%h.reorderEvery != 0 {
			return false // the normal path sends it and counts it
		}
		p.heads++
		p.mut = 1
		fallthrough
	case 1:
		if f, ok := p.q.Pop(now); ok {
			p.held = append(p.held, f)
			if f.Tail {
				p.mut = 2
			}
		}
		return true
	case 3:
		if p.out.CanSend(now, int(p.held[0].VC)) {
			h.send(now, i, p, p.held[0])
			p.held = p.held[1:]
			if len(p.held) == 0 {
				p.held, p.mut = nil, 0
			}
		}
		return true
	}
	return false
}

// send puts flit f of output i on its link.
func (h *Hub) send(now clock.Time, i int, p *port, f link.Flit) {
	p.out.Send(now, &f)
	p.stats.OutFlits++
	if h.reorderEvery > 0 && f.Head && p.mut != 3 {
		p.heads++
	}
	if p.mut == 2 && f.Tail {
		p.mut = 3 // the next write has gone: now the held one
	}
	if f.Head {
		p.txW, _ = f.Meta().(*Write)
		p.txData = p.txData[:0]
	}
	if h.env.Trace.Enabled() {
		p.txData = append(p.txData, f.Data...)
	}
	if f.Tail {
		p.stats.OutPackets++
		if h.env.Trace.Enabled() && p.txW != nil {
			w := p.txW
			h.emit(now, "mc.deliver", trace.Int("port", int64(i)), trace.Uint("order", w.Order),
				trace.Int("src", int64(w.Src)), trace.Uint("seq", w.Seq), trace.Uint("page", w.Page()),
				trace.Int("offset", int64(w.Offset())), trace.Int("len", int64(w.Len)), trace.Hash("hash", p.txData))
		}
		p.txW = nil
	}
}

// land moves the flits whose forwarding delay has passed into the output
// queues.
func (h *Hub) land(now clock.Time) bool {
	n := 0
	for _, l := range h.line {
		if l.at > now {
			break
		}
		h.push(now, l.port, l.f)
		n++
	}
	if n == 0 {
		return false
	}
	h.line = h.line[n:]
	if len(h.line) == 0 {
		h.line = nil
	}
	return true
}

func (h *Hub) push(now clock.Time, port int, f link.Flit) {
	p := h.ports[port]
	p.reserved--
	p.q.Push(now, f) // room was reserved; an overflow is reported by the FIFO
}

// copy takes the next flit of the granted write from its input and sends
// it down the forwarding pipeline to every destination.
func (h *Hub) copy(now clock.Time) bool {
	x := h.cur
	if x == nil || !x.granted {
		return false
	}
	if now < h.busFree {
		h.WakeAt(h.busFree) // the bus still carries the previous flit
		return false
	}
	in := h.ports[x.in]
	f, ok := in.in.Rx(0).Pop(now)
	if !ok {
		return false // the next flit's arrival wakes the hub
	}
	in.stats.InFlits++
	// The flit holds the bus for k cycles (now .. now+k-1) and lands
	// delay cycles after the last of them.
	k := (f.WireBytes() + h.busBytes - 1) / h.busBytes
	h.busFree = h.Clock().After(now, clock.Cycle(k))
	h.busy += uint64(k)
	lag := h.delay + k - 1
	if x.moved > 0 && f.Head {
		h.env.Report(now, h.Name(), "mc.protocol", "port %d: head flit of packet %d inside packet %d", x.in, f.Packet(), x.pkt)
	}
	if h.env.Trace.Enabled() {
		x.data = append(x.data, f.Data...)
	}
	if x.kind == forward {
		if x.moved < x.flits {
			at := h.Clock().After(now, clock.Cycle(lag))
			if x.infos == nil {
				x.infos = make([]link.PacketInfo, len(x.dests))
				for k, d := range x.dests {
					x.infos[k] = link.PacketInfo{ID: f.Packet(), Src: f.Src(), Dst: d, Meta: x.w}
					if f.Info != nil {
						x.infos[k].Route = f.Info.Route
					}
				}
			}
			for k, d := range x.dests {
				// Each destination's copy: its own Dst, and the ordered
				// write on its head (the other flits carry no Meta, as
				// the adapters send them).
				g := f
				g.Info = &x.infos[k]
				g.Carries &^= link.HasMeta
				if g.Head {
					g.Carries |= link.HasMeta
				}
				if at <= now {
					h.push(now, d, g)
				} else {
					h.line = append(h.line, landing{at: at, port: d, f: g})
				}
			}
			if at > now && len(x.dests) > 0 {
				h.WakeAt(at)
			}
		} else if x.moved == x.flits {
			h.env.Report(now, h.Name(), "mc.protocol", "port %d: packet %d has more than the %d flits of its %d bytes; the rest is dropped",
				x.in, x.pkt, x.flits, x.orig.Len)
		}
	}
	x.moved++
	if f.Tail {
		h.finish(now, x)
	}
	return true
}

// finish ends the write in service once its tail has been taken.
func (h *Hub) finish(now clock.Time, x *xfer) {
	in := h.ports[x.in]
	in.stats.InPackets++
	h.cur = nil
	if x.kind != forward {
		return // invalid: reported, consumed, not ordered
	}
	if x.moved < x.flits {
		h.env.Report(now, h.Name(), "mc.protocol", "port %d: packet %d ended after %d of the %d flits of its %d bytes",
			x.in, x.pkt, x.moved, x.flits, x.orig.Len)
		for _, d := range x.dests {
			h.ports[d].reserved -= x.flits - x.moved
		}
	}
	if h.env.Trace.Enabled() {
		dests := "-"
		if len(x.dests) > 0 {
			s := make([]string, len(x.dests))
			for i, d := range x.dests {
				s[i] = strconv.Itoa(d)
			}
			dests = strings.Join(s, ",")
		}
		w := x.w
		h.emit(now, "mc.order", trace.Uint("order", w.Order), trace.Int("src", int64(x.in)), trace.Uint("seq", w.Seq),
			trace.Uint("page", w.Page()), trace.Int("offset", int64(w.Offset())), trace.Int("len", int64(w.Len)),
			trace.Str("dests", dests), trace.Hash("hash", x.data))
	}
	if h.onOrder != nil {
		h.onOrder(now, x.w, x.dests)
	}
}

// arbitrate picks the next write when the hub is free and grants the
// picked write when its destinations have room.
func (h *Hub) arbitrate(now clock.Time) bool {
	progress := false
	if h.cur == nil {
		for i := range h.ports {
			pi := (h.rr + i) % len(h.ports)
			p := h.ports[pi]
			if p.in == nil {
				continue
			}
			f, ok := p.in.Rx(0).Peek(now)
			if !ok {
				continue
			}
			h.rr = (pi + 1) % len(h.ports)
			h.pick(now, pi, f)
			progress = true
			break
		}
	}
	if x := h.cur; x != nil && !x.granted {
		progress = h.grant(now, x) || progress
	}
	return progress
}

// pick makes the write whose head flit f waits at input pi the hub's
// current one and, if it is forwarded, gives it its global order.
func (h *Hub) pick(now clock.Time, pi int, f link.Flit) {
	x := &xfer{in: pi, pkt: f.Packet(), picked: now, kind: invalid, granted: true}
	h.cur = x
	w, ok := f.Meta().(*Write)
	switch {
	case !f.Head:
		h.env.Report(now, h.Name(), "mc.protocol", "port %d: flit %v without a head; dropped up to its tail", pi, f)
		return
	case !ok:
		h.env.Report(now, h.Name(), "mc.protocol", "port %d: packet %d carries %T, not a *mchub.Write; dropped", pi, f.Packet(), f.Meta())
		return
	}
	x.orig = w
	if err := w.Validate(); err != nil {
		h.env.Report(now, h.Name(), "mc.protocol", "port %d: packet %d: %v; dropped", pi, f.Packet(), err)
		return
	}
	if n := h.format.Flits(w.Len); n > h.depth {
		h.env.Report(now, h.Name(), "mc.protocol", "port %d: packet %d: a write of %d bytes (%d flits) does not fit an output queue of %d flits; dropped",
			pi, f.Packet(), w.Len, n, h.depth)
		return
	}
	x.dests = h.everyone(pi, w.Loopback)
	x.kind = forward
	x.granted = false
	x.flits = h.format.Flits(w.Len)
	h.order++
	ordered := *w
	ordered.Order = h.order
	x.w = &ordered
	h.sigOrder.Set(now, h.order)
}

// everyone returns the destinations of a write from src: every
// attached port but src, and src too with loop-back, ascending.
func (h *Hub) everyone(src int, loopback bool) []int {
	out := make([]int, 0, len(h.ports))
	for i, p := range h.ports {
		if p.out != nil && (i != src || loopback) {
			out = append(out, i)
		}
	}
	return out
}

// grant reserves room for the whole write in every destination queue, if
// there is room in all of them.
func (h *Hub) grant(now clock.Time, x *xfer) bool {
	for _, d := range x.dests {
		p := h.ports[d]
		if p.q.Free(now)-p.reserved < x.flits {
			return false // an output's progress wakes the hub
		}
	}
	for _, d := range x.dests {
		h.ports[d].reserved += x.flits
	}
	x.granted = true
	c := h.Clock()
	h.ports[x.in].stats.WaitCycles += uint64(c.CycleAt(now) - c.CycleAt(x.picked))
	return true
}

func (h *Hub) setState(now clock.Time) {
	x := h.cur
	switch {
	case x == nil:
		h.sigState.SetString(now, "IDLE")
		return
	case !x.granted:
		h.sigState.SetString(now, "WAIT")
	case x.kind == forward:
		h.sigState.SetString(now, "COPY")
	default:
		h.sigState.SetString(now, "DRAIN")
	}
	h.sigServing.Set(now, uint64(x.in))
}

func (h *Hub) emit(now clock.Time, kind string, fields ...trace.Field) {
	h.env.Trace.Emit(now, h.Clock().CycleAt(now), h.Name(), kind, fields...)
}

// Idle implements check.Unit: a write in service or flits in the
// forwarding pipeline are unfinished work.
func (h *Hub) Idle() bool { return h.cur == nil && len(h.line) == 0 }

// State implements check.Unit.
func (h *Hub) State() string {
	if h.Idle() {
		return "idle"
	}
	s := fmt.Sprintf("%d flits in the forwarding pipeline", len(h.line))
	if x := h.cur; x != nil {
		st := "waiting for room in"
		if x.granted {
			st = "forwarding to"
		}
		s += fmt.Sprintf("; packet %d from port %d %s %v, %d flits taken", x.pkt, x.in, st, x.dests, x.moved)
	}
	return s
}
