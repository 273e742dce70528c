// Package atm models a FORE-style ATM cell switch (the FORE ASX-100 of
// atm-remote-memory-access.txt section 2.2): N ports, a VCI routing table
// with VCI translation, store-and-forward switching of 53-byte cells with a
// fixed per-cell latency, and one output cell queue per port that drops
// (and counts) cells when it is full, as ATM may lose cells.
//
// A cell travels as one link.Flit (see NewCell): Head and Tail set, Size
// 53, Route the 5-byte UNI header, Data the 48-byte payload, Packet a cell
// id for traces. The switch rewrites the header's VCI, keeps everything
// else (VPI, PT, CLP, Src, Dst, Meta, and the link's Bad flag of a cell
// that was corrupted on its way in) and uses link VC 0 (the ATM virtual
// channel is in the header, not in the link's VC).
//
// Timing, in switch cycles (the ASX100 preset runs the switch on the link
// clock):
//
//   - A cell sent at edge t on a link of 53 serialisation cycles and wire
//     delay d is in the switch's input buffer from edge t+53+d (rtl/link).
//   - The switch takes at most one cell per input per cycle: a cell visible
//     at edge a is taken at a, its header decoded and looked up, its VCI
//     translated, and it enters the latency line.
//   - At edge a+L (L = WithLatency) it is appended to its output port's
//     queue. Cells reaching one output queue at the same edge are appended
//     in input-port order. A cell that finds the queue full is dropped and
//     counted; a slot the output frees at that same edge is usable from
//     the next edge (the queue's registered full flag, rtl/fifo).
//   - From edge a+L+1 the output sends the queue's head cell whenever its
//     link is free: one cell per 53 link cycles, line rate.
//
// The latency line is a delay line ordered in time, not a single slot:
// cells in it are independent, so the latency never limits throughput.
// The switch talks to the links only through their receive buffers (Rx)
// and the sender API (CanSend/Send), so its results do not depend on the
// order in which components tick within a picosecond.
//
// The package holds the switch hardware only: switch/star wires it to a
// link per port (StarBuilder), and the traffic endpoints that drive it in
// tests and scenarios, with their permanent VCs and checkers, are
// switch/fabric's ATMEndpoint.
package atm

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Test-only faults (see env.DeclareMutation), counted over the cells the
// switch takes from its inputs.
var (
	mutCorrupt = env.DeclareMutation("atm.corrupt",
		"the ATM switch flips a payload bit of every Nth cell it switches (caught by the receiver's payload check, atm.payload)")
	mutSwap = env.DeclareMutation("atm.swap",
		"the ATM switch holds back every Nth cell and queues it behind the next cell of the same VC (caught by the per-VC order checker)")
	mutDiscard = env.DeclareMutation("atm.discard",
		"the ATM switch discards every Nth cell without counting or reporting the drop (caught by the conservation checker: lost)")
)

// DropReason says why the switch discarded a cell.
type DropReason uint8

const (
	// QueueFull: the output port's cell queue had no room.
	QueueFull DropReason = iota
	// NoRoute: the routing table has no entry for the cell's input port
	// and VCI (or the route leads to a port with nothing attached).
	NoRoute
	// BadHeader: the cell's Route is not a 5-byte header with a correct
	// HEC.
	BadHeader
)

// String returns the reason as the atm.drop record writes it.
func (r DropReason) String() string {
	switch r {
	case QueueFull:
		return "queue"
	case NoRoute:
		return "noroute"
	case BadHeader:
		return "header"
	}
	return fmt.Sprintf("reason%d", uint8(r))
}

// Builder configures a Switch.
type Builder struct {
	env     *env.Env
	clk     clock.Clock
	ports   int
	latency int
	depth   int
}

// MakeBuilder returns a builder with defaults: 4 ports, a latency of 1
// cycle and output queues of 16 cells. ASX100 returns the FORE preset.
func MakeBuilder() Builder {
	return Builder{ports: 4, latency: 1, depth: 16}
}

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithClock sets the switch clock (required); the latency counts its
// cycles.
func (b Builder) WithClock(c clock.Clock) Builder { b.clk = c; return b }

// WithPorts sets the number of ports.
func (b Builder) WithPorts(n int) Builder { b.ports = n; return b }

// WithLatency sets the switching latency: the cycles from taking a cell
// from its input to appending it to its output queue.
func (b Builder) WithLatency(cycles int) Builder { b.latency = cycles; return b }

// WithQueueDepth sets the depth of each output port's cell queue.
func (b Builder) WithQueueDepth(cells int) Builder { b.depth = cells; return b }

// Clock returns the configured clock.
func (b Builder) Clock() clock.Clock { return b.clk }

// Ports returns the configured number of ports.
func (b Builder) Ports() int { return b.ports }

// Latency returns the configured latency in cycles.
func (b Builder) Latency() int { return b.latency }

// QueueDepth returns the configured output queue depth in cells.
func (b Builder) QueueDepth() int { return b.depth }

// Validate checks the parameters.
func (b Builder) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("atm switch: no env")
	case !b.clk.Valid():
		return errors.New("atm switch: no clock")
	case b.ports < 1 || b.ports > 1024:
		return fmt.Errorf("atm switch ports %d must be in 1..1024", b.ports)
	case b.latency < 0:
		return fmt.Errorf("atm switch latency %d cycles must not be negative", b.latency)
	case b.depth < 1:
		return fmt.Errorf("atm switch queue depth %d cells must be at least 1", b.depth)
	}
	return nil
}

// Build creates the switch named name and its output queues
// (name.Out[i]), and registers it with the watchdog.
func (b Builder) Build(name string) (*Switch, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &Switch{env: b.env, latency: b.latency, routes: map[routeKey]route{},
		corruptEvery: b.env.Mutation(mutCorrupt), swapEvery: b.env.Mutation(mutSwap), discardEvery: b.env.Mutation(mutDiscard)}
	if s.swapEvery > 0 {
		s.held = map[route]inflight{}
	}
	s.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, s)
	for i := range b.ports {
		// Every input may land a cell on one output in the same cycle.
		q, err := fifo.MakeBuilder[link.Flit]().WithEnv(b.env).WithDepth(b.depth).WithWidth(8 * CellBytes).
			WithEnqPerCycle(b.ports).WithOverflow(fifo.Drop).Build(fmt.Sprintf("%s.Out[%d]", name, i))
		if err != nil {
			return nil, err
		}
		q.SetConsumer(s)
		s.ports = append(s.ports, &port{q: q})
	}
	reg := b.env.Waves
	// in_flight: cells crossing the switch now; unroutable_cells and
	// bad_headers: cells dropped so far for no VC route and for a
	// corrupted header.
	s.sigInflight = reg.Integer(name, "in_flight", 32)
	s.sigNoRoute = reg.Integer(name, "unroutable_cells", 32)
	s.sigBadHeader = reg.Integer(name, "bad_headers", 32)
	b.env.Register(s)
	return s, nil
}

type routeKey struct {
	port int
	vci  uint16
}

type route struct {
	port int
	vci  uint16
}

// PortStats are one port's counters.
type PortStats struct {
	// CellsIn counts cells taken from the port's input.
	CellsIn uint64
	// CellsOut counts cells sent on the port's output.
	CellsOut uint64
	// Dropped counts cells lost at the port's full output queue.
	Dropped uint64
	// NoRoute counts cells that arrived on the port's input with no route
	// for their VCI.
	NoRoute uint64
	// BadHeader counts cells that arrived on the port's input with a
	// malformed header.
	BadHeader uint64
}

type port struct {
	in, out *link.Dir
	q       *fifo.FIFO[link.Flit]
	stats   PortStats
}

// inflight is a cell in the latency line.
type inflight struct {
	at      clock.Time // edge it reaches its output queue
	inPort  int
	inVCI   uint16
	outPort int
	outVCI  uint16
	f       link.Flit
}

// Switch is a clocked ATM cell switch.
type Switch struct {
	*clock.Ticking
	env     *env.Env
	latency int
	ports   []*port
	routes  map[routeKey]route // lookup only, never iterated
	line    []inflight         // the latency line, in time order
	onDrop  func(now clock.Time, port int, cell link.Flit, why DropReason)

	noRoute, badHeader uint64

	// test-only faults: every corruptEvery-th / swapEvery-th /
	// discardEvery-th cell taken
	corruptEvery, swapEvery, discardEvery int
	taken                                 int
	held                                  map[route]inflight // atm.swap: per output VC

	sigInflight, sigNoRoute, sigBadHeader *waves.Signal
}

// Attach connects port p: in is the link direction whose receiver is the
// switch, out the direction the switch sends on. Attach wires the switch's
// side with Dir.Connect (in.Connect(nil, switch), out.Connect(switch,
// nil)); the endpoint at the other end must wire its own side afterwards,
// naming the switch (in.Connect(endpoint, switch), out.Connect(switch,
// endpoint)), or use star.Port.Connect of a Star.
func (s *Switch) Attach(p int, in, out *link.Dir) error {
	switch {
	case p < 0 || p >= len(s.ports):
		return fmt.Errorf("%s: attach: port %d is not in 0..%d", s.Name(), p, len(s.ports)-1)
	case in == nil || out == nil:
		return fmt.Errorf("%s: attach: port %d needs both an input and an output direction", s.Name(), p)
	case s.ports[p].in != nil:
		return fmt.Errorf("%s: attach: port %d is already attached", s.Name(), p)
	}
	s.ports[p].in, s.ports[p].out = in, out
	in.Connect(nil, s)
	out.Connect(s, nil)
	return nil
}

// AddRoute adds a routing table entry: cells arriving on inPort with VCI
// inVCI leave on outPort with VCI outVCI (VCI translation; the VPI is kept).
func (s *Switch) AddRoute(inPort int, inVCI uint16, outPort int, outVCI uint16) error {
	switch {
	case inPort < 0 || inPort >= len(s.ports):
		return fmt.Errorf("%s: route: input port %d is not in 0..%d", s.Name(), inPort, len(s.ports)-1)
	case outPort < 0 || outPort >= len(s.ports):
		return fmt.Errorf("%s: route: output port %d is not in 0..%d", s.Name(), outPort, len(s.ports)-1)
	}
	k := routeKey{inPort, inVCI}
	if r, dup := s.routes[k]; dup {
		return fmt.Errorf("%s: route: input port %d VCI %d is already routed to port %d VCI %d", s.Name(), inPort, inVCI, r.port, r.vci)
	}
	s.routes[k] = route{outPort, outVCI}
	return nil
}

// Route returns the output port and VCI of cells arriving on inPort with
// VCI inVCI, and whether there is such a route.
func (s *Switch) Route(inPort int, inVCI uint16) (outPort int, outVCI uint16, ok bool) {
	r, ok := s.routes[routeKey{inPort, inVCI}]
	return r.port, r.vci, ok
}

// OnDrop sets a callback run for every cell the switch discards; port is
// the output port for QueueFull and the input port otherwise.
func (s *Switch) OnDrop(fn func(now clock.Time, port int, cell link.Flit, why DropReason)) {
	s.onDrop = fn
}

// Ports returns the number of ports.
func (s *Switch) Ports() int { return len(s.ports) }

// Queue returns the output cell queue of port p.
func (s *Switch) Queue(p int) *fifo.FIFO[link.Flit] { return s.ports[p].q }

// Stats returns the counters of port p.
func (s *Switch) Stats(p int) PortStats { return s.ports[p].stats }

// Tick implements clock.Ticker, stages ordered output first: send the head
// cells of the output queues, take cells from the inputs into the latency
// line, and append the cells whose latency has passed to their queues.
func (s *Switch) Tick(now clock.Time) bool {
	busy := s.transmit(now)
	took := s.receive(now)
	landed := s.land(now)
	return busy || took || landed
}

// transmit sends each output queue's visible head cell when the link can
// take it. It reports whether a queue still holds cells: the output polls
// its link until the serialiser is free (a NoFlowControl link never wakes
// its sender).
func (s *Switch) transmit(now clock.Time) bool {
	busy := false
	for _, p := range s.ports {
		if p.out == nil {
			continue
		}
		if f, ok := p.q.Peek(now); ok && p.out.CanSend(now, int(f.VC)) {
			p.q.Pop(now)
			p.out.Send(now, &f)
			p.stats.CellsOut++
		}
		busy = busy || p.q.Len() > 0
	}
	return busy
}

// receive takes at most one cell per input, looks it up and puts it into
// the latency line.
func (s *Switch) receive(now clock.Time) bool {
	took := false
	for i, p := range s.ports {
		if p.in == nil {
			continue
		}
		f, ok := p.in.Rx(0).Pop(now)
		if !ok {
			continue
		}
		took = true
		p.stats.CellsIn++
		h, err := CellHeader(f)
		if err != nil {
			p.stats.BadHeader++
			s.badHeader++
			s.sigBadHeader.Set(now, s.badHeader)
			s.drop(now, i, f, BadHeader, 0)
			continue
		}
		r, ok := s.routes[routeKey{i, h.VCI}]
		if ok && s.ports[r.port].out == nil {
			s.env.Report(now, s.Name(), "atm.config", "input port %d VCI %d is routed to port %d, which has nothing attached", i, h.VCI, r.port)
			ok = false
		}
		if !ok {
			p.stats.NoRoute++
			s.noRoute++
			s.sigNoRoute.Set(now, s.noRoute)
			s.drop(now, i, f, NoRoute, h.VCI)
			continue
		}
		out := h
		out.VCI = r.vci
		hdr, _ := out.Encode() // fields came from a valid header
		f.SetRoute(hdr)
		at := s.Clock().After(now, clock.Cycle(s.latency))
		c := inflight{at: at, inPort: i, inVCI: h.VCI, outPort: r.port, outVCI: r.vci, f: f}
		skip, behind := s.mutate(&c)
		if skip {
			continue
		}
		s.line = append(s.line, c)
		if behind != nil {
			s.line = append(s.line, *behind)
		}
		if at > now {
			s.WakeAt(at)
		}
	}
	if took {
		s.sigInflight.Set(now, uint64(len(s.line)))
	}
	return took
}

// mutate applies the test-only faults to a cell entering the latency line:
// skip says the cell is not to be appended, behind is a held cell to append
// behind it.
func (s *Switch) mutate(c *inflight) (skip bool, behind *inflight) {
	if s.corruptEvery == 0 && s.swapEvery == 0 && s.discardEvery == 0 {
		return false, nil
	}
	s.taken++
	if s.corruptEvery > 0 && s.taken%s.corruptEvery == 0 && len(c.f.Data) > 0 {
		c.f.Data = append([]byte(nil), c.f.Data...)
		c.f.Data[0] ^= 1
	}
	if s.discardEvery > 0 && s.taken%s.discardEvery == 0 {
		return true, nil
	}
	if s.swapEvery > 0 {
		k := route{c.outPort, c.outVCI}
		if h, ok := s.held[k]; ok {
			delete(s.held, k)
			h.at = c.at
			return false, &h
		}
		if s.taken%s.swapEvery == 0 {
			s.held[k] = *c
			return true, nil
		}
	}
	return false, nil
}

// land appends the cells whose latency has passed to their output queues,
// dropping those that find a queue full.
func (s *Switch) land(now clock.Time) bool {
	n := 0
	for _, c := range s.line {
		if c.at > now {
			break
		}
		n++
		p := s.ports[c.outPort]
		if !p.q.Push(now, c.f) {
			p.stats.Dropped++
			s.drop(now, c.outPort, c.f, QueueFull, c.outVCI)
			continue
		}
		if s.env.Trace.Enabled() {
			s.env.Trace.Emit(now, s.Clock().CycleAt(now), s.Name(), "atm.cell",
				trace.Int("in", int64(c.inPort)), trace.Uint("invci", uint64(c.inVCI)),
				trace.Int("out", int64(c.outPort)), trace.Uint("outvci", uint64(c.outVCI)),
				trace.Uint("cell", c.f.Packet()))
		}
	}
	if n == 0 {
		return false
	}
	s.line = s.line[n:]
	if len(s.line) == 0 {
		s.line = nil // let the backing array go
	}
	s.sigInflight.Set(now, uint64(len(s.line)))
	return true
}

func (s *Switch) drop(now clock.Time, port int, f link.Flit, why DropReason, vci uint16) {
	if s.env.Trace.Enabled() {
		s.env.Trace.Emit(now, s.Clock().CycleAt(now), s.Name(), "atm.drop",
			trace.Int("port", int64(port)), trace.Str("reason", why.String()),
			trace.Uint("cell", f.Packet()), trace.Uint("vci", uint64(vci)))
	}
	if s.onDrop != nil {
		s.onDrop(now, port, f, why)
	}
}

// Idle implements check.Unit: a cell in the latency line is unfinished
// work (cells in the output queues are the queues' own business).
func (s *Switch) Idle() bool { return len(s.line) == 0 }

// State implements check.Unit.
func (s *Switch) State() string {
	if len(s.line) == 0 {
		return "idle"
	}
	c := s.line[0]
	return fmt.Sprintf("%d cells in the latency line; next: cell %d from port %d to port %d at %v",
		len(s.line), c.f.Packet(), c.inPort, c.outPort, c.at)
}
