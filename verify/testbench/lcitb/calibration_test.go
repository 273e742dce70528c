package lcitb_test

import (
	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/lanai"
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

var _ = Describe("The LANai CPI the firmware's costs are converted at", func() {
	It("is the card's: lci.DefaultCosts (the firmware specs' costs) uses the LANai 4's CPI, and the cluster the platform's", func() {
		// lci.DefaultCPI100 is the firmware package's copy of the LANai 4's
		// calibrated CPI (a control program cannot import the card); it
		// must not drift from lanai.LANai4.
		Expect(fw.DefaultCPI100).To(Equal(lanai.LANai4().CPI100))
		p3 := lcitb.DefaultConfig()
		p3.Platform = lcilib.P3()
		for _, c := range []lcitb.Config{lcitb.DefaultConfig(), p3} {
			Expect(c.FirmwareConfig().Costs).To(Equal(fw.DefaultInstructions().AtCPI(c.Platform.NI.CPI100)))
		}
		// The P3's LANai 9: Transmit's 20 instructions at 2.25 = 45 cycles
		// (at the LANai 4's 1.25, 25).
		Expect(p3.FirmwareConfig().Costs.Transmit).To(Equal(45))
		Expect(lcitb.DefaultConfig().FirmwareConfig().Costs.Transmit).To(Equal(25))
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
		Entry("a cluster size below the nodes", func(c *lcitb.Config) { c.Nodes, c.ClusterSize = 8, 4 }, "cluster size 4"),
		Entry("negative host slots", func(c *lcitb.Config) { c.HostSlots = -1 }, "-1 host slots"),
	)
})
