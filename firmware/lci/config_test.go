package lci_test

import (
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Config", func() {
	It("gives the paper's window on the PPro platform and fits its 1 MB SRAM", func() {
		// (256 buffers - 4 spare) / 63 senders = 4 (MY-P23's estimate).
		cfg := lci.DefaultConfig()
		Expect(cfg.Window()).To(Equal(4))
		Expect(cfg.Validate(1 << 20)).To(Succeed())
	})

	DescribeTable("WithMTU holds the buffer bytes and derives the window W (section 5.3, I-1k and I-4k)",
		func(recvBufs, mtu, wantRecv, wantSpare, wantSend, wantSlots, wantW int) {
			base := lci.DefaultConfig()
			base.RecvBufs = recvBufs
			c := base.WithMTU(mtu)
			Expect(c.MTU).To(Equal(mtu))
			Expect([]int{c.RecvBufs, c.SpareBufs, c.SendBufs, c.HostSlots, c.Window()}).To(Equal([]int{wantRecv, wantSpare, wantSend, wantSlots, wantW}))
			// The receive pool's bytes do not move: RecvBufs x MTU = 512 KB
			// (PPro) or 1 MB (P3); the send pool's 16 x 2 KB = 32 KB.
			Expect(c.RecvBufs * c.MTU).To(Equal(recvBufs * lci.BaseMTU))
			Expect(c.SendBufs * c.MTU).To(Equal(16 * lci.BaseMTU))
			Expect(c.SendQSlots).To(Equal(base.SendQSlots))
			Expect(c.Validate(1 << 21)).To(Succeed())
		},
		// PPro, 256 x 2 KB (MY-P22): W = (256 - 4) / 63 = 4.
		Entry("PPro 2 KB", 256, 2048, 256, 4, 16, 64, 4),
		// 512 KB / 1 KB = 512 buffers, 8 KB of spares = 8: (512 - 8) / 63 = 504 / 63 = 8.
		Entry("PPro 1 KB", 256, 1024, 512, 8, 32, 128, 8),
		// 512 KB / 4 KB = 128, spares 2: (128 - 2) / 63 = 126 / 63 = 2.
		Entry("PPro 4 KB", 256, 4096, 128, 2, 8, 32, 2),
		// P3, 512 x 2 KB: (512 - 4) / 63 = 508 / 63 = 8 (8.06).
		Entry("P3 2 KB", 512, 2048, 512, 4, 16, 64, 8),
		// 1024 buffers, 8 spare: (1024 - 8) / 63 = 1016 / 63 = 16 (16.1).
		Entry("P3 1 KB", 512, 1024, 1024, 8, 32, 128, 16),
		// 256 buffers, 2 spare: (256 - 2) / 63 = 254 / 63 = 4 (4.03).
		Entry("P3 4 KB", 512, 4096, 256, 2, 8, 32, 4),
	)

	It("lays out SRAM from the one MTU value (PPro buffers at 1, 2 and 4 KB), within the LANai 4's 1 MB", func() {
		lay := func(mtu int) lci.Layout { return lci.NewLayout(lci.DefaultConfig().WithMTU(mtu)) }
		// All three: Fwd 0x40 + 64 roots * 8 = 576, rounded to 64 = 576
		// (SendQ); 64 descriptors * 32 = 2048 -> FreeQ at 2624.
		// 4 KB: 32 host slots * 16 = 512 -> Ctl 3136; + 64 * 32 = 2048 ->
		// 5184 (a multiple of 64): 8 send buffers of 4096 + 2*16 = 4128 ->
		// 5184 + 33024 = 38208; 128 receive buffers -> 38208 + 528384 =
		// 566592; the NI's own queue, 16 * 32 = 512 -> 567104.
		Expect(lay(4096)).To(Equal(lci.Layout{SendQ: 576, SendQSlots: 64, FreeQ: 2624, FreeQSlots: 32, Ctl: 3136, NCtl: 64,
			SendBufs: 5184, NSendBufs: 8, RecvBufs: 38208, NRecvBufs: 128, FwdQ: 566592, FwdQSlots: 16, Fwd: 0x40, Buf: 4128, End: 567104}))
		// 2 KB: 64 slots * 16 = 1024 -> Ctl 3648; + 2048 = 5696 (89 * 64);
		// 16 * 2080 = 33280 -> 38976; 256 * 2080 = 532480 -> 571456; + 512.
		Expect(lay(2048).End).To(BeEquivalentTo(571968))
		// 1 KB: 128 slots * 16 = 2048 -> Ctl 4672; + 2048 = 6720 (105 * 64);
		// 32 * 1056 = 33792 -> 40512; 512 * 1056 = 540672 -> 581184; + 512.
		Expect(lay(1024).End).To(BeEquivalentTo(581696))
		// The receive pool's data bytes are the same, 512 KB; its headers
		// (2 * 16 per buffer) grow with the count: 128, 256, 512 buffers.
		for _, m := range []int{1024, 2048, 4096} {
			Expect(lci.DefaultConfig().WithMTU(m).Validate(1 << 20)).To(Succeed())
		}
	})

	It("names the implementations as Table II composes them", func() {
		c := lci.DefaultConfig()
		Expect(c.Name()).To(Equal("I-sdma"))
		c.Variant = lci.PIO
		Expect(c.WithMTU(1024).Name()).To(Equal("I-pio-1k"))
		Expect(c.WithMTU(4096).Name()).To(Equal("I-pio-4k"))
		Expect(c.WithMTU(1536).Name()).To(Equal("I-pio-1536"))
	})

	It("WithMTU leaves a bad MTU to Validate", func() {
		Expect(lci.DefaultConfig().WithMTU(0).Validate(1 << 20)).To(MatchError(ContainSubstring("MTU 0 must be")))
		// 65536 bytes: 256 x 2048 / 65536 = 8 receive buffers, W = (8 - 1) / 63 = 0.
		Expect(lci.DefaultConfig().WithMTU(65536).Validate(1 << 20)).To(MatchError(ContainSubstring("MTU 65536")))
	})

	It("lays out the small test configuration as worked out by hand", func() {
		// Fwd 0x40 + 8 roots * 8 = 0x80; SendQ 16 * 32 = 0x200 -> 0x280;
		// FreeQ 8 * 16 = 0x80 -> 0x300; Ctl 64 * 32 = 0x800 -> 0xb00;
		// 8 send buffers of 64+32 = 96 bytes -> 0xe00; 32 receive
		// buffers -> 0x1a00; the NI's own send queue, 2 * FwdWidth = 16
		// descriptors of 32 bytes -> 0x1c00.
		l := lci.NewLayout(testConfig())
		Expect(l).To(Equal(lci.Layout{SendQ: 0x80, SendQSlots: 16, FreeQ: 0x280, FreeQSlots: 8, SendBufs: 0xb00, NSendBufs: 8,
			RecvBufs: 0xe00, NRecvBufs: 32, FwdQ: 0x1a00, FwdQSlots: 16, Fwd: 0x40, Ctl: 0x300, NCtl: 64, Buf: 96, End: 0x1c00}))
		Expect(l.SendBuf(2)).To(BeEquivalentTo(0xb00 + 2*96))
		Expect(l.RecvBuf(31)).To(BeEquivalentTo(0xe00 + 31*96))
		Expect(l.CtlBuf(63)).To(BeEquivalentTo(0x300 + 63*32))
		Expect(testConfig().Validate(sramBytes)).To(Succeed())
		Expect(testConfig().Validate(0x1c00)).To(Succeed())
	})

	DescribeTable("Validate refuses a configuration with a clear error",
		func(change func(*lci.Config), sram uint32, msg string) {
			cfg := testConfig()
			change(&cfg)
			Expect(cfg.Validate(sram)).To(MatchError(ContainSubstring(msg)))
		},
		Entry("MTU not a multiple of 4", func(c *lci.Config) { c.MTU = 66 }, uint32(sramBytes), "MTU 66 must be a multiple of 4"),
		Entry("MTU too small", func(c *lci.Config) { c.MTU = 12 }, uint32(sramBytes), "MTU 12"),
		Entry("MTU beyond the 16-bit length", func(c *lci.Config) { c.MTU = 65504 }, uint32(sramBytes), "MTU 65504"),
		Entry("cluster of one", func(c *lci.Config) { c.ClusterSize = 1 }, uint32(sramBytes), "cluster size 1"),
		Entry("no spare buffer", func(c *lci.Config) { c.SpareBufs = 0 }, uint32(sramBytes), "0 spare receive buffers"),
		Entry("window below 2", func(c *lci.Config) { c.RecvBufs = 17 }, uint32(sramBytes),
			"17 receive buffers (4 spare) give a window of 1 for 7 senders: need at least 2"),
		Entry("no send buffer", func(c *lci.Config) { c.SendBufs = 0 }, uint32(sramBytes), "0 send buffers"),
		Entry("no watchdog time", func(c *lci.Config) { c.WatchdogCycles = 0 }, uint32(sramBytes), "watchdog of 0 cycles"),
		Entry("a negative cost", func(c *lci.Config) { c.Costs.Ack = -1 }, uint32(sramBytes), "negative handler cost -1"),
		Entry("layout larger than SRAM", func(*lci.Config) {}, uint32(0x1bff),
			"the layout needs 7168 bytes of SRAM (32 receive and 8 send buffers of 96 bytes), the card has 7167"),
	)

	It("is checked at boot, and New refuses more nodes than the cluster size", func() {
		e := vtest.NewEnv(vtest.Options{})
		p, err := lci.New(e, "FW", testConfig(), 0, 8, "link")
		Expect(err).NotTo(HaveOccurred())
		err = p.Boot(firmware.NewCtx(e, newFakeNI(0, 8, 0x1000), 0, 0))
		Expect(err).To(MatchError(And(HavePrefix("FW: "), ContainSubstring("the card has 4096"))))

		_, err = lci.New(e, "FW", testConfig(), 0, 9, "link")
		Expect(err).To(MatchError("FW: 9 nodes exceed the cluster size 8 the buffers are reserved for"))
	})

	DescribeTable("ParseVariant",
		func(s string, want lci.Variant, name string) {
			v, err := lci.ParseVariant(s)
			Expect(err).NotTo(HaveOccurred())
			Expect(v).To(Equal(want))
			Expect(v.String()).To(Equal(name))
		},
		Entry(nil, "sdma", lci.SDMA, "I-sdma"),
		Entry(nil, "I-sdma", lci.SDMA, "I-sdma"),
		Entry(nil, "pio", lci.PIO, "I-pio"),
		Entry(nil, "I-pio", lci.PIO, "I-pio"),
	)

	DescribeTable("ParseTree",
		func(s string, want lci.Tree) {
			t, err := lci.ParseTree(s)
			Expect(err).NotTo(HaveOccurred())
			Expect(t).To(Equal(want))
			Expect(t.String()).To(Equal(s))
		},
		Entry(nil, "binary", lci.Binary),
		Entry(nil, "binomial", lci.Binomial),
	)

	It("refuses unknown variants and trees, naming the value", func() {
		_, err := lci.ParseVariant("I-rcpy")
		Expect(err).To(MatchError(`unknown LCI variant "I-rcpy" (have sdma, pio)`))
		_, err = lci.ParseTree("ternary")
		Expect(err).To(MatchError(`unknown multicast tree "ternary" (have binary, binomial)`))
	})
})

var _ = Describe("Multicast trees", func() {
	const n = 64

	It("fans out 2 at the top of a binary tree and 6 at the top of a binomial one on 64 nodes", func() {
		// «On 64 nodes the top-level fan-out increases from 2 to 6» (MY-P38).
		Expect(lci.Binary.Children(0, 0, n)).To(Equal([]int{1, 2}))
		Expect(lci.Binomial.Children(0, 0, n)).To(Equal([]int{1, 2, 4, 8, 16, 32}))
		Expect(lci.Binary.Children(0, 5, n)).To(Equal([]int{11, 12}))
		Expect(lci.Binomial.Children(0, 5, n)).To(Equal([]int{13, 21, 37}))
		Expect(lci.Binary.Children(0, 40, n)).To(BeEmpty())
		// Ranks are relative to the root.
		Expect(lci.Binary.Children(10, 10, n)).To(Equal([]int{11, 12}))
		Expect(lci.Binomial.Children(60, 60, n)).To(Equal([]int{61, 62, 0, 4, 12, 28}))
	})

	DescribeTable("span every node once from every root",
		func(t lci.Tree, nodes, maxFanout int) {
			for root := range nodes {
				seen := make([]int, nodes)
				fan := 0
				for node := range nodes {
					kids := t.Children(root, node, nodes)
					fan = max(fan, len(kids))
					for _, k := range kids {
						Expect(k).To(BeNumerically(">=", 0))
						Expect(k).To(BeNumerically("<", nodes))
						seen[k]++
					}
				}
				Expect(seen[root]).To(Equal(0), "root %d is nobody's child", root)
				for node := range nodes {
					if node != root {
						Expect(seen[node]).To(Equal(1), "node %d in the tree of %d", node, root)
					}
				}
				// And the tree hangs together: a walk from the root
				// reaches every node.
				reached, frontier := 1, []int{root}
				for len(frontier) > 0 {
					node := frontier[0]
					frontier = frontier[1:]
					for _, k := range t.Children(root, node, nodes) {
						reached++
						frontier = append(frontier, k)
					}
				}
				Expect(reached).To(Equal(nodes), "tree of %d", root)
				Expect(fan).To(Equal(maxFanout))
				Expect(fan).To(BeNumerically("<=", lci.FwdWidth))
			}
		},
		Entry("binary, 64 nodes", lci.Binary, 64, 2),
		Entry("binomial, 64 nodes", lci.Binomial, 64, 6),
		Entry("binary, 7 nodes", lci.Binary, 7, 2),
		Entry("binomial, 7 nodes", lci.Binomial, 7, 3),
		Entry("binomial, 2 nodes", lci.Binomial, 2, 1),
	)
})
