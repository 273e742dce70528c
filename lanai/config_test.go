package lanai_test

import (
	"github.com/nisim/nisim/lanai"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Config", func() {
	It("accepts both presets", func() {
		Expect(lanai.LANai4().Validate()).To(Succeed())
		Expect(lanai.LANai9().Validate()).To(Succeed())
	})

	DescribeTable("rejects an impossible card with an error naming the part",
		func(mod func(c *lanai.Config), msg string) {
			c := lanai.LANai4()
			mod(&c)
			Expect(c.Validate()).To(MatchError(And(ContainSubstring("lanai4.1"), ContainSubstring(msg))))
		},
		Entry("no clock", func(c *lanai.Config) { c.Clock = clock.Clock{} }, "no clock"),
		Entry("SRAM under 4 KiB", func(c *lanai.Config) { c.SRAMBytes = 2048 }, "SRAM of 2048 bytes"),
		Entry("SRAM of 4 GiB", func(c *lanai.Config) { c.SRAMBytes = 1 << 32 }, "under 4 GiB"),
		Entry("SRAM moving nothing", func(c *lanai.Config) { c.SRAMBytesPerCycle = 0 }, "0 bytes/cycle"),
		Entry("negative SRAM latency", func(c *lanai.Config) { c.SRAMLatency = -1 }, "latency -1"),
		Entry("negative host DMA setup", func(c *lanai.Config) { c.HostDMASetup = -1 }, "setup -1"),
		Entry("zero host DMA burst", func(c *lanai.Config) { c.HostDMABurst = 0 }, "burst 0"),
		Entry("zero host DMA queue", func(c *lanai.Config) { c.HostDMAQueue = 0 }, "queue 0"),
		Entry("zero network burst", func(c *lanai.Config) { c.NetBurst = 0 }, "network burst 0"),
		Entry("zero send queue", func(c *lanai.Config) { c.SendQueue = 0 }, "send queue 0"),
	)

	Describe("Preset", func() {
		It("knows the LANai 4.1 of the PPro platform", func() {
			for _, name := range []string{"lanai4", "lanai4.1"} {
				c, err := lanai.Preset(name)
				Expect(err).NotTo(HaveOccurred())
				Expect(c).To(Equal(lanai.LANai4()))
			}
			c := lanai.LANai4()
			Expect(c.Clock).To(Equal(clock.MHz(33)))
			Expect(c.SRAMBytes).To(Equal(uint64(1 << 20)))
		})

		It("knows the LANai 9.2 of the P3 platform: same structure, faster, more SRAM, more cycles per instruction", func() {
			for _, name := range []string{"lanai9", "lanai9.2"} {
				c, err := lanai.Preset(name)
				Expect(err).NotTo(HaveOccurred())
				Expect(c).To(Equal(lanai.LANai9()))
			}
			c, l4 := lanai.LANai9(), lanai.LANai4()
			Expect(c.Clock).To(Equal(clock.MHz(133)))
			Expect(c.SRAMBytes).To(Equal(uint64(2 << 20)))
			// 133 MHz / 2.25 = 59 M instructions a second against 33 / 1.25
			// = 26.4 M: 2.24 times the LANai 4's, the paper's «about 2.4».
			Expect(c.CPI100).To(Equal(225))
			Expect(l4.CPI100).To(Equal(125))
			c.Name, c.Clock, c.SRAMBytes, c.CPI100 = l4.Name, l4.Clock, l4.SRAMBytes, l4.CPI100
			Expect(c).To(Equal(l4))
		})

		It("rejects an unknown name, naming it", func() {
			_, err := lanai.Preset("bogus")
			Expect(err).To(MatchError(ContainSubstring(`"bogus"`)))
		})
	})
})

var _ = Describe("Builder", func() {
	var (
		e  *env.Env
		fw *testFW
	)
	BeforeEach(func() {
		e = env.New(env.Options{})
		fw = newFW()
	})
	good := func() lanai.Builder {
		return lanai.MakeBuilder().WithEnv(e).WithNode(0, 2).WithProgram(fw).WithLink(netPlat.Link.Clock, netPlat.FlitBytes)
	}

	It("builds a card that reports its configuration", func() {
		c, err := good().WithNode(1, 2).Build("N1.NI")
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Config()).To(Equal(lanai.LANai4()))
		Expect([]int{c.Node(), c.Nodes()}).To(Equal([]int{1, 2}))
		Expect(c.SRAMSize()).To(Equal(uint32(1 << 20)))
		Expect(c.Program()).To(BeIdenticalTo(fw))
	})

	DescribeTable("refuses an incomplete or inconsistent card, naming it",
		func(mod func(b lanai.Builder) lanai.Builder, msg string) {
			_, err := mod(good()).Build("N0.NI")
			Expect(err).To(MatchError(And(ContainSubstring("N0.NI"), ContainSubstring(msg))))
		},
		Entry("no env", func(b lanai.Builder) lanai.Builder { return b.WithEnv(nil) }, "no env"),
		Entry("no program", func(b lanai.Builder) lanai.Builder { return b.WithProgram(nil) }, "no control program"),
		Entry("no link clock", func(b lanai.Builder) lanai.Builder { return b.WithLink(clock.Clock{}, 4) }, "no link clock"),
		Entry("zero flit", func(b lanai.Builder) lanai.Builder { return b.WithLink(netPlat.Link.Clock, 0) }, "flit of 0 bytes"),
		Entry("node outside the cluster", func(b lanai.Builder) lanai.Builder { return b.WithNode(2, 2) }, "node 2 outside a cluster of 2"),
		Entry("negative node", func(b lanai.Builder) lanai.Builder { return b.WithNode(-1, 2) }, "node -1 outside"),
		Entry("zero bus width", func(b lanai.Builder) lanai.Builder { return b.WithBusWidth(0) }, "window width 0 bytes"),
		Entry("bad configuration", func(b lanai.Builder) lanai.Builder {
			c := lanai.LANai4()
			c.SendQueue = 0
			return b.WithConfig(c)
		}, "send queue 0"),
	)
})
