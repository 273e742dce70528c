package cashapps_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cashapps"
)

// firstDiff names the first word where got differs from want, or "".
func firstDiff(want, got []byte) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	for i := 0; i+8 <= len(want); i += 8 {
		w, g := binary.LittleEndian.Uint64(want[i:]), binary.LittleEndian.Uint64(got[i:])
		if w != g {
			return fmt.Sprintf("word %d (address %#x): %v, want %v", i/8, i, math.Float64frombits(g), math.Float64frombits(w))
		}
	}
	return ""
}

// syncCounts is what a program's structure implies at procs processes: the
// Stats fields the specs compare.
type syncCounts struct{ Barriers, LockAcquires, FlagAcquires int }

// gaussFlags is Gauss's flag acquires: at pivot k the processes other than
// its owner with a row below k, min(n-1-k, P-1); at x[j] those other than
// its owner with a row above j, min(j, P-1); P = min(procs, n).
func gaussFlags(n, procs int) int {
	P := min(procs, n)
	s := 0
	for m := 0; m < n; m++ {
		s += min(m, P-1)
	}
	return 2 * s
}

// waterLocks is Water's lock acquires a step: each process with a chunk
// [lo, hi) locks every group holding a molecule of [lo, hi-1+n/2] (mod n).
// At 32 processes, 512 molecules and 32 groups a chunk is a group and the
// range is it and the next 16: 17 x 32 = 544. At 1 process: all 32.
func waterLocks(n, groups, procs int) int {
	per, total := n/groups, 0
	for id := 0; id < procs; id++ {
		lo, hi := id*n/procs, (id+1)*n/procs // band's split when procs divides n
		if lo == hi {
			continue
		}
		seen := map[int]bool{}
		for j := lo; j < hi+n/2; j++ {
			seen[(j%n)/per] = true
		}
		total += len(seen)
	}
	return total
}

// prog is one program under test: its CI default, its expected counts, and
// the elements of work its code charges (at one process, the Compute total
// is elements x cost / 1000 exactly).
type progCase struct {
	prog     cashapps.Program
	counts   func(procs int) syncCounts
	elements int64
	milli    int64
}

func cases() []progCase {
	sor, err := cashapps.NewSOR(cashapps.DefaultSOR())
	Expect(err).NotTo(HaveOccurred())
	gauss, err := cashapps.NewGauss(cashapps.DefaultGauss())
	Expect(err).NotTo(HaveOccurred())
	lu, err := cashapps.NewLU(cashapps.DefaultLU())
	Expect(err).NotTo(HaveOccurred())
	clu, err := cashapps.NewLU(cashapps.DefaultCLU())
	Expect(err).NotTo(HaveOccurred())
	em3d, err := cashapps.NewEm3d(cashapps.DefaultEm3d())
	Expect(err).NotTo(HaveOccurred())
	water, err := cashapps.NewWater(cashapps.DefaultWater())
	Expect(err).NotTo(HaveOccurred())
	s, g, l, e, w := cashapps.DefaultSOR(), cashapps.DefaultGauss(), cashapps.DefaultLU(), cashapps.DefaultEm3d(), cashapps.DefaultWater()
	// Water's pairs: n(n-1)/2 a step
	waterPairs := int64(w.Molecules) * int64(w.Molecules-1) / 2 * int64(w.Steps)
	luElems := int64(l.N-1) * int64(l.N) * int64(2*l.N-1) / 6
	luBarriers := func(int) syncCounts { return syncCounts{Barriers: 2 + 2*l.N/l.Block} }
	return []progCase{
		{clu, luBarriers, luElems, cashapps.CLUMilli},
		{lu, luBarriers, luElems, cashapps.LUMilli},
		{gauss, func(procs int) syncCounts { return syncCounts{Barriers: 2, FlagAcquires: gaussFlags(g.N, procs)} },
			int64(g.N-1)*int64(g.N)*int64(g.N+1)/3 + int64(g.N)*int64(g.N-1)/2, cashapps.GaussMilli},
		{sor, func(int) syncCounts { return syncCounts{Barriers: 1 + 2*s.Iters} },
			int64(s.Rows-2) * int64(s.Cols-2) * int64(s.Iters), cashapps.SORMilli},
		{em3d, func(int) syncCounts { return syncCounts{Barriers: 1 + 2*e.Iters} },
			int64(e.Nodes) * int64(e.Iters), cashapps.Em3dMilli},
		{water, func(procs int) syncCounts {
			return syncCounts{Barriers: 1 + 3*w.Steps, LockAcquires: w.Steps * waterLocks(w.Molecules, w.Groups, procs)}
		}, waterPairs, cashapps.WaterMilli},
	}
}

var _ = Describe("the programs", func() {
	It("are the ones Default knows", func() {
		var names []string
		for _, c := range cases() {
			names = append(names, c.prog.Name())
			d, err := cashapps.Default(c.prog.Name())
			Expect(err).NotTo(HaveOccurred())
			Expect(d.SharedBytes()).To(Equal(c.prog.SharedBytes()))
		}
		Expect(names).To(Equal(cashapps.Names()))
		// Build with parameters: the defaults replaced, bad keys named
		p, err := cashapps.Build("sor", map[string]int{"rows": 16, "cols": 2048})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.SharedBytes()).To(Equal(uint64(2 * 16 * 1024 * 8))) // two arrays of 16 rows of 1024 words
		_, err = cashapps.Build("lu", map[string]int{"n": 100})
		Expect(err).To(MatchError("lu: n = 100: need a positive multiple of block = 16"))
		_, err = cashapps.Build("gauss", map[string]int{"rows": 3, "blocks": 2})
		Expect(err).To(MatchError(`cashapps: gauss: unknown parameter "blocks"; one of n, row_words`))
		_, err = cashapps.Build("em3d", map[string]int{"seed": -1})
		Expect(err).To(MatchError("em3d: seed = -1: need >= 0"))
		_, err = cashapps.Default("barnes")
		Expect(err).To(MatchError(`cashapps: app = "barnes": unknown; one of clu, lu, gauss, sor, em3d, water`))
	})

	for _, c := range cases() {
		c := c
		Describe(c.prog.Name(), func() {
			var ref []byte
			BeforeEach(func() {
				if ref == nil {
					var err error
					ref, err = cashapps.RunSequential(c.prog)
					Expect(err).NotTo(HaveOccurred())
				}
			})

			It("leaves the sequential memory bit for bit at 1, 2, 4, 8 and 32 processes, whatever the interleaving, with the synchronisation its structure implies", func() {
				for _, procs := range []int{1, 2, 4, 8, 32} {
					for seed := uint64(1); seed <= 3; seed++ {
						mem, st, err := cashapps.RunInterleaved(c.prog, procs, seed)
						Expect(err).NotTo(HaveOccurred(), "procs %d seed %d", procs, seed)
						Expect(firstDiff(ref, mem)).To(BeEmpty(), "procs %d seed %d", procs, seed)
						got := syncCounts{st.Barriers, st.LockAcquires, st.FlagAcquires}
						Expect(cmp.Diff(c.counts(procs), got)).To(BeEmpty(), "procs %d", procs)
					}
				}
			})

			It("computes: the final memory is not the initial one and holds no NaN", func() {
				// a program that did nothing would match its reference too
				nonzero, nan := 0, 0
				for i := 0; i+8 <= len(ref); i += 8 {
					w := binary.LittleEndian.Uint64(ref[i:])
					if w != 0 {
						nonzero++
					}
					if math.IsNaN(math.Float64frombits(w)) {
						nan++
					}
				}
				Expect(nonzero).To(BeNumerically(">", 100))
				Expect(nan).To(BeZero())
			})

			It("charges every element of work once at its derived cost", func() {
				_, st, err := cashapps.RunInterleaved(c.prog, 1, 1)
				Expect(err).NotTo(HaveOccurred())
				Expect(st.ComputeCycles).To(Equal(c.elements * c.milli / 1000))
				_, st32, err := cashapps.RunInterleaved(c.prog, 32, 1)
				Expect(err).NotTo(HaveOccurred())
				// each process carries under one cycle
				Expect(st32.ComputeCycles).To(BeNumerically("~", st.ComputeCycles, 32))
			})

			It("fits the cycle model's budget at its CI size: 10^5 to 10^6 words at 32 processes", func() {
				_, st, err := cashapps.RunInterleaved(c.prog, 32, 1)
				Expect(err).NotTo(HaveOccurred())
				words := st.LoadWords + st.StoreWords
				GinkgoWriter.Printf("%s: %d pages, %d words, %d steps\n", c.prog.Name(), c.prog.SharedBytes()/cashapps.PageBytes, words, st.Steps)
				Expect(words).To(And(BeNumerically(">=", 100_000), BeNumerically("<=", 1_000_000)))
			})
		})
	}

	It("run with more processes than rows, blocks, nodes or molecules: the idle ones only synchronise", func() {
		mk := func(p cashapps.Program, err error) cashapps.Program {
			Expect(err).NotTo(HaveOccurred())
			return p
		}
		for _, prog := range []cashapps.Program{
			mk(cashapps.NewSOR(cashapps.SORConfig{Rows: 5, Cols: 6, Iters: 2})),
			mk(cashapps.NewGauss(cashapps.GaussConfig{N: 3})),
			mk(cashapps.NewLU(cashapps.LUConfig{N: 8, Block: 4})),
			mk(cashapps.NewLU(cashapps.LUConfig{N: 8, Block: 4, Contiguous: true})),
			mk(cashapps.NewEm3d(cashapps.Em3dConfig{Nodes: 10, Degree: 2, Span: 2, Iters: 2, Seed: 3})),
			mk(cashapps.NewWater(cashapps.WaterConfig{Molecules: 6, Steps: 2, Groups: 3})),
		} {
			ref, err := cashapps.RunSequential(prog)
			Expect(err).NotTo(HaveOccurred())
			for _, procs := range []int{3, 7, 32} {
				mem, _, err := cashapps.RunInterleaved(prog, procs, uint64(procs))
				Expect(err).NotTo(HaveOccurred(), "%s procs %d", prog.Name(), procs)
				Expect(firstDiff(ref, mem)).To(BeEmpty(), "%s procs %d", prog.Name(), procs)
			}
		}
	})

	It("reaches the answer: Gauss's x solves A x = b", func() {
		g, err := cashapps.NewGauss(cashapps.GaussConfig{N: 16, RowWords: 17})
		Expect(err).NotTo(HaveOccurred())
		mem, _, err := cashapps.RunInterleaved(g, 4, 2)
		Expect(err).NotTo(HaveOccurred())
		// the same A and b as gauss.go's gaussInit (x after the rows, on the
		// next page)
		a := func(i, j int) float64 {
			switch {
			case j == 16:
				return float64((i*13)%29) - 14
			case i == j:
				return 32
			}
			return float64((i*7+j*11)%19)/19 - 0.5
		}
		for i := 0; i < 16; i++ {
			s := 0.0
			for j := 0; j < 16; j++ {
				s += a(i, j) * math.Float64frombits(word(mem, 1024+j))
			}
			Expect(s).To(BeNumerically("~", a(i, 16), 1e-9), "row %d", i)
		}
	})

	It("reaches the answer: LU's factors multiply back to A, both layouts", func() {
		const n, b = 8, 4
		for _, contiguous := range []bool{false, true} {
			l, err := cashapps.NewLU(cashapps.LUConfig{N: n, Block: b, Contiguous: contiguous})
			Expect(err).NotTo(HaveOccurred())
			mem, _, err := cashapps.RunInterleaved(l, 4, 5)
			Expect(err).NotTo(HaveOccurred())
			at := func(i, j int) float64 {
				if contiguous { // block (I, J) on page I + J x 2, column-major inside
					return math.Float64frombits(word(mem, (i/b+j/b*2)*1024+i%b+j%b*b))
				}
				return math.Float64frombits(word(mem, i+j*n))
			}
			// Crout: L is the lower triangle with the diagonal, U the
			// strict upper triangle with ones on the diagonal
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					s := 0.0
					for k := 0; k <= min(i, j); k++ {
						u := 1.0
						if k < j {
							u = at(k, j)
						}
						s += at(i, k) * u
					}
					want := float64((i*5+j*3)%23)/23 - 0.5
					if i == j {
						want = 2 * n
					}
					Expect(s).To(BeNumerically("~", want, 1e-12), "contiguous %v (%d, %d)", contiguous, i, j)
				}
			}
		}
	})

	It("counts Gauss's flags as worked out by hand at n = 4, 2 processes", func() {
		// rows 0, 2 on process 0, rows 1, 3 on process 1. Pivots: k = 0
		// (owner 0) process 1 waits; k = 1 (owner 1) process 0 (row 2);
		// k = 2 (owner 0) process 1 (row 3); k = 3 nobody: 3. Back: x[3]
		// (owner 1) process 0; x[2] (owner 0) process 1 (row 1); x[1]
		// (owner 1) process 0 (row 0); x[0] nobody: 3. Total 6.
		Expect(gaussFlags(4, 2)).To(Equal(6))
		g, err := cashapps.NewGauss(cashapps.GaussConfig{N: 4})
		Expect(err).NotTo(HaveOccurred())
		_, st, err := cashapps.RunInterleaved(g, 2, 9)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.FlagAcquires).To(Equal(6))
		// at the paper's size: 125,984 against Table 3's 129.82 K
		Expect(gaussFlags(2048, 32)).To(Equal(125984))
	})

	It("counts Water's locks as worked out by hand", func() {
		Expect(waterLocks(512, 32, 32)).To(Equal(544))
		Expect(waterLocks(512, 32, 1)).To(Equal(32))
		// 2 processes: chunks of 256 molecules = 16 groups, the range
		// [lo, lo+511] wraps over all 32
		Expect(waterLocks(512, 32, 2)).To(Equal(64))
		// the paper's 4096 molecules at 32 processes: 17 x 32 = 544 a
		// step, 3,808 over 7 steps against Table 3's 3.68 K (+3.5%)
		Expect(7 * waterLocks(4096, 32, 32)).To(Equal(3808))
	})

	It("derives each cost from Table 2 as its comment says", func() {
		// Table 2's seconds x 233 MHz x 1000 / elements at the paper's size
		const f = 233e6 * 1000
		n := 2048.0
		lu := (n - 1) * n * (2*n - 1) / 6
		derive := func(secs, elems float64) int64 { return int64(math.Round(secs * f / elems)) }
		Expect(cmp.Diff(
			[]int64{cashapps.SORMilli, cashapps.GaussMilli, cashapps.LUMilli, cashapps.CLUMilli, cashapps.Em3dMilli, cashapps.WaterMilli},
			[]int64{derive(162.2, 3072*4096*24), derive(970.8, (n-1)*n*(n+1)/3), derive(763.0, lu), derive(265.5, lu), derive(145.0, 64000*100),
				derive(1566.4, 4096*4095/2*7)},
		)).To(BeEmpty())
	})

	Describe("mutations: a program with a synchronisation left out", func() {
		It("SOR without the barrier after the black phase races at 2 processes and more, on every seed", func() {
			s, err := cashapps.NewSOR(cashapps.SORConfig{Rows: 16, Cols: 16, Iters: 3})
			Expect(err).NotTo(HaveOccurred())
			ref, err := cashapps.RunSequential(s)
			Expect(err).NotTo(HaveOccurred())
			s.DropBlackBarrier()
			// one process has nobody to race with: the same memory
			mem, err := cashapps.RunSequential(s)
			Expect(err).NotTo(HaveOccurred())
			Expect(firstDiff(ref, mem)).To(BeEmpty())
			for _, procs := range []int{2, 4} {
				for seed := uint64(1); seed <= 4; seed++ {
					_, _, err := cashapps.RunInterleaved(s, procs, seed)
					Expect(err).To(MatchError(MatchRegexp(`^sor: cashapps: data race on word \d+ \(address 0x[0-9a-f]+\): process \d+'s (read|write) and process \d+'s (read|write) are not ordered`)), "procs %d seed %d", procs, seed)
				}
			}
		})

		It("Water adding forces without the group locks races", func() {
			w, err := cashapps.NewWater(cashapps.WaterConfig{Molecules: 32, Steps: 1, Groups: 4})
			Expect(err).NotTo(HaveOccurred())
			w.SkipForceLocks()
			for seed := uint64(1); seed <= 4; seed++ {
				_, _, err := cashapps.RunInterleaved(w, 4, seed)
				Expect(err).To(MatchError(MatchRegexp(`^water: cashapps: data race on word \d+`)), "seed %d", seed)
			}
		})

		It("Gauss reading pivot rows without their flags races", func() {
			g, err := cashapps.NewGauss(cashapps.GaussConfig{N: 8})
			Expect(err).NotTo(HaveOccurred())
			g.SkipPivotWait()
			for seed := uint64(1); seed <= 4; seed++ {
				_, _, err := cashapps.RunInterleaved(g, 3, seed)
				Expect(err).To(MatchError(MatchRegexp(`^gauss: cashapps: data race on word \d+`)), "seed %d", seed)
			}
		})
	})

	DescribeTable("refuse bad sizes with a one-line error naming the parameter",
		func(mk func() error, want string) {
			Expect(mk()).To(MatchError(want))
		},
		Entry("sor rows", func() error { _, err := cashapps.NewSOR(cashapps.SORConfig{Rows: 2, Cols: 8, Iters: 1}); return err },
			"sor: rows = 2: need at least 3 (two boundary rows and one interior)"),
		Entry("sor cols", func() error { _, err := cashapps.NewSOR(cashapps.SORConfig{Rows: 8, Cols: 7, Iters: 1}); return err },
			"sor: cols = 7: need an even number of at least 4"),
		Entry("sor iters", func() error { _, err := cashapps.NewSOR(cashapps.SORConfig{Rows: 8, Cols: 8}); return err },
			"sor: iters = 0: need at least 1"),
		Entry("gauss n", func() error { _, err := cashapps.NewGauss(cashapps.GaussConfig{}); return err },
			"gauss: n = 0: need at least 1"),
		Entry("gauss row_words", func() error { _, err := cashapps.NewGauss(cashapps.GaussConfig{N: 8, RowWords: 8}); return err },
			"gauss: row_words = 8: need at least n+1 = 9"),
		Entry("lu block", func() error { _, err := cashapps.NewLU(cashapps.LUConfig{N: 8}); return err },
			"lu: block = 0: need at least 1"),
		Entry("lu n", func() error { _, err := cashapps.NewLU(cashapps.LUConfig{N: 10, Block: 4}); return err },
			"lu: n = 10: need a positive multiple of block = 4"),
		Entry("em3d nodes", func() error {
			_, err := cashapps.NewEm3d(cashapps.Em3dConfig{Nodes: 7, Degree: 1, Iters: 1})
			return err
		},
			"em3d: nodes = 7: need an even number of at least 2"),
		Entry("em3d degree", func() error { _, err := cashapps.NewEm3d(cashapps.Em3dConfig{Nodes: 8, Iters: 1}); return err },
			"em3d: degree = 0: need at least 1"),
		Entry("em3d span", func() error {
			_, err := cashapps.NewEm3d(cashapps.Em3dConfig{Nodes: 8, Degree: 1, Span: 4, Iters: 1})
			return err
		}, "em3d: span = 4: need 0 <= span < nodes/2 = 4"),
		Entry("water molecules", func() error {
			_, err := cashapps.NewWater(cashapps.WaterConfig{Molecules: 3, Steps: 1, Groups: 1})
			return err
		},
			"water: molecules = 3: need an even number of at least 2"),
		Entry("water steps", func() error { _, err := cashapps.NewWater(cashapps.WaterConfig{Molecules: 4, Groups: 1}); return err },
			"water: steps = 0: need at least 1"),
		Entry("water groups", func() error {
			_, err := cashapps.NewWater(cashapps.WaterConfig{Molecules: 4, Steps: 1, Groups: 3})
			return err
		},
			"water: groups = 3: need a positive divisor of molecules = 4"),
		Entry("em3d iters", func() error { _, err := cashapps.NewEm3d(cashapps.Em3dConfig{Nodes: 8, Degree: 1}); return err },
			"em3d: iters = 0: need at least 1"),
	)
})
