package fore

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
)

// The TURBOchannel slave. The board answers every access to its window
// with no wait states (AT-P4 «Processor accesses to these FIFOs are
// performed a word at a time and run with no wait states»): a request
// visible at edge t (one cycle after the bus's address phase) is served
// from edge t, one 32-bit beat per TURBOchannel cycle, so a read's beat k
// is in the bus's hands for its data phase k and a 56-byte read of RxPort
// runs ARB, ADDR, DECODE, 14 back-to-back data phases and IDLE: the
// paper's «14 (40 nanosecond) I/O bus read cycles» (AT-P5) of data. A
// write beat is taken in the cycle it becomes visible, one cycle after its
// data phase (the target channel is a register). A single-word access is
// the same transaction with one data phase (the word-at-a-time access of
// AT-P4).
//
// Register map (offsets in the window, little-endian 32-bit words):
//
//	TxPort     0x00-0x37  W   cell: word 0 header bytes 0-3, word 1 ignored
//	                          (the board makes the HEC), words 2-13 the
//	                          payload (bytes 46-47 overwritten by the CRC-10);
//	                          words in order, word 13 queues the cell
//	RxPort     0x40-0x77  R   head cell: word 0 header bytes 0-3, word 1 the
//	                          HEC in its low byte, words 2-13 the payload;
//	                          reading word 13 pops it
//	RegStatus  0x80       R   bits 0-9 RX cells, 16-21 TX free cells, 31 IRQ
//	RegControl 0x84       RW  bit 0 RX interrupt enable
//	RegRxDrops 0x88       R   RX-full drops; 0x8C HEC discards; 0x90 CRC
//	                          discards
//	RegCounters 0x94      R   cells sent; 0x98 cells received
//
// Checker errors (software's mistakes, each reported once per access):
// fore.txfull (a TxPort word written while the TX FIFO is full, AT-P17:
// software reads STATUS first), fore.txseq (TxPort words out of order or
// not whole words), fore.rxempty (RxPort read while the RX FIFO is empty;
// the data is zeros), fore.access (a read of a write-only or unused
// offset, a write to a read-only one), fore.protocol (a malformed bus
// transaction).

// tcPort is the slave port: the access being served.
type tcPort struct {
	tc  *bus.Bus
	ch  *mem.Channel
	cur *mem.Req
	off int
	// reported: this access already raised its checker error.
	reported bool
}

// AttachTC makes the board a zero-wait-state target (AT-P4) on tc for the
// window [base, base+WindowBytes), named after the board. tc must be a
// 32-bit TURBOchannel on the board's Clock. Call it once, before the run.
func (f *Board) AttachTC(tc *bus.Bus, base uint64) error {
	switch {
	case tc == nil:
		return fmt.Errorf("%s: AttachTC: no bus", f.name)
	case f.port.ch != nil:
		return fmt.Errorf("%s: AttachTC: already attached", f.name)
	case tc.Config().WidthBytes != 4:
		return fmt.Errorf("%s: AttachTC: bus %s is %d bytes wide, the TURBOchannel is 4", f.name, tc.Name(), tc.Config().WidthBytes)
	case tc.Config().Clock != f.cfg.Clock:
		return fmt.Errorf("%s: AttachTC: bus %s runs at %v, the board's Clock is %v", f.name, tc.Name(), tc.Config().Clock, f.cfg.Clock)
	case base%WindowBytes != 0:
		return fmt.Errorf("%s: AttachTC: base %#x is not aligned to the %d-byte window", f.name, base, WindowBytes)
	}
	ch, err := mem.NewChannel(f.env, f.name+".Port", 4, 2)
	if err != nil {
		return err
	}
	ch.ConnectTarget(f.tcSide)
	if err := tc.AddTarget(f.name, base, WindowBytes, ch); err != nil {
		return fmt.Errorf("%s: AttachTC: %w", f.name, err)
	}
	// AT-P4: «run with no wait states».
	if err := tc.SetTargetWait(f.name, 0); err != nil {
		return fmt.Errorf("%s: AttachTC: %w", f.name, err)
	}
	f.port = tcPort{tc: tc, ch: ch}
	return nil
}

// tickTC serves the slave port for one TURBOchannel cycle: at most one
// beat moves.
func (f *Board) tickTC(now clock.Time) bool {
	p := &f.port
	if p.ch == nil {
		return false
	}
	if p.cur == nil {
		b, ok := p.ch.Down.Peek(now)
		if !ok {
			return false
		}
		if !b.First {
			f.env.Report(now, f.name, "fore.protocol", "data beat without a request: %v", b)
			p.ch.Down.Pop(now)
			return true
		}
		p.cur, p.off, p.reported = b.Req, 0, false
		if p.cur.Op == mem.Read {
			p.ch.Down.Pop(now) // the request beat
		}
	}
	if p.cur.Op == mem.Read {
		if !p.ch.Up.CanPush(now) {
			return false // the producer wake-up brings us back
		}
		k := mem.FirstChunk(p.cur.Addr+uint64(p.off), p.cur.Len-p.off, p.ch.Width)
		data := f.readBytes(now, p.cur.Addr+uint64(p.off), k)
		last := p.off+k == p.cur.Len
		p.ch.Up.Push(now, mem.Beat{Req: p.cur, Data: data, First: p.off == 0, Last: last})
		p.off += k
		if last {
			p.cur = nil
		}
		return true
	}
	b, ok := p.ch.Down.Peek(now)
	if !ok {
		return false
	}
	if b.Last && !p.cur.Posted && !p.ch.Up.CanPush(now) {
		return false
	}
	p.ch.Down.Pop(now)
	if b.Req != p.cur {
		f.env.Report(now, f.name, "fore.protocol", "data beat of %v inside %v", b.Req, p.cur)
	}
	f.writeBytes(now, p.cur.Addr+uint64(p.off), b.Data)
	p.off += len(b.Data)
	if b.Last {
		if !p.cur.Posted {
			p.ch.Up.Push(now, mem.Beat{Req: p.cur, First: true, Last: true})
		}
		p.cur = nil
	}
	return true
}

// readBytes returns the n bytes at window offset addr, inside one word.
func (f *Board) readBytes(now clock.Time, addr uint64, n int) []byte {
	w := addr &^ 3
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], f.readWord(now, w))
	out := make([]byte, n)
	copy(out, b[addr-w:])
	return out
}

// report raises the current access's checker error, once per access.
func (f *Board) report(now clock.Time, rule, format string, args ...any) {
	if f.port.reported {
		return
	}
	f.port.reported = true
	f.env.Report(now, f.name, rule, format, args...)
}

// readWord is one word read of the window at offset w (word-aligned).
func (f *Board) readWord(now clock.Time, w uint64) uint32 {
	switch {
	case w >= RxPort && w < RxPort+CellBytes:
		return f.rxWord(now, int(w-RxPort)/4)
	case w == RegStatus:
		return f.status(now)
	case w == RegControl:
		return f.control
	case w == RegRxDrops:
		return uint32(f.counters.RxDropFull)
	case w == RegHECDrops:
		return uint32(f.counters.RxDropHEC)
	case w == RegCRCDrops:
		return uint32(f.counters.RxDropCRC)
	case w == RegTxCells:
		return uint32(f.counters.TxCells)
	case w == RegRxCells:
		return uint32(f.counters.RxCells)
	case w < CellBytes:
		f.report(now, "fore.access", "read of the write-only TX port at %#x", w)
	default:
		f.report(now, "fore.access", "read of %#x, no register there", w)
	}
	return 0
}

// status is STATUS's value at now: the RX cells software can read (those
// that entered the RX FIFO before now), the TX FIFO's free cells as a
// writer sees them at now, the interrupt line.
func (f *Board) status(now clock.Time) uint32 {
	f.statusReads++
	rx := f.rxVisible(now)
	if f.rxCount > 0 && f.statusReads%uint64(f.rxCount) == 0 {
		rx++ // mutation: one cell too many
	}
	v := uint32(min(rx, StatusRxMask)) | uint32(f.tx.fifo.Free(now))<<StatusTxShift
	if f.irqLine {
		v |= StatusIRQ
	}
	return v
}

// writeBytes takes one beat written at window offset addr.
func (f *Board) writeBytes(now clock.Time, addr uint64, data []byte) {
	w := addr &^ 3
	whole := addr == w && len(data) == 4
	switch {
	case w < CellBytes:
		if !whole {
			f.report(now, "fore.txseq", "TX port write of %d bytes at %#x: the port takes whole words", len(data), addr)
			f.txAbort()
			return
		}
		f.txWord(now, int(w/4), data)
	case w == RegControl:
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], f.control)
		copy(b[addr-w:], data)
		f.setControl(now, binary.LittleEndian.Uint32(b[:]))
	default:
		f.report(now, "fore.access", "write of %d bytes at %#x, a read-only or unused offset", len(data), addr)
	}
}

// setControl writes CONTROL: only bit 0 (the RX interrupt enable) exists.
func (f *Board) setControl(now clock.Time, v uint32) {
	f.control = v & ControlIRQEnable
	f.sigEnable.SetBool(now, f.IRQEnabled())
	if f.env.Trace.Enabled() {
		f.env.Trace.Emit(now, f.cfg.Clock.CycleAt(now), f.name, "fore.control", trace.Bool("irq_enable", f.IRQEnabled()))
	}
	f.changed(now)
}
