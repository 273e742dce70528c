package mctb_test

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/verify/testbench/mctb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// pciClock is the failure window's unit: the PCI, adapter and link clock.
var pciClock = clock.MHz(33)

// build builds the default cluster, changed by mod.
func build(e *env.Env, mod func(c *mctb.Config)) *mctb.Cluster {
	GinkgoHelper()
	c := mctb.DefaultConfig()
	if mod != nil {
		mod(&c)
	}
	cl, err := mctb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	return cl
}

var _ = Describe("Cluster", func() {
	It("builds the paper's eight four-CPU nodes around one hub", func() {
		e := vtest.NewEnv(vtest.Options{Clock: pciClock})
		cl := build(e, nil)
		Expect(cl.Nodes).To(HaveLen(8))
		for i, n := range cl.Nodes {
			Expect(n.ID).To(Equal(i))
			Expect(n.CPUs).To(HaveLen(4))
			Expect(n.DMA).To(BeNil())
			Expect(n.Adapter.Node()).To(Equal(i))
		}
		_, err := cl.Nodes[0].DMAWrite(0, 0x1000, []byte{1, 2, 3, 4})
		Expect(err).To(MatchError(ContainSubstring("WithoutDMA")))
		Expect(cl.Star.Hub.Ports()).To(Equal(8))
	})

	It("refuses bad parameters with an error naming them", func() {
		e := vtest.NewEnv(vtest.Options{Clock: pciClock})
		for _, x := range []struct {
			mod  func(c *mctb.Config)
			want string
		}{
			{func(c *mctb.Config) { c.Nodes = 0 }, "Nodes 0"},
			{func(c *mctb.Config) { c.CPUs = 5 }, "CPUs 5"},
			{func(c *mctb.Config) { c.TxBase = 0x1000_0000 - 8192 }, "TxBase"},
			{func(c *mctb.Config) { c.CSRBase = c.TxBase + 8192 }, "CSRBase"},
			{func(c *mctb.Config) { c.RxBase = 1 }, "RxBase"},
			{func(c *mctb.Config) { c.Adapter.TxBeatCycles = 0 }, "TxBeatCycles"},
		} {
			c := mctb.DefaultConfig()
			x.mod(&c)
			_, err := mctb.Build(e, c)
			Expect(err).To(MatchError(ContainSubstring(x.want)))
		}
	})

	It("maps regions as Figure 1 does: broadcast, point-to-point, loop-back", func() {
		e := vtest.NewEnv(vtest.Options{Clock: pciClock})
		cl := build(e, nil)
		b, err := cl.Broadcast("shared", 3*8192, false)
		Expect(err).NotTo(HaveOccurred())
		p, err := cl.PointToPoint("notices", 2, 100)
		Expect(err).NotTo(HaveOccurred())
		l, err := cl.Loopback("locks", 32)
		Expect(err).NotTo(HaveOccurred())
		// Global pages 0-2, 3, 4; every node's window and frames in
		// mapping order, frames from RxBase = 128 MB.
		Expect([]int{b.GlobalPage, b.Pages, p.GlobalPage, p.Pages, l.GlobalPage}).To(Equal([]int{0, 3, 3, 1, 4}))
		Expect(b.Tx[5]).To(Equal(uint64(0x4000_0000)))
		Expect(b.Rx[5]).To(Equal(uint64(128 << 20)))
		Expect(p.Tx[2]).To(BeZero())
		Expect(p.Rx[2]).To(Equal(uint64(128<<20 + 3*8192)))
		Expect(p.Rx[3]).To(BeZero())
		Expect(p.Tx[3]).To(Equal(uint64(0x4000_0000 + 3*8192)))
		// Node 2 transmits nothing into p, so its window moves on by b's
		// pages only.
		Expect(l.Tx[2]).To(Equal(uint64(0x4000_0000 + 3*8192)))
		Expect(l.Tx[3]).To(Equal(uint64(0x4000_0000 + 4*8192)))
		Expect(l.Loopback).To(BeTrue())
		e0, err := cl.Nodes[3].Adapter.TxTable.Entry(4)
		Expect(err).NotTo(HaveOccurred())
		Expect(e0.Valid && e0.GlobalPage == 4 && e0.LoopBack).To(BeTrue())
		_, err = p.TxAddr(2, 0)
		Expect(err).To(MatchError(ContainSubstring("node 2 has no transmit mapping")))
		_, err = cl.PointToPoint("bad", 8, 4)
		Expect(err).To(MatchError(ContainSubstring("owner 8")))
		_, err = cl.Broadcast("huge", 200<<20, false)
		Expect(err).To(MatchError(ContainSubstring("global pages")))
	})
})

var _ = Describe("Ref", func() {
	w := func(src int, seq uint64, page, off, n int, loop bool) *mchub.Write {
		return &mchub.Write{Src: src, Seq: seq, Addr: uint64(page*mchub.PageSize + off), Len: n, Loopback: loop}
	}
	It("shows an ordered write in Image before it reaches memory, a sent one only once the hub orders it", func() {
		r := mctb.NewRef(2)
		r.MapRx(1, 5, 0x20000)
		a := w(0, 1, 5, 8, 4, false)
		Expect(r.Sent(a, []byte{1, 2, 3, 4})).To(Succeed())
		Expect(r.Image(1, 0x20008, 4)).To(Equal([]byte{0, 0, 0, 0}), "sent, not ordered")
		a.Order = 1
		Expect(r.Ordered(a)).To(Succeed())
		Expect(r.Pending(1)).To(HaveLen(1), "not yet in node 1's memory")
		Expect(r.Image(1, 0x20008, 4)).To(Equal([]byte{1, 2, 3, 4}))
		Expect(r.Image(1, 0x20006, 4)).To(Equal([]byte{0, 0, 1, 2}))
		Expect(r.Image(0, 0x20008, 4)).To(BeNil(), "node 0 does not map page 5")
		Expect(r.Image(1, 0x20000+mchub.PageSize-2, 4)).To(BeNil(), "crosses out of the page")
		r.LocalWrite(1, 0x2000a, []byte{9})
		Expect(r.Image(1, 0x20008, 4)).To(Equal([]byte{1, 2, 9, 4}), "a local store")
	})
	It("expects an ordered write at every node mapping its page, the writer only with loop-back", func() {
		r := mctb.NewRef(3)
		r.KeepHistory()
		r.MapRx(0, 5, 0x10000)
		r.MapRx(1, 5, 0x20000)
		a := w(0, 1, 5, 8, 4, false)
		Expect(r.Sent(a, []byte{1, 2, 3, 4})).To(Succeed())
		Expect(r.Sent(a, []byte{1, 2, 3, 4})).To(MatchError("src 0 sent seq 1 twice"))
		a.Order = 1
		Expect(r.Ordered(a)).To(Succeed())
		Expect(r.Pending(0)).To(BeEmpty())
		Expect(r.Pending(1)).To(HaveLen(1))
		Expect(r.Pending(1)[0].Addr).To(Equal(uint64(0x20008)))
		Expect(r.Pending(2)).To(BeEmpty(), "node 2 does not map page 5")
		Expect(r.Ordered(a)).To(MatchError(ContainSubstring("which no adapter sent")))
		b := w(1, 1, 5, 8, 4, true)
		Expect(r.Sent(b, []byte{5, 6, 7, 8})).To(Succeed())
		b.Order = 2
		Expect(r.Ordered(b)).To(Succeed())
		Expect(r.Pending(1)).To(HaveLen(2), "loop-back: the writer too")
		Expect(r.Pending(0)).To(HaveLen(1))
		// Node 1's word at 0x20008 was 0, 0x04030201, 0x08070605.
		Expect(r.CheckLoad32(1, 0x20008, 0x04030201)).To(Succeed())
		Expect(r.CheckLoad32(1, 0x20008, 0x08070605)).To(Succeed())
		Expect(r.CheckLoad32(1, 0x20008, 0x08070201)).To(MatchError(ContainSubstring("a value the word never had")))
		// A CRC drop at node 0 consumes its expectation; an unmapped drop
		// of a write Ref expects is an error.
		Expect(r.Dropped(0, mcadapter.Drop{Reason: mcadapter.RxCRC, Order: 2})).To(Succeed())
		Expect(r.Pending(0)).To(BeEmpty())
		Expect(r.Stats().Lost).To(Equal(uint64(1)))
		Expect(r.Dropped(1, mcadapter.Drop{Reason: mcadapter.RxUnmapped, Order: 1})).To(MatchError(ContainSubstring("dropped order 1")))
		Expect(r.Stats()).To(Equal(mctb.RefStats{Sent: 3, Ordered: 2, Expected: 3, RxUnmapped: 1, RxCRC: 1, Lost: 1}))
	})
})

var _ = Describe("MapAt", func() {
	It("puts a region's receive frames where the caller says and delivers there", func() {
		e := vtest.NewEnv(vtest.Options{Clock: pciClock})
		cl := build(e, func(c *mctb.Config) { c.Nodes = 2; c.CPUs = 1 })
		// Two pages received by node 1 only, at 16 MB (below RxBase), and
		// transmitted by node 0: Cashmere-2L's home copy of a superpage.
		const frame = 16 << 20
		r, err := cl.MapAt("home", 2*8192, false, []bool{true, false}, []uint64{0, frame})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Rx).To(Equal([]uint64{0, frame}))
		Expect(r.Tx[0]).To(Equal(uint64(0x4000_0000)))
		// The bump allocator did not move: the next region's frames start
		// at RxBase.
		b, err := cl.Broadcast("next", 8, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Rx[1]).To(Equal(uint64(128 << 20)))
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(r.Tx[0]+8192+4, 0xfeedf00d) // the second page
			p.Fence()
		}))
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Finish()).To(Succeed())
		Expect(word(cl, 1, frame+8192+4)).To(Equal(uint32(0xfeedf00d)))
		_, err = cl.MapAt("bad", 8192, false, []bool{true, true}, []uint64{0, frame + 4})
		Expect(err).To(MatchError(ContainSubstring("node 1's frame 0x1000004 must be page-aligned")))
		_, err = cl.MapAt("short", 8192, false, []bool{true}, []uint64{0})
		Expect(err).To(MatchError(ContainSubstring("one entry per node")))
	})
})

var _ = Describe("Checkers", func() {
	// oneWrite runs node 0 writing 0xdeadbeef to node 1's point-to-point
	// region and returns the cluster and the region, before Finish.
	oneWrite := func() (*mctb.Cluster, mctb.Region) {
		e := vtest.NewEnv(vtest.Options{Clock: pciClock})
		cl := build(e, nil)
		r, err := cl.PointToPoint("p2p", 1, 8192)
		Expect(err).NotTo(HaveOccurred())
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(r.Tx[0], 0xdeadbeef)
			p.Fence()
		}))
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		return cl, r
	}

	It("see a 4-byte write from node 0 arrive in node 1's memory, exactly once", func() {
		cl, r := oneWrite()
		Expect(cl.Finish()).To(Succeed())
		Expect(word(cl, 1, r.Rx[1])).To(Equal(uint32(0xdeadbeef)))
		Expect(cl.Ref.Stats()).To(Equal(mctb.RefStats{Sent: 1, Ordered: 1, Expected: 1, Delivered: 1, RxUnmapped: 6}))
	})

	It("report a receive frame that differs from Ref at the end (mc.scoreboard)", func() {
		cl, r := oneWrite()
		Expect(cl.Nodes[1].Memory().Storage().Write(r.Rx[1]+100, []byte{9})).To(Succeed())
		err := cl.Finish()
		Expect(err).To(MatchError(ContainSubstring("[mc.scoreboard] global page 0 at 0x8000064: memory has 0x09, Ref 0x00")))
	})

	It("report a loaded word that Ref's history never had (mc.torn)", func() {
		cl, r := oneWrite()
		cl.Ref.KeepHistory()
		cl.CheckLoad32(0, 1, r.Rx[1], 0xdead0000)
		Expect(cl.Finish()).To(MatchError(ContainSubstring("[mc.torn] node 1 loaded 0xdead0000")))
	})
})

var _ = Describe("Ref history", func() {
	It("remembers every word a multi-word write touches (it once kept only the first)", func() {
		r := mctb.NewRef(2)
		r.KeepHistory()
		r.MapRx(1, 0, 0x10000)
		a := &mchub.Write{Src: 0, Seq: 1, Addr: 4, Len: 8}
		Expect(r.Sent(a, []byte{1, 0, 0, 0, 2, 0, 0, 0})).To(Succeed())
		a.Order = 1
		Expect(r.Ordered(a)).To(Succeed())
		Expect(r.CheckLoad32(1, 0x10004, 1)).To(Succeed())
		Expect(r.CheckLoad32(1, 0x10008, 2)).To(Succeed())
		Expect(r.CheckLoad32(1, 0x1000c, 0)).To(Succeed())
	})
})

var _ = Describe("Traffic", func() {
	It("refuses bad parameters with an error naming them", func() {
		e := vtest.NewEnv(vtest.Options{Clock: pciClock})
		cl := build(e, nil)
		r, err := cl.Broadcast("small", 16, false)
		Expect(err).NotTo(HaveOccurred())
		for _, x := range []struct {
			t    mctb.Traffic
			want string
		}{
			{mctb.Traffic{Writes: -1, MinBytes: 4, MaxBytes: 4}, "Writes -1"},
			{mctb.Traffic{MinBytes: 2, MaxBytes: 4}, "MinBytes 2"},
			{mctb.Traffic{MinBytes: 8, MaxBytes: 4}, "MaxBytes 4"},
			{mctb.Traffic{MinBytes: 4, MaxBytes: 4, MaxGap: -1}, "MaxGap -1"},
			{mctb.Traffic{MinBytes: 4, MaxBytes: 4, LoadEvery: -1}, "LoadEvery -1"},
			{mctb.Traffic{MinBytes: 4, MaxBytes: 32}, "exceeds region small"},
		} {
			Expect(cl.StartTraffic(x.t, []mctb.Region{r})).To(MatchError(ContainSubstring(x.want)))
		}
	})
})
