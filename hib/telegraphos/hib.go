package telegraphos

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/cam"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Builder configures a HIB.
type Builder struct {
	env   *env.Env
	cfg   Config
	node  int
	nodes int
}

// MakeBuilder returns a builder of a Telegraphos I HIB.
func MakeBuilder() Builder { return Builder{cfg: TelegraphosI(), nodes: 2} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithConfig sets the parameters.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithNode sets the HIB's node number and the number of nodes.
func (b Builder) WithNode(node, nodes int) Builder { b.node, b.nodes = node, nodes; return b }

// Build creates the HIB. Connect its TURBOchannel port (Port) to the bus,
// its memory ports (AttachMemory) and its link (AttachLink) before running.
func (b Builder) Build(name string) (*HIB, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case b.nodes < 1 || b.nodes > MaxNodes:
		return nil, fmt.Errorf("%s: %d nodes must be in 1..%d (4 node bits, TG-P8)", name, b.nodes, MaxNodes)
	case b.node < 0 || b.node >= b.nodes:
		return nil, fmt.Errorf("%s: node %d is not in 0..%d", name, b.node, b.nodes-1)
	}
	if err := b.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h := &HIB{env: b.env, cfg: b.cfg, node: b.node, nodes: b.nodes, memLock: -1, mcOwner: -1,
		pages: map[int]*pageState{}, counters: map[int]*[2]uint32{},
		forgetEvery: b.env.Mutation(mutForget), acceptKeys: b.env.Mutation(mutAcceptKey) > 0,
		noInterlock: b.env.Mutation(mutNoInterlock) > 0}
	h.Ticking = clock.NewTicking(name, b.env.Engine, b.cfg.Clock, h)
	tc, err := mem.NewChannel(b.env, name+".TC", WordBytes, 2)
	if err != nil {
		return nil, err
	}
	tc.ConnectTarget(h)
	h.tc = tc
	h.cpu = newSequencer(h, 0, name+".Ctl")
	h.srv = newSequencer(h, 1, name+".Srv")
	h.sink = newSequencer(h, 2, name+".Sink")
	if b.cfg.CounterCache > 0 {
		h.cc, err = cam.MakeBuilder[uint32, int]().WithEnv(b.env).WithEntries(b.cfg.CounterCache).
			WithPolicy(cam.Stall).WithWatchdog(true).Build(name + ".CounterCache")
		if err != nil {
			return nil, err
		}
	}
	h.ctxs = make([]context, b.cfg.Contexts)
	reg := b.env.Waves
	h.sigOutstanding = reg.Integer(name, "outstanding", 16)
	h.sigIntr = reg.Wire(name, "irq", 1)
	b.env.Register(h)
	return h, nil
}

// HIB is a Telegraphos host interface board.
type HIB struct {
	*clock.Ticking
	env   *env.Env
	cfg   Config
	node  int
	nodes int

	tc      *mem.Channel // TURBOchannel target port
	memBase uint64       // where the shared memory starts on the memory ports
	out, in *link.Dir

	cpu, srv, sink *sequencer
	memLock        int // sequencer holding the memory for an atomic operation, -1
	mcOwner        int // sequencer holding the multicast unit, -1
	outIf          [numClasses]outIf
	inIf           [numClasses]inIf
	seq            uint64 // packets sent
	writes         uint64 // this node's processor writes to replicated pages

	// tables
	pages    map[int]*pageState    // local page -> replication state
	counters map[int]*[2]uint32    // global page -> read, write access counters
	cc       *cam.CAM[uint32, int] // counter cache: word offset -> pending writes
	applying reflectWrite          // a reflected write between its counter check and its memory write (sinkReflect)
	ctxs     []context

	// Telegraphos I special mode (PAL code)
	special specialMode

	// the TURBOchannel access being served
	tcReq  *mem.Req
	tcData uint32

	// one outstanding remote read (TG-P12) and one atomic
	waitKind  Kind
	waitReply *Packet

	outstanding int
	intStatus   uint32
	intPage     uint32
	pcSelect    int
	onInterrupt func(now clock.Time)
	onPacket    func(now clock.Time, p *Packet, sent bool)
	stats       Stats
	hooks       Hooks

	// test-only faults: every forgetEvery-th increment of a pending
	// counter is lost; shadow stores with a wrong key are accepted; a
	// store does not wait for a reflected write to its word
	forgetEvery int
	counterUps  int
	acceptKeys  bool
	noInterlock bool

	sigOutstanding, sigIntr *waves.Signal
}

// Test-only faults (see env.DeclareMutation).
var (
	mutForget = env.DeclareMutation("tg.forget",
		"the counter cache forgets every Nth increment of a word's pending counter (a write of this node it no longer "+
			"waits for: caught by the coherence checker and the tg.counter rule)")
	mutAcceptKey = env.DeclareMutation("tg.acceptkey",
		"with N > 0 the HIB accepts a shadow store to a context whatever its key (caught by the protection checks)")
)

// Stats are a HIB's counters.
type Stats struct {
	Reads, Writes, RemoteReads, RemoteWrites, Atomics, Copies uint64
	Updates, Reflects, ReflectsIgnored, OwnReflects           uint64
	Refused, PageAlarms, CounterStalls                        uint64
	MaxCounters                                               int
}

// Hooks let checkers and testbenches observe the HIB: every shared-memory
// word the HIB writes or reads on behalf of anyone.
type Hooks struct {
	// Applied runs when a write of value by origin (its write number seq)
	// lands in this node's copy at offset off.
	Applied func(now clock.Time, off uint32, value uint32, origin int, seq uint64)
	// Ignored runs when a reflected write is ignored because of a pending
	// counter (2.3.3 rule 3) or recognised as this node's own (rule 2).
	Ignored func(now clock.Time, off uint32, value uint32, origin int, seq uint64, own bool)
}

// Port returns the HIB's TURBOchannel target channel (map it on the bus at
// WindowBase, WindowBytes).
func (h *HIB) Port() *mem.Channel { return h.tc }

// AttachMemory connects the three sequencers to the local shared memory (the
// on-board memory of Telegraphos I, or host memory through bus master
// channels for Telegraphos II); shared offset 0 is at base on them.
func (h *HIB) AttachMemory(base uint64, ports [3]*mem.Channel) {
	h.memBase = base
	for i, e := range []*sequencer{h.cpu, h.srv, h.sink} {
		e.mem = ports[i]
		ports[i].ConnectMaster(h)
	}
}

// AttachLink connects the HIB to its switch: it sends on out and receives
// on in.
func (h *HIB) AttachLink(out, in *link.Dir) {
	h.out, h.in = out, in
	out.SetSender(h)
	in.SetReceiver(h)
}

// OnInterrupt sets the interrupt line's handler (the host CPU).
func (h *HIB) OnInterrupt(fn func(now clock.Time)) { h.onInterrupt = fn }

// SetHooks sets the observation hooks.
func (h *HIB) SetHooks(k Hooks) { h.hooks = k }

// Node returns the HIB's node number.
func (h *HIB) Node() int { return h.node }

// Config returns the parameters.
func (h *HIB) Config() Config { return h.cfg }

// Stats returns the counters.
func (h *HIB) Stats() Stats {
	s := h.stats
	if h.cc != nil {
		s.MaxCounters = h.cc.Stats().MaxOccupancy
	}
	return s
}

// Outstanding returns the outstanding-operation counter.
func (h *HIB) Outstanding() int { return h.outstanding }

// Tick implements clock.Ticker: the response sink first (it frees what the
// others wait for), then the request server, then the TURBOchannel side.
func (h *HIB) Tick(now clock.Time) bool {
	progress := h.moveOut(now)
	progress = h.moveIn(now) || progress
	if !h.sink.busy() && h.inIf[Response].done {
		h.startSink(now)
	}
	progress = h.sink.run(now) || progress
	if !h.srv.busy() && h.inIf[Request].done {
		h.startServer(now)
	}
	progress = h.srv.run(now) || progress
	if !h.cpu.busy() {
		if b, ok := h.tc.Down.Peek(now); ok {
			h.startCPU(now, b)
			progress = true
		}
	}
	progress = h.cpu.run(now) || progress
	// No polling: what a waiting sequencer waits for changes either in a tick
	// that made progress (another sequencer, an interface) or through a FIFO
	// or channel that wakes the HIB (a link word, a memory response, room
	// in a FIFO, a TURBOchannel access); timed steps wake it themselves.
	return progress
}

// sent and received keep the statistics and the trace of packets.
func (h *HIB) sent(now clock.Time, p *Packet) {
	if p.Kind == KWrite || p.Kind == KUpdate || p.Kind == KCopyReq {
		h.setOutstanding(now, h.outstanding+1)
	}
	if h.onPacket != nil {
		h.onPacket(now, p, true)
	}
	h.emit(now, "tg.send", p)
}

func (h *HIB) received(now clock.Time, p *Packet) {
	if p.Dst != h.node {
		h.env.Report(now, h.Name(), "tg.misroute", "%v arrived at node %d", p, h.node)
	}
	if h.onPacket != nil {
		h.onPacket(now, p, false)
	}
	h.emit(now, "tg.recv", p)
}

func (h *HIB) emit(now clock.Time, kind string, p *Packet) {
	if !h.env.Trace.Enabled() {
		return
	}
	fields := []trace.Field{trace.Str("kind", p.Kind.String()), trace.Int("src", int64(p.Src)), trace.Int("dst", int64(p.Dst)),
		trace.Addr("addr", uint64(p.Addr)), trace.Uint("data", uint64(p.Data[0]))}
	if p.Kind == KReflect || p.Kind == KUpdate {
		fields = append(fields, trace.Int("origin", int64(p.Origin)))
	}
	h.env.Trace.Emit(now, h.Clock().CycleAt(now), h.Name(), kind, fields...)
}

func (h *HIB) setOutstanding(now clock.Time, n int) {
	if n < 0 {
		h.env.Report(now, h.Name(), "tg.outstanding", "acknowledgement with no operation outstanding")
		n = 0
	}
	h.outstanding = n
	h.sigOutstanding.Set(now, uint64(n))
}

// interrupt raises cause on the interrupt line.
func (h *HIB) interrupt(now clock.Time, cause uint32) {
	h.intStatus |= cause
	h.sigIntr.SetBool(now, true)
	if h.onInterrupt != nil {
		h.onInterrupt(now)
	}
}

// refuse counts a protection refusal and raises its interrupt.
func (h *HIB) refuse(now clock.Time, format string, args ...any) {
	h.stats.Refused++
	if h.env.Trace.Enabled() {
		h.env.Trace.Emit(now, h.Clock().CycleAt(now), h.Name(), "tg.refused", trace.Str("why", fmt.Sprintf(format, args...)))
	}
	h.interrupt(now, IntRefused)
}

// Idle implements check.Unit: no sequencer has work and nothing is
// outstanding.
func (h *HIB) Idle() bool {
	return !h.cpu.busy() && !h.srv.busy() && !h.sink.busy() && h.outstanding == 0 &&
		h.outIf[Request].pkt == nil && h.outIf[Response].pkt == nil && h.inIf[Request].pkt == nil && h.inIf[Response].pkt == nil
}

// State implements check.Unit.
func (h *HIB) State() string {
	return fmt.Sprintf("control %s, server %s, sink %s, %d operations outstanding", h.cpu.state, h.srv.state, h.sink.state, h.outstanding)
}
