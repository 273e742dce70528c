package memsys_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// benchBus is a memory bus for the benchmarks only. assumed: a 128-bit
// bus at 75 MHz with one arbitration, one address and one turnaround
// cycle, in the range of mid-1990s multiprocessor memory buses; the
// benchmarks measure the simulator, not a platform.
func benchBus() bus.Config {
	return bus.Config{Name: "benchbus", Clock: clock.MHz(75), WidthBytes: 16, ArbCycles: 1, AddrCycles: 1,
		ReadTurnaround: 1, MaxBurstBytes: 64}
}

// program returns n operations of a mixed load/store program: addresses
// from r over [base, base+span) in 8-byte words, one store in four, and
// one access in eight to a region shared by all CPUs.
func program(e *env.Env, name string, n int, base, span uint64) []cpu.Op {
	r := e.Rand(name)
	ops := make([]cpu.Op, 0, n)
	for range n {
		addr := base + r.Uint64N(span/8)*8
		if r.IntN(8) == 0 {
			addr = 0x10_0000 + r.Uint64N(512)*8 // the shared 4 KiB
		}
		if r.IntN(4) == 0 {
			var d [8]byte
			binary.LittleEndian.PutUint64(d[:], r.Uint64())
			ops = append(ops, cpu.Op{Kind: cpu.Store, Addr: addr, Data: d[:]})
		} else {
			ops = append(ops, cpu.Op{Kind: cpu.Load, Addr: addr, Len: 8})
		}
	}
	return ops
}

// runNode builds a node of cpus CPUs at 233 MHz, each running ops
// operations over its own span bytes, and runs it to the end; only the run
// is timed.
func runNode(b *testing.B, cpus, ops int, span uint64) (env.Result, *memsys.Node) {
	return runNodeWith(b, cpus, ops, span, memsys.DefaultCacheConfig())
}

// runNodeWith is runNode with caches of configuration cc.
func runNodeWith(b *testing.B, cpus, ops int, span uint64, cc memsys.CacheConfig) (env.Result, *memsys.Node) {
	b.StopTimer()
	tb := b
	e := env.New(env.Options{Seed: 1})
	cclk := clock.MHz(233)
	n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(cpus, cclk).WithCache(cc).WithBus(benchBus()).
		WithMemory(4<<20, 0, 2, 0).Build("N")
	if err != nil {
		tb.Fatal(err)
	}
	for i, c := range n.Caches {
		p, err := cpu.MakeBuilder().WithEnv(e).WithClock(cclk).Build(fmt.Sprintf("N.Cpu[%d]", i))
		if err != nil {
			tb.Fatal(err)
		}
		p.Attach(c.Port())
		p.Run(program(e, p.Name(), ops, uint64(i)*span, span)...)
	}
	b.StartTimer()
	res, err := e.Run()
	if err != nil {
		tb.Fatal(err)
	}
	return res, n
}

// BenchmarkCacheAccesses runs one CPU's loads and stores through its cache
// (a 64 KiB working set in the default 256 KiB cache: mostly hits after
// the first touch) and reports cache accesses per wall-clock second of the
// run (building the node and the program is not timed).
func BenchmarkCacheAccesses(b *testing.B) {
	var accesses uint64
	for b.Loop() {
		_, n := runNode(b, 1, 20000, 64<<10)
		s := n.Caches[0].Stats()
		accesses += s.Hits + s.Misses + s.Uncached
	}
	b.ReportMetric(float64(accesses)/b.Elapsed().Seconds(), "accesses/s")
}

// BenchmarkNode4CPU runs four CPUs of a mixed load/store program (1 MiB
// per CPU, beyond the caches, and a shared 4 KiB region that the caches
// pass between them) on one memory bus and reports simulated microseconds
// per wall-clock second.
func BenchmarkNode4CPU(b *testing.B) {
	var sim clock.Time
	for b.Loop() {
		res, _ := runNode(b, 4, 5000, 1<<20)
		sim += res.End
	}
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/b.Elapsed().Seconds(), "sim-µs/s")
}

// BenchmarkNode4CPUMaxMisses4 is BenchmarkNode4CPU with four miss status
// holding registers per cache (CacheConfig.MaxMisses), as on the P6
// presets: the simulator's cost of the non-blocking stores.
func BenchmarkNode4CPUMaxMisses4(b *testing.B) {
	cc := memsys.DefaultCacheConfig()
	cc.MaxMisses = 4
	var sim clock.Time
	for b.Loop() {
		res, _ := runNodeWith(b, 4, 5000, 1<<20, cc)
		sim += res.End
	}
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/b.Elapsed().Seconds(), "sim-µs/s")
}
