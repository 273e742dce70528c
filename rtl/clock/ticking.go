package clock

import (
	"slices"

	"github.com/sarchlab/akita/v3/sim"
)

// Ticker is the clocked behaviour of a component. Tick runs the component
// for the clock edge at now and returns true when the component made
// progress or still has work in flight, i.e. when it wants the next edge as
// well. A component that returns false sleeps until something wakes it
// (Ticking.Wake, a FIFO it listens to, or an Akita port notification).
//
// Tick is usually a list of small stages ordered output first, input last,
// as in Akita's own components. Inputs written by other components at the
// same time are not yet visible (see rtl/fifo), so the order in which
// components tick within one picosecond never changes the result.
type Ticker interface {
	Tick(now Time) bool
}

// Waker is anything that can be asked to run at its next clock edge: the
// consumer of a FIFO, the producer waiting for space, a bus master.
type Waker interface {
	// Wake asks for a tick at the first edge strictly after now.
	Wake(now Time)
	// WakeAt asks for a tick at the first edge at or after t (a time in the
	// future: a credit that will have returned, a flit that will have
	// arrived).
	WakeAt(t Time)
}

// NowSource is implemented by engines that keep their current time in
// picoseconds where components can read it without a call into Akita
// (rtl/env's engine sets it before each event runs). Akita's
// SerialEngine.CurrentTime takes a read lock on every call and returns
// float seconds; a clocked component reads the time at every WakeAt, which
// made the lock about 4% of a 64-node LCI run (issue 16).
type NowSource interface {
	// NowPS returns the address of the engine's current time, which equals
	// FromSim(CurrentTime()) whenever a component can read it. Readers
	// must not write it.
	NowPS() *Time
}

// Stopper is implemented by engines that can end a run early (a time limit
// or an explicit stop): components do not tick at times it reports stopped.
type Stopper interface {
	Stopped(t Time) bool
}

// Ticking is the base of every clocked nisim component: an Akita component
// whose ticks are scheduled on the exact picosecond edges of its Clock
// (Akita's own TickingComponent uses float arithmetic that can split one
// cycle into two timestamps; see the Akita guide, section 1.1). Embed a
// *Ticking and pass the outer struct as the Ticker.
type Ticking struct {
	*sim.ComponentBase

	engine  sim.Engine
	now     *Time // the engine's NowSource, nil when it has none
	stop    Stopper
	clk     Clock
	ticker  Ticker
	pending []Time // edges with a scheduled tick event, ascending
	free    []*tickEvent
	retired *tickEvent // handled last; its hooks may still be running
	last    Time       // edge of the last tick, -1 before the first
	ticks   uint64
	dom     *Domain // nil: the component schedules its own tick events
	idx     int     // index in dom
	wokeAt  Time    // the now of the last Wake, -1 before the first
}

// NewTicking creates the clocked base of a component named name.
func NewTicking(name string, engine sim.Engine, clk Clock, ticker Ticker) *Ticking {
	if !clk.Valid() {
		panic("clock: component " + name + " has no valid clock")
	}
	stop, _ := engine.(Stopper)
	c := &Ticking{
		ComponentBase: sim.NewComponentBase(name),
		engine:        engine,
		stop:          stop,
		clk:           clk,
		ticker:        ticker,
		last:          -1,
		wokeAt:        -1,
	}
	if n, ok := engine.(NowSource); ok {
		c.now = n.NowPS()
	}
	if o, ok := engine.(DomainOwner); ok {
		c.dom = o.ClockDomain(clk)
		c.idx = c.dom.add(c)
	}
	return c
}

// Clock returns the component's clock.
func (c *Ticking) Clock() Clock { return c.clk }

// Engine returns the engine the component schedules its ticks on.
func (c *Ticking) Engine() sim.Engine { return c.engine }

// Now returns the engine's current time in picoseconds (read from the
// engine's NowSource when it has one).
func (c *Ticking) Now() Time {
	if c.now != nil {
		return *c.now
	}
	return FromSim(c.engine.CurrentTime())
}

// Ticks returns how many edges the component has run; an idle component
// costs nothing, so this measures simulation work.
func (c *Ticking) Ticks() uint64 { return c.ticks }

// Start schedules the first tick at the first edge at or after the current
// engine time (edge 0 before the simulation runs).
func (c *Ticking) Start() {
	c.schedule(c.clk.EdgeAtOrAfter(c.Now()))
}

// Wake schedules a tick at the first edge strictly after now. Components
// call it on each other when they leave work behind (a FIFO push, freed
// space, a returned credit).
func (c *Ticking) Wake(now Time) {
	if now == c.wokeAt {
		return // already asked in this picosecond: that tick is still ahead
	}
	c.wokeAt = now
	c.schedule(c.clk.NextEdge(now))
}

// WakeAt schedules a tick at the first edge at or after t, for timers. A t
// that is not in the future gives the next edge, so that a component never
// runs twice in one picosecond.
func (c *Ticking) WakeAt(t Time) {
	now := c.Now()
	if t <= now {
		c.Wake(now)
		return
	}
	c.schedule(c.clk.EdgeAtOrAfter(t))
}

// NotifyRecv implements sim.Component: an Akita port has a message.
func (c *Ticking) NotifyRecv(now sim.VTimeInSec, _ sim.Port) { c.Wake(FromSim(now)) }

// NotifyPortFree implements sim.Component: an Akita connection has room.
func (c *Ticking) NotifyPortFree(now sim.VTimeInSec, _ sim.Port) { c.Wake(FromSim(now)) }

// tickAt runs the component at edge now (its domain checked the stop).
func (c *Ticking) tickAt(now Time) {
	if now == c.last {
		return
	}
	c.last = now
	c.ticks++
	if c.ticker.Tick(now) && now != c.wokeAt {
		// Wake(now), with the next edge its domain's run has at hand.
		c.wokeAt = now
		c.dom.wakeNext(c.idx)
	}
}

// Handle implements sim.Handler for the component's own tick events (on
// engines without clock domains).
func (c *Ticking) Handle(e sim.Event) error {
	now := FromSim(e.Time())
	if i, ok := slices.BinarySearch(c.pending, now); ok {
		c.pending = slices.Delete(c.pending, i, i+1)
	}
	progress := false
	if now != c.last && (c.stop == nil || !c.stop.Stopped(now)) {
		c.last = now
		c.ticks++
		progress = c.ticker.Tick(now)
	}
	if te, ok := e.(*tickEvent); ok {
		// The engine's after-event hooks still read this event once Handle
		// returns, so it is recycled only at the component's next event,
		// when those hooks are done.
		if c.retired != nil {
			c.free = append(c.free, c.retired)
		}
		c.retired = te
	}
	if progress {
		c.Wake(now)
	}
	return nil
}

func (c *Ticking) schedule(t Time) {
	if t <= c.last {
		t = c.clk.NextEdge(c.last)
	}
	if c.dom != nil {
		c.dom.wake(c.idx, t)
		return
	}
	i, ok := slices.BinarySearch(c.pending, t)
	if ok {
		return
	}
	c.pending = slices.Insert(c.pending, i, t)
	var ev *tickEvent
	if n := len(c.free); n > 0 {
		ev, c.free = c.free[n-1], c.free[:n-1]
		ev.t = ToSim(t)
	} else {
		ev = &tickEvent{t: ToSim(t), h: c}
	}
	c.engine.Schedule(ev)
}

// tickEvent is a primary event without an Akita ID: drawing IDs from Akita's
// process-global generator would cost an allocation per tick and nothing in
// nisim reads them.
type tickEvent struct {
	t sim.VTimeInSec
	h *Ticking
}

func (e *tickEvent) Time() sim.VTimeInSec { return e.t }
func (e *tickEvent) Handler() sim.Handler { return e.h }
func (e *tickEvent) IsSecondary() bool    { return false }
