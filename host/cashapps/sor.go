package cashapps

import (
	"fmt"
	"math"
)

// SORConfig sizes SOR.
type SORConfig struct {
	// Rows and Cols are the grid's points, boundary included (the first and
	// last row and column are fixed). Cols is even: each colour has Cols/2
	// points per row.
	Rows, Cols int
	// Iters is the number of red-black iterations.
	Iters int
}

// DefaultSOR is the CI size: a 128 x 256 grid, two arrays of 128 rows of
// 128 words (1 KB a row, 8 rows a page, 32 pages), 4 iterations: about
// 3.3 x 10^5 words loaded and stored. The paper's is 3072 x 4096 with 24
// iterations (Table 2; the iterations from Table 3's 48 barriers).
func DefaultSOR() SORConfig { return SORConfig{Rows: 128, Cols: 256, Iters: 4} }

// SOR is Red-Black Successive Over-Relaxation (cashmere-2l-memory-channel.txt
// section 3.2: «The red and black arrays are divided into roughly equal size
// bands of rows, with each band assigned to a different processor.
// Communication occurs across the band boundaries. Processors synchronize
// with barriers.»). Red point (i, j) has i+j even; each colour is its own
// array of Rows rows of Cols/2 words, red first. An iteration sets every
// interior red point to the mean of its four (black) neighbours, barrier,
// then every interior black point from the red, barrier. A band's first and
// last rows read the neighbouring bands' rows: nearest-neighbour sharing, one
// page boundary per band edge.
//
// Synchronisation: 1 + 2 x Iters barriers (the first after the
// initialisation), no locks, no flags.
type SOR struct {
	c    SORConfig
	half int // words per row of one colour

	// name and milli are the program's name and its cost a point update:
	// "sor" and sorMilli (the 21064A) from NewSOR, "ocean" and oceanMilli
	// (the 60 MHz Pentium) from NewOcean.
	name  string
	milli int64

	// dropBlackBarrier is a test-only fault: the barrier after the black
	// phase is left out, a data race the interleaving backend must catch.
	dropBlackBarrier bool
}

// NewSOR checks c.
func NewSOR(c SORConfig) (*SOR, error) {
	switch {
	case c.Rows < 3:
		return nil, fmt.Errorf("sor: rows = %d: need at least 3 (two boundary rows and one interior)", c.Rows)
	case c.Cols < 4 || c.Cols%2 != 0:
		return nil, fmt.Errorf("sor: cols = %d: need an even number of at least 4", c.Cols)
	case c.Iters < 1:
		return nil, fmt.Errorf("sor: iters = %d: need at least 1", c.Iters)
	}
	return &SOR{c: c, half: c.Cols / 2, name: "sor", milli: sorMilli}, nil
}

func (s *SOR) Name() string { return s.name }
func (s *SOR) Locks() int   { return 0 }
func (s *SOR) Flags() int   { return 0 }

// SharedBytes is the two arrays, rounded up to a page.
func (s *SOR) SharedBytes() uint64 { return roundPages(2 * s.c.Rows * s.half) }

// addr is the address of word k of row i of colour col (0 red, 1 black).
func (s *SOR) addr(col, i, k int) uint64 {
	return uint64((col*s.c.Rows+i)*s.half+k) * 8
}

// offset is the parity of colour col's first point in row i: point (i, j)
// of colour col is word (j - offset) / 2.
func (s *SOR) offset(col, i int) int { return (i + col) % 2 }

// sorInit is the initial value of point (i, j): the boundary at 1, the
// interior a pattern in [0, 1).
func sorInit(rows, cols, i, j int) float64 {
	if i == 0 || j == 0 || i == rows-1 || j == cols-1 {
		return 1
	}
	return float64((i*31+j*17)%97) / 97
}

// Run is one process: its band of rows is [lo, hi).
func (s *SOR) Run(p Proc) {
	rows, half := s.c.Rows, s.half
	lo, hi := band(rows, p.ID(), p.Procs())
	m := newMeter(p, s.milli)
	row := make([]uint64, half)

	// First touch: the band's rows of both colours.
	for col := 0; col < 2; col++ {
		for i := lo; i < hi; i++ {
			p.Poll()
			for k := range row {
				row[k] = math.Float64bits(sorInit(rows, s.c.Cols, i, 2*k+s.offset(col, i)))
			}
			p.Store(s.addr(col, i, 0), row)
		}
	}
	p.Barrier()

	// The interior rows of the band, and the other colour's rows it reads.
	ilo, ihi := max(lo, 1), min(hi, rows-1)
	win := make([][]uint64, 3)
	for r := range win {
		win[r] = make([]uint64, half)
	}
	for it := 0; it < s.c.Iters; it++ {
		for col := 0; col < 2; col++ {
			if ilo < ihi {
				s.phase(p, m, col, ilo, ihi, win, row)
			}
			if col == 0 || !s.dropBlackBarrier || it == s.c.Iters-1 {
				p.Barrier()
			}
		}
	}
}

// phase updates colour col's rows [ilo, ihi) from the other colour, keeping
// the other colour's rows i-1, i, i+1 in win (each loaded once a phase).
func (s *SOR) phase(p Proc, m *meter, col, ilo, ihi int, win [][]uint64, row []uint64) {
	other := 1 - col
	p.Load(s.addr(other, ilo-1, 0), win[0])
	p.Load(s.addr(other, ilo, 0), win[1])
	for i := ilo; i < ihi; i++ {
		p.Poll()
		p.Load(s.addr(other, i+1, 0), win[2])
		up, mid, down := win[0], win[1], win[2]
		off, oo := s.offset(col, i), s.offset(other, i)
		// the interior points of the row: j in [1, Cols-2]
		k0, k1 := 0, s.half
		if off == 0 {
			k0 = 1 // j = 0 is the boundary
		} else {
			k1 = s.half - 1 // j = Cols-1 is the boundary
		}
		for k := k0; k < k1; k++ {
			j := 2*k + off
			// the neighbours (i-1, j) and (i+1, j) have parity oo in
			// their rows too (row parity flips, colour flips), so word k.
			v := math.Float64frombits(up[k]) + math.Float64frombits(down[k]) +
				math.Float64frombits(mid[(j-1-oo)/2]) + math.Float64frombits(mid[(j+1-oo)/2])
			row[k] = math.Float64bits(v * 0.25)
		}
		m.charge(k1 - k0)
		p.Store(s.addr(col, i, k0), row[k0:k1])
		win[0], win[1], win[2] = win[1], win[2], win[0]
	}
}

// band is process id's share [lo, hi) of n items in contiguous bands, the
// first n%procs bands one longer.
func band(n, id, procs int) (lo, hi int) {
	q, r := n/procs, n%procs
	lo = id*q + min(id, r)
	hi = lo + q
	if id < r {
		hi++
	}
	return lo, hi
}

// roundPages is words 8-byte words rounded up to whole pages, in bytes.
func roundPages(words int) uint64 {
	pages := (words + pageWords - 1) / pageWords
	return uint64(pages) * PageBytes
}
