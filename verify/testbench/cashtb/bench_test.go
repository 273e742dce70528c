package cashtb_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/cashtb"
)

// BenchmarkSOR32 reports simulated microseconds per wall-clock second for
// SOR at its CI size (cashapps.DefaultSOR: 128 x 256, 4 iterations) under
// Cashmere-2L on the paper's 32 processors, 8 AlphaServers of 4
// (cashmere-2l-memory-channel.txt section 3.3's 32:4; issue 18's «make
// bench reports simulated µs per wall second for a 32-processor SOR run»),
// every checker on, and the heap the cluster holds. A run whose memory
// differs from RunSequential's or whose checkers fire fails the benchmark.
func BenchmarkSOR32(b *testing.B) {
	prog, err := cashapps.NewSOR(cashapps.DefaultSOR())
	if err != nil {
		b.Fatal(err)
	}
	want, err := cashapps.RunSequential(prog)
	if err != nil {
		b.Fatal(err)
	}
	var sim clock.Time
	var peak uint64
	for b.Loop() {
		e := env.New(env.Options{Seed: 1})
		bench, err := cashtb.BuildApp(e, cashtb.DefaultConfig(), prog)
		if err != nil {
			b.Fatal(err)
		}
		res, err := bench.Run()
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Equal(res.Memory, want) {
			b.Fatal("SOR 32:4: final memory differs from RunSequential")
		}
		sim += res.Time
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		runtime.KeepAlive(bench)
	}
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/b.Elapsed().Seconds(), "sim-µs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
