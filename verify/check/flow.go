package check

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
)

// Conservation checks that everything sent is received exactly once, unless
// the hardware is allowed to drop it and the drop is counted. Keys identify
// one transaction (a packet id, a (flow, seq) pair, an address).
type Conservation[K comparable] struct {
	mon     *Monitor
	name    string
	state   map[K]uint8 // lookup only; reports iterate order
	order   []K         // keys in send order, for deterministic reports
	sent    int
	recv    int
	dropped int
}

const (
	inFlight uint8 = iota + 1
	received
	droppedState
)

// NewConservation returns a conservation checker reporting to mon under name.
func NewConservation[K comparable](mon *Monitor, name string) *Conservation[K] {
	return &Conservation[K]{mon: mon, name: name, state: map[K]uint8{}}
}

// Sent records that k entered the system.
func (c *Conservation[K]) Sent(t clock.Time, k K) {
	if _, dup := c.state[k]; dup {
		c.mon.Report(t, c.name, "duplicate-send", "%v sent twice", k)
		return
	}
	c.state[k] = inFlight
	c.order = append(c.order, k)
	c.sent++
}

// Received records that k left the system at its destination.
func (c *Conservation[K]) Received(t clock.Time, k K) {
	switch c.state[k] {
	case inFlight:
		c.state[k] = received
		c.recv++
		c.mon.Progress(t)
	case received:
		c.mon.Report(t, c.name, "duplicate", "%v received twice", k)
	case droppedState:
		c.mon.Report(t, c.name, "dropped-received", "%v received after it was dropped", k)
	default:
		c.mon.Report(t, c.name, "unknown", "%v received but never sent", k)
	}
}

// Dropped records an allowed, counted loss of k.
func (c *Conservation[K]) Dropped(t clock.Time, k K) {
	if c.state[k] != inFlight {
		c.mon.Report(t, c.name, "bad-drop", "%v dropped but not in flight", k)
		return
	}
	c.state[k] = droppedState
	c.dropped++
	c.mon.Progress(t)
}

// Counts returns how many were sent, received and dropped.
func (c *Conservation[K]) Counts() (sent, recv, dropped int) { return c.sent, c.recv, c.dropped }

// Finish reports every key still in flight as lost. Call it after the run.
func (c *Conservation[K]) Finish(t clock.Time) {
	lost := 0
	var first []K
	for _, k := range c.order {
		if c.state[k] == inFlight {
			lost++
			if len(first) < 10 {
				first = append(first, k)
			}
		}
	}
	if lost > 0 {
		c.mon.Report(t, c.name, "lost", "%d of %d sent never arrived (first: %v)", lost, c.sent, first)
	}
}

// Ordering checks that sequence numbers of each flow arrive strictly
// increasing, where the hardware promises in-order delivery.
type Ordering[F comparable] struct {
	mon  *Monitor
	name string
	last map[F]uint64
	seen map[F]bool
}

// NewOrdering returns an ordering checker reporting to mon under name.
func NewOrdering[F comparable](mon *Monitor, name string) *Ordering[F] {
	return &Ordering[F]{mon: mon, name: name, last: map[F]uint64{}, seen: map[F]bool{}}
}

// Observe records that seq of flow arrived at t.
func (o *Ordering[F]) Observe(t clock.Time, flow F, seq uint64) {
	if o.seen[flow] && seq <= o.last[flow] {
		o.mon.Report(t, o.name, "order", "flow %v: seq %d arrived after seq %d", flow, seq, o.last[flow])
		return
	}
	o.seen[flow] = true
	o.last[flow] = seq
}

// Key is a convenient comparable key for (flow, sequence) pairs.
type Key struct {
	Flow string
	Seq  uint64
}

func (k Key) String() string { return fmt.Sprintf("%s#%d", k.Flow, k.Seq) }
