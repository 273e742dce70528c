// Package jobs turns a sweep (and, through the same format, a regression)
// into a manifest of independent jobs, runs one job into a result file,
// and merges the results: the path by which `nisim sweep` runs locally on
// -j workers and, unchanged, as a Slurm job array or a Kubernetes Indexed
// Job (issue 12 section 4).
//
// A plan directory holds manifest.json (a Manifest) and results/, where job
// i writes results/NNNNNN.json (a Result) atomically. A job depends only on
// its manifest entry and the manifest's inlined configuration, never on the
// planner's working directory or files, and every path in the manifest is
// relative to the plan directory, so the directory may be moved or mounted
// elsewhere. Floats are written in the shortest form that reads back to the
// same float64 (non-finite ones as the strings "NaN", "+Inf", "-Inf"), so a
// merge of result files gives the same bytes as a sweep that never wrote
// them.
package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MaxManifestBytes bounds the manifest Load reads. derived: at most
// scenario.MaxRuns (100 000) jobs of at most about 2.5 KB of indented JSON
// each (a job of a mesh sweep is 400 B) is 250 MB; 256 MiB.
const MaxManifestBytes = 256 << 20

// MaxResultBytes bounds a result file. derived: the largest report's
// metrics and checks (lci-report's, about 200 of each at a few hundred
// bytes) are under 100 KB; 16 MiB leaves room for long check details.
const MaxResultBytes = 16 << 20

// readBounded reads path, refusing a file larger than limit (from its
// size, before reading) or anything but a regular file.
func readBounded(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	if fi.Size() > limit {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than the limit of %d bytes (%d bytes)", limit, fi.Size())}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than the limit of %d bytes", limit)}
	}
	return data, err
}

// Version is the manifest and result format this package writes; Load and
// readVersioned reads a manifest or result file of at most max bytes and
// checks its format version: every error is one line naming path and
// what the file should be; a missing file's error wraps os.ErrNotExist.
// hint ends the message of a file newer than this nisim.
func readVersioned(path string, max int64, what, hint string) ([]byte, error) {
	data, err := readBounded(path, max)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v, err := versionOf(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a nisim %s: %s", path, what, jsonErr(err))
	}
	if v > Version {
		return nil, fmt.Errorf("%s: %s version %d is newer than this nisim's %d%s", path, what, v, Version, hint)
	}
	if v < 1 {
		return nil, fmt.Errorf("%s: %s version %d: not a version this nisim wrote", path, what, v)
	}
	return data, nil
}

// ReadResult refuse a newer one.
const Version = 1

// The kinds of manifest: a sweep (its Sweep section says how to merge) and
// a regression (verify/regress; its data in Extra).
const (
	KindSweep   = "sweep"
	KindRegress = "regress"
)

// ManifestName is the manifest's file name in a plan directory, and
// ResultsDir the directory of its result files.
const (
	ManifestName = "manifest.json"
	ResultsDir   = "results"
)

// Manifest is a plan: independent jobs and what merging their results
// needs.
type Manifest struct {
	// Version is the format (Version when written).
	Version int `json:"version"`
	// Kind is KindSweep or KindRegress (or another kind a later package
	// adds; RunJob runs any kind's jobs the same way).
	Kind string `json:"kind"`
	// Config is the TOML every job's scenario defaults are overridden by
	// before its Sets (the planner's --config file, inlined), and
	// ConfigName that file's name for error messages; both empty for
	// none.
	Config     string `json:"config,omitempty"`
	ConfigName string `json:"config_name,omitempty"`
	// Sweep is a sweep's merge data (KindSweep only).
	Sweep *SweepInfo `json:"sweep,omitempty"`
	// Extra is another kind's data, kept as it is.
	Extra json.RawMessage `json:"extra,omitempty"`
	// Jobs are the jobs, Jobs[i].Index == i.
	Jobs []Job `json:"jobs"`
}

// SweepInfo is what merging a sweep's results needs beyond the jobs.
type SweepInfo struct {
	// Grid are the swept keys with their units and values, in order (the
	// plot's x axis is the first).
	Grid []Axis `json:"grid"`
	// Seed is the first seed and Seeds the seeds per grid point.
	Seed  uint64 `json:"seed"`
	Seeds int    `json:"seeds"`
	// Y are the metrics tabulated and plotted; LogY and Title the plot's
	// options. Y and Title are empty in the plan of a scenario that does
	// not list its metrics when no --y was given: the merge takes the
	// default among the metrics the runs measured (DefaultY).
	Y     []string `json:"y"`
	LogY  bool     `json:"logy,omitempty"`
	Title string   `json:"title,omitempty"`
	// Defs are the metrics the scenario declares (empty: it declares none,
	// and the merge takes them from the results).
	Defs []MetricDef `json:"metrics,omitempty"`
}

// Axis is one grid key (scenario.Axis in the manifest).
type Axis struct {
	Key    string  `json:"key"`
	Unit   string  `json:"unit,omitempty"`
	Values []Float `json:"values"`
}

// MetricDef is a declared metric (scenario.MetricDef in the manifest).
type MetricDef struct {
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
	Ref  string `json:"ref,omitempty"`
}

// Job is one independent run: a scenario on its defaults, overridden by the
// manifest's Config then Sets in order, with a seed. It is exactly `nisim
// run SCENARIO --seed Seed --set ...` (plus --config with Config's
// contents).
type Job struct {
	// Index is the job's place in Manifest.Jobs (the array task id).
	Index    int    `json:"index"`
	Scenario string `json:"scenario"`
	// Sets are "key=value" overrides, the grid's keys included.
	Sets []string `json:"sets"`
	Seed uint64   `json:"seed"`
	// Mutations are test-only faults, "name=N" (env.ParseMutation).
	Mutations []string `json:"mutations,omitempty"`
	// Result is the result file's path, relative to the plan directory
	// (results/NNNNNN.json).
	Result string `json:"result"`
	// Labels are the kind's own data, in order: a sweep's grid values
	// (key, then the value in shortest round-trip form); a regression's
	// system and index. RunJob ignores them.
	Labels []Label `json:"labels,omitempty"`
}

// Label is one key and value of a job's labels.
type Label struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Label returns the value of label key.
func (j *Job) Label(key string) (string, bool) {
	for _, l := range j.Labels {
		if l.Key == key {
			return l.Value, true
		}
	}
	return "", false
}

// ResultName is job i's result path relative to the plan directory.
func ResultName(i int) string {
	return filepath.ToSlash(filepath.Join(ResultsDir, fmt.Sprintf("%06d.json", i)))
}

// ResultPath is the path of job j's result file in plan directory dir.
func ResultPath(dir string, j *Job) string { return filepath.Join(dir, filepath.FromSlash(j.Result)) }

// Float is a float64 that JSON carries exactly: finite values as the
// shortest number that parses back to the same bits (-0 included), NaN and
// the infinities as the strings "NaN", "+Inf" and "-Inf".
type Float float64

// MarshalJSON writes f exactly.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Float) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) > 0 && s[0] == '"' {
		var q string
		if err := json.Unmarshal(b, &q); err != nil {
			return err
		}
		if q != "NaN" && q != "+Inf" && q != "-Inf" {
			return fmt.Errorf("float %q: want a number, \"NaN\", \"+Inf\" or \"-Inf\"", q)
		}
		s = q
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("float %s: not a number", s)
	}
	*f = Float(v)
	return nil
}

// Metric is one measured metric of a result.
type Metric struct {
	Name  string `json:"name"`
	Unit  string `json:"unit,omitempty"`
	Value Float  `json:"value"`
}

// Check is one check of a result's report.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Result is what one job did: its manifest entry's identity (to catch a
// result file that belongs to another plan), its status as a sweep sees it
// (scenario.Outcome), and its report's metrics and checks.
type Result struct {
	Version  int      `json:"version"`
	Index    int      `json:"index"`
	Scenario string   `json:"scenario"`
	Seed     uint64   `json:"seed"`
	Sets     []string `json:"sets"`
	// Status is "ok", "saturated" or "failed"; Reason the one line that
	// says why it failed or what its saturation failed.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Metrics and Checks are the run's report's (none if it stopped
	// before reporting).
	Metrics []Metric `json:"metrics,omitempty"`
	Checks  []Check  `json:"checks,omitempty"`
	// Violations is the checker monitor's count.
	Violations int `json:"violations,omitempty"`
	// Seconds is the job's wall time (the only field that differs between
	// two runs of a job; no merge output uses it).
	Seconds float64 `json:"seconds"`
}

// Failed reports whether the job's run failed.
func (r *Result) Failed() bool { return r.Status == "failed" }

// MismatchError is a result file that does not belong to its manifest
// entry (another plan's, or edited).
type MismatchError struct {
	Path string
	What string
}

// Error names the file and what differs.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: does not match its manifest entry: %s", e.Path, e.What)
}

// Encode returns v as the indented JSON this package writes, with a final
// newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// trailing data.
func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// versionOf reads only the "version" field of a JSON object, so a newer
// format is refused as newer rather than as malformed.
func versionOf(data []byte) (int, error) {
	var v struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return 0, err
	}
	if v.Version == nil {
		return 0, errors.New("no version field")
	}
	return *v.Version, nil
}

// jsonErr makes a JSON decoding error one short line.
func jsonErr(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Load reads and checks the manifest of plan directory dir: its version
// (a newer one is refused, naming both), kind, job indices and result
// paths (relative, inside results/), and for a sweep the grid, seeds and
// labels. Every error is one line naming the file.
func Load(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := readVersioned(path, MaxManifestBytes, "manifest", ": use the nisim that planned it")
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := decodeStrict(data, &m); err != nil {
		return nil, fmt.Errorf("%s: corrupt manifest: %s", path, jsonErr(err))
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%s: corrupt manifest: %w", path, err)
	}
	return &m, nil
}

// validate checks what Load promises.
func (m *Manifest) validate() error {
	if m.Kind == "" {
		return errors.New("no kind")
	}
	if len(m.Jobs) == 0 {
		return errors.New("no jobs")
	}
	for i := range m.Jobs {
		j := &m.Jobs[i]
		if j.Index != i {
			return fmt.Errorf("job %d has index %d", i, j.Index)
		}
		if j.Scenario == "" {
			return fmt.Errorf("job %d: no scenario", i)
		}
		r := filepath.FromSlash(j.Result)
		if filepath.IsAbs(r) || filepath.Clean(r) != r || !strings.HasPrefix(r, ResultsDir+string(filepath.Separator)) {
			return fmt.Errorf("job %d: result path %q is not a file under %s/", i, j.Result, ResultsDir)
		}
	}
	if m.Kind == KindSweep {
		if m.Sweep == nil {
			return errors.New("kind sweep without a sweep section")
		}
		s := m.Sweep
		if len(s.Grid) == 0 {
			return errors.New("sweep: no grid key")
		}
		if s.Seeds < 1 {
			return fmt.Errorf("sweep: seeds %d", s.Seeds)
		}
		n := s.Seeds
		for _, a := range s.Grid {
			if len(a.Values) == 0 {
				return fmt.Errorf("sweep: grid key %s has no values", a.Key)
			}
			n *= len(a.Values)
			if n > len(m.Jobs) {
				break
			}
		}
		if n != len(m.Jobs) {
			return fmt.Errorf("sweep: the grid and seeds make %d runs but there are %d jobs", n, len(m.Jobs))
		}
		for i := range m.Jobs {
			if _, err := gridOf(s, &m.Jobs[i]); err != nil {
				return fmt.Errorf("job %d: %w", i, err)
			}
		}
	}
	return nil
}

// gridOf reads a sweep job's grid values from its labels.
func gridOf(s *SweepInfo, j *Job) ([]float64, error) {
	if len(j.Labels) != len(s.Grid) {
		return nil, fmt.Errorf("%d labels for %d grid keys", len(j.Labels), len(s.Grid))
	}
	out := make([]float64, len(s.Grid))
	for k, a := range s.Grid {
		l := j.Labels[k]
		if l.Key != a.Key {
			return nil, fmt.Errorf("label %d is %q, want grid key %q", k, l.Key, a.Key)
		}
		v, err := strconv.ParseFloat(l.Value, 64)
		if err != nil {
			return nil, fmt.Errorf("label %s=%q is not a number", l.Key, l.Value)
		}
		out[k] = v
	}
	return out, nil
}

// ReadResult reads job j's result from plan directory dir. A file that
// does not exist is (nil, nil): the job has not run. A file that cannot be
// parsed, of a newer version, or that names another index, scenario, seed
// or sets than its entry is an error (a *MismatchError for the last).
func ReadResult(dir string, j *Job) (*Result, error) {
	path := ResultPath(dir, j)
	data, err := readVersioned(path, MaxResultBytes, "job result", "")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Result
	if err := decodeStrict(data, &r); err != nil {
		return nil, fmt.Errorf("%s: corrupt result: %s", path, jsonErr(err))
	}
	if err := match(&r, j); err != nil {
		return nil, &MismatchError{Path: path, What: err.Error()}
	}
	return &r, nil
}

// match checks that r is job j's result.
func match(r *Result, j *Job) error {
	switch {
	case r.Index != j.Index:
		return fmt.Errorf("index %d, want %d", r.Index, j.Index)
	case r.Scenario != j.Scenario:
		return fmt.Errorf("scenario %q, want %q", r.Scenario, j.Scenario)
	case r.Seed != j.Seed:
		return fmt.Errorf("seed %d, want %d", r.Seed, j.Seed)
	case strings.Join(r.Sets, "\x00") != strings.Join(j.Sets, "\x00") || len(r.Sets) != len(j.Sets):
		return fmt.Errorf("sets %q, want %q", r.Sets, j.Sets)
	case r.Status != "ok" && r.Status != "saturated" && r.Status != "failed":
		return fmt.Errorf("status %q", r.Status)
	}
	return nil
}
