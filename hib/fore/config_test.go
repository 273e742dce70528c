package fore_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/rtl/clock"
)

var _ = Describe("Config", func() {
	It("accepts TCA100: 40 TX cells, 300 RX cells on the 25 MHz TURBOchannel", func() {
		c := fore.TCA100()
		Expect(c.Validate()).To(Succeed())
		Expect(c.TxCells).To(Equal(40))  // AT-P7
		Expect(c.RxCells).To(Equal(300)) // AT-P6
		// 25 MHz: 40 ns a cycle (AT-P5).
		Expect(c.Clock.Period()).To(Equal(40 * clock.Nanosecond))
		// A cell is 14 words = 56 bytes (AT-P5).
		Expect(fore.CellBytes).To(Equal(56))
	})

	DescribeTable("refuses a bad parameter, naming it",
		func(change func(c *fore.Config), msg string) {
			c := fore.TCA100()
			change(&c)
			Expect(c.Validate()).To(MatchError(ContainSubstring(msg)))
		},
		Entry("no clock", func(c *fore.Config) { c.Clock = clock.Clock{} }, "Clock"),
		Entry("TX 0", func(c *fore.Config) { c.TxCells = 0 }, "TxCells 0"),
		Entry("TX beyond STATUS", func(c *fore.Config) { c.TxCells = 64 }, "TxCells 64"),
		Entry("RX 0", func(c *fore.Config) { c.RxCells = 0 }, "RxCells 0"),
		Entry("RX beyond STATUS", func(c *fore.Config) { c.RxCells = 1024 }, "RxCells 1024"),
		Entry("negative latency", func(c *fore.Config) { c.CellLatency = -1 }, "CellLatency -1"),
		Entry("huge latency", func(c *fore.Config) { c.CellLatency = 2_000_000 }, "CellLatency 2000000"),
		Entry("bad link", func(c *fore.Config) { c.Link.BytesPerCycle = 0 }, "Link"),
	)

	It("the builder refuses a missing env and a bad node", func() {
		_, err := fore.MakeBuilder().Build("N0.Fore")
		Expect(err).To(MatchError(ContainSubstring("WithEnv")))
	})
})
