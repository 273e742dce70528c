package shrimptb_test

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Deliberate updates from and to every byte alignment. The UDMA LOAD's
// address is the source, so a source not a multiple of 4 makes an
// unaligned proxy LOAD, whose status comes back on rotated byte lanes
// (vmmc's laneStatus): before the library put them back, a send from +2
// or +3 retried its LOAD for ever (NX's DU variant refused such sends).
var _ = Describe("Deliberate updates at every alignment", func() {
	It("delivers 1 to 17 bytes from each source lane to each destination lane", func() {
		data := make([]byte, 64)
		for i := range data {
			data[i] = byte(0xa0 + i)
		}
		for _, n := range []int{1, 3, 4, 5, 17} {
			for s := 0; s < 4; s++ {
				for d := 0; d < 4; d++ {
					e := vtest.NewEnv(vtest.Options{Clock: eisaClock, Seed: 1, TimeLimit: clock.Millisecond})
					c := shrimptb.DefaultConfig()
					c.Nodes = 2
					cl, err := shrimptb.Build(e, c)
					Expect(err).NotTo(HaveOccurred())
					pr := setupPair(cl, 1, false)
					Expect(cl.Nodes[0].Memory().Storage().Write(gSrc, data)).To(Succeed())
					var serr error
					done := false
					cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
						serr = pr.tx.Send(p, gSrc+uint64(s), pr.px, uint64(64+d), n, false)
						done = true
					}))
					res, err := e.Run()
					Expect(err).NotTo(HaveOccurred())
					Expect(res.Stopped).To(BeFalse(), "%d bytes from +%d to +%d: the run hit its time limit", n, s, d)
					Expect(done).To(BeTrue(), "%d bytes from +%d to +%d: the send returned", n, s, d)
					Expect(serr).NotTo(HaveOccurred())
					Expect(cl.Finish()).To(Succeed())
					got := make([]byte, n)
					Expect(cl.Nodes[1].Memory().Storage().Read(gRecv+uint64(64+d), got)).To(Succeed())
					Expect(got).To(Equal(data[s:s+n]), "%d bytes from +%d to +%d", n, s, d)
					cl.Close()
				}
			}
		}
	})
})
