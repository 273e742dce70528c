package noctb_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/testbench/noctb"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// shared is a Shared with the conservation checker only, for BuildNet.
func shared(e *env.Env) *fabric.Shared {
	return &fabric.Shared{Packets: check.NewConservation[uint64](e.Monitor, "Network.Packets")}
}

// longest returns the most routers a route of net crosses.
func longest(net *noctb.Net) int {
	n := 0
	for s := range net.Nodes {
		for d := range net.Nodes {
			n = max(n, net.Hops(s, d))
		}
	}
	return n
}

// mesh is a k x k mesh of BookSim's mesh88_lat routers with 1-cycle
// channels at 1 GHz and no synthetic traffic.
func mesh(k int) noctb.NetConfig {
	return noctb.NetConfig{Topology: "mesh", K: k, Router: noctb.Mesh88Lat(), ChannelLatency: 1, FlitBytes: 16,
		Clock: clock.MHz(1000), Sizes: traffic.Fixed(20)}
}

var _ = Describe("BuildNet", func() {
	It("builds the 8x8 mesh with BookSim's zero-load latency 4H+P+1", func() {
		e := env.New(env.Options{Seed: 1})
		net, err := noctb.BuildNet(e, mesh(8), shared(e))
		Expect(err).NotTo(HaveOccurred())
		Expect(net.Nodes).To(Equal(64))
		Expect(net.Terminals).To(HaveLen(64))
		Expect(net.HopCycles).To(BeZero())
		// Corner to corner: 14 links between routers, so 15 routers.
		Expect(net.Hops(0, 63)).To(Equal(15))
		// mesh88_lat's pipeline is 3 cycles (routing 1, VC and switch
		// allocation 1, switch traversal 1) and a channel 1: 1 + 15 x
		// (3 + 1) + 20 = 81 cycles for 20 flits.
		Expect(net.ZeroLoad(0, 63, 20)).To(Equal(81.0))
		// To itself: the injection channel, one router, the body: 1 + 4 + 1.
		Expect(net.ZeroLoad(9, 9, 1)).To(Equal(6.0))
	})

	It("builds the LCI paper's two Myrinet clusters with their longest routes", func() {
		for _, c := range []struct {
			topo, platform string
			hops           int
		}{{"myrinet-grid", "ppro", 10}, {"myrinet-clos", "p3", 3}} { // MY-P18 «at most 10 hops», MY-P21 «(3 hops)»
			pl, ok := noctb.MyrinetPlatform(c.platform)
			Expect(ok).To(BeTrue())
			e := env.New(env.Options{Seed: 1})
			net, err := noctb.BuildNet(e, noctb.NetConfig{Topology: c.topo, Platform: pl, Sizes: traffic.Fixed(16)}, shared(e))
			Expect(err).NotTo(HaveOccurred())
			Expect(net.Nodes).To(Equal(64), c.topo)
			Expect(longest(net)).To(Equal(c.hops), c.topo)
			Expect(net.HopCycles).To(Equal(pl.HopCycles()), c.topo)
			Expect(net.Clock).To(Equal(pl.Link.Clock), c.topo)
		}
		_, ok := noctb.MyrinetPlatform("gm")
		Expect(ok).To(BeFalse())
	})

	It("refuses an unknown topology, naming it", func() {
		e := env.New(env.Options{Seed: 1})
		_, err := noctb.BuildNet(e, noctb.NetConfig{Topology: "torus"}, shared(e))
		Expect(err).To(MatchError(`noctb: topology "torus" is not mesh, graph, myrinet-grid or myrinet-clos`))
	})
})

var _ = Describe("RunNet", func() {
	It("delivers a replayed packet at its zero-load latency and checks order with one VC", func() {
		c := mesh(4)
		c.Router.NumVCs, c.Router.InputSpeedup = 1, 1
		c.Replay = make([][]traffic.Record, 16)
		c.Replay[0] = []traffic.Record{{Cycle: 0, Src: 0, Dst: 15, Size: 20}}
		c.Window = stats.Window{Warmup: 0, Measure: 100, DrainLimit: 1000}
		rec := trace.NewRecorder()
		run, err := noctb.RunNet(env.New(env.Options{Seed: 1, Trace: rec}), c)
		Expect(err).NotTo(HaveOccurred())
		Expect(run.Saturated).To(BeFalse())
		Expect([]int{run.Sent, run.Received, run.Dropped}).To(Equal([]int{1, 1, 0}))
		Expect(run.Checkers).To(Equal([]string{"Network.Packets", "Network.Order"}))
		// 0 to 15 on a 4x4 mesh crosses 7 routers: 1 + 7 x 4 + 20 = 49.
		var got []string
		for _, r := range rec.Records() {
			if r.Kind == "net.deliver" {
				got = append(got, fmt.Sprint(r.Cycle))
			}
		}
		Expect(got).To(Equal([]string{"49"}))
		Expect(run.Stats.Packet.Mean).To(Equal(49.0))
	})

	It("refuses a replay that does not match the terminals", func() {
		c := mesh(2)
		c.Replay = make([][]traffic.Record, 3)
		c.Window = stats.Window{Measure: 10, DrainLimit: 10}
		run, err := noctb.RunNet(env.New(env.Options{Seed: 1}), c)
		Expect(run).To(BeNil())
		Expect(err).To(MatchError("noctb: a replay for 3 terminals on a network of 4"))
	})
})

var _ = Describe("RunATM", func() {
	It("adds 123 cycles (7 µs, AT-P9) to a cell's trip and accounts for every cell", func() {
		pat, err := traffic.New("uniform", 4, traffic.Options{K: 4})
		Expect(err).NotTo(HaveOccurred())
		c := noctb.DefaultATMConfig()
		Expect([]int{c.Ports, c.Latency, c.QueueDepth}).To(Equal([]int{4, 69, 256}))
		c.Pattern, c.InjectionRate = pat, 0.4
		c.Window = stats.Window{Warmup: 10000, Measure: 30000, DrainLimit: 50000}
		x, err := noctb.RunATM(env.New(env.Options{Seed: 2}), c)
		Expect(err).NotTo(HaveOccurred())
		Expect(x.Saturated).To(BeFalse())
		Expect(x.CellCycles).To(Equal(53))
		// In on a 53-cycle link, 69 cycles of latency, 1 for the output
		// queue's register, out on a 53-cycle link: 176.
		Expect(x.Stats.Network.Min).To(BeEquivalentTo(176))
		var sent, delivered, dropped uint64
		for _, pc := range x.Shared.Ports() {
			sent, delivered, dropped = sent+pc.Sent, delivered+pc.DeliveredFrom, dropped+pc.DroppedFrom
		}
		Expect(sent).To(BeNumerically(">", 1000))
		Expect(delivered).To(Equal(sent))
		Expect(dropped).To(BeZero())
		Expect(x.Corrupted()).To(BeZero())
	})
})

var _ = Describe("RunMC", func() {
	mc := func() noctb.MCConfig {
		c := noctb.DefaultMCConfig()
		c.Pages, c.InjectionRate, c.Sizes = 16, 0.05, traffic.Fixed(64)
		c.Window = stats.Window{Warmup: 1000, Measure: 5000, DrainLimit: 20000}
		return c
	}

	It("broadcasts every write to the 7 other adapters, in the hub's order at every receiver", func() {
		c := mc()
		c.Broadcast = true
		Expect(c.Ports).To(Equal(8)) // MC-P12
		x, err := noctb.RunMC(env.New(env.Options{Seed: 3}), c)
		Expect(err).NotTo(HaveOccurred())
		Expect(x.Saturated).To(BeFalse())
		var writes, received uint64
		for _, pc := range x.Shared.Ports() {
			writes, received = writes+pc.Writes, received+pc.Received
		}
		Expect(writes).To(BeNumerically(">", 50))
		Expect(received).To(Equal(7 * writes))
		sb := x.Shared.Pages.Report()
		Expect(sb.Mismatches).To(BeEmpty())
		Expect(sb.Missing).To(BeEmpty())
		Expect(uint64(sb.Matched)).To(Equal(received))
	})

	It("returns an MCAdapterError when the page map leaves an adapter nothing to write to", func() {
		c := mc()
		c.Pages = 1 // mapped at one adapter, without loop-back: that one has no receiver
		x, err := noctb.RunMC(env.New(env.Options{Seed: 1}), c)
		Expect(x).To(BeNil())
		var ae *noctb.MCAdapterError
		Expect(err).To(BeAssignableToTypeOf(ae))
	})
})
