package cpu_test

import (
	"encoding/binary"
	"testing"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// benchOps is the number of store/load/compute triples a benchmark
// program runs.
const benchOps = 5000

// benchRun runs one processor on the stand-in target with prog and
// returns the operations it retired.
func benchRun(b *testing.B, prog func(c *cpu.CPU)) uint64 {
	nd := buildNode(env.New(env.Options{Seed: 1}), 1, cpu.OSCosts{}, 2)
	prog(nd.cpus[0])
	if _, err := nd.e.Run(); err != nil {
		b.Fatal(err)
	}
	return nd.cpus[0].Retired()
}

// BenchmarkOpList runs a store, a load and a compute per iteration as an
// Op list with a continuation (the compute's Done inserts the next triple)
// and reports retired operations per wall-clock second.
func BenchmarkOpList(b *testing.B) {
	var ops uint64
	for b.Loop() {
		ops += benchRun(b, func(c *cpu.CPU) {
			var next func(i int) []cpu.Op
			next = func(i int) []cpu.Op {
				a := uint64(i%512) * 8
				return []cpu.Op{{Kind: cpu.Store, Addr: a, Data: binary.LittleEndian.AppendUint32(nil, uint32(i))},
					{Kind: cpu.Load, Addr: a, Len: 4},
					{Kind: cpu.Compute, Cycles: 2, Done: func(clock.Time, []byte) {
						if i+1 < benchOps {
							c.Insert(next(i + 1)...)
						}
					}}}
			}
			c.Run(next(0)...)
		})
	}
	b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkSequential runs the same program as a sequential program (one
// coroutine switch per operation) and reports retired operations per
// wall-clock second.
func BenchmarkSequential(b *testing.B) {
	var ops uint64
	for b.Loop() {
		ops += benchRun(b, func(c *cpu.CPU) {
			c.Run(cpu.Go(func(p *cpu.Proc) {
				for i := range benchOps {
					a := uint64(i%512) * 8
					p.Store32(a, uint32(i))
					p.Load32(a)
					p.Compute(2)
				}
			}))
		})
	}
	b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "ops/s")
}
