package tgtb

import (
	"github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/rtl/clock"
)

// OnPacketsToo makes fn see every packet each HIB of cl hands to its link
// (sent) or takes from it, after the cluster's checkers have: a spec's view
// of the traffic the checkers judge.
func OnPacketsToo(cl *Cluster, fn func(p *telegraphos.Packet, sent bool)) {
	for _, n := range cl.Nodes {
		n.HIB.OnPacket(func(now clock.Time, p *telegraphos.Packet, sent bool) {
			cl.observe(now, p, sent)
			fn(p, sent)
		})
	}
}
