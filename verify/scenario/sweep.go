package scenario

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// MetricDef declares a metric that a scenario measures (Report.Measure),
// so that a sweep can check the metrics it is asked to plot before it
// runs anything and can label axes with their units.
type MetricDef struct {
	Name string
	Unit string
	// Ref names a metric drawn as a horizontal reference line on plots
	// of this one: the zero-load latency under a latency-versus-load
	// curve.
	Ref string
}

// MetricLister is implemented by the Params of scenarios that declare
// their metrics.
type MetricLister interface {
	Metrics() []MetricDef
}

// ParamUniter is implemented by Params whose keys' units depend on other
// parameters (injection_rate in packets or flits per node and cycle); it
// returns "" for a key it does not know, and the key's `unit` struct tag is
// read then.
type ParamUniter interface {
	ParamUnit(key string) string
}

// ParamUnit returns the unit of parameter key of p: from p's ParamUnit
// method, else from the `unit` tag of the field whose toml key path is key,
// else "".
func ParamUnit(p Params, key string) string {
	if u, ok := p.(ParamUniter); ok {
		if s := u.ParamUnit(key); s != "" {
			return s
		}
	}
	t := reflect.TypeOf(p)
	parts := strings.Split(key, ".")
	for i, part := range parts {
		f, ok := tomlField(t, part)
		if !ok {
			return ""
		}
		if i == len(parts)-1 {
			return f.Tag.Get("unit")
		}
		t = f.Type
	}
	return ""
}

// tomlField finds the field of struct type t (or a pointer to one) whose
// toml key is name, looking into embedded structs.
func tomlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == name {
			return f, true
		}
		if f.Anonymous && tag == "" {
			if g, ok := tomlField(f.Type, name); ok {
				return g, true
			}
		}
	}
	return reflect.StructField{}, false
}

// Status is how a sweep's run ended.
type Status int

// The statuses of a run: it passed; it hit saturation (the scenario's
// "saturated" metric is set; its "drained"-style checks fail for that
// reason, but the always-on checkers passed, so its figures are a real,
// if unsteady, measurement); it failed (an error, a checker violation or
// a failed check of a run that did not saturate); or its result is missing
// (a job of a planned sweep that has not run, see verify/jobs).
const (
	StatusOK Status = iota
	StatusSaturated
	StatusFailed
	StatusMissing
)

var statusNames = [...]string{"ok", "saturated", "failed", "missing"}

// String returns "ok", "saturated", "failed" or "missing".
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("status(%d)", int(s))
	}
	return statusNames[s]
}

// ParseStatus is String's inverse.
func ParseStatus(name string) (Status, error) {
	for i, n := range statusNames {
		if n == name {
			return Status(i), nil
		}
	}
	return 0, fmt.Errorf("unknown status %q (want ok, saturated, failed or missing)", name)
}

// Axis is one key of a sweep's grid: the parameter, its unit and the
// values it takes, in the order given.
type Axis struct {
	Key    string
	Unit   string
	Values []float64
}

// Point is one run of a sweep: the grid point (the value of each grid
// key, in the grid's order), the seed and the run's metrics and status.
type Point struct {
	Grid    []float64
	Seed    uint64
	Metrics []Metric
	Status  Status
	// Reason says why a run failed or what its saturation failed (one
	// line).
	Reason string
}

// Get returns a metric of the point.
func (p Point) Get(name string) (float64, bool) {
	for _, m := range p.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// Failed reports whether the run failed (a saturated run has not, nor has
// a missing one).
func (p Point) Failed() bool { return p.Status == StatusFailed }

// StatusText is the point's CSV status: "ok", "saturated", "missing" or
// "failed: reason".
func (p Point) StatusText() string {
	if p.Status == StatusFailed {
		return "failed: " + p.Reason
	}
	return p.Status.String()
}

// MaxSeeds bounds the seeds of one grid point: the confidence interval of
// the mean narrows as 1/sqrt(n), so 32 seeds already give one 2.8 times
// narrower than 4 do; a regression of many seeds is `nisim regress`'s job.
const MaxSeeds = 32

// MaxRuns bounds the runs of one sweep (grid points times seeds).
// derived: a job of a planned sweep takes about 300 B of manifest and a
// result file of about 1 KB, so 100 000 runs are a 30 MB manifest and
// 100 MB of results, which one merge holds in memory with room to spare;
// a larger grid is more points than a plot can show anyway.
const MaxRuns = 100_000

// SweepResult is a finished (or, merged from a partial plan, unfinished)
// sweep.
type SweepResult struct {
	Scenario string
	// Grid are the swept keys; the plot's x axis is the first.
	Grid  []Axis
	Seeds int
	// Points are the runs in the plan's order: grid points with the last
	// key fastest, and each point's seeds together.
	Points []Point
	// Defs are the metrics, declared by the scenario or, for one that
	// declares none, as measured, in order.
	Defs []MetricDef
}

// Def returns the definition of metric name.
func (r *SweepResult) Def(name string) (MetricDef, bool) {
	for _, d := range r.Defs {
		if d.Name == name {
			return d, true
		}
	}
	return MetricDef{}, false
}

// Failed returns the points that failed.
func (r *SweepResult) Failed() []Point { return r.with(StatusFailed) }

// Missing returns the points whose result is missing.
func (r *SweepResult) Missing() []Point { return r.with(StatusMissing) }

func (r *SweepResult) with(s Status) []Point {
	var out []Point
	for _, p := range r.Points {
		if p.Status == s {
			out = append(out, p)
		}
	}
	return out
}

// GridText names a grid point: "key=value, key2=value2".
func (r *SweepResult) GridText(grid []float64) string {
	parts := make([]string, len(grid))
	for i, v := range grid {
		key := "?"
		if i < len(r.Grid) {
			key = r.Grid[i].Key
		}
		parts[i] = key + "=" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// UsageError is an error in a sweep's request (an unknown metric, a value
// refused by the scenario's Validate, a bad seed count), found before any
// run.
type UsageError struct{ Err error }

// Error returns the underlying error's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

// CheckY checks that every metric of ys is one of defs and that they share
// a unit (one plot has one y axis); the error is a *UsageError.
func CheckY(ys []string, defs []MetricDef) error {
	if len(ys) == 0 {
		return &UsageError{errors.New("--y: no metric named")}
	}
	for _, y := range ys {
		found := false
		for _, d := range defs {
			found = found || d.Name == y
		}
		if !found {
			names := make([]string, len(defs))
			for i, d := range defs {
				names[i] = d.Name
			}
			return &UsageError{fmt.Errorf("--y: unknown metric %q (available: %s)", y, strings.Join(names, ", "))}
		}
	}
	unit := func(y string) string {
		for _, d := range defs {
			if d.Name == y {
				return d.Unit
			}
		}
		return ""
	}
	for _, y := range ys[1:] {
		if unit(y) != unit(ys[0]) {
			return &UsageError{fmt.Errorf("--y: %s is in %q and %s in %q: one plot takes one unit", ys[0], unit(ys[0]), y, unit(y))}
		}
	}
	return nil
}

// Outcome classifies a finished run (scenario.Exec's results) for a sweep:
// failed if it returned an error or no report, if a checker fired, or if a
// check failed in a run that did not saturate; saturated if its
// "saturated" metric is set and only its drain-style checks failed; else
// ok. The reason is one line.
func Outcome(rep *Report, violations, err error) (Status, string) {
	if err != nil || rep == nil {
		if err == nil {
			err = violations
		}
		if err == nil {
			err = errors.New("no report")
		}
		return StatusFailed, reason(err.Error())
	}
	sat := 0.0
	for _, m := range rep.Metrics {
		if m.Name == "saturated" {
			sat = m.Value
		}
	}
	var failed []string
	checkers := ""
	for _, c := range rep.Checks {
		if !c.OK {
			failed = append(failed, c.Name+": "+c.Detail)
			if c.Name == "checkers" {
				checkers = c.Name + ": " + c.Detail
			}
		}
	}
	switch {
	case sat != 0 && checkers == "" && violations == nil:
		return StatusSaturated, reason(strings.Join(failed, "; "))
	case checkers != "":
		return StatusFailed, reason(checkers)
	case len(failed) > 0:
		return StatusFailed, reason(failed[0])
	case violations != nil:
		return StatusFailed, reason(violations.Error())
	}
	return StatusOK, ""
}

// maxReason bounds a failed run's reason: the first line of the error or
// check, cut to this many characters (the report has the rest).
const maxReason = 200

func reason(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > maxReason {
		return string(r[:maxReason-1]) + "…"
	}
	return string(r)
}

// metricNames returns the names and units of every metric of the sweep:
// the definitions', then any other a run measured, in the order first
// measured.
func metricNames(res *SweepResult) (names, units []string) {
	seen := map[string]bool{}
	add := func(name, unit string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
			units = append(units, unit)
		}
	}
	for _, d := range res.Defs {
		add(d.Name, d.Unit)
	}
	for _, p := range res.Points {
		for _, m := range p.Metrics {
			add(m.Name, m.Unit)
		}
	}
	return names, units
}

// WriteCSV writes the sweep as CSV, one row per run in the plan's order:
// one column per grid key (with its unit), the seed, every metric (the
// union over the runs, in the order first measured; a metric a run did not
// measure is empty), then the status: "ok", "saturated", "missing" or
// "failed: reason". It is written whatever the runs did, with the header
// alone if none ran. Numbers are written in the shortest form that reads
// back to the same float64.
func WriteCSV(w io.Writer, res *SweepResult) error {
	cw := csv.NewWriter(w)
	var head []string
	for _, a := range res.Grid {
		head = append(head, withUnit(a.Key, a.Unit))
	}
	head = append(head, "seed")
	names, units := metricNames(res)
	for i, n := range names {
		head = append(head, withUnit(n, units[i]))
	}
	if err := cw.Write(append(head, "status")); err != nil {
		return err
	}
	for _, p := range res.Points {
		var row []string
		for _, v := range p.Grid {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		row = append(row, strconv.FormatUint(p.Seed, 10))
		for _, n := range names {
			cell := ""
			if v, ok := p.Get(n); ok {
				cell = strconv.FormatFloat(v, 'g', -1, 64)
			}
			row = append(row, cell)
		}
		if err := cw.Write(append(row, p.StatusText())); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func withUnit(name, unit string) string {
	if unit == "" {
		return name
	}
	return name + " (" + unit + ")"
}

// GridPoint is one grid point of a sweep and its runs (one per seed).
type GridPoint struct {
	Grid []float64
	Runs []Point
}

// Groups returns the sweep's grid points in the plan's order, each with its
// runs in seed order.
func (r *SweepResult) Groups() []GridPoint {
	var out []GridPoint
	at := map[string]int{} // lookup only; the order is the points'
	for _, p := range r.Points {
		k := fmt.Sprint(p.Grid)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, GridPoint{Grid: p.Grid})
		}
		out[i].Runs = append(out[i].Runs, p)
	}
	return out
}

// Stat is one metric over the seeds of one grid point: the runs that
// passed or saturated and measured a finite value count.
type Stat struct {
	Grid []float64
	// N is the number of runs counted.
	N int
	// Mean is their mean; HalfWidth the half-width of its two-sided 95%
	// confidence interval (Student's t with N-1 degrees of freedom times
	// the standard error), 0 when N < 2.
	Mean, HalfWidth float64
	// Saturated is set if a counted run saturated.
	Saturated bool
}

// Lo and Hi are the ends of the confidence interval.
func (s Stat) Lo() float64 { return s.Mean - s.HalfWidth }

// Hi is the upper end of the confidence interval.
func (s Stat) Hi() float64 { return s.Mean + s.HalfWidth }

// MetricStats returns metric y's Stat for every grid point that has a
// counted run, in the plan's order. With logY, values at or below zero are
// not counted (a log axis cannot show them) and dropped says how many.
func (r *SweepResult) MetricStats(y string, logY bool) (stats []Stat, dropped int) {
	for _, g := range r.Groups() {
		var vs []float64
		sat := false
		for _, p := range g.Runs {
			if p.Status != StatusOK && p.Status != StatusSaturated {
				continue
			}
			v, ok := p.Get(y)
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if logY && v <= 0 {
				dropped++
				continue
			}
			vs = append(vs, v)
			sat = sat || p.Status == StatusSaturated
		}
		if len(vs) == 0 {
			continue
		}
		mean, hw := MeanCI95(vs)
		stats = append(stats, Stat{Grid: g.Grid, N: len(vs), Mean: mean, HalfWidth: hw, Saturated: sat})
	}
	return stats, dropped
}

// MeanCI95 returns the mean of vs and the half-width of its two-sided 95%
// confidence interval, t(0.975, n-1) * s / sqrt(n) with s the sample
// standard deviation (n-1 in the denominator); the half-width is 0 for
// fewer than two values.
func MeanCI95(vs []float64) (mean, halfWidth float64) {
	n := len(vs)
	if n == 0 {
		return math.NaN(), 0
	}
	for _, v := range vs {
		mean += v
	}
	mean /= float64(n)
	if n < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, v := range vs {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return mean, TQuantile975(n-1) * sd / math.Sqrt(float64(n))
}

// TQuantile975 returns the 0.975 quantile of Student's t distribution with
// dof degrees of freedom (dof >= 1): the half-width of a two-sided 95%
// interval in standard errors (12.706 for 1, 2.262 for 9, 1.96 in the
// limit). The density is integrated from 0 by Simpson's rule in steps of
// 1/1024 until the area reaches 0.475, then one Newton step lands on the
// quantile; the result agrees with printed tables to their 3 decimals.
func TQuantile975(dof int) float64 {
	if dof < 1 {
		return math.NaN()
	}
	nu := float64(dof)
	lg1, _ := math.Lgamma((nu + 1) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	c := math.Exp(lg1-lg2) / math.Sqrt(nu*math.Pi)
	f := func(x float64) float64 { return c * math.Pow(1+x*x/nu, -(nu+1)/2) }
	const h = 1.0 / 1024
	const target = 0.475
	area, x := 0.0, 0.0
	for x < 1000 {
		next := area + h/6*(f(x)+4*f(x+h/2)+f(x+h))
		if next >= target {
			break
		}
		area, x = next, x+h
	}
	// One Newton step from x, where the area is below the target by less
	// than one step's worth, then a second for the curvature.
	for range 2 {
		x += (target - area) / f(x)
		area = tArea(f, x)
	}
	return x
}

// tArea integrates f from 0 to x by Simpson's rule on 1/1024 steps.
func tArea(f func(float64) float64, x float64) float64 {
	n := int(math.Ceil(x*1024)) + 1
	h := x / float64(n)
	a := 0.0
	for i := range n {
		x0 := float64(i) * h
		a += h / 6 * (f(x0) + 4*f(x0+h/2) + f(x0+h))
	}
	return a
}

// WriteTable prints the sweep as an aligned table on w: one row per run
// with one seed (the grid values, the metrics of ys, the accepted load
// when the scenario measures it and it is not one of ys, the status); one
// row per grid point with several seeds, each metric as "mean ± h" with h
// the half-width of its 95% confidence interval (Student t, n-1 degrees of
// freedom, over the runs that passed or saturated) and the statuses
// counted.
func WriteTable(w io.Writer, res *SweepResult, ys []string) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	var head []string
	for _, a := range res.Grid {
		head = append(head, a.Key)
	}
	head = append(head, ys...)
	_, hasAcc := res.Def("accepted")
	showAcc := hasAcc && !slices.Contains(ys, "accepted")
	if showAcc {
		head = append(head, "accepted")
	}
	head = append(head, "status")
	if res.Seeds > 1 {
		fmt.Fprintf(tw, "# mean ± half-width of the 95%% confidence interval (Student t) over %d seeds\n", res.Seeds)
	}
	fmt.Fprintf(tw, "%s\t\n", strings.Join(head, "\t"))
	for _, g := range res.Groups() {
		var row []string
		for _, v := range g.Grid {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		sub := &SweepResult{Grid: res.Grid, Seeds: res.Seeds, Points: g.Runs, Defs: res.Defs}
		cell := func(y, format string) string {
			st, _ := sub.MetricStats(y, false)
			if len(st) == 0 {
				return "-"
			}
			s := fmt.Sprintf(format, st[0].Mean)
			if res.Seeds > 1 && st[0].N > 1 {
				s += " ± " + fmt.Sprintf(format, st[0].HalfWidth)
			}
			return s
		}
		for _, y := range ys {
			row = append(row, cell(y, "%.2f"))
		}
		if showAcc {
			row = append(row, cell("accepted", "%.4f"))
		}
		row = append(row, statusCell(g.Runs))
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// statusCell is a grid point's status: the one run's, or the count of
// each status over its seeds ("2 ok, 1 failed").
func statusCell(runs []Point) string {
	if len(runs) == 1 {
		return runs[0].StatusText()
	}
	var n [len(statusNames)]int
	for _, p := range runs {
		n[p.Status]++
	}
	if n[StatusOK] == len(runs) {
		return "ok"
	}
	var parts []string
	for s, c := range n {
		if c > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c, Status(s)))
		}
	}
	return strings.Join(parts, ", ")
}
