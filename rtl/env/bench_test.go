package env_test

import (
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/sarchlab/akita/v3/sim"
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

// relay is an event that schedules itself again a few nanoseconds later.
type relay struct {
	t   sim.VTimeInSec
	eng sim.Engine
	n   *int
}

func (r *relay) Time() sim.VTimeInSec { return r.t }
func (r *relay) Handler() sim.Handler { return r }
func (r *relay) IsSecondary() bool    { return false }

func (r *relay) Handle(sim.Event) error {
	if *r.n--; *r.n > 0 {
		r.t += sim.VTimeInSec(float64(1+*r.n%7) * 1e-9)
		r.eng.Schedule(r)
	}
	return nil
}

// BenchmarkEngineEvents is the engine alone: 128 events in flight (the
// queue of a 64-node cluster holds about as many clock edges and timers),
// each rescheduling itself 1-7 ns later, 100,000 events per run: the
// engine's cost per event.
func BenchmarkEngineEvents(b *testing.B) {
	const (
		inFlight = 128
		events   = 100_000
	)
	for b.Loop() {
		e := env.New(env.Options{})
		n := events
		for i := range inFlight {
			e.Engine.Schedule(&relay{t: sim.VTimeInSec(float64(i%16) * 1e-9), eng: e.Engine, n: &n})
		}
		if _, err := e.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/(events+inFlight), "ns/event")
}
