package scenario

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
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
// if unsteady, measurement); or it failed (an error, a checker violation or
// a failed check of a run that did not saturate).
const (
	StatusOK Status = iota
	StatusSaturated
	StatusFailed
)

// String returns "ok", "saturated" or "failed".
func (s Status) String() string {
	return [...]string{"ok", "saturated", "failed"}[s]
}

// Point is one run of a sweep: the swept value, the seed and the run's
// metrics and status.
type Point struct {
	Value   float64
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

// Failed reports whether the run failed (a saturated run has not).
func (p Point) Failed() bool { return p.Status == StatusFailed }

// StatusText is the point's CSV status: "ok", "saturated" or
// "failed: reason".
func (p Point) StatusText() string {
	if p.Status == StatusFailed {
		return "failed: " + p.Reason
	}
	return p.Status.String()
}

// MaxSeeds bounds SweepSpec.Seeds: a sweep runs every value this many
// times, one after another, so a larger count belongs in a parallel sweep.
const MaxSeeds = 32

// SweepSpec is what a sweep runs: the scenario's defaults overridden by
// File and Sets, then Key set to each of Values, each run with Seeds
// seeds (Seed, Seed+1, ...). Y names the metrics to be plotted, checked
// before anything runs.
type SweepSpec struct {
	File   string
	Sets   []string
	Key    string
	Values []float64
	Seed   uint64
	Seeds  int
	Y      []string
	// Mutations switch on test-only faults in every run
	// (Options.Mutations).
	Mutations map[string]int
	// Done, when set, is called after each point with the number of
	// points finished and the total (len(Values) times Seeds): the command
	// line's progress display. It changes no result.
	Done func(done, total int)
}

// SweepResult is a finished sweep.
type SweepResult struct {
	Scenario string
	Key      string
	KeyUnit  string
	Seeds    int
	Points   []Point
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
func (r *SweepResult) Failed() []Point {
	var out []Point
	for _, p := range r.Points {
		if p.Failed() {
			out = append(out, p)
		}
	}
	return out
}

// UsageError is an error in a sweep's request (an unknown metric, a value
// refused by the scenario's Validate, a bad seed count), found before any
// run.
type UsageError struct{ Err error }

// Error returns the underlying error's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

func checkY(ys []string, defs []MetricDef) error {
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
	if len(ys) > 1 {
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
	}
	return nil
}

// Sweep runs s once per value of spec.Key and seed, in order. Every
// value is configured (and the metrics of spec.Y checked, for a scenario
// that declares its metrics) before the first run: a value the scenario
// refuses or an unknown metric is a *UsageError and nothing runs. A
// scenario that declares no metrics has spec.Y checked against the first
// run's. A run that fails is recorded with its reason and the sweep goes
// on; each run is independent and deterministic for its seed.
func Sweep(s *Scenario, spec SweepSpec) (*SweepResult, error) {
	if spec.Seeds == 0 {
		spec.Seeds = 1
	}
	if spec.Seeds < 1 || spec.Seeds > MaxSeeds {
		return nil, &UsageError{fmt.Errorf("--seeds: must be in [1, %d] (got %d)", MaxSeeds, spec.Seeds)}
	}
	if len(spec.Values) == 0 {
		return nil, &UsageError{errors.New("--values: no value to sweep")}
	}
	if spec.Seed > math.MaxUint64-uint64(spec.Seeds) {
		return nil, &UsageError{fmt.Errorf("--seed: %d leaves no room for %d seeds", spec.Seed, spec.Seeds)}
	}
	res := &SweepResult{Scenario: s.Name, Key: spec.Key, Seeds: spec.Seeds}
	params := make([]Params, len(spec.Values))
	for i, v := range spec.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &UsageError{fmt.Errorf("--values: %v is not a finite number", v)}
		}
		p := s.Defaults()
		all := append(append([]string(nil), spec.Sets...), spec.Key+"="+strconv.FormatFloat(v, 'g', -1, 64))
		if err := Configure(p, spec.File, all); err != nil {
			return nil, &UsageError{err}
		}
		params[i] = p
	}
	res.KeyUnit = ParamUnit(params[0], spec.Key)
	declared := false
	if ml, ok := params[0].(MetricLister); ok {
		res.Defs, declared = ml.Metrics(), true
		if err := checkY(spec.Y, res.Defs); err != nil {
			return nil, err
		}
	}
	for i, v := range spec.Values {
		for k := range spec.Seeds {
			seed := spec.Seed + uint64(k)
			pt := run(s, params[i], v, Options{Seed: seed, Mutations: spec.Mutations})
			if !declared && len(pt.Metrics) > 0 {
				for _, m := range pt.Metrics {
					if _, ok := res.Def(m.Name); !ok {
						res.Defs = append(res.Defs, MetricDef{Name: m.Name, Unit: m.Unit})
					}
				}
				if len(res.Points) == 0 {
					if err := checkY(spec.Y, res.Defs); err != nil {
						return nil, err
					}
				}
			}
			res.Points = append(res.Points, pt)
			if spec.Done != nil {
				spec.Done(len(res.Points), len(spec.Values)*spec.Seeds)
			}
		}
	}
	return res, nil
}

// run runs one point of a sweep. A fresh copy of the parameters is not
// needed: Run only reads them.
func run(s *Scenario, p Params, v float64, o Options) Point {
	pt := Point{Value: v, Seed: o.Seed}
	rep, _, violations, err := Exec(s, p, o)
	if err != nil || rep == nil {
		if err == nil {
			err = violations
		}
		pt.Status, pt.Reason = StatusFailed, reason(err.Error())
		return pt
	}
	pt.Metrics = rep.Metrics
	sat, _ := pt.Get("saturated")
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
		pt.Status, pt.Reason = StatusSaturated, reason(strings.Join(failed, "; "))
	case checkers != "":
		pt.Status, pt.Reason = StatusFailed, reason(checkers)
	case len(failed) > 0:
		pt.Status, pt.Reason = StatusFailed, reason(failed[0])
	case violations != nil:
		pt.Status, pt.Reason = StatusFailed, reason(violations.Error())
	}
	return pt
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

// WriteCSV writes the sweep as CSV, one row per run: the swept key, the
// seed, every metric (the union over the runs, in the order first
// measured; a metric a run did not measure is empty), then the status:
// "ok", "saturated" or "failed: reason". It is written whatever the runs
// did, with the header alone if none ran.
func WriteCSV(w io.Writer, res *SweepResult) error {
	cw := csv.NewWriter(w)
	head := []string{withUnit(res.Key, res.KeyUnit), "seed"}
	var names []string
	seen := map[string]bool{}
	add := func(name, unit string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
			head = append(head, withUnit(name, unit))
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
	if err := cw.Write(append(head, "status")); err != nil {
		return err
	}
	for _, p := range res.Points {
		row := []string{strconv.FormatFloat(p.Value, 'g', -1, 64), strconv.FormatUint(p.Seed, 10)}
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
