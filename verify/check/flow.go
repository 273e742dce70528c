package check

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
)

// ResolvedWindow is how many of the most recently resolved keys a
// Conservation checker remembers (per checker), to tell a late duplicate
// from a key never sent.
const ResolvedWindow = 4096

// Conservation checks that everything sent is received exactly once, unless
// the hardware is allowed to drop it and the drop is counted. Keys identify
// one transaction (a packet id, a (flow, seq) pair, an address).
//
// It keeps only what is outstanding plus counters, so its memory follows
// the transactions in flight, not the length of the run: a key is
// forgotten once it is resolved (received, or counted as dropped). The
// last ResolvedWindow resolved keys are remembered, so that a key
// received again soon after is reported as a duplicate ("duplicate", or
// "dropped-received" after a drop) and a key sent again as
// "duplicate-send". A key received again after it has left that window is
// still a violation, never silently accepted: "unknown", received but
// never sent or already resolved. A key sent again after it left the
// window starts a new transaction.
//
// It is a check.Unit of the Monitor it reports to: busy while keys are
// outstanding, with the oldest outstanding key (check.Outstanding) in the
// stuck-state report.
type Conservation[K comparable] struct {
	mon  *Monitor
	name string

	out   map[K]uint64 // outstanding key -> its send number; lookup only
	queue []sent[K]    // outstanding keys in send order, resolved ones removed lazily
	head  int          // queue[:head] is cleared; queue[head] is outstanding (if any is)
	stale int          // resolved keys still in queue[head:]

	recent map[K]bool // recently resolved key -> it was dropped; lookup only
	ring   []K        // the recently resolved keys, oldest at ringAt once full
	ringAt int

	sent    int
	recv    int
	dropped int
}

// sent is a key in the send-order queue: its send number tells it from an
// earlier transaction of the same key (resolved, and sent again after it
// left the window).
type sent[K comparable] struct {
	key K
	n   uint64
	at  clock.Time
}

// NewConservation returns a conservation checker reporting to mon under name
// and registered with mon as a unit (busy while keys are outstanding).
func NewConservation[K comparable](mon *Monitor, name string) *Conservation[K] {
	c := &Conservation[K]{mon: mon, name: name, out: map[K]uint64{}, recent: map[K]bool{}}
	mon.Register(c)
	return c
}

// Sent records that k entered the system.
func (c *Conservation[K]) Sent(t clock.Time, k K) {
	_, busy := c.out[k]
	_, done := c.recent[k]
	if busy || done {
		c.mon.Report(t, c.name, "duplicate-send", "%v sent twice", k)
		return
	}
	c.sent++
	c.out[k] = uint64(c.sent)
	c.queue = append(c.queue, sent[K]{key: k, n: uint64(c.sent), at: t})
}

// Received records that k left the system at its destination.
func (c *Conservation[K]) Received(t clock.Time, k K) {
	if _, ok := c.out[k]; ok {
		c.resolve(k, false)
		c.recv++
		c.mon.Progress(t)
		return
	}
	dropped, ok := c.recent[k]
	switch {
	case ok && dropped:
		c.mon.Report(t, c.name, "dropped-received", "%v received after it was dropped", k)
	case ok:
		c.mon.Report(t, c.name, "duplicate", "%v received twice", k)
	default:
		c.mon.Report(t, c.name, "unknown", "%v received but never sent or already resolved", k)
	}
}

// Dropped records an allowed, counted loss of k.
func (c *Conservation[K]) Dropped(t clock.Time, k K) {
	if _, ok := c.out[k]; !ok {
		c.mon.Report(t, c.name, "bad-drop", "%v dropped but not in flight", k)
		return
	}
	c.resolve(k, true)
	c.dropped++
	c.mon.Progress(t)
}

// resolve forgets outstanding k and remembers it among the recently
// resolved keys.
func (c *Conservation[K]) resolve(k K, dropped bool) {
	delete(c.out, k)
	c.stale++
	c.trim()
	if len(c.ring) < ResolvedWindow {
		c.ring = append(c.ring, k)
	} else {
		delete(c.recent, c.ring[c.ringAt])
		c.ring[c.ringAt] = k
		c.ringAt = (c.ringAt + 1) % ResolvedWindow
	}
	c.recent[k] = dropped
}

// live reports whether queue entry e is still outstanding.
func (c *Conservation[K]) live(e sent[K]) bool {
	n, ok := c.out[e.key]
	return ok && n == e.n
}

// trim drops resolved keys from the front of the queue, so that its head
// is the oldest outstanding key, and compacts the queue when resolved keys
// stuck behind an old outstanding one (or the cleared front) make up most
// of it: each entry is moved at most a constant number of times on
// average.
func (c *Conservation[K]) trim() {
	var zero sent[K]
	for c.head < len(c.queue) && !c.live(c.queue[c.head]) {
		c.queue[c.head] = zero
		c.head++
		c.stale--
	}
	dead := c.head + c.stale
	if dead < 64 || 2*dead < len(c.queue) {
		return
	}
	live := c.queue[:0]
	for _, e := range c.queue[c.head:] {
		if c.live(e) {
			live = append(live, e)
		}
	}
	clear(c.queue[len(live):])
	c.queue, c.head, c.stale = live, 0, 0
	if cap(c.queue) > 1024 && cap(c.queue) > 4*len(c.queue) {
		// A burst is over: give its room back.
		c.queue = append(make([]sent[K], 0, 2*len(c.queue)), c.queue...)
	}
}

// Counts returns how many were sent, received and dropped.
func (c *Conservation[K]) Counts() (sent, recv, dropped int) { return c.sent, c.recv, c.dropped }

// Outstanding returns the number of keys sent and not yet resolved.
func (c *Conservation[K]) Outstanding() int { return len(c.out) }

// Finish reports every key still in flight as lost, the first ten in send
// order. Call it after the run.
func (c *Conservation[K]) Finish(t clock.Time) {
	if len(c.out) == 0 {
		return
	}
	var first []K
	for _, e := range c.queue[c.head:] {
		if len(first) == 10 {
			break
		}
		if c.live(e) {
			first = append(first, e.key)
		}
	}
	c.mon.Report(t, c.name, "lost", "%d of %d sent never arrived (first: %v)", len(c.out), c.sent, first)
}

// Name implements Unit.
func (c *Conservation[K]) Name() string { return c.name }

// Idle implements Unit: nothing is outstanding.
func (c *Conservation[K]) Idle() bool { return len(c.out) == 0 }

// State implements Unit: the counts and the oldest outstanding key.
func (c *Conservation[K]) State() string {
	s := fmt.Sprintf("%d outstanding (%d sent, %d received, %d dropped)", len(c.out), c.sent, c.recv, c.dropped)
	if d, at, ok := c.Oldest(); ok {
		s += fmt.Sprintf(", the oldest %s sent at %v", d, at)
	}
	return s
}

// Oldest implements Outstanding: the outstanding key sent first and when.
func (c *Conservation[K]) Oldest() (desc string, since clock.Time, ok bool) {
	if len(c.out) == 0 {
		return "", 0, false
	}
	e := c.queue[c.head]
	return fmt.Sprint(e.key), e.at, true
}

// Ordering checks that sequence numbers of each flow arrive strictly
// increasing, where the hardware promises in-order delivery. It keeps one
// number per flow, whatever the length of the run.
type Ordering[F comparable] struct {
	mon  *Monitor
	name string
	last map[F]uint64 // flow -> highest sequence seen (absent: none yet); lookup only
}

// NewOrdering returns an ordering checker reporting to mon under name.
func NewOrdering[F comparable](mon *Monitor, name string) *Ordering[F] {
	return &Ordering[F]{mon: mon, name: name, last: map[F]uint64{}}
}

// Observe records that seq of flow arrived at t.
func (o *Ordering[F]) Observe(t clock.Time, flow F, seq uint64) {
	if last, seen := o.last[flow]; seen && seq <= last {
		o.mon.Report(t, o.name, "order", "flow %v: seq %d arrived after seq %d", flow, seq, last)
		return
	}
	o.last[flow] = seq
}

// Key is a convenient comparable key for (flow, sequence) pairs.
type Key struct {
	Flow string
	Seq  uint64
}

func (k Key) String() string { return fmt.Sprintf("%s#%d", k.Flow, k.Seq) }
