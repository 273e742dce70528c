// Package traffic generates synthetic network traffic: destination patterns
// (uniform random, transpose, bit-complement, hotspot, nearest neighbour),
// a Bernoulli injection process at a rate in flits per node per cycle,
// packet size distributions, and a trace-driven source that replays
// (time, source, destination, size) records from a file. Names follow the
// long-standing open-source NoC simulators (BookSim's traffic = uniform,
// transpose, bitcomp, hotspot, neighbor; injection_process = bernoulli).
package traffic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Pattern picks destinations.
type Pattern interface {
	// Dest returns the destination of a packet from src, or -1 when src
	// sends nothing under this pattern.
	Dest(src int, r *rand.Rand) int
	// Name is the pattern's configuration name.
	Name() string
}

// Options parameterise patterns that need more than the node count.
type Options struct {
	// K is the mesh radix (nodes per row) for transpose and neighbor.
	K int
	// Hotspots are the hot destinations and HotFraction the share of
	// packets sent to them (the rest are uniform).
	Hotspots    []int
	HotFraction float64
	// SelfTraffic lets uniform random pick the source itself.
	SelfTraffic bool
}

// New returns the named pattern over n nodes.
func New(name string, n int, o Options) (Pattern, error) {
	if n < 2 {
		return nil, fmt.Errorf("traffic needs at least 2 nodes, got %d", n)
	}
	switch name {
	case "uniform":
		return uniform{n: n, self: o.SelfTraffic}, nil
	case "transpose":
		if o.K < 1 || o.K*o.K != n {
			return nil, fmt.Errorf("transpose needs a square K x K mesh, got %d nodes and K=%d", n, o.K)
		}
		return transpose{k: o.K}, nil
	case "bitcomp":
		if n&(n-1) != 0 {
			return nil, fmt.Errorf("bitcomp needs a power-of-two node count, got %d", n)
		}
		return bitcomp{mask: n - 1}, nil
	case "hotspot":
		if len(o.Hotspots) == 0 || !(o.HotFraction > 0 && o.HotFraction <= 1) { // NaN fails too
			return nil, fmt.Errorf("hotspot needs hot nodes and a fraction in (0,1], got %v and %g", o.Hotspots, o.HotFraction)
		}
		for _, h := range o.Hotspots {
			if h < 0 || h >= n {
				return nil, fmt.Errorf("hotspot node %d is not in 0..%d", h, n-1)
			}
		}
		return hotspot{uniform: uniform{n: n, self: o.SelfTraffic}, hot: slices.Clone(o.Hotspots), frac: o.HotFraction}, nil
	case "neighbor":
		if o.K < 1 || n%o.K != 0 {
			return nil, fmt.Errorf("neighbor needs the mesh radix K dividing %d nodes, got K=%d", n, o.K)
		}
		return neighbor{k: o.K, n: n}, nil
	}
	return nil, fmt.Errorf("unknown traffic pattern %q (want uniform, transpose, bitcomp, hotspot or neighbor)", name)
}

type uniform struct {
	n    int
	self bool
}

func (u uniform) Name() string { return "uniform" }
func (u uniform) Dest(src int, r *rand.Rand) int {
	if u.self {
		return r.IntN(u.n)
	}
	d := r.IntN(u.n - 1)
	if d >= src {
		d++
	}
	return d
}

// transpose sends (x, y) to (y, x); nodes on the diagonal send nothing.
type transpose struct{ k int }

func (t transpose) Name() string { return "transpose" }
func (t transpose) Dest(src int, _ *rand.Rand) int {
	x, y := src%t.k, src/t.k
	if x == y {
		return -1
	}
	return x*t.k + y
}

// bitcomp sends i to its bitwise complement.
type bitcomp struct{ mask int }

func (b bitcomp) Name() string                   { return "bitcomp" }
func (b bitcomp) Dest(src int, _ *rand.Rand) int { return ^src & b.mask }

type hotspot struct {
	uniform
	hot  []int
	frac float64
}

func (h hotspot) Name() string { return "hotspot" }
func (h hotspot) Dest(src int, r *rand.Rand) int {
	if r.Float64() < h.frac {
		d := h.hot[r.IntN(len(h.hot))]
		if d != src || h.self {
			return d
		}
	}
	return h.uniform.Dest(src, r)
}

// neighbor sends (x, y) to (x+1 mod k, y), as BookSim's "neighbor".
type neighbor struct{ k, n int }

func (nb neighbor) Name() string { return "neighbor" }
func (nb neighbor) Dest(src int, _ *rand.Rand) int {
	x, y := src%nb.k, src/nb.k
	return y*nb.k + (x+1)%nb.k
}

// Sizes is a packet size distribution in flits.
type Sizes struct {
	sizes   []int
	weights []float64 // cumulative
}

// ParseSizes parses "20" (fixed) or "1:0.5,20:0.5" (size:weight pairs).
func ParseSizes(s string) (Sizes, error) {
	var z Sizes
	total := 0.0
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		sz, w, hasW := strings.Cut(part, ":")
		n, err := strconv.Atoi(strings.TrimSpace(sz))
		if err != nil || n < 1 {
			return Sizes{}, fmt.Errorf("packet size %q: want a positive number of flits", sz)
		}
		wt := 1.0
		if hasW {
			wt, err = strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || !(wt > 0) || math.IsInf(wt, 1) { // NaN fails too
				return Sizes{}, fmt.Errorf("packet size weight %q: want a positive number", w)
			}
		}
		total += wt
		z.sizes = append(z.sizes, n)
		z.weights = append(z.weights, total)
	}
	if math.IsInf(total, 1) { // the normalised weights would be 0 and NaN
		return Sizes{}, fmt.Errorf("packet size weights of %q add up to more than %g", s, math.MaxFloat64)
	}
	for i := range z.weights {
		z.weights[i] /= total
	}
	return z, nil
}

// Fixed returns a distribution of one size.
func Fixed(flits int) Sizes { return Sizes{sizes: []int{flits}, weights: []float64{1}} }

// Mean returns the mean size in flits.
func (z Sizes) Mean() float64 {
	m, prev := 0.0, 0.0
	for i, s := range z.sizes {
		m += float64(s) * (z.weights[i] - prev)
		prev = z.weights[i]
	}
	return m
}

// Max returns the largest size (0 for the empty distribution).
func (z Sizes) Max() int {
	if len(z.sizes) == 0 {
		return 0
	}
	return slices.Max(z.sizes)
}

// Draw picks a size (0 from the empty distribution, which Bernoulli
// processes refuse).
func (z Sizes) Draw(r *rand.Rand) int {
	if len(z.sizes) == 0 {
		return 0
	}
	if len(z.sizes) == 1 {
		return z.sizes[0]
	}
	u := r.Float64()
	for i, w := range z.weights {
		if u < w {
			return z.sizes[i]
		}
	}
	return z.sizes[len(z.sizes)-1]
}

// Bernoulli injects a packet in a cycle with probability Rate / mean size,
// so that Rate is the offered load in flits per node per cycle.
type Bernoulli struct {
	p float64
}

// NewBernoulli returns the process for a rate in flits/node/cycle.
func NewBernoulli(rate float64, sizes Sizes) (Bernoulli, error) {
	if !(rate >= 0 && rate <= 1) { // NaN fails too
		return Bernoulli{}, fmt.Errorf("injection rate %g flits/node/cycle must be in [0, 1]", rate)
	}
	if len(sizes.sizes) == 0 {
		return Bernoulli{}, fmt.Errorf("injection at %g flits/node/cycle needs a packet size distribution", rate)
	}
	return Bernoulli{p: rate / sizes.Mean()}, nil
}

// Fire reports whether a packet is created this cycle.
func (b Bernoulli) Fire(r *rand.Rand) bool { return b.p > 0 && r.Float64() < b.p }

// P returns the per-cycle probability of a packet.
func (b Bernoulli) P() float64 { return b.p }

// Next returns the cycle of the first success at or after cycle c, drawn
// from r: a geometric inter-arrival time, the same process as one trial
// per cycle without an event per cycle. It returns math.MaxUint64 for a
// process that never fires.
func (b Bernoulli) Next(c uint64, r *rand.Rand) uint64 {
	switch {
	case b.p <= 0:
		return math.MaxUint64
	case b.p >= 1:
		return c
	}
	u := 1 - r.Float64() // (0, 1]
	return c + uint64(math.Floor(math.Log(u)/math.Log1p(-b.p)))
}

// NewBernoulliPackets returns the process for a rate in packets/node/cycle
// (BookSim's injection_rate with injection_rate_uses_flits = 0).
func NewBernoulliPackets(rate float64) (Bernoulli, error) {
	if !(rate >= 0 && rate <= 1) { // NaN fails too
		return Bernoulli{}, fmt.Errorf("injection rate %g packets/node/cycle must be in [0, 1]", rate)
	}
	return Bernoulli{p: rate}, nil
}
