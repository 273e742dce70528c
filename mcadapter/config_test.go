package mcadapter_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/mcadapter"
)

var _ = Describe("Config", func() {
	It("accepts MC1, whose window is 128 MB of 8 KB pages", func() {
		c := mcadapter.MC1()
		Expect(c.Validate()).To(Succeed())
		// 16384 pages x 8192 bytes = 134217728 = 128 MB (MC-P7, MC-P20).
		Expect(c.WindowBytes()).To(Equal(uint64(128 << 20)))
	})

	DescribeTable("refuses a bad parameter, naming it",
		func(change func(c *mcadapter.Config), msg string) {
			c := mcadapter.MC1()
			change(&c)
			Expect(c.Validate()).To(MatchError(ContainSubstring(msg)))
		},
		Entry("page too small", func(c *mcadapter.Config) { c.PageBytes = 2 }, "PageBytes 2 must be a power of two in 4..65536"),
		Entry("page not a power of two", func(c *mcadapter.Config) { c.PageBytes = 6000 }, "PageBytes 6000 must be a power of two"),
		Entry("page too large", func(c *mcadapter.Config) { c.PageBytes = 1 << 17 }, "PageBytes 131072 must be a power of two"),
		Entry("no window pages", func(c *mcadapter.Config) { c.TxPages = 0 }, "TxPages 0 must be in 1..65536"),
		Entry("too many window pages", func(c *mcadapter.Config) { c.TxPages = 65537 }, "TxPages 65537 must be in 1..65536"),
		Entry("no global pages", func(c *mcadapter.Config) { c.GlobalPages = 0 }, "GlobalPages 0 must be at least 1"),
		Entry("too many global pages", func(c *mcadapter.Config) { c.GlobalPages = 65537 }, "GlobalPages 65537 must be at most 65536"),
		Entry("no host memory", func(c *mcadapter.Config) { c.HostBytes = 0 }, "HostBytes 0 must be a positive multiple of PageBytes 8192"),
		Entry("host memory not whole pages", func(c *mcadapter.Config) { c.HostBytes = 12288 }, "HostBytes 12288 must be a positive multiple"),
		Entry("empty packets", func(c *mcadapter.Config) { c.MaxPacketBytes = 0 }, "MaxPacketBytes 0 must be at least 1"),
		Entry("packets that split a word", func(c *mcadapter.Config) { c.MaxPacketBytes = 30 }, "MaxPacketBytes 30 must be a multiple of 4"),
		Entry("packets larger than a page", func(c *mcadapter.Config) { c.MaxPacketBytes = 16384 }, "MaxPacketBytes 16384 must be a multiple of 4 (a 32-bit word, MC-P18) and at most PageBytes 8192"),
		Entry("no beat time", func(c *mcadapter.Config) { c.TxBeatCycles = 0 }, "TxBeatCycles 0 must be at least 1"),
		Entry("a beat beyond PCI's subsequent latency", func(c *mcadapter.Config) { c.TxBeatCycles = 9 }, "TxBeatCycles 9 must be at most 8"),
		Entry("no TX FIFO", func(c *mcadapter.Config) { c.TxFIFOBytes = 0 }, "TxFIFOBytes 0 must be at least 1"),
		Entry("a TX FIFO smaller than a packet", func(c *mcadapter.Config) { c.TxFIFOBytes = 16 }, "TxFIFOBytes 16 must hold one packet of MaxPacketBytes 32"),
		Entry("a negative pipeline", func(c *mcadapter.Config) { c.PipelineCycles = -1 }, "PipelineCycles -1 must be in 0..1000000"),
		Entry("an absurd pipeline", func(c *mcadapter.Config) { c.PipelineCycles = 1 << 40 }, "PipelineCycles 1099511627776 must be in 0..1000000"),
		Entry("no RX FIFO", func(c *mcadapter.Config) { c.RxFIFOBytes = 0 }, "RxFIFOBytes 0 must be at least 1"),
		Entry("an RX FIFO smaller than a packet", func(c *mcadapter.Config) { c.RxFIFOBytes = 16 }, "RxFIFOBytes 16 must hold one packet of MaxPacketBytes 32"),
		Entry("no RX descriptors", func(c *mcadapter.Config) { c.RxFIFOPackets = 0 }, "RxFIFOPackets 0 must be at least 1"),
		Entry("a negative DMA setup", func(c *mcadapter.Config) { c.DMASetupCycles = -1 }, "DMASetupCycles -1 must be in 0..1000000"),
		Entry("no DMA burst", func(c *mcadapter.Config) { c.DMABurstBytes = 0 }, "DMABurstBytes 0 must be at least 1"),
		Entry("a CSR window without room for the tables", func(c *mcadapter.Config) { c.CSRBytes = 4096 }, "CSRBytes 4096 must hold both tables"),
	)
})
