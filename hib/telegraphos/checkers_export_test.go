package telegraphos

import "github.com/nisim/nisim/rtl/clock"

// OnPacketsToo makes fn see every packet each HIB of cl hands to its link
// (sent) or takes from it, after the cluster's checkers have: a spec's view
// of the traffic the checkers judge.
func OnPacketsToo(cl *Cluster, fn func(p *Packet, sent bool)) {
	for _, n := range cl.Nodes {
		n.HIB.onPacket = func(now clock.Time, p *Packet, sent bool) {
			cl.observe(now, p, sent)
			fn(p, sent)
		}
	}
}

// NewCoherence returns a coherence checker fed by hand (Apply) instead of
// by a cluster's HIBs.
func NewCoherence(page, owner int, nodes []int) *Coherence { return newCoherence(page, owner, nodes) }

// Apply feeds c with node applying write origin#seq=v to word off of its
// copy.
func (c *Coherence) Apply(node int, off uint32, origin int, seq uint64, v uint32) {
	c.applied(node, int(off%PageBytes), write{origin, seq, v})
}

// Held returns the most c holds for one word: the owner's writes kept and
// the writes of one node waiting for the owner.
func (c *Coherence) Held() (log, pending int) {
	for _, wc := range c.words {
		log = max(log, len(wc.log))
		for _, p := range wc.peers {
			pending = max(pending, len(p.pending))
		}
	}
	return log, pending
}
