package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/regress"
	"github.com/nisim/nisim/verify/scenario"
)

// faultyParams: a scenario that breaks a checker rule when told to.
type faultyParams struct {
	Fail bool `toml:"fail"`
}

func (p *faultyParams) Validate() error { return nil }

// faultyTier is a one-system tier whose every other job (by its drawn
// parameter) breaks a rule.
func faultyTier() ([]*regress.System, scenario.Catalog) {
	s := &scenario.Scenario{Name: "faulty", Summary: "breaks a rule when told to",
		Defaults: func() scenario.Params { return &faultyParams{} },
		Run: func(e *env.Env, p scenario.Params) (*scenario.Report, error) {
			if p.(*faultyParams).Fail {
				e.Report(e.Now(), "Faulty", "faulty.rule", "fault injected")
			}
			rep := &scenario.Report{Title: "faulty"}
			rep.Measure("n", 600, "")
			return rep, e.Monitor.Err()
		}}
	sys := &regress.System{Name: "faulty", Noun: "n", Unit: "n", Chunk: 1000, Cost: 1,
		Draw: func(r *rand.Rand, want float64) regress.Spec {
			return regress.Spec{Scenario: "faulty", Expect: 600, Sets: []regress.Set{{Key: "fail", Value: fmt.Sprint(r.IntN(2) == 0)}}}
		},
		Count: regress.SumMetrics("n")}
	return []*regress.System{sys}, scenario.Catalog{s}
}

// regressOn runs the regress command on a tier and returns the exit
// status as run would, with its outputs.
func regressOn(systems []*regress.System, cat scenario.Catalog, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	c := newRegressOn(systems, cat)
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errb)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.Execute()
	code := 0
	if err != nil {
		code = 2
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
	}
	return code, out.String(), errb.String()
}

var _ = Describe("nisim regress", func() {
	It("lists its jobs with their repro commands", func() {
		code, out, _ := nisim("regress", "--list", "--scale", "0.001", "--system", "lci", "--seed", "4")
		Expect(code).To(Equal(0))
		Expect(out).To(MatchRegexp(`(?m)^lci#0\s+~\d+\s+bin/nisim run lci-traffic --seed \d+ --set platform=`))
		Expect(out).NotTo(ContainSubstring("mesh#"))
	})

	It("refuses bad usage with exit status 2", func() {
		for _, args := range [][]string{
			{"regress", "--system", "shrimp"},
			{"regress", "--scale", "0"},
			{"regress", "--jobs", "0"},
			{"regress", "extra"},
		} {
			code, _, errOut := nisim(args...)
			Expect(code).To(Equal(2), "%v", args)
			Expect(errOut).To(HavePrefix("nisim: "))
		}
	})

	It("runs a small tier and passes", func() {
		code, out, errOut := nisim("regress", "--scale", "0.0005", "--system", "atm", "--system", "mchub", "--jobs", "2")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(`(?m)^atm\s+2\s+\d+\s+500\s+0\s+0\s`))
		Expect(out).To(MatchRegexp(`(?m)^mchub\s+2\s+\d+\s+500\s+0\s+0\s`))
		Expect(errOut).To(MatchRegexp(`(?m)^\[1/4\] ok `))
	})

	It("exits 1 when a job breaks a checker rule, printing the command that reproduces it", func() {
		systems, cat := faultyTier()
		code, out, errOut := regressOn(systems, cat, "--scale", "0.005", "--jobs", "2")
		Expect(code).To(Equal(1))
		Expect(errOut).To(ContainSubstring("FAIL faulty#"))
		Expect(out).To(MatchRegexp(`(?m)^faulty#\d+: checker: .*\[faulty.rule\] fault injected\n  bin/nisim run faulty --seed \d+ --set fail=true$`))
		Expect(out).NotTo(ContainSubstring("--set fail=false"))
	})
})
