package regress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nisim/nisim/verify/jobs"
)

// PlanInfo is a regression manifest's own section (jobs.Manifest.Extra):
// what its jobs were drawn from. A merge draws the jobs again from it and
// checks them against the manifest, so that it judges every result with
// the system (its Count, its target) the job was planned for.
type PlanInfo struct {
	// Systems are the systems planned, in the tier's order.
	Systems []string `json:"systems"`
	Scale   float64  `json:"scale"`
	Seed    uint64   `json:"seed"`
}

// The labels of a regression job in its manifest: its system and its index
// within the system (Job.Name is "system#index").
const (
	LabelSystem = "system"
	LabelIndex  = "index"
)

// newManifest returns the manifest of list (no Extra: enough to run it).
// Job i of the manifest is list[i]: its scenario, its sets as key=value,
// its seed, its system and index as labels.
func newManifest(list []*Job) *jobs.Manifest {
	m := &jobs.Manifest{Version: jobs.Version, Kind: jobs.KindRegress}
	for i, j := range list {
		m.Jobs = append(m.Jobs, jobs.Job{Index: i, Scenario: j.Scenario, Sets: j.Args(), Seed: j.Seed,
			Result: jobs.ResultName(i),
			Labels: []jobs.Label{{Key: LabelSystem, Value: j.System.Name}, {Key: LabelIndex, Value: strconv.Itoa(j.Index)}}})
	}
	return m
}

// Manifest returns the manifest of a tier planned with opts (list is
// Plan's result for opts): kind regress, job i list[i], and a PlanInfo
// naming the systems, scale and seed.
func Manifest(list []*Job, opts Options) (*jobs.Manifest, error) {
	if len(list) == 0 {
		return nil, errors.New("regress: no jobs to plan")
	}
	m := newManifest(list)
	info := PlanInfo{Scale: opts.Scale, Seed: opts.Seed}
	for _, j := range list {
		if !slices.Contains(info.Systems, j.System.Name) {
			info.Systems = append(info.Systems, j.System.Name)
		}
	}
	extra, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("regress: %w", err)
	}
	m.Extra = extra
	return m, nil
}

// FromManifest returns the jobs of a regression manifest and the options
// they were planned with: it draws the plan again from the manifest's
// PlanInfo on systems and checks that every job is the one drawn (its
// scenario, seed, sets and labels), so a manifest planned by another nisim
// (other systems, other draws) or edited is refused with an error naming
// the first job that differs.
func FromManifest(systems []*System, m *jobs.Manifest) ([]*Job, Options, error) {
	if m.Kind != jobs.KindRegress {
		return nil, Options{}, fmt.Errorf("manifest of kind %q is not a regression tier (plan one with nisim regress --plan)", m.Kind)
	}
	var info PlanInfo
	d := json.NewDecoder(bytes.NewReader(m.Extra))
	d.DisallowUnknownFields()
	if len(m.Extra) == 0 {
		return nil, Options{}, errors.New("regression manifest without its plan section (extra)")
	}
	if err := d.Decode(&info); err != nil {
		return nil, Options{}, fmt.Errorf("regression manifest's plan section (extra): %v", err)
	}
	opts := Options{Systems: info.Systems, Scale: info.Scale, Seed: info.Seed}
	list, err := Plan(systems, opts)
	if err != nil {
		return nil, Options{}, fmt.Errorf("regression manifest's plan section (extra): %w", err)
	}
	if len(list) != len(m.Jobs) {
		return nil, Options{}, fmt.Errorf("the manifest has %d jobs where this nisim plans %d for systems %s, scale %g, seed %d: merge with the nisim that planned it",
			len(m.Jobs), len(list), strings.Join(info.Systems, ","), info.Scale, info.Seed)
	}
	want := newManifest(list)
	for i := range m.Jobs {
		if err := sameJob(&m.Jobs[i], &want.Jobs[i]); err != nil {
			return nil, Options{}, fmt.Errorf("manifest job %d (%s): %v, where this nisim plans it otherwise: merge with the nisim that planned it", i, list[i].Name(), err)
		}
	}
	return list, opts, nil
}

// sameJob reports how got differs from want (nil: in nothing that matters
// to the run or the merge).
func sameJob(got, want *jobs.Job) error {
	switch {
	case got.Scenario != want.Scenario:
		return fmt.Errorf("scenario %q", got.Scenario)
	case got.Seed != want.Seed:
		return fmt.Errorf("seed %d", got.Seed)
	case !slices.Equal(got.Sets, want.Sets):
		return fmt.Errorf("sets %q", got.Sets)
	case len(got.Mutations) > 0:
		return fmt.Errorf("mutations %q", got.Mutations)
	case !slices.Equal(got.Labels, want.Labels):
		return fmt.Errorf("labels %v", got.Labels)
	}
	return nil
}

// Merge reads the results of the regression tier planned in dir (by
// nisim regress --plan, run by nisim job) and returns its summary, as the
// local run's (Summarize of Judge's verdicts) but without a wall time,
// and the options it was planned with. A job whose result file does not
// exist counts as failed with the reason "missing" (and no transactions),
// and is listed in missing by index. A manifest or result file that cannot
// be read, or that belongs to another plan, is an error.
func Merge(systems []*System, dir string) (sum Summary, opts Options, missing []int, err error) {
	m, err := jobs.Load(dir)
	if err != nil {
		return Summary{}, Options{}, nil, err
	}
	list, opts, err := FromManifest(systems, m)
	if err != nil {
		return Summary{}, Options{}, nil, fmt.Errorf("%s: %w", dir, err)
	}
	results, missing, err := jobs.Collect(dir, m)
	if err != nil {
		return Summary{}, Options{}, nil, err
	}
	out := make([]Result, len(list))
	for i, j := range list {
		if results[i] == nil {
			out[i] = Result{Job: j, Failed: true, Reason: fmt.Sprintf("missing: no result %s (the job has not run, or did not finish)", m.Jobs[i].Result)}
			continue
		}
		out[i] = Judge(j, results[i])
	}
	return Summarize(out, opts.Scale), opts, missing, nil
}
