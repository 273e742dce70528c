package lci

import (
	"fmt"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// I-nirx: the NI-level retransmission protocol of section 5.1.2, «almost
// identical to the host-level protocol I-hrx» of section 5.1.1, «but
// sliding-window and timer management, acknowledgment processing, etc.,
// are now all performed on the NI»:
//
//   - go-back-N per pair of NIs: every reliable packet (data, multicast,
//     a forward, an F&A request or reply) carries its pair's 8-bit
//     sequence number (RxFields); the sender keeps it, in its NI buffer,
//     until it is acknowledged («NI send buffers cannot be reused until
//     they have been acknowledged»), at most Config.Window of them per
//     destination;
//   - acknowledgments are cumulative, «piggybacked and half-window
//     acknowledgments, just like the base version», plus «an
//     acknowledgment timer per sender S ... started when a data packet
//     from S arrives and the timer is not yet running ... canceled when an
//     acknowledgment, possibly piggybacked, travels back to S. If the
//     timer expires, the receiver sends an explicit delayed
//     acknowledgment»;
//   - the receiving NI «drops packets with CRC errors and packets that
//     cannot be stored due to a shortage of NI receive buffers», and
//     out-of-sequence ones; a duplicate (a packet it already has, resent
//     because an acknowledgment was lost) is dropped and acknowledged at
//     once;
//   - «all senders share one NI receive buffer pool»: the receive engine
//     is always armed; the buffer it lands in is kept only if another one
//     is free to re-arm it with, so the last free buffer is the landing
//     zone and a packet that would need it is dropped; «When a packet must
//     be dropped due to buffer space shortage, the NI requests
//     retransmissions from the sender as soon as buffers become available
//     again» (TypeNack);
//   - «If the sender's timer expires before an acknowledgment is
//     received, it retransmits all unacknowledged packets whose
//     timestamps have become too old»: each transmission stores its cycle
//     in the window entry, and one timeout resends the destination's whole
//     window (go-back-N);
//   - every timer (the retransmission timeouts, the delayed
//     acknowledgments, the polling watchdog) runs on the LANai's one
//     interval timer, set to the earliest deadline.
//
// Acknowledgments and retransmission requests travel unreliably, in the
// control buffers; an F&A reply travels reliably in its control buffer,
// so a resent request is recognised as a duplicate and added once.

// Test-only faults of I-nirx (see env.DeclareMutation).
var (
	mutRxDup = env.DeclareMutation("lci.rxdup",
		"I-nirx's receiver takes every Nth duplicate (a packet it has already) as a new one and delivers it again "+
			"(caught by RunTraffic's lci.dup)")
	mutRxLeak = env.DeclareMutation("lci.rxleak",
		"I-nirx's NI keeps every Nth receive buffer it has delivered from (caught by RunTraffic's lci.quiescent)")
	mutRxCRC = env.DeclareMutation("lci.rxcrc",
		"I-nirx's NI skips the CRC check of every Nth packet marked bad and takes it (caught by RunTraffic's lci.crcsum)")
)

// rxState is I-nirx's protocol state.
type rxState struct {
	w       int
	ackWait clock.Cycle // Config.AckDelayCycles
	rto     clock.Cycle // Config.RetransmitCycles

	// Sender side, per destination: the next sequence to assign, the
	// oldest unacknowledged one, and the window's entries in sequence
	// order.
	snext, sbase []uint32
	unacked      [][]*rxEntry
	// Receiver side, per source: the next sequence expected, the packets
	// received in order since the last acknowledgment to the source, its
	// delayed-acknowledgment deadline (0: not running), and whether a
	// packet from it was dropped for want of a buffer.
	rexp  []uint32
	owed  []int
	ackAt []clock.Cycle
	nack  []bool
	nacks int // sources with nack set
	// ackQueued: an explicit acknowledgment to the node waits for the
	// send engine (it carries the latest sequence when it goes, so a
	// second one would say nothing more).
	ackQueued []bool
	// nackFrom is where the next scan for sources owed a retransmission
	// request starts (round robin).
	nackFrom int

	// timerAt is the interval timer's deadline (0: off); watchAt the
	// polling watchdog's (0: off).
	timerAt, watchAt clock.Cycle

	stats RxStats

	// test-only faults: every dupEvery-th duplicate delivered, every
	// leakEvery-th buffer kept, every crcEvery-th bad packet taken
	dupEvery, dups, leakEvery, leaks, crcEvery, bads int
}

// rxEntry is one reliable packet in its destination's window.
type rxEntry struct {
	it  txItem
	seq uint32
	// queued: in the ready queue; sent: transmitted at least once, last
	// at sentAt; acked: acknowledged while a retransmission of it was on
	// the send engine, whose completion frees its buffer (sent).
	queued, sent, acked bool
	sentAt              clock.Cycle
}

// RxStats counts what an NI's retransmission protocol did.
type RxStats struct {
	// Sent and Retransmitted are reliable packets transmitted for the
	// first time and again; Timeouts the retransmission timeouts that
	// resent a window.
	Sent, Retransmitted, Timeouts uint64
	// AcksSent, NacksSent and NacksReceived are explicit
	// acknowledgments and retransmission requests.
	AcksSent, NacksSent, NacksReceived uint64
	// CRCDrops are packets dropped for a bad CRC (each one the link
	// counted in CRCErrors); NoBufDrops, OutOfOrder and Duplicates the
	// others the receiver dropped.
	CRCDrops, NoBufDrops, OutOfOrder, Duplicates uint64
}

// Add adds o's counters to s.
func (s *RxStats) Add(o RxStats) {
	s.Sent += o.Sent
	s.Retransmitted += o.Retransmitted
	s.Timeouts += o.Timeouts
	s.AcksSent += o.AcksSent
	s.NacksSent += o.NacksSent
	s.NacksReceived += o.NacksReceived
	s.CRCDrops += o.CRCDrops
	s.NoBufDrops += o.NoBufDrops
	s.OutOfOrder += o.OutOfOrder
	s.Duplicates += o.Duplicates
}

func newRxState(e *env.Env, cfg Config, nodes int) *rxState {
	r := &rxState{w: cfg.Window(), ackWait: clock.Cycle(cfg.AckDelayCycles), rto: clock.Cycle(cfg.RetransmitCycles),
		dupEvery: e.Mutation(mutRxDup), leakEvery: e.Mutation(mutRxLeak), crcEvery: e.Mutation(mutRxCRC)}
	r.snext, r.sbase, r.rexp = make([]uint32, nodes), make([]uint32, nodes), make([]uint32, nodes)
	for i := range nodes {
		r.snext[i], r.sbase[i], r.rexp[i] = 1, 1, 1
	}
	r.unacked = make([][]*rxEntry, nodes)
	r.owed = make([]int, nodes)
	r.ackAt = make([]clock.Cycle, nodes)
	r.nack = make([]bool, nodes)
	r.ackQueued = make([]bool, nodes)
	return r
}

// RxStats returns the retransmission protocol's counters (zero for the
// base implementation).
func (p *Program) RxStats() RxStats {
	if p.hrx != nil {
		return p.hrx.stats
	}
	if p.rx == nil {
		return RxStats{}
	}
	return p.rx.stats
}

// Unacked returns the reliable packets this NI holds unacknowledged,
// over all destinations (0 for the base implementation).
func (p *Program) Unacked() int {
	if p.rx == nil {
		return 0
	}
	n := 0
	for _, u := range p.rx.unacked {
		n += len(u)
	}
	return n
}

// reliable reports whether a packet type travels in its pair's window.
func reliable(t uint8) bool {
	return t == TypeData || t == TypeMcast || t == TypeFAReq || t == TypeFARep
}

// rxTrace records a protocol event (a drop, a retransmission) when the
// run traces.
func (p *Program) rxTrace(c *firmware.Ctx, event string, peer int, seq uint32, why string) {
	if !c.Env.Tracing() {
		return
	}
	if why == "" {
		c.Env.Emit(c.Now, c.Cycle, p.name, "lci.rx", "event", event, "peer", fmt.Sprint(peer), "seq", fmt.Sprint(seq))
		return
	}
	c.Env.Emit(c.Now, c.Cycle, p.name, "lci.rx", "event", event, "peer", fmt.Sprint(peer), "seq", fmt.Sprint(seq), "why", why)
}

// --- Sender side ---

// rxWant admits a packet to its destination's window, or queues it
// behind the window; acknowledgments and retransmission requests go to
// the front of the send engine's queue. assumed: they overtake the data
// waiting there (a few 16-byte packets ahead of up to 2 KB ones): behind
// a queue of full packets to other nodes an acknowledgment would arrive
// after its sender's retransmission timeout, which then resends a window
// the receiver already has.
func (p *Program) rxWant(c *firmware.Ctx, it txItem) {
	switch {
	case !reliable(it.hdr.Type):
		p.ready.PushFront(it)
	case p.blocked[it.dst].Len() == 0 && len(p.rx.unacked[it.dst]) < p.rx.w:
		p.rxAdmit(c, it)
	default:
		p.blocked[it.dst].Push(it)
		p.nblock++
		if p.fc.State() == sOpen {
			c.Fire(p.fc, "close", nil)
		}
	}
}

// rxAdmit numbers a packet, appends it to its window and queues it.
func (p *Program) rxAdmit(c *firmware.Ctx, it txItem) {
	r := p.rx
	c.Charge(p.cfg.Costs.RxSend)
	seq := r.snext[it.dst]
	r.snext[it.dst]++
	e := &rxEntry{seq: seq, queued: true}
	it.hdr.Credits = RxFields(0, uint8(seq))
	it.hdr.Flags = 0 // a forward's header is the one it arrived with
	it.ent = e
	e.it = it
	r.unacked[it.dst] = append(r.unacked[it.dst], e)
	p.ready.Push(it)
}

// rxStale reports whether a ready item is a window entry acknowledged
// since it was queued (its buffer may hold another packet by now).
func (p *Program) rxStale(it txItem) bool {
	return it.ent != nil && it.ent.seq < p.rx.sbase[it.dst]
}

// rxStamp fills in a packet's acknowledgment as it goes out (every packet
// to a node carries what this NI has received from it in order), marks
// its entry sent and makes sure a timeout is due for it.
func (p *Program) rxStamp(c *firmware.Ctx, it *txItem) {
	r := p.rx
	c.Charge(p.cfg.Costs.RxStamp)
	if got := r.rexp[it.dst] - 1; got > 0 {
		it.hdr.Flags |= HdrAck
		it.hdr.Credits = RxFields(uint8(got), RxSeq(it.hdr.Credits))
		r.owed[it.dst] = 0
		r.ackAt[it.dst] = 0
	}
	switch e := it.ent; {
	case e == nil:
		if it.hdr.Type == TypeAck {
			r.ackQueued[it.dst] = false
			r.stats.AcksSent++
		} else if it.hdr.Type == TypeNack {
			r.stats.NacksSent++
		}
	default:
		if e.sent {
			r.stats.Retransmitted++
			p.rxTrace(c, "resend", it.dst, e.seq, "")
		} else {
			r.stats.Sent++
		}
		e.queued, e.sent, e.sentAt = false, true, c.Cycle
		p.rxArmAt(c, c.Cycle+r.rto)
	}
}

// rxAcked takes an acknowledgment from node src: every packet up to the
// acknowledged sequence leaves the window and its buffer is done with; a
// retransmission request also resends the rest of the window at once.
func (p *Program) rxAcked(c *firmware.Ctx, a any) {
	ack := a.(rxAckArg)
	r, src := p.rx, ack.src
	// The acknowledged sequence is the one in [sbase-1, snext-1] whose
	// low byte the header carries (the window is under 128).
	last := r.sbase[src] - 1 + uint32(uint8(ack.seq-uint8(r.sbase[src]-1)))
	if last >= r.snext[src] {
		return // acknowledges nothing in flight: an old acknowledgment overtaken by a later one
	}
	u := r.unacked[src]
	n := 0
	for n < len(u) && u[n].seq <= last {
		c.Charge(p.cfg.Costs.RxFree)
		if p.txBusy && p.txCur.ent == u[n] {
			u[n].acked = true // the engine is still reading its buffer
		} else {
			p.itemDone(c, u[n].it)
		}
		n++
	}
	r.unacked[src] = u[n:]
	r.sbase[src] = last + 1
	if ack.nack {
		r.stats.NacksReceived++
		p.rxGoBack(c, src, "request")
	}
	for p.blocked[src].Len() > 0 && len(r.unacked[src]) < r.w {
		p.rxAdmit(c, p.blocked[src].Pop())
		p.nblock--
	}
	if p.nblock == 0 && p.fc.State() == sBlocked {
		c.Fire(p.fc, "open", nil)
	}
	p.queues(c)
	p.kick(c)
}

// rxAckArg is an acknowledgment found in a header.
type rxAckArg struct {
	src  int
	seq  uint8
	nack bool
}

// rxGoBack queues every packet of dst's window that is not queued already
// for retransmission.
func (p *Program) rxGoBack(c *firmware.Ctx, dst int, why string) {
	for _, e := range p.rx.unacked[dst] {
		if !e.queued {
			c.Charge(p.cfg.Costs.Retransmit)
			e.queued = true
			p.ready.Push(e.it)
		}
	}
	if len(p.rx.unacked[dst]) > 0 {
		p.rxTrace(c, "goback", dst, p.rx.unacked[dst][0].seq, why)
	}
}

// --- Receiver side ---

// rxReceive is Recv Queue Mgt and Recv Dispatch for I-nirx.
func (p *Program) rxReceive(c *firmware.Ctx, ev firmware.HWEvent) {
	r := p.rx
	buf := p.armedBuf
	p.armed = false
	h := DecodeHeader(c.Read(ev.Addr, HeaderBytes))
	if ev.Bad && r.crcEvery > 0 {
		if r.bads++; r.bads%r.crcEvery == 0 {
			ev.Bad = false // mutation
		}
	}
	if ev.Bad {
		// The header may be wrong: nothing in it is used.
		r.stats.CRCDrops++
		p.rxTrace(c, "drop", int(ev.Src), 0, "crc")
		p.armBuf(c, buf)
		return
	}
	if ev.Len != HeaderBytes+int(h.Len) || int(h.Src) >= p.n {
		c.Env.Report(c.Now, p.name, "lci.packet", "malformed packet %d from node %d: %d bytes with header %+v; dropped", ev.Tag, ev.Src, ev.Len, h)
		p.armBuf(c, buf)
		return
	}
	src := int(h.Src)
	if h.Flags&HdrAck != 0 {
		c.Fire(p.rxm, "acked", rxAckArg{src: src, seq: RxAck(h.Credits), nack: h.Type == TypeNack})
	}
	if !reliable(h.Type) {
		if h.Type != TypeAck && h.Type != TypeNack {
			c.Env.Report(c.Now, p.name, "lci.packet", "unknown packet type %d from node %d", h.Type, h.Src)
		}
		p.armBuf(c, buf)
		return
	}
	c.Charge(p.cfg.Costs.RxRecv)
	seq := RxSeq(h.Credits)
	switch behind := uint8(uint8(r.rexp[src]) - seq); {
	case behind == 0 && len(p.freeRecv) == 0:
		// The buffer it landed in is the last free one: it stays the
		// landing zone, and the sender is asked to resend when buffers
		// are free again.
		r.stats.NoBufDrops++
		if !r.nack[src] {
			r.nack[src] = true
			r.nacks++
		}
		p.rxTrace(c, "drop", src, r.rexp[src], "nobuf")
		p.armBuf(c, buf)
		return
	case behind == 0 && h.Type == TypeFAReq && len(p.freeCtl) == 0:
		// Its reply would have no control buffer: not taken (the
		// variable is not touched), so the sender's timeout resends it.
		r.stats.NoBufDrops++
		p.rxTrace(c, "drop", src, r.rexp[src], "noctl")
		p.armBuf(c, buf)
		return
	case behind == 0:
		// In order.
	case behind < 128 && r.dupEvery > 0 && len(p.freeRecv) > 0 && func() bool { r.dups++; return r.dups%r.dupEvery == 0 }():
		// mutation: delivered again, and acknowledged as a duplicate is
		p.arm(c)
		p.recvHdr[buf] = h
		p.recvRef[buf] = 1
		c.Fire(p.hrq, "deliver", buf)
		p.rxAckNow(c, src)
		return
	case behind < 128:
		// A packet it has already: the sender missed the
		// acknowledgment.
		r.stats.Duplicates++
		p.rxTrace(c, "drop", src, r.rexp[src]-uint32(behind), "duplicate")
		p.armBuf(c, buf)
		p.rxAckNow(c, src)
		return
	default:
		// An earlier packet was lost: go-back-N drops the rest until
		// the sender's timeout resends it.
		r.stats.OutOfOrder++
		p.rxTrace(c, "drop", src, r.rexp[src]+uint32(uint8(seq-uint8(r.rexp[src]))), "order")
		p.armBuf(c, buf)
		return
	}
	r.rexp[src]++
	r.owed[src]++
	p.arm(c)
	if r.owed[src] >= r.w/2 {
		p.rxAckNow(c, src)
	} else if r.ackAt[src] == 0 {
		r.ackAt[src] = c.Cycle + r.ackWait
		p.rxArmAt(c, r.ackAt[src])
	}
	p.recvHdr[buf] = h
	switch h.Type {
	case TypeData, TypeFARep:
		p.recvRef[buf] = 1
		c.Fire(p.hrq, "deliver", buf)
	case TypeMcast:
		c.Fire(p.mc, "packet", buf)
	case TypeFAReq:
		c.Fire(p.fa, "request", buf)
	}
}

// rxPollOrder is I-nirx's main loop: the timer first. assumed: a busy NI
// finds a packet, DMA or send event on almost every pass, so a timer
// tested last (the base implementation's watchdog, which can wait) would
// wait for the NI to go idle: a receiver in a burst would send its
// delayed acknowledgments, and a sender its retransmissions, hundreds of
// microseconds late, after its senders' timeouts. Testing it first costs
// one register read per pass (in Dispatch).
var rxPollOrder = []firmware.EventKind{firmware.Timer, firmware.RecvDone, firmware.HostDMADone, firmware.SendDone, firmware.HostWrite}

// rxAckNow sends src an explicit acknowledgment unless the next packet
// the send engine takes goes to src and carries it. (A packet to src
// further back in the queue would carry it too, but only after the
// packets ahead of it, which may take longer than src's retransmission
// timeout.)
func (p *Program) rxAckNow(c *firmware.Ctx, src int) {
	if p.ready.Len() > 0 {
		if it := p.ready.Front(); it.dst == src && !p.rxStale(*it) {
			return
		}
	}
	c.Fire(p.fc, "ack", src)
}

// rxAck queues an explicit acknowledgment to dst in a control buffer,
// unless one is queued already. Acknowledgments travel unreliably, so
// when every control buffer is taken (by F&A replies waiting for their
// own acknowledgments, and acknowledgments and retransmission requests
// waiting for the send engine) this one is not sent: the packets stay
// owed and the delayed-acknowledgment timer tries again (or the sender's
// timeout resends, and the duplicate asks again).
func (p *Program) rxAck(c *firmware.Ctx, dst int) {
	r := p.rx
	if r.ackQueued[dst] {
		return
	}
	b, ok := p.takeCtl()
	if !ok {
		if r.ackAt[dst] == 0 {
			r.ackAt[dst] = c.Cycle + r.ackWait
			p.rxArmAt(c, r.ackAt[dst])
		}
		return
	}
	r.ackQueued[dst] = true
	c.Fire(p.fc, "want", txItem{kind: itemCtl, dst: dst, buf: b, hdr: Header{Type: TypeAck, Src: uint8(p.node)}})
}

// takeCtl takes a free control buffer, if there is one.
func (p *Program) takeCtl() (int, bool) {
	if len(p.freeCtl) == 0 {
		return 0, false
	}
	b := p.freeCtl[len(p.freeCtl)-1]
	p.freeCtl = p.freeCtl[:len(p.freeCtl)-1]
	return b, true
}

// armBuf re-arms the receive engine with the buffer a dropped packet
// landed in.
func (p *Program) armBuf(c *firmware.Ctx, buf int) {
	p.armedBuf, p.armed = buf, true
	c.ArmRecv(p.layout.RecvBuf(buf), HeaderBytes+p.cfg.MTU)
}

// rxFreed asks the senders whose packets were dropped for want of a
// buffer to resend, one per free buffer, round robin.
func (p *Program) rxFreed(c *firmware.Ctx) {
	r := p.rx
	free := len(p.freeRecv)
	for i := 0; i < p.n && free > 0; i++ {
		src := (r.nackFrom + i) % p.n
		if !r.nack[src] {
			continue
		}
		b, ok := p.takeCtl()
		if !ok {
			return // the next freed buffer tries again
		}
		r.nack[src] = false
		r.nacks--
		r.nackFrom = (src + 1) % p.n
		free--
		p.rxTrace(c, "nack", src, r.rexp[src], "")
		p.rxWant(c, txItem{kind: itemCtl, dst: src, buf: b, hdr: Header{Type: TypeNack, Src: uint8(p.node)}})
	}
	p.queues(c)
	p.kick(c)
}

// --- Timers ---

// rxArmAt makes sure the interval timer expires by cycle at.
func (p *Program) rxArmAt(c *firmware.Ctx, at clock.Cycle) {
	r := p.rx
	if r.timerAt != 0 && r.timerAt <= at {
		return
	}
	r.timerAt = at
	c.SetTimer(int(max(at-c.Cycle, 1)))
}

// rxWatch starts the polling watchdog (the base implementation's Timer
// module) on the shared timer.
func (p *Program) rxWatch(c *firmware.Ctx, _ any) {
	p.rx.watchAt = c.Cycle + clock.Cycle(p.cfg.WatchdogCycles)
	p.rxArmAt(c, p.rx.watchAt)
}

// rxExpire runs what is due when the interval timer expires: the
// watchdog, delayed acknowledgments, retransmission timeouts (in node
// order); then sets the timer for the next deadline.
func (p *Program) rxExpire(c *firmware.Ctx, _ any) {
	r := p.rx
	now := c.Cycle
	r.timerAt = 0
	if r.watchAt != 0 && r.watchAt <= now {
		r.watchAt = 0
		c.Fire(p.timer, "expire", nil)
	}
	for src, at := range r.ackAt {
		if at != 0 && at <= now {
			r.ackAt[src] = 0
			if r.owed[src] > 0 {
				p.rxAckNow(c, src)
			}
		}
	}
	for dst, u := range r.unacked {
		if len(u) > 0 && u[0].sent && !u[0].queued && u[0].sentAt+r.rto <= now {
			r.stats.Timeouts++
			p.rxGoBack(c, dst, "timeout")
		}
	}
	next := r.watchAt
	earlier := func(at clock.Cycle) {
		if at != 0 && (next == 0 || at < next) {
			next = at
		}
	}
	for _, at := range r.ackAt {
		earlier(at)
	}
	for _, u := range r.unacked {
		for _, e := range u {
			if e.sent && !e.queued {
				earlier(e.sentAt + r.rto)
				break
			}
		}
	}
	if next != 0 {
		p.rxArmAt(c, next)
	}
	p.queues(c)
	p.kick(c)
}
