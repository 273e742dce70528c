package fifo_test

import (
	"io"
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves"
)

// BenchmarkFIFO runs a producer and a consumer that move one entry per
// cycle through an 8-deep FIFO and reports simulated cycles per second.
func BenchmarkFIFO(b *testing.B) {
	const cycles = 10_000
	clk := clock.MHz(100)
	for b.Loop() {
		e := env.New(env.Options{})
		f, _ := fifo.MakeBuilder[int]().WithEnv(e).WithDepth(8).Build("F")
		n := 0
		prod := vtest.NewAgent(e, "P", clk, func(now clock.Time, c clock.Cycle) bool {
			if f.CanPush(now) {
				f.Push(now, n)
				n++
			}
			return c < cycles
		})
		cons := vtest.NewAgent(e, "C", clk, func(now clock.Time, c clock.Cycle) bool {
			_, ok := f.Pop(now)
			return ok || c < cycles
		})
		f.Connect(prod, cons)
		prod.Start()
		cons.Start()
		if _, err := e.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cycles)*float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchmarkFIFOSignals measures one push and one pop with the FIFO's
// signals disabled (no registry: each update is a nil check), with a
// registry that selects none of them (also nil signals), and with every
// signal dumped to a VCD.
func BenchmarkFIFOSignals(b *testing.B) {
	cases := []struct {
		name string
		reg  func() *waves.Registry
	}{
		{"none", func() *waves.Registry { return nil }},
		{"unselected", func() *waves.Registry { return waves.NewRegistry(waves.Options{Select: []string{"Other"}}) }},
		{"dumped", func() *waves.Registry {
			r := waves.NewRegistry(waves.Options{})
			return r
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			reg := c.reg()
			e := env.New(env.Options{Waves: reg})
			f, _ := fifo.MakeBuilder[int]().WithEnv(e).WithDepth(8).Build("F")
			if c.name == "dumped" {
				if err := reg.DumpVCD(io.Discard, waves.VCDOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			t := clock.Time(0)
			for b.Loop() {
				t += 10_000
				f.Push(t, 1)
				f.Pop(t + 5_000)
			}
			_ = reg.Close(t)
		})
	}
}
