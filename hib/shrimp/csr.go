package shrimp

import (
	"encoding/binary"
	"math/bits"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/trace"
)

// The CSR window: an EISA target of CSRBytes at AddressMap.CSR, through
// which the kernel writes the page tables, invalidates a partial UDMA
// initiation, acknowledges interrupts, reads the FIFO occupancy and the
// notification records and asks the CAM. The paper gives no register
// layout: the map below is assumed; its sizes are derived from the tables
// (one entry per page, SH-P14, SH-P18). Registers are 32 bits wide,
// little-endian; a write narrower than a word changes only the bytes
// written; a read is answered at once for all the bytes it covers.
//
// Offsets from the window base, with E = Config.Entries() (SHRIMP: 8192, so
// the OPT at 0x00000, the IPT at 0x10000, the registers at 0x18000):
//
//	OPTBase = 0   OPT entry i at 8*i (i < E), two words:
//	                +0 bit 31 Valid, bit 30 AU, bit 29 Notify, bit 28
//	                   Combine, bits 16..23 DstNode, bits 0..4 the
//	                   sub-page: 0 = Config.SubpageBytes, else
//	                   1 << (v-1) bytes;
//	                +4 DstPage.
//	                An entry is written through SetOPT's checks when either
//	                word is written (write +4 first, then +0 with Valid).
//	IPTBase()     IPT entry p at IPTBase + 4*p: bit 31 Exported, bit 30
//	              Interrupt.
//	RegBase()     registers (RegBase + offset):
//	  RegStatus      R  bits 0..2 the pending interrupt causes (IRQCause),
//	                    bit 8 the UDMA FSM in DestLoaded, bits 16..23 the
//	                    DU transfers accepted and not yet read.
//	  RegIRQAck      W  the causes set in the word are cleared.
//	  RegOccupancy   R  the Outgoing FIFO's occupancy in bytes.
//	  RegThreshold   RW the Outgoing FIFO's threshold in bytes (reset:
//	                    Config.FIFOThreshold; writes above FIFOBytes are
//	                    refused).
//	  RegInval       W  any write returns the UDMA FSM to Idle (the
//	                    kernel's store on every context switch).
//	  RegUDMAStatus  R  the Status of the last UDMA LOAD.
//	  RegNotify      R  a read that covers its first byte pops the oldest
//	                    notification record: +0 its page, +4 bit 31 valid
//	                    and bits 0..7 its source node (read both words as
//	                    one 8-byte access, or +0 then +4: +4 reads the
//	                    record the last pop returned). Empty: valid clear.
//	  RegCAMQuery    W  a local page number to look up in the DU CAM.
//	  RegCAMResult   R  1 if the queried page has a DU transfer running or
//	                    queued (DUPending), else 0.
//
// Other offsets read as zero and ignore writes. A table write the NI
// refuses (a node or page out of range) is reported as a shrimp.csr
// violation: a driver bug.
//
// Timing: assumed: one EISA cycle per access, an on-card register or SRAM
// read (csrLatency), as mcadapter's CSRs.

// Register offsets within the register area (RegBase).
const (
	// RegStatus: pending causes, UDMA state, DU transfers in flight.
	RegStatus = 0x00
	// RegIRQAck: write 1s to clear interrupt causes.
	RegIRQAck = 0x04
	// RegOccupancy: the Outgoing FIFO's occupancy in bytes.
	RegOccupancy = 0x08
	// RegThreshold: the Outgoing FIFO's threshold in bytes.
	RegThreshold = 0x0c
	// RegInval: invalidate a partial UDMA initiation.
	RegInval = 0x10
	// RegUDMAStatus: the last UDMA LOAD's Status.
	RegUDMAStatus = 0x14
	// RegNotify: pop a notification record (8 bytes).
	RegNotify = 0x18
	// RegCAMQuery: the page to look up in the DU CAM.
	RegCAMQuery = 0x20
	// RegCAMResult: 1 if the queried page has a DU pending.
	RegCAMResult = 0x24
	// regBytes is the register area's size.
	regBytes = 0x1000
)

// Table layout.
const (
	// OPTBase is the offset of OPT entry 0 in the CSR window.
	OPTBase = 0
	// OPTEntryBytes is the size of one OPT entry in the CSR window.
	OPTEntryBytes = 8
	// IPTEntryBytes is the size of one IPT entry in the CSR window.
	IPTEntryBytes = 4
)

// Bits of the table entries and registers.
const (
	// CSROPTValid, CSROPTAU, CSROPTNotify and CSROPTCombine are the flag
	// bits of an OPT entry's first word.
	CSROPTValid   uint32 = 1 << 31
	CSROPTAU      uint32 = 1 << 30
	CSROPTNotify  uint32 = 1 << 29
	CSROPTCombine uint32 = 1 << 28
	// CSROPTNodeShift and CSROPTNodeMask place DstNode in the first word.
	CSROPTNodeShift        = 16
	CSROPTNodeMask  uint32 = 0xff
	// CSROPTSubpageMask selects the encoded sub-page (bits 0..4).
	CSROPTSubpageMask uint32 = 0x1f
	// CSRIPTExported and CSRIPTInterrupt are an IPT entry's bits.
	CSRIPTExported  uint32 = 1 << 31
	CSRIPTInterrupt uint32 = 1 << 30
	// CSRStatusDest is RegStatus's UDMA DestLoaded bit; CSRStatusQueueShift
	// places the DU transfers in flight.
	CSRStatusDest       uint32 = 1 << 8
	CSRStatusQueueShift        = 16
	// CSRNotifyValid marks a popped notification record's second word.
	CSRNotifyValid uint32 = 1 << 31
)

// csrLatency is the CSR port's cycles from seeing an access to serving it
// (assumed: 1 EISA cycle, an on-card register read).
const csrLatency = 1

// csrState is the register block's state.
type csrState struct {
	camQuery int
	// notify is the notification queue (NotifyQueue records; the incoming
	// path pushes with pushNotify); lastNotify the record the last
	// RegNotify pop returned.
	notify     []Notification
	lastNotify uint32 // high word
}

// IPTBase returns the offset of IPT entry 0 in the CSR window.
func (c Config) IPTBase() uint64 { return OPTBase + OPTEntryBytes*uint64(c.Entries()) }

// RegBase returns the offset of the register area in the CSR window.
func (c Config) RegBase() uint64 { return c.IPTBase() + IPTEntryBytes*uint64(c.Entries()) }

// CSRReg returns the offset of register r (RegStatus...) in the CSR window.
func (c Config) CSRReg(r uint64) uint64 { return c.RegBase() + r }

// CSRBytes returns the CSR window's size for c: both tables and a 4 KB
// register area (SHRIMP: 0x19000, inside the design's 128 KB).
func CSRBytes(c Config) uint64 { return c.RegBase() + regBytes }

// FIFOThreshold returns the Outgoing FIFO's threshold in bytes as the
// kernel last programmed it (RegThreshold; reset Config.FIFOThreshold).
func (n *NI) FIFOThreshold() int { return n.fifoThreshold() }

// pushNotify queues a notification record for RegNotify (the incoming
// path, SH-P18); false if the queue (NotifyQueue records) is full.
func (n *NI) pushNotify(nt Notification) bool {
	q := &n.du.csr
	if len(q.notify) >= n.cfg.NotifyQueue {
		return false
	}
	q.notify = append(q.notify, nt)
	return true
}

// Notifications returns the number of queued notification records.
func (n *NI) Notifications() int { return len(n.du.csr.notify) }

// csrRead returns k bytes at window offset addr, word by word.
func (n *NI) csrRead(now clock.Time, addr uint64, k int) []byte {
	out := make([]byte, k)
	var w [4]byte
	for i := 0; i < k; {
		at := addr + uint64(i)
		word := at &^ 3
		binary.LittleEndian.PutUint32(w[:], n.csrWord(now, word, at == word))
		i += copy(out[i:], w[at-word:])
	}
	n.emitCSR(now, "read", addr, out)
	return out
}

// csrWord reads the register at word-aligned offset off; first tells
// whether the read covers its first byte (RegNotify pops only then).
func (n *NI) csrWord(_ clock.Time, off uint64, first bool) uint32 {
	c := n.cfg
	switch {
	case off < c.IPTBase():
		e := n.optEntry(int(off / OPTEntryBytes))
		if off%OPTEntryBytes == 0 {
			return optWord0(e)
		}
		return e.DstPage
	case off < c.RegBase():
		return iptWord(n.iptGet(int((off - c.IPTBase()) / IPTEntryBytes)))
	}
	d := &n.du
	switch off - c.RegBase() {
	case RegStatus:
		v := uint32(n.irq) & 7
		if d.udma.state == UDMADestLoaded {
			v |= CSRStatusDest
		}
		return v | uint32(min(len(d.reqs), 0xff))<<CSRStatusQueueShift
	case RegOccupancy:
		return uint32(n.fifoOccupancy())
	case RegThreshold:
		return uint32(n.fifoThreshold())
	case RegUDMAStatus:
		return uint32(d.udma.last)
	case RegNotify:
		if !first {
			return 0
		}
		q := &d.csr
		if len(q.notify) == 0 {
			q.lastNotify = 0
			return 0
		}
		nt := q.notify[0]
		q.notify = q.notify[1:]
		q.lastNotify = CSRNotifyValid | uint32(nt.Src)&0xff
		return uint32(nt.Page)
	case RegNotify + 4:
		return d.csr.lastNotify
	case RegCAMResult:
		if n.duPending(d.csr.camQuery) {
			return 1
		}
	}
	return 0
}

func optWord0(e OPTEntry) uint32 {
	var v uint32
	for _, f := range []struct {
		on  bool
		bit uint32
	}{{e.Valid, CSROPTValid}, {e.AU, CSROPTAU}, {e.Notify, CSROPTNotify}, {e.Combine, CSROPTCombine}} {
		if f.on {
			v |= f.bit
		}
	}
	v |= (uint32(e.DstNode) & CSROPTNodeMask) << CSROPTNodeShift
	if e.Subpage > 0 {
		v |= uint32(bits.TrailingZeros(uint(e.Subpage))+1) & CSROPTSubpageMask
	}
	return v
}

func iptWord(e IPTEntry) uint32 {
	var v uint32
	if e.Exported {
		v |= CSRIPTExported
	}
	if e.Interrupt {
		v |= CSRIPTInterrupt
	}
	return v
}

func optFromWords(w0, w1 uint32) OPTEntry {
	e := OPTEntry{Valid: w0&CSROPTValid != 0, AU: w0&CSROPTAU != 0, Notify: w0&CSROPTNotify != 0,
		Combine: w0&CSROPTCombine != 0, DstNode: int(w0 >> CSROPTNodeShift & CSROPTNodeMask), DstPage: w1}
	if s := w0 & CSROPTSubpageMask; s > 0 {
		e.Subpage = 1 << (s - 1)
	}
	return e
}

// csrWrite applies the bytes of one EISA data beat at window offset addr,
// word by word (a partial word changes only the bytes written).
func (n *NI) csrWrite(now clock.Time, addr uint64, data []byte) {
	n.emitCSR(now, "write", addr, data)
	for i := 0; i < len(data); {
		at := addr + uint64(i)
		word := at &^ 3
		var val, mask uint32
		for b := at - word; b < 4 && i < len(data); b++ {
			val |= uint32(data[i]) << (8 * b)
			mask |= 0xff << (8 * b)
			i++
		}
		n.csrSetWord(now, word, val, mask)
	}
}

// csrSetWord writes val into the bytes mask selects of the register at
// word-aligned offset off.
func (n *NI) csrSetWord(now clock.Time, off uint64, val, mask uint32) {
	c := n.cfg
	d := &n.du
	switch {
	case off < c.IPTBase():
		i := int(off / OPTEntryBytes)
		e := n.optEntry(i)
		w0, w1 := optWord0(e), e.DstPage
		if off%OPTEntryBytes == 0 {
			w0 = w0&^mask | val&mask
		} else {
			w1 = w1&^mask | val&mask
		}
		if err := n.setOPT(i, optFromWords(w0, w1)); err != nil {
			n.env.Report(now, d.csrPort.name, "shrimp.csr", "OPT entry %d := %#x %#x: %v", i, w0, w1, err)
		}
		return
	case off < c.RegBase():
		p := int((off - c.IPTBase()) / IPTEntryBytes)
		v := iptWord(n.iptGet(p))&^mask | val&mask
		if err := n.iptSet(p, IPTEntry{Exported: v&CSRIPTExported != 0, Interrupt: v&CSRIPTInterrupt != 0}); err != nil {
			n.env.Report(now, d.csrPort.name, "shrimp.csr", "IPT entry %d := %#x: %v", p, v, err)
		}
		return
	}
	switch off - c.RegBase() {
	case RegIRQAck:
		n.ackIRQ(IRQCause(val & mask))
	case RegThreshold:
		v := uint32(n.fifoThreshold())&^mask | val&mask
		if err := n.setFIFOThreshold(now, int(min(v, 1<<30))); err != nil {
			n.env.Report(now, d.csrPort.name, "shrimp.csr", "RegThreshold := %d: %v", v, err)
		}
	case RegInval:
		n.invalidate(now)
	case RegCAMQuery:
		d.csr.camQuery = int(uint32(d.csr.camQuery)&^mask | val&mask)
	}
}

func (n *NI) emitCSR(now clock.Time, op string, addr uint64, data []byte) {
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name+TargetCSR, "shrimp.csr", trace.Str("op", op),
			trace.Addr("addr", addr), trace.Int("len", int64(len(data))), trace.Hash("hash", data))
	}
}
