package lcitb_test

import (
	"fmt"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/nisim/nisim/firmware/lci"
)

// mtuEntry is a run of I-1k or I-4k (section 5.3): the platform's 2 KB
// buffer counts rescaled to the MTU with the bytes held constant.
type mtuEntry struct {
	platform lcilib.Platform
	variant  fw.Variant
	mtu      int
	// window is W worked out by hand (lci.Config.WithMTU's derivation).
	window int
	seed   uint64
}

func (x mtuEntry) config(nodes int) lcitb.Config {
	c := lcitb.DefaultConfig()
	c.Platform, c.Variant, c.MTU, c.Nodes = x.platform, x.variant, x.mtu, nodes
	return c
}

func mtuEntries(xs ...mtuEntry) []TableEntry {
	var out []TableEntry
	for _, x := range xs {
		c := x.config(2)
		out = append(out, Entry(fmt.Sprintf("%s %s (W = %d), seed %d", x.platform.Name, c.FirmwareConfig().Name(), x.window, x.seed), x))
	}
	return out
}

var mtuRuns = []mtuEntry{
	// PPro: 512 KB of receive buffers. 1 KB: (512 - 8) / 63 = 8; 4 KB:
	// (128 - 2) / 63 = 2.
	{lcilib.PPro(), fw.SDMA, 1024, 8, 21},
	{lcilib.PPro(), fw.PIO, 1024, 8, 22},
	{lcilib.PPro(), fw.SDMA, 4096, 2, 23},
	{lcilib.PPro(), fw.PIO, 4096, 2, 24},
	// P3: 1 MB. 1 KB: (1024 - 8) / 63 = 16; 4 KB: (256 - 2) / 63 = 4.
	{lcilib.P3(), fw.SDMA, 1024, 16, 25},
	{lcilib.P3(), fw.PIO, 4096, 4, 26},
}

var _ = Describe("the MTU variants I-1k and I-4k (section 5.3)", func() {
	DescribeTable("derive W from the platform's buffer bytes, fit the card's SRAM, and deliver everything with the checkers on",
		func(x mtuEntry) {
			c := x.config(2)
			fc := c.FirmwareConfig()
			Expect(fc.MTU).To(Equal(x.mtu))
			Expect(fc.Window()).To(Equal(x.window))
			Expect(fc.RecvBufs * fc.MTU).To(Equal(x.platform.RecvBufs * fw.BaseMTU))
			Expect(c.Validate()).To(Succeed())
			// Payloads up to the MTU: every size of one packet, the largest
			// filling a buffer.
			t := uniform(60, x.mtu)
			e := env.New(env.Options{Seed: x.seed})
			r, err := lcitb.RunTraffic(e, c, t)
			Expect(err).NotTo(HaveOccurred())
			Expect(e.Monitor.Count()).To(BeZero())
			Expect(r.Unicasts + r.Multicasts + r.FetchAdds).To(Equal(uint64(2 * 60)))
			Expect(r.Deliveries).To(Equal(r.Unicasts + r.Multicasts))
		},
		mtuEntries(mtuRuns...),
	)

	// A busy receiver the 7 others send to fills their windows (8 nodes, as
	// the windowFull entries: on 2 the one sender's operations do not put
	// W+1 packets in flight for the larger windows); with
	// lci.overdraw the sender goes one credit below zero and the
	// receiver's window checker sees W+1 buffers held: the W it checks is
	// the derived one.
	DescribeTable("fill the derived window, and the window checker catches W+1",
		func(x mtuEntry) {
			c := x.config(8)
			e := env.New(env.Options{Seed: x.seed})
			_, err := lcitb.RunTraffic(e, c, hot(60, 512))
			Expect(err).NotTo(HaveOccurred())
			e = env.New(env.Options{Seed: x.seed, Mutations: map[string]int{"lci.overdraw": 1}})
			_, err = lcitb.RunTraffic(e, c, hot(60, 512))
			Expect(err).To(HaveOccurred())
			v := e.Monitor.Violations()
			Expect(v).NotTo(BeEmpty())
			for _, y := range v {
				Expect(y.Check).To(Equal("lci.window"), y.String())
				Expect(y.Msg).To(MatchRegexp(fmt.Sprintf(`^node \d+ holds %d receive buffers, more than its W = %d$`, x.window+1, x.window)))
			}
		},
		// I-4k only: at 1 KB the host has 128 receive slots (WithMTU), which
		// the busy receiver's 300 µs pauses do not fill, so its NI keeps
		// releasing buffers and no window fills in these runs.
		mtuEntries(mtuRuns[2], mtuRuns[3], mtuRuns[5]),
	)

	It("fragments a 16 KB message at each MTU and streams it with the checkers on", func() {
		// 16 KB is 16, 8 and 4 packets at 1, 2 and 4 KB. The library
		// charges its per-packet costs once per fragment, so the larger
		// MTU streams the same message in less time: «a larger MTU yields
		// better throughput, because the constant per-packet overheads are
		// incurred fewer times per message» (section 5.3).
		var gaps []float64
		for _, m := range []int{1024, 2048, 4096} {
			c := mtuEntry{platform: lcilib.PPro(), variant: fw.SDMA, mtu: m}.config(2)
			e := env.New(env.Options{Seed: 1})
			t, err := lcitb.Stream(e, c, lcitb.Bench{Size: 16 << 10, Iters: 2, Stream: 16}, true)
			Expect(err).NotTo(HaveOccurred())
			Expect(e.Monitor.Count()).To(BeZero())
			gaps = append(gaps, float64(t.Gap))
		}
		Expect(gaps[0]).To(BeNumerically(">", gaps[1]))
		Expect(gaps[1]).To(BeNumerically(">", gaps[2]))
	})
})
