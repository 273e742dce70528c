package shrimp_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/shrimp"
)

var _ = Describe("Config", func() {
	It("is valid for the prototype, with one OPT entry per 4 KB page of 32 MB", func() {
		c := shrimp.SHRIMP()
		Expect(c.Validate()).To(Succeed())
		// derived: 32 MB / 4 KB = 8192 (SH-P14).
		Expect(c.Entries()).To(Equal(8192))
		// derived: 32 KB / 8 B = 4096 words (SH-P19, SH-P20).
		Expect(c.FIFOWords()).To(Equal(4096))
		// one header word + ⌈4 / 8⌉ = 2 words for a 4-B store.
		Expect(c.PacketWords(4)).To(Equal(2))
	})

	DescribeTable("names the bad field",
		func(mod func(*shrimp.Config), field string) {
			c := shrimp.SHRIMP()
			mod(&c)
			err := c.Validate()
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(field))
		},
		Entry("page", func(c *shrimp.Config) { c.PageBytes = 3000 }, "PageBytes"),
		Entry("memory", func(c *shrimp.Config) { c.MemoryBytes = 4097 }, "MemoryBytes"),
		Entry("threshold", func(c *shrimp.Config) { c.FIFOThreshold = c.FIFOBytes + 1 }, "FIFOThreshold"),
		Entry("fifo", func(c *shrimp.Config) { c.FIFOBytes = 8 }, "FIFOBytes"),
		Entry("delay", func(c *shrimp.Config) { c.NICDelayCycles = -1 }, "NICDelayCycles"),
		Entry("combine timer", func(c *shrimp.Config) { c.CombineCycles = shrimp.MaxDelayCycles + 1 }, "CombineCycles"),
		Entry("subpage", func(c *shrimp.Config) { c.SubpageBytes = 100 }, "SubpageBytes"),
		Entry("du", func(c *shrimp.Config) { c.DUMaxBytes = 8192 }, "DUMaxBytes"),
		Entry("clock", func(c *shrimp.Config) { c.LinkClock = shrimp.Config{}.LinkClock }, "LinkClock"),
	)
})
