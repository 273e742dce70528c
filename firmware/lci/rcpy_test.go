package lci_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sram is a flat NI memory for the NTLB specs.
type sram []byte

func (s sram) Read(addr uint32, n int) []byte {
	return append([]byte(nil), s[addr:addr+uint32(n)]...)
}
func (s sram) Write(addr uint32, data []byte) { copy(s[addr:], data) }

var _ = Describe("I-rcpy (section 5.2.3)", func() {
	const base = 0x1000
	var (
		m sram
		t *lci.NTLB
	)
	newNTLB := func(mut map[string]int) *lci.NTLB {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Mutations: mut})
		return lci.NewNTLB(e, base)
	}
	// violations lists the checker violations as "rule path: message".
	violations := func(e *env.Env) []string {
		var out []string
		for _, v := range e.Monitor.Violations() {
			out = append(out, v.Check+" "+v.Path+": "+v.Msg)
		}
		return out
	}
	BeforeEach(func() {
		m = make(sram, base+lci.NTLBBytes)
		t = newNTLB(nil)
	})

	It("is parsed as rcpy, named I-rcpy, refused by Validate without anonymous pages, and leaves the other layouts alone", func() {
		v, rel, err := lci.ParseImplementation("I-rcpy")
		Expect(err).NotTo(HaveOccurred())
		Expect(v).To(Equal(lci.RCPY))
		Expect(rel).To(Equal(lci.NoRetransmit))
		Expect(v.String()).To(Equal("I-rcpy"))
		cfg := lci.DefaultConfig()
		sdma := lci.NewLayout(cfg)
		Expect(sdma.NTLB).To(BeZero())
		cfg.Variant = lci.RCPY
		l := lci.NewLayout(cfg)
		// derived: the NTLB comes after everything else: 1024 * 8 bytes.
		Expect(l.NTLB).To(Equal(sdma.End))
		Expect(l.End - sdma.End).To(Equal(uint32(8192)))
		Expect(cfg.Validate(1 << 20)).To(MatchError("lci: I-rcpy needs at least 1 page-aligned anonymous page: 0 at 0x0"))
		cfg.AnonBase, cfg.AnonPages = 0x0300_0000, 4
		Expect(cfg.Validate(1 << 20)).To(Succeed())
		cfg.AnonBase = 0x0300_0010
		Expect(cfg.Validate(1 << 20)).To(MatchError(ContainSubstring("page-aligned")))
	})

	It("maps direct on the virtual page number modulo 1024", func() {
		Expect(lci.Index(0x0000_0ffc)).To(Equal(0))
		Expect(lci.Index(0x0000_1000)).To(Equal(1))
		// page 0x400 = 1024 shares entry 0 with page 0.
		Expect(lci.Index(0x0040_0000)).To(Equal(0))
	})

	It("hits after an update, misses on another page of the same entry, and keeps a locked entry from the send side", func() {
		Expect(t.Update(m, 0x0001_2344, 0x777, false)).To(BeTrue())
		phys, ok := t.Lookup(m, 0x0001_2ff0)
		Expect(ok).To(BeTrue())
		Expect(phys).To(Equal(uint32(0x777ff0)))
		// 0x0041_2000 is page 0x412, entry 0x12 like page 0x12.
		_, ok = t.Lookup(m, 0x0041_2000)
		Expect(ok).To(BeFalse())
		Expect(t.MissLock(m, 0x0041_2000)).To(BeTrue())
		Expect(t.MissLock(m, 0x0041_2000)).To(BeFalse())
		Expect(t.Update(m, 0x0001_2000, 0x777, false)).To(BeFalse())
		Expect(t.Entry(m, 0x12)).To(Equal(lci.NTLBEntry{VPN: 0x412, Locked: true}))
		Expect(t.Update(m, 0x0041_2000, 0x99, true)).To(BeTrue())
		Expect(t.Entry(m, 0x12)).To(Equal(lci.NTLBEntry{VPN: 0x412, PPN: 0x99, Valid: true}))
	})

	It("translates the send side: a miss updates the NTLB and fetches nothing, a hit gives the DMA source", func() {
		d := lci.RcpyDesc{Src: 0x0000_5010, Dst: 0x0000_8000, Node: 1, Size: 64, Buf: 3, PPN: 0x123, Flags: lci.RcpyMiss}
		_, fetch, ok := t.SendTranslate(m, d)
		Expect(ok).To(BeTrue())
		Expect(fetch).To(BeFalse())
		d.Flags, d.Src = 0, 0x0000_5020
		phys, fetch, ok := t.SendTranslate(m, d)
		Expect(ok && fetch).To(BeTrue())
		Expect(phys).To(Equal(uint32(0x123020)))
		d.Src = 0x0000_6000 // never mapped: the host library's fault
		_, _, ok = t.SendTranslate(m, d)
		Expect(ok).To(BeFalse())
	})

	It("delivers a hit to the destination and a miss to an anonymous page, locking the entry; stalls with none free", func() {
		anon := lci.NewAnonPages([]uint32{0x10_0000})
		t.Update(m, 0x0000_8000, 0x200, false)
		Expect(t.Receive(m, 0x0000_8010, anon)).To(Equal(lci.RcpyDelivery{Phys: 0x200010}))
		got := t.Receive(m, 0x0000_9010, anon)
		Expect(got).To(Equal(lci.RcpyDelivery{Phys: 0x10_0010, Miss: true, Anon: 0}))
		Expect(t.Entry(m, 9).Locked).To(BeTrue())
		// The second miss finds no anonymous page: the NI holds the packet.
		Expect(t.Receive(m, 0x0000_a000, anon)).To(Equal(lci.RcpyDelivery{Stall: true}))
		// A transfer to the locked page waits for the host too.
		anon.Give(0)
		Expect(t.Receive(m, 0x0000_9020, anon)).To(Equal(lci.RcpyDelivery{Stall: true}))
	})

	It("encodes and decodes a descriptor in 32 bytes, and checks it strictly", func() {
		d := lci.RcpyDesc{Seq: 9, Src: 0x1004, Dst: 0x2008, Node: 2, Size: 0x100, Buf: 1, PPN: 0xabc, Flags: lci.RcpyMiss, Handle: 77}
		b := d.Encode()
		Expect(b).To(HaveLen(lci.DescBytes))
		back, err := lci.DecodeRcpyDesc(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(d, back)).To(BeEmpty())
		b[8] = lci.TypeData
		_, err = lci.DecodeRcpyDesc(b)
		Expect(err).To(HaveOccurred())

		k := lci.RcpyCheck{Node: 0, Nodes: 4, MTU: 4096, SendBufs: 2}
		Expect(k.Check(d)).To(BeEmpty())
		bad := map[string]lci.RcpyDesc{}
		mod := func(name string, f func(*lci.RcpyDesc)) { x := d; f(&x); bad[name] = x }
		mod("not 4-byte aligned", func(x *lci.RcpyDesc) { x.Src = 0x1006 })
		mod("size 0 not in 4..4096", func(x *lci.RcpyDesc) { x.Size = 0 })
		mod("crosses a page", func(x *lci.RcpyDesc) { x.Dst = 0x2f80 })
		mod("destination node 0", func(x *lci.RcpyDesc) { x.Node = 0 })
		mod("destination node 4", func(x *lci.RcpyDesc) { x.Node = 4 })
		mod("flags 0x2", func(x *lci.RcpyDesc) { x.Flags = 2 })
		mod("send buffer 2 of 2", func(x *lci.RcpyDesc) { x.Buf = 2 })
		for why, x := range bad {
			Expect(k.Check(x)).To(Equal(why))
		}
		e := vtest.NewEnv(vtest.Options{})
		Expect(k.CheckReport(e, "FW", bad["crosses a page"])).To(BeFalse())
		Expect(violations(e)).To(ConsistOf(ContainSubstring("lci.desc FW: bad I-rcpy send descriptor")))
	})

	Describe("the NTLB consistency checker (lci.ntlb)", func() {
		// pinned: the host pinned virtual page v at physical page v+0x100.
		pinned := func(v uint32) (uint32, bool) { return v + 0x100, v < 0x50 }
		fill := func(t *lci.NTLB) {
			for v := uint32(0); v < 0x20; v++ {
				t.Update(m, v*lci.PageBytes, v+0x100, false)
			}
		}
		It("passes a consistent NTLB", func() {
			fill(t)
			e := vtest.NewEnv(vtest.Options{})
			Expect(t.CheckNTLB(e, "FW", m, pinned)).To(BeZero())
			Expect(e.Monitor.Err()).NotTo(HaveOccurred())
		})
		It("finds an unpinned page", func() {
			t.Update(m, 0x60*lci.PageBytes, 0x160, false)
			e := vtest.NewEnv(vtest.Options{})
			Expect(t.CheckNTLB(e, "FW", m, pinned)).To(Equal(1))
			Expect(violations(e)).To(ConsistOf(ContainSubstring("which the host has not pinned")))
		})
		It("fails on a broken model (mutation lci.ntlbstale: every 8th update one page off)", func() {
			bt := newNTLB(map[string]int{"lci.ntlbstale": 8})
			fill(bt)
			e := vtest.NewEnv(vtest.Options{})
			// 32 updates, every 8th wrong: 4 entries.
			Expect(bt.CheckNTLB(e, "FW", m, pinned)).To(Equal(4))
			Expect(e.Monitor.Violations()).To(HaveLen(4))
		})
	})
})
