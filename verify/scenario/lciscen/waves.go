package lciscen

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/waves"
)

// The LCI scenarios' waveform views (issue 12 section 5). Their clusters
// sit on the LCI paper's 64-host Myrinet fabric, almost all of it idle in
// a 2-node run, so a VCD holds by default only the nodes that take part
// and their host links (about 4,000 signals otherwise). The save file
// opens on the path of a message: the sender's CPU and PCI bus, its NI
// (LANai processor, firmware machines, DMA engines), the host links, and
// the receiver's NI and CPU.

// pingPongSpan is how much a 2-node save file shows from the first
// change: a little more than one ping-pong round trip, measured 28 us from
// the first send to the reply's arrival in lci-logp's dump (I-sdma, PPro).
const pingPongSpan = 40 * clock.Microsecond

// hostGroup is node n's host side: its CPU and PCI bus (the bus's master
// and address only on the sender, so that a 2-node view fits a 900-pixel
// window).
func hostGroup(n int, bus bool) waves.ViewGroup {
	s := fmt.Sprintf("n%d.", n)
	ps := []string{s + "cpu.state", s + "pci.phase"}
	if bus {
		ps = append(ps, s+"pci.master", s+"pci.addr")
	}
	return scenario.KeyGroup(fmt.Sprintf("n%d host", n), ps...)
}

// niGroup is node n's NI: the LANai processor, the LCI firmware's send,
// host-send-queue and DMA machines, and the three DMA engines.
func niGroup(n int) waves.ViewGroup {
	s := fmt.Sprintf("n%d.ni.", n)
	return scenario.KeyGroup(fmt.Sprintf("n%d NI", n), s+"cpu.state", s+"fw.hsq.state", s+"fw.tx.state",
		s+"fw.dma.state", s+"hdma.state", s+"sdma.state", s+"rdma.state")
}

// linkGroup is the host links of the nodes, both directions.
func linkGroup(nodes ...int) waves.ViewGroup {
	var ps []string
	for _, n := range nodes {
		ps = append(ps, fmt.Sprintf("net.link_h%d.ab.busy", n), fmt.Sprintf("net.link_h%d.ba.busy", n))
	}
	return scenario.KeyGroup("host links", ps...)
}

// nodesSelect is the default selection of a run on the given nodes: the
// nodes and their host links.
func nodesSelect(nodes ...int) []string {
	var sel []string
	for _, n := range nodes {
		sel = append(sel, fmt.Sprintf("n%d", n))
	}
	for _, n := range nodes {
		sel = append(sel, fmt.Sprintf("net.link_h%d", n))
	}
	return sel
}

// pairView is the view of a 2-node run (ping-pong, stream, the report's
// runs): node 0 sends, node 1 receives and replies.
func pairView(scenario.Params) scenario.WaveView {
	return scenario.WaveView{
		Select: nodesSelect(0, 1),
		Groups: []waves.ViewGroup{hostGroup(0, true), niGroup(0), linkGroup(0, 1), niGroup(1), hostGroup(1, false)},
		Span:   pingPongSpan,
	}
}

// broadcastView is lci-broadcast's: the root (node 0) and the first nodes
// its tree forwards to, whose NIs forward in turn.
func broadcastView(scenario.Params) scenario.WaveView {
	return scenario.WaveView{
		Select: nodesSelect(0, 1, 2, 3),
		Groups: []waves.ViewGroup{hostGroup(0, true), niGroup(0), linkGroup(0, 1, 2, 3), niGroup(1), niGroup(2), niGroup(3)},
		Span:   2 * pingPongSpan,
	}
}

// trafficView is lci-traffic's: every node of the cluster (random traffic
// among them), the save file on nodes 0 and 1.
func trafficView(p scenario.Params) scenario.WaveView {
	n := p.(*TrafficParams).Nodes
	nodes := make([]int, n)
	for i := range nodes {
		nodes[i] = i
	}
	return scenario.WaveView{
		Select: nodesSelect(nodes...),
		Groups: []waves.ViewGroup{niGroup(0), linkGroup(0, 1), niGroup(1)},
		Span:   pingPongSpan,
	}
}

// withWaves sets each scenario's waveform view.
func withWaves(list []*scenario.Scenario) []*scenario.Scenario {
	for _, s := range list {
		switch s.Name {
		case "lci-broadcast":
			s.Waves = broadcastView
		case "lci-traffic":
			s.Waves = trafficView
		default:
			s.Waves = pairView
		}
	}
	return list
}
