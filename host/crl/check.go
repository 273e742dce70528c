package crl

import (
	"bytes"
	"slices"

	"github.com/nisim/nisim/host/lcilib"
)

// Checker checks CRL's coherence (section 6.2's «coherent region
// caching») across the nodes that share it: at any time a region has at
// most one writer, or any number of readers and no writer (operations
// from a start to its end); and a read sees the last completed write (the
// data of the last EndWrite, zeros before any). Violations are reported
// on the host that started the operation (rule crl.coherence).
type Checker struct {
	readers, writers []int
	last             [][]byte
	// Checked counts operations checked; Violations those reported.
	Checked, Violations int
}

// NewChecker returns a checker of the regions (shared by the nodes).
func NewChecker(regions []Region) *Checker {
	c := &Checker{readers: make([]int, len(regions)), writers: make([]int, len(regions))}
	for _, r := range regions {
		c.last = append(c.last, make([]byte, r.Size))
	}
	return c
}

func (c *Checker) fail(s *lcilib.Seq, h *lcilib.Host, format string, args ...any) {
	c.Violations++
	h.Report(s.Now(), "crl.coherence", format, args...)
}

func (c *Checker) startRead(s *lcilib.Seq, h *lcilib.Host, r int, data []byte) {
	c.Checked++
	if c.writers[r] > 0 {
		c.fail(s, h, "node %d reads region %d while a node writes it", h.Node(), r)
	}
	if !bytes.Equal(data, c.last[r]) {
		c.fail(s, h, "node %d reads a stale copy of region %d (not the last completed write)", h.Node(), r)
	}
	c.readers[r]++
}

func (c *Checker) endRead(r int) { c.readers[r]-- }

func (c *Checker) startWrite(s *lcilib.Seq, h *lcilib.Host, r int) {
	c.Checked++
	if c.writers[r] > 0 || c.readers[r] > 0 {
		c.fail(s, h, "node %d writes region %d while %d other nodes write and %d read it", h.Node(), r, c.writers[r], c.readers[r])
	}
	c.writers[r]++
}

func (c *Checker) endWrite(r int, data []byte) {
	c.writers[r]--
	c.last[r] = slices.Clone(data)
}
