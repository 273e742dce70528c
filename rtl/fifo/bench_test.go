package fifo_test

import (
	"fmt"
	"io"
	"testing"
	"time"

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
// signal dumped to a VCD. The paired case compares the first two side by
// side (see benchPaired).
func BenchmarkFIFOSignals(b *testing.B) {
	b.Run("paired", benchPaired)
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

// benchPaired measures a FIFO with no registry and one whose registry
// selects none of its signals in alternation within one loop: each
// iteration times pairedBlock push+pop pairs on one and then on the other,
// the first of the two alternating. The metrics are the median block time
// of each, per pair, and their ratio (unselected/none). On a shared machine
// the load drifts between the separate none and unselected runs, which run
// one after the other, and a block during which the process was descheduled
// takes milliseconds instead of microseconds; alternating blocks sees both
// FIFOs under the same load, and the median ignores the descheduled blocks.
func benchPaired(b *testing.B) {
	const pairedBlock = 256
	regs := []*waves.Registry{nil, waves.NewRegistry(waves.Options{Select: []string{"Other"}})}
	var fs [2]*fifo.FIFO[int]
	for i, reg := range regs {
		f, err := fifo.MakeBuilder[int]().WithEnv(env.New(env.Options{Waves: reg})).WithDepth(8).Build("F")
		if err != nil {
			b.Fatal(err)
		}
		fs[i] = f
	}
	// Histograms of block times in ns; the last bucket holds the longer.
	hist := [2][]uint32{make([]uint32, 1<<16), make([]uint32, 1<<16)}
	var ts [2]clock.Time
	run := func(i int) {
		f, t := fs[i], ts[i]
		start := time.Now()
		for range pairedBlock {
			t += 10_000
			f.Push(t, 1)
			f.Pop(t + 5_000)
		}
		hist[i][min(time.Since(start).Nanoseconds(), 1<<16-1)]++
		ts[i] = t
	}
	first := 0
	for b.Loop() {
		run(first)
		run(1 - first)
		first = 1 - first
	}
	var med [2]float64
	for i, h := range hist {
		seen := 0
		for ns, c := range h {
			if seen += int(c); 2*seen >= b.N {
				med[i] = float64(ns) / pairedBlock
				break
			}
		}
	}
	b.ReportMetric(med[0], "none-ns/pair")
	b.ReportMetric(med[1], "unselected-ns/pair")
	b.ReportMetric(med[1]/med[0], "unselected/none")
	if st := fs[1].Stats(); st.Pops != uint64(b.N)*pairedBlock {
		b.Fatalf("unselected FIFO popped %d entries, want %d", st.Pops, uint64(b.N)*pairedBlock)
	}
}

// BenchmarkFIFOFrontPoll measures a consumer polling many FIFOs whose
// heads are not yet visible, as routers poll their input buffers while a
// flit is still on the wire: 4096 FIFOs of 8 entries of 144 bytes (a
// link.Flit's FIFO entry), each holding one entry pushed with PushAt to
// become visible only later, polled with Front in turn. Storage of that
// size does not stay in the caches between polls. The metric is the
// median time per Front over blocks of one pass (the median ignores
// blocks during which the process was descheduled on a shared machine).
func BenchmarkFIFOFrontPoll(b *testing.B) {
	const n = 4096
	type flit struct{ w [17]uint64 } // 136 bytes; with its time 144
	e := env.New(env.Options{})
	fs := make([]*fifo.FIFO[flit], n)
	for i := range fs {
		f, err := fifo.MakeBuilder[flit]().WithEnv(e).WithDepth(8).Build(fmt.Sprintf("F%d", i))
		if err != nil {
			b.Fatal(err)
		}
		f.PushAt(0, clock.Second, flit{})
		fs[i] = f
	}
	hist := make([]uint32, 1<<20) // block times in ns; the last bucket holds the longer
	now := clock.Time(1000)
	found := 0
	for b.Loop() {
		start := time.Now()
		for _, f := range fs {
			if f.Front(now) != nil {
				found++
			}
		}
		hist[min(time.Since(start).Nanoseconds(), 1<<20-1)]++
	}
	if found != 0 {
		b.Fatalf("%d heads visible before their time", found)
	}
	seen := 0
	for ns, c := range hist {
		if seen += int(c); 2*seen >= b.N {
			b.ReportMetric(float64(ns)/n, "median-ns/poll")
			break
		}
	}
}
