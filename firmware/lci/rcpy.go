package lci

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/rtl/env"
)

// I-rcpy: the remote-memory copy primitive
// (lci-myrinet-cluster-protocols.txt sections 5.2.2 to 5.2.4). RCPY
// copies a contiguous, 4-byte aligned block from the sender's virtual
// address space to a destination address in the receiver's, point to
// point; it is nonblocking with a separate completion check, and by
// default nothing is notified at the receiver. «The host library splits
// each RCPY transfer into a series of page transfers; a page transfer
// spans at most one 4-Kbyte page.» «the host library maintains a Host TLB
// (HTLB) and the NI maintains an NI TLB (NTLB). The TLBs are
// direct-mapped and contain 1024 entries.»
//
// This file holds the NI's pieces of I-rcpy: the NTLB in SRAM
// (Layout.NTLB), the RCPY send descriptor and its strict check, the send
// side's miss flag (the NI updates its NTLB entry from the descriptor)
// and the receive side's decision (an NTLB hit is DMAed to the
// destination; a miss goes to an anonymous page, and the entry is
// invalidated and locked until the host has pinned the page: «polling is
// still required in I-rcpy, to handle data transfers to addresses that
// are not in the NI TLB»). rcpyni.go hooks them into the control
// program's modules.

// RCPY is I-rcpy (section 5.2.2): the host library moves page transfers
// with RCPY send descriptors; the NI translates both ends in its NTLB.
const RCPY Variant = PIO + 1

// PageBytes is the page size of a page transfer: «a page transfer spans
// at most one 4-Kbyte page» (section 5.2.3).
const PageBytes = 4096

// NTLBEntries is the size of the NI TLB: «The TLBs are direct-mapped and
// contain 1024 entries» (section 5.2.3).
const NTLBEntries = 1024

// NTLBEntryBytes is the size of an NTLB entry in SRAM: assumed: a 32-bit
// virtual page number (the tag) and a 32-bit word holding the physical
// page number and the valid and locked bits; the paper gives no entry
// format, and the PPro and P3 hosts have 32-bit addresses.
const NTLBEntryBytes = 8

// NTLBBytes is the NTLB's SRAM: derived: 1024 entries * 8 bytes = 8192.
const NTLBBytes = NTLBEntries * NTLBEntryBytes

// NTLB entry flag bits (the low bits of the entry's second word; the
// physical page number is above them).
const (
	ntlbValid  = 1
	ntlbLocked = 2
	ntlbShift  = 2
)

// SRAM is what the NTLB needs of the NI's memory (*firmware.Ctx has it).
type SRAM interface {
	Read(addr uint32, n int) []byte
	Write(addr uint32, data []byte)
}

// NTLBEntry is one decoded NTLB entry.
type NTLBEntry struct {
	VPN, PPN      uint32
	Valid, Locked bool
}

// NTLB is the NI TLB of section 5.2.3, direct-mapped on the virtual page
// number, in SRAM at Base.
type NTLB struct {
	Base uint32
	// test-only fault: every staleEvery-th update maps the page one
	// physical page off (lci.ntlbstale).
	staleEvery, updates int
}

var mutNTLBStale = env.DeclareMutation("lci.ntlbstale",
	"I-rcpy: every Nth NTLB update writes the physical page one past the host's mapping "+
		"(caught by the NTLB consistency checker, lci.ntlb)")

// NewNTLB returns the NTLB at base, with the run's test-only faults.
func NewNTLB(e *env.Env, base uint32) *NTLB {
	return &NTLB{Base: base, staleEvery: e.Mutation(mutNTLBStale)}
}

// Index is the entry a virtual address maps to: direct-mapped, the
// virtual page number modulo NTLBEntries.
func Index(vaddr uint32) int { return int(vaddr/PageBytes) % NTLBEntries }

func (t *NTLB) addr(i int) uint32 { return t.Base + uint32(i)*NTLBEntryBytes }

// Entry reads entry i.
func (t *NTLB) Entry(m SRAM, i int) NTLBEntry {
	b := m.Read(t.addr(i), NTLBEntryBytes)
	w := binary.LittleEndian.Uint32(b[4:])
	return NTLBEntry{VPN: binary.LittleEndian.Uint32(b[0:]), PPN: w >> ntlbShift, Valid: w&ntlbValid != 0, Locked: w&ntlbLocked != 0}
}

func (t *NTLB) put(m SRAM, i int, e NTLBEntry) { m.Write(t.addr(i), EncodeNTLBEntry(e)) }

// EntryAddr is the SRAM address of the entry vaddr maps to (the host
// library writes it by PIO to unlock it after a receive miss).
func (t *NTLB) EntryAddr(vaddr uint32) uint32 { return t.addr(Index(vaddr)) }

// EncodeNTLBEntry returns an entry's bytes: [0:4] the virtual page number,
// [4:8] the physical page number above the valid and locked bits.
func EncodeNTLBEntry(e NTLBEntry) []byte {
	b := make([]byte, NTLBEntryBytes)
	binary.LittleEndian.PutUint32(b[0:], e.VPN)
	w := e.PPN << ntlbShift
	if e.Valid {
		w |= ntlbValid
	}
	if e.Locked {
		w |= ntlbLocked
	}
	binary.LittleEndian.PutUint32(b[4:], w)
	return b
}

// Lookup translates vaddr: the physical address and true on a hit (the
// entry is valid, not locked, and its tag is vaddr's page).
func (t *NTLB) Lookup(m SRAM, vaddr uint32) (uint32, bool) {
	e := t.Entry(m, Index(vaddr))
	if !e.Valid || e.Locked || e.VPN != vaddr/PageBytes {
		return 0, false
	}
	return e.PPN*PageBytes + vaddr%PageBytes, true
}

// Update maps the page of vaddr to physical page ppn, as the send side
// does on a descriptor's miss flag («the NI updates its NTLB entry») and
// the host does when it unlocks an entry after a receive miss. A locked
// entry is the host's until it unlocks it: Update leaves it and returns
// false unless unlock is set.
func (t *NTLB) Update(m SRAM, vaddr, ppn uint32, unlock bool) bool {
	i := Index(vaddr)
	if t.Entry(m, i).Locked && !unlock {
		return false
	}
	t.updates++
	if t.staleEvery > 0 && t.updates%t.staleEvery == 0 {
		ppn++
	}
	t.put(m, i, NTLBEntry{VPN: vaddr / PageBytes, PPN: ppn, Valid: true})
	return true
}

// MissLock invalidates and locks the entry of vaddr, as the receiving NI
// does on a miss («invalidates and locks the entry»). It returns false if
// the entry is locked already (another miss on the same entry is being
// handled by the host).
func (t *NTLB) MissLock(m SRAM, vaddr uint32) bool {
	i := Index(vaddr)
	if t.Entry(m, i).Locked {
		return false
	}
	t.put(m, i, NTLBEntry{VPN: vaddr / PageBytes, Locked: true})
	return true
}

// Pinned is the host's page table as far as the checker needs it: the
// physical page a virtual page is pinned at.
type Pinned func(vpn uint32) (ppn uint32, ok bool)

// CheckNTLB is the NTLB consistency checker (rule lci.ntlb): every entry
// marked valid sits at its page's index, and maps a page the host has
// pinned, to the physical page it is pinned at. It reports each bad entry
// and returns how many it found.
func (t *NTLB) CheckNTLB(e *env.Env, path string, m SRAM, pinned Pinned) int {
	bad := 0
	for i := range NTLBEntries {
		en := t.Entry(m, i)
		if !en.Valid {
			continue
		}
		ppn, ok := pinned(en.VPN)
		switch {
		case int(en.VPN)%NTLBEntries != i:
			e.Report(e.Now(), path, "lci.ntlb", "NTLB entry %d holds virtual page %#x, whose entry is %d", i, en.VPN, int(en.VPN)%NTLBEntries)
		case !ok:
			e.Report(e.Now(), path, "lci.ntlb", "NTLB entry %d maps virtual page %#x, which the host has not pinned", i, en.VPN)
		case ppn != en.PPN:
			e.Report(e.Now(), path, "lci.ntlb", "NTLB entry %d maps virtual page %#x to physical page %#x; the host pinned it at %#x", i, en.VPN, en.PPN, ppn)
		default:
			continue
		}
		bad++
	}
	return bad
}

// RcpyDesc is an I-rcpy page-transfer descriptor: «a send descriptor
// (virtual source address, size, destination, virtual destination
// address)» per source page (section 5.2.3), 32 bytes in the send queue's
// slot:
//
//	[0:4] virtual source address  [4:8] virtual destination address
//	[8] TypeRcpy  [9] destination node  [10:12] size
//	[12:16] NI send buffer (a send miss: the data the host wrote by PIO)
//	[16:20] a send miss: the source page's physical page number (the new
//	mapping)  [20] flags (RcpyMiss)  [21:24] zero
//	[24:28] the host's handle (the completion check's)  [28:32] sequence
type RcpyDesc struct {
	Seq      uint32
	Src, Dst uint32 // virtual source and destination addresses
	Node     uint8
	Size     uint16
	Buf      uint32
	PPN      uint32
	Flags    uint8
	Handle   uint32
}

// TypeRcpy is the descriptor and packet type of an RCPY page transfer:
// assumed: the next free type number after TypeNack (7).
const TypeRcpy = 8

// RcpyMiss marks a send miss: «the library pins the page, copies the page
// segment directly into an NI send buffer by PIO, marks a miss in the
// descriptor with the new mapping».
const RcpyMiss = 1

// Encode returns the descriptor's bytes.
func (d RcpyDesc) Encode() []byte {
	b := make([]byte, DescBytes)
	binary.LittleEndian.PutUint32(b[0:], d.Src)
	binary.LittleEndian.PutUint32(b[4:], d.Dst)
	b[8] = TypeRcpy
	b[9] = d.Node
	binary.LittleEndian.PutUint16(b[10:], d.Size)
	binary.LittleEndian.PutUint32(b[12:], d.Buf)
	binary.LittleEndian.PutUint32(b[16:], d.PPN)
	b[20] = d.Flags
	binary.LittleEndian.PutUint32(b[24:], d.Handle)
	binary.LittleEndian.PutUint32(b[28:], d.Seq)
	return b
}

// DecodeRcpyDesc reads a descriptor's bytes; it fails on a slot that is
// not an RCPY descriptor or has bytes [21:24] set.
func DecodeRcpyDesc(b []byte) (RcpyDesc, error) {
	if len(b) < DescBytes || b[8] != TypeRcpy || b[21]|b[22]|b[23] != 0 {
		return RcpyDesc{}, fmt.Errorf("not an RCPY descriptor: % x", b)
	}
	return RcpyDesc{Src: binary.LittleEndian.Uint32(b[0:]), Dst: binary.LittleEndian.Uint32(b[4:]), Node: b[9],
		Size: binary.LittleEndian.Uint16(b[10:]), Buf: binary.LittleEndian.Uint32(b[12:]), PPN: binary.LittleEndian.Uint32(b[16:]),
		Flags: b[20], Handle: binary.LittleEndian.Uint32(b[24:]), Seq: binary.LittleEndian.Uint32(b[28:])}, nil
}

// RcpyCheck is what a descriptor is checked against: the node, the
// cluster, the MTU and the send buffers.
type RcpyCheck struct {
	Node, Nodes, MTU, SendBufs int
}

// Check validates a page transfer strictly: 4-byte aligned addresses and
// size («4-byte aligned»), a size from 4 to the MTU, neither end crossing
// a page («a page transfer spans at most one 4-Kbyte page»), another node
// of the cluster, known flags, and a send buffer (on a miss the host's PIO
// put the data there; on a hit the NI's DMA fetches it there: «performs a
// DMA transfer from the corresponding physical host address to a free NI
// buffer»; assumed: the host library picks that buffer from its free
// send buffers, as for every other send, so that one free list and one
// completion per buffer serve both paths). It returns
// the reason for a bad one ("" when good).
func (k RcpyCheck) Check(d RcpyDesc) string {
	switch {
	case d.Src%4 != 0 || d.Dst%4 != 0 || d.Size%4 != 0:
		return "not 4-byte aligned"
	case d.Size == 0 || int(d.Size) > k.MTU:
		return fmt.Sprintf("size %d not in 4..%d", d.Size, k.MTU)
	case d.Src%PageBytes+uint32(d.Size) > PageBytes || d.Dst%PageBytes+uint32(d.Size) > PageBytes:
		return "crosses a page"
	case int(d.Node) >= k.Nodes || int(d.Node) == k.Node:
		return fmt.Sprintf("destination node %d", d.Node)
	case d.Flags&^RcpyMiss != 0:
		return fmt.Sprintf("flags %#x", d.Flags)
	case int(d.Buf) >= k.SendBufs:
		return fmt.Sprintf("send buffer %d of %d", d.Buf, k.SendBufs)
	}
	return ""
}

// CheckReport is Check reporting a bad descriptor as lci.desc.
func (k RcpyCheck) CheckReport(e *env.Env, path string, d RcpyDesc) bool {
	if why := k.Check(d); why != "" {
		e.Report(e.Now(), path, "lci.desc", "bad I-rcpy send descriptor %+v: %s", d, why)
		return false
	}
	return true
}

// SendTranslate is the sending NI's step for a descriptor: on the miss
// flag, update the NTLB from the descriptor's mapping (the data is in the
// send buffer already, by PIO: no fetch); otherwise look the source up
// and return the physical address to DMA from. fetch is false on a miss.
// A descriptor without the miss flag whose source misses in the NTLB is a
// host library fault (its HTLB said the NI has the mapping): ok is false.
func (t *NTLB) SendTranslate(m SRAM, d RcpyDesc) (phys uint32, fetch, ok bool) {
	if d.Flags&RcpyMiss != 0 {
		t.Update(m, d.Src, d.PPN, false)
		return 0, false, true
	}
	phys, ok = t.Lookup(m, d.Src)
	return phys, true, ok
}

// AnonPages is the receiving NI's reserved set of anonymous pages
// («the NI DMAs the data to an anonymous page (a reserved set)»), given
// out lowest first and returned by the host after its copy.
type AnonPages struct {
	phys []uint32 // physical addresses of the pages
	free []bool
}

// NewAnonPages returns the reserved set at the given physical addresses.
func NewAnonPages(phys []uint32) *AnonPages {
	a := &AnonPages{phys: append([]uint32(nil), phys...), free: make([]bool, len(phys))}
	for i := range a.free {
		a.free[i] = true
	}
	return a
}

// Take returns a free page's index, or -1.
func (a *AnonPages) Take() int {
	for i, f := range a.free {
		if f {
			a.free[i] = false
			return i
		}
	}
	return -1
}

// Give returns page i.
func (a *AnonPages) Give(i int) { a.free[i] = true }

// Phys is page i's physical address.
func (a *AnonPages) Phys(i int) uint32 { return a.phys[i] }

// Free counts the free pages.
func (a *AnonPages) Free() int {
	n := 0
	for _, f := range a.free {
		n += boolInt(f)
	}
	return n
}

// RcpyDelivery is where the receiving NI puts a page transfer.
type RcpyDelivery struct {
	// Phys is the physical address to DMA the data to: the destination on
	// a hit, the anonymous page (plus the destination's page offset) on a
	// miss.
	Phys uint32
	// Miss: the destination missed; Anon is the anonymous page, and the
	// NI sends the host an RCPY notification carrying both.
	Miss bool
	Anon int
	// Stall: a miss found no free anonymous page or a locked entry; the
	// NI keeps the packet in its receive buffer and tries again when the
	// host returns a page or unlocks the entry.
	Stall bool
}

// Receive is the receiving NI's decision for a page transfer to the
// virtual address dst: «the receiving NI looks up the destination in its
// NTLB and DMAs to host memory»; on a miss «the NI DMAs the data to an
// anonymous page (a reserved set), invalidates and locks the entry».
func (t *NTLB) Receive(m SRAM, dst uint32, anon *AnonPages) RcpyDelivery {
	if phys, ok := t.Lookup(m, dst); ok {
		return RcpyDelivery{Phys: phys}
	}
	if t.Entry(m, Index(dst)).Locked || anon.Free() == 0 {
		return RcpyDelivery{Stall: true}
	}
	i := anon.Take()
	t.MissLock(m, dst)
	return RcpyDelivery{Phys: anon.Phys(i) + dst%PageBytes, Miss: true, Anon: i}
}
