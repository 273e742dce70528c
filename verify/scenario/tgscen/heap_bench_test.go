package tgscen

import (
	"fmt"
	"testing"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/internal/heappeak"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// heapRun runs 8 Telegraphos II nodes until their HIBs have sent at least
// tx packets, with every checker on (packet conservation, per-class order,
// the coherence checker on a page replicated at every node) and the heap
// sampled during the run. Each node loops over a remote write to a random
// other node, a write to its copy of the replicated page (an update to the
// owner and its reflections; the owner's own writes are reflected at once),
// a remote read and another remote write. The programs are generated as
// the processors run (64 operations at a time), so the workload itself
// takes the same memory at any length.
//
// Node i writes only words i, i+8, i+16 and i+24 of the replicated page:
// words with one writer each, coherent by construction. Words written by
// several nodes at once are not, in this model: a reflected write that
// passed its counter check in the cycle the processor side raised that
// word's counter lands after the local write (8 violations in 10^5 packets
// of this workload with random words), which the benchmark is not about.
func heapRun(b *testing.B, seed uint64, tx int) (*heappeak.Sampler, int) {
	b.Helper()
	const n, batch = 8, 64
	e := env.New(env.Options{Seed: seed})
	cl, pr, err := build(e, config(n, 2))
	if err != nil {
		b.Fatal(err)
	}
	all := nodes(n)
	if err := cl.Replicate(rpage, 0, all); err != nil {
		b.Fatal(err)
	}
	co := cl.WatchCoherence(rpage, 0, all)
	sent := func() int { s, _, _ := cl.Packets.Counts(); return s }
	for i := range n {
		p := pr[i]
		rng := e.Rand(fmt.Sprintf("Heap%d", i))
		var more func() []cpu.Op
		more = func() []cpu.Op {
			ops := make([]cpu.Op, 0, batch+1)
			for k := 0; k < batch; k += 4 {
				dst := (i + 1 + rng.IntN(n-1)) % n
				off := uint32(4 * rng.IntN(1024))
				ops = append(ops, p.Store(dst, off, uint32(k)),
					p.Store(i, rbase+uint32(4*(i+8*rng.IntN(4))), uint32(i<<16|k)),
					p.Load(dst, off, nil),
					p.Store((dst+1)%n, off, uint32(k+1)))
			}
			return append(ops, cpu.Op{Kind: cpu.Call, Fn: func(clock.Time) bool {
				if sent() < tx {
					p.CPU.Insert(more()...)
				}
				return true
			}})
		}
		p.Start(more()...)
	}
	s := heappeak.Hook(e, 0)
	_, err = run(e, cl)
	if err != nil {
		b.Fatal(err)
	}
	if v := co.Violations(func(nd int, off uint32) uint32 { return word(cl, nd, off) }); len(v) > 0 {
		b.Fatalf("%d coherence violations, the first: %s", len(v), clip(v[0], 200))
	}
	s.Finish(e, cl, co)
	return s, sent()
}

// BenchmarkPeakHeapTelegraphos reports the peak heap of a Telegraphos run
// of 10^5 and 10^6 packets (heapRun): with the checkers keeping only what
// is outstanding the peak is the same at both lengths.
func BenchmarkPeakHeapTelegraphos(b *testing.B) {
	for _, tx := range heapSizes {
		b.Run(fmt.Sprintf("packets=%d", tx), func(b *testing.B) {
			var worst *heappeak.Sampler
			got := 0
			for i := 0; b.Loop(); i++ {
				s, n := heapRun(b, uint64(i+1), tx)
				if worst == nil || s.Peak.Live > worst.Peak.Live {
					worst, got = s, n
				}
			}
			b.Logf("%d packets: %v", got, worst)
			worst.Report(b, got)
		})
	}
}

// heapSizes are the run lengths of BenchmarkPeakHeapTelegraphos.
var heapSizes = []int{100_000, 1_000_000}
