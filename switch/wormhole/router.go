// Package wormhole is an input-queued virtual-channel router with credit
// flow control, modelled stage by stage on BookSim's iq_router so that its
// configurations (and their zero-load latency and saturation throughput)
// carry over:
//
//   - Input buffers are the receive buffers of the links into the router:
//     num_vcs VCs of vc_buf_size flits (or a shared per-port pool), with a
//     credit per slot returned to the upstream router when a flit leaves.
//   - A head flit goes through route computation (routing_delay cycles; 0
//     means the previous router computed the route: lookahead), VC
//     allocation (vc_alloc_delay), switch allocation (sw_alloc_delay) and
//     switch traversal (st_prepare_delay + st_final_delay); body flits only
//     through switch allocation and traversal. Each stage evaluates items in
//     the cycle they become ready and commits them delay-1 cycles later; an
//     item a stage commits reaches the next stage in the following cycle.
//     With the mesh88_lat settings a head that becomes visible at cycle t is
//     allocated an output VC at t, the switch at t+1 and leaves at t+2.
//   - An output VC is held from head to tail (wormhole); with
//     wait_for_tail_credit it stays held until the tail's credit is back.
//     Virtual cut-through (vct) grants an output VC only when the
//     downstream VC has room for the whole packet.
//   - Switch allocation needs a downstream credit, which is spent at
//     allocation. input_speedup connects VC v of input i to crossbar input
//     i*s + v mod s; output_speedup likewise on the output side.
//   - Results never depend on tick order: inputs are seen only from the
//     edge after they land, and credits only from the edge they are due.
//
// A router sleeps when it holds no work; a flit landing in one of its input
// buffers wakes it for the edge it becomes visible.
package wormhole

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Route is a routing decision: an output port and the VCs the packet may
// use on it.
type Route struct {
	Port       int
	VCLo, VCHi int
}

// RouteFunc computes the route of a packet for destination dst arriving at
// router id on input port in.
type RouteFunc func(id, in, dst int) Route

// Packet is what a router needs from a flit's Meta, if present: the
// packet's length (for virtual cut-through) and a hop counter.
type Packet interface {
	NumFlits() int
	AddHop()
}

// Builder configures a Router.
type Builder struct {
	env   *env.Env
	clk   clock.Clock
	cfg   Config
	ports int
	id    int
	route RouteFunc
	// classes: packets keep their VC (WithVCClasses).
	classes bool
}

// MakeBuilder returns a builder with the mesh88_lat configuration.
func MakeBuilder() Builder { return Builder{cfg: Mesh88Lat(), ports: 5} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithClock sets the router clock (required).
func (b Builder) WithClock(c clock.Clock) Builder { b.clk = c; return b }

// WithConfig sets the router configuration.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithPorts sets the number of input and output ports.
func (b Builder) WithPorts(n int) Builder { b.ports = n; return b }

// WithID sets the router's number, passed to the routing function.
func (b Builder) WithID(id int) Builder { b.id = id; return b }

// WithRouting sets the routing function (required).
func (b Builder) WithRouting(f RouteFunc) Builder { b.route = f; return b }

// WithVCClasses makes every packet keep the VC it arrived on, whatever VCs
// its route allows: VCs become message classes (requests on one, responses
// on another) that never share buffers, which keeps request-response
// protocols free of deadlock and, with deterministic routing, every class
// in order from a source to a destination.
func (b Builder) WithVCClasses() Builder { b.classes = true; return b }

// Build creates the router; connect its ports with ConnectInput and
// ConnectOutput before running.
func (b Builder) Build(name string) (*Router, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case !b.clk.Valid():
		return nil, errors.New(name + ": no clock")
	case b.route == nil:
		return nil, errors.New(name + ": no routing function")
	case b.ports < 1:
		return nil, fmt.Errorf("%s: %d ports", name, b.ports)
	}
	if err := b.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := b.cfg
	r := &Router{env: b.env, cfg: c, id: b.id, route: b.route, nv: c.NumVCs, classes: b.classes,
		shared: c.BufferPolicy == "shared", haltAt: int64(b.env.Mutation(mutHalt))}
	r.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, r)
	r.in = make([]*inPort, b.ports)
	r.out = make([]*outPort, b.ports)
	for p := range b.ports {
		ip := &inPort{vcs: make([]inVC, c.NumVCs)}
		for v := range ip.vcs {
			ip.vcs[v].watch = true
		}
		r.in[p] = ip
		op := &outPort{vcs: make([]outVC, c.NumVCs)}
		for v := range op.vcs {
			op.vcs[v].owner = -1
		}
		r.out[p] = op
	}
	var err error
	if r.va, err = NewAllocator(c.VCAllocator, b.ports*c.NumVCs, b.ports*c.NumVCs); err != nil {
		return nil, err
	}
	if r.sa, err = NewAllocator(c.SWAllocator, b.ports*c.InputSpeedup, b.ports*c.OutputSpeedup); err != nil {
		return nil, err
	}
	r.swOffset = make([]int, b.ports*c.InputSpeedup)
	r.is, r.os, r.nXout = c.InputSpeedup, c.OutputSpeedup, b.ports*c.OutputSpeedup
	for v := range c.NumVCs {
		r.vcLane = append(r.vcLane, v%c.InputSpeedup)
	}
	for p := range b.ports {
		r.inLane = append(r.inLane, p%c.OutputSpeedup)
	}
	r.cand = make([]int, b.ports*c.InputSpeedup*b.ports*c.OutputSpeedup)
	r.candSpec = make([]bool, len(r.cand))
	for i := range r.cand {
		r.cand[i] = -1
	}
	reg := b.env.Waves
	r.sigActive = reg.Integer(name, "active_vcs", waves.WidthFor(uint64(b.ports*c.NumVCs)))
	r.sigSent = reg.Integer(name, "flits_out", 32)
	b.env.Register(r)
	return r, nil
}

type vcState uint8

const (
	vcIdle vcState = iota
	vcRouting
	vcAlloc
	vcActive
)

type inVC struct {
	state vcState
	route Route
	outVC int
	// watch: the VC has no stage entry and waits for its front flit.
	watch bool
}

type inPort struct {
	dir *link.Dir
	vcs []inVC
}

type outVC struct {
	owner    int  // input*NumVCs+vc holding it, -1 when free
	tailSent bool // the owner's tail has been allocated
	reserved int  // flits allocated the switch but not yet sent
}

type outPort struct {
	dir *link.Dir
	vcs []outVC
	// reserved counts the flits of all VCs allocated the switch but not
	// yet sent: with a shared buffer they all draw on one credit pool.
	reserved int
	// queue holds the flits that won the switch, in switch order, each
	// with the cycle its traversal ends; the link takes them from then on.
	queue queue.Queue[stItem]
	flits uint64
}

// entry is an item of a pipeline stage: new (t < 0) or committing at
// cycle t.
type entry struct {
	t      int64
	in, vc int
	grant  int // VC allocation: granted output port*NumVCs+VC, or -1
	win    bool
	spec   bool // VC allocation: won the switch speculatively this cycle
}

type stItem struct {
	t int64 // the cycle switch traversal ends
	f link.Flit
}

type arrival struct {
	after  clock.Time
	in, vc int
}

// mutHalt is a test-only fault (see env.DeclareMutation).
var mutHalt = env.DeclareMutation("wormhole.halt",
	"from cycle N on no wormhole router sends a flit: the routers keep ticking with their buffers full "+
		"(caught by the progress watchdog)")

// Router is a clocked input-queued VC router.
type Router struct {
	*clock.Ticking
	env     *env.Env
	cfg     Config
	id      int
	route   RouteFunc
	classes bool
	shared  bool // one credit pool per output port (buffer_policy shared)
	nv      int
	in      []*inPort
	out     []*outPort

	arrivals []arrival
	rcQ      []entry
	vaQ      []entry
	saQ      []entry
	saSpare  []entry

	va, sa   Allocator
	swOffset []int
	// Crossbar geometry: speedups, each VC's and each input's lane
	// (vc mod input_speedup, input mod output_speedup), crossbar outputs.
	is, os         int
	vcLane, inLane []int
	nXout          int
	cand           []int  // per (expanded input, expanded output): candidate VC, -1
	candSpec       []bool // the candidate is a speculative bid
	candUsed       []int

	stalls StallStats

	haltAt int64 // test-only fault wormhole.halt: no flit leaves from this cycle on (0: never)

	sigActive, sigSent *waves.Signal
}

// StallStats count why flits waited.
type StallStats struct {
	// VCAlloc counts VC-allocation attempts that got no output VC;
	// Credit the switch bids suppressed for lack of a downstream credit;
	// Switch the switch bids that lost arbitration.
	VCAlloc, Credit, Switch uint64
}

// ConnectInput attaches the link direction arriving at input port p.
func (r *Router) ConnectInput(p int, d *link.Dir) {
	r.in[p].dir = d
	d.SetReceiver(r)
	d.OnArrive(func(at clock.Time, vc int) {
		r.arrivals = append(r.arrivals, arrival{after: at, in: p, vc: vc})
	})
}

// ConnectOutput attaches the link direction leaving output port p.
func (r *Router) ConnectOutput(p int, d *link.Dir) {
	r.out[p].dir = d
	d.SetSender(r)
}

// Stalls returns the stall counters.
func (r *Router) Stalls() StallStats { return r.stalls }

// FlitsOut returns the flits sent on output port p.
func (r *Router) FlitsOut(p int) uint64 { return r.out[p].flits }

func (r *Router) cycle(now clock.Time) int64 { return int64(r.Clock().CycleAt(now)) }

// Tick implements clock.Ticker: one internal step, in BookSim's order.
func (r *Router) Tick(now clock.Time) bool {
	c := r.cycle(now)

	r.inputQueuing(now)
	if len(r.rcQ) > 0 {
		r.routeEvaluate(c)
	}
	if len(r.vaQ) > 0 {
		r.vaEvaluate(now, c)
	}
	if len(r.saQ) > 0 {
		r.saEvaluate(now, c)
	}
	if len(r.rcQ) > 0 {
		r.routeUpdate(now, c)
	}
	if len(r.vaQ) > 0 {
		r.vaUpdate(c)
	}
	if len(r.saQ) > 0 {
		r.saUpdate(now, c)
	}
	r.send(now, c)
	return len(r.rcQ)+len(r.vaQ)+len(r.saQ) > 0 || r.queued()
}

func (r *Router) outQueued() int {
	n := 0
	for _, o := range r.out {
		n += o.queue.Len()
	}
	return n
}

func (r *Router) queued() bool {
	for _, o := range r.out {
		if o.queue.Len() > 0 {
			return true
		}
	}
	return false
}

// front returns the visible head of an input VC (regardless of whether a
// flit already left the VC in this cycle).
func (r *Router) front(now clock.Time, in, vc int) *link.Flit {
	return r.in[in].dir.Rx(vc).Front(now)
}

// inputQueuing handles flits that became visible: a head reaching an idle
// VC starts routing, a flit reaching an active VC that was waiting for one
// bids for the switch in this very cycle.
func (r *Router) inputQueuing(now clock.Time) {
	n := 0
	for _, a := range r.arrivals {
		if a.after >= now {
			r.arrivals[n] = a
			n++
			continue
		}
		v := &r.in[a.in].vcs[a.vc]
		if !v.watch {
			continue
		}
		f := r.front(now, a.in, a.vc)
		if f == nil {
			continue
		}
		v.watch = false
		if v.state == vcIdle {
			r.startPacket(a.in, a.vc, f)
		} else {
			r.saQ = append(r.saQ, entry{t: -1, in: a.in, vc: a.vc})
		}
	}
	r.arrivals = r.arrivals[:n]
}

// routeOf computes the route of a packet for dst arriving on VC vc of
// input in; with VC classes it stays on vc.
func (r *Router) routeOf(in, vc, dst int) Route {
	rt := r.route(r.id, in, dst)
	if r.classes {
		rt.VCLo, rt.VCHi = vc, vc
	}
	return rt
}

// startPacket puts a head at the front of an idle VC into routing (or, with
// lookahead routing, straight into VC allocation).
func (r *Router) startPacket(in, vc int, f *link.Flit) {
	if !f.Head {
		r.env.Report(r.Now(), r.Name(), "router.protocol", "input %d VC %d: %v at the front of an idle VC", in, vc, f)
	}
	v := &r.in[in].vcs[vc]
	if r.cfg.RoutingDelay > 0 {
		v.state = vcRouting
		r.rcQ = append(r.rcQ, entry{t: -1, in: in, vc: vc})
		return
	}
	v.route = r.routeOf(in, vc, f.Dst())
	v.state = vcAlloc
	r.vaQ = append(r.vaQ, entry{t: -1, in: in, vc: vc, grant: -1})
}

func (r *Router) routeEvaluate(c int64) {
	for i := range r.rcQ {
		if r.rcQ[i].t < 0 {
			r.rcQ[i].t = c + int64(r.cfg.RoutingDelay) - 1
		}
	}
}

func (r *Router) routeUpdate(now clock.Time, c int64) {
	n := 0
	for _, e := range r.rcQ {
		if e.t > c {
			r.rcQ[n] = e
			n++
			continue
		}
		f := r.front(now, e.in, e.vc)
		v := &r.in[e.in].vcs[e.vc]
		v.route = r.routeOf(e.in, e.vc, f.Dst())
		v.state = vcAlloc
		r.vaQ = append(r.vaQ, entry{t: -1, in: e.in, vc: e.vc, grant: -1})
	}
	r.rcQ = r.rcQ[:n]
}

// available reports whether an output VC can be allocated at now.
func (r *Router) available(now clock.Time, p, ov int) bool {
	o := &r.out[p].vcs[ov]
	if o.owner >= 0 && o.tailSent && o.reserved == 0 && r.cfg.WaitForTailCredit &&
		r.out[p].dir.Outstanding(now, ov) == 0 {
		o.owner = -1 // the tail's credit is back: the downstream VC is empty
	}
	return o.owner < 0
}

func (r *Router) vaEvaluate(now clock.Time, c int64) {
	r.va.Clear()
	for i := range r.vaQ {
		e := &r.vaQ[i]
		if e.t >= 0 {
			continue
		}
		v := &r.in[e.in].vcs[e.vc]
		p := v.route.Port
		need := 1
		if r.cfg.CutThrough {
			need = r.packetFlits(now, e.in, e.vc)
		}
		for ov := v.route.VCLo; ov <= v.route.VCHi; ov++ {
			if !r.available(now, p, ov) {
				continue
			}
			if r.cfg.CutThrough && r.credits(now, p, ov) < need {
				continue
			}
			r.va.Request(e.in*r.nv+e.vc, p*r.nv+ov)
		}
	}
	r.va.Allocate()
	for i := range r.vaQ {
		e := &r.vaQ[i]
		if e.t >= 0 {
			continue
		}
		e.grant = r.va.OutputOf(e.in*r.nv + e.vc)
		e.t = c + int64(r.cfg.VCAllocDelay) - 1
	}
}

func (r *Router) packetFlits(now clock.Time, in, vc int) int {
	if p, ok := r.front(now, in, vc).Meta().(Packet); ok {
		return p.NumFlits()
	}
	return 1
}

func (r *Router) vaUpdate(c int64) {
	n := 0
	for _, e := range r.vaQ {
		if e.t < 0 || e.t > c {
			r.vaQ[n] = e
			n++
			continue
		}
		if e.grant < 0 {
			r.stalls.VCAlloc++
			e.t = -1
			r.vaQ[n] = e
			n++
			continue
		}
		p, ov := e.grant/r.nv, e.grant%r.nv
		o := &r.out[p].vcs[ov]
		if o.owner >= 0 { // taken by a grant committed in between (delay > 1)
			e.t, e.grant = -1, -1
			r.vaQ[n] = e
			n++
			continue
		}
		o.owner, o.tailSent = e.in*r.nv+e.vc, false
		v := &r.in[e.in].vcs[e.vc]
		v.outVC, v.state = ov, vcActive
		if e.spec {
			// It won the switch in this very cycle: commit with the others.
			r.saQ = append(r.saQ, entry{t: c, in: e.in, vc: e.vc, win: true})
			continue
		}
		r.saQ = append(r.saQ, entry{t: -1, in: e.in, vc: e.vc})
	}
	r.vaQ = r.vaQ[:n]
}

// saEvaluate bids for the crossbar: per expanded input and output one VC
// (BookSim's round-robin choice from swOffset), then the allocator. With
// speculation, heads that bid for an output VC in this cycle bid for the
// switch too; a non-speculative bid always displaces a speculative one, and
// a speculative grant counts only if the VC allocation succeeded and the
// granted VC has a credit.
func (r *Router) saEvaluate(now clock.Time, c int64) {
	r.sa.Clear()
	for i := range r.saQ {
		e := &r.saQ[i]
		if e.t >= 0 {
			continue
		}
		v := &r.in[e.in].vcs[e.vc]
		p, ov := v.route.Port, v.outVC
		if r.credits(now, p, ov) <= 0 {
			r.stalls.Credit++
			continue
		}
		r.bid(e.in, e.vc, p, false)
	}
	if r.cfg.Speculative {
		for _, e := range r.vaQ {
			if e.t == c { // evaluated for VC allocation in this cycle
				r.bid(e.in, e.vc, r.in[e.in].vcs[e.vc].route.Port, true)
			}
		}
	}
	r.sa.Allocate()
	is := r.cfg.InputSpeedup
	for i := range r.saQ {
		e := &r.saQ[i]
		if e.t >= 0 {
			continue
		}
		w, xin := r.won(e.in, e.vc, r.in[e.in].vcs[e.vc].route.Port)
		e.win = w
		if w {
			r.swOffset[xin] = (e.vc + is) % r.nv
		}
		e.t = c + int64(r.cfg.SWAllocDelay) - 1
	}
	if r.cfg.Speculative {
		for i := range r.vaQ {
			e := &r.vaQ[i]
			if e.t != c {
				continue
			}
			p := r.in[e.in].vcs[e.vc].route.Port
			w, xin := r.won(e.in, e.vc, p)
			if !w || e.grant < 0 || e.grant/r.nv != p {
				continue // misspeculation: the switch slot is wasted
			}
			ov := e.grant % r.nv
			if r.credits(now, p, ov) <= 0 {
				continue
			}
			r.swOffset[xin] = (e.vc + is) % r.nv
			e.spec = true
		}
	}
	for _, k := range r.candUsed {
		r.cand[k], r.candSpec[k] = -1, false
	}
	r.candUsed = r.candUsed[:0]
}

// xbar returns the crossbar input and output VC vc of input port in uses
// towards output port p, and their index in the candidate matrix.
func (r *Router) xbar(in, vc, p int) (xin, xout, k int) {
	xin, xout = in*r.is+r.vcLane[vc], p*r.os+r.inLane[in]
	return xin, xout, xin*r.nXout + xout
}

// bid makes VC vc of input in a candidate for its crossbar input and output
// (one VC per pair bids: BookSim's round-robin choice from swOffset, a
// non-speculative bid displacing a speculative one).
func (r *Router) bid(in, vc, p int, spec bool) {
	xin, xout, k := r.xbar(in, vc, p)
	cur := r.cand[k]
	switch {
	case cur < 0:
		r.candUsed = append(r.candUsed, k)
		r.cand[k], r.candSpec[k] = vc, spec
		r.sa.Request(xin, xout)
	case r.candSpec[k] && !spec:
		r.cand[k], r.candSpec[k] = vc, false
	case r.candSpec[k] == spec && r.supersedes(vc, cur, r.swOffset[xin]):
		r.cand[k] = vc
	}
}

// won reports whether VC vc of input in won the switch towards port p.
func (r *Router) won(in, vc, p int) (bool, int) {
	xin, xout, k := r.xbar(in, vc, p)
	return r.sa.OutputOf(xin) == xout && r.cand[k] == vc, xin
}

// supersedes is BookSim's round-robin rule at equal priority: the VC
// closest at or after the pointer wins.
func (r *Router) supersedes(vc, best, ptr int) bool {
	return (vc-ptr+r.nv)%r.nv < (best-ptr+r.nv)%r.nv
}

// credits returns the downstream credits output VC ov of port p can still
// spend at now: the link's credits (one pool per port with a shared
// buffer) less the flits already allocated the switch and not yet sent.
func (r *Router) credits(now clock.Time, p, ov int) int {
	o := r.out[p]
	if r.shared {
		return o.dir.Available(now, ov) - o.reserved
	}
	return o.dir.Available(now, ov) - o.vcs[ov].reserved
}

func (r *Router) saUpdate(now clock.Time, c int64) {
	cur := r.saQ
	r.saQ = r.saSpare[:0]
	for _, e := range cur {
		switch {
		case e.t < 0 || e.t > c:
			r.saQ = append(r.saQ, e)
		case !e.win:
			r.stalls.Switch++
			e.t = -1
			r.saQ = append(r.saQ, e)
		default:
			r.traverse(now, c, e) // may queue the VC's next flit
		}
	}
	r.saSpare = cur[:0]
}

// traverse moves the flit that won the switch out of its input buffer
// (returning a credit upstream) into switch traversal, and decides what
// the VC does next.
func (r *Router) traverse(now clock.Time, c int64, e entry) {
	v := &r.in[e.in].vcs[e.vc]
	rx := r.in[e.in].dir.Rx(e.vc)
	head := rx.Front(now)
	if head == nil || !rx.CanPop(now) {
		r.env.Report(now, r.Name(), "router.protocol", "input %d VC %d won the switch with no flit", e.in, e.vc)
		return
	}
	p := v.route.Port
	// The flit moves straight from the input buffer into switch traversal.
	// Switch traversal starts in the next cycle and takes
	// st_prepare_delay + st_final_delay cycles.
	r.out[p].queue.Push(stItem{t: c + int64(r.cfg.STPrepareDelay+r.cfg.STFinalDelay), f: *head})
	rx.Drop(now) // returns the credit upstream
	f := &r.out[p].queue.At(r.out[p].queue.Len() - 1).f
	if f.Head {
		if pk, ok := f.Meta().(Packet); ok {
			pk.AddHop()
		}
	}
	f.VC = uint8(v.outVC)
	o := &r.out[p].vcs[v.outVC]
	o.reserved++
	r.out[p].reserved++
	if f.Tail {
		o.tailSent = true
		if !r.cfg.WaitForTailCredit {
			o.owner = -1
		}
	}
	next := r.front(now, e.in, e.vc)
	switch {
	case next == nil && f.Tail:
		v.state, v.watch = vcIdle, true
	case next == nil:
		v.watch = true // active, waiting for the next flit of the packet
	case f.Tail:
		v.state = vcIdle
		r.startPacket(e.in, e.vc, next)
	default:
		r.saQ = append(r.saQ, entry{t: -1, in: e.in, vc: e.vc})
	}
}

// send puts at most one flit per output on its link: the oldest whose
// switch traversal has ended.
func (r *Router) send(now clock.Time, c int64) {
	if r.haltAt > 0 && c >= r.haltAt {
		return // mutation: the router keeps ticking and forwards nothing
	}
	for p, o := range r.out {
		if o.queue.Len() == 0 || o.queue.Front().t > c {
			continue
		}
		f := &o.queue.Front().f
		if !o.dir.Idle(now) {
			continue // a multi-cycle flit is still being serialised
		}
		o.vcs[f.VC].reserved--
		o.reserved--
		if !o.dir.Send(now, f) {
			o.vcs[f.VC].reserved++
			o.reserved++
			continue
		}
		if r.env.Trace.Enabled() && f.Head {
			r.env.Trace.Emit(now, r.Clock().CycleAt(now), r.Name(), "router.head",
				trace.Uint("pkt", f.Packet()), trace.Int("out", int64(p)), trace.Int("vc", int64(f.VC)), trace.Int("dst", int64(f.Dst())))
		}
		o.queue.Discard()
		o.flits++
		r.sigSent.Set(now, r.totalOut())
	}
}

func (r *Router) totalOut() uint64 {
	var n uint64
	for _, o := range r.out {
		n += o.flits
	}
	return n
}

// Idle implements check.Unit.
func (r *Router) Idle() bool {
	return len(r.rcQ)+len(r.vaQ)+len(r.saQ) == 0 && !r.queued()
}

// State implements check.Unit.
func (r *Router) State() string {
	return fmt.Sprintf("route %d, VC alloc %d, switch alloc %d, traversal or link %d waiting", len(r.rcQ), len(r.vaQ), len(r.saQ), r.outQueued())
}
