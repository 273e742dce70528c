// Package tbutil holds the small pieces that the system testbenches
// (verify/testbench/...) share, so that a testbench written from another
// as a template does not copy them.
package tbutil

import "github.com/nisim/nisim/rtl/clock"

// Stats summarises a set of durations.
type Stats struct {
	Mean, Min, Max clock.Time
	N              int
}

// StatsOf summarises ds: the mean (truncated to whole picoseconds), the
// smallest, the largest and the count; zero Stats for none.
func StatsOf(ds []clock.Time) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	s := Stats{Min: ds[0], Max: ds[0], N: len(ds)}
	var sum clock.Time
	for _, d := range ds {
		sum += d
		s.Min, s.Max = min(s.Min, d), max(s.Max, d)
	}
	s.Mean = sum / clock.Time(len(ds))
	return s
}
