package shrimptb_test

import (
	"testing"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/svm"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// benchTraffic runs t on the paper's 16-node cluster (untraced, checkers
// on) b.N times and returns the Ref's counts summed and the simulated
// time; building the cluster and setting up the buffers are not timed.
func benchTraffic(b *testing.B, t shrimptb.Traffic) (stores, transfers uint64, sim clock.Time) {
	for b.Loop() {
		b.StopTimer()
		e := env.New(env.Options{Seed: 1})
		cl, err := shrimptb.Build(e, shrimptb.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		if err := cl.StartTraffic(t); err != nil {
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
		stores += s.Stores
		transfers += s.DUPackets
		sim += res.End
		cl.Close()
		b.StartTimer()
	}
	return stores, transfers, sim
}

// BenchmarkSHRIMPAU: every node of the 16 makes 200 automatic-update runs
// of 1 to 4 8-byte stores to random other nodes (combining on), with up to
// 300 CPU cycles of work before each; it reports AU stores (checked at
// their destination's memory) and simulated microseconds per wall second.
func BenchmarkSHRIMPAU(b *testing.B) {
	t := shrimptb.Traffic{Ops: 200, AUPercent: 100, StoreBytes: 8, MaxRun: 4, MinDU: 4, MaxDU: 4, MaxGap: 300,
		Combine: shrimptb.CombineOn}
	stores, _, sim := benchTraffic(b, t)
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(stores)/sec, "AU-stores/s")
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/sec, "sim-µs/s")
}

// BenchmarkSHRIMPDU: nodes 0-7 of the 16 make 20 deliberate-update sends
// each of 1 KB, 8-byte aligned, to random nodes of 8-15; it reports DU
// transfers (checked at their destination's memory) and simulated
// microseconds per wall second. (Senders only send: a node's DU reads
// meeting its incoming DMA writes in the bridge deadlock today, E5's
// report.)
func BenchmarkSHRIMPDU(b *testing.B) {
	t := shrimptb.Traffic{Ops: 20, AUPercent: 0, MaxRun: 1, MinDU: 1024, MaxDU: 1024, DUAlign: 8, Senders: 8}
	_, transfers, sim := benchTraffic(b, t)
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(transfers)/sec, "DU-transfers/s")
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/sec, "sim-µs/s")
}

// BenchmarkSVMOcean: Ocean-SVM (cashapps.DefaultOcean, 130 x 130, 4
// iterations) on the 16 nodes under each protocol, checkers on; building
// is not timed. It reports simulated microseconds and deliberate-update
// messages per wall second.
func BenchmarkSVMOcean(b *testing.B) {
	for _, proto := range svm.Protocols() {
		b.Run(proto, func(b *testing.B) {
			prog, err := cashapps.NewOcean(cashapps.DefaultOcean())
			if err != nil {
				b.Fatal(err)
			}
			var sim clock.Time
			var msgs uint64
			for b.Loop() {
				b.StopTimer()
				sb, err := shrimptb.BuildSVM(env.New(env.Options{Seed: 1}), shrimptb.DefaultSVM(proto), prog)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := sb.Run()
				if err != nil {
					b.Fatal(err)
				}
				sim += res.Time
				msgs += res.Total.Messages
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(sim)/float64(clock.Microsecond)/sec, "sim-µs/s")
			b.ReportMetric(float64(msgs)/sec, "messages/s")
		})
	}
}

// BenchmarkSVMRandom: a randomised data-race-free program (the regression
// system svm's kind of job: 16 nodes, 8 data pages, 16-word granules, 8
// phases) under each protocol, checkers on; building is not timed. It
// reports packets written to the receivers' memory per wall second (the regression's unit).
func BenchmarkSVMRandom(b *testing.B) {
	for _, proto := range svm.Protocols() {
		b.Run(proto, func(b *testing.B) {
			rc := cashapps.RandomConfig{Seed: 7, Procs: 16, DataPages: 8, Granule: 16, Phases: 8,
				Locks: 2, BlockWords: 8, Sections: 1, WriteShare: 128, Compute: 200}
			var pkts uint64
			for b.Loop() {
				b.StopTimer()
				prog, err := cashapps.NewRandom(rc)
				if err != nil {
					b.Fatal(err)
				}
				sb, err := shrimptb.BuildSVM(env.New(env.Options{Seed: 1}), shrimptb.DefaultSVM(proto), prog)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := sb.Run(); err != nil {
					b.Fatal(err)
				}
				for _, n := range sb.Cluster.Nodes {
					pkts += n.NI.Counters().RxPackets
				}
			}
			b.ReportMetric(float64(pkts)/b.Elapsed().Seconds(), "packets/s")
		})
	}
}
