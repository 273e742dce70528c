package mcadapter

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
)

// ErrNoRemoteRead is the error a PIO read of the transmit window completes
// with: the first-generation Memory Channel has no remote read, MC-P3
// «Currently, the network only provides write-access capabilities.»
// (section 2.1; «Future generations will also include read-access»).
const ErrNoRemoteRead = "mcadapter: no remote read on MC1 (MC-P3)"

// txPort is the TX FIFO write port's state: the posted write burst being
// written, cut at page ends, and the beat it holds in its wait states.
type txPort struct {
	// req is the burst as the target sees it (address relative to the
	// window); got the bytes taken so far.
	req *mem.Req
	got int
	// pages is the burst cut at page ends (TxPageTable.SplitAtPages);
	// page indexes the piece being written, pageOff its bytes taken.
	pages   []Piece
	page    int
	pageOff int
	// valid, global and loop are the transmit entry of the piece being
	// written, looked up at its first byte.
	valid  bool
	global uint64
	loop   bool
	// hold: the channel's head beat is written into the FIFO and the
	// port keeps the channel full until popAt (the next beat's wait
	// states).
	hold  bool
	popAt clock.Time
	// fullAt is when a beat first found no room in the FIFO (-1: none).
	fullAt clock.Time
}

// txRead is a PIO read of the window being answered with error beats.
type txRead struct {
	req *mem.Req
	off int
}

// claimTx answers the PCI address phase of a transaction in the transmit
// window (bus.SetTargetRetry; issue 13 design section 1.3). A read is
// always claimed: it completes with an error (answerUp). A posted write
// burst is claimed only when the TX FIFO has room for all of it (the
// burst's length is known at the address phase), and its bytes are then
// reserved; otherwise the address phase ends in a target retry (PCI 2.1
// section 3.3.3.2), counted in TxRetries, and the master (the host bridge)
// keeps its posted write and tries again. Back-pressure so reaches the
// CPU's write buffer through the bridge's full posted-write buffer, and no
// write is lost.
//
// Rejected alternative: taking the burst and holding the bus in wait
// states until the FIFO drains. The FIFO drains only into the hub, the hub
// (one packet at a time, broadcast) waits for this node's receive link to
// have room, and the receive FIFO drains only by the receive DMA, a master
// on this same PCI bus: a write held in wait states would keep that DMA
// off the bus for ever (a deadlock). With the retry the bus is free
// between attempts. Wait states remain in every accepted data phase: the
// FIFO write port's TxBeatCycles per beat, bounded and inside PCI 2.1's
// 8-clock subsequent-latency rule.
//
// The claim sees the FIFO as of the previous edge: bytes released by the
// adapter at now still count (as a FIFO's popped slots do), so the answer
// does not depend on whether the bus or the adapter ticks first.
func (a *Adapter) claimTx(now clock.Time, req *mem.Req) bool {
	if req.Op != mem.Write {
		return true
	}
	t := &a.tx
	held := t.held
	if t.relAt == now {
		held += t.relNow
	}
	// A burst longer than the whole FIFO is taken into an empty one; its
	// later beats then wait for the packetiser to drain the first
	// packets.
	if a.cfg.TxFIFOBytes-held < min(req.Len, a.cfg.TxFIFOBytes) {
		a.counters.TxRetries++
		return false
	}
	t.held += req.Len
	return true
}

// takeBeat is the write port: it takes at most one beat from the target
// channel per cycle. A write beat is written into the FIFO (through the
// page table and the packetiser) in the cycle it becomes visible, one
// cycle after its data phase; the port then keeps the beat in the channel
// for TxBeatCycles-2 more cycles, so that the bus's next data phase comes
// TxBeatCycles after this one (TxBeatCycles-1 wait states; the first
// beat's are the target's initial wait states, attachTx). A read request
// is popped at once and answered with errors.
func (a *Adapter) takeBeat(now clock.Time) bool {
	t := &a.tx
	p := &t.port
	if p.hold {
		if now < p.popAt {
			t.sigState.SetString(now, "HOLD")
			a.WakeAt(p.popAt)
			return false
		}
		t.ch.Down.Pop(now)
		p.hold = false
		if p.got == p.req.Len {
			p.req = nil
		}
		t.sigState.SetString(now, "IDLE")
		return true
	}
	beat, ok := t.ch.Down.Peek(now)
	if !ok {
		t.sigState.SetString(now, "IDLE")
		return false
	}
	if beat.First {
		if p.req != nil {
			a.env.Report(now, a.name, "mcadapter.protocol", "request %v inside the burst %v (%d of %d bytes)", beat.Req, p.req, p.got, p.req.Len)
			p.req = nil
		}
		if beat.Req.Op == mem.Read {
			if t.rd.req != nil {
				return false // the last read's error beats are still going out
			}
			t.ch.Down.Pop(now)
			a.startRead(now, beat.Req)
			return true
		}
		p.req, p.got = beat.Req, 0
		p.pages = a.TxTable.SplitAtPages(beat.Req.Addr, beat.Req.Len)
		p.page, p.pageOff = 0, 0
		p.fullAt = -1
	} else if p.req == nil || beat.Req != p.req {
		a.env.Report(now, a.name, "mcadapter.protocol", "data beat of %v outside its burst", beat.Req)
		t.ch.Down.Pop(now)
		return true
	}
	if t.stored+len(beat.Data) > a.cfg.TxFIFOBytes && len(t.queue) > 0 {
		// Only a burst longer than the FIFO gets here (the claim reserved
		// the room of any other): wait for the packetiser to drain. With
		// no complete packet queued nothing would drain, so the beat is
		// taken (a packet being built overshoots by less than a beat).
		if p.fullAt < 0 {
			p.fullAt = now
		}
		t.sigState.SetString(now, "FULL")
		return false
	}
	k := a.cfg.TxBeatCycles
	a.counters.TxWaitCycles += uint64(k - 1)
	if p.fullAt >= 0 {
		a.counters.TxWaitCycles += uint64(a.Clock().CycleAt(now) - a.Clock().CycleAt(p.fullAt))
		p.fullAt = -1
	}
	a.writeBeat(now, beat.Data)
	p.got += len(beat.Data)
	if beat.Last != (p.got == p.req.Len) {
		a.env.Report(now, a.name, "mcadapter.protocol", "beat of %v marked last=%t after %d of %d bytes", p.req, beat.Last, p.got, p.req.Len)
	}
	if p.got == p.req.Len && !p.req.Posted {
		// A non-posted write (PCI memory writes are posted; a master may
		// still ask) completes once its last beat is in the FIFO.
		t.cpl = p.req
	}
	t.sigState.SetString(now, "WRITE")
	p.popAt = a.Clock().After(now, clock.Cycle(max(k-2, 0)))
	if p.popAt > now {
		p.hold = true
		a.WakeAt(p.popAt)
		return true
	}
	t.ch.Down.Pop(now)
	if p.got >= p.req.Len {
		p.req = nil
	}
	return true
}

// writeBeat writes data, the next bytes of the current burst, into the
// TX FIFO: each page piece is looked up in the transmit page table at its
// first byte (assumed: a one-cycle on-card SRAM read, overlapped with the
// beat's channel register); a piece on an invalid page is dropped; the
// bytes of a valid one go into the packet being built.
func (a *Adapter) writeBeat(now clock.Time, data []byte) {
	t := &a.tx
	p := &t.port
	for len(data) > 0 {
		if p.page >= len(p.pages) {
			a.env.Report(now, a.name, "mcadapter.protocol", "%d bytes beyond the burst %v", len(data), p.req)
			return
		}
		pg := p.pages[p.page]
		if p.pageOff == 0 {
			p.global, p.loop, p.valid = a.TxTable.Translate(pg.Addr)
			if !p.valid {
				a.invalidPage(now, pg)
			}
		}
		n := min(len(data), pg.Len-p.pageOff)
		if p.valid {
			n = a.packetise(now, data[:n])
		} else {
			t.release(now, n)
		}
		p.pageOff += n
		data = data[n:]
		if p.pageOff == pg.Len {
			p.page++
			p.pageOff = 0
		}
	}
}

// invalidPage drops the piece pg of a burst, which lies in a window page
// whose transmit entry is invalid: counted (TxInvalid), the page latched
// in the status register with the interrupt raised, and reported as a
// TxInvalidPage drop (issue 13 section 1: «a write to an invalid page is
// dropped, counted and raises an interrupt with the page in a status
// register»). Drop.Addr is the window offset.
func (a *Adapter) invalidPage(now clock.Time, pg Piece) {
	page := int(pg.Addr / uint64(a.cfg.PageBytes))
	a.counters.TxInvalid++
	if a.env.Trace.Enabled() {
		a.env.Trace.Emit(now, a.Clock().CycleAt(now), a.name, "mc.drop", trace.Str("reason", TxInvalidPage.String()),
			trace.Int("src", int64(a.node)), trace.Int("page", int64(page)), trace.Addr("addr", pg.Addr), trace.Int("len", int64(pg.Len)))
	}
	a.raise(now, CauseTxInvalid, page)
	a.drop(now, Drop{Reason: TxInvalidPage, Src: a.node, Page: page, Addr: pg.Addr, Len: pg.Len})
}

// startRead takes a PIO read of the window: counted and answered, beat by
// beat, with ErrNoRemoteRead.
func (a *Adapter) startRead(now clock.Time, req *mem.Req) {
	a.counters.PIOReads++
	a.tx.rd = txRead{req: req}
	a.tx.sigState.SetString(now, "READ")
	if a.env.Trace.Enabled() {
		a.env.Trace.Emit(now, a.Clock().CycleAt(now), a.name, "mc.pioread", trace.Addr("addr", req.Addr),
			trace.Int("len", int64(req.Len)))
	}
}

// answerUp sends the next upstream beat: the completion of a non-posted
// write, or the next error beat of the PIO read being answered, one per
// cycle, as wide as the channel (the bus completes the read with Err set,
// a target abort as the master sees it, and zero data).
func (a *Adapter) answerUp(now clock.Time) bool {
	t := &a.tx
	if t.cpl != nil {
		if !t.ch.Up.CanPush(now) {
			return false
		}
		t.ch.Up.Push(now, mem.Beat{Req: t.cpl, First: true, Last: true})
		t.cpl = nil
		return true
	}
	r := &t.rd
	if r.req == nil || !t.ch.Up.CanPush(now) {
		return false
	}
	n := 0
	if r.off < r.req.Len {
		n = mem.FirstChunk(r.req.Addr+uint64(r.off), r.req.Len-r.off, t.ch.Width)
	}
	first := r.off == 0
	r.off += n
	last := r.off >= r.req.Len
	t.ch.Up.Push(now, mem.Beat{Req: r.req, Data: make([]byte, n), First: first, Last: last, Err: ErrNoRemoteRead})
	if last {
		r.req = nil
	}
	return true
}
