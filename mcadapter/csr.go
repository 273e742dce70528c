package mcadapter

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// The CSR window: a PCI target of CSRBytes at the base given to AttachPCI,
// through which software writes the page tables and reads the counters
// and the error status (issue 13 section 1: «CSRs for the tables, counters
// and error status; an interrupt line»). The paper gives no register
// layout, so the map below is assumed; its sizes are derived from the
// tables (design section 2: «a 4-byte CSR per page in each table»).
// Every register is 32 bits wide, «the smallest unit that the 21064 can
// access atomically» (MC-P18), little-endian; software reads and writes
// whole words (a narrower write changes only the bytes written; a read
// wider than a PCI beat returns the words it covers, a beat per cycle).
//
// Offsets from the window base, with T = TxPages and G = GlobalPages (MC1:
// T = G = 16384, so TxTable at 0x00000, RxTable at 0x10000, registers at
// 0x20000):
//
//	0            TX table, entry i at 4*i (i < T):
//	               bit 31 valid, bit 30 loop-back (MC-P8),
//	               bits 15..0 global page (< G; 16 bits hold MaxTxPages).
//	4*T          RX table, entry g at 4*T + 4*g (g < G):
//	               bit 31 valid, bits 30..0 host frame number
//	               (host frame address / PageBytes, below HostBytes).
//	4*(T+G)      registers (CSRRegs + offset):
//	  +0x00 STATUS      read: the latched causes (bit 0 CauseTxInvalid,
//	                    bit 1 CauseRxCRC) and, in bit 31, the interrupt
//	                    line. write: write-1-to-clear; the cause bits set
//	                    in the written word are cleared (clearing
//	                    CauseTxInvalid also clears the transmit table's
//	                    fault status; PAGE is cleared when no cause is
//	                    left latched); the line falls when no
//	                    enabled cause is left. Writing 0xffffffff is
//	                    Adapter.ClearStatus.
//	  +0x04 PAGE        read: the page of the last fault: the window page
//	                    of a transmit fault (CauseTxInvalid) or the global
//	                    page in the header of a packet dropped for its
//	                    link CRC (CauseRxCRC). Writes are ignored.
//	  +0x08 IRQ_ENABLE  read/write: the causes that drive the interrupt
//	                    line. Reset value 0x3: every cause enabled
//	                    (assumed, so that an error interrupts software
//	                    that never programmed the adapter).
//	  +0x10 + 8*k       counter k, 64 bits: low word at +0, high word at
//	                    +4, read only (writes ignored); k in CounterNames
//	                    order (TxPackets, TxBytes, TxInvalid, PIOReads,
//	                    TxRetries, TxWaitCycles, RxPackets, RxBytes,
//	                    RxUnmapped, RxCRC, RxDMAs).
//
// Other offsets read as zero and ignore writes. A table write that names a
// global page or host frame outside its range is refused (the entry keeps
// its value) and reported as an mc.csr violation: a driver bug.
//
// The block is the adapter's own PCI target port, served in the adapter's
// tick before the receive and transmit stages, so a table write takes
// effect at one defined point of the cycle and a counter read sees the
// counts of the previous edges, whatever order the components tick in
// (rtl/mem's Registers, a component of its own, would change the tables
// in the middle of the adapter's cycle or not, depending on that order).
// Timing as Registers with latency 1: a request visible at edge t is
// served at t+1 (a read's data pushed, or a write's beat applied, one beat
// per cycle). assumed: one cycle per access, an on-card SRAM or register
// read (design section 2: «table lookup 1 cycle»).
//
// The interrupt line is one level-sensitive line (assumed: conventional
// PCI INTA#; the paper describes none): asserted while a latched cause is
// enabled. OnInterrupt runs on each rising edge.
type csrBlock struct {
	ch     *mem.Channel
	cur    *mem.Req // the access being served
	ready  clock.Time
	off    int    // bytes of the access moved so far
	rdata  []byte // a read's data, sent beat by beat
	enable uint32

	sigIRQ, sigCause *waves.Signal
}

// Register offsets within the register area (CSRRegs).
const (
	// CSRStatus is the status register: causes, line in bit 31; write 1 to
	// clear.
	CSRStatus = 0x00
	// CSRPage is the page of the last fault (Status.Page).
	CSRPage = 0x04
	// CSRIRQEnable is the interrupt enable mask (reset: every cause).
	CSRIRQEnable = 0x08
	// CSRCounters is the first counter (CounterNames order, 8 bytes each).
	CSRCounters = 0x10
)

// Bits of a table entry word.
const (
	// CSREntryValid is the valid bit of a TX or RX table entry.
	CSREntryValid uint32 = 1 << 31
	// CSRTxLoopback is the loop-back bit of a TX table entry.
	CSRTxLoopback uint32 = 1 << 30
	// CSRTxPageMask selects a TX entry's global page.
	CSRTxPageMask uint32 = 0xffff
	// CSRRxFrameMask selects an RX entry's host frame number.
	CSRRxFrameMask uint32 = 1<<31 - 1
	// CSRStatusLine is the interrupt line's bit in the status register.
	CSRStatusLine uint32 = 1 << 31
	// allCauses are the defined cause bits.
	allCauses = CauseTxInvalid | CauseRxCRC
)

// CounterNames are the counters in the order of their CSRs.
var CounterNames = []string{"TxPackets", "TxBytes", "TxInvalid", "PIOReads", "TxRetries", "TxWaitCycles",
	"RxPackets", "RxBytes", "RxUnmapped", "RxCRC", "RxDMAs"}

func (c Counters) list() []uint64 {
	return []uint64{c.TxPackets, c.TxBytes, c.TxInvalid, c.PIOReads, c.TxRetries, c.TxWaitCycles,
		c.RxPackets, c.RxBytes, c.RxUnmapped, c.RxCRC, c.RxDMAs}
}

// CSRTxTable returns the offset of TX table entry 0 in the CSR window.
func (c Config) CSRTxTable() uint64 { return 0 }

// CSRRxTable returns the offset of RX table entry 0 in the CSR window.
func (c Config) CSRRxTable() uint64 { return 4 * uint64(c.TxPages) }

// CSRRegs returns the offset of the register area in the CSR window.
func (c Config) CSRRegs() uint64 { return 4 * uint64(c.TxPages+c.GlobalPages) }

func (a *Adapter) buildCSR() error {
	if end := a.cfg.CSRRegs() + CSRCounters + 8*uint64(len(CounterNames)); a.cfg.CSRBytes < end {
		return fmt.Errorf("%s: mcadapter: CSRBytes %d must hold both tables and the registers (%d bytes)", a.name, a.cfg.CSRBytes, end)
	}
	a.csr.enable = allCauses
	scope := a.name + ".CSR"
	// irq is the interrupt line; cause the latched cause bits (bit 0
	// CauseTxInvalid, bit 1 CauseRxCRC).
	a.csr.sigIRQ = a.env.Waves.Wire(scope, "irq", 1)
	a.csr.sigCause = a.env.Waves.Integer(scope, "cause", 2)
	return nil
}

// IRQEnable returns the interrupt enable mask.
func (a *Adapter) IRQEnable() uint32 { return a.csr.enable }

// attachCSR maps the CSR window at base on pci.
func (a *Adapter) attachCSR(pci *bus.Bus, base uint64) error {
	if a.csr.ch != nil {
		return fmt.Errorf("CSR window already attached")
	}
	ch, err := mem.NewChannel(a.env, a.name+".CSR.Port", pci.Config().WidthBytes, 2)
	if err != nil {
		return err
	}
	ch.ConnectTarget(a)
	if err := pci.AddTarget(a.name+".CSR", base, a.cfg.CSRBytes, ch); err != nil {
		return err
	}
	a.csr.ch = ch
	return nil
}

// tickCSR serves the CSR port for one cycle (the first stage of the
// adapter's tick).
func (a *Adapter) tickCSR(now clock.Time) bool {
	c := &a.csr
	if c.ch == nil {
		return false
	}
	if c.cur == nil {
		b, ok := c.ch.Down.Peek(now)
		if !ok {
			return false
		}
		if !b.First {
			a.env.Report(now, a.name+".CSR", "mc.csr", "data beat without a request: %v", b)
			c.ch.Down.Pop(now)
			return true
		}
		c.cur, c.off = b.Req, 0
		c.ready = a.Clock().After(now, 1)
		if c.cur.Op == mem.Read {
			c.ch.Down.Pop(now)
		}
		a.WakeAt(c.ready)
		return false
	}
	if now < c.ready {
		a.WakeAt(c.ready)
		return false
	}
	if c.cur.Op == mem.Read {
		if !c.ch.Up.CanPush(now) {
			return false
		}
		if c.off == 0 {
			// The registers are read at once, when the first beat goes.
			c.rdata = a.csrRead(now, c.cur.Addr, c.cur.Len)
			a.emitCSR(now, "read", c.cur.Addr, c.rdata)
		}
		n := mem.FirstChunk(c.cur.Addr+uint64(c.off), c.cur.Len-c.off, c.ch.Width)
		last := c.off+n == c.cur.Len
		c.ch.Up.Push(now, mem.Beat{Req: c.cur, Data: c.rdata[c.off : c.off+n], First: c.off == 0, Last: last})
		c.off += n
		if last {
			c.cur, c.rdata = nil, nil
		}
		return true
	}
	b, ok := c.ch.Down.Peek(now)
	if !ok {
		return false
	}
	if b.Last && !c.cur.Posted && !c.ch.Up.CanPush(now) {
		return false
	}
	c.ch.Down.Pop(now)
	addr := c.cur.Addr + uint64(c.off)
	c.off += len(b.Data)
	a.emitCSR(now, "write", addr, b.Data)
	a.csrWrite(now, addr, b.Data)
	if b.Last {
		if !c.cur.Posted {
			c.ch.Up.Push(now, mem.Beat{Req: c.cur, First: true, Last: true})
		}
		c.cur = nil
	}
	return true
}

func (a *Adapter) emitCSR(now clock.Time, op string, addr uint64, data []byte) {
	if a.env.Trace.Enabled() {
		a.env.Trace.Emit(now, a.Clock().CycleAt(now), a.name+".CSR", "mc.csr", trace.Str("op", op),
			trace.Addr("addr", addr), trace.Int("len", int64(len(data))), trace.Hash("hash", data))
	}
}

func (a *Adapter) idleCSR() bool { return a.csr.cur == nil }

// csrRead returns n bytes at window offset addr, word by word.
func (a *Adapter) csrRead(_ clock.Time, addr uint64, n int) []byte {
	out := make([]byte, n)
	var w [4]byte
	for i := 0; i < n; {
		at := addr + uint64(i)
		word := at &^ 3
		binary.LittleEndian.PutUint32(w[:], a.csrWord(word))
		k := copy(out[i:], w[at-word:])
		i += k
	}
	return out
}

// csrWord reads the 32-bit register at word-aligned offset off.
func (a *Adapter) csrWord(off uint64) uint32 {
	c := a.cfg
	switch {
	case off < c.CSRRxTable():
		e, _ := a.TxTable.Entry(int(off / 4))
		return csrTxWord(e)
	case off < c.CSRRegs():
		e, _ := a.RxTable.Entry(int((off - c.CSRRxTable()) / 4))
		return a.csrRxWord(e)
	}
	switch r := off - c.CSRRegs(); {
	case r == CSRStatus:
		v := a.status.Cause
		if a.status.Pending {
			v |= CSRStatusLine
		}
		return v
	case r == CSRPage:
		return uint32(a.status.Page)
	case r == CSRIRQEnable:
		return a.csr.enable
	case r >= CSRCounters && r < CSRCounters+8*uint64(len(CounterNames)):
		k := (r - CSRCounters) / 8
		v := a.counters.list()[k]
		if (r-CSRCounters)%8 == 4 {
			return uint32(v >> 32)
		}
		return uint32(v)
	}
	return 0
}

func csrTxWord(e TxEntry) uint32 {
	v := uint32(e.GlobalPage) & CSRTxPageMask
	if e.Valid {
		v |= CSREntryValid
	}
	if e.LoopBack {
		v |= CSRTxLoopback
	}
	return v
}

func (a *Adapter) csrRxWord(e RxEntry) uint32 {
	v := uint32(e.HostFrame/uint64(a.cfg.PageBytes)) & CSRRxFrameMask
	if e.Valid {
		v |= CSREntryValid
	}
	return v
}

// csrWrite applies the bytes of one PCI data beat at window offset addr,
// word by word (a partial word changes only the bytes written).
func (a *Adapter) csrWrite(now clock.Time, addr uint64, data []byte) {
	for i := 0; i < len(data); {
		at := addr + uint64(i)
		word := at &^ 3
		var val, mask uint32
		for b := at - word; b < 4 && i < len(data); b++ {
			val |= uint32(data[i]) << (8 * b)
			mask |= 0xff << (8 * b)
			i++
		}
		a.csrSetWord(now, word, val, mask)
	}
}

// csrSetWord writes val into the bytes mask selects of the register at
// word-aligned offset off.
func (a *Adapter) csrSetWord(now clock.Time, off uint64, val, mask uint32) {
	c := a.cfg
	merged := a.csrWord(off)&^mask | val&mask
	switch {
	case off < c.CSRRxTable():
		idx := int(off / 4)
		e := TxEntry{Valid: merged&CSREntryValid != 0, LoopBack: merged&CSRTxLoopback != 0, GlobalPage: int(merged & CSRTxPageMask)}
		if err := a.TxTable.Set(idx, e); err != nil {
			a.env.Report(now, a.name+".CSR", "mc.csr", "TX table entry %d := %#x: %v", idx, merged, err)
		}
		return
	case off < c.CSRRegs():
		g := int((off - c.CSRRxTable()) / 4)
		e := RxEntry{Valid: merged&CSREntryValid != 0, HostFrame: uint64(merged&CSRRxFrameMask) * uint64(c.PageBytes)}
		if err := a.RxTable.Set(g, e); err != nil {
			a.env.Report(now, a.name+".CSR", "mc.csr", "RX table entry %d := %#x: %v", g, merged, err)
		}
		return
	}
	switch off - c.CSRRegs() {
	case CSRStatus:
		cl := val & mask & allCauses
		a.status.Cause &^= cl
		if cl&CauseTxInvalid != 0 {
			a.TxTable.ClearStatus()
		}
		if a.status.Cause == 0 {
			a.status.Page = 0
		}
		a.updateIRQ(now)
	case CSRIRQEnable:
		a.csr.enable = merged & allCauses
		a.updateIRQ(now)
	}
}

// updateIRQ drives the interrupt line from the latched causes and the
// enable mask, calling OnInterrupt on a rising edge.
func (a *Adapter) updateIRQ(now clock.Time) {
	a.csr.sigCause.Set(now, uint64(a.status.Cause))
	line := a.status.Cause&a.csr.enable != 0
	a.csr.sigIRQ.SetBool(now, line)
	rising := line && !a.status.Pending
	a.status.Pending = line
	if rising && a.onIRQ != nil {
		a.onIRQ(now)
	}
}
