package clock_test

import (
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/sarchlab/akita/v3/sim"
)

type nopEvent struct {
	t sim.VTimeInSec
	h sim.Handler
}

func (e *nopEvent) Time() sim.VTimeInSec { return e.t }
func (e *nopEvent) Handler() sim.Handler { return e.h }
func (e *nopEvent) IsSecondary() bool    { return false }

// chain schedules its next event from each event: the engine's raw rate
// with one event in flight.
type chain struct {
	e    *sim.SerialEngine
	left int
	t    float64
}

func (c *chain) Handle(sim.Event) error {
	c.left--
	if c.left > 0 {
		c.t += 1e-9
		c.e.Schedule(&nopEvent{t: sim.VTimeInSec(c.t), h: c})
	}
	return nil
}

// BenchmarkEngineRaw is Akita's serial engine running trivial events, for
// comparison with the component benchmarks.
func BenchmarkEngineRaw(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		e := sim.NewSerialEngine()
		c := &chain{e: e, left: n}
		e.Schedule(&nopEvent{t: 0, h: c})
		if err := e.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkTicking is a clock.Ticking component that ticks every cycle and
// does nothing else: the per-cycle cost of nisim's clocking.
func BenchmarkTicking(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		e := sim.NewSerialEngine()
		t := &ticker{left: n}
		t.Ticking = clock.NewTicking("T", e, clock.MHz(100), t)
		t.Start()
		if err := e.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}
