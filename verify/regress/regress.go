// Package regress is nisim's regression tier: for every system built so far
// (the wormhole mesh, the Myrinet clusters, the ATM switch, the Memory
// Channel hub and cluster, Telegraphos, LCI and SHRIMP) randomised scenario runs with every
// checker on, adding up to at least a million transactions per system, as
// independent seeded jobs spread over the cores.
//
// A job is one scenario run through the normal path (the scenario's
// defaults with --set values, then scenario.Exec), exactly what `nisim run
// SCENARIO --seed S --set k=v ...` does, so every failing job comes with the
// command line that reproduces it alone. The jobs are a job manifest of kind
// regress (verify/jobs; Manifest): run here on the cores (Run) or planned
// into a directory and run anywhere by `nisim job`, one by one or as a Slurm
// job array, then merged (Merge); either way each run is jobs.Exec and each
// verdict Judge, so the two give the same table. Its transactions are
// counted from the run's report (see System.Count), never from the volume
// it asked for. The job list depends only on the base seed, the scale and
// the systems chosen; results do not depend on how many jobs run at once
// (each job builds its own Env).
package regress

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nisim/nisim/verify/jobs"
	"github.com/nisim/nisim/verify/scenario"
)

// Target is the transactions every system must reach at scale 1.
const Target = 1_000_000

// Set is one --set key=value of a job.
type Set struct {
	Key, Value string
}

// Arg returns the set as nisim run's --set argument.
func (s Set) Arg() string { return s.Key + "=" + s.Value }

// Spec is what a system's Draw returns for one job: the scenario, its
// parameters and the transactions the job is expected to carry out (an
// estimate from the parameters, used to size jobs and order them; the
// tier counts what the run reports).
type Spec struct {
	Scenario string
	Sets     []Set
	Expect   float64
	// Cost, if not 0, estimates the job's CPU seconds (else the system's
	// Cost per transaction times Expect); only the order jobs start in
	// depends on it.
	Cost float64
}

// System is one system of the tier.
type System struct {
	// Name is what --system selects.
	Name string
	// Noun names the transactions in progress lines ("packets"); Unit
	// says what one transaction of this system is, for the table.
	Noun, Unit string
	// Chunk is the transactions a job carries out at scale 1 (jobs are
	// about this size; the last ones make up the volume).
	Chunk float64
	// Cost is an estimate of the CPU seconds per transaction, to start
	// the longest jobs first (a Spec may give its own).
	Cost float64
	// Draw draws one job's parameters from r for about want transactions.
	Draw func(r *rand.Rand, want float64) Spec
	// Count returns the transactions a finished run carried out, from its
	// report.
	Count func(rep *scenario.Report) (uint64, error)
}

// Job is one seeded scenario run of a system.
type Job struct {
	System   *System
	Index    int // within its system
	Scenario string
	Seed     uint64
	Sets     []Set
	Expect   float64
	// Cost estimates the job's CPU seconds (see Spec.Cost).
	Cost float64
}

// Name is "system#index".
func (j *Job) Name() string { return fmt.Sprintf("%s#%d", j.System.Name, j.Index) }

// Args returns the job's --set arguments.
func (j *Job) Args() []string {
	var a []string
	for _, s := range j.Sets {
		a = append(a, s.Arg())
	}
	return a
}

// Repro returns the command line that runs the job alone.
func (j *Job) Repro() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bin/nisim run %s --seed %d", j.Scenario, j.Seed)
	for _, s := range j.Sets {
		b.WriteString(" --set ")
		b.WriteString(shellQuote(s.Arg()))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// characters every shell leaves alone.
func shellQuote(s string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:=+/%@", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Options select and size the tier.
type Options struct {
	// Systems are the names to run, in the tier's order whatever their
	// order here; empty runs every system.
	Systems []string
	// Scale multiplies the volume (1: at least Target transactions per
	// system).
	Scale float64
	// Seed is the base seed every job's seed and parameters derive from.
	Seed uint64
}

// Margin is how much more than the target the jobs are planned to carry
// out, so that the counted volume reaches the target although the
// estimates are estimates.
const Margin = 1.08

// minJobs is the fewest jobs a system is split into, however small the
// scale, so that even a quick run varies the parameters.
const minJobs = 2

// Plan returns the jobs of the systems opts selects from systems, in the
// tier's order (system by system, job by job). It depends only on opts.
func Plan(systems []*System, opts Options) ([]*Job, error) {
	if !(opts.Scale > 0) || opts.Scale > 1000 {
		return nil, fmt.Errorf("scale: %g must be in (0, 1000]", opts.Scale)
	}
	chosen, err := choose(systems, opts.Systems)
	if err != nil {
		return nil, err
	}
	var jobs []*Job
	for _, s := range chosen {
		target := math.Ceil(Target * opts.Scale)
		n := max(minJobs, int(math.Ceil(target*Margin/s.Chunk)))
		want := target * Margin / float64(n)
		h := fnv.New64a()
		h.Write([]byte(s.Name))
		r := rand.New(rand.NewPCG(opts.Seed, h.Sum64()))
		for i := range n {
			seed := uint64(r.Uint32())
			sp := s.Draw(r, want)
			cost := sp.Cost
			if cost == 0 {
				cost = sp.Expect * s.Cost
			}
			jobs = append(jobs, &Job{System: s, Index: i, Scenario: sp.Scenario, Seed: seed, Sets: sp.Sets, Expect: sp.Expect, Cost: cost})
		}
	}
	return jobs, nil
}

// choose returns the named systems in the tier's order.
func choose(systems []*System, names []string) ([]*System, error) {
	if len(names) == 0 {
		return systems, nil
	}
	var known []string
	for _, s := range systems {
		known = append(known, s.Name)
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("system: unknown system %q (known: %s)", n, strings.Join(known, ", "))
		}
	}
	var out []*System
	for _, s := range systems {
		if slices.Contains(names, s.Name) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Result is what one job did.
type Result struct {
	Job          *Job
	Transactions uint64
	// Violations is the checker monitor's count.
	Violations int
	// Failed is set when the run broke a checker rule, failed a check,
	// could not be set up or counted, or panicked; Reason says which,
	// in one line.
	Failed bool
	Reason string
	Wall   time.Duration
}

// Exec runs one job alone through the manifest's path (jobs.Exec on a
// one-job manifest, what `nisim job` runs), as `nisim run` would, and
// judges its result by the tier's rules (Judge).
func Exec(cat scenario.Catalog, j *Job) Result {
	m := newManifest([]*Job{j})
	return Judge(j, jobs.Exec(cat, m, 0))
}

// Judge is the tier's verdict on job j's result r, which jobs.Exec made
// here or `nisim job` made anywhere else (read back from its file): its
// transactions are counted from the run's report (System.Count), and it
// fails if the run failed (r.Reason: it could not be set up, returned an
// error, fired a checker or panicked), if any check of its report failed
// (a saturated run too: a sweep plots it, the tier does not pass it), if a
// checker counted a violation, or if its transactions cannot be counted.
// The first of these is the Reason.
func Judge(j *Job, r *jobs.Result) Result {
	res := Result{Job: j, Violations: r.Violations, Wall: time.Duration(r.Seconds * float64(time.Second))}
	fail := func(format string, args ...any) {
		if !res.Failed {
			res.Failed, res.Reason = true, oneLine(fmt.Sprintf(format, args...))
		}
	}
	if r.Failed() {
		fail("%s", r.Reason)
	}
	n, cerr := j.System.Count(r.Report())
	res.Transactions = n
	for _, c := range r.Checks {
		if !c.OK {
			fail("FAIL %s: %s", c.Name, c.Detail)
		}
	}
	if res.Violations > 0 {
		fail("%d checker violation(s)", res.Violations)
	}
	if cerr != nil {
		fail("counting transactions: %v", cerr)
	}
	return res
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	const max = 300
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// Run runs jobs on workers goroutines (0: one per CPU) through the
// manifest's path, the one a planned tier's `nisim job` takes: the jobs
// become a manifest (Manifest), each runs by jobs.Exec, and Judge gives
// its verdict. It returns the results in the jobs' order. The longest jobs
// (by estimate) start first; progress, if not nil, gets a line per
// finished job. Jobs share nothing: each runs in an Env of its own.
func Run(cat scenario.Catalog, list []*Job, workers int, progress io.Writer) []Result {
	m := newManifest(list)
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(list[b].Cost, list[a].Cost) })
	results := make([]Result, len(list))
	next := make(chan int)
	var mu sync.Mutex // progress lines and the finished count
	done := 0
	var wg sync.WaitGroup
	for range min(workers, max(len(list), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := Judge(list[i], jobs.Exec(cat, m, i))
				results[i] = r
				mu.Lock()
				done++
				if progress != nil {
					fmt.Fprintln(progress, progressLine(done, len(list), r))
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

func progressLine(done, total int, r Result) string {
	j := r.Job
	status := "ok  "
	if r.Failed {
		status = "FAIL"
	}
	line := fmt.Sprintf("[%*d/%d] %s %-14s %9d %-10s (planned ~%.0f) %7.1fs  %s seed %d", len(fmt.Sprint(total)), done, total, status, j.Name(),
		r.Transactions, j.System.Noun, j.Expect, r.Wall.Seconds(), j.Scenario, j.Seed)
	if r.Failed {
		line += "\n    " + r.Reason + "\n    repro: " + j.Repro()
	}
	return line
}

// Row is one system's line of the summary.
type Row struct {
	System       *System
	Jobs         int
	Transactions uint64
	Target       uint64
	Violations   int
	Failed       int
	// JobTime is the sum of the jobs' wall times.
	JobTime time.Duration
}

// Short reports whether the system carried out fewer transactions than its
// target.
func (r Row) Short() bool { return r.Transactions < r.Target }

// Summary is the tier's outcome.
type Summary struct {
	Rows    []Row
	Results []Result
	// Wall is the tier's wall time (set by the caller).
	Wall time.Duration
}

// Summarize adds up results per system, in the order of the jobs.
func Summarize(results []Result, scale float64) Summary {
	s := Summary{Results: results}
	idx := map[*System]int{} // lookup only; rows follow the jobs' order
	for _, r := range results {
		i, ok := idx[r.Job.System]
		if !ok {
			i = len(s.Rows)
			idx[r.Job.System] = i
			s.Rows = append(s.Rows, Row{System: r.Job.System, Target: uint64(math.Ceil(Target * scale))})
		}
		row := &s.Rows[i]
		row.Jobs++
		row.Transactions += r.Transactions
		row.Violations += r.Violations
		row.JobTime += r.Wall
		if r.Failed {
			row.Failed++
		}
	}
	return s
}

// Failed reports whether a job failed or a system fell short of its target.
func (s Summary) Failed() bool {
	for _, r := range s.Rows {
		if r.Failed > 0 || r.Short() {
			return true
		}
	}
	return false
}

// Print writes the table, the unit of every system, and a repro line for
// every failing job.
func (s Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "%-12s %5s %13s %13s %10s %7s %10s %12s\n", "system", "jobs", "transactions", "target", "violations", "failed", "job time", "per job-s")
	var jobs, failed, viol int
	var tx uint64
	var jt time.Duration
	for _, r := range s.Rows {
		mark := ""
		if r.Short() {
			mark = "  SHORT of the target"
		}
		fmt.Fprintf(w, "%-12s %5d %13d %13d %10d %7d %9.0fs %12.0f%s\n", r.System.Name, r.Jobs, r.Transactions, r.Target,
			r.Violations, r.Failed, r.JobTime.Seconds(), float64(r.Transactions)/max(r.JobTime.Seconds(), 1e-9), mark)
		jobs += r.Jobs
		failed += r.Failed
		viol += r.Violations
		tx += r.Transactions
		jt += r.JobTime
	}
	fmt.Fprintf(w, "%-12s %5d %13d %13s %10d %7d %9.0fs %12s\n", "total", jobs, tx, "", viol, failed, jt.Seconds(), "")
	if s.Wall > 0 {
		fmt.Fprintf(w, "wall time %.0fs (job time: the jobs' own wall times added up; they run side by side)\n", s.Wall.Seconds())
	}
	fmt.Fprintln(w, "\na transaction is:")
	for _, r := range s.Rows {
		fmt.Fprintf(w, "  %-12s %s\n", r.System.Name, r.System.Unit)
	}
	var bad []Result
	for _, r := range s.Results {
		if r.Failed {
			bad = append(bad, r)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "\n%d failing job(s), each reproduced alone by:\n", len(bad))
		for _, r := range bad {
			fmt.Fprintf(w, "%s: %s\n  %s\n", r.Job.Name(), r.Reason, r.Job.Repro())
		}
	}
}

// ErrNoMetric is returned by a Count when the report lacks a metric it
// counts from.
var ErrNoMetric = errors.New("the report has no such metric")

// Metric returns the report's metric name.
func Metric(rep *scenario.Report, name string) (float64, error) {
	for _, m := range rep.Metrics {
		if m.Name == name {
			return m.Value, nil
		}
	}
	return 0, fmt.Errorf("%q: %w", name, ErrNoMetric)
}

// SumMetrics returns a Count adding the named metrics of a report.
func SumMetrics(names ...string) func(*scenario.Report) (uint64, error) {
	return func(rep *scenario.Report) (uint64, error) {
		var n uint64
		for _, name := range names {
			v, err := Metric(rep, name)
			if err != nil {
				return n, err
			}
			if v < 0 || v != math.Trunc(v) {
				return n, fmt.Errorf("metric %q is %g, not a count", name, v)
			}
			n += uint64(v)
		}
		return n, nil
	}
}
