package env_test

import (
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/vtest"
)

// BenchmarkTickWakeAt is 64 components of one clock that tick every cycle
// for 10,000 cycles and each wake a neighbour for a timer 3 cycles ahead
// (a link waking its receiver, a memory's latency): the per-tick cost of
// the clocking with one WakeAt, which reads the engine's current time
// (issue 16: Akita's CurrentTime took a lock on every read).
func BenchmarkTickWakeAt(b *testing.B) {
	const (
		n      = 64
		cycles = 10_000
	)
	clk := clock.MHz(160)
	for b.Loop() {
		e := env.New(env.Options{})
		agents := make([]*vtest.Agent, n)
		for i := range agents {
			i := i
			agents[i] = vtest.NewAgent(e, "A", clk, func(now clock.Time, c clock.Cycle) bool {
				if c >= cycles {
					return false
				}
				agents[(i+1)%n].WakeAt(clk.After(now, 3))
				return true
			})
		}
		for _, a := range agents {
			a.Start()
		}
		if _, err := e.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/(n*(cycles+1)), "ns/tick")
}
