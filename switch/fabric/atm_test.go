package fabric_test

import (
	"fmt"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// atmStar builds a star of sw and lc with the permanent VCs, the shared
// checkers (reporting to col, which may be nil) and one traffic endpoint
// per port sending pat at rates[i]; every endpoint stops generating at
// cycle stop.
func atmStar(e *env.Env, sw atm.Builder, lc link.Config, pat traffic.Pattern, rates []float64,
	col *stats.Collector, stop clock.Cycle) (*atm.Star, *fabric.ATMShared, []*fabric.ATMEndpoint) {
	return atmStarIn(e, sw, lc, pat, rates, col, stop, vtest.CreationOrders(len(rates))[0])
}

// atmStarIn is atmStar with the endpoints created in order (order[k] is
// the port of the k-th endpoint created), which sets their tick order.
func atmStarIn(e *env.Env, sw atm.Builder, lc link.Config, pat traffic.Pattern, rates []float64,
	col *stats.Collector, stop clock.Cycle, order []int) (*atm.Star, *fabric.ATMShared, []*fabric.ATMEndpoint) {
	st, err := atm.MakeStarBuilder().WithEnv(e).WithSwitch(sw).WithLink(lc).Build("Net")
	Expect(err).NotTo(HaveOccurred())
	Expect(fabric.SetupATMVCs(st.Switch)).To(Succeed())
	sh := fabric.NewATMShared(e, "Net", len(st.Ports), col)
	sh.Attach(st.Switch)
	eps := make([]*fabric.ATMEndpoint, len(st.Ports))
	for _, i := range order {
		ep, err := fabric.MakeATMEndpointBuilder().WithEnv(e).WithStar(st, i).WithTraffic(pat, rates[i]).
			WithShared(sh).Build(fmt.Sprintf("Net.Host%d", i))
		Expect(err).NotTo(HaveOccurred())
		eps[i] = ep
	}
	vtest.AtCycle(e, "Stopper", lc.Clock, stop, func(clock.Time) {
		for _, ep := range eps {
			ep.StopGenerating()
		}
	})
	for _, ep := range eps {
		ep.Start()
	}
	return st, sh, eps
}

// runATM runs e and the end-of-run checks and returns the first error.
func runATM(e *env.Env, sh *fabric.ATMShared) error {
	res, err := e.Run()
	sh.Finish(res.End)
	if err != nil {
		return err
	}
	return e.Monitor.Err()
}

func mustPattern(name string, n int, o traffic.Options) traffic.Pattern {
	p, err := traffic.New(name, n, o)
	Expect(err).NotTo(HaveOccurred())
	return p
}

var _ = Describe("ATM traffic endpoints", func() {
	clk := atm.LinkClock()

	// Endpoints of one clock tick in the order they were created; a star's
	// results must not depend on it (each endpoint draws from its own
	// seeded stream and sees the switch only through registered buffers).
	It("delivers the same cells at the same cycles whatever order the endpoints were created in", func() {
		run := func(order []int) []string {
			e := vtest.NewEnv(vtest.Options{Clock: clk, Seed: 11})
			_, sh, _ := atmStarIn(e, atm.ASX100(), atm.LinkConfig(), mustPattern("uniform", 4, traffic.Options{}),
				[]float64{0.4, 0.4, 0.4, 0.4}, nil, 5000, order)
			var out []string
			sh.OnResolve = func(now clock.Time, c *fabric.ATMCell, delivered bool) {
				out = append(out, fmt.Sprintf("%d %v %v", clk.CycleAt(now), c, delivered))
			}
			Expect(runATM(e, sh)).To(Succeed())
			Expect(len(out)).To(BeNumerically(">", 100))
			// Deliveries of one edge are listed in tick order: compare
			// them as a set per edge.
			slices.Sort(out)
			return append(out, fmt.Sprint(sh.Ports()))
		}
		Expect(vtest.SameInEveryOrder(4, run)).To(BeEmpty())
	})

	It("sets up one VC per ordered pair of ports, translating the VCI to the source's", func() {
		e := env.New(env.Options{})
		st, err := atm.MakeStarBuilder().WithEnv(e).Build("Net")
		Expect(err).NotTo(HaveOccurred())
		Expect(fabric.SetupATMVCs(st.Switch)).To(Succeed())
		out, vci, ok := st.Switch.Route(1, fabric.ATMPeerVCI(3))
		Expect([]any{out, vci, ok}).To(Equal([]any{3, uint16(33), true}))
		_, _, ok = st.Switch.Route(2, fabric.ATMPeerVCI(2))
		Expect(ok).To(BeFalse()) // no VC to itself
		Expect(fabric.ATMPeerVCI(0)).To(Equal(uint16(fabric.ATMFirstVCI)))
	})

	It("sends at line rate and delivers every cell 176 cycles after it left on an idle switch", func() {
		// A fixed seed: the cell count below is a random draw (113
		// expected; one Ginkgo seed in many drew 68).
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, Seed: 1})
		col := stats.New(4, stats.Window{Measure: 20000})
		// Only host 1 sends, to host 2 (bitcomp on 4 ports).
		_, sh, _ := atmStar(e, atm.ASX100(), atm.LinkConfig(), mustPattern("bitcomp", 4, traffic.Options{}),
			[]float64{0, 0.3, 0, 0}, col, 20000)
		Expect(runATM(e, sh)).To(Succeed())
		// A cell generated at c is sent at c+1 if the link is free; as in
		// the switch's tests it reaches the switch at c+54, its output
		// queue at c+54+69 = c+123, leaves at c+124 and is taken by host 2
		// at c+124+53 = c+177: network latency 176 cycles, 177 from its
		// creation. One sender never meets contention, so every cell
		// takes exactly 176 cycles once on the link.
		r := col.Result()
		Expect(r.Packet.N).To(BeNumerically(">", 80)) // 0.3 x 20000 / 53 = 113 expected
		Expect([]uint64{r.Network.Min, r.Network.Max, r.Packet.Min}).To(Equal([]uint64{176, 176, 177}))
		Expect(r.Lost).To(BeZero())
		// Cells leave one per 53-cycle cell time at most.
		var sends []clock.Cycle
		for _, rec := range e.Trace.Records() {
			if rec.Kind == "atm.send" {
				Expect(rec.Path).To(Equal("Net.Host1"))
				sends = append(sends, rec.Cycle)
			}
		}
		Expect(sends).To(HaveLen(r.Packet.N))
		for i := 1; i < len(sends); i++ {
			Expect(sends[i] - sends[i-1]).To(BeNumerically(">=", 53))
		}
		pcs := sh.Ports()
		Expect(pcs[1].Sent).To(Equal(uint64(r.Packet.N)))
		Expect(pcs[2].Received).To(Equal(pcs[1].Sent))
		Expect(pcs[2].SentTo).To(Equal(pcs[1].Sent))
	})

	It("loses cells only at the overloaded output, counts each one and keeps every VC in order", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: false})
		// Hosts 1..3 send every cell to host 0 at 0.6 of the link rate
		// each: 1.8 times what output 0 carries. Host 0 sends uniformly.
		pat := mustPattern("hotspot", 4, traffic.Options{Hotspots: []int{0}, HotFraction: 1})
		st, sh, _ := atmStar(e, atm.ASX100().WithQueueDepth(8), atm.LinkConfig(), pat,
			[]float64{0.3, 0.6, 0.6, 0.6}, nil, 15000)
		Expect(runATM(e, sh)).To(Succeed())
		sent, recv, dropped := sh.Cells.Counts()
		Expect(sent).To(Equal(recv + dropped))
		Expect(dropped).To(BeNumerically(">", 100)) // about 0.8 x 15000 / 53 = 226 expected
		pcs := sh.Ports()
		var total uint64
		for p, pc := range pcs {
			s := st.Switch.Stats(p)
			Expect(pc.Sent).To(Equal(pc.DeliveredFrom+pc.DroppedFrom), "port %d", p)
			Expect(pc.SentTo).To(Equal(pc.Received+s.Dropped), "port %d", p)
			if p != 0 {
				Expect(s.Dropped).To(BeZero(), "port %d", p)
			}
			total += pc.Sent
			// The endpoint's counters are on its signals.
			Expect(e.Waves.Lookup(fmt.Sprintf("net.host%d.cells_sent", p)).Value()).To(Equal(pc.Sent))
			Expect(e.Waves.Lookup(fmt.Sprintf("net.host%d.cells_received", p)).Value()).To(Equal(pc.Received))
		}
		Expect(total).To(Equal(uint64(sent)))
		Expect(st.Switch.Stats(0).Dropped).To(Equal(uint64(dropped)))
		Expect(st.Switch.Queue(0).Stats().MaxOccupancy).To(Equal(8))
	})

	It("counts cells without a route as dropped", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		st, err := atm.MakeStarBuilder().WithEnv(e).Build("Net")
		Expect(err).NotTo(HaveOccurred())
		// Only the VC from 2 to 1: host 1's cells to 2 find no route.
		Expect(st.Switch.AddRoute(2, fabric.ATMPeerVCI(1), 1, fabric.ATMPeerVCI(2))).To(Succeed())
		sh := fabric.NewATMShared(e, "Net", 4, nil)
		sh.Attach(st.Switch)
		pat := mustPattern("bitcomp", 4, traffic.Options{}) // 1 <-> 2
		var eps []*fabric.ATMEndpoint
		for i := range 4 {
			rate := map[bool]float64{true: 0.5, false: 0}[i == 1 || i == 2]
			ep, err := fabric.MakeATMEndpointBuilder().WithEnv(e).WithStar(st, i).WithTraffic(pat, rate).WithShared(sh).Build(fmt.Sprintf("Net.Host%d", i))
			Expect(err).NotTo(HaveOccurred())
			eps = append(eps, ep)
			ep.Start()
		}
		vtest.AtCycle(e, "Stopper", clk, 5000, func(clock.Time) {
			for _, ep := range eps {
				ep.StopGenerating()
			}
		})
		Expect(runATM(e, sh)).To(Succeed())
		pcs := sh.Ports()
		Expect(pcs[1].Sent).To(BeNumerically(">", 20))
		Expect(pcs[1].DroppedFrom).To(Equal(pcs[1].Sent))
		Expect(st.Switch.Stats(1).NoRoute).To(Equal(pcs[1].Sent))
		Expect(pcs[1].Received).To(Equal(pcs[2].Sent))
	})

	It("reports a cell the switch delivers to the wrong host", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		st, err := atm.MakeStarBuilder().WithEnv(e).Build("Net")
		Expect(err).NotTo(HaveOccurred())
		// A wrong table entry: host 1's VC to host 2 leads to port 3.
		Expect(st.Switch.AddRoute(1, fabric.ATMPeerVCI(2), 3, fabric.ATMPeerVCI(1))).To(Succeed())
		sh := fabric.NewATMShared(e, "Net", 4, nil)
		sh.Attach(st.Switch)
		ep, err := fabric.MakeATMEndpointBuilder().WithEnv(e).WithStar(st, 1).
			WithTraffic(mustPattern("bitcomp", 4, traffic.Options{}), 0.5).WithShared(sh).Build("Net.Host1")
		Expect(err).NotTo(HaveOccurred())
		for _, i := range []int{0, 2, 3} {
			_, err := fabric.MakeATMEndpointBuilder().WithEnv(e).WithStar(st, i).WithShared(sh).Build(fmt.Sprintf("Net.Host%d", i))
			Expect(err).NotTo(HaveOccurred())
		}
		ep.Start()
		vtest.AtCycle(e, "Stopper", clk, 1000, func(clock.Time) { ep.StopGenerating() })
		Expect(runATM(e, sh)).To(MatchError(ContainSubstring("misroute")))
	})

	It("reports cells lost on a link, which nothing counts", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		lc := atm.LinkConfig()
		lc.DropProb = 0.2
		_, sh, _ := atmStar(e, atm.ASX100(), lc, mustPattern("uniform", 4, traffic.Options{}),
			[]float64{0.3, 0.3, 0.3, 0.3}, nil, 5000)
		// The watchdog finds the conservation checker holding the lost
		// cells when events run out; Finish reports them lost.
		err := runATM(e, sh)
		Expect(err).To(MatchError(MatchRegexp(`\n  Net\.Cells: \d+ outstanding .*, the oldest \d+ sent at `)))
		Expect(e.Monitor.Err()).To(MatchError(ContainSubstring("Net.Cells [lost]")))
	})

	It("gives the same trace for the same seed and another for another seed", func() {
		run := func(seed uint64) []trace.Record {
			rec := trace.NewRecorder()
			e := env.New(env.Options{Trace: rec, Seed: seed})
			_, sh, _ := atmStar(e, atm.ASX100().WithQueueDepth(4), atm.LinkConfig(),
				mustPattern("hotspot", 4, traffic.Options{Hotspots: []int{2}, HotFraction: 0.7}),
				[]float64{0.7, 0.7, 0.7, 0.7}, nil, 3000)
			Expect(runATM(e, sh)).To(Succeed())
			return rec.Records()
		}
		a := run(7)
		Expect(len(a)).To(BeNumerically(">", 200))
		Expect(trace.Diff(a, run(7))).To(BeNil())
		Expect(trace.Diff(a, run(8))).NotTo(BeNil())
	})

	DescribeTable("rejects endpoints it cannot build, naming the problem",
		func(mod func(fabric.ATMEndpointBuilder, *atm.Star) fabric.ATMEndpointBuilder, msg string) {
			e := env.New(env.Options{})
			st, err := atm.MakeStarBuilder().WithEnv(e).Build("Net")
			Expect(err).NotTo(HaveOccurred())
			b := fabric.MakeATMEndpointBuilder().WithEnv(e).WithStar(st, 0).WithShared(fabric.NewATMShared(e, "Net", 4, nil)).
				WithTraffic(mustPattern("uniform", 4, traffic.Options{}), 0.5)
			_, err = mod(b, st).Build("Host")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("no env", func(b fabric.ATMEndpointBuilder, _ *atm.Star) fabric.ATMEndpointBuilder { return b.WithEnv(nil) }, "no env"),
		Entry("no star", func(b fabric.ATMEndpointBuilder, _ *atm.Star) fabric.ATMEndpointBuilder { return b.WithStar(nil, 0) }, "no star port 0"),
		Entry("port out of range", func(b fabric.ATMEndpointBuilder, st *atm.Star) fabric.ATMEndpointBuilder { return b.WithStar(st, 4) }, "no star port 4"),
		Entry("no shared state", func(b fabric.ATMEndpointBuilder, _ *atm.Star) fabric.ATMEndpointBuilder { return b.WithShared(nil) }, "no shared"),
		Entry("rate above 1", func(b fabric.ATMEndpointBuilder, _ *atm.Star) fabric.ATMEndpointBuilder {
			return b.WithTraffic(mustPattern("uniform", 4, traffic.Options{}), 1.5)
		}, "injection rate 1.5"),
	)
})
