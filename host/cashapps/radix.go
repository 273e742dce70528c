package cashapps

import "fmt"

// RadixConfig sizes Radix.
type RadixConfig struct {
	// Keys is the number of keys, a multiple of MaxRadixProcs so that every
	// process count up to it gets whole chunks.
	Keys int
	// RadixBits is the digit's width: a pass sorts by RadixBits bits.
	RadixBits int
	// KeyBits is the keys' width; the passes are KeyBits/RadixBits
	// rounded up.
	KeyBits int
	// Seed draws the keys.
	Seed uint64
}

// MaxRadixProcs is the most processes Radix runs on: its histogram area
// has a row for each, so that the shared memory's size (and the final
// memory the reference compares) does not depend on the process count.
// derived: SHRIMP's 16 nodes (shrimp-design-choices.txt section 3, Figure
// 4 «16-node SHRIMP system») times two, for the untimed backends' specs.
const MaxRadixProcs = 32

// DefaultRadix is the CI size: 16,384 keys of 18 bits sorted 6 bits a
// pass (3 passes, Table 1's «3 iters»), two key arrays of 16 pages each
// and a 32 x 64-word histogram. The paper's is 2M keys, 3 iterations
// (shrimp-design-choices.txt Table 1).
func DefaultRadix() RadixConfig {
	return RadixConfig{Keys: 16384, RadixBits: 6, KeyBits: 18, Seed: 1}
}

// Radix is SPLASH-2's integer radix sort as shrimp-design-choices.txt
// section 3 describes Radix-SVM: «a processor reads its locally-allocated
// n/p contiguous keys from a source array and writes them to a destination
// array using a highly scattered and irregular permutation. For a uniform
// distribution of key values, a processor writes contiguous sets of n/(r·p)
// keys in the destination array ...; the r sets that a processor writes
// are themselves separated by p − 1 other such sets, and a processor's
// writes to its different sets are temporally interleaved in an
// unpredictable way. This write pattern induces substantial false-sharing
// at page granularity.»
//
// Shared memory: key arrays A and B of Keys words each, then a histogram
// of MaxRadixProcs rows of 2^RadixBits words. Each process owns the
// contiguous chunk [p·n/P, (p+1)·n/P) of the source array: it draws its
// keys into A (first touch), then each pass counts its chunk's digits into
// its histogram row, barrier, reads every row of the processes and
// computes where each of its digits starts in the destination (the keys of
// smaller digits, then those of its digit in lower processes' chunks), and
// stores each key at its place one word at a time, barrier. Passes
// alternate A->B and B->A. At the end each process clears its histogram
// row and a last barrier follows, so the final memory (the sorted keys,
// the previous pass's order in the other array, a zero histogram) is the
// same for every process count: the sort is stable, so every pass's
// order is the global one.
//
// Synchronisation: 2 + 2 x passes barriers, no locks, no flags.
type Radix struct {
	c      RadixConfig
	digits int // 2^RadixBits
	passes int
}

// NewRadix checks c.
func NewRadix(c RadixConfig) (*Radix, error) {
	switch {
	case c.Keys < MaxRadixProcs || c.Keys%MaxRadixProcs != 0:
		return nil, fmt.Errorf("radix: keys = %d: need a positive multiple of %d (MaxRadixProcs)", c.Keys, MaxRadixProcs)
	case c.RadixBits < 1 || c.RadixBits > 16:
		return nil, fmt.Errorf("radix: radix_bits = %d: need 1 to 16", c.RadixBits)
	case c.KeyBits < 1 || c.KeyBits > 62:
		return nil, fmt.Errorf("radix: key_bits = %d: need 1 to 62", c.KeyBits)
	}
	return &Radix{c: c, digits: 1 << c.RadixBits, passes: (c.KeyBits + c.RadixBits - 1) / c.RadixBits}, nil
}

// Name implements Program.
func (r *Radix) Name() string { return "radix" }

// Locks implements Program.
func (r *Radix) Locks() int { return 0 }

// Flags implements Program.
func (r *Radix) Flags() int { return 0 }

// Passes is the number of passes (one digit each).
func (r *Radix) Passes() int { return r.passes }

// SharedBytes is the two key arrays and the histogram, rounded up to a
// page.
func (r *Radix) SharedBytes() uint64 { return roundPages(2*r.c.Keys + MaxRadixProcs*r.digits) }

// key is word i of array a (0: A, 1: B).
func (r *Radix) key(a, i int) uint64 { return uint64(a*r.c.Keys+i) * 8 }

// hist is word d of process p's histogram row.
func (r *Radix) hist(p, d int) uint64 { return uint64(2*r.c.Keys+p*r.digits+d) * 8 }

// initKey is key i: a hash of the seed and the index, KeyBits wide (a
// uniform distribution, as the paper's statement assumes).
func (r *Radix) initKey(i int) uint64 {
	x := r.c.Seed*0x9e3779b97f4a7c15 + uint64(i)*0xbf58476d1ce4e5b9 + 1
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return x & (1<<r.c.KeyBits - 1)
}

// Run implements Program.
func (r *Radix) Run(p Proc) {
	id, procs := p.ID(), p.Procs()
	if procs > MaxRadixProcs {
		panic(fmt.Sprintf("radix: %d processes, at most %d", procs, MaxRadixProcs))
	}
	n := r.c.Keys / procs
	lo := id * n
	m := newMeter(p, radixMilli)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = r.initKey(lo + i)
	}
	p.Store(r.key(0, lo), keys)
	p.Barrier()
	count := make([]uint64, r.digits)
	row := make([]uint64, r.digits)
	for pass := range r.passes {
		src, dst := pass%2, 1-pass%2
		shift := pass * r.c.RadixBits
		mask := uint64(r.digits - 1)
		p.Poll()
		p.Load(r.key(src, lo), keys)
		clear(count)
		for _, k := range keys {
			count[(k>>shift)&mask]++
		}
		p.Store(r.hist(id, 0), count)
		p.Barrier()
		// Where each digit of this process starts: the keys of every
		// smaller digit (all processes), then this digit's keys in the
		// chunks of lower processes.
		start := make([]uint64, r.digits)
		below := make([]uint64, r.digits)
		total := make([]uint64, r.digits)
		for q := range procs {
			p.Poll()
			p.Load(r.hist(q, 0), row)
			for d, c := range row {
				total[d] += c
				if q < id {
					below[d] += c
				}
			}
		}
		var sum uint64
		for d := range r.digits {
			start[d] = sum + below[d]
			sum += total[d]
		}
		for i, k := range keys {
			if i%64 == 0 {
				p.Poll()
			}
			d := (k >> shift) & mask
			p.Store(r.key(dst, int(start[d])), []uint64{k})
			start[d]++
		}
		m.charge(n)
		p.Barrier()
	}
	clear(count)
	p.Store(r.hist(id, 0), count)
	p.Barrier()
}

// radixMilli is one key of one pass (its digit counted, its place looked
// up and incremented, the key stored), in milli-cycles of SHRIMP's 60 MHz
// Pentium (shrimp-design-choices.txt section 2: «DEC 560ST PC with a 60
// MHz Pentium»), not the 21064A of the Cashmere costs in cost.go.
// derived: Table 1 «Radix-SVM ... 2M keys, 3 iters ... 14.3» s x 60e6
// cycles/s = 858,000,000 cycles over 2,000,000 keys x 3 passes = 143.0
// cycles (2M read as 2 x 10^6, as docs/shrimp-validation.md reads
// Radix-VMMC's row: 10.9 s gives its 109 cycles a key-pass). As with the
// Cashmere costs, the sequential time holds the real machine's memory
// time, which the cycle model simulates again.
const radixMilli = 143000
