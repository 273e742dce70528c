package mcadapter

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/verify/trace"
)

// txPacket is one packet in the TX FIFO: its header, its data, the first
// edge it may leave at, and its flits.
type txPacket struct {
	w       mchub.Write
	data    []byte
	readyAt clock.Time
	flits   []link.Flit
	sent    int
}

// packetise adds the first bytes of data (all in one valid page piece of
// the current burst, at the port's position) to the packet being built
// and returns how many it took. The packetiser makes one packet per PCI
// burst (the Alpha write buffer merges stores into one 32-byte block, so a
// CPU's burst is one packet), cut at page ends (a mapping is per page,
// MC-P6) and at every MaxPacketBytes boundary of the page (a longer burst
// from another master): cuts fall on multiples of 4 bytes, so no 32-bit
// word (MC-P18) is ever split between two packets.
func (a *Adapter) packetise(now clock.Time, data []byte) int {
	t := &a.tx
	p := &t.port
	pg := p.pages[p.page]
	off := int((pg.Addr + uint64(p.pageOff)) % uint64(a.cfg.PageBytes))
	toCut := a.cfg.MaxPacketBytes - off%a.cfg.MaxPacketBytes
	n := min(len(data), toCut)
	if t.building == nil {
		t.building = &txPacket{w: mchub.Write{Src: a.node, Addr: p.global + uint64(p.pageOff), Loopback: p.loop}}
	}
	t.building.data = append(t.building.data, data[:n]...)
	t.stored += n
	if n == toCut || p.pageOff+n == pg.Len {
		a.finishPacket(now)
	}
	return n
}

// finishPacket closes the packet being built: its last byte entered the
// FIFO at now, so it may leave PipelineCycles later (a pure delay of the
// adapter's transmit pipeline: packets behind it are not held by it).
func (a *Adapter) finishPacket(now clock.Time) {
	t := &a.tx
	pk := t.building
	t.building = nil
	t.seq++
	pk.w.Seq = t.seq
	pk.w.Len = len(pk.data)
	pk.readyAt = a.Clock().After(now, clock.Cycle(a.cfg.PipelineCycles))
	h := Header{Addr: pk.w.Addr, Len: pk.w.Len, Src: pk.w.Src, Seq: pk.w.Seq, Loopback: pk.w.Loopback}
	if err := h.Validate(a.cfg.PageBytes, a.cfg.GlobalPages); err != nil {
		a.env.Report(now, a.name, "mcadapter.packet", "%v", err)
	}
	w := pk.w
	// Packet ids: src x 10^9 + seq, readable in traces (as MCEndpoint's).
	fl, err := t.format.Packet(&w, pk.data, uint64(a.node)*1_000_000_000+pk.w.Seq)
	if err != nil {
		a.env.Report(now, a.name, "mcadapter.packet", "%v: %v", &pk.w, err)
		t.stored -= len(pk.data)
		t.release(now, len(pk.data))
		return
	}
	pk.flits = fl
	t.queue = append(t.queue, pk)
}

// sendTx sends the next flit of the oldest packet on the link (VC 0) when
// its pipeline delay is over, the serialiser is free and a credit is
// there. The head flit's departure is the packet's: counted, traced
// (mc.tx) and reported to OnTx. The packet's FIFO bytes are freed with its
// tail flit.
func (a *Adapter) sendTx(now clock.Time) bool {
	t := &a.tx
	if len(t.queue) == 0 || a.send == nil {
		return false
	}
	pk := t.queue[0]
	if now < pk.readyAt {
		a.WakeAt(pk.readyAt)
		return false
	}
	if !a.send.Idle(now) {
		a.WakeAt(a.send.BusyUntil())
		return false
	}
	if !a.send.CanSend(now, 0) {
		return false // no credit: the link wakes the adapter when one returns
	}
	f := pk.flits[pk.sent]
	f.Stamp = now
	a.send.Send(now, &f)
	if pk.sent == 0 {
		a.counters.TxPackets++
		a.counters.TxBytes += uint64(pk.w.Len)
		if a.env.Trace.Enabled() {
			a.env.Trace.Emit(now, a.Clock().CycleAt(now), a.name, "mc.tx", trace.Int("src", int64(pk.w.Src)),
				trace.Uint("seq", pk.w.Seq), trace.Addr("addr", pk.w.Addr), trace.Int("len", int64(pk.w.Len)),
				trace.Bool("loopback", pk.w.Loopback), trace.Hash("hash", pk.data))
		}
		if a.onTx != nil {
			w := pk.w
			a.onTx(now, &w, pk.data)
		}
	}
	pk.sent++
	if pk.sent == len(pk.flits) {
		t.queue[0] = nil
		t.queue = t.queue[1:]
		if len(t.queue) == 0 {
			t.queue = nil
		}
		t.stored -= len(pk.data)
		t.release(now, len(pk.data))
		a.env.Monitor.Progress(now) // a packet left for the hub
	}
	return true
}
