package cashapps

import (
	"fmt"
	"math"
)

// Em3dConfig sizes Em3d.
type Em3dConfig struct {
	// Nodes is the number of nodes, half electric (E), half magnetic (H).
	Nodes int
	// Degree is each node's number of neighbours of the other kind.
	Degree int
	// Span is how far, in node index, a neighbour may be: E node i depends
	// on H nodes in [i-Span, i+Span] (reflected at the ends). Nodes are
	// split over processes in contiguous bands, so a Span under a band's
	// length keeps dependencies on the same or a neighbouring process, as
	// the paper's standard input does.
	Span int
	// Iters is the number of iterations (E phase, H phase).
	Iters int
	// Seed chooses the graph (a property of the input, not of the run).
	Seed uint64
}

// DefaultEm3d is the CI size: 4096 nodes of degree 4 within 32 indices,
// 10 iterations: 4 pages of values, 32 of graph, about 4.6 x 10^5 words
// loaded and stored. The paper's is 64,000 nodes (Table 2) and 100
// iterations (Table 3's 200 barriers); it gives neither degree nor span.
func DefaultEm3d() Em3dConfig {
	// assumed: degree 4 and span 32 (a band is 64 nodes of each kind at 32
	// processes, so about a quarter of the edges of a band's edge nodes
	// cross to a neighbour): the paper says only that dependencies stay on
	// the same or neighbouring processors.
	return Em3dConfig{Nodes: 4096, Degree: 4, Span: 32, Iters: 10, Seed: 1}
}

// Em3d simulates electromagnetic wave propagation (cashmere-2l-memory-
// channel.txt section 3.2: «The major data structure is an array that
// contains the set of magnetic and electric nodes. These are equally
// distributed among the processors in the system. ... nodes that belong to a
// processor have dependencies only on nodes that belong to that processor or
// neighboring processors. Barriers are used for synchronization.»). The
// shared array holds every node's value (E then H) and its record: Degree
// neighbour indices and Degree weights. An iteration sets each E node's
// value to value - sum(weight x neighbour H value), barrier, then the H nodes
// from the E values, barrier. A band reads the other kind's values in
// [lo-Span, hi+Span): its neighbours' edge values.
//
// Synchronisation: 1 + 2 x Iters barriers (the first after the
// initialisation), no locks, no flags.
type Em3d struct {
	c  Em3dConfig
	ne int // nodes of each kind
}

// NewEm3d checks c.
func NewEm3d(c Em3dConfig) (*Em3d, error) {
	switch {
	case c.Nodes < 2 || c.Nodes%2 != 0:
		return nil, fmt.Errorf("em3d: nodes = %d: need an even number of at least 2", c.Nodes)
	case c.Degree < 1:
		return nil, fmt.Errorf("em3d: degree = %d: need at least 1", c.Degree)
	case c.Span < 0 || c.Span >= c.Nodes/2:
		return nil, fmt.Errorf("em3d: span = %d: need 0 <= span < nodes/2 = %d", c.Span, c.Nodes/2)
	case c.Iters < 1:
		return nil, fmt.Errorf("em3d: iters = %d: need at least 1", c.Iters)
	}
	return &Em3d{c: c, ne: c.Nodes / 2}, nil
}

func (e *Em3d) Name() string { return "em3d" }
func (e *Em3d) Locks() int   { return 0 }
func (e *Em3d) Flags() int   { return 0 }

// graphBase is the word where the records start: after the values, on a
// page boundary.
func (e *Em3d) graphBase() int {
	return (e.c.Nodes + pageWords - 1) / pageWords * pageWords
}

// SharedBytes is the values then the records.
func (e *Em3d) SharedBytes() uint64 {
	return roundPages(e.graphBase() + e.c.Nodes*2*e.c.Degree)
}

// value is the address of node i of kind k (0 E, 1 H).
func (e *Em3d) value(k, i int) uint64 { return uint64(k*e.ne+i) * 8 }

// record is the address of node i of kind k's record.
func (e *Em3d) record(k, i int) uint64 {
	return uint64(e.graphBase()+(k*e.ne+i)*2*e.c.Degree) * 8
}

// mix is SplitMix64's finaliser: the graph's deterministic randomness.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// edge is neighbour d of node i of kind k: its index in the other kind and
// its weight.
func (e *Em3d) edge(k, i, d int) (int, float64) {
	h := mix(e.c.Seed ^ mix(uint64(k*e.ne+i)<<8|uint64(d)))
	j := i + int(h%uint64(2*e.c.Span+1)) - e.c.Span
	switch {
	case j < 0:
		j = -j
	case j >= e.ne:
		j = 2*(e.ne-1) - j
	}
	w := float64(h>>40%1000) / 40000 // [0, 0.025)
	return j, w
}

// Run is one process: nodes [lo, hi) of each kind.
func (e *Em3d) Run(p Proc) {
	ne, deg, span := e.ne, e.c.Degree, e.c.Span
	lo, hi := band(ne, p.ID(), p.Procs())
	m := newMeter(p, em3dMilli)
	n := hi - lo
	vals := make([]uint64, n)
	rec := make([]uint64, n*2*deg)

	for k := 0; k < 2; k++ {
		if n == 0 {
			break
		}
		p.Poll()
		for i := lo; i < hi; i++ {
			vals[i-lo] = math.Float64bits(float64((i*37+k*11)%101) / 101)
			r := rec[(i-lo)*2*deg:]
			for d := 0; d < deg; d++ {
				j, w := e.edge(k, i, d)
				r[d], r[deg+d] = uint64(j), math.Float64bits(w)
			}
		}
		p.Store(e.value(k, lo), vals)
		p.Store(e.record(k, lo), rec)
	}
	p.Barrier()

	wlo, whi := max(lo-span, 0), min(hi+span, ne)
	win := make([]uint64, max(whi-wlo, 0))
	for it := 0; it < e.c.Iters; it++ {
		for k := 0; k < 2; k++ {
			if n > 0 {
				p.Poll()
				p.Load(e.record(k, lo), rec)
				p.Load(e.value(k, lo), vals)
				p.Load(e.value(1-k, wlo), win)
				for i := 0; i < n; i++ {
					p.Poll()
					r := rec[i*2*deg:]
					v := math.Float64frombits(vals[i])
					for d := 0; d < deg; d++ {
						v -= math.Float64frombits(r[deg+d]) * math.Float64frombits(win[int(r[d])-wlo])
					}
					vals[i] = math.Float64bits(v)
				}
				m.charge(n)
				p.Store(e.value(k, lo), vals)
			}
			p.Barrier()
		}
	}
}
