package dma_test

import (
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// BenchmarkDMA moves 64 KiB between two memories in 256-byte bursts and
// reports simulated DMA-engine cycles per second.
func BenchmarkDMA(b *testing.B) {
	clk := clock.MHz(100)
	var cycles uint64
	for b.Loop() {
		e := env.New(env.Options{})
		a, _ := mem.MakeBuilder().WithEnv(e).WithClock(clk).WithLatency(2).Build("A")
		m, _ := mem.MakeBuilder().WithEnv(e).WithClock(clk).WithLatency(2).Build("B")
		eng, _ := dma.MakeBuilder().WithEnv(e).WithClock(clk).WithBurst(256).WithBuffer(1024).WithOutstandingReads(2).Build("D")
		pa := eng.AddMemPort("A", a.Port(0))
		pb := eng.AddMemPort("B", m.Port(0))
		eng.Submit(0, dma.Descriptor{Src: dma.Mem(pa, 0), Dst: dma.Mem(pb, 0), Len: 64 << 10})
		res, err := e.Run()
		if err != nil {
			b.Fatal(err)
		}
		cycles += uint64(clk.CycleAt(res.End))
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
}
