package lci_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Section 5.4: «Our alternative, host-level multicast implementation,
// I-sdma-hmc, uses an aggressive form of host-level packet forwarding. When
// a host must forward a packet to a set of children, I-sdma-hmc issues a
// data transfer to NI memory only once and transmits the same NI buffer
// multiple times.» The costs are testConfig's at CPI 1.25: Dispatch 10,
// HostSend 25, DMAStart 15, DMADone 13, Transmit 25, SendDone 50,
// Receive 25, Deliver 25, Release 50.
var _ = Describe("Host-level multicast forwarding (I-sdma-hmc)", func() {
	var r *rig

	// Node 1 of 8 with HostForward: in root 0's binary tree its children
	// are nodes 3 and 4.
	setup := func(v lci.Variant) {
		cfg := testConfig()
		cfg.Variant = v
		cfg.HostForward = true
		r = newRig(cfg, 1, 8)
		r.hostInit(8)
		r.boot()
	}

	It("is named with -hmc, before the MTU", func() {
		c := lci.DefaultConfig()
		c.HostForward = true
		Expect(c.Name()).To(Equal("I-sdma-hmc"))
		c.Variant = lci.PIO
		Expect(c.WithMTU(1024).Name()).To(Equal("I-pio-hmc-1k"))
	})

	It("only delivers an arriving multicast to the host, and releases its buffer after the delivery DMA, in the cycles worked out", func() {
		setup(lci.PIO)
		data := payload(20, 0x30)
		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1, Arg: 0x77}, data)
		// As a unicast packet's handler: Dispatch 10 + Receive 25 +
		// Deliver 25 + DMAStart 15 = 75 cycles; NI-level forwarding adds
		// Forward 25 per child and the pass of the first descriptor
		// (185 cycles, forward_test.go).
		Expect(r.c.Cycles()).To(Equal(10 + 25 + 25 + 15))
		Expect(r.ni.sends).To(BeEmpty())
		Expect(lci.DecodeDesc(r.sramRead(r.l.FwdQ, lci.DescBytes))).To(Equal(lci.Desc{}), "no descriptor in the NI's own queue")
		Expect(r.p.State()).To(HavePrefix("0 fetches, 0 forwards queued, 0 blocked, 0 ready"))
		Expect(r.m("mc").Coverage()[0].Count).To(BeZero(), "the Multicast module does not run")
		// The delivery: the root as the source, its sequence and tag, for
		// the host to forward.
		Expect(r.ni.dmas).To(HaveLen(1))
		// Its completion: Dispatch 10 + DMADone 13 + Release 50 (the
		// only reference dropped: the buffer is free, a credit owed to
		// node 0) = 73 cycles.
		r.dmaDone()
		Expect(r.c.Cycles()).To(Equal(10 + 13 + 50))
		Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeMcast, Src: 0, Len: 20, Tag: 0x77, Arg: 1, Flag: 1}))
		Expect(r.freeRecvBufs()).To(Equal("31 receive buffers free"))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("fetches a host forward's data once and sends the same buffer to each child, the completion after the last (I-sdma)", func() {
		setup(lci.SDMA)
		data := payload(20, 0x50)
		Expect(r.host.Write(sendData, data)).To(Succeed())
		first := lci.Desc{Type: lci.TypeMcast, Dst: 3, Len: 20, Buf: 2, Tag: 0x77, Flags: lci.DescHostFwd, Root: 0, RootSeq: 5, Kids: 2, Index: 0}
		second := first
		second.Dst, second.Index = 4, 1
		r.writeFetch(first, sendData)
		r.writeDesc(first)
		r.writeDesc(second)
		r.pokeSendQ()
		// One pass takes both: Dispatch 10, the first's HostSend 25 and
		// DMAStart 15 (its fetch), the second's HostSend 25 (no fetch:
		// it names the same buffer) = 75 cycles before the program waits
		// for the fetch (SyncFetch).
		Expect(r.ni.dmas).To(Equal([]firmware.HostDMA{{Dir: firmware.ToNI, HostAddr: sendData, SRAM: r.l.SendBuf(2) + lci.HeaderBytes, Len: 20}}))
		Expect(r.p.Counts().Fetches).To(Equal(1))
		Expect(r.ni.sends).To(BeEmpty())
		r.dmaDone()
		// Both children's packets from send buffer 2, with the root, its
		// sequence and the tag, and this node as the source.
		Expect(r.ni.sends).To(HaveLen(1))
		r.sendDone()
		Expect(r.ni.sends).To(HaveLen(2))
		var got []lci.Header
		for i, s := range r.ni.sends {
			Expect(s.Packet).To(Equal(firmware.Packet{Dst: 3 + i, SRAM: r.l.SendBuf(2), Len: lci.HeaderBytes + 20}))
			Expect(s.Bytes[lci.HeaderBytes:]).To(Equal(data))
			got = append(got, s.Hdr())
		}
		h := lci.Header{Type: lci.TypeMcast, Src: 1, Len: 20, Root: 0, Seq: 5, Arg: 0x77}
		Expect(cmp.Diff([]lci.Header{h, h}, got)).To(BeEmpty())
		// No completion after the first child's send: the only host DMA
		// so far is the fetch.
		Expect(r.ni.dmas).To(HaveLen(1))
		r.sendDone()
		Expect(r.ni.dmas).To(HaveLen(2))
		Expect(lci.DecodeSlotHeader(r.sramRead(r.ni.lastDMA().SRAM, lci.HeaderBytes))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 1, Tag: 2, Flag: 1}))
		r.settle()
		Expect(r.p.Counts()).To(Equal(lci.Counts{Fetches: 1, DataSends: 2}))
		Expect(r.p.Credits(3)).To(Equal(r.cfg.Window() - 1))
		Expect(r.p.Credits(4)).To(Equal(r.cfg.Window() - 1))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("sends a host forward's PIO-written buffer to each child without a DMA (I-pio)", func() {
		setup(lci.PIO)
		d := lci.Desc{Type: lci.TypeMcast, Dst: 3, Len: 8, Buf: 0, Tag: 1, Flags: lci.DescHostFwd, Root: 0, RootSeq: 1, Kids: 2, Index: 0}
		r.writeDesc(d)
		d.Dst, d.Index = 4, 1
		r.writeDesc(d)
		r.pokeSendQ()
		// Dispatch 10 + HostSend 25 + Transmit 25 (the first child) +
		// HostSend 25 (the second, ready behind it) = 85 cycles.
		Expect(r.c.Cycles()).To(Equal(10 + 25 + 25 + 25))
		r.settle()
		Expect(r.ni.sends).To(HaveLen(2))
		Expect(r.ni.sends[0].SRAM).To(Equal(r.ni.sends[1].SRAM))
		Expect(r.p.Counts()).To(Equal(lci.Counts{Fetches: 0, DataSends: 2}))
		Expect(r.slotHeader(r.slot(0)).Type).To(BeEquivalentTo(lci.TypeCompl))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	// lci.refs: a send buffer is sent once per reference; the mutation
	// lci.hmcearly sets a host forward's references to 1, so its send
	// completion goes after the first child's send and the second child's
	// send finds the references spent.
	It("lci.hmcearly: the second child's send of a buffer already reported free fails lci.refs", func() {
		cfg := testConfig()
		cfg.Variant, cfg.HostForward = lci.PIO, true
		r = newRigWith(cfg, 1, 8, map[string]int{"lci.hmcearly": 1})
		r.hostInit(8)
		r.boot()
		d := lci.Desc{Type: lci.TypeMcast, Dst: 3, Len: 8, Buf: 0, Flags: lci.DescHostFwd, Kids: 2}
		r.writeDesc(d)
		d.Dst, d.Index = 4, 1
		r.writeDesc(d)
		r.pokeSendQ()
		r.sendDone() // node 3's: the completion of buffer 0 is reported
		Expect(r.violations()).To(BeEmpty())
		// The completion's DMA is under way (staged in the buffer's
		// header space, which the second child's send then overwrites).
		Expect(r.ni.dmas).To(Equal([]firmware.HostDMA{{Dir: firmware.ToHost, HostAddr: r.hdrAt(0), SRAM: r.l.SendBuf(0), Len: lci.HeaderBytes}}))
		r.sendDone() // node 4's
		Expect(r.violations()).To(ConsistOf("lci.refs FW: send buffer 0 sent to node 4 after its send completion was reported"))
	})

	DescribeTable("refuses a bad host forward descriptor",
		func(hmc bool, d lci.Desc, msg string) {
			cfg := testConfig()
			cfg.Variant = lci.PIO
			cfg.HostForward = hmc
			r = newRig(cfg, 1, 8)
			r.hostInit(8)
			r.boot()
			r.send(d)
			Expect(r.violations()).To(ConsistOf(ContainSubstring(msg)))
			Expect(r.ni.sends).To(BeEmpty())
		},
		Entry("without HostForward", false,
			lci.Desc{Type: lci.TypeMcast, Dst: 3, Flags: lci.DescHostFwd, Kids: 1}, "lci.desc FW: bad send descriptor"),
		Entry("an index beyond the children", true,
			lci.Desc{Type: lci.TypeMcast, Dst: 3, Flags: lci.DescHostFwd, Kids: 2, Index: 2}, "lci.desc FW: bad send descriptor"),
		Entry("no children", true,
			lci.Desc{Type: lci.TypeMcast, Dst: 3, Flags: lci.DescHostFwd}, "lci.desc FW: bad send descriptor"),
		Entry("this node as the root", true,
			lci.Desc{Type: lci.TypeMcast, Dst: 3, Flags: lci.DescHostFwd, Root: 1, Kids: 1}, "lci.desc FW: bad send descriptor"),
		Entry("this node as the child", true,
			lci.Desc{Type: lci.TypeMcast, Dst: 1, Flags: lci.DescHostFwd, Kids: 1}, "lci.desc FW: bad send descriptor"),
		Entry("a unicast", true,
			lci.Desc{Type: lci.TypeData, Dst: 3, Flags: lci.DescHostFwd, Kids: 1}, "lci.desc FW: bad send descriptor"),
		Entry("forward fields without the flag", true,
			lci.Desc{Type: lci.TypeData, Dst: 3, Kids: 1}, "lci.desc FW: bad send descriptor"),
		Entry("a later index with no first", true,
			lci.Desc{Type: lci.TypeMcast, Dst: 3, Flags: lci.DescHostFwd, Kids: 2, Index: 1}, "no forward pending"),
	)
})
