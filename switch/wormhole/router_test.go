package wormhole_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/topology"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/switch/wormhole"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var clk = clock.MHz(1000) // 1 ns cycles: cycle numbers read as ns

// delivery is a delivered packet with its tail's arrival cycle.
type delivery struct {
	ID      uint64
	Src     int
	Latency uint64 // tail arrival minus creation
	At      uint64
	Hops    int
}

// runMesh builds a k x k mesh, replays the given packets (a record per
// packet; created and offered at its cycle) and returns the deliveries in
// arrival order, with every checker on.
func runMesh(e *env.Env, k int, rc wormhole.Config, latency int, recs []traffic.Record) ([]delivery, *topology.Network) {
	return runMeshConfig(e, topology.MeshConfig{K: k, Router: rc, Clock: clk, ChannelLatency: latency, FlitBytes: 16}, recs)
}

// runMeshConfig is runMesh for any mesh configuration.
func runMeshConfig(e *env.Env, mc topology.MeshConfig, recs []traffic.Record) ([]delivery, *topology.Network) {
	k := mc.K
	var out []delivery
	sh := &fabric.Shared{
		Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
		OnDeliver: func(now clock.Time, p *fabric.Packet) {
			at := uint64(clk.CycleAt(now))
			out = append(out, delivery{ID: p.ID, Src: p.Src, Latency: at - p.Created, At: at, Hops: p.Hops})
		},
	}
	net, err := topology.Mesh(e, "M", mc, sh)
	Expect(err).NotTo(HaveOccurred())
	per := make([][]traffic.Record, k*k)
	for _, r := range recs {
		per[r.Src] = append(per[r.Src], r)
	}
	for i, t := range net.Terminals {
		_ = t
		net.Terminals[i].SetReplay(per[i])
		t.Start()
	}
	_, err = e.Run()
	Expect(err).NotTo(HaveOccurred())
	sh.Packets.Finish(e.Now())
	Expect(e.Monitor.Err()).NotTo(HaveOccurred())
	return out, net
}

var _ = Describe("Wormhole router", func() {
	DescribeTable("zero-load latency is the sum of the pipeline and link delays",
		// Per router a head spends routing_delay + vc_alloc_delay +
		// sw_alloc_delay + switch traversal cycles and then crosses a
		// channel: 1 + latency cycles from being sent to being seen. The
		// terminal adds one channel at each end, and the body follows one
		// flit per cycle. So a packet of P flits over H routers takes
		// L + H*(RD + VA + SA + ST + L) + P cycles from creation to its tail
		// (BookSim mesh88_lat: 4H + P + 1).
		func(rd, va, st, l, p, src, dst int) {
			rc := wormhole.Mesh88Lat()
			rc.RoutingDelay, rc.VCAllocDelay, rc.STPrepareDelay, rc.STFinalDelay = rd, va, st-1, 1
			rc.VCBufSize = 64 // no credit stalls
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			got, net := runMesh(e, 4, rc, l, []traffic.Record{{Cycle: 3, Src: src, Dst: dst, Size: p}})
			h := net.Hops(src, dst)
			Expect(got).To(HaveLen(1))
			Expect(got[0].Hops).To(Equal(h))
			Expect(got[0].Latency).To(Equal(uint64(l + h*(rd+va+1+st+l) + p)))
		},
		Entry("mesh88_lat, one flit, next door", 0, 1, 1, 1, 1, 0, 1),
		Entry("mesh88_lat, 20 flits, corner to corner", 0, 1, 1, 1, 20, 0, 15),
		Entry("mesh88_lat, 20 flits, to itself", 0, 1, 1, 1, 20, 5, 5),
		Entry("routing delay 1", 1, 1, 1, 1, 20, 0, 10),
		Entry("routing delay 2, VC allocation 2", 2, 2, 1, 1, 5, 3, 12),
		Entry("switch traversal 2", 0, 1, 2, 1, 7, 15, 0),
		Entry("no wire delay", 0, 1, 1, 0, 20, 1, 14),
		Entry("long wires", 1, 1, 1, 3, 4, 12, 3),
		Entry("every delay set", 2, 2, 2, 2, 3, 0, 0),
	)

	It("takes one packet through two routers with every delay set, flit by flit", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		rc := wormhole.Mesh88Lat()
		rc.RoutingDelay, rc.VCAllocDelay, rc.SWAllocDelay, rc.STPrepareDelay, rc.STFinalDelay, rc.CreditDelay = 2, 2, 2, 1, 1, 2
		// A 3-flit packet from terminal 0 to terminal 1 (next door, 2
		// routers) on a 2x2 mesh whose channels have a latency of 2: a flit
		// sent at t lands at t+2 (link.flit) and is seen from t+3. The head
		// is sent at 0 and seen by router 0 at 3; routing 3-4, VC
		// allocation 5-6, switch allocation 7-8, traversal 9-10: sent at 10.
		// Router 1 sees it at 13 and sends it at 20; terminal 1 sees it at
		// 23. A VC bids for the switch again only once its last bid has
		// committed (as BookSim's iq_router), so with a 2-cycle switch
		// allocation a packet moves a flit every 2 cycles: the body flits
		// leave router 0 at 12 and 14 and router 1 at 22 and 24, and the
		// tail arrives at 27 = L + H*(RD+VA+SA+ST+L) + P + (P-1)*(SA-1)
		// = 2 + 2*10 + 3 + 2.
		mc := topology.MeshConfig{K: 2, Router: rc, Clock: clk, ChannelLatency: 2, FlitBytes: 16, TraceFlits: true}
		got, _ := runMeshConfig(e, mc, []traffic.Record{{Cycle: 0, Src: 0, Dst: 1, Size: 3}})
		Expect(got).To(Equal([]delivery{{ID: 1, Src: 0, Latency: 27, At: 27, Hops: 2}}))
		Expect(vtest.Golden("testdata/every_delay.trace", e.Trace.Records(),
			"One 3-flit packet, terminal 0 to terminal 1 on a 2x2 mesh, created at cycle 0. Router: routing 2,",
			"VC allocation 2, switch allocation 2, traversal 1+1 cycles, credit delay 2; channel latency 2.",
			"link.flit: a flit lands at the far end of a link (seen from the next cycle); router.head: a head",
			"leaves a router; link.packet / net.deliver: the tail lands / reaches the terminal.",
			"A flit sent at t lands at t+2. Head: sent 0, lands 2 at router 0, routed 3-4, VC 5-6, switch 7-8,",
			"traversal 9-10, sent 10, lands 12 at router 1, leaves 20, lands 22 at terminal 1. A VC bids for",
			"the switch again only once its last bid committed, so the body flits move every 2 cycles: they",
			"leave router 0 at 12 and 14, land at router 1 at 14 and 16, leave it at 22 and 24 and land at",
			"terminal 1 at 24 and 26; the tail is delivered at 27 = 2 + 2*(2+2+2+2+2) + 3 + 2.")).To(Succeed())
	}, Label("golden"))

	It("serves two packets contending for one output one after the other", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		// On a 2x2 mesh, terminals 1 (east of 0) and 2 (north of 0) send a
		// one-flit packet to terminal 0 at cycle 0. Both heads reach router
		// 0 at cycle 6 and ask for ejection VCs. With one-iteration iSLIP
		// every free output VC grants the lowest input, 0 (from +x, router
		// 1), which accepts one; input 2 gets no grant and retries at 7.
		// Input 0: switch at 7, out at 8, arrives at 10; input 2: VC at 7,
		// switch at 8, out at 9, arrives at 11.
		got, _ := runMesh(e, 2, wormhole.Mesh88Lat(), 1, []traffic.Record{
			{Cycle: 0, Src: 1, Dst: 0, Size: 1}, {Cycle: 0, Src: 2, Dst: 0, Size: 1}})
		Expect(got).To(Equal([]delivery{
			{ID: 1<<40 | 1, Src: 1, Latency: 10, At: 10, Hops: 2},
			{ID: 2<<40 | 1, Src: 2, Latency: 11, At: 11, Hops: 2},
		}))
		Expect(vtest.Golden("testdata/contention.trace", e.Trace.Records(),
			"Two one-flit packets for terminal 0 on a 2x2 mesh with the mesh88_lat router, created at cycle 0.",
			"router.head: a head leaves a router; net.deliver: a tail reaches its terminal.",
			"Each head leaves its first router at cycle 4 (visible at 2, VC allocation 2, switch 3, traversal 4).",
			"Both reach router 0 at 6 and ask for ejection VCs. One-iteration iSLIP: every free output VC grants",
			"the lowest input (0, from router 1), which accepts VC 0; input 2 gets no grant and retries at 7.",
			"Input 0: switch 7, out 8, delivered 10. Input 2: VC 1 at 7, switch 8, out 9, delivered 11.")).To(Succeed())
	}, Label("golden"))

	It("stalls for credits when the buffers are shorter than the credit round trip", func() {
		rc := wormhole.Mesh88Lat()
		rc.VCBufSize = 1
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		// Three flits from terminal 0 to terminal 1 with one-flit buffers.
		// f0: router 0 sees it at 2, VC 2, switch 3, out 4; router 1 sees it
		// at 6, switch 7, out 8; terminal 1 at 10. The terminal's credit
		// for f0 is back at 5 (router 0 freed the slot at 3): f1 sent at 5,
		// seen by router 0 at 7, but router 0's credit for router 1 is back
		// only at 11 (freed at 7, + 1 + latency + credit delay 2): switch
		// 11, out 12, router 1 sees it at 14; the ejection credit (terminal
		// 1 took f0 at 10) is back at 14: switch 14, out 15, terminal 1 at
		// 17. f2: sent at 13, router 0 at 15, credit back at 18 (router 1
		// freed at 14): switch 18, out 19, router 1 at 21, ejection credit
		// back at 21 (terminal took f1 at 17), out 22, terminal 1 at 24.
		mc := topology.MeshConfig{K: 2, Router: rc, Clock: clk, ChannelLatency: 1, FlitBytes: 16, TraceFlits: true}
		got, net := runMeshConfig(e, mc, []traffic.Record{{Cycle: 0, Src: 0, Dst: 1, Size: 3}})
		Expect(got).To(HaveLen(1))
		Expect(got[0].At).To(Equal(uint64(24)))
		Expect(net.Routers[0].Stalls().Credit).To(BeNumerically(">", 0))
		Expect(vtest.Golden("testdata/credit_stall.trace", e.Trace.Records(),
			"Three flits from terminal 0 to terminal 1 (next door) on a 2x2 mesh with mesh88_lat routers",
			"cut to one-flit buffers. A credit freed at s is usable upstream at s+1+1+2 by a router,",
			"s+1+1 by a terminal. link.flit lands a flit (seen the cycle after), router.head: a head leaves.",
			"f0 lands at router 0 at 1, leaves 4, lands at router 1 at 5, leaves 8, lands at terminal 1 at 9.",
			"f1 (sent 5) lands at router 0 at 6 but waits for router 1's credit (freed 7, back 11): leaves",
			"12, lands 13; the ejection credit (freed 10, back 14): leaves 15, lands 16. f2 (sent 13) lands",
			"14, credit back 18: leaves 19, lands 20, ejection credit back 21: leaves 22, lands 23, tail",
			"delivered 24.")).To(Succeed())
	}, Label("golden"))

	It("relieves head-of-line blocking with a second VC", func() {
		// 3x3 mesh. Terminal 1 sends a 40-flit packet Z east to terminal 2
		// at cycle 0. Terminal 0 sends X (4 flits) to terminal 2 and then Y
		// (4 flits) north-east to terminal 4, both created at cycle 0. X
		// and Y share the link from router 0 to router 1; at router 1 X
		// needs the east output Z holds. With one VC, Y queues behind X;
		// with two (and an input speedup of two, so that X and Y do not
		// share a crossbar input), Y takes the other VC and is not delayed
		// at all: its
		// latency is its 4 cycles in the source queue behind X plus the
		// zero-load latency over 3 routers, 4 + (4*3 + 4 + 1) = 21.
		recs := []traffic.Record{{Cycle: 0, Src: 1, Dst: 2, Size: 40}, {Cycle: 0, Src: 0, Dst: 2, Size: 4}, {Cycle: 0, Src: 0, Dst: 4, Size: 4}}
		var traces [3][]trace.Record
		latencyOfY := func(vcs int) uint64 {
			rc := wormhole.Mesh88Lat()
			rc.NumVCs, rc.InputSpeedup = vcs, vcs // each VC its own crossbar input
			e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
			got, _ := runMesh(e, 3, rc, 1, recs)
			traces[vcs] = e.Trace.Records()
			for _, d := range got {
				if d.ID == 2 { // terminal 0's second packet
					return d.Latency
				}
			}
			Fail("Y was not delivered")
			return 0
		}
		Expect(latencyOfY(2)).To(Equal(uint64(21)))
		Expect(latencyOfY(1)).To(BeNumerically(">", 40))
		Expect(vtest.Golden("testdata/hol.trace", append(traces[1], traces[2]...),
			"Head-of-line blocking on a 3x3 mesh (mesh88_lat routers), all packets created at cycle 0:",
			"Z, 40 flits, terminal 1 -> 2 (east); X, 4 flits, 0 -> 2 and then Y, 4 flits, 0 -> 4, from terminal 0.",
			"pkt 1<<40|1 = 1099511627777 is Z, pkt 1 is X, pkt 2 is Y. router.head: a head leaves a router;",
			"link.packet: a tail lands at the far end of a link; net.deliver: a tail reaches its terminal.",
			"First run (records up to cycle 73), ONE VC: Z's head leaves router 1 eastward at 4 and holds that",
			"output until its tail is through (it lands at router 2 at 44). X reaches router 1 at 8 and waits",
			"there behind Z, holding the only VC of the link from router 0 until it has left router 1 (52). Y,",
			"which wants to turn north at router 1, is stuck behind X at router 0 until 60: delivered at 73.",
			"Second run, TWO VCs and input speedup 2: X takes VC 1 east at router 1 and shares the link with Z",
			"(Z is delivered 4 cycles later, at 53); Y takes VC 1 of the link from router 0, leaves router 0",
			"at 8 and router 1 at 12: delivered at 21 = 4 cycles behind X in the source queue + the zero-load",
			"latency over 3 routers (4*3 + 4 + 1).")).To(Succeed())
	}, Label("golden"))

	It("grants an output VC only with room for the whole packet under virtual cut-through", func() {
		rc := wormhole.Mesh88Lat()
		rc.CutThrough, rc.VCBufSize = true, 4
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		// A 6-flit packet can never fit a 4-flit buffer: it must not move,
		// and the watchdog must say so.
		sh := &fabric.Shared{}
		net, err := topology.Mesh(e, "M", topology.MeshConfig{K: 2, Router: rc, Clock: clk, ChannelLatency: 1, FlitBytes: 16}, sh)
		Expect(err).NotTo(HaveOccurred())
		net.Terminals[0].SetReplay([]traffic.Record{{Cycle: 0, Src: 0, Dst: 1, Size: 3}})
		net.Terminals[0].Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred()) // 3 flits fit: delivered
		e2 := vtest.NewEnv(vtest.Options{Clock: clk, TimeLimit: 2 * clock.Microsecond})
		net, err = topology.Mesh(e2, "M", topology.MeshConfig{K: 2, Router: rc, Clock: clk, ChannelLatency: 1, FlitBytes: 16}, sh)
		Expect(err).NotTo(HaveOccurred())
		net.Terminals[0].SetReplay([]traffic.Record{{Cycle: 0, Src: 0, Dst: 1, Size: 6}})
		net.Terminals[0].Start()
		res, _ := e2.Run()
		Expect(res.Stopped).To(BeTrue())
		Expect(net.Routers[0].Stalls().VCAlloc).To(BeNumerically(">", 1000))
	})

	DescribeTable("delivers thousands of random packets, each exactly once, under every router option",
		func(mod func(*wormhole.Config)) {
			rc := wormhole.Mesh88Lat()
			mod(&rc)
			var recs []traffic.Record
			// Run twice, traced (the links' slow path) and untraced (their
			// fast path): every packet must arrive at the same cycle.
			got, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(e *env.Env) []delivery {
				rng := e.Rand("Traffic")
				recs = nil
				for c := uint64(0); c < 3000; c++ {
					for src := range 16 {
						if rng.Float64() < 0.02 {
							recs = append(recs, traffic.Record{Cycle: c, Src: src, Dst: rng.IntN(16), Size: 1 + rng.IntN(12)})
						}
					}
				}
				got, _ := runMesh(e, 4, rc, 1, recs)
				return got
			})
			Expect(diff).To(BeEmpty(), "deliveries traced (-) and untraced (+)")
			Expect(got).To(HaveLen(len(recs)))
			for _, d := range got {
				// At least a channel in and out and one router (3 cycles
				// with speculation).
				Expect(d.Latency).To(BeNumerically(">=", 5))
			}
		},
		Entry("mesh88_lat", func(c *wormhole.Config) {}),
		Entry("one VC", func(c *wormhole.Config) { c.NumVCs, c.InputSpeedup = 1, 1 }),
		Entry("separable allocators", func(c *wormhole.Config) {
			c.VCAllocator, c.SWAllocator = "separable_input_first", "separable_input_first"
		}),
		Entry("speculative", func(c *wormhole.Config) { c.Speculative = true }),
		Entry("virtual cut-through", func(c *wormhole.Config) { c.CutThrough, c.VCBufSize = true, 16 }),
		Entry("shared buffers (Telegraphos)", func(c *wormhole.Config) { *c = wormhole.Telegraphos() }),
		Entry("no wait for the tail credit", func(c *wormhole.Config) { c.WaitForTailCredit = false }),
		Entry("output speedup 2", func(c *wormhole.Config) { c.OutputSpeedup = 2 }),
		Entry("slow pipeline", func(c *wormhole.Config) {
			c.RoutingDelay, c.VCAllocDelay, c.SWAllocDelay, c.STPrepareDelay = 1, 2, 2, 1
		}),
	)

	It("never lets two VCs spend the last credit of a shared buffer", func() {
		// With a shared pool per port (Telegraphos), a flit that won the
		// switch holds one of the port's credits until it is sent, whatever
		// its VC: a second VC bidding in the next cycle must see that. A
		// busy 4x4 mesh with packets of 1 to 16 flits drives the pools of
		// the central ports to their last credit again and again; a credit
		// spent twice is a link protocol violation (runMesh fails on it).
		rc := wormhole.Telegraphos()
		for seed := range uint64(4) {
			e := vtest.NewEnv(vtest.Options{Clock: clk, Seed: seed + 1})
			rng := e.Rand("Traffic")
			var recs []traffic.Record
			for c := uint64(0); c < 1500; c++ {
				for src := range 16 {
					if rng.Float64() < 0.03 {
						recs = append(recs, traffic.Record{Cycle: c, Src: src, Dst: rng.IntN(16), Size: []int{1, 4, 8, 16}[rng.IntN(4)]})
					}
				}
			}
			got, _ := runMesh(e, 4, rc, 1, recs)
			Expect(got).To(HaveLen(len(recs)))
		}
	})

	DescribeTable("keeps packets on their injection VC only with VC classes",
		func(classes bool, wantSame bool) {
			// Terminal 0 sends two packets corner to corner on a 3x3 mesh,
			// the second when the first is long gone; it injects them on VC
			// 0 and VC 1 (round robin). Without classes a router may give a
			// head any free output VC, and the second packet's head moves
			// back to VC 0; with classes it stays on VC 1 to the end.
			e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
			rc := wormhole.Mesh88Lat()
			rc.NumVCs, rc.InputSpeedup = 2, 2
			mc := topology.MeshConfig{K: 3, Router: rc, Clock: clk, ChannelLatency: 1, FlitBytes: 16, VCClasses: classes}
			runMeshConfig(e, mc, []traffic.Record{{Cycle: 0, Src: 0, Dst: 8, Size: 2}, {Cycle: 50, Src: 0, Dst: 8, Size: 2}})
			vcs := map[string][]string{}
			for _, r := range e.Trace.Records() {
				if r.Kind == "router.head" {
					pkt, _ := r.Get("pkt")
					vc, _ := r.Get("vc")
					vcs[pkt] = append(vcs[pkt], vc)
				}
			}
			Expect(vcs["1"]).To(HaveLen(5))
			Expect(vcs["1"]).To(HaveEach("0"))
			if wantSame {
				Expect(vcs["2"]).To(HaveEach("1"))
			} else {
				Expect(vcs["2"]).To(ContainElement("0"))
			}
		},
		Entry("without classes", false, false),
		Entry("with classes", true, true),
	)

	It("delivers in order per source and destination with one VC", func() {
		rc := wormhole.Mesh88Lat()
		rc.NumVCs, rc.InputSpeedup = 1, 1
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		order := check.NewOrdering[[2]int](e.Monitor, "Order")
		sh := &fabric.Shared{Order: order, Packets: check.NewConservation[uint64](e.Monitor, "Packets")}
		pat, _ := traffic.New("uniform", 16, traffic.Options{})
		inj, _ := traffic.NewBernoulli(0.3, traffic.Fixed(5))
		net, err := topology.Mesh(e, "M", topology.MeshConfig{K: 4, Router: rc, Clock: clk, ChannelLatency: 1, FlitBytes: 16,
			Terminal: fabric.TerminalConfig{Pattern: pat, Injection: inj, Sizes: traffic.Fixed(5)}}, sh)
		Expect(err).NotTo(HaveOccurred())
		for _, t := range net.Terminals {
			t.Start()
		}
		stopper := vtest.NewAgent(e, "Stop", clk, func(now clock.Time, c clock.Cycle) bool {
			if c >= 5000 {
				for _, t := range net.Terminals {
					t.StopGenerating()
				}
				return false
			}
			return true
		})
		stopper.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred()) // drained completely: no deadlock
		sh.Packets.Finish(e.Now())
		sent, recv, _ := sh.Packets.Counts()
		Expect(recv).To(Equal(sent))
		Expect(sent).To(BeNumerically(">", 2000))
		Expect(e.Monitor.Err()).NotTo(HaveOccurred())
	})

	It("rejects impossible configurations, naming the key", func() {
		for _, c := range []struct {
			mod func(*wormhole.Config)
			key string
		}{
			{func(c *wormhole.Config) { c.NumVCs = 0 }, "num_vcs"},
			{func(c *wormhole.Config) { c.VCBufSize = 0 }, "vc_buf_size"},
			{func(c *wormhole.Config) { c.BufferPolicy = "pooled" }, "buffer_policy"},
			{func(c *wormhole.Config) { c.VCAllocDelay = 0 }, "vc_alloc_delay"},
			{func(c *wormhole.Config) { c.STFinalDelay = 0 }, "st_prepare_delay"},
			{func(c *wormhole.Config) { c.InputSpeedup = 9 }, "input_speedup"},
			{func(c *wormhole.Config) { c.SWAllocator = "wavefront" }, "sw_allocator"},
			{func(c *wormhole.Config) { c.Speculative, c.VCAllocDelay = true, 2 }, "speculative"},
		} {
			rc := wormhole.Mesh88Lat()
			c.mod(&rc)
			Expect(rc.Validate()).To(MatchError(ContainSubstring(c.key)), fmt.Sprint(c.key))
		}
	})
})

var _ = trace.Record{}
