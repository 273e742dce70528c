package cashapps

// Test-only hooks: the mutations (faults in a program that the interleaving
// backend's race detector must catch) and the derived costs.

// DropBlackBarrier leaves out the barrier after SOR's black phase (but the
// last): the next red phase reads the neighbours' black rows unordered.
func (s *SOR) DropBlackBarrier() { s.dropBlackBarrier = true }

// SkipPivotWait makes Gauss read pivot rows without waiting for their flags.
func (g *Gauss) SkipPivotWait() { g.skipPivotWait = true }

// SkipForceLocks makes Water add forces without the group locks.
func (w *Water) SkipForceLocks() { w.skipLocks = true }

// SkipLocks makes Random's critical sections run without their locks.
func (r *Random) SkipLocks() { r.skipLock = true }

// The per-element costs, milli-cycles.
const (
	SORMilli   = sorMilli
	GaussMilli = gaussMilli
	LUMilli    = luMilli
	CLUMilli   = cluMilli
	Em3dMilli  = em3dMilli
	WaterMilli = waterMilli
)

// SkipCellLocks makes Barnes insert bodies without the cell locks.
func (b *Barnes) SkipCellLocks() { b.skipCellLocks = true }

// InitialBodies is Barnes's initial positions and the bodies' mass.
func (b *Barnes) InitialBodies() (pos [][3]float64, mass float64) {
	for i := 0; i < b.c.Bodies; i++ {
		p, _ := b.initBody(i)
		pos = append(pos, p)
	}
	return pos, 1 / float64(b.c.Bodies)
}

// BarnesMilli is Barnes's cost an interaction.
const BarnesMilli = barnesMilli

// BarnesEps is SPLASH-2's softening.
const BarnesEps = splashEps

// OceanMilli is Ocean's cost a point update.
const OceanMilli = oceanMilli

// CanonAddr is the address of word f of Barnes's canonical node j.
func (b *Barnes) CanonAddr(j, f int) uint64 { return b.canon(j, f) }
