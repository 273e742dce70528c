package cashapps

import (
	"fmt"
	"math"
)

// WaterConfig sizes Water.
type WaterConfig struct {
	// Molecules is the number of molecules (even).
	Molecules int
	// Steps is the number of time steps.
	Steps int
	// Groups is the number of force locks: molecule i's forces are
	// updated under lock i x Groups / Molecules (Molecules a multiple of
	// Groups).
	Groups int
}

// DefaultWater is the CI size: 256 molecules of 1 KB (32 pages; a page
// holds 8 molecules as at the paper's 4096 molecules in 4 MB, Table 2),
// 3 steps, 32 force locks: about 1.4 x 10^5 words loaded and stored at 32
// processes. Its compute is still the largest of the CI programs (97,920
// pairs at 6,217 cycles: 609 M cycles, 19 M a process at 32, 82 ms at
// 233 MHz), because the pair work grows as the square of the molecules.
func DefaultWater() WaterConfig {
	// assumed: 32 lock groups, one per process's chunk at 32 processes:
	// Table 3's 3.68 K lock acquires at 32 processes are about 17 per
	// process per step over 7 steps (see waterMilli), which is one lock per
	// chunk a process adds forces to (its own and the next 16, the
	// half-shell), not one per molecule (2,176 per process per step).
	// Program.Locks cannot depend on the process count, so the groups are
	// fixed.
	return WaterConfig{Molecules: 256, Steps: 3, Groups: 32}
}

// waterRecordWords is a molecule's record: position (3 words), velocity
// (3), force (3, fixed point), then padding to 1 KB.
// derived: Table 2's 4 MB / 4096 molecules = 1 KB a molecule.
const waterRecordWords = 128

// waterFixed is the fixed-point scale of the forces (2^30): the force sums
// are integer additions, so their result is the same in any lock order.
const waterFixed = 1 << 30

// Water is the SPLASH-1 molecular dynamics skeleton (cashmere-2l-memory-
// channel.txt section 3.2: «The shared array of molecule structures is
// divided into equal contiguous chunks, with each chunk assigned to a
// different processor. The bulk of the interprocessor communication occurs
// during a phase that updates intermolecular forces using locks, resulting in
// a migratory sharing pattern.»). Its structure is Water's; its physics is
// not: the pair force is a softened inverse-cube attraction between
// points, not the water potential.
//
// A step: each process moves its molecules (position += dt velocity),
// barrier; computes the force of every pair (i, j) with i its own and j one
// of the next Molecules/2 (SPLASH-1's half-shell: each pair once) into a
// private array, then adds it to the shared forces group by group, each
// under its lock (the migratory pattern: a group's forces pass from process
// to process), barrier; updates its velocities from its forces and clears
// them, barrier. Forces are fixed-point integers so that the sums do not
// depend on the lock order (docs/cashmere-design.md section 2: reductions in
// a fixed order).
//
// Synchronisation: 1 + 3 x Steps barriers, per step and process one lock
// acquire per group holding a molecule in [lo, hi-1 + Molecules/2] (mod
// Molecules) for its chunk [lo, hi): Groups/2 + 1 at 32 processes and 32
// groups, no flags.
type Water struct {
	c WaterConfig

	// skipLocks is a test-only fault: the forces are added without the
	// group locks, a data race the interleaving backend must catch.
	skipLocks bool
}

// NewWater checks c.
func NewWater(c WaterConfig) (*Water, error) {
	switch {
	case c.Molecules < 2 || c.Molecules%2 != 0:
		return nil, fmt.Errorf("water: molecules = %d: need an even number of at least 2", c.Molecules)
	case c.Steps < 1:
		return nil, fmt.Errorf("water: steps = %d: need at least 1", c.Steps)
	case c.Groups < 1 || c.Molecules%c.Groups != 0:
		return nil, fmt.Errorf("water: groups = %d: need a positive divisor of molecules = %d", c.Groups, c.Molecules)
	}
	return &Water{c: c}, nil
}

func (w *Water) Name() string        { return "water" }
func (w *Water) Locks() int          { return w.c.Groups }
func (w *Water) Flags() int          { return 0 }
func (w *Water) SharedBytes() uint64 { return roundPages(w.c.Molecules * waterRecordWords) }

// field is the address of word f of molecule i's record (0 position, 3
// velocity, 6 force).
func (w *Water) field(i, f int) uint64 { return uint64(i*waterRecordWords+f) * 8 }

// waterDt is the time step.
const waterDt = 0.01

// pairForce is the force on a at p from b at q, fixed point.
func pairForce(p, q [3]float64) (f [3]int64) {
	var d [3]float64
	r2 := 0.01 // softening
	for k := range d {
		d[k] = q[k] - p[k]
		r2 += d[k] * d[k]
	}
	s := 1e-3 / (r2 * math.Sqrt(r2))
	for k := range d {
		f[k] = int64(math.Round(d[k] * s * waterFixed))
	}
	return f
}

// Run is one process: molecules [lo, hi).
func (w *Water) Run(p Proc) {
	n, half := w.c.Molecules, w.c.Molecules/2
	per := n / w.c.Groups
	lo, hi := band(n, p.ID(), p.Procs())
	m := newMeter(p, waterMilli)
	buf := make([]uint64, 9)

	for i := lo; i < hi; i++ {
		p.Poll()
		// a jittered lattice in a 8 x 8 x 8 box, at rest, no force
		for k := 0; k < 3; k++ {
			c := float64((i>>(3*k))&7) + float64(mix(uint64(i*3+k))%1000)/4000
			buf[k] = math.Float64bits(c)
			buf[3+k] = math.Float64bits(0)
			buf[6+k] = 0
		}
		p.Store(w.field(i, 0), buf)
	}
	p.Barrier()

	pos := make([][3]float64, n)
	acc := make([][3]int64, n)
	touched := make([]bool, n)
	for step := 0; step < w.c.Steps; step++ {
		// predict: own positions
		for i := lo; i < hi; i++ {
			p.Poll()
			p.Load(w.field(i, 0), buf[:6])
			for k := 0; k < 3; k++ {
				x := math.Float64frombits(buf[k]) + waterDt*math.Float64frombits(buf[3+k])
				buf[k] = math.Float64bits(x)
			}
			p.Store(w.field(i, 0), buf[:3])
		}
		p.Barrier()

		// inter-molecular forces: own molecules and the next half
		if lo < hi {
			for j := lo; j < hi+half; j++ {
				jj := j % n
				p.Poll()
				p.Load(w.field(jj, 0), buf[:3])
				for k := 0; k < 3; k++ {
					pos[jj][k] = math.Float64frombits(buf[k])
				}
				acc[jj], touched[jj] = [3]int64{}, true
			}
			for i := lo; i < hi; i++ {
				p.Poll()
				last := i + half - 1
				if i < half {
					last = i + half // the pair (i, i+half) once, from the lower
				}
				for j := i + 1; j <= last; j++ {
					jj := j % n
					f := pairForce(pos[i], pos[jj])
					for k := 0; k < 3; k++ {
						acc[i][k] += f[k]
						acc[jj][k] -= f[k]
					}
				}
				m.charge(last - i)
			}
			// add to the shared forces, group by group from the own
			for g0 := 0; g0 < w.c.Groups; g0++ {
				g := (lo/per + g0) % w.c.Groups
				hit := false
				for i := g * per; i < (g+1)*per; i++ {
					hit = hit || touched[i]
				}
				if !hit {
					continue
				}
				if !w.skipLocks {
					p.Lock(g)
				}
				for i := g * per; i < (g+1)*per; i++ {
					if !touched[i] {
						continue
					}
					p.Load(w.field(i, 6), buf[:3])
					for k := 0; k < 3; k++ {
						buf[k] = uint64(int64(buf[k]) + acc[i][k])
					}
					p.Store(w.field(i, 6), buf[:3])
				}
				if !w.skipLocks {
					p.Unlock(g)
				}
			}
			clear(touched)
		}
		p.Barrier()

		// correct: own velocities, forces cleared
		for i := lo; i < hi; i++ {
			p.Poll()
			p.Load(w.field(i, 3), buf[:6])
			for k := 0; k < 3; k++ {
				v := math.Float64frombits(buf[k]) + waterDt*float64(int64(buf[3+k]))/waterFixed
				buf[k] = math.Float64bits(v)
				buf[3+k] = 0
			}
			p.Store(w.field(i, 3), buf[:6])
		}
		p.Barrier()
	}
}
