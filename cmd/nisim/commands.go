package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/nisim/nisim/internal/outpath"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/atmscen"
	"github.com/nisim/nisim/verify/scenario/cashscen"
	"github.com/nisim/nisim/verify/scenario/demo"
	"github.com/nisim/nisim/verify/scenario/lciscen"
	"github.com/nisim/nisim/verify/scenario/mcscen"
	"github.com/nisim/nisim/verify/scenario/noc"
	"github.com/nisim/nisim/verify/scenario/rwscen"
	"github.com/nisim/nisim/verify/scenario/shrimpscen"
	"github.com/nisim/nisim/verify/scenario/tgscen"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves/vcd"
	"github.com/spf13/cobra"
)

// catalog lists every scenario, in the order `nisim list` shows them.
func catalog() scenario.Catalog {
	c := scenario.Catalog{demo.Scenario()}
	c = append(c, noc.Scenarios()...)
	c = append(c, tgscen.Scenarios()...)
	c = append(c, lciscen.Scenarios()...)
	c = append(c, mcscen.Scenarios()...)
	c = append(c, cashscen.Scenarios()...)
	c = append(c, cashscen.RandomScenario())
	c = append(c, shrimpscen.Scenarios()...)
	c = append(c, atmscen.Scenarios()...)
	c = append(c, rwscen.Scenario())
	return c
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "nisim",
		Short:         "cycle-level models of 1990s cluster network interfaces",
		Long:          "nisim runs cycle-level models of the network interfaces of Telegraphos, Myrinet/LCI, Memory Channel, SHRIMP and FORE ATM, checks them against golden transaction traces and dumps waveforms.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Version = version()
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see '%s --help')", err, c.CommandPath())
	})
	root.SetHelpCommand(newHelp())
	defer addCompletions(root)
	root.AddCommand(newList(), newRun(), newSweep(), newJob(), newConfig(), newVCD(), newTrace(), newRegress())
	return root
}

// newHelp is `nisim help [command]`; cobra's own prints "Unknown help
// topic" for a command that does not exist and exits 0: here it is a usage
// error, status 2.
func newHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "help about any command",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usageErr("unknown help topic %q (see 'nisim --help')", strings.Join(args, " "))
			}
			return cmd.Help()
		},
	}
}

// exactArgs is cobra.ExactArgs with a usage exit status and a hint.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("want %s, got %d argument(s) (see '%s --help')", what, len(args), c.CommandPath())
		}
		return nil
	}
}

func newList() *cobra.Command {
	var mutations bool
	c := &cobra.Command{
		Use:   "list",
		Short: "list the scenarios by system, with typical run times (or, with --mutations, the test-only faults)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(c.OutOrStdout(), 2, 8, 2, ' ', 0)
			if mutations {
				for _, m := range env.Mutations() {
					fmt.Fprintf(tw, "%s\t%s\n", m.Name, m.Doc)
				}
				return tw.Flush()
			}
			catalog().PrintList(c.OutOrStdout())
			return nil
		},
	}
	c.Flags().BoolVar(&mutations, "mutations", false, "list the test-only faults that --mutate switches on")
	return c
}

type runFlags struct {
	vcd, trace, config string
	seed               uint64
	sets               []string
	sel, excl          []string
	from, to           string
	limit              string
	stall              string
	mutate             []string
	printConfig        bool
	json               string
}

func newRun() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "run a scenario and print its report",
		Long: `Run a scenario on its embedded defaults, overridden by --config (a TOML
file) and then by each --set key=value (keys as in 'nisim config SCENARIO').
Unknown keys, values of the wrong type and impossible values are errors.
--vcd and --trace write a waveform dump and a transaction trace; both files
appear only when the run has finished. Outputs are checked before the run:
a device, directory, symbolic link, the same file twice or an input file is
refused; missing directories are created; - is standard output (the report
then goes to standard error).`,
		Args: exactArgs(1, "a scenario name"),
		RunE: func(c *cobra.Command, args []string) error { return runScenario(c, args[0], f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.vcd, "vcd", "", "write a VCD waveform dump to `FILE` (- for standard output)")
	fl.StringVar(&f.trace, "trace", "", "write the transaction trace to `FILE` (- for standard output)")
	fl.Uint64Var(&f.seed, "seed", 1, "run seed")
	fl.StringArrayVar(&f.sets, "set", nil, "override a parameter: `key=value` (repeatable)")
	fl.StringVar(&f.config, "config", "", "read parameters from a TOML `FILE` of at most 1 MiB (- for standard input; a device, pipe or directory is refused)")
	fl.StringArrayVar(&f.sel, "select", nil, "dump only signals or scopes matching `GLOB` (repeatable)")
	fl.StringArrayVar(&f.excl, "exclude", nil, "leave out signals or scopes matching `GLOB` (repeatable)")
	fl.StringVar(&f.from, "from", "", "start the dump at `TIME` (e.g. 10us)")
	fl.StringVar(&f.to, "to", "", "end the dump at `TIME`")
	fl.StringVar(&f.limit, "time-limit", "", "stop the simulation at `TIME`")
	fl.StringArrayVar(&f.mutate, "mutate", nil, "switch on a test-only fault, `name=N` (repeatable; 'nisim list --mutations'): a broken model, to see the checkers catch it")
	fl.StringVar(&f.stall, "stall-limit", "", "stop a run that holds work and makes no progress for `TIME` and print its stuck state (default 500us; off disables)")
	fl.BoolVar(&f.printConfig, "print-config", false, "print the effective parameters before running (as 'nisim config' prints them)")
	fl.StringVar(&f.json, "json", "", "write the report as JSON to `FILE` (- for standard output; the report then goes to standard error), also when the run fails")
	addProgressFlag(c)
	addGTKWFlag(c)
	return c
}

func parseTimeFlag(name, v string) (clock.Time, error) {
	if v == "" {
		return 0, nil
	}
	t, err := clock.ParseTime(v)
	if err != nil {
		return 0, usageErr("--%s: %v", name, err)
	}
	return t, nil
}

func runScenario(c *cobra.Command, name string, f runFlags) error {
	s, err := catalog().Lookup(name)
	if err != nil {
		return usageErr("%v", err)
	}
	p := s.Defaults()
	sources, err := configure(p, f.config, f.sets)
	if err != nil {
		return inputErr(err)
	}
	from, err := parseTimeFlag("from", f.from)
	if err != nil {
		return err
	}
	to, err := parseTimeFlag("to", f.to)
	if err != nil {
		return err
	}
	if to != 0 && to < from {
		return usageErr("--to %s is before --from %s", f.to, f.from)
	}
	limit, err := parseTimeFlag("time-limit", f.limit)
	if err != nil {
		return err
	}
	var muts map[string]int
	for _, m := range f.mutate {
		if muts == nil {
			muts = map[string]int{}
		}
		if err := env.ParseMutation(muts, m); err != nil {
			return usageErr("--mutate: %v", err)
		}
	}
	stall := clock.Time(-1)
	if f.stall != "off" {
		if stall, err = parseTimeFlag("stall-limit", f.stall); err != nil {
			return err
		}
		if f.stall != "" && stall == 0 {
			return usageErr("--stall-limit: must be a positive time or off (got %q)", f.stall)
		}
	}
	// Every output is checked before anything runs (outpath.Check); an
	// output on standard output sends the report to standard error.
	if err := outpath.Check([]outpath.Path{{Flag: "--vcd", Path: f.vcd}, {Flag: "--trace", Path: f.trace}, {Flag: "--json", Path: f.json},
		{Flag: "--gtkw", Path: saveFileOf(c, f.vcd)}}, []outpath.Path{{Flag: "--config", Path: f.config}}); err != nil {
		return inputErr(err)
	}
	out := c.OutOrStdout()
	if f.vcd == outpath.Stdout || f.trace == outpath.Stdout || f.json == outpath.Stdout {
		out = c.ErrOrStderr()
	}
	if f.printConfig {
		if err := scenario.WriteConfig(out, name, p, sources); err != nil {
			return inputErr(err)
		}
		fmt.Fprintln(out)
	}
	js, err := openJSON(f.json, c.OutOrStdout())
	if err != nil {
		return inputErr(err)
	}
	// finish writes the --json report (with the failure, if any) and
	// returns the run's error; an unwritable report is bad output.
	finish := func(rep *scenario.Report, e *env.Env, fail error) error {
		if err := js.write(scenario.JSONRun{Version: version(), Scenario: name, Seed: f.seed, Params: p,
			Sources: sources, Report: rep, Env: e, Failure: fail}); err != nil {
			return inputErr(err)
		}
		return fail
	}
	warnNoVCD(c.ErrOrStderr(), f)
	opts := scenario.Options{Seed: f.seed, VCD: f.vcd, Trace: f.trace, Select: f.sel, Exclude: f.excl,
		From: from, To: to, TimeLimit: limit, StallLimit: stall, Mutations: muts, Comment: fmt.Sprintf("nisim run %s, seed %d", name, f.seed),
		Stdout: c.OutOrStdout()}
	var done func(clock.Time, uint64)
	opts.Progress, opts.Phases, done = runProgress(c, limit)
	rep, e, violations, err := execWithView(c, s, p, opts, f)
	if done != nil && rep != nil {
		done(rep.Result.End, rep.Result.Events)
	}
	if err != nil {
		return finish(rep, e, execErr(err, rep, e, limit))
	}
	if f.vcd != "" {
		warnDump(c.ErrOrStderr(), e, from)
	}
	rep.Print(out)
	for _, p := range []struct{ what, path string }{{"waveform", f.vcd}, {"GTKWave save file", saveFileOf(c, f.vcd)}, {"trace", f.trace}, {"report (JSON)", f.json}} {
		if p.path != "" {
			fmt.Fprintf(out, "%s: %s\n", p.what, p.path)
		}
	}
	if violations != nil {
		fmt.Fprintln(c.ErrOrStderr(), violations)
		return finish(rep, e, failErr(fmt.Errorf("%s: the run broke a checker rule (details above)", name)))
	}
	if rep.Failed() {
		return finish(rep, e, failErr(fmt.Errorf("%s: a check failed", name)))
	}
	return finish(rep, e, nil)
}

// warnDump warns on w, one line each, about a dump that holds less than
// was asked for: a --select pattern that left no signal in it, and a
// --from window that starts after the end of the run.
func warnDump(w io.Writer, e *env.Env, from clock.Time) {
	for _, p := range e.Waves.UnusedSelects() {
		fmt.Fprintf(w, "nisim: run: warning: --select %q matched no signal: the VCD holds nothing from it\n", p)
	}
	if end := e.Now(); from > end {
		fmt.Fprintf(w, "nisim: run: warning: --from %s is after the end of the run (%s): the VCD holds no value change\n", from, end)
	}
}

// execErr gives an error of scenario.Exec its exit status. A run that
// started and stopped without a report (a ping-pong cut short by
// --time-limit, a stuck firmware) is a failed run, status 1, and names the
// time limit if there was one; a parameter the scenario refused while
// building (a *scenario.KeyError) and an output that could not be created
// or written are bad input, status 2.
func execErr(err error, rep *scenario.Report, e *env.Env, limit clock.Time) error {
	var ke *scenario.KeyError
	if rep != nil || e == nil || errors.As(err, &ke) {
		return inputErr(err)
	}
	if limit > 0 {
		return failErr(fmt.Errorf("%w (run with --time-limit %s)", err, limit))
	}
	return failErr(err)
}

// needSubcommand is the RunE of a command group (vcd, trace): without it
// cobra prints the group's help and exits 0 for a missing or misspelt
// subcommand. Both are usage errors, exit status 2; subs lists the
// subcommands for the message.
func needSubcommand(subs string) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageErr("want a subcommand (%s) (see '%s --help')", subs, c.CommandPath())
		}
		return usageErr("unknown subcommand %q, want %s (see '%s --help')", args[0], subs, c.CommandPath())
	}
}

func newVCD() *cobra.Command {
	v := &cobra.Command{Use: "vcd", Short: "waveform tools", Args: cobra.ArbitraryArgs, RunE: needSubcommand("lint")}
	v.AddCommand(&cobra.Command{
		Use:   "lint FILE",
		Short: "check a VCD file strictly (IEEE 1364-2005 section 18 plus GTKWave's string type)",
		Args:  exactArgs(1, "a VCD file"),
		RunE: func(c *cobra.Command, args []string) error {
			errs, err := vcd.LintFile(args[0])
			if err != nil {
				return inputErr(err)
			}
			for _, e := range errs {
				fmt.Fprintf(c.OutOrStdout(), "%s:%d: %s\n", args[0], e.Line, e.Msg)
			}
			if len(errs) > 0 {
				return failErr(fmt.Errorf("%s: %d error(s), first at line %d: %s", args[0], len(errs), errs[0].Line, errs[0].Msg))
			}
			fmt.Fprintf(c.OutOrStdout(), "%s: ok\n", args[0])
			return nil
		},
	})
	return v
}

func newTrace() *cobra.Command {
	t := &cobra.Command{Use: "trace", Short: "transaction trace tools", Args: cobra.ArbitraryArgs, RunE: needSubcommand("diff")}
	t.AddCommand(&cobra.Command{
		Use:   "diff A B",
		Short: "compare two traces and report the first divergence",
		Args:  exactArgs(2, "two trace files"),
		RunE: func(c *cobra.Command, args []string) error {
			m, err := trace.DiffFiles(args[0], args[1])
			if err != nil {
				return inputErr(unwrapPath(err))
			}
			if m == nil {
				fmt.Fprintf(c.OutOrStdout(), "traces are identical\n")
				return nil
			}
			fmt.Fprint(c.OutOrStdout(), m.Report())
			return failErr(fmt.Errorf("traces differ at record %d", m.Index+1))
		},
	})
	return t
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
