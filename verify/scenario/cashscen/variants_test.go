package cashscen_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/cashscen"
)

// checksByName is the report's checks by name.
func checksByName(rep *scenario.Report) map[string]bool {
	m := map[string]bool{}
	for _, c := range rep.Checks {
		m[c.Name] = c.OK
	}
	return m
}

// gaussRuns are Gauss's variant runs as the report measured them at n =
// 16 on 8:4 (2 x 4), before the copy-rate calibration (instrCopyWord):
// transfers, twins and times of `nisim run
// cashmere-report --set app=gauss --set gauss.n=16 --set variants=true`,
// with 168 flag acquires and 24 barrier arrivals everywhere.
func gaussRuns() cashscen.VarResults {
	run := func(transfers, twins int, ms float64) cashscen.VarRun {
		return cashscen.VarRun{Total: cashmere.Stats{PageTransfers: transfers, Twins: twins, FlagAcquires: 168, Barriers: 24},
			Time: clock.Time(ms * float64(clock.Millisecond)), OK: true}
	}
	return cashscen.VarResults{"gauss": {
		cashmere.Variant2L: run(16, 8, 15.965), cashmere.Variant2LS: run(16, 8, 15.939), cashmere.Variant1LD: run(161, 14, 53.229),
		cashmere.Variant2LOffMC: run(16, 8, 16.5), cashmere.Variant1L: run(161, 0, 60.0)}}
}

const (
	fewer  = "finding: 2L performs far fewer page transfers than 1LD on Gauss (at least 2x)"
	only2S = "finding: only 2LS shoots down: every other variant makes 0 shootdowns on every program"
	twins  = "finding: 1LD creates at least as many twins as 2L on every program, and more in all"
	sync   = "finding: lock/flag acquires and barriers are the same under every variant"
	dense  = "finding: 1LD is faster than 1L on the dense programs"
)

var _ = Describe("cashmere-report's findings on the variants (section 3.3)", func() {
	It("passes on runs where the paper's statements hold, and says which findings it could not check", func() {
		rep := cashscen.CheckFindings(gaussRuns(), []string{"gauss"})
		got := checksByName(rep)
		for _, n := range []string{fewer, only2S, twins, sync, dense} {
			Expect(got).To(HaveKeyWithValue(n, true), n)
		}
		// Water's shootdowns and 2LMigr's twins: no Water run, no 2LMigr.
		var notChecked []string
		for _, r := range rep.Rows {
			if strings.HasPrefix(r.Metric, "finding not checked: ") {
				notChecked = append(notChecked, r.Metric)
			}
		}
		Expect(notChecked).To(HaveLen(2))
	})

	It("fails each finding on runs broken the way it rules out (the findings' mutation spec)", func() {
		swapped := gaussRuns()
		swapped["gauss"][cashmere.Variant2L], swapped["gauss"][cashmere.Variant1LD] = swapped["gauss"][cashmere.Variant1LD], swapped["gauss"][cashmere.Variant2L]
		got := checksByName(cashscen.CheckFindings(swapped, []string{"gauss"}))
		Expect(got[fewer]).To(BeFalse())
		Expect(got[twins]).To(BeFalse())

		shot := gaussRuns()
		r := shot["gauss"][cashmere.Variant2L]
		r.Total.Shootdowns = 1
		shot["gauss"][cashmere.Variant2L] = r
		Expect(checksByName(cashscen.CheckFindings(shot, []string{"gauss"}))[only2S]).To(BeFalse())

		extra := gaussRuns()
		r = extra["gauss"][cashmere.Variant1L]
		r.Total.Barriers++
		extra["gauss"][cashmere.Variant1L] = r
		Expect(checksByName(cashscen.CheckFindings(extra, []string{"gauss"}))[sync]).To(BeFalse())

		// No twins under either protocol: «more in all» is vacuous, the
		// per-program part still holds; one more under 2L breaks it.
		none := gaussRuns()
		for _, v := range []string{cashmere.Variant2L, cashmere.Variant1LD} {
			r := none["gauss"][v]
			r.Total.Twins = 0
			none["gauss"][v] = r
		}
		Expect(checksByName(cashscen.CheckFindings(none, []string{"gauss"}))[twins]).To(BeTrue())
		r = none["gauss"][cashmere.Variant2L]
		r.Total.Twins = 1
		none["gauss"][cashmere.Variant2L] = r
		Expect(checksByName(cashscen.CheckFindings(none, []string{"gauss"}))[twins]).To(BeFalse())

		slow := gaussRuns()
		r = slow["gauss"][cashmere.Variant1LD]
		r.Time = slow["gauss"][cashmere.Variant1L].Time + 1
		slow["gauss"][cashmere.Variant1LD] = r
		Expect(checksByName(cashscen.CheckFindings(slow, []string{"gauss"}))[dense]).To(BeFalse())
	})

	It("runs a program under every variant bit-exact and prints each variant's Table 3 column", func() {
		p := cashscen.ReportDefaults()
		Expect(scenario.Configure(p, "", []string{"app=sor", "nodes=2", "cpus=1", "costs=false", "speedup=false",
			"sor.rows=18", "sor.cols=64", "sor.iters=1", "variants=true", "variant_nodes=2", "variant_cpus=2"})).To(Succeed())
		rep, err := cashscen.RunReport(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		got := checksByName(rep)
		for _, v := range []string{"2L", "2LS", "1LD", "2LOffMC", "1L"} {
			Expect(got).To(HaveKeyWithValue("sor under "+v+" on 4:2: no checker violation, memory equals RunSequential", true), v)
		}
		rows := rowsOf(rep)
		Expect(rows["sor 1LD on 4:2: execution time"].Paper).To(Equal("6.60 s"))
		Expect(rows["sor 2LS: shootdowns"].Paper).To(Equal("0"))
		Expect(rows["sor 1L: twins"].Model).To(Equal("0"))
		// Every metric the run measured is declared (MetricLister), so a
		// sweep's --y over any of them is accepted before it runs.
		declared := map[string]bool{}
		for _, d := range p.Metrics() {
			declared[d.Name] = true
		}
		for _, m := range rep.Metrics {
			Expect(declared).To(HaveKey(m.Name))
		}
		Expect(rep.Metrics).To(ContainElement(HaveField("Name", "sor_1ld_transfers")))
	})

	It("refuses a variant configuration 1LD cannot run, naming the key", func() {
		for _, c := range []struct {
			sets []string
			key  string
		}{
			{[]string{"variants=true", "variant_nodes=4", "variant_cpus=4"}, "variant_cpus"},
			{[]string{"variant=1LD", "nodes=8", "cpus=4"}, "variant"},
			{[]string{"procs=8", "cpus=3"}, "procs"},
		} {
			Expect(scenario.Configure(cashscen.ReportDefaults(), "", c.sets)).To(MatchError(ContainSubstring("invalid parameter "+c.key+":")), c.key)
		}
	})
})
