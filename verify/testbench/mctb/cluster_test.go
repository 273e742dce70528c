package mctb_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
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
