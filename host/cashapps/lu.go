package cashapps

import (
	"fmt"
	"math"
)

// LUConfig sizes LU and CLU.
type LUConfig struct {
	// N is the matrix order, Block the block order (N a multiple of it).
	N, Block int
	// Contiguous stores each block contiguously (CLU), each on whole pages
	// of its own; otherwise the matrix is one column-major array and a
	// block is Block pieces of Block words, Block columns apart (LU).
	Contiguous bool
}

// DefaultLU is the CI size of LU: N = 128 in blocks of 16 (64 blocks, a
// column of 1 KB, so a page holds 8 columns and every block row's segment of
// them: 8 owners a page at 32 processes, as at the paper's size where a page
// is half a column of 32 block segments owned by 8 processes), 16 pages,
// about 1.9 x 10^5 words loaded and stored. The paper's is 2048 x 2048
// (Table 2) in blocks of 32 (SPLASH-2's 2 + 2 x 64 = 130 barriers, Table 3).
func DefaultLU() LUConfig { return LUConfig{N: 128, Block: 16} }

// DefaultCLU is the CI size of CLU: LU's, blocks contiguous, each 16 x 16
// block (2 KB) on a page of its own as the paper's 32 x 32 blocks (8 KB)
// are: 64 pages.
func DefaultCLU() LUConfig { return LUConfig{N: 128, Block: 16, Contiguous: true} }

// LU is SPLASH-2's blocked LU factorisation (cashmere-2l-memory-channel.txt
// section 3.2: «The matrix A is divided into square blocks for temporal and
// spatial locality. Each block is "owned" by a processor, which performs all
// computation on it.»; LU: «identical to CLU except that blocks are not
// allocated contiguously, resulting in a very high degree of false
// sharing»). Block (I, J) belongs to process (I mod c) + (J mod r) c on
// SPLASH-2's r x c processor grid (r the largest divisor of Procs not above
// its square root). Step K: the owner of (K, K) factors it (lu0); barrier;
// the owners of column K's blocks below it divide them by it (bdiv) and those
// of row K's to its right (bmodd); barrier; every block (I, J) with I, J > K
// is updated by its owner from (I, K) and (K, J) (bmod). The kernels are
// SPLASH-2's: Crout, unit upper triangle, no pivoting (A is diagonally
// dominant).
//
// Synchronisation: 2 + 2 N/Block barriers (after the initialisation, two per
// step, at the end), no locks, no flags.
type LU struct {
	c      LUConfig
	nb     int // blocks per dimension
	stride int // words between contiguous blocks
}

// NewLU checks c.
func NewLU(c LUConfig) (*LU, error) {
	switch {
	case c.Block < 1:
		return nil, fmt.Errorf("lu: block = %d: need at least 1", c.Block)
	case c.N < 1 || c.N%c.Block != 0:
		return nil, fmt.Errorf("lu: n = %d: need a positive multiple of block = %d", c.N, c.Block)
	}
	bb := c.Block * c.Block
	return &LU{c: c, nb: c.N / c.Block, stride: (bb + pageWords - 1) / pageWords * pageWords}, nil
}

func (l *LU) Name() string {
	if l.c.Contiguous {
		return "clu"
	}
	return "lu"
}
func (l *LU) Locks() int { return 0 }
func (l *LU) Flags() int { return 0 }

// SharedBytes is the matrix, or the padded blocks.
func (l *LU) SharedBytes() uint64 {
	if l.c.Contiguous {
		return roundPages(l.nb * l.nb * l.stride)
	}
	return roundPages(l.c.N * l.c.N)
}

// col is the address of column jj of block (I, J): Block words.
func (l *LU) col(I, J, jj int) uint64 {
	b := l.c.Block
	if l.c.Contiguous {
		return uint64((I+J*l.nb)*l.stride+jj*b) * 8
	}
	return uint64(I*b+(J*b+jj)*l.c.N) * 8
}

func (l *LU) load(p Proc, I, J int, buf []uint64) {
	b := l.c.Block
	if l.c.Contiguous {
		p.Load(l.col(I, J, 0), buf)
		return
	}
	for jj := 0; jj < b; jj++ {
		p.Load(l.col(I, J, jj), buf[jj*b:(jj+1)*b])
	}
}

func (l *LU) store(p Proc, I, J int, buf []uint64) {
	b := l.c.Block
	if l.c.Contiguous {
		p.Store(l.col(I, J, 0), buf)
		return
	}
	for jj := 0; jj < b; jj++ {
		p.Store(l.col(I, J, jj), buf[jj*b:(jj+1)*b])
	}
}

// luGrid is SPLASH-2's processor grid: rows the largest divisor of procs
// not above its square root, cols = procs / rows.
func luGrid(procs int) (rows, cols int) {
	rows = int(math.Sqrt(float64(procs)))
	for rows*rows > procs {
		rows--
	}
	for procs%rows != 0 {
		rows--
	}
	return rows, procs / rows
}

// luInit is a[i][j]: diagonally dominant.
func luInit(n, i, j int) float64 {
	if i == j {
		return float64(2 * n)
	}
	return float64((i*5+j*3)%23)/23 - 0.5
}

// Run is one process.
func (l *LU) Run(p Proc) {
	b, nb, id := l.c.Block, l.nb, p.ID()
	gr, gc := luGrid(p.Procs())
	owner := func(I, J int) int { return I%gc + (J%gr)*gc }
	milli := int64(luMilli)
	if l.c.Contiguous {
		milli = cluMilli
	}
	m := newMeter(p, milli)
	bb := b * b
	x, y, z := make([]uint64, bb), make([]uint64, bb), make([]uint64, bb)

	for J := 0; J < nb; J++ {
		for I := 0; I < nb; I++ {
			if owner(I, J) != id {
				continue
			}
			p.Poll()
			for jj := 0; jj < b; jj++ {
				for ii := 0; ii < b; ii++ {
					x[ii+jj*b] = math.Float64bits(luInit(l.c.N, I*b+ii, J*b+jj))
				}
			}
			l.store(p, I, J, x)
		}
	}
	p.Barrier()

	for K := 0; K < nb; K++ {
		p.Poll()
		if owner(K, K) == id {
			l.load(p, K, K, x)
			m.charge(lu0(x, b))
			l.store(p, K, K, x)
		}
		p.Barrier()
		loaded := false
		for I := K + 1; I < nb; I++ {
			if owner(I, K) != id {
				continue
			}
			p.Poll()
			if !loaded {
				l.load(p, K, K, x)
				loaded = true
			}
			l.load(p, I, K, y)
			m.charge(bdiv(y, x, b))
			l.store(p, I, K, y)
		}
		for J := K + 1; J < nb; J++ {
			if owner(K, J) != id {
				continue
			}
			p.Poll()
			if !loaded {
				l.load(p, K, K, x)
				loaded = true
			}
			l.load(p, K, J, y)
			m.charge(bmodd(x, y, b))
			l.store(p, K, J, y)
		}
		p.Barrier()
		for J := K + 1; J < nb; J++ {
			for I := K + 1; I < nb; I++ {
				if owner(I, J) != id {
					continue
				}
				p.Poll()
				l.load(p, I, K, x)
				l.load(p, K, J, y)
				l.load(p, I, J, z)
				m.charge(bmod(x, y, z, b))
				l.store(p, I, J, z)
			}
		}
	}
	p.Barrier()
}

// The kernels work on b x b column-major blocks (element (i, j) at i + j b)
// and return their multiply-adds.

// daxpy is a[i] += alpha b[i].
func daxpy(a, b []uint64, alpha float64) {
	for i := range a {
		a[i] = math.Float64bits(math.Float64frombits(a[i]) + alpha*math.Float64frombits(b[i]))
	}
}

// lu0 factors a diagonal block: (b-1-k)^2 multiply-adds at step k.
func lu0(a []uint64, b int) int {
	n := 0
	for k := 0; k < b; k++ {
		akk := math.Float64frombits(a[k+k*b])
		for j := k + 1; j < b; j++ {
			u := math.Float64frombits(a[k+j*b]) / akk
			a[k+j*b] = math.Float64bits(u)
			daxpy(a[k+1+j*b:(j+1)*b], a[k+1+k*b:(k+1)*b], -u)
			n += b - 1 - k
		}
	}
	return n
}

// bdiv updates a block below the diagonal block d: b x b(b-1)/2.
func bdiv(a, d []uint64, b int) int {
	n := 0
	for k := 0; k < b; k++ {
		for j := k + 1; j < b; j++ {
			daxpy(a[j*b:(j+1)*b], a[k*b:(k+1)*b], -math.Float64frombits(d[k+j*b]))
			n += b
		}
	}
	return n
}

// bmodd updates a block c right of the diagonal block d: b x b(b-1)/2.
func bmodd(d, c []uint64, b int) int {
	n := 0
	for k := 0; k < b; k++ {
		dkk := math.Float64frombits(d[k+k*b])
		for j := 0; j < b; j++ {
			u := math.Float64frombits(c[k+j*b]) / dkk
			c[k+j*b] = math.Float64bits(u)
			daxpy(c[k+1+j*b:(j+1)*b], d[k+1+k*b:(k+1)*b], -u)
			n += b - 1 - k
		}
	}
	return n
}

// bmod is c -= a x b: b^3.
func bmod(a, bk, c []uint64, b int) int {
	for k := 0; k < b; k++ {
		for j := 0; j < b; j++ {
			daxpy(c[j*b:(j+1)*b], a[k*b:(k+1)*b], -math.Float64frombits(bk[k+j*b]))
		}
	}
	return b * b * b
}
