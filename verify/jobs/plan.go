package jobs

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// SweepSpec is what a sweep runs: the scenario's defaults overridden by
// File (read when planning and inlined) and Sets, then every combination
// of the Grid's values (the cartesian product in the order given, the last
// key fastest), each with Seeds seeds (Seed, Seed+1, ...). Y names the
// metrics to tabulate and plot; LogY and Title are the plot's options.
type SweepSpec struct {
	File string
	Sets []string
	// Grid are the keys and their values (their units are filled in by
	// PlanSweep).
	Grid  []scenario.Axis
	Seed  uint64
	Seeds int
	// Y are the metrics to tabulate and plot; none: DefaultY, or the
	// scenario's first metric if it does not measure DefaultY. Title is
	// the plot's (none: SweepTitle's).
	Y         []string
	LogY      bool
	Title     string
	Mutations []string
}

// DefaultY is the metric a sweep tabulates and plots when none is named.
const DefaultY = "latency"

// SweepTitle is a sweep plot's default title: the scenario, the metrics
// and the first grid key.
func SweepTitle(scenario string, ys []string, key string) string {
	return scenario + ": " + strings.Join(ys, ", ") + " vs " + key
}

// defaultY is the default of Y among the metrics defs (DefaultY, else the
// first; none if defs is empty).
func defaultY(defs []scenario.MetricDef) []string {
	for _, d := range defs {
		if d.Name == DefaultY {
			return []string{DefaultY}
		}
	}
	if len(defs) == 0 {
		return nil
	}
	return []string{defs[0].Name}
}

// PlanSweep checks a sweep and returns its manifest, running nothing:
// every grid point is configured (so a key the scenario does not have, a
// value it refuses or a combination it refuses is found now), the metrics
// of spec.Y are checked for a scenario that declares its metrics, and the
// config file is read and inlined. Every error is a *scenario.UsageError,
// one line naming the flag. The jobs are the grid points in order with
// each point's seeds together; job i's result is ResultName(i).
func PlanSweep(s *scenario.Scenario, spec SweepSpec) (*Manifest, error) {
	usage := func(format string, args ...any) error {
		return &scenario.UsageError{Err: fmt.Errorf(format, args...)}
	}
	if spec.Seeds == 0 {
		spec.Seeds = 1
	}
	if spec.Seeds < 1 || spec.Seeds > scenario.MaxSeeds {
		return nil, usage("--seeds: must be in [1, %d] (got %d)", scenario.MaxSeeds, spec.Seeds)
	}
	if spec.Seed > math.MaxUint64-uint64(spec.Seeds) {
		return nil, usage("--seed: %d leaves no room for %d seeds", spec.Seed, spec.Seeds)
	}
	if len(spec.Grid) == 0 {
		return nil, usage("--grid: no key to sweep")
	}
	runs := spec.Seeds
	for i, a := range spec.Grid {
		if a.Key == "" {
			return nil, usage("--grid: empty key")
		}
		for _, b := range spec.Grid[:i] {
			if b.Key == a.Key {
				return nil, usage("--grid %s: the key is given twice", a.Key)
			}
		}
		if len(a.Values) == 0 {
			return nil, usage("--grid %s: no value to sweep", a.Key)
		}
		for _, v := range a.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, usage("--grid %s: %v is not a finite number", a.Key, v)
			}
		}
		if runs > scenario.MaxRuns/len(a.Values) {
			return nil, usage("--grid: more than %d runs (grid points times seeds)", scenario.MaxRuns)
		}
		runs *= len(a.Values)
	}
	for _, set := range spec.Sets {
		k, _, _ := strings.Cut(set, "=")
		for _, a := range spec.Grid {
			if strings.TrimSpace(k) == a.Key {
				return nil, usage("--set %s: %s is a grid key (the grid sets it)", set, a.Key)
			}
		}
	}
	m := &Manifest{Version: Version, Kind: KindSweep}
	var data []byte
	if spec.File != "" {
		var err error
		// Bounded, regular files only, "-" for standard input, as
		// nisim run reads it.
		if data, err = scenario.ReadConfig(spec.File); err != nil {
			return nil, &scenario.UsageError{Err: err}
		}
		m.Config, m.ConfigName = string(data), spec.File
	}
	muts := map[string]int{}
	for _, mu := range spec.Mutations {
		if err := env.ParseMutation(muts, mu); err != nil {
			return nil, usage("--mutate: %v", err)
		}
	}
	// Each key alone first, so that an unknown key or a refused value is
	// named as the grid's before any combination is tried.
	for _, a := range spec.Grid {
		for _, v := range a.Values {
			set := a.Key + "=" + strconv.FormatFloat(v, 'g', -1, 64)
			if err := scenario.ConfigureData(s.Defaults(), spec.File, data, append(slices.Clone(spec.Sets), set)); err != nil {
				// Configure names the value as a --set: name the grid.
				msg, ok := strings.CutPrefix(err.Error(), "--set "+set)
				if !ok {
					msg = ": " + msg
				}
				return nil, usage("--grid %s%s", set, msg)
			}
		}
	}
	sw := &SweepInfo{Seed: spec.Seed, Seeds: spec.Seeds, Y: spec.Y, LogY: spec.LogY, Title: spec.Title}
	var first scenario.Params
	idx := make([]int, len(spec.Grid))
	for {
		p := s.Defaults()
		sets := slices.Clone(spec.Sets)
		var labels []Label
		for k, a := range spec.Grid {
			v := strconv.FormatFloat(a.Values[idx[k]], 'g', -1, 64)
			sets = append(sets, a.Key+"="+v)
			labels = append(labels, Label{Key: a.Key, Value: v})
		}
		if err := scenario.ConfigureData(p, spec.File, data, sets); err != nil {
			return nil, usage("--grid %s: %v", gridText(labels), err)
		}
		if first == nil {
			first = p
		}
		for k := range spec.Seeds {
			i := len(m.Jobs)
			m.Jobs = append(m.Jobs, Job{Index: i, Scenario: s.Name, Sets: sets, Seed: spec.Seed + uint64(k),
				Mutations: spec.Mutations, Result: ResultName(i), Labels: labels})
		}
		// Next grid point: the last key fastest.
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < len(spec.Grid[k].Values) {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			break
		}
	}
	for _, a := range spec.Grid {
		ax := Axis{Key: a.Key, Unit: scenario.ParamUnit(first, a.Key)}
		for _, v := range a.Values {
			ax.Values = append(ax.Values, Float(v))
		}
		sw.Grid = append(sw.Grid, ax)
	}
	if ml, ok := first.(scenario.MetricLister); ok {
		defs := ml.Metrics()
		if len(sw.Y) == 0 {
			sw.Y = defaultY(defs)
		}
		if err := scenario.CheckY(sw.Y, defs); err != nil {
			return nil, err
		}
		for _, d := range defs {
			sw.Defs = append(sw.Defs, MetricDef{Name: d.Name, Unit: d.Unit, Ref: d.Ref})
		}
	}
	// A scenario that does not list its metrics and no --y: the merge
	// takes the default among the metrics the runs measured.
	if sw.Title == "" && len(sw.Y) > 0 {
		sw.Title = SweepTitle(s.Name, sw.Y, spec.Grid[0].Key)
	}
	m.Sweep = sw
	return m, nil
}

func gridText(labels []Label) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = l.Key + "=" + l.Value
	}
	return strings.Join(parts, ",")
}

// Write writes m to plan directory dir (creating it and its results/
// directory), atomically. dir must not exist, be empty, or hold a previous
// plan none of whose jobs has run (manifest.json and an empty results/),
// which is replaced; anything else is refused, so a plan never deletes a
// result or another file.
func Write(dir string, m *Manifest) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("--plan %s: not a directory", dir)
	case err == nil:
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("--plan %s: %w", dir, unwrapPath(err))
		}
		for _, e := range ents {
			switch {
			case e.Name() == ManifestName && e.Type().IsRegular():
			case e.Name() == ResultsDir && e.IsDir():
				res, err := os.ReadDir(filepath.Join(dir, ResultsDir))
				if err != nil {
					return fmt.Errorf("--plan %s: %w", dir, unwrapPath(err))
				}
				if len(res) > 0 {
					return fmt.Errorf("--plan %s: holds a plan whose jobs have run (%s/%s): plan into a new directory", dir, ResultsDir, res[0].Name())
				}
			default:
				return fmt.Errorf("--plan %s: not empty (holds %s): plan into a new or empty directory", dir, e.Name())
			}
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--plan %s: %w", dir, unwrapPath(err))
	}
	if err := os.MkdirAll(filepath.Join(dir, ResultsDir), 0o777); err != nil {
		return fmt.Errorf("--plan %s: %w", dir, unwrapPath(err))
	}
	data, err := encode(m)
	if err != nil {
		return fmt.Errorf("--plan %s: %w", dir, err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, ManifestName), data)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
