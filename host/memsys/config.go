// Package memsys models a host's memory system as hardware: per-CPU caches
// between each processor's master channel and the node's memory bus (an
// rtl/bus instance), with a write policy per page, coherence by snooping
// the bus, and load-locked/store-conditional reservations.
//
// Real data stays in the node's memory (a mem.Memory): a Cache tracks which
// lines are present, shared or dirty and what every access costs, not a
// second copy of the bytes. A hit reads or writes the memory's Storage
// directly after the hit time; a miss fills the line with a bus read, and
// write-backs of dirty victims, write-throughs and uncached accesses are
// bus writes, so that bus observers (rtl/bus Observe: SHRIMP's snooping
// network interface, checkers) see every transaction that reaches memory.
//
// Write policies come from SHRIMP's Pentium nodes, which the paper relies
// on being settable per page: «write-back, write-through, or no-caching
// mode on a per-page basis» (shrimp-design-choices.txt, SH-P9 in
// parameters.md); automatic update needs write-through pages so that
// stores appear on the memory bus.
//
// Coherence is write-invalidate by snooping the memory bus (the caches are
// observers of it and cannot stall it). A line is invalid, shared (clean,
// perhaps in other caches too) or modified (dirty, in this cache only): MSI,
// without MESI's exclusive state, so the first store after a load miss
// claims the line on the bus even when no other cache holds it. A store to
// a write-back line the cache does not hold reads it for ownership (a bus
// read of class ClassRFO: a full line fill); a store to a line it holds
// shared claims it with an upgrade (class ClassUpgrade, an address-only bus
// transaction: no data, the cache's bytes are already right; the P6 bus's
// zero-length Memory Read and Invalidate). Either way every other cache
// drops its copy (after an RFO a dirty copy is written back first; after an
// upgrade no copy can be dirty), and so does a bridge's read-ahead (rtl/bus
// Bridge). An upgrade whose line another master takes (RFO, upgrade or
// write) before the upgrade reaches the bus completes for nothing, and the
// cache then reads the line for ownership: the bus cannot turn a queued
// upgrade into an RFO. Such a lost upgrade is the only one that can meet a
// dirty copy in another cache, which therefore ignores it and answers the
// RFO that follows.
//
// A read by another master (another CPU's fill, an I/O DMA read through a
// bridge) of a line dirty in this cache gets the line's current bytes,
// which memory always holds in this model, with the memory's timing; with
// ImplicitWriteBack (the P6 bus's HITM: the owner drives the line in the
// reader's data phase and memory takes it) the line becomes shared and
// clean with no transaction of its own; without it the cache writes the
// line back with a bus write of its own after the read, and keeps it
// shared. Either way the cache's next store to the line claims it again
// with an upgrade. A write by any other master (an I/O DMA, another CPU's
// write-through or uncached store) invalidates the lines it covers, so the
// next load misses and pays the memory latency (Memory Channel's receive
// DMA into cached pages, Cashmere-2L section 2).
// A write-back is not an invalidating write for the other caches: it moves
// the line's bytes as memory holds them when the bus carries them
// (mem.Storage.View), since memory is the only copy; a snapshot taken when
// it was queued could undo a store another CPU made in the meantime.
//
// Because stores that hit are performed on memory at once, a store to a
// write-through page is in memory before its bus write, which carries the
// stored bytes (observers see what the CPU stored) and lands later; two
// CPUs storing to the same word of a write-through page within that window
// can leave the earlier store's bytes last. Write-back pages, where stores
// need ownership, have no such window.
//
// Each cache keeps its CPU's load-locked reservation (Alpha LDL_L/STL_C,
// which Cashmere-2L's locks use); another master's write to the line, a DMA
// write or the line's eviction clears it, and a store-conditional without
// it writes nothing and completes with Beat.CondFailed.
package memsys

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
)

// Policy is a page's write policy.
type Policy uint8

// Write policies (SH-P9).
const (
	// WriteBack keeps stores in the cache: a store needs the line dirty
	// (owned) in this cache, and memory sees the line only when it is
	// written back (evicted, or read by another master).
	WriteBack Policy = iota
	// WriteThrough sends every store to memory as a posted bus write (and
	// updates the line if present); lines are never dirty, and a store
	// that misses does not allocate. A non-posted store is acknowledged
	// once the cache has queued its bus write.
	WriteThrough
	// Uncached sends every access to the bus as it is; nothing is
	// allocated. Addresses outside the node's memory (I/O space) are
	// always uncached. A read's data goes on to the CPU as the bus
	// delivers it, a port-width beat as soon as its bytes are in (the
	// processor's loads of a multi-word uncached read retire word by
	// word, AT-P5's 14 loads of a FORE cell), not after the whole read.
	Uncached
)

func (p Policy) String() string {
	switch p {
	case WriteBack:
		return "write-back"
	case WriteThrough:
		return "write-through"
	case Uncached:
		return "uncached"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// Bus request classes of the cache's own transactions, as they appear in
// mem.Req.Class, in bus observations and in bus trace kinds
// (bus.<class>.<op>). Uncached accesses keep their CPU's class.
const (
	// ClassFill is a line fill for a load.
	ClassFill = "fill"
	// ClassRFO is a line fill for a store: a read for ownership, which
	// every other cache takes as an invalidation, and a bridge as the end
	// of its read-ahead data for the line (rtl/bus ClassRFO).
	ClassRFO = bus.ClassRFO
	// ClassUpgrade is a store's claim on a line the cache already holds
	// shared: an address-only bus transaction (rtl/bus ClassUpgrade), no
	// data, which every other cache takes as an invalidation and a bridge
	// as the end of its read-ahead data for the line, as for an RFO.
	ClassUpgrade = bus.ClassUpgrade
	// ClassWriteBack is a dirty line written back to memory.
	ClassWriteBack = "wb"
	// ClassWriteThrough is a store to a write-through page.
	ClassWriteThrough = "wt"
)

// CacheConfig is a cache's geometry and timing. Every cycle count is in the
// cache's (its CPU's) clock.
type CacheConfig struct {
	// LineBytes is the line size: the unit of presence, dirtiness, fills
	// and write-backs. A power of two.
	LineBytes int
	// CapacityBytes is the total data capacity; a multiple of
	// LineBytes x Ways.
	CapacityBytes int
	// Ways is the associativity (1: direct mapped); lines of a set are
	// replaced least recently used first.
	Ways int
	// HitCycles is the time from the cache taking a request from the CPU
	// channel to answering it on a hit (the tag lookup and data access);
	// on a miss the fill is issued after it. The CPU channel's registers
	// add one cycle each way on top of it.
	HitCycles int
	// PageBytes is the granularity of the page-attribute table (SetPolicy);
	// a power of two, at least LineBytes.
	PageBytes int
	// PortWidthBytes is the beat width of the CPU-side channel: the
	// widest single load or store.
	PortWidthBytes int
	// PortDepth is the depth of the CPU-side channel's FIFOs: the stores
	// the CPU can post before the cache takes them.
	PortDepth int
	// BusWriteEntries bounds the bus writes (write-backs, write-throughs
	// and uncached stores, one entry per transaction) the cache has issued
	// and the memory bus has not yet carried to their last beat: the
	// processor's write buffers, or the outstanding bus transactions it
	// may have. While that many are outstanding the cache takes no new
	// access from its CPU, so the CPU stalls on its port once the port's
	// FIFO is full too, and a burst of stores runs at the pace of the bus
	// and of what lies behind it (a bridge's posted-write buffer, then the
	// I/O bus). Write-backs that a snoop forces (the bus cannot be
	// stalled) and a victim's write-back for a fill already accepted may
	// exceed it.
	BusWriteEntries int
	// ImplicitWriteBack: when another master reads a line this cache
	// holds dirty, the line reaches memory within that read (the snooping
	// cache supplies it and memory takes it from the bus), so no separate
	// write-back transaction follows; the line stays shared. Without it
	// the cache writes the line back with a bus write of its own.
	ImplicitWriteBack bool
	// MaxMisses is the number of misses the cache may have outstanding:
	// its miss status holding registers (Kroft, «Lockup-free instruction
	// fetch/prefetch cache organization», ISCA 1981). 0 or 1: blocking,
	// every access waits for its own miss. Above 1, a posted store to a
	// write-back page that does not own its line takes a register (an RFO,
	// or an upgrade of a line held shared) and the cache moves on to the
	// next access: loads that hit and further stores proceed under the
	// outstanding misses (stores to the line of the youngest register merge
	// into it), a load that misses waits for its own fill alongside them,
	// and a load of a line with a register waits for it. The registers'
	// stores are performed in program order (a store never becomes visible
	// before an older one); atomics, uncached, write-through and
	// non-posted accesses wait until every register has performed its
	// stores.
	MaxMisses int
}

// DefaultCacheConfig is a generic second-level cache of a mid-1990s
// workstation, for tests and until a platform sets its own.
func DefaultCacheConfig() CacheConfig {
	return CacheConfig{
		// assumed: 32-byte lines, the line size of the Pentium and
		// Pentium Pro L2 and of the Alpha 21064 B-cache; the papers do not
		// give cache geometry.
		LineBytes: 32,
		// assumed: 256 KiB, 4-way, a typical board-level cache of the time.
		CapacityBytes: 256 << 10,
		Ways:          4,
		// assumed: one cycle for lookup and data on a hit.
		HitCycles: 1,
		// assumed: 4 KiB pages (x86 and the paper's SHRIMP pages, SH-P13).
		PageBytes: 4096,
		// assumed: 8-byte loads and stores (a 64-bit data path).
		PortWidthBytes: 8,
		// assumed: a 4-entry write buffer between CPU and cache.
		PortDepth: 4,
		// assumed: 4 bus writes queued between cache and bus, as many as
		// the CPU-side queue: the Pentium-class processors of the papers
		// keep a few line-sized write buffers (host/platform sets each
		// host's).
		BusWriteEntries: 4,
		// assumed: blocking (one miss at a time), the simplest cache;
		// host/platform sets the hosts' that have more.
		MaxMisses: 1,
	}
}

func pow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// Validate checks the configuration; an error names the parameter.
func (c CacheConfig) Validate() error {
	switch {
	case !pow2(c.LineBytes):
		return fmt.Errorf("cache LineBytes %d must be a positive power of two", c.LineBytes)
	case c.Ways < 1:
		return fmt.Errorf("cache Ways %d must be at least 1", c.Ways)
	case c.CapacityBytes < 1 || c.CapacityBytes%(c.LineBytes*c.Ways) != 0:
		return fmt.Errorf("cache CapacityBytes %d must be a positive multiple of LineBytes x Ways = %d", c.CapacityBytes, c.LineBytes*c.Ways)
	case c.HitCycles < 0:
		return fmt.Errorf("cache HitCycles %d must not be negative", c.HitCycles)
	case !pow2(c.PageBytes) || c.PageBytes < c.LineBytes:
		return fmt.Errorf("cache PageBytes %d must be a power of two of at least LineBytes %d", c.PageBytes, c.LineBytes)
	case c.PortWidthBytes < 1:
		return fmt.Errorf("cache PortWidthBytes %d must be at least 1", c.PortWidthBytes)
	case c.PortDepth < 1:
		return fmt.Errorf("cache PortDepth %d must be at least 1", c.PortDepth)
	case c.BusWriteEntries < 1:
		return fmt.Errorf("cache BusWriteEntries %d must be at least 1", c.BusWriteEntries)
	case c.MaxMisses < 0:
		return fmt.Errorf("cache MaxMisses %d must not be negative (0 or 1: blocking)", c.MaxMisses)
	}
	return nil
}

// Sets returns the number of sets.
func (c CacheConfig) Sets() int { return c.CapacityBytes / (c.LineBytes * c.Ways) }

// region is one entry of the page-attribute table.
type region struct {
	base, size uint64
	policy     Policy
}

func checkRegion(base, size uint64, p Policy, page int) error {
	switch {
	case p > Uncached:
		return fmt.Errorf("policy %d is not write-back, write-through or uncached", p)
	case size == 0 || base+size < base:
		return errors.New("policy region is empty or wraps")
	case base%uint64(page) != 0 || size%uint64(page) != 0:
		return fmt.Errorf("policy region [%#x, %#x) is not aligned to PageBytes %d", base, base+size, page)
	}
	return nil
}
