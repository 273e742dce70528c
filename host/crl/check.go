package crl

import (
	"bytes"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
)

// Reporter is where the checker reports a violation: a node's LCI host
// (lcilib.Host).
type Reporter interface {
	Node() int
	Report(now clock.Time, rule, format string, args ...any)
}

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

func (c *Checker) fail(now clock.Time, h Reporter, format string, args ...any) {
	c.Violations++
	h.Report(now, "crl.coherence", format, args...)
}

// StartRead records that h's node starts reading region r, whose copy
// there is data.
func (c *Checker) StartRead(now clock.Time, h Reporter, r int, data []byte) {
	c.Checked++
	if c.writers[r] > 0 {
		c.fail(now, h, "node %d reads region %d while a node writes it", h.Node(), r)
	}
	if !bytes.Equal(data, c.last[r]) {
		c.fail(now, h, "node %d reads a stale copy of region %d (not the last completed write)", h.Node(), r)
	}
	c.readers[r]++
}

// EndRead records the end of a read of region r.
func (c *Checker) EndRead(r int) { c.readers[r]-- }

// StartWrite records that h's node starts writing region r.
func (c *Checker) StartWrite(now clock.Time, h Reporter, r int) {
	c.Checked++
	if c.writers[r] > 0 || c.readers[r] > 0 {
		c.fail(now, h, "node %d writes region %d while %d other nodes write and %d read it", h.Node(), r, c.writers[r], c.readers[r])
	}
	c.writers[r]++
}

// EndWrite records the end of a write of region r that left data.
func (c *Checker) EndWrite(r int, data []byte) {
	c.writers[r]--
	c.last[r] = slices.Clone(data)
}
