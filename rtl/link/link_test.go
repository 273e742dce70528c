package link_test

import (
	"unsafe"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Link", func() {
	var (
		e   *env.Env
		l   *link.Link
		clk = clock.MHz(100)
	)

	build := func(cfg link.Config) {
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		var err error
		l, err = link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("Link")
		Expect(err).NotTo(HaveOccurred())
	}

	// packet returns n flits of one packet, each carrying size bytes.
	packet := func(id uint64, n, size int) []link.Flit {
		fl := make([]link.Flit, n)
		for i := range fl {
			data := make([]byte, size)
			for k := range data {
				data[k] = byte(int(id)*31 + i*7 + k)
			}
			fl[i] = link.Flit{Seq: int32(i), Head: i == 0, Tail: i == n-1, Data: data, Info: &link.PacketInfo{ID: id}}
		}
		return fl
	}

	// packets returns n packets of flitsPer flits of size bytes each.
	packets := func(n, flitsPer, size int) []link.Flit {
		var fl []link.Flit
		for p := range n {
			fl = append(fl, packet(uint64(p), flitsPer, size)...)
		}
		return fl
	}

	// drive sends the flits from side A as fast as the transmit queue takes
	// them and pops at side B from cycle popFrom on, one per cycle.
	drive := func(flits []link.Flit, popFrom clock.Cycle) *[]clock.Cycle {
		d := l.From(link.A)
		var pops []clock.Cycle
		i := 0
		snd := vtest.NewAgent(e, "Snd", clk, func(now clock.Time, c clock.Cycle) bool {
			if i < len(flits) && d.Tx(0).CanPush(now) {
				d.Tx(0).Push(now, flits[i])
				i++
			}
			return i < len(flits)
		})
		rcv := vtest.NewAgent(e, "Rcv", clk, func(now clock.Time, c clock.Cycle) bool {
			if c < popFrom {
				return true
			}
			if _, ok := d.Rx(0).Pop(now); ok {
				pops = append(pops, c)
			}
			return len(pops) < len(flits) && (i < len(flits) || d.Rx(0).Len() > 0 || !l.Idle())
		})
		d.Connect(snd, rcv)
		snd.Start()
		rcv.Start()
		return &pops
	}

	It("serialises, delays and back-pressures with credits", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.DelayCycles, cfg.BufferFlits, cfg.CreditDelay = 4, 2, 2, 1
		build(cfg)
		pops := drive(packet(1, 4, 8), 10)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Worked by hand. An 8-byte flit takes 2 cycles at 4 B/cycle. f0
		// starts at c1, leaves at c2, arrives at c4; f1 starts c3 (the last
		// credit), arrives c6. f2 waits for a credit: the receiver pops f0 at
		// c10, the credit is usable at c11, f2 arrives at c14 and is popped
		// at c15; f1's pop at c11 frees the credit f3 uses from c12 (it
		// starts c13 after f2), arriving at c16, popped at c17.
		Expect(*pops).To(Equal([]clock.Cycle{10, 11, 15, 17}))
		st := l.From(link.A).Stats()
		Expect(st.Flits).To(Equal(uint64(4)))
		Expect(st.Packets).To(Equal(uint64(1)))
		Expect(st.CreditStalls).To(BeNumerically(">", 0))
		Expect(l.From(link.A).Credits(0)).To(Equal(2))
	})

	It("runs at full rate when the buffer covers the credit round trip", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.DelayCycles, cfg.BufferFlits, cfg.CreditDelay = 4, 3, 8, 2
		cfg.TraceFlits = false
		build(cfg)
		flits := packets(100, 1, 4)
		pops := drive(flits, 0)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// One 4-byte flit per cycle from c1: the last leaves at c100 and
		// arrives at c103; the receiver pops it at c104.
		Expect((*pops)[99]).To(Equal(clock.Cycle(104)))
		Expect(l.From(link.A).Stats().CreditStalls).To(BeZero())
	})

	It("is limited by the credit round trip when the buffer is small", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.DelayCycles, cfg.BufferFlits, cfg.CreditDelay = 4, 3, 2, 2
		cfg.TraceFlits = false
		build(cfg)
		flits := packets(100, 1, 4)
		pops := drive(flits, 0)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// A credit spent at edge s comes back usable at s+6 (arrival s+3,
		// pop s+4, credit delay 2): 2 credits per 6-cycle round trip, so 100
		// flits take about 300 cycles.
		Expect(int((*pops)[99])).To(BeNumerically("~", 300, 6))
		// The sender runs out of credits about once per round trip.
		Expect(l.From(link.A).Stats().CreditStalls).To(BeNumerically("~", 50, 2))
	})

	Describe("STOP/GO", func() {
		stopGo := func(slack int) link.Config {
			return link.Config{Clock: clk, BytesPerCycle: 4, DelayCycles: 2, FlowControl: link.StopGo,
				SlackBytes: slack, StopAt: 16, GoAt: 8, TxDepth: 2, TraceFlits: true}
		}

		It("stops the sender before the slack buffer overflows", func() {
			build(stopGo(40))
			flits := packets(12, 1, 4)
			pops := drive(flits, 30)
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(*pops).To(HaveLen(12))
			// STOP leaves when the 5th flit lifts occupancy past 16 bytes;
			// it reaches the sender 2 cycles later, by when 3 more flits have
			// left: 8 flits, 32 bytes, at most.
			Expect(l.From(link.A).Stats().MaxRxBytes).To(Equal(32))
			// One wait for GO, however many times the sender asked: GO
			// leaves once the receiver (popping from c30, one flit a cycle)
			// has brought the 8 flits down to 2 (8 bytes), and the last 4
			// flits, sent one a cycle while one a cycle is popped, never
			// lift occupancy back to 16 bytes.
			Expect(l.From(link.A).Stats().StopStalls).To(Equal(uint64(1)))
		})

		It("reports an overflow when the slack is too small for the round trip", func() {
			build(stopGo(28))
			flits := packets(12, 1, 4)
			drive(flits, 30)
			_, err := e.Run()
			Expect(err).To(MatchError(ContainSubstring("link.overflow")))
		})
	})

	It("detects every injected corruption with the CRC and flags the packet", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.BufferFlits, cfg.CorruptProb = 8, 4, 1
		build(cfg)
		flits := packets(5, 3, 8)
		var bad int
		d := l.From(link.A)
		i := 0
		snd := vtest.NewAgent(e, "Snd", clk, func(now clock.Time, c clock.Cycle) bool {
			if i < len(flits) && d.Tx(0).CanPush(now) {
				d.Tx(0).Push(now, flits[i])
				i++
			}
			return i < len(flits)
		})
		rcv := vtest.NewAgent(e, "Rcv", clk, func(now clock.Time, c clock.Cycle) bool {
			f, ok := d.Rx(0).Pop(now)
			if ok && f.Tail && f.Bad {
				bad++
			}
			return ok
		})
		d.Connect(snd, rcv)
		snd.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(bad).To(Equal(5))
		Expect(d.Stats().CRCErrors).To(Equal(uint64(5)))
		Expect(d.Stats().Corrupted).To(Equal(uint64(5)))
		n := 0
		for _, r := range e.Trace.Records() {
			if v, _ := r.Get("crc"); r.Kind == "link.packet" && v == "bad" {
				n++
			}
		}
		Expect(n).To(Equal(5))
	})

	Describe("CorruptPacket, a directed link error", func() {
		// send drives the flits from side A and counts, per packet, the
		// tails that arrive Bad at side B.
		send := func(flits []link.Flit) map[uint64]bool {
			d := l.From(link.A)
			bad := map[uint64]bool{} // lookup only
			i := 0
			snd := vtest.NewAgent(e, "Snd", clk, func(now clock.Time, c clock.Cycle) bool {
				if i < len(flits) && d.Tx(0).CanPush(now) {
					d.Tx(0).Push(now, flits[i])
					i++
				}
				return i < len(flits)
			})
			rcv := vtest.NewAgent(e, "Rcv", clk, func(now clock.Time, c clock.Cycle) bool {
				f, ok := d.Rx(0).Pop(now)
				if ok && f.Tail {
					bad[f.Packet()] = f.Bad
				}
				return ok
			})
			d.Connect(snd, rcv)
			snd.Start()
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			return bad
		}
		cfg := func() link.Config {
			c := link.DefaultCredit(clk)
			c.BytesPerCycle, c.BufferFlits = 8, 4
			return c
		}
		It("corrupts exactly the n-th packet: its tail Bad, counted once, the others good", func() {
			build(cfg())
			Expect(l.From(link.A).CorruptPacket(2)).To(Succeed())
			bad := send(packets(4, 3, 8))
			Expect(bad).To(Equal(map[uint64]bool{0: false, 1: true, 2: false, 3: false}))
			s := l.From(link.A).Stats()
			Expect(s.Corrupted).To(Equal(uint64(1)))
			Expect(s.CRCErrors).To(Equal(uint64(1)))
			Expect(s.Packets).To(Equal(uint64(4)))
			Expect(l.From(link.B).Stats().Corrupted).To(BeZero())
		})
		It("works on a link that runs on its fast path (no tracing, no error injection) when armed before the run", func() {
			e = vtest.NewEnv(vtest.Options{Clock: clk})
			var err error
			l, err = link.MakeBuilder().WithEnv(e).WithConfig(cfg()).Build("Link")
			Expect(err).NotTo(HaveOccurred())
			Expect(l.From(link.A).CorruptPacket(1)).To(Succeed())
			bad := send(packets(3, 2, 8))
			Expect(bad).To(Equal(map[uint64]bool{0: true, 1: false, 2: false}))
			Expect(l.From(link.A).Stats().CRCErrors).To(Equal(uint64(1)))
		})
		It("refuses to arm a fast-path direction that has sent flits without a CRC", func() {
			e = vtest.NewEnv(vtest.Options{Clock: clk})
			var err error
			l, err = link.MakeBuilder().WithEnv(e).WithConfig(cfg()).Build("Link")
			Expect(err).NotTo(HaveOccurred())
			Expect(send(packets(3, 2, 8))).To(Equal(map[uint64]bool{0: false, 1: false, 2: false}))
			Expect(l.From(link.A).CorruptPacket(1)).To(MatchError(ContainSubstring("Link.AB: CorruptPacket after 6 flits")))
			Expect(l.From(link.B).CorruptPacket(1)).To(Succeed()) // B sent nothing
		})
		It("refuses a packet number below 1", func() {
			build(cfg())
			Expect(l.From(link.A).CorruptPacket(0)).To(MatchError(ContainSubstring("at least 1")))
		})
	})

	It("counts dropped packets and returns their credits", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.BufferFlits, cfg.DropProb = 8, 2, 1
		build(cfg)
		flits := packets(4, 2, 8)
		pops := drive(flits, 0)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(*pops).To(BeEmpty())
		Expect(l.From(link.A).Stats().Dropped).To(Equal(uint64(4)))
		Expect(l.From(link.A).Credits(0)).To(Equal(2))
	})

	It("keeps its two directions independent", func() {
		build(link.DefaultCredit(clk))
		ab, ba := l.From(link.A), l.From(link.B)
		sent := false
		var got []uint64
		a := vtest.NewAgent(e, "EndA", clk, func(now clock.Time, c clock.Cycle) bool {
			if !sent {
				ab.Tx(0).Push(now, link.Flit{Head: true, Tail: true, Data: []byte{1}, Info: &link.PacketInfo{ID: 1}})
				ba.Tx(0).Push(now, link.Flit{Head: true, Tail: true, Data: []byte{2}, Info: &link.PacketInfo{ID: 2}})
				sent = true
			}
			if f, ok := ab.Rx(0).Pop(now); ok {
				got = append(got, f.Packet())
			}
			if f, ok := ba.Rx(0).Pop(now); ok {
				got = append(got, f.Packet())
			}
			return len(got) < 2
		})
		a.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(ConsistOf(uint64(1), uint64(2)))
	})

	DescribeTable("rejects impossible parameters",
		func(mod func(*link.Config), msg string) {
			cfg := link.DefaultCredit(clk)
			mod(&cfg)
			_, err := link.MakeBuilder().WithEnv(env.New(env.Options{})).WithConfig(cfg).Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("zero rate", func(c *link.Config) { c.BytesPerCycle = 0 }, "bytes per cycle"),
		Entry("negative delay", func(c *link.Config) { c.DelayCycles = -1 }, "delay"),
		Entry("zero buffer", func(c *link.Config) { c.BufferFlits = 0 }, "buffer"),
		Entry("zero credit delay", func(c *link.Config) { c.CreditDelay = 0 }, "credit delay"),
		Entry("no VCs", func(c *link.Config) { c.VCs = 0 }, "VCs"),
		Entry("bad probability", func(c *link.Config) { c.DropProb = 1.5 }, "probabilities"),
		Entry("STOP above slack", func(c *link.Config) {
			c.FlowControl, c.VCs, c.SlackBytes, c.StopAt, c.GoAt = link.StopGo, 1, 16, 20, 4
		}, "thresholds"),
	)
})

var _ = Describe("Link without flow control", func() {
	It("never holds the sender back and drops what the receiver has no room for", func() {
		clk := clock.MHz(100)
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		cfg := link.Config{Clock: clk, BytesPerCycle: 8, VCs: 1, FlowControl: link.NoFlowControl, BufferFlits: 2, TxDepth: 1}
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("Atm")
		Expect(err).NotTo(HaveOccurred())
		d := l.From(link.A)
		sent := 0
		a := vtest.NewAgent(e, "Src", clk, func(now clock.Time, c clock.Cycle) bool {
			// One cell per cycle straight onto the wire; nobody reads.
			Expect(d.CanSend(now, 0)).To(BeTrue())
			d.Send(now, &link.Flit{Head: true, Tail: true, Data: make([]byte, 8), Info: &link.PacketInfo{ID: uint64(sent)}})
			sent++
			return sent < 5
		})
		d.Connect(a, nil)
		a.Start()
		_, err = e.Run()
		// The two cells the buffer holds are unfinished work for the
		// watchdog; the other three were dropped and counted.
		Expect(err).To(MatchError(ContainSubstring("Atm.AB.Rx[0]: 2/2 entries")))
		Expect(d.Stats().Overflows).To(Equal(uint64(3)))
		Expect(d.Rx(0).Stats().Drops).To(Equal(uint64(3)))
	})
})

var _ = Describe("Link fast path and shared buffers", func() {
	clk := clock.MHz(100)

	// stream sends n one-flit packets on alternating VCs as fast as
	// credits allow and pops at the far end from popFrom on; it returns the
	// pop cycles.
	stream := func(e *env.Env, cfg link.Config, n int, popFrom clock.Cycle) []clock.Cycle {
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("L")
		Expect(err).NotTo(HaveOccurred())
		d := l.From(link.A)
		var pops []clock.Cycle
		sent := 0
		snd := vtest.NewAgent(e, "S", clk, func(now clock.Time, c clock.Cycle) bool {
			vc := sent % cfg.VCs
			if sent < n && d.CanSend(now, vc) {
				d.Send(now, &link.Flit{VC: uint8(vc), Head: true, Tail: true, Data: []byte{1, 2, 3, 4}, Info: &link.PacketInfo{ID: uint64(sent)}})
				sent++
			}
			return sent < n
		})
		rcv := vtest.NewAgent(e, "R", clk, func(now clock.Time, c clock.Cycle) bool {
			if c < popFrom {
				return true
			}
			for vc := range cfg.VCs {
				if _, ok := d.Rx(vc).Pop(now); ok {
					pops = append(pops, c)
					break
				}
			}
			return len(pops) < n
		})
		d.Connect(snd, rcv)
		snd.Start()
		rcv.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		return pops
	}

	It("times flits identically whether they land at send time or at arrival", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.DelayCycles, cfg.VCs, cfg.BufferFlits, cfg.CreditDelay, cfg.TraceFlits = 4, 3, 2, 3, 2, false
		slow := stream(vtest.NewEnv(vtest.Options{Clock: clk, Trace: true}), cfg, 40, 5)
		fast := stream(env.New(env.Options{}), cfg, 40, 5)
		Expect(fast).To(Equal(slow))
		Expect(fast).To(HaveLen(40))
	})

	It("builds no transmit queues for TxDepth 0, and times Send the same", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.DelayCycles, cfg.VCs, cfg.BufferFlits, cfg.CreditDelay, cfg.TraceFlits = 4, 3, 2, 3, 2, false
		queued := stream(env.New(env.Options{}), cfg, 40, 5)
		cfg.TxDepth = 0
		Expect(cfg.Validate()).To(Succeed())
		bare := stream(env.New(env.Options{}), cfg, 40, 5)
		Expect(bare).To(Equal(queued))

		l, err := link.MakeBuilder().WithEnv(env.New(env.Options{})).WithConfig(cfg).Build("L")
		Expect(err).NotTo(HaveOccurred())
		d := l.From(link.B)
		Expect(d.HasTx()).To(BeFalse())
		Expect(l.From(link.A).HasTx()).To(BeFalse())
		Expect(func() { d.Tx(1) }).To(PanicWith(
			"link L.BA: Tx(1): the link was built with TxDepth 0 (no transmit queues); its sender must use CanSend and Send"))

		cfg.TxDepth = -1
		Expect(cfg.Validate()).To(MatchError("link transmit queue depth -1 must not be negative"))
	})

	It("bounds the VC buffer by its int32 credit counters, and keeps a direction small", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BufferFlits = 1 << 31
		Expect(cfg.Validate()).To(MatchError("link VC buffer 2147483648 flits must be at most 2147483647"))
		cfg.BufferFlits--
		Expect(cfg.Validate()).To(Succeed())
		// issue 16: a 32x32 mesh has 6,016 directions. Per-VC state is one
		// slice of structs; the direction itself is 464 bytes on 64-bit
		// (a 480-byte malloc class; it was 736 with 13 per-VC slices, 456
		// before the fault plan's pointer of issue 17).
		Expect(int(unsafe.Sizeof(link.Dir{}))).To(BeNumerically("<=", 480))
	})

	It("lets VCs share one pool of credits", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.VCs, cfg.BufferFlits, cfg.SharedBuffer = 4, 2, 3, true
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("L")
		Expect(err).NotTo(HaveOccurred())
		d := l.From(link.A)
		var refused bool
		a := vtest.NewAgent(e, "S", clk, func(now clock.Time, c clock.Cycle) bool {
			// Three flits on VC 1 use up the pool: VC 0 has no credit either.
			if c < 3 {
				d.Send(now, &link.Flit{VC: 1, Head: true, Tail: true, Data: []byte{1}})
				return true
			}
			refused = !d.CanSend(now, 0)
			return false
		})
		d.Connect(a, nil)
		a.Start()
		_, err = e.Run()
		Expect(refused).To(BeTrue())
		Expect(d.Rx(1).Len()).To(Equal(3))
		Expect(err).To(MatchError(ContainSubstring("L.AB.Rx[1]: 3/3 entries"))) // nobody read them
	})
})

var _ = Describe("Flit", func() {
	It("fits one cache line with its FIFO time: 56 bytes", func() {
		Expect(unsafe.Sizeof(link.Flit{})).To(BeEquivalentTo(56))
	})

	It("reads its packet's shared part, zero values without one", func() {
		var none link.Flit
		Expect(none.Packet()).To(BeZero())
		Expect(none.Src()).To(BeZero())
		Expect(none.Dst()).To(BeZero())
		Expect(none.Route()).To(BeNil())
		Expect(none.Meta()).To(BeNil())
		info := &link.PacketInfo{ID: 9, Src: 2, Dst: 5, Route: []byte{3, 1, 4}, Meta: "msg"}
		head := link.Flit{Info: info, Head: true, Carries: link.HasRoute | link.HasMeta}
		body := link.Flit{Info: info, Seq: 1}
		Expect([]any{head.Packet(), head.Src(), head.Dst(), head.Route(), head.Meta()}).To(Equal([]any{uint64(9), 2, 5, []byte{3, 1, 4}, any("msg")}))
		// A flit that does not carry Route or Meta reads them as nil, as
		// a producer that sets them on the head only means.
		Expect(body.Packet()).To(BeEquivalentTo(9))
		Expect(body.Route()).To(BeNil())
		Expect(body.Meta()).To(BeNil())
	})

	It("strips a route byte on its own copy only", func() {
		info := &link.PacketInfo{Route: []byte{3, 1, 4}}
		f := link.Flit{Info: info, Head: true, Carries: link.HasRoute}
		g := f
		g.StripRoute()
		Expect(g.Route()).To(Equal([]byte{1, 4}))
		Expect(f.Route()).To(Equal([]byte{3, 1, 4}))
		Expect(info.Route).To(Equal([]byte{3, 1, 4}))
	})

	It("gives a rewritten route its own shared part (copy on write)", func() {
		info := &link.PacketInfo{ID: 4, Dst: 1, Route: []byte{3, 1}, Meta: "m"}
		f := link.Flit{Info: info, Head: true, Carries: link.HasRoute | link.HasMeta}
		f.StripRoute()
		g := f
		g.SetRoute([]byte{7, 7, 7})
		Expect(g.Route()).To(Equal([]byte{7, 7, 7})) // hop reset with the new route
		Expect([]any{g.Packet(), g.Dst(), g.Meta()}).To(Equal([]any{uint64(4), 1, any("m")}))
		Expect(f.Route()).To(Equal([]byte{1}))
		Expect(info.Route).To(Equal([]byte{3, 1}))
		Expect(g.Info).NotTo(BeIdenticalTo(info))
	})
})
