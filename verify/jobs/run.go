package jobs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// Exec runs job i of m on its scenario from cat, as `nisim run` would, and
// returns its result; it writes nothing. A run that cannot be set up,
// returns an error, fires a checker, fails a check or panics is a result
// with Status "failed" and the reason (scenario.Outcome classifies the
// rest); Exec itself never fails.
func Exec(cat scenario.Catalog, m *Manifest, i int) (res *Result) {
	j := &m.Jobs[i]
	res = &Result{Version: Version, Index: j.Index, Scenario: j.Scenario, Seed: j.Seed, Sets: j.Sets}
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			res.Status, res.Reason = "failed", oneLine(fmt.Sprintf("panic: %v", v))
		}
		res.Seconds = time.Since(start).Seconds()
	}()
	fail := func(err error) *Result {
		res.Status, res.Reason = "failed", oneLine(err.Error())
		return res
	}
	s, err := cat.Lookup(j.Scenario)
	if err != nil {
		return fail(err)
	}
	p := s.Defaults()
	if err := scenario.ConfigureData(p, m.ConfigName, []byte(m.Config), j.Sets); err != nil {
		return fail(err)
	}
	var muts map[string]int
	for _, mu := range j.Mutations {
		if muts == nil {
			muts = map[string]int{}
		}
		if err := env.ParseMutation(muts, mu); err != nil {
			return fail(fmt.Errorf("mutation: %w", err))
		}
	}
	rep, e, violations, err := scenario.Exec(s, p, scenario.Options{Seed: j.Seed, Mutations: muts,
		Comment: fmt.Sprintf("nisim job %d: nisim run %s --seed %d", j.Index, j.Scenario, j.Seed)})
	if e != nil {
		res.Violations = e.Monitor.Count()
	}
	st, why := scenario.Outcome(rep, violations, err)
	res.Status, res.Reason = st.String(), why
	if rep != nil {
		for _, mt := range rep.Metrics {
			res.Metrics = append(res.Metrics, Metric{Name: mt.Name, Unit: mt.Unit, Value: Float(mt.Value)})
		}
		for _, c := range rep.Checks {
			res.Checks = append(res.Checks, Check{Name: c.Name, OK: c.OK, Detail: c.Detail})
		}
	}
	return res
}

// Report returns the result's metrics and checks as a scenario report (for
// a kind's own counting, such as regress.System.Count).
func (r *Result) Report() *scenario.Report {
	rep := &scenario.Report{Seed: r.Seed}
	for _, m := range r.Metrics {
		rep.Metrics = append(rep.Metrics, scenario.Metric{Name: m.Name, Value: float64(m.Value), Unit: m.Unit})
	}
	for _, c := range r.Checks {
		rep.Checks = append(rep.Checks, scenario.CheckResult{Name: c.Name, OK: c.OK, Detail: c.Detail})
	}
	return rep
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	const max = 300
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// RunJob runs job i of the plan in dir (its manifest m) and writes its
// result file atomically, whatever the run did; the error is about the
// index or writing the file only (a failed run is a result with Status
// "failed"). An index out of range is an error naming the job count.
func RunJob(cat scenario.Catalog, dir string, m *Manifest, i int) (*Result, error) {
	if i < 0 || i >= len(m.Jobs) {
		return nil, fmt.Errorf("index %d out of range: the plan has %d jobs (0 to %d)", i, len(m.Jobs), len(m.Jobs)-1)
	}
	res := Exec(cat, m, i)
	data, err := encode(res)
	if err != nil {
		return nil, err
	}
	path := ResultPath(dir, &m.Jobs[i])
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return nil, err
	}
	return res, nil
}

// RunAll runs every job of m on workers goroutines (0 or less: one per
// CPU) and returns the results by job index, so nothing about them depends
// on the worker count. done, if not nil, is called after each job with the
// number finished and the total (from one goroutine at a time). Each job
// builds its own Env: jobs share no mutable state.
func RunAll(cat scenario.Catalog, m *Manifest, workers int, done func(done, total int)) []*Result {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	results := make([]*Result, len(m.Jobs))
	next := make(chan int)
	var mu sync.Mutex
	finished := 0
	var wg sync.WaitGroup
	for range min(workers, max(len(m.Jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = Exec(cat, m, i)
				mu.Lock()
				finished++
				if done != nil {
					done(finished, len(m.Jobs))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range m.Jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// The environment variables a job's index is read from, in order: a Slurm
// job array's task id, then a Kubernetes Indexed Job's completion index.
const (
	SlurmIndexVar = "SLURM_ARRAY_TASK_ID"
	K8sIndexVar   = "JOB_COMPLETION_INDEX"
)

// IndexFromEnv returns the job index from SLURM_ARRAY_TASK_ID, else
// JOB_COMPLETION_INDEX (getenv is os.Getenv outside tests), and the
// variable it came from. Neither set, or a value that is not a
// non-negative integer, is an error naming the variable.
func IndexFromEnv(getenv func(string) string) (int, string, error) {
	for _, name := range []string{SlurmIndexVar, K8sIndexVar} {
		v := getenv(name)
		if v == "" {
			continue
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 {
			return 0, name, fmt.Errorf("%s=%q is not a job index (a non-negative integer)", name, v)
		}
		return i, name, nil
	}
	return 0, "", fmt.Errorf("no --index and neither %s nor %s is set", SlurmIndexVar, K8sIndexVar)
}
