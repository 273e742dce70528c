package telegraphos

import (
	"encoding/binary"

	"github.com/nisim/nisim/verify/trace"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
)

// startCPU takes the TURBOchannel access at the head of the port and gives
// the central control its job. A write is latched (popped) at once, which
// releases the bus and retires a posted store (TG-P10); a read holds the
// bus until its data is pushed back (TG-P11).
func (h *HIB) startCPU(now clock.Time, b mem.Beat) {
	e := h.cpu
	h.tc.Down.Pop(now)
	if !b.First || !b.Last {
		h.env.Report(now, h.Name(), "hib.tc", "access of more than one word: %v", b)
	}
	h.tcReq, h.tcData = b.Req, 0
	if b.Req.Op == mem.Write && len(b.Data) >= WordBytes {
		h.tcData = binary.LittleEndian.Uint32(b.Data)
	}
	write := b.Req.Op == mem.Write
	a := uint32(b.Req.Addr)
	d := decode(a)
	steps := []step{e.wait("DECODE", h.cfg.DecodeCycles)}
	switch {
	case b.Req.Addr >= WindowBytes || b.Req.Len != WordBytes || a%WordBytes != 0:
		steps = append(steps, h.refused(write, "access of %d bytes at %#x", b.Req.Len, b.Req.Addr)...)
	case d.shadow:
		if !write || h.cfg.Version != 2 || d.region != RegionShared {
			steps = append(steps, h.refused(write, "shadow access %v", d)...)
			break
		}
		steps = append(steps, e.do("SHADOW", func(now clock.Time) { h.shadowStore(now, a^ShadowBit, h.tcData) }))
	case d.region == RegionShared:
		if d.node >= h.nodes || d.off > SharedBytes-WordBytes {
			steps = append(steps, h.refused(write, "address %v outside the cluster", d)...)
			break
		}
		switch {
		case h.special.on && write:
			steps = append(steps, e.do("ARGUMENT", func(now clock.Time) { h.latchArgument(now, a, h.tcData) }))
		case write && d.node == h.node:
			steps = append(steps, h.localWrite(e, d.off, h.tcData)...)
		case write:
			steps = append(steps, e.do("COUNT", func(now clock.Time) { h.countAccess(now, d.node, d.off, true); h.stats.RemoteWrites++ }),
				e.send("SEND_WRITE", func() *Packet { return &Packet{Kind: KWrite, Dst: d.node, Addr: d.off, Data: [2]uint32{h.tcData}} }))
		case d.node == h.node:
			var v uint32
			steps = append(steps, e.do("COUNT", func(clock.Time) { h.stats.Reads++ }),
				e.memAccess("MEM_READ", false, func() uint32 { return d.off }, &v),
				h.reply("REPLY", &v))
		default:
			steps = append(steps, e.do("COUNT", func(now clock.Time) { h.countAccess(now, d.node, d.off, false); h.stats.RemoteReads++ }))
			steps = append(steps, h.remote(e, KRead, func() *Packet { return &Packet{Kind: KRead, Dst: d.node, Addr: d.off} })...)
		}
	case d.region == RegionContext && h.cfg.Version == 2:
		steps = append(steps, h.contextAccess(e, write, d.off)...)
	case d.region == RegionSpecial:
		steps = append(steps, h.specialAccess(e, write, d.off)...)
	default:
		steps = append(steps, h.refused(write, "no such region: %v", d)...)
	}
	e.start(now, steps...)
}

// reply pushes the word *v back on the TURBOchannel as a read's data.
func (h *HIB) reply(name string, v *uint32) step {
	return step{name, func(now clock.Time) bool {
		if !h.tc.Up.CanPush(now) {
			return false
		}
		var b [WordBytes]byte
		binary.LittleEndian.PutUint32(b[:], *v)
		h.tc.Up.Push(now, mem.Beat{Req: h.tcReq, Data: b[:], First: true, Last: true})
		return true
	}}
}

// refused counts a refused access; a read gets 0 (the OS learns of it
// through the interrupt), a write is dropped.
func (h *HIB) refused(write bool, format string, args ...any) []step {
	e := h.cpu
	var zero uint32
	s := []step{e.do("REFUSE", func(now clock.Time) { h.refuse(now, format, args...) })}
	if !write {
		s = append(s, h.reply("REPLY", &zero))
	}
	return s
}

// remote sends the request p() and waits for its reply (at most one
// outstanding, TG-P12), whose datum is returned on the TURBOchannel.
func (h *HIB) remote(e *sequencer, k Kind, p func() *Packet) []step {
	var v uint32
	return []step{
		e.do("ARM", func(clock.Time) { h.waitKind, h.waitReply = k, nil }),
		e.send("SEND_"+k.String(), p),
		e.until("WAIT_REPLY", func(clock.Time) bool { return h.waitReply != nil }),
		e.do("TAKE", func(clock.Time) { v = h.waitReply.Data[0]; h.waitReply = nil }),
		h.reply("REPLY", &v),
	}
}

// localWrite is a processor store to this node's shared memory: plain, to
// a page this node owns (applied, then reflected to every copy), or to a
// copy of a page owned elsewhere (applied with its pending-write counter,
// then forwarded to the owner), 2.3.1-2.3.4.
func (h *HIB) localWrite(e *sequencer, off uint32, v uint32) []step {
	val := v
	ps := h.pages[int(off/PageBytes)]
	seq := h.nextWrite()
	apply := e.memAccess("MEM_WRITE", true, func() uint32 { return off }, &val)
	applied := e.do("APPLIED", func(now clock.Time) {
		h.stats.Writes++
		if h.hooks.Applied != nil {
			h.hooks.Applied(now, off, val, h.node, seq)
		}
	})
	switch {
	case ps == nil || ps.mode == plainPage:
		return []step{apply, applied}
	case ps.mode == ownerPage:
		s := []step{h.mcLock(e), apply, applied}
		s = append(s, h.reflectAll(e, ps.copies, off, val, h.node, seq)...)
		return append(s, h.mcUnlock(e))
	case !h.cfg.OwnerOrdering:
		// Every copy multicasts its own writes: no order among writers.
		s := []step{h.mcLock(e), apply, applied}
		s = append(s, h.reflectAll(e, ps.copies, off, val, h.node, seq)...)
		return append(s, h.mcUnlock(e))
	}
	s := []step{}
	if h.cc != nil {
		if !h.noInterlock {
			// A reflected write to this word that has passed its counter
			// check lands first (sinkReflect, 2.3.3).
			s = append(s, e.until("REFLECT_WAIT", func(clock.Time) bool { return !h.applying.holds(off) }))
		}
		s = append(s, h.counterUp(e, off))
	}
	owner := ps.owner
	ownerOff := uint32(owner.Page)*PageBytes + off%PageBytes
	return append(s, apply, applied, e.do("COUNT", func(clock.Time) { h.stats.Updates++ }),
		e.send("SEND_UPDATE", func() *Packet {
			return &Packet{Kind: KUpdate, Dst: owner.Node, Addr: ownerOff, Data: [2]uint32{val}, Origin: h.node, Seq: seq}
		}))
}

// nextWrite numbers this node's writes (for the coherence checkers).
func (h *HIB) nextWrite() uint64 { h.writes++; return h.writes }

// counterUp is the counter cache's increment for a write to a word of a
// page owned elsewhere: an existing counter goes up, a new one takes a free
// entry, and with none free the processor stalls (2.3.4).
func (h *HIB) counterUp(e *sequencer, off uint32) step {
	return step{"COUNTER_UP", func(now clock.Time) bool {
		if n, ok := h.cc.Lookup(now, off); ok {
			if h.forgetEvery > 0 {
				if h.counterUps++; h.counterUps%h.forgetEvery == 0 {
					return true // mutation: the increment is lost
				}
			}
			h.cc.Update(now, off, n+1)
			h.traceCounter(now, off, n+1)
			return true
		}
		if r := h.cc.Allocate(now, off, 1); !r.OK {
			h.stats.CounterStalls++
			return false // a freed entry wakes nobody: the HIB ticks while busy
		}
		h.traceCounter(now, off, 1)
		return true
	}}
}

// reflectAll sends the write of val at off to every copy, a multicast list
// entry at a time.
func (h *HIB) reflectAll(e *sequencer, copies []Copy, off, val uint32, origin int, seq uint64) []step {
	var s []step
	for _, c := range copies {
		dst := uint32(c.Page)*PageBytes + off%PageBytes
		s = append(s, e.wait("MCAST_ENTRY", h.cfg.MulticastCycles),
			e.send("SEND_REFLECT", func() *Packet {
				h.stats.Reflects++
				return &Packet{Kind: KReflect, Dst: c.Node, Addr: dst, Data: [2]uint32{val}, Origin: origin, Seq: seq}
			}))
	}
	return s
}

// mcLock and mcUnlock hold the multicast unit while a write is applied and
// reflected, so that the copies see the writes in the order the owner
// applied them: «all of the new packets should be multicasted after all of
// the previous packets are sent» (2.3.1).
func (h *HIB) mcLock(e *sequencer) step {
	return step{"MCAST_LOCK", func(clock.Time) bool {
		if h.mcOwner >= 0 && h.mcOwner != e.id {
			return false
		}
		h.mcOwner = e.id
		return true
	}}
}

func (h *HIB) mcUnlock(e *sequencer) step {
	return e.do("MCAST_UNLOCK", func(clock.Time) { h.mcOwner = -1 })
}

// specialAccess serves the special registers.
func (h *HIB) specialAccess(e *sequencer, write bool, reg uint32) []step {
	var v uint32
	if write {
		return []step{e.do("REGISTER", func(now clock.Time) { h.writeRegister(now, reg, h.tcData) })}
	}
	switch reg {
	case RegFence:
		return []step{e.until("FENCE", func(clock.Time) bool { return h.outstanding == 0 }), h.reply("REPLY", &v)}
	case RegLaunch:
		if h.cfg.Version != 1 || !h.special.on {
			return h.refused(false, "launch outside special mode")
		}
		sm := h.special
		h.special = specialMode{}
		return h.launch(e, sm.op, sm.args, sm.data, sm.nargs)
	}
	return []step{e.do("REGISTER", func(clock.Time) { v = h.readRegister(reg) }), h.reply("REPLY", &v)}
}

func (h *HIB) readRegister(reg uint32) uint32 {
	switch reg {
	case RegNodeID:
		return uint32(h.node)
	case RegOutstanding:
		return uint32(h.outstanding)
	case RegIntStatus:
		return h.intStatus
	case RegIntPage:
		return h.intPage
	case RegRefused:
		return uint32(h.stats.Refused)
	case RegPCRead, RegPCWrite:
		r, w := h.PageCounters(h.pcSelect)
		if reg == RegPCRead {
			return r
		}
		return w
	}
	return 0
}

func (h *HIB) writeRegister(now clock.Time, reg, v uint32) {
	switch reg {
	case RegMode:
		if h.cfg.Version != 1 || !validOp(v) {
			h.refuse(now, "special mode with operation %d", v)
			return
		}
		h.special = specialMode{on: true, op: v}
	case RegIntStatus:
		h.intStatus &^= v
		if h.intStatus == 0 {
			h.sigIntr.SetBool(now, false)
		}
	case RegPCPage:
		h.pcSelect = int(v)
	case RegPCRead, RegPCWrite:
		r, w := h.PageCounters(h.pcSelect)
		if reg == RegPCRead {
			r = v
		} else {
			w = v
		}
		h.SetPageCounters(h.pcSelect, r, w)
	default:
		h.refuse(now, "write to special register %#x", reg)
	}
}

func validOp(op uint32) bool {
	return op == uint32(FetchAndStore) || op == uint32(FetchAndInc) || op == uint32(CompareAndSwap) || op == OpCopy
}

// latchArgument takes a store made in Telegraphos I's special mode as an
// argument: its address and datum (2.2.4).
func (h *HIB) latchArgument(now clock.Time, a, v uint32) {
	sm := &h.special
	if sm.nargs == len(sm.args) {
		h.refuse(now, "more than %d arguments", len(sm.args))
		return
	}
	sm.args[sm.nargs], sm.data[sm.nargs] = a, v
	sm.nargs++
}

// shadowStore passes the physical address a to the context named in the
// store's datum if its key matches; a wrong key or context is refused and
// changes nothing (2.2.4-2.2.5).
func (h *HIB) shadowStore(now clock.Time, a, v uint32) {
	ctx, key := int(v>>16), uint16(v)
	if ctx >= len(h.ctxs) {
		h.refuse(now, "shadow store to context %d of %d", ctx, len(h.ctxs))
		return
	}
	c := &h.ctxs[ctx]
	switch {
	case c.key != key && !h.acceptKeys:
		h.refuse(now, "shadow store to context %d with a wrong key", ctx)
	case c.nargs == len(c.args):
		h.refuse(now, "shadow store to context %d with %d addresses already", ctx, c.nargs)
	default:
		c.args[c.nargs] = a
		c.nargs++
	}
}

// contextAccess serves a context's registers (Telegraphos II).
func (h *HIB) contextAccess(e *sequencer, write bool, off uint32) []step {
	ctx, reg := int(off/ContextBytes), off%ContextBytes
	if ctx >= len(h.ctxs) {
		return h.refused(write, "context %d of %d", ctx, len(h.ctxs))
	}
	c := &h.ctxs[ctx]
	if write {
		return []step{e.do("CONTEXT", func(now clock.Time) {
			switch reg {
			case CtxOp:
				c.op = h.tcData
			case CtxData0:
				c.data[0] = h.tcData
			case CtxData1:
				c.data[1] = h.tcData
			default:
				h.refuse(now, "write to context register %#x", reg)
			}
		})}
	}
	var v uint32
	switch reg {
	case CtxArg0, CtxArg1:
		i := int(reg-CtxArg0) / WordBytes
		return []step{e.do("CONTEXT", func(clock.Time) { v = c.args[i] }), h.reply("REPLY", &v)}
	case CtxLaunch:
		op, args, data, n := c.op, c.args, c.data, c.nargs
		c.op, c.nargs = 0, 0 // the context is free for the next operation
		return h.launch(e, op, args, data, n)
	}
	return []step{e.do("CONTEXT", func(clock.Time) {}), h.reply("REPLY", &v)}
}

// launch performs a special operation: an atomic operation on the word at
// args[0] (operands data), or a remote copy from args[0] to args[1]. The
// TURBOchannel read that launched it returns the atomic's old value, or 0
// at once for the copy, which does not wait (2.2.2).
func (h *HIB) launch(e *sequencer, op uint32, args, data [2]uint32, n int) []step {
	need := 1
	if op == OpCopy {
		need = 2
	}
	if !validOp(op) || n < need {
		return h.refused(false, "special operation %d with %d addresses", op, n)
	}
	src := decode(args[0])
	if src.region != RegionShared || src.node >= h.nodes {
		return h.refused(false, "special operation on %v", src)
	}
	if op == OpCopy {
		dst := decode(args[1])
		if dst.region != RegionShared || dst.node != h.node {
			return h.refused(false, "remote copy to %v, not local memory", dst)
		}
		var zero uint32
		h.stats.Copies++
		if src.node == h.node {
			var v uint32
			return []step{e.memAccess("MEM_READ", false, func() uint32 { return src.off }, &v),
				e.memAccess("MEM_WRITE", true, func() uint32 { return dst.off }, &v), h.reply("REPLY", &zero)}
		}
		return []step{e.send("SEND_COPY", func() *Packet { return &Packet{Kind: KCopyReq, Dst: src.node, Addr: src.off, To: dst.off} }),
			h.reply("REPLY", &zero)}
	}
	aop := AtomicOp(op)
	h.stats.Atomics++
	if src.node == h.node {
		var old, nv uint32
		return []step{e.lock("LOCK"),
			e.memAccess("MEM_READ", false, func() uint32 { return src.off }, &old),
			e.wait("ALU", h.cfg.AtomicCycles),
			e.do("ALU", func(clock.Time) { nv = aop.apply(old, data) }),
			e.memAccess("MEM_WRITE", true, func() uint32 { return src.off }, &nv),
			e.unlock("UNLOCK"), h.reply("REPLY", &old)}
	}
	return h.remote(e, KAtomic, func() *Packet { return &Packet{Kind: KAtomic, Dst: src.node, Addr: src.off, Op: aop, Data: data} })
}

// traceCounter records a pending-write counter's new value.
func (h *HIB) traceCounter(now clock.Time, off uint32, n int) {
	if h.env.Trace.Enabled() {
		h.env.Trace.Emit(now, h.Clock().CycleAt(now), h.Name(), "tg.counter", trace.Addr("addr", uint64(off)), trace.Int("count", int64(n)))
	}
}
