package cashapps

// Per-element compute costs, in milli-cycles of the 233 MHz 21064A
// (cashmere-2l-memory-channel.txt section 3: «four 21064A processors
// operating at 233 MHz»), each derived from the program's sequential time in
// Table 2 divided by the elements of work the program's code charges at the
// paper's problem size. Table 2's times are «measured by running each
// uninstrumented application sequentially without linking it to the protocol
// library» (section 3.2), so they hold the real machine's cache misses and no
// polling. On the cycle model every Load and Store is simulated too, so a
// program's memory time is counted twice there (once inside these costs, once
// by the model's caches and buses): the derived cost is an upper bound on the
// pure instruction work and the model's user time is high by the memory share
// of Table 2's time (never fitted away; see docs/cashmere-design.md section 7).
const (
	// sorMilli is one red or black point update (four loads, three adds,
	// one multiply, one store).
	// derived: 162.2 s x 233e6 cycles/s = 37,792,600,000 cycles over
	// 3072 x 4096 = 12,582,912 points x 24 iterations = 301,989,888 point
	// updates = 125.145 cycles. Iterations from Table 3's 48 barriers at two
	// per iteration (red, black); this program's initial barrier makes its
	// count 1 + 2 x iterations, so the paper's 48 could also be 23.5
	// iterations: the 2% is within what Table 3 resolves. 50 MB for
	// 12.6 M points means 4-byte elements there, 8-byte words here.
	sorMilli = 125145

	// gaussMilli is one element of a row update in the elimination,
	// a[i][j] -= m x a[k][j] (the right-hand side counts as column n).
	// derived: 970.8 s x 233e6 = 226,196,400,000 cycles over the updates
	// of n = 2048, sum over pivots k of (n-1-k) rows x (n-k) elements =
	// (n-1)n(n+1)/3 = 2,863,310,848 = 78.998 cycles. Back-substitution's
	// n(n-1)/2 = 2,096,128 multiply-adds are charged at the same cost and
	// left out of the division (0.07%).
	gaussMilli = 78998

	// luMilli is one multiply-add of SPLASH-2 LU's daxpy with
	// non-contiguous blocks (the matrix column-major, a block a strided
	// piece of it).
	// derived: 763.0 s x 233e6 = 177,779,000,000 cycles over the
	// multiply-adds of an unpivoted LU of n = 2048, sum over k of
	// (n-1-k)^2 = (n-1)n(2n-1)/6 = 2,861,214,720 (the blocked kernels do
	// exactly these; the n(n-1)/2 divisions, 0.07%, are not charged) =
	// 62.134 cycles.
	luMilli = 62134

	// cluMilli is the same multiply-add with contiguous blocks (CLU).
	// derived: 265.5 s x 233e6 = 61,861,500,000 cycles over the same
	// 2,861,214,720 multiply-adds = 21.621 cycles. LU and CLU run the same
	// instructions (section 3.2: «the implementation is identical to CLU
	// except that blocks are not allocated contiguously»): the 2.9x between
	// them is the real machine's cache and TLB misses on the strided layout,
	// which the cycle model's memory system adds again on top.
	cluMilli = 21621

	// em3dMilli is one node update (value -= sum of weight x neighbour
	// over the node's edges).
	// derived: 145.0 s x 233e6 = 33,785,000,000 cycles over 64,000 nodes
	// x 100 iterations = 6,400,000 node updates = 5,278.906 cycles.
	// Iterations from Table 3's 200 barriers at two per iteration (E phase,
	// H phase). The paper does not give the graph's degree, so the cost is
	// per node, not per edge: a run with another degree keeps it.
	em3dMilli = 5278906

	// waterMilli is one pair interaction (Water's inter-molecular force of
	// one pair of molecules; the per-molecule phases are O(n), 0.02% of the
	// pairs at the paper's size, and not charged).
	// derived: 1566.4 s x 233e6 = 364,971,200,000 cycles over 4096 x 4095 / 2
	// = 8,386,560 pairs per step x 7 steps = 58,705,920 = 6,216.94 cycles.
	// The paper does not give the steps; 7 is from Table 3's 3.68 K lock
	// acquires at 32 processes over this program's 17 group locks per process
	// per step (3,680 / 544 = 6.8). Its 36 barriers would be 11.7 steps at
	// this program's 3 a step, so the steps, and this cost, are uncertain by
	// that much (SPLASH-1 Water has more phases than this skeleton).
	waterMilli = 6216940
)

// meter charges elements of work at a cost in milli-cycles through
// Proc.Compute, carrying the fraction of a cycle to the next charge so that
// the total is exact to one cycle however the work is split. One per process
// (Run's local), so it is private state.
type meter struct {
	p     Proc
	milli int64
	carry int64
}

func newMeter(p Proc, milli int64) *meter { return &meter{p: p, milli: milli} }

// charge bills n elements.
func (m *meter) charge(n int) {
	if n <= 0 {
		return
	}
	m.carry += int64(n) * m.milli
	c := m.carry / 1000
	if c > 0 {
		m.p.Compute(int(c))
		m.carry -= c * 1000
	}
}
