package regress

import (
	"math"
	"math/rand/v2"
)

// cashSystem is Cashmere on the Memory Channel cluster (issue 18 section
// 4: «Randomised data-race-free programs (random sharing patterns, locks
// and barriers) on all six variants against the reference»): one
// cashapps.Random program per job (cashmere-random: its seed from the
// job's --seed), under every built variant, on 2 to 32 processes, every
// checker on (mctb's mc.* and the runtime's cashmere.*), its final memory
// checked against the replay in lock order. A transaction is an MC write
// (one packet) the hub put in its global order, then checked at every
// receiver that maps its page, as for the mc system: the protocol's page
// replies, diffs, directory words, write notices, requests, lock-array
// and barrier words.
//
// No link faults: Cashmere relies on the Memory Channel's reliable
// delivery (cashmere-2l-memory-channel.txt section 5) and the MC has no
// retransmission, so a lost or corrupted write is not survivable
// (docs/cashmere-design.md section 8, "Fault injection").
//
// Cost, measured on the 2-core machine shared with other jobs
// (2026-11-28), four jobs of this tier run by hand (bin/nisim run
// cashmere-random --seed S --set ...): job 0, 2LS on 8x2, 6 phases,
// 41,021 writes (planned 43,200) in 15.5 s of CPU; job 1, 1LD on 4x2, 6
// phases, 53,859 (planned 43,200) in 13.7 s; job 4, 2L on 4x4, 12 phases
// of 1024-word granules with 2000 cycles of work each, 53,615 (planned
// 43,200) in 36.9 s; job 12, 2L on 8x4, 4 phases, 65,590 (planned
// 43,200) in 36.6 s. 214,085 writes in 102.7 s: 2,080 a CPU second, so
// the tier's 1.08 million writes (27 jobs) about 520 s of CPU, 4.3
// minutes on two free cores.
func cashSystem() *System {
	return &System{Name: "cash", Noun: "writes",
		Unit:  "MC writes ordered by the hub and checked at every mapped receiver's memory, while random data-race-free programs ran under Cashmere (cashmere-random)",
		Chunk: 40_000, Cost: 1.0 / 2_080, Draw: drawCash, Count: SumMetrics("writes")}
}

// cashWritesPerPhase is the MC writes a phase of cashmere-random carries
// per protocol node and per (data_pages/2 + 1) pages, the estimate jobs
// are sized by: measured 520 to 780 over 2L, 2LS, 2LOffMC, 1LD and 1L
// on 4x4, 8x2 and 2x4 at 2 to 8 data pages, 2 to 6 phases (a page
// transfer or a full diff is 256 32-byte packets); 1L at 8 data pages
// 450. The low end, so that the counted volume exceeds the plan.
const cashWritesPerPhase = 450

// drawCash: every built variant; the two-level ones on 2x2 to 8x4 (the
// paper's 32 processors), the one-level ones on up to 8 processes (their
// limit: the lock array's 8 entries); 2 to 8 data pages in granules of 4
// to 1024 words (from 256 writers' granules on a page to one); 1 to 4
// locks guarding 8 or 64 words, 0 to 2 critical sections a phase; a
// quarter to all of the granules written a phase; 0 to 2000 cycles of
// work per granule; the phases sized to the wanted writes.
func drawCash(r *rand.Rand, want float64) Spec {
	variant := pick(r, "2L", "2LS", "2LOffMC", "2LMigr", "1LD", "1L")
	var shape [2]int
	protoNodes := 0
	if variant == "1LD" || variant == "1L" {
		shape = pick(r, [2]int{2, 2}, [2]int{2, 4}, [2]int{4, 2}, [2]int{8, 1})
		protoNodes = shape[0] * shape[1]
	} else {
		shape = pick(r, [2]int{2, 2}, [2]int{4, 2}, [2]int{4, 4}, [2]int{8, 2}, [2]int{8, 1}, [2]int{8, 4})
		protoNodes = shape[0]
	}
	pages := pick(r, 2, 2, 4, 8)
	perPhase := float64(cashWritesPerPhase * protoNodes * (pages/2 + 1))
	phases := min(60, max(1, int(math.Ceil(want/perPhase))))
	sets := []Set{{"variant", variant}, {"nodes", num(shape[0])}, {"cpus", num(shape[1])},
		{"data_pages", num(pages)}, {"granule", num(pick(r, 4, 16, 16, 128, 1024))}, {"phases", num(phases)},
		{"locks", num(pick(r, 1, 2, 4))}, {"block_words", num(pick(r, 8, 64))}, {"sections", num(pick(r, 0, 1, 1, 2))},
		{"write_share", num(pick(r, 64, 128, 256))}, {"compute", num(pick(r, 0, 200, 2000))}}
	return Spec{Scenario: "cashmere-random", Sets: sets, Expect: perPhase * float64(phases)}
}
