package lcilib

import (
	"fmt"

	"github.com/nisim/nisim/firmware/lci"
)

// I-rcpy's host library decisions (lci-myrinet-cluster-protocols.txt
// sections 5.2.2 to 5.2.4), untimed: page splitting, the Host TLB, the
// send-miss path and the receive-miss handling. Seq issues them as
// operations of the host CPU model (rcpyseq.go: RemoteCopy, the
// completion check, the receive-miss handling); the specs also compose
// them with the NI's NTLB untimed, for the protocol's functional specs
// (data integrity, both miss paths).

// PinCycles is what pinning a page costs the host: assumed: a system
// call that locks the page and returns its physical address, about 2000
// host cycles (a few µs on the 200 MHz PPro); the paper gives no figure
// («pins it» is a kernel call).
const PinCycles = 2000

// PageXfer is one page transfer: «The host library splits each RCPY
// transfer into a series of page transfers; a page transfer spans at most
// one 4-Kbyte page.»
type PageXfer struct {
	Src, Dst uint32 // virtual source and destination addresses
	Size     int
}

// SplitPages splits a transfer of n bytes from src to dst into page
// transfers: each ends at the next source or destination page boundary,
// or after mtu bytes (a page transfer is one packet: with the base MTU of
// 2 Kbyte a full page takes two). Addresses and size must be 4-byte
// aligned («4-byte aligned»), n at least 4.
func SplitPages(src, dst uint32, n, mtu int) ([]PageXfer, error) {
	if src%4 != 0 || dst%4 != 0 || n%4 != 0 || n < 4 {
		return nil, fmt.Errorf("lcilib: RCPY of %d bytes from %#x to %#x: addresses and size must be 4-byte aligned, size at least 4", n, src, dst)
	}
	if mtu < 4 || mtu%4 != 0 {
		return nil, fmt.Errorf("lcilib: RCPY MTU %d must be a positive multiple of 4", mtu)
	}
	var out []PageXfer
	for n > 0 {
		k := min(n, mtu, lci.PageBytes-int(src%lci.PageBytes), lci.PageBytes-int(dst%lci.PageBytes))
		out = append(out, PageXfer{Src: src, Dst: dst, Size: k})
		src, dst, n = src+uint32(k), dst+uint32(k), n-k
	}
	return out, nil
}

// HTLB is the host library's Host TLB: «The TLBs are direct-mapped and
// contain 1024 entries.» It mirrors what the library has told its NI's
// NTLB, so a hit means the NI can translate the page.
type HTLB struct {
	vpn, ppn [lci.NTLBEntries]uint32
	valid    [lci.NTLBEntries]bool
}

// Lookup returns the physical page of vaddr's page on a hit.
func (t *HTLB) Lookup(vaddr uint32) (uint32, bool) {
	i := lci.Index(vaddr)
	if !t.valid[i] || t.vpn[i] != vaddr/lci.PageBytes {
		return 0, false
	}
	return t.ppn[i], true
}

// Insert maps vaddr's page to ppn, replacing the entry's page.
func (t *HTLB) Insert(vaddr, ppn uint32) {
	i := lci.Index(vaddr)
	t.vpn[i], t.ppn[i], t.valid[i] = vaddr/lci.PageBytes, ppn, true
}

// PageTable is the host operating system's view of one process: virtual
// pages, the physical pages behind them, and which are pinned. Pages are
// given physical pages in the order first touched, from First
// (deterministic).
type PageTable struct {
	First  uint32
	phys   map[uint32]uint32 // vpn -> ppn (lookups only, never iterated)
	pinned map[uint32]bool
	next   uint32
	// Pins counts the pin system calls.
	Pins int
}

// NewPageTable returns a page table giving out physical pages from first.
func NewPageTable(first uint32) *PageTable {
	return &PageTable{First: first, next: first, phys: map[uint32]uint32{}, pinned: map[uint32]bool{}}
}

// Phys returns vpn's physical page, backing it on first touch.
func (pt *PageTable) Phys(vpn uint32) uint32 {
	p, ok := pt.phys[vpn]
	if !ok {
		p = pt.next
		pt.next++
		pt.phys[vpn] = p
	}
	return p
}

// Pin pins vpn (a system call, PinCycles) and returns its physical page.
func (pt *PageTable) Pin(vpn uint32) uint32 {
	pt.Pins++
	pt.pinned[vpn] = true
	return pt.Phys(vpn)
}

// Pinned reports vpn's physical page if it is pinned (lci.Pinned).
func (pt *PageTable) Pinned(vpn uint32) (uint32, bool) {
	if !pt.pinned[vpn] {
		return 0, false
	}
	return pt.phys[vpn], true
}

// RcpySend is what the library does for one page transfer: the
// descriptor to write and, on a send miss, the bytes it copies by PIO
// into the NI send buffer.
type RcpySend struct {
	Desc lci.RcpyDesc
	PIO  bool
}

// PlanSend is the send side of section 5.2.3 for one page transfer: an
// HTLB hit makes the optimal transfer's descriptor; a miss pins the page,
// enters the mapping in the HTLB, and marks the descriptor a miss «with
// the new mapping» (the data goes to send buffer buf by PIO).
func PlanSend(t *HTLB, pt *PageTable, x PageXfer, node uint8, buf uint32) RcpySend {
	d := lci.RcpyDesc{Src: x.Src, Dst: x.Dst, Node: node, Size: uint16(x.Size)}
	if _, ok := t.Lookup(x.Src); ok {
		return RcpySend{Desc: d}
	}
	ppn := pt.Pin(x.Src / lci.PageBytes)
	t.Insert(x.Src, ppn)
	d.Flags, d.PPN, d.Buf = lci.RcpyMiss, ppn, buf
	return RcpySend{Desc: d, PIO: true}
}

// RcpyMissNote is the RCPY notification of a receive miss: «carries the
// miss and the anonymous page».
type RcpyMissNote struct {
	Dst  uint32 // virtual destination address
	Size int
	Anon int // the anonymous page's index
}

// HandleMiss is the receiving host's part of a receive miss, when its
// poll finds the notification: «the host copies from the anonymous page
// to the destination, pins it, updates both TLBs and unlocks the NI's
// entry», and returns the anonymous page to the reserved set. copyPhys
// moves n bytes between physical addresses (the host's memcpy).
func HandleMiss(t *HTLB, pt *PageTable, ntlb *lci.NTLB, sram lci.SRAM, anon *lci.AnonPages, note RcpyMissNote,
	copyPhys func(dst, src uint32, n int)) {
	ppn := pt.Pin(note.Dst / lci.PageBytes)
	off := note.Dst % lci.PageBytes
	copyPhys(ppn*lci.PageBytes+off, anon.Phys(note.Anon)+off, note.Size)
	t.Insert(note.Dst, ppn)
	ntlb.Update(sram, note.Dst, ppn, true)
	anon.Give(note.Anon)
}
