package cashapps

import (
	"fmt"
	"math"
)

// GaussConfig sizes Gauss.
type GaussConfig struct {
	// N is the order of the system A x = b.
	N int
	// RowWords is the distance between rows in words, at least N+1 (a row
	// is A's N elements, then b's). 0 rounds N+1 up to whole pages, so that
	// a row is its own pages as at the paper's size (2048 doubles = 16 KB,
	// two pages a row) and cyclic rows share no page.
	RowWords int
}

// DefaultGauss is the CI size: N = 64, a row per page (64 pages of A and b,
// one of x), about 2.4 x 10^5 words loaded and stored at 32 processes. The
// paper's is 2048 x 2048 (Table 2).
func DefaultGauss() GaussConfig { return GaussConfig{N: 64} }

// Gauss solves A x = b by Gaussian elimination and back-substitution
// (cashmere-2l-memory-channel.txt section 3.2: «For load balance, the rows
// are distributed among processors cyclically, with each row computed on by
// a single processor. A synchronization flag for each row indicates when it
// is available to other rows for use as a pivot.»). Row i belongs to process
// i mod Procs. A is diagonally dominant, so there is no pivot search.
//
// Elimination: for each pivot row k its owner sets flag k (the row is final:
// its owner applied every earlier pivot to it), every other process with a
// row below k waits for the flag, loads row k and eliminates column k from its
// rows. Back-substitution, by columns from the last: the owner of row j
// computes x[j] from its private partial sum, stores it and sets flag N+j;
// every other process with a row above j waits for the flag, loads x[j] and
// subtracts a[i][j] x[j] from its rows' partial sums. So there are 2N flags
// (the paper's one per row, once for the pivot and once for x), a barrier
// after the initialisation and one at the end, and no locks.
//
// Flag acquires: the processes that wait at pivot k are those other than
// k's owner with a row below k, min(N-1-k, Procs-1) of them; at x[j], those
// other than j's owner with a row above j, min(j, Procs-1). Both sum to
// (P-1)(P-2)/2 + (N-P+1)(P-1) for P = min(Procs, N): 125,984 at the paper's
// N = 2048 and 32 processes, 3.0% under Table 3's 129.82 K.
type Gauss struct {
	c GaussConfig

	// skipPivotWait is a test-only fault: pivot rows are read without
	// waiting for their flags, a data race the interleaving backend must
	// catch.
	skipPivotWait bool
}

// NewGauss checks c.
func NewGauss(c GaussConfig) (*Gauss, error) {
	if c.N < 1 {
		return nil, fmt.Errorf("gauss: n = %d: need at least 1", c.N)
	}
	if c.RowWords == 0 {
		c.RowWords = (c.N + 1 + pageWords - 1) / pageWords * pageWords
	}
	if c.RowWords < c.N+1 {
		return nil, fmt.Errorf("gauss: row_words = %d: need at least n+1 = %d", c.RowWords, c.N+1)
	}
	return &Gauss{c: c}, nil
}

func (g *Gauss) Name() string { return "gauss" }
func (g *Gauss) Locks() int   { return 0 }
func (g *Gauss) Flags() int   { return 2 * g.c.N }

// xBase is the word where x starts: after the rows, on a page of its own.
func (g *Gauss) xBase() int {
	return (g.c.N*g.c.RowWords + pageWords - 1) / pageWords * pageWords
}

// SharedBytes is the rows then x.
func (g *Gauss) SharedBytes() uint64 { return roundPages(g.xBase() + g.c.N) }

// addr is the address of a[i][j] (j = N is b[i]).
func (g *Gauss) addr(i, j int) uint64 { return uint64(i*g.c.RowWords+j) * 8 }

// gaussInit is a[i][j] (j = n is b[i]): a diagonally dominant matrix.
func gaussInit(n, i, j int) float64 {
	switch {
	case j == n:
		return float64((i*13)%29) - 14
	case i == j:
		return float64(2 * n)
	}
	return float64((i*7+j*11)%19)/19 - 0.5
}

// Run is one process: its rows are id, id+Procs, ...
func (g *Gauss) Run(p Proc) {
	n, id, procs := g.c.N, p.ID(), p.Procs()
	m := newMeter(p, gaussMilli)
	owner := func(i int) int { return i % procs }
	// first and last rows of this process, -1 if none
	first, last := -1, -1
	if id < n {
		first = id
		last = id + (n-1-id)/procs*procs
	}

	buf := make([]uint64, n+1)
	for i := first; i >= 0 && i < n; i += procs {
		p.Poll()
		for j := range buf {
			buf[j] = math.Float64bits(gaussInit(n, i, j))
		}
		p.Store(g.addr(i, 0), buf)
	}
	p.Barrier()

	// Elimination.
	piv := make([]uint64, n+1)
	for k := 0; k < n; k++ {
		p.Poll()
		if owner(k) == id {
			p.SetFlag(k, 1)
		}
		if last <= k {
			continue // no row below the pivot
		}
		if owner(k) != id && !g.skipPivotWait {
			p.WaitFlag(k, 1)
		}
		p.Load(g.addr(k, k), piv[k:])
		pkk := math.Float64frombits(piv[k])
		// own rows below k: the first is the smallest i > k with i = id mod procs
		i0 := k + 1 + ((id-(k+1))%procs+procs)%procs
		for i := i0; i < n; i += procs {
			p.Poll()
			r := buf[k:]
			p.Load(g.addr(i, k), r)
			f := math.Float64frombits(r[0]) / pkk
			r[0] = math.Float64bits(0)
			for j := k + 1; j <= n; j++ {
				a := math.Float64frombits(buf[j]) - f*math.Float64frombits(piv[j])
				buf[j] = math.Float64bits(a)
			}
			p.Store(g.addr(i, k), r)
			m.charge(n - k)
		}
	}

	// Back-substitution by columns; own rows kept private (loaded once).
	own := make([][]uint64, n) // by row, only this process's
	partial := make([]float64, n)
	for i := first; i >= 0 && i < n; i += procs {
		r := make([]uint64, n+1)
		p.Load(g.addr(i, 0), r)
		own[i] = r
		partial[i] = math.Float64frombits(r[n])
	}
	xb := uint64(g.xBase())
	xj := make([]uint64, 1)
	for j := n - 1; j >= 0; j-- {
		p.Poll()
		switch {
		case owner(j) == id:
			x := partial[j] / math.Float64frombits(own[j][j])
			xj[0] = math.Float64bits(x)
			p.Store((xb+uint64(j))*8, xj)
			p.SetFlag(n+j, 1)
		case first >= 0 && first < j:
			p.WaitFlag(n+j, 1)
			p.Load((xb+uint64(j))*8, xj)
		default:
			continue
		}
		x := math.Float64frombits(xj[0])
		rows := 0
		for i := first; i >= 0 && i < j; i += procs {
			partial[i] -= math.Float64frombits(own[i][j]) * x
			rows++
		}
		m.charge(rows)
	}
	p.Barrier()
}
