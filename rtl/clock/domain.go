package clock

import (
	"math/bits"
	"slices"

	"github.com/sarchlab/akita/v3/sim"
)

// Domain batches the ticks of all components that share one clock on one
// engine: the engine gets a single event per edge at which any of them has
// work, and that event ticks them in the order they were created. A mesh of
// 64 routers busy at every edge then costs the engine one event per cycle
// instead of 64 (plus one per flit arrival or credit return that wakes a
// component), and a component with nothing to do costs nothing.
//
// Batching does not change results: a component sees what others wrote in
// the same picosecond only from its next edge on (rtl/fifo, rtl/link), so
// the order in which components tick within one edge is invisible; the
// order is fixed (creation order) anyway, so runs are reproducible.
//
// Engines that own domains implement DomainOwner (rtl/env's engine does);
// on any other engine each component schedules its own tick events.
type Domain struct {
	engine  sim.Engine
	stop    Stopper
	clk     Clock
	members []*Ticking
	slots   []*slot // pending edges, ascending, each with an engine event
	free    []*slot
	retired *slot // handled last; the engine's hooks may still read it

	// While run ticks the members of an edge: the next edge and, once a
	// member asked for it, its slot, so that members whose Tick wants the
	// next edge (most of them in a busy domain) are marked there without
	// computing the edge and searching the pending slots each (wakeNext).
	nextAt   Time
	nextSlot *slot
}

// DomainOwner is an engine that keeps one Domain per clock.
type DomainOwner interface {
	ClockDomain(c Clock) *Domain
}

// Domains is the set of domains of one engine; an engine embeds it and
// implements DomainOwner with For.
type Domains struct {
	list []*Domain
}

// For returns the domain of clock c on engine e, creating it on first use.
func (s *Domains) For(e sim.Engine, c Clock) *Domain {
	for _, d := range s.list {
		if d.clk == c {
			return d
		}
	}
	stop, _ := e.(Stopper)
	d := &Domain{engine: e, stop: stop, clk: c}
	s.list = append(s.list, d)
	return d
}

// Members returns the number of components in the domain.
func (d *Domain) Members() int { return len(d.members) }

// slot is one pending edge: the members to tick there, as a bit set over
// member indices. It is its own engine event and handler.
type slot struct {
	d    *Domain
	t    Time
	st   sim.VTimeInSec
	bits []uint64
}

func (s *slot) Time() sim.VTimeInSec { return s.st }
func (s *slot) Handler() sim.Handler { return s }
func (s *slot) IsSecondary() bool    { return false }

// Handle implements sim.Handler: tick the members due at this edge.
func (s *slot) Handle(sim.Event) error {
	s.d.run(s)
	return nil
}

func (d *Domain) add(c *Ticking) int {
	d.members = append(d.members, c)
	return len(d.members) - 1
}

// wake marks member i for the edge at t, scheduling the edge if it is new.
func (d *Domain) wake(i int, t Time) {
	d.slotAt(t).mark(i)
}

// wakeNext marks member i for the edge after the one run is ticking: what
// wake(i, d.clk.NextEdge(now)) does, with the edge computed once per run
// and its slot looked up once.
func (d *Domain) wakeNext(i int) {
	if d.nextSlot == nil {
		d.nextSlot = d.slotAt(d.nextAt)
	}
	d.nextSlot.mark(i)
}

// mark sets member i's bit.
func (s *slot) mark(i int) {
	if w := i >> 6; w >= len(s.bits) {
		s.bits = append(s.bits, make([]uint64, w+1-len(s.bits))...)
	}
	s.bits[i>>6] |= 1 << (uint(i) & 63)
}

func (d *Domain) slotAt(t Time) *slot {
	// Almost always the next edge: the first or second pending slot.
	i := 0
	for ; i < len(d.slots) && i < 4; i++ {
		if d.slots[i].t >= t {
			break
		}
	}
	if i == 4 {
		i, _ = slices.BinarySearchFunc(d.slots, t, func(s *slot, t Time) int {
			switch {
			case s.t < t:
				return -1
			case s.t > t:
				return 1
			}
			return 0
		})
	}
	if i < len(d.slots) && d.slots[i].t == t {
		return d.slots[i]
	}
	var s *slot
	if n := len(d.free); n > 0 {
		s, d.free = d.free[n-1], d.free[:n-1]
	} else {
		s = &slot{d: d}
	}
	s.t, s.st = t, ToSim(t)
	if w := (len(d.members) + 63) >> 6; len(s.bits) < w {
		s.bits = make([]uint64, w)
	}
	d.slots = slices.Insert(d.slots, i, s)
	d.engine.Schedule(s)
	return s
}

// run ticks the members marked in s, in creation order. A member woken
// for this very edge while others tick (Start during a run) is ticked too.
func (d *Domain) run(s *slot) {
	if d.retired != nil {
		d.free = append(d.free, d.retired)
	}
	d.retired = s
	now := s.t
	// The slot of the next edge is pending (not yet run, so not recycled)
	// for as long as this run lasts.
	d.nextAt, d.nextSlot = d.clk.NextEdge(now), nil
	stopped := d.stop != nil && d.stop.Stopped(now)
	for again := true; again; {
		again = false
		for w := range s.bits {
			for s.bits[w] != 0 {
				b := bits.TrailingZeros64(s.bits[w])
				s.bits[w] &^= 1 << uint(b)
				again = true
				if !stopped {
					d.members[w<<6|b].tickAt(now)
				}
			}
		}
	}
	d.nextSlot = nil
	if i := slices.Index(d.slots, s); i >= 0 {
		d.slots = slices.Delete(d.slots, i, i+1)
	}
}
