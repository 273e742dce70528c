package lci

import (
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/rtl/env"
)

// Machine states and events.
const (
	sIdle    firmware.State = "IDLE"
	sFetch   firmware.State = "FETCH"
	sOpen    firmware.State = "OPEN"
	sBlocked firmware.State = "BLOCKED"
	sBusy    firmware.State = "BUSY"
	sArmed   firmware.State = "ARMED"
	sStarved firmware.State = "STARVED"
	sHave    firmware.State = "HAVE"
	sWait    firmware.State = "WAIT"
	sOff     firmware.State = "OFF"
	sOn      firmware.State = "ON"
)

func (p *Program) build(e *env.Env) error {
	k := p.cfg.Costs
	var err error
	mk := func(name string, init firmware.State, rows []firmware.Transition) *firmware.Machine {
		if err != nil {
			return nil
		}
		var m *firmware.Machine
		m, err = firmware.NewMachine(e, p.name+"."+name, init, rows)
		return m
	}
	p.hsq = mk("hsq", sIdle, []firmware.Transition{
		{From: sIdle, On: "poll", Do: p.pollSendQ},
		{From: sFetch, On: "poll", Do: p.pollSendQ},
		{From: sIdle, On: "local", Do: p.takeFwd},
		{From: sFetch, On: "local", Do: p.takeFwd},
		{From: sIdle, On: "fetch", To: sFetch, Cost: k.HostSend, Do: p.fetch},
		{From: sFetch, On: "fetch", Cost: k.HostSend, Do: p.fetch},
		{From: sIdle, On: "pass", Cost: k.HostSend, Do: p.pass},
		{From: sFetch, On: "pass", Cost: k.HostSend, Do: p.pass},
		{From: sFetch, On: "fetched", Do: p.fetched},
		{From: sFetch, On: "drained", To: sIdle},
	})
	p.fc = mk("fc", sOpen, []firmware.Transition{
		{From: sOpen, On: "want", Do: p.want},
		{From: sBlocked, On: "want", Do: p.want},
		{From: sOpen, On: "close", To: sBlocked},
		{From: sOpen, On: "credit", Cost: k.Credit, Do: p.credit},
		{From: sBlocked, On: "credit", Cost: k.Credit, Do: p.credit},
		{From: sBlocked, On: "open", To: sOpen},
		{From: sOpen, On: "release", Cost: k.Release, Do: p.release},
		{From: sBlocked, On: "release", Cost: k.Release, Do: p.release},
		{From: sOpen, On: "ack", Cost: k.Ack, Do: p.ack},
		{From: sBlocked, On: "ack", Cost: k.Ack, Do: p.ack},
	})
	// In I-nirx a transmitted packet's buffer is freed when it is
	// acknowledged, and that part of SendDone is RxFree, paid there.
	sentCost := k.SendDone
	if p.rx != nil {
		sentCost = max(k.SendDone-k.RxFree, 0)
	}
	p.tx = mk("tx", sIdle, []firmware.Transition{
		{From: sIdle, On: "go", To: sBusy, Cost: k.Transmit, Do: p.transmit},
		{From: sBusy, On: "done", To: sIdle, Cost: sentCost, Do: p.sent},
	})
	p.rq = mk("rq", sArmed, []firmware.Transition{
		{From: sArmed, On: "packet", Cost: k.Receive, Do: p.receive},
		{From: sArmed, On: "starve", To: sStarved},
		{From: sStarved, On: "freed", To: sArmed, Do: func(c *firmware.Ctx, _ any) { p.arm(c) }},
		{From: sArmed, On: "freed"},
	})
	p.mc = mk("mc", sIdle, []firmware.Transition{
		{From: sIdle, On: "packet", Do: p.forward},
	})
	p.fa = mk("fa", sIdle, []firmware.Transition{
		{From: sIdle, On: "request", Cost: k.FetchAdd, Do: p.fetchAdd},
	})
	p.hrq = mk("hrq", sHave, []firmware.Transition{
		{From: sHave, On: "deliver", Cost: k.Deliver, Do: p.deliver},
		{From: sHave, On: "exhausted", To: sWait},
		{From: sWait, On: "deliver", Do: func(_ *firmware.Ctx, a any) { p.hostWait.Push(a.(int)) }},
		{From: sHave, On: "freed", Cost: k.Replenish},
		{From: sWait, On: "freed", Cost: k.Replenish, Do: p.retryDeliver},
		{From: sWait, On: "replenished", To: sHave},
	})
	p.dmaM = mk("dma", sIdle, []firmware.Transition{
		{From: sIdle, On: "job", To: sBusy, Cost: k.DMAStart, Do: p.startJob},
		{From: sBusy, On: "job", Do: func(_ *firmware.Ctx, a any) { p.jobs.Push(a.(dmaJob)) }},
		{From: sBusy, On: "done", To: sIdle, Cost: k.DMADone, Do: p.dmaDone},
	})
	watch := func(c *firmware.Ctx, _ any) { c.SetTimer(p.cfg.WatchdogCycles) }
	if p.rx != nil {
		watch = p.rxWatch // on the timer I-nirx shares
		p.rxm = mk("rx", sIdle, []firmware.Transition{
			{From: sIdle, On: "acked", Cost: k.RxAck, Do: p.rxAcked},
			{From: sIdle, On: "tick", Cost: k.Timer, Do: p.rxExpire},
		})
	}
	if p.rcpy != nil {
		p.buildRcpy(mk)
	}
	p.timer = mk("timer", sOff, []firmware.Transition{
		{From: sOff, On: "delivered", To: sOn, Do: watch},
		{From: sOn, On: "delivered"},
		{From: sOn, On: "expire", To: sOff, Cost: k.Timer, Do: p.expire},
	})
	return err
}

// Handle implements firmware.Program: one pass of the main loop.
func (p *Program) Handle(c *firmware.Ctx, ev firmware.HWEvent) {
	if p.aborted {
		return
	}
	c.Charge(p.cfg.Costs.Dispatch)
	p.txStarted = false
	switch ev.Kind {
	case firmware.RecvDone:
		c.Fire(p.rq, "packet", ev)
	case firmware.HostDMADone:
		c.Fire(p.dmaM, "done", ev)
	case firmware.SendDone:
		c.Fire(p.tx, "done", ev)
	case firmware.HostWrite:
		if ev.Addr >= p.layout.SendQ && ev.Addr < p.layout.SendQ+uint32(p.layout.SendQSlots*DescBytes) {
			c.Fire(p.hsq, "poll", nil)
		} else if p.rcpyWrite(ev.Addr) {
			c.Fire(p.rcm, "unlock", ev.Addr)
		} else {
			c.Fire(p.hrq, "freed", nil)
		}
	case firmware.Timer:
		if p.rx != nil {
			c.Fire(p.rxm, "tick", nil)
		} else {
			c.Fire(p.timer, "expire", nil)
		}
	}
	for p.fwdRead != p.fwdNext && !p.txStarted {
		// The main loop's next passes find the descriptors the
		// Multicast module enqueued in the NI's own send queue (section
		// 4.2), one per pass, each charged as a pass of its own
		// (Dispatch) plus the descriptor's HostSend, like the host's.
		// The card raises no event for the program's own SRAM writes,
		// so the passes run here, after this one's work. Once a handler
		// or a pass has started the send engine (its commands issue at
		// the end of the handler), the rest wait for the passes after
		// the next handler, which that send's completion guarantees: the
		// first child's packet does not wait for the other children's
		// descriptors. (Were another event waiting, the real loop might
		// take it first; the model takes the queue.)
		c.Charge(p.cfg.Costs.Dispatch)
		c.Fire(p.hsq, "local", nil)
	}
	if p.cfg.SyncFetch && p.fetches > 0 {
		// «it first transfers the user data to the corresponding Send
		// Buffer using DMA. It then checks if its send window allows it
		// to transmit the packet» (section 4.1): while a fetch is
		// pending the program waits on the DMA engine instead of
		// returning to the main loop.
		c.SpinUntil(firmware.HostDMADone)
	}
}

// --- Host Send Queue Mgt ---

// sqEntry is a descriptor the host send queue module holds until its
// data is in the NI (kept in order: a packet never overtakes an earlier
// one of the host's, nor a forwarded one one found before it).
type sqEntry struct {
	d     Desc
	ready bool
}

// pollSendQ reads every new descriptor in order: first those the
// Multicast module enqueued before (their passes were left for later),
// then the host's.
func (p *Program) pollSendQ(c *firmware.Ctx, _ any) {
	for p.fwdRead != p.fwdNext {
		p.takeFwd(c, nil)
	}
	for {
		slot := p.layout.SendQ + uint32(int(p.nextDesc-1)%p.layout.SendQSlots*DescBytes)
		raw := c.Read(slot, DescBytes)
		d := DecodeDesc(raw)
		if d.Seq != p.nextDesc {
			return
		}
		p.nextDesc++
		if p.rcpySlot(raw) {
			c.Fire(p.rcm, "desc", raw)
			continue
		}
		if !p.checkDesc(c, d) {
			continue
		}
		// A host forward's data comes in once, with its first
		// descriptor (DescHostFwd); an I-hrx resend's is in the NI.
		if p.cfg.Variant == SDMA && d.Len > 0 && (d.Flags&DescHostFwd == 0 || d.Index == 0) && (p.hrx == nil || d.Flags&DescResend == 0) {
			c.Fire(p.hsq, "fetch", d)
		} else {
			c.Fire(p.hsq, "pass", d)
		}
	}
}

// checkDesc validates a descriptor the host wrote: a send buffer, a
// length within the MTU, a destination in the cluster other than this
// node (a multicast names none), no flags but DescHostFwd (DescFwd is the
// NI's own), and an F&A request with no data (its addend is the tag). A
// host forward (DescHostFwd, I-sdma-hmc only) is a multicast to a child
// other than this node, of a root in the cluster other than this node,
// with 1 to FwdWidth children and an index below them; the other
// descriptors leave its fields 0.
func (p *Program) checkDesc(c *firmware.Ctx, d Desc) bool {
	if p.hrx != nil {
		return p.hrxCheckDesc(c, d)
	}
	ok := int(d.Buf) < p.cfg.SendBufs && int(d.Len) <= p.cfg.MTU && int(d.Dst) < p.n &&
		(d.Type == TypeData || d.Type == TypeMcast || d.Type == TypeFAReq) && (d.Type != TypeData || int(d.Dst) != p.node) &&
		(d.Type != TypeFAReq || d.Len == 0)
	if d.Flags == DescHostFwd {
		ok = ok && p.cfg.HostForward && d.Type == TypeMcast && int(d.Dst) != p.node && int(d.Root) < p.n && int(d.Root) != p.node &&
			d.Kids >= 1 && int(d.Kids) <= FwdWidth && d.Index < d.Kids
	} else {
		ok = ok && d.Flags == 0 && d.Root == 0 && d.RootSeq == 0 && d.Kids == 0 && d.Index == 0
	}
	if !ok {
		c.Env.Report(c.Now, p.name, "lci.desc", "bad send descriptor %+v", d)
	}
	return ok
}

// takeFwd takes the oldest descriptor the Multicast module enqueued in
// the NI's own send queue and passes it like a host descriptor whose data
// is in the NI (HostSend, then flow control): «These descriptors are
// enqueued just like send descriptors created by the host for unicast
// packets. Multicast packets are thus subject to the same NI-to-NI flow
// control as unicast packets» (section 4.2). The queue's head and tail
// are the program's own, so it reads no slot beyond the tail.
func (p *Program) takeFwd(c *firmware.Ctx, _ any) {
	d := DecodeDesc(c.Read(p.fwdSlot(p.fwdRead), DescBytes))
	seq := p.fwdRead
	p.fwdRead++
	ok := d.Seq == seq && d.Flags == DescFwd && d.Type == TypeMcast && int(d.Buf) < p.cfg.RecvBufs &&
		int(d.Len) <= p.cfg.MTU && int(d.Dst) < p.n && int(d.Dst) != p.node
	if !ok {
		c.Env.Report(c.Now, p.name, "lci.desc", "bad forwarding descriptor %+v (expected sequence %d)", d, seq)
		return
	}
	c.Fire(p.hsq, "pass", d)
}

// fwdSlot is the SRAM address of the NI send queue slot of sequence seq.
func (p *Program) fwdSlot(seq uint32) uint32 {
	return p.layout.FwdQ + uint32(int(seq-1)%p.layout.FwdQSlots*DescBytes)
}

// fetch starts the DMA of an I-sdma packet's data from the host address
// and size the host wrote into the send buffer (Fetch) before the
// descriptor; HostSend's instructions cover reading it (the two words the
// descriptor carried before).
func (p *Program) fetch(c *firmware.Ctx, a any) {
	d := a.(Desc)
	f := DecodeFetch(c.Read(p.layout.SendBuf(int(d.Buf)), FetchBytes))
	if f.Len != uint32(d.Len) {
		c.Env.Report(c.Now, p.name, "lci.desc", "send buffer %d's address and size field says %d bytes, its descriptor %d", d.Buf, f.Len, d.Len)
	}
	p.fetches++
	p.counts.Fetches++
	p.sq = append(p.sq, sqEntry{d: d})
	c.Fire(p.dmaM, p.jobEvent(), dmaJob{kind: jobFetch, ref: int(d.Buf),
		d: firmware.HostDMA{Dir: firmware.ToNI, HostAddr: uint64(f.Addr), SRAM: p.layout.SendBuf(int(d.Buf)) + HeaderBytes, Len: int(d.Len)}})
}

func (p *Program) pass(c *firmware.Ctx, a any) {
	d := a.(Desc)
	p.sq = append(p.sq, sqEntry{d: d, ready: true})
	p.drainSQ(c)
}

// fetched marks the oldest unfetched descriptor's data as in the NI.
func (p *Program) fetched(c *firmware.Ctx, _ any) {
	p.markFetched(c)
	if p.fetches == 0 {
		c.Fire(p.hsq, "drained", nil)
	}
}

// markFetched is fetched without Host Send Queue Mgt's state change (an
// I-rcpy fetch's, whose module is rcpy).
func (p *Program) markFetched(c *firmware.Ctx) {
	for i := range p.sq {
		if !p.sq[i].ready {
			p.sq[i].ready = true
			break
		}
	}
	p.fetches--
	p.drainSQ(c)
}

// drainSQ hands descriptors whose data is in the NI to flow control.
func (p *Program) drainSQ(c *firmware.Ctx) {
	for len(p.sq) > 0 && p.sq[0].ready {
		d := p.sq[0].d
		p.sq = p.sq[1:]
		p.submit(c, d)
	}
}

// submit turns a descriptor into packets.
func (p *Program) submit(c *firmware.Ctx, d Desc) {
	if p.hrx != nil {
		p.hrxSubmit(c, d)
		return
	}
	buf := int(d.Buf)
	if d.Flags&DescFwd != 0 {
		// A forward: the packet goes from the receive buffer it arrived
		// in, with its header (root, sequence, tag) as it came and this
		// node as the source.
		h := p.recvHdr[buf]
		h.Src = uint8(p.node)
		c.Fire(p.fc, "want", txItem{kind: itemForward, dst: int(d.Dst), buf: buf, hdr: h})
		return
	}
	if d.Flags&DescHostFwd != 0 {
		// A host forward (I-sdma-hmc): the first of the buffer's
		// descriptors sets its references to the number of children;
		// every one sends the buffer to its child with the root's
		// header fields.
		if d.Index == 0 {
			if p.sendRefs[buf] != 0 {
				c.Env.Report(c.Now, p.name, "lci.desc", "host forward into send buffer %d, which has %d sends pending", buf, p.sendRefs[buf])
			}
			p.sendRefs[buf] = int(d.Kids)
			if p.hmcEarly {
				p.sendRefs[buf] = 1 // mutation: completed after the first child's send
			}
		} else if p.sendRefs[buf] == 0 {
			// Its first descriptor's sends cannot all be done
			// before this one's: the buffer was never set up.
			c.Env.Report(c.Now, p.name, "lci.desc", "host forward %d of %d from send buffer %d, which has no forward pending", d.Index, d.Kids, buf)
			return
		}
		c.Fire(p.fc, "want", txItem{kind: itemSend, dst: int(d.Dst), buf: buf,
			hdr: Header{Type: TypeMcast, Src: uint8(p.node), Len: d.Len, Root: d.Root, Seq: d.RootSeq, Arg: d.Tag}})
		return
	}
	if d.Type == TypeFAReq && int(d.Dst) == p.node {
		// «each NI maintains a single fetch-and-add variable that can
		// be accessed by any host» (section 4.3), its own host's too:
		// served here, the reply delivered like a packet.
		p.complete(c, buf)
		p.faLocal = append(p.faLocal, d.Tag)
		p.localFetchAdd(c)
		return
	}
	switch d.Type {
	case TypeMcast:
		kids := p.children(c, p.node)
		p.sendRefs[buf] = len(kids)
		if len(kids) == 0 {
			p.complete(c, buf)
		}
		p.seqOut[p.node]++ // the root's multicast sequence
		for _, k := range kids {
			c.Fire(p.fc, "want", txItem{kind: itemSend, dst: k, buf: buf,
				hdr: Header{Type: TypeMcast, Src: uint8(p.node), Len: d.Len, Root: uint8(p.node), Seq: p.seqOut[p.node], Arg: d.Tag}})
		}
	default:
		p.sendRefs[buf] = 1
		if d.Type == TypeData {
			p.seqOut[d.Dst]++
		}
		c.Fire(p.fc, "want", txItem{kind: itemSend, dst: int(d.Dst), buf: buf,
			hdr: Header{Type: d.Type, Src: uint8(p.node), Len: d.Len, Root: uint8(p.node), Seq: p.seqOut[d.Dst], Arg: d.Tag}})
	}
}

// children reads node's children in the tree of root from the forwarding
// table.
func (p *Program) children(c *firmware.Ctx, root int) []int {
	row := c.Read(p.layout.Fwd+uint32(root*FwdWidth), FwdWidth)
	var out []int
	for _, b := range row {
		if b != 0xff && int(b) < p.n {
			out = append(out, int(b))
		}
	}
	return out
}

// --- Reliability / Flow Control and Send Queue Mgt ---

// want sends a packet if the window towards its destination allows, or
// queues it on the destination's queue. Control packets (acks, F&A
// replies) use the spare buffers and need no credit.
func (p *Program) want(c *firmware.Ctx, a any) {
	it := a.(txItem)
	if p.hrx != nil {
		// I-hrx: no NI-level flow control (the host's window).
		p.ready.Push(it)
		p.queues(c)
		p.kick(c)
		return
	}
	if p.rx != nil {
		p.rxWant(c, it)
		p.queues(c)
		p.kick(c)
		return
	}
	switch {
	case it.kind == itemCtl:
		p.ready.Push(it)
	case p.blocked[it.dst].Len() == 0 && p.credits[it.dst] > -p.overdraw:
		p.credits[it.dst]--
		p.sigCredits[it.dst].Set(c.Now, uint64(max(p.credits[it.dst], 0)))
		p.ready.Push(it)
	default:
		p.blocked[it.dst].Push(it)
		p.nblock++
		if p.fc.State() == sOpen {
			c.Fire(p.fc, "close", nil)
		}
	}
	p.queues(c)
	p.kick(c)
}

// queues shows the credits and queue lengths on the waveform.
func (p *Program) queues(c *firmware.Ctx) {
	p.sigReady.Set(c.Now, uint64(p.ready.Len()))
	p.sigBlocked.Set(c.Now, uint64(p.nblock))
}

// credit takes credits returned by dst and restarts its blocked packets
// («Blocked packets are dequeued and transmitted during acknowledgment
// processing»).
func (p *Program) credit(c *firmware.Ctx, a any) {
	cr := a.([2]int)
	dst, n := cr[0], cr[1]
	p.credits[dst] += n
	if p.credits[dst] > p.w {
		c.Env.Report(c.Now, p.name, "lci.credits", "node %d returned credits beyond the window: %d > W = %d", dst, p.credits[dst], p.w)
	}
	for p.blocked[dst].Len() > 0 && p.credits[dst] > -p.overdraw {
		p.credits[dst]--
		p.ready.Push(p.blocked[dst].Pop())
		p.nblock--
	}
	p.sigCredits[dst].Set(c.Now, uint64(max(p.credits[dst], 0)))
	p.queues(c)
	if p.nblock == 0 && p.fc.State() == sBlocked {
		c.Fire(p.fc, "open", nil)
	}
	p.kick(c)
}

// release counts a freed receive buffer reserved for src towards an
// acknowledgment: «The number of newly released buffers is piggybacked on
// each packet that flows back to the sender. In the absence of return
// traffic, the receiving NI will send an explicit half-window
// acknowledgment after releasing W/2 buffers.»
func (p *Program) release(c *firmware.Ctx, a any) {
	src := a.(int)
	p.owed[src]++
	if p.extraEvery > 0 {
		if p.releases++; p.releases%p.extraEvery == 0 {
			p.owed[src]++ // mutation: counted twice
		}
	}
	if p.owed[src] < p.w/2 {
		return
	}
	for i := range p.ready.Len() {
		if p.ready.At(i).dst == src {
			return // return traffic is about to carry them
		}
	}
	c.Fire(p.fc, "ack", src)
}

func (p *Program) ack(c *firmware.Ctx, a any) {
	dst := a.(int)
	if p.rx != nil {
		p.rxAck(c, dst)
		return
	}
	b, ok := p.ctlBuf(c)
	if !ok {
		return
	}
	c.Fire(p.fc, "want", txItem{kind: itemCtl, dst: dst, buf: b, hdr: Header{Type: TypeAck, Src: uint8(p.node)}})
}

// ctlBuf takes a free control buffer; in the base implementation running
// out is a checker error (lci.ctl: ctlBufs covers every acknowledgment
// and F&A reply that can wait for the send engine).
func (p *Program) ctlBuf(c *firmware.Ctx) (int, bool) {
	b, ok := p.takeCtl()
	if !ok {
		c.Env.Report(c.Now, p.name, "lci.ctl", "out of control buffers")
	}
	return b, ok
}

// --- Unicast: the send engine ---

func (p *Program) kick(c *firmware.Ctx) {
	if p.rx != nil {
		for p.ready.Len() > 0 && p.rxStale(*p.ready.Front()) {
			p.ready.Pop()
		}
	}
	if p.tx.State() == sIdle && p.ready.Len() > 0 && c.SendFree() > 0 {
		c.Fire(p.tx, "go", nil)
	}
}

// transmit puts the next ready packet on the send engine, with the credits
// owed to its destination piggybacked.
func (p *Program) transmit(c *firmware.Ctx, _ any) {
	it := p.ready.Pop()
	p.sigReady.Set(c.Now, uint64(p.ready.Len()))
	if p.rx != nil {
		p.rxStamp(c, &it)
	} else if p.hrx == nil { // I-hrx: the host's header as it is
		it.hdr.Credits = uint16(p.owed[it.dst])
		p.owed[it.dst] = 0
	}
	var at uint32
	switch it.kind {
	case itemSend:
		at = p.layout.SendBuf(it.buf)
	case itemForward:
		at = p.layout.RecvBuf(it.buf)
	case itemCtl:
		at = p.layout.CtlBuf(it.buf)
	}
	c.Write(at, it.hdr.Encode())
	if it.kind == itemCtl {
		p.counts.CtlSends++
	} else {
		p.counts.DataSends++
	}
	p.txBusy, p.txCur, p.txStarted = true, it, true
	c.StartSend(firmware.Packet{Dst: it.dst, SRAM: at, Len: HeaderBytes + int(it.hdr.Len)})
}

// sent: «an NI send buffer can be reused immediately after it has been
// transmitted»; in I-nirx only once it is acknowledged (rxAcked).
func (p *Program) sent(c *firmware.Ctx, _ any) {
	it := p.txCur
	p.txBusy = false
	if it.ent == nil || it.ent.acked {
		p.itemDone(c, it)
	}
	p.kick(c)
}

// itemDone frees what a packet was sent from, or drops its reference.
func (p *Program) itemDone(c *firmware.Ctx, it txItem) {
	switch it.kind {
	case itemSend:
		if p.hrx != nil {
			// I-hrx: a completion per transmission; the host frees
			// the buffer when it is acknowledged too.
			p.complete(c, it.buf)
			break
		}
		p.sendRefs[it.buf]--
		if p.sendRefs[it.buf] < 0 {
			// The checker of the send buffers' references: a buffer is
			// sent once per reference its descriptors gave it (one, or
			// a multicast's children), and reported free after the last.
			c.Env.Report(c.Now, p.name, "lci.refs", "send buffer %d sent to node %d after its send completion was reported", it.buf, it.dst)
		}
		if p.sendRefs[it.buf] == 0 {
			p.complete(c, it.buf)
		}
	case itemForward:
		p.unref(c, it.buf)
	case itemCtl:
		if !p.hrxAckFreed(c, it.buf) {
			p.freeCtl = append(p.freeCtl, it.buf)
		}
	}
}

// complete reports send buffer buf free to the host: «Send completions are
// reported back via a DMA to the host receive queue» (section 4.1). The
// completion goes through Host Recv Queue Mgt like a packet: it takes a
// free host buffer and its slot header is DMAed there.
func (p *Program) complete(c *firmware.Ctx, buf int) {
	c.Fire(p.hrq, "deliver", -(buf + 1))
}

// --- Recv Queue Mgt and Recv Dispatch ---

func (p *Program) arm(c *firmware.Ctx) {
	if len(p.freeRecv) == 0 {
		p.armed = false
		return
	}
	b := p.freeRecv[len(p.freeRecv)-1]
	p.freeRecv = p.freeRecv[:len(p.freeRecv)-1]
	p.armedBuf = b
	p.armed = true
	c.ArmRecv(p.layout.RecvBuf(b), HeaderBytes+p.cfg.MTU)
}

// receive takes the packet the receive engine stored, re-arms the engine
// and dispatches on the type.
func (p *Program) receive(c *firmware.Ctx, a any) {
	ev := a.(firmware.HWEvent)
	if p.rx != nil {
		p.rxReceive(c, ev)
		return
	}
	if p.hrx != nil {
		p.hrxReceive(c, ev)
		return
	}
	buf := p.armedBuf
	p.armed = false
	h := DecodeHeader(c.Read(ev.Addr, HeaderBytes))
	if ev.Bad {
		c.Env.Report(c.Now, p.name, "lci.crc", "packet %d from node %d (%d bytes; its header, not to be trusted, reads type %d, sequence %d) failed the CRC check on link %s: the base implementation assumes a reliable network and aborts",
			ev.Tag, ev.Src, ev.Len, h.Type, h.Seq, p.link)
		p.aborted = true
		return
	}
	malformed := ev.Len != HeaderBytes+int(h.Len) || int(h.Src) >= p.n
	if malformed {
		c.Env.Report(c.Now, p.name, "lci.packet", "malformed packet %d from node %d: %d bytes with header %+v; dropped", ev.Tag, ev.Src, ev.Len, h)
	}
	p.arm(c)
	if !p.armed {
		c.Fire(p.rq, "starve", nil)
	}
	if malformed {
		p.freeBuf(c, buf)
		return
	}
	p.recvHdr[buf] = h
	if reserved(h.Type) {
		// The checker of the window: a sender never has more than W of
		// this NI's receive buffers.
		p.held[h.Src]++
		if p.held[h.Src] > p.w {
			c.Env.Report(c.Now, p.name, "lci.window", "node %d holds %d receive buffers, more than its W = %d", h.Src, p.held[h.Src], p.w)
		}
	}
	if h.Credits > 0 {
		c.Fire(p.fc, "credit", [2]int{int(h.Src), int(h.Credits)})
	}
	switch h.Type {
	case TypeData, TypeFARep:
		p.recvRef[buf] = 1
		c.Fire(p.hrq, "deliver", buf)
	case TypeMcast:
		if p.cfg.HostForward {
			// I-sdma-hmc: the host forwards it (section 5.4); the NI
			// only delivers it, and releases the buffer after the
			// delivery DMA, as a unicast's.
			p.recvRef[buf] = 1
			c.Fire(p.hrq, "deliver", buf)
			break
		}
		c.Fire(p.mc, "packet", buf)
	case TypeFAReq:
		c.Fire(p.fa, "request", buf)
	case TypeRcpy:
		if p.rcpy == nil {
			c.Env.Report(c.Now, p.name, "lci.packet", "I-rcpy packet from node %d at an NI not running I-rcpy", h.Src)
			p.recvRef[buf] = 1
			p.unref(c, buf)
			break
		}
		c.Fire(p.rcm, "packet", buf)
	case TypeAck:
		p.freeBuf(c, buf)
	default:
		c.Env.Report(c.Now, p.name, "lci.packet", "unknown packet type %d from node %d", h.Type, h.Src)
		p.freeBuf(c, buf)
	}
}

// reserved reports whether a packet type occupies one of the W buffers
// its sender reserved (and so returns a credit when released).
func reserved(t uint8) bool {
	return t == TypeData || t == TypeMcast || t == TypeFAReq || t == TypeRcpy
}

// unref drops a reference to receive buffer buf (the host copy or a
// forward); the last one releases it: «NI receive buffers holding
// multicast packets are not released until the packet has been copied to
// the host and forwarded to all children».
func (p *Program) unref(c *firmware.Ctx, buf int) {
	p.recvRef[buf]--
	if p.recvRef[buf] > 0 {
		return
	}
	h := p.recvHdr[buf]
	if r := p.rx; r != nil && r.leakEvery > 0 {
		if r.leaks++; r.leaks%r.leakEvery == 0 {
			return // mutation: kept
		}
	}
	p.freeBuf(c, buf)
	if reserved(h.Type) && p.rx == nil && p.hrx == nil {
		p.held[h.Src]--
		c.Fire(p.fc, "release", int(h.Src))
	}
}

func (p *Program) freeBuf(c *firmware.Ctx, buf int) {
	p.freeRecv = append(p.freeRecv, buf)
	if len(p.faLocal) > 0 {
		p.localFetchAdd(c)
	}
	c.Fire(p.rq, "freed", nil)
	if p.rx != nil && p.rx.nacks > 0 {
		p.rxFreed(c)
	}
}

// --- Multicast forwarding ---

// forward is the Multicast module: «When a multicast packet arrives at an
// NI, the Multicast module copies it to the host, just like a unicast
// packet, and in addition creates a new Send Descriptor for each
// forwarding destination» (section 4.2). Each descriptor (Costs.Forward)
// names a child and the receive buffer, and goes into the NI's own send
// queue, which Host Send Queue Mgt takes in the main loop's next pass
// (Handle). The buffer holds one reference for the host copy and one per
// child: «NI receive buffers holding multicast packets are not released
// until the packet has been copied to the host and forwarded to all
// children in the multicast tree».
func (p *Program) forward(c *firmware.Ctx, a any) {
	buf := a.(int)
	h := p.recvHdr[buf]
	kids := p.children(c, int(h.Root))
	p.recvRef[buf] = 1 + len(kids)
	c.Fire(p.hrq, "deliver", buf)
	for _, k := range kids {
		c.Charge(p.cfg.Costs.Forward)
		if p.fwdNext-p.fwdRead >= uint32(p.layout.FwdQSlots) {
			// Cannot happen (FwdQSlots): the child's reference is
			// never dropped, so the buffer stays held and the
			// watchdog names it.
			c.Env.Report(c.Now, p.name, "lci.fwdq", "NI send queue full (%d descriptors): no forward of root %d's packet %d to node %d",
				p.layout.FwdQSlots, h.Root, h.Seq, k)
			continue
		}
		d := Desc{Seq: p.fwdNext, Type: TypeMcast, Dst: uint8(k), Len: h.Len, Buf: uint32(buf), Tag: h.Arg, Flags: DescFwd}
		c.Write(p.fwdSlot(p.fwdNext), d.Encode())
		p.fwdNext++
	}
}

// --- Fetch-and-add ---

// fetchAdd: «The NI Fetch&Add module replies with the current value of the
// variable and then increments the variable.» The addend is the request
// header's argument (the sender's descriptor carried it; see Desc).
func (p *Program) fetchAdd(c *firmware.Ctx, a any) {
	buf := a.(int)
	h := p.recvHdr[buf]
	old := p.faValue
	if h.Len != 0 {
		c.Env.Report(c.Now, p.name, "lci.packet", "fetch-and-add request from node %d with %d bytes of data: the addend travels in the header", h.Src, h.Len)
	}
	p.faValue += h.Arg // the addend, from the sender's descriptor
	cb, ok := p.ctlBuf(c)
	if ok {
		c.Fire(p.fc, "want", txItem{kind: itemCtl, dst: int(h.Src), buf: cb,
			hdr: Header{Type: TypeFARep, Src: uint8(p.node), Root: uint8(p.node), Seq: h.Seq, Arg: old}})
	}
	p.recvRef[buf] = 1
	p.unref(c, buf)
}

// localFetchAdd serves its own host's fetch-and-add requests (faLocal, in
// order): the variable is read and added to, and the reply is staged in a
// free receive buffer and delivered to the host as a reply packet would
// be. A request that finds no free receive buffer waits for one (freeBuf).
func (p *Program) localFetchAdd(c *firmware.Ctx) {
	for len(p.faLocal) > 0 && len(p.freeRecv) > 0 {
		add := p.faLocal[0]
		p.faLocal = p.faLocal[1:]
		b := p.freeRecv[len(p.freeRecv)-1]
		p.freeRecv = p.freeRecv[:len(p.freeRecv)-1]
		c.Charge(p.cfg.Costs.FetchAdd)
		h := Header{Type: TypeFARep, Src: uint8(p.node), Root: uint8(p.node), Arg: p.faValue}
		p.faValue += add
		c.Write(p.layout.RecvBuf(b), h.Encode())
		p.recvHdr[b] = h
		p.recvRef[b] = 1
		c.Fire(p.hrq, "deliver", b)
	}
}

// --- Host Recv Queue Mgt ---

// deliver copies receive buffer buf to a free host buffer, or waits for
// one.
func (p *Program) deliver(c *firmware.Ctx, a any) {
	buf := a.(int)
	if !p.takeHostBuf(c, buf) {
		p.hostWait.Push(buf)
		c.Fire(p.hrq, "exhausted", nil)
	}
}

func (p *Program) retryDeliver(c *firmware.Ctx, _ any) {
	for p.hostWait.Len() > 0 {
		c.Charge(p.cfg.Costs.Deliver)
		if !p.takeHostBuf(c, *p.hostWait.Front()) {
			return
		}
		p.hostWait.Pop()
	}
	c.Fire(p.hrq, "replenished", nil)
}

// takeHostBuf reads the next Recv Completions record; if the host has
// written it, the packet in receive buffer ref (or, for ref < 0, the send
// completion of send buffer -ref-1) goes to that host buffer by DMA.
func (p *Program) takeHostBuf(c *firmware.Ctx, ref int) bool {
	slot := p.layout.FreeQ + uint32(int(p.freeNext-1)%p.layout.FreeQSlots*FreeBytes)
	f := DecodeFree(c.Read(slot, FreeBytes))
	if f.Seq != p.freeNext {
		return false
	}
	p.freeNext++
	p.delivered++
	hdrAt := f.Addr + uint64(SlotHeaderAt(p.cfg.MTU))
	if ref < 0 {
		buf := -ref - 1
		sh := SlotHeader{Type: TypeCompl, Src: uint8(p.node), Tag: uint32(buf), Flag: p.delivered}
		at := p.layout.SendBuf(buf) // the sent buffer's header space stages it
		if p.hrx != nil {
			// I-hrx: the staging place of this Recv Completions record
			// (Layout.Compl).
			at = p.layout.Compl + uint32(int(p.freeNext-2)%p.layout.FreeQSlots*HeaderBytes)
		}
		c.Write(at, sh.Encode())
		c.Fire(p.dmaM, p.jobEvent(), dmaJob{kind: jobCompletion, ref: buf,
			d: firmware.HostDMA{Dir: firmware.ToHost, HostAddr: hdrAt, SRAM: at, Len: HeaderBytes}})
		return true
	}
	h := p.recvHdr[ref]
	if h.Type == TypeRcpy {
		// I-rcpy's receive-miss notification: a slot header, no data
		// (the data went to the anonymous page), staged behind the data.
		sh := p.rcpyNote(ref)
		sh.Flag = p.delivered
		at := p.layout.RecvBuf(ref) + HeaderBytes + uint32(h.Len)
		c.Write(at, sh.Encode())
		c.Fire(p.dmaM, p.jobEvent(), dmaJob{kind: jobDeliver, ref: ref,
			d: firmware.HostDMA{Dir: firmware.ToHost, HostAddr: hdrAt, SRAM: at, Len: HeaderBytes}})
		return true
	}
	sh := SlotHeader{Type: h.Type, Src: h.Src, Len: h.Len, Tag: h.Arg, Arg: h.Seq, Flag: p.delivered}
	if h.Type == TypeMcast {
		sh.Src = h.Root
	}
	data := p.layout.RecvBuf(ref) + HeaderBytes
	from, n := data, int(h.Len)+HeaderBytes
	if p.hrx != nil {
		// I-hrx: the packet's header goes to the host in front of the
		// data (the host checks sequences and takes acknowledgments):
		// derived: it fits, SlotHeaderAt(mtu) - mtu >= HeaderBytes.
		from, n = p.layout.RecvBuf(ref), n+HeaderBytes
	}
	if p.corruptEvery > 0 && h.Len > 0 {
		if p.deliveries++; p.deliveries%p.corruptEvery == 0 {
			c.Write(data, []byte{c.Read(data, 1)[0] ^ 1}) // mutation
		}
	}
	c.Write(data+uint32(h.Len), sh.Encode())
	c.Fire(p.dmaM, p.jobEvent(), dmaJob{kind: jobDeliver, ref: ref,
		d: firmware.HostDMA{Dir: firmware.ToHost, HostAddr: hdrAt + HeaderBytes - uint64(n), SRAM: from, Len: n}})
	return true
}

// --- DMA to Host: the host DMA engine ---

func (p *Program) jobEvent() firmware.Event { return "job" }

func (p *Program) startJob(c *firmware.Ctx, a any) {
	if j, ok := a.(dmaJob); ok {
		p.jobs.Push(j)
	}
	p.dmaCur = p.jobs.Pop()
	p.dmaBusy = true
	c.StartHostDMA(p.dmaCur.d)
}

func (p *Program) dmaDone(c *firmware.Ctx, _ any) {
	j := p.dmaCur
	p.dmaBusy = false
	switch j.kind {
	case jobFetch:
		c.Fire(p.hsq, "fetched", nil)
	case jobRcpyFetch:
		c.Fire(p.rcm, "fetched", nil)
	case jobRcpyData:
		p.unref(c, j.ref)
	case jobDeliver:
		if p.watchdog {
			c.Fire(p.timer, "delivered", nil)
		}
		p.unref(c, j.ref)
	}
	if p.jobs.Len() > 0 && p.dmaM.State() == sIdle {
		c.Fire(p.dmaM, "job", nil)
	}
}

// --- Timer: the polling watchdog ---

// expire raises the interrupt if the host has not consumed every packet
// delivered to it: «An interrupt is generated only by the Timer module if
// the timer expires before the host polls.»
func (p *Program) expire(c *firmware.Ctx, _ any) {
	consumed := p.freeNext - 1
	for {
		slot := p.layout.FreeQ + uint32(int(consumed)%p.layout.FreeQSlots*FreeBytes)
		if DecodeFree(c.Read(slot, FreeBytes)).Seq != consumed+1 {
			break
		}
		consumed++
	}
	// The host hands back every buffer it has consumed; HostSlots were
	// given at the start, so it has consumed consumed - HostSlots.
	if consumed < p.delivered+uint32(p.cfg.HostSlots) {
		c.Interrupt()
	}
}
