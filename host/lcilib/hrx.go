package lcilib

import (
	"fmt"
	"slices"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// I-hrx: host-level retransmission (lci-myrinet-cluster-protocols.txt
// section 5.1.1), the library's side; the NI's is firmware/lci's hrx.go.
//
// The protocol is I-nirx's (firmware/lci rx.go) run by the library:
//   - go-back-N per pair of nodes, 8-bit sequences in the header's credits
//     field (lci.RxFields), cumulative acknowledgments, a window of
//     lci.Config.Window() (the NI send buffers): every reliable packet
//     (data, a multicast to one child, a fetch-and-add request or reply)
//     keeps its NI send buffer until it is acknowledged («NI send buffers
//     cannot be reused until they have been acknowledged»);
//   - «After transmitting a packet, the sender starts a retransmission
//     timer by reading the CPU's timestamp register ... and storing the
//     timestamp in the sliding-window control data structure»: the entry's
//     sentAt is the processor's time when the descriptor is written
//     (Costs.HrxSend covers the read);
//   - «If the sender's timer expires before an acknowledgment is
//     received, it retransmits all unacknowledged packets whose
//     timestamps have become too old»: a retransmission is a descriptor
//     marked lci.DescResend for the same NI send buffer (the NI «resends
//     buffers on command», nothing is copied again);
//   - «piggybacked and half-window acknowledgments, just like the base
//     version», and «an acknowledgment timer per sender S»: every packet
//     to S carries what this host has received from S in order; W/2
//     packets unacknowledged, a duplicate, or S's timer expiring send an
//     explicit acknowledgment (a descriptor of type lci.TypeAck);
//   - «The receiving host drops all out-of-sequence packets»;
//   - the timers are checked against the timestamp counter whenever the
//     library runs (a send, a poll, a wait inside the library); «falling
//     back to OS-generated timer signals only when needed»: when the
//     library leaves protocol work with a deadline behind and no alarm is
//     pending, it arms the OS's one-shot alarm (Costs.Alarm, a system
//     call) for the earliest deadline; the alarm's signal runs the library
//     (Costs.Signal, then the same checks) and re-arms it if work is left.
//     The polling watchdog's network interrupt runs it too. A signal that
//     finds the process inside the library does nothing more: the library
//     looks at its queue and the counter when it resumes;
//   - the host serves fetch-and-add («I-hrx, which handles F&A requests on
//     the host processor»: the library's variable, the reply a reliable
//     send) and forwards multicasts from its receive queue («I-hrx does
//     its multicast forwarding from the host-level receive queue»): a
//     multicast is a reliable send to each child of the forwarding tree,
//     the children sharing one send buffer; a node forwards a multicast
//     it received in order to its own children in the root's tree.
//
// The timers are lci.RxAckDelay and lci.RxRetransmit of the platform's
// watchdog (lci.Config.AckDelayCycles and RetransmitCycles), the same
// times as I-nirx's, converted from NI cycles to time: 70 µs and 700 µs on
// the PPro, 30 µs and 300 µs on the P3.

// Test-only faults of I-hrx's library (see env.DeclareMutation).
var (
	mutHrxDup = env.DeclareMutation("lci.hrxdup",
		"I-hrx's library takes every Nth duplicate (a packet it has already) as a new one and hands it to the upcall again "+
			"(caught by RunTraffic's lci.dup)")
	mutHrxLeak = env.DeclareMutation("lci.hrxleak",
		"I-hrx's library never returns every Nth acknowledged NI send buffer to its free list "+
			"(caught by RunTraffic's lci.quiescent)")
)

// hrxState is the library's protocol state.
type hrxState struct {
	w            int
	ackWait, rto clock.Time

	// Sender side, per destination: the next sequence, the oldest
	// unacknowledged one, the window's entries in order.
	snext, sbase []uint32
	unacked      [][]*hrxEntry
	// Receiver side, per source: the next sequence expected, packets
	// taken in order since the last acknowledgment, the delayed
	// acknowledgment's deadline (0: not running).
	rexp  []uint32
	owed  []int
	ackAt []clock.Time

	// Per NI send buffer: window entries holding it, and descriptors
	// issued for it whose send completion has not come back.
	refs, issued []int
	// jobs are the host's own replies and forwards waiting for a free
	// send buffer; replies the fetch-and-add replies for the process.
	jobs    queue.Queue[hrxJob]
	replies queue.Queue[*Msg]
	// appSeq numbers the data to each destination, mcSeq this root's
	// multicasts (the header's sequence, as the NI numbers them in
	// I-sdma).
	appSeq  []uint32
	mcSeq   uint32
	faValue uint32

	alarm *alarm
	// inLib counts the library calls the process is inside.
	inLib int

	stats lci.RxStats

	// test-only faults
	dupEvery, dups, leakEvery, frees, leaked int
}

// hrxEntry is a reliable packet in its destination's window: its
// descriptor (without the ring sequence and the piggybacked
// acknowledgment, filled in at each transmission) and the timestamp of
// its last transmission.
type hrxEntry struct {
	seq    uint32
	d      lci.Desc
	sentAt clock.Time
}

// hrxJob is a packet the library sends on its own behalf.
type hrxJob struct {
	typ      uint8
	dsts     []int
	root     uint8
	seq, tag uint32
	data     []byte
}

// alarm is the OS's one-shot interval timer (setitimer): it raises the
// processor's interrupt line at its deadline, and the library's signal
// handler runs.
type alarm struct {
	*clock.Ticking
	cpu   *cpu.CPU
	at    clock.Time
	fired uint64
}

// Tick implements clock.Ticker.
func (a *alarm) Tick(now clock.Time) bool {
	if a.at != 0 && now >= a.at {
		a.at = 0
		a.fired++
		a.cpu.Interrupt(now)
	}
	return false
}

func (a *alarm) set(at clock.Time) {
	a.at = at
	a.WakeAt(at)
}

func newHrx(e *env.Env, h *Host) *hrxState {
	n := h.nodes
	ni := h.plat.NI.Clock.Period()
	r := &hrxState{w: h.fw.Window(), ackWait: ni * clock.Time(h.fw.AckDelayCycles), rto: ni * clock.Time(h.fw.RetransmitCycles),
		snext: make([]uint32, n), sbase: make([]uint32, n), unacked: make([][]*hrxEntry, n),
		rexp: make([]uint32, n), owed: make([]int, n), ackAt: make([]clock.Time, n), appSeq: make([]uint32, n),
		refs: make([]int, h.fw.SendBufs), issued: make([]int, h.fw.SendBufs),
		dupEvery: e.Mutation(mutHrxDup), leakEvery: e.Mutation(mutHrxLeak)}
	for i := range n {
		r.snext[i], r.sbase[i], r.rexp[i] = 1, 1, 1
	}
	for i := range r.issued {
		r.issued[i] = -1 // free
	}
	r.alarm = &alarm{cpu: h.CPU}
	r.alarm.Ticking = clock.NewTicking(h.name+".Alarm", e.Engine, h.CPU.Clock(), r.alarm)
	h.CPU.SetInterruptProgram(h.hrxSignal)
	return r
}

// hrxSignal is the library's signal handler (the alarm's and the polling
// watchdog's): the kernel's delivery, then the protocol's work and, if the
// process gave OnSignal a handler, its packets.
func (h *Host) hrxSignal(p *cpu.Proc) {
	s := &Seq{Proc: p, h: h}
	s.Compute(h.costs.Signal)
	if h.hrx.inLib > 0 {
		return
	}
	s.hrxService(true)
	if h.sigHandler != nil {
		s.TryRecv(h.sigHandler)
	}
}

// HrxStats returns the library's protocol counters in I-hrx (Sent,
// Retransmitted, Timeouts, AcksSent, OutOfOrder, Duplicates; the NI
// counts the drops).
func (h *Host) HrxStats() lci.RxStats {
	if h.hrx == nil {
		return lci.RxStats{}
	}
	return h.hrx.stats
}

// Alarms returns how many times the OS alarm fired.
func (h *Host) Alarms() uint64 {
	if h.hrx == nil {
		return 0
	}
	return h.hrx.alarm.fired
}

// FetchAddValue returns the library's fetch-and-add variable (I-hrx).
func (h *Host) FetchAddValue() uint32 {
	if h.hrx == nil {
		return 0
	}
	return h.hrx.faValue
}

// Quiescent reports whether the library holds no protocol state (I-hrx):
// nothing unacknowledged, no acknowledgment owed, no reply or forward
// waiting, every send buffer free; otherwise what it holds.
func (h *Host) Quiescent() (bool, string) {
	r := h.hrx
	if r == nil {
		return true, ""
	}
	unacked, owed := 0, 0
	for i := range h.nodes {
		unacked += len(r.unacked[i])
		owed += r.owed[i]
	}
	if unacked == 0 && owed == 0 && r.jobs.Len() == 0 && len(h.freeSend) == h.fw.SendBufs {
		return true, ""
	}
	return false, fmt.Sprintf("%d unacknowledged, %d acknowledgments owed, %d replies and forwards waiting, %d of %d send buffers free",
		unacked, owed, r.jobs.Len(), len(h.freeSend), h.fw.SendBufs)
}

// peek reports whether the receive queue's head is full.
func (h *Host) peek() bool {
	if h.ring.Len() == 0 || h.deaf {
		return false
	}
	hdrAt := *h.ring.Front() + uint64(lci.SlotHeaderAt(h.fw.MTU))
	b, _ := h.mem.Storage().Bytes(hdrAt, lci.HeaderBytes)
	return lci.DecodeSlotHeader(b).Flag == h.expect
}

// --- the library's entry points in I-hrx ---

// hrxSend is a send call: the timers, the replies and forwards waiting,
// a send buffer (waiting for one, as I-sdma does), the packet to each
// destination.
func (s *Seq) hrxSend(typ uint8, dst int, data []byte, tag uint32) {
	h, r := s.h, s.h.hrx
	r.inLib++
	s.hrxTimers()
	s.hrxPump()
	buf := s.hrxBuffer()
	dsts := []int{dst}
	var seq uint32
	switch typ {
	case lci.TypeData:
		r.appSeq[dst]++
		seq = r.appSeq[dst]
	case lci.TypeMcast:
		r.mcSeq++
		seq = r.mcSeq
		dsts = h.fw.Tree.Children(h.node, h.node, h.nodes)
	}
	h.Sent++
	s.hrxPacket(buf, typ, dsts, uint8(h.node), seq, tag, data)
	s.hrxAlarm()
	r.inLib--
}

// hrxRecv waits for the next packet for the process and runs handler on
// it (Recv; RecvOr with stop): the protocol's work on everything that
// arrives, the timers whenever the library looks.
func (s *Seq) hrxRecv(handler Handler, stop func() bool) bool {
	h, r := s.h, s.h.hrx
	r.inLib++
	defer func() { r.inLib-- }()
	for {
		s.hrxService(false)
		if h.pending.Len() > 0 {
			if s.handle(h.pending.Pop(), handler) {
				s.hrxAlarm()
				return true
			}
			continue
		}
		if stop != nil && stop() {
			s.hrxAlarm()
			return false
		}
		s.hrxWait(stop)
	}
}

// hrxTryRecv handles every packet there (TryRecv).
func (s *Seq) hrxTryRecv(handler Handler) int {
	h, r := s.h, s.h.hrx
	r.inLib++
	n := 0
	s.hrxService(false)
	for h.pending.Len() > 0 {
		if s.handle(h.pending.Pop(), handler) {
			n++
		}
		s.hrxService(false)
	}
	s.hrxAlarm()
	r.inLib--
	return n
}

// hrxFetchAndAdd sends the request reliably and waits for the reply;
// packets for the process go to the upcall or are kept meanwhile.
func (s *Seq) hrxFetchAndAdd(node int, add uint32) uint32 {
	h, r := s.h, s.h.hrx
	r.inLib++
	defer func() { r.inLib-- }()
	if node == h.node {
		// The variable is this host's (I-hrx serves fetch-and-add on
		// the host): the request is the serving code run here.
		s.Compute(h.costs.HrxRecv)
		old := r.faValue
		r.faValue += add
		return old
	}
	s.hrxTimers()
	s.hrxPump()
	buf := s.hrxBuffer()
	h.Sent++
	s.hrxPacket(buf, lci.TypeFAReq, []int{node}, uint8(h.node), 0, add, nil)
	for {
		s.hrxService(false)
		if r.replies.Len() > 0 {
			m := r.replies.Pop()
			s.handle(m, nil)
			s.hrxAlarm()
			return m.Tag
		}
		if h.upcallFn != nil && h.pending.Len() > 0 {
			s.handle(h.pending.Pop(), h.upcallFn)
			continue
		}
		if h.mustSpill() {
			s.spill()
			continue
		}
		s.hrxWait(nil)
	}
}

// hrxBuffer takes a free NI send buffer, waiting for acknowledgments and
// send completions to free one; packets for the process go to the upcall
// or are kept meanwhile.
func (s *Seq) hrxBuffer() int {
	h := s.h
	for {
		if len(h.freeSend) > 0 {
			buf := h.freeSend[len(h.freeSend)-1]
			h.freeSend = h.freeSend[:len(h.freeSend)-1]
			return buf
		}
		if h.upcallFn != nil && h.pending.Len() > 0 {
			s.handle(h.pending.Pop(), h.upcallFn)
			continue
		}
		if h.mustSpill() {
			// The acknowledgments that free a buffer need a host
			// buffer to arrive in.
			s.spill()
			continue
		}
		s.hrxWait(nil)
		s.hrxService(false)
	}
}

// hrxWait waits inside the library until a packet arrives, a deadline
// passes (the processor reads the timestamp counter as it polls: it is
// woken at the deadline), or stop holds.
func (s *Seq) hrxWait(stop func() bool) {
	h, r := s.h, s.h.hrx
	next := r.deadline()
	if next != 0 {
		h.CPU.WakeAt(next)
	}
	s.WaitUntil(func() bool {
		return h.peek() || (next != 0 && s.Now() >= next) || (stop != nil && stop())
	})
}

// hrxService is the protocol's work whenever the library runs: every
// packet in the receive queue, the timers, the replies and forwards
// waiting, the alarm (unless the signal handler that called it re-arms it
// at its end anyway).
func (s *Seq) hrxService(signal bool) {
	h, r := s.h, s.h.hrx
	r.inLib++
	for {
		m := h.take(s.Now())
		if m == nil {
			break
		}
		s.hrxIn(m)
	}
	s.hrxTimers()
	s.hrxPump()
	if signal {
		s.hrxAlarm()
	}
	r.inLib--
}

// --- sender side ---

// hrxPacket sends a packet of data from NI send buffer buf reliably to
// each of dsts: the copy and the address and size field once (the first
// descriptor fetches the data, the others resend it), a window entry and
// a descriptor per destination.
func (s *Seq) hrxPacket(buf int, typ uint8, dsts []int, root uint8, seq, tag uint32, data []byte) {
	h, r := s.h, s.h.hrx
	r.issued[buf] = 0 // in use (hrxFree marks a free buffer -1)
	s.Compute(h.costs.Send)
	if len(data) > 0 {
		at := h.sendBufAddr(buf)
		s.copyIn(at, data)
		s.pio(h.lay.SendBuf(buf), lci.Fetch{Addr: uint32(at), Len: uint32(len(data))}.Encode())
	}
	for i, dst := range dsts {
		s.Compute(h.costs.HrxSend)
		e := &hrxEntry{seq: r.snext[dst], d: lci.Desc{Type: typ, Dst: uint8(dst), Len: uint16(len(data)), Buf: uint32(buf), Tag: tag,
			HSeq: seq, HRoot: root, HCredits: lci.RxFields(0, uint8(r.snext[dst]))}}
		if i > 0 {
			e.d.Flags = lci.DescResend
		}
		r.snext[dst]++
		r.unacked[dst] = append(r.unacked[dst], e)
		if len(r.unacked[dst]) > r.w {
			h.env.Report(s.Now(), h.name, "lci.window", "%d packets unacknowledged towards node %d, more than the window %d", len(r.unacked[dst]), dst, r.w)
		}
		r.refs[buf]++
		r.stats.Sent++
		s.hrxTransmit(e)
	}
	h.hrxFree(buf)
}

// hrxTransmit issues an entry's descriptor, stamped with the timestamp
// counter; later transmissions of it resend the buffer.
func (s *Seq) hrxTransmit(e *hrxEntry) {
	r := s.h.hrx
	r.issued[e.d.Buf]++
	e.sentAt = s.Now()
	s.hrxDesc(e.d)
	e.d.Flags = lci.DescResend
}

// hrxDesc writes descriptor d with the acknowledgment owed to its
// destination piggybacked.
func (s *Seq) hrxDesc(d lci.Desc) {
	h, r := s.h, s.h.hrx
	if got := r.rexp[d.Dst] - 1; got > 0 {
		d.HFlags |= lci.HdrAck
		d.HCredits = lci.RxFields(uint8(got), lci.RxSeq(d.HCredits))
		r.owed[d.Dst], r.ackAt[d.Dst] = 0, 0
	}
	d.Seq = h.descSeq
	h.descSeq++
	s.pio(h.lay.SendQ+uint32(int(d.Seq-1)%h.lay.SendQSlots*lci.DescBytes), d.Encode())
}

// hrxAckNow sends src an explicit acknowledgment: a descriptor without
// data (the NI sends it from a control buffer). Building it costs what a
// send's protocol part does (Costs.HrxSend).
func (s *Seq) hrxAckNow(src int) {
	s.Compute(s.h.costs.HrxSend)
	s.h.hrx.stats.AcksSent++
	s.hrxDesc(lci.Desc{Type: lci.TypeAck, Dst: uint8(src)})
}

// hrxAcked takes an acknowledgment of src's: every packet up to the
// acknowledged sequence leaves the window and drops its buffer.
func (s *Seq) hrxAcked(src int, ack uint8) {
	h, r := s.h, s.h.hrx
	last := r.sbase[src] - 1 + uint32(uint8(ack-uint8(r.sbase[src]-1)))
	if last >= r.snext[src] {
		return // an old acknowledgment
	}
	u := r.unacked[src]
	n := 0
	for n < len(u) && u[n].seq <= last {
		s.Compute(h.costs.HrxFree)
		buf := int(u[n].d.Buf)
		r.refs[buf]--
		h.hrxFree(buf)
		n++
	}
	r.unacked[src] = u[n:]
	r.sbase[src] = last + 1
}

// hrxFree returns send buffer buf to the free list once no window entry
// holds it and the NI has completed every transmission of it.
func (h *Host) hrxFree(buf int) {
	r := h.hrx
	if r.refs[buf] > 0 || r.issued[buf] > 0 {
		return
	}
	r.issued[buf] = -1 // free: no second return
	if r.leakEvery > 0 {
		if r.frees++; r.frees%r.leakEvery == 0 {
			r.leaked++
			return // mutation: never returned
		}
	}
	h.freeSend = append(h.freeSend, buf)
}

// hrxPump sends the replies and forwards waiting, while send buffers are
// free.
func (s *Seq) hrxPump() {
	h, r := s.h, s.h.hrx
	for r.jobs.Len() > 0 && len(h.freeSend) > 0 {
		j := r.jobs.Pop()
		buf := h.freeSend[len(h.freeSend)-1]
		h.freeSend = h.freeSend[:len(h.freeSend)-1]
		s.hrxPacket(buf, j.typ, j.dsts, j.root, j.seq, j.tag, j.data)
	}
}

// --- receiver side ---

// hrxIn runs the protocol on a packet taken from the receive queue: the
// loads of its slot header and packet header, then a send completion
// (Costs.Completion) or the protocol's check (Costs.HrxRecv): the
// acknowledgment it carries, its sequence. A packet for the process is
// kept for it (a fetch-and-add reply for FetchAndAdd); a fetch-and-add
// request is served, a multicast queued for forwarding as well.
func (s *Seq) hrxIn(m *Msg) {
	h, r := s.h, s.h.hrx
	for _, at := range m.wireReads {
		s.Load(at, readWord)
	}
	if m.Type == lci.TypeCompl {
		s.Compute(h.costs.Completion)
		buf := int(m.Tag)
		if buf >= len(r.issued) || r.issued[buf] <= 0 {
			h.env.Report(s.Now(), h.name, "lci.api", "send completion of NI send buffer %d, which has no transmission outstanding", buf)
		} else {
			r.issued[buf]--
			h.hrxFree(buf)
		}
		s.Release(m)
		return
	}
	s.Compute(h.costs.HrxRecv)
	w := m.wire
	src := int(w.Src)
	if src >= h.nodes || src == h.node {
		h.env.Report(s.Now(), h.name, "lci.packet", "packet from node %d with header %+v", src, w)
		s.Release(m)
		return
	}
	if w.Flags&lci.HdrAck != 0 {
		s.hrxAcked(src, lci.RxAck(w.Credits))
	}
	switch w.Type {
	case lci.TypeAck:
		s.Release(m)
		return
	case lci.TypeData, lci.TypeMcast, lci.TypeFAReq, lci.TypeFARep:
	default:
		h.env.Report(s.Now(), h.name, "lci.packet", "unknown packet type %d from node %d", w.Type, src)
		s.Release(m)
		return
	}
	seq := lci.RxSeq(w.Credits)
	switch behind := uint8(r.rexp[src]) - seq; {
	case behind == 0:
	case behind < 128 && r.dupEvery > 0 && func() bool { r.dups++; return r.dups%r.dupEvery == 0 }():
		h.pending.Push(m) // mutation: taken as new (and acknowledged, as a duplicate is)
		s.hrxAckNow(src)
		return
	case behind < 128:
		r.stats.Duplicates++
		s.Release(m)
		s.hrxAckNow(src)
		return
	default:
		r.stats.OutOfOrder++
		s.Release(m)
		return
	}
	r.rexp[src]++
	r.owed[src]++
	if r.owed[src] >= r.w/2 {
		s.hrxAckNow(src)
	} else if r.ackAt[src] == 0 {
		r.ackAt[src] = s.Now() + r.ackWait
	}
	switch w.Type {
	case lci.TypeData:
		h.pending.Push(m)
	case lci.TypeFARep:
		r.replies.Push(m)
	case lci.TypeMcast:
		if kids := h.fw.Tree.Children(int(w.Root), h.node, h.nodes); len(kids) > 0 {
			r.jobs.Push(hrxJob{typ: lci.TypeMcast, dsts: kids, root: w.Root, seq: w.Seq, tag: w.Arg, data: slices.Clone(m.Data)})
		}
		h.pending.Push(m)
	case lci.TypeFAReq:
		old := r.faValue
		r.faValue += w.Arg
		r.jobs.Push(hrxJob{typ: lci.TypeFARep, dsts: []int{src}, root: uint8(h.node), seq: w.Seq, tag: old})
		s.Release(m)
	}
}

// --- timers ---

// hrxTimers reads the timestamp counter (Costs.HrxTimer) and runs what is
// due: delayed acknowledgments, then retransmissions of the packets whose
// timestamps are too old (in node order).
func (s *Seq) hrxTimers() {
	h, r := s.h, s.h.hrx
	s.Compute(h.costs.HrxTimer)
	now := s.Now()
	for src, at := range r.ackAt {
		if at != 0 && at <= now {
			r.ackAt[src] = 0
			if r.owed[src] > 0 {
				s.hrxAckNow(src)
			}
		}
	}
	for dst := range r.unacked {
		u := r.unacked[dst]
		if len(u) == 0 || u[0].sentAt+r.rto > now {
			continue
		}
		r.stats.Timeouts++
		for _, e := range u {
			if e.sentAt+r.rto <= now {
				s.Compute(h.costs.HrxSend)
				r.stats.Retransmitted++
				if h.env.Tracing() {
					h.env.Emit(s.Now(), h.CPU.Clock().CycleAt(s.Now()), h.name, "lci.hrx", "event", "resend", "peer", fmt.Sprint(dst), "seq", fmt.Sprint(e.seq))
				}
				s.hrxTransmit(e)
			}
		}
	}
}

// deadline is the earliest timer deadline (0: none): a delayed
// acknowledgment, the oldest transmission's timeout per destination.
func (r *hrxState) deadline() clock.Time {
	var next clock.Time
	earlier := func(at clock.Time) {
		if at != 0 && (next == 0 || at < next) {
			next = at
		}
	}
	for _, at := range r.ackAt {
		earlier(at)
	}
	for _, u := range r.unacked {
		for _, e := range u {
			earlier(e.sentAt + r.rto)
		}
	}
	return next
}

// hrxAlarm arms the OS alarm (Costs.Alarm, a system call) when work with
// a deadline is left (or a reply or forward waits for a send buffer) and
// no alarm is pending. assumed: the alarm is a backstop at the
// retransmission timeout's granularity, set for the earliest deadline but
// no sooner than one retransmission timeout from now: a process inside the
// library meets its deadlines by reading the counter, and only one that
// stays away from the library longer than that takes the signal. (Armed
// for the earliest deadline itself, the delayed acknowledgment's 70 µs on
// the PPro, a ping-pong took the signal's 20 µs every 90 µs: e2e 22.9 µs
// against 17.0 µs without signal costs.) A delayed acknowledgment of a
// process that stays away that long is late, and its sender may resend
// what the receiver has: the duplicate is dropped and acknowledged.
func (s *Seq) hrxAlarm() {
	h, r := s.h, s.h.hrx
	next := r.deadline()
	if r.jobs.Len() > 0 && next == 0 {
		next = s.Now()
	}
	if next == 0 || r.alarm.at != 0 {
		return
	}
	next = max(next, s.Now()+r.rto)
	s.Compute(h.costs.Alarm)
	r.alarm.set(max(next, s.Now()+1))
}
