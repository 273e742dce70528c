package lcitb_test

import (
	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// «each NI maintains a single fetch-and-add variable that can be accessed
// by any host» (section 4.3): node 0's own host included.
var _ = Describe("Fetch-and-add on a node's own variable", func() {
	DescribeTable("interleaves with another node's requests in one order",
		func(v fw.Variant, rel fw.Reliability) {
			e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
			c := lcitb.DefaultConfig()
			c.Variant, c.Reliability = v, rel
			c.Interrupts = rel == fw.HostRetransmit // node 0's host serves node 1 after its own program ends
			cl, err := lcitb.Build(e, c)
			Expect(err).NotTo(HaveOccurred())
			var own, other []uint32
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
				for range 3 {
					own = append(own, s.FetchAndAdd(0, 1))
					s.Compute(4000)
				}
			})
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
				s.Compute(2000)
				for range 3 {
					other = append(other, s.FetchAndAdd(0, 10))
					s.Compute(4000)
				}
			})
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			// Each request adds 1 or 10 to what came before it: six
			// distinct old values, summing the additions in the order
			// they were served, ending at 33.
			all := append(append([]uint32{}, own...), other...)
			Expect(all).To(HaveLen(6))
			seen := map[uint32]bool{}
			for _, x := range all {
				Expect(seen[x]).To(BeFalse(), "old value %d twice", x)
				seen[x] = true
			}
			Expect(own[0]).To(BeZero())
			final := cl.Nodes[0].FW.FetchAddValue()
			if rel == fw.HostRetransmit {
				final = cl.Nodes[0].Host.FetchAddValue()
			}
			Expect(final).To(BeEquivalentTo(33))
		},
		Entry("I-sdma", fw.SDMA, fw.NoRetransmit),
		Entry("I-pio", fw.PIO, fw.NoRetransmit),
		Entry("I-nirx", fw.SDMA, fw.NIRetransmit),
		Entry("I-hrx", fw.SDMA, fw.HostRetransmit),
	)
})
