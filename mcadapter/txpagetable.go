// Package mcadapter models the first-generation Memory Channel PCI adapter
// of the Cashmere-2L cluster (cashmere-2l-memory-channel.txt section 2.1):
// the PCI target of the transmit window, the transmit page table, the
// packetiser, the receive page table with its DMA, the CSRs and the
// interrupt line (issue 13 section 1). It is hardware: it imports no host
// stack, firmware program, scenario or testbench.
//
// Files: config.go (Config, MC1), adapter.go (Builder, Adapter, counters,
// status and interrupt), the transmit side in tx.go, target.go (the PCI
// target of the window and its TX FIFO write port) and packetiser.go, the
// page tables in txpagetable.go and rxpagetable.go, the packet header in
// header.go, the receive side in rx.go and rxdma.go, the CSRs in csr.go.
package mcadapter

import (
	"errors"
	"fmt"
	"math/bits"
)

// Defaults of the transmit page table.
const (
	// DefaultPageBytes is the connection (mapping) granularity. MC-P6:
	// «MC has page-level connection granularity, which is 8 Kbytes for our
	// Alpha cluster.» (section 2.1)
	DefaultPageBytes = 8192

	// DefaultTxPages is the number of transmit-window pages. derived:
	// 128 MB / 8 KB = 134217728 / 8192 = 16384 pages. MC-P7 says «64K
	// connections for a total of a 128 Mbyte MC address space», but 64K x
	// 8 KB = 512 MB, four times the stated space; MC-P20 confirms 128 MB
	// («the 128MB of MC space») as what applications get. We take the
	// address space (16K pages of 8 KB) because it is stated twice and is
	// what the window decodes; the 64K figure is kept only as the upper
	// bound on the table size (MaxTxPages).
	DefaultTxPages = 16384

	// DefaultGlobalPages is the number of pages of the global MC address
	// space a transmit entry may name. derived: the same 128 MB / 8 KB =
	// 16384 (MC-P7, MC-P20).
	DefaultGlobalPages = 16384

	// MaxTxPages bounds the table size: MC-P7 «The current hardware
	// supports 64K connections», so no adapter has more than 65536
	// entries.
	MaxTxPages = 65536

	// MinPageBytes is the smallest page Build accepts. assumed: one
	// 32-bit word, the smallest atomic access of the 21064 (MC-P18), so a
	// word is never split between two pages.
	MinPageBytes = 4

	// MaxPageBytes is the largest page Build accepts. assumed: 64 KB, the
	// largest page size the Alpha architecture defines (8 KB to 64 KB);
	// it also keeps the window (at most 64K x 64 KB = 4 GB) far inside a
	// uint64.
	MaxPageBytes = 65536
)

// TxEntry is one transmit page table entry (MC-P6, MC-P8).
type TxEntry struct {
	// Valid says the page is mapped for transmit; a write to an invalid
	// page is dropped (issue 13 section 1).
	Valid bool
	// GlobalPage is the page of the global MC address space the window
	// page maps to: the «same global identifier» a receive region is
	// matched by (section 2.1).
	GlobalPage int
	// LoopBack sends the write back to the sending node's own receive
	// regions: «only if loop-back through the hub has been enabled for the
	// region» (section 2.1, MC-P8).
	LoopBack bool
}

// TxStatus is the fault status register: the last page a write was
// dropped on (issue 13 section 1: «raises an interrupt with the page in a
// status register»).
type TxStatus struct {
	// Fault is set by a dropped write and cleared by software
	// (ClearStatus).
	Fault bool
	// Page is the window page of the last dropped write (valid when
	// Fault is set).
	Page int
}

// Piece is a part of a PCI burst that lies within one page: the
// packetiser sends one packet per piece (issue 13 section 1: a burst
// crossing a page end becomes two packets).
type Piece struct {
	// Addr is the window address of the piece's first byte.
	Addr uint64
	// Len is its length in bytes.
	Len int
}

// TxPageTable is the adapter's transmit page table: it maps each page of
// the transmit window (the I/O-space addresses «on the MC's PCI adapter»
// that transmit regions map to, section 2.1) to a global page and a
// loop-back flag. The lookup is combinational: the PCI target and the
// packetiser that use it own the cycles.
type TxPageTable struct {
	pageBytes   int
	pageShift   uint
	globalPages int
	entries     []TxEntry
	dropped     uint64
	status      TxStatus

	// Interrupt, when not nil, is the adapter's interrupt line: called
	// with the window page each time a write to an invalid page is
	// dropped (issue 13 section 1).
	Interrupt func(page int)
}

// TxPageTableBuilder configures a TxPageTable. It is a value type: every
// With method returns a changed copy.
type TxPageTableBuilder struct {
	pageBytes   int
	pages       int
	globalPages int
}

// MakeTxPageTableBuilder returns a builder with the paper's cluster: 8 KB
// pages (MC-P6), 16K window pages and 16K global pages (128 MB / 8 KB,
// MC-P7, MC-P20).
func MakeTxPageTableBuilder() TxPageTableBuilder {
	return TxPageTableBuilder{pageBytes: DefaultPageBytes, pages: DefaultTxPages, globalPages: DefaultGlobalPages}
}

// WithPageBytes sets the page size in bytes (a power of two in
// MinPageBytes..MaxPageBytes).
func (b TxPageTableBuilder) WithPageBytes(n int) TxPageTableBuilder { b.pageBytes = n; return b }

// WithPages sets the number of entries, i.e. window pages (1..MaxTxPages).
func (b TxPageTableBuilder) WithPages(n int) TxPageTableBuilder { b.pages = n; return b }

// WithGlobalPages sets the number of pages of the global MC address space
// an entry may name (1..MaxTxPages).
func (b TxPageTableBuilder) WithGlobalPages(n int) TxPageTableBuilder { b.globalPages = n; return b }

// Validate checks every parameter and returns an error naming the first
// bad one.
func (b TxPageTableBuilder) Validate() error {
	if err := checkGeometry("tx", b.pageBytes, b.pages); err != nil {
		return err
	}
	switch {
	case b.globalPages < 1 || b.globalPages > MaxTxPages:
		return fmt.Errorf("mcadapter tx page table: global pages %d must be in 1..%d", b.globalPages, MaxTxPages)
	}
	return nil
}

// checkGeometry checks the page size and entry count every MC page table
// shares; table ("tx", "rx") names it in the error.
func checkGeometry(table string, pageBytes, pages int) error {
	switch {
	case pageBytes < MinPageBytes || pageBytes > MaxPageBytes:
		return fmt.Errorf("mcadapter %s page table: page bytes %d must be in %d..%d", table, pageBytes, MinPageBytes, MaxPageBytes)
	case bits.OnesCount(uint(pageBytes)) != 1:
		return fmt.Errorf("mcadapter %s page table: page bytes %d must be a power of two", table, pageBytes)
	case pages < 1 || pages > MaxTxPages:
		return fmt.Errorf("mcadapter %s page table: pages %d must be in 1..%d", table, pages, MaxTxPages)
	}
	return nil
}

// Build returns a table with every entry invalid.
func (b TxPageTableBuilder) Build(name string) (*TxPageTable, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &TxPageTable{
		pageBytes:   b.pageBytes,
		pageShift:   uint(bits.TrailingZeros(uint(b.pageBytes))),
		globalPages: b.globalPages,
		entries:     make([]TxEntry, b.pages),
	}, nil
}

// ErrBadPage is wrapped by Set and Entry for a window page outside the
// table and by Set for a global page outside the global space.
var ErrBadPage = errors.New("page out of range")

// PageBytes returns the page size in bytes.
func (t *TxPageTable) PageBytes() int { return t.pageBytes }

// Pages returns the number of entries (window pages).
func (t *TxPageTable) Pages() int { return len(t.entries) }

// WindowBytes returns the size of the transmit window: Pages x PageBytes.
func (t *TxPageTable) WindowBytes() uint64 {
	return uint64(len(t.entries)) << t.pageShift
}

// Set writes entry page (the CSR write software makes when it maps a
// transmit region). A valid entry's GlobalPage must lie in the global
// space.
func (t *TxPageTable) Set(page int, e TxEntry) error {
	if page < 0 || page >= len(t.entries) {
		return fmt.Errorf("mcadapter tx page table: window page %d of %d: %w", page, len(t.entries), ErrBadPage)
	}
	if e.Valid && (e.GlobalPage < 0 || e.GlobalPage >= t.globalPages) {
		return fmt.Errorf("mcadapter tx page table: global page %d of %d: %w", e.GlobalPage, t.globalPages, ErrBadPage)
	}
	t.entries[page] = e
	return nil
}

// Entry reads entry page.
func (t *TxPageTable) Entry(page int) (TxEntry, error) {
	if page < 0 || page >= len(t.entries) {
		return TxEntry{}, fmt.Errorf("mcadapter tx page table: window page %d of %d: %w", page, len(t.entries), ErrBadPage)
	}
	return t.entries[page], nil
}

// Translate is the write path's lookup: it splits the window address addr
// into page (addr / PageBytes) and offset (addr mod PageBytes) and
// returns the global address GlobalPage x PageBytes + offset and the
// entry's loop-back flag. A write to an invalid page is dropped: ok is
// false, the drop counter is incremented, the status register takes the
// page and the interrupt line is raised (issue 13 section 1). An address
// beyond the window is not the table's (the PCI target does not claim
// it): ok is false and nothing is counted.
func (t *TxPageTable) Translate(addr uint64) (global uint64, loopBack bool, ok bool) {
	if addr >= t.WindowBytes() {
		return 0, false, false
	}
	page := int(addr >> t.pageShift)
	off := addr & uint64(t.pageBytes-1)
	e := t.entries[page]
	if !e.Valid {
		t.dropped++
		t.status = TxStatus{Fault: true, Page: page}
		if t.Interrupt != nil {
			t.Interrupt(page)
		}
		return 0, false, false
	}
	return uint64(e.GlobalPage)<<t.pageShift | off, e.LoopBack, true
}

// SplitAtPages cuts the burst of n bytes at window address addr at page
// ends, the packetiser's rule (issue 13 section 1: a burst crossing a page
// becomes two packets): each piece lies in one page, the pieces are in
// address order and their lengths sum to n. n <= 0 gives no piece.
func (t *TxPageTable) SplitAtPages(addr uint64, n int) []Piece {
	var out []Piece
	for n > 0 {
		room := t.pageBytes - int(addr&uint64(t.pageBytes-1))
		l := min(n, room)
		out = append(out, Piece{Addr: addr, Len: l})
		addr += uint64(l)
		n -= l
	}
	return out
}

// Dropped returns the count of writes dropped on an invalid page.
func (t *TxPageTable) Dropped() uint64 { return t.dropped }

// Status returns the fault status register.
func (t *TxPageTable) Status() TxStatus { return t.status }

// ClearStatus clears the status register (the CSR write of the interrupt
// handler); the drop counter is kept.
func (t *TxPageTable) ClearStatus() { t.status = TxStatus{} }
