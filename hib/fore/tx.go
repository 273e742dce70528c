package fore

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/trace"
)

// cellBuf is a cell inside the board: its id, the 5 header bytes (HEC
// included) and the 48-byte payload.
type cellBuf struct {
	id      uint64
	hdr     [atm.HeaderBytes]byte
	payload [atm.PayloadBytes]byte
	// at is when the cell entered its FIFO.
	at clock.Time
}

// txPath is the transmit side: the cell assembler behind TxPort, the TX
// FIFO and the pipe to the link.
type txPath struct {
	fifo *fifo.FIFO[cellBuf]
	// asm holds the words of the cell being written; next is the word
	// expected next; overflow: a word of it found the FIFO full, so the
	// cell is lost.
	asm      [CellBytes]byte
	next     int
	overflow bool
	seq      uint64
	dropNext func(c *Cell) bool
	send     *link.Dir
	recv     *link.Dir
}

// buildTx creates the TX FIFO: TxCells cells of 53 bytes.
func (f *Board) buildTx() error {
	q, err := fifo.MakeBuilder[cellBuf]().WithEnv(f.env).WithDepth(f.cfg.TxCells).WithWidth(8 * atm.CellBytes).
		Build(f.name + ".TxFIFO")
	if err != nil {
		return err
	}
	q.SetConsumer(f.lnSide)
	f.tx.fifo = q
	return nil
}

// txAbort discards the cell being assembled.
func (f *Board) txAbort() { f.tx.next, f.tx.overflow = 0, false }

// txWord takes word w of a cell written to TxPort. Words must come in
// order 0..13; word 13 completes the cell: the board makes the HEC of
// word 0's header bytes (ITU-T I.432, atm.HEC) and seals the payload's
// CRC-10 (assumed, design D3), gives the cell its id and queues it in the
// TX FIFO. A word written while the FIFO is full is an overflow
// (fore.txfull, AT-P17 «delivering an exception should the FIFO
// overflow»: software must read STATUS first); the cell it belongs to is
// lost.
func (f *Board) txWord(now clock.Time, w int, data []byte) {
	t := &f.tx
	if w != t.next {
		f.report(now, "fore.txseq", "TX port word %d written, word %d expected", w, t.next)
		f.txAbort()
		if w != 0 {
			return
		}
	}
	if t.fifo.Free(now) == 0 {
		f.counters.TxOverflow++
		if !t.overflow {
			t.overflow = true
			f.env.Report(now, f.name, "fore.txfull", "TX port written with the TX FIFO full (%d cells): software must read STATUS first (AT-P17)", f.cfg.TxCells)
		}
	}
	copy(t.asm[w*4:], data)
	t.next++
	if t.next < CellWords {
		return
	}
	lost := t.overflow
	f.txAbort()
	if lost {
		return
	}
	var c cellBuf
	copy(c.hdr[:4], t.asm[:4])
	c.hdr[4] = atm.HEC(c.hdr[:4])
	copy(c.payload[:], t.asm[8:])
	SealPayload(&c.payload)
	t.seq++
	c.id = uint64(f.node)<<40 | t.seq
	c.at = now
	t.fifo.Push(now, c)
	if f.onTx != nil || f.env.Trace.Enabled() {
		var v Cell
		f.viewOf(now, &c, &v)
		if f.env.Trace.Enabled() {
			f.emitCell(now, f.cfg.Clock, "fore.tx", &v, t.fifo.Len())
		}
		if f.onTx != nil {
			f.onTx(now, &v)
		}
	}
}

// viewOf fills the hooks' view of a board cell.
func (f *Board) viewOf(now clock.Time, c *cellBuf, v *Cell) {
	*v = Cell{ID: c.id, Node: f.node, Payload: c.payload, At: now}
	v.Header, _ = headerOf(c.hdr[:])
}

// ConnectLink connects the board to its link: p.Send is the direction it
// sends on, p.Recv the one it receives from (a port of an atm.Star). For a
// direct two-board link l (atm.LinkConfig()), board A takes
// star.Port{Send: l.From(link.A), Recv: l.From(link.B)} and board B the
// converse; the board names itself only as the sender of p.Send and the
// receiver of p.Recv, so the far end may be a switch or another board.
// The link must run on the board's Config.Link clock (the pipes count its
// cycles).
func (f *Board) ConnectLink(p star.Port) error {
	switch {
	case p.Send == nil || p.Recv == nil:
		return fmt.Errorf("%s: ConnectLink: port without links", f.name)
	case f.tx.send != nil:
		return fmt.Errorf("%s: ConnectLink: already connected", f.name)
	case p.Send.VCs() < 1 || p.Recv.VCs() < 1:
		return fmt.Errorf("%s: ConnectLink: a direction without VCs", f.name)
	}
	p.Send.SetSender(f.lnSide)
	p.Recv.SetReceiver(f.lnSide)
	f.tx.send, f.tx.recv = p.Send, p.Recv
	return nil
}

// DropNextTx arms a directed fault: the next TX cell for which match
// returns true is dropped at the wire (counted as DropTest, reported to
// OnDrop, never sent). A nil match disarms it.
func (f *Board) DropNextTx(match func(c *Cell) bool) { f.tx.dropNext = match }

// tickTx is the TX pipe: the head cell of the TX FIFO goes to the wire
// CellLatency link cycles after the link side first sees it (the first
// link edge after it entered the FIFO), once the link is free. The cell
// keeps its FIFO slot until it leaves; the latency is a pure delay (cells
// behind it wait only for the link).
func (f *Board) tickTx(now clock.Time) bool {
	t := &f.tx
	if t.send == nil {
		return false
	}
	head := t.fifo.Front(now)
	if head == nil {
		return false
	}
	lc := f.cfg.Link.Clock
	ready := lc.After(lc.NextEdge(head.at), clock.Cycle(f.cfg.CellLatency))
	if now < ready {
		f.lnSide.WakeAt(ready)
		return false
	}
	if !t.send.CanSend(now, 0) {
		f.lnSide.WakeAt(t.send.BusyUntil())
		return false
	}
	c := *head
	t.fifo.Drop(now)
	var v Cell
	f.viewOf(now, &c, &v)
	if t.dropNext != nil && t.dropNext(&v) {
		t.dropNext = nil
		f.counters.TxDropTest++
		f.drop(now, lc, &v, DropTest)
		return true
	}
	fl := link.Flit{Head: true, Tail: true, Size: atm.CellBytes, Data: append([]byte(nil), c.payload[:]...), Stamp: now, Info: &link.PacketInfo{ID: c.id, Src: f.node, Route: append([]byte(nil), c.hdr[:]...)}, Carries: link.HasRoute}
	t.send.Send(now, &fl)
	f.counters.TxCells++
	f.env.Monitor.Progress(now) // a cell left for the network
	if f.env.Trace.Enabled() {
		f.emitCell(now, lc, "fore.wire", &v, t.fifo.Len())
	}
	if f.onWire != nil {
		f.onWire(now, &v)
	}
	if t.fifo.Len() > 0 {
		f.lnSide.WakeAt(t.send.BusyUntil())
	}
	return false
}

// idleTx reports whether no cell is being written or waits to be sent.
func (f *Board) idleTx() bool { return f.tx.next == 0 && f.tx.fifo.Len() == 0 }

// drop counts nothing itself: it traces and reports one discarded cell.
func (f *Board) drop(now clock.Time, clk clock.Clock, c *Cell, why DropReason) {
	if f.env.Trace.Enabled() {
		f.env.Trace.Emit(now, clk.CycleAt(now), f.name, "fore.drop", trace.Uint("cell", c.ID),
			trace.Int("vci", int64(c.Header.VCI)), trace.Str("reason", why.String()))
	}
	if f.onDrop != nil {
		f.onDrop(now, c, why)
	}
}
