package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/jobs"
	"github.com/nisim/nisim/verify/regress"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/spf13/cobra"
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
	// Under a root named nisim, so that the error line is the real one.
	root := &cobra.Command{Use: "nisim", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newRegressOn(systems, cat))
	root.SetArgs(append([]string{"regress"}, args...))
	root.SetOut(&out)
	root.SetErr(&errb)
	cmd, err := root.ExecuteC()
	code := 0
	if err != nil {
		code = 2
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		fmt.Fprintln(&errb, errorLine(cmd, err))
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
			{"regress", "--system", "nosuch"},
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
		Expect(out).To(MatchRegexp(`(?m)^faulty#\d+: checkers: .*\[faulty.rule\] fault injected\n  bin/nisim run faulty --seed \d+ --set fail=true$`))
		Expect(out).NotTo(ContainSubstring("--set fail=false"))
		// One prefix (it read "nisim: regress: regress: a job failed").
		Expect(errOut).To(HaveSuffix("\nnisim: regress: a job failed or a system fell short of its volume (see the table)\n"))
	})

	It("plans the same jobs into a directory, runs them with nisim job and merges them into the local run's table", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "plan")
		args := []string{"regress", "--scale", "0.0005", "--system", "atm", "--system", "mchub", "--seed", "3"}
		code, out, errOut := nisim(append(args, "--plan", dir)...)
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(Equal(fmt.Sprintf("planned 4 jobs in %[1]s: run each with 'nisim job %[1]s --index I' (I from 0 to 3) or as a Slurm array (deploy/slurm/submit.sh %[1]s), then 'nisim regress merge %[1]s'\n", dir)))
		Expect(filepath.Join(dir, "results")).To(BeADirectory())

		// Nothing has run: the merge names every job missing.
		code, out, errOut = nisim("regress", "merge", dir)
		Expect(code).To(Equal(1))
		Expect(errOut).To(HaveSuffix("nisim: regress merge: 4 of 4 jobs have no result (index 0, 1, 2, 3): run them with nisim job " + dir + " --index I\n"))
		Expect(out).To(ContainSubstring("atm#0: missing: no result results/000000.json"))

		// The jobs as an array's tasks would run them.
		for i := range 4 {
			code, out, errOut = nisim("job", dir, "--index", fmt.Sprint(i))
			Expect(code).To(Equal(0), out+errOut)
		}
		code, merged, errOut := nisim("regress", "merge", dir)
		Expect(code).To(Equal(0), merged+errOut)
		Expect(errOut).To(Equal(fmt.Sprintf("nisim regress merge: 4 jobs of %s (scale 0.0005, seed 3), 0 missing\n", dir)))

		code, local, errOut := nisim(args...)
		Expect(code).To(Equal(0), local+errOut)
		// The same table but for the times: the job times (and per job-s)
		// columns, and the local run's wall and CPU times.
		times := regexp.MustCompile(`\s+\d+s\s+(\d+)?(\n|$)`)
		strip := func(s string) string {
			var keep []string
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "wall time ") || strings.HasPrefix(l, "CPU time ") {
					continue
				}
				keep = append(keep, times.ReplaceAllString(l, " TIMES"))
			}
			return strings.Join(keep, "\n")
		}
		Expect(strip(merged)).To(Equal(strip(local)))
		Expect(merged).To(MatchRegexp(`(?m)^atm\s+2\s+\d+\s+500\s+0\s+0\s`))
		Expect(local).To(ContainSubstring("wall time "))
		Expect(merged).NotTo(ContainSubstring("wall time "))
	})

	It("refuses bad plans and merges with exit status 2, naming the problem", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o666)).To(Succeed())
		code, _, errOut := nisim("regress", "--scale", "0.0005", "--system", "atm", "--plan", dir)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("not empty (holds notes.txt)"))
		code, _, errOut = nisim("regress", "--scale", "0.0005", "--list", "--plan", filepath.Join(dir, "p"))
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--plan and --list: give one"))
		code, _, errOut = nisim("regress", "merge", filepath.Join(dir, "nothing"))
		Expect(code).To(Equal(2))
		Expect(errOut).To(HavePrefix("nisim: regress merge: "))
		code, _, _ = nisim("regress", "merge")
		Expect(code).To(Equal(2))

		// A sweep's plan is not a regression tier's.
		sweep := filepath.Join(dir, "sweep")
		code, _, errOut = nisim("sweep", "atm-star", "--grid", "injection_rate=0.1", "--set", "measure_periods=1", "--plan", sweep)
		Expect(code).To(Equal(0), errOut)
		code, _, errOut = nisim("regress", "merge", sweep)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`manifest of kind "sweep" is not a regression tier`))
	})

	It("merges a failing planned tier like the local run: exit 1 and the repro lines", func() {
		systems, cat := faultyTier()
		dir := filepath.Join(GinkgoT().TempDir(), "plan")
		code, _, errOut := regressOn(systems, cat, "--scale", "0.005", "--plan", dir)
		Expect(code).To(Equal(0), errOut)
		m, err := jobs.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		for i := range m.Jobs {
			_, err := jobs.RunJob(cat, dir, m, i) // nisim job on this catalog
			Expect(err).NotTo(HaveOccurred())
		}
		code, merged, errOut := regressOn(systems, cat, "merge", dir)
		Expect(code).To(Equal(1))
		Expect(errOut).To(HaveSuffix("\nnisim: regress merge: a job failed or a system fell short of its volume (see the table)\n"))
		code, local, _ := regressOn(systems, cat, "--scale", "0.005")
		Expect(code).To(Equal(1))
		failing := regexp.MustCompile(`(?m)^faulty#\d+: .*\n  bin/nisim run .*$`)
		Expect(failing.FindAllString(merged, -1)).To(Equal(failing.FindAllString(local, -1)))
		Expect(failing.FindAllString(merged, -1)).NotTo(BeEmpty())
	})
})
