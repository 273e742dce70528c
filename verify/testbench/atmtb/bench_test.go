package atmtb_test

import (
	"testing"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/atmtb"
)

// benchWrites is BenchmarkATMWrite's WRITEs per iteration.
const benchWrites = 500

// BenchmarkATMWrite: node 0 of the default two-node cluster (direct
// link, checkers on, untraced) makes 500 protected 40-byte WRITEs back to
// back into node 1's segment per iteration; it reports WRITEs (each
// checked at node 1's memory) and simulated microseconds per wall
// second. Building the cluster is not timed.
func BenchmarkATMWrite(b *testing.B) {
	var ops uint64
	var sim clock.Time
	for b.Loop() {
		b.StopTimer()
		e := env.New(env.Options{Seed: 1})
		cl, err := atmtb.Build(e, atmtb.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := atmtb.Connect(cl); err != nil {
			b.Fatal(err)
		}
		k := cl.Nodes[0].Kernel
		w := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			for i := range benchWrites {
				for k.Write(p, 1, 10*(i%1000), 10, false, w) == rma.ErrTxFull {
				}
			}
		}))
		b.StartTimer()
		res, err := e.Run()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := cl.Finish(); err != nil {
			b.Fatal(err)
		}
		ops += atmtb.RefOf(cl).Stats().Delivered[rma.OpWrite]
		sim += res.End
		cl.Close()
		b.StartTimer()
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(ops)/sec, "ops/s")
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/sec, "sim-µs/s")
}

// BenchmarkATMTraffic: four nodes on the ASX-100 make 200 operations each
// of atmtb.DefaultTraffic's mix (WRITE, READ, CAS, block, RPC, illegal) with
// the design's fault rates (1e-3 drops and corruptions per cell), every
// checker on, untraced; it reports operations (TrafficRun.Operations:
// what the regression tier counts) and simulated microseconds per wall
// second.
func BenchmarkATMTraffic(b *testing.B) {
	var ops uint64
	var sim clock.Time
	for b.Loop() {
		b.StopTimer()
		e := env.New(env.Options{Seed: 1})
		c := atmtb.DefaultConfig()
		c.Nodes, c.Switched = 4, true
		c.Link.DropProb, c.Link.CorruptProb = 1e-3, 1e-3
		cl, err := atmtb.Build(e, c)
		if err != nil {
			b.Fatal(err)
		}
		tr, err := atmtb.StartTraffic(cl, atmtb.DefaultTraffic(200))
		if err != nil {
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
		ops += tr.Operations()
		sim += res.End
		cl.Close()
		b.StartTimer()
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(ops)/sec, "ops/s")
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/sec, "sim-µs/s")
}
