package traffic_test

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/nisim/nisim/switch/traffic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// newRand returns a fixed stream, so the statistical specs are
// deterministic; their bounds are nevertheless computed so that any other
// seed would fail them with a negligible probability.
func newRand() *rand.Rand { return rand.New(rand.NewPCG(20240601, 7)) }

// sigmas is the half-width of every per-bin bound in standard deviations:
// a binomial count leaves mean +- 6 sigma with probability about 2e-9 (normal
// approximation, good for the thousands of draws used here).
const sigmas = 6

// chiSquareBound is the chi-square value with dof degrees of freedom that a
// correct sampler exceeds with probability 1e-6 (Wilson-Hilferty
// approximation, z = 4.753 the standard normal's upper 1e-6 quantile).
func chiSquareBound(dof int) float64 {
	k := float64(dof)
	c := 2 / (9 * k)
	return k * math.Pow(1-c+4.753*math.Sqrt(c), 3)
}

// expectDistribution checks counts of draws (n in total) against the
// probabilities: bins of probability 0 must be empty, every other bin must
// be within sigmas binomial standard deviations of its mean, and the
// chi-square statistic over the non-empty bins must stay under its 1e-6
// critical value.
func expectDistribution(counts []int, probs []float64, n int) {
	GinkgoHelper()
	Expect(counts).To(HaveLen(len(probs)))
	sum := 0.0
	for _, p := range probs {
		sum += p
	}
	Expect(sum).To(BeNumerically("~", 1, 1e-12), "the expected probabilities must add up to 1")
	chi, dof := 0.0, -1
	for i, p := range probs {
		if p == 0 {
			Expect(counts[i]).To(BeZero(), "bin %d must never be drawn", i)
			continue
		}
		mean := float64(n) * p
		bound := sigmas * math.Sqrt(mean*(1-p))
		Expect(float64(counts[i])).To(BeNumerically("~", mean, bound), "bin %d: %d draws, expected %.1f +- %.1f", i, counts[i], mean, bound)
		d := float64(counts[i]) - mean
		chi += d * d / mean
		dof++
	}
	if dof > 0 {
		Expect(chi).To(BeNumerically("<", chiSquareBound(dof)), "chi-square %.2f with %d degrees of freedom", chi, dof)
	}
}

// destCounts draws n destinations of src under p.
func destCounts(p traffic.Pattern, nodes, src, n int) []int {
	r := newRand()
	counts := make([]int, nodes)
	for range n {
		d := p.Dest(src, r)
		ExpectWithOffset(1, d).To(And(BeNumerically(">=", 0), BeNumerically("<", nodes)))
		counts[d]++
	}
	return counts
}

func mustNew(name string, n int, o traffic.Options) traffic.Pattern {
	GinkgoHelper()
	p, err := traffic.New(name, n, o)
	Expect(err).NotTo(HaveOccurred())
	Expect(p.Name()).To(Equal(name))
	return p
}

const draws = 40_000

var _ = Describe("Destination patterns", func() {
	Describe("uniform", func() {
		It("never picks the source without SelfTraffic and is uniform over the others", func() {
			// 5 nodes, source 2: each of the 4 others with probability 1/4.
			counts := destCounts(mustNew("uniform", 5, traffic.Options{}), 5, 2, draws)
			expectDistribution(counts, []float64{0.25, 0.25, 0, 0.25, 0.25}, draws)
		})

		It("is uniform over the others for the first and the last source too", func() {
			p := mustNew("uniform", 4, traffic.Options{})
			expectDistribution(destCounts(p, 4, 0, draws), []float64{0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, draws)
			expectDistribution(destCounts(p, 4, 3, draws), []float64{1.0 / 3, 1.0 / 3, 1.0 / 3, 0}, draws)
		})

		It("includes the source with SelfTraffic", func() {
			// 5 nodes, source 2: every node with probability 1/5.
			counts := destCounts(mustNew("uniform", 5, traffic.Options{SelfTraffic: true}), 5, 2, draws)
			expectDistribution(counts, []float64{0.2, 0.2, 0.2, 0.2, 0.2}, draws)
		})

		It("always sends to the other node of a 2-node network", func() {
			p := mustNew("uniform", 2, traffic.Options{})
			r := newRand()
			for range 100 {
				Expect(p.Dest(0, r)).To(Equal(1))
				Expect(p.Dest(1, r)).To(Equal(0))
			}
		})

		It("is reproducible from the seed", func() {
			p := mustNew("uniform", 16, traffic.Options{})
			a, b := newRand(), newRand()
			for src := range 16 {
				Expect(p.Dest(src, a)).To(Equal(p.Dest(src, b)))
			}
		})
	})

	// Transpose sends node (x, y) = (i mod k, i / k) to (y, x) = y + k*x;
	// the diagonal x == y sends nothing (-1). On a 4x4 mesh, worked out by
	// hand:
	DescribeTable("transpose on a 4x4 mesh",
		func(src, dst int) {
			p := mustNew("transpose", 16, traffic.Options{K: 4})
			Expect(p.Dest(src, nil)).To(Equal(dst))
		},
		Entry("(0,0) is on the diagonal", 0, -1),
		Entry("(1,0) -> (0,1)", 1, 4),
		Entry("(2,0) -> (0,2)", 2, 8),
		Entry("(3,0) -> (0,3)", 3, 12),
		Entry("(0,1) -> (1,0)", 4, 1),
		Entry("(1,1) is on the diagonal", 5, -1),
		Entry("(2,1) -> (1,2)", 6, 9),
		Entry("(3,1) -> (1,3)", 7, 13),
		Entry("(0,2) -> (2,0)", 8, 2),
		Entry("(1,2) -> (2,1)", 9, 6),
		Entry("(2,2) is on the diagonal", 10, -1),
		Entry("(3,2) -> (2,3)", 11, 14),
		Entry("(0,3) -> (3,0)", 12, 3),
		Entry("(1,3) -> (3,1)", 13, 7),
		Entry("(2,3) -> (3,2)", 14, 11),
		Entry("(3,3) is on the diagonal", 15, -1),
	)

	DescribeTable("transpose is its own inverse off the diagonal",
		func(k int) {
			p := mustNew("transpose", k*k, traffic.Options{K: k})
			diagonal := 0
			for src := range k * k {
				d := p.Dest(src, nil)
				if d < 0 {
					diagonal++
					Expect(src%k).To(Equal(src/k), "only diagonal nodes send nothing")
					continue
				}
				Expect(d).NotTo(Equal(src))
				Expect(p.Dest(d, nil)).To(Equal(src))
			}
			Expect(diagonal).To(Equal(k))
		},
		Entry("2x2", 2), Entry("3x3", 3), Entry("5x5", 5),
	)

	// Bit-complement sends i to ~i over log2(n) bits, i.e. n-1-i.
	DescribeTable("bitcomp",
		func(n, src, dst int) {
			Expect(mustNew("bitcomp", n, traffic.Options{}).Dest(src, nil)).To(Equal(dst))
		},
		Entry("2 nodes: 0 -> 1", 2, 0, 1),
		Entry("2 nodes: 1 -> 0", 2, 1, 0),
		Entry("8 nodes: 000 -> 111", 8, 0, 7),
		Entry("8 nodes: 001 -> 110", 8, 1, 6),
		Entry("8 nodes: 011 -> 100", 8, 3, 4),
		Entry("8 nodes: 101 -> 010", 8, 5, 2),
		Entry("8 nodes: 111 -> 000", 8, 7, 0),
		Entry("16 nodes: 0101 -> 1010", 16, 5, 10),
		Entry("64 nodes: 000001 -> 111110", 64, 1, 62),
	)

	// Neighbor sends (x, y) to ((x+1) mod k, y).
	DescribeTable("neighbor",
		func(n, k, src, dst int) {
			Expect(mustNew("neighbor", n, traffic.Options{K: k}).Dest(src, nil)).To(Equal(dst))
		},
		Entry("4x4: (0,0) -> (1,0)", 16, 4, 0, 1),
		Entry("4x4: (3,0) wraps to (0,0)", 16, 4, 3, 0),
		Entry("4x4: (0,1) -> (1,1)", 16, 4, 4, 5),
		Entry("4x4: (3,1) wraps to (0,1)", 16, 4, 7, 4),
		Entry("4x4: (2,2) -> (3,2)", 16, 4, 10, 11),
		Entry("4x4: (3,3) wraps to (0,3)", 16, 4, 15, 12),
		Entry("4 columns, 2 rows: (3,1) wraps to (0,1)", 8, 4, 7, 4),
		Entry("3 columns, 2 rows: (2,0) wraps to (0,0)", 6, 3, 2, 0),
		Entry("3 columns, 2 rows: (2,1) wraps to (0,1)", 6, 3, 5, 3),
	)

	Describe("hotspot", func() {
		// Rule: with probability HotFraction the destination is one of the
		// hot nodes (each equally likely), otherwise it is uniform. A hot
		// pick equal to the source is not allowed without SelfTraffic and
		// falls back to the uniform choice.
		It("sends HotFraction of the packets to the hot nodes and the rest uniformly", func() {
			// 8 nodes, hot {2, 5}, fraction 1/2, source 0: a hot node gets
			// 1/2 * 1/2 + 1/2 * 1/7; every other node but 0 gets 1/2 * 1/7.
			p := mustNew("hotspot", 8, traffic.Options{Hotspots: []int{2, 5}, HotFraction: 0.5})
			u := 0.5 / 7
			expectDistribution(destCounts(p, 8, 0, draws), []float64{0, u, 0.25 + u, u, u, 0.25 + u, u, u}, draws)
		})

		It("falls back to uniform when a hot source picks itself", func() {
			// Source 2 is hot: it picks itself with probability 1/4 and then
			// draws uniformly instead, so the uniform share is 3/4 over the
			// 7 other nodes, and 5 gets 1/4 on top.
			p := mustNew("hotspot", 8, traffic.Options{Hotspots: []int{2, 5}, HotFraction: 0.5})
			u := 0.75 / 7
			expectDistribution(destCounts(p, 8, 2, draws), []float64{u, u, 0, u, u, 0.25 + u, u, u}, draws)
		})

		It("lets a hot source send to itself with SelfTraffic", func() {
			// Every node is a uniform choice (1/2 * 1/8); 2 and 5 get 1/4 more.
			p := mustNew("hotspot", 8, traffic.Options{Hotspots: []int{2, 5}, HotFraction: 0.5, SelfTraffic: true})
			u := 0.5 / 8
			expectDistribution(destCounts(p, 8, 2, draws), []float64{u, u, 0.25 + u, u, u, 0.25 + u, u, u}, draws)
		})

		It("sends everything to a single hot node at fraction 1", func() {
			p := mustNew("hotspot", 8, traffic.Options{Hotspots: []int{3}, HotFraction: 1})
			r := newRand()
			for src := range 8 {
				if src == 3 {
					continue
				}
				for range 50 {
					Expect(p.Dest(src, r)).To(Equal(3))
				}
			}
			// The hot node itself sends uniformly to the others.
			u := 1.0 / 7
			expectDistribution(destCounts(p, 8, 3, draws), []float64{u, u, u, 0, u, u, u, u}, draws)
		})

		It("keeps its own copy of the hot nodes", func() {
			hot := []int{6}
			p := mustNew("hotspot", 8, traffic.Options{Hotspots: hot, HotFraction: 1})
			hot[0] = 1
			Expect(p.Dest(0, newRand())).To(Equal(6))
		})
	})

	DescribeTable("rejects impossible options with a clear error",
		func(name string, n int, o traffic.Options, msg string) {
			p, err := traffic.New(name, n, o)
			Expect(p).To(BeNil())
			Expect(err).To(MatchError(msg))
		},
		Entry("a single node", "uniform", 1, traffic.Options{}, "traffic needs at least 2 nodes, got 1"),
		Entry("no nodes", "bitcomp", 0, traffic.Options{}, "traffic needs at least 2 nodes, got 0"),
		Entry("transpose on 8 nodes", "transpose", 8, traffic.Options{K: 2},
			"transpose needs a square K x K mesh, got 8 nodes and K=2"),
		Entry("transpose with K*K != n", "transpose", 16, traffic.Options{K: 3},
			"transpose needs a square K x K mesh, got 16 nodes and K=3"),
		Entry("transpose without K", "transpose", 16, traffic.Options{},
			"transpose needs a square K x K mesh, got 16 nodes and K=0"),
		Entry("bitcomp on 12 nodes", "bitcomp", 12, traffic.Options{}, "bitcomp needs a power-of-two node count, got 12"),
		Entry("bitcomp on 6 nodes", "bitcomp", 6, traffic.Options{}, "bitcomp needs a power-of-two node count, got 6"),
		Entry("hotspot without hot nodes", "hotspot", 8, traffic.Options{HotFraction: 0.5},
			"hotspot needs hot nodes and a fraction in (0,1], got [] and 0.5"),
		Entry("hotspot fraction 0", "hotspot", 8, traffic.Options{Hotspots: []int{1}},
			"hotspot needs hot nodes and a fraction in (0,1], got [1] and 0"),
		Entry("hotspot fraction above 1", "hotspot", 8, traffic.Options{Hotspots: []int{1}, HotFraction: 1.5},
			"hotspot needs hot nodes and a fraction in (0,1], got [1] and 1.5"),
		Entry("hotspot node past the end", "hotspot", 8, traffic.Options{Hotspots: []int{1, 8}, HotFraction: 0.5},
			"hotspot node 8 is not in 0..7"),
		Entry("negative hotspot node", "hotspot", 8, traffic.Options{Hotspots: []int{-1}, HotFraction: 0.5},
			"hotspot node -1 is not in 0..7"),
		Entry("neighbor with K not dividing n", "neighbor", 8, traffic.Options{K: 3},
			"neighbor needs the mesh radix K dividing 8 nodes, got K=3"),
		Entry("neighbor without K", "neighbor", 8, traffic.Options{},
			"neighbor needs the mesh radix K dividing 8 nodes, got K=0"),
		Entry("an unknown pattern", "tornado", 8, traffic.Options{},
			`unknown traffic pattern "tornado" (want uniform, transpose, bitcomp, hotspot or neighbor)`),
	)

	// A NaN fraction would pass a plain (0,1] check, since every comparison
	// with NaN is false, and the pattern would then never pick a hot node.
	It("rejects a NaN hotspot fraction", func() {
		_, err := traffic.New("hotspot", 8, traffic.Options{Hotspots: []int{1}, HotFraction: math.NaN()})
		Expect(err).To(HaveOccurred())
	})
})

var _ = Describe("Packet sizes", func() {
	DescribeTable("parses fixed sizes and size:weight mixes",
		func(s string, mean float64, maxSize int) {
			z, err := traffic.ParseSizes(s)
			Expect(err).NotTo(HaveOccurred())
			Expect(z.Mean()).To(BeNumerically("~", mean, 1e-12))
			Expect(z.Max()).To(Equal(maxSize))
		},
		Entry("a fixed size", "20", 20.0, 20),
		Entry("spaces around it", " 20 ", 20.0, 20),
		Entry("BookSim's bimodal 1:0.5,20:0.5: (1+20)/2", "1:0.5,20:0.5", 10.5, 20),
		Entry("weights are normalised: (1*1 + 4*3)/4", "1:1,4:3", 3.25, 4),
		Entry("sizes without weights weigh 1 each: (4+8)/2", "4,8", 6.0, 8),
		Entry("spaces and order do not matter: (8*2 + 1*2)/4", "8 : 2, 1 : 2", 4.5, 8),
		Entry("three sizes: 0.25*1 + 0.5*4 + 0.25*8", "1:1,4:2,8:1", 4.25, 8),
	)

	DescribeTable("rejects malformed size strings naming the bad part",
		func(s, msg string) {
			_, err := traffic.ParseSizes(s)
			Expect(err).To(MatchError(msg))
		},
		Entry("empty", "", `packet size "": want a positive number of flits`),
		Entry("zero", "0", `packet size "0": want a positive number of flits`),
		Entry("negative", "-3", `packet size "-3": want a positive number of flits`),
		Entry("not a number", "abc", `packet size "abc": want a positive number of flits`),
		Entry("a fraction of a flit", "2.5", `packet size "2.5": want a positive number of flits`),
		Entry("a trailing comma", "1:0.5,", `packet size "": want a positive number of flits`),
		Entry("a zero weight", "1:0,20:1", `packet size weight "0": want a positive number`),
		Entry("a negative weight", "1:-1", `packet size weight "-1": want a positive number`),
		Entry("a weight that is not a number", "1:x", `packet size weight "x": want a positive number`),
		Entry("two colons", "1:0.5:0.5", `packet size weight "0.5:0.5": want a positive number`),
	)

	// ParseFloat accepts "NaN" and "Inf"; with either, the cumulative
	// weights would become NaN (Inf/Inf), Mean NaN and Draw would always
	// fall through to the last size.
	DescribeTable("rejects non-finite weights",
		func(s string) {
			_, err := traffic.ParseSizes(s)
			Expect(err).To(HaveOccurred())
		},
		Entry("NaN", "1:NaN,20:1"),
		Entry("Inf", "1:Inf,20:1"),
	)

	It("Fixed has one size", func() {
		z := traffic.Fixed(7)
		Expect(z.Mean()).To(Equal(7.0))
		Expect(z.Max()).To(Equal(7))
		r := newRand()
		for range 20 {
			Expect(z.Draw(r)).To(Equal(7))
		}
	})

	It("draws a fixed size every time", func() {
		z, err := traffic.ParseSizes("20")
		Expect(err).NotTo(HaveOccurred())
		r := newRand()
		for range 100 {
			Expect(z.Draw(r)).To(Equal(20))
		}
	})

	DescribeTable("draws each size with its weight",
		func(s string, sizes []int, probs []float64) {
			z, err := traffic.ParseSizes(s)
			Expect(err).NotTo(HaveOccurred())
			r := newRand()
			counts := make([]int, len(sizes))
			for range draws {
				got := z.Draw(r)
				i := -1
				for j, sz := range sizes {
					if sz == got {
						i = j
					}
				}
				Expect(i).To(BeNumerically(">=", 0), "drew %d, not one of %v", got, sizes)
				counts[i]++
			}
			expectDistribution(counts, probs, draws)
		},
		Entry("1:0.5,20:0.5", "1:0.5,20:0.5", []int{1, 20}, []float64{0.5, 0.5}),
		Entry("1:1,4:2,8:1", "1:1,4:2,8:1", []int{1, 4, 8}, []float64{0.25, 0.5, 0.25}),
		Entry("1:9,2:1", "1:9,2:1", []int{1, 2}, []float64{0.9, 0.1}),
	)
})

var _ = Describe("Bernoulli injection", func() {
	bimodal := func() traffic.Sizes {
		z, err := traffic.ParseSizes("1:0.5,20:0.5")
		Expect(err).NotTo(HaveOccurred())
		return z
	}

	DescribeTable("a rate in flits/node/cycle gives a packet probability of rate / mean size",
		func(rate float64, sizes func() traffic.Sizes, p float64) {
			b, err := traffic.NewBernoulli(rate, sizes())
			Expect(err).NotTo(HaveOccurred())
			Expect(b.P()).To(BeNumerically("~", p, 1e-15))
		},
		Entry("0.5 flits of 4-flit packets: 1/8", 0.5, func() traffic.Sizes { return traffic.Fixed(4) }, 0.125),
		Entry("1 flit of 1-flit packets: every cycle", 1.0, func() traffic.Sizes { return traffic.Fixed(1) }, 1.0),
		Entry("0.21 flits of bimodal 1/20 packets (mean 10.5): 0.02", 0.21, bimodal, 0.02),
		Entry("rate 0: never", 0.0, bimodal, 0.0),
	)

	It("takes a rate in packets/node/cycle as the probability itself", func() {
		for _, rate := range []float64{0, 0.05, 0.5, 1} {
			b, err := traffic.NewBernoulliPackets(rate)
			Expect(err).NotTo(HaveOccurred())
			Expect(b.P()).To(Equal(rate))
		}
	})

	DescribeTable("rejects rates outside [0, 1]",
		func(mk func() (traffic.Bernoulli, error), msg string) {
			_, err := mk()
			Expect(err).To(MatchError(msg))
		},
		Entry("flits above 1", func() (traffic.Bernoulli, error) { return traffic.NewBernoulli(1.5, traffic.Fixed(4)) },
			"injection rate 1.5 flits/node/cycle must be in [0, 1]"),
		Entry("flits just above 1", func() (traffic.Bernoulli, error) { return traffic.NewBernoulli(1.0001, traffic.Fixed(1)) },
			"injection rate 1.0001 flits/node/cycle must be in [0, 1]"),
		Entry("negative flits", func() (traffic.Bernoulli, error) { return traffic.NewBernoulli(-0.1, traffic.Fixed(1)) },
			"injection rate -0.1 flits/node/cycle must be in [0, 1]"),
		Entry("packets above 1", func() (traffic.Bernoulli, error) { return traffic.NewBernoulliPackets(2) },
			"injection rate 2 packets/node/cycle must be in [0, 1]"),
		Entry("negative packets", func() (traffic.Bernoulli, error) { return traffic.NewBernoulliPackets(-1) },
			"injection rate -1 packets/node/cycle must be in [0, 1]"),
	)

	// A NaN rate would pass a plain [0, 1] check (comparisons with NaN are
	// false) and give P() = NaN; an empty Sizes{} (Mean 0) would give
	// P() = +Inf.
	DescribeTable("rejects rates and size distributions that give no probability",
		func(mk func() (traffic.Bernoulli, error)) {
			_, err := mk()
			Expect(err).To(HaveOccurred())
		},
		Entry("a NaN flit rate", func() (traffic.Bernoulli, error) { return traffic.NewBernoulli(math.NaN(), traffic.Fixed(1)) }),
		Entry("a NaN packet rate", func() (traffic.Bernoulli, error) { return traffic.NewBernoulliPackets(math.NaN()) }),
		Entry("an empty size distribution", func() (traffic.Bernoulli, error) { return traffic.NewBernoulli(0.5, traffic.Sizes{}) }),
	)

	DescribeTable("fires with probability P",
		func(p float64) {
			b, err := traffic.NewBernoulliPackets(p)
			Expect(err).NotTo(HaveOccurred())
			r := newRand()
			const trials = 100_000
			fired := 0
			for range trials {
				if b.Fire(r) {
					fired++
				}
			}
			expectDistribution([]int{fired, trials - fired}, []float64{p, 1 - p}, trials)
		},
		Entry("p = 0.01", 0.01),
		Entry("p = 0.125", 0.125),
		Entry("p = 0.5", 0.5),
		Entry("p = 0.9", 0.9),
	)

	It("never fires at rate 0 and always at probability 1", func() {
		never, err := traffic.NewBernoulli(0, traffic.Fixed(4))
		Expect(err).NotTo(HaveOccurred())
		always, err := traffic.NewBernoulli(1, traffic.Fixed(1))
		Expect(err).NotTo(HaveOccurred())
		r := newRand()
		for range 10_000 {
			Expect(never.Fire(r)).To(BeFalse())
			Expect(always.Fire(r)).To(BeTrue())
		}
	})

	It("offers the flit rate on average with a size mix", func() {
		// 0.21 flits/node/cycle of bimodal 1/20-flit packets: over 200000
		// cycles about 4200 packets (p = 0.02) of mean 10.5 flits.
		sizes := bimodal()
		b, err := traffic.NewBernoulli(0.21, sizes)
		Expect(err).NotTo(HaveOccurred())
		r := newRand()
		const cycles = 200_000
		packets := 0
		for range cycles {
			if b.Fire(r) {
				packets++
			}
		}
		expectDistribution([]int{packets, cycles - packets}, []float64{0.02, 0.98}, cycles)
	})
})

var _ = Describe("Traffic traces", func() {
	It("reads the documented format with comments and blank lines", func() {
		recs, err := traffic.ReadTraceFile("testdata/small.trace", 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(Equal([]traffic.Record{
			{Cycle: 0, Src: 0, Dst: 1, Size: 1},
			{Cycle: 5, Src: 1, Dst: 2, Size: 4},
			{Cycle: 5, Src: 3, Dst: 0, Size: 2},
			{Cycle: 12, Src: 2, Dst: 3, Size: 20},
		}))
	})

	It("accepts tabs, CRLF line ends, comments without a space and the largest size", func() {
		in := "# header\r\n\r\n   \r\n\t3\t0  1 1048576\r\n#4 0 1 1\r\n7 1 0 2#no space\r\n"
		recs, err := traffic.ReadTrace(strings.NewReader(in), 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(Equal([]traffic.Record{{Cycle: 3, Src: 0, Dst: 1, Size: 1 << 20}, {Cycle: 7, Src: 1, Dst: 0, Size: 2}}))
	})

	It("reads an empty or comment-only trace as no records", func() {
		for _, in := range []string{"", "\n\n", "# nothing\n# at all\n"} {
			recs, err := traffic.ReadTrace(strings.NewReader(in), 4)
			Expect(err).NotTo(HaveOccurred())
			Expect(recs).To(BeEmpty())
		}
	})

	DescribeTable("rejects malformed records naming the line",
		func(in, msg string) {
			recs, err := traffic.ReadTrace(strings.NewReader(in), 4)
			Expect(recs).To(BeNil())
			Expect(err).To(MatchError(msg))
		},
		Entry("too few fields", "0 0 1\n", "line 1: want <cycle> <source> <destination> <size>, got 3 fields"),
		Entry("too many fields, after a comment", "# c\n0 0 1 1 7\n",
			"line 2: want <cycle> <source> <destination> <size>, got 5 fields"),
		Entry("a letter, after a blank line", "0 0 1 1\n\n3 x 1 1\n", `line 3: field 2 "x" is not a non-negative integer`),
		Entry("a negative cycle", "-1 0 1 1\n", `line 1: field 1 "-1" is not a non-negative integer`),
		Entry("a fractional cycle", "1.5 0 1 1\n", `line 1: field 1 "1.5" is not a non-negative integer`),
		Entry("a number past 64 bits", "0 0 1 99999999999999999999\n",
			`line 1: field 4 "99999999999999999999" is not a non-negative integer`),
		Entry("a decreasing cycle", "5 0 1 1\n5 1 0 1\n4 1 0 1\n", "line 3: cycle 4 is before the previous record's 5"),
		Entry("a source out of range", "0 4 1 1\n", "line 1: nodes must be in 0..3"),
		Entry("a destination out of range", "0 0 1 1\n1 0 9 1\n", "line 2: nodes must be in 0..3"),
		Entry("a size of 0", "0 0 1 0\n", "line 1: size 0 flits must be 1..1048576"),
		Entry("a size past 2^20", "0 0 1 1048577\n", "line 1: size 1048577 flits must be 1..1048576"),
	)

	It("names the file in its errors", func() {
		_, err := traffic.ReadTraceFile("testdata/bad_node.trace", 4)
		Expect(err).To(MatchError("testdata/bad_node.trace: line 3: nodes must be in 0..3"))
		_, err = traffic.ReadTraceFile("testdata/no_such.trace", 4)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("testdata/no_such.trace"))
	})
})

var _ = Describe("Bernoulli.Next", func() {
	It("draws geometric gaps: never for p = 0, every cycle for p = 1, mean (1-p)/p between successes", func() {
		r := newRand()
		never, err := traffic.NewBernoulliPackets(0)
		Expect(err).NotTo(HaveOccurred())
		Expect(never.Next(5, r)).To(Equal(uint64(math.MaxUint64)))
		always, err := traffic.NewBernoulliPackets(1)
		Expect(err).NotTo(HaveOccurred())
		Expect(always.Next(5, r)).To(Equal(uint64(5)))
		b, err := traffic.NewBernoulliPackets(0.2)
		Expect(err).NotTo(HaveOccurred())
		const n = 100_000
		c, sum := uint64(0), 0.0
		for range n {
			next := b.Next(c, r)
			Expect(next).To(BeNumerically(">=", c))
			sum += float64(next - c)
			c = next + 1
		}
		// Mean failures before a success: (1-p)/p = 4, standard deviation
		// sqrt(1-p)/p = 4.47 per draw, so 6 standard errors over n draws
		// is 0.085.
		Expect(sum / n).To(BeNumerically("~", 4.0, 0.085))
	})
})
