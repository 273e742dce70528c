package shrimp

import (
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
)

// Test-only faults of the incoming path (see env.DeclareMutation); each
// breaks a property one of the cluster's checkers exists for.
var (
	mutRxSwap = env.DeclareMutation("shrimp.rx-swap",
		"the incoming DMA holds back every Nth packet written in one burst and writes it to memory after the next "+
			"packet (caught by the per-pair order checker)")
	mutNotifyAlways = env.DeclareMutation("shrimp.notify-always",
		"every incoming packet written to memory queues a notification record and raises the interrupt, whatever "+
			"its interrupt bit and the IPT's (caught by the notification checker)")
	mutIPTIgnore = env.DeclareMutation("shrimp.ipt-ignore",
		"the incoming path ignores the IPT's exported bit and writes packets to pages nobody exported "+
			"(caught by the protection monitor)")
)

// The incoming path (shrimp-design-choices.txt sections 2.1 and 4.5.1;
// issue 14 design section 1.1), on the EISA clock. The NIC port hands it a
// packet as words on inStream: a header word (the packet, no data), then
// its data in FIFOWidthBytes words, the last one marked Last (and Bad when
// the link CRC failed). Per packet:
//
//   - The header is checked against the IPT (SH-P18) in the cycle it is
//     taken (an SRAM read): a packet for a page that is not exported, or
//     that would leave its page, is dropped (its words are taken and
//     discarded one per cycle), counted (RxUnexported) and reported
//     (OnDrop DropUnexported); nothing reaches memory and no interrupt is
//     raised.
//   - An exported packet is written to host memory by the incoming DMA, an
//     EISA master ("<name>.In"): «each packet generates an individual bus
//     transaction at the receiver» (L247), so a packet is one EISA write,
//     cut only where a burst would pass a DMABurstBytes-aligned boundary
//     (the EISA bus's own MaxBurstBytes; a 4 KB DU packet is four 1 KB
//     bursts). The first burst starts InSetupCycles after the header was
//     taken.
//   - A burst starts only when it is fully staged (issue 14 design R3): the
//     bus never waits on the network, so held buses cannot wait on each
//     other across nodes. The path stages at most DMAStageBytes (the burst
//     being written, the ones waiting, the one being assembled); beyond it
//     it stops taking words, and the NIC's FIFOs back up instead.
//   - A packet's last burst starts only after its tail passed the link CRC
//     (design R8): a packet whose tail is Bad writes nothing of its last
//     burst (nothing at all when it fits one burst, as every AU packet and
//     most DU ones do); the earlier bursts of a longer DU packet stay in
//     memory (assumed: the paper describes no retransmission). The drop is
//     counted (RxCRC), reported (OnDrop DropCRC, with the bytes not
//     written) and raises IRQError.
//   - When the last burst has been handed to the bus, a packet whose
//     header has the interrupt bit set, for a page whose IPT entry has its
//     interrupt bit set, queues a notification record (page, source node;
//     csr.go's RegNotify pops it) and raises IRQNotify (SH-P18, L103). A
//     record that finds the queue (NotifyQueue) full is lost and reported
//     (shrimp.notify-overflow): the kernel did not keep up.
//
// Writes are posted (the Xpress-EISA bridge posts DMA writes): a burst is
// done for the NI when its last beat is handed to the bus master channel.
//
// Why not rtl/dma's engine with a stream source, as mcadapter's receive
// DMA: its descriptors cannot be aborted, and a packet whose tail fails
// the CRC must give up its last burst after earlier ones were written; a
// descriptor per burst would charge the engine's per-descriptor pipeline
// per burst instead of per packet. The path keeps rtl/dma's rules: a burst
// starts fully staged, bursts end on DMABurstBytes-aligned addresses,
// beats are mem.WriteBeats of the bus width, one beat per cycle.
//
// Trace records (path = the NI's name, EISA cycles): shrimp.rx when a
// header is taken (kind, src, seq, addr, len, notify, exported),
// shrimp.rxdma when a burst's last beat is handed to the bus (src, seq,
// addr, len, start cycle, last, hash), shrimp.drop (reason, src, seq,
// addr, len) and shrimp.notify (page, src).
type inPath struct {
	// ipt is the Incoming Page Table (ipt.go).
	ipt []IPTEntry
	// ch is the incoming DMA's EISA master channel; width its beat size.
	ch     *mem.Channel
	master string
	width  int

	// Assembly: pkt is the packet whose words are being taken (nil: the
	// next word is a header); dropping discards its words (unexported);
	// interrupt is its page's IPT interrupt bit; staged the data taken
	// and not yet cut into a burst; handed the bytes cut into bursts;
	// setupEnd the edge the packet's first burst may start at.
	pkt       *Packet
	dropping  bool
	interrupt bool
	staged    []byte
	handed    int
	setupEnd  clock.Time

	// ready are staged bursts waiting for the bus, in order; held the
	// burst the rx-swap mutation holds back; stagedBytes the bytes of
	// ready, held and the burst being written.
	ready       []*rxBurst
	held        *rxBurst
	stagedBytes int

	// The burst being written: its beats not yet handed to the bus.
	cur     *rxBurst
	wr      []mem.Beat
	curFrom clock.Cycle

	seq uint64
	// nth counts single-burst packets considered for the rx-swap mutation.
	nth                      uint64
	swapEvery                int
	notifyAlways, iptIgnore  bool
	wordsTaken, burstsIssued uint64
}

// rxBurst is one EISA write of an incoming packet.
type rxBurst struct {
	pkt   *Packet
	addr  uint64
	data  []byte
	first bool // the packet's first burst (OnPacketIn)
	last  bool // the packet's last burst (completion, notification)
	// notify: queue a notification when the last burst is handed over.
	notify bool
	// readyAt is the first edge the burst may start at (the setup).
	readyAt clock.Time
	counted bool // considered once by the rx-swap mutation
}

// buildIn creates the incoming path: the IPT (one entry per page, all
// not exported) and the mutations.
func (n *NI) buildIn() error {
	in := &n.in
	in.ipt = make([]IPTEntry, n.cfg.Entries())
	in.swapEvery = n.env.Mutation(mutRxSwap)
	in.notifyAlways = n.env.Mutation(mutNotifyAlways) != 0
	in.iptIgnore = n.env.Mutation(mutIPTIgnore) != 0
	return nil
}

// attachIn adds the incoming DMA as master "<name>.In" on eisa.
func (n *NI) attachIn(eisa *bus.Bus, _ AddressMap) error {
	in := &n.in
	if in.ch != nil {
		return fmt.Errorf("incoming DMA already attached to an EISA bus")
	}
	in.master = n.name + ".In"
	ch, err := eisa.AddMaster(in.master)
	if err != nil {
		return err
	}
	ch.ConnectMaster(n.eisa)
	in.ch, in.width = ch, eisa.Config().WidthBytes
	return nil
}

// tickIn advances the incoming path by one EISA cycle, output first: the
// DMA hands a beat to the bus (starting a staged burst if none is being
// written), then the assembly takes one word from inStream.
func (n *NI) tickIn(now clock.Time) bool {
	if n.in.ch == nil {
		return false // not attached: words wait in inStream
	}
	w := n.rxWrite(now)
	a := n.rxAssemble(now)
	return w || a
}

// rxWrite hands the next beat of the current burst to the bus, starting the
// next staged burst first if none is being written.
func (n *NI) rxWrite(now clock.Time) bool {
	in := &n.in
	if in.cur == nil {
		b := n.rxNext(now)
		if b == nil {
			return false
		}
		if now < b.readyAt {
			n.eisa.WakeAt(b.readyAt)
			return false
		}
		n.rxStart(now, b)
	}
	if !in.ch.Down.CanPush(now) {
		return false // the channel wakes the domain when it has room
	}
	beat := in.wr[0]
	in.ch.Down.Push(now, beat)
	in.wr = in.wr[1:]
	if len(in.wr) == 0 {
		n.rxBurstDone(now)
	}
	return true
}

// rxNext returns the burst to write next (nil: none), applying the rx-swap
// mutation: every Nth single-burst packet is held back while another
// packet is on its way and written after it.
func (n *NI) rxNext(_ clock.Time) *rxBurst {
	in := &n.in
	for {
		if len(in.ready) == 0 {
			if in.held != nil && in.pkt == nil && n.inStream.Len() == 0 {
				// Nothing came after the held packet: nothing to swap with.
				b := in.held
				in.held = nil
				in.ready = append(in.ready, b)
				continue
			}
			return nil
		}
		b := in.ready[0]
		if in.swapEvery > 0 && in.held == nil && b.first && b.last && !b.counted {
			b.counted = true
			in.nth++
			if in.nth%uint64(in.swapEvery) == 0 && (len(in.ready) > 1 || in.pkt != nil || n.inStream.Len() > 0) {
				in.held = b
				in.ready = in.ready[1:]
				continue
			}
		}
		return b
	}
}

// rxStart makes b the burst being written: its beats, and OnPacketIn for a
// packet's first burst.
func (n *NI) rxStart(now clock.Time, b *rxBurst) {
	in := &n.in
	in.ready = in.ready[1:]
	in.seq++
	req := &mem.Req{Op: mem.Write, Addr: b.addr, Len: len(b.data), Posted: true, Class: "dma",
		Master: in.master, Seq: in.seq}
	in.cur, in.wr, in.curFrom = b, mem.WriteBeats(req, b.data, in.width), n.eisa.Clock().CycleAt(now)
	in.burstsIssued++
	if b.first && n.onPacketIn != nil {
		n.onPacketIn(now, b.pkt, b.addr)
	}
}

// rxBurstDone finishes the current burst once its last beat is on the bus:
// the trace, and for a packet's last burst the counters, the notification
// and the release of a burst rx-swap held back.
func (n *NI) rxBurstDone(now clock.Time) {
	in := &n.in
	b := in.cur
	in.cur = nil
	in.stagedBytes -= len(b.data)
	p := b.pkt
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.rxdma", trace.Str("kind", p.Kind.String()),
			trace.Int("src", int64(p.Src)), trace.Uint("seq", p.Seq), trace.Addr("addr", b.addr),
			trace.Int("len", int64(len(b.data))), trace.Uint("start", uint64(in.curFrom)), trace.Bool("last", b.last),
			trace.Hash("hash", b.data))
	}
	if !b.last {
		return
	}
	n.rxPacketDone(now, p, b.notify)
	if in.held != nil && in.held != b {
		in.ready = append([]*rxBurst{in.held}, in.ready...)
		in.held = nil
	}
}

// rxPacketDone counts a packet written to memory and queues its
// notification.
func (n *NI) rxPacketDone(now clock.Time, p *Packet, notify bool) {
	n.counters.RxPackets++
	n.counters.RxBytes += uint64(p.Len)
	if !notify {
		return
	}
	nt := Notification{Page: int(p.DstAddr / uint64(n.cfg.PageBytes)), Src: p.Src}
	if !n.pushNotify(nt) {
		n.env.Report(now, n.name, "shrimp.notify-overflow", "notification of page %d from node %d lost: %d records queued",
			nt.Page, nt.Src, n.cfg.NotifyQueue)
		return
	}
	n.counters.Notifies++
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.notify", trace.Int("page", int64(nt.Page)),
			trace.Int("src", int64(nt.Src)))
	}
	n.raise(now, IRQNotify)
}

// rxAssemble takes one word from inStream: a header starts a packet (the
// IPT check), a data word is staged, and every burst fully staged is cut
// and queued for the DMA.
func (n *NI) rxAssemble(now clock.Time) bool {
	in := &n.in
	if in.pkt != nil && !in.dropping && in.stagedBytes+len(in.staged)+n.cfg.FIFOWidthBytes > n.cfg.DMAStageBytes {
		return false // staging full: a burst leaving the bus makes room
	}
	w, ok := n.inStream.Pop(now)
	if !ok {
		return false
	}
	in.wordsTaken++
	if in.pkt == nil {
		n.rxHeader(now, w)
	} else {
		if w.Pkt != in.pkt {
			n.env.Report(now, n.name, "shrimp.rx", "word of another packet inside packet seq %d", in.pkt.Seq)
		}
		if !in.dropping {
			in.staged = append(in.staged, w.Data...)
			n.rxCut(now, false)
		}
	}
	if w.Last {
		n.rxTail(now, w.Bad)
	}
	return true
}

// rxHeader starts packet w.Pkt: the IPT lookup and the exported check.
func (n *NI) rxHeader(now clock.Time, w streamWord) {
	in := &n.in
	p := w.Pkt
	if p == nil {
		n.env.Report(now, n.name, "shrimp.rx", "header word without a packet")
		p = &Packet{}
	}
	in.pkt, in.staged, in.handed, in.dropping = p, nil, 0, false
	pb := uint64(n.cfg.PageBytes)
	page := int(p.DstAddr / pb)
	inPage := p.Len == 0 || (p.DstAddr+uint64(p.Len)-1)/pb == uint64(page)
	e := n.iptGet(page)
	exported := inPage && page < len(in.ipt) && (e.Exported || in.iptIgnore)
	in.interrupt = e.Interrupt
	in.setupEnd = n.eisa.Clock().After(now, clock.Cycle(n.cfg.InSetupCycles))
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.rx", trace.Str("kind", p.Kind.String()),
			trace.Int("src", int64(p.Src)), trace.Uint("seq", p.Seq), trace.Addr("addr", p.DstAddr),
			trace.Int("len", int64(p.Len)), trace.Bool("notify", p.Notify), trace.Bool("exported", exported))
	}
	if p.Len == 0 {
		// Only a corrupted header decodes to no data (DecodeHeader refuses
		// a zero length; the NIC keeps the packet with Len 0 and fails its
		// tail): rxTail drops it as a CRC failure, whatever page its
		// address would name.
		return
	}
	if !exported {
		in.dropping = true
		n.counters.RxUnexported++
		n.rxDrop(now, Drop{Reason: DropUnexported, Pkt: p, Addr: p.DstAddr, Len: p.Len})
	}
}

// rxCut queues every burst of the current packet that is fully staged; the
// packet's last burst only once its tail passed the CRC (tail).
func (n *NI) rxCut(now clock.Time, tail bool) {
	in := &n.in
	p := in.pkt
	burst := uint64(n.cfg.DMABurstBytes)
	for in.handed < p.Len {
		addr := p.DstAddr + uint64(in.handed)
		k := min(p.Len-in.handed, int(burst-addr%burst))
		last := in.handed+k == p.Len
		if len(in.staged) < k || (last && !tail) {
			return
		}
		b := &rxBurst{pkt: p, addr: addr, data: in.staged[:k:k], first: in.handed == 0, last: last,
			notify: last && ((p.Notify && in.interrupt) || in.notifyAlways), readyAt: now}
		if b.first {
			b.readyAt = max(now, in.setupEnd)
		}
		in.staged = in.staged[k:]
		in.handed += k
		in.stagedBytes += k
		in.ready = append(in.ready, b)
	}
}

// rxTail ends the current packet at its tail word: a CRC failure drops
// what is not yet queued; a good tail queues the last burst.
func (n *NI) rxTail(now clock.Time, bad bool) {
	in := &n.in
	p := in.pkt
	defer func() { in.pkt, in.staged = nil, nil }()
	if in.dropping {
		return
	}
	if bad {
		n.counters.RxCRC++
		n.rxDrop(now, Drop{Reason: DropCRC, Pkt: p, Addr: p.DstAddr + uint64(in.handed), Len: p.Len - in.handed})
		n.raise(now, IRQError)
		return
	}
	n.rxCut(now, true)
	if in.handed < p.Len {
		n.env.Report(now, n.name, "shrimp.rx", "packet seq %d ended after %d of %d bytes with a good CRC",
			p.Seq, in.handed+len(in.staged), p.Len)
		return
	}
	if p.Len == 0 {
		n.rxPacketDone(now, p, (p.Notify && in.interrupt) || in.notifyAlways)
	}
}

// rxDrop traces and reports a drop.
func (n *NI) rxDrop(now clock.Time, d Drop) {
	if n.env.Trace.Enabled() {
		p := d.Pkt
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.drop", trace.Str("reason", d.Reason.String()),
			trace.Int("src", int64(p.Src)), trace.Uint("seq", p.Seq), trace.Addr("addr", d.Addr), trace.Int("len", int64(d.Len)))
	}
	n.drop(now, d)
}

// idleIn reports whether no incoming packet is held.
func (n *NI) idleIn() bool {
	in := &n.in
	return in.pkt == nil && in.cur == nil && len(in.ready) == 0 && in.held == nil
}

// stateIn describes the incoming path.
func (n *NI) stateIn() string {
	in := &n.in
	s := "idle"
	if in.pkt != nil {
		s = fmt.Sprintf("packet seq %d from %d: %d of %d bytes cut, %d staged", in.pkt.Seq, in.pkt.Src, in.handed, in.pkt.Len, len(in.staged))
		if in.dropping {
			s += " (dropping)"
		}
	}
	if in.cur != nil {
		s += fmt.Sprintf("; writing %#x, %d beats left", in.cur.addr, len(in.wr))
	}
	return s + fmt.Sprintf("; %d bursts ready", len(in.ready))
}
