package stats_test

import (
	"bytes"
	"math/rand/v2"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nisim/nisim/switch/stats"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// packetDist returns the packet latency summary of a run in which one
// measured packet per latency was created at cycle 0 and delivered that many
// cycles later.
func packetDist(lat ...uint64) stats.Dist {
	c := stats.New(1, stats.Window{Measure: 1000})
	for _, l := range lat {
		Expect(c.Created(0, 1)).To(BeTrue())
		c.Delivered(stats.Packet{Flits: 1, Delivered: l})
	}
	return c.Result().Packet
}

// seq returns lo..hi in a shuffled order (the summary must sort).
func seq(lo, hi uint64) []uint64 {
	var v []uint64
	for x := lo; x <= hi; x++ {
		v = append(v, x)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(v), func(i, j int) { v[i], v[j] = v[j], v[i] })
	return v
}

func repeat(x uint64, n int) []uint64 {
	v := make([]uint64, n)
	for i := range v {
		v[i] = x
	}
	return v
}

var approx = cmpopts.EquateApprox(0, 1e-12)

var _ = Describe("Collector", func() {
	Describe("phases", func() {
		w := stats.Window{Warmup: 100, Measure: 200, DrainLimit: 50}

		It("runs warm-up, measurement, then is done at once when nothing is outstanding", func() {
			c := stats.New(4, w)
			Expect(c.PhaseAt(0)).To(Equal(stats.Warmup))
			Expect(c.PhaseAt(99)).To(Equal(stats.Warmup))
			Expect(c.PhaseAt(100)).To(Equal(stats.Measure))
			Expect(c.PhaseAt(299)).To(Equal(stats.Measure))
			Expect(c.PhaseAt(300)).To(Equal(stats.Done))
		})

		It("drains while measured packets are outstanding, up to the drain limit", func() {
			c := stats.New(4, w)
			Expect(c.Created(150, 1)).To(BeTrue())
			Expect(c.PhaseAt(299)).To(Equal(stats.Measure))
			Expect(c.PhaseAt(300)).To(Equal(stats.Drain))
			Expect(c.PhaseAt(349)).To(Equal(stats.Drain)) // 300 + 50 - 1
			Expect(c.PhaseAt(350)).To(Equal(stats.Done))  // the drain limit
			Expect(c.PhaseAt(1_000_000)).To(Equal(stats.Done))
			c.Delivered(stats.Packet{Created: 150, Injected: 150, Delivered: 310, Flits: 1})
			Expect(c.PhaseAt(320)).To(Equal(stats.Done))
		})

		It("drains without a limit when DrainLimit is 0", func() {
			c := stats.New(4, stats.Window{Warmup: 100, Measure: 200})
			c.Created(100, 1)
			Expect(c.PhaseAt(1_000_000_000)).To(Equal(stats.Drain))
		})

		It("measures from cycle 0 without a warm-up", func() {
			c := stats.New(4, stats.Window{Measure: 10})
			Expect(c.PhaseAt(0)).To(Equal(stats.Measure))
			Expect(c.Measured(0)).To(BeTrue())
			Expect(c.Measured(10)).To(BeFalse())
		})
	})

	Describe("measured packets", func() {
		It("are those created in [warm-up, warm-up + measure)", func() {
			c := stats.New(4, stats.Window{Warmup: 100, Measure: 200, DrainLimit: 50})
			for _, tc := range []struct {
				cycle    uint64
				measured bool
			}{{0, false}, {99, false}, {100, true}, {299, true}, {300, false}, {349, false}} {
				Expect(c.Measured(tc.cycle)).To(Equal(tc.measured), "created at %d", tc.cycle)
				Expect(c.Created(tc.cycle, 3)).To(Equal(tc.measured), "created at %d", tc.cycle)
			}
			Expect(c.Outstanding()).To(Equal(2))
		})

		It("count as outstanding until delivered; other deliveries do not change the count", func() {
			c := stats.New(2, stats.Window{Warmup: 10, Measure: 10})
			c.Created(5, 1)  // warm-up
			c.Created(12, 1) // measured
			c.Created(15, 2) // measured
			Expect(c.Outstanding()).To(Equal(2))
			c.Delivered(stats.Packet{Created: 5, Injected: 5, Delivered: 14, Flits: 1})
			Expect(c.Outstanding()).To(Equal(2))
			c.Delivered(stats.Packet{Created: 12, Injected: 13, Delivered: 16, Flits: 1})
			Expect(c.Outstanding()).To(Equal(1))
			c.Delivered(stats.Packet{Created: 15, Injected: 16, Delivered: 25, Flits: 2})
			Expect(c.Outstanding()).To(BeZero())
			Expect(c.Result().Packet.N).To(Equal(2))
		})
	})

	// A run worked out by hand on 4 nodes: warm-up 100 cycles, measurement
	// 200 (cycles 100..299), drain limit 50. Five measured packets P1..P5,
	// two warm-up packets W0 and W1 and one late packet L:
	//
	//	pkt flits created injected delivered hops  latency network
	//	W0   1     10      12        20       1     -       -
	//	W1   3     50      60       120       5     -       -
	//	P1   4    100     102       110       2    10       8
	//	P2   1    150     150       154       1     4       4
	//	P3   2    200     205       230       3    30      25
	//	P4   3    250     260       320       4    70      60
	//	P5   2    299     299       301       0     2       2
	//	L    1    300     300       305       7     -       -
	//
	// Packet latency, sorted: 2 4 10 30 70: mean 116/5 = 23.2, p50 is the
	// 3rd (ceil(0.5*5)), p99 the 5th (ceil(0.99*5)). Network latency: 2 4 8
	// 25 60, mean 99/5 = 19.8. Hops (2+1+3+4+0)/5 = 2.
	//
	// Flits (arrival, injection): W0 (20,12); W1 (118,60) (119,61) (120,62);
	// P1 (107,102) (108,103) (109,104) (110,105): 5 each; P2 (154,150): 4;
	// P3 (229,205) (230,206): 24 each; P4 (318,260) (319,261) (320,262): 58
	// each; P5 (300,299) (301,300): 1 each; L (305,300). Flit latency
	// (arrival minus injection, measured packets only), sorted: 1 1 4 5 5 5
	// 5 24 24 58 58 58: mean 248/12, p50 the 6th = 5, p99 the 12th = 58.
	//
	// Throughput over 4 nodes * 200 cycles = 800: offered = measured flits
	// (4+1+2+3+2 = 12) / 800 = 0.015; accepted = flits arriving in
	// 100..299, whichever packet they belong to (W1 3 + P1 4 + P2 1 + P3 2
	// = 10) / 800 = 0.0125; accepted packets = tails arriving in 100..299
	// (W1, P1, P2, P3) / 800 = 0.005. The last delivery is P4 at 320.
	Describe("a hand-made run", func() {
		var c *stats.Collector

		BeforeEach(func() {
			c = stats.New(4, stats.Window{Warmup: 100, Measure: 200, DrainLimit: 50})
			type pkt struct {
				p     stats.Packet
				flits [][2]uint64 // arrival, injection
			}
			pkts := []pkt{
				{stats.Packet{Flits: 1, Created: 10, Injected: 12, Delivered: 20, Hops: 1}, [][2]uint64{{20, 12}}},
				{stats.Packet{Flits: 3, Created: 50, Injected: 60, Delivered: 120, Hops: 5}, [][2]uint64{{118, 60}, {119, 61}, {120, 62}}},
				{stats.Packet{Flits: 4, Created: 100, Injected: 102, Delivered: 110, Hops: 2}, [][2]uint64{{107, 102}, {108, 103}, {109, 104}, {110, 105}}},
				{stats.Packet{Flits: 1, Created: 150, Injected: 150, Delivered: 154, Hops: 1}, [][2]uint64{{154, 150}}},
				{stats.Packet{Flits: 2, Created: 200, Injected: 205, Delivered: 230, Hops: 3}, [][2]uint64{{229, 205}, {230, 206}}},
				{stats.Packet{Flits: 3, Created: 250, Injected: 260, Delivered: 320, Hops: 4}, [][2]uint64{{318, 260}, {319, 261}, {320, 262}}},
				{stats.Packet{Flits: 2, Created: 299, Injected: 299, Delivered: 301, Hops: 0}, [][2]uint64{{300, 299}, {301, 300}}},
				{stats.Packet{Flits: 1, Created: 300, Injected: 300, Delivered: 305, Hops: 7}, [][2]uint64{{305, 300}}},
			}
			measured := 0
			for _, k := range pkts {
				if c.Created(k.p.Created, k.p.Flits) {
					measured++
				}
			}
			Expect(measured).To(Equal(5))
			Expect(c.Outstanding()).To(Equal(5))
			for _, k := range pkts {
				for _, f := range k.flits {
					c.FlitArrived(f[0], f[1], k.p.Created)
				}
				c.Delivered(k.p)
			}
		})

		It("summarises latency, hops and throughput", func() {
			want := stats.Result{
				Packet:          stats.Dist{N: 5, Mean: 23.2, Min: 2, Max: 70, P50: 10, P99: 70},
				Network:         stats.Dist{N: 5, Mean: 19.8, Min: 2, Max: 60, P50: 8, P99: 60},
				Flit:            stats.Dist{N: 12, Mean: 248.0 / 12, Min: 1, Max: 58, P50: 5, P99: 58},
				MeanHops:        2,
				Offered:         0.015,
				Accepted:        0.0125,
				AcceptedPackets: 0.005,
				LastDelivery:    320,
			}
			Expect(cmp.Diff(want, c.Result(), approx)).To(BeEmpty())
			Expect(c.Outstanding()).To(BeZero())
		})

		It("prints the figures", func() {
			var b bytes.Buffer
			c.Result().Print(&b)
			out := b.String()
			Expect(out).To(ContainSubstring("latency (cycles)"))
			// columns: n, mean, min, p50, p99, max
			Expect(out).To(MatchRegexp(`(?m)^packet\s+5\s+23\.20\s+2\s+10\s+70\s+70\s*$`))
			Expect(out).To(MatchRegexp(`(?m)^network\s+5\s+19\.80\s+2\s+8\s+60\s+60\s*$`))
			Expect(out).To(MatchRegexp(`(?m)^flit\s+12\s+20\.67\s+1\s+5\s+58\s+58\s*$`))
			Expect(out).To(ContainSubstring("hops 2.000, offered 0.0150 and accepted 0.0125 flits/node/cycle (0.00500 packets/node/cycle)"))
			Expect(out).NotTo(ContainSubstring("SATURATED"))
		})
	})

	It("reports the measured packets left at the drain limit as lost", func() {
		// 2 nodes, measurement 0..9, drain limit 5. Three measured 2-flit
		// packets; only the first arrives (latency 4).
		c := stats.New(2, stats.Window{Measure: 10, DrainLimit: 5})
		for cy := range uint64(3) {
			Expect(c.Created(cy, 2)).To(BeTrue())
		}
		c.Delivered(stats.Packet{Flits: 2, Created: 0, Injected: 0, Delivered: 4})
		Expect(c.PhaseAt(14)).To(Equal(stats.Drain))
		Expect(c.PhaseAt(15)).To(Equal(stats.Done))
		r := c.Result()
		Expect(r.Lost).To(Equal(2))
		Expect(r.Saturated).To(BeTrue())
		Expect(r.Packet.N).To(Equal(1))
		Expect(r.Offered).To(BeNumerically("~", 6.0/20, 1e-12)) // 3 packets * 2 flits / (2 nodes * 10 cycles)
		var b bytes.Buffer
		r.Print(&b)
		Expect(b.String()).To(HaveSuffix(", SATURATED: 2 measured packets not delivered\n"))
	})

	It("reports zeros, not NaN, for a run without packets", func() {
		c := stats.New(4, stats.Window{Warmup: 10})
		r := c.Result()
		Expect(r).To(Equal(stats.Result{}))
		var b bytes.Buffer
		r.Print(&b)
		Expect(b.String()).To(MatchRegexp(`(?m)^packet\s+0\s+0\.00\s+0\s+0\s+0\s+0\s*$`))
		Expect(b.String()).To(ContainSubstring("hops 0.000, offered 0.0000 and accepted 0.0000"))
		Expect(b.String()).NotTo(ContainSubstring("NaN"))
	})

	// Percentiles are nearest-rank: the p-th percentile of n sorted samples
	// is the ceil(p*n)-th of them (the smallest sample with at least p*n
	// samples at or below it), never an interpolation.
	DescribeTable("latency percentiles",
		func(lat []uint64, want stats.Dist) {
			Expect(cmp.Diff(want, packetDist(lat...), approx)).To(BeEmpty())
		},
		Entry("1 sample: every figure is that sample", []uint64{7},
			stats.Dist{N: 1, Mean: 7, Min: 7, Max: 7, P50: 7, P99: 7}),
		Entry("2 samples: p50 is the 1st, p99 the 2nd", []uint64{9, 3},
			stats.Dist{N: 2, Mean: 6, Min: 3, Max: 9, P50: 3, P99: 9}),
		Entry("3 samples: p50 the 2nd, p99 the 3rd", []uint64{3, 1, 2},
			stats.Dist{N: 3, Mean: 2, Min: 1, Max: 3, P50: 2, P99: 3}),
		Entry("4 samples: p50 the 2nd (20, not 25 interpolated)", []uint64{40, 10, 30, 20},
			stats.Dist{N: 4, Mean: 25, Min: 10, Max: 40, P50: 20, P99: 40}),
		Entry("100 samples 1..100: p50 the 50th, p99 the 99th", seq(1, 100),
			stats.Dist{N: 100, Mean: 50.5, Min: 1, Max: 100, P50: 50, P99: 99}),
		Entry("101 samples 1..101: p50 the 51st, p99 the 100th (ceil 99.99)", seq(1, 101),
			stats.Dist{N: 101, Mean: 51, Min: 1, Max: 101, P50: 51, P99: 100}),
		Entry("200 samples 1..200: p50 the 100th, p99 the 198th", seq(1, 200),
			stats.Dist{N: 200, Mean: 100.5, Min: 1, Max: 200, P50: 100, P99: 198}),
		Entry("100 samples, one outlier: p99 does not see it", append(repeat(1, 99), 1000),
			stats.Dist{N: 100, Mean: 10.99, Min: 1, Max: 1000, P50: 1, P99: 1}),
		Entry("100 samples, two outliers: p99 is an outlier", append(repeat(1, 98), 1000, 1000),
			stats.Dist{N: 100, Mean: 20.98, Min: 1, Max: 1000, P50: 1, P99: 1000}),
	)

	It("divides throughput by nodes and measurement cycles", func() {
		// 8 nodes, 50 measured cycles: 400 node-cycles. 20 packets of 5
		// flits created and all 100 flits arriving inside the window:
		// offered = accepted = 100/400, 20/400 packets.
		c := stats.New(8, stats.Window{Warmup: 10, Measure: 50})
		for i := range uint64(20) {
			Expect(c.Created(10+i, 5)).To(BeTrue())
			for f := range uint64(5) {
				c.FlitArrived(20+i+f, 11+i+f, 10+i)
			}
			c.Delivered(stats.Packet{Flits: 5, Created: 10 + i, Injected: 11 + i, Delivered: 24 + i, Hops: 3})
		}
		r := c.Result()
		Expect(r.Offered).To(BeNumerically("~", 0.25, 1e-12))
		Expect(r.Accepted).To(BeNumerically("~", 0.25, 1e-12))
		Expect(r.AcceptedPackets).To(BeNumerically("~", 0.05, 1e-12))
		Expect(r.MeanHops).To(Equal(3.0))
		Expect(r.Packet).To(Equal(stats.Dist{N: 20, Mean: 14, Min: 14, Max: 14, P50: 14, P99: 14}))
		Expect(r.Flit).To(Equal(stats.Dist{N: 100, Mean: 9, Min: 9, Max: 9, P50: 9, P99: 9}))
	})
})
