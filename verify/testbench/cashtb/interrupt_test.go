package cashtb_test

import (
	"time"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/cashtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// runI runs prog under variant v on nodes x cpus with superpages of sp
// pages, requests interrupting (intr) or polled.
func runI(prog cashtb.Program, v string, nodes, cpus, sp int, intr bool, mut map[string]int) (cashtb.Result, *cashtb.Bench, error) {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), TimeLimit: 2 * clock.Second, Mutations: mut})
	c := cashtb.DefaultConfig()
	c.Nodes, c.CPUs, c.SuperpagePages, c.Variant, c.Interrupts = nodes, cpus, sp, v, intr
	b, err := cashtb.Build(e, c, prog)
	Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	res, err := b.Run()
	GinkgoWriter.Printf("%s %s intr=%v %dx%d: %v simulated, %v wall, %+v\n", prog.Name(), v, intr, nodes, cpus, res.Time, time.Since(start), res.Total)
	return res, b, err
}

var _ = Describe("Interrupts instead of polling (section 2.3)", func() {
	It("runs the stencil bit-exact on 2x2 and 4x2, with interrupts counted", func() {
		st := stencil{Rows: 34, Cols: 64, Iters: 1}
		one, err := run(st, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, nc := range [][2]int{{2, 2}, {4, 2}} {
			res, _, err := runI(st, cashmere.Variant2L, nc[0], nc[1], 1, true, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Memory).To(Equal(one.Memory))
			Expect(res.Total.PageTransfers).To(BeNumerically(">", 0))
			// Every page transfer is a request served by an interrupt
			// (several requests may share one, merged).
			Expect(res.Total.Interrupts).To(BeNumerically(">", 0))
			Expect(res.Total.Served).To(Equal(res.Total.PageTransfers))
		}
	})
	It("merges a fetch into a page with a local writer through the twin (twoway), bit-exact", func() {
		one, err := run(twoway{}, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, _, err := runI(twoway{}, cashmere.Variant2L, 2, 2, 1, true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.IncomingDiffs).To(BeNumerically(">", 0))
		Expect(res.Total.Interrupts).To(BeNumerically(">", 0))
	})
	It("breaks an exclusive page by an interrupt of its holder, bit-exact", func() {
		one, err := runSP(private{}, 1, 1, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		res, _, err := runI(private{}, cashmere.Variant2L, 2, 2, 2, true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Stats[0].Exclusive).To(Equal(1))
		Expect(res.Total.Breaks).To(Equal(1))
		Expect(res.Total.Interrupts).To(BeNumerically(">", 0))
	})
	It("adds under random locks bit-exact on 2x2, 4x1 (seeds 1, 2) and 2x4, 3x2 (seed 3)", func() {
		for _, c := range []struct {
			r  random
			nc [][2]int
		}{
			{random{Seed: 1, Ops: 40, Pages: 3, L: 3, Phases: 2}, [][2]int{{2, 2}, {4, 1}}},
			{random{Seed: 2, Ops: 40, Pages: 3, L: 3, Phases: 2}, [][2]int{{2, 2}, {4, 1}}},
			{random{Seed: 3, Ops: 60, Pages: 2, L: 2, Phases: 3}, [][2]int{{2, 4}, {3, 2}}},
		} {
			one, err := run(c.r, 1, 1, nil)
			Expect(err).NotTo(HaveOccurred())
			for _, nc := range c.nc {
				res, _, err := runI(c.r, cashmere.Variant2L, nc[0], nc[1], 1, true, nil)
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Memory).To(Equal(one.Memory))
				Expect(res.Total.Interrupts).To(BeNumerically(">", 0))
			}
		}
	})
	It("runs 2LOffMC's explicit diffs by interrupts, bit-exact (stencil, 2x2)", func() {
		st := stencil{Rows: 34, Cols: 64, Iters: 1}
		one, err := run(st, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, _, err := runI(st, cashmere.Variant2LOffMC, 2, 2, 1, true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.Diffs).To(BeNumerically(">", 0))
	})
	It("runs the one-level variants by interrupts (1LD, 1L: a request processor per processor), stencil bit-exact on 2x2", func() {
		st := stencil{Rows: 34, Cols: 64, Iters: 1}
		one, err := run(st, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, v := range []string{cashmere.Variant1LD, cashmere.Variant1L} {
			res, _, err := runI(st, v, 2, 2, 1, true, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Memory).To(Equal(one.Memory))
			Expect(res.Total.Interrupts).To(BeNumerically(">", 0))
		}
	})
	It("leaves every figure unchanged when off: the same time and statistics as a bench without the option", func() {
		a, err := run(twoway{}, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		b, _, err := runI(twoway{}, cashmere.Variant2L, 2, 2, 1, false, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Time).To(Equal(a.Time))
		Expect(b.Stats).To(Equal(a.Stats))
		Expect(b.Total.Interrupts).To(BeZero())
	})
	It("cashmere.nointerrupt (no request interrupt raised) leaves a requester waiting: the run fails", func() {
		st := stencil{Rows: 34, Cols: 64, Iters: 1}
		_, _, err := runI(st, cashmere.Variant2L, 2, 1, 1, true, map[string]int{"cashmere.nointerrupt": 1})
		Expect(err).To(HaveOccurred())
	})
})

var _ = Describe("Interrupts: 2LS shootdown by inter-processor interrupt (section 3.3.4)", func() {
	It("shoots down by interrupt bit-exact; one processor's shootdown beside the paper's 142 µs", func() {
		one, err := run(twoway{}, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		_, bp, err := runI(twoway{}, cashmere.Variant2LS, 2, 2, 1, false, nil)
		Expect(err).NotTo(HaveOccurred())
		res, bi, err := runI(twoway{}, cashmere.Variant2LS, 2, 2, 1, true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.Shootdowns).To(BeNumerically(">", 0))
		Expect(res.Total.IncomingDiffs).To(BeZero())
		// The target (process 2) took the shootdown's interrupt.
		Expect(res.Stats[2].Interrupts).To(BeNumerically(">", 0))
		row("2LS shootdown of 1 processor, polling", bp.Procs[3].Times().Shootdown, 72)
		row("2LS shootdown of 1 processor, interrupt", bi.Procs[3].Times().Shootdown, 142)
		Expect(bi.Procs[3].Times().Shootdown).To(BeNumerically(">", 0))
	})
	It("adds under random locks bit-exact on 2x4 (seed 3) with shootdowns by interrupt", func() {
		r := random{Seed: 3, Ops: 60, Pages: 2, L: 2, Phases: 3}
		one, err := run(r, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		res, _, err := runI(r, cashmere.Variant2LS, 2, 4, 1, true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		Expect(res.Total.Shootdowns).To(BeNumerically(">", 0))
	})
})

// runAppI is runApp with the interrupts option.
func runAppI(prog cashapps.Program, nodes, cpus int, intr bool) (cashtb.Result, error) {
	GinkgoHelper()
	e := env.New(env.Options{Seed: vtest.Seed(), TimeLimit: 20 * clock.Second})
	c := cashtb.DefaultConfig()
	c.Nodes, c.CPUs, c.Interrupts = nodes, cpus, intr
	start := time.Now()
	res, err := cashtb.RunApp(e, c, prog)
	GinkgoWriter.Printf("%s intr=%v %dx%d: %v simulated, %v wall, %+v\n", prog.Name(), intr, nodes, cpus, res.Time, time.Since(start), res.Total)
	return res, err
}

var _ = Describe("Interrupts: the programs (host/cashapps)", func() {
	for _, a := range smallApps {
		if a.name != "sor" && a.name != "gauss" && a.name != "water" {
			continue
		}
		It("runs "+a.name+" on 4:2 with interrupts to RunSequential's memory bit for bit, checkers on", func() {
			prog, err := cashapps.Build(a.name, a.set)
			Expect(err).NotTo(HaveOccurred())
			want, err := cashapps.RunSequential(prog)
			Expect(err).NotTo(HaveOccurred())
			res, err := runAppI(prog, 2, 2, true)
			Expect(err).NotTo(HaveOccurred())
			Expect(firstDiff(res.Memory, want)).To(BeEmpty())
			Expect(res.Total.Interrupts).To(BeNumerically(">", 0))
		})
	}
})

// shoot is twoway's shootdown without its race: process 2 (node 1) writes
// page 0 at the barrier's exit, then computes (polling at its loop tops)
// for long enough that its write fault has long finished when process 3
// (node 1) reads the word process 1 (node 0) wrote and flagged: the fetch
// into a page with a local writer shoots process 2's mapping down (2LS)
// while process 2 is in its loop. In twoway the shootdown reached
// process 2 between its own write fault's end and its restarted store
// under interrupts, and waited for a second interrupt there.
// Process 1 waits 400,000 cycles (1.7 ms at 233 MHz): past process 2's
// write fault (under 1 ms with its fetch, twin and mprotect); process 2
// polls through 80 loop tops.
var shoot = twoway{Wait: 400000, Loops: 80}

var _ = Describe("Interrupts: figures (reported, not fitted)", func() {
	It("shoots one processor down by interrupt in its loop: beside section 3.3.4's 142 µs", func() {
		one, err := run(shoot, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		_, bp, err := runI(shoot, cashmere.Variant2LS, 2, 2, 1, false, nil)
		Expect(err).NotTo(HaveOccurred())
		res, bi, err := runI(shoot, cashmere.Variant2LS, 2, 2, 1, true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(one.Memory))
		row("2LS shootdown of 1 processor, polling", bp.Procs[3].Times().Shootdown, 72)
		row("2LS shootdown of 1 processor, interrupt", bi.Procs[3].Times().Shootdown, 142)
		Expect(res.Total.Shootdowns).To(Equal(1))
		Expect(res.Stats[2].Interrupts).To(BeNumerically(">", 0), "process 2 took the shootdown's interrupt")
	})

	It("measures a page transfer with the home interrupted instead of polled (2 nodes)", func() {
		var cp, ci cashtb.Costs
		_, _, err := runI(cashtb.CostProgram{Out: &cp}, cashmere.Variant2L, 2, 1, 1, false, nil)
		Expect(err).NotTo(HaveOccurred())
		res, _, err := runI(cashtb.CostProgram{Out: &ci}, cashmere.Variant2L, 2, 1, 1, true, nil)
		Expect(err).NotTo(HaveOccurred())
		row("page transfer (remote), polled home", cp.PageTransfer, 824)
		row("page transfer (remote), interrupted", ci.PageTransfer, 824)
		row("  of which the fetch, polled", cp.Fetch, 0)
		row("  of which the fetch, interrupted", ci.Fetch, 0)
		Expect(res.Total.Interrupts).To(BeNumerically(">", 0))
		Expect(ci.Fetch).To(BeNumerically("<", ci.PageTransfer))
	})

	// Section 3.1: «The overhead for polling ranges between 0% and 36%
	// compared to a single processor execution, depending on the
	// application.» On 1:1 no request ever arrives, so a run with
	// interrupts is the run without the polls, and the difference is
	// what Figure 3's loads cost.
	It("measures the polling overhead of every program at its CI size on 1:1 (paper: 0% to 36%)", func() {
		for _, name := range cashapps.Names() {
			prog, err := cashapps.Default(name)
			Expect(err).NotTo(HaveOccurred())
			want, err := cashapps.RunSequential(prog)
			Expect(err).NotTo(HaveOccurred())
			pol, err := runAppI(prog, 1, 1, false)
			Expect(err).NotTo(HaveOccurred())
			itr, err := runAppI(prog, 1, 1, true)
			Expect(err).NotTo(HaveOccurred())
			Expect(firstDiff(pol.Memory, want)).To(BeEmpty())
			Expect(firstDiff(itr.Memory, want)).To(BeEmpty())
			Expect(itr.Total.Interrupts).To(BeZero(), "no requests on one node")
			ov := 100 * (float64(pol.Time) - float64(itr.Time)) / float64(itr.Time)
			GinkgoWriter.Printf("polling overhead %-5s 1:1  polled %10.1f us  no polls %10.1f us  overhead %5.2f%%  (paper: 0-36%% by program)\n",
				name, float64(pol.Time)/float64(clock.Microsecond), float64(itr.Time)/float64(clock.Microsecond), ov)
			Expect(pol.Time).To(BeNumerically(">=", itr.Time))
		}
	})
})
