package noc

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/verify/scenario"
)

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
	// The one-key ranges are in the stars' Keys.
	return checkRun(w.SamplePeriod, w.WarmupPeriods, w.MeasurePeriods, w.DrainLimit, clk)
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
