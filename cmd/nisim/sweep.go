package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/nisim/nisim/internal/outpath"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/spf13/cobra"
)

func newSweep() *cobra.Command {
	var (
		key, values, csvPath, svgPath, y, config string
		sets, mutate                             []string
		seed                                     uint64
		seeds                                    int
		logY                                     bool
	)
	c := &cobra.Command{
		Use:   "sweep SCENARIO",
		Short: "run a scenario over a range of one parameter: a table, a CSV file and an SVG plot",
		Long: `Run SCENARIO once per value of --key (default injection_rate) and seed, on
its defaults overridden by --config and --set, and print a latency-versus-load
table. --csv writes every metric of every run with its status (ok, saturated,
or failed: reason), whatever the runs did; --svg plots --y (default latency;
several metrics of one unit, comma-separated, are several series) against the
swept value, with units on both axes, the scenario's reference line (the
zero-load latency), saturated points marked and failed runs listed under the
title. With --seeds N every value runs N seeds (--seed, --seed+1, ...): the
plot shows the mean with min-max bars. An unknown --y metric is refused before
anything runs; the exit status is 1 if a run failed (after the CSV and SVG are
written).`,
		Args: exactArgs(1, "a scenario name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := catalog().Lookup(args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			var vals []float64
			for _, f := range strings.Split(values, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil {
					return usageErr("--values: %q is not a number", f)
				}
				vals = append(vals, v)
			}
			var ys []string
			for _, f := range strings.Split(y, ",") {
				if f = strings.TrimSpace(f); f != "" {
					ys = append(ys, f)
				}
			}
			if len(ys) == 0 {
				return usageErr("--y: no metric named")
			}
			for _, p := range []struct{ flag, path string }{{"--csv", csvPath}, {"--svg", svgPath}} {
				if p.path == outpath.Stdout {
					return usageErr("%s -: standard output is not an output of sweep (it prints the table); name a file", p.flag)
				}
			}
			if err := outpath.Check([]outpath.Path{{Flag: "--csv", Path: csvPath}, {Flag: "--svg", Path: svgPath}},
				[]outpath.Path{{Flag: "--config", Path: config}}); err != nil {
				return inputErr(err)
			}
			var muts map[string]int
			for _, m := range mutate {
				if muts == nil {
					muts = map[string]int{}
				}
				if err := env.ParseMutation(muts, m); err != nil {
					return usageErr("--mutate: %v", err)
				}
			}
			var outs []*atomicfile.File
			for _, path := range []string{csvPath, svgPath} {
				if path == "" {
					outs = append(outs, nil)
					continue
				}
				f, err := atomicfile.Create(path)
				if err != nil {
					for _, o := range outs {
						if o != nil {
							o.Abort()
						}
					}
					return inputErr(err)
				}
				outs = append(outs, f)
			}
			abort := func() {
				for _, o := range outs {
					if o != nil {
						o.Abort()
					}
				}
			}
			res, err := scenario.Sweep(s, scenario.SweepSpec{File: config, Sets: sets, Key: key, Values: vals,
				Seed: seed, Seeds: seeds, Y: ys, Mutations: muts, Done: sweepProgress(cmd)})
			if err != nil {
				abort()
				return inputErr(err)
			}
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
			head := key
			if seeds > 1 {
				head += "\tseed"
			}
			head += "\t" + strings.Join(ys, "\t")
			// The accepted load beside the plotted metrics, when the
			// scenario measures it and it is not one of them.
			_, hasAcc := res.Def("accepted")
			showAcc := hasAcc && !slices.Contains(ys, "accepted")
			if showAcc {
				head += "\taccepted"
			}
			fmt.Fprintf(tw, "%s\tstatus\t\n", head)
			for _, p := range res.Points {
				row := strconv.FormatFloat(p.Value, 'g', -1, 64)
				if seeds > 1 {
					row += "\t" + strconv.FormatUint(p.Seed, 10)
				}
				for _, m := range ys {
					v, _ := p.Get(m)
					row += fmt.Sprintf("\t%.2f", v)
				}
				if showAcc {
					acc, _ := p.Get("accepted")
					row += fmt.Sprintf("\t%.4f", acc)
				}
				fmt.Fprintf(tw, "%s\t%s\t\n", row, p.StatusText())
			}
			tw.Flush()
			if outs[0] != nil {
				if err := scenario.WriteCSV(outs[0], res); err != nil {
					abort()
					return inputErr(err)
				}
			}
			if outs[1] != nil {
				title := s.Name + ": " + strings.Join(ys, ", ") + " vs " + key
				if err := scenario.WriteSVG(outs[1], res, scenario.PlotOptions{Title: title, Y: ys, LogY: logY}); err != nil {
					abort()
					return inputErr(err)
				}
			}
			for i, o := range outs {
				if o == nil {
					continue
				}
				if err := o.Commit(); err != nil {
					abort()
					return inputErr(err)
				}
				fmt.Fprintf(out, "%s: %s\n", []string{"csv", "svg"}[i], o.Path())
			}
			if failed := res.Failed(); len(failed) > 0 {
				return failErr(fmt.Errorf("%s: %d of %d runs failed, first at %s=%g: %s",
					s.Name, len(failed), len(res.Points), key, failed[0].Value, failed[0].Reason))
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&key, "key", "injection_rate", "the parameter to sweep")
	fl.StringVar(&values, "values", "0.01,0.05,0.1,0.2,0.3,0.35,0.4,0.45", "comma-separated `VALUES` of the key")
	fl.StringVar(&y, "y", "latency", "the `METRICS` to tabulate and plot (comma-separated, one unit)")
	fl.StringVar(&csvPath, "csv", "", "write the results as CSV to `FILE`")
	fl.StringVar(&svgPath, "svg", "", "write an SVG plot to `FILE`")
	fl.BoolVar(&logY, "logy", false, "plot the y axis on a log scale")
	addProgressFlag(c)
	fl.IntVar(&seeds, "seeds", 1, fmt.Sprintf("run every value with `N` seeds, --seed upwards (at most %d)", scenario.MaxSeeds))
	fl.StringArrayVar(&sets, "set", nil, "override a parameter: `key=value` (repeatable)")
	fl.StringVar(&config, "config", "", "read parameters from a TOML `FILE`")
	fl.Uint64Var(&seed, "seed", 1, "run seed (the first, with --seeds)")
	fl.StringArrayVar(&mutate, "mutate", nil, "switch on a test-only fault in every run, `name=N` (repeatable; 'nisim list --mutations')")
	return c
}
