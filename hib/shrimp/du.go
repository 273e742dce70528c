package shrimp

import (
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/cam"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// The deliberate update (DU) engine: an rtl/dma engine that is an EISA
// master ("<name>.DU") reading the source from host memory («performing
// user-level DMA [10] transfers from main memory to the network
// interface», section 4.5.3) and streaming it to the outgoing arbiter
// (nic.go) as one packet per transfer: a header word carrying the Packet,
// then its data packed into FIFOWidthBytes words (n.duStream).
//
//   - A transfer is at most DUMaxBytes (4 KB) and crosses no local or remote
//     page (SH-P13, L279): the UDMA refuses it otherwise (udma.go), so one
//     transfer is one packet (MaxPacketBytes is a page).
//   - Per transfer the engine spends DUSetupCycles EISA cycles
//     (calibrated: DU latency 6 µs, Config), then reads in bursts of at most
//     DMABurstBytes, DMABurstBytes-aligned, one in flight, and only while
//     its DMAStageBytes of staging has room for the whole burst (rtl/dma's
//     issueRead), so no EISA (and, behind the bridge, no held Xpress)
//     tenure ever waits for the network (issue 14 design R3).
//   - The queue (SH-P24 «we implemented a 2-deep queue»): 1 + DUQueue
//     transfers may be accepted and not yet done: the running one and
//     DUQueue waiting (DUQueue 0 is the production NI, no queue). A
//     transfer is done when the engine has handed its last byte to its
//     output stream (rtl/dma's completion: every byte read from memory and
//     passed on, so the page may then be replaced), visible from the next
//     EISA edge; the engine begins the next transfer only then. The UDMA
//     answers Busy while the queue is full.
//   - The CAM (L281 «an associative memory to allow the host operating
//     system to check whether a particular page is involved in a transfer
//     request»): an rtl/cam of 1 + DUQueue entries keyed by local source
//     page, the value the number of accepted transfers from it. DUPending
//     and RegCAMQuery/RegCAMResult read it. With DUQueue 0 it is the
//     running transfer's source register (a 1-entry CAM).
//   - Packing: the engine's stream chunks (as they arrive, FIFOWidthBytes at
//     most) are packed into words; the header goes when the first data word
//     is ready, so the arbiter never waits on an empty DU stream for a
//     packet it granted; one word per EISA cycle into n.duStream. The
//     Packet's Data is complete when its Last word is pushed (the arbiter
//     numbers it, Seq, and counts it, DUPackets, when it takes the header).

// duReq is one accepted transfer.
type duReq struct {
	tag     uint64
	src     uint64
	opt     int
	dstNode int
	dstAddr uint64
	n       int
	notify  bool
	queued  bool
	pkt     *Packet
}

// duRelease is a transfer whose last byte the engine read at at.
type duRelease struct {
	at  clock.Time
	tag uint64
}

// duPath is the EISA target, UDMA, CSR block and DU engine's state.
type duPath struct {
	eisa *bus.Bus
	amap AddressMap

	csrPort, devPort, memPort tport
	udma                      udma
	csr                       csrState

	eng     *dma.Engine
	out     *fifo.FIFO[[]byte] // the engine's stream output
	outPort int
	busPort int
	// reqs are the accepted transfers not yet done (engine order); rel
	// the engine's completions not yet applied.
	reqs []*duReq
	rel  []duRelease
	cam  *cam.CAM[int, int]
	// pk are the accepted transfers whose packet is not fully streamed
	// (packing order = engine order); hdr: pk[0]'s header is pushed; sent
	// its data bytes pushed; pend the bytes popped from out not yet packed.
	pk   []*duReq
	hdr  bool
	sent int
	pend []byte

	tags uint64

	noInvalEvery, crossEvery int

	// sink, when set, takes the DU stream's words instead of n.duStream (a
	// unit rig without the arbiter and NIC; nil in every system).
	sink func(now clock.Time, w streamWord)

	sigUDMA, sigStatus, sigQueue *waves.Signal
}

// buildDU creates the EISA-side blocks: the DU engine, its output stream,
// the CAM and the signals.
func (n *NI) buildDU() error {
	c := n.cfg
	d := &n.du
	d.noInvalEvery = n.env.Mutation(mutNoInval)
	d.crossEvery = n.env.Mutation(mutDUCross)
	d.csrPort = tport{name: n.name + TargetCSR, lat: csrLatency, read: n.csrRead, write: n.csrWrite}
	d.devPort = tport{name: n.name + TargetDevProxy, read: n.devLoad, write: n.devStore}
	d.memPort = tport{name: n.name + TargetMemProxy, lat: max(c.StatusWaitCycles-1, 0), read: n.memLoad, write: n.memStore}
	slots := 1 + c.DUQueue
	eng, err := dma.MakeBuilder().WithEnv(n.env).WithClock(c.EISAClock).WithQueueDepth(slots).
		WithSetupCycles(c.DUSetupCycles).WithBurst(c.DMABurstBytes).WithBuffer(c.DMAStageBytes).
		WithOutstandingReads(1).WithStreamWidth(c.FIFOWidthBytes).WithClass("du").Build(n.name + ".DU")
	if err != nil {
		return err
	}
	out, err := fifo.MakeBuilder[[]byte]().WithEnv(n.env).WithDepth(2).WithWidth(8 * c.FIFOWidthBytes).
		Build(n.name + ".DU.Out")
	if err != nil {
		return err
	}
	d.outPort = eng.AddStreamOut(n.name+".DU.Out", out)
	out.SetConsumer(n.eisa)
	eng.Queue().SetProducer(n.eisa)
	eng.OnDone(n.duDone)
	d.eng, d.out, d.busPort = eng, out, -1
	if d.cam, err = cam.MakeBuilder[int, int]().WithEnv(n.env).WithEntries(slots).Build(n.name + ".DU.CAM"); err != nil {
		return err
	}
	reg := n.env.Waves
	scope := n.name + ".UDMA"
	// state is the initiation FSM (IDLE, DEST); status the last LOAD's
	// Status word; queue the transfers accepted and not yet read.
	d.sigUDMA = reg.String(scope, "state")
	d.sigStatus = reg.Wire(scope, "status", 32)
	d.sigQueue = reg.Integer(scope, "queue", waves.WidthFor(uint64(slots)))
	d.sigUDMA.SetString(0, UDMAIdle.String())
	return nil
}

// attachDUEngine adds the engine as the EISA master "<name>.DU".
func (n *NI) attachDUEngine(eisa *bus.Bus) error {
	ch, err := eisa.AddMaster(n.name + ".DU")
	if err != nil {
		return err
	}
	n.du.busPort = n.du.eng.AddMemPort(n.name+".DU.EISA", ch)
	return nil
}

// duFull reports whether the engine and its queue hold 1 + DUQueue
// transfers not yet done (the UDMA answers Busy).
func (n *NI) duFull() bool { return len(n.du.reqs) >= 1+n.cfg.DUQueue }

// duStart accepts r: the CAM entry, the engine descriptor, OnDUStart.
func (n *NI) duStart(now clock.Time, r duReq) {
	d := &n.du
	d.tags++
	r.tag = d.tags
	r.queued = len(d.reqs) > 0
	p := &r
	d.reqs = append(d.reqs, p)
	d.pk = append(d.pk, p)
	page := int(r.src / uint64(n.cfg.PageBytes))
	if k, ok := d.cam.Peek(page); ok {
		d.cam.Update(now, page, k+1)
	} else if res := d.cam.Allocate(now, page, 1); !res.OK {
		n.env.Report(now, n.name+".DU", "shrimp.du", "CAM full with %d of %d transfers accepted", len(d.reqs), 1+n.cfg.DUQueue)
	}
	if !d.eng.Submit(now, dma.Descriptor{Src: dma.Mem(d.busPort, r.src), Dst: dma.StreamPort(d.outPort), Len: r.n, Tag: r.tag}) {
		n.env.Report(now, n.name+".DU", "shrimp.du", "engine queue full with %d transfers accepted", len(d.reqs))
	}
	d.sigQueue.Set(now, uint64(len(d.reqs)))
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.du", trace.Str("ev", "start"),
			trace.Uint("tag", r.tag), trace.Addr("src", r.src), trace.Int("dst", int64(r.dstNode)),
			trace.Addr("dstaddr", r.dstAddr), trace.Int("len", int64(r.n)), trace.Bool("notify", r.notify),
			trace.Bool("queued", r.queued))
	}
	if n.onDUStart != nil {
		n.onDUStart(now, DUStart{Node: n.node, Src: r.src, OPT: r.opt, DstAddr: r.dstAddr, Len: r.n,
			Notify: r.notify, Queued: r.queued, Tag: r.tag})
	}
}

// duDone is the engine's completion: the transfer's last byte is read and
// handed on. It takes effect from the next EISA edge (applyReleases).
func (n *NI) duDone(now clock.Time, desc dma.Descriptor, err string) {
	n.du.rel = append(n.du.rel, duRelease{at: now, tag: desc.Tag})
	if err != "" {
		n.env.Report(now, n.name+".DU", "shrimp.du", "transfer %d: %s", desc.Tag, err)
	}
	n.eisa.WakeAt(n.eisa.Clock().After(now, 1))
}

// applyReleases frees the queue slots and CAM entries of transfers the
// engine finished before now.
func (n *NI) applyReleases(now clock.Time) bool {
	d := &n.du
	k := 0
	for k < len(d.rel) && d.rel[k].at < now {
		tag := d.rel[k].tag
		if len(d.reqs) == 0 || d.reqs[0].tag != tag {
			n.env.Report(now, n.name+".DU", "shrimp.du", "engine finished transfer %d out of order", tag)
		} else {
			r := d.reqs[0]
			d.reqs = d.reqs[1:]
			page := int(r.src / uint64(n.cfg.PageBytes))
			if v, ok := d.cam.Peek(page); ok && v > 1 {
				d.cam.Update(now, page, v-1)
			} else {
				d.cam.Free(now, page)
			}
			d.sigQueue.Set(now, uint64(len(d.reqs)))
			if n.env.Trace.Enabled() {
				n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.du", trace.Str("ev", "done"),
					trace.Uint("tag", tag))
			}
		}
		k++
	}
	d.rel = d.rel[k:]
	if len(d.rel) > 0 {
		n.eisa.WakeAt(n.eisa.Clock().After(now, 1))
	}
	return k > 0
}

// pack moves the engine's output into n.duStream: at most one chunk popped
// and one word pushed per EISA cycle.
func (n *NI) pack(now clock.Time) bool {
	d := &n.du
	w := n.cfg.FIFOWidthBytes
	progress := false
	if len(d.pend) < w {
		if ch, ok := d.out.Pop(now); ok {
			d.pend = append(d.pend, ch...)
			progress = true
		}
	}
	if len(d.pk) == 0 {
		return progress
	}
	r := d.pk[0]
	need := min(w, r.n-d.sent)
	if len(d.pend) < need || (d.sink == nil && !n.duStream.CanPush(now)) {
		return progress
	}
	if !d.hdr {
		r.pkt = &Packet{Kind: KindDU, Src: n.node, Dst: r.dstNode, DstAddr: r.dstAddr, SrcAddr: r.src,
			Len: r.n, Notify: r.notify, Flush: FlushStore, Data: make([]byte, 0, r.n)}
		n.pushDU(now, streamWord{Pkt: r.pkt})
		d.hdr = true
		return true
	}
	data := append([]byte(nil), d.pend[:need]...)
	d.pend = d.pend[need:]
	d.sent += need
	r.pkt.Data = append(r.pkt.Data, data...)
	last := d.sent == r.n
	n.pushDU(now, streamWord{Pkt: r.pkt, Data: data, Last: last})
	if last {
		if n.env.Trace.Enabled() {
			n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.du", trace.Str("ev", "packet"),
				trace.Uint("tag", r.tag), trace.Int("dst", int64(r.dstNode)),
				trace.Addr("dstaddr", r.dstAddr), trace.Int("len", int64(r.n)), trace.Hash("hash", r.pkt.Data))
		}
		d.pk = d.pk[1:]
		d.hdr, d.sent = false, 0
	}
	return true
}

// pushDU pushes one word of the DU stream.
func (n *NI) pushDU(now clock.Time, w streamWord) {
	if n.du.sink != nil {
		n.du.sink(now, w)
		return
	}
	n.duStream.Push(now, w)
}

// tickDU advances the target, UDMA and DU engine's packing by one EISA
// cycle: completions first, then the CSR and proxy windows, then packing.
func (n *NI) tickDU(now clock.Time) bool {
	a := n.applyReleases(now)
	b := n.tickTarget(now)
	c := n.pack(now)
	return a || b || c
}

// idleDU reports whether no access is being served and no transfer is
// running, queued or being packed (a latched UDMA destination is not
// work).
func (n *NI) idleDU() bool {
	d := &n.du
	return n.idleTarget() && len(d.reqs) == 0 && len(d.rel) == 0 && len(d.pk) == 0 && len(d.pend) == 0 && d.out.Idle()
}

// stateDU describes the UDMA and DU engine.
func (n *NI) stateDU() string {
	d := &n.du
	s := fmt.Sprintf("udma %s, %d transfers accepted and unread, %d packets unsent", d.udma.state, len(d.reqs), len(d.pk))
	if len(d.pk) > 0 {
		s += fmt.Sprintf(" (tag %d: %d/%d bytes, header %t, %d packed)", d.pk[0].tag, d.sent, d.pk[0].n, d.hdr, len(d.pend))
	}
	if !n.idleTarget() {
		s += ", target busy"
	}
	return s
}

// duPending reports whether a DU from local page page is running or queued
// (the CAM, L281).
func (n *NI) duPending(page int) bool {
	_, ok := n.du.cam.Peek(page)
	return ok
}
