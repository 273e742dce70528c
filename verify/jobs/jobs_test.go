package jobs_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/jobs"
	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// fakeParams drive a fake scenario: latency = base + 100*rate*width + the
// seed's bits as a fraction (so every seed gives another, non-round float),
// a failed check when rate equals fail, saturation from rate 0.8 on.
type fakeParams struct {
	Rate  float64 `toml:"rate" unit:"packets/cycle"`
	Width int     `toml:"width" unit:"flits"`
	Base  float64 `toml:"base"`
	Fail  float64 `toml:"fail"`
}

func (p *fakeParams) Validate() error {
	if p.Rate < 0 {
		return &scenario.KeyError{Key: "rate", Msg: "must not be negative"}
	}
	if p.Width < 1 {
		return &scenario.KeyError{Key: "width", Msg: "must be at least 1"}
	}
	return nil
}

func (p *fakeParams) Metrics() []scenario.MetricDef {
	return []scenario.MetricDef{{Name: "latency", Unit: "cycles", Ref: "zero_load"}, {Name: "zero_load", Unit: "cycles"}, {Name: "saturated"}}
}

func fakeScenario() *scenario.Scenario {
	return &scenario.Scenario{Name: "fake", Summary: "fake sweep target",
		Defaults: func() scenario.Params { return &fakeParams{Width: 1, Base: 20, Fail: -1} },
		Run: func(e *env.Env, pp scenario.Params) (*scenario.Report, error) {
			p := pp.(*fakeParams)
			rep := &scenario.Report{Title: "fake"}
			noise := float64(rand.New(rand.NewPCG(e.Seed, 7)).Uint64()>>11) / (1 << 53)
			rep.Measure("latency", p.Base+100*p.Rate*float64(p.Width)+noise, "cycles")
			rep.Measure("zero_load", p.Base, "cycles")
			sat := p.Rate >= 0.8
			rep.Measure("saturated", map[bool]float64{true: 1}[sat], "")
			rep.Check("drained", !sat, "undelivered packets")
			rep.Check("answer", p.Rate != p.Fail, "wrong answer at rate %g", p.Rate)
			return rep, nil
		}}
}

// unlistedParams are fakeParams without a metric list (no
// scenario.MetricLister): its metrics are known only once a run measured
// them.
type unlistedParams struct {
	Rate float64 `toml:"rate"`
	Base float64 `toml:"base"`
}

func (p *unlistedParams) Validate() error { return nil }

// unlistedScenario measures "sim_ms" and "messages", no latency.
func unlistedScenario() *scenario.Scenario {
	return &scenario.Scenario{Name: "unlisted", Summary: "a scenario that does not list its metrics",
		Defaults: func() scenario.Params { return &unlistedParams{Base: 20} },
		Run: func(e *env.Env, pp scenario.Params) (*scenario.Report, error) {
			p := pp.(*unlistedParams)
			rep := &scenario.Report{Title: "unlisted"}
			rep.Measure("sim_ms", p.Base+p.Rate, "ms")
			rep.Measure("messages", 10*p.Rate, "")
			return rep, nil
		}}
}

// spec is a 3 x 2 grid with 2 seeds (12 jobs), one point failing.
func spec() jobs.SweepSpec {
	return jobs.SweepSpec{Grid: []scenario.Axis{{Key: "rate", Values: []float64{0.1, 0.5, 0.9}}, {Key: "width", Values: []float64{1, 4}}},
		Seed: 5, Seeds: 2, Y: []string{"latency"}, Sets: []string{"fail=0.5"}, Title: "fake: latency vs rate"}
}

// outputs renders a merged sweep as its CSV and SVG bytes.
func outputs(m *jobs.Manifest, res *scenario.SweepResult) (string, string) {
	var c, s bytes.Buffer
	Expect(scenario.WriteCSV(&c, res)).To(Succeed())
	Expect(scenario.WriteSVG(&s, res, scenario.PlotOptions{Title: m.Sweep.Title, Y: m.Sweep.Y, LogY: m.Sweep.LogY})).To(Succeed())
	return c.String(), s.String()
}

var _ = Describe("Float", func() {
	It("round-trips every float64 through JSON bit for bit, non-finite ones and -0 included", func() {
		vals := []float64{0, math.Copysign(0, -1), 0.1, 1.0 / 3, -2.5e-300, math.SmallestNonzeroFloat64, math.MaxFloat64,
			1e21, 123456789012345680000, math.NaN(), math.Inf(1), math.Inf(-1)}
		r := rand.New(rand.NewPCG(1, 2))
		for range 2000 {
			v := math.Float64frombits(r.Uint64())
			vals = append(vals, v)
		}
		for _, v := range vals {
			b, err := json.Marshal(jobs.Float(v))
			Expect(err).NotTo(HaveOccurred())
			var back jobs.Float
			Expect(json.Unmarshal(b, &back)).To(Succeed(), string(b))
			if math.IsNaN(v) {
				Expect(math.IsNaN(float64(back))).To(BeTrue())
				continue
			}
			Expect(math.Float64bits(float64(back))).To(Equal(math.Float64bits(v)), string(b))
		}
		var f jobs.Float
		Expect(json.Unmarshal([]byte(`"Infinity"`), &f)).To(MatchError(ContainSubstring(`want a number`)))
	})
})

var _ = Describe("PlanSweep", func() {
	It("lists the grid's points in order, the last key fastest, each point's seeds together, with everything a job needs", func() {
		m, err := jobs.PlanSweep(fakeScenario(), spec())
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Version).To(Equal(jobs.Version))
		Expect(m.Kind).To(Equal(jobs.KindSweep))
		// 3 rates x 2 widths x 2 seeds.
		Expect(m.Jobs).To(HaveLen(12))
		Expect(m.Jobs[3]).To(Equal(jobs.Job{Index: 3, Scenario: "fake", Sets: []string{"fail=0.5", "rate=0.1", "width=4"}, Seed: 6,
			Result: "results/000003.json", Labels: []jobs.Label{{Key: "rate", Value: "0.1"}, {Key: "width", Value: "4"}}}))
		Expect(m.Jobs[4].Sets).To(Equal([]string{"fail=0.5", "rate=0.5", "width=1"}))
		Expect(m.Jobs[4].Seed).To(Equal(uint64(5)))
		Expect(m.Sweep.Grid[0].Unit).To(Equal("packets/cycle"))
		Expect(m.Sweep.Grid[1].Unit).To(Equal("flits"))
		Expect(m.Sweep.Defs).To(HaveLen(3))
	})

	It("inlines the config file, so a job needs nothing from the planner's directory", func() {
		dir := GinkgoT().TempDir()
		cfg := filepath.Join(dir, "c.toml")
		Expect(os.WriteFile(cfg, []byte("base = 100\n"), 0o644)).To(Succeed())
		sp := spec()
		sp.File = cfg
		m, err := jobs.PlanSweep(fakeScenario(), sp)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Config).To(Equal("base = 100\n"))
		Expect(os.Remove(cfg)).To(Succeed())
		r := jobs.Exec(scenario.Catalog{fakeScenario()}, m, 0)
		Expect(r.Status).To(Equal("ok"))
		// base 100 + 100*0.1*1 = 110, plus the seed's fraction below 1.
		Expect(float64(r.Metrics[0].Value)).To(And(BeNumerically(">=", 110), BeNumerically("<", 111)))
	})

	DescribeTable("refuses bad input with one line naming the flag, before anything runs",
		func(edit func(*jobs.SweepSpec), want string) {
			sp := spec()
			edit(&sp)
			_, err := jobs.PlanSweep(fakeScenario(), sp)
			var ue *scenario.UsageError
			Expect(errors.As(err, &ue)).To(BeTrue(), "%v", err)
			Expect(err).To(MatchError(ContainSubstring(want)))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		},
		Entry("unknown grid key", func(s *jobs.SweepSpec) { s.Grid[1].Key = "nosuch" }, "--grid nosuch=1: unknown key nosuch"),
		Entry("a value the scenario refuses", func(s *jobs.SweepSpec) { s.Grid[1].Values = []float64{1, 0} }, "--grid width=0: invalid parameter width: must be at least 1"),
		Entry("empty value list", func(s *jobs.SweepSpec) { s.Grid[0].Values = nil }, "--grid rate: no value to sweep"),
		Entry("a key twice", func(s *jobs.SweepSpec) { s.Grid[1].Key = "rate" }, "--grid rate: the key is given twice"),
		Entry("a grid key also --set", func(s *jobs.SweepSpec) { s.Sets = append(s.Sets, "width=2") }, "--set width=2: width is a grid key"),
		Entry("no grid", func(s *jobs.SweepSpec) { s.Grid = nil }, "--grid: no key to sweep"),
		Entry("NaN", func(s *jobs.SweepSpec) { s.Grid[0].Values = []float64{math.NaN()} }, "is not a finite number"),
		Entry("too many runs", func(s *jobs.SweepSpec) {
			s.Grid = []scenario.Axis{{Key: "rate", Values: make([]float64, 1000)}, {Key: "base", Values: make([]float64, 1000)}}
		}, "--grid: more than 100000 runs"),
		Entry("unknown metric", func(s *jobs.SweepSpec) { s.Y = []string{"nosuch"} }, `--y: unknown metric "nosuch"`),
		Entry("seeds", func(s *jobs.SweepSpec) { s.Seeds = 33 }, "--seeds: must be in [1, 32]"),
		Entry("a missing config file", func(s *jobs.SweepSpec) { s.File = "/nonexistent/c.toml" }, "config /nonexistent/c.toml: no such file"),
		Entry("a config that is a directory", func(s *jobs.SweepSpec) { s.File = os.TempDir() }, "config "+os.TempDir()+": is a directory"),
	)
})

var _ = Describe("the default metric (no --y)", func() {
	It("is latency for a scenario that lists it, named in the plan with its title", func() {
		sp := spec()
		sp.Y, sp.Title = nil, ""
		m, err := jobs.PlanSweep(fakeScenario(), sp)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sweep.Y).To(Equal([]string{"latency"}))
		Expect(m.Sweep.Title).To(Equal("fake: latency vs rate"))
	})

	It("is the first metric the runs measured for a scenario that does not list them, instead of a failure after the runs", func() {
		sp := jobs.SweepSpec{Grid: []scenario.Axis{{Key: "rate", Values: []float64{0.1, 0.5}}}, Seed: 1, Seeds: 1}
		m, err := jobs.PlanSweep(unlistedScenario(), sp)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sweep.Y).To(BeEmpty(), "unknown until the runs")
		res, err := jobs.MergeSweep(m, jobs.RunAll(scenario.Catalog{unlistedScenario()}, m, 1, nil))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Defs).To(HaveLen(2))
		var table bytes.Buffer
		Expect(m.Sweep.Y).To(Equal([]string{"sim_ms"}))
		Expect(m.Sweep.Title).To(Equal("unlisted: sim_ms vs rate"))
		Expect(scenario.WriteTable(&table, res, m.Sweep.Y)).To(Succeed())
		Expect(table.String()).To(ContainSubstring("20.1"))
	})

	It("still refuses a named metric the runs did not measure, at the merge", func() {
		sp := jobs.SweepSpec{Grid: []scenario.Axis{{Key: "rate", Values: []float64{0.1}}}, Seed: 1, Seeds: 1, Y: []string{"latency"}}
		_, _, err := jobs.Sweep(scenario.Catalog{unlistedScenario()}, unlistedScenario(), sp, 1, nil)
		Expect(err).To(MatchError(ContainSubstring(`--y: unknown metric "latency" (available: sim_ms, messages)`)))
	})
})

var _ = Describe("a plan directory", func() {
	var dir string
	cat := scenario.Catalog{fakeScenario()}
	BeforeEach(func() { dir = filepath.Join(GinkgoT().TempDir(), "plan") })

	It("gives, planned, run job by job and merged, the same CSV and SVG as the local sweep on 1 or 4 workers", func() {
		m, err := jobs.PlanSweep(fakeScenario(), spec())
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs.Write(dir, m)).To(Succeed())
		loaded, err := jobs.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(m, loaded)).To(BeEmpty())
		failed := 0
		for i := range loaded.Jobs {
			r, err := jobs.RunJob(cat, dir, loaded, i)
			Expect(err).NotTo(HaveOccurred())
			if r.Failed() {
				failed++
			}
		}
		// rate 0.5 fails its answer check: 2 widths x 2 seeds.
		Expect(failed).To(Equal(4))
		results, missing, err := jobs.Collect(dir, loaded)
		Expect(err).NotTo(HaveOccurred())
		Expect(missing).To(BeEmpty())
		merged, err := jobs.MergeSweep(loaded, results)
		Expect(err).NotTo(HaveOccurred())
		csvM, svgM := outputs(loaded, merged)

		for _, workers := range []int{1, 4} {
			lm, local, err := jobs.Sweep(cat, fakeScenario(), spec(), workers, nil)
			Expect(err).NotTo(HaveOccurred())
			csvL, svgL := outputs(lm, local)
			Expect(cmp.Diff(csvL, csvM)).To(BeEmpty(), "-j %d", workers)
			Expect(cmp.Diff(svgL, svgM)).To(BeEmpty(), "-j %d", workers)
		}
		Expect(strings.Count(csvM, "failed: answer: wrong answer at rate 0.5")).To(Equal(4))
		Expect(strings.Count(csvM, ",saturated\n")).To(Equal(4))
	})

	It("merges what it has, missing jobs as rows with status missing", func() {
		m, err := jobs.PlanSweep(fakeScenario(), spec())
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs.Write(dir, m)).To(Succeed())
		for _, i := range []int{0, 1, 2, 5} {
			_, err := jobs.RunJob(cat, dir, m, i)
			Expect(err).NotTo(HaveOccurred())
		}
		results, missing, err := jobs.Collect(dir, m)
		Expect(err).NotTo(HaveOccurred())
		Expect(missing).To(Equal([]int{3, 4, 6, 7, 8, 9, 10, 11}))
		res, err := jobs.MergeSweep(m, results)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Missing()).To(HaveLen(8))
		c, s := outputs(m, res)
		Expect(strings.Count(c, ",missing\n")).To(Equal(8))
		Expect(s).To(ContainSubstring("8 of 12 runs missing"))
	})

	It("refuses a result file that belongs to another job", func() {
		m, err := jobs.PlanSweep(fakeScenario(), spec())
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs.Write(dir, m)).To(Succeed())
		_, err = jobs.RunJob(cat, dir, m, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Rename(jobs.ResultPath(dir, &m.Jobs[1]), jobs.ResultPath(dir, &m.Jobs[0]))).To(Succeed())
		_, _, err = jobs.Collect(dir, m)
		var me *jobs.MismatchError
		Expect(errors.As(err, &me)).To(BeTrue())
		Expect(err).To(MatchError(HaveSuffix("000000.json: does not match its manifest entry: index 1, want 0")))
	})

	It("refuses an index out of range, naming the count", func() {
		m, err := jobs.PlanSweep(fakeScenario(), spec())
		Expect(err).NotTo(HaveOccurred())
		_, err = jobs.RunJob(cat, dir, m, 12)
		Expect(err).To(MatchError("index 12 out of range: the plan has 12 jobs (0 to 11)"))
	})

	It("plans only into a new or empty directory, or over a plan none of whose jobs has run", func() {
		m, err := jobs.PlanSweep(fakeScenario(), spec())
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs.Write(dir, m)).To(Succeed())
		Expect(jobs.Write(dir, m)).To(Succeed())
		_, err = jobs.RunJob(cat, dir, m, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs.Write(dir, m)).To(MatchError(ContainSubstring("holds a plan whose jobs have run (results/000000.json)")))
		other := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644)).To(Succeed())
		Expect(jobs.Write(other, m)).To(MatchError(ContainSubstring("not empty (holds notes.txt)")))
	})

	It("reads only a regular manifest file", func() {
		Expect(os.MkdirAll(filepath.Join(dir, jobs.ManifestName), 0o755)).To(Succeed())
		_, err := jobs.Load(dir)
		Expect(err).To(MatchError(filepath.Join(dir, jobs.ManifestName) + ": not a regular file"))
	})

	DescribeTable("Load refuses a corrupt or newer manifest in one line naming the file",
		func(text, want string) {
			Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, jobs.ManifestName), []byte(text), 0o644)).To(Succeed())
			_, err := jobs.Load(dir)
			Expect(err).To(MatchError(ContainSubstring(want)))
			Expect(err.Error()).To(HavePrefix(filepath.Join(dir, jobs.ManifestName) + ": "))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		},
		Entry("newer", `{"version": 2, "kind": "sweep", "future": true}`, "manifest version 2 is newer than this nisim's 1"),
		Entry("not JSON", "{{", "not a nisim manifest"),
		Entry("no version", `{"kind": "sweep"}`, "not a nisim manifest: no version field"),
		Entry("unknown field", `{"version": 1, "kind": "sweep", "extra_field": 1}`, `corrupt manifest: unknown field "extra_field"`),
		Entry("no jobs", `{"version": 1, "kind": "sweep", "jobs": []}`, "corrupt manifest: no jobs"),
		Entry("a result path outside results/", `{"version": 1, "kind": "regress", "jobs": [{"index": 0, "scenario": "x", "sets": [], "seed": 1, "result": "../x.json"}]}`,
			`corrupt manifest: job 0: result path "../x.json" is not a file under results/`),
		Entry("a sweep whose grid does not make its jobs", `{"version": 1, "kind": "sweep", "sweep": {"grid": [{"key": "rate", "values": [1, 2]}], "seed": 1, "seeds": 1, "y": ["latency"]},
			"jobs": [{"index": 0, "scenario": "x", "sets": [], "seed": 1, "result": "results/000000.json"}]}`, "the grid and seeds make 2 runs but there are 1 jobs"),
	)
})

var _ = Describe("IndexFromEnv", func() {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	It("reads Slurm's array task id first, then a Kubernetes Indexed Job's completion index", func() {
		i, from, err := jobs.IndexFromEnv(env(map[string]string{"SLURM_ARRAY_TASK_ID": "7", "JOB_COMPLETION_INDEX": "3"}))
		Expect(err).NotTo(HaveOccurred())
		Expect(i).To(Equal(7))
		Expect(from).To(Equal("SLURM_ARRAY_TASK_ID"))
		i, from, err = jobs.IndexFromEnv(env(map[string]string{"JOB_COMPLETION_INDEX": "3"}))
		Expect(err).NotTo(HaveOccurred())
		Expect(i).To(Equal(3))
		Expect(from).To(Equal("JOB_COMPLETION_INDEX"))
	})

	It("says which variables it read when neither is set, and refuses a value that is not an index", func() {
		_, _, err := jobs.IndexFromEnv(env(nil))
		Expect(err).To(MatchError("no --index and neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set"))
		_, _, err = jobs.IndexFromEnv(env(map[string]string{"SLURM_ARRAY_TASK_ID": "-1"}))
		Expect(err).To(MatchError(`SLURM_ARRAY_TASK_ID="-1" is not a job index (a non-negative integer)`))
	})
})
