// Package env is the simulation context every nisim component is built in:
// the serial engine (Akita's sim.Engine with Akita's event order, a time
// limit and an explicit stop), the
// waveform registry, the transaction recorder, the checker Monitor and the
// run seed. Builders take an *Env; Run runs the engine and then the
// completion watchdog.
package env

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
	"github.com/sarchlab/akita/v3/sim"
)

// Options configure an Env. Every field may be left zero.
type Options struct {
	// Waves receives signal declarations and changes; nil disables
	// waveforms at the cost of one nil check per update.
	Waves *waves.Registry
	// Trace receives transaction records; nil disables tracing.
	Trace *trace.Recorder
	// Seed is the run seed; components derive their own streams from it
	// and their names (Rand).
	Seed uint64
	// TimeLimit stops the run at this time (0: no limit).
	TimeLimit clock.Time
	// StallLimit is the progress watchdog's limit: a run in which some
	// registered unit holds work and nothing has recorded progress
	// (Monitor.Progress) for longer than this is stopped with a stuck-state
	// report. 0 means DefaultStallLimit; a negative value disables the
	// watchdog.
	StallLimit clock.Time
	// Mutations switch on test-only faults by name (see DeclareMutation):
	// a broken model for checking that the checkers catch it. The value is
	// the mutation's parameter (every Nth flit, ...); absent or 0 is off.
	Mutations map[string]int
	// Progress, when set, is called with the current simulated time and
	// the number of events run so far after every ProgressEvery-th event:
	// a counter check on the hot path, no wall-clock reads. It observes
	// only; it must not schedule events or touch components (the command
	// line turns it into a progress bar on standard error).
	Progress func(now clock.Time, events uint64)
	// Phases, when set, is called by a run made of a known list of
	// measurements (Env.Phase: an LCI benchmark runs most of them in
	// environments of their own, which Progress cannot see) with how many
	// are done of the total and the next one's name. It observes only,
	// like Progress.
	Phases func(done, total int, next string)
}

// ProgressEvery is how many events pass between Options.Progress calls.
// calibrated: an event costs microseconds of wall time (nisim run mesh
// --set k=4 --set measure_periods=40: 41143 events in 0.27 s of run, at
// most 6.6 µs each; lci-broadcast: 40704 events in its first 0.19 s), so
// 256 events is a few milliseconds, and a progress call (a clock read, at
// most one redraw per 100 ms) every 256 events is a fraction of a
// nanosecond per event. (lci-broadcast's other seconds of wall time are
// its broadcast throughput stream, which runs in an environment of its own
// that this hook does not see: 94% of a 9.6 s profile under
// lcitb.BroadcastStream; Options.Phases shows them.)
const ProgressEvery = 1 << 8

// DefaultStallLimit is the progress watchdog's limit when Options leave it
// zero. assumed: every system built so far records progress (a delivery, a
// retirement, a firmware transition, a DMA completion) at least every few
// tens of microseconds while it holds work (the slowest single step is an
// LCI host DMA of a 2 KB MTU packet, about 20 µs on the PPro's PCI), so
// 500 µs of silence with work outstanding is a stuck model, found in a
// fraction of a second of wall time.
const DefaultStallLimit = 500 * clock.Microsecond

// Env is one simulation.
type Env struct {
	Engine  *Engine
	Waves   *waves.Registry
	Trace   *trace.Recorder
	Monitor *check.Monitor
	Seed    uint64

	mutations map[string]int
	phases    func(done, total int, next string)
}

// New creates a simulation context with a serial engine (the only engine
// nisim uses: it is deterministic).
func New(o Options) *Env {
	mon := check.NewMonitor()
	stall := o.StallLimit
	if stall == 0 {
		stall = DefaultStallLimit
	}
	if stall < 0 {
		stall = 0
	}
	g := &Engine{limit: o.TimeLimit, mon: mon, stall: stall, progress: o.Progress}
	return &Env{
		Engine:    g,
		Waves:     o.Waves,
		Trace:     o.Trace,
		Monitor:   mon,
		Seed:      o.Seed,
		mutations: o.Mutations,
		phases:    o.Phases,
	}
}

// Phase reports that done of a run's total measurements have finished and
// next is starting ("" after the last) to Options.Phases, if set. It
// changes nothing in the simulation.
func (e *Env) Phase(done, total int, next string) {
	if e != nil && e.phases != nil {
		e.phases(done, total, next)
	}
}

// Mutation returns the parameter of the named test-only fault, 0 when it is
// off. Components read it once when they are built.
func (e *Env) Mutation(name string) int { return e.mutations[name] }

// Progress records forward progress at the current time (see
// check.Monitor.Progress).
func (e *Env) Progress() { e.Monitor.Progress(e.Now()) }

// AllowQuiet raises the progress watchdog's limit to d when d is longer:
// software that polls (cpu.Step.Poll) by design for up to a timer's
// length with nothing else happening (a retransmission timeout longer
// than the default limit) declares it when it is built, so the watchdog
// does not take the wait for a stuck model. A disabled watchdog stays
// disabled; d <= 0 changes nothing.
func (e *Env) AllowQuiet(d clock.Time) {
	if g := e.Engine; g.stall > 0 && d > g.stall {
		g.stall = d
	}
}

// StallLimit returns the progress watchdog's limit in force (0: off).
func (e *Env) StallLimit() clock.Time { return e.Engine.stall }

// Now returns the current simulated time.
func (e *Env) Now() clock.Time { return e.Engine.now }

// Rand returns a random stream for the named component, derived from the
// run seed and the name only, so that adding a component does not change
// the streams of the others.
func (e *Env) Rand(name string) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return rand.New(rand.NewPCG(e.Seed, h.Sum64()))
}

// Register adds a unit for the completion watchdog.
func (e *Env) Register(u check.Unit) { e.Monitor.Register(u) }

// Report records a checker violation.
func (e *Env) Report(t clock.Time, path, rule, format string, args ...any) {
	e.Monitor.Report(t, path, rule, format, args...)
}

// Tracing reports whether the run records transactions.
func (e *Env) Tracing() bool { return e.Trace.Enabled() }

// Emit records a transaction of path at time t (cycle c of its clock)
// with fields given as key, value pairs, for code that may not import
// verify/trace (firmware programs); nothing when the run does not trace.
func (e *Env) Emit(t clock.Time, c clock.Cycle, path, kind string, kv ...string) {
	if !e.Trace.Enabled() {
		return
	}
	fields := make([]trace.Field, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		fields = append(fields, trace.Str(kv[i], kv[i+1]))
	}
	e.Trace.Emit(t, c, path, kind, fields...)
}

// Result summarises a finished run.
type Result struct {
	// End is the time of the last event.
	End clock.Time
	// Events is the number of events the engine ran.
	Events uint64
	// Stopped is true when the run ended at the time limit or by Stop
	// rather than by running out of events.
	Stopped bool
	// Stuck is true when the progress watchdog stopped the run.
	Stuck bool
}

// Run starts the registry, runs the engine until no events remain or the run
// is stopped, flushes the observers and, if the engine ran dry, runs the
// watchdog. The error joins checker violations, watchdog findings and
// waveform or trace errors; a nil error means the run completed cleanly.
func (e *Env) Run() (Result, error) {
	e.Waves.Start()
	if err := e.Engine.Run(); err != nil {
		return Result{}, fmt.Errorf("engine: %w", err)
	}
	res := Result{End: e.Engine.last, Events: e.Engine.events, Stopped: e.Engine.stopped, Stuck: e.Engine.stuck != nil}
	e.Waves.Flush()
	e.Trace.Flush()
	var errs []error
	if res.Stuck {
		errs = append(errs, e.Engine.stuck)
	} else if !res.Stopped {
		if err := e.Monitor.Watchdog(res.End); err != nil {
			errs = append(errs, err)
		}
	}
	if err := e.Monitor.Err(); err != nil {
		errs = append([]error{err}, errs...)
	}
	if err := e.Waves.Err(); err != nil {
		errs = append(errs, err)
	}
	if err := e.Trace.Err(); err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

// Stop ends the run at the current time: no component ticks after it.
func (e *Env) Stop() { e.Engine.stopAt(e.Now()) }

// Engine is nisim's serial event engine, with a time limit: events after
// the limit are not scheduled and components do not tick after it. It
// implements Akita's sim.Engine (events, handlers and hooks are Akita's)
// and runs events in exactly the order Akita v3's SerialEngine does: two
// queues, primary and secondary events, each a binary heap on the events'
// times with container/heap's sift-up and sift-down (so events of equal
// time leave in the same order as there), the primary event first when
// both queues hold the same time; hooks before and after each event.
//
// Unlike Akita's engine it takes no lock per event: Akita's takes a
// read-write lock on every read and write of its time and a mutex on
// every queue operation (five per event), and its heap asks each event
// for its time through an interface at every comparison; that was about
// 6% of a 64-node LCI run (issue 16). This engine keeps each event's time
// beside it in the heap and is run from one goroutine, as every nisim
// model is (no goroutines in models); Pause still blocks a Run between
// events until Continue.
type Engine struct {
	sim.HookableBase
	primary, secondary eventHeap
	nowSim             sim.VTimeInSec // the time of the event running or last run
	now                clock.Time     // FromSim(nowSim)
	pause              sync.Mutex     // held by Run while an event runs, and by Pause
	paused             bool
	endHandlers        []sim.SimulationEndHandler

	limit   clock.Time // 0: none
	stopped bool
	last    clock.Time
	events  uint64
	domains clock.Domains

	mon   *check.Monitor
	stall clock.Time // 0: no progress watchdog
	stuck error      // the stuck-state report, once the watchdog fired

	progress func(now clock.Time, events uint64) // Options.Progress
}

// NowPS implements clock.NowSource: the current time in picoseconds, set
// from each event's time before the event runs, so that components read
// it without a call and a float conversion.
func (g *Engine) NowPS() *clock.Time { return &g.now }

// CurrentTime implements sim.TimeTeller: the time of the event running (or
// of the last one run; 0 before the first).
func (g *Engine) CurrentTime() sim.VTimeInSec { return g.nowSim }

// ClockDomain implements clock.DomainOwner: the components of one clock
// share one tick event per edge.
func (g *Engine) ClockDomain(c clock.Clock) *clock.Domain { return g.domains.For(g, c) }

// Schedule implements sim.EventScheduler. An event earlier than the
// current time panics, as in Akita.
func (g *Engine) Schedule(evt sim.Event) {
	st := evt.Time()
	t := clock.FromSim(st)
	if g.limit > 0 && t > g.limit {
		g.stopped = true
		return
	}
	if st < g.nowSim {
		panic(fmt.Sprintf("env: scheduling an event at %v, earlier than the current time %v", t, g.now))
	}
	if evt.IsSecondary() {
		g.secondary.push(st, evt)
		return
	}
	g.primary.push(st, evt)
}

// Run implements sim.Engine: it runs events until none is left and counts
// them. Handler errors are ignored, as in Akita's serial engine.
func (g *Engine) Run() error {
	for len(g.primary) > 0 || len(g.secondary) > 0 {
		g.pause.Lock()
		// Akita's nextEvent: the primary event unless the secondary
		// queue's first is strictly earlier.
		var evt sim.Event
		switch {
		case len(g.primary) == 0:
			evt = g.secondary.pop()
		case len(g.secondary) == 0 || g.primary[0].t <= g.secondary[0].t:
			evt = g.primary.pop()
		default:
			evt = g.secondary.pop()
		}
		g.nowSim = evt.Time()
		g.now = clock.FromSim(g.nowSim)
		ctx := sim.HookCtx{Domain: g, Pos: sim.HookPosBeforeEvent, Item: evt}
		g.InvokeHook(ctx)
		_ = evt.Handler().Handle(evt)
		ctx.Pos = sim.HookPosAfterEvent
		g.InvokeHook(ctx)
		g.afterEvent()
		g.pause.Unlock()
	}
	return nil
}

// Pause implements sim.Engine: Run stops before its next event until
// Continue.
func (g *Engine) Pause() {
	if g.paused {
		return
	}
	g.pause.Lock()
	g.paused = true
}

// Continue implements sim.Engine: a paused Run goes on.
func (g *Engine) Continue() {
	if !g.paused {
		return
	}
	g.paused = false
	g.pause.Unlock()
}

// RegisterSimulationEndHandler implements sim.Engine.
func (g *Engine) RegisterSimulationEndHandler(h sim.SimulationEndHandler) {
	g.endHandlers = append(g.endHandlers, h)
}

// Finished implements sim.Engine: it calls the simulation end handlers with
// the current time.
func (g *Engine) Finished() {
	for _, h := range g.endHandlers {
		h.Handle(g.nowSim)
	}
}

// queued is an event in a queue with its time.
type queued struct {
	t  sim.VTimeInSec
	ev sim.Event
}

// eventHeap is a binary min-heap of events on their times with
// container/heap's algorithm (the parent of j is (j-1)/2; sift-down takes
// the right child only when it is strictly earlier than the left), so
// that events of equal time leave in the order they leave Akita's
// EventQueueImpl. An event's time does not change while it is queued.
type eventHeap []queued

func (h *eventHeap) push(t sim.VTimeInSec, ev sim.Event) {
	*h = append(*h, queued{t: t, ev: ev})
	q := *h
	j := len(q) - 1
	for {
		i := (j - 1) / 2 // parent
		if i == j || !(q[j].t < q[i].t) {
			break
		}
		q[i], q[j] = q[j], q[i]
		j = i
	}
}

func (h *eventHeap) pop() sim.Event {
	q := *h
	n := len(q) - 1
	q[0], q[n] = q[n], q[0]
	i := 0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 {
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && q[j2].t < q[j1].t {
			j = j2 // right child
		}
		if !(q[j].t < q[i].t) {
			break
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
	ev := q[n].ev
	q[n] = queued{}
	*h = q[:n]
	return ev
}

// Stopped implements clock.Stopper.
func (g *Engine) Stopped(t clock.Time) bool {
	if g.limit > 0 && t > g.limit {
		g.stopped = true
		return true
	}
	return false
}

func (g *Engine) stopAt(t clock.Time) {
	// The run ends by Stop even if no later event is ever cut off (every
	// component happened to go idle at t): the watchdog must not run.
	g.stopped = true
	if g.limit == 0 || t < g.limit {
		g.limit = max(t, 1)
	}
}

// AfterStep runs fn once all components have ticked at time t (t must be
// the current time or later): an Akita secondary event, which the serial
// engine runs after every primary event of the same time. Components use it
// to evaluate registered outputs (a FIFO's high-water flag) on the settled
// state of a picosecond instead of on a transient that depends on tick
// order.
func (g *Engine) AfterStep(t clock.Time, fn func(now clock.Time)) {
	g.Schedule(&stepEvent{t: clock.ToSim(t), fn: fn})
}

type stepEvent struct {
	t  sim.VTimeInSec
	fn func(now clock.Time)
}

func (e *stepEvent) Time() sim.VTimeInSec { return e.t }
func (e *stepEvent) Handler() sim.Handler { return e }
func (e *stepEvent) IsSecondary() bool    { return true }

// Handle implements sim.Handler.
func (e *stepEvent) Handle(sim.Event) error {
	e.fn(clock.FromSim(e.t))
	return nil
}

// afterEvent counts the event that just ran (after the hooks), reports
// progress and runs the progress watchdog.
func (g *Engine) afterEvent() {
	t := g.now
	if g.limit > 0 && t > g.limit {
		// Scheduled before a Stop, run after it: components ignore it
		// (Stopped), so it neither counts nor moves End past the stop.
		return
	}
	g.last = t
	g.events++
	if g.progress != nil && g.events%ProgressEvery == 0 {
		g.progress(t, g.events)
	}
	if g.stall > 0 && t-g.mon.LastProgress() > g.stall && g.stuck == nil {
		g.checkStall(t)
	}
}

// checkStall runs when nothing has recorded progress for longer than the
// stall limit: if some unit holds work the model is stuck, and the run
// stops with the stuck-state report; otherwise the model is merely idle
// (clocks or timers still running) and the window restarts now.
func (g *Engine) checkStall(t clock.Time) {
	err := g.mon.StuckReport(t, fmt.Sprintf("no progress for more than %v", g.stall))
	if err == nil {
		g.mon.Progress(t)
		return
	}
	g.stuck = err
	g.stopAt(t)
}
