package topology_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/myrinet"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/topology"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/switch/wormhole"
	"github.com/nisim/nisim/verify/check"
)

// runMesh88 runs BookSim's mesh88_lat configuration (8x8 mesh, dimension
// order, 8 VCs of 8 flits, credit delay 2, 20-flit packets) under uniform
// random traffic at rate flits/node/cycle for a 3000-cycle warm-up and a
// 3000-cycle measurement plus drain, and returns the simulated cycles and
// the statistics.
func runMesh88(rate float64, seed uint64) (uint64, stats.Result, error) {
	e := env.New(env.Options{Seed: seed})
	clk := clock.MHz(1000)
	sizes := traffic.Fixed(20)
	inj, err := traffic.NewBernoulli(rate, sizes)
	if err != nil {
		return 0, stats.Result{}, err
	}
	pat, _ := traffic.New("uniform", 64, traffic.Options{SelfTraffic: true})
	x := fabric.NewExperiment(e, clk, 64, stats.Window{Warmup: 3000, Measure: 3000, DrainLimit: 30000})
	sh := &fabric.Shared{Stats: x.Stats(), Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
		OnDeliver: func(now clock.Time, _ *fabric.Packet) { x.Delivered(now) }}
	net, err := topology.Mesh(e, "M", topology.MeshConfig{K: 8, Router: wormhole.Mesh88Lat(), Clock: clk,
		ChannelLatency: 1, FlitBytes: 16, Terminal: fabric.TerminalConfig{Pattern: pat, Injection: inj, Sizes: sizes}}, sh)
	if err != nil {
		return 0, stats.Result{}, err
	}
	for _, t := range net.Terminals {
		x.Add(t)
	}
	x.Start()
	_, err = e.Run()
	r := x.Stats().Result()
	// Cycles until the network emptied (later no-op wake-ups of idle
	// terminals do not count).
	return r.LastDelivery, r, err
}

// BenchmarkMesh88 reports simulated router-cycles per second (64 routers x
// simulated cycles / wall seconds) of the 8x8 mesh at each load, with the
// run's packet latency and accepted throughput and the peak heap.
func BenchmarkMesh88(b *testing.B) {
	for _, rate := range []float64{0.01, 0.05, 0.30, 0.40} {
		b.Run(fmt.Sprintf("rate=%.2f", rate), func(b *testing.B) {
			var cycles uint64
			var last stats.Result
			var peak uint64
			for i := 0; b.Loop(); i++ {
				c, r, err := runMesh88(rate, uint64(i+1))
				if err != nil {
					b.Fatal(err)
				}
				cycles += c
				last = r
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
			b.ReportMetric(float64(cycles)*64/b.Elapsed().Seconds(), "router-cycles/s")
			b.ReportMetric(last.Packet.Mean, "latency-cycles")
			b.ReportMetric(last.Accepted, "accepted-flits/node/cycle")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkMyrinetGrid reports simulated switch-cycles per second (64
// switches x simulated link cycles / wall seconds) of the LCI PPro cluster
// (4x4x4 grid of 8-port switches) under uniform traffic of 64-byte packets
// at the same loads as BenchmarkMesh88, read as a fraction of each host
// link's bandwidth.
func BenchmarkMyrinetGrid(b *testing.B) {
	for _, load := range []float64{0.01, 0.05, 0.30, 0.40} {
		b.Run(fmt.Sprintf("load=%.2f", load), func(b *testing.B) {
			var cycles uint64
			var last stats.Result
			var peak uint64
			for i := 0; b.Loop(); i++ {
				e := env.New(env.Options{Seed: uint64(i + 1)})
				pl := myrinet.PPro()
				sizes := traffic.Fixed(16)
				inj, err := traffic.NewBernoulli(load/float64(pl.FlitBytes), sizes)
				if err != nil {
					b.Fatal(err)
				}
				pat, _ := traffic.New("uniform", 64, traffic.Options{})
				clk := pl.Link.Clock
				x := fabric.NewExperiment(e, clk, 64, stats.Window{Warmup: 2000, Measure: 3000, DrainLimit: 20000})
				sh := &fabric.Shared{Stats: x.Stats(), Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
					OnDeliver: func(now clock.Time, _ *fabric.Packet) { x.Delivered(now) }}
				net, err := topology.MyrinetGrid(e, "Myri", topology.MyrinetConfig{Platform: pl,
					Terminal: fabric.TerminalConfig{Pattern: pat, Injection: inj, Sizes: sizes}}, sh)
				if err != nil {
					b.Fatal(err)
				}
				for _, t := range net.Terminals {
					x.Add(t)
				}
				x.Start()
				_, _ = e.Run()
				last = x.Stats().Result()
				cycles += last.LastDelivery
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
			b.ReportMetric(float64(cycles)*64/b.Elapsed().Seconds(), "switch-cycles/s")
			b.ReportMetric(last.Packet.Mean, "latency-cycles")
			b.ReportMetric(last.Accepted, "accepted-flits/node/cycle")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
