package mcadapter

import (
	"fmt"
	"math/bits"
)

// DefaultHostBytes is the host memory a receive entry may point into.
// MC-P14: «four 21064A processors operating at 233 MHz and with 256MB of
// shared memory» (section 3): 256 MB = 268435456 bytes, so with 8 KB pages
// 268435456 / 8192 = 32768 host frames.
const DefaultHostBytes = 256 << 20

// RxEntry is one receive page table entry: where this node keeps its copy
// of a global page. «Receive regions are allocated in physical RAM»
// (section 2.1): the adapter's receive DMA writes a packet for a mapped
// page into that frame; a page that is not mapped is not received here.
type RxEntry struct {
	// Valid says this node receives the global page.
	Valid bool
	// HostFrame is the host physical address of the page's frame: a
	// multiple of PageBytes below the host memory size.
	HostFrame uint64
	// Interrupt asks for a receive interrupt when a packet for the page
	// has been written into host memory (Adapter.OnReceiveInterrupt).
	// assumed: a per-page "interrupt on receive" attribute; the Cashmere
	// paper says only that a node can be interrupted by a request («the
	// exclusive holder is interrupted», section 2.2; «interrupt-based
	// messaging», section 1) and not how the MC raised it, and this is the
	// narrowest way to do it: only the pages that carry requests (the poll
	// flags) interrupt. Off by default: no other region interrupts.
	Interrupt bool
}

// RxPageTable is the adapter's receive page table: for each page of the
// global MC address space it says whether this node has a receive region
// for it and where in host memory (section 2.1: a write «appears in» every
// receive region mapped to the same global identifier; MC-P6 8 KB pages,
// MC-P7/MC-P20 128 MB of global space). The hub broadcasts every packet
// (MC-P5, «a bus interconnect»), so this table is the receive filter: a
// packet for an unmapped page is dropped and counted. The lookup is
// combinational; the receive pipeline that uses it owns the cycles.
type RxPageTable struct {
	pageBytes int
	pageShift uint
	hostBytes uint64
	entries   []RxEntry
	unmapped  uint64
}

// RxPageTableBuilder configures an RxPageTable. It is a value type: every
// With method returns a changed copy.
type RxPageTableBuilder struct {
	pageBytes int
	pages     int
	hostBytes uint64
}

// MakeRxPageTableBuilder returns a builder sized like the transmit table:
// 8 KB pages (MC-P6), one entry per global page, 16K of them (128 MB / 8
// KB = 134217728 / 8192 = 16384, MC-P7, MC-P20), frames in 256 MB of host
// memory (MC-P14).
func MakeRxPageTableBuilder() RxPageTableBuilder {
	return RxPageTableBuilder{pageBytes: DefaultPageBytes, pages: DefaultGlobalPages, hostBytes: DefaultHostBytes}
}

// WithPageBytes sets the page size in bytes (a power of two in
// MinPageBytes..MaxPageBytes); it must equal the transmit tables'.
func (b RxPageTableBuilder) WithPageBytes(n int) RxPageTableBuilder { b.pageBytes = n; return b }

// WithPages sets the number of entries, i.e. global pages (1..MaxTxPages).
func (b RxPageTableBuilder) WithPages(n int) RxPageTableBuilder { b.pages = n; return b }

// WithHostBytes sets the host memory size frames must lie in (at least one
// page, a multiple of the page size).
func (b RxPageTableBuilder) WithHostBytes(n uint64) RxPageTableBuilder { b.hostBytes = n; return b }

// Validate checks every parameter and returns an error naming the first
// bad one.
func (b RxPageTableBuilder) Validate() error {
	if err := checkGeometry("rx", b.pageBytes, b.pages); err != nil {
		return err
	}
	switch {
	case b.hostBytes < uint64(b.pageBytes) || b.hostBytes%uint64(b.pageBytes) != 0:
		return fmt.Errorf("mcadapter rx page table: host bytes %d must be a non-zero multiple of the %d-byte page", b.hostBytes, b.pageBytes)
	}
	return nil
}

// Build returns a table with every entry invalid (no page received).
func (b RxPageTableBuilder) Build(name string) (*RxPageTable, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &RxPageTable{
		pageBytes: b.pageBytes,
		pageShift: uint(bits.TrailingZeros(uint(b.pageBytes))),
		hostBytes: b.hostBytes,
		entries:   make([]RxEntry, b.pages),
	}, nil
}

// PageBytes returns the page size in bytes.
func (t *RxPageTable) PageBytes() int { return t.pageBytes }

// Pages returns the number of entries (global pages).
func (t *RxPageTable) Pages() int { return len(t.entries) }

// HostBytes returns the host memory size frames lie in.
func (t *RxPageTable) HostBytes() uint64 { return t.hostBytes }

// Set writes the entry of global page page (the CSR write software makes
// when it maps a receive region). A valid entry's HostFrame must be
// page-aligned and lie in host memory. Errors wrap ErrBadPage.
func (t *RxPageTable) Set(page int, e RxEntry) error {
	if page < 0 || page >= len(t.entries) {
		return fmt.Errorf("mcadapter rx page table: global page %d of %d: %w", page, len(t.entries), ErrBadPage)
	}
	if e.Valid && (e.HostFrame%uint64(t.pageBytes) != 0 || e.HostFrame >= t.hostBytes) {
		return fmt.Errorf("mcadapter rx page table: host frame %#x must be a multiple of %d below %#x: %w", e.HostFrame, t.pageBytes, t.hostBytes, ErrBadPage)
	}
	t.entries[page] = e
	return nil
}

// Entry reads the entry of global page page.
func (t *RxPageTable) Entry(page int) (RxEntry, error) {
	if page < 0 || page >= len(t.entries) {
		return RxEntry{}, fmt.Errorf("mcadapter rx page table: global page %d of %d: %w", page, len(t.entries), ErrBadPage)
	}
	return t.entries[page], nil
}

// Lookup is the receive filter, called once per arriving packet with its
// header's global address: it splits global into page (global / PageBytes)
// and offset and returns the host address HostFrame + offset. A packet for a
// page this node does not receive, or beyond the global space (a header the
// sender should have refused), is not received here: ok is false. The
// lookup counts nothing: the packet's fate is decided at its tail, where a
// CRC error outranks the filter (rx.go), and only a packet then dropped as
// unmapped is counted (Unmapped).
func (t *RxPageTable) Lookup(global uint64) (host uint64, ok bool) {
	page := global >> t.pageShift
	if page >= uint64(len(t.entries)) || !t.entries[page].Valid {
		return 0, false
	}
	return t.entries[page].HostFrame | global&uint64(t.pageBytes-1), true
}

// interrupts reports whether a packet to global address global asks for
// a receive interrupt (its page mapped with RxEntry.Interrupt).
func (t *RxPageTable) interrupts(global uint64) bool {
	page := global >> t.pageShift
	return page < uint64(len(t.entries)) && t.entries[page].Valid && t.entries[page].Interrupt
}

// Unmapped returns the count of packets dropped because their page is not
// mapped for receive here: the adapter's Counters.RxUnmapped. A packet
// whose lookup failed but which was dropped for its link CRC is a CRC drop
// and is not counted here.
func (t *RxPageTable) Unmapped() uint64 { return t.unmapped }

// dropUnmapped counts one packet dropped as unmapped (the adapter calls it
// at the packet's tail).
func (t *RxPageTable) dropUnmapped() { t.unmapped++ }
