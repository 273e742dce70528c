package noc

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/verify/scenario"
)

// drainer runs a star's experiment through warm-up, measurement and drain:
// once the measurement window is over and every measured transaction has
// been resolved (delivered, or dropped where the network may drop), the
// endpoints stop generating and the network empties, so the run ends with
// the checkers and the watchdog seeing everything through. If the drain
// limit passes first the network is saturated and the run is stopped
// where it is.
type drainer struct {
	*clock.Ticking
	env       *env.Env
	win       stats.Window
	open      func() int // measured transactions not resolved yet
	stops     []func()
	ended     bool
	saturated bool
	state     string // the stuck-state snapshot at the drain limit
}

func newDrainer(e *env.Env, name string, clk clock.Clock, win stats.Window, open func() int) *drainer {
	d := &drainer{env: e, win: win, open: open}
	d.Ticking = clock.NewTicking(name, e.Engine, clk, d)
	return d
}

// start arms the end-of-measurement timer; call it before the run.
func (d *drainer) start() { d.WakeAt(d.Clock().TimeOf(clock.Cycle(d.win.Warmup + d.win.Measure))) }

// resolved must be called whenever a measured transaction is resolved.
func (d *drainer) resolved(now clock.Time) {
	if !d.ended && uint64(d.Clock().CycleAt(now)) >= d.win.Warmup+d.win.Measure && d.open() == 0 {
		d.end()
	}
}

// Tick implements clock.Ticker: it checks the end of measurement and the
// drain limit.
func (d *drainer) Tick(now clock.Time) bool {
	if d.ended {
		return false
	}
	c := uint64(d.Clock().CycleAt(now))
	measureEnd := d.win.Warmup + d.win.Measure
	switch {
	case c < measureEnd:
		d.WakeAt(d.Clock().TimeOf(clock.Cycle(measureEnd)))
	case d.open() == 0:
		d.end()
	case c >= measureEnd+d.win.DrainLimit:
		d.saturated = true
		d.state = d.env.Monitor.Snapshot(now, "drain limit hit")
		d.env.Stop()
		d.end()
	default:
		d.WakeAt(d.Clock().TimeOf(clock.Cycle(measureEnd + d.win.DrainLimit)))
	}
	return false
}

func (d *drainer) end() {
	d.ended = true
	for _, s := range d.stops {
		s()
	}
}

// window is the warm-up/measure/drain parameters the star scenarios share
// with the networks' (the same keys).
type window struct {
	SamplePeriod   int `toml:"sample_period"`
	WarmupPeriods  int `toml:"warmup_periods"`
	MeasurePeriods int `toml:"measure_periods"`
	DrainLimit     int `toml:"drain_limit"`
}

// validate checks the window of a run on clock clk: the whole run must fit
// in scenario.MaxRun (a sample period of 2^63 cycles overflowed it).
func (w window) validate(clk clock.Clock) error {
	return scenario.FirstError(
		scenario.Check(w.SamplePeriod < 1, "sample_period", "must be at least 1 (got %d)", w.SamplePeriod),
		scenario.Check(w.WarmupPeriods < 0, "warmup_periods", "must not be negative (got %d)", w.WarmupPeriods),
		scenario.Check(w.MeasurePeriods < 1, "measure_periods", "must be at least 1 (got %d)", w.MeasurePeriods),
		scenario.Check(w.DrainLimit < 1, "drain_limit", "must be at least 1 (got %d)", w.DrainLimit),
		checkRun(w.SamplePeriod, w.WarmupPeriods, w.MeasurePeriods, w.DrainLimit, clk),
	)
}

// checkRun refuses a run longer than scenario.MaxRun, naming the keys.
func checkRun(sample, warmup, measure, drain int, clk clock.Clock) error {
	n := scenario.RunCycles(sample, warmup, measure, drain)
	if err := scenario.CheckCycles("sample_period", n, clk, scenario.MaxRun); err != nil {
		return &scenario.KeyError{Key: "sample_period",
			Msg: "sample_period x (warmup_periods + measure_periods) + drain_limit: " + err.(*scenario.KeyError).Msg}
	}
	return nil
}

func (w window) stats() stats.Window {
	return stats.Window{Warmup: uint64(w.SamplePeriod * w.WarmupPeriods),
		Measure: uint64(w.SamplePeriod * w.MeasurePeriods), DrainLimit: uint64(w.DrainLimit)}
}

// linkUse returns the utilisation of the directions to (up) and from
// (down) the centre of each link over cycles link cycles.
func linkUse(links []*link.Link, cycles uint64) (up, down []float64) {
	for _, l := range links {
		up = append(up, float64(l.From(link.A).Stats().BusyCycles)/float64(max(cycles, 1)))
		down = append(down, float64(l.From(link.B).Stats().BusyCycles)/float64(max(cycles, 1)))
	}
	return up, down
}

// meanMax returns the mean and the largest of the values of some slices.
func meanMax(vs ...[]float64) (mean, peak float64) {
	n := 0
	for _, v := range vs {
		for _, x := range v {
			mean += x
			peak = max(peak, x)
			n++
		}
	}
	if n > 0 {
		mean /= float64(n)
	}
	return mean, peak
}

// durations formats cycles of clk as cycles and microseconds.
func durations(clk clock.Clock, cycles float64) string {
	return fmt.Sprintf("%.1f cycles (%.2f µs)", cycles, cycles*float64(clk.Period())/1e6)
}

// us returns cycles of clk in microseconds.
func us(clk clock.Clock, cycles float64) float64 { return cycles * float64(clk.Period()) / 1e6 }

// intList formats ints as "0,1,2".
func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
