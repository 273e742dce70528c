package telegraphos

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
)

// startServer gives the request server its next job: take the request at
// the head of the incoming request FIFO and serve it at this, its home,
// node. Requests are served one at a time, in arrival order.
func (h *HIB) startServer(now clock.Time) {
	e := h.srv
	var p *Packet
	var v, nv uint32
	e.start(now,
		e.receive("RECEIVE", Request, &p),
		e.wait("PARSE", h.cfg.ControlCycles),
		step{"DISPATCH", func(now clock.Time) bool {
			var s []step
			switch p.Kind {
			case KWrite:
				s = []step{e.memAccess("MEM_WRITE", true, func() uint32 { return p.Addr }, &p.Data[0]),
					e.do("APPLIED", func(now clock.Time) { h.appliedRemote(now, p) }),
					e.send("SEND_ACK", func() *Packet { return &Packet{Kind: KWriteAck, Dst: p.Src} })}
			case KRead:
				s = []step{e.memAccess("MEM_READ", false, func() uint32 { return p.Addr }, &v),
					e.send("SEND_RESP", func() *Packet { return &Packet{Kind: KReadResp, Dst: p.Src, Data: [2]uint32{v}} })}
			case KCopyReq:
				s = []step{e.memAccess("MEM_READ", false, func() uint32 { return p.Addr }, &v),
					e.send("SEND_COPY", func() *Packet { return &Packet{Kind: KCopyResp, Dst: p.Src, To: p.To, Data: [2]uint32{v}} })}
			case KAtomic:
				s = []step{e.lock("LOCK"),
					e.memAccess("MEM_READ", false, func() uint32 { return p.Addr }, &v),
					e.wait("ALU", h.cfg.AtomicCycles),
					e.do("ALU", func(clock.Time) { nv = p.Op.apply(v, p.Data) }),
					e.memAccess("MEM_WRITE", true, func() uint32 { return p.Addr }, &nv),
					e.unlock("UNLOCK"),
					e.send("SEND_RESP", func() *Packet { return &Packet{Kind: KAtomicResp, Dst: p.Src, Data: [2]uint32{v}} })}
			case KUpdate:
				s = h.serveUpdate(e, p)
			default:
				h.env.Report(now, e.name, "hib.protocol", "%v on the request channel", p)
			}
			e.insert(s)
			return true
		}},
	)
}

// serveUpdate is the owner's side of a write to a replicated page: apply it
// and reflect it to every copy (the writer's own included, which tells the
// writer its write has been ordered), all under the multicast unit, then
// acknowledge it (2.3.1).
func (h *HIB) serveUpdate(e *sequencer, p *Packet) []step {
	ps := h.pages[int(p.Addr/PageBytes)]
	ack := e.send("SEND_ACK", func() *Packet { return &Packet{Kind: KWriteAck, Dst: p.Src} })
	if ps == nil || ps.mode != ownerPage {
		return []step{e.do("NOT_OWNER", func(now clock.Time) {
			h.env.Report(now, e.name, "tg.owner", "%v for a page node %d does not own", p, h.node)
		}), ack}
	}
	s := []step{h.mcLock(e),
		e.memAccess("MEM_WRITE", true, func() uint32 { return p.Addr }, &p.Data[0]),
		e.do("APPLIED", func(now clock.Time) { h.appliedRemote(now, p) })}
	s = append(s, h.reflectAll(e, ps.copies, p.Addr, p.Data[0], p.Origin, p.Seq)...)
	return append(s, h.mcUnlock(e), ack)
}

// appliedRemote reports a write from the network that landed here.
func (h *HIB) appliedRemote(now clock.Time, p *Packet) {
	h.stats.Writes++
	if h.hooks.Applied != nil {
		origin := p.Origin
		if p.Kind == KWrite {
			origin = p.Src
		}
		h.hooks.Applied(now, p.Addr, p.Data[0], origin, p.Seq)
	}
}

// startSink gives the response sink its next job: take the response at the
// head of the incoming response FIFO and finish what it answers.
func (h *HIB) startSink(now clock.Time) {
	e := h.sink
	var p *Packet
	e.start(now,
		e.receive("RECEIVE", Response, &p),
		e.wait("PARSE", h.cfg.ControlCycles),
		step{"DISPATCH", func(now clock.Time) bool {
			var s []step
			switch p.Kind {
			case KReadResp, KAtomicResp:
				want := KRead
				if p.Kind == KAtomicResp {
					want = KAtomic
				}
				if h.waitKind != want || h.waitReply != nil {
					h.env.Report(now, e.name, "hib.protocol", "%v while waiting for no %s reply", p, want)
					break
				}
				h.waitReply = p
			case KWriteAck:
				h.setOutstanding(now, h.outstanding-1)
			case KCopyResp:
				s = []step{e.memAccess("MEM_WRITE", true, func() uint32 { return p.To }, &p.Data[0]),
					e.do("DONE", func(now clock.Time) { h.setOutstanding(now, h.outstanding-1) })}
			case KReflect:
				s = h.sinkReflect(e, p)
			default:
				h.env.Report(now, e.name, "hib.protocol", "%v on the response channel", p)
			}
			e.insert(s)
			return true
		}},
	)
}

// sinkReflect applies or ignores a reflected write by the counter-based
// protocol (2.3.3): this node's own write comes back, its counter goes
// down and the datum is ignored (rule 2); any other write to a word with a
// pending counter is ignored (rule 3); everything else is applied. Without
// a counter cache (Telegraphos I) every reflected write is applied.
//
// The counter check of a reflected write that is applied and its memory
// write are one indivisible operation on the word, as in the paper's first
// design, where the counter is kept «along with each memory word» and a
// reflected write's check costs «two memory accesses (one to read the
// counter and one to write it)» (2.3.3): from the check until the write
// has landed, h.applying names the word, and a store of this node's
// processor to that word waits before it raises the counter (localWrite).
// The order matters. Rules 2 and 3 make a copy see «a subset of the values
// that the owner sees, and ... in the proper order» only if the copy's
// memory takes its writes of a word in the order their counter accesses
// happened: a reflected write that found the counter at zero reached the
// owner before any store whose counter goes up after the check had even
// been sent, so the owner ordered it first, and it must land first. (A
// store that raises the counter before the check is safe either way: the
// reflected write is then ignored, rule 3.) Within a cycle the sink checks
// before the processor side raises (Tick), so the store waits. Before this
// interlock a store could raise the counter in the cycle of the check, put
// its memory write on its own port and be served first by the memory's
// round-robin arbiter: the older reflected value then overwrote the
// processor's own newer one, the reverse of the owner's order (the
// regression spec in verify/scenario/tgscen has the cycles).
func (h *HIB) sinkReflect(e *sequencer, p *Packet) []step {
	apply := []step{e.memAccess("MEM_WRITE", true, func() uint32 { return p.Addr }, &p.Data[0]),
		e.do("APPLIED", func(now clock.Time) { h.applying = reflectWrite{}; h.appliedRemote(now, p) })}
	if h.cc == nil {
		return apply
	}
	return []step{e.until("COUNTER", func(now clock.Time) bool {
		n, pending := h.cc.Lookup(now, p.Addr)
		switch {
		case p.Origin == h.node:
			h.stats.OwnReflects++
			if !pending {
				h.env.Report(now, e.name, "tg.counter", "own reflected write %v with no pending counter", p)
				return true
			}
			if n == 1 {
				h.cc.Free(now, p.Addr)
			} else {
				h.cc.Update(now, p.Addr, n-1)
			}
			h.traceCounter(now, p.Addr, n-1)
		case pending:
			h.stats.ReflectsIgnored++
		default:
			h.applying = reflectWrite{on: true, off: p.Addr}
			e.insert(apply)
			return true
		}
		if h.hooks.Ignored != nil {
			h.hooks.Ignored(now, p.Addr, p.Data[0], p.Origin, p.Seq, p.Origin == h.node)
		}
		if h.env.Trace.Enabled() {
			h.env.Trace.Emit(now, h.Clock().CycleAt(now), h.Name(), "tg.ignore", trace.Addr("addr", uint64(p.Addr)),
				trace.Uint("data", uint64(p.Data[0])), trace.Int("origin", int64(p.Origin)), trace.Bool("own", p.Origin == h.node))
		}
		return true
	})}
}

// reflectWrite is the word a reflected write is writing, from its counter
// check until its memory write has landed (sinkReflect).
type reflectWrite struct {
	on  bool
	off uint32
}

// holds reports whether a reflected write holds word off.
func (r reflectWrite) holds(off uint32) bool { return r.on && r.off == off }

// mutNoInterlock is a test-only fault (see env.DeclareMutation).
var mutNoInterlock = env.DeclareMutation("tg.nointerlock",
	"with N > 0 a processor store to a word of a copy does not wait for a reflected write to that word that has passed its "+
		"counter check (sinkReflect): a store raising the counter in the cycle of the check can land first, and the copy "+
		"applies the two writes in the reverse of the owner's order (caught by the coherence checker)")
