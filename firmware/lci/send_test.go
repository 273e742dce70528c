package lci_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Send path", func() {
	var r *rig

	Describe("unicast under I-sdma", func() {
		BeforeEach(func() {
			r = newRig(testConfig(), 0, 8)
			r.hostInit(8)
			r.boot()
		})

		It("fetches the data by DMA, transmits it with its header and reports the completion in a host slot", func() {
			data := payload(20, 0x40)
			Expect(r.host.Write(sendData, data)).To(Succeed())
			r.sendFrom(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 20, Buf: 3, Tag: 0xabc}, sendData)

			// The descriptor becomes a fetch of the data behind the
			// send buffer's header, and nothing is sent before it lands.
			Expect(cmp.Diff([]firmware.HostDMA{{Dir: firmware.ToNI, HostAddr: sendData, SRAM: r.l.SendBuf(3) + lci.HeaderBytes, Len: 20}}, r.ni.dmas)).To(BeEmpty())
			Expect(r.ni.sends).To(BeEmpty())
			Expect(r.state("hsq")).To(BeEquivalentTo("FETCH"))
			Expect(r.state("dma")).To(BeEquivalentTo("BUSY"))

			r.dmaDone()
			Expect(r.state("hsq")).To(BeEquivalentTo("IDLE"))
			Expect(r.state("tx")).To(BeEquivalentTo("BUSY"))
			Expect(r.ni.sends).To(HaveLen(1))
			s := r.ni.lastSend()
			Expect(s.Packet).To(Equal(firmware.Packet{Dst: 2, SRAM: r.l.SendBuf(3), Len: lci.HeaderBytes + 20}))
			// The first packet to node 2: sequence 1, nothing owed to 2.
			Expect(s.Hdr()).To(Equal(lci.Header{Type: lci.TypeData, Src: 0, Len: 20, Credits: 0, Root: 0, Seq: 1, Arg: 0xabc}))
			Expect(s.Bytes[lci.HeaderBytes:]).To(Equal(data))
			Expect(r.p.Credits(2)).To(Equal(r.cfg.Window() - 1))

			// Transmitted: the buffer is free again, which the host
			// learns from a completion in its first slot.
			r.sendDone()
			Expect(r.state("tx")).To(BeEquivalentTo("IDLE"))
			Expect(r.ni.dmas).To(HaveLen(2))
			d := r.ni.lastDMA()
			Expect(d).To(Equal(firmware.HostDMA{Dir: firmware.ToHost, HostAddr: r.hdrAt(0), SRAM: r.l.SendBuf(3), Len: lci.HeaderBytes}))
			Expect(lci.DecodeSlotHeader(r.sramRead(d.SRAM, lci.HeaderBytes))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 0, Tag: 3, Flag: 1}))
			r.dmaDone()
			Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 0, Tag: 3, Flag: 1}))
			Expect(r.state("dma")).To(BeEquivalentTo("IDLE"))
			Expect(r.p.Idle()).To(BeTrue(), r.p.State())
			r.clean()
		})

		It("numbers the packets to each destination separately", func() {
			r.send(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 0, Buf: 0})
			r.settle()
			r.send(lci.Desc{Type: lci.TypeData, Dst: 5, Len: 0, Buf: 1})
			r.settle()
			r.send(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 0, Buf: 2})
			r.settle()
			var got [][2]uint32
			for _, s := range r.ni.sends {
				got = append(got, [2]uint32{uint32(s.Dst), s.Hdr().Seq})
			}
			Expect(got).To(Equal([][2]uint32{{2, 1}, {5, 1}, {2, 2}}))
			r.clean()
		})

		It("keeps the host's order when a packet without data follows one being fetched", func() {
			d := lci.Desc{Type: lci.TypeData, Dst: 2, Len: 8, Buf: 0}
			r.writeFetch(d, sendData)
			r.writeDesc(d)
			r.writeDesc(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 0, Buf: 1})
			r.pokeSendQ()
			Expect(r.ni.sends).To(BeEmpty(), "the empty packet must wait for the one before it")
			r.dmaDone()
			Expect(r.ni.sends).To(HaveLen(1))
			Expect(r.ni.lastSend().SRAM).To(Equal(r.l.SendBuf(0)))
			r.settle()
			Expect(r.ni.sends).To(HaveLen(2))
			Expect(r.ni.sends[1].SRAM).To(Equal(r.l.SendBuf(1)))
			r.clean()
		})

		It("multicasts from the root to its children and completes after the last one", func() {
			// Node 0 is the root of its binary tree over 8 nodes:
			// children 1 and 2.
			r.send(lci.Desc{Type: lci.TypeMcast, Len: 0, Buf: 4, Tag: 9})
			Expect(r.ni.sends).To(HaveLen(1))
			Expect(r.ni.lastSend().Dst).To(Equal(1))
			r.sendDone()
			Expect(r.ni.sends).To(HaveLen(2))
			Expect(r.ni.lastSend().Dst).To(Equal(2))
			Expect(r.ni.lastSend().Hdr()).To(Equal(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1, Arg: 9}))
			Expect(r.ni.dmas).To(BeEmpty(), "no completion while a child is still to be sent to")
			r.sendDone()
			Expect(r.ni.dmas).To(HaveLen(1))
			Expect(lci.DecodeSlotHeader(r.sramRead(r.ni.lastDMA().SRAM, lci.HeaderBytes)).Tag).To(BeEquivalentTo(4))
			r.clean()
		})

		It("reports a bad descriptor", func() {
			r.sendFrom(lci.Desc{Type: lci.TypeData, Dst: 0, Len: 4, Buf: 0}, sendData)
			Expect(r.violations()).To(ConsistOf(ContainSubstring("lci.desc FW: bad send descriptor")))
			Expect(r.ni.dmas).To(BeEmpty())
			Expect(r.ni.sends).To(BeEmpty())
		})

		It("fetches from the address the host wrote into the send buffer and reports a size that is not the descriptor's", func() {
			// The descriptor carries no host address: the fetch reads
			// the send buffer's address and size field (section 4.1:
			// «it writes an address and size field»).
			d := lci.Desc{Type: lci.TypeData, Dst: 2, Len: 8, Buf: 1}
			r.sramWrite(r.l.SendBuf(1), lci.Fetch{Addr: sendData + 0x40, Len: 12}.Encode())
			r.send(d)
			Expect(r.violations()).To(ConsistOf(ContainSubstring("lci.desc FW: send buffer 1's address and size field says 12 bytes, its descriptor 8")))
			Expect(cmp.Diff([]firmware.HostDMA{{Dir: firmware.ToNI, HostAddr: sendData + 0x40, SRAM: r.l.SendBuf(1) + lci.HeaderBytes, Len: 8}}, r.ni.dmas)).To(BeEmpty())
		})
	})

	It("under I-pio sends the descriptor's buffer at once, without a fetch", func() {
		cfg := testConfig()
		cfg.Variant = lci.PIO
		r = newRig(cfg, 0, 8)
		r.hostInit(8)
		r.boot()
		data := payload(20, 0x10)
		r.sramWrite(r.l.SendBuf(3)+lci.HeaderBytes, data) // the host's PIO
		r.send(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 20, Buf: 3, Tag: 0xabc})
		Expect(r.ni.dmas).To(BeEmpty())
		Expect(r.state("hsq")).To(BeEquivalentTo("IDLE"))
		Expect(r.ni.sends).To(HaveLen(1))
		s := r.ni.lastSend()
		Expect(s.Packet).To(Equal(firmware.Packet{Dst: 2, SRAM: r.l.SendBuf(3), Len: lci.HeaderBytes + 20}))
		Expect(s.Hdr()).To(Equal(lci.Header{Type: lci.TypeData, Src: 0, Len: 20, Seq: 1, Arg: 0xabc}))
		Expect(s.Bytes[lci.HeaderBytes:]).To(Equal(data))
		r.settle()
		Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 0, Tag: 3, Flag: 1}))
		r.clean()
	})

	Describe("flow control", func() {
		BeforeEach(func() {
			cfg := testConfig()
			cfg.Variant = lci.PIO
			r = newRig(cfg, 0, 8)
			r.hostInit(8)
			r.boot()
		})

		It("sends W packets to a destination, blocks the rest, and sends them when credits return", func() {
			w := r.cfg.Window()
			Expect(w).To(Equal(4))
			for i := range w + 2 {
				r.writeDesc(lci.Desc{Type: lci.TypeData, Dst: 1, Len: 8, Buf: uint32(i)})
			}
			r.pokeSendQ()
			Expect(r.state("fc")).To(BeEquivalentTo("BLOCKED"))
			Expect(r.p.Credits(1)).To(Equal(0))
			r.settle()
			Expect(r.ni.sends).To(HaveLen(w))
			for i, s := range r.ni.sends {
				Expect(s.SRAM).To(Equal(r.l.SendBuf(i)))
				Expect(s.Hdr().Seq).To(BeEquivalentTo(i + 1))
			}
			Expect(r.state("fc")).To(BeEquivalentTo("BLOCKED"))
			Expect(r.p.Idle()).To(BeFalse(), "blocked packets are unfinished work")

			// Node 1 returns two credits (an explicit half-window ack).
			r.arrive(lci.Header{Type: lci.TypeAck, Src: 1, Credits: 2}, nil)
			Expect(r.state("fc")).To(BeEquivalentTo("OPEN"))
			Expect(r.p.Credits(1)).To(Equal(0))
			r.settle()
			Expect(r.ni.sends).To(HaveLen(w + 2))
			Expect(r.ni.sends[w].SRAM).To(Equal(r.l.SendBuf(w)))
			Expect(r.ni.sends[w+1].SRAM).To(Equal(r.l.SendBuf(w + 1)))
			Expect(r.ni.sends[w+1].Hdr().Seq).To(BeEquivalentTo(w + 2))
			Expect(r.p.Idle()).To(BeTrue(), r.p.State())
			r.clean()
		})

		It("blocks a destination without holding up the others", func() {
			for i := range 5 {
				r.writeDesc(lci.Desc{Type: lci.TypeData, Dst: 1, Len: 0, Buf: uint32(i)})
			}
			r.writeDesc(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 0, Buf: 5})
			r.pokeSendQ()
			r.settle()
			var dsts []int
			for _, s := range r.ni.sends {
				dsts = append(dsts, s.Dst)
			}
			Expect(dsts).To(Equal([]int{1, 1, 1, 1, 2}))
			Expect(r.state("fc")).To(BeEquivalentTo("BLOCKED"))
			r.clean()
		})

		It("reports credits beyond the window", func() {
			r.arrive(lci.Header{Type: lci.TypeAck, Src: 1, Credits: 1}, nil)
			Expect(r.violations()).To(ConsistOf(And(HavePrefix("lci.credits FW:"), ContainSubstring("node 1"), ContainSubstring("5 > W = 4"))))
		})
	})

	Describe("acknowledgments", func() {
		BeforeEach(func() {
			cfg := testConfig()
			cfg.Variant = lci.PIO
			r = newRig(cfg, 0, 8)
			r.hostInit(8)
			r.boot()
		})

		It("sends an explicit ack with W/2 credits after W/2 deliveries when nothing goes back", func() {
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 0))
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 2}, payload(8, 0))
			r.dmaDone() // the first buffer is released: 1 < W/2 owed
			Expect(r.ni.sends).To(BeEmpty())
			r.dmaDone() // the second: W/2 = 2 owed, no packet to node 1 waiting
			Expect(r.ni.sends).To(HaveLen(1))
			s := r.ni.lastSend()
			Expect(s.Packet).To(Equal(firmware.Packet{Dst: 1, SRAM: r.l.CtlBuf(0), Len: lci.HeaderBytes}))
			Expect(s.Hdr()).To(Equal(lci.Header{Type: lci.TypeAck, Src: 0, Credits: 2}))
			r.settle()
			Expect(r.ni.sends).To(HaveLen(1))
			Expect(r.p.Idle()).To(BeTrue(), r.p.State())
			r.clean()
		})

		It("piggybacks the credits on a packet to the sender waiting to go", func() {
			r.send(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 0, Buf: 0}) // occupies the send engine
			r.send(lci.Desc{Type: lci.TypeData, Dst: 1, Len: 0, Buf: 1}) // ready, behind it
			Expect(r.ni.sends).To(HaveLen(1))
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 0))
			r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 2}, payload(8, 0))
			r.dmaDone()
			r.dmaDone()
			Expect(r.ni.sends).To(HaveLen(1), "no explicit ack")
			r.sendDone()
			Expect(r.ni.sends).To(HaveLen(2))
			Expect(r.ni.lastSend().Dst).To(Equal(1))
			Expect(r.ni.lastSend().Hdr()).To(Equal(lci.Header{Type: lci.TypeData, Src: 0, Credits: 2, Seq: 1}))
			r.settle()
			for _, s := range r.ni.sends {
				Expect(s.Hdr().Type).NotTo(BeEquivalentTo(lci.TypeAck))
			}
			Expect(r.ni.sends).To(HaveLen(2))
			r.clean()
		})
	})
})
