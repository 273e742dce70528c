package lci_test

import (
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Section 4.2: «When a multicast packet arrives at an NI, the Multicast
// module copies it to the host, just like a unicast packet, and in
// addition creates a new Send Descriptor for each forwarding destination.
// These descriptors are enqueued just like send descriptors created by the
// host for unicast packets.»
var _ = Describe("Multicast forwarding through send descriptors", func() {
	var r *rig

	// Node 1 in node 0's binary tree over 8 nodes: rank 1, children of
	// rank 3 and 4 (nodes 3 and 4).
	setup := func(v lci.Variant) {
		cfg := testConfig()
		cfg.Variant = v
		r = newRig(cfg, 1, 8)
		r.hostInit(8)
		r.boot()
	}

	It("writes one descriptor per child into the NI's own send queue and passes them like the host's, in the cycles worked out", func() {
		setup(lci.PIO)
		// A unicast packet's handler first, for comparison: Dispatch 10
		// + Receive 25 + Deliver 25 + DMAStart 15 = 75 cycles (8
		// instructions * CPI 1.25 = 10, 20 -> 25, 12 -> 15).
		r.arrive(lci.Header{Type: lci.TypeData, Src: 2, Seq: 1}, payload(8, 0))
		Expect(r.c.Cycles()).To(Equal(10 + 25 + 25 + 15))
		r.settle()

		data := payload(20, 0x30)
		at := r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1, Arg: 0x77}, data)
		buf := (at - r.l.RecvBufs) / r.l.Buf

		// The two descriptors, as the Multicast module wrote them: the
		// child, the packet's length and tag, the receive buffer, the
		// forward flag and the queue's own sequence (valid mark).
		Expect(r.l.FwdQ).To(BeEquivalentTo(0x1a00))
		Expect(lci.DecodeDesc(r.sramRead(r.l.FwdQ, lci.DescBytes))).To(Equal(
			lci.Desc{Seq: 1, Type: lci.TypeMcast, Dst: 3, Len: 20, Buf: buf, Tag: 0x77, Flags: lci.DescFwd}))
		Expect(lci.DecodeDesc(r.sramRead(r.l.FwdQ+lci.DescBytes, lci.DescBytes))).To(Equal(
			lci.Desc{Seq: 2, Type: lci.TypeMcast, Dst: 4, Len: 20, Buf: buf, Tag: 0x77, Flags: lci.DescFwd}))

		// The handler and the pass that takes the first descriptor:
		//   Dispatch 10 + Receive 25 + Deliver 25 + DMAStart 15 (as a
		//   unicast packet), Forward 25 per child = 50 (build and write
		//   a descriptor); the main loop's next pass: Dispatch 10,
		//   HostSend 25, Transmit 25 for the first child, which starts
		//   the send engine, so the second descriptor waits for the
		//   pass after the next handler
		//   = 75 + 50 + 10 + 25 + 25 = 185 cycles.
		// Handing each child straight to flow control (before section
		// 4.2's descriptors were modelled) was 75 + 50 + 25 = 150.
		Expect(r.c.Cycles()).To(Equal(185))
		// SRAM bytes: the header 16, the forwarding table row 8, the
		// Free record 16, the slot header 16, two descriptors written
		// 64, one read 32, the first child's header 16 = 168.
		Expect(r.c.SRAMBytes()).To(Equal(168))

		// The first child's packet, from the receive buffer, with this
		// node as the source and the root's sequence and tag.
		fwd := lci.Header{Type: lci.TypeMcast, Src: 1, Len: 20, Root: 0, Seq: 1, Arg: 0x77}
		Expect(r.ni.lastSend().Packet).To(Equal(firmware.Packet{Dst: 3, SRAM: at, Len: lci.HeaderBytes + 20}))
		Expect(r.ni.lastSend().Hdr()).To(Equal(fwd))
		Expect(r.p.State()).To(HavePrefix("0 fetches, 1 forwards queued, 0 blocked, 0 ready"))
		Expect(r.p.Idle()).To(BeFalse(), "a queued forward is unfinished work")

		// The delivery's completion: Dispatch 10 + DMADone 13 (its
		// reference dropped, two left), then the pass that takes the
		// second descriptor: Dispatch 10 + HostSend 25; the engine is
		// busy, so the packet is ready behind it = 58 cycles.
		r.dmaDone()
		Expect(r.c.Cycles()).To(Equal(10 + 13 + 10 + 25))
		Expect(r.p.State()).To(HavePrefix("0 fetches, 0 forwards queued, 0 blocked, 1 ready"))
		Expect(r.freeRecvBufs()).To(Equal("30 receive buffers free"))
		// The first child's send completes: Dispatch 10 + SendDone 50,
		// Transmit 25 of the second = 85 cycles.
		r.sendDone()
		Expect(r.c.Cycles()).To(Equal(10 + 50 + 25))
		Expect(r.ni.lastSend().Packet).To(Equal(firmware.Packet{Dst: 4, SRAM: at, Len: lci.HeaderBytes + 20}))
		Expect(r.ni.lastSend().Hdr()).To(Equal(fwd))
		Expect(r.freeRecvBufs()).To(Equal("30 receive buffers free"))
		r.sendDone()
		Expect(r.freeRecvBufs()).To(Equal("31 receive buffers free"))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("takes a waiting descriptor in the first pass after the first child's send completes", func() {
		setup(lci.PIO)
		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1}, payload(4, 0))
		Expect(r.ni.sends).To(HaveLen(1))
		// SendDone first this time: Dispatch 10 + SendDone 50 (a
		// reference dropped; nothing ready, so no Transmit in the
		// handler), then the pass: Dispatch 10 + HostSend 25 +
		// Transmit 25 = 120 cycles.
		r.sendDone()
		Expect(r.c.Cycles()).To(Equal(10 + 50 + 10 + 25 + 25))
		Expect(r.ni.sends).To(HaveLen(2))
		Expect(r.ni.lastSend().Dst).To(Equal(4))
		r.settle()
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("takes the waiting descriptors before the host's new ones, in one pass", func() {
		setup(lci.PIO)
		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1}, payload(4, 0))
		Expect(r.p.State()).To(HavePrefix("0 fetches, 1 forwards queued"))
		// The host writes a packet to node 4 before the next handler:
		// the poll takes the forward to node 4 first (HostSend 25
		// each: Dispatch 10 + 25 + 25 = 60 cycles; the engine is busy).
		r.send(lci.Desc{Type: lci.TypeData, Dst: 4, Len: 0, Buf: 0})
		Expect(r.c.Cycles()).To(Equal(10 + 25 + 25))
		r.settle()
		var got []uint8
		for _, s := range r.ni.sends {
			got = append(got, s.Hdr().Type)
		}
		Expect(got).To(Equal([]uint8{lci.TypeMcast, lci.TypeMcast, lci.TypeData}))
		Expect(r.ni.sends[1].Dst).To(Equal(4))
		r.clean()
	})

	It("reuses the queue's slots in order", func() {
		setup(lci.PIO)
		r.autoReturn = true
		// Ten multicasts of node 0's tree, two descriptors each: 20
		// descriptors through the 16 slots, sequences 1 to 20. The
		// children return W/2 = 2 credits after every second one.
		for i := range 10 {
			r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: uint32(i + 1)}, payload(4, byte(i)))
			r.settle()
			for k := range 2 {
				seq := 2*i + k + 1
				d := lci.DecodeDesc(r.sramRead(r.l.FwdQ+uint32((seq-1)%lci.FwdQSlots*lci.DescBytes), lci.DescBytes))
				Expect(d.Seq).To(BeEquivalentTo(seq))
				Expect(d.Dst).To(BeEquivalentTo(3 + k))
			}
			if i%2 == 1 {
				r.arrive(lci.Header{Type: lci.TypeAck, Src: 3, Credits: 2}, nil)
				r.arrive(lci.Header{Type: lci.TypeAck, Src: 4, Credits: 2}, nil)
				r.settle()
			}
		}
		var got [][2]uint32
		for _, s := range r.ni.sends {
			if s.Hdr().Type == lci.TypeMcast {
				got = append(got, [2]uint32{uint32(s.Dst), s.Hdr().Seq})
			}
		}
		Expect(got).To(HaveLen(20))
		for i := range 10 {
			Expect(got[2*i : 2*i+2]).To(Equal([][2]uint32{{3, uint32(i + 1)}, {4, uint32(i + 1)}}))
		}
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("queues the forwards behind a host descriptor whose data is being fetched, and sends them after it (I-sdma)", func() {
		setup(lci.SDMA)
		Expect(r.host.Write(sendData, payload(8, 0x50))).To(Succeed())
		r.sendFrom(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 8, Buf: 0}, sendData)
		Expect(r.ni.dmas).To(HaveLen(1))
		Expect(r.state("hsq")).To(BeEquivalentTo("FETCH"))

		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1}, payload(4, 0))
		// Taken from the NI's queue (the pass ran in FETCH), but held in
		// the host send queue's order: nothing goes before the host's
		// packet, and the delivery waits for the DMA engine.
		Expect(r.ni.sends).To(BeEmpty())
		Expect(r.ni.dmas).To(HaveLen(1))
		Expect(r.p.State()).To(HavePrefix("1 fetches, 0 forwards queued, 0 blocked, 0 ready"))

		r.dmaDone() // the fetch: the host's packet, then both forwards, are ready
		Expect(r.ni.lastSend().Dst).To(Equal(2))
		r.settle()
		var dsts []int
		for _, s := range r.ni.sends {
			dsts = append(dsts, s.Dst)
		}
		Expect(dsts).To(Equal([]int{2, 3, 4}))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("subjects the forwards to NI-to-NI flow control: a child without credits waits for its acknowledgment", func() {
		setup(lci.PIO)
		w := r.cfg.Window()
		for i := range w {
			r.writeDesc(lci.Desc{Type: lci.TypeData, Dst: 3, Len: 0, Buf: uint32(i)})
		}
		r.pokeSendQ()
		r.settle()
		Expect(r.p.Credits(3)).To(Equal(0))

		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1}, payload(4, 0))
		Expect(r.state("fc")).To(BeEquivalentTo("BLOCKED"))
		r.settle()
		// Node 4's forward went; node 3's waits; the buffer stays held.
		Expect(r.ni.lastSend().Dst).To(Equal(4))
		Expect(r.freeRecvBufs()).To(Equal("30 receive buffers free"))

		r.arrive(lci.Header{Type: lci.TypeAck, Src: 3, Credits: 2}, nil)
		Expect(r.state("fc")).To(BeEquivalentTo("OPEN"))
		Expect(r.ni.lastSend().Dst).To(Equal(3))
		Expect(r.ni.lastSend().Hdr().Type).To(BeEquivalentTo(lci.TypeMcast))
		r.settle()
		Expect(r.freeRecvBufs()).To(Equal("31 receive buffers free"))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("holds the descriptors of a second packet that arrives while the first one's wait (2*FwdWidth - 1 at most)", func() {
		setup(lci.PIO)
		// Node 1 forwards root 0's packets to six children (a
		// forwarding table the host may write: at most FwdWidth).
		r.sramWrite(r.l.Fwd, []byte{2, 3, 4, 5, 6, 7, 0xff, 0xff})
		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1}, payload(4, 1))
		// The first child's packet went; five descriptors wait.
		Expect(r.ni.sends).To(HaveLen(1))
		Expect(r.p.State()).To(HavePrefix("0 fetches, 5 forwards queued"))
		// The second packet arrives before the send completes: its six
		// descriptors join the five (11 in the ring), and the engine
		// being busy, the passes take all eleven.
		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 2}, payload(4, 2))
		Expect(r.p.State()).To(HavePrefix("0 fetches, 0 forwards queued, 0 blocked, 11 ready"))
		r.settle()
		var got [][2]uint32
		for _, s := range r.ni.sends {
			if s.Hdr().Type == lci.TypeMcast { // not the ack to node 0
				got = append(got, [2]uint32{uint32(s.Dst), s.Hdr().Seq})
			}
		}
		Expect(got).To(Equal([][2]uint32{{2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1}, {2, 2}, {3, 2}, {4, 2}, {5, 2}, {6, 2}, {7, 2}}))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("refuses a host descriptor that carries the forward flag", func() {
		setup(lci.PIO)
		r.send(lci.Desc{Type: lci.TypeMcast, Len: 0, Buf: 0, Flags: lci.DescFwd})
		Expect(r.violations()).To(ConsistOf(ContainSubstring("lci.desc FW: bad send descriptor")))
		Expect(r.ni.sends).To(BeEmpty())
	})
})

// Section 4.3 and Table III: the P3's F&A round trip (7.4 µs) is shorter
// than its one-way end-to-end latency (8.8 µs), so the request is built
// from its descriptor, with no DMA of an operand.
var _ = Describe("A fetch-and-add request", func() {
	DescribeTable("carries its addend in the descriptor and leaves without a host DMA, in the cycles worked out",
		func(v lci.Variant) {
			cfg := testConfig()
			cfg.Variant = v
			r := newRig(cfg, 0, 8)
			r.hostInit(8)
			r.boot()
			r.send(lci.Desc{Type: lci.TypeFAReq, Dst: 2, Len: 0, Buf: 3, Tag: 7})
			// One handler: Dispatch 10 + HostSend 25 + Transmit 25 = 60
			// cycles; SRAM: the descriptor 32, the next slot (not yet
			// valid) 32, the header 16 = 80. A request with a 4-byte
			// operand under I-sdma took Dispatch 10 + HostSend 25 +
			// DMAStart 15, the DMA, then Dispatch 10 + DMADone 13 +
			// Transmit 25.
			Expect(r.c.Cycles()).To(Equal(60))
			Expect(r.c.SRAMBytes()).To(Equal(80))
			Expect(r.ni.dmas).To(BeEmpty())
			Expect(r.state("hsq")).To(BeEquivalentTo("IDLE"))
			Expect(r.ni.sends).To(HaveLen(1))
			s := r.ni.lastSend()
			Expect(s.Packet).To(Equal(firmware.Packet{Dst: 2, SRAM: r.l.SendBuf(3), Len: lci.HeaderBytes}))
			// No data sequence is taken (Seq 0: none sent to node 2 yet).
			Expect(s.Hdr()).To(Equal(lci.Header{Type: lci.TypeFAReq, Src: 0, Root: 0, Seq: 0, Arg: 7}))
			Expect(r.p.Credits(2)).To(Equal(r.cfg.Window() - 1))
			// The only host DMA is the send completion, after it left.
			r.sendDone()
			Expect(r.ni.dmas).To(Equal([]firmware.HostDMA{{Dir: firmware.ToHost, HostAddr: r.hdrAt(0),
				SRAM: r.l.SendBuf(3), Len: lci.HeaderBytes}}))
			r.settle()
			Expect(r.p.Idle()).To(BeTrue(), r.p.State())
			r.clean()
		},
		Entry("I-sdma", lci.SDMA),
		Entry("I-pio", lci.PIO),
	)

	It("to its own NI is served there: the send completion, then the reply with the old value in the next host slot, no packet", func() {
		r := newRig(testConfig(), 0, 8)
		r.hostInit(8)
		r.boot()
		r.send(lci.Desc{Type: lci.TypeFAReq, Dst: 0, Len: 0, Buf: 3, Tag: 7})
		r.settle()
		r.send(lci.Desc{Type: lci.TypeFAReq, Dst: 0, Len: 0, Buf: 4, Tag: 5})
		r.settle()
		Expect(r.ni.sends).To(BeEmpty())
		Expect(r.p.FetchAddValue()).To(BeEquivalentTo(12))
		// Slots: completion of buffer 3, reply 0, completion of 4, reply 7.
		Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 0, Tag: 3, Flag: 1}))
		Expect(r.slotHeader(r.slot(1))).To(Equal(lci.SlotHeader{Type: lci.TypeFARep, Src: 0, Tag: 0, Flag: 2}))
		Expect(r.slotHeader(r.slot(2))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 0, Tag: 4, Flag: 3}))
		Expect(r.slotHeader(r.slot(3))).To(Equal(lci.SlotHeader{Type: lci.TypeFARep, Src: 0, Tag: 7, Flag: 4}))
		Expect(r.violations()).To(BeEmpty())
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("is refused with an operand as data", func() {
		r := newRig(testConfig(), 0, 8)
		r.hostInit(8)
		r.boot()
		r.send(lci.Desc{Type: lci.TypeFAReq, Dst: 2, Len: 4, Buf: 0})
		Expect(r.violations()).To(ConsistOf(ContainSubstring("lci.desc FW: bad send descriptor")))
		Expect(r.ni.dmas).To(BeEmpty())
		Expect(r.ni.sends).To(BeEmpty())
	})
})
