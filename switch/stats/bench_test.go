package stats_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/nisim/nisim/switch/stats"
)

// BenchmarkCollectorRun feeds a collector a run of 20-flit packets, as the
// 8x8 mesh's uniform traffic delivers them (packet latency 40 cycles plus an
// exponential tail of mean 200, the shape of the saturated 0.40 run: p50 200,
// max about 2,700), at two run lengths, and reports the bytes allocated per
// run (B/op) and the heap the collector still holds when the run ends
// (live-B/op): in constant space neither may grow with the run length.
func BenchmarkCollectorRun(b *testing.B) {
	for _, pkts := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("packets=%d", pkts), func(b *testing.B) {
			b.ReportAllocs()
			var live uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				rng := rand.New(rand.NewPCG(1, 2))
				c := stats.New(64, stats.Window{Measure: uint64(pkts)})
				for i := range uint64(pkts) {
					c.Created(i, 20)
					lat := 40 + uint64(rng.ExpFloat64()*200)
					for f := range uint64(20) {
						c.FlitArrived(i+lat-19+f, i+f, i)
					}
					c.Delivered(stats.Packet{Flits: 20, Created: i, Injected: i, Delivered: i + lat, Hops: 6})
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				live = after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
				if r := c.Result(); r.Packet.N != pkts {
					b.Fatalf("%d packets measured, want %d", r.Packet.N, pkts)
				}
			}
			b.ReportMetric(float64(live), "live-B/op")
		})
	}
}
