package lci

import (
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/env"
)

// I-rcpy in the control program (lci-myrinet-cluster-protocols.txt
// section 5.2.3): the hooks that run rcpy.go's pieces in the modules of
// the base implementation, on the machine "rcpy" (present in I-rcpy
// only, so the other variants' machines and traces are unchanged):
//
//   - Host Send Queue Mgt finds an RCPY page-transfer descriptor in the
//     host's send queue (pollSendQ) and hands it to rcpyDesc: «For each
//     descriptor, the NI looks up the virtual source address in its NTLB
//     and performs a DMA transfer from the corresponding physical host
//     address to a free NI buffer. Next, the send buffer is transmitted to
//     the destination NI.» On a send miss the data is in the send buffer
//     already (the host's PIO) and the NI updates its NTLB entry from the
//     descriptor («When the NI finds the miss notification, it can be sure
//     that all pending hits for the NTLB entry have been processed, so it
//     can be updated»). Either way the packet goes through the base's flow
//     control (credits, the window W), as an I-sdma packet, with the
//     virtual destination address in its header's argument, and its send
//     buffer's completion is reported to the host as the base reports
//     every send completion, «via a DMA to the host receive queue»
//     (section 4.1): the host library's separate completion check counts
//     them («The host will learn that the NTLB has changed state while
//     processing the corresponding send completion»).
//   - Recv Dispatch gives an arriving RCPY packet to rcpyRecv: «The
//     receiving NI extracts the virtual destination address from the
//     packet header, looks it up in its NTLB, and performs a DMA transfer
//     to copy the data to host memory.» Nothing is delivered to the host
//     receive queue on a hit («no notification at the receiver by
//     default»). On a miss the data goes to an anonymous page, the entry
//     is invalidated and locked, and the RCPY notification (a slot of the
//     host receive queue, type TypeRcpy: the destination address, the
//     size, the anonymous page) follows the data by the same FIFO DMA
//     engine. The receive buffer is released after its DMAs, returning the
//     sender's credit as any reserved packet.
//   - A host write to the NTLB (watched) is the host's unlock after it
//     handled a miss: rcpyUnlock gives the entry's anonymous page back and
//     retries packets stalled for want of one, or on the locked entry.

// jobRcpyFetch and jobRcpyData are I-rcpy's DMA jobs: a hit's fetch of the
// source into a send buffer, and an arriving page transfer's data to its
// destination (or an anonymous page).
const (
	jobRcpyFetch jobKind = iota + jobCompletion + 1
	jobRcpyData
)

// rcpyNI is I-rcpy's NI state.
type rcpyNI struct {
	ntlb *NTLB
	anon *AnonPages
	// anonOf is the anonymous page held for a locked entry (-1: none);
	// held lists those entries in the order they were locked.
	anonOf []int
	held   []int
	// stalled are receive buffers whose page transfer found its entry
	// locked or no anonymous page free, in arrival order.
	stalled queue.Queue[int]
	// noteAnon is, per receive buffer, the anonymous page of the miss
	// whose notification it waits to deliver.
	noteAnon []int
	// chk checks descriptors.
	chk RcpyCheck
}

func newRcpyNI(e *env.Env, cfg Config, l Layout, node, nodes int) *rcpyNI {
	phys := make([]uint32, cfg.AnonPages)
	for i := range phys {
		phys[i] = cfg.AnonBase + uint32(i)*PageBytes
	}
	r := &rcpyNI{ntlb: NewNTLB(e, l.NTLB), anon: NewAnonPages(phys), anonOf: make([]int, NTLBEntries), noteAnon: make([]int, cfg.RecvBufs),
		chk: RcpyCheck{Node: node, Nodes: nodes, MTU: cfg.MTU, SendBufs: cfg.SendBufs}}
	for i := range r.anonOf {
		r.anonOf[i] = -1
	}
	return r
}

// NTLB returns the program's NI TLB (nil unless I-rcpy), for checkers.
func (p *Program) NTLB() *NTLB {
	if p.rcpy == nil {
		return nil
	}
	return p.rcpy.ntlb
}

func (p *Program) buildRcpy(mk func(string, firmware.State, []firmware.Transition) *firmware.Machine) {
	k := p.cfg.Costs
	p.rcm = mk("rcpy", sIdle, []firmware.Transition{
		{From: sIdle, On: "desc", Cost: k.HostSend + k.RcpyXlate, Do: p.rcpyDesc},
		{From: sIdle, On: "fetched", Do: func(c *firmware.Ctx, _ any) { p.markFetched(c) }},
		{From: sIdle, On: "packet", Cost: k.RcpyXlate, Do: p.rcpyRecv},
		{From: sIdle, On: "unlock", Cost: k.RcpyUnlock, Do: p.rcpyUnlock},
	})
}

// rcpySlot reports whether raw, a slot of the host's send queue, is an
// RCPY descriptor this program takes.
func (p *Program) rcpySlot(raw []byte) bool { return p.rcpy != nil && raw[8] == TypeRcpy }

// rcpyDesc is Host Send Queue Mgt's step for a page-transfer descriptor.
func (p *Program) rcpyDesc(c *firmware.Ctx, a any) {
	r := p.rcpy
	d, err := DecodeRcpyDesc(a.([]byte))
	if err != nil {
		c.Env.Report(c.Now, p.name, "lci.desc", "bad I-rcpy send descriptor: %v", err)
		return
	}
	if !r.chk.CheckReport(c.Env, p.name, d) {
		return
	}
	phys, fetch, ok := r.ntlb.SendTranslate(c, d)
	if !ok {
		c.Env.Report(c.Now, p.name, "lci.desc", "I-rcpy page transfer from %#x without the miss flag: the NTLB has no valid entry for it", d.Src)
		return
	}
	// The packet: TypeRcpy, the virtual destination address as the
	// argument (Desc.Tag becomes Header.Arg in submit).
	pd := Desc{Seq: d.Seq, Type: TypeRcpy, Dst: d.Node, Len: d.Size, Buf: d.Buf, Tag: d.Dst}
	if !fetch {
		p.sq = append(p.sq, sqEntry{d: pd, ready: true})
		p.drainSQ(c)
		return
	}
	p.fetches++
	p.counts.Fetches++
	p.sq = append(p.sq, sqEntry{d: pd})
	c.Fire(p.dmaM, p.jobEvent(), dmaJob{kind: jobRcpyFetch, ref: int(d.Buf),
		d: firmware.HostDMA{Dir: firmware.ToNI, HostAddr: uint64(phys), SRAM: p.layout.SendBuf(int(d.Buf)) + HeaderBytes, Len: int(d.Size)}})
}

// rcpyRecv is Recv Dispatch's step for an arriving page transfer in
// receive buffer buf.
func (p *Program) rcpyRecv(c *firmware.Ctx, a any) {
	buf := a.(int)
	h := p.recvHdr[buf]
	if h.Arg%4 != 0 || h.Len == 0 || h.Len%4 != 0 || h.Arg%PageBytes+uint32(h.Len) > PageBytes {
		c.Env.Report(c.Now, p.name, "lci.packet", "I-rcpy packet from node %d: %d bytes to %#x (not 4-byte aligned, empty or crossing a page); dropped", h.Src, h.Len, h.Arg)
		p.recvRef[buf] = 1
		p.unref(c, buf)
		return
	}
	if p.rcpy.stalled.Len() > 0 {
		// FIFO: behind the packets stalled before it.
		p.rcpy.stalled.Push(buf)
		return
	}
	if !p.rcpyPlace(c, buf) {
		p.rcpy.stalled.Push(buf)
	}
}

// rcpyPlace decides where buf's page transfer goes and starts its DMAs;
// false if it must wait (Receive's Stall).
func (p *Program) rcpyPlace(c *firmware.Ctx, buf int) bool {
	r := p.rcpy
	h := p.recvHdr[buf]
	del := r.ntlb.Receive(c, h.Arg, r.anon)
	if del.Stall {
		return false
	}
	p.recvRef[buf] = 1
	if del.Miss {
		c.Charge(p.cfg.Costs.RcpyMiss)
		r.anonOf[Index(h.Arg)] = del.Anon
		r.held = append(r.held, Index(h.Arg))
		p.recvRef[buf] = 2 // the data's DMA and the notification's
	}
	c.Fire(p.dmaM, p.jobEvent(), dmaJob{kind: jobRcpyData, ref: buf,
		d: firmware.HostDMA{Dir: firmware.ToHost, HostAddr: uint64(del.Phys), SRAM: p.layout.RecvBuf(buf) + HeaderBytes, Len: int(h.Len)}})
	if del.Miss {
		// The notification goes after the data on the same engine.
		r.noteAnon[buf] = del.Anon
		c.Fire(p.hrq, "deliver", buf)
	}
	return true
}

// rcpyNote is the host receive slot header of a receive miss's
// notification for receive buffer buf: «The RCPY notification message
// indicates that a miss occurred, supplies the address of the anonymous
// page, and also serves as a TLB replacement request»: [4:8] the virtual
// destination address, [8:12] the anonymous page's index (low 16 bits)
// and the size (high 16 bits); no data.
func (p *Program) rcpyNote(buf int) SlotHeader {
	h := p.recvHdr[buf]
	return SlotHeader{Type: TypeRcpy, Src: h.Src, Tag: h.Arg, Arg: uint32(p.rcpy.noteAnon[buf]) | uint32(h.Len)<<16}
}

// rcpyUnlock: the host wrote the NTLB (its PIO writes may reach the NI
// as one event for several entries). Every entry holding an anonymous
// page that is unlocked now gives it back, and stalled packets are retried
// in order. Each page given back costs RcpyUnlock beyond the first (which
// the transition charges).
func (p *Program) rcpyUnlock(c *firmware.Ctx, _ any) {
	r := p.rcpy
	kept, given := r.held[:0], 0
	for _, i := range r.held {
		if r.ntlb.Entry(c, i).Locked {
			kept = append(kept, i)
			continue
		}
		if given++; given > 1 {
			c.Charge(p.cfg.Costs.RcpyUnlock)
		}
		r.anon.Give(r.anonOf[i])
		r.anonOf[i] = -1
	}
	r.held = kept
	for r.stalled.Len() > 0 && p.rcpyPlace(c, *r.stalled.Front()) {
		r.stalled.Pop()
	}
}

// rcpyWrite reports whether a host write at addr is to the NTLB.
func (p *Program) rcpyWrite(addr uint32) bool {
	return p.rcpy != nil && addr >= p.layout.NTLB && addr < p.layout.NTLB+NTLBBytes
}
