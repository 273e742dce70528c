package telegraphos

import "fmt"

// The HIB's window in TURBOchannel physical address space. Shared data are
// mapped into it («remote addresses are mapped into physical addresses that
// correspond to the TurboChannel address space», 2.2.1); non-shared data
// live in host memory and never reach the HIB. An offset in the window is
// decoded as:
//
//	bit 31       shadow: a store here passes the physical address of the
//	             rest (bit 31 stripped) to a special operation (TG-P9)
//	bits 30-28   region: 0 shared memory, 1 Telegraphos contexts, 2 special
//	             registers; other values are refused
//	bits 27-24   shared memory: the node the word resides on («The highest
//	             order bits of each physical address denote the node
//	             identification», TG-P8), up to 16 nodes
//	bits 23-0    shared memory: the offset in that node's 16 MB of shared
//	             memory (TG-P18)
//
// Contexts are 64 bytes each (ContextBytes); special registers are listed
// with their offsets (Reg*).
const (
	WindowBase  uint64 = 0x2_0000_0000 // where the cluster maps the HIB on the bus
	WindowBytes uint64 = 1 << 32

	ShadowBit   uint32 = 1 << 31
	regionShift        = 28
	nodeShift          = 24
	offsetMask  uint32 = 1<<nodeShift - 1
	MaxNodes           = 16

	// SharedBytes is each node's shared memory: «16 MBytes = 128 Mbits
	// of DRAM» (TG-P18).
	SharedBytes = 1 << nodeShift
	// PageBytes is the Alpha's 8 KB page: replication, multicast and the
	// page access counters work on pages.
	PageBytes = 8 << 10
	// PagesPerNode is SharedBytes / PageBytes.
	PagesPerNode = SharedBytes / PageBytes

	// ContextBytes is the size of a Telegraphos context.
	ContextBytes = 64
)

// Regions of the window.
const (
	RegionShared  = 0
	RegionContext = 1
	RegionSpecial = 2
)

// Special registers (offsets in the special region). Reads of RegFence,
// RegLaunch and a context's CtxLaunch complete only when their operation
// has (the TURBOchannel read is held, as for a remote read).
const (
	RegNodeID      = 0x00 // read: this node's number
	RegFence       = 0x08 // read: returns when no remote write, update or copy is outstanding (MEMORY_BARRIER, TG-P32)
	RegOutstanding = 0x0c // read: the outstanding-operation counter
	RegMode        = 0x10 // Telegraphos I: write an AtomicOp (or OpCopy) to enter special mode
	RegLaunch      = 0x14 // Telegraphos I: read launches the special operation and returns its result
	RegIntStatus   = 0x18 // read: pending interrupt causes (Int*); write: clear those bits
	RegIntPage     = 0x1c // read: the global page number of the last page-counter alarm
	RegPCPage      = 0x20 // write: select a remote page (global page number) for RegPCRead/RegPCWrite
	RegPCRead      = 0x24 // read/write: the selected page's read-access counter
	RegPCWrite     = 0x28 // read/write: the selected page's write-access counter
	RegRefused     = 0x2c // read: protection refusals (bad key, foreign context, bad address)
	specialBytes   = 0x30
)

// Context registers (offsets in a context).
const (
	CtxOp     = 0x00 // write: the operation (AtomicOp or OpCopy)
	CtxData0  = 0x04 // write: first operand
	CtxData1  = 0x08 // write: second operand
	CtxArg0   = 0x0c // read: the first physical address passed by a shadow store
	CtxArg1   = 0x10 // read: the second
	CtxLaunch = 0x14 // read: launch; returns the result (0 for a copy, which does not wait)
)

// OpCopy is the special operation code of a remote copy (next to the
// AtomicOps): copy the word at the first address (remote) to the second
// (local).
const OpCopy = 8

// Interrupt causes (RegIntStatus bits).
const (
	IntPageCounter = 1 << 0 // a page access counter went from 1 to 0
	IntRefused     = 1 << 1 // an access was refused (protection)
)

// SharedAddr returns the window offset of byte off of node's shared
// memory.
func SharedAddr(node int, off uint32) uint32 {
	return uint32(RegionShared)<<regionShift | uint32(node)<<nodeShift | off&offsetMask
}

// ContextAddr returns the window offset of register reg of context ctx.
func ContextAddr(ctx int, reg uint32) uint32 {
	return uint32(RegionContext)<<regionShift | uint32(ctx)*ContextBytes + reg
}

// SpecialAddr returns the window offset of special register reg.
func SpecialAddr(reg uint32) uint32 { return uint32(RegionSpecial)<<regionShift | reg }

// Shadow returns the shadow of a window offset: the same with the highest
// bit flipped (TG-P9).
func Shadow(a uint32) uint32 { return a ^ ShadowBit }

// ShadowData returns the datum of a shadow store: the context in the high
// bits and its key in the low 16 («the identification of the Telegraphos
// context ... along with a key», 2.2.4).
func ShadowData(ctx int, key uint16) uint32 { return uint32(ctx)<<16 | uint32(key) }

// decoded is a window offset taken apart.
type decoded struct {
	shadow bool
	region int
	node   int    // shared memory
	off    uint32 // shared: offset in the node's memory; others: offset in the region
}

func decode(a uint32) decoded {
	d := decoded{shadow: a&ShadowBit != 0, region: int(a >> regionShift & 7)}
	if d.region == RegionShared {
		d.node, d.off = int(a>>nodeShift&0xf), a&offsetMask
	} else {
		d.off = a & (1<<regionShift - 1)
	}
	return d
}

func (d decoded) String() string {
	switch {
	case d.region == RegionShared && d.shadow:
		return fmt.Sprintf("shadow of node %d offset %#x", d.node, d.off)
	case d.region == RegionShared:
		return fmt.Sprintf("node %d offset %#x", d.node, d.off)
	case d.region == RegionContext:
		return fmt.Sprintf("context offset %#x", d.off)
	case d.region == RegionSpecial:
		return fmt.Sprintf("special register %#x", d.off)
	}
	return fmt.Sprintf("region %d offset %#x", d.region, d.off)
}

// GlobalPage returns the page number the page access counters use for
// page off of node: node * PagesPerNode + off / PageBytes (64 K pages,
// TG-P16, cover 32 nodes' worth).
func GlobalPage(node int, off uint32) int { return node*PagesPerNode + int(off/PageBytes) }
