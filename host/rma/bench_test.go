package rma_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/env"
)

// BenchmarkRigWrite is protected 40-byte WRITEs on the two-node rig (the
// kernel, boards and link; no caches): simulated operations per wall
// second, the kernel's share of a testbench's cost.
func BenchmarkRigWrite(b *testing.B) {
	RegisterTestingT(b)
	r := buildRig(env.New(env.Options{Seed: 1}))
	r.share(rma.RightRead | rma.RightWrite)
	for _, n := range r.nodes {
		n.kernel.OnEvent(nil) // the rig's event log is the specs', not the kernel's cost
	}
	words := seq(rma.MaxWords, 1)
	n := b.N
	r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
		for i := range n {
			for r.nodes[1].kernel.Write(p, 0, 10*(i%100), rma.MaxWords, false, words) != rma.OK {
			}
		}
	}))
	b.ResetTimer()
	if err := r.run(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
