package shrimp

import (
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// mutCombineGap lets a non-consecutive store join an open packet
// (test-only fault).
var mutCombineGap = env.DeclareMutation("shrimp.combine-gap",
	"every Nth store to a combining page that should close the open AU packet because it is not consecutive joins it "+
		"instead, as if it were consecutive: its bytes land at the wrong remote address (caught by the scoreboard)")

// outPath is the AU path (core domain, issue 14 design section 1.1): the
// snoop queue, the OPT lookup stage, the packetiser with its combining
// register, and the Outgoing FIFO.
type outPath struct {
	opt []OPTEntry

	mb                   *bus.Bus
	memTarget, dmaMaster string
	snoopQ               *fifo.FIFO[snoopBeat]
	look                 []lookBeat

	// open is the AU packet being combined (its header and data words are
	// already in the FIFO; the arbiter takes it once closed); openLast is
	// the core cycle of its last store (the combining timer).
	open     *auPacket
	openLast clock.Cycle

	fifo      *fifo.FIFO[outWord]
	fifoBytes int // occupancy in bytes, as the packetiser sees it
	thrBytes  int // the programmed threshold in bytes

	skipEvery, skipped int // shrimp.snoop-skip
	gapEvery, gaps     int // shrimp.combine-gap
	noThrEvery, thrs   int // shrimp.no-threshold

	sigOpen *waves.Signal
}

// lookBeat is a snooped beat in the OPT lookup, with its entry and the
// core cycle the packetiser may take it.
type lookBeat struct {
	beat  snoopBeat
	opt   OPTEntry
	ready clock.Cycle
}

// auPacket is an AU packet in the packetiser and the Outgoing FIFO: closed
// once its flush reason is known (the arbiter takes only closed packets).
type auPacket struct {
	p      *Packet
	closed bool
	page   uint64 // local page
	sub    int    // sub-page boundary in bytes
	words  int    // data words in the FIFO
}

// outWord is one Outgoing FIFO word: the header word of pk or its data
// word idx (the bytes stay in pk.p.Data).
type outWord struct {
	pk     *auPacket
	header bool
	idx    int
}

// buildOut creates the AU path.
func (n *NI) buildOut() error {
	n.out.opt = make([]OPTEntry, n.cfg.Entries())
	if err := n.buildSnoop(); err != nil {
		return err
	}
	if err := n.buildOutFIFO(); err != nil {
		return err
	}
	n.out.gapEvery = n.env.Mutation(mutCombineGap)
	// open_len: data bytes of the AU packet being combined (0: none).
	n.out.sigOpen = n.env.Waves.Integer(n.name+".Out", "open_len", 17)
	return nil
}

// tickCore advances the core domain by one cycle, output first: the NIC
// port (a word to the NIC or the incoming stream), the arbiter (picks the
// next packet for the port), the packetiser (one looked-up beat into the
// Outgoing FIFO, or the combining timer), then the snoop register and OPT
// lookup.
func (n *NI) tickCore(now clock.Time) bool {
	c := n.Clock().CycleAt(now)
	port := n.tickPort(now)
	arb := n.tickArbiter(now)
	pk := n.tickPacketiser(now, c)
	sn := n.tickSnoop(now, c)
	return port || arb || pk || sn || len(n.out.look) > 0
}

// tickPacketiser turns the oldest looked-up beat whose lookup is done into
// Outgoing FIFO words: a packet per store (SH-P16) or, on a combining page,
// a store joining the open packet until a non-consecutive store, the page
// or sub-page boundary, MaxPacketBytes or the timer closes it (SH-P17).
func (n *NI) tickPacketiser(now clock.Time, c clock.Cycle) bool {
	o := &n.out
	did := false
	if len(o.look) > 0 && o.look[0].ready <= c {
		lb := o.look[0]
		o.look = o.look[1:]
		n.store(now, c, lb.beat, lb.opt)
		did = true
	}
	if o.open != nil {
		deadline := o.openLast + clock.Cycle(n.cfg.CombineCycles)
		if c >= deadline {
			n.flush(now, FlushTimer)
			return true
		}
		if !did && len(o.look) == 0 {
			n.WakeAt(n.Clock().TimeOf(deadline))
		}
	}
	return did
}

// store handles one snooped beat with its OPT entry.
func (n *NI) store(now clock.Time, c clock.Cycle, b snoopBeat, e OPTEntry) {
	o := &n.out
	cfg := &n.cfg
	if !cfg.AU || !e.Valid || !e.AU {
		n.counters.AUIgnored++
		return
	}
	if n.onSnoop != nil {
		n.onSnoop(now, b.addr, b.data, e)
	}
	pageBytes := uint64(cfg.PageBytes)
	page := b.addr / pageBytes
	dst := uint64(e.DstPage)*pageBytes + b.addr%pageBytes
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, c, n.name, "shrimp.snoop", trace.Addr("addr", b.addr), trace.Int("len", int64(len(b.data))),
			trace.Int("dst", int64(e.DstNode)), trace.Addr("dstaddr", dst), trace.Hash("hash", b.data))
	}
	combine := cfg.Combine && e.Combine
	if o.open != nil {
		p := o.open.p
		consecutive := combine && page == o.open.page && b.addr == p.SrcAddr+uint64(p.Len) && p.Dst == e.DstNode
		if !consecutive && combine && page == o.open.page && p.Dst == e.DstNode && o.gapEvery > 0 {
			if o.gaps++; o.gaps%o.gapEvery == 0 {
				consecutive = true // mutation: the gap is ignored
			}
		}
		switch {
		case !consecutive:
			n.flush(now, FlushNonConsecutive)
		case p.Len+len(b.data) > cfg.MaxPacketBytes:
			n.flush(now, FlushFull)
		default:
			n.appendStore(now, c, b)
			return
		}
	}
	// A new packet: its header word and data words.
	need := 1 + (len(b.data)+cfg.FIFOWidthBytes-1)/cfg.FIFOWidthBytes
	if !n.fifoRoom(now, need) {
		n.overflow(now, c, b)
		return
	}
	sub := cfg.SubpageBytes
	if e.Subpage != 0 {
		sub = e.Subpage
	}
	pk := &auPacket{p: &Packet{Kind: KindAU, Src: n.node, Dst: e.DstNode, DstAddr: dst, SrcAddr: b.addr,
		Notify: e.Notify}, page: page, sub: sub}
	n.pushWord(now, outWord{pk: pk, header: true})
	o.open = pk
	n.appendStore(now, c, b)
	if !combine {
		n.flush(now, FlushStore)
	}
}

// appendStore adds b's bytes to the open packet (the caller checked that
// they are consecutive and fit), writing the data words it starts, and
// closes the packet at a page, sub-page or size boundary.
func (n *NI) appendStore(now clock.Time, c clock.Cycle, b snoopBeat) {
	o := &n.out
	cfg := &n.cfg
	pk := o.open
	p := pk.p
	w := cfg.FIFOWidthBytes
	need := (p.Len+len(b.data)+w-1)/w - pk.words
	if p.Len > 0 { // joining: count it (the first store opened the packet)
		if !n.fifoRoom(now, need) {
			n.overflow(now, c, b)
			return
		}
		n.counters.Combined++
	}
	p.Data = append(p.Data, b.data...)
	p.Len += len(b.data)
	for range need {
		n.pushWord(now, outWord{pk: pk, idx: pk.words})
		pk.words++
	}
	o.openLast = c
	o.sigOpen.Set(now, uint64(p.Len))
	end := p.SrcAddr + uint64(p.Len)
	switch {
	case end%uint64(cfg.PageBytes) == 0:
		n.flush(now, FlushPage)
	case end%uint64(pk.sub) == 0:
		n.flush(now, FlushSubpage)
	case p.Len >= cfg.MaxPacketBytes:
		n.flush(now, FlushFull)
	}
}

// flush closes the open packet with reason f.
func (n *NI) flush(now clock.Time, f Flush) {
	o := &n.out
	pk := o.open
	if pk == nil {
		return
	}
	o.open = nil
	pk.closed = true
	p := pk.p
	p.Flush = f
	n.counters.AUPackets++
	n.counters.AUBytes += uint64(p.Len)
	n.counters.FlushBy[f]++
	o.sigOpen.Set(now, 0)
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.Clock().CycleAt(now), n.name, "shrimp.pkt", trace.Str("kind", p.Kind.String()),
			trace.Int("dst", int64(p.Dst)), trace.Addr("addr", p.DstAddr), trace.Addr("src_addr", p.SrcAddr),
			trace.Int("len", int64(p.Len)), trace.Bool("notify", p.Notify), trace.Str("flush", f.String()),
			trace.Hash("hash", p.Data))
	}
}

// overflow drops a snooped store that found no room in the Outgoing FIFO:
// the memory write cannot be stalled (SH-P21), so its AU update is lost.
// It is reported to the run's checker (shrimp.overflow): a run that
// overflows fails unless it expects to.
func (n *NI) overflow(now clock.Time, c clock.Cycle, b snoopBeat) {
	n.counters.Overflows++
	n.env.Report(now, n.name, "shrimp.overflow", "Outgoing FIFO full (%d B): store of %d B at %#x dropped",
		n.cfg.FIFOBytes, len(b.data), b.addr)
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, c, n.name, "shrimp.fifo", trace.Str("event", "overflow"), trace.Addr("addr", b.addr),
			trace.Int("len", int64(len(b.data))), trace.Int("bytes", int64(n.out.fifoBytes)))
	}
	n.drop(now, Drop{Reason: DropOverflow, Addr: b.addr, Len: len(b.data)})
}

// idleOut reports whether the AU path holds nothing.
func (n *NI) idleOut() bool {
	o := &n.out
	return o.snoopQ.Idle() && len(o.look) == 0 && o.open == nil && o.fifo.Idle()
}

// stateOut describes the AU path.
func (n *NI) stateOut() string {
	o := &n.out
	open := "none"
	if o.open != nil {
		open = fmt.Sprintf("%d B at %#x", o.open.p.Len, o.open.p.SrcAddr)
	}
	return fmt.Sprintf("snoop %d, lookup %d, open %s, fifo %d B", o.snoopQ.Len(), len(o.look), open, o.fifoBytes)
}
