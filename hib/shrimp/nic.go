package shrimp

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// nicPath is the outgoing arbiter and the NIC port (core domain), and the
// Intel network interface chip's TX and RX FIFOs, pipelined delay and link
// sender and receiver (link domain) (issue 14 design section 1.1; L322,
// L332: the NIC is Intel's chip, «FIFOs in the network interface chip»).
//
// Timing of a one-word AU store, in core cycles from the Xpress data phase
// b (the observer's call) with OPTCycles 1:
//
//   - b+1: the snoop register pops the beat; the OPT is read;
//   - b+2: the packetiser writes the header and data words (the FIFO);
//   - b+3: the arbiter sees the closed packet and picks it;
//   - b+4, b+5: the NIC port moves its header and data word into the NIC
//     TX FIFO, each visible to the link side NICDelayCycles link cycles
//     later (a pipelined delay: nothing is held longer for it);
//   - then one 2-B flit per link cycle: RouteBytes/2 route flits,
//     HeaderBytes/2 header flits and the data flits.
type nicPath struct {
	out, in *link.Dir
	tx, rx  *fifo.FIFO[streamWord]

	// The arbiter's pick, being moved through the port: cur is the
	// packet, au its Outgoing FIFO record (nil for DU).
	cur    *Packet
	au     *auPacket
	lastDU bool // the kind served last (round-robin per packet)
	seq    [2][]uint64

	// link sender: flits of the word being sent; ids numbers packets.
	pend     []link.Flit
	ids      uint64
	info     *link.PacketInfo // the current packet's shared part
	tailSent bool

	// link receiver: the packet being assembled.
	rxPkt   *Packet
	rxFlits int    // flits of it seen
	rxHdr   []byte // route and header bytes
	rxWord  []byte // data bytes of the word being assembled
	rxGot   int    // data bytes received
	rxBad   bool   // a corrupted header: the data goes nowhere
	rxMeta  *Packet
	rxWords int // data words pushed

	sigPort *waves.Signal
}

// buildNIC creates the NIC FIFOs. NIC TX and RX: NICTxBytes and NICRxBytes
// of FIFOWidthBytes words (assumed sizes, L322); the port moves
// NICPortBytes per core cycle.
func (n *NI) buildNIC() error {
	c := &n.cfg
	pw := c.NICPortBytes / c.FIFOWidthBytes
	nc := &n.nc
	var err error
	if nc.tx, err = fifo.MakeBuilder[streamWord]().WithEnv(n.env).WithDepth(c.NICTxBytes / c.FIFOWidthBytes).
		WithWidth(8 * c.FIFOWidthBytes).WithEnqPerCycle(pw).Build(n.name + ".NetTx"); err != nil {
		return err
	}
	nc.tx.Connect(n, n.nic)
	if nc.rx, err = fifo.MakeBuilder[streamWord]().WithEnv(n.env).WithDepth(c.NICRxBytes / c.FIFOWidthBytes).
		WithWidth(8 * c.FIFOWidthBytes).WithDeqPerCycle(pw).Build(n.name + ".NetRx"); err != nil {
		return err
	}
	nc.rx.Connect(n.nic, n)
	nc.seq = [2][]uint64{make([]uint64, n.nodes), make([]uint64, n.nodes)}
	// port: who has the NIC port this core cycle (IDLE, IN, OUT, WAIT when
	// a picked packet could not move a word).
	nc.sigPort = n.env.Waves.String(n.name+".Net", "port")
	nc.sigPort.SetString(0, "IDLE")
	return nil
}

// connectNIC connects the NIC to its link directions.
func (n *NI) connectNIC(out, in *link.Dir) error {
	nc := &n.nc
	if nc.out != nil {
		return fmt.Errorf("link already connected (%s)", nc.out.Name())
	}
	nc.out, nc.in = out, in
	out.SetSender(n.nic)
	in.SetReceiver(n.nic)
	return nil
}

// tickArbiter picks the next packet for the NIC port when it has none: a
// closed AU packet at the Outgoing FIFO's head or a DU packet at the DU
// stream's head, round-robin per packet when both wait (assumed: the paper
// names no policy).
func (n *NI) tickArbiter(now clock.Time) bool {
	nc := &n.nc
	if nc.cur != nil {
		return false
	}
	var au *auPacket
	if w, ok := n.out.fifo.Peek(now); ok && w.header && w.pk.closed {
		au = w.pk
	}
	var du *Packet
	if w, ok := n.duStream.Peek(now); ok && w.Pkt != nil && w.Data == nil {
		du = w.Pkt
	}
	switch {
	case au != nil && (du == nil || nc.lastDU):
		nc.cur, nc.au, nc.lastDU = au.p, au, false
	case du != nil:
		nc.cur, nc.au, nc.lastDU = du, nil, true
		n.counters.DUPackets++
		n.counters.DUBytes += uint64(du.Len)
	default:
		return false
	}
	p := nc.cur
	if p.Dst >= 0 && p.Dst < n.nodes {
		nc.seq[p.Kind&1][p.Dst]++
		p.Seq = nc.seq[p.Kind&1][p.Dst]
	}
	if n.onPacketOut != nil {
		n.onPacketOut(now, p)
	}
	return true
}

// tickPort moves up to NICPortBytes of words through the NIC port: incoming
// words (NIC RX to the incoming stream) first, «incoming packets have top
// priority for access to the NIC» (SH-P23); the rest of the cycle's width
// goes to the picked outgoing packet (its source to the NIC TX FIFO).
// assumed: an incoming word that cannot move (the incoming path is full)
// leaves the port to the outgoing side, so that an outgoing packet never
// waits on the incoming DMA (design R3: no cross-node wait cycle).
func (n *NI) tickPort(now clock.Time) bool {
	nc := &n.nc
	c := &n.cfg
	budget := c.NICPortBytes / c.FIFOWidthBytes
	in := 0
	for budget > 0 && nc.rx.CanPop(now) && n.inStream.CanPush(now) {
		w, _ := nc.rx.Pop(now)
		n.inStream.Push(now, w)
		budget--
		in++
	}
	out := 0
	for budget > 0 && nc.cur != nil && nc.tx.CanPush(now) {
		var w streamWord
		if nc.au != nil {
			ow, ok := n.popWord(now)
			if !ok {
				break
			}
			w = streamWord{Pkt: nc.cur}
			if !ow.header {
				lo := ow.idx * c.FIFOWidthBytes
				w.Data = nc.cur.Data[lo:min(lo+c.FIFOWidthBytes, nc.cur.Len)]
				w.Last = ow.idx == nc.au.words-1
			}
		} else {
			dw, ok := n.duStream.Pop(now)
			if !ok {
				break
			}
			w = dw
			w.Pkt = nc.cur
		}
		nc.tx.PushAt(now, n.nic.Clock().After(now, clock.Cycle(c.NICDelayCycles)), w)
		budget--
		out++
		if w.Last {
			nc.cur, nc.au = nil, nil
		}
	}
	switch {
	case nc.cur != nil && out == 0:
		n.counters.NICOutWaitCycles++
		nc.sigPort.SetString(now, "WAIT")
	case in > 0:
		nc.sigPort.SetString(now, "IN")
	case out > 0:
		nc.sigPort.SetString(now, "OUT")
	default:
		nc.sigPort.SetString(now, "IDLE")
	}
	return in > 0 || out > 0
}

// tickNIC advances the NIC by one link cycle: the sender (a flit onto the
// link), then the receiver (a flit off it).
func (n *NI) tickNIC(now clock.Time) bool {
	if n.nc.out == nil {
		return false
	}
	tx := n.sendFlit(now)
	rx := n.recvFlit(now)
	return tx || rx
}

// sendFlit sends the next flit of the word at the NIC TX FIFO's head (once
// its delay has passed): a header word becomes the route and header flits,
// a data word its 2-B data flits. As the fabric's terminals, a new packet
// starts only when the previous one's credits are all back (the Paragon
// routers wait for the tail credit).
func (n *NI) sendFlit(now clock.Time) bool {
	nc := &n.nc
	c := &n.cfg
	if len(nc.pend) == 0 {
		w, ok := nc.tx.Pop(now)
		if !ok {
			return false
		}
		p := w.Pkt
		if w.Data == nil {
			nc.ids++
			hdr := EncodeHeader(p)
			b := append(routeBytes(p.Dst, c.RouteBytes), hdr[:]...)
			b = append(b, make([]byte, c.HeaderBytes-len(hdr))...)
			nc.pend = n.flits(nc.pend, p, b, true, false)
		} else {
			nc.pend = n.flits(nc.pend, p, w.Data, false, w.Last)
		}
	}
	f := nc.pend[0]
	if f.Head && nc.tailSent && nc.out.Outstanding(now, 0) > 0 {
		return true // wait for the last packet's credits
	}
	if !nc.out.CanSend(now, 0) {
		if now < nc.out.BusyUntil() {
			n.nic.WakeAt(nc.out.BusyUntil())
		}
		return false
	}
	if f.Head {
		f.Stamp = now
		if n.env.Trace.Enabled() {
			p := f.Meta().(*Packet)
			n.env.Trace.Emit(now, n.nic.Clock().CycleAt(now), n.name, "shrimp.tx", trace.Str("kind", p.Kind.String()),
				trace.Int("src", int64(p.Src)), trace.Int("dst", int64(p.Dst)), trace.Uint("seq", p.Seq),
				trace.Addr("addr", p.DstAddr), trace.Int("len", int64(p.Len)), trace.Int("flits", int64(c.WireFlits(p.Len))),
				trace.Hash("hash", p.Data))
		}
	}
	nc.out.Send(now, &f)
	nc.pend = nc.pend[1:]
	if f.Head {
		nc.tailSent = false
	}
	if f.Tail {
		nc.tailSent = true
	}
	return true
}

// flits appends the 2-B flits carrying b (the route and header when head,
// data otherwise; tail marks the packet's last data) to out.
func (n *NI) flits(out []link.Flit, p *Packet, b []byte, head, tail bool) []link.Flit {
	nc := &n.nc
	if in := nc.info; in == nil || in.ID != nc.ids || in.Meta != any(p) {
		nc.info = &link.PacketInfo{ID: nc.ids, Src: n.node, Dst: p.Dst, Meta: p} // the packet's words share it
	}
	for i := 0; i < len(b); i += FlitBytes {
		f := link.Flit{Info: nc.info, VC: 0, Data: b[i:min(i+FlitBytes, len(b))], Size: FlitBytes, Head: head && i == 0, Tail: tail && i+FlitBytes >= len(b), Carries: link.HasMeta}
		out = append(out, f)
	}
	return out
}

// recvFlit takes the next flit off the link into the packet being
// assembled and pushes the words it completes into the NIC RX FIFO, each
// visible to the port NICDelayCycles later. A header word carries the
// decoded packet (Seq and Flush copied from the sender's, for checkers);
// the last data word carries the tail's CRC verdict (Bad), which the
// incoming path acts on (design R8). A flit that would complete a word
// waits while the NIC RX FIFO is full (its link buffer then fills, and the
// credits stop the sender).
func (n *NI) recvFlit(now clock.Time) bool {
	nc := &n.nc
	c := &n.cfg
	rx := nc.in.Rx(0)
	f, ok := rx.Peek(now)
	if !ok {
		return false
	}
	hdrFlits := c.RouteBytes/FlitBytes + (c.HeaderBytes+FlitBytes-1)/FlitBytes
	completes := f.Tail || nc.rxFlits+1 == hdrFlits ||
		(nc.rxFlits >= hdrFlits && len(nc.rxWord)+len(f.Data) >= c.FIFOWidthBytes)
	if completes && !nc.rx.CanPush(now) {
		return false
	}
	rx.Pop(now)
	if f.Head {
		if nc.rxFlits != 0 {
			n.env.Report(now, n.name, "shrimp.rx", "head flit inside packet (flit %d)", nc.rxFlits)
		}
		nc.rxFlits, nc.rxHdr, nc.rxWord, nc.rxGot, nc.rxBad, nc.rxPkt, nc.rxWords = 0, nc.rxHdr[:0], nil, 0, false, nil, 0
		nc.rxMeta, _ = f.Meta().(*Packet)
		if f.Dst() != n.node {
			n.env.Report(now, n.name, "shrimp.misroute", "packet for node %d delivered to node %d", f.Dst(), n.node)
		}
	}
	nc.rxFlits++
	visible := n.nic.Clock().After(now, clock.Cycle(c.NICDelayCycles))
	if nc.rxFlits <= hdrFlits {
		nc.rxHdr = append(nc.rxHdr, f.Data...)
		if nc.rxFlits == hdrFlits {
			p, err := DecodeHeader(nc.rxHdr[c.RouteBytes:])
			if err != nil || p.Len > c.MaxPacketBytes {
				// A corrupted header: the packet's tail must fail its CRC;
				// keep a packet the incoming path will drop.
				nc.rxBad = true
				p = Packet{Len: 0}
			}
			p.Dst = n.node
			if m := nc.rxMeta; m != nil {
				p.Seq, p.Flush, p.SrcAddr = m.Seq, m.Flush, m.SrcAddr
			}
			p.Data = make([]byte, 0, p.Len)
			nc.rxPkt = &p
			nc.rx.PushAt(now, visible, streamWord{Pkt: nc.rxPkt, Last: f.Tail, Bad: f.Tail && (f.Bad || nc.rxBad)})
		}
		if f.Tail {
			n.endRx(now)
		}
		return true
	}
	p := nc.rxPkt
	nc.rxWord = append(nc.rxWord, f.Data...)
	nc.rxGot += len(f.Data)
	if len(nc.rxWord) >= c.FIFOWidthBytes || f.Tail {
		data := nc.rxWord
		if room := p.Len - len(p.Data); len(data) > room {
			data = data[:max(room, 0)]
		}
		p.Data = append(p.Data, data...)
		nc.rx.PushAt(now, visible, streamWord{Pkt: p, Data: data, Last: f.Tail, Bad: f.Tail && (f.Bad || nc.rxBad)})
		nc.rxWord = nil
		nc.rxWords++
	}
	if f.Tail {
		if !f.Bad && !nc.rxBad && nc.rxGot != p.Len {
			n.env.Report(now, n.name, "shrimp.rx", "packet of %d data bytes with a header length %d and a good CRC", nc.rxGot, p.Len)
		}
		n.endRx(now)
	}
	return true
}

// endRx ends the packet being received.
func (n *NI) endRx(now clock.Time) {
	nc := &n.nc
	nc.rxFlits, nc.rxPkt, nc.rxMeta, nc.rxWord = 0, nil, nil, nil
}

// idleNIC reports whether the NIC holds nothing.
func (n *NI) idleNIC() bool {
	nc := &n.nc
	return nc.cur == nil && nc.tx.Idle() && nc.rx.Idle() && len(nc.pend) == 0 && nc.rxFlits == 0
}

// stateNIC describes the NIC.
func (n *NI) stateNIC() string {
	nc := &n.nc
	cur := "none"
	if nc.cur != nil {
		cur = fmt.Sprintf("%s to %d, %d B", nc.cur.Kind, nc.cur.Dst, nc.cur.Len)
	}
	return fmt.Sprintf("port packet %s; tx %d words, %d flits pending; rx %d words, %d flits of a packet",
		cur, nc.tx.Len(), len(nc.pend), nc.rx.Len(), nc.rxFlits)
}
