package tgtb_test

import (
	"fmt"
	"testing"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/tglib"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/tgtb"
)

// benchCluster builds n nodes of Telegraphos II with a process each.
func benchCluster(b *testing.B, e *env.Env, n int) (*tgtb.Cluster, []*tglib.Proc) {
	c := tgtb.DefaultCluster(n)
	c.HIB = tg.TelegraphosII()
	cl, err := tgtb.BuildCluster(e, c)
	if err != nil {
		b.Fatal(err)
	}
	procs := make([]*tglib.Proc, n)
	for i := range procs {
		procs[i] = cl.Proc(i, i, uint16(i))
	}
	return cl, procs
}

// BenchmarkRemoteOps reports simulated remote operations (writes and
// reads, each node to random other nodes, two writes per read) per second
// of host time, on 2 and 16 nodes.
func BenchmarkRemoteOps(b *testing.B) {
	for _, n := range []int{2, 16} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			const perNode = 600
			ops := 0
			for i := 0; b.Loop(); i++ {
				e := env.New(env.Options{Seed: uint64(i + 1)})
				cl, p := benchCluster(b, e, n)
				rng := e.Rand("Bench")
				for node := range n {
					var prog []cpu.Op
					for k := range perNode {
						dst := (node + 1 + rng.IntN(n-1)) % n
						off := uint32(4 * rng.IntN(2048))
						if k%3 == 2 {
							prog = append(prog, p[node].Load(dst, off, nil))
						} else {
							prog = append(prog, p[node].Store(dst, off, uint32(k)))
						}
					}
					p[node].Start(append(prog, p[node].Fence()...)...)
				}
				if _, err := e.Run(); err != nil {
					b.Fatal(err)
				}
				cl.Packets.Finish(e.Now())
				ops += n * perNode
			}
			b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "remote-ops/s")
		})
	}
}

// BenchmarkCoherenceStress reports the randomised coherence stress of 8
// nodes writing 4 hot words of one replicated page (32-entry counter
// caches) in writes per second of host time.
func BenchmarkCoherenceStress(b *testing.B) {
	const nodes, writes = 8, 200
	total := 0
	for i := 0; b.Loop(); i++ {
		e := env.New(env.Options{Seed: uint64(i + 1)})
		cl, p := benchCluster(b, e, nodes)
		all := make([]int, nodes)
		for k := range all {
			all[k] = k
		}
		if err := cl.Replicate(1, 0, all); err != nil {
			b.Fatal(err)
		}
		rng := e.Rand("Bench")
		for n := range nodes {
			var prog []cpu.Op
			for k := range writes {
				prog = append(prog, p[n].Compute(rng.IntN(600)), p[n].Store(n, tg.PageBytes+uint32(4*rng.IntN(4)), uint32(n<<16|k)))
			}
			p[n].Start(prog...)
		}
		if _, err := e.Run(); err != nil {
			b.Fatal(err)
		}
		cl.Packets.Finish(e.Now())
		total += nodes * writes
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "writes/s")
}
