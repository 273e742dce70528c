// Package fifo is nisim's hardware FIFO: depth entries of a given width,
// a bounded number of enqueues and dequeues per cycle, occupancy, full and
// empty flags, and a programmable high-water mark that raises a signal (the
// SHRIMP outgoing FIFO's threshold interrupt, shrimp-design-choices.txt
// section 4.3.2). FIFOs are the registers between components: an entry
// pushed at time t becomes visible to the consumer at its first clock edge
// after t, and space freed at t becomes visible to the producer after t, so
// the result never depends on which of two components ticks first within a
// picosecond. The producer and consumer may run on different clocks.
//
// Overflow (a push into a full FIFO) is a checker violation reported to the
// run's Monitor, unless the FIFO is built to drop and count.
package fifo

import (
	"errors"
	"fmt"
	"math"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Test-only faults (see env.DeclareMutation): the FIFO's flow-control
// outputs lie to a producer that trusts them.
var (
	mutNoFull = env.DeclareMutation("fifo.nofull",
		"every Nth time a FIFO's CanPush should refuse because the FIFO is full it says yes (the full flag stuck at 0): "+
			"the producer pushes into a full FIFO (caught by fifo.overflow)")
	mutNoRate = env.DeclareMutation("fifo.norate",
		"every Nth time a FIFO's CanPush should refuse because this cycle's enqueues are used up it says yes: "+
			"the producer pushes more than the FIFO takes per cycle (caught by fifo.rate)")
)

// Overflow says what a push into a full FIFO does.
type Overflow uint8

const (
	// Fail reports a checker violation (the default): hardware that can
	// overflow must check for space first.
	Fail Overflow = iota
	// Drop discards the entry and counts it, for hardware that may lose
	// data (an ATM cell queue).
	Drop
)

// Builder configures a FIFO.
type Builder[T any] struct {
	env       *env.Env
	depth     int
	widthBits int
	enqPer    int
	deqPer    int
	highWater int
	overflow  Overflow
	traceClk  clock.Clock
}

// MakeBuilder returns a builder with defaults: depth 2, 32-bit entries, one
// enqueue and one dequeue per cycle, no high-water mark, overflow fails.
func MakeBuilder[T any]() Builder[T] {
	return Builder[T]{depth: 2, widthBits: 32, enqPer: 1, deqPer: 1, highWater: -1}
}

// WithEnv sets the simulation the FIFO belongs to (required).
func (b Builder[T]) WithEnv(e *env.Env) Builder[T] { b.env = e; return b }

// WithDepth sets the number of entries.
func (b Builder[T]) WithDepth(n int) Builder[T] { b.depth = n; return b }

// WithWidth sets the entry width in bits (1..4096); it sizes the FIFO in
// bytes (CapacityBytes) for reports.
func (b Builder[T]) WithWidth(bits int) Builder[T] { b.widthBits = bits; return b }

// WithEnqPerCycle sets how many entries may be pushed per producer cycle.
func (b Builder[T]) WithEnqPerCycle(n int) Builder[T] { b.enqPer = n; return b }

// WithDeqPerCycle sets how many entries may be popped per consumer cycle.
func (b Builder[T]) WithDeqPerCycle(n int) Builder[T] { b.deqPer = n; return b }

// WithHighWater sets the high-water mark: the hwm signal rises (and the
// OnHighWater callback runs) when occupancy exceeds n entries, and falls
// when it is back at n or below. Negative disables it.
func (b Builder[T]) WithHighWater(n int) Builder[T] { b.highWater = n; return b }

// WithOverflow sets the overflow policy.
func (b Builder[T]) WithOverflow(o Overflow) Builder[T] { b.overflow = o; return b }

// WithTrace makes the FIFO record, for every picosecond in which entries
// were pushed or popped, one fifo.step record with the number of pushes and
// pops and the settled occupancy, stamped with cycles of clk. (One record
// per step, written once the step has settled, keeps the trace independent
// of whether the producer or the consumer ran first.) Off by default: the
// components on either side usually record the transactions that matter.
func (b Builder[T]) WithTrace(clk clock.Clock) Builder[T] { b.traceClk = clk; return b }

// Validate checks the parameters.
func (b Builder[T]) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("fifo: no env")
	case b.depth < 1:
		return fmt.Errorf("fifo depth %d must be at least 1", b.depth)
	case b.widthBits < 1 || b.widthBits > 4096:
		return fmt.Errorf("fifo width %d bits must be in 1..4096", b.widthBits)
	case b.enqPer < 1 || b.deqPer < 1:
		return fmt.Errorf("fifo enqueues (%d) and dequeues (%d) per cycle must be at least 1", b.enqPer, b.deqPer)
	case b.highWater >= b.depth:
		return fmt.Errorf("fifo high-water mark %d must be below the depth %d", b.highWater, b.depth)
	}
	return nil
}

// Namer names the FIFOs a component builds in bulk (a link's receive
// buffers): FIFOName(i) is the name of its FIFO number i. A FIFO built with
// BuildNamed keeps the namer and i instead of a name string and makes its
// name when asked (a report, a trace record, the watchdog), so that the
// 48,128 receive buffers of a 32x32 mesh hold no names (issue 16).
type Namer interface {
	FIFOName(i int) string
}

// fixedName is the Namer of a FIFO built with a name.
type fixedName string

// FIFOName implements Namer.
func (s fixedName) FIFOName(int) string { return string(s) }

// Build creates the FIFO named name (a hierarchical component name such as
// "Demo.NI.TxFifo") and registers it with the watchdog.
func (b Builder[T]) Build(name string) (*FIFO[T], error) {
	return b.build(fixedName(name), 0)
}

// BuildNamed creates the FIFO named n.FIFOName(i), asking n for the name
// only when it is needed, and registers it with the watchdog. i must be in
// 0..2^31-1.
func (b Builder[T]) BuildNamed(n Namer, i int) (*FIFO[T], error) {
	if n == nil || i < 0 || i > math.MaxInt32 {
		return nil, fmt.Errorf("fifo: namer %v and index %d: want a namer and an index in 0..%d", n, i, math.MaxInt32)
	}
	return b.build(n, int32(i))
}

func (b Builder[T]) build(n Namer, i int32) (*FIFO[T], error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", n.FIFOName(int(i)), err)
	}
	f := &FIFO[T]{
		name: n, nameIdx: i, env: b.env, buf: make([]entry[T], min(b.depth, initialSlots)),
		depth: b.depth, widthBits: b.widthBits, enqPer: b.enqPer, deqPer: b.deqPer,
		overflow: b.overflow,
		lastEnq:  -1, lastDeq: -1, lastChange: -1,
	}
	noFull, noRate := b.env.Mutation(mutNoFull), b.env.Mutation(mutNoRate)
	traced := b.traceClk.Valid() && b.env.Trace.Enabled()
	if b.highWater >= 0 || b.overflow == Drop || traced || noFull > 0 || noRate > 0 {
		x := f.cold()
		x.highWater, x.noFull, x.noRate = b.highWater, noFull, noRate
		if traced {
			x.traceClk = b.traceClk
		}
	}
	if reg := b.env.Waves; reg != nil {
		// occupancy: entries held; full: no room; hwm: occupancy above the
		// high-water mark; drops: entries dropped so far (Drop overflow).
		name := f.Name()
		var s signals
		s.occ = reg.Integer(name, "occupancy", waves.WidthFor(uint64(b.depth)))
		s.full = reg.Wire(name, "full", 1)
		if b.highWater >= 0 {
			s.hwm = reg.Wire(name, "hwm", 1)
		}
		if b.overflow == Drop {
			s.drops = reg.Integer(name, "drops", 32)
		}
		// The registry decides selection when a signal is declared (a nil
		// signal is one it left out), so a FIFO none of whose signals are
		// selected keeps no signals at all and each push or pop pays one
		// nil check for them, as with no registry.
		if s != (signals{}) {
			f.sig = &s
		}
	}
	b.env.Register(f)
	return f, nil
}

type entry[T any] struct {
	v T
	t clock.Time // push time: visible to the consumer strictly after it
}

// FIFO is a hardware FIFO of entries of type T.
type FIFO[T any] struct {
	name      Namer // the name is name.FIFOName(nameIdx)
	env       *env.Env
	buf       []entry[T]
	head, n   int
	depth     int
	widthBits int
	enqPer    int
	deqPer    int
	overflow  Overflow
	// producerWaiting: the producer found the FIFO full and waits for a
	// pop to wake it.
	producerWaiting bool
	nameIdx         int32

	lastEnq, lastDeq clock.Time
	enqAt, deqAt     int // operations at lastEnq / lastDeq

	onPop func(now clock.Time, v *T)

	producer, consumer clock.Waker

	pushes, pops uint64
	maxOcc       int        // largest settled occupancy
	lastChange   clock.Time // time of the last push or pop

	sig *signals // nil when no registry or none of them selected
	x   *cold    // nil when the FIFO uses none of what it holds
}

// cold is what few FIFOs use: a high-water mark, the drop count of a
// dropping FIFO, the trace, the test-only faults. A FIFO with none of them
// (most: every receive buffer of every link) keeps none, so that it stays
// small (issue 16: 48,128 of them in a 32x32 mesh).
type cold struct {
	highWater  int
	above      bool
	hwmPending bool // a settle event is scheduled for lastChange
	onHigh     func(now clock.Time, above bool)

	drops uint64

	traceClk          clock.Clock // valid when pushes and pops are traced
	stepPush, stepPop int         // of the current picosecond, for the trace

	// test-only faults: every noFull-th / noRate-th refusal is a yes
	noFull, noRate           int
	fullRefused, rateRefused int
}

// cold returns f's cold part, made (with no high-water mark) on first use.
func (f *FIFO[T]) cold() *cold {
	if f.x == nil {
		f.x = &cold{highWater: -1}
	}
	return f.x
}

// traced reports whether pushes and pops are traced.
func (f *FIFO[T]) traced() bool { return f.x != nil && f.x.traceClk.Valid() }

// signals are a FIFO's waveforms; any of them may be nil (not selected).
type signals struct {
	occ, full, hwm, drops *waves.Signal
}

// record counts a push or pop for the fifo.step trace record, when the
// FIFO is traced (the caller checks f.traced(), so an untraced FIFO pays
// a nil check and no call).
func (f *FIFO[T]) record(now clock.Time, push bool) {
	x := f.x
	if push {
		x.stepPush++
	} else {
		x.stepPop++
	}
	if x.stepPush+x.stepPop > 1 {
		return // the step's record is already scheduled
	}
	f.env.Engine.AfterStep(now, func(t clock.Time) {
		f.env.Trace.Emit(t, x.traceClk.CycleAt(t), f.Name(), "fifo.step",
			trace.Int("pushes", int64(x.stepPush)), trace.Int("pops", int64(x.stepPop)), trace.Int("occ", int64(f.n)))
		x.stepPush, x.stepPop = 0, 0
	})
}

// Name returns the FIFO's name.
func (f *FIFO[T]) Name() string { return f.name.FIFOName(int(f.nameIdx)) }

// Depth returns the number of entries.
func (f *FIFO[T]) Depth() int { return f.depth }

// WidthBits returns the entry width.
func (f *FIFO[T]) WidthBits() int { return f.widthBits }

// CapacityBytes returns depth x width in bytes.
func (f *FIFO[T]) CapacityBytes() int { return f.depth * f.widthBits / 8 }

// Connect names the components to wake: the consumer when an entry is
// pushed, the producer when space frees up after it found the FIFO full.
// Either may be nil.
func (f *FIFO[T]) Connect(producer, consumer clock.Waker) {
	f.producer, f.consumer = producer, consumer
}

// SetProducer names the component to wake when space frees.
func (f *FIFO[T]) SetProducer(w clock.Waker) { f.producer = w }

// SetConsumer names the component to wake when an entry is pushed.
func (f *FIFO[T]) SetConsumer(w clock.Waker) { f.consumer = w }

// OnHighWater sets the callback run when occupancy crosses the high-water
// mark (above == true) and when it falls back.
func (f *FIFO[T]) OnHighWater(fn func(now clock.Time, above bool)) { f.cold().onHigh = fn }

// OnPop sets a callback run on every pop (a link uses it to return a
// credit), with the entry popped; the pointer is valid during the call.
func (f *FIFO[T]) OnPop(fn func(now clock.Time, v *T)) { f.onPop = fn }

// SetHighWater reprograms the high-water mark at time now.
func (f *FIFO[T]) SetHighWater(now clock.Time, n int) {
	f.cold().highWater = n
	f.updateHWM(now)
}

// Len returns the number of entries held, visible or not.
func (f *FIFO[T]) Len() int { return f.n }

// Occupancy returns the number of entries as the producer sees them at
// now: entries popped at now still count until the next edge. Use it (not
// Len) for decisions such as "has the write buffer drained?", which must
// not depend on whether the consumer has run yet in this picosecond.
func (f *FIFO[T]) Occupancy(now clock.Time) int { return f.depth - f.Free(now) }

// Free returns the space the producer sees at now (see CanPush).
func (f *FIFO[T]) Free(now clock.Time) int {
	occ := f.n
	if f.lastDeq == now {
		occ += f.deqAt // slots popped this edge free up after it
	}
	return max(f.depth-occ, 0)
}

// CanPush reports whether the producer may push at now: there is space as
// of the previous edge and the per-cycle enqueue budget is not used up. A
// false answer registers the producer for a wake-up when space frees.
func (f *FIFO[T]) CanPush(now clock.Time) bool {
	if f.lastEnq == now && f.enqAt >= f.enqPer {
		if x := f.x; x != nil && x.noRate > 0 {
			if x.rateRefused++; x.rateRefused%x.noRate == 0 {
				return true // mutation
			}
		}
		if f.Free(now) == 0 {
			f.waitForSpace(now) // full as well: a pop wakes the producer
		}
		return false
	}
	if f.Free(now) == 0 {
		if x := f.x; x != nil && x.noFull > 0 {
			if x.fullRefused++; x.fullRefused%x.noFull == 0 {
				return true // mutation
			}
		}
		f.waitForSpace(now)
		return false
	}
	return true
}

// waitForSpace registers the producer for a wake-up when space frees. If a
// pop has already freed a slot at now (visible from the next edge), that
// pop has come and gone, so the producer is woken for the next edge at
// once; otherwise the next pop wakes it. Either way the wake-up does not
// depend on whether producer or consumer ran first in this picosecond.
func (f *FIFO[T]) waitForSpace(now clock.Time) {
	if f.n < f.depth && f.producer != nil {
		f.producer.Wake(now)
		return
	}
	f.producerWaiting = true
}

// Push adds v at now. It returns false if the FIFO had no room; that is a
// checker violation unless the FIFO drops and counts.
func (f *FIFO[T]) Push(now clock.Time, v T) bool { return f.push(now, now, &v) }

// PushPtr adds a copy of *v at now, as Push does, without passing the
// entry by value (for large entries on hot paths); the FIFO keeps no
// reference to v.
func (f *FIFO[T]) PushPtr(now clock.Time, v *T) bool { return f.push(now, now, v) }

// push adds a copy of *v at now, visible from the first edge after visible.
func (f *FIFO[T]) push(now, visible clock.Time, v *T) bool {
	if f.lastEnq == now && f.enqAt >= f.enqPer {
		f.env.Report(now, f.Name(), "fifo.rate", "more than %d pushes in one cycle", f.enqPer)
		return false
	}
	if f.Free(now) == 0 {
		f.waitForSpace(now)
		if f.overflow == Drop {
			f.x.drops++ // a Drop FIFO has its cold part (Build)
			if f.sig != nil {
				f.sig.drops.Set(now, f.x.drops)
			}
			return false
		}
		f.env.Report(now, f.Name(), "fifo.overflow", "push into a full FIFO (%d entries)", f.depth)
		return false
	}
	if f.lastEnq != now {
		f.lastEnq, f.enqAt = now, 0
	}
	f.enqAt++
	f.settle(now)
	if f.n == len(f.buf) {
		f.grow()
	}
	e := &f.buf[f.slot(f.n)]
	e.v, e.t = *v, visible
	f.n++
	f.pushes++
	f.changed(now)
	if f.traced() {
		f.record(now, true)
	}
	if f.consumer != nil {
		f.consumer.Wake(visible)
	}
	return true
}

// slot returns the buffer index of entry i (0 is the head).
func (f *FIFO[T]) slot(i int) int {
	j := f.head + i
	if j >= len(f.buf) {
		j -= len(f.buf)
	}
	return j
}

// initialSlots is the storage a FIFO starts with when its depth is larger.
const initialSlots = 64

// grow doubles the storage, up to the depth (the caller has checked that
// an entry fits). A FIFO keeps storage for the most entries it has held,
// not for its whole depth: an accepted depth of millions (a configuration
// value) used to allocate gigabytes at Build whether or not the model ever
// filled it.
func (f *FIFO[T]) grow() {
	nb := make([]entry[T], min(2*len(f.buf), f.depth))
	for i := range f.n {
		nb[i] = f.buf[f.slot(i)]
	}
	f.buf, f.head = nb, 0
}

// PushAt adds v at now but makes it visible to the consumer only after
// visibleAfter (>= now): a link that knows when a flit will land uses it to
// skip the events in between. The slot is taken from now on. Entries must
// be pushed in non-decreasing visibleAfter.
func (f *FIFO[T]) PushAt(now, visibleAfter clock.Time, v T) bool {
	return f.PushAtPtr(now, visibleAfter, &v)
}

// PushAtPtr is PushAt with the entry passed by pointer: the FIFO copies *v
// and keeps no reference to v.
func (f *FIFO[T]) PushAtPtr(now, visibleAfter clock.Time, v *T) bool {
	if visibleAfter < now {
		visibleAfter = now
	}
	if f.n > 0 {
		if last := f.buf[f.slot(f.n-1)].t; visibleAfter < last {
			f.env.Report(now, f.Name(), "fifo.order", "entry visible after %v pushed behind one visible after %v", visibleAfter, last)
		}
	}
	return f.push(now, visibleAfter, v)
}

// CanPop reports whether the consumer may pop at now: the head entry was
// pushed before now and the per-cycle dequeue budget is not used up.
func (f *FIFO[T]) CanPop(now clock.Time) bool {
	if f.n == 0 || f.buf[f.head].t >= now {
		return false
	}
	return f.lastDeq != now || f.deqAt < f.deqPer
}

// Peek returns the head entry if the consumer can pop it at now.
func (f *FIFO[T]) Peek(now clock.Time) (T, bool) {
	if !f.CanPop(now) {
		var zero T
		return zero, false
	}
	return f.buf[f.head].v, true
}

// PeekAt returns the i-th visible entry from the head (0 = head) without
// regard to the dequeue budget, for consumers that look ahead.
func (f *FIFO[T]) PeekAt(now clock.Time, i int) (T, bool) {
	if i < 0 || i >= f.n {
		var zero T
		return zero, false
	}
	e := f.buf[f.slot(i)]
	if e.t >= now {
		var zero T
		return zero, false
	}
	return e.v, true
}

// Front returns a pointer to the head entry if it is visible at now
// (regardless of the dequeue budget), else nil: a look at the head without
// copying it. The pointer is valid until the next push or pop.
func (f *FIFO[T]) Front(now clock.Time) *T {
	if f.n == 0 || f.buf[f.head].t >= now {
		return nil
	}
	return &f.buf[f.head].v
}

// Pop removes and returns the head entry if the consumer can pop it at now.
func (f *FIFO[T]) Pop(now clock.Time) (T, bool) {
	if !f.CanPop(now) {
		var zero T
		return zero, false
	}
	v := f.buf[f.head].v
	f.take(now)
	return v, true
}

// Drop removes the head entry as Pop does, without copying it out: for
// consumers that have read it with Front.
func (f *FIFO[T]) Drop(now clock.Time) bool {
	if !f.CanPop(now) {
		return false
	}
	f.take(now)
	return true
}

// take removes the head entry (CanPop holds).
func (f *FIFO[T]) take(now clock.Time) {
	f.settle(now)
	e := &f.buf[f.head]
	f.head = f.slot(1)
	f.n--
	f.pops++
	if f.traced() {
		f.record(now, false)
	}
	if f.lastDeq != now {
		f.lastDeq, f.deqAt = now, 0
	}
	f.deqAt++
	f.changed(now)
	if f.onPop != nil {
		f.onPop(now, &e.v) // the slot is free but not reused before this returns
	}
	*e = entry[T]{}
	if f.producerWaiting && f.producer != nil {
		f.producerWaiting = false
		f.producer.Wake(now)
	}
	if f.n > 0 && f.consumer != nil {
		// More entries wait; make sure the consumer comes back for them
		// even if it does not poll.
		f.consumer.Wake(now)
	}
}

// settle folds the occupancy of the last picosecond with changes into the
// statistics before the first change of a new one. Within a picosecond the
// occupancy seen at each push or pop depends on whether the producer or the
// consumer ticked first; the settled value at its end does not.
func (f *FIFO[T]) settle(now clock.Time) {
	if now != f.lastChange {
		f.maxOcc = max(f.maxOcc, f.n)
		f.lastChange = now
	}
}

func (f *FIFO[T]) changed(now clock.Time) {
	if f.sig != nil {
		f.sig.occ.Set(now, uint64(f.n))
		f.sig.full.SetBool(now, f.n == f.depth)
	}
	if x := f.x; x != nil && x.highWater >= 0 && !x.hwmPending {
		// Evaluate the mark once the picosecond has settled, so a push and
		// a pop in the same picosecond never raise a spurious interrupt.
		x.hwmPending = true
		f.env.Engine.AfterStep(now, func(t clock.Time) {
			x.hwmPending = false
			f.updateHWM(t)
		})
	}
}

func (f *FIFO[T]) updateHWM(now clock.Time) {
	x := f.x
	if x == nil {
		return // no mark: never above
	}
	above := x.highWater >= 0 && f.n > x.highWater
	if above == x.above {
		return
	}
	x.above = above
	if f.sig != nil {
		f.sig.hwm.SetBool(now, above)
	}
	if x.onHigh != nil {
		x.onHigh(now, above)
	}
}

// AboveHighWater reports whether occupancy exceeds the high-water mark.
func (f *FIFO[T]) AboveHighWater() bool { return f.x != nil && f.x.above }

// Stats are a FIFO's counters. MaxOccupancy is the largest occupancy at
// the end of a picosecond (the registered value hardware would show).
type Stats struct {
	Pushes, Pops, Drops uint64
	MaxOccupancy        int
}

// Stats returns the counters.
func (f *FIFO[T]) Stats() Stats {
	var drops uint64
	if f.x != nil {
		drops = f.x.drops
	}
	return Stats{Pushes: f.pushes, Pops: f.pops, Drops: drops, MaxOccupancy: max(f.maxOcc, f.n)}
}

// Idle implements check.Unit: an entry left in a FIFO is unfinished work.
func (f *FIFO[T]) Idle() bool { return f.n == 0 }

// State implements check.Unit.
func (f *FIFO[T]) State() string {
	if f.n == 0 {
		return "empty"
	}
	return fmt.Sprintf("%d/%d entries, head pushed at %v: %v", f.n, f.depth, f.buf[f.head].t, f.buf[f.head].v)
}
