package cashtb_test

import (
	"strconv"
	"time"

	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/cashtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// run runs prog on nodes x cpus with mutations mut and returns the result
// and the run's error.
func run(prog cashtb.Program, nodes, cpus int, mut map[string]int) (cashtb.Result, error) {
	GinkgoHelper()
	return runSP(prog, nodes, cpus, 1, mut)
}

// runSP is run with sp pages per superpage.
func runSP(prog cashtb.Program, nodes, cpus, sp int, mut map[string]int) (cashtb.Result, error) {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), TimeLimit: 2 * clock.Second, Mutations: mut})
	c := cashtb.DefaultConfig()
	c.Nodes, c.CPUs, c.SuperpagePages = nodes, cpus, sp
	b, err := cashtb.Build(e, c, prog)
	Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	res, err := b.Run()
	GinkgoWriter.Printf("%s %dx%d: %v simulated, %v wall, %+v\n", prog.Name(), nodes, cpus, res.Time, time.Since(start), res.Total)
	return res, err
}

var _ = Describe("Barriers and page coherence (2L)", func() {
	st := stencil{Rows: 34, Cols: 64, Iters: 2}

	It("gives one process the plain-Go result", func() {
		res, err := run(st, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(st.reference()))
	})

	for _, nc := range [][2]int{{2, 2}, {4, 2}} {
		It("gives the one-process result bit for bit on "+itoa(nc[0])+"x"+itoa(nc[1])+", with transfers, twins, diffs and notices", func() {
			one, err := run(st, 1, 1, nil)
			Expect(err).NotTo(HaveOccurred())
			res, err := run(st, nc[0], nc[1], nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Memory).To(Equal(one.Memory))
			t := res.Total
			Expect([]int{t.PageTransfers, t.Twins, t.Diffs, t.WriteNotices}).To(HaveEach(BeNumerically(">", 0)))
		})
	}
})

func itoa(n int) string { return strconv.Itoa(n) }

var _ = Describe("Build", func() {
	It("refuses a bad configuration with a one-line error naming the field", func() {
		for _, x := range []struct {
			mod  func(c *cashtb.Config)
			prog cashtb.Program
			want string
		}{
			{func(c *cashtb.Config) { c.Nodes = 0 }, tail{}, "cashtb: Nodes 0 must be in 1..8"},
			{func(c *cashtb.Config) { c.Nodes = 9 }, tail{}, "cashtb: Nodes 9"},
			{func(c *cashtb.Config) { c.CPUs = 5 }, tail{}, "cashtb: CPUs 5 must be in 1..4"},
			{func(c *cashtb.Config) { c.SuperpagePages = 0 }, tail{}, "cashtb: SuperpagePages 0"},
			{func(c *cashtb.Config) { c.Cluster.RxBase = 1 }, tail{}, "mctb: RxBase 0x1"},
			{nil, sized(100), "program sized: SharedBytes 100 must be a positive multiple of 8192"},
		} {
			c := cashtb.DefaultConfig()
			if x.mod != nil {
				x.mod(&c)
			}
			_, err := cashtb.Build(vtest.NewEnv(vtest.Options{}), c, x.prog)
			Expect(err).To(MatchError(ContainSubstring(x.want)))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		}
	})
})

var _ = Describe("Determinism", func() {
	It("gives the same memory, statistics and time on two runs of the same seed", func() {
		st := stencil{Rows: 34, Cols: 64, Iters: 1}
		a, err := run(st, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		b, err := run(st, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Time).To(Equal(a.Time))
		Expect(b.Stats).To(Equal(a.Stats))
		Expect(b.Memory).To(Equal(a.Memory))
	})
})

var _ = Describe("Randomised data-race-free programs (2L)", func() {
	for _, seed := range []uint64{1, 2} {
		It("adds under random locks bit-exact against one process on 2x2 and 4x1, seed "+itoa(int(seed)), func() {
			r := random{Seed: seed, Ops: 40, Pages: 3, L: 3, Phases: 2}
			one, err := run(r, 1, 1, nil)
			Expect(err).NotTo(HaveOccurred())
			for _, nc := range [][2]int{{2, 2}, {4, 1}} {
				res, err := run(r, nc[0], nc[1], nil)
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Memory).To(Equal(one.Memory))
			}
		})
	}
})

var _ = Describe("Randomised data-race-free programs with several writers per node (2L)", func() {
	It("adds under random locks bit-exact against one process on 1x4, 2x4 and 3x2 (seed 3)", func() {
		// Found the diff checker's false alarm on an empty diff (another
		// local processor's flush-update had carried every change).
		r := random{Seed: 3, Ops: 60, Pages: 2, L: 2, Phases: 3}
		one, err := run(r, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, nc := range [][2]int{{1, 4}, {2, 4}, {3, 2}} {
			res, err := run(r, nc[0], nc[1], nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Memory).To(Equal(one.Memory))
		}
	})
})

var _ = Describe("The paper's 8 x 4 cluster", func() {
	// Since the memsys lost-upgrade fix its timing tripped cashmere.diff's
	// false alarm (docs/cashmere-validation.md defect 1) at 6.31 ms, its
	// memory equal to one process's; the checker now accepts a word the
	// hub has ordered for the home.
	It("runs the stencil on 32 processes bit-exact against one process", func() {
		st := stencil{Rows: 66, Cols: 64, Iters: 1}
		one, err := run(st, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := run(st, 8, 4, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.Barriers).To(Equal(32 * 4))
	})
})

var _ = Describe("Locks and flags (2L)", func() {
	It("keeps a lock-protected counter and histogram bit-exact against one process on 2x2", func() {
		c := counter{N: 12}
		one, err := run(c, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(le(one.Memory, 0)).To(Equal(uint64(12)))
		res, err := run(c, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory[:8*17]).To(Equal(one.Memory[:8*17]))
		t := res.Total
		Expect(t.LockAcquires).To(Equal(12))
		// The rounds alternate between the nodes: the home node's writes
		// reach the other node as write notices and invalidations, the
		// other node's as diffs.
		Expect([]int{t.PageTransfers, t.WriteNotices, t.Invalidations, t.Diffs}).To(HaveEach(BeNumerically(">", 0)))
	})

	It("passes blocks from producer to consumer through flags bit-exact against one process on 2x2", func() {
		q := pipeline{Stages: 3, Words: 64}
		one, err := run(q, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := run(q, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.FlagAcquires).To(Equal(6))
		Expect(res.Total.PageTransfers).To(BeNumerically(">", 0))
	})
})

func le(b []byte, off int) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[off+i])
	}
	return v
}

var _ = Describe("Two-way diffing (2L)", func() {
	It("merges a fetch into a page with a local writer through the twin (an incoming diff), bit-exact", func() {
		one, err := run(twoway{}, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := run(twoway{}, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.IncomingDiffs).To(BeNumerically(">", 0))
	})
})

var _ = Describe("Exclusive mode (2L)", func() {
	It("keeps a page only one node maps exclusive (no twin) and breaks it when the home reads it, bit-exact", func() {
		one, err := runSP(private{}, 1, 1, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := runSP(private{}, 2, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Stats[0].Exclusive).To(Equal(1))
		Expect(res.Stats[0].Twins).To(BeZero())
		Expect(res.Total.Breaks).To(Equal(1))
	})
})

var _ = Describe("Checkers against mutations", func() {
	st := stencil{Rows: 34, Cols: 64, Iters: 1}
	// fails runs prog on nodes x cpus with mutation m on and expects the
	// run to fail a checker named rule, or (rule "result") to differ from
	// one process's memory. A write notice from a non-home writer needs a
	// third node (the home gets none), hence 4x1 for the diff rules.
	fails := func(prog cashtb.Program, nodes, cpus int, m, rule string) {
		GinkgoHelper()
		one, err := run(prog, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := run(prog, nodes, cpus, map[string]int{m: 1})
		if rule == "result" {
			Expect(res.Memory).NotTo(Equal(one.Memory))
			return
		}
		Expect(err).To(MatchError(ContainSubstring("[" + rule + "]")))
	}
	It("reflush is clean without the mutation", func() {
		one, err := run(reflush{}, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := run(reflush{}, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.Diffs).To(BeNumerically(">=", 2))
	})
	It("tail is clean without the mutation", func() {
		one, err := run(tail{}, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := run(tail{}, 4, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.WriteNotices).To(Equal(2))
	})
	It("cashmere.diff catches a release that skips the MC flush after its diff", func() {
		fails(tail{}, 4, 1, "cashmere.skipflush", "cashmere.diff")
	})
	It("cashmere.diff catches write notices sent before the diff", func() {
		fails(st, 4, 1, "cashmere.noticesfirst", "cashmere.diff")
	})
	It("cashmere.twin catches a twin kept after the last local writer", func() {
		fails(st, 2, 2, "cashmere.keeptwin", "cashmere.twin")
	})
	It("cashmere.dir catches a node writing another node's directory word", func() {
		fails(st, 2, 2, "cashmere.dirother", "cashmere.dir")
	})
	It("cashmere.lock catches two holders of a lock", func() {
		fails(counter{N: 12}, 2, 2, "cashmere.lockalone", "cashmere.lock")
	})
	It("cashmere.copy catches an acquire that invalidates nothing", func() {
		fails(st, 2, 2, "cashmere.skipinvalidate", "cashmere.copy")
	})
	It("the sequential comparison catches a diff that skips the flush-update", func() {
		fails(reflush{}, 2, 2, "cashmere.skipflushupdate", "result")
	})
	It("the sequential comparison catches a fetch that skips the incoming diff", func() {
		fails(twoway{}, 2, 2, "cashmere.skipincoming", "result")
	})
})

// sized is an empty program of the given shared size.
type sized uint64

func (sized) Name() string            { return "sized" }
func (s sized) SharedBytes() uint64   { return uint64(s) }
func (sized) Locks() int              { return 0 }
func (sized) Flags() int              { return 0 }
func (sized) Run(p *cashmere.Process) {}
