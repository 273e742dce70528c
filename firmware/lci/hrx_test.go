package lci_test

import (
	"github.com/google/go-cmp/cmp"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The NI's share of I-hrx (hrx.go): the host runs the protocol.
var _ = Describe("I-hrx's NI", func() {
	var r *rig
	BeforeEach(func() {
		cfg := testConfig()
		cfg.Reliability = lci.HostRetransmit
		r = newRig(cfg, 0, 8)
		r.hostInit(8)
		r.boot()
	})

	It("sends the host's header, resends a buffer without fetching it again and completes each transmission", func() {
		data := payload(20, 0x40)
		Expect(r.host.Write(sendData, data)).To(Succeed())
		// The host's header fields: sequence 5 of the sender's data to
		// node 2, pair sequence 1, acknowledging node 2's packet 3.
		d := lci.Desc{Type: lci.TypeData, Dst: 2, Len: 20, Buf: 3, Tag: 0xabc, HSeq: 5, HCredits: lci.RxFields(3, 1), HRoot: 0, HFlags: lci.HdrAck}
		r.sendFrom(d, sendData)
		Expect(r.ni.dmas).To(HaveLen(1)) // the fetch
		r.dmaDone()
		Expect(r.ni.sends).To(HaveLen(1))
		want := lci.Header{Type: lci.TypeData, Src: 0, Len: 20, Credits: lci.RxFields(3, 1), Flags: lci.HdrAck, Seq: 5, Arg: 0xabc}
		Expect(r.ni.lastSend().Hdr()).To(Equal(want))
		Expect(r.ni.lastSend().Bytes[lci.HeaderBytes:]).To(Equal(data))

		// The retransmission: the same buffer, marked DescResend, with a
		// later acknowledgment; queued behind the first transmission
		// (the engine is busy), no second fetch.
		d.Flags, d.HCredits = lci.DescResend, lci.RxFields(4, 1)
		r.send(d)
		Expect(r.ni.dmas).To(HaveLen(1))
		// The first transmission completes: a completion for buffer 3
		// in the host's first slot, staged at Layout.Compl's first
		// place (record 1), not in the buffer; then the resend goes.
		r.sendDone()
		Expect(r.ni.sends).To(HaveLen(2))
		want.Credits = lci.RxFields(4, 1)
		Expect(r.ni.lastSend().Hdr()).To(Equal(want))
		Expect(r.ni.lastSend().Bytes[lci.HeaderBytes:]).To(Equal(data))
		Expect(cmp.Diff(firmware.HostDMA{Dir: firmware.ToHost, HostAddr: r.hdrAt(0), SRAM: r.l.Compl, Len: lci.HeaderBytes}, r.ni.lastDMA())).To(BeEmpty())
		r.dmaDone()
		r.sendDone()
		// The second completion, record 2, in its own staging place.
		Expect(cmp.Diff(firmware.HostDMA{Dir: firmware.ToHost, HostAddr: r.hdrAt(1), SRAM: r.l.Compl + lci.HeaderBytes, Len: lci.HeaderBytes}, r.ni.lastDMA())).To(BeEmpty())
		r.dmaDone()
		Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 0, Tag: 3, Flag: 1}))
		Expect(r.slotHeader(r.slot(1))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 0, Tag: 3, Flag: 2}))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
	})

	It("sends an explicit acknowledgment from a control buffer", func() {
		r.send(lci.Desc{Type: lci.TypeAck, Dst: 4, HCredits: lci.RxFields(9, 0), HFlags: lci.HdrAck})
		Expect(r.ni.dmas).To(BeEmpty())
		Expect(r.ni.sends).To(HaveLen(1))
		// Control buffer 0, the top of the free list.
		Expect(r.ni.lastSend().Packet).To(Equal(firmware.Packet{Dst: 4, SRAM: r.l.CtlBuf(0), Len: lci.HeaderBytes}))
		Expect(r.ni.lastSend().Hdr()).To(Equal(lci.Header{Type: lci.TypeAck, Src: 0, Credits: lci.RxFields(9, 0), Flags: lci.HdrAck}))
		r.sendDone()
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
	})

	It("holds an acknowledgment that finds no control buffer until one is free, the newest per destination", func() {
		// 64 acknowledgments take the 64 control buffers (the send
		// engine sends one at a time and holds the rest).
		for i := range 64 {
			r.send(lci.Desc{Type: lci.TypeAck, Dst: uint8(1 + i%7), HCredits: lci.RxFields(uint8(i), 0), HFlags: lci.HdrAck})
		}
		// Three more: node 2's twice (the second, cumulative, replaces
		// the first), node 3's once; none is a violation.
		r.send(lci.Desc{Type: lci.TypeAck, Dst: 2, HCredits: lci.RxFields(100, 0), HFlags: lci.HdrAck})
		r.send(lci.Desc{Type: lci.TypeAck, Dst: 2, HCredits: lci.RxFields(101, 0), HFlags: lci.HdrAck})
		r.send(lci.Desc{Type: lci.TypeAck, Dst: 3, HCredits: lci.RxFields(102, 0), HFlags: lci.HdrAck})
		Expect(r.violations()).To(BeEmpty())
		for len(r.ni.sends) < 64 {
			r.sendDone()
		}
		Expect(r.p.Idle()).To(BeFalse())
		r.sendDone()
		Expect(r.ni.sends).To(HaveLen(65))
		Expect(r.ni.lastSend().Packet.Dst).To(Equal(2))
		Expect(r.ni.lastSend().Hdr().Credits).To(Equal(lci.RxFields(101, 0)))
		r.sendDone()
		Expect(r.ni.sends).To(HaveLen(66))
		Expect(r.ni.lastSend().Packet.Dst).To(Equal(3))
		r.sendDone()
		Expect(r.ni.sends).To(HaveLen(66))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
	})

	It("delivers a packet with its header in front of the data, and drops a bad CRC", func() {
		h := lci.Header{Type: lci.TypeData, Src: 5, Credits: lci.RxFields(0, 1), Seq: 1, Arg: 7}
		data := payload(8, 0x10)
		r.arriveLink(5, h, data, true)
		Expect(r.p.RxStats().CRCDrops).To(Equal(uint64(1)))
		Expect(r.ni.dmas).To(BeEmpty())
		at := r.arrive(h, data)
		// One DMA: header, data, slot header, ending where the slot
		// header ends (8 + 2 x 16 bytes).
		Expect(cmp.Diff(firmware.HostDMA{Dir: firmware.ToHost, HostAddr: r.hdrAt(0) - 8 - lci.HeaderBytes, SRAM: at, Len: 8 + 2*lci.HeaderBytes}, r.ni.lastDMA())).To(BeEmpty())
		r.dmaDone()
		h.Len = 8
		b, err := r.host.Bytes(r.hdrAt(0)-8-lci.HeaderBytes, lci.HeaderBytes)
		Expect(err).NotTo(HaveOccurred())
		Expect(lci.DecodeHeader(b)).To(Equal(h))
		Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeData, Src: 5, Len: 8, Tag: 7, Arg: 1, Flag: 1}))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
	})

	It("reports a descriptor with data in an acknowledgment", func() {
		r.send(lci.Desc{Type: lci.TypeAck, Dst: 4, Len: 4})
		Expect(r.e.Monitor.Violations()).To(HaveLen(1))
		Expect(r.e.Monitor.Violations()[0].Check).To(Equal("lci.desc"))
		Expect(r.ni.sends).To(BeEmpty())
	})
})
