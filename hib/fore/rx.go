package fore

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
)

// rxPath is the receive side: the pipe from the link and the RX FIFO.
type rxPath struct {
	fifo *fifo.FIFO[cellBuf]
	// pipe holds received cells until their CellLatency is over, in
	// order of ready.
	pipe []rxArrival
}

// rxArrival is a cell in the RX pipe.
type rxArrival struct {
	f     link.Flit
	ready clock.Time
}

// buildRx creates the RX FIFO: RxCells cells of 53 bytes.
func (f *Board) buildRx() error {
	q, err := fifo.MakeBuilder[cellBuf]().WithEnv(f.env).WithDepth(f.cfg.RxCells).WithWidth(8 * atm.CellBytes).
		Build(f.name + ".RxFIFO")
	if err != nil {
		return err
	}
	f.rx.fifo = q
	return nil
}

// tickRx takes the cell the link delivered (at most one per link cycle;
// a cell is 53 of them) into the RX pipe and moves the head cell, once
// its CellLatency is over, through the checks into the RX FIFO.
func (f *Board) tickRx(now clock.Time) bool {
	r := &f.rx
	more := false
	if f.tx.recv != nil {
		q := f.tx.recv.Rx(0)
		if fl, ok := q.Pop(now); ok {
			lc := f.cfg.Link.Clock
			r.pipe = append(r.pipe, rxArrival{f: fl, ready: lc.After(now, clock.Cycle(f.cfg.CellLatency))})
			more = q.Len() > 0
		}
	}
	if len(r.pipe) > 0 && r.pipe[0].ready <= now {
		// One cell a link cycle through the checks into the FIFO (only
		// injected cells can be ready together: the link delivers one
		// per 53 cycles).
		a := r.pipe[0]
		r.pipe[0] = rxArrival{}
		r.pipe = r.pipe[1:]
		f.receive(now, &a.f)
	}
	if len(r.pipe) > 0 {
		f.lnSide.WakeAt(r.pipe[0].ready) // the next edge if it is ready now
	}
	return more
}

// Inject delivers flit as if it had arrived from the wire: the link side
// takes it at its first edge after now and it goes through the RX pipe
// and the checks like any cell (negative specs forge cells with it).
// flit should be an ATM cell flit (atm.NewCell); its Route is taken as
// the 5 header bytes, checked by the HEC, and its Data as the payload,
// checked by the CRC-10 (a payload that is not 48 bytes fails it).
func (f *Board) Inject(now clock.Time, flit link.Flit) {
	lc := f.cfg.Link.Clock
	ready := lc.After(lc.NextEdge(now), clock.Cycle(f.cfg.CellLatency))
	flit.SetRoute(append([]byte(nil), flit.Route()...)) // its own copy: the caller's flit is left alone
	flit.Data = append([]byte(nil), flit.Data...)
	r := &f.rx
	i := len(r.pipe)
	for i > 0 && r.pipe[i-1].ready > ready {
		i--
	}
	r.pipe = append(r.pipe, rxArrival{})
	copy(r.pipe[i+1:], r.pipe[i:])
	r.pipe[i] = rxArrival{f: flit, ready: ready}
	f.lnSide.WakeAt(r.pipe[0].ready)
}

// receive checks one cell leaving the RX pipe and queues it: a header
// whose HEC does not match is discarded (ITU-T I.432; assumed: the
// TCA-100 checks the HEC, the paper names no check), then a payload
// failing the CRC-10 (assumed, design D3), then a cell finding the RX
// FIFO full (issue 15 section 1 «a full RX FIFO drops and counts»). The
// link's own CRC-32 mark (Flit.Bad) is not looked at: the TCA-100 has no
// such check (design F7).
func (f *Board) receive(now clock.Time, fl *link.Flit) {
	var v Cell
	f.cellOf(now, fl, &v)
	lc := f.cfg.Link.Clock
	_, hecOK := headerOf(fl.Route())
	switch {
	case !hecOK:
		f.counters.RxDropHEC++
		f.rxDrop(now, &v, DropHEC)
		return
	case !f.crcOff && (len(fl.Data) != atm.PayloadBytes || !crcOK(&v.Payload)):
		f.counters.RxDropCRC++
		f.rxDrop(now, &v, DropCRC)
		return
	case f.rx.fifo.Free(now) == 0:
		f.counters.RxDropFull++
		f.rxDrop(now, &v, DropRxFull)
		return
	}
	c := cellBuf{id: fl.Packet(), payload: v.Payload, at: now}
	copy(c.hdr[:], fl.Route())
	f.rx.fifo.Push(now, c)
	f.counters.RxCells++
	f.env.Monitor.Progress(now) // a cell arrived
	if f.env.Trace.Enabled() {
		f.emitCell(now, lc, "fore.rx", &v, f.rx.fifo.Len())
	}
	if f.onRx != nil {
		f.onRx(now, &v)
	}
	f.changed(now)
}

// rxDrop reports a discarded received cell.
func (f *Board) rxDrop(now clock.Time, c *Cell, why DropReason) {
	cnt := f.counters.RxDropFull + f.counters.RxDropHEC + f.counters.RxDropCRC
	f.sigRxDrops.Set(now, cnt)
	f.drop(now, f.cfg.Link.Clock, c, why)
}

// rxVisible returns the RX FIFO's cells software can see at now: those
// pushed before now.
func (f *Board) rxVisible(now clock.Time) int {
	q := f.rx.fifo
	n := q.Len()
	for n > 0 {
		if _, ok := q.PeekAt(now, n-1); ok {
			break
		}
		n--
	}
	return n
}

// rxWord is a read of RxPort word w: the head cell's word, or zeros and
// fore.rxempty if the FIFO holds no cell software can see. Reading word
// 13 pops the cell (OnPop).
func (f *Board) rxWord(now clock.Time, w int) uint32 {
	q := f.rx.fifo
	head := q.Front(now)
	if head == nil {
		f.counters.RxUnderrun++
		f.report(now, "fore.rxempty", "RX port word %d read with the RX FIFO empty", w)
		return 0
	}
	var v uint32
	switch w {
	case 0:
		v = uint32(head.hdr[0]) | uint32(head.hdr[1])<<8 | uint32(head.hdr[2])<<16 | uint32(head.hdr[3])<<24
	case 1:
		v = uint32(head.hdr[4])
	default:
		p := head.payload[(w-2)*4:]
		v = uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
	}
	if w == CellWords-1 {
		c := *head
		q.Drop(now)
		if f.onPop != nil || f.env.Trace.Enabled() {
			var cv Cell
			f.viewOf(now, &c, &cv)
			if f.env.Trace.Enabled() {
				f.emitCell(now, f.cfg.Clock, "fore.pop", &cv, q.Len())
			}
			if f.onPop != nil {
				f.onPop(now, &cv)
			}
		}
		f.changed(now)
	}
	return v
}
