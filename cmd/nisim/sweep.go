package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/nisim/nisim/internal/outpath"
	"github.com/nisim/nisim/verify/jobs"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/spf13/cobra"
)

// The one-key shorthand's defaults: a load sweep.
const (
	defaultKey    = "injection_rate"
	defaultValues = "0.01,0.05,0.1,0.2,0.3,0.35,0.4,0.45"
)

func newSweep() *cobra.Command {
	var (
		key, values, csvPath, svgPath, y, config, plan string
		grids, sets, mutate                            []string
		seed                                           uint64
		seeds, workers                                 int
		logY                                           bool
	)
	c := &cobra.Command{
		Use:   "sweep SCENARIO",
		Short: "run a scenario over a grid of parameters on all cores: a table, a CSV file and an SVG plot",
		Long: `Run SCENARIO at every point of a grid of parameters, on its defaults
overridden by --config and --set, and print a table.

--grid key=v1,v2,... names a key and its values; several --grid are the
cartesian product, in the order given, the last key fastest. --key K --values
a,b,c is the one-key shorthand (default: injection_rate over a load range);
the two forms cannot be mixed. With --seeds N every point runs N seeds
(--seed, --seed+1, ...): the table and the plot show the mean and the 95%
confidence interval of the mean (Student t, N-1 degrees of freedom).

Points run in parallel on -j workers (default: the cores), each in its own
simulation; the results are placed by point, so the CSV and the SVG are the
same bytes for any -j. --csv writes one row per run: one column per grid key
(with its unit), the seed, every metric and the status (ok, saturated, or
failed: reason), whatever the runs did. --svg plots --y (default latency, or
the scenario's first metric if it has no latency; several metrics of one unit,
comma-separated) against the first grid key, one
line per combination of the other keys, with units on both axes, the
scenario's reference line (the zero-load latency), saturated points marked
and failed runs listed under the title.

Across machines: --plan DIR writes DIR/manifest.json (every job's scenario,
full configuration, seed and result file; the plot options) and runs nothing;
DIR must be new or empty, or hold a previous plan none of whose jobs has run.
'nisim job DIR --index I' runs job I (the index also from SLURM_ARRAY_TASK_ID
or JOB_COMPLETION_INDEX), and 'nisim sweep merge DIR' writes the same CSV and
SVG as the local sweep.

An unknown key or --y metric, or a value the scenario refuses, is refused
before anything runs (exit 2); the exit status is 1 if a run failed (after the
CSV and SVG are written).`,
		Args: exactArgs(1, "a scenario name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := catalog().Lookup(args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			fl := cmd.Flags()
			if len(grids) > 0 && (fl.Changed("key") || fl.Changed("values")) {
				return usageErr("--grid and --key/--values: give one form (--key K --values V is --grid K=V)")
			}
			if len(grids) == 0 {
				grids = []string{key + "=" + values}
			}
			grid, err := parseGrid(grids, !fl.Changed("grid"))
			if err != nil {
				return err
			}
			// Without --y the planner picks the default (jobs.DefaultY),
			// which a scenario that does not list its metrics knows only
			// once its runs have measured them.
			var ys []string
			if fl.Changed("y") {
				if ys, err = parseY(y); err != nil {
					return err
				}
			}
			if workers < 1 {
				return usageErr("-j: %d must be at least 1", workers)
			}
			spec := jobs.SweepSpec{File: config, Sets: sets, Grid: grid, Seed: seed, Seeds: seeds, Y: ys, LogY: logY,
				Mutations: mutate}
			if plan != "" {
				if csvPath != "" || svgPath != "" {
					return usageErr("--plan with --csv or --svg: give them to 'nisim sweep merge DIR'")
				}
				if err := outpath.Check(nil, []outpath.Path{{Flag: "--config", Path: config}}); err != nil {
					return inputErr(err)
				}
				m, err := jobs.PlanSweep(s, spec)
				if err != nil {
					return inputErr(err)
				}
				if err := jobs.Write(plan, m); err != nil {
					return inputErr(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d jobs planned in %s\nrun:   nisim job %s --index I   (I = 0 to %d)\nmerge: nisim sweep merge %s\n",
					s.Name, len(m.Jobs), plan, plan, len(m.Jobs)-1, plan)
				return nil
			}
			outs, err := createOutputs(csvPath, svgPath, []outpath.Path{{Flag: "--config", Path: config}})
			if err != nil {
				return err
			}
			m, res, err := jobs.Sweep(catalog(), s, spec, workers, sweepProgress(cmd))
			if err != nil {
				outs.abort()
				return inputErr(err)
			}
			return finishSweep(cmd, m, res, outs)
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&grids, "grid", nil, "sweep `KEY=V1,V2,...` (repeatable: the cartesian product, the last key fastest)")
	fl.StringVar(&key, "key", defaultKey, "the parameter to sweep (one-key shorthand for --grid)")
	fl.StringVar(&values, "values", defaultValues, "comma-separated `VALUES` of --key")
	fl.StringVar(&y, "y", jobs.DefaultY, "the `METRICS` to tabulate and plot (comma-separated, one unit; default latency if the scenario measures it, else its first metric)")
	fl.StringVar(&csvPath, "csv", "", "write the results as CSV to `FILE`")
	fl.StringVar(&svgPath, "svg", "", "write an SVG plot to `FILE`")
	fl.BoolVar(&logY, "logy", false, "plot the y axis on a log scale")
	fl.IntVarP(&workers, "jobs", "j", runtime.NumCPU(), "run `N` points at once")
	fl.StringVar(&plan, "plan", "", "write the jobs' manifest to `DIR` and run nothing (see 'nisim job', 'nisim sweep merge')")
	addProgressFlag(c)
	fl.IntVar(&seeds, "seeds", 1, fmt.Sprintf("run every point with `N` seeds, --seed upwards (at most %d)", scenario.MaxSeeds))
	fl.StringArrayVar(&sets, "set", nil, "override a parameter: `key=value` (repeatable)")
	fl.StringVar(&config, "config", "", "read parameters from a TOML `FILE`")
	fl.Uint64Var(&seed, "seed", 1, "run seed (the first, with --seeds)")
	fl.StringArrayVar(&mutate, "mutate", nil, "switch on a test-only fault in every run, `name=N` (repeatable; 'nisim list --mutations')")
	c.AddCommand(newSweepMerge())
	return c
}

func newSweepMerge() *cobra.Command {
	var csvPath, svgPath string
	c := &cobra.Command{
		Use:   "merge DIR",
		Short: "merge the results of a planned sweep's jobs: the same table, CSV and SVG as the local sweep",
		Long: `Read DIR/manifest.json (written by 'nisim sweep --plan DIR') and the results
its jobs wrote ('nisim job DIR --index I'), print the table and write the CSV
(--csv, default DIR/sweep.csv) and the SVG (--svg, default DIR/sweep.svg):
byte for byte what the local 'nisim sweep' of the same points writes.
Missing jobs are rows with status "missing" and are listed on standard error;
failed jobs are named there too.
Exit status: 0 every job ran and passed, 1 a job is missing or failed (after
the CSV and SVG are written), 2 bad usage, a corrupt or newer manifest, or a
result file that does not match its manifest entry.`,
		Args: exactArgs(1, "the plan directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			m, err := jobs.Load(dir)
			if err != nil {
				return inputErr(err)
			}
			if m.Kind != jobs.KindSweep {
				return usageErr("%s: a plan of kind %q, not a sweep", dir, m.Kind)
			}
			if csvPath == "" {
				csvPath = filepath.Join(dir, "sweep.csv")
			}
			if svgPath == "" {
				svgPath = filepath.Join(dir, "sweep.svg")
			}
			results, missing, err := jobs.Collect(dir, m)
			if err != nil {
				return inputErr(err)
			}
			res, err := jobs.MergeSweep(m, results)
			if err != nil {
				return inputErr(err)
			}
			outs, err := createOutputs(csvPath, svgPath, []outpath.Path{{Flag: "DIR", Path: filepath.Join(dir, jobs.ManifestName)}})
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			const shown = 20
			failed := failedJobs(results)
			for k, i := range failed {
				if k == shown {
					fmt.Fprintf(errw, "nisim: sweep merge: and %d more failed jobs (see the CSV)\n", len(failed)-shown)
					break
				}
				fmt.Fprintf(errw, "nisim: sweep merge: job %d failed (%s, seed %d): %s\n", i, res.GridText(res.Points[i].Grid), m.Jobs[i].Seed, results[i].Reason)
			}
			ferr := finishSweep(cmd, m, res, outs)
			if len(missing) > 0 {
				var ee *exitError
				if ferr != nil && (!errors.As(ferr, &ee) || ee.code != 1) {
					return ferr
				}
				return failErr(fmt.Errorf("%d of %d jobs missing: %s", len(missing), len(m.Jobs), ranges(missing)))
			}
			return ferr
		},
	}
	c.Flags().StringVar(&csvPath, "csv", "", "write the CSV to `FILE` (default DIR/sweep.csv)")
	c.Flags().StringVar(&svgPath, "svg", "", "write the SVG to `FILE` (default DIR/sweep.svg)")
	return c
}

// failedJobs returns the indices of the failed results.
func failedJobs(results []*jobs.Result) []int {
	var out []int
	for i, r := range results {
		if r != nil && r.Failed() {
			out = append(out, i)
		}
	}
	return out
}

// ranges writes increasing indices as "0-3,7,9-10".
func ranges(idx []int) string {
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(idx[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// parseGrid reads the --grid flags (key=v1,v2,...), or the --key and
// --values shorthand (its errors name --values).
func parseGrid(grids []string, shorthand bool) ([]scenario.Axis, error) {
	var out []scenario.Axis
	for _, g := range grids {
		k, vs, ok := strings.Cut(g, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			if shorthand {
				return nil, usageErr("--key: empty key")
			}
			return nil, usageErr("--grid %q: want key=v1,v2,...", g)
		}
		flag := "--grid " + k
		if shorthand {
			flag = "--values"
		}
		a := scenario.Axis{Key: k}
		for _, f := range strings.Split(vs, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				return nil, usageErr("%s: empty value in %q", flag, vs)
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, usageErr("%s: %q is not a number", flag, f)
			}
			a.Values = append(a.Values, v)
		}
		out = append(out, a)
	}
	return out, nil
}

// parseY reads --y (comma-separated metrics).
func parseY(y string) ([]string, error) {
	var ys []string
	for _, f := range strings.Split(y, ",") {
		if f = strings.TrimSpace(f); f != "" {
			ys = append(ys, f)
		}
	}
	if len(ys) == 0 {
		return nil, usageErr("--y: no metric named")
	}
	return ys, nil
}

// sweepOutputs are a sweep's CSV and SVG files being written (nil when not
// asked for).
type sweepOutputs struct{ csv, svg *atomicfile.File }

func (o sweepOutputs) abort() {
	for _, f := range []*atomicfile.File{o.csv, o.svg} {
		if f != nil {
			f.Abort()
		}
	}
}

// createOutputs checks and creates --csv and --svg before anything runs.
func createOutputs(csvPath, svgPath string, ins []outpath.Path) (sweepOutputs, error) {
	var o sweepOutputs
	for _, p := range []struct{ flag, path string }{{"--csv", csvPath}, {"--svg", svgPath}} {
		if p.path == outpath.Stdout {
			return o, usageErr("%s -: standard output is not an output of sweep (it prints the table); name a file", p.flag)
		}
	}
	if err := outpath.Check([]outpath.Path{{Flag: "--csv", Path: csvPath}, {Flag: "--svg", Path: svgPath}}, ins); err != nil {
		return o, inputErr(err)
	}
	var err error
	if csvPath != "" {
		if o.csv, err = atomicfile.Create(csvPath); err != nil {
			return o, inputErr(err)
		}
	}
	if svgPath != "" {
		if o.svg, err = atomicfile.Create(svgPath); err != nil {
			o.abort()
			return o, inputErr(err)
		}
	}
	return o, nil
}

// finishSweep prints the table, writes the CSV and SVG and returns the
// exit error for failed runs: the one ending of the local sweep and of
// merge.
func finishSweep(cmd *cobra.Command, m *jobs.Manifest, res *scenario.SweepResult, outs sweepOutputs) error {
	out := cmd.OutOrStdout()
	sw := m.Sweep
	if err := scenario.WriteTable(out, res, sw.Y); err != nil {
		outs.abort()
		return inputErr(err)
	}
	write := func(label string, f *atomicfile.File, w func(io.Writer) error) error {
		if f == nil {
			return nil
		}
		if err := w(f); err != nil {
			return err
		}
		if err := f.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %s\n", label, f.Path())
		return nil
	}
	if err := write("csv", outs.csv, func(w io.Writer) error { return scenario.WriteCSV(w, res) }); err != nil {
		outs.abort()
		return inputErr(err)
	}
	if err := write("svg", outs.svg, func(w io.Writer) error {
		return scenario.WriteSVG(w, res, scenario.PlotOptions{Title: sw.Title, Y: sw.Y, LogY: sw.LogY})
	}); err != nil {
		outs.abort()
		return inputErr(err)
	}
	if failed := res.Failed(); len(failed) > 0 {
		return failErr(fmt.Errorf("%s: %d of %d runs failed, first at %s: %s",
			res.Scenario, len(failed), len(res.Points), res.GridText(failed[0].Grid), failed[0].Reason))
	}
	return nil
}
