package lcitb_test

import (
	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func us(t clock.Time) float64 { return float64(t) / 1e6 }

// within checks a model figure against the paper's within a fraction.
func within(model clock.Time, paper, frac float64) {
	GinkgoHelper()
	Expect(us(model)).To(BeNumerically("~", paper, paper*frac), "model %.2f µs vs paper %.2f µs", us(model), paper)
}

var _ = Describe("PPro I-sdma calibration (Table III)", Ordered, func() {
	var r lcitb.LogP
	BeforeAll(func() {
		var err error
		r, err = lcitb.MeasureLogP(nil, lcitb.DefaultConfig(), lcitb.DefaultBench())
		Expect(err).NotTo(HaveOccurred())
	})
	It("send overhead os = 1.8 µs within 10%", func() { within(r.Os, 1.8, 0.10) })
	It("receive overhead or = 2.6 µs within 10%", func() { within(r.Or, 2.6, 0.10) })
	It("latency L = 10.7 µs within 10%", func() { within(r.L, 10.7, 0.10) })
	It("end-to-end latency = 15.1 µs within 10%", func() { within(r.E2E, 15.1, 0.10) })
	It("fetch-and-add latency = 18.0 µs within 10%", func() { within(r.FA, 18.0, 0.10) })
	It("gap g = 11.1 µs within 10%", func() { within(r.G, 11.1, 0.10) })
	It("has a gap that bounds the stream below the round trip", func() {
		Expect(r.G).To(BeNumerically(">", 0))
		Expect(r.G).To(BeNumerically("<", 2*r.E2E))
	})
})

var _ = Describe("I-pio against I-sdma on the PPro (Table IV, validation)", func() {
	It("has the lower end-to-end latency for 16-byte messages", func() {
		c := lcitb.DefaultConfig()
		sd, err := lcitb.PingPong(nil, c, lcitb.DefaultBench())
		Expect(err).NotTo(HaveOccurred())
		c.Variant = fw.PIO
		pio, err := lcitb.PingPong(nil, c, lcitb.DefaultBench())
		Expect(err).NotTo(HaveOccurred())
		Expect(pio.E2E).To(BeNumerically("<", sd.E2E))
	})
})

var _ = Describe("Config", func() {
	DescribeTable("refuses an impossible cluster",
		func(mod func(c *lcitb.Config), msg string) {
			c := lcitb.DefaultConfig()
			mod(&c)
			Expect(c.Validate()).To(MatchError(ContainSubstring(msg)))
		},
		Entry("one node", func(c *lcitb.Config) { c.Nodes = 1 }, "2 to 64"),
		Entry("too many nodes", func(c *lcitb.Config) { c.Nodes = 65 }, "2 to 64"),
		Entry("no receive buffers for a window", func(c *lcitb.Config) { c.Platform.RecvBufs = 64 }, "window"),
		Entry("an SRAM too small", func(c *lcitb.Config) { c.Platform.NI.SRAMBytes = 64 << 10 }, "SRAM"),
		Entry("an unknown topology", func(c *lcitb.Config) { c.Platform.Topology = "ring" }, "topology"),
		Entry("host memory below the library's memory map", func(c *lcitb.Config) { c.Platform.Host.Memory.SizeBytes = 64 << 20 }, "memory map"),
		Entry("a host platform without caches", func(c *lcitb.Config) { c.Platform.Host.Caches = nil }, "Caches"),
	)
})
