package lci_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rigSRAM is a rig's SRAM as lci.SRAM (to set up and read NTLB entries).
type rigSRAM struct{ r *rig }

func (s rigSRAM) Read(addr uint32, n int) []byte {
	return append([]byte(nil), s.r.sramRead(addr, n)...)
}
func (s rigSRAM) Write(addr uint32, data []byte) { s.r.sramWrite(addr, data) }

var _ = Describe("I-rcpy in the control program (section 5.2.3)", func() {
	const (
		anonBase = 0x0300_0000
		srcVA    = 0x1000_0120 // page 0x10000, entry 0
		dstVA    = 0x2010_0040 // page 0x20100, entry 256
		srcPPN   = 0x5123
		dstPPN   = 0x5456
	)
	var r *rig
	BeforeEach(func() {
		cfg := testConfig()
		cfg.Variant = lci.RCPY
		cfg.AnonBase, cfg.AnonPages = anonBase, 1
		r = newRig(cfg, 0, 8)
		r.hostInit(8)
		r.boot()
	})
	// rcpy writes an RCPY page-transfer descriptor and raises HostWrite.
	rcpy := func(d lci.RcpyDesc) {
		d.Seq = r.descSeq
		r.descSeq++
		r.sramWrite(r.l.SendQ+uint32(int(d.Seq-1)%r.l.SendQSlots*lci.DescBytes), d.Encode())
		r.pokeSendQ()
	}
	ntlb := func() *lci.NTLB { return r.p.NTLB() }

	It("watches the NTLB for the host's unlocks", func() {
		Expect(r.ni.watches).To(ContainElement([2]uint32{r.l.NTLB, lci.NTLBBytes}))
	})

	It("sends a hit: NTLB lookup, DMA from the physical source into the send buffer, the packet with the virtual destination, a send completion, in the cycles worked out", func() {
		ntlb().Update(rigSRAM{r}, srcVA, srcPPN, false)
		data := payload(16, 0x30)
		src := uint64(srcPPN)*lci.PageBytes + srcVA%lci.PageBytes
		Expect(r.host.Write(src, data)).To(Succeed())
		rcpy(lci.RcpyDesc{Src: srcVA, Dst: dstVA, Node: 2, Size: 16, Buf: 3, Handle: 9})
		// derived (LANai 4, CPI 1.25): Dispatch 8 -> 10, HostSend 20 -> 25,
		// RcpyXlate 84 -> 105, DMAStart 12 -> 15: 155 cycles.
		Expect(r.c.Cycles()).To(Equal(10 + 25 + 105 + 15))
		Expect(cmp.Diff([]firmware.HostDMA{{Dir: firmware.ToNI, HostAddr: src, SRAM: r.l.SendBuf(3) + lci.HeaderBytes, Len: 16}}, r.ni.dmas)).To(BeEmpty())
		Expect(r.ni.sends).To(BeEmpty())
		r.dmaDone()
		s := r.ni.lastSend()
		Expect(s.Packet).To(Equal(firmware.Packet{Dst: 2, SRAM: r.l.SendBuf(3), Len: lci.HeaderBytes + 16}))
		Expect(s.Hdr()).To(Equal(lci.Header{Type: lci.TypeRcpy, Src: 0, Len: 16, Arg: dstVA}))
		Expect(s.Bytes[lci.HeaderBytes:]).To(Equal(data))
		// The base's flow control: one credit towards node 2 spent.
		Expect(r.p.Credits(2)).To(Equal(r.cfg.Window() - 1))
		r.sendDone()
		r.dmaDone()
		Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeCompl, Src: 0, Tag: 3, Flag: 1}))
		Expect(r.p.Counts().Fetches).To(Equal(1))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("sends a miss without a fetch (the host's PIO put the data in the send buffer) and updates the NTLB from the descriptor", func() {
		data := payload(8, 0x50)
		r.sramWrite(r.l.SendBuf(1)+lci.HeaderBytes, data)
		rcpy(lci.RcpyDesc{Src: srcVA, Dst: dstVA, Node: 5, Size: 8, Buf: 1, Flags: lci.RcpyMiss, PPN: srcPPN})
		Expect(r.ni.dmas).To(BeEmpty())
		Expect(r.ni.sends).To(HaveLen(1))
		Expect(r.ni.lastSend().Bytes[lci.HeaderBytes:]).To(Equal(data))
		phys, ok := ntlb().Lookup(rigSRAM{r}, srcVA)
		Expect(ok).To(BeTrue())
		Expect(phys).To(Equal(uint32(srcPPN*lci.PageBytes + 0x120)))
		r.settle()
		r.clean()
	})

	It("reports a hit-path descriptor whose source the NTLB does not hold, and bad descriptors, as lci.desc", func() {
		rcpy(lci.RcpyDesc{Src: srcVA, Dst: dstVA, Node: 2, Size: 16, Buf: 0})
		rcpy(lci.RcpyDesc{Src: srcVA + 2, Dst: dstVA, Node: 2, Size: 16, Buf: 0})
		Expect(r.ni.dmas).To(BeEmpty())
		Expect(r.ni.sends).To(BeEmpty())
		v := r.violations()
		Expect(v).To(HaveLen(2))
		Expect(v[0]).To(ContainSubstring("without the miss flag: the NTLB has no valid entry"))
		Expect(v[1]).To(ContainSubstring("not 4-byte aligned"))
	})

	It("receives a hit: DMA to the physical destination, no host slot, the buffer released, in the cycles worked out", func() {
		ntlb().Update(rigSRAM{r}, dstVA, dstPPN, false)
		data := payload(16, 0x70)
		free := r.freeRecvBufs()
		r.arrive(lci.Header{Type: lci.TypeRcpy, Src: 2, Arg: dstVA}, data)
		// derived: Dispatch 10 + Receive 25 + RcpyXlate 105 + DMAStart 15
		// = 155 cycles.
		Expect(r.c.Cycles()).To(Equal(10 + 25 + 105 + 15))
		dst := uint64(dstPPN)*lci.PageBytes + dstVA%lci.PageBytes
		Expect(r.ni.lastDMA()).To(Equal(firmware.HostDMA{Dir: firmware.ToHost, HostAddr: dst, SRAM: r.ni.lastDMA().SRAM, Len: 16}))
		r.dmaDone()
		b, err := r.host.Bytes(dst, 16)
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(Equal(data))
		Expect(r.slotHeader(r.slot(0)).Flag).To(BeZero()) // no notification
		Expect(r.freeRecvBufs()).To(Equal(free))
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()
	})

	It("receives a miss into the anonymous page, locks the entry, notifies the host, stalls the next transfer to the entry until the host unlocks it", func() {
		data := payload(16, 0x11)
		r.arrive(lci.Header{Type: lci.TypeRcpy, Src: 2, Arg: dstVA}, data)
		anon := uint64(anonBase) + dstVA%lci.PageBytes
		Expect(r.ni.lastDMA().HostAddr).To(Equal(anon))
		r.dmaDone()
		// The notification, behind the data on the one DMA engine: no
		// data; the destination, anonymous page 0 and the size.
		Expect(r.ni.lastDMA()).To(Equal(firmware.HostDMA{Dir: firmware.ToHost, HostAddr: r.hdrAt(0), SRAM: r.ni.lastDMA().SRAM, Len: lci.HeaderBytes}))
		r.dmaDone()
		Expect(r.slotHeader(r.slot(0))).To(Equal(lci.SlotHeader{Type: lci.TypeRcpy, Src: 2, Tag: dstVA, Arg: 0 | 16<<16, Flag: 1}))
		b, _ := r.host.Bytes(anon, 16)
		Expect(b).To(Equal(data))
		en := ntlb().Entry(rigSRAM{r}, lci.Index(dstVA))
		Expect(en.Locked).To(BeTrue())
		Expect(en.Valid).To(BeFalse())

		// The next transfer to the locked entry waits in its receive
		// buffer (no DMA).
		n := len(r.ni.dmas)
		data2 := payload(16, 0x22)
		r.arrive(lci.Header{Type: lci.TypeRcpy, Src: 2, Arg: dstVA + 16}, data2)
		Expect(r.ni.dmas).To(HaveLen(n))

		// The host copied, pinned and unlocks the entry by PIO: the
		// stalled transfer goes to the destination now.
		at := ntlb().EntryAddr(dstVA)
		r.sramWrite(at, lci.EncodeNTLBEntry(lci.NTLBEntry{VPN: dstVA / lci.PageBytes, PPN: dstPPN, Valid: true}))
		// The card raises HostWrite with the watched range (writes
		// coalesce), not the entry written.
		r.handle(firmware.HWEvent{Kind: firmware.HostWrite, Addr: r.l.NTLB, Len: lci.NTLBBytes})
		Expect(r.ni.dmas).To(HaveLen(n + 1))
		Expect(r.ni.lastDMA().HostAddr).To(Equal(uint64(dstPPN)*lci.PageBytes + (dstVA+16)%lci.PageBytes))
		r.dmaDone()
		r.returnSlots(len(r.consumed))
		// Two of node 2's reserved buffers released (W/2 = 2): the
		// base's explicit acknowledgment returns its credits.
		Expect(r.ni.lastSend().Hdr()).To(Equal(lci.Header{Type: lci.TypeAck, Src: 0, Credits: 2}))
		r.settle()
		Expect(r.p.Idle()).To(BeTrue(), r.p.State())

		// The anonymous page is free again: a miss on another page
		// takes it.
		r.arrive(lci.Header{Type: lci.TypeRcpy, Src: 2, Arg: 0x3000_0000}, data)
		Expect(r.ni.lastDMA().HostAddr).To(Equal(uint64(anonBase)))
		r.settle()
		r.clean()
	})
})
