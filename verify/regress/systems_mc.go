package regress

import (
	"math"
	"math/rand/v2"
)

// mcSystem is the Memory Channel cluster (issue 13 section 5): random
// writes of every CPU of 2 to 8 AlphaServer nodes through their adapters
// and the MC1 hub, with every checker on (mc-traffic). A transaction is an
// MC write (one packet) the hub put in its global order, then checked at
// every receiver that maps its page, or one dropped at the sender with a
// reason.
//
// Cost, measured on a 2-core machine shared with other jobs (2026-11-27):
// `nisim run mc-traffic --set writes=1000` (8 nodes x 4 CPUs, 40140
// writes) took 3.3 s of CPU, 12,000 writes per second; `nisim regress
// --scale 0.02 --system mc` (2 jobs, 21319 writes) 8,000 writes per job
// second, start-up included. So a chunk of 50,000 writes is about 6 s,
// and the tier's 1.08 million about 135 s of CPU.
func mcSystem() *System {
	return &System{Name: "mc", Noun: "writes",
		Unit:  "MC writes ordered by the hub and checked at every mapped receiver's memory, or dropped with a reason (mc-traffic)",
		Chunk: 50_000, Cost: 1.0 / 8_000, Draw: drawMCCluster, Count: SumMetrics("writes")}
}

// drawMCCluster: 2 to 8 nodes of 1 to 4 CPUs, every size range from a
// longword to 128 bytes (a write longer than 32 bytes or crossing a
// 32-byte boundary is several packets), from back-to-back writes to long
// gaps, with and without checked loads; the regions (broadcast,
// point-to-point, loop-back, with loop-back at random) are drawn by the
// run from its seed.
func drawMCCluster(r *rand.Rand, want float64) Spec {
	nodes := pick(r, 2, 3, 4, 8, 8, 8)
	cpus := pick(r, 1, 2, 4, 4)
	size := pick(r, [2]int{4, 4}, [2]int{4, 32}, [2]int{4, 32}, [2]int{32, 32}, [2]int{4, 64}, [2]int{8, 128})
	gap := pick(r, 0, 50, 400, 2000)
	loads := pick(r, 0, 4, 8, 32)
	// Packets per write: a write of s bytes at a random longword offset
	// is cut at every 32-byte boundary it crosses, each of its s/4-1
	// inner longword boundaries being one with probability 1/8.
	mean := float64(size[0]+size[1]) / 2
	packets := 1 + (mean/4-1)/8
	share := 1.0
	if loads > 0 {
		share -= 1 / float64(loads)
	}
	perOp := packets * share
	writes := max(1, int(math.Ceil(want/(float64(nodes*cpus)*perOp))))
	sets := []Set{{"nodes", num(nodes)}, {"cpus", num(cpus)}, {"writes", num(writes)},
		{"min_bytes", num(size[0])}, {"max_bytes", num(size[1])}, {"max_gap", num(gap)}, {"load_every", num(loads)}}
	return Spec{Scenario: "mc-traffic", Sets: sets, Expect: float64(nodes*cpus*writes) * perOp}
}
