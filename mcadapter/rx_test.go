package mcadapter_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
)

// Addresses of the receive rig's PCI space: host memory at 0, the
// adapter's windows where the cluster puts them (issue 13 design section
// 1.4).
const (
	rigHostBytes = 1 << 20
	rigTxBase    = 0x4000_0000
	rigCSRBase   = 0x4800_0000
)

// rxRig is one adapter on a PCI bus with host memory behind it, its link's
// hub end driven by the spec (a hub agent sending prepared flits).
type rxRig struct {
	e    *env.Env
	pci  *bus.Bus
	host *mem.Memory
	lnk  *link.Link
	a    *mcadapter.Adapter
	// toHub is the queue of flits the hub end sends, each as soon as the
	// link takes it and not before its cycle.
	toHub []hubFlit
	drops []mcadapter.Drop
	irqs  []clock.Cycle
	rxs   []uint64 // Order of each OnRx, in call order
	// dmaWrites are the receive DMA's PCI data phases.
	dmaWrites []dmaBeat
	pktID     uint64
}

type hubFlit struct {
	at clock.Cycle
	f  link.Flit
}

type dmaBeat struct {
	Cycle clock.Cycle
	Addr  uint64
	Data  []byte
	First bool
}

var pciClk = bus.PCI32().Clock

func newRxRig(cfg mcadapter.Config, lc link.Config, mutations map[string]int) *rxRig {
	return newRxRigOrdered(cfg, lc, mutations, false)
}

// newRxRigOrdered builds the rig with its components created in the
// usual order or, with reversed, the opposite one (components of a clock
// tick in creation order: vtest's tick-order harness).
func newRxRigOrdered(cfg mcadapter.Config, lc link.Config, mutations map[string]int, reversed bool) *rxRig {
	e := vtest.NewEnv(vtest.Options{Clock: pciClk, Trace: true, Mutations: mutations, TimeLimit: 200 * clock.Microsecond})
	return newRxRigIn(e, cfg, lc, reversed)
}

// newRxRigIn builds the rig in the simulation e.
func newRxRigIn(e *env.Env, cfg mcadapter.Config, lc link.Config, reversed bool) *rxRig {
	r := &rxRig{e: e}
	steps := []func(){
		func() {
			var err error
			r.pci, err = bus.MakeBuilder().WithEnv(r.e).Build("PCI")
			Expect(err).NotTo(HaveOccurred())
		},
		func() {
			// Host memory as a plain PCI target: 1 cycle to accept, a
			// 4-byte beat per cycle (the rig's stand-in for bridge and
			// DRAM).
			var err error
			r.host, err = mem.MakeBuilder().WithEnv(r.e).WithClock(pciClk).WithSize(rigHostBytes).WithLatency(1).
				WithBytesPerCycle(4).WithPortWidth(4).Build("Host")
			Expect(err).NotTo(HaveOccurred())
		},
		func() {
			var err error
			r.lnk, err = link.MakeBuilder().WithEnv(r.e).WithConfig(lc).Build("Link")
			Expect(err).NotTo(HaveOccurred())
		},
		func() {
			var err error
			r.a, err = mcadapter.MakeBuilder().WithEnv(r.e).WithClock(pciClk).WithConfig(cfg).WithNode(1).Build("MC")
			Expect(err).NotTo(HaveOccurred())
		},
		func() {
			vtest.NewAgent(r.e, "Hub", lc.Clock, func(now clock.Time, c clock.Cycle) bool {
				hubEnd := r.lnk.From(link.B)
				if len(r.toHub) > 0 && r.toHub[0].at <= c && hubEnd.CanSend(now, 0) {
					f := r.toHub[0].f
					f.Stamp = now
					hubEnd.Send(now, &f)
					r.toHub = r.toHub[1:]
				}
				return len(r.toHub) > 0
			}).Start()
		},
	}
	for i := range steps {
		if reversed {
			i = len(steps) - 1 - i
		}
		steps[i]()
	}
	Expect(r.pci.AddTarget("Host", 0, rigHostBytes, r.host.Port(0))).To(Succeed())
	Expect(r.a.AttachPCI(r.pci, rigTxBase, rigCSRBase)).To(Succeed())
	Expect(r.a.ConnectLink(star.Port{Send: r.lnk.From(link.A), Recv: r.lnk.From(link.B)})).To(Succeed())
	r.a.OnDrop(func(_ clock.Time, d mcadapter.Drop) { r.drops = append(r.drops, d) })
	r.a.OnInterrupt(func(now clock.Time) { r.irqs = append(r.irqs, pciClk.CycleAt(now)) })
	r.a.OnRx(func(_ clock.Time, w *mchub.Write, _ uint64, _ []byte) { r.rxs = append(r.rxs, w.Order) })
	master := r.a.Name() + ".RDMA"
	r.pci.Observe(func(now clock.Time, o bus.Observation) {
		if o.Write && o.Master == master {
			r.dmaWrites = append(r.dmaWrites, dmaBeat{Cycle: o.Cycle, Addr: o.Addr, Data: append([]byte(nil), o.Data...), First: o.BurstFirst})
		}
	})
	return r
}

// send queues the packet of a write the hub ordered as order.
func (r *rxRig) send(order uint64, src int, seq uint64, addr uint64, data []byte) {
	r.sendAt(0, order, src, seq, addr, data)
}

// sendAt queues a packet whose head leaves the hub end at cycle at or
// later.
func (r *rxRig) sendAt(at clock.Cycle, order uint64, src int, seq uint64, addr uint64, data []byte) {
	w := &mchub.Write{Src: src, Addr: addr, Len: len(data), Seq: seq, Order: order}
	r.pktID++
	fl, err := mchub.MC1().Format().Packet(w, data, r.pktID)
	Expect(err).NotTo(HaveOccurred())
	for i := range fl {
		fl[i].Info.Dst = 1 // the packet's one shared PacketInfo
		r.toHub = append(r.toHub, hubFlit{at: at, f: fl[i]})
	}
}

func (r *rxRig) run() {
	_, err := r.e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(r.e.Monitor.Violations()).To(BeEmpty())
}

func (r *rxRig) mem(addr uint64, n int) []byte {
	b, err := r.host.Storage().Bytes(addr, n)
	Expect(err).NotTo(HaveOccurred())
	return b
}

// records returns the trace records of kind, formatted.
func (r *rxRig) records(kinds ...string) []string {
	var out []string
	for _, rec := range r.e.Trace.Records() {
		for _, k := range kinds {
			if rec.Kind == k {
				out = append(out, rec.Format())
			}
		}
	}
	return out
}

func payload(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*37 + i*11 + 1)
	}
	return b
}

// Global page 3 maps to host frame 0x4000 (page size 8 KB: 0x2000).
const (
	rigGPage = 3
	rigFrame = 0x4000
)

// dmaAddrs returns the host address of each receive DMA burst, in the
// order its first data phase crossed the PCI bus.
func (r *rxRig) dmaAddrs() []uint64 {
	var out []uint64
	for _, b := range r.dmaWrites {
		if b.First {
			out = append(out, b.Addr)
		}
	}
	return out
}

var _ = Describe("Adapter receive side", func() {
	It("writes one 4-byte packet to the mapped host address on hand-worked cycles", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		addr := uint64(rigGPage*8192 + 0x40)
		data := []byte{0xde, 0xad, 0xbe, 0xef}
		r.send(7, 0, 1, addr, data)
		r.run()
		Expect(r.mem(rigFrame+0x40, 4)).To(Equal(data))

		// Worked by hand, in PCI cycles (link and PCI share the 33.33 MHz
		// clock, MC1):
		//   c0   the hub end sends the packet's only flit: 4 data + 8 header
		//        bytes = 12 wire bytes / 4 B per cycle = 3 serialisation
		//        cycles, landing at 0 + 3 - 1 + 1 (wire) = c3 (link.packet),
		//        visible to the adapter from c4;
		//   c4   the adapter pops head and tail, filters (page 3 -> frame
		//        0x4000) and writes the FIFO;
		//   c57  the descriptor is queued: 4 + 1 (FIFO write) + 52
		//        (PipelineCycles) (mc.rxdma, OnRx);
		//   c58  the engine takes it; setup 4 cycles ends at c62;
		//   c62  the engine stages the one chunk from the FIFO stream;
		//   c63  it starts the burst: its one beat into the PCI master
		//        channel (dma.burst write);
		//   c64  the bus sees the request: arbitration on an idle bus
		//        (1 cycle, c64), address c65, decode c66, data c67
		//        (bus.dma.write, waits 0); the posted write completes the
		//        descriptor for the engine at c64 (dma.done);
		//   c68  host memory accepts the beat, latency 1: data written at
		//        c69 (mem.write). 69 cycles x 30 ns = 2.07 µs.
		want := []string{
			"90000 3 Link.BA link.packet pkt=1 src=0 dst=1 vc=0 flits=1 hash=" + trace.HashBytes(data),
			"1710000 57 MC mc.rxdma src=0 seq=1 order=7 addr=0x4040 len=4 tag=1 hash=" + trace.HashBytes(data),
			"1890000 63 MC.RDMA dma.burst dir=write addr=0x4040 len=4",
			"1920000 64 MC.RDMA dma.done tag=1 src=stream0 dst=port1:0x4040 len=4 hash=" + trace.HashBytes(data),
			"2010000 67 PCI bus.dma.write master=MC.RDMA target=Host addr=0x4040 len=4 start=64 waits=0 posted=1 hash=" + trace.HashBytes(data),
			"2070000 69 Host mem.write addr=0x4040 len=4 port=0 hash=" + trace.HashBytes(data),
		}
		Expect(cmp.Diff(want, r.records("link.packet", "mc.rxdma", "dma.burst", "dma.done", "bus.dma.write", "mem.write"))).To(BeEmpty())
		Expect(r.dmaWrites).To(Equal([]dmaBeat{{Cycle: 67, Addr: rigFrame + 0x40, Data: data, First: true}}))
		Expect(r.rxs).To(Equal([]uint64{7}))
		c := r.a.Counters()
		Expect([]uint64{c.RxPackets, c.RxBytes, c.RxDMAs, c.RxUnmapped, c.RxCRC}).To(Equal([]uint64{1, 4, 1, 0, 0}))
		Expect(r.drops).To(BeEmpty())
		Expect(r.irqs).To(BeEmpty())
		Expect(r.a.Idle()).To(BeTrue())
		b, p := r.a.RxFIFO()
		Expect([]int{b, p}).To(Equal([]int{0, 0}))
		Expect(r.e.Waves.Err()).NotTo(HaveOccurred()) // signal names follow the convention
	})

	It("drops a packet for a page it does not map: counted, no DMA, memory unchanged", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		// Global page 4 is not mapped here (the hub broadcasts, MC-P5: the
		// adapter filters).
		addr := uint64(4*8192 + 0x10)
		r.send(2, 5, 9, addr, payload(1, 8))
		r.run()
		c := r.a.Counters()
		Expect([]uint64{c.RxUnmapped, c.RxPackets, c.RxDMAs, c.RxCRC}).To(Equal([]uint64{1, 0, 0, 0}))
		Expect(r.a.RxTable.Unmapped()).To(Equal(uint64(1)))
		Expect(r.drops).To(Equal([]mcadapter.Drop{{Reason: mcadapter.RxUnmapped, Src: 5, Seq: 9, Order: 2, Page: 4, Addr: addr, Len: 8}}))
		Expect(r.dmaWrites).To(BeEmpty())
		Expect(r.host.Storage().Pages()).To(BeEmpty()) // nothing was ever written
		Expect(r.irqs).To(BeEmpty())
		Expect(r.a.Status().Cause).To(BeZero())
		// The one-flit packet (8 + 8 header = 16 wire bytes, 4 cycles)
		// lands at c4 and is taken at c5.
		Expect(r.records("mc.drop")).To(Equal([]string{
			"150000 5 MC mc.drop reason=rx-unmapped src=5 seq=9 order=2 page=4 addr=0x8010 len=8"}))
	})

	It("drops packets whose link CRC fails: counted, status latched, one interrupt, memory unchanged", func() {
		lc := mchub.LinkConfig()
		lc.CorruptProb = 1 // every packet gets one flipped bit on the wire
		r := newRxRig(mcadapter.MC1(), lc, nil)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		addr := uint64(rigGPage * 8192)
		r.send(1, 0, 1, addr, payload(1, 32))
		r.send(2, 0, 2, addr+32, payload(2, 4))
		r.run()
		c := r.a.Counters()
		Expect([]uint64{c.RxCRC, c.RxPackets, c.RxDMAs, c.RxUnmapped}).To(Equal([]uint64{2, 0, 0, 0}))
		Expect(r.drops).To(Equal([]mcadapter.Drop{
			{Reason: mcadapter.RxCRC, Src: 0, Seq: 1, Order: 1, Page: rigGPage, Addr: addr, Len: 32},
			{Reason: mcadapter.RxCRC, Src: 0, Seq: 2, Order: 2, Page: rigGPage, Addr: addr + 32, Len: 4},
		}))
		// The last CRC drop's global page is latched with the cause.
		Expect(r.a.Status()).To(Equal(mcadapter.Status{Cause: mcadapter.CauseRxCRC, Page: rigGPage, Pending: true}))
		Expect(r.a.RxTable.Unmapped()).To(BeZero())
		// The first packet (40 wire bytes = 10 cycles) lands at c10 and is
		// taken at c11: the line rises then; the second error finds it
		// high and interrupts no more.
		Expect(r.irqs).To(Equal([]clock.Cycle{11}))
		Expect(r.dmaWrites).To(BeEmpty())
		Expect(r.host.Storage().Pages()).To(BeEmpty())
		b, p := r.a.RxFIFO()
		Expect([]int{b, p}).To(Equal([]int{0, 0}))
	})

	It("counts a packet for an unmapped page that fails its CRC as a CRC drop only", func() {
		lc := mchub.LinkConfig()
		lc.CorruptProb = 1
		r := newRxRig(mcadapter.MC1(), lc, nil)
		// Nothing mapped: the filter rejects the head of page 4, the bad
		// tail decides: a CRC drop, not an unmapped one.
		addr := uint64(4*8192 + 16)
		r.send(1, 5, 9, addr, payload(1, 8))
		r.run()
		c := r.a.Counters()
		Expect([]uint64{c.RxCRC, c.RxUnmapped}).To(Equal([]uint64{1, 0}))
		Expect(r.a.RxTable.Unmapped()).To(Equal(c.RxUnmapped))
		Expect(r.drops).To(Equal([]mcadapter.Drop{{Reason: mcadapter.RxCRC, Src: 5, Seq: 9, Order: 1, Page: 4, Addr: addr, Len: 8}}))
		Expect(r.a.Status()).To(Equal(mcadapter.Status{Cause: mcadapter.CauseRxCRC, Page: 4, Pending: true}))
	})

	It("writes 20 packets to host memory in the hub's order", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		Expect(r.a.MapRx(rigGPage+1, rigFrame+0x8000)).To(Succeed())
		var want []uint64
		var wantOrders []uint64
		type placed struct {
			host uint64
			data []byte
		}
		var all []placed
		for i := range 20 {
			n := 4 * (1 + (i*5)%8) // 4..32 bytes, word-aligned
			page := rigGPage + i%2
			off := uint64(0x100 + 64*i)
			data := payload(i, n)
			r.send(uint64(100+i), i%3, uint64(i+1), uint64(page*8192)+off, data)
			host := uint64(rigFrame) + uint64(i%2)*0x8000 + off
			want = append(want, host)
			wantOrders = append(wantOrders, uint64(100+i))
			all = append(all, placed{host, data})
		}
		r.run()
		Expect(r.dmaAddrs()).To(Equal(want))
		Expect(r.rxs).To(Equal(wantOrders))
		for _, p := range all {
			Expect(r.mem(p.host, len(p.data))).To(Equal(p.data))
		}
		c := r.a.Counters()
		Expect([]uint64{c.RxPackets, c.RxDMAs}).To(Equal([]uint64{20, 20}))
		// Every beat is a whole, aligned 32-bit word (MC-P18).
		for _, b := range r.dmaWrites {
			Expect(b.Addr%4 == 0 && len(b.Data) == 4).To(BeTrue(), "beat %v", b)
		}
	})

	It("stops popping the link when the RX FIFO is full and loses nothing", func() {
		cfg := mcadapter.MC1()
		cfg.RxFIFOPackets = 2
		cfg.RxFIFOBytes = 64
		r := newRxRig(cfg, mchub.LinkConfig(), nil)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		var want [][]byte
		for i := range 12 {
			d := payload(i, 32)
			want = append(want, d)
			r.send(uint64(i+1), 0, uint64(i+1), uint64(rigGPage*8192+32*i), d)
		}
		r.run()
		st := r.a.RxFIFOStats()
		// Packets arrive every 10 cycles (40 wire bytes) and wait 53
		// cycles in the pipeline, so more than 2 would be in the FIFO at
		// once: the heads waited at the link, and the hub end ran out of
		// its 4 credits.
		Expect(st.MaxPackets).To(Equal(2))
		Expect(st.MaxBytes).To(Equal(64))
		Expect(st.FullCycles).To(BeNumerically(">", 0))
		Expect(r.lnk.From(link.B).Stats().CreditStalls).To(BeNumerically(">", 0))
		for i, d := range want {
			Expect(r.mem(uint64(rigFrame+32*i), 32)).To(Equal(d))
		}
		Expect(r.rxs).To(Equal([]uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
		c := r.a.Counters()
		Expect([]uint64{c.RxPackets, c.RxDMAs, c.RxCRC, c.RxUnmapped}).To(Equal([]uint64{12, 12, 0, 0}))
		Expect(r.drops).To(BeEmpty())
	})

	It("sustains one 32-byte packet every 18 PCI cycles when the link brings one every 10", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		for i := range 10 {
			r.send(uint64(i+1), 0, uint64(i+1), uint64(rigGPage*8192+32*i), payload(i, 32))
		}
		r.run()
		var ends []clock.Cycle
		for _, rec := range r.e.Trace.Records() {
			if rec.Kind == "bus.dma.write" {
				ends = append(ends, rec.Cycle)
			}
		}
		// Worked by hand. The link brings a packet (32 + 8 header = 40 wire
		// bytes) every 10 cycles: the first lands at c10, is taken at c11,
		// queued at 11 + 1 + 52 = c64. The engine takes it at c65, sets up
		// until c69, stages it at c69 and hands its first beat to the bus
		// at c70; the bus arbitrates at c71 (idle before: not hidden),
		// addresses c72, decodes c73 and moves 8 beats from c74 with one
		// wait state (c76: the rig's memory, latency 1, has not yet popped
		// its 2-deep channel), the last at c82. The engine completes the
		// posted descriptor at c82 and takes the next at c83: 83 - 65 = 18
		// cycles per packet, 32 B / (18 x 30 ns) = 59.3 MB/s, slower than
		// the link's 32 B per 10 cycles (107 MB/s): the RX FIFO fills,
		// packets wait in it, and every later burst ends 18 cycles after
		// the one before.
		want := []clock.Cycle{82}
		for i := 1; i < 10; i++ {
			want = append(want, want[i-1]+18)
		}
		Expect(ends).To(Equal(want))
		Expect(r.a.RxFIFOStats().MaxPackets).To(BeNumerically(">", 1))
	})

	It("gives the same trace whichever component ticks first", func() {
		run := func(reversed bool) []string {
			cfg := mcadapter.MC1()
			cfg.RxFIFOPackets = 2
			cfg.RxFIFOBytes = 64
			r := newRxRigOrdered(cfg, mchub.LinkConfig(), nil, reversed)
			Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
			for i := range 12 {
				r.send(uint64(i+1), 0, uint64(i+1), uint64(rigGPage*8192+16*i), payload(i, 4+4*(i%4)))
			}
			r.run()
			var out []string
			for _, rec := range r.e.Trace.Records() {
				out = append(out, rec.Format())
			}
			return out
		}
		first := run(false)
		Expect(first).To(ContainElement(ContainSubstring("mc.rxdma")))
		Expect(cmp.Diff(first, run(true))).To(BeEmpty())
	})

	It("times the DMA the same with the trace on and off", func() {
		// Tracing puts the link on its slow path (flits wait on a wire list);
		// the adapter must see them on the same edges either way.
		beats, diff := vtest.TracedAndUntraced(vtest.Options{Clock: pciClk, TimeLimit: 200 * clock.Microsecond}, func(e *env.Env) []dmaBeat {
			cfg := mcadapter.MC1()
			cfg.RxFIFOPackets = 2
			r := newRxRigIn(e, cfg, mchub.LinkConfig(), false)
			Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
			for i := range 8 {
				r.send(uint64(i+1), 0, uint64(i+1), uint64(rigGPage*8192+32*i), payload(i, 4+4*(i%8)))
			}
			r.run()
			return r.dmaWrites
		})
		Expect(beats).NotTo(BeEmpty())
		Expect(diff).To(BeEmpty())
	})

	It("reports a packet without an MC write header and keeps receiving", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		r.toHub = append(r.toHub, hubFlit{f: link.Flit{Head: true, Tail: true, Data: []byte{1, 2, 3, 4}, Info: &link.PacketInfo{ID: 99, Dst: 1}}})
		r.send(1, 0, 1, rigGPage*8192, []byte{9, 8, 7, 6})
		_, err := r.e.Run()
		Expect(err).To(MatchError(ContainSubstring("packet 99 carries <nil>, not a *mchub.Write")))
		v := r.e.Monitor.Violations()
		Expect(v).To(HaveLen(1))
		Expect(v[0].Check).To(Equal("mc.protocol"))
		Expect(r.mem(rigFrame, 4)).To(Equal([]byte{9, 8, 7, 6}))
	})

	It("reports a packet that lost its tail, frees its FIFO room and takes the next", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		r.send(1, 0, 1, rigGPage*8192, payload(1, 64)) // two 32-byte flits
		r.toHub = r.toHub[:1]                          // its tail is lost
		r.send(2, 0, 2, rigGPage*8192+64, []byte{5, 6, 7, 8})
		_, err := r.e.Run()
		Expect(err).To(MatchError(ContainSubstring("head of packet 2 inside write src 0 seq 1")))
		Expect(r.e.Monitor.Violations()).To(HaveLen(1))
		Expect(r.mem(rigFrame+64, 4)).To(Equal([]byte{5, 6, 7, 8}))
		Expect(r.dmaAddrs()).To(Equal([]uint64{rigFrame + 64}))
		b, p := r.a.RxFIFO()
		Expect([]int{b, p}).To(Equal([]int{0, 0}))
		Expect(r.a.Idle()).To(BeTrue())
	})

	Describe("mutations", func() {
		send4 := func(r *rxRig, n int) {
			Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
			for i := range n {
				r.send(uint64(i+1), 0, uint64(i+1), uint64(rigGPage*8192+16*i), payload(i, 16))
			}
		}
		It("rx-swap writes a held-back packet after the next one", func() {
			r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), map[string]int{"mcadapter.rx-swap": 2})
			send4(r, 4)
			r.run()
			// Packet 2 is held until 3 is written; 4 has nothing after it.
			Expect(r.dmaAddrs()).To(Equal([]uint64{rigFrame, rigFrame + 32, rigFrame + 16, rigFrame + 48}))
			Expect(r.rxs).To(Equal([]uint64{1, 3, 2, 4}))
		})
		It("rx-dup writes a packet twice", func() {
			r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), map[string]int{"mcadapter.rx-dup": 2})
			send4(r, 3)
			r.run()
			Expect(r.dmaAddrs()).To(Equal([]uint64{rigFrame, rigFrame + 16, rigFrame + 16, rigFrame + 32}))
			Expect(r.a.Counters().RxDMAs).To(Equal(uint64(4)))
		})
		It("split-word tears the first word of a packet into two PCI writes", func() {
			r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), map[string]int{"mcadapter.split-word": 1})
			Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
			data := []byte{1, 2, 3, 4}
			r.send(1, 0, 1, rigGPage*8192, data)
			r.run()
			Expect(r.dmaWrites).To(HaveLen(2))
			Expect(r.dmaAddrs()).To(Equal([]uint64{rigFrame, rigFrame + 2}))
			Expect(r.dmaWrites[0].Data).To(Equal([]byte{1, 2}))
			Expect(r.dmaWrites[1].Data).To(Equal([]byte{3, 4}))
			Expect(r.mem(rigFrame, 4)).To(Equal(data)) // same bytes, torn on the bus
		})
		It("without a mutation writes each packet once, in order, in whole words", func() {
			r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
			send4(r, 4)
			r.run()
			Expect(r.dmaAddrs()).To(Equal([]uint64{rigFrame, rigFrame + 16, rigFrame + 32, rigFrame + 48}))
			Expect(r.dmaWrites).To(HaveLen(16))
		})
	})

	It("refuses a DMA burst that would split a 32-bit word and a second PCI attachment", func() {
		e := vtest.NewEnv(vtest.Options{Clock: pciClk})
		cfg := mcadapter.MC1()
		cfg.DMABurstBytes = 6
		_, err := mcadapter.MakeBuilder().WithEnv(e).WithClock(pciClk).WithConfig(cfg).Build("MC")
		Expect(err).To(MatchError(ContainSubstring("DMABurstBytes 6 must be a multiple of 4")))

		a, err := mcadapter.MakeBuilder().WithEnv(e).WithClock(pciClk).Build("MC2")
		Expect(err).NotTo(HaveOccurred())
		pci, err := bus.MakeBuilder().WithEnv(e).Build("PCI")
		Expect(err).NotTo(HaveOccurred())
		Expect(a.AttachPCI(pci, rigTxBase, rigCSRBase)).To(Succeed())
		err = a.AttachPCI(pci, rigTxBase, rigCSRBase)
		Expect(err).To(HaveOccurred())
		Expect(errors.Unwrap(err)).NotTo(BeNil())
	})
})

// BenchmarkAdapterRx receives 2000 packets of 32 bytes from the link and
// writes them to host memory over PCI (untraced, no waveforms), and
// reports received packets and simulated PCI cycles per wall second.
func BenchmarkAdapterRx(b *testing.B) {
	const packets = 2000
	var cycles, done uint64
	for b.Loop() {
		e := env.New(env.Options{})
		pci, err := bus.MakeBuilder().WithEnv(e).Build("PCI")
		if err != nil {
			b.Fatal(err)
		}
		host, err := mem.MakeBuilder().WithEnv(e).WithClock(pciClk).WithSize(rigHostBytes).WithLatency(1).
			WithBytesPerCycle(4).WithPortWidth(4).Build("Host")
		if err != nil {
			b.Fatal(err)
		}
		lnk, err := link.MakeBuilder().WithEnv(e).WithConfig(mchub.LinkConfig()).Build("Link")
		if err != nil {
			b.Fatal(err)
		}
		a, err := mcadapter.MakeBuilder().WithEnv(e).WithClock(pciClk).WithNode(1).Build("MC")
		if err != nil {
			b.Fatal(err)
		}
		if err := errors.Join(pci.AddTarget("Host", 0, rigHostBytes, host.Port(0)), a.AttachPCI(pci, rigTxBase, rigCSRBase),
			a.ConnectLink(star.Port{Send: lnk.From(link.A), Recv: lnk.From(link.B)}), a.MapRx(rigGPage, rigFrame)); err != nil {
			b.Fatal(err)
		}
		var fl []link.Flit
		data := payload(1, 32)
		for i := range packets {
			w := &mchub.Write{Addr: uint64(rigGPage*8192 + 32*(i%256)), Len: 32, Seq: uint64(i + 1), Order: uint64(i + 1)}
			p, err := mchub.MC1().Format().Packet(w, data, uint64(i+1))
			if err != nil {
				b.Fatal(err)
			}
			fl = append(fl, p...)
		}
		hubEnd := lnk.From(link.B)
		vtest.NewAgent(e, "Hub", pciClk, func(now clock.Time, _ clock.Cycle) bool {
			if len(fl) > 0 && hubEnd.CanSend(now, 0) {
				hubEnd.Send(now, &fl[0])
				fl = fl[1:]
			}
			return len(fl) > 0
		}).Start()
		res, err := e.Run()
		if err != nil {
			b.Fatal(err)
		}
		cycles += uint64(pciClk.CycleAt(res.End))
		done += a.Counters().RxDMAs
	}
	b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "packets/s")
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
}
