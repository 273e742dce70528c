package lci_test

import (
	"encoding/binary"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// le4 is a 4-byte little-endian operand.
func le4(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

var _ = Describe("Receive path", func() {
	var r *rig

	BeforeEach(func() {
		r = newRig(testConfig(), 0, 8)
		r.hostInit(8)
		r.boot()
	})

	It("boots watching the host queues with the receive engine armed", func() {
		Expect(r.ni.watches).To(Equal([][2]uint32{
			{r.l.SendQ, uint32(r.l.SendQSlots * lci.DescBytes)},
			{r.l.FreeQ, uint32(r.l.FreeQSlots * lci.FreeBytes)},
		}))
		Expect(r.ni.arms).To(Equal([]armCmd{{r.l.RecvBuf(0), lci.HeaderBytes + r.cfg.MTU}}))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
	})

	It("delivers a packet with one DMA of data and slot header, and re-arms at once", func() {
		data := payload(20, 0x60)
		at := r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 7, Arg: 0x55}, data)
		Expect(at).To(Equal(r.l.RecvBuf(0)))
		// Re-armed in the same handler, with another buffer.
		Expect(r.ni.arms).To(HaveLen(2))
		Expect(r.ni.arms[1]).To(Equal(armCmd{r.l.RecvBuf(1), lci.HeaderBytes + r.cfg.MTU}))
		// The data ends where the slot header begins: hdrAt - len.
		Expect(r.ni.dmas).To(Equal([]firmware.HostDMA{{Dir: firmware.ToHost, HostAddr: r.hdrAt(0) - 20,
			SRAM: at + lci.HeaderBytes, Len: 20 + lci.HeaderBytes}}))
		want := lci.SlotHeader{Type: lci.TypeData, Src: 1, Len: 20, Tag: 0x55, Arg: 7, Flag: 1}
		Expect(lci.DecodeSlotHeader(r.sramRead(at+lci.HeaderBytes+20, lci.HeaderBytes))).To(Equal(want))
		Expect(r.sramRead(at+lci.HeaderBytes, 20)).To(Equal(data))
		Expect(r.freeRecvBufs()).To(Equal("30 receive buffers free"))

		r.dmaDone()
		got, err := r.host.Bytes(r.hdrAt(0)-20, 20)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(data))
		Expect(r.slotHeader(r.slot(0))).To(Equal(want))
		Expect(r.freeRecvBufs()).To(Equal("31 receive buffers free"))

		// The next packet goes to the next slot with the next flag; the
		// freed buffer is the next one armed.
		r.arrive(lci.Header{Type: lci.TypeData, Src: 3, Seq: 1}, payload(4, 0))
		Expect(r.ni.arms[2].Addr).To(Equal(r.l.RecvBuf(0)))
		r.dmaDone()
		Expect(r.slotHeader(r.slot(1))).To(Equal(lci.SlotHeader{Type: lci.TypeData, Src: 3, Len: 4, Arg: 1, Flag: 2}))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("keeps deliveries in order on the one DMA engine", func() {
		a := r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 1))
		b := r.arrive(lci.Header{Type: lci.TypeData, Src: 2, Seq: 1}, payload(12, 2))
		Expect(r.ni.dmas).To(HaveLen(1), "the second waits for the engine")
		r.dmaDone()
		Expect(r.ni.dmas).To(HaveLen(2))
		Expect(r.ni.dmas[0].SRAM).To(Equal(a + lci.HeaderBytes))
		Expect(r.ni.dmas[1]).To(Equal(firmware.HostDMA{Dir: firmware.ToHost, HostAddr: r.hdrAt(1) - 12,
			SRAM: b + lci.HeaderBytes, Len: 12 + lci.HeaderBytes}))
		r.dmaDone()
		Expect(r.slotHeader(r.slot(1)).Flag).To(BeEquivalentTo(2))
		r.clean()
	})

	It("reports a sender holding more than its W receive buffers", func() {
		// W = 4 packets from node 1 wait for host buffers that do not
		// come; its fifth is beyond the window it may use.
		r = newRig(testConfig(), 0, 8)
		r.hostInit(0)
		r.boot()
		for seq := 1; seq <= r.cfg.Window(); seq++ {
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: uint32(seq)}, payload(4, 0))
			r.arrive(lci.Header{Type: lci.TypeFARep, Src: 1}, nil) // spare buffers: not counted
		}
		r.clean()
		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 1, Root: 1, Seq: 1}, payload(4, 0))
		Expect(r.violations()).To(ConsistOf("lci.window FW: node 1 holds 5 receive buffers, more than its W = 4"))
	})

	It("reports and drops a packet whose length disagrees with its header", func() {
		free := r.freeRecvBufs()
		a := r.ni.armedAt()
		r.sramWrite(a.Addr, lci.Header{Type: lci.TypeData, Src: 1, Len: 4000}.Encode())
		r.ni.armed = false
		r.handle(firmware.HWEvent{Kind: firmware.RecvDone, Addr: a.Addr, Len: lci.HeaderBytes + 8, Src: 1, Tag: 7})
		Expect(r.violations()).To(ConsistOf(HavePrefix("lci.packet FW: malformed packet 7 from node 1: 24 bytes")))
		// Dropped: nothing goes to the host (a 4000-byte header length
		// once made a DMA outside the slot), the buffer is free again.
		Expect(r.ni.dmas).To(BeEmpty())
		Expect(r.freeRecvBufs()).To(Equal(free))
	})

	It("reports and drops a packet whose header names a node outside the cluster", func() {
		a := r.ni.armedAt()
		r.sramWrite(a.Addr, lci.Header{Type: lci.TypeData, Src: 9}.Encode())
		r.ni.armed = false
		// Once an index out of range (panic) in the window checker.
		r.handle(firmware.HWEvent{Kind: firmware.RecvDone, Addr: a.Addr, Len: lci.HeaderBytes, Src: 2, Tag: 8})
		Expect(r.violations()).To(ConsistOf(HavePrefix("lci.packet FW: malformed packet 8 from node 2")))
		Expect(r.ni.dmas).To(BeEmpty())
	})

	Describe("without free host buffers", func() {
		BeforeEach(func() {
			r = newRig(testConfig(), 0, 8)
			r.hostInit(0)
			r.boot()
		})

		It("holds deliveries until the host writes Free records", func() {
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 1))
			Expect(r.state("hrq")).To(BeEquivalentTo("WAIT"))
			Expect(r.ni.dmas).To(BeEmpty())
			r.arrive(lci.Header{Type: lci.TypeData, Src: 2, Seq: 1}, payload(12, 2))
			Expect(r.state("hrq")).To(BeEquivalentTo("WAIT"))
			Expect(r.ni.dmas).To(BeEmpty())
			Expect(r.p.Idle()).To(BeFalse())

			// One buffer: the first packet goes, the second still waits.
			r.writeFree(r.slot(5))
			r.pokeFreeQ()
			Expect(r.ni.dmas).To(HaveLen(1))
			Expect(r.ni.lastDMA().HostAddr).To(Equal(r.hdrAt(5) - 8))
			Expect(r.state("hrq")).To(BeEquivalentTo("WAIT"))

			// A second: the last waiting packet has one, so hrq has
			// buffers again (its DMA waits for the engine).
			r.writeFree(r.slot(6))
			r.pokeFreeQ()
			Expect(r.state("hrq")).To(BeEquivalentTo("HAVE"))
			Expect(r.ni.dmas).To(HaveLen(1))
			r.dmaDone()
			Expect(r.ni.lastDMA().HostAddr).To(Equal(r.hdrAt(6) - 12))
			r.dmaDone()
			Expect(r.slotHeader(r.slot(5))).To(Equal(lci.SlotHeader{Type: lci.TypeData, Src: 1, Len: 8, Arg: 1, Flag: 1}))
			Expect(r.slotHeader(r.slot(6))).To(Equal(lci.SlotHeader{Type: lci.TypeData, Src: 2, Len: 12, Arg: 1, Flag: 2}))

			// A Free record while buffers are at hand is just noted.
			r.writeFree(r.slot(7))
			r.pokeFreeQ()
			Expect(r.state("hrq")).To(BeEquivalentTo("HAVE"))
			Expect(r.ni.dmas).To(HaveLen(2))
			Expect(r.p.Idle()).To(BeTrue(), r.p.State())
			r.clean()
		})

		It("starves the receive engine when every buffer is held, and re-arms it when one is freed", func() {
			// W from each of the 7 other nodes (28) plus the 4 spare
			// buffers' worth of F&A replies: all 32 receive buffers.
			n := 0
			for src := 1; src < 8; src++ {
				for seq := 1; seq <= r.cfg.Window(); seq++ {
					r.arrive(lci.Header{Type: lci.TypeData, Src: uint8(src), Seq: uint32(seq)}, payload(4, byte(n)))
					n++
				}
			}
			for range r.cfg.SpareBufs {
				Expect(r.state("rq")).To(BeEquivalentTo("ARMED"))
				r.arrive(lci.Header{Type: lci.TypeFARep, Src: 2}, nil)
				n++
			}
			Expect(n).To(Equal(r.cfg.RecvBufs))
			Expect(r.state("rq")).To(BeEquivalentTo("STARVED"))
			Expect(r.ni.armed).To(BeFalse())
			Expect(r.ni.arms).To(HaveLen(r.cfg.RecvBufs))
			Expect(r.freeRecvBufs()).To(Equal("0 receive buffers free"))

			// The host gives one buffer back: one delivery, and its
			// receive buffer goes straight to the receive engine.
			r.writeFree(r.slot(0))
			r.pokeFreeQ()
			Expect(r.ni.dmas).To(HaveLen(1))
			r.dmaDone()
			Expect(r.state("rq")).To(BeEquivalentTo("ARMED"))
			Expect(r.ni.arms).To(HaveLen(r.cfg.RecvBufs + 1))
			Expect(r.ni.lastDMA().SRAM).To(Equal(r.ni.armedAt().Addr + lci.HeaderBytes))
			r.clean()
		})
	})

	Describe("multicast at an inner node of the binary tree", func() {
		// Node 1 in node 0's binary tree over 8 nodes has rank 1 and
		// children of rank 3 and 4.
		BeforeEach(func() {
			cfg := testConfig()
			cfg.Variant = lci.PIO
			r = newRig(cfg, 1, 8)
			r.hostInit(8)
			r.boot()
		})

		type step int
		const (
			deliverDone step = iota
			sendDone
		)

		DescribeTable("delivers, forwards to both children, and frees the buffer only after all three",
			func(order ...step) {
				Expect(r.sramRead(r.l.Fwd, lci.FwdWidth)).To(Equal([]byte{3, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
				data := payload(20, 0x30)
				at := r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1, Arg: 0x77}, data)

				// To the host, as from the root.
				Expect(r.ni.dmas).To(Equal([]firmware.HostDMA{{Dir: firmware.ToHost, HostAddr: r.hdrAt(0) - 20,
					SRAM: at + lci.HeaderBytes, Len: 20 + lci.HeaderBytes}}))
				Expect(lci.DecodeSlotHeader(r.sramRead(at+lci.HeaderBytes+20, lci.HeaderBytes))).To(Equal(
					lci.SlotHeader{Type: lci.TypeMcast, Src: 0, Len: 20, Tag: 0x77, Arg: 1, Flag: 1}))
				// To the first child, from this node, straight from the
				// receive buffer; the second child's descriptor waits in
				// the NI's own send queue for the next pass.
				Expect(r.ni.sends).To(HaveLen(1))
				fwd := lci.Header{Type: lci.TypeMcast, Src: 1, Len: 20, Root: 0, Seq: 1, Arg: 0x77}
				Expect(r.ni.sends[0].Packet).To(Equal(firmware.Packet{Dst: 3, SRAM: at, Len: lci.HeaderBytes + 20}))
				Expect(r.ni.sends[0].Hdr()).To(Equal(fwd))
				Expect(r.ni.sends[0].Bytes[lci.HeaderBytes:]).To(Equal(data))
				Expect(r.p.Credits(3)).To(Equal(r.cfg.Window() - 1))
				Expect(r.p.Credits(4)).To(Equal(r.cfg.Window()))
				Expect(r.p.State()).To(HavePrefix("0 fetches, 1 forwards queued"))

				for i, s := range order {
					Expect(r.freeRecvBufs()).To(Equal("30 receive buffers free"), "before step %d", i)
					switch s {
					case deliverDone:
						r.dmaDone()
					case sendDone:
						r.sendDone()
					}
				}
				Expect(r.freeRecvBufs()).To(Equal("31 receive buffers free"))
				Expect(r.ni.sends).To(HaveLen(2))
				Expect(r.ni.sends[1].Packet).To(Equal(firmware.Packet{Dst: 4, SRAM: at, Len: lci.HeaderBytes + 20}))
				Expect(r.ni.sends[1].Hdr()).To(Equal(fwd))
				Expect(r.ni.sends[1].Bytes[lci.HeaderBytes:]).To(Equal(data))
				Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeMcast, Src: 0, Len: 20, Tag: 0x77, Arg: 1, Flag: 1}))
				Expect(r.p.Idle()).To(BeTrue(), r.p.State())

				// The released buffer was reserved for the parent, node
				// 0: one credit (below W/2, so no explicit ack) rides on
				// the next packet to it.
				r.send(lci.Desc{Type: lci.TypeData, Dst: 0, Len: 0, Buf: 0})
				Expect(r.ni.sends).To(HaveLen(3))
				Expect(r.ni.lastSend().Dst).To(Equal(0))
				Expect(r.ni.lastSend().Hdr().Credits).To(BeEquivalentTo(1))
				r.clean()
			},
			Entry("deliver, send, send", deliverDone, sendDone, sendDone),
			Entry("send, deliver, send", sendDone, deliverDone, sendDone),
			Entry("send, send, deliver", sendDone, sendDone, deliverDone),
		)

		It("forwards nothing from a leaf", func() {
			// In node 2's tree node 1 has rank 7: a leaf.
			Expect(r.sramRead(r.l.Fwd+2*lci.FwdWidth, lci.FwdWidth)).To(Equal([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
			r.arrive(lci.Header{Type: lci.TypeMcast, Src: 6, Root: 2, Seq: 4}, payload(8, 0))
			Expect(r.ni.sends).To(BeEmpty())
			r.dmaDone()
			Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeMcast, Src: 2, Len: 8, Arg: 4, Flag: 1}))
			Expect(r.p.Idle()).To(BeTrue(), r.p.State())
			r.clean()
		})
	})

	Describe("fetch-and-add", func() {
		It("replies with the old value and adds the addend the request's header carries", func() {
			r.arrive(lci.Header{Type: lci.TypeFAReq, Src: 2, Seq: 3, Arg: 5}, nil)
			Expect(r.p.FetchAddValue()).To(BeEquivalentTo(5))
			Expect(r.ni.sends).To(HaveLen(1))
			s := r.ni.lastSend()
			Expect(s.Packet).To(Equal(firmware.Packet{Dst: 2, SRAM: r.l.CtlBuf(0), Len: lci.HeaderBytes}))
			Expect(s.Hdr()).To(Equal(lci.Header{Type: lci.TypeFARep, Src: 0, Root: 0, Seq: 3, Arg: 0}))
			r.sendDone()

			r.arrive(lci.Header{Type: lci.TypeFAReq, Src: 2, Seq: 4, Arg: 7}, nil)
			Expect(r.p.FetchAddValue()).To(BeEquivalentTo(12))
			Expect(r.ni.sends).To(HaveLen(2))
			// The reply is built before the request's buffer is
			// released, so it carries the credit of the first request
			// (worked out: reply 1 carries 0, then 1 is owed).
			Expect(r.ni.lastSend().Hdr()).To(Equal(lci.Header{Type: lci.TypeFARep, Src: 0, Root: 0, Seq: 4, Arg: 5, Credits: 1}))
			r.settle()
			Expect(r.ni.dmas).To(BeEmpty(), "the host is not involved")
			Expect(r.freeRecvBufs()).To(Equal("31 receive buffers free"))
			Expect(r.p.Idle()).To(BeTrue(), r.p.State())
			r.clean()
		})

		It("reports a request with data: the addend travels in the header", func() {
			r.arrive(lci.Header{Type: lci.TypeFAReq, Src: 2, Seq: 1, Arg: 3}, le4(5))
			Expect(r.violations()).To(ConsistOf(
				"lci.packet FW: fetch-and-add request from node 2 with 4 bytes of data: the addend travels in the header"))
			Expect(r.p.FetchAddValue()).To(BeEquivalentTo(3), "the header's addend, not the data")
		})

		It("delivers a reply to the host with the old value as the tag, owing no credit", func() {
			r.arrive(lci.Header{Type: lci.TypeFARep, Src: 2, Seq: 1, Arg: 41}, nil)
			Expect(r.ni.lastDMA()).To(Equal(firmware.HostDMA{Dir: firmware.ToHost, HostAddr: r.hdrAt(0),
				SRAM: r.l.RecvBuf(0) + lci.HeaderBytes, Len: lci.HeaderBytes}))
			r.dmaDone()
			Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeFARep, Src: 2, Tag: 41, Arg: 1, Flag: 1}))
			// A reply sits in a spare buffer: releasing it returns no
			// credit to node 2.
			r.send(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 0, Buf: 0})
			Expect(r.ni.lastSend().Hdr().Credits).To(BeEquivalentTo(0))
			r.clean()
		})
	})

	Describe("a bad CRC", func() {
		It("is a checker error naming the link and the source, and the program stops", func() {
			r.arrive(lci.Header{Type: lci.TypeData, Src: 3, Seq: 1}, payload(4, 0))
			r.dmaDone()
			// The header is not to be trusted: the sender named is the
			// link layer's (node 5), not the header's (3).
			r.arriveLink(5, lci.Header{Type: lci.TypeData, Src: 3, Seq: 9}, payload(8, 0), true)
			v := r.e.Monitor.Violations()
			Expect(v).To(HaveLen(1))
			Expect(v[0].Check).To(Equal("lci.crc"))
			Expect(v[0].Path).To(Equal("FW"))
			Expect(v[0].Msg).To(And(HavePrefix("packet 2 from node 5 (24 bytes;"), ContainSubstring("on link link")))
			Expect(r.ni.dmas).To(HaveLen(1))
			Expect(r.ni.arms).To(HaveLen(2), "not re-armed")

			// Later events are ignored: no send, no transition error.
			r.send(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 0, Buf: 0})
			r.handle(firmware.HWEvent{Kind: firmware.SendDone})
			r.handle(firmware.HWEvent{Kind: firmware.Timer})
			Expect(r.ni.sends).To(BeEmpty())
			Expect(r.e.Monitor.Violations()).To(HaveLen(1))
			Expect(r.state("hsq")).To(BeEquivalentTo("IDLE"))
		})
	})

	Describe("the polling watchdog", func() {
		BeforeEach(func() {
			cfg := testConfig()
			cfg.Interrupts = true
			r = newRig(cfg, 0, 8)
			r.hostInit(8)
			r.boot()
		})

		It("starts the timer at a delivery and interrupts if the host has not taken the packet", func() {
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 0))
			Expect(r.ni.timers).To(BeEmpty(), "the timer starts when the packet is in host memory")
			r.dmaDone()
			Expect(r.ni.timers).To(Equal([]int{500}))
			Expect(r.state("timer")).To(BeEquivalentTo("ON"))
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 2}, payload(8, 0))
			r.dmaDone()
			Expect(r.ni.timers).To(Equal([]int{500}), "a running timer is not restarted")
			r.handle(firmware.HWEvent{Kind: firmware.Timer})
			Expect(r.ni.irqs).To(Equal(1))
			Expect(r.state("timer")).To(BeEquivalentTo("OFF"))
			r.clean()
		})

		It("does not interrupt when the host has given the buffer back", func() {
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 0))
			r.dmaDone()
			r.returnSlots(1)
			r.handle(firmware.HWEvent{Kind: firmware.Timer})
			Expect(r.ni.irqs).To(Equal(0))
			Expect(r.state("timer")).To(BeEquivalentTo("OFF"))
			r.clean()
		})

		It("interrupts when the host has given back only some of the buffers", func() {
			for seq := range 2 {
				r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: uint32(seq + 1)}, payload(8, 0))
				r.dmaDone()
			}
			r.returnSlots(1)
			r.handle(firmware.HWEvent{Kind: firmware.Timer})
			Expect(r.ni.irqs).To(Equal(1))
			r.clean()
		})
	})

	It("runs no watchdog without interrupts, unless the control block enables them", func() {
		r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 0))
		r.dmaDone()
		Expect(r.ni.timers).To(BeEmpty())
		Expect(r.state("timer")).To(BeEquivalentTo("OFF"))

		r = newRig(testConfig(), 0, 8)
		r.hostInit(8)
		r.sramWrite(lci.CtlFlags, []byte{1, 0, 0, 0})
		r.boot()
		r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 0))
		r.dmaDone()
		Expect(r.ni.timers).To(Equal([]int{500}))
		r.clean()
	})

	DescribeTable("an event no state expects is a transition error",
		func(ev firmware.EventKind, machine, msg string) {
			r.handle(firmware.HWEvent{Kind: ev})
			v := r.e.Monitor.Violations()
			Expect(v).To(HaveLen(1))
			Expect(v[0].Check).To(Equal("fw.transition"))
			Expect(v[0].Path).To(Equal("FW." + machine))
			Expect(v[0].Msg).To(Equal(msg))
			Expect(r.ni.sends).To(BeEmpty())
			Expect(r.ni.dmas).To(BeEmpty())
		},
		Entry("SendDone with nothing sent", firmware.SendDone, "tx", "no transition on done in state IDLE"),
		Entry("HostDMADone with no DMA", firmware.HostDMADone, "dma", "no transition on done in state IDLE"),
		Entry("Timer with the watchdog off", firmware.Timer, "timer", "no transition on expire in state OFF"),
	)
})
