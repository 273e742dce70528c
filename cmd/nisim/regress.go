package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/nisim/nisim/verify/regress"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/spf13/cobra"
)

type regressFlags struct {
	systems []string
	scale   float64
	jobs    int
	seed    uint64
	list    bool
}

func newRegress() *cobra.Command { return newRegressOn(regress.Systems(), catalog()) }

// newRegressOn is the regress command on the given systems and scenarios
// (the specs give it a broken one).
func newRegressOn(systems []*regress.System, cat scenario.Catalog) *cobra.Command {
	var f regressFlags
	c := &cobra.Command{
		Use:   "regress",
		Short: "run the regression tier: randomised runs of every system, checkers on, >= 10^6 transactions each",
		Long: `Run the regression tier: for every system (mesh, myrinet, atm, mchub,
telegraphos, lci) randomised scenario runs with every checker on, adding up
to at least 10^6 transactions per system (times --scale), as independent
seeded jobs on --jobs workers. A line per finished job goes to standard
error; the summary table and, for every failing job, the 'nisim run'
command that reproduces it alone go to standard output.
Exit status: 0 all jobs passed and every system reached its volume, 1
otherwise, 2 bad usage.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return runRegress(c, f, systems, cat) },
	}
	fl := c.Flags()
	fl.StringArrayVar(&f.systems, "system", nil, "run only `NAME` (repeatable: mesh, myrinet, atm, mchub, telegraphos, lci)")
	fl.Float64Var(&f.scale, "scale", 1, "scale the volume by `F` (0.01 for a quick run)")
	fl.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "run `N` jobs at once")
	fl.Uint64Var(&f.seed, "seed", 1, "base seed of every job's seed and parameters")
	fl.BoolVar(&f.list, "list", false, "print the jobs with their repro commands and exit")
	return c
}

func runRegress(c *cobra.Command, f regressFlags, systems []*regress.System, cat scenario.Catalog) error {
	if f.jobs < 1 {
		return usageErr("--jobs: %d must be at least 1", f.jobs)
	}
	jobs, err := regress.Plan(systems, regress.Options{Systems: f.systems, Scale: f.scale, Seed: f.seed})
	if err != nil {
		return usageErr("--%v", err)
	}
	if err := regress.Lookup(cat, jobs); err != nil {
		return usageErr("%v", err)
	}
	out := c.OutOrStdout()
	if f.list {
		for _, j := range jobs {
			fmt.Fprintf(out, "%-14s ~%-9.0f %s\n", j.Name(), j.Expect, j.Repro())
		}
		return nil
	}
	fmt.Fprintf(c.ErrOrStderr(), "nisim regress: %d jobs on %d workers (scale %g, seed %d)\n", len(jobs), f.jobs, f.scale, f.seed)
	start := time.Now()
	results := regress.Run(cat, jobs, f.jobs, c.ErrOrStderr())
	sum := regress.Summarize(results, f.scale)
	sum.Wall = time.Since(start)
	sum.Print(out)
	if cpu, ok := regress.CPUTime(); ok {
		fmt.Fprintf(out, "CPU time (user+system, this process) %.0fs\n", cpu.Seconds())
	}
	if sum.Failed() {
		return failErr(fmt.Errorf("regress: a job failed or a system fell short of its volume (see the table)"))
	}
	return nil
}
