package mctb_test

import (
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/mctb"
)

// BenchmarkMCCluster runs random Memory Channel traffic on the paper's
// 8-node, 32-CPU cluster (every CPU 200 writes of 4 to 32 bytes with up to
// 400 CPU cycles of work before each, to the randomised spec's regions;
// untraced, checkers on) and reports MC writes (packets the hub ordered)
// and checked deliveries (writes reaching a receiver's memory) per wall
// second, and simulated microseconds per wall second; building the
// cluster is not timed.
func BenchmarkMCCluster(b *testing.B) {
	t := mctb.Traffic{Writes: 200, MinBytes: 4, MaxBytes: 32, MaxGap: 400}
	var writes, deliveries uint64
	var sim clock.Time
	for b.Loop() {
		b.StopTimer()
		e := env.New(env.Options{Seed: 1})
		cl, err := mctb.Build(e, mctb.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		regions, err := cl.RandomRegions(e.Rand("regions"))
		if err != nil {
			b.Fatal(err)
		}
		if err := cl.StartTraffic(t, regions); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := e.Run()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := cl.Finish(); err != nil {
			b.Fatal(err)
		}
		s := cl.Ref.Stats()
		writes += s.Ordered
		deliveries += s.Delivered
		sim += res.End
		cl.Close()
		b.StartTimer()
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(writes)/sec, "writes/s")
	b.ReportMetric(float64(deliveries)/sec, "deliveries/s")
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/sec, "sim-µs/s")
}
