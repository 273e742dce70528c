package mcadapter

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// The receive side (issue 13 section 1; design section 1.1), in the order
// a packet meets its blocks:
//
//   - Link receiver. The adapter pops at most one flit per PCI cycle from
//     its link's receive buffer (VC 0). The head flit's Meta is the
//     *mchub.Write the hub forwarded, with the hub's global Order; the link
//     checked the packet's CRC and marks a failed tail Bad (rtl/link).
//   - Receive filter. On the head, RxPageTable.Lookup (combinational, one
//     on-card SRAM read) maps the global address to a host address or
//     rejects it: the hub is «a bus interconnect» (MC-P5) that gives every
//     packet to every adapter, and receive filtering is the adapter's job
//     (issue 13 section 1). The packet's fate is decided at its tail: a Bad
//     tail drops it (RxCRC) whatever the filter said, since its header
//     cannot be trusted; otherwise a rejected page drops it (RxUnmapped).
//     RxPageTable.Unmapped and Counters.RxUnmapped both count only the
//     latter: a rejected packet dropped for its CRC is a CRC drop.
//   - RX FIFO. A mapped packet reserves its length in bytes (of
//     RxFIFOBytes) and one descriptor (of RxFIFOPackets) when its head is
//     taken (the header carries the length) and frees them when
//     its DMA has completed (or at its tail if it is dropped). When a head
//     finds no room the adapter stops popping the link: the link's
//     credits stop the hub, which holds the packet (lossless, MC-P9's
//     ordering leaves no room for loss). A rejected page needs no room and
//     is never held up by a full FIFO.
//   - Pipeline. A packet whose tail was taken at edge c may hand its DMA
//     descriptor to the engine from edge c+1+PipelineCycles: one cycle to
//     write the FIFO, then the calibrated pure delay (Config.PipelineCycles;
//     it occupies nothing).
//   - DMA master (rxdma.go): an rtl/dma Engine, a PCI master, writes each
//     packet into host memory, one descriptor per packet, in FIFO order,
//     which is the hub's order.
//
// Dropped packets are counted (Counters.RxCRC, RxUnmapped), traced
// (mc.drop) and reported (OnDrop). A CRC error also latches CauseRxCRC and
// the packet's global page (Status.Page; a CRC error is only ever seen at
// a tail, so the head, and its page, was always seen) in the status
// register and raises the interrupt line. What software must
// do then: assumed: it aborts the application (no retransmission, no
// resynchronisation). The paper describes no error recovery for MC1, and
// the protocol «relies on the Memory Channel's broadcast, ordering, and
// reliable delivery capabilities» (cashmere-2l-memory-channel.txt section
// 5): a lost write cannot be sent again without breaking the global order
// every receiver has already applied the later writes in. So the adapter
// drops, counts, latches the status and interrupts, and nothing more.
type rxPath struct {
	// cur is the packet being received (head taken, tail not yet);
	// discard is set while the flits of a packet that is not kept (a
	// protocol error) are popped up to its tail.
	cur     *rxPkt
	discard bool

	// fifoBytes and fifoPkts are the RX FIFO's reserved occupancy.
	fifoBytes, fifoPkts int
	// waiting are the accepted packets whose descriptors are not yet
	// built, in arrival (hub) order.
	waiting []*rxPkt
	// accepted numbers accepted packets (1, 2, ...) for the mutations.
	accepted uint64

	dmaState
	stats RxFIFOStats

	sigState, sigOcc, sigQueued, sigDrops *waves.Signal
	state                                 string
	drops                                 uint64
}

// rxPkt is one received packet in the RX FIFO.
type rxPkt struct {
	w       *mchub.Write
	host    uint64 // host address of the first byte (when mapped)
	mapped  bool
	irq     bool // its page asks for a receive interrupt (RxEntry.Interrupt)
	data    []byte
	readyAt clock.Time // first edge its DMA may be queued
	nth     uint64     // accepted packet number
	// reserved says the packet holds RX FIFO room (Len bytes, one
	// descriptor); outstanding counts its descriptors not yet completed.
	reserved    bool
	outstanding int
}

// RxFIFOStats are the receive FIFO's high-water marks and stalls.
type RxFIFOStats struct {
	// MaxBytes and MaxPackets are the largest reserved occupancy seen.
	MaxBytes, MaxPackets int
	// FullCycles counts PCI cycles in which a head flit waited at the
	// link because the FIFO had no room for its packet (the link's
	// credits then hold the hub).
	FullCycles uint64
}

// RxFIFO returns the receive FIFO's current occupancy (bytes and packets
// reserved, including a packet being received and those whose DMA has not
// completed).
func (a *Adapter) RxFIFO() (bytes, packets int) { return a.rx.fifoBytes, a.rx.fifoPkts }

// RxFIFOStats returns the receive FIFO's high-water marks and stalls.
func (a *Adapter) RxFIFOStats() RxFIFOStats { return a.rx.stats }

// RxDMA returns the receive DMA engine (a PCI master once AttachPCI has
// run), for its statistics and waveforms.
func (a *Adapter) RxDMA() *dma.Engine { return a.rx.eng }

func (a *Adapter) buildRx() error {
	c := a.cfg
	if c.DMABurstBytes%4 != 0 {
		return fmt.Errorf("%s: mcadapter: DMABurstBytes %d must be a multiple of 4 (a receive DMA burst never splits a 32-bit word, MC-P18)", a.name, c.DMABurstBytes)
	}
	r := &a.rx
	reg := a.env.Waves
	scope := a.name + ".Rx"
	// state: IDLE, RECV (a packet's flits are being taken), DISCARD (a
	// packet that is not kept), FULL (a head waits for FIFO room).
	r.sigState = reg.String(scope, "state")
	r.sigOcc = reg.Integer(scope, "occupancy", waves.WidthFor(uint64(c.RxFIFOBytes)))
	r.sigQueued = reg.Integer(scope, "queued", waves.WidthFor(uint64(c.RxFIFOPackets)))
	r.sigDrops = reg.Integer(scope, "drops", 32)
	r.state = "IDLE"
	r.sigState.SetString(0, r.state)
	return a.buildRxDMA()
}

func (a *Adapter) setRxState(now clock.Time, s string) {
	if a.rx.state != s {
		a.rx.state = s
		a.rx.sigState.SetString(now, s)
	}
}

// tickRx runs the receive side for one PCI cycle, output first: apply the
// FIFO room freed by DMA completions of earlier edges, queue a ready
// descriptor with the DMA engine, then take a flit from the link. The CSR
// port (csr.go) is served before them, so that the whole adapter sees a
// table write from the same point of the cycle.
func (a *Adapter) tickRx(now clock.Time) bool {
	progress := a.tickCSR(now) // the CSR port first (csr.go)
	progress = a.rxApplyReleases(now) || progress
	progress = a.submitRx(now) || progress
	progress = a.receiveRx(now) || progress
	return progress
}

// receiveRx takes at most one flit from the link.
func (a *Adapter) receiveRx(now clock.Time) bool {
	if a.recv == nil {
		return false
	}
	r := &a.rx
	in := a.recv.Rx(0)
	f, ok := in.Peek(now)
	if !ok {
		if r.cur == nil && !r.discard {
			a.setRxState(now, "IDLE")
		}
		return false
	}
	if r.cur != nil && f.Head {
		// The packet being received lost its tail: drop it and take the
		// new head on the next edge.
		a.env.Report(now, a.name, "mc.protocol", "head of packet %d inside %v", f.Packet(), r.cur.w)
		a.rxFree(now, r.cur)
		r.cur = nil
		return true
	}
	if r.cur == nil && !r.discard {
		if !f.Head {
			a.env.Report(now, a.name, "mc.protocol", "packet %d: flit %d without its head", f.Packet(), f.Seq)
			in.Pop(now)
			return true
		}
		w, ok := f.Meta().(*mchub.Write)
		switch {
		case !ok || w == nil:
			a.env.Report(now, a.name, "mc.protocol", "packet %d carries %T, not a *mchub.Write", f.Packet(), f.Meta())
			r.discard = true
		case w.Len < 1 || w.Len > a.cfg.RxFIFOBytes:
			a.env.Report(now, a.name, "mc.protocol", "%v: length %d does not fit the %d-byte RX FIFO", w, w.Len, a.cfg.RxFIFOBytes)
			r.discard = true
		default:
			host, mapped := a.RxTable.Lookup(w.Addr)
			p := &rxPkt{w: w, host: host, mapped: mapped, irq: mapped && a.RxTable.interrupts(w.Addr), data: make([]byte, 0, w.Len)}
			if mapped {
				if r.fifoBytes+w.Len > a.cfg.RxFIFOBytes || r.fifoPkts >= a.cfg.RxFIFOPackets {
					// No room: leave the head in the link's buffer. A
					// completion frees room and wakes the adapter.
					r.stats.FullCycles++
					a.setRxState(now, "FULL")
					return false
				}
				p.reserved = true
				a.rxReserve(now, w.Len)
			}
			r.cur = p
		}
	}
	in.Pop(now)
	if r.discard {
		a.setRxState(now, "DISCARD")
		if f.Tail {
			r.discard = false
		}
		return true
	}
	a.setRxState(now, "RECV")
	p := r.cur
	p.data = append(p.data, f.Data...)
	if f.Tail {
		r.cur = nil
		a.rxEndPacket(now, p, f.Bad)
	}
	return true
}

// rxEndPacket decides a packet's fate at its tail.
func (a *Adapter) rxEndPacket(now clock.Time, p *rxPkt, bad bool) {
	r := &a.rx
	w := p.w
	// A packet taken from the link is progress for the stall watchdog,
	// whether it is kept or dropped (the DMA engine records its own).
	a.env.Monitor.Progress(now)
	switch {
	case bad:
		a.counters.RxCRC++
		a.rxFree(now, p)
		// The head was taken, so its global page is known: the status
		// register latches it (it may be wrong: the CRC covers the
		// header too).
		a.raise(now, CauseRxCRC, int(w.Addr/uint64(a.cfg.PageBytes)))
		a.dropRx(now, p, RxCRC)
	case !p.mapped:
		a.counters.RxUnmapped++
		a.RxTable.dropUnmapped()
		a.dropRx(now, p, RxUnmapped)
	case len(p.data) != w.Len:
		a.env.Report(now, a.name, "mc.protocol", "%v arrived with %d data bytes", w, len(p.data))
		a.rxFree(now, p)
	default:
		a.counters.RxPackets++
		a.counters.RxBytes += uint64(w.Len)
		r.accepted++
		p.nth = r.accepted
		p.readyAt = a.Clock().After(now, clock.Cycle(1+a.cfg.PipelineCycles))
		r.waiting = append(r.waiting, p)
	}
}

// rxReserve takes FIFO room for n bytes and one descriptor.
func (a *Adapter) rxReserve(now clock.Time, n int) {
	r := &a.rx
	r.fifoBytes += n
	r.fifoPkts++
	r.stats.MaxBytes = max(r.stats.MaxBytes, r.fifoBytes)
	r.stats.MaxPackets = max(r.stats.MaxPackets, r.fifoPkts)
	r.sigOcc.Set(now, uint64(r.fifoBytes))
	r.sigQueued.Set(now, uint64(r.fifoPkts))
}

// rxFree frees a packet's FIFO room (if it holds any).
func (a *Adapter) rxFree(now clock.Time, p *rxPkt) {
	if !p.reserved {
		return
	}
	p.reserved = false
	r := &a.rx
	r.fifoBytes -= p.w.Len
	r.fifoPkts--
	r.sigOcc.Set(now, uint64(r.fifoBytes))
	r.sigQueued.Set(now, uint64(r.fifoPkts))
}

// dropRx traces and reports a dropped received packet (the caller has
// counted it).
func (a *Adapter) dropRx(now clock.Time, p *rxPkt, reason DropReason) {
	w := p.w
	d := Drop{Reason: reason, Src: w.Src, Seq: w.Seq, Order: w.Order, Page: int(w.Addr / uint64(a.cfg.PageBytes)),
		Addr: w.Addr, Len: w.Len}
	a.rx.drops++
	a.rx.sigDrops.Set(now, a.rx.drops)
	if a.env.Trace.Enabled() {
		a.env.Trace.Emit(now, a.Clock().CycleAt(now), a.name, "mc.drop", trace.Str("reason", reason.String()),
			trace.Int("src", int64(d.Src)), trace.Uint("seq", d.Seq), trace.Uint("order", d.Order),
			trace.Int("page", int64(d.Page)), trace.Addr("addr", d.Addr), trace.Int("len", int64(d.Len)))
	}
	a.drop(now, d)
}

func (a *Adapter) idleRx() bool {
	r := &a.rx
	return r.cur == nil && !r.discard && r.fifoPkts == 0 && len(r.waiting) == 0 && a.idleRxDMA() && a.idleCSR()
}

func (a *Adapter) stateRx() string {
	if a.idleRx() {
		return "idle"
	}
	r := &a.rx
	s := fmt.Sprintf("%s, FIFO %d/%d bytes %d/%d packets, %d waiting for the pipeline", r.state,
		r.fifoBytes, a.cfg.RxFIFOBytes, r.fifoPkts, a.cfg.RxFIFOPackets, len(r.waiting))
	if r.cur != nil {
		s += fmt.Sprintf(", receiving %v (%d bytes so far)", r.cur.w, len(r.cur.data))
	}
	s += "; " + a.stateRxDMA()
	if !a.idleCSR() {
		s += fmt.Sprintf("; CSR serving %v", a.csr.cur)
	}
	return s
}
