package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/nisim/nisim/verify/jobs"
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
	plan    string
}

func newRegress() *cobra.Command { return newRegressOn(regress.Systems(), catalog()) }

// newRegressOn is the regress command on the given systems and scenarios
// (the specs give it a broken one).
func newRegressOn(systems []*regress.System, cat scenario.Catalog) *cobra.Command {
	var f regressFlags
	names := make([]string, len(systems))
	for i, s := range systems {
		names[i] = s.Name
	}
	list := strings.Join(names, ", ")
	c := &cobra.Command{
		Use:   "regress",
		Short: "run the regression tier: randomised runs of every system, checkers on, >= 10^6 transactions each",
		Long: `Run the regression tier: for every system (` + list + `)
randomised scenario runs with every checker on, adding up to at least 10^6 transactions per system (times --scale), as
independent seeded jobs on --jobs workers. A line per finished job goes to
standard error; the summary table and, for every failing job, the 'nisim run'
command that reproduces it alone go to standard output.
The jobs run through the same manifest as a planned tier: --plan DIR writes
the jobs to DIR/manifest.json and runs nothing; 'nisim job DIR --index I'
(or a Slurm array task, deploy/slurm/submit.sh) runs job I, and 'nisim
regress merge DIR' prints the same table from the results.
Exit status: 0 all jobs passed and every system reached its volume, 1
otherwise, 2 bad usage.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return runRegress(c, f, systems, cat) },
	}
	fl := c.Flags()
	fl.StringArrayVar(&f.systems, "system", nil, "run only `NAME` (repeatable: "+list+")")
	fl.Float64Var(&f.scale, "scale", 1, "scale the volume by `F` (0.01 for a quick run)")
	fl.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "run `N` jobs at once")
	fl.Uint64Var(&f.seed, "seed", 1, "base seed of every job's seed and parameters")
	fl.BoolVar(&f.list, "list", false, "print the jobs with their repro commands and exit")
	fl.StringVar(&f.plan, "plan", "", "write the jobs as a manifest into `DIR` and run nothing (then nisim job, nisim regress merge)")
	c.AddCommand(newRegressMerge(systems))
	return c
}

// newRegressMerge is `nisim regress merge DIR` on the given systems.
func newRegressMerge(systems []*regress.System) *cobra.Command {
	return &cobra.Command{
		Use:   "merge DIR",
		Short: "print the summary table of a regression tier planned with --plan from its jobs' results",
		Long: `Read the results the jobs of the tier planned in DIR ('nisim regress --plan
DIR') wrote with 'nisim job', judge each as the local run does, and print
the same summary table (job times are the jobs' own; no wall time) with the
command that reproduces every failing job. A job without a result file is
missing: it counts as failed, named with its index and file.
Exit status: 0 all jobs passed and every system reached its volume, 1 a
job failed or is missing or a system fell short, 2 bad usage, or a manifest
or result file that cannot be read or belongs to another plan.`,
		Args: exactArgs(1, "the plan directory"),
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			sum, opts, missing, err := regress.Merge(systems, dir)
			if err != nil {
				return inputErr(err)
			}
			fmt.Fprintf(c.ErrOrStderr(), "nisim regress merge: %d jobs of %s (scale %g, seed %d), %d missing\n", len(sum.Results), dir, opts.Scale, opts.Seed, len(missing))
			sum.Print(c.OutOrStdout())
			if len(missing) > 0 {
				var idx []string
				for _, i := range missing {
					idx = append(idx, strconv.Itoa(i))
				}
				return failErr(fmt.Errorf("%d of %d jobs have no result (index %s): run them with nisim job %s --index I", len(missing), len(sum.Results), strings.Join(idx, ", "), dir))
			}
			if sum.Failed() {
				return failErr(fmt.Errorf("a job failed or a system fell short of its volume (see the table)"))
			}
			return nil
		},
	}
}

func runRegress(c *cobra.Command, f regressFlags, systems []*regress.System, cat scenario.Catalog) error {
	if f.jobs < 1 {
		return usageErr("--jobs: %d must be at least 1", f.jobs)
	}
	list, err := regress.Plan(systems, regress.Options{Systems: f.systems, Scale: f.scale, Seed: f.seed})
	if err != nil {
		return usageErr("--%v", err)
	}
	if err := regress.Lookup(cat, list); err != nil {
		return usageErr("%v", err)
	}
	out := c.OutOrStdout()
	if f.plan != "" {
		if f.list {
			return usageErr("--plan and --list: give one")
		}
		m, err := regress.Manifest(list, regress.Options{Systems: f.systems, Scale: f.scale, Seed: f.seed})
		if err != nil {
			return inputErr(err)
		}
		if err := jobs.Write(f.plan, m); err != nil {
			return inputErr(err)
		}
		fmt.Fprintf(out, "planned %d jobs in %s: run each with 'nisim job %s --index I' (I from 0 to %d) or as a Slurm array (deploy/slurm/submit.sh %s), then 'nisim regress merge %s'\n",
			len(list), f.plan, f.plan, len(list)-1, f.plan, f.plan)
		return nil
	}
	if f.list {
		for _, j := range list {
			fmt.Fprintf(out, "%-14s ~%-9.0f %s\n", j.Name(), j.Expect, j.Repro())
		}
		return nil
	}
	fmt.Fprintf(c.ErrOrStderr(), "nisim regress: %d jobs on %d workers (scale %g, seed %d)\n", len(list), f.jobs, f.scale, f.seed)
	start := time.Now()
	results := regress.Run(cat, list, f.jobs, c.ErrOrStderr())
	sum := regress.Summarize(results, f.scale)
	sum.Wall = time.Since(start)
	sum.Print(out)
	if cpu, ok := regress.CPUTime(); ok {
		fmt.Fprintf(out, "CPU time (user+system, this process) %.0fs\n", cpu.Seconds())
	}
	if sum.Failed() {
		return failErr(fmt.Errorf("a job failed or a system fell short of its volume (see the table)"))
	}
	return nil
}
