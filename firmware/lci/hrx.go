package lci

import (
	"github.com/nisim/nisim/firmware"
)

// I-hrx: host-level retransmission (lci-myrinet-cluster-protocols.txt
// section 5.1.1). The go-back-N protocol of I-nirx (rx.go) runs in the host
// library (host/lcilib), timed with the CPU's timestamp counter; the NI
// does what is left:
//
//   - it sends what the host's descriptors say, with the header the host
//     built (Desc.HSeq, HCredits, HRoot, HFlags), and keeps no credits:
//     the window is the host's;
//   - «I-hrx uses NI memory to buffer outbound packets for
//     retransmission»: a descriptor marked DescResend names a send buffer
//     whose data is in the NI already, and the NI sends it without a
//     fetch; each transmission posts a send completion, so that the host
//     knows when the NI has done with a buffer it resent (it frees the
//     buffer once it is acknowledged and every transmission of it is
//     complete);
//   - «The receiving NI drops packets with CRC errors and packets that
//     cannot be stored due to a shortage of NI receive buffers»: all
//     senders share one pool, and the last free buffer is the landing
//     zone, as in I-nirx; there is no retransmission request (the
//     sender's timeout recovers);
//   - every other packet goes to the host with its header in front of the
//     data (acknowledgments, fetch-and-add requests and multicasts
//     included: «The receiving host drops all out-of-sequence packets»;
//     the host serves fetch-and-add and forwards multicasts).
//
// An explicit acknowledgment is a descriptor of type TypeAck without data:
// it is sent from a control buffer. When none is free (a host that
// acknowledges many senders at once while the send engine is busy), the
// acknowledgment waits for one, one per destination: a later one to the
// same node replaces the waiting one, since acknowledgments are cumulative.

// hrxNI is the NI's share of I-hrx: its drop counters (RxStats: CRCDrops
// and NoBufDrops; the host counts the rest) and the acknowledgments waiting
// for a control buffer, in order (acks), at most one per destination.
type hrxNI struct {
	stats RxStats
	acks  []hrxAck
}

// hrxAck is an acknowledgment waiting for a control buffer.
type hrxAck struct {
	dst int
	hdr Header
}

// hrxCheckDesc validates an I-hrx descriptor: what checkDesc checks, with
// the types the host sends (its fetch-and-add replies and acknowledgments
// too; a multicast is a unicast to one child, section 5.1.1's «host-level
// multicast implementation»), DescResend allowed, and no data in an
// acknowledgment or fetch-and-add packet.
func (p *Program) hrxCheckDesc(c *firmware.Ctx, d Desc) bool {
	ok := int(d.Len) <= p.cfg.MTU && int(d.Dst) < p.n && int(d.Dst) != p.node && d.Flags&^DescResend == 0
	switch d.Type {
	case TypeData, TypeMcast:
		ok = ok && int(d.Buf) < p.cfg.SendBufs
	case TypeFAReq, TypeFARep:
		ok = ok && int(d.Buf) < p.cfg.SendBufs && d.Len == 0
	case TypeAck:
		ok = ok && d.Len == 0 && d.Flags == 0
	default:
		ok = false
	}
	if !ok {
		c.Env.Report(c.Now, p.name, "lci.desc", "bad I-hrx send descriptor %+v", d)
	}
	return ok
}

// hrxSubmit turns an I-hrx descriptor into a packet with the host's
// header.
func (p *Program) hrxSubmit(c *firmware.Ctx, d Desc) {
	h := Header{Type: d.Type, Src: uint8(p.node), Len: d.Len, Credits: d.HCredits, Root: d.HRoot, Flags: d.HFlags, Seq: d.HSeq, Arg: d.Tag}
	if d.Type == TypeAck {
		for i := range p.hrx.acks {
			if p.hrx.acks[i].dst == int(d.Dst) {
				p.hrx.acks[i].hdr = h // cumulative: the newer one says more
				return
			}
		}
		if b, ok := p.takeCtl(); ok {
			c.Fire(p.fc, "want", txItem{kind: itemCtl, dst: int(d.Dst), buf: b, hdr: h})
			return
		}
		p.hrx.acks = append(p.hrx.acks, hrxAck{dst: int(d.Dst), hdr: h})
		return
	}
	c.Fire(p.fc, "want", txItem{kind: itemSend, dst: int(d.Dst), buf: int(d.Buf), hdr: h})
}

// hrxReceive is Recv Queue Mgt and Recv Dispatch for I-hrx: drop a bad
// CRC, or a packet that landed in the last free buffer; deliver the rest.
func (p *Program) hrxReceive(c *firmware.Ctx, ev firmware.HWEvent) {
	r := p.hrx
	buf := p.armedBuf
	p.armed = false
	h := DecodeHeader(c.Read(ev.Addr, HeaderBytes))
	switch {
	case ev.Bad:
		r.stats.CRCDrops++
		p.rxTrace(c, "drop", int(ev.Src), 0, "crc")
		p.armBuf(c, buf)
		return
	case ev.Len != HeaderBytes+int(h.Len) || int(h.Src) >= p.n:
		c.Env.Report(c.Now, p.name, "lci.packet", "malformed packet %d from node %d: %d bytes with header %+v; dropped", ev.Tag, ev.Src, ev.Len, h)
		p.armBuf(c, buf)
		return
	case len(p.freeRecv) == 0:
		r.stats.NoBufDrops++
		p.rxTrace(c, "drop", int(h.Src), 0, "nobuf")
		p.armBuf(c, buf)
		return
	}
	p.arm(c)
	p.recvHdr[buf] = h
	p.recvRef[buf] = 1
	c.Fire(p.hrq, "deliver", buf)
}

// hrxAckFreed sends the oldest acknowledgment waiting for a control buffer
// from control buffer b, which has just been freed; it reports whether it
// took b.
func (p *Program) hrxAckFreed(c *firmware.Ctx, b int) bool {
	if p.hrx == nil || len(p.hrx.acks) == 0 {
		return false
	}
	a := p.hrx.acks[0]
	p.hrx.acks = p.hrx.acks[1:]
	c.Fire(p.fc, "want", txItem{kind: itemCtl, dst: a.dst, buf: b, hdr: a.hdr})
	return true
}
