package panda

import (
	"github.com/nisim/nisim/rtl/clock"
)

// Reporter is where a checker reports a violation: a node's LCI host
// (lcilib.Host).
type Reporter interface {
	Node() int
	Report(now clock.Time, rule, format string, args ...any)
}

// OrderChecker checks Panda's totally ordered broadcast (section 6.1):
// every node delivers the ordered broadcasts in the same order. The first
// node to deliver its k-th ordered broadcast fixes the k-th message (its
// origin and sequence number); any node whose k-th delivery is another
// message is reported (rule panda.order) on its host.
type OrderChecker struct {
	// order is the k-th message as first delivered, per k.
	order []orderID
	// count is how many each node has delivered.
	count map[int]int
	// Checked counts deliveries compared; Violations those reported.
	Checked, Violations int
}

type orderID struct {
	src int
	seq uint32
}

// NewOrderChecker returns an empty checker, to share between the nodes.
func NewOrderChecker() *OrderChecker { return &OrderChecker{count: map[int]int{}} }

// Delivered records that h's node delivered the ordered broadcast seq of
// origin src at now.
func (c *OrderChecker) Delivered(now clock.Time, h Reporter, src int, seq uint32) {
	k := c.count[h.Node()]
	c.count[h.Node()] = k + 1
	id := orderID{src, seq}
	if k == len(c.order) {
		c.order = append(c.order, id)
		return
	}
	c.Checked++
	if want := c.order[k]; want != id {
		c.Violations++
		h.Report(now, "panda.order", "node %d delivered ordered broadcast %d from %d as its #%d; another node delivered %d from %d there",
			h.Node(), seq, src, k, want.seq, want.src)
	}
}

// Count returns how many ordered broadcasts node delivered.
func (c *OrderChecker) Count(node int) int { return c.count[node] }
