package stats_test

import (
	"bytes"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

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

// exactDist is the reference summary: every sample kept and sorted,
// nearest-rank percentiles (the collector's method before it kept counts).
func exactDist(v []uint64) stats.Dist {
	if len(v) == 0 {
		return stats.Dist{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += float64(x)
	}
	pct := func(p float64) uint64 {
		return s[max(0, min(int(math.Ceil(p*float64(len(s))))-1, len(s)-1))]
	}
	return stats.Dist{N: len(s), Mean: sum / float64(len(s)), Min: s[0], Max: s[len(s)-1], P50: pct(0.50), P99: pct(0.99)}
}

func histOf(v []uint64) stats.Dist {
	var h stats.Hist
	for _, x := range v {
		h.Add(x)
	}
	return h.Dist()
}

var _ = Describe("Hist", func() {
	It("is empty as its zero value", func() {
		var h stats.Hist
		Expect(h.N()).To(BeZero())
		Expect(h.Dist()).To(Equal(stats.Dist{}))
	})

	// Below 65,536 cycles every value has its own count: the summary is the
	// sorted list's, figure for figure (the mean too: the sums are integers,
	// exact in a float64).
	DescribeTable("is exact below 65,536 cycles",
		func(n int, draw func(r *rand.Rand) uint64) {
			r := rand.New(rand.NewPCG(7, uint64(n)))
			v := make([]uint64, n)
			for i := range v {
				v[i] = draw(r)
			}
			Expect(histOf(v)).To(Equal(exactDist(v)))
		},
		Entry("uniform 0..65535", 100_000, func(r *rand.Rand) uint64 { return r.Uint64N(65536) }),
		Entry("a mesh-like tail: 40 + exponential of mean 200, capped", 200_000,
			func(r *rand.Rand) uint64 { return min(40+uint64(r.ExpFloat64()*200), 65535) }),
		Entry("few distinct values", 10_001, func(r *rand.Rand) uint64 { return 45 + r.Uint64N(3) }),
		Entry("one sample at the cutoff's edge", 1, func(*rand.Rand) uint64 { return 65535 }),
	)

	// 65,536..131,071 has buckets of 2 cycles: {65536, 65537}, ...,
	// {70000, 70001}, ... A percentile is its bucket's lowest value, kept
	// within [Min, Max].
	It("reports a percentile above the cutoff as its 2-cycle bucket's lowest value", func() {
		// 65536 70001 70001: p50 is the 2nd (ceil 1.5), p99 the 3rd; both
		// fall in {70000, 70001}: 70000, one cycle under. Mean
		// (65536 + 2*70001)/3 = 205538/3.
		Expect(histOf([]uint64{70001, 65536, 70001})).To(Equal(
			stats.Dist{N: 3, Mean: 205538.0 / 3, Min: 65536, Max: 70001, P50: 70000, P99: 70000}))
		// One sample 65537: its bucket's lowest value 65536 is below Min,
		// so every figure is 65537.
		Expect(histOf([]uint64{65537})).To(Equal(
			stats.Dist{N: 1, Mean: 65537, Min: 65537, Max: 65537, P50: 65537, P99: 65537}))
	})

	It("reports a percentile at 2^20 as its 32-cycle bucket's lowest value", func() {
		// [2^20, 2^21) has buckets of 2^(20-15) = 32 cycles. 2^20+40 =
		// 1048616 is in [1048608, 1048639] (1048616/32 = 32769.25): p50 of
		// {0, 1048616, 1048616} (the 2nd) is 1048608, 8 cycles under.
		Expect(histOf([]uint64{0, 1048616, 1048616})).To(Equal(
			stats.Dist{N: 3, Mean: 2097232.0 / 3, Min: 0, Max: 1048616, P50: 1048608, P99: 1048608}))
	})

	// The bound: in [2^k, 2^(k+1)), k >= 16, a percentile is at most
	// 2^(k-15) - 1 cycles under the exact one, never over; 1 cycle below
	// 131,072. Count, min, max and mean stay exact (the mean is the integer
	// sum over the count).
	DescribeTable("keeps percentiles above the cutoff within its bound",
		func(lo, hi uint64) {
			r := rand.New(rand.NewPCG(11, lo))
			v := make([]uint64, 50_000)
			for i := range v {
				v[i] = lo + r.Uint64N(hi-lo)
			}
			want, got := exactDist(v), histOf(v)
			Expect(got.N).To(Equal(want.N))
			Expect(got.Min).To(Equal(want.Min))
			Expect(got.Max).To(Equal(want.Max))
			// The integer sum is exact; the reference's float sum rounds once
			// it passes 2^53 (the 2^40 entry: 50,000 samples near 2^39).
			var sum uint64
			for _, x := range v {
				sum += x
			}
			Expect(got.Mean).To(Equal(float64(sum) / float64(len(v))))
			for _, p := range [][2]uint64{{got.P50, want.P50}, {got.P99, want.P99}} {
				bound := uint64(1) << max(0, bits.Len64(p[1])-1-15) // 2^(k-15), 1 below 2^16
				Expect(p[0]).To(BeNumerically("<=", p[1]))
				Expect(p[1]-p[0]).To(BeNumerically("<", bound), "exact %d, got %d", p[1], p[0])
			}
		},
		Entry("65,536..131,071: within 1 cycle", uint64(65536), uint64(131072)),
		Entry("across the cutoff", uint64(60000), uint64(200000)),
		Entry("around 2^30", uint64(1)<<29, uint64(1)<<31),
		Entry("up to 2^40", uint64(0), uint64(1)<<40),
	)

	It("takes any uint64", func() {
		// The largest value is in the last bucket, [2^63 + (2^15-1)*2^48,
		// 2^64); its lowest value is under Min, so p50 and p99 are the
		// sample itself.
		var h stats.Hist
		h.Add(math.MaxUint64)
		Expect(h.Dist()).To(Equal(stats.Dist{N: 1, Mean: math.MaxUint64, Min: math.MaxUint64,
			Max: math.MaxUint64, P50: math.MaxUint64, P99: math.MaxUint64}))
	})

	It("holds its counts in constant space: adding samples in a range seen before allocates nothing", func() {
		var h stats.Hist
		for v := range uint64(4096) {
			h.Add(v) // allocates the one chunk of 0..4095
		}
		v := uint64(0)
		Expect(testing.AllocsPerRun(10_000, func() { h.Add(v % 4096); v += 7 })).To(BeZero())
		Expect(h.N()).To(Equal(4096 + 10_001)) // AllocsPerRun runs the function once more to warm up
	})
})
