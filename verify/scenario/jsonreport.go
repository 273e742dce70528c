package scenario

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"

	"github.com/nisim/nisim/rtl/env"
)

// JSONFormat is the version of the JSONReport format; it changes when a
// field changes meaning or disappears (new fields keep it).
const JSONFormat = 1

// JSONReport is `nisim run --json`'s report, for notebooks and CI
// dashboards: everything the text report shows, uncut, with the numbers
// as numbers. Its fields are written in this order with these names
// (encoding/json decodes it back into this type); the same run gives the
// same bytes.
type JSONReport struct {
	// Format is JSONFormat; Version the nisim version that wrote it (as
	// `nisim --version` prints it).
	Format  int    `json:"format"`
	Version string `json:"nisim_version"`
	// Scenario is the scenario's name, Title its report's first line.
	Scenario string `json:"scenario"`
	Title    string `json:"title"`
	Seed     uint64 `json:"seed"`
	// Config is the effective configuration, every key in the order
	// `nisim config` prints them.
	Config []JSONParam `json:"config"`
	// EndPS is the simulated time of the last event in picoseconds,
	// Events the events run; Stopped says the run ended at --time-limit
	// (or was stopped) rather than by running out of events, Stuck that
	// the progress watchdog stopped it.
	EndPS   int64  `json:"end_ps"`
	Events  uint64 `json:"events"`
	Stopped bool   `json:"stopped"`
	Stuck   bool   `json:"stuck"`
	// Passed is true when every check and checker passed; Failure is the
	// one-line reason when not (the error `nisim run` exits 1 with).
	Passed  bool   `json:"passed"`
	Failure string `json:"failure"`
	// Rows are the report's figures, Metrics its named numbers, Checks
	// its verdicts (the checkers' verdict included).
	Rows    []JSONRow    `json:"rows"`
	Metrics []JSONMetric `json:"metrics"`
	Checks  []JSONCheck  `json:"checks"`
	// StuckState is the model's state when the run was stopped with work
	// outstanding ("" when not).
	StuckState string `json:"stuck_state"`
	// Violations are the checkers' findings.
	Violations JSONViolations `json:"violations"`
}

// JSONParam is one key of the effective configuration.
type JSONParam struct {
	// Key is the dotted key, Value its value (a number, string, boolean or
	// list), Unit and Range as `nisim config` prints them ("" when the
	// scenario documents none), Source where the value came from:
	// "default", "--config FILE" or "--set".
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Unit   string `json:"unit"`
	Range  string `json:"range"`
	Source string `json:"source"`
	// Origin is where the default comes from (a paper figure, derived,
	// assumed, calibrated), "" when not documented.
	Origin string `json:"origin"`
}

// JSONRow is one figure of the report, its text uncut. Where the model's
// figure reads as a number and a unit ("0.694 µs (-0.8%)", see
// ParseQuantity), ModelValue and Unit hold them; where the paper's figure
// also does, in the same unit ("0.700 µs"), PaperValue and RelError
// ((model - paper) / paper) too; otherwise they are null (and Unit "").
type JSONRow struct {
	Metric     string   `json:"metric"`
	Model      string   `json:"model"`
	Paper      string   `json:"paper"`
	Source     string   `json:"source"`
	Calibrated bool     `json:"calibrated"`
	ModelValue *float64 `json:"model_value"`
	PaperValue *float64 `json:"paper_value"`
	Unit       string   `json:"unit"`
	RelError   *float64 `json:"rel_error"`
}

// JSONMetric is a named number. A value that is not finite (a mean of no
// samples) is null, with NonFinite saying which ("NaN", "+Inf", "-Inf").
type JSONMetric struct {
	Name      string   `json:"name"`
	Value     *float64 `json:"value"`
	NonFinite string   `json:"non_finite"`
	Unit      string   `json:"unit"`
}

// JSONCheck is one verdict.
type JSONCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// JSONViolations are the checkers' violations: Count all of them, Kept
// the ones the monitor kept (the first few), in order.
type JSONViolations struct {
	Count int             `json:"count"`
	Kept  []JSONViolation `json:"kept"`
}

// JSONViolation is one checker violation.
type JSONViolation struct {
	TimePS int64  `json:"time_ps"`
	Path   string `json:"path"`
	Check  string `json:"check"`
	Msg    string `json:"msg"`
}

// JSONRun is what NewJSONReport is made from: the run's scenario, seed,
// effective configuration and sources, what Exec returned (rep and e may
// be nil when the run stopped before it could report) and the failure
// the command exits with (nil for a pass).
type JSONRun struct {
	Version  string
	Scenario string
	Seed     uint64
	Params   Params
	Sources  Sources
	Report   *Report
	Env      *env.Env
	Failure  error
}

// NewJSONReport builds the JSON report of a run.
func NewJSONReport(r JSONRun) (*JSONReport, error) {
	j := &JSONReport{Format: JSONFormat, Version: r.Version, Scenario: r.Scenario, Seed: r.Seed,
		Config: []JSONParam{}, Rows: []JSONRow{}, Metrics: []JSONMetric{}, Checks: []JSONCheck{},
		Violations: JSONViolations{Kept: []JSONViolation{}}}
	entries, err := EffectiveConfig(r.Params, r.Sources)
	if err != nil {
		return nil, err
	}
	for _, c := range entries {
		j.Config = append(j.Config, JSONParam{Key: c.Key, Value: c.Value, Unit: c.Spec.Unit,
			Range: c.Spec.RangeText(c.Integer), Source: c.Source, Origin: c.Spec.Origin})
	}
	if rep := r.Report; rep != nil {
		j.Title, j.StuckState = rep.Title, rep.Stuck
		j.EndPS, j.Events = int64(rep.Result.End), rep.Result.Events
		j.Stopped, j.Stuck = rep.Result.Stopped, rep.Result.Stuck
		for _, row := range rep.Rows {
			j.Rows = append(j.Rows, jsonRow(row))
		}
		for _, m := range rep.Metrics {
			jm := JSONMetric{Name: m.Name, Unit: m.Unit}
			switch {
			case math.IsNaN(m.Value):
				jm.NonFinite = "NaN"
			case math.IsInf(m.Value, 1):
				jm.NonFinite = "+Inf"
			case math.IsInf(m.Value, -1):
				jm.NonFinite = "-Inf"
			default:
				jm.Value = ptr(m.Value)
			}
			j.Metrics = append(j.Metrics, jm)
		}
		for _, c := range rep.Checks {
			j.Checks = append(j.Checks, JSONCheck{Name: c.Name, OK: c.OK, Detail: c.Detail})
		}
	} else if r.Env != nil {
		j.EndPS = int64(r.Env.Now())
	}
	if e := r.Env; e != nil {
		j.Violations.Count = e.Monitor.Count()
		for _, v := range e.Monitor.Violations() {
			j.Violations.Kept = append(j.Violations.Kept, JSONViolation{TimePS: int64(v.Time), Path: v.Path, Check: v.Check, Msg: v.Msg})
		}
	}
	j.Passed = r.Failure == nil
	if r.Failure != nil {
		j.Failure = r.Failure.Error()
	}
	return j, nil
}

// Marshal returns the report as indented JSON ending in a newline.
func (j *JSONReport) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// jsonRow converts a row, with its numbers where both figures have them.
func jsonRow(r Row) JSONRow {
	j := JSONRow{Metric: r.Metric, Model: r.Model, Paper: r.Paper, Source: r.Source, Calibrated: r.Calibrated}
	mv, mu, ok := ParseQuantity(r.Model)
	if !ok {
		return j
	}
	j.ModelValue, j.Unit = ptr(mv), mu
	if pv, pu, ok := ParseQuantity(r.Paper); ok && pu == mu {
		j.PaperValue = ptr(pv)
		if pv != 0 {
			j.RelError = ptr((mv - pv) / pv)
		}
	}
	return j
}

func ptr(f float64) *float64 { return &f }

// quantity is a report figure that is one number and a unit, optionally
// followed by a parenthesised remark: "0.694 µs (-0.8%)", "7.2 µs",
// "118.3 MB/s (1.10 µs per message)". A bound ("< 50 µs"), an
// approximation ("~120 MB/s"), a pair ("12 / 13") or a unitless number is
// not one.
var quantity = regexp.MustCompile(`^([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?) ([^\s0-9(/~<>=][^\s(]*)(?: \(.*\))?$`)

// ParseQuantity reads a report figure as a number and its unit (see
// quantity); "us" reads as "µs".
func ParseQuantity(s string) (float64, string, bool) {
	m := quantity.FindStringSubmatch(s)
	if m == nil {
		return 0, "", false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, "", false
	}
	unit := m[2]
	if unit == "us" {
		unit = "µs"
	}
	return v, unit, true
}
