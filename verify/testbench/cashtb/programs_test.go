package cashtb_test

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/nisim/nisim/host/cashmere"
)

// stencil is a red-black relaxation over a Rows x Cols grid of float64 in
// shared memory (row-major), the interior rows cut into one band per
// process, bands not aligned to pages so that the pages at a band's edge
// have writers on two nodes (twins, diffs, incoming diffs). Each process
// initialises its own band (first touch makes it the home), process 0 the
// boundary rows; every half-iteration ends at a barrier.
type stencil struct {
	Rows, Cols, Iters int
}

func (s stencil) Name() string        { return "stencil" }
func (s stencil) SharedBytes() uint64 { return (uint64(s.Rows*s.Cols*8) + 8191) &^ 8191 }
func (s stencil) Locks() int          { return 0 }
func (s stencil) Flags() int          { return 0 }

func (s stencil) init(i, j int) float64 { return float64((i*31+j*17)%13) + 0.25 }

// band returns process id's rows [lo, hi) of the interior 1..Rows-2.
func (s stencil) band(id, procs int) (int, int) {
	n := s.Rows - 2
	return 1 + n*id/procs, 1 + n*(id+1)/procs
}

func (s stencil) addr(i, j int) uint64 { return uint64(i*s.Cols+j) * 8 }

func (s stencil) Run(p *cashmere.Process) {
	lo, hi := s.band(p.ID(), p.Procs())
	row := make([]uint64, s.Cols)
	fill := func(i int) {
		for j := range row {
			row[j] = math.Float64bits(s.init(i, j))
		}
		p.Store(s.addr(i, 0), row)
	}
	if p.ID() == 0 {
		fill(0)
		fill(s.Rows - 1)
	}
	for i := lo; i < hi; i++ {
		fill(i)
	}
	p.Barrier()
	up, mid, down := make([]uint64, s.Cols), make([]uint64, s.Cols), make([]uint64, s.Cols)
	for range s.Iters {
		for color := range 2 {
			for i := lo; i < hi; i++ {
				p.Poll()
				p.Load(s.addr(i-1, 0), up)
				p.Load(s.addr(i, 0), mid)
				p.Load(s.addr(i+1, 0), down)
				for j := 1; j < s.Cols-1; j++ {
					if (i+j)%2 != color {
						continue
					}
					v := (f(up[j]) + f(down[j]) + f(mid[j-1]) + f(mid[j+1])) / 4
					p.Compute(20)
					p.Store(s.addr(i, j), []uint64{math.Float64bits(v)})
				}
			}
			p.Barrier()
		}
	}
}

// reference is the same computation in plain Go.
func (s stencil) reference() []byte {
	g := make([]float64, s.Rows*s.Cols)
	for i := range s.Rows {
		for j := range s.Cols {
			g[i*s.Cols+j] = s.init(i, j)
		}
	}
	for range s.Iters {
		for color := range 2 {
			for i := 1; i < s.Rows-1; i++ {
				for j := 1; j < s.Cols-1; j++ {
					if (i+j)%2 == color {
						g[i*s.Cols+j] = (g[(i-1)*s.Cols+j] + g[(i+1)*s.Cols+j] + g[i*s.Cols+j-1] + g[i*s.Cols+j+1]) / 4
					}
				}
			}
		}
	}
	out := make([]byte, 0, s.SharedBytes())
	for _, v := range g {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	return append(out, make([]byte, int(s.SharedBytes())-len(out))...)
}

func f(b uint64) float64 { return math.Float64frombits(b) }

// counter is a lock-protected counter and histogram: N rounds dealt
// round-robin to the processes, each round under lock 0 adding one to the
// counter (word 0) and r+1 to bucket r%16 (words 1..16), on a page of its
// own; a second page holds each round's ticket (the counter's value it
// saw), written outside the lock. The sums do not depend on the number of
// processes; the tickets do (the lock order), so only page 0 is compared.
type counter struct{ N int }

func (c counter) Name() string        { return "counter" }
func (c counter) SharedBytes() uint64 { return 8192 }
func (c counter) Locks() int          { return 1 }
func (c counter) Flags() int          { return 0 }

func (c counter) Run(p *cashmere.Process) {
	v := make([]uint64, 1)
	for r := p.ID(); r < c.N; r += p.Procs() {
		p.Poll()
		p.Lock(0)
		p.Load(0, v)
		v[0]++
		p.Store(0, v)
		b := uint64(8 * (1 + r%16))
		p.Load(b, v)
		v[0] += uint64(r + 1)
		p.Store(b, v)
		p.Unlock(0)
		// Work between rounds, longer than a round, so that the other
		// node's processes get the lock in between (the per-node flag
		// favours a node's own processors otherwise).
		p.Compute(100000)
	}
}

// pipeline is a producer and a consumer synchronised by flags: process 0
// fills block s (page s+1) and sets flag 0 to s+1; the last process waits
// for it, sums the block and writes the sum to out[s] (page 0), then sets
// flag 1 to s+1, which the producer waits for before the next block. One
// process plays both parts.
type pipeline struct{ Stages, Words int }

func (q pipeline) Name() string        { return "pipeline" }
func (q pipeline) SharedBytes() uint64 { return uint64(q.Stages+1) * 8192 }
func (q pipeline) Locks() int          { return 0 }
func (q pipeline) Flags() int          { return 2 }

func (q pipeline) Run(p *cashmere.Process) {
	last := p.Procs() - 1
	blk := make([]uint64, q.Words)
	for s := range q.Stages {
		if p.ID() == 0 {
			for k := range blk {
				blk[k] = uint64(s*1000 + k*7)
			}
			p.Store(uint64(s+1)*8192, blk)
			p.SetFlag(0, uint64(s+1))
		}
		if p.ID() == last {
			p.WaitFlag(0, uint64(s+1))
			p.Load(uint64(s+1)*8192, blk)
			var sum uint64
			for _, v := range blk {
				sum += v
			}
			p.Store(uint64(8*s), []uint64{2 * sum})
			p.SetFlag(1, uint64(s+1))
		}
		if p.ID() == 0 {
			p.WaitFlag(1, uint64(s+1))
		}
	}
}

// twoway makes an incoming diff (section 2.2): on 2x2, process 2 (node
// 1) writes word A of page 0 (home node 0, process 0's first touch) and
// keeps its write mapping while process 1 (node 0) writes word B and sets
// flag 0; process 3 (node 1) waits for the flag, reads B (a fetch into a
// page with a local writer: the incoming diff keeps A) and writes C = B+1;
// process 2 then writes A+8. One process plays every part in turn.
// Process 1 computes Wait cycles before it writes B (0: 100,000) and
// process 2 polls for Loops loop tops of 10,000 cycles (0: 40) before
// A+8; interrupt_test.go's shoot is the same program with both longer.
type twoway struct{ Wait, Loops int }

func (twoway) Name() string        { return "twoway" }
func (twoway) SharedBytes() uint64 { return 8192 }
func (twoway) Locks() int          { return 0 }
func (twoway) Flags() int          { return 1 }

func (t twoway) Run(p *cashmere.Process) {
	const a, b, c = 0x100, 0x800, 0x1000
	wait, loops := cmp.Or(t.Wait, 100000), cmp.Or(t.Loops, 40)
	id, n := p.ID(), p.Procs()
	if id == 0 {
		p.Store(0, make([]uint64, 1024))
	}
	p.Barrier()
	if id == 2%n {
		p.Store(a, []uint64{1})
	}
	if id == 1%n {
		p.Compute(wait)
		p.Store(b, []uint64{7})
		p.SetFlag(0, 1)
	}
	if id == 3%n {
		p.WaitFlag(0, 1)
		v := make([]uint64, 1)
		p.Load(b, v)
		p.Store(c, []uint64{v[0] + 1})
	}
	if id == 2%n {
		for range loops {
			p.Poll()
			p.Compute(10000)
		}
		p.Store(a+8, []uint64{2})
	}
}

// tail writes the last word of a page another node is home of while two
// more nodes hold copies: on 4x1, process 1's release diffs one word, the
// page's last, and sends notices to nodes 2 and 3 right after it (nothing
// of the diff loop is left to cover the diff's flight to the home).
type tail struct{}

func (tail) Name() string        { return "tail" }
func (tail) SharedBytes() uint64 { return 8192 }
func (tail) Locks() int          { return 0 }
func (tail) Flags() int          { return 0 }

func (tail) Run(p *cashmere.Process) {
	if p.ID() == 0 {
		p.Store(0, make([]uint64, 1024))
	}
	p.Barrier()
	v := make([]uint64, 1)
	p.Load(8*1023, v)
	p.Barrier()
	if p.ID() == 1%p.Procs() {
		p.Store(8*1023, []uint64{42})
	}
	p.Barrier()
	p.Load(8*1023, v)
}

// reflush needs the flush-update (section 2.5): on 2x2, processes 2 and 3
// (node 1) write words X and Y of page 0 (home node 0); process 2
// releases (flag 0), its diff carrying both, while process 3 keeps its
// write mapping (the twin stays); process 1 (node 0) acquires the flag and
// writes X = 5 into the master; process 3 releases last, at the barrier,
// and its diff must not carry X again (the twin has X from process 2's
// flush-update). One process plays every part in turn.
type reflush struct{}

func (reflush) Name() string        { return "reflush" }
func (reflush) SharedBytes() uint64 { return 8192 }
func (reflush) Locks() int          { return 0 }
func (reflush) Flags() int          { return 1 }

func (reflush) Run(p *cashmere.Process) {
	const x, y = 0x100, 0x200
	id, n := p.ID(), p.Procs()
	if id == 0 {
		p.Store(0, make([]uint64, 1024))
	}
	p.Barrier()
	if id == 2%n {
		p.Store(x, []uint64{1})
	}
	if id == 3%n {
		p.Store(y, []uint64{1})
	}
	if id == 2%n {
		p.Compute(100000)
		p.SetFlag(0, 1)
	}
	if id == 1%n {
		p.WaitFlag(0, 1)
		p.Store(x, []uint64{5})
	}
	if id == 3%n {
		for range 100 {
			p.Poll()
			p.Compute(10000)
		}
		p.Store(y+8, []uint64{2})
	}
}

// private puts a page in exclusive mode and breaks it (section 2.4.1): with
// two-page superpages on 2x2, process 2 (node 1) first-touches page 0, so
// node 1 is the home of pages 0 and 1; process 0 (node 0) then fills page
// 1, which no other node maps (exclusive: no twin, no dirty list); after a
// barrier process 3 (node 1, the home) reads it, which asks node 0 to
// flush the page home and leave exclusive mode, and writes its sum to
// page 0. One process plays every part in turn.
type private struct{}

func (private) Name() string        { return "private" }
func (private) SharedBytes() uint64 { return 2 * 8192 }
func (private) Locks() int          { return 0 }
func (private) Flags() int          { return 0 }

func (private) Run(p *cashmere.Process) {
	id, n := p.ID(), p.Procs()
	if id == 2%n {
		p.Store(0, []uint64{1})
	}
	p.Barrier()
	if id == 0 {
		all := make([]uint64, 1024)
		for i := range all {
			all[i] = uint64(3*i + 1)
		}
		p.Store(8192, all)
	}
	p.Barrier()
	if id == 3%n {
		all := make([]uint64, 1024)
		p.Load(8192, all)
		var sum uint64
		for _, v := range all {
			sum += v
		}
		p.Store(8, []uint64{sum})
	}
}

// random is a randomised data-race-free program: Ops operations drawn
// from Seed, each adding a delta to a word of Pages pages under the lock
// that word hashes to (word % L), dealt round-robin to the processes
// and cut into Phases phases separated by barriers. The adds commute, so
// the final memory does not depend on the number of processes or on the
// lock order.
type random struct {
	Seed                  uint64
	Ops, Pages, L, Phases int
}

func (r random) Name() string        { return "random" }
func (r random) SharedBytes() uint64 { return uint64(r.Pages) * 8192 }
func (r random) Locks() int          { return r.L }
func (r random) Flags() int          { return 0 }

func (r random) Run(p *cashmere.Process) {
	rng := rand.New(rand.NewPCG(r.Seed, 1))
	type op struct {
		word  int
		delta uint64
	}
	ops := make([]op, r.Ops)
	for i := range ops {
		ops[i] = op{rng.IntN(r.Pages * 1024), rng.Uint64N(1000) + 1}
	}
	v := make([]uint64, 1)
	per := (r.Ops + r.Phases - 1) / r.Phases
	for ph := range r.Phases {
		for i := ph * per; i < min((ph+1)*per, r.Ops); i++ {
			if i%p.Procs() != p.ID() {
				continue
			}
			o := ops[i]
			p.Poll()
			p.Lock(o.word % r.L)
			p.Load(uint64(8*o.word), v)
			v[0] += o.delta
			p.Store(uint64(8*o.word), v)
			p.Unlock(o.word % r.L)
			p.Compute(int(o.delta) * 20)
		}
		p.Barrier()
	}
}
