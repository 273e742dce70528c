package cashscen_test

import (
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/cashscen"
)

var _ = Describe("waveform names", func() {
	for _, s := range cashscen.Scenarios() {
		It(s.Name+" declares every signal under the naming convention", func() {
			// The cost run in the scenario's env builds the cluster first;
			// a 1 ns run sees every signal and stops the report there.
			Expect(scenario.CheckWaveNames(s, GinkgoT().TempDir())).To(Succeed())
		})
	}
})

// rowsOf returns the report's rows by metric.
func rowsOf(rep *scenario.Report) map[string]scenario.Row {
	m := map[string]scenario.Row{}
	for _, r := range rep.Rows {
		m[strings.TrimSpace(r.Metric)] = r
	}
	return m
}

var _ = Describe("cashmere-report", func() {
	It("has a size key for every parameter host/cashapps's Build takes, and the keys' defaults are the CI sizes", func() {
		p := cashscen.ReportDefaults()
		var keys []string
		for _, k := range p.Keys() {
			keys = append(keys, k.Key)
		}
		for _, name := range cashapps.Names() {
			for _, k := range cashapps.Keys(name) {
				Expect(keys).To(ContainElement(name + "." + k))
			}
		}
		Expect(p.Validate()).To(Succeed())
	})

	It("reports the costs with the paper's values and a program's statistics, speedup and checks on a small run", func() {
		p := cashscen.ReportDefaults()
		Expect(scenario.Configure(p, "", []string{"app=water", "nodes=2", "cpus=1",
			"water.molecules=16", "water.steps=1", "water.groups=2"})).To(Succeed())
		rep, err := cashscen.RunReport(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		for _, c := range rep.Checks {
			Expect(c.OK).To(BeTrue(), c.Name+": "+c.Detail)
		}
		rows := rowsOf(rep)
		// Every Table 1 / section 3.1 row carries the paper's figure and
		// says validation; nothing is marked calibrated.
		for metric, paper := range map[string]string{
			"page transfer (remote), fault to data, 2 nodes":    "824 µs",
			"outgoing diff, full page, remote home":             "290-363 µs",
			"lock acquire, last holder on the other node":       "19 µs",
			"barrier, 2 processors on 2 nodes":                  "58 µs",
			"barrier, 32 processors (8 x 4)":                    "321 µs",
			"1LD page transfer (remote), 2 nodes":               "777 µs",
			"1LD page transfer (local), 1 node of 2":            "467 µs",
			"1LD lock acquire, last holder the other processor": "11 µs",
			"1LD barrier, 2 processors on 2 nodes":              "41 µs",
			"1LD outgoing diff, full page, remote home":         "290-363 µs",
			"1LD outgoing diff, full page, local home":          "340-561 µs",
			"directory update with the lock (2 x 2)":            "16 µs",
			"directory update without the lock":                 "5 µs",
			"incoming diff, full page (2 x 2)":                  "533-541 µs",
		} {
			Expect(rows).To(HaveKey(metric))
			Expect(rows[metric].Paper).To(Equal(paper), metric)
			Expect(rows[metric].Source).To(ContainSubstring("validation"), metric)
			Expect(rows[metric].Model).To(MatchRegexp(`µs \([+-]\d+\.\d%\)$`), metric)
		}
		// The two inputs are printed with the paper's figure and say so.
		for metric, paper := range map[string]string{"page fault on a resident page (2 x 2)": "72 µs", "mprotect": "55 µs"} {
			Expect(rows).To(HaveKey(metric))
			Expect(rows[metric].Paper).To(Equal(paper), metric)
			Expect(rows[metric].Source).To(ContainSubstring("derived from this figure"), metric)
		}
		// The twin is the one calibrated row (host/cashmere instrCopyWord
		// is fitted to it); every other row is validation.
		Expect(rows["twin of an 8 KB page"].Paper).To(Equal("199 µs"))
		Expect(rows["twin of an 8 KB page"].Source).To(ContainSubstring("calibrated"))
		for _, r := range rep.Rows {
			Expect(r.Calibrated).To(Equal(strings.TrimSpace(r.Metric) == "twin of an 8 KB page"), r.Metric)
		}
		// The program's rows: Table 3's 2L column beside the counts, no
		// error on a count; the speedup's paper value derived from Tables
		// 2 and 3 (1566.4 s / 65.3 s = 23.99).
		Expect(rows).To(HaveKey("water on 2:1, size"))
		Expect(rows["water on 2:1, size"].Model).To(Equal("16 molecules, 1 steps"))
		Expect(rows["lock/flag acquires"].Paper).To(Equal("3680"))
		Expect(rows["lock/flag acquires"].Model).NotTo(ContainSubstring("%"))
		Expect(rows["barriers"].Paper).To(Equal("36"))
		Expect(rows["speedup vs the model's 1:1"].Paper).To(Equal("24.0"))
		Expect(rows["speedup vs the model's 1:1"].Model).NotTo(ContainSubstring("%"), "not 32:4: no error")
		names := []string{}
		for _, m := range rep.Metrics {
			names = append(names, m.Name)
		}
		Expect(names).To(ContainElements("twin_us", "barrier32_us", "water_ms", "water_speedup", "water_transfers"))
		// Water's locks: 16 molecules, 2 groups, 1 step, at 2 processes.
		Expect(slices.IndexFunc(rep.Metrics, func(m scenario.Metric) bool { return m.Name == "water_transfers" && m.Value > 0 })).NotTo(Equal(-1))
	})

	DescribeTable("refuses a bad parameter with a one-line error naming its key",
		func(set, key string) {
			p := cashscen.ReportDefaults()
			err := scenario.Configure(p, "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(" " + key + ":")))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		},
		Entry("an unknown program", "app=barnes", "app"),
		Entry("procs needing more than 8 nodes of cpus=1", "procs=16", "procs"),
		Entry("a variant that is none", "variant=3L", "variant"),
		Entry("nine nodes", "nodes=9", "nodes"),
		Entry("five CPUs", "cpus=5", "cpus"),
		Entry("SOR with no interior row", "sor.rows=2", "sor.rows"),
		Entry("SOR with odd columns", "sor.cols=7", "sor.cols"),
		Entry("LU's order not a multiple of its block", "lu.n=100", "lu.n"),
		Entry("CLU's block zero", "clu.block=0", "clu.block"),
		Entry("Gauss's rows shorter than n+1", "gauss.row_words=10", "gauss.row_words"),
		Entry("Em3d's span beyond half the nodes", "em3d.span=5000", "em3d.span"),
		Entry("Water's groups not a divisor", "water.groups=3", "water.groups"),
		Entry("a size beyond its range", "sor.iters=100000", "sor.iters"),
		Entry("a size too large for the shared area", "sor.rows=20000", "sor.rows"),
		Entry("a word for a number", "em3d.iters=abc", "em3d.iters"),
	)

	It("refuses an unknown key, naming it", func() {
		err := scenario.Configure(cashscen.ReportDefaults(), "", []string{"sor.depth=3"})
		Expect(err).To(MatchError(ContainSubstring("sor.depth")))
		Expect(err.Error()).NotTo(ContainSubstring("\n"))
	})
})

var _ = Describe("cashmere-report's checks on a broken runtime", func() {
	// The report's program checks (no checker violation; memory equal to
	// RunSequential) must fail when the runtime is broken, and the
	// scenario's --mutation must reach the programs' runs (env of their
	// own). SOR 34 x 64 on 2:1, 2 iterations: the band-edge pages read
	// across the nodes every half-iteration; skipping the invalidation
	// at an acquire leaves a stale copy that the next half-iteration
	// reads (cashmere.copy at the end, and the memory differs). On 4:1
	// the unbroken run already trips cashmere.diff
	// (docs/cashmere-validation.md), so 2:1.
	for _, m := range []string{"cashmere.skipinvalidate"} {
		It("fails a check with "+m, func() {
			p := cashscen.ReportDefaults()
			Expect(scenario.Configure(p, "", []string{"app=sor", "nodes=2", "cpus=1", "costs=false", "speedup=false",
				"sor.rows=34", "sor.cols=64", "sor.iters=2"})).To(Succeed())
			rep, err := cashscen.RunReport(env.New(env.Options{Seed: 1}), p)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Failed()).To(BeFalse(), "the unbroken run passes")
			rep, err = cashscen.RunReport(env.New(env.Options{Seed: 1, Mutations: map[string]int{m: 1}}), p)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Failed()).To(BeTrue())
			var failed []string
			for _, c := range rep.Checks {
				if !c.OK {
					failed = append(failed, c.Name)
				}
			}
			Expect(failed).To(Equal([]string{"sor: no checker violation, every process finished", "sor: final memory equals RunSequential bit for bit"}))
		})
	}
})
