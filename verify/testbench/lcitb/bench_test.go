package lcitb_test

import (
	"runtime"
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
)

// heapNow returns the heap in use (the env passed in keeps its cluster
// alive, so the cluster is counted).
func heapNow(e *env.Env) uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(e)
	return ms.HeapInuse
}

// BenchmarkPingPong reports simulated microseconds per wall-clock second
// for the 2-node PPro I-sdma ping-pong of the LogP benchmark (16 bytes,
// 60 round trips per op).
func BenchmarkPingPong(b *testing.B) {
	var sim clock.Time
	for b.Loop() {
		e := env.New(env.Options{})
		r, err := lcitb.PingPong(e, lcitb.DefaultConfig(), lcitb.DefaultBench())
		if err != nil {
			b.Fatal(err)
		}
		sim += r.Run.End
	}
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/b.Elapsed().Seconds(), "sim-us/s")
}

// BenchmarkBroadcast64 reports simulated microseconds per wall-clock
// second for a 64-node PPro I-sdma broadcast stream along binary trees
// (12 messages of 4 KB, receivers copying) and the heap the cluster holds.
func BenchmarkBroadcast64(b *testing.B) {
	var sim clock.Time
	var peak uint64
	c := lcitb.DefaultConfig()
	c.Nodes = 64
	for b.Loop() {
		e := env.New(env.Options{})
		t, err := lcitb.BroadcastStream(e, c, lcitb.Bench{Size: 4096, Iters: 2, Stream: 12}, true)
		if err != nil {
			b.Fatal(err)
		}
		sim += t.Run.End
		peak = max(peak, heapNow(e))
	}
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/b.Elapsed().Seconds(), "sim-us/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
