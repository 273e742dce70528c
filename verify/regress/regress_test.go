package regress_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/regress"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/atmscen"
	lcisc "github.com/nisim/nisim/verify/scenario/lciscen"
	"github.com/nisim/nisim/verify/scenario/noc"
	"github.com/nisim/nisim/verify/scenario/shrimpscen"
	"github.com/nisim/nisim/verify/scenario/tgscen"
)

// cat holds the scenarios the tier runs.
func cat() scenario.Catalog {
	c := scenario.Catalog{}
	c = append(c, noc.Scenarios()...)
	c = append(c, tgscen.Scenarios()...)
	c = append(c, shrimpscen.Scenarios()...)
	c = append(c, atmscen.Scenarios()...)
	return append(c, lcisc.Scenarios()...)
}

// repros lists the jobs as their command lines (the whole of a job: its
// system, scenario, seed and every parameter).
func repros(jobs []*regress.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name()+": "+j.Repro())
	}
	return out
}

// brokenParams are the parameters of a scenario that breaks a checker
// rule when told to.
type brokenParams struct {
	Items int  `toml:"items"`
	Fail  bool `toml:"fail"`
}

func (p *brokenParams) Validate() error {
	return scenario.Check(p.Items < 0, "items", "must not be negative (got %d)", p.Items)
}

// broken is a scenario that "delivers" items transactions and, with
// fail set, reports a violation to the run's monitor, as a model whose
// checker fires does.
func broken() *scenario.Scenario {
	return &scenario.Scenario{Name: "broken", Summary: "delivers items; with fail, breaks a rule",
		Defaults: func() scenario.Params { return &brokenParams{Items: 10} },
		Run: func(e *env.Env, p scenario.Params) (*scenario.Report, error) {
			bp := p.(*brokenParams)
			rep := &scenario.Report{Title: "broken"}
			if bp.Fail {
				e.Report(e.Now(), "Broken.Unit", "broken.rule", "fault injected after %d items", bp.Items)
			}
			rep.Measure("items", float64(bp.Items), "")
			return rep, e.Monitor.Err()
		}}
}

// brokenSystem draws jobs of the broken scenario, the third of each
// plan told to fail.
func brokenSystem() *regress.System {
	return &regress.System{Name: "broken", Noun: "items", Unit: "items the broken scenario reports", Chunk: 100, Cost: 1,
		Draw: func(r *rand.Rand, want float64) regress.Spec {
			n := int(want)
			return regress.Spec{Scenario: "broken", Expect: float64(n),
				Sets: []regress.Set{{Key: "items", Value: fmt.Sprint(n)}, {Key: "fail", Value: fmt.Sprint(r.IntN(3) == 0)}}}
		},
		Count: regress.SumMetrics("items")}
}

var _ = Describe("the job list", func() {
	It("depends only on the seed, the scale and the systems", func() {
		o := regress.Options{Scale: 1, Seed: 7}
		a, err := regress.Plan(regress.Systems(), o)
		Expect(err).NotTo(HaveOccurred())
		b, err := regress.Plan(regress.Systems(), o)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(repros(a), repros(b))).To(BeEmpty())
		o.Seed = 8
		c, err := regress.Plan(regress.Systems(), o)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(repros(a), repros(c))).NotTo(BeEmpty())
	})

	It("plans at least the target for every system, in the table's order, and varies the parameters", func() {
		jobs, err := regress.Plan(regress.Systems(), regress.Options{Scale: 1, Seed: 1})
		Expect(err).NotTo(HaveOccurred())
		planned := map[string]float64{}
		var order []string
		params := map[string]map[string]bool{} // system -> distinct "key=value"
		seeds := map[uint64]bool{}
		for _, j := range jobs {
			if _, ok := planned[j.System.Name]; !ok {
				order = append(order, j.System.Name)
				params[j.System.Name] = map[string]bool{}
			}
			planned[j.System.Name] += j.Expect
			for _, s := range j.Sets {
				params[j.System.Name][s.Arg()] = true
			}
			seeds[j.Seed] = true
		}
		Expect(order).To(Equal([]string{"mesh", "myrinet", "atm", "mchub", "mc", "cash", "telegraphos", "lci", "lci-rx", "shrimp", "svm", "atm-rma"}))
		for name, n := range planned {
			Expect(n).To(BeNumerically(">=", regress.Target), name)
			Expect(len(params[name])).To(BeNumerically(">", 12), name)
		}
		Expect(seeds).To(HaveLen(len(jobs)))
	})

	It("runs a subset, smaller at a smaller scale", func() {
		jobs, err := regress.Plan(regress.Systems(), regress.Options{Systems: []string{"lci", "atm"}, Scale: 0.01, Seed: 1})
		Expect(err).NotTo(HaveOccurred())
		var names []string
		total := 0.0
		for _, j := range jobs {
			names = append(names, j.Name())
			total += j.Expect
		}
		Expect(names).To(Equal([]string{"atm#0", "atm#1", "lci#0", "lci#1"}))
		Expect(total).To(BeNumerically("~", 2*0.01*regress.Target*regress.Margin, 0.1*0.01*regress.Target))
	})

	It("refuses an unknown system and an impossible scale, naming them", func() {
		_, err := regress.Plan(regress.Systems(), regress.Options{Systems: []string{"nosuch"}, Scale: 1})
		Expect(err).To(MatchError(ContainSubstring(`unknown system "nosuch"`)))
		for _, s := range []float64{0, -1, 1e9} {
			_, err = regress.Plan(regress.Systems(), regress.Options{Scale: s})
			Expect(err).To(MatchError(HavePrefix("scale:")))
		}
	})

	It("draws SHRIMP jobs shrimp-traffic accepts, on 16 nodes, across combining, send modes, sizes and notification shares", func() {
		jobs, err := regress.Plan(regress.Systems(), regress.Options{Systems: []string{"shrimp"}, Scale: 1, Seed: 1})
		Expect(err).NotTo(HaveOccurred())
		s, err := cat().Lookup("shrimp-traffic")
		Expect(err).NotTo(HaveOccurred())
		seen := map[string]map[string]bool{} // key -> values drawn
		for _, j := range jobs {
			p := s.Defaults()
			Expect(scenario.Configure(p, "", j.Args())).To(Succeed(), j.Repro())
			tp := p.(*shrimpscen.TrafficParams)
			Expect(tp.Nodes).To(Equal(16), j.Repro())
			if tp.MaxDU == 4096 {
				// Page-sized sends only where DU transfers are a few
				// percent of the transactions (their cost).
				Expect(tp.AUPercent).To(BeNumerically(">=", 67), j.Repro())
				Expect(tp.MaxRun).To(BeNumerically(">=", 4), j.Repro())
			}
			if tp.RecvInterrupt == "packet" {
				// An interrupt per packet only where the receiving
				// kernel keeps up with the notification records.
				Expect(tp.MaxGap).To(Equal(3000), j.Repro())
				Expect(tp.MaxRun).To(BeNumerically("<=", 4), j.Repro())
			}
			for _, set := range j.Sets {
				if seen[set.Key] == nil {
					seen[set.Key] = map[string]bool{}
				}
				seen[set.Key][set.Value] = true
			}
		}
		for key, want := range map[string][]string{"combine": {"off", "on", "random"}, "async_send": {"false", "true"},
			"max_du": {"64", "512", "4096"}, "notify_percent": {"5", "20", "50"}, "du_queue": {"0", "2"},
			"au_percent": {"20", "50", "67", "90", "100"}, "fifo_bytes": {"8192", "32768"}} {
			for _, v := range want {
				Expect(seen[key]).To(HaveKey(v), key)
			}
		}
	})

	It("draws atm-rma jobs atm-traffic accepts, across node counts, mixes (RPC shares among them), block sizes, gaps and fault rates", func() {
		jobs, err := regress.Plan(regress.Systems(), regress.Options{Systems: []string{"atm-rma"}, Scale: 1, Seed: 1})
		Expect(err).NotTo(HaveOccurred())
		s, err := cat().Lookup("atm-traffic")
		Expect(err).NotTo(HaveOccurred())
		seen := map[string]map[string]bool{} // key -> values drawn
		for _, j := range jobs {
			p := s.Defaults()
			Expect(scenario.Configure(p, "", j.Args())).To(Succeed(), j.Repro())
			Expect(p.Validate()).To(Succeed(), j.Repro())
			for _, set := range j.Sets {
				if seen[set.Key] == nil {
					seen[set.Key] = map[string]bool{}
				}
				seen[set.Key][set.Value] = true
			}
		}
		for key, want := range map[string][]string{"nodes": {"2", "3", "4"}, "switched": {"false", "true"},
			"max_block_words": {"16", "64", "256"}, "drop_prob": {"0", "0.0001", "0.001", "0.01"}, "max_gap": {"0", "500", "2000"},
			"rpc": {"0", "5", "10", "40"}} {
			for _, v := range want {
				Expect(seen[key]).To(HaveKey(v), key)
			}
		}
	})

	It("quotes repro values the shell would expand", func() {
		j := &regress.Job{System: brokenSystem(), Scenario: "mesh", Seed: 3,
			Sets: []regress.Set{{Key: "hotspots", Value: "[3]"}, {Key: "packet_size", Value: "1:0.5,20:0.5"}}}
		Expect(j.Repro()).To(Equal("bin/nisim run mesh --seed 3 --set 'hotspots=[3]' --set packet_size=1:0.5,20:0.5"))
	})
})

var _ = Describe("running the tier", func() {
	It("counts each job's transactions from its run, the same whatever the parallelism", func() {
		jobs, err := regress.Plan(regress.Systems(), regress.Options{Systems: []string{"atm", "telegraphos", "lci"}, Scale: 0.0002, Seed: 3})
		Expect(err).NotTo(HaveOccurred())
		var progress bytes.Buffer
		one := regress.Run(cat(), jobs, 1, nil)
		two := regress.Run(cat(), jobs, 2, &progress)
		Expect(strings.Count(progress.String(), "\n")).To(Equal(len(jobs)))
		for i, r := range two {
			Expect(r.Failed).To(BeFalse(), "%s: %s", r.Job.Name(), r.Reason)
			Expect(r.Job).To(BeIdenticalTo(jobs[i]))
			Expect(r.Transactions).To(BeNumerically(">", 0))
			Expect(r.Transactions).To(Equal(one[i].Transactions), r.Job.Name())
			Expect(r.Violations).To(Equal(one[i].Violations))
			switch r.Job.System.Name {
			case "telegraphos", "lci":
				// Every write's packets and every operation, counted as
				// the run saw them, come out exactly as planned.
				Expect(float64(r.Transactions)).To(Equal(r.Job.Expect), r.Job.Name())
			}
		}
		// The count is the report's, run alone by the repro's parameters.
		j := jobs[0]
		s, err := cat().Lookup(j.Scenario)
		Expect(err).NotTo(HaveOccurred())
		p := s.Defaults()
		Expect(scenario.Configure(p, "", j.Args())).To(Succeed())
		rep, _, violations, err := scenario.Exec(s, p, scenario.Options{Seed: j.Seed})
		Expect(err).NotTo(HaveOccurred())
		Expect(violations).NotTo(HaveOccurred())
		delivered, _ := regress.Metric(rep, "delivered")
		dropped, _ := regress.Metric(rep, "dropped")
		Expect(float64(two[0].Transactions)).To(Equal(delivered + dropped))

		sum := regress.Summarize(two, 0.0002)
		Expect(sum.Failed()).To(BeFalse())
		Expect(sum.Rows).To(HaveLen(3))
		for _, row := range sum.Rows {
			Expect(row.Transactions).To(BeNumerically(">=", row.Target), row.System.Name)
		}
	})

	It("runs SHRIMP jobs with every checker clean, counting the report's transactions, the same whatever the parallelism", func() {
		jobs, err := regress.Plan(regress.Systems(), regress.Options{Systems: []string{"shrimp"}, Scale: 0.001, Seed: 2})
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs).To(HaveLen(2))
		one := regress.Run(cat(), jobs, 1, nil)
		two := regress.Run(cat(), jobs, 2, nil)
		for i, r := range two {
			Expect(r.Failed).To(BeFalse(), "%s: %s", r.Job.Name(), r.Reason)
			Expect(r.Violations).To(BeZero())
			Expect(r.Transactions).To(Equal(one[i].Transactions), r.Job.Name())
			// The plan's estimate is the mean of the drawn runs' lengths.
			Expect(float64(r.Transactions)).To(BeNumerically("~", r.Job.Expect, 0.3*r.Job.Expect), r.Job.Name())
		}
		j := jobs[0]
		s, err := cat().Lookup(j.Scenario)
		Expect(err).NotTo(HaveOccurred())
		p := s.Defaults()
		Expect(scenario.Configure(p, "", j.Args())).To(Succeed())
		rep, _, violations, err := scenario.Exec(s, p, scenario.Options{Seed: j.Seed})
		Expect(err).NotTo(HaveOccurred())
		Expect(violations).NotTo(HaveOccurred())
		n, err := regress.Metric(rep, "transactions")
		Expect(err).NotTo(HaveOccurred())
		Expect(float64(two[0].Transactions)).To(Equal(n))
		sum := regress.Summarize(two, 0.001)
		Expect(sum.Failed()).To(BeFalse())
	})

	It("fails a job whose checker fires, with the command that reproduces it alone", func() {
		sys := brokenSystem()
		c := scenario.Catalog{broken()}
		jobs, err := regress.Plan([]*regress.System{sys}, regress.Options{Scale: 0.001, Seed: 5})
		Expect(err).NotTo(HaveOccurred())
		Expect(len(jobs)).To(BeNumerically(">=", 6))
		res := regress.Run(c, jobs, 2, nil)
		var failing []regress.Result
		for _, r := range res {
			Expect(r.Transactions).To(BeNumerically(">", 0))
			if r.Failed {
				failing = append(failing, r)
				Expect(r.Violations).To(Equal(1))
				Expect(r.Reason).To(ContainSubstring("[broken.rule] fault injected"))
				Expect(r.Job.Repro()).To(MatchRegexp(`^bin/nisim run broken --seed \d+ --set items=\d+ --set fail=true$`))
			} else {
				Expect(r.Job.Repro()).To(HaveSuffix("--set fail=false"))
			}
		}
		Expect(failing).NotTo(BeEmpty())
		sum := regress.Summarize(res, 0.001)
		Expect(sum.Failed()).To(BeTrue())
		Expect(sum.Rows[0].Failed).To(Equal(len(failing)))
		var out bytes.Buffer
		sum.Print(&out)
		for _, r := range failing {
			Expect(out.String()).To(ContainSubstring(r.Job.Repro()))
		}
		// Run alone, the failing job fails the same way.
		alone := regress.Exec(c, failing[0].Job)
		Expect(alone.Failed).To(BeTrue())
		Expect(alone.Reason).To(Equal(failing[0].Reason))
	})

	It("fails a system that falls short of its volume", func() {
		sys := brokenSystem()
		draw := sys.Draw
		sys.Draw = func(r *rand.Rand, want float64) regress.Spec {
			sp := draw(r, want)
			sp.Sets = []regress.Set{{Key: "items", Value: "1"}} // far fewer than planned, all passing
			return sp
		}
		jobs, err := regress.Plan([]*regress.System{sys}, regress.Options{Scale: 0.0001, Seed: 1})
		Expect(err).NotTo(HaveOccurred())
		sum := regress.Summarize(regress.Run(scenario.Catalog{broken()}, jobs, 2, nil), 0.0001)
		Expect(sum.Rows[0].Failed).To(Equal(0))
		Expect(sum.Rows[0].Short()).To(BeTrue())
		Expect(sum.Failed()).To(BeTrue())
		var out bytes.Buffer
		sum.Print(&out)
		Expect(out.String()).To(ContainSubstring("SHORT of the target"))
	})

	It("fails a job whose report lacks what its system counts, or whose scenario is unknown", func() {
		sys := brokenSystem()
		sys.Count = regress.SumMetrics("nothing")
		j := &regress.Job{System: sys, Scenario: "broken", Seed: 1}
		r := regress.Exec(scenario.Catalog{broken()}, j)
		Expect(r.Failed).To(BeTrue())
		Expect(r.Reason).To(ContainSubstring(`counting transactions: "nothing": the report has no such metric`))
		j.Scenario = "nope"
		Expect(regress.Lookup(scenario.Catalog{broken()}, []*regress.Job{j})).To(MatchError(ContainSubstring(`unknown scenario "nope"`)))
	})
})
