package regress

import (
	"math"
	"math/rand/v2"
)

// svmSystem is shared virtual memory on SHRIMP (issue 19 section 4:
// «Randomised data-race-free programs on all three protocols, 16 nodes,
// against the reference»): one cashapps.Random program per job
// (svm-random: its seed from the job's --seed) under HLRC, HLRC-AU or
// AURC on 4 to 16 nodes, every checker on (shrimptb's shrimp.* and the
// runtime's svm.*), its final memory checked against the replay in lock
// order. A transaction is a packet (automatic or deliberate update) an NI
// sent and the scoreboard checked at its destination's memory: the
// protocol's requests, pages, diffs, grants, acknowledgements, automatic
// updates and timestamps.
//
// Cost, measured on the 2-core machine shared with other jobs
// (2026-11-28), bin/nisim run svm-random --seed 3 on 16 nodes with
// DefaultRandom's sizes (8 data pages, 6 phases): HLRC 5,186 packets in
// 12.7 s of CPU, HLRC-AU 10,661 in 13.0 s, AURC 10,678 in 10.5 s; AURC
// with 128-word granules and no compute 9,109 in 6.9 s. 35,634 packets in
// 43.1 s: 827 a CPU second (two jobs of the tier: 153,210 in 174 s, 881);
// the tier's million, planned at the estimate below so carried about
// 1.12 times over, about 27 minutes of CPU, 14 on two free cores. Cost is
// set at 700 a second, below the measure.
func svmSystem() *System {
	return &System{Name: "svm", Noun: "packets",
		Unit:  "SHRIMP packets checked at their destination's memory while random data-race-free programs ran under HLRC, HLRC-AU or AURC (svm-random)",
		Chunk: 40_000, Cost: 1.0 / 700, Draw: drawSVM, Count: SumMetrics("packets")}
}

// svmPacketsPerPhase is the packets a phase of svm-random carries per node
// and per (data_pages/2 + 1) 8 KB pages, the estimate jobs are sized by:
// measured 10.8 (HLRC) to 22 (AURC) on 16 nodes at 8 data pages, 24.0
// (HLRC-AU, 16 nodes, 2 pages, 125 phases: 96,154 packets in 106 s) and
// 14.2 (HLRC-AU, 8 nodes, 4 pages, 167 phases: 57,056 in 68 s). The
// tier's draws: 1,595,244 packets at 12 (CI of 11fd511, 2,228 s of job
// time, half the tier's); 1,274,075 at 15 (2026-11-28, one worker, 1,804
// s), by protocol 9.4 (HLRC), 18.3 (HLRC-AU) and 24.0 (AURC) a phase.
// Uniform 17 keeps the mix (HLRC's jobs are the slowest, about 400
// packets a second against 900 for AURC's) and carries about 1.12
// million, 12% over the tier's million.
const svmPacketsPerPhase = 17

// svmMaxPhases bounds a job's phases. assumed: 600, a job of 4 nodes and
// 2 data pages (80 packets a phase at the low estimate) carrying its
// 40,000-packet chunk in about a minute of CPU.
const svmMaxPhases = 600

// drawSVM: the three protocols on 4, 8 or 16 nodes; 2 to 8 data pages in
// granules of 4 to 1024 words; 1 to 4 locks guarding 8 or 64 words, 0 to 2
// critical sections a phase; a quarter to all of the granules written a
// phase; 0 to 2000 cycles of work per granule; the phases sized to the
// wanted packets.
func drawSVM(r *rand.Rand, want float64) Spec {
	protocol := pick(r, "hlrc", "hlrc-au", "aurc")
	nodes := pick(r, 4, 8, 16, 16)
	pages := pick(r, 2, 4, 8)
	perPhase := float64(svmPacketsPerPhase * nodes * (pages/2 + 1))
	phases := min(svmMaxPhases, max(1, int(math.Ceil(want/perPhase))))
	sets := []Set{{"protocol", protocol}, {"nodes", num(nodes)}, {"data_pages", num(pages)},
		{"granule", num(pick(r, 4, 16, 16, 128, 1024))}, {"phases", num(phases)}, {"locks", num(pick(r, 1, 2, 4))},
		{"block_words", num(pick(r, 8, 64))}, {"sections", num(pick(r, 0, 1, 1, 2))},
		{"write_share", num(pick(r, 64, 128, 256))}, {"compute", num(pick(r, 0, 200, 2000))}}
	return Spec{Scenario: "svm-random", Sets: sets, Expect: perPhase * float64(phases)}
}
