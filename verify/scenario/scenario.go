// Package scenario is the frame every runnable nisim system plugs into: a
// Scenario has a name, a one-line summary, embedded default parameters
// (overridable by a strict TOML config file and --set key=value) and a Run
// function that builds the model in an Env, runs it and returns a Report of
// model figures next to the papers' figures and of pass/fail checks. Exec
// wires the waveform registry and the trace recorder to output files that
// appear atomically.
package scenario

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Scenario is one runnable system.
type Scenario struct {
	Name    string
	Summary string
	// System groups the scenario in `nisim list` (Telegraphos,
	// Myrinet/LCI, ...).
	System string
	// Typical is the documented wall-clock time of a run with the
	// defaults, as measured once (documentation, not an assertion).
	Typical string
	// Defaults returns fresh default parameters.
	Defaults func() Params
	// Run builds and runs the model in e with parameters p.
	Run func(e *env.Env, p Params) (*Report, error)
	// Waves, when set, is the scenario's waveform view for parameters p
	// (WaveView): the scopes a VCD holds when the user gives no --select
	// and the key signals of the GTKWave save file written beside it.
	Waves func(p Params) WaveView
}

// Row is one figure of a report: the model's value and, where the papers
// give one, the reference value and its source.
type Row struct {
	Metric string
	Model  string
	Paper  string
	Source string
	// Calibrated marks a figure the model was fitted to (AddCalibrated),
	// as opposed to one it is validated against; Print does not show it
	// (the source says so in words), the JSON report does.
	Calibrated bool
}

// CheckResult is one pass/fail check of a run.
type CheckResult struct {
	Name   string
	OK     bool
	Detail string
}

// Metric is a named number of a run, for sweeps and tables.
type Metric struct {
	Name  string
	Value float64
	Unit  string
}

// Report is what a scenario run found.
type Report struct {
	Title   string
	Rows    []Row
	Checks  []CheckResult
	Metrics []Metric
	// Stuck is the model's state when the run was stopped with work
	// outstanding (a drain limit), printed after the checks.
	Stuck string
	// Filled in by Exec.
	Result env.Result
	Seed   uint64
}

// Add appends a figure.
func (r *Report) Add(metric, model, paper, source string) {
	r.Rows = append(r.Rows, Row{Metric: metric, Model: model, Paper: paper, Source: source})
}

// AddCalibrated appends a figure the model was calibrated on (fitted to),
// or, with calibrated false, one it is validated against: Add with the
// mark the JSON report carries.
func (r *Report) AddCalibrated(calibrated bool, metric, model, paper, source string) {
	r.Rows = append(r.Rows, Row{Metric: metric, Model: model, Paper: paper, Source: source, Calibrated: calibrated})
}

// Measure appends a metric.
func (r *Report) Measure(name string, v float64, unit string) {
	r.Metrics = append(r.Metrics, Metric{name, v, unit})
}

// Check appends a check.
func (r *Report) Check(name string, ok bool, format string, args ...any) {
	r.Checks = append(r.Checks, CheckResult{name, ok, fmt.Sprintf(format, args...)})
}

// Failed reports whether a check failed.
func (r *Report) Failed() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return true
		}
	}
	return false
}

// Column caps of the report table: when the table would be wider than
// TableWidth, a cell longer than its column's cap is cut to "…[n]" and its
// full text printed as note n below the table, so that a table line fits in
// 160 columns (2-space gutters included) while no text is lost. A column
// narrower than its cap lends the spare width to the others (model first,
// then source, metric, paper).
const (
	MetricCap = 50
	ModelCap  = 36
	PaperCap  = 12
	SourceCap = 56
)

// TableWidth is the widest a report table line can be: the caps and three
// 2-space gutters.
const TableWidth = MetricCap + ModelCap + PaperCap + SourceCap + 3*2

// NoteWidth is the column at which the full-text notes are wrapped.
const NoteWidth = 100

// columnCaps returns the caps of the metric, model, paper and source
// columns for rows: the caps above with the spare width of the columns
// narrower than theirs lent to the wider ones.
func columnCaps(rows [][4]string) [4]int {
	caps := [4]int{MetricCap, ModelCap, PaperCap, SourceCap}
	var w [4]int
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	spare := 0
	for i := range caps {
		spare += max(0, caps[i]-w[i])
	}
	for _, i := range []int{1, 3, 0, 2} {
		if over := w[i] - caps[i]; over > 0 {
			add := min(spare, over)
			caps[i] += add
			spare -= add
		}
	}
	return caps
}

// Print writes the report as aligned text: the table with its cells capped
// (see MetricCap), the full text of every capped cell as a numbered note
// (one note per distinct text), then the checks.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "%s\n", r.Title)
	fmt.Fprintf(w, "simulated %v (%d events), seed %d\n\n", r.Result.End, r.Result.Events, r.Seed)
	rows := [][4]string{{"metric", "model", "paper", "source"}}
	for _, row := range r.Rows {
		rows = append(rows, [4]string{row.Metric, row.Model, dash(row.Paper), dash(row.Source)})
	}
	caps := columnCaps(rows)
	var notes []string
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, row := range rows {
		for i, cell := range row {
			n := slices.Index(notes, cell) + 1
			if n == 0 {
				n = len(notes) + 1
			}
			c, cut := Cap(cell, caps[i], n)
			if cut && n == len(notes)+1 {
				notes = append(notes, cell)
			}
			sep := "\t"
			if i == len(row)-1 {
				sep = "\n"
			}
			fmt.Fprint(tw, c, sep)
		}
	}
	tw.Flush()
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for i, n := range notes {
			writeWrapped(w, fmt.Sprintf("[%d] ", i+1), n, NoteWidth)
		}
	}
	fmt.Fprintln(w)
	for _, c := range r.Checks {
		mark := "PASS"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s  %s: %s\n", mark, c.Name, c.Detail)
	}
	if r.Stuck != "" {
		fmt.Fprintf(w, "\n%s\n", r.Stuck)
	}
}

// Cap returns s unchanged if it has at most max runes; otherwise its first
// runes followed by "…[note]", max runes in all, and true.
func Cap(s string, max, note int) (string, bool) {
	rs := []rune(s)
	if len(rs) <= max {
		return s, false
	}
	tail := fmt.Sprintf("…[%d]", note)
	keep := max - len([]rune(tail))
	if keep < 0 {
		keep = 0
	}
	return strings.TrimRight(string(rs[:keep]), " ") + tail, true
}

// writeWrapped writes prefix and s as lines of at most width runes, broken
// at spaces (a word longer than a line stays whole), continuation lines
// indented by the prefix's width.
func writeWrapped(w io.Writer, prefix, s string, width int) {
	indent := strings.Repeat(" ", len([]rune(prefix)))
	line, n := prefix, len([]rune(prefix))
	empty := true
	for _, word := range strings.Fields(s) {
		wl := len([]rune(word))
		if !empty && n+1+wl > width {
			fmt.Fprintln(w, line)
			line, n, empty = indent, len([]rune(indent)), true
		}
		if !empty {
			line += " "
			n++
		}
		line += word
		n += wl
		empty = false
	}
	fmt.Fprintln(w, line)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Options are the outputs and observers of one run.
type Options struct {
	Seed uint64
	// VCD is the path of a waveform dump ("" for none).
	VCD string
	// Select and Exclude pick signals (waves.Options); From and To bound
	// the dumped window.
	Select, Exclude []string
	From, To        clock.Time
	// Trace is the path of a transaction trace ("" for none).
	Trace string
	// KeepTrace keeps the trace records in memory (Report callers and
	// tests read them from the returned env).
	KeepTrace bool
	// Comment goes into the VCD and trace headers.
	Comment string
	// TimeLimit bounds the run (0: none).
	TimeLimit clock.Time
	// StallLimit is the progress watchdog's limit (env.Options.StallLimit:
	// 0 the default, negative off).
	StallLimit clock.Time
	// Mutations switch on test-only faults (env.Options.Mutations).
	Mutations map[string]int
	// Stdout receives an output whose path is "-" (written as the run
	// goes, not atomically).
	Stdout io.Writer
	// Progress observes the run (env.Options.Progress): the simulated time
	// and the event count every env.ProgressEvery events. It changes no
	// output.
	Progress func(now clock.Time, events uint64)
	// Phases observes a run made of a known list of measurements
	// (env.Options.Phases): done of total, and the next one's name. It
	// changes no output.
	Phases func(done, total int, next string)
}

// Exec runs s with parameters p. Output files are created before the run
// (so an unwritable path fails at once) and renamed into place only when the
// run has finished; on error they are removed. The returned error is a
// setup or output error; checker violations and failed checks are in the
// report (see Report.Failed) and in violations.
func Exec(s *Scenario, p Params, o Options) (rep *Report, e *env.Env, violations error, err error) {
	var files []*atomicfile.File
	abort := func() {
		for _, f := range files {
			f.Abort()
		}
	}
	var reg *waves.Registry
	var rec *trace.Recorder
	create := func(path string) (io.Writer, error) {
		if path == "-" && o.Stdout != nil {
			return o.Stdout, nil
		}
		f, err := atomicfile.Create(path)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		return f, nil
	}
	if o.VCD != "" {
		f, err := create(o.VCD)
		if err != nil {
			return nil, nil, nil, err
		}
		reg = waves.NewRegistry(waves.Options{Select: o.Select, Exclude: o.Exclude, From: o.From, To: o.To})
		if err := reg.DumpVCD(f, waves.VCDOptions{Comment: o.Comment}); err != nil {
			abort()
			return nil, nil, nil, err
		}
	}
	if o.Trace != "" {
		f, err := create(o.Trace)
		if err != nil {
			abort()
			return nil, nil, nil, err
		}
		rec = trace.NewStreamRecorder(f, o.Comment)
		if o.KeepTrace {
			rec.KeepAlso()
		}
	} else if o.KeepTrace {
		rec = trace.NewRecorder()
	}
	e = env.New(env.Options{Waves: reg, Trace: rec, Seed: o.Seed, TimeLimit: o.TimeLimit, StallLimit: o.StallLimit, Mutations: o.Mutations, Progress: o.Progress, Phases: o.Phases})
	rep, runErr := s.Run(e, p)
	if rep == nil {
		abort()
		if runErr == nil {
			runErr = errors.New("scenario returned no report")
		}
		return nil, e, nil, fmt.Errorf("%s: %w", s.Name, runErr)
	}
	rep.Seed = o.Seed
	checkers(rep, e)
	end := e.Now()
	var outErrs []error
	if err := reg.Close(end); err != nil {
		outErrs = append(outErrs, err)
	}
	if err := rec.Close(); err != nil {
		outErrs = append(outErrs, err)
	}
	if len(outErrs) > 0 {
		abort()
		return rep, e, runErr, errors.Join(outErrs...)
	}
	for _, f := range files {
		if err := f.Commit(); err != nil {
			abort()
			return rep, e, runErr, err
		}
	}
	return rep, e, runErr, nil
}

// In sets the scenario's System and Typical run time and returns it, for
// registration lists.
func (s *Scenario) In(system, typical string) *Scenario {
	s.System, s.Typical = system, typical
	return s
}

// Catalog is an ordered set of scenarios.
type Catalog []*Scenario

// Lookup returns the named scenario or an error listing the known names.
func (c Catalog) Lookup(name string) (*Scenario, error) {
	var names []string
	for _, s := range c {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(names, ", "))
}

// ListWidth is the width `nisim list` lines fit in.
const ListWidth = 100

// Group is the scenarios of one system, in catalog order.
type Group struct {
	System    string
	Scenarios []*Scenario
}

// Groups returns the catalog's scenarios grouped by System, groups in the
// order of their first scenario (an empty System is "other").
func (c Catalog) Groups() []Group {
	var gs []Group
	for _, s := range c {
		sys := s.System
		if sys == "" {
			sys = "other"
		}
		i := slices.IndexFunc(gs, func(g Group) bool { return g.System == sys })
		if i < 0 {
			gs = append(gs, Group{System: sys})
			i = len(gs) - 1
		}
		gs[i].Scenarios = append(gs[i].Scenarios, s)
	}
	return gs
}

// PrintList writes the catalog grouped by system: a header line per system,
// then one line per scenario with its name, typical run time and summary,
// aligned within the group; a line longer than ListWidth runes is cut with
// "…" (the summaries are written to fit, this is the last resort).
func (c Catalog) PrintList(w io.Writer) {
	for i, g := range c.Groups() {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", g.System)
		nameW, timeW := 0, 0
		for _, s := range g.Scenarios {
			nameW = max(nameW, utf8.RuneCountInString(s.Name))
			timeW = max(timeW, utf8.RuneCountInString(dash(s.Typical)))
		}
		for _, s := range g.Scenarios {
			line := fmt.Sprintf("  %s  %s  %s", pad(s.Name, nameW), pad(dash(s.Typical), timeW), s.Summary)
			if rs := []rune(line); len(rs) > ListWidth {
				line = string(rs[:ListWidth-1]) + "…"
			}
			fmt.Fprintln(w, line)
		}
	}
}

// pad right-pads s with spaces to n runes.
func pad(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}

// checkers appends the run's verdict on every always-on checker (conservation,
// order, overflow, credits, protocol rules, the watchdogs), computed from the
// Monitor's count: a report never shows a passing run whose checkers fired.
func checkers(rep *Report, e *env.Env) {
	n := e.Monitor.Count()
	detail := "no violation (conservation, order, overflow, credits, protocol rules, watchdogs)"
	if n > 0 {
		detail = fmt.Sprintf("%d violation(s)", n)
		if v := e.Monitor.Violations(); len(v) > 0 {
			detail += "; first: " + v[0].String()
		}
	}
	rep.Check("checkers", n == 0, "%s", detail)
}
