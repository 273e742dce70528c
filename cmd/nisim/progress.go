package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// progressDelay is how long a run or sweep goes before its progress
// appears when the display is automatic (stderr a terminal): shorter
// runs stay quiet. --progress shows it at once.
const progressDelay = time.Second

// progressRedraw is the least wall time between two redraws.
const progressRedraw = 100 * time.Millisecond

// addProgressFlag declares --progress on c.
func addProgressFlag(c *cobra.Command) {
	c.Flags().Bool("progress", false, "show progress on standard error (default: when it is a terminal, outside CI, for runs over a second); --progress=false hides it")
}

// progressMode reports whether c shows progress and whether it was forced
// (shown from the start): --progress or --progress=false decide; without
// the flag it is shown when standard error is a terminal and CI is unset.
func progressMode(c *cobra.Command) (on, forced bool) {
	if f := c.Flags().Lookup("progress"); f != nil && f.Changed {
		v, _ := c.Flags().GetBool("progress")
		return v, v
	}
	if os.Getenv("CI") != "" {
		return false, false
	}
	f, ok := c.ErrOrStderr().(*os.File)
	return ok && term.IsTerminal(int(f.Fd())), false
}

// progress draws one bar on standard error. It only observes: nothing it
// does reaches standard output, a trace or a VCD.
type progress struct {
	w      io.Writer
	forced bool
	max    int64 // -1: unknown (spinner)
	start  time.Time
	last   time.Time
	bar    *progressbar.ProgressBar
}

func newProgress(w io.Writer, forced bool, max int64) *progress {
	now := time.Now()
	return &progress{w: w, forced: forced, max: max, start: now}
}

// update moves the bar to v with description desc, at most every
// progressRedraw and, unless forced, only after progressDelay.
func (p *progress) update(v int64, desc string) {
	now := time.Now()
	if p.bar == nil {
		if !p.forced && now.Sub(p.start) < progressDelay {
			return
		}
		p.bar = progressbar.NewOptions64(p.max,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(30),
			// No spinner goroutine: the bar is drawn only from the
			// simulation's own calls.
			progressbar.OptionSetSpinnerChangeInterval(0),
			progressbar.OptionSetPredictTime(p.max > 0),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }))
	} else if now.Sub(p.last) < progressRedraw {
		return
	}
	p.last = now
	// The description first: setting the value redraws the line.
	p.bar.Describe(desc)
	if p.max > 0 {
		_ = p.bar.Set64(min(v, p.max))
	} else {
		_ = p.bar.Add64(1)
	}
}

// setMax makes the bar's end n (-1: unknown, a spinner).
func (p *progress) setMax(n int64) {
	if p.max == n {
		return
	}
	p.max = n
	if p.bar != nil {
		p.bar.ChangeMax64(n)
	}
}

// finish draws the final state (always, when forced) and ends the line.
func (p *progress) finish(v int64, desc string) {
	if p.bar == nil && !p.forced {
		return
	}
	p.last = time.Time{}
	p.update(v, desc)
	if p.max > 0 {
		_ = p.bar.Set64(p.max)
	}
	_ = p.bar.Finish()
}

// runDisplay is the progress of one run: simulated time and events from
// env.Options.Progress and, for a run made of a known list of
// measurements, done of total from env.Options.Phases. With phases the bar
// counts measurements (the LCI benchmarks run most of theirs in
// environments of their own, which the event hook cannot see); without,
// simulated time against the time limit, or a live count.
type runDisplay struct {
	p           *progress
	limit       clock.Time
	now         clock.Time
	events      uint64
	done, total int
	next        string
}

func (r *runDisplay) desc() string {
	sim := fmt.Sprintf("simulated %v, %d events", r.now, r.events)
	if r.limit > 0 {
		sim = fmt.Sprintf("simulated %v of %v, %d events", r.now, r.limit, r.events)
	}
	if r.total == 0 {
		return sim
	}
	if r.next == "" {
		return fmt.Sprintf("%d of %d measurements; %s", r.done, r.total, sim)
	}
	return fmt.Sprintf("%d of %d measurements, now %s; %s", r.done, r.total, r.next, sim)
}

// value is where the bar stands: measurements done, or simulated time.
func (r *runDisplay) value() int64 {
	if r.total > 0 {
		return int64(r.done)
	}
	return int64(r.now)
}

// runProgress returns the Options.Progress and Options.Phases hooks of one
// run and the function that ends the display, or nils when progress is
// off. limit is the run's end in simulated time (0: unknown: a live count
// instead, unless the run reports phases).
func runProgress(c *cobra.Command, limit clock.Time) (func(clock.Time, uint64), func(int, int, string), func(clock.Time, uint64)) {
	on, forced := progressMode(c)
	if !on {
		return nil, nil, nil
	}
	max := int64(-1)
	if limit > 0 {
		max = int64(limit)
	}
	r := &runDisplay{p: newProgress(c.ErrOrStderr(), forced, max), limit: limit}
	progress := func(now clock.Time, events uint64) {
		r.now, r.events = now, events
		r.p.update(r.value(), r.desc())
	}
	phases := func(done, total int, next string) {
		if total <= 0 {
			return
		}
		r.done, r.total, r.next = done, total, next
		r.p.setMax(int64(total))
		// A phase is rare and worth showing at once: no redraw throttle.
		r.p.last = time.Time{}
		r.p.update(r.value(), r.desc())
	}
	done := func(now clock.Time, events uint64) {
		r.now, r.events = now, events
		r.p.finish(r.value(), r.desc())
	}
	return progress, phases, done
}

// sweepProgress returns the SweepSpec.Done hook, or nil when progress is
// off.
func sweepProgress(c *cobra.Command) func(done, total int) {
	on, forced := progressMode(c)
	if !on {
		return nil
	}
	p := newProgress(c.ErrOrStderr(), forced, 0)
	return func(done, total int) {
		p.max = int64(total)
		desc := fmt.Sprintf("sweep: %d of %d points", done, total)
		if done == total {
			p.finish(int64(done), desc)
			return
		}
		p.update(int64(done), desc)
	}
}
