package jobs

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/verify/scenario"
)

// Collect reads the result of every job of the plan in dir: results by
// index, nil for a job whose file does not exist (listed in missing, in
// increasing order). A result file that cannot be read or does not match
// its entry stops it with that error (a *MismatchError for the latter).
func Collect(dir string, m *Manifest) (results []*Result, missing []int, err error) {
	results = make([]*Result, len(m.Jobs))
	for i := range m.Jobs {
		r, err := ReadResult(dir, &m.Jobs[i])
		if err != nil {
			return nil, nil, err
		}
		if r == nil {
			missing = append(missing, i)
		}
		results[i] = r
	}
	return results, missing, nil
}

// MergeSweep builds a sweep's result from its manifest and its jobs'
// results by index (nil: missing, a point with status missing). The
// metrics are the scenario's declared ones from the manifest or, for a
// scenario that declares none, the results' in the order first measured,
// against which the manifest's Y are checked then (a *scenario.UsageError).
// A plan made without Y (such a scenario, no --y) gets its Y and Title
// here, in m.Sweep: DefaultY if measured, else the first metric. It depends on nothing but its arguments, so a local sweep and a merge of
// the same results give the same bytes.
func MergeSweep(m *Manifest, results []*Result) (*scenario.SweepResult, error) {
	if m.Kind != KindSweep || m.Sweep == nil {
		return nil, fmt.Errorf("merge: manifest of kind %q is not a sweep", m.Kind)
	}
	if len(results) != len(m.Jobs) {
		return nil, fmt.Errorf("merge: %d results for %d jobs", len(results), len(m.Jobs))
	}
	sw := m.Sweep
	res := &scenario.SweepResult{Scenario: m.Jobs[0].Scenario, Seeds: sw.Seeds}
	for _, a := range sw.Grid {
		ax := scenario.Axis{Key: a.Key, Unit: a.Unit}
		for _, v := range a.Values {
			ax.Values = append(ax.Values, float64(v))
		}
		res.Grid = append(res.Grid, ax)
	}
	for _, d := range sw.Defs {
		res.Defs = append(res.Defs, scenario.MetricDef{Name: d.Name, Unit: d.Unit, Ref: d.Ref})
	}
	measured := false
	for i := range m.Jobs {
		j := &m.Jobs[i]
		grid, err := gridOf(sw, j)
		if err != nil {
			return nil, fmt.Errorf("merge: job %d: %w", i, err)
		}
		pt := scenario.Point{Grid: grid, Seed: j.Seed, Status: scenario.StatusMissing}
		if r := results[i]; r != nil {
			if err := match(r, j); err != nil {
				return nil, &MismatchError{Path: j.Result, What: err.Error()}
			}
			st, err := scenario.ParseStatus(r.Status)
			if err != nil || st == scenario.StatusMissing {
				return nil, &MismatchError{Path: j.Result, What: fmt.Sprintf("status %q", r.Status)}
			}
			pt.Status, pt.Reason = st, r.Reason
			for _, mt := range r.Metrics {
				pt.Metrics = append(pt.Metrics, scenario.Metric{Name: mt.Name, Value: float64(mt.Value), Unit: mt.Unit})
				measured = true
			}
		}
		res.Points = append(res.Points, pt)
	}
	if len(sw.Defs) == 0 && measured {
		seen := map[string]bool{}
		for _, p := range res.Points {
			for _, mt := range p.Metrics {
				if !seen[mt.Name] {
					seen[mt.Name] = true
					res.Defs = append(res.Defs, scenario.MetricDef{Name: mt.Name, Unit: mt.Unit})
				}
			}
		}
		if len(sw.Y) == 0 {
			sw.Y = defaultY(res.Defs)
		}
		if err := scenario.CheckY(sw.Y, res.Defs); err != nil {
			return nil, err
		}
	}
	if len(sw.Y) == 0 {
		// Nothing measured and nothing named: the table's column is the
		// default's, empty.
		sw.Y = []string{DefaultY}
	}
	if sw.Title == "" {
		sw.Title = SweepTitle(res.Scenario, sw.Y, sw.Grid[0].Key)
	}
	return res, nil
}

// Sweep runs a sweep locally through the plan's path: PlanSweep, then
// every job on workers goroutines (RunAll), then MergeSweep. It returns the
// manifest (for the plot options) and the merged result; errors are the
// planner's (*scenario.UsageError) or the merge's.
func Sweep(cat scenario.Catalog, s *scenario.Scenario, spec SweepSpec, workers int, done func(done, total int)) (*Manifest, *scenario.SweepResult, error) {
	m, err := PlanSweep(s, spec)
	if err != nil {
		return nil, nil, err
	}
	if _, err := cat.Lookup(s.Name); err != nil {
		return nil, nil, errors.New("sweep: the scenario is not in the catalog its jobs run from")
	}
	res, err := MergeSweep(m, RunAll(cat, m, workers, done))
	return m, res, err
}
