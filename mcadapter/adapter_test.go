package mcadapter_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/vtest"
)

var _ = Describe("Adapter Builder", func() {
	var (
		e   *env.Env
		clk clock.Clock
	)
	BeforeEach(func() {
		clk = bus.PCI32().Clock
		e = vtest.NewEnv(vtest.Options{Clock: clk})
	})

	DescribeTable("refuses a bad builder, naming the adapter and the parameter",
		func(b func() mcadapter.Builder, msg string) {
			a, err := b().Build("Mc")
			Expect(a).To(BeNil())
			Expect(err).To(MatchError(SatisfyAll(HavePrefix("Mc: "), ContainSubstring(msg))))
		},
		Entry("no env", func() mcadapter.Builder { return mcadapter.MakeBuilder().WithClock(clk) }, "no env (WithEnv)"),
		Entry("no clock", func() mcadapter.Builder { return mcadapter.MakeBuilder().WithEnv(e) }, "no clock (WithClock)"),
		Entry("negative node", func() mcadapter.Builder {
			return mcadapter.MakeBuilder().WithEnv(e).WithClock(clk).WithNode(-1)
		}, "node -1 must be in 0..255"),
		Entry("node beyond the header's source field", func() mcadapter.Builder {
			return mcadapter.MakeBuilder().WithEnv(e).WithClock(clk).WithNode(256)
		}, "node 256 must be in 0..255"),
		Entry("a bad parameter", func() mcadapter.Builder {
			c := mcadapter.MC1()
			c.TxBeatCycles = 0
			return mcadapter.MakeBuilder().WithEnv(e).WithClock(clk).WithConfig(c)
		}, "TxBeatCycles 0 must be at least 1"),
	)

	It("builds MC1 by default and refuses a second link and a bus-less attachment", func() {
		a, err := mcadapter.MakeBuilder().WithEnv(e).WithClock(clk).WithNode(7).Build("Mc")
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Name()).To(Equal("Mc"))
		Expect(a.Node()).To(Equal(7))
		Expect(a.Config()).To(Equal(mcadapter.MC1()))
		Expect(a.Idle()).To(BeTrue())
		Expect(a.AttachPCI(nil, txBenchBase, txBenchCSR)).To(MatchError(ContainSubstring("Mc: AttachPCI: no bus")))
		Expect(a.ConnectLink(star.Port{})).To(MatchError(ContainSubstring("port without links")))
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(mchub.LinkConfig()).Build("Link")
		Expect(err).NotTo(HaveOccurred())
		p := star.Port{Send: l.From(link.A), Recv: l.From(link.B)}
		Expect(a.ConnectLink(p)).To(Succeed())
		Expect(a.ConnectLink(p)).To(MatchError(ContainSubstring("already connected")))
	})

	It("refuses a transmit window that overlaps another target, naming both", func() {
		a, err := mcadapter.MakeBuilder().WithEnv(e).WithClock(clk).Build("Mc")
		Expect(err).NotTo(HaveOccurred())
		pci, err := bus.MakeBuilder().WithEnv(e).Build("Pci")
		Expect(err).NotTo(HaveOccurred())
		ch, err := mem.NewChannel(e, "Other.Port", 4, 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(pci.AddTarget("Other", txBenchBase+0x1000, 0x1000, ch)).To(Succeed())
		Expect(a.AttachPCI(pci, txBenchBase, txBenchCSR)).To(MatchError(SatisfyAll(
			HavePrefix("Mc: tx window: Pci: window of Mc.Tx"), ContainSubstring("overlaps Other"))))
	})
})

var _ = Describe("Adapter status and interrupt", func() {
	It("latches the first fault, interrupts once until cleared, and again after ClearStatus", func() {
		b := newTxBench(txBenchConfig(), bus.PCI32())
		// Three 4-byte writes to invalid pages 7, 8 (at once) and 9 (from
		// cycle 200); the handler clears the status at cycle 100.
		b.write(7*8192, []byte{1, 1, 1, 1})
		b.write(8*8192, []byte{2, 2, 2, 2})
		b.writeAt(200, 9*8192, []byte{3, 3, 3, 3})
		var atClear, afterClear mcadapter.Status
		vtest.AtCycle(b.e, "Handler", b.clk, 100, func(clock.Time) {
			atClear = b.ad.Status()
			b.ad.ClearStatus()
			afterClear = b.ad.Status()
		})
		Expect(b.run()).To(Succeed())
		// First write: beat written at c8 (the 4-byte write's cycles), the
		// line rises. Second: its address phase follows the first's data
		// phase (c7) and idle cycle (c8): arbitration hidden, ADDR c9,
		// decode and waits c10..c13, data c14, port c15: the status takes
		// page 8, the line is already high (no second interrupt). Third:
		// pushed at c200, seen c201 ARB (the bus was idle), c202 ADDR,
		// c207 data, c208 port: a new rising edge.
		Expect(b.irqs).To(Equal([]clock.Cycle{8, 208}))
		Expect(atClear).To(Equal(mcadapter.Status{Cause: mcadapter.CauseTxInvalid, Page: 8, Pending: true}))
		Expect(afterClear).To(Equal(mcadapter.Status{}))
		Expect(b.ad.Status()).To(Equal(mcadapter.Status{Cause: mcadapter.CauseTxInvalid, Page: 9, Pending: true}))
		Expect(b.ad.TxTable.Status()).To(Equal(mcadapter.TxStatus{Fault: true, Page: 9}))
		Expect(b.ad.Counters().TxInvalid).To(Equal(uint64(3)))
		Expect(b.drops).To(HaveLen(3))
		Expect(b.got).To(BeEmpty())
	})
})
