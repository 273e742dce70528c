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
