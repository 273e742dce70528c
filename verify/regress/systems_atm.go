package regress

import (
	"math"
	"math/rand/v2"
)

// atmRMASystem is the FORE ATM remote-memory cluster (issue 15 section 5):
// random WRITE, READ, CAS, block, RPC and illegal operations of 2 to 4
// DECstation 5000/200s with TCA-100s on a direct link or the ASX-100,
// with link drops and corruption, every checker on (atm.cells, atm.order,
// rma.scoreboard, rma.protect, atm.irq, rma.cas, rpc.once, the board's
// and kernel's own; atm-traffic). A transaction is a cell a sender issued
// as a WRITE, READ request, CAS request (not its resends) or block cell,
// or a trap the sender refused: each checked where the target's kernel
// handles it (its verdict Ref's, every word it writes Ref's), refused
// with a reason, or lost to a counted fault (atmtb.TrafficRun.Operations;
// an RPC call's argument cells, masks and reply are WRITEs).
//
// Cost, measured on a 2-core machine shared with other jobs (2026-11-27),
// CPU seconds (getrusage, GOMAXPROCS 1) of atmtb.StartTraffic runs of
// the default mix with 1e-3 drops and corruptions: 4 nodes, 1000
// operations each, gaps up to 2000 cycles, 5293 transactions in 2.81 s
// (1,880 per CPU second); 2 nodes direct, 2000 each, 5238 in 2.90 s
// (1,810); 4 nodes back to back (gap 0) 2,760; 3 nodes, gaps up to 500,
// blocks of up to 16 words, no faults 2,430. BenchmarkATMTraffic (4
// nodes, 200 each) gave 611 and 1,221 per wall second on the loaded
// machine. So 1,800 per CPU second: a chunk of 25,000 is about 14 s.
// The whole tier, `nisim regress --system atm-rma` (44 jobs, 2 workers,
// load average 6-8 from other jobs): 1,097,984 operations, no violation,
// 451 s of CPU (2,430 per CPU second), 685 s of wall time; on two free
// cores that CPU time is about 4 minutes. With RPC calls in the mixes
// (2026-11-27, load average 2-6): the whole tier 1,094,043 operations,
// no violation, 508 s of CPU (2,150 per CPU second), 385 s of wall time;
// one job, `nisim run atm-traffic --seed 1920844019 --set nodes=4 --set
// switched=true --set ops=5360 --set write=80 --set read=5 --set cas=5
// --set block=5 --set illegal=5 --set max_gap=2000 --set
// max_block_words=64 --set drop_prob=0.001 --set corrupt_prob=0.001`:
// 25,145 operations in 6.95-7.29 s of user CPU with rpc=0 (as before the
// RPC share), 39,907 with rpc=5 (978 calls) in 12.42 s, so an RPC cell
// costs about what another operation's does (3,200 against 3,600 per CPU
// second).
func atmRMASystem() *System {
	return &System{Name: "atm-rma", Noun: "operations",
		Unit:  "RMA cells issued (WRITE, READ request, CAS request, block cell) or traps refused at the sender, each checked at its target, refused with a reason or lost to a counted fault (atm-traffic)",
		Chunk: 25_000, Cost: 1.0 / 1_800, Draw: drawATMRMA, Count: SumMetrics("operations")}
}

// drawATMRMA: 2 to 4 nodes (2 directly joined or on the switch), mixes
// from WRITE-heavy to READ/CAS-heavy, block-heavy and RPC-heavy (all but
// one with RPC calls), each with illegal operations (every refusal
// reason at both ends in turn), blocks of up to 16, 64 or 256 words, 0 to 2000 CPU cycles (80 µs) of work before
// each operation, and links from loss-free to the design's 1e-3 cell
// drops and corruptions (section 6.4) and ten times that.
func drawATMRMA(r *rand.Rand, want float64) Spec {
	nodes := pick(r, 2, 2, 3, 4, 4)
	switched := nodes > 2 || r.IntN(2) == 0
	type mix struct{ write, read, cas, block, rpc, illegal int }
	m := pick(r, mix{50, 15, 10, 10, 10, 5}, mix{80, 5, 5, 5, 5, 5}, mix{20, 35, 30, 5, 5, 10}, mix{30, 10, 10, 40, 5, 10},
		mix{40, 20, 20, 10, 0, 10}, mix{20, 10, 10, 10, 40, 10})
	blockWords := pick(r, 16, 64, 64, 256)
	fault := pick(r, 0.0, 1e-4, 1e-3, 1e-3, 1e-2)
	// Transactions per program operation: a block of 1..B words is
	// ceil(n/10) cells (mean about (B/10+1)/2), a CAS increment one
	// request and, when it fails to swap, a second, an RPC call
	// rpcCellsPerCall.
	total := float64(m.write + m.read + m.cas + m.block + m.rpc + m.illegal)
	cells := (float64(blockWords)/10 + 1) / 2
	perOp := (float64(m.write+m.read+m.illegal) + 1.2*float64(m.cas) + cells*float64(m.block) + rpcCellsPerCall*float64(m.rpc)) / total
	ops := min(200_000, max(1, int(math.Ceil(want/(float64(nodes)*perOp)))))
	sets := []Set{{"nodes", num(nodes)}, {"switched", num(switched)}, {"ops", num(ops)},
		{"write", num(m.write)}, {"read", num(m.read)}, {"cas", num(m.cas)}, {"block", num(m.block)}, {"rpc", num(m.rpc)}, {"illegal", num(m.illegal)},
		{"max_gap", num(pick(r, 0, 500, 2000, 2000))}, {"max_block_words", num(blockWords)},
		{"drop_prob", num(fault)}, {"corrupt_prob", num(fault)}}
	return Spec{Scenario: "atm-traffic", Sets: sets, Expect: float64(nodes*ops) * perOp}
}

// rpcCellsPerCall is the WRITE cells of one traffic RPC call. derived:
// arguments of 1..223 words (atmtb's 25-slot stacks) are rpc.Cells =
// ceil((n+2)/9) = 1..25 argument cells, mean 2923/223 = 13.11; a call of
// more than one cell gets a mask per message of N = 8 cells (1..4, mean
// 459/223 = 2.06 over the 223 sizes, the one-cell calls' 0 included),
// and the reply is one: 13.11 + 2.06 + 1 = 16.17 (loss-free; re-sent
// cells add).
const rpcCellsPerCall = 16.17
