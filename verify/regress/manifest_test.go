package regress_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/verify/jobs"
	"github.com/nisim/nisim/verify/regress"
	"github.com/nisim/nisim/verify/scenario"
)

// table is a summary as printed, with the job and wall times zeroed (the
// only figures that differ between two runs of the same jobs).
func table(s regress.Summary) string {
	s.Wall = 0
	s.Rows = slices.Clone(s.Rows)
	for i := range s.Rows {
		s.Rows[i].JobTime = 0
	}
	var b bytes.Buffer
	s.Print(&b)
	return b.String()
}

// verdict is what a job's result says, without its wall time.
type verdict struct {
	Name         string
	Transactions uint64
	Violations   int
	Failed       bool
	Reason       string
}

func verdicts(rs []regress.Result) []verdict {
	var out []verdict
	for _, r := range rs {
		out = append(out, verdict{r.Job.Name(), r.Transactions, r.Violations, r.Failed, r.Reason})
	}
	return out
}

// planned writes the tier of systems opts plans into a new plan directory
// and returns it with the jobs.
func planned(systems []*regress.System, opts regress.Options) (string, []*regress.Job) {
	list, err := regress.Plan(systems, opts)
	Expect(err).NotTo(HaveOccurred())
	m, err := regress.Manifest(list, opts)
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(GinkgoT().TempDir(), "plan")
	Expect(jobs.Write(dir, m)).To(Succeed())
	return dir, list
}

// runPlanned runs jobs of the plan in dir one by one, as `nisim job DIR
// --index I` does (reading the manifest back each time), in the order
// given.
func runPlanned(c scenario.Catalog, dir string, idx ...int) {
	for _, i := range idx {
		m, err := jobs.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		_, err = jobs.RunJob(c, dir, m, i)
		Expect(err).NotTo(HaveOccurred())
	}
}

var _ = Describe("the tier through a manifest", func() {
	It("merges a planned tier's results into the local run's table, failures and their repro lines included", func() {
		sys := []*regress.System{brokenSystem()}
		c := scenario.Catalog{broken()}
		opts := regress.Options{Scale: 0.001, Seed: 5}
		dir, list := planned(sys, opts)
		Expect(len(list)).To(BeNumerically(">=", 6))

		// The manifest is the job list: scenario, seed, sets, labels.
		m, err := jobs.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Kind).To(Equal(jobs.KindRegress))
		for i, j := range list {
			mj := m.Jobs[i]
			Expect(mj.Scenario).To(Equal(j.Scenario))
			Expect(mj.Seed).To(Equal(j.Seed))
			Expect(mj.Sets).To(Equal(j.Args()))
			sysName, _ := mj.Label(regress.LabelSystem)
			index, _ := mj.Label(regress.LabelIndex)
			Expect(sysName + "#" + index).To(Equal(j.Name()))
		}

		// Jobs run in any order, each from the directory alone.
		var idx []int
		for i := len(list) - 1; i >= 0; i-- {
			idx = append(idx, i)
		}
		runPlanned(c, dir, idx...)
		merged, got, missing, err := regress.Merge(sys, dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(missing).To(BeEmpty())
		Expect(got).To(Equal(regress.Options{Systems: []string{"broken"}, Scale: 0.001, Seed: 5}))

		local := regress.Summarize(regress.Run(c, list, 2, nil), opts.Scale)
		Expect(cmp.Diff(verdicts(local.Results), verdicts(merged.Results))).To(BeEmpty())
		Expect(merged.Failed()).To(BeTrue()) // a third of the broken jobs fail
		Expect(merged.Rows[0].Failed).To(BeNumerically(">", 0))
		Expect(cmp.Diff(table(local), table(merged))).To(BeEmpty())
		Expect(table(merged)).To(MatchRegexp(`(?m)^broken#\d+: checkers: .*\[broken.rule\] fault injected`))
	})

	It("gives a real tier's counts, the same merged as run locally", func() {
		opts := regress.Options{Systems: []string{"atm", "mchub"}, Scale: 0.0005, Seed: 2}
		dir, list := planned(regress.Systems(), opts)
		runPlanned(cat(), dir, 0, 1, 2, 3)
		merged, _, missing, err := regress.Merge(regress.Systems(), dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(missing).To(BeEmpty())
		local := regress.Summarize(regress.Run(cat(), list, 2, nil), opts.Scale)
		Expect(local.Failed()).To(BeFalse())
		Expect(cmp.Diff(verdicts(local.Results), verdicts(merged.Results))).To(BeEmpty())
		Expect(cmp.Diff(table(local), table(merged))).To(BeEmpty())
		for _, r := range merged.Rows {
			Expect(r.Transactions).To(BeNumerically(">=", r.Target), r.System.Name)
			Expect(r.JobTime).To(BeNumerically(">", 0), r.System.Name) // the jobs' own wall times, from their files
		}
	})

	It("counts a job without a result as missing and failed, naming its file", func() {
		sys := []*regress.System{brokenSystem()}
		dir, list := planned(sys, regress.Options{Scale: 0.0001, Seed: 1})
		Expect(list).To(HaveLen(2))
		runPlanned(scenario.Catalog{broken()}, dir, 1)
		sum, _, missing, err := regress.Merge(sys, dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(missing).To(Equal([]int{0}))
		Expect(sum.Results[0].Failed).To(BeTrue())
		Expect(sum.Results[0].Transactions).To(BeZero())
		Expect(sum.Results[0].Reason).To(Equal("missing: no result results/000000.json (the job has not run, or did not finish)"))
		Expect(sum.Failed()).To(BeTrue())
		Expect(table(sum)).To(ContainSubstring(list[0].Repro()))
	})

	It("refuses a manifest of another kind, of another plan, or edited, naming the job", func() {
		sys := []*regress.System{brokenSystem()}
		opts := regress.Options{Scale: 0.001, Seed: 5}
		list, err := regress.Plan(sys, opts)
		Expect(err).NotTo(HaveOccurred())
		write := func(edit func(m *jobs.Manifest)) string {
			m, err := regress.Manifest(list, opts)
			Expect(err).NotTo(HaveOccurred())
			edit(m)
			dir := filepath.Join(GinkgoT().TempDir(), "plan")
			Expect(jobs.Write(dir, m)).To(Succeed())
			return dir
		}
		merge := func(dir string) error {
			_, _, _, err := regress.Merge(sys, dir)
			return err
		}
		Expect(merge(write(func(m *jobs.Manifest) { m.Jobs[1].Seed++ }))).To(MatchError(MatchRegexp(`manifest job 1 \(broken#1\): seed \d+, where this nisim plans it otherwise`)))
		Expect(merge(write(func(m *jobs.Manifest) { m.Jobs[2].Sets = m.Jobs[2].Sets[:1] }))).To(MatchError(ContainSubstring("manifest job 2 (broken#2): sets")))
		Expect(merge(write(func(m *jobs.Manifest) { m.Extra = []byte(`{"systems":["broken"],"scale":0.002,"seed":5}`) }))).To(MatchError(MatchRegexp(`the manifest has \d+ jobs where this nisim plans \d+ for systems broken, scale 0.002, seed 5`)))
		Expect(merge(write(func(m *jobs.Manifest) { m.Extra = []byte(`{"systems":["nosuch"],"scale":0.001,"seed":5}`) }))).To(MatchError(ContainSubstring(`unknown system "nosuch"`)))
		Expect(merge(write(func(m *jobs.Manifest) { m.Extra = nil }))).To(MatchError(ContainSubstring("without its plan section")))
		Expect(merge(write(func(m *jobs.Manifest) { m.Kind = "other" }))).To(MatchError(ContainSubstring(`manifest of kind "other" is not a regression tier`)))
		_, err = regress.Manifest(nil, opts)
		Expect(err).To(MatchError(ContainSubstring("no jobs")))
	})

	It("refuses a result file another plan wrote", func() {
		sys := []*regress.System{brokenSystem()}
		c := scenario.Catalog{broken()}
		a, _ := planned(sys, regress.Options{Scale: 0.0001, Seed: 1})
		b, _ := planned(sys, regress.Options{Scale: 0.0001, Seed: 2})
		runPlanned(c, a, 0, 1)
		data, err := os.ReadFile(filepath.Join(a, "results", "000000.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(b, "results", "000000.json"), data, 0o666)).To(Succeed())
		_, _, _, err = regress.Merge(sys, b)
		var mm *jobs.MismatchError
		Expect(errors.As(err, &mm)).To(BeTrue(), "%v", err)
		Expect(mm.Path).To(HaveSuffix("000000.json"))
	})
})
