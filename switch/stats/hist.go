package stats

import (
	"math"
	"math/bits"
)

// The histogram's layout. Latencies are whole cycles. Values below
// histExact (2^16 = 65,536 cycles) have a bucket each, so every figure is
// exact there; a saturated 8x8 mesh at 0.40 flits/node/cycle has its
// longest packet latency near 2,700 cycles, far below. Above, each power
// of two [2^k, 2^(k+1)), k >= 16, is cut into histSub = 2^15 buckets of
// 2^(k-15) cycles: a percentile there is the lowest value of its bucket,
// at most 2^(k-15) - 1 cycles under the exact one (1 cycle up to 131,071
// cycles, 3 up to 262,143, ...; always less than 1/32,768 of it), never
// over it, and never outside [Min, Max].
const (
	histExactBits = 16
	histExact     = 1 << histExactBits
	histSubBits   = histExactBits - 1
	histSub       = 1 << histSubBits
	// histBuckets covers every uint64: the exact part plus 2^15 buckets
	// for each power of two from 2^16 to 2^63.
	histBuckets = histExact + (64-histExactBits)*histSub
	// Counts are held in chunks of histChunk buckets, allocated when a
	// value first falls in them: a run whose latencies stay below 4,096
	// cycles holds one 32 KiB chunk per distribution.
	histChunkBits = 12
	histChunk     = 1 << histChunkBits
	histChunks    = histBuckets / histChunk
)

// Hist is a latency distribution in constant space: the count, sum, min
// and max of the samples, exact, and a count per value for the
// percentiles (exact below 65,536 cycles; above, see the layout comment).
// Its memory depends on the range of the values seen, never on how many
// there are: at most 32 KiB per 4,096-cycle span touched below 65,536 and
// per 32,768 buckets above, so at most 512 KiB plus 256 KiB per power of
// two above 2^16 that holds a sample. The zero value is empty and ready.
type Hist struct {
	n, sum   uint64
	min, max uint64
	chunks   [histChunks]*[histChunk]uint64
}

// histIndex returns the bucket of value v.
func histIndex(v uint64) int {
	if v < histExact {
		return int(v)
	}
	k := bits.Len64(v) - 1 // v is in [2^k, 2^(k+1)), k >= 16
	return histExact + (k-histExactBits)<<histSubBits + int(v>>(k-histSubBits)) - histSub
}

// histLow returns the lowest value of bucket i.
func histLow(i int) uint64 {
	if i < histExact {
		return uint64(i)
	}
	j := i - histExact
	k := histExactBits + j>>histSubBits
	return uint64(histSub+j&(histSub-1)) << (k - histSubBits)
}

// Add records one sample of v cycles.
func (h *Hist) Add(v uint64) {
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.n++
	h.sum += v
	i := histIndex(v)
	c := h.chunks[i>>histChunkBits]
	if c == nil {
		c = new([histChunk]uint64)
		h.chunks[i>>histChunkBits] = c
	}
	c[i&(histChunk-1)]++
}

// N returns the number of samples.
func (h *Hist) N() int { return int(h.n) }

// Dist summarises the samples. Percentiles are nearest-rank: the p-th of
// n samples is the ceil(p*n)-th smallest. Mean is the exact sum over n
// (the sum is kept as an integer, exact as a float64 below 2^53 cycles).
func (h *Hist) Dist() Dist {
	if h.n == 0 {
		return Dist{}
	}
	rank := func(p float64) uint64 {
		return uint64(max(1, min(int(math.Ceil(p*float64(h.n))), int(h.n))))
	}
	d := Dist{N: int(h.n), Mean: float64(h.sum) / float64(h.n), Min: h.min, Max: h.max}
	want := [2]uint64{rank(0.50), rank(0.99)}
	var got [2]uint64
	found := 0
	var seen uint64
	for ci, c := range h.chunks {
		if c == nil {
			continue
		}
		for bi, k := range c {
			if k == 0 {
				continue
			}
			seen += k
			for found < len(want) && seen >= want[found] {
				got[found] = min(max(histLow(ci<<histChunkBits+bi), h.min), h.max)
				found++
			}
			if found == len(want) {
				d.P50, d.P99 = got[0], got[1]
				return d
			}
		}
	}
	// Not reached: every Add counts its sample once, so the counts add up
	// to n >= every rank.
	d.P50, d.P99 = got[0], got[1]
	return d
}
