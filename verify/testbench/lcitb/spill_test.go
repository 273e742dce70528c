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

// Two processes without an upcall that both send 40 messages before they
// receive any, through 4 host buffers each: the packets each library takes
// while it waits for a send buffer are kept for the next Recv, and once
// they hold all 4 buffers the send completion it waits for cannot be
// delivered. The library copies the oldest kept packet out of its buffer
// and gives the buffer back (Host.Spilled); before it did, both nodes
// deadlocked at 150 us (the NIs had 9 packets waiting for host buffers).
var _ = Describe("The library's receive queue under two-way sends without an upcall", func() {
	DescribeTable("spills kept packets out of their host buffers rather than deadlock",
		func(v fw.Variant, rel fw.Reliability) {
			e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1, TimeLimit: 20 * clock.Millisecond})
			c := lcitb.DefaultConfig()
			c.Variant, c.Reliability, c.HostSlots = v, rel, 4
			// I-hrx: the host acknowledges, so a process that has
			// received everything still serves its library (by the
			// polling watchdog's signal) until its peer is done.
			c.Interrupts = rel == fw.HostRetransmit
			cl, err := lcitb.Build(e, c)
			Expect(err).NotTo(HaveOccurred())
			got := [2][]uint32{}
			for i := range 2 {
				cl.Nodes[i].Host.Run(func(s *lcilib.Seq) {
					for tag := range uint32(40) {
						s.Send(1-i, []byte("0123456789abcdef"), tag)
					}
					for range 40 {
						s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) { got[i] = append(got[i], m.Tag) })
					}
				})
			}
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			for i := range 2 {
				Expect(got[i]).To(HaveLen(40))
				for k, t := range got[i] {
					Expect(t).To(BeEquivalentTo(k), "node %d's message %d", i, k)
				}
				Expect(cl.Nodes[i].Host.Spilled).To(BeNumerically(">", 0))
			}
		},
		Entry("I-sdma", fw.SDMA, fw.NoRetransmit),
		Entry("I-pio", fw.PIO, fw.NoRetransmit),
		Entry("I-nirx", fw.SDMA, fw.NIRetransmit),
		Entry("I-hrx", fw.SDMA, fw.HostRetransmit),
	)
})
