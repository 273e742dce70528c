package fabric_test

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// mcStar builds a star of hb with MC1 links, the shared page map and
// checkers (reporting to col, which may be nil) and one traffic endpoint
// per port writing sizes at rates[i]; every endpoint stops generating at
// cycle stop.
func mcStar(e *env.Env, hb mchub.Builder, pages []fabric.MCPageMap, sizes traffic.Sizes, rates []float64,
	col *stats.Collector, stop clock.Cycle) (*mchub.Star, *fabric.MCShared) {
	return mcStarIn(e, hb, pages, sizes, rates, col, stop, vtest.CreationOrders(len(rates))[0])
}

// mcStarIn is mcStar with the endpoints created in order (order[k] is the
// port of the k-th endpoint created), which sets their tick order.
func mcStarIn(e *env.Env, hb mchub.Builder, pages []fabric.MCPageMap, sizes traffic.Sizes, rates []float64,
	col *stats.Collector, stop clock.Cycle, order []int) (*mchub.Star, *fabric.MCShared) {
	lc := mchub.LinkConfig()
	st, err := mchub.MakeStarBuilder().WithEnv(e).WithHub(hb).WithLink(lc).Build("MC")
	Expect(err).NotTo(HaveOccurred())
	sh, err := fabric.NewMCShared(e, "MC", len(st.Ports), pages, col)
	Expect(err).NotTo(HaveOccurred())
	Expect(sh.Attach(st.Hub)).To(Succeed())
	eps := make([]*fabric.MCEndpoint, len(st.Ports))
	for _, i := range order {
		b := fabric.MakeMCEndpointBuilder().WithEnv(e).WithStar(st, i).WithShared(sh)
		if rates[i] > 0 {
			b = b.WithTraffic(rates[i], sizes)
		}
		ep, err := b.Build(fmt.Sprintf("MC.Adapter%d", i))
		Expect(err).NotTo(HaveOccurred())
		eps[i] = ep
	}
	// The stopper acts in the last cycle of the measurement window
	// (stop-1): an endpoint ticking in the same cycle may generate before
	// or after it, but never at cycle stop, outside the window (acting at
	// stop let a write be created there when the endpoint ticked first,
	// unmeasured: a count that depended on tick order).
	vtest.AtCycle(e, "Stopper", lc.Clock, stop-1, func(clock.Time) {
		for _, ep := range eps {
			ep.StopGenerating()
		}
	})
	for _, ep := range eps {
		ep.Start()
	}
	return st, sh
}

// runMC runs e and the end-of-run checks and returns the first error.
func runMC(e *env.Env, sh *fabric.MCShared) error {
	res, err := e.Run()
	sh.Finish(res.End)
	if err != nil {
		return err
	}
	return e.Monitor.Err()
}

func mcSizes(s string) traffic.Sizes {
	z, err := traffic.ParseSizes(s)
	Expect(err).NotTo(HaveOccurred())
	return z
}

var _ = Describe("Memory Channel traffic endpoints", func() {
	clk := mchub.LinkClock()

	// As for the ATM star: the creation (tick) order of the adapters'
	// endpoints must not change which write arrives where and when.
	It("delivers the same writes at the same cycles whatever order the endpoints were created in", func() {
		run := func(order []int) []string {
			e := vtest.NewEnv(vtest.Options{Clock: clk, Seed: 12})
			_, sh := mcStarIn(e, mchub.MC1().WithPorts(4), fabric.MCBroadcastPages(2, 4, false), mcSizes("8:0.5,64:0.5"),
				[]float64{0.2, 0.2, 0.2, 0.2}, nil, 4000, order)
			var out []string
			sh.OnDeliver = func(now clock.Time, w *mchub.Write, r int) {
				out = append(out, fmt.Sprintf("%d %v at %d", clk.CycleAt(now), w, r))
			}
			Expect(runMC(e, sh)).To(Succeed())
			Expect(len(out)).To(BeNumerically(">", 100))
			// Deliveries of one edge are listed in tick order: compare
			// them as a set per edge.
			slices.Sort(out)
			return append(out, fmt.Sprint(sh.Ports()))
		}
		Expect(vtest.SameInEveryOrder(4, run)).To(BeEmpty())
	})

	It("maps pages everywhere or at one adapter each", func() {
		b := fabric.MCBroadcastPages(2, 3, false)
		Expect(b).To(Equal([]fabric.MCPageMap{{Page: 0, Receivers: []int{0, 1, 2}}, {Page: 1, Receivers: []int{0, 1, 2}}}))
		Expect(b[0].Destinations(1)).To(Equal([]int{0, 2}))
		b = fabric.MCBroadcastPages(1, 3, true)
		Expect(b[0].Destinations(1)).To(Equal([]int{0, 1, 2}))
		s := fabric.MCSinglePages(50, 4, rand.New(rand.NewPCG(1, 2)), false)
		seen := map[int]bool{}
		for pg, m := range s {
			Expect(m.Page).To(Equal(uint64(pg)))
			Expect(m.Receivers).To(HaveLen(1))
			seen[m.Receivers[0]] = true
			Expect(m.Destinations(m.Receivers[0])).To(BeEmpty())
		}
		Expect(seen).To(HaveLen(4))
	})

	It("delivers each write of a lone writer 41 cycles after its head left, to every other adapter", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		col := stats.New(5, stats.Window{Measure: 20000})
		st, sh := mcStar(e, mchub.MC1().WithPorts(5), fabric.MCBroadcastPages(4, 5, false), traffic.Fixed(32),
			[]float64{0, 0, 0.2, 0, 0}, col, 20000)
		Expect(runMC(e, sh)).To(Succeed())
		// A 32-byte write is one 40-byte flit (8 header bytes): 10 cycles
		// on a 4-byte link. Sent at t, it is in the hub's input buffer
		// from t+10+1 (wire delay 1); the hub picks it then, takes it at
		// t+12 onto its 4-byte bus for 10 cycles (t+12..t+21), it enters
		// the output queues 8 cycles after the last, at t+29, and leaves
		// at t+30; 10 cycles and the wire later it is in the adapter's
		// buffer and taken at t+41. One writer meets no contention: every
		// copy takes exactly 41 cycles, and 42 from its creation when the
		// link was free (sent the cycle after).
		r := col.Result()
		Expect([]uint64{r.Network.Min, r.Network.Max, r.Packet.Min}).To(Equal([]uint64{41, 41, 42}))
		pcs := sh.Ports()
		// 0.2 x 4 bytes/cycle / 32 bytes = 1 write per 40 cycles: 500
		// expected.
		Expect(pcs[2].Writes).To(BeNumerically(">", 400))
		Expect(r.Packet.N).To(Equal(4 * int(pcs[2].Writes)))
		for i, pc := range pcs {
			if i == 2 {
				Expect(pc.Received).To(BeZero()) // no loop-back
				continue
			}
			Expect(pc.Received).To(Equal(pcs[2].Writes))
			Expect(pc.ReceivedBytes).To(Equal(32 * pcs[2].Writes))
			Expect(e.Waves.Lookup(fmt.Sprintf("mc.adapter%d.writes_received", i)).Value()).To(Equal(pc.Received))
		}
		Expect(st.Hub.Stats(2).InPackets).To(Equal(pcs[2].Writes))
		rep := sh.Pages.Report()
		Expect(rep.OK()).To(BeTrue())
		Expect(rep.Matched).To(Equal(r.Packet.N))
	})

	It("gives every receiver its writes in the hub's global order under heavy mixed traffic", func() {
		// Six adapters; pages 0..3 mapped everywhere with loop-back on
		// 2 and 3, pages 4..7 at one adapter each (4 with loop-back), and
		// page 8 at adapters 1, 3 and 5.
		pages := fabric.MCBroadcastPages(4, 6, false)
		pages[2].Loopback, pages[3].Loopback = true, true
		for pg := 4; pg < 8; pg++ {
			pages = append(pages, fabric.MCPageMap{Page: uint64(pg), Receivers: []int{pg % 6}, Loopback: pg == 4})
		}
		pages = append(pages, fabric.MCPageMap{Page: 8, Receivers: []int{1, 3, 5}})
		// Traced (the links' slow path) and untraced (their fast path):
		// every write at every receiver at the same time. The checks
		// below are on the untraced run.
		var (
			st *mchub.Star
			sh *fabric.MCShared
		)
		type got struct {
			Src, Receiver int
			Seq           uint64
			At            clock.Time
		}
		_, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(e *env.Env) []got {
			// Each adapter offers 0.1 of a link; the bus carries all six
			// once: 0.6 of a link in data, more on the wire.
			st, sh = mcStar(e, mchub.MC1().WithPorts(6).WithQueueDepth(8), pages, mcSizes("4:0.3,64:0.4,200:0.3"),
				[]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, nil, 15000)
			var out []got
			sh.OnDeliver = func(now clock.Time, w *mchub.Write, r int) { out = append(out, got{w.Src, r, w.Seq, now}) }
			Expect(runMC(e, sh)).To(Succeed())
			return out
		})
		Expect(diff).To(BeEmpty(), "deliveries traced (-) and untraced (+)")
		sent, recv, _ := sh.Deliveries.Counts()
		Expect(recv).To(Equal(sent))
		Expect(recv).To(BeNumerically(">", 1000))
		rep := sh.Pages.Report()
		Expect(rep.OK()).To(BeTrue())
		Expect(rep.Matched).To(Equal(recv))
		// The load was enough to hold writers back and make the hub wait
		// for room.
		var waits uint64
		for p := range 6 {
			waits += st.Hub.Stats(p).WaitCycles
		}
		Expect(waits).To(BeNumerically(">", 0))
		// Every write reached all 5 others (and its writer on pages 2, 3
		// and 4): what the page map leaves out was filtered.
		Expect(sh.Filtered()).To(BeNumerically(">", recv/4))
		Expect(st.Hub.BusyCycles()).To(BeNumerically(">", 0))
	})

	It("sends writes back to the writer only with loop-back (MC-P8)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		pages := []fabric.MCPageMap{{Page: 0, Receivers: []int{0, 1, 2}, Loopback: true}, {Page: 1, Receivers: []int{0, 1, 2}}}
		_, sh := mcStar(e, mchub.MC1().WithPorts(3), pages, traffic.Fixed(8), []float64{0.05, 0, 0}, nil, 4000)
		var bits [2][2]int // [page][loop-back bit]: the headers the receivers saw
		sh.OnDeliver = func(_ clock.Time, w *mchub.Write, r int) {
			bits[w.Page()][map[bool]int{false: 0, true: 1}[w.Loopback]]++
		}
		got := [2][3]int{} // [page][receiver]: copies of adapter 0's writes
		bitsOf := sh.OnDeliver
		sh.OnDeliver = func(now clock.Time, w *mchub.Write, r int) { got[w.Page()][r]++; bitsOf(now, w, r) }
		Expect(runMC(e, sh)).To(Succeed())
		n0, n1 := got[0][1], got[1][1] // writes to each page
		Expect(n0).To(BeNumerically(">", 10))
		Expect(n1).To(BeNumerically(">", 10))
		Expect(got).To(Equal([2][3]int{{n0, n0, n0}, {0, n1, n1}}))
		// The endpoint set the header's loop-back bit from its page map.
		Expect(bits).To(Equal([2][2]int{{0, 3 * n0}, {2 * n1, 0}}))
		Expect(sh.Filtered()).To(BeZero())
	})

	It("filters at the receivers what the hub brings to everyone", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		// Page 3 is mapped at adapters 1 and 2 only; the bus brings
		// adapter 0's writes to 1, 2 and 3, and 3 drops them.
		st, sh := mcStar(e, mchub.MC1().WithPorts(4), []fabric.MCPageMap{{Page: 3, Receivers: []int{1, 2}}},
			traffic.Fixed(16), []float64{0.1, 0, 0, 0}, nil, 4000)
		Expect(runMC(e, sh)).To(Succeed())
		pcs := sh.Ports()
		Expect(pcs[0].Writes).To(BeNumerically(">", 50))
		Expect(pcs[1].Received).To(Equal(pcs[0].Writes))
		Expect(pcs[2].Received).To(Equal(pcs[0].Writes))
		Expect(pcs[3].Received).To(BeZero())
		Expect(pcs[3].Filtered).To(Equal(pcs[0].Writes))
		Expect(sh.Filtered()).To(Equal(pcs[0].Writes))
		Expect(st.Hub.Stats(3).OutPackets).To(Equal(pcs[0].Writes))
	})

	It("gives the same trace for the same seed and another for another seed", func() {
		run := func(seed uint64) []trace.Record {
			rec := trace.NewRecorder()
			e := env.New(env.Options{Trace: rec, Seed: seed})
			_, sh := mcStar(e, mchub.MC1().WithPorts(4), fabric.MCBroadcastPages(3, 4, false), mcSizes("8,64"),
				[]float64{0.1, 0.1, 0.1, 0.1}, nil, 1500)
			Expect(runMC(e, sh)).To(Succeed())
			return rec.Records()
		}
		a := run(3)
		Expect(len(a)).To(BeNumerically(">", 200))
		Expect(trace.Diff(a, run(3))).To(BeNil())
		Expect(trace.Diff(a, run(4))).NotTo(BeNil())
	})

	It("rejects a page map it cannot honour", func() {
		e := env.New(env.Options{})
		_, err := fabric.NewMCShared(e, "MC", 4, []fabric.MCPageMap{{Page: 1}, {Page: 1}}, nil)
		Expect(err).To(MatchError(ContainSubstring("page 1 is mapped twice")))
		_, err = fabric.NewMCShared(e, "MC", 4, []fabric.MCPageMap{{Page: 2, Receivers: []int{4}}}, nil)
		Expect(err).To(MatchError(ContainSubstring("receiver 4 is not in 0..3")))
	})

	DescribeTable("rejects endpoints it cannot build, naming the problem",
		func(mod func(fabric.MCEndpointBuilder, *mchub.Star) fabric.MCEndpointBuilder, msg string) {
			e := env.New(env.Options{})
			st, err := mchub.MakeStarBuilder().WithEnv(e).WithHub(mchub.MC1().WithPorts(4)).Build("MC")
			Expect(err).NotTo(HaveOccurred())
			// Page 0 is mapped only at adapter 0, page 1 everywhere.
			sh, err := fabric.NewMCShared(e, "MC", 4, []fabric.MCPageMap{{Page: 0, Receivers: []int{0}}, {Page: 1, Receivers: []int{0, 1, 2, 3}}}, nil)
			Expect(err).NotTo(HaveOccurred())
			b := fabric.MakeMCEndpointBuilder().WithEnv(e).WithStar(st, 0).WithShared(sh).WithTraffic(0.1, traffic.Fixed(64))
			_, err = mod(b, st).Build("Adapter")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("no env", func(b fabric.MCEndpointBuilder, _ *mchub.Star) fabric.MCEndpointBuilder { return b.WithEnv(nil) }, "no env"),
		Entry("no star", func(b fabric.MCEndpointBuilder, _ *mchub.Star) fabric.MCEndpointBuilder { return b.WithStar(nil, 1) }, "no star port 1"),
		Entry("port out of range", func(b fabric.MCEndpointBuilder, st *mchub.Star) fabric.MCEndpointBuilder { return b.WithStar(st, 7) }, "no star port 7"),
		Entry("no shared state", func(b fabric.MCEndpointBuilder, _ *mchub.Star) fabric.MCEndpointBuilder { return b.WithShared(nil) }, "no shared"),
		Entry("rate above 1", func(b fabric.MCEndpointBuilder, _ *mchub.Star) fabric.MCEndpointBuilder {
			return b.WithTraffic(1.2, traffic.Fixed(64))
		}, "rate 1.2"),
		Entry("writes larger than a page", func(b fabric.MCEndpointBuilder, _ *mchub.Star) fabric.MCEndpointBuilder {
			return b.WithTraffic(0.1, traffic.Fixed(mchub.PageSize+1))
		}, "do not fit a page"),
		Entry("nobody to write to", func(b fabric.MCEndpointBuilder, _ *mchub.Star) fabric.MCEndpointBuilder {
			e := env.New(env.Options{})
			st, _ := mchub.MakeStarBuilder().WithEnv(e).WithHub(mchub.MC1().WithPorts(2)).Build("MC")
			sh, _ := fabric.NewMCShared(e, "MC", 2, []fabric.MCPageMap{{Page: 0, Receivers: []int{0}}}, nil)
			return b.WithEnv(e).WithStar(st, 0).WithShared(sh)
		}, "no page reaches an adapter other than 0"),
	)
})
