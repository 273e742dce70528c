package shrimp_test

import (
	"fmt"

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

var _ = Describe("Config", func() {
	It("is valid for the prototype, with one OPT entry per 4 KB page of 32 MB", func() {
		c := shrimp.SHRIMP()
		Expect(c.Validate()).To(Succeed())
		// derived: 32 MB / 4 KB = 8192 (SH-P14).
		Expect(c.Entries()).To(Equal(8192))
		// derived: 32 KB / 8 B = 4096 words (SH-P19, SH-P20).
		Expect(c.FIFOWords()).To(Equal(4096))
		// one header word + ⌈4 / 8⌉ = 2 words for a 4-B store.
		Expect(c.PacketWords(4)).To(Equal(2))
		// route 2 B + header 8 B + 4 B of data = 14 B = 7 flits of 2 B.
		Expect(c.WireFlits(4)).To(Equal(7))
	})

	DescribeTable("names the bad field",
		func(mod func(*shrimp.Config), field string) {
			c := shrimp.SHRIMP()
			mod(&c)
			err := c.Validate()
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(field))
		},
		Entry("page", func(c *shrimp.Config) { c.PageBytes = 3000 }, "PageBytes"),
		Entry("memory", func(c *shrimp.Config) { c.MemoryBytes = 4097 }, "MemoryBytes"),
		Entry("threshold", func(c *shrimp.Config) { c.FIFOThreshold = c.FIFOBytes + 1 }, "FIFOThreshold"),
		// A threshold at the FIFO's size is never crossed; Build's FIFO
		// refused it after Validate had accepted it.
		Entry("threshold at the size", func(c *shrimp.Config) { c.FIFOThreshold = c.FIFOBytes }, "FIFOThreshold"),
		Entry("fifo", func(c *shrimp.Config) { c.FIFOBytes = 8 }, "FIFOBytes"),
		Entry("delay", func(c *shrimp.Config) { c.NICDelayCycles = -1 }, "NICDelayCycles"),
		Entry("combine timer", func(c *shrimp.Config) { c.CombineCycles = shrimp.MaxDelayCycles + 1 }, "CombineCycles"),
		Entry("opt", func(c *shrimp.Config) { c.OPTCycles = 0 }, "OPTCycles"),
		Entry("subpage", func(c *shrimp.Config) { c.SubpageBytes = 100 }, "SubpageBytes"),
		Entry("du", func(c *shrimp.Config) { c.DUMaxBytes = 8192 }, "DUMaxBytes"),
		Entry("clock", func(c *shrimp.Config) { c.LinkClock = shrimp.Config{}.LinkClock }, "LinkClock"),
	)

	It("refuses a memory bus faster than the core or wider than the FIFO, naming the parameter", func() {
		e := vtest.NewEnv(vtest.Options{Clock: xpClock})
		ni, err := shrimp.MakeBuilder().WithEnv(e).WithConfig(rigConfig()).WithNode(0, 2).Build("N0.NI")
		Expect(err).NotTo(HaveOccurred())
		fast := xpress()
		fast.Clock = clock.MHz(33)
		mb, err := bus.MakeBuilder().WithEnv(e).WithConfig(fast).Build("Fast")
		Expect(err).NotTo(HaveOccurred())
		Expect(ni.AttachMemoryBus(mb, "Mem", "")).To(MatchError(ContainSubstring("CoreClock")))
		wide := xpress()
		wide.WidthBytes = 16
		mb, err = bus.MakeBuilder().WithEnv(e).WithConfig(wide).Build("Wide")
		Expect(err).NotTo(HaveOccurred())
		Expect(ni.AttachMemoryBus(mb, "Mem", "")).To(MatchError(ContainSubstring("FIFOWidthBytes")))
		_, err = shrimp.MakeBuilder().WithEnv(e).WithNode(2, 2).Build("N2.NI")
		Expect(err).To(MatchError(ContainSubstring("node 2 must be in 0..1")))
	})

	It("refuses a bad OPT entry, naming what is wrong, and keeps the old one", func() {
		e := vtest.NewEnv(vtest.Options{Clock: xpClock})
		ni, err := shrimp.MakeBuilder().WithEnv(e).WithConfig(rigConfig()).WithNode(0, 4).Build("N0.NI")
		Expect(err).NotTo(HaveOccurred())
		good := shrimp.OPTEntry{Valid: true, AU: true, DstNode: 3, DstPage: 8191}
		Expect(ni.SetOPT(7, good)).To(Succeed())
		Expect(ni.SetOPT(8192, good)).To(MatchError(ContainSubstring("OPT index 8192 must be in 0..8191")))
		Expect(ni.SetOPT(7, shrimp.OPTEntry{Valid: true, DstNode: 4})).To(MatchError(ContainSubstring("DstNode 4")))
		Expect(ni.SetOPT(7, shrimp.OPTEntry{Valid: true, DstPage: 8192})).To(MatchError(ContainSubstring("DstPage 8192")))
		Expect(ni.SetOPT(7, shrimp.OPTEntry{Valid: true, Subpage: 48})).To(MatchError(ContainSubstring("Subpage 48")))
		Expect(ni.OPT(7)).To(Equal(good))
		Expect(ni.OPT(-1)).To(Equal(shrimp.OPTEntry{}))
	})

	It("encodes and decodes the header", func() {
		p := shrimp.Packet{Kind: shrimp.KindDU, Src: 13, DstAddr: 0x01ff_fffc, Len: 4096, Notify: true}
		h := shrimp.EncodeHeader(&p)
		got, err := shrimp.DecodeHeader(h[:])
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(p))
		h[7] |= 0x80 // a reserved bit: a corrupted header
		_, err = shrimp.DecodeHeader(h[:])
		Expect(err).To(MatchError(ContainSubstring("reserved")))
	})
})

// Clocks of the rig: the Xpress and the NI core at 30 MHz (33.33 ns), the
// link at 100 MHz (10 ns), as SHRIMP().
var (
	xpClock   = clock.MHz(30)
	linkClock = clock.MHz(100)
)

// rigPkt is one packet as the far end of the NI's link received it.
type rigPkt struct {
	Head, Tail clock.Cycle // link cycles the head and tail flits were popped
	Flits      int
	Hdr        shrimp.Packet // decoded from the wire (Data nil)
	Data       []byte
	Flush      shrimp.Flush // the sender's (checker-only) reason
}

// auRig is node 0's NI observing a 1-CPU Xpress bus with a memory target
// and a test master "Cpu" issuing writes, and a loop link whose far end the
// test pops (and, with inject, sends packets into the NI).
type auRig struct {
	e   *env.Env
	xp  *bus.Bus
	m   *mem.Memory
	ni  *shrimp.NI
	lnk *link.Link

	reqs []*mem.Req
	data [][]byte
	at   []clock.Cycle

	got   []rigPkt
	irqs  []clock.Cycle
	drops []shrimp.Drop
	outs  []clock.Cycle // core cycles of OnPacketOut
	snoop int

	// inject are packets the far end sends into the NI (flits already
	// made), from link cycle injectAt on.
	inject   []link.Flit
	injectAt clock.Cycle
	// master names the bus master issuing the stores ("Cpu" by default;
	// "Bridge" is the name the NI was told is the DMA master).
	master string
	// popFrom is the first link cycle the far end pops flits (until then
	// the link's buffer fills and its credits stop the NI).
	popFrom clock.Cycle
}

// rigConfig is SHRIMP() with the calibrated NICDelayCycles pinned to 10, so
// the hand-worked cycles below do not move when the calibration does.
func rigConfig() shrimp.Config {
	c := shrimp.SHRIMP()
	c.NICDelayCycles = 10
	return c
}

// xpress is the Xpress timing of platform.DEC560ST (arbitration 1, address
// 1, idle 1, 8-B beats, 32-B bursts, round robin) without importing the
// host package.
func xpress() bus.Config {
	return bus.Config{Name: "xpress", Clock: xpClock, WidthBytes: 8, ArbCycles: 1, AddrCycles: 1, IdleCycles: 1,
		MaxBurstBytes: 32, Arbitration: bus.RoundRobin}
}

// paragonLink is one Paragon terminal link: 2-B flits at 100 MHz, one VC
// of 16 flits, credits back after a cycle.
func paragonLink() link.Config {
	return link.Config{Clock: linkClock, BytesPerCycle: 2, VCs: 1, FlowControl: link.Credits, BufferFlits: 16,
		CreditDelay: 1, TxDepth: 1}
}

func newAURig(cfg shrimp.Config, muts map[string]int, limit clock.Time) *auRig {
	return newAURigOrder(cfg, muts, limit, []int{0, 1})
}

// newAURigOrder builds the rig creating the bus (0) and the NI (1) in the
// given order, which is their tick order within a cycle.
func newAURigOrder(cfg shrimp.Config, muts map[string]int, limit clock.Time, order []int) *auRig {
	r := &auRig{}
	r.e = vtest.NewEnv(vtest.Options{Clock: xpClock, Trace: true, Mutations: muts, TimeLimit: limit})
	var err error
	for _, k := range order {
		if k == 0 {
			r.xp, err = bus.MakeBuilder().WithEnv(r.e).WithConfig(xpress()).Build("Xp")
		} else {
			r.ni, err = shrimp.MakeBuilder().WithEnv(r.e).WithConfig(cfg).WithNode(0, 4).Build("N0.NI")
		}
		Expect(err).NotTo(HaveOccurred())
	}
	r.m, err = mem.MakeBuilder().WithEnv(r.e).WithClock(xpClock).WithSize(1 << 20).WithLatency(1).
		WithBytesPerCycle(8).WithPortWidth(8).Build("Mem")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.xp.AddTarget("Mem", 0, 1<<20, r.m.Port(0))).To(Succeed())
	Expect(r.ni.AttachMemoryBus(r.xp, "Mem", "Bridge")).To(Succeed())
	r.lnk, err = link.MakeBuilder().WithEnv(r.e).WithConfig(paragonLink()).Build("Link")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.ni.ConnectLink(r.lnk.From(link.A), r.lnk.From(link.B))).To(Succeed())
	r.ni.OnInterrupt(func(now clock.Time, c shrimp.IRQCause) {
		if c == shrimp.IRQThreshold {
			r.irqs = append(r.irqs, xpClock.CycleAt(now))
		}
	})
	r.ni.OnDrop(func(_ clock.Time, d shrimp.Drop) { r.drops = append(r.drops, d) })
	r.ni.OnPacketOut(func(now clock.Time, _ *shrimp.Packet) { r.outs = append(r.outs, xpClock.CycleAt(now)) })
	r.ni.OnSnoop(func(clock.Time, uint64, []byte, shrimp.OPTEntry) { r.snoop++ })
	return r
}

// bind binds local page lp to node dst's page dp.
func (r *auRig) bind(lp int, dst int, dp uint32, combine bool, subpage int) {
	Expect(r.ni.SetOPT(lp, shrimp.OPTEntry{Valid: true, AU: true, Combine: combine, Subpage: subpage,
		DstNode: dst, DstPage: dp})).To(Succeed())
}

// store queues a write of data at addr that the master pushes from cycle c
// on (each store is its own request: a write-through store).
func (r *auRig) store(c clock.Cycle, addr uint64, data []byte) {
	r.reqs = append(r.reqs, &mem.Req{Op: mem.Write, Addr: addr, Len: len(data), Posted: true, Class: "wt"})
	r.data = append(r.data, data)
	r.at = append(r.at, c)
}

// run starts the master and the far end and runs until nothing is left
// (or until the rig's time limit).
func (r *auRig) run() error {
	if r.master == "" {
		r.master = "Cpu"
	}
	ch, err := r.xp.AddMaster(r.master)
	Expect(err).NotTo(HaveOccurred())
	var beats []mem.Beat
	var from []clock.Cycle
	for i, q := range r.reqs {
		q.Master = r.master
		for _, b := range mem.WriteBeats(q, r.data[i], 8) {
			beats = append(beats, b)
			from = append(from, r.at[i])
		}
	}
	i := 0
	var m *vtest.Agent
	m = vtest.NewAgent(r.e, "Cpu", xpClock, func(now clock.Time, c clock.Cycle) bool {
		ch.Up.Pop(now)
		if i < len(beats) && c < from[i] {
			m.WakeAt(xpClock.TimeOf(from[i]))
			return false
		}
		if i < len(beats) && ch.Down.CanPush(now) {
			ch.Down.Push(now, beats[i])
			i++
		}
		return i < len(beats)
	})
	ch.ConnectMaster(m)
	m.Start()

	far := r.lnk.From(link.A)
	back := r.lnk.From(link.B)
	var cur *rigPkt
	var bytes []byte
	k := 0
	var sink *vtest.Agent
	sink = vtest.NewAgent(r.e, "Far", linkClock, func(now clock.Time, c clock.Cycle) bool {
		busy := false
		if k < len(r.inject) && c >= r.injectAt {
			if back.CanSend(now, 0) {
				back.Send(now, &r.inject[k])
				k++
			}
			busy = true
		} else if k < len(r.inject) {
			sink.WakeAt(linkClock.TimeOf(r.injectAt))
		}
		if c < r.popFrom {
			sink.WakeAt(linkClock.TimeOf(r.popFrom))
			return busy
		}
		f, ok := far.Rx(0).Pop(now)
		if !ok {
			return busy
		}
		if f.Head {
			cur = &rigPkt{Head: c}
			bytes = nil
			if p, ok := f.Meta().(*shrimp.Packet); ok {
				cur.Flush = p.Flush
			}
		}
		cur.Flits++
		bytes = append(bytes, f.Data...)
		if f.Tail {
			cur.Tail = c
			h, err := shrimp.DecodeHeader(bytes[2:10])
			Expect(err).NotTo(HaveOccurred())
			Expect(bytes[:2]).To(Equal([]byte{byte(f.Dst()), 0}))
			cur.Hdr = h
			cur.Data = bytes[10:]
			r.got = append(r.got, *cur)
			cur = nil
		}
		return true
	})
	far.SetReceiver(sink)
	back.SetSender(sink)
	sink.Start()
	_, err = r.e.Run()
	return err
}

// records returns the trace records of kind, formatted.
func (r *auRig) records(kind string) []string {
	var out []string
	for _, rec := range r.e.Trace.Records() {
		if rec.Kind == kind {
			out = append(out, rec.Format())
		}
	}
	return out
}

func word(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b + byte(i)
	}
	return out
}

var _ = Describe("NI automatic update", func() {
	It("sends a one-word AU store as one packet, on hand-worked cycles", func() {
		r := newAURig(rigConfig(), nil, 0)
		r.bind(1, 2, 5, false, 0)
		r.store(0, 0x1010, word(0xa0, 4))
		Expect(r.run()).To(Succeed())
		// Xpress (arbitration 1, address 1): the master pushes at c0, ARB
		// c1, ADDR c2, the data phase at c3 = 100 ns, where the observer
		// latches the beat.
		Expect(r.records("bus.wt.write")).To(HaveLen(1))
		Expect(r.records("bus.wt.write")[0]).To(HavePrefix("100000 3 Xp bus.wt.write"))
		// The snoop register pops it at c4 and reads the OPT (OPTCycles
		// 1); at c5 = 166.667 ns the packetiser makes the packet (no
		// combining: flush=store) and writes its header and data word.
		// Page 1 is bound to node 2's page 5: 5 x 4096 + 0x10 = 0x5010.
		h := "hash=" + hashOf(word(0xa0, 4))
		Expect(r.records("shrimp.snoop")).To(Equal([]string{
			"166667 5 N0.NI shrimp.snoop addr=0x1010 len=4 dst=2 dstaddr=0x5010 " + h}))
		Expect(r.records("shrimp.pkt")).To(Equal([]string{
			"166667 5 N0.NI shrimp.pkt kind=au dst=2 addr=0x5010 src_addr=0x1010 len=4 notify=0 flush=store " + h}))
		// c6: the arbiter takes it (OnPacketOut); the port moves the header
		// word at c7 (233.333 ns = link cycle 23) and the data word at c8
		// (266.667 ns = link cycle 26), each visible NICDelayCycles = 10
		// link cycles later: from link cycles 34 and 37.
		Expect(r.outs).To(Equal([]clock.Cycle{6}))
		// Link cycle 34 (340 ns): the route flit leaves, then the 4 header
		// flits at 35..38, the data word's 2 flits at 39, 40 (popped at 39,
		// after the header's flits). 1 route + 4 header + 2 data = 7 flits.
		Expect(r.records("shrimp.tx")).To(Equal([]string{
			"340000 34 N0.NI shrimp.tx kind=au src=0 dst=2 seq=1 addr=0x5010 len=4 flits=7 " + h}))
		// A flit sent at cycle t is visible to the far end from t + 1: head
		// popped at 35, tail at 41.
		Expect(r.got).To(Equal([]rigPkt{{Head: 35, Tail: 41, Flits: 7, Flush: shrimp.FlushStore,
			Hdr: shrimp.Packet{Kind: shrimp.KindAU, Src: 0, DstAddr: 0x5010, Len: 4}, Data: word(0xa0, 4)}}))
		Expect(r.ni.Counters()).To(Equal(shrimp.Counters{Snooped: 1, AUPackets: 1, AUBytes: 4,
			FlushBy: [shrimp.NumFlush]uint64{shrimp.FlushStore: 1}, FIFOMax: 16}))
		Expect(r.snoop).To(Equal(1))
		Expect(r.ni.Idle()).To(BeTrue())
		Expect(r.ni.FIFOOccupancy()).To(BeZero())
		// The waveform names follow the convention (N0.NI.OutFIFO ->
		// n0.ni.out_fifo) and end idle.
		for _, n := range []string{"n0.ni.out.open_len", "n0.ni.net.port", "n0.ni.out_fifo.occupancy", "n0.ni.net_tx.occupancy"} {
			Expect(r.e.Waves.Lookup(n)).NotTo(BeNil(), n)
		}
		Expect(r.e.Waves.Lookup("n0.ni.out_fifo.occupancy").Value()).To(BeZero())
	})

	It("ignores a write to a page that is not AU-enabled", func() {
		r := newAURig(rigConfig(), nil, 0)
		r.bind(1, 2, 5, false, 0)
		Expect(r.ni.SetOPT(3, shrimp.OPTEntry{Valid: true, DstNode: 1, DstPage: 7})).To(Succeed()) // imported, not AU
		r.store(0, 0x2010, word(1, 8))                                                             // page 2: no entry
		r.store(0, 0x3010, word(1, 8))                                                             // page 3: valid, AU off
		Expect(r.run()).To(Succeed())
		Expect(r.got).To(BeEmpty())
		Expect(r.snoop).To(BeZero())
		Expect(r.ni.Counters()).To(Equal(shrimp.Counters{Snooped: 2, AUIgnored: 2}))
	})

	It("ignores the DMA master's writes unless SnoopDMA", func() {
		for _, on := range []bool{false, true} {
			cfg := rigConfig()
			cfg.SnoopDMA = on
			r := newAURig(cfg, nil, 0)
			r.master = "Bridge" // the incoming DMA's bridge on the memory bus
			r.bind(1, 2, 5, false, 0)
			r.store(0, 0x1010, word(1, 8))
			Expect(r.run()).To(Succeed())
			if on {
				Expect(summaries(r.got)).To(Equal([]pktSummary{{0x5010, 8, shrimp.FlushStore}}))
				Expect(r.ni.Counters().Snooped).To(Equal(uint64(1)))
			} else {
				Expect(r.got).To(BeEmpty())
				Expect(r.ni.Counters()).To(Equal(shrimp.Counters{}))
			}
		}
	})
})

// pktSummary is what the combining specs compare of a received packet.
type pktSummary struct {
	Addr  uint64
	Len   int
	Flush shrimp.Flush
}

func summaries(got []rigPkt) []pktSummary {
	var out []pktSummary
	for _, p := range got {
		out = append(out, pktSummary{p.Hdr.DstAddr, p.Hdr.Len, p.Flush})
	}
	return out
}

var _ = Describe("NI combining", func() {
	// The master's write-through stores each take the Xpress for
	// arbitration, address, data and idle: data phases at c3, c7, c11, ...
	// (4 cycles apart), each seen by the packetiser 2 cycles later (snoop
	// register, OPT lookup): c5, c9, c13, ...

	It("combines consecutive stores until a non-consecutive one, then flushes the last by the timer", func() {
		r := newAURig(rigConfig(), nil, 0)
		r.bind(1, 2, 5, true, 0)
		r.store(0, 0x1000, word(1, 4))
		r.store(0, 0x1004, word(5, 4))
		r.store(0, 0x1008, word(9, 8))
		r.store(0, 0x1100, word(20, 8))
		Expect(r.run()).To(Succeed())
		// Stores 2 and 3 join the packet opened at c5; the fourth (0x1100,
		// not 0x1010) closes it at c17 (17 x 33.333 ns = 566.667 ns) and
		// opens another, which no store follows: the timer closes it
		// CombineCycles = 32 cycles after its store, at c49 (1633.334 ns).
		Expect(r.records("shrimp.pkt")).To(Equal([]string{
			"566667 17 N0.NI shrimp.pkt kind=au dst=2 addr=0x5000 src_addr=0x1000 len=16 notify=0 flush=nonconsecutive hash=" +
				hashOf(append(append(word(1, 4), word(5, 4)...), word(9, 8)...)),
			"1633334 49 N0.NI shrimp.pkt kind=au dst=2 addr=0x5100 src_addr=0x1100 len=8 notify=0 flush=timer hash=" +
				hashOf(word(20, 8)),
		}))
		Expect(summaries(r.got)).To(Equal([]pktSummary{{0x5000, 16, shrimp.FlushNonConsecutive}, {0x5100, 8, shrimp.FlushTimer}}))
		Expect(r.got[0].Data).To(Equal(append(append(word(1, 4), word(5, 4)...), word(9, 8)...)))
		// 1 route + 4 header + 8 data flits.
		Expect(r.got[0].Flits).To(Equal(13))
		c := r.ni.Counters()
		Expect(c.Combined).To(Equal(uint64(2)))
		Expect(c.FlushBy).To(Equal([shrimp.NumFlush]uint64{shrimp.FlushNonConsecutive: 1, shrimp.FlushTimer: 1}))
		// At c17 the first packet (header + 2 data words = 24 B) is still in
		// the FIFO (the arbiter takes it at c18) when the second writes its
		// 2 words (16 B): 40 B.
		Expect(c.FIFOMax).To(Equal(40))
	})

	It("closes a packet at the page boundary; a store to the next (unbound) page is ignored", func() {
		r := newAURig(rigConfig(), nil, 0)
		r.bind(1, 2, 5, true, 0)
		r.store(0, 0x1ff0, word(1, 8))
		r.store(0, 0x1ff8, word(9, 8))
		r.store(0, 0x2000, word(17, 8))
		Expect(r.run()).To(Succeed())
		// The second store ends at 0x2000 (the page end): closed at c9.
		Expect(r.records("shrimp.pkt")).To(HaveLen(1))
		Expect(r.records("shrimp.pkt")[0]).To(HavePrefix("300000 9 N0.NI shrimp.pkt kind=au dst=2 addr=0x5ff0 src_addr=0x1ff0 len=16 notify=0 flush=page"))
		Expect(summaries(r.got)).To(Equal([]pktSummary{{0x5ff0, 16, shrimp.FlushPage}}))
		Expect(r.ni.Counters().AUIgnored).To(Equal(uint64(1)))
	})

	It("closes a packet at the OPT entry's sub-page boundary", func() {
		r := newAURig(rigConfig(), nil, 0)
		r.bind(1, 2, 5, true, 32)
		r.store(0, 0x1010, word(1, 8))
		r.store(0, 0x1018, word(9, 8))
		r.store(0, 0x1020, word(17, 8))
		Expect(r.run()).To(Succeed())
		// 0x1018 + 8 = 0x1020, a 32-B boundary: closed at c9; the third
		// store opens a new packet, closed by the timer at c13 + 32 = c45.
		Expect(r.records("shrimp.pkt")[0]).To(HavePrefix("300000 9 N0.NI shrimp.pkt kind=au dst=2 addr=0x5010 src_addr=0x1010 len=16 notify=0 flush=subpage"))
		Expect(r.records("shrimp.pkt")[1]).To(HavePrefix("1500000 45 N0.NI shrimp.pkt kind=au dst=2 addr=0x5020 src_addr=0x1020 len=8 notify=0 flush=timer"))
		Expect(summaries(r.got)).To(Equal([]pktSummary{{0x5010, 16, shrimp.FlushSubpage}, {0x5020, 8, shrimp.FlushTimer}}))
	})

	It("closes a packet that reaches MaxPacketBytes", func() {
		cfg := rigConfig()
		cfg.MaxPacketBytes = 16
		r := newAURig(cfg, nil, 0)
		r.bind(1, 2, 5, true, 0)
		r.store(0, 0x1000, word(1, 8))
		r.store(0, 0x1008, word(9, 8))
		r.store(0, 0x1010, word(17, 8))
		Expect(r.run()).To(Succeed())
		// 16 B at c9: full (0x1010 is no sub-page boundary with 4096).
		Expect(summaries(r.got)).To(Equal([]pktSummary{{0x5000, 16, shrimp.FlushFull}, {0x5010, 8, shrimp.FlushTimer}}))
		Expect(r.records("shrimp.pkt")[0]).To(HavePrefix("300000 9 N0.NI"))
	})

	It("sends a packet per store when combining is off in the NI, whatever the OPT says", func() {
		cfg := rigConfig()
		cfg.Combine = false
		r := newAURig(cfg, nil, 0)
		r.bind(1, 2, 5, true, 0)
		r.store(0, 0x1000, word(1, 4))
		r.store(0, 0x1004, word(5, 4))
		Expect(r.run()).To(Succeed())
		Expect(summaries(r.got)).To(Equal([]pktSummary{{0x5000, 4, shrimp.FlushStore}, {0x5004, 4, shrimp.FlushStore}}))
		Expect(r.ni.Counters().Combined).To(BeZero())
	})

	It("lets a non-consecutive store join the packet under shrimp.combine-gap", func() {
		r := newAURig(rigConfig(), map[string]int{"shrimp.combine-gap": 1}, 0)
		r.bind(1, 2, 5, true, 0)
		r.store(0, 0x1000, word(1, 4))
		r.store(0, 0x1008, word(9, 4)) // a gap of 4 bytes
		Expect(r.run()).To(Succeed())
		// One 8-B packet at 0x5000: the second store's bytes would land at
		// 0x5004, not 0x5008 (the scoreboard's catch in shrimptb).
		Expect(summaries(r.got)).To(Equal([]pktSummary{{0x5000, 8, shrimp.FlushTimer}}))
	})

	It("loses every Nth snooped beat under shrimp.snoop-skip", func() {
		r := newAURig(rigConfig(), map[string]int{"shrimp.snoop-skip": 2}, 0)
		r.bind(1, 2, 5, false, 0)
		r.store(0, 0x1000, word(1, 4))
		r.store(0, 0x1010, word(9, 4))
		r.store(0, 0x1020, word(9, 4))
		Expect(r.run()).To(Succeed())
		Expect(summaries(r.got)).To(Equal([]pktSummary{{0x5000, 4, shrimp.FlushStore}, {0x5020, 4, shrimp.FlushStore}}))
		Expect(r.ni.Counters().Snooped).To(Equal(uint64(3)))
		Expect(r.snoop).To(Equal(2))
	})
})

// fifoConfig is rigConfig with a small Outgoing FIFO: 128 B = 16 words
// (it must hold a packet of MaxPacketBytes 64: 1 + 8 words), threshold 64 B
// (the interrupt when more than 8 words are held), and a NIC TX FIFO of 2
// words, so that a blocked link backs up into the Outgoing FIFO quickly.
func fifoConfig() shrimp.Config {
	c := rigConfig()
	c.FIFOBytes, c.MaxPacketBytes, c.FIFOThreshold, c.NICTxBytes = 128, 64, 64, 16
	return c
}

// overflowViolations counts the run's shrimp.overflow reports.
func overflowViolations(e *env.Env) int {
	k := 0
	for _, v := range e.Monitor.Violations() {
		if v.Check == "shrimp.overflow" {
			k++
		}
	}
	return k
}

var _ = Describe("NI Outgoing FIFO", func() {
	// 4-B stores to page 1, one packet each (2 words = 16 B), a store
	// every 4 core cycles, while the far end pops nothing before link
	// cycle 3000 (30 µs = core cycle 900). Where the words wait when the
	// link is blocked: the link buffer takes the first packet (7 of its 16
	// flits); the NI then waits for that packet's credits before the next
	// head, so the second packet's header word sits in the flit sender and
	// its data word and the third packet's header word fill the NIC TX
	// FIFO (2 words); the port holds the third packet (its data word
	// waits). Every later store stays in the Outgoing FIFO: after k stores
	// it holds 1 + 2 (k - 3) words (the third's data word and two per later
	// store), more than 8 (the threshold) from the seventh store (9 words),
	// whose packetiser cycle is 5 + 6 x 4 = c29.
	const popFrom = 3000
	stores := func(r *auRig, k int) {
		r.bind(1, 2, 5, false, 0)
		for i := range k {
			r.store(0, 0x1000+uint64(8*i), word(byte(i), 4))
		}
	}

	It("raises the threshold interrupt once, on the rising crossing", func() {
		r := newAURig(fifoConfig(), nil, 0)
		r.popFrom = popFrom
		stores(r, 8)
		Expect(r.run()).To(Succeed())
		// The mark is judged once the cycle has settled: at c29 (966.667
		// ns), after the seventh store's 2 words made 9 (72 B).
		Expect(r.irqs).To(Equal([]clock.Cycle{29}))
		Expect(r.records("shrimp.fifo")).To(HaveLen(2))
		Expect(r.records("shrimp.fifo")[0]).To(Equal("966667 29 N0.NI shrimp.fifo event=above bytes=72"))
		// It falls once when the far end starts popping; no second
		// interrupt: 8 stores, 1 + 2 x 5 = 11 words at most (88 B).
		Expect(r.records("shrimp.fifo")[1]).To(ContainSubstring("event=below"))
		c := r.ni.Counters()
		Expect(c.ThresholdIRQs).To(Equal(uint64(1)))
		Expect(c.FIFOMax).To(Equal(88))
		Expect(c.Overflows).To(BeZero())
		Expect(r.got).To(HaveLen(8))
		Expect(r.ni.IRQPending()).To(Equal(shrimp.IRQThreshold))
	})

	It("drops and reports the stores that find it full (shrimp.overflow)", func() {
		r := newAURig(fifoConfig(), nil, 0)
		r.popFrom = popFrom
		stores(r, 12)
		err := r.run()
		Expect(err).To(MatchError(ContainSubstring("shrimp.overflow")))
		// After 10 stores the FIFO holds 1 + 2 x 7 = 15 of its 16 words;
		// stores 11 and 12 need 2 each and find 1: both are dropped.
		c := r.ni.Counters()
		Expect(c.Overflows).To(Equal(uint64(2)))
		Expect(overflowViolations(r.e)).To(Equal(2))
		Expect(r.drops).To(Equal([]shrimp.Drop{
			{Reason: shrimp.DropOverflow, Addr: 0x1050, Len: 4},
			{Reason: shrimp.DropOverflow, Addr: 0x1058, Len: 4},
		}))
		// Conservation: every store is a packet received or a drop.
		Expect(len(r.got) + len(r.drops)).To(Equal(12))
		Expect(c.ThresholdIRQs).To(Equal(uint64(1)))
	})

	It("raises no interrupt under shrimp.no-threshold, and the overflow is still reported", func() {
		r := newAURig(fifoConfig(), map[string]int{"shrimp.no-threshold": 1}, 0)
		r.popFrom = popFrom
		stores(r, 12)
		Expect(r.run()).To(MatchError(ContainSubstring("shrimp.overflow")))
		Expect(r.irqs).To(BeEmpty())
		Expect(r.ni.Counters().ThresholdIRQs).To(BeZero())
		Expect(r.ni.Counters().Overflows).To(Equal(uint64(2)))
	})
})

// inFlits returns the 2-B flits of a packet from node src to node 0 with
// data at dstAddr, as the network delivers them to the NI.
func inFlits(id uint64, src int, dstAddr uint64, data []byte) []link.Flit {
	p := &shrimp.Packet{Kind: shrimp.KindAU, Src: src, DstAddr: dstAddr, Len: len(data), Data: data}
	h := shrimp.EncodeHeader(p)
	b := append([]byte{0, 0}, h[:]...)
	b = append(b, data...)
	var out []link.Flit
	for i := 0; i < len(b); i += 2 {
		out = append(out, link.Flit{Seq: int32(i / 2), Data: b[i : i+2], Size: 2, Head: i == 0, Tail: i+2 >= len(b), Info: &link.PacketInfo{ID: id, Src: src, Dst: 0, Meta: p}, Carries: link.HasMeta})
	}
	return out
}

var _ = Describe("NI port", func() {
	// An outgoing 64-B packet: 8 stores of 8 B to a page with 64-B
	// sub-pages, the last (packetiser c5 + 7 x 4 = c33) closes it; the
	// arbiter picks it at c34 and the port would move its 9 words at
	// c35..c43. An incoming 64-B packet from node 3 is sent from link
	// cycle 101, a flit per cycle: its header word completes with flit 5
	// (popped at link 106) and is visible to the port after link 116
	// (1160 ns: core c35); data word j completes with flit 9 + 4j and is
	// visible after link 120 + 4j: core c37, c38, c39, c40, c41, c43, c44,
	// c45 (the first core edge strictly after 1200 + 40j ns).
	run := func(incoming bool) *auRig {
		// The incoming words stay in the incoming stream (no EISA bus
		// here): the run ends at a 30 µs limit (an agent due at c1000 = 33
		// µs keeps the engine from running dry before it).
		r := newAURig(rigConfig(), nil, clock.Time(30_000_000))
		vtest.AtCycle(r.e, "Limit", xpClock, 1000, func(clock.Time) {})
		r.bind(1, 2, 5, true, 64)
		for i := range 8 {
			r.store(0, 0x1000+uint64(8*i), word(byte(8*i), 8))
		}
		if incoming {
			r.inject = inFlits(1, 3, 0x7000, word(100, 64))
			r.injectAt = 101
		}
		Expect(r.run()).To(Succeed())
		return r
	}

	It("gives incoming words the NIC port first (SH-P23); the outgoing packet waits a cycle for each", func() {
		alone := run(false)
		Expect(alone.ni.Counters().NICOutWaitCycles).To(BeZero())
		both := run(true)
		// Each of the 9 incoming words reaches the port while the outgoing
		// packet is being moved (c35..c45) and takes the port's cycle: the
		// outgoing packet waits 9 cycles (its NIC TX FIFO, 64 words, never
		// fills).
		Expect(both.ni.Counters().NICOutWaitCycles).To(Equal(uint64(9)))
		Expect(summaries(both.got)).To(Equal([]pktSummary{{0x5000, 64, shrimp.FlushSubpage}}))
		Expect(both.got[0].Data).To(Equal(alone.got[0].Data))
		// The link (40 ns per data word) hides part of the port's delay,
		// not all of it.
		Expect(both.got[0].Tail).To(BeNumerically(">", alone.got[0].Tail))
	})
})

var _ = Describe("NI determinism", func() {
	It("gives the same trace whichever of the bus and the NI ticks first", func() {
		diff := vtest.SameInEveryOrder(2, func(order []int) []string {
			r := newAURigOrder(fifoConfig(), nil, 0, order)
			r.popFrom = 500
			r.bind(1, 2, 5, true, 32)
			r.bind(2, 3, 6, false, 0)
			for i := range 12 {
				r.store(0, 0x1000+uint64(4*i), word(byte(i), 4))
				r.store(0, 0x2000+uint64(8*i), word(byte(i), 8))
			}
			// The far end pops from 5 µs: the FIFO overflows (reported, part
			// of what must not depend on the order).
			err := r.run()
			Expect(err).To(MatchError(ContainSubstring("shrimp.overflow")))
			out := []string{err.Error(), fmt.Sprint(r.ni.Counters())}
			for _, rec := range r.e.Trace.Records() {
				out = append(out, rec.Format())
			}
			return out
		})
		Expect(diff).To(BeEmpty())
	})
})

// withEISA gives the rig's NI an EISA bus (rtl/bus's preset on the NI's
// EISA clock) with a 1 MB memory "EMem" at 0 (the DU engine's source; its
// bytes count from 0) and a master "CPU" that issues the UDMA pairs queued
// by udma, one reference at a time, from EISA cycle from on.
func (r *auRig) withEISA(cfg shrimp.Config, from clock.Cycle, pairs [][3]int) {
	bc := bus.EISA()
	bc.Clock = cfg.EISAClock
	eisa, err := bus.MakeBuilder().WithEnv(r.e).WithConfig(bc).Build("EISA")
	Expect(err).NotTo(HaveOccurred())
	em, err := mem.MakeBuilder().WithEnv(r.e).WithClock(cfg.EISAClock).WithSize(1 << 20).WithLatency(1).
		WithBytesPerCycle(4).WithPortWidth(4).Build("EMem")
	Expect(err).NotTo(HaveOccurred())
	Expect(eisa.AddTarget("EMem", 0, 1<<20, em.Port(0))).To(Succeed())
	Expect(em.Storage().Write(0, word(0, 256))).To(Succeed())
	ch, err := eisa.AddMaster("CPU")
	Expect(err).NotTo(HaveOccurred())
	am := shrimp.DefaultAddressMap()
	Expect(r.ni.AttachEISA(eisa, am)).To(Succeed())
	// Each pair {opt, count, src}: STORE count to the device proxy of OPT
	// entry opt (offset 0), LOAD the memory proxy at src.
	var reqs []*mem.Req
	var data [][]byte
	for _, p := range pairs {
		reqs = append(reqs, &mem.Req{Op: mem.Write, Addr: am.DevProxy + uint64(p[0])*4096, Len: 4, Posted: true,
			Class: "pio", Master: "CPU"})
		data = append(data, []byte{byte(p[1]), byte(p[1] >> 8), 0, 0})
		reqs = append(reqs, &mem.Req{Op: mem.Read, Addr: am.MemProxy + uint64(p[2]), Len: 4, Class: "pio", Master: "CPU"})
		data = append(data, nil)
	}
	k, waiting := 0, false
	var a *vtest.Agent
	a = vtest.NewAgent(r.e, "CPU", cfg.EISAClock, func(now clock.Time, c clock.Cycle) bool {
		if c < from {
			a.WakeAt(cfg.EISAClock.TimeOf(from))
			return false
		}
		if waiting {
			if _, ok := ch.Up.Pop(now); !ok {
				return false
			}
			waiting = false
		}
		if k == len(reqs) || !ch.Down.CanPush(now) {
			return k < len(reqs)
		}
		q := reqs[k]
		ch.Down.Push(now, mem.Beat{Req: q, Data: data[k], First: true, Last: true})
		waiting = q.Op == mem.Read
		k++
		return true
	})
	ch.ConnectMaster(a)
	a.Start()
}

var _ = Describe("NI outgoing arbiter", func() {
	It("alternates AU and DU packets when both wait (round robin per packet)", func() {
		cfg := rigConfig()
		cfg.DUQueue = 2
		cfg.NICTxBytes = 16
		r := newAURig(cfg, nil, 0)
		// The far end pops nothing before 20 µs: AU packets (a 4-B store
		// every 4 core cycles to page 1, 40 of them) and three 64-B DU
		// transfers (OPT entry 9 imported from node 3, issued from EISA
		// cycle 10 and queued: DUQueue 2) back up in the Outgoing FIFO and
		// the DU stream behind a NIC TX FIFO of 2 words, so that when the
		// link frees both have packets waiting.
		r.popFrom = 2000
		r.bind(1, 2, 5, false, 0)
		Expect(r.ni.SetOPT(9, shrimp.OPTEntry{Valid: true, DstNode: 3, DstPage: 4})).To(Succeed())
		for i := range 40 {
			r.store(0, 0x1000+uint64(8*i), word(byte(i), 4))
		}
		var kinds []shrimp.Kind
		r.ni.OnPacketOut(func(_ clock.Time, p *shrimp.Packet) { kinds = append(kinds, p.Kind) })
		r.withEISA(cfg, 10, [][3]int{{9, 64, 0}, {9, 64, 64}, {9, 64, 128}})
		Expect(r.run()).To(Succeed())
		Expect(r.ni.Counters().DUPackets).To(Equal(uint64(3)))
		Expect(kinds).To(HaveLen(43))
		// From the first DU pick on, while AU packets wait, the kinds
		// alternate: DU, AU, DU, AU, DU (a DU-first arbiter would give DU,
		// DU, DU; an arrival-order one would put the DUs after the AU
		// backlog).
		j := 0
		for kinds[j] != shrimp.KindDU {
			j++
		}
		Expect(kinds[j : j+5]).To(Equal([]shrimp.Kind{shrimp.KindDU, shrimp.KindAU, shrimp.KindDU, shrimp.KindAU, shrimp.KindDU}))
		var du []rigPkt
		for _, p := range r.got {
			if p.Hdr.Kind == shrimp.KindDU {
				du = append(du, p)
			}
		}
		Expect(du).To(HaveLen(3))
		Expect(du[1].Data).To(Equal(word(64, 64)))
		Expect(du[1].Hdr.DstAddr).To(Equal(uint64(4 * 4096)))
	})
})

func hashOf(b []byte) string { return trace.HashBytes(b) }
