package rma

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
)

// Kernel memory layout (offsets from Hardware.KernelBase; assumed: the
// paper says only «Information about segments is maintained in a simple
// table in the kernel; the segment descriptor name is used as a table
// index to locate the segment record. Each segment record contains a set
// of address translation entries», section 2.3).
const (
	// offStack is the kernel stack's save area: saves and restores of
	// the entry and exit code (NumSaveWords words).
	offStack = 0x0000
	// NumSaveWords is the save area's words.
	NumSaveWords = 64
	// offVector is the dispatcher's tables (the exception vector, the
	// interrupt mask and device tables it reads): dispatchLoads words.
	offVector = 0x0100
	// offDesc is the descriptor registers: NumRegs records of 8 bytes,
	// w0 = valid<<31 | node<<16 | seg<<8 | rights, w1 = bytes.
	offDesc = 0x0200
	// NumRegs is the descriptor registers of the node's process.
	NumRegs = 64
	// offCAS is the per-source CAS cache: 16 bytes per source node,
	// w0 = valid<<31 | req id, w1 = old value, w2 = swapped.
	offCAS = 0x0400
	// MaxNodes is the most nodes the grant mask and the CAS cache hold.
	MaxNodes = 32
	// offSeg is the segment table: 256 records of segRecBytes, w0 =
	// valid<<31 | inhibit<<30 | rights<<8 | pages, w1 = base, w2 = bytes,
	// w3 = grant mask (bit per node); translation entries from byte 16,
	// one word per page: frame<<12 | pinned (bit 0).
	offSeg      = 0x1000
	segRecBytes = 512
	// NumSegments is the segment table's records (a one-byte descriptor).
	NumSegments = 256
	// KernelBytes is the kernel memory Hardware.KernelBase must reserve.
	KernelBytes = offSeg + NumSegments*segRecBytes
	// PageBytes is the R3000's page (the DECstation preset's 4 KB).
	PageBytes = 4096
	segValid  = 1 << 31
	segInhib  = 1 << 30
	tePinned  = 1
	descValid = 1 << 31
)

// segment record words.
type segRec struct {
	w0, base, bytes, grant uint32
}

func (r segRec) valid() bool     { return r.w0&segValid != 0 }
func (r segRec) inhibited() bool { return r.w0&segInhib != 0 }
func (r segRec) rights() Rights  { return Rights(r.w0 >> 8 & 3) }
func (r segRec) granted(n int) bool {
	return n >= 0 && n < MaxNodes && r.grant&(1<<uint(n)) != 0
}

func decodeSegRec(b []byte) segRec {
	if len(b) < 16 {
		return segRec{}
	}
	return segRec{binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]),
		binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])}
}

// descReg is a descriptor register's words.
type descReg struct{ w0, bytes uint32 }

func (d descReg) valid() bool    { return d.w0&descValid != 0 }
func (d descReg) node() int      { return int(d.w0 >> 16 & 0xff) }
func (d descReg) seg() uint8     { return uint8(d.w0 >> 8) }
func (d descReg) rights() Rights { return Rights(d.w0 & 3) }

func (k *Kernel) segAddr(seg uint8) uint64 { return k.hw.KernelBase + offSeg + uint64(seg)*segRecBytes }
func (k *Kernel) teAddr(seg uint8, page int) uint64 {
	return k.segAddr(seg) + 16 + 4*uint64(page)
}
func (k *Kernel) descAddr(reg int) uint64 { return k.hw.KernelBase + offDesc + 8*uint64(reg) }
func (k *Kernel) casAddr(src int) uint64  { return k.hw.KernelBase + offCAS + 16*uint64(src) }

// poke writes kernel memory through the untimed backdoor (set-up only).
func (k *Kernel) poke(addr uint64, words ...uint32) error {
	b := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	if err := k.hw.Memory.Storage().Write(addr, b); err != nil {
		return fmt.Errorf("rma: kernel memory at %#x: %w", addr, err)
	}
	return nil
}

// peek reads n bytes as the step's loads will return them: memory, with
// the words of the kernel's own stores that have not reached it yet (the
// write buffer and the write-through queue hold them; the cache already
// has them). Only this processor writes the node's memory (the TCA-100
// has no DMA, AT-P3), so a store has landed when memory announces a write
// of its word; the user program's stores drain during the dispatcher's 73
// instructions, before any peek of the handler.
func (k *Kernel) peek(addr uint64, n int) []byte {
	b, err := k.hw.Memory.Storage().Bytes(addr, n)
	if err != nil {
		return make([]byte, n)
	}
	out := append([]byte(nil), b...)
	if len(k.inflight) > 0 {
		for a := addr &^ 3; a < addr+uint64(n); a += 4 {
			w := k.inflight[a]
			if w == nil {
				continue
			}
			for i := range 4 {
				if a+uint64(i) >= addr && a+uint64(i) < addr+uint64(n) {
					out[a+uint64(i)-addr] = w.v[i]
				}
			}
		}
	}
	return out
}

// inflightWord is a kernel store of one word not yet in memory.
type inflightWord struct {
	n int // stores of the word still on their way
	v [4]byte
}

// track records the kernel's word stores among acc as in flight.
func (k *Kernel) track(acc []cpu.Access) {
	for _, a := range acc {
		if !a.Write || a.IO || len(a.Data) != 4 || a.Addr%4 != 0 {
			continue
		}
		w := k.inflight[a.Addr]
		if w == nil {
			w = &inflightWord{}
			k.inflight[a.Addr] = w
		}
		w.n++
		copy(w.v[:], a.Data)
	}
}

// landed retires in-flight words a memory write covers.
func (k *Kernel) landed(_ clock.Time, ev mem.WriteEvent) {
	if len(k.inflight) == 0 {
		return
	}
	for a := ev.Addr &^ 3; a < ev.Addr+uint64(len(ev.Data)); a += 4 {
		if w := k.inflight[a]; w != nil {
			if w.n--; w.n <= 0 {
				delete(k.inflight, a)
			}
		}
	}
}

func (k *Kernel) peek32(addr uint64) uint32 { return binary.LittleEndian.Uint32(k.peek(addr, 4)) }

// Export exports [base, base+n) with rights r to the nodes grant: an
// untimed set-up call (section 2.1 (2) export, (3) pinning) that takes
// the next free segment record, pins the pages and fills their
// translation entries (identity frames: the model's addresses are
// physical). It returns the segment's descriptor number.
func (k *Kernel) Export(base uint64, n int, r Rights, grant ...int) (uint8, error) {
	switch {
	case n < 4 || n > SegmentMaxBytes || n%4 != 0:
		return 0, fmt.Errorf("rma: Export size %d must be a multiple of 4 in 4..%d bytes", n, SegmentMaxBytes)
	case base%4 != 0:
		return 0, fmt.Errorf("rma: Export base %#x must be word aligned", base)
	case base+uint64(n) > 1<<32 || base+uint64(n) > k.hw.Memory.Storage().Size():
		return 0, fmt.Errorf("rma: Export [%#x, +%d) is outside the node's memory", base, n)
	case base < k.hw.KernelBase+KernelBytes && base+uint64(n) > k.hw.KernelBase:
		return 0, fmt.Errorf("rma: Export [%#x, +%d) overlaps the kernel's memory", base, n)
	case r == 0 || r > RightRead|RightWrite:
		return 0, fmt.Errorf("rma: Export rights %d must be RightRead, RightWrite or both", r)
	case k.nextSeg >= NumSegments:
		return 0, fmt.Errorf("rma: Export: all %d segment records are used", NumSegments)
	}
	var mask uint32
	for _, g := range grant {
		if g < 0 || g >= k.hw.Nodes || g >= MaxNodes {
			return 0, fmt.Errorf("rma: Export grant node %d must be in 0..%d", g, min(k.hw.Nodes, MaxNodes)-1)
		}
		mask |= 1 << uint(g)
	}
	id := uint8(k.nextSeg)
	k.nextSeg++
	first, last := base/PageBytes, (base+uint64(n)-1)/PageBytes
	pages := int(last - first + 1)
	if err := k.poke(k.segAddr(id), segValid|uint32(r)<<8|uint32(pages), uint32(base), uint32(n), mask); err != nil {
		return 0, err
	}
	for i := range pages {
		if err := k.poke(k.teAddr(id, i), uint32(first+uint64(i))<<12|tePinned); err != nil {
			return 0, err
		}
	}
	k.segs[id] = &Segment{ID: id, Base: base, Bytes: n, Rights: r, Grant: append([]int(nil), grant...)}
	return id, nil
}

// Segment returns exported segment seg (nil if none).
func (k *Kernel) Segment(seg uint8) *Segment { return k.segs[seg] }

// Import loads descriptor register reg with segment seg of node, n bytes,
// rights r (untimed set-up, section 2.1 (2) import; the exporter's grant
// is checked by the exporter's kernel on every cell).
func (k *Kernel) Import(reg int, node int, seg uint8, n int, r Rights) error {
	switch {
	case reg < 0 || reg >= NumRegs:
		return fmt.Errorf("rma: Import register %d must be in 0..%d", reg, NumRegs-1)
	case node < 0 || node >= k.hw.Nodes || node == k.hw.Node:
		return fmt.Errorf("rma: Import node %d must be another node in 0..%d", node, k.hw.Nodes-1)
	case n < 4 || n > SegmentMaxBytes:
		return fmt.Errorf("rma: Import size %d must be in 4..%d bytes", n, SegmentMaxBytes)
	case r == 0 || r > RightRead|RightWrite:
		return fmt.Errorf("rma: Import rights %d must be RightRead, RightWrite or both", r)
	}
	return k.poke(k.descAddr(reg), descValid|uint32(node)<<16|uint32(seg)<<8|uint32(r), uint32(n))
}

// Desc returns descriptor register reg as kernel memory holds it.
func (k *Kernel) Desc(reg int) (Desc, bool) {
	if reg < 0 || reg >= NumRegs {
		return Desc{}, false
	}
	d := descReg{k.peek32(k.descAddr(reg)), k.peek32(k.descAddr(reg) + 4)}
	return Desc{Reg: reg, Node: d.node(), Seg: d.seg(), Bytes: int(d.bytes), Rights: d.rights()}, d.valid()
}

// Revoke invalidates segment seg's record (untimed set-up): every later
// cell for it is refused with ErrDesc. Like Export and Unpin it writes
// memory behind the caches, so call it before the run (t=0) or before
// the kernel has read the record; a record the processor's cache already
// holds would then disagree with memory, which the handler reports as
// rma.stale.
func (k *Kernel) Revoke(seg uint8) error {
	if k.segs[seg] == nil {
		return fmt.Errorf("rma: Revoke: segment %d is not exported", seg)
	}
	w0 := k.peek32(k.segAddr(seg))
	return k.poke(k.segAddr(seg), w0&^segValid)
}

// Unpin clears the pinned bit of page (its index in the segment) of seg
// (untimed set-up, section 2.1 (3)): a cell touching it is refused with
// ErrUnpinned.
func (k *Kernel) Unpin(seg uint8, page int) error {
	s := k.segs[seg]
	if s == nil {
		return fmt.Errorf("rma: Unpin: segment %d is not exported", seg)
	}
	pages := int(k.peek32(k.segAddr(seg)) & 0xff)
	if page < 0 || page >= pages {
		return fmt.Errorf("rma: Unpin page %d must be in 0..%d", page, pages-1)
	}
	te := k.peek32(k.teAddr(seg, page))
	return k.poke(k.teAddr(seg, page), te&^tePinned)
}
