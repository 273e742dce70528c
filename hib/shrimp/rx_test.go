package shrimp_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
)

// rxRigHost is the rig's host memory on EISA at address 0.
const rxRigHost = 1 << 20

// rxRig is one NI (node 1 of 2) on an EISA bus with host memory as a plain
// EISA target at 0 (the stand-in for the bridge and DRAM: 1 cycle to
// accept, a 4-byte beat per cycle), its link's far end driven by the spec
// (node 0's NIC: flits in the NI's wire format, each as soon as the link
// takes it and not before its link cycle).
type rxRig struct {
	e     *env.Env
	eisa  *bus.Bus
	host  *mem.Memory
	lnk   *link.Link
	ni    *shrimp.NI
	cfg   shrimp.Config
	toNI  []rxFlit
	pkts  uint64
	drops []shrimp.Drop
	irqs  []shrimp.IRQCause
	// in are the incoming DMA's EISA data phases.
	in []rxBeat
	// pktIn are OnPacketIn's calls.
	pktIn []uint64
}

type rxFlit struct {
	at clock.Cycle
	f  link.Flit
}

// rxBeat is one data phase of the incoming DMA on EISA.
type rxBeat struct {
	Cycle clock.Cycle
	Addr  uint64
	Data  []byte
}

var eisaClk = bus.EISA().Clock

// rigLink is a Paragon terminal link: 2-B flits at 100 MHz, credits, 16
// flits of buffer (topology.Paragon).
func rigLink() link.Config {
	return link.Config{Clock: clock.MHz(100), BytesPerCycle: 2, VCs: 1, FlowControl: link.Credits,
		BufferFlits: 16, TxDepth: 1, CreditDelay: 1}
}

func newRxRig(cfg shrimp.Config, lc link.Config, mutations map[string]int) *rxRig {
	r := &rxRig{cfg: cfg}
	r.e = vtest.NewEnv(vtest.Options{Clock: eisaClk, Trace: true, Mutations: mutations, TimeLimit: 500 * clock.Microsecond})
	var err error
	r.eisa, err = bus.MakeBuilder().WithEnv(r.e).WithConfig(bus.EISA()).Build("EISA")
	Expect(err).NotTo(HaveOccurred())
	r.host, err = mem.MakeBuilder().WithEnv(r.e).WithClock(eisaClk).WithSize(rxRigHost).WithLatency(1).
		WithBytesPerCycle(4).WithPortWidth(4).Build("Host")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.eisa.AddTarget("Host", 0, rxRigHost, r.host.Port(0))).To(Succeed())
	r.lnk, err = link.MakeBuilder().WithEnv(r.e).WithConfig(lc).Build("Link")
	Expect(err).NotTo(HaveOccurred())
	r.ni, err = shrimp.MakeBuilder().WithEnv(r.e).WithConfig(cfg).WithNode(1, 2).Build("NI")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.ni.AttachEISA(r.eisa, shrimp.DefaultAddressMap())).To(Succeed())
	// The NI sends on B and receives on A; the spec's node 0 sends on A.
	Expect(r.ni.ConnectLink(r.lnk.From(link.B), r.lnk.From(link.A))).To(Succeed())
	r.ni.OnDrop(func(_ clock.Time, d shrimp.Drop) { r.drops = append(r.drops, d) })
	r.ni.OnInterrupt(func(_ clock.Time, c shrimp.IRQCause) { r.irqs = append(r.irqs, c) })
	r.ni.OnPacketIn(func(_ clock.Time, p *shrimp.Packet, _ uint64) { r.pktIn = append(r.pktIn, p.Seq) })
	r.eisa.Observe(func(_ clock.Time, o bus.Observation) {
		if o.Master == "NI.In" {
			r.in = append(r.in, rxBeat{Cycle: o.Cycle, Addr: o.Addr, Data: append([]byte(nil), o.Data...)})
		}
	})
	vtest.NewAgent(r.e, "N0", lc.Clock, func(now clock.Time, c clock.Cycle) bool {
		end := r.lnk.From(link.A)
		if len(r.toNI) > 0 && r.toNI[0].at <= c && end.CanSend(now, 0) {
			f := r.toNI[0].f
			f.Stamp = now
			end.Send(now, &f)
			r.toNI = r.toNI[1:]
		}
		return len(r.toNI) > 0
	}).Start()
	return r
}

// send queues packet p from node 0 (its flits: the route, the header, the
// data, 2 bytes each) to leave from link cycle at.
func (r *rxRig) send(at clock.Cycle, p shrimp.Packet) { r.sendCorrupt(at, p, nil) }

// sendCorrupt is send with the header bytes changed by corrupt (nil: none)
// before the flits are made: the link's CRC covers the changed bytes.
func (r *rxRig) sendCorrupt(at clock.Cycle, p shrimp.Packet, corrupt func(hdr []byte)) {
	r.pkts++
	p.Src, p.Dst, p.Len = 0, 1, len(p.Data)
	p.Seq = r.pkts
	meta := p
	hdr := shrimp.EncodeHeader(&p)
	if corrupt != nil {
		corrupt(hdr[:])
	}
	b := append([]byte{1, 0}, hdr[:]...)
	b = append(b, make([]byte, r.cfg.HeaderBytes-len(hdr))...)
	b = append(b, p.Data...)
	for i := 0; i < len(b); i += shrimp.FlitBytes {
		f := link.Flit{Data: b[i:min(i+shrimp.FlitBytes, len(b))], Size: shrimp.FlitBytes, Head: i == 0, Tail: i+shrimp.FlitBytes >= len(b), Info: &link.PacketInfo{ID: r.pkts, Src: 0, Dst: 1, Meta: &meta}, Carries: link.HasMeta}
		r.toNI = append(r.toNI, rxFlit{at: at, f: f})
	}
}

func (r *rxRig) run() {
	_, err := r.e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(r.ni.Idle()).To(BeTrue(), r.ni.State())
}

// records returns the trace records of the given kinds, as text.
func (r *rxRig) records(kinds ...string) []string {
	var out []string
	for _, rec := range r.e.Trace.Records() {
		s := rec.Format()
		for _, k := range kinds {
			if strings.Contains(s, " "+k+" ") {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// rxCfg is the SHRIMP NI with no NIC delay, so that the cycles below are
// the incoming path's own.
func rxCfg() shrimp.Config {
	c := shrimp.SHRIMP()
	c.NICDelayCycles = 0
	return c
}

// pageOf returns page k's address.
func pageOf(c shrimp.Config, k int) uint64 { return uint64(k * c.PageBytes) }

// rxdma returns the shrimp.rxdma records.
func (r *rxRig) rxdma() []string { return r.records("shrimp.rxdma") }

func fill(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

var _ = Describe("the incoming path", func() {
	It("writes a 4-byte AU packet to an exported page in one EISA write", func() {
		c := rxCfg()
		r := newRxRig(c, rigLink(), nil)
		Expect(r.ni.SetIPT(2, shrimp.IPTEntry{Exported: true})).To(Succeed())
		dst := pageOf(c, 2) + 0x40
		r.send(0, shrimp.Packet{Kind: shrimp.KindAU, DstAddr: dst, Data: []byte{1, 2, 3, 4}})
		r.run()
		// The 7 flits (route 1, header 4, data 2) leave at link cycles
		// 0..6 (10 ns); the header word is complete with flit 5, the data
		// word with flit 7, both before 100 ns, and the NIC port (33.3 ns
		// core cycles) hands them to the incoming path. EISA cycles (120
		// ns): the header is taken at 1 (IPT: exported), the data word at
		// 2 (one word per cycle): the packet's only burst is fully staged
		// and its tail good, ready from max(2, 1 + InSetupCycles 1) = 2.
		// At 3 the DMA starts it and hands over its one beat
		// (shrimp.rxdma start=3); the bus sees the beat from 4: ARB 4,
		// ADDR 5, data 6. Header to memory: 5 EISA cycles = 600 ns.
		Expect(r.records("shrimp.rx", "shrimp.rxdma", "bus.dma.write")).To(Equal([]string{
			"120001 1 NI shrimp.rx kind=au src=0 seq=1 addr=0x2040 len=4 notify=0 exported=1",
			"360001 3 NI shrimp.rxdma kind=au src=0 seq=1 addr=0x2040 len=4 start=3 last=1 hash=" + trace.HashBytes([]byte{1, 2, 3, 4}),
			"720001 6 EISA bus.dma.write master=NI.In target=Host addr=0x2040 len=4 start=4 waits=0 posted=1 hash=" + trace.HashBytes([]byte{1, 2, 3, 4}),
		}))
		Expect(r.in).To(Equal([]rxBeat{{Cycle: 6, Addr: dst, Data: []byte{1, 2, 3, 4}}}))
		got, _ := r.host.Storage().Bytes(dst, 4)
		Expect(got).To(Equal([]byte{1, 2, 3, 4}))
		Expect(r.ni.Counters().RxPackets).To(Equal(uint64(1)))
		Expect(r.ni.Counters().RxBytes).To(Equal(uint64(4)))
		Expect(r.pktIn).To(Equal([]uint64{1}))
		Expect(r.irqs).To(BeEmpty())
	})

	It("writes a 4 KB DU packet in four 1 KB bursts, each started fully staged", func() {
		c := rxCfg()
		r := newRxRig(c, rigLink(), nil)
		Expect(r.ni.SetIPT(3, shrimp.IPTEntry{Exported: true})).To(Succeed())
		data := fill(4096, 9)
		r.send(0, shrimp.Packet{Kind: shrimp.KindDU, DstAddr: pageOf(c, 3), Data: data})
		r.run()
		got, _ := r.host.Storage().Bytes(pageOf(c, 3), 4096)
		Expect(got).To(Equal(data))
		// The header is taken at EISA cycle 1 (as above); the link brings
		// a word per 40 ns, faster than the path takes them (one 8-byte
		// word per 120 ns cycle), so burst 1's 128 words are taken at
		// 2..129: it is fully staged at 129 and starts at 130. Its 256
		// beats go one per cycle, the bus's ARB, ADDR and the memory's
		// write-latency wait in the 2-deep master channel: the last is
		// handed over at 130+258 = 388. Burst 2 was staged meanwhile (words
		// 130..257; DMAStageBytes 2048 holds both) and starts at 389; each
		// later burst also waits for the bus's idle cycle after the
		// previous tenure: 260 cycles each, 648, 908, 1168.
		var starts, dones []string
		for _, rec := range r.rxdma() {
			f := strings.Fields(rec)
			dones = append(dones, f[1])
			for _, x := range f {
				if strings.HasPrefix(x, "start=") {
					starts = append(starts, x)
				}
			}
		}
		Expect(starts).To(Equal([]string{"start=130", "start=389", "start=649", "start=909"}))
		Expect(dones).To(Equal([]string{"388", "648", "908", "1168"}))
		Expect(r.records("bus.dma.write")).To(HaveLen(4))
		Expect(r.in).To(HaveLen(1024)) // 4096 / 4-byte EISA beats
		Expect(r.pktIn).To(Equal([]uint64{1}))
		Expect(r.ni.Counters().RxBytes).To(Equal(uint64(4096)))
	})

	It("drops a packet for a page the IPT does not export: counted, reported, nothing written, no interrupt", func() {
		c := rxCfg()
		r := newRxRig(c, rigLink(), nil)
		dst := pageOf(c, 5) + 8
		r.send(0, shrimp.Packet{Kind: shrimp.KindAU, DstAddr: dst, Data: []byte{1, 2, 3, 4}})
		r.run()
		Expect(r.in).To(BeEmpty())
		Expect(r.irqs).To(BeEmpty())
		Expect(r.ni.Counters().RxUnexported).To(Equal(uint64(1)))
		Expect(r.ni.Counters().RxPackets).To(BeZero())
		Expect(r.drops).To(HaveLen(1))
		Expect(r.drops[0].Reason).To(Equal(shrimp.DropUnexported))
		Expect(r.drops[0].Addr).To(Equal(dst))
		Expect(r.drops[0].Len).To(Equal(4))
		got, _ := r.host.Storage().Bytes(dst, 4)
		Expect(got).To(Equal(make([]byte, 4)))
		Expect(r.records("shrimp.drop")).To(HaveLen(1))
		Expect(r.records("shrimp.drop")[0]).To(ContainSubstring("reason=unexported"))
	})

	It("drops a packet that would leave its exported page (protection)", func() {
		c := rxCfg()
		r := newRxRig(c, rigLink(), nil)
		Expect(r.ni.SetIPT(5, shrimp.IPTEntry{Exported: true})).To(Succeed())
		r.send(0, shrimp.Packet{Kind: shrimp.KindDU, DstAddr: pageOf(c, 6) - 8, Data: fill(16, 1)})
		r.run()
		Expect(r.in).To(BeEmpty())
		Expect(r.ni.Counters().RxUnexported).To(Equal(uint64(1)))
	})

	It("drops a packet whose tail fails the CRC: nothing written, counted, IRQError", func() {
		c := rxCfg()
		lc := rigLink()
		lc.CorruptProb = 1
		r := newRxRig(c, lc, nil)
		Expect(r.ni.SetIPT(2, shrimp.IPTEntry{Exported: true})).To(Succeed())
		dst := pageOf(c, 2)
		r.send(0, shrimp.Packet{Kind: shrimp.KindAU, DstAddr: dst, Data: []byte{1, 2, 3, 4}})
		r.run()
		Expect(r.in).To(BeEmpty())
		Expect(r.ni.Counters().RxCRC).To(Equal(uint64(1)))
		Expect(r.irqs).To(Equal([]shrimp.IRQCause{shrimp.IRQError}))
		Expect(r.drops).To(HaveLen(1))
		Expect(r.drops[0].Reason).To(Equal(shrimp.DropCRC))
		Expect(r.drops[0].Len).To(Equal(4))
	})

	It("drops a packet whose header is corrupted as a CRC failure, not as unexported", func() {
		c := rxCfg()
		r := newRxRig(c, rigLink(), nil)
		// Reserved bit 63 set: the NIC cannot decode the header, keeps the
		// packet with no data and fails its tail.
		r.sendCorrupt(0, shrimp.Packet{Kind: shrimp.KindAU, DstAddr: pageOf(c, 2), Data: []byte{1, 2, 3, 4}},
			func(h []byte) { h[7] |= 0x80 })
		r.run()
		Expect(r.in).To(BeEmpty())
		Expect(r.ni.Counters().RxCRC).To(Equal(uint64(1)))
		Expect(r.ni.Counters().RxUnexported).To(BeZero())
		Expect(r.drops).To(HaveLen(1))
		Expect(r.drops[0].Reason).To(Equal(shrimp.DropCRC))
		Expect(r.irqs).To(Equal([]shrimp.IRQCause{shrimp.IRQError}))
	})

	It("keeps the first burst of a 2 KB DU packet whose tail fails the CRC and drops the last (R8)", func() {
		c := rxCfg()
		lc := rigLink()
		lc.CorruptProb = 1
		r := newRxRig(c, lc, nil)
		Expect(r.ni.SetIPT(2, shrimp.IPTEntry{Exported: true})).To(Succeed())
		data := fill(2048, 3)
		r.send(0, shrimp.Packet{Kind: shrimp.KindDU, DstAddr: pageOf(c, 2), Data: data})
		r.run()
		got, _ := r.host.Storage().Bytes(pageOf(c, 2), 2048)
		Expect(got[:1024]).To(Equal(data[:1024]))
		Expect(got[1024:]).To(Equal(make([]byte, 1024)))
		Expect(r.drops).To(HaveLen(1))
		Expect(r.drops[0].Addr).To(Equal(pageOf(c, 2) + 1024))
		Expect(r.drops[0].Len).To(Equal(1024))
		Expect(r.ni.Counters().RxPackets).To(BeZero())
	})

	DescribeTable("notifies iff the packet's interrupt bit and the IPT's are both set (SH-P18)",
		func(pktBit, iptBit bool, mutations map[string]int, want bool) {
			c := rxCfg()
			r := newRxRig(c, rigLink(), mutations)
			Expect(r.ni.SetIPT(4, shrimp.IPTEntry{Exported: true, Interrupt: iptBit})).To(Succeed())
			r.send(0, shrimp.Packet{Kind: shrimp.KindDU, DstAddr: pageOf(c, 4) + 16, Notify: pktBit, Data: fill(8, 1)})
			r.run()
			Expect(r.ni.Counters().RxPackets).To(Equal(uint64(1)))
			if !want {
				Expect(r.irqs).To(BeEmpty())
				Expect(r.ni.Notifications()).To(BeZero())
				return
			}
			Expect(r.irqs).To(Equal([]shrimp.IRQCause{shrimp.IRQNotify}))
			Expect(r.ni.Notifications()).To(Equal(1))
			Expect(r.ni.Counters().Notifies).To(Equal(uint64(1)))
			Expect(r.records("shrimp.notify")).To(HaveLen(1))
			Expect(r.records("shrimp.notify")[0]).To(ContainSubstring("page=4 src=0"))
		},
		Entry("both", true, true, nil, true),
		Entry("packet only", true, false, nil, false),
		Entry("IPT only", false, true, nil, false),
		Entry("neither", false, false, nil, false),
		Entry("neither, shrimp.notify-always", false, false, map[string]int{"shrimp.notify-always": 1}, true),
	)

	It("writes to an unexported page under shrimp.ipt-ignore", func() {
		c := rxCfg()
		r := newRxRig(c, rigLink(), map[string]int{"shrimp.ipt-ignore": 1})
		dst := pageOf(c, 5) + 8
		r.send(0, shrimp.Packet{Kind: shrimp.KindAU, DstAddr: dst, Data: []byte{1, 2, 3, 4}})
		r.run()
		got, _ := r.host.Storage().Bytes(dst, 4)
		Expect(got).To(Equal([]byte{1, 2, 3, 4}))
		Expect(r.ni.Counters().RxUnexported).To(BeZero())
	})

	DescribeTable("writes back-to-back packets in arrival order, swapped under shrimp.rx-swap",
		func(mutations map[string]int, want []string) {
			c := rxCfg()
			r := newRxRig(c, rigLink(), mutations)
			Expect(r.ni.SetIPT(2, shrimp.IPTEntry{Exported: true})).To(Succeed())
			for i := range 2 {
				r.send(0, shrimp.Packet{Kind: shrimp.KindAU, DstAddr: pageOf(c, 2) + uint64(4*i), Data: []byte{byte(i + 1), 0, 0, 0}})
			}
			r.run()
			var order []string
			for _, b := range r.in {
				order = append(order, fmt.Sprintf("%#x", b.Addr))
			}
			Expect(order).To(Equal(want))
			Expect(r.ni.Counters().RxPackets).To(Equal(uint64(2)))
		},
		Entry("in order", nil, []string{"0x2000", "0x2004"}),
		Entry("swapped", map[string]int{"shrimp.rx-swap": 1}, []string{"0x2004", "0x2000"}),
	)

	It("has one IPT entry per page and names a page out of range", func() {
		c := rxCfg()
		r := newRxRig(c, rigLink(), nil)
		Expect(r.ni.SetIPT(c.Entries()-1, shrimp.IPTEntry{Exported: true, Interrupt: true})).To(Succeed())
		Expect(r.ni.IPT(c.Entries() - 1)).To(Equal(shrimp.IPTEntry{Exported: true, Interrupt: true}))
		Expect(r.ni.SetIPT(c.Entries(), shrimp.IPTEntry{})).To(MatchError(ContainSubstring("IPT page 8192 must be in 0..8191")))
		Expect(r.ni.IPT(-1)).To(Equal(shrimp.IPTEntry{}))
	})
})
