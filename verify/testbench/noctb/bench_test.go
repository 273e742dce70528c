package noctb_test

import (
	"fmt"
	"testing"

	"github.com/nisim/nisim/internal/heappeak"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/testbench/noctb"
)

// The peak-heap benchmarks run each network for 10^5 and 10^6
// transactions (the keys of its conservation checker: mesh packets, MC
// deliveries of a write at a receiver) with every checker on and the heap
// sampled during the run (internal/heappeak). Two statistics windows: in
// "stats=window" the warm-up covers the run but its last 1000 cycles, which
// are measured; in "stats=run" the whole run is measured. switch/stats
// keeps a count per latency value, not every latency, so both peak
// alike (before it did, "stats=run" grew with the run).
var heapSizes = []int{100_000, 1_000_000}

// heapWindows are the statistics windows of the peak-heap benchmarks.
var heapWindows = []string{"window", "run"}

// meshHeapRun runs BookSim's mesh88_lat router on the 8x8 mesh under
// uniform traffic of 2-flit packets at 0.3 flits/node/cycle (9.6 packets a
// cycle) for about tx packets, with the sampler hooked after the build,
// and returns the sampler and the packets sent.
func meshHeapRun(b *testing.B, seed uint64, tx int, window string) (*heappeak.Sampler, int) {
	b.Helper()
	const k, flits, rate, lastMeasured = 8, 2, 0.3, 1000
	cycles := uint64(float64(tx) / (k * k * rate / flits))
	win := stats.Window{Warmup: cycles - lastMeasured, Measure: lastMeasured, DrainLimit: 30000}
	if window == "run" {
		win.Warmup, win.Measure = 0, cycles
	}
	s, _, sent := runMesh(b, seed, meshRun{k: k, flits: flits, rate: rate, pattern: "uniform", win: win})
	return s, sent
}

// meshRun is one mesh run of the memory benchmarks: BookSim's mesh88_lat
// router on a k x k mesh, 1-cycle channels, 16-byte flits, packets of
// flits flits at rate flits/node/cycle.
type meshRun struct {
	k, flits int
	rate     float64
	pattern  string
	win      stats.Window
	// hookFirst hooks the sampler before the build, so building counts,
	// and reads the heap once it is built; otherwise the sampler is
	// hooked after the build.
	hookFirst bool
}

// runMesh runs m as RunNet runs it (packet conservation, the experiment's
// drain, the watchdog) and returns the sampler, the heap after the build
// (hookFirst only, a forced collection) and the packets sent.
func runMesh(b *testing.B, seed uint64, m meshRun) (*heappeak.Sampler, heappeak.Heap, int) {
	b.Helper()
	e := env.New(env.Options{Seed: seed})
	var s *heappeak.Sampler
	if m.hookFirst {
		s = heappeak.Hook(e, 0)
	}
	clk := clock.MHz(1000)
	sizes := traffic.Fixed(m.flits)
	inj, err := traffic.NewBernoulli(m.rate, sizes)
	if err != nil {
		b.Fatal(err)
	}
	pat, err := traffic.New(m.pattern, m.k*m.k, traffic.Options{K: m.k, SelfTraffic: true})
	if err != nil {
		b.Fatal(err)
	}
	x := fabric.NewExperiment(e, clk, m.k*m.k, m.win)
	sh := &fabric.Shared{Stats: x.Stats(), Packets: check.NewConservation[uint64](e.Monitor, "Network.Packets"),
		OnDeliver: func(now clock.Time, _ *fabric.Packet) { x.Delivered(now) },
		OnDrop:    func(now clock.Time, _ *fabric.Packet) { x.Dropped(now) }}
	net, err := noctb.BuildNet(e, noctb.NetConfig{Topology: "mesh", K: m.k, Router: noctb.Mesh88Lat(), Clock: clk,
		ChannelLatency: 1, FlitBytes: 16, Pattern: pat, Injection: inj, Sizes: sizes}, sh)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range net.Terminals {
		x.Add(t)
	}
	x.Start()
	var built heappeak.Heap
	if m.hookFirst {
		built = s.Collect()
	} else {
		s = heappeak.Hook(e, 0)
	}
	res, err := e.Run()
	if err != nil || x.Saturated() {
		b.Fatalf("saturated %v: %v", x.Saturated(), err)
	}
	sh.Packets.Finish(res.End)
	if err := e.Monitor.Err(); err != nil {
		b.Fatal(err)
	}
	s.Finish(e, x, sh, net)
	sent, _, _ := sh.Packets.Counts()
	return s, built, sent
}

// mcHeapRun runs the Memory Channel star of the mchub-star scenario's
// defaults (8 adapters, 16 pages every adapter maps, so every write goes
// to the 7 others; writes of 4 or 64 bytes at 0.05 of a link each, about
// 0.33 deliveries a hub cycle) for about tx deliveries and returns the
// sampler and the deliveries.
func mcHeapRun(b *testing.B, seed uint64, tx int, window string) (*heappeak.Sampler, int) {
	b.Helper()
	const perPeriod, period = 329, 1000 // deliveries per 1000-cycle period, measured
	periods := max(tx/perPeriod, 2)
	warmup, measure := periods-1, 1
	if window == "run" {
		warmup, measure = 0, periods
	}
	sizes, err := traffic.ParseSizes("4:0.5,64:0.5")
	if err != nil {
		b.Fatal(err)
	}
	c := noctb.DefaultMCConfig()
	c.Broadcast, c.Pages, c.InjectionRate, c.Sizes = true, 16, 0.05, sizes
	c.Window = stats.Window{Warmup: uint64(warmup * period), Measure: uint64(measure * period), DrainLimit: 20000}
	e := env.New(env.Options{Seed: seed})
	// Hooked before RunMC builds the star: building counts too.
	s := heappeak.Hook(e, 0)
	x, err := noctb.RunMC(e, c)
	if err != nil {
		b.Fatal(err)
	}
	// The env's monitor still holds the endpoints, and through them the
	// shared checkers.
	s.Finish(e)
	n := 0
	for _, pc := range x.Shared.Ports() {
		n += int(pc.Received)
	}
	return s, n
}

// benchPeak runs run for every size and statistics window and reports the
// worst peak of its iterations.
func benchPeak(b *testing.B, unit string, run func(b *testing.B, seed uint64, tx int, window string) (*heappeak.Sampler, int)) {
	for _, w := range heapWindows {
		for _, tx := range heapSizes {
			b.Run(fmt.Sprintf("stats=%s/%s=%d", w, unit, tx), func(b *testing.B) {
				var worst *heappeak.Sampler
				got := 0
				for i := 0; b.Loop(); i++ {
					s, n := run(b, uint64(i+1), tx, w)
					if worst == nil || s.Peak.Live > worst.Peak.Live {
						worst, got = s, n
					}
				}
				b.Logf("%d %s: %v", got, unit, worst)
				worst.Report(b, got)
			})
		}
	}
}

// BenchmarkPeakHeapMesh reports the peak heap of the 8x8 mesh at 10^5 and
// 10^6 packets.
func BenchmarkPeakHeapMesh(b *testing.B) { benchPeak(b, "packets", meshHeapRun) }

// BenchmarkPeakHeapMC reports the peak heap of the Memory Channel hub star
// at 10^5 and 10^6 deliveries.
func BenchmarkPeakHeapMC(b *testing.B) { benchPeak(b, "deliveries", mcHeapRun) }

// mesh32Periods are the measured periods of 1000 cycles of the 32x32
// memory benchmark's two runs, after 3 warm-up periods: 4,000 and 16,000
// cycles of traffic.
var mesh32Periods = []int{1, 13}

// mesh32Run builds and runs the 32x32 mesh of docs/performance.md's
// scaling table as `nisim run mesh --set k=32 --set traffic=neighbor --set
// injection_rate=0.1 --set measure_periods=M` does (20-flit packets; 3
// warm-up periods of 1000 cycles, the drain), with the sampler hooked
// before the build. It returns the sampler, the heap after the build, and
// the packets sent.
func mesh32Run(b *testing.B, seed uint64, periods int) (*heappeak.Sampler, heappeak.Heap, int) {
	b.Helper()
	win := stats.Window{Warmup: 3000, Measure: uint64(1000 * periods), DrainLimit: 30000}
	return runMesh(b, seed, meshRun{k: 32, flits: 20, rate: 0.1, pattern: "neighbor", win: win, hookFirst: true})
}

// BenchmarkMemoryMesh32 reports the memory of the 32x32 mesh under
// neighbour traffic at 0.10 flits/node/cycle (issue 16's target: a peak
// live heap under 64 MiB that does not grow with the run; benchtable
// checks both): built-live-MiB, the live heap once the network is built;
// peak-live-MiB and peak-heap-MiB (garbage not yet collected included)
// over the build and the run (internal/heappeak), for a run of 4,000 and
// one of 16,000 cycles of traffic.
func BenchmarkMemoryMesh32(b *testing.B) {
	for _, m := range mesh32Periods {
		b.Run(fmt.Sprintf("cycles=%d", 1000*(3+m)), func(b *testing.B) {
			var worst *heappeak.Sampler
			var built heappeak.Heap
			got := 0
			for i := 0; b.Loop(); i++ {
				s, h, n := mesh32Run(b, uint64(i+1), m)
				if worst == nil || s.Peak.Objects > worst.Peak.Objects {
					worst, built, got = s, h, n
				}
			}
			b.Logf("%d packets: %v; live after the build %.1f MiB", got, worst, float64(built.Live)/(1<<20))
			// Not Sampler.Report: its growth per packet is over the heap
			// before the build here.
			mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
			b.ReportMetric(mib(built.Live), "built-live-MiB")
			b.ReportMetric(mib(worst.Peak.Live), "peak-live-MiB")
			b.ReportMetric(mib(worst.Peak.Objects), "peak-heap-MiB")
			b.ReportMetric(float64(got), "packets")
		})
	}
}
