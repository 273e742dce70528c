package mcadapter

import (
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
)

// Test-only faults of the receive DMA (see env.DeclareMutation). Each
// breaks a property the cluster's checkers exist for: the hub's order at
// memory, exactly-once delivery, untorn 32-bit words (MC-P18).
var (
	mutRxSwap = env.DeclareMutation("mcadapter.rx-swap",
		"the receive DMA holds back every Nth accepted packet and writes it to host memory after the next one "+
			"(caught by the hub-order-at-memory checker)")
	mutRxDup = env.DeclareMutation("mcadapter.rx-dup",
		"the receive DMA writes every Nth accepted packet to host memory twice "+
			"(caught by the exactly-once checker)")
	mutSplitWord = env.DeclareMutation("mcadapter.split-word",
		"the receive DMA splits every Nth accepted packet of more than 2 bytes into two PCI writes, "+
			"the first ending 2 bytes into a 32-bit word (caught by the torn-word checker)")
)

// The DMA master. The receive FIFO is the engine's source as a byte
// stream (rtl/dma StreamPort), not an SRAM it reads over a memory port.
// Why: the FIFO is the adapter's only packet store, written by the link
// receiver and read only by this engine, so a memory port would add an
// SRAM read transaction per burst for which the paper gives no timing, and
// the FIFO's capacity is what matters (RxFIFOBytes, RxFIFOPackets,
// enforced by the receiver). assumed: the FIFO hands the engine one burst
// per cycle (each stream chunk is one DMABurstBytes-aligned piece of the
// packet), so reading the card's buffer never limits the PCI write rate;
// the per-packet cost of starting a descriptor is DMASetupCycles.
//
// The engine's destination is its PCI master port. Writes are posted
// (PCI memory writes are, and the host bridge posts them) in bursts of at
// most DMABurstBytes that start and end on DMABurstBytes-aligned host
// addresses (a host cache line, MC-P17). A packet starts and ends on
// 32-bit boundaries when its sender's stores do, and the bursts are cut
// only at multiples of 4, so no receive DMA splits a 32-bit word (MC-P18)
// unless the mcadapter.split-word mutation is on.
//
// One descriptor per packet, queued in FIFO (hub) order; the engine
// completes descriptors in the order it takes them, so packets reach host
// memory in the hub's global order («will appear in the same order in every
// receive region», MC-P9).
type dmaState struct {
	eng     *dma.Engine
	stream  *fifo.FIFO[[]byte]
	srcPort int
	pciPort int

	// held is the packet the rx-swap mutation holds back.
	held *rxPkt
	// descs are descriptors built and not yet queued with the engine;
	// inDMA those queued and not completed, in queue order.
	descs []*rxDesc
	inDMA []*rxDesc
	// releases are descriptor completions the adapter applies from the
	// first edge after at.
	releases []rxRelease
	tags     uint64

	swapEvery, dupEvery, splitEvery int
}

// rxDesc is one DMA descriptor of a packet.
type rxDesc struct {
	p    *rxPkt
	tag  uint64
	addr uint64
	data []byte
	// first marks the packet's first descriptor (OnRx runs when it is
	// queued).
	first bool
}

type rxRelease struct {
	at clock.Time
	p  *rxPkt
}

func (a *Adapter) buildRxDMA() error {
	c := a.cfg
	r := &a.rx
	r.swapEvery = a.env.Mutation(mutRxSwap)
	r.dupEvery = a.env.Mutation(mutRxDup)
	r.splitEvery = a.env.Mutation(mutSplitWord)
	// The engine's descriptor queue holds the RX FIFO's descriptors
	// (RxFIFOPackets); it stages two bursts (reading the next while the
	// last is written, rtl/dma's default shape, as smptb's stand-in DMA).
	eng, err := dma.MakeBuilder().WithEnv(a.env).WithClock(a.Clock()).WithQueueDepth(c.RxFIFOPackets).
		WithSetupCycles(c.DMASetupCycles).WithBurst(c.DMABurstBytes).WithBuffer(2 * c.DMABurstBytes).
		WithPostedWrites(true).Build(a.name + ".RDMA")
	if err != nil {
		return err
	}
	// The stream holds the chunks of queued descriptors: at most a
	// FIFO's worth of bytes in bursts, plus a partial burst at each end
	// of every packet; twice that for the mutations that write a packet
	// twice or in two pieces.
	chunks := 2 * (c.RxFIFOBytes/c.DMABurstBytes + 2*c.RxFIFOPackets)
	st, err := fifo.MakeBuilder[[]byte]().WithEnv(a.env).WithDepth(chunks).WithEnqPerCycle(chunks).
		WithWidth(min(8*c.DMABurstBytes, 4096)).Build(a.name + ".RxStream")
	if err != nil {
		return err
	}
	st.SetProducer(a)
	eng.Queue().SetProducer(a)
	r.srcPort = eng.AddStreamIn(a.name+".RxFIFO", st)
	r.pciPort = -1
	eng.OnDone(a.rxDMADone)
	r.eng, r.stream = eng, st
	return nil
}

// attachRx makes the receive DMA engine a master on pci.
func (a *Adapter) attachRx(pci *bus.Bus) error {
	r := &a.rx
	if r.pciPort >= 0 {
		return fmt.Errorf("receive DMA already attached to a PCI bus")
	}
	ch, err := pci.AddMaster(a.name + ".RDMA")
	if err != nil {
		return err
	}
	r.pciPort = r.eng.AddMemPort(a.name+".RDMA.PCI", ch)
	return nil
}

// rxApplyReleases applies the DMA completions of edges before now: each
// counts in RxDMAs, and a packet whose last descriptor completed frees
// its FIFO room.
func (a *Adapter) rxApplyReleases(now clock.Time) bool {
	r := &a.rx
	n := 0
	for n < len(r.releases) && r.releases[n].at < now {
		p := r.releases[n].p
		a.counters.RxDMAs++
		p.outstanding--
		if p.outstanding == 0 {
			a.rxFree(now, p)
			if p.irq && a.onRxIRQ != nil {
				a.onRxIRQ(now, int(p.w.Addr/uint64(a.RxTable.PageBytes())))
			}
		}
		n++
	}
	if n == 0 {
		return false
	}
	r.releases = r.releases[n:]
	if len(r.releases) == 0 {
		r.releases = nil
	}
	return true
}

// submitRx builds the descriptors of the next ready packet and queues at
// most one descriptor with the engine.
func (a *Adapter) submitRx(now clock.Time) bool {
	r := &a.rx
	if len(r.descs) == 0 {
		a.rxNextReady(now)
	}
	if len(r.descs) == 0 {
		return false
	}
	if r.pciPort < 0 {
		return false // not attached: the packets wait (AttachPCI reports nothing to run on)
	}
	d := r.descs[0]
	burst := a.cfg.DMABurstBytes
	cs := mem.Chunks(d.addr, len(d.data), burst)
	if r.stream.Free(now) < len(cs) || !r.eng.Queue().CanPush(now) {
		return false // woken when the engine takes a descriptor or a chunk
	}
	off := 0
	for _, n := range cs {
		r.stream.Push(now, d.data[off:off+n])
		off += n
	}
	r.eng.Submit(now, dma.Descriptor{Src: dma.StreamPort(r.srcPort), Dst: dma.Mem(r.pciPort, d.addr), Len: len(d.data), Tag: d.tag})
	r.descs = r.descs[1:]
	r.inDMA = append(r.inDMA, d)
	p, w := d.p, d.p.w
	if a.env.Trace.Enabled() {
		a.env.Trace.Emit(now, a.Clock().CycleAt(now), a.name, "mc.rxdma", trace.Int("src", int64(w.Src)),
			trace.Uint("seq", w.Seq), trace.Uint("order", w.Order), trace.Addr("addr", d.addr),
			trace.Int("len", int64(len(d.data))), trace.Uint("tag", d.tag), trace.Hash("hash", d.data))
	}
	if d.first && a.onRx != nil {
		a.onRx(now, w, p.host, p.data)
	}
	return true
}

// rxNextReady turns the oldest packet whose pipeline delay has passed into
// descriptors (the rx-swap mutation may hold it back behind the next).
func (a *Adapter) rxNextReady(now clock.Time) {
	r := &a.rx
	for len(r.waiting) > 0 {
		p := r.waiting[0]
		if p.readyAt > now {
			a.WakeAt(p.readyAt)
			return
		}
		r.waiting = r.waiting[1:]
		if r.swapEvery > 0 && r.held == nil && p.nth%uint64(r.swapEvery) == 0 && (len(r.waiting) > 0 || r.cur != nil) {
			r.held = p // mutation: written after the next packet
			continue
		}
		a.rxBuildDescs(p)
		if r.held != nil {
			a.rxBuildDescs(r.held)
			r.held = nil
		}
		return
	}
	if r.held != nil && r.cur == nil {
		// Nothing came after the held packet: it has nothing to swap with.
		a.rxBuildDescs(r.held)
		r.held = nil
	}
}

// rxBuildDescs makes a packet's descriptors: one, or two under the rx-dup
// and split-word mutations.
func (a *Adapter) rxBuildDescs(p *rxPkt) {
	r := &a.rx
	mk := func(off, n int) {
		r.tags++
		r.descs = append(r.descs, &rxDesc{p: p, tag: r.tags, addr: p.host + uint64(off), data: p.data[off : off+n], first: p.outstanding == 0})
		p.outstanding++
	}
	n := len(p.data)
	cut := int((4-p.host%4)%4) + 2 // 2 bytes into the packet's first whole word
	switch {
	case r.dupEvery > 0 && p.nth%uint64(r.dupEvery) == 0:
		mk(0, n)
		mk(0, n)
	case r.splitEvery > 0 && p.nth%uint64(r.splitEvery) == 0 && cut < n:
		mk(0, cut)
		mk(cut, n-cut)
	default:
		mk(0, n)
	}
}

// rxDMADone runs in the engine's tick when a descriptor completes. The
// adapter applies the completion (RxDMAs, the packet's FIFO room) from its
// next edge, so the result does not depend on which of the two ticks
// first.
func (a *Adapter) rxDMADone(now clock.Time, d dma.Descriptor, err string) {
	r := &a.rx
	if len(r.inDMA) == 0 || r.inDMA[0].tag != d.Tag {
		a.env.Report(now, a.name, "mc.rxdma", "descriptor %d completed out of order", d.Tag)
		return
	}
	x := r.inDMA[0]
	r.inDMA = r.inDMA[1:]
	if len(r.inDMA) == 0 {
		r.inDMA = nil
	}
	if err != "" {
		a.env.Report(now, a.name, "mc.rxdma", "%v to host %#x: %s", x.p.w, x.addr, err)
	}
	r.releases = append(r.releases, rxRelease{at: now, p: x.p})
	a.Wake(now)
}

func (a *Adapter) idleRxDMA() bool {
	r := &a.rx
	return r.held == nil && len(r.descs) == 0 && len(r.inDMA) == 0 && len(r.releases) == 0
}

func (a *Adapter) stateRxDMA() string {
	r := &a.rx
	s := fmt.Sprintf("DMA: %d descriptors to queue, %d in the engine", len(r.descs), len(r.inDMA))
	if r.pciPort < 0 && len(r.descs) > 0 {
		s += " (no PCI bus: AttachPCI was not called)"
	}
	return s
}
