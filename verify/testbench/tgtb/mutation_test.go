package tgtb_test

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/testbench/tgtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The coherence checkers against a counter cache that forgets (tg.forget):
// a node whose counter for a word no longer covers all its writes in
// flight applies a foreign write it should have ignored and then its own
// older value comes back over it. Eight nodes write random values to four
// hot words of a page owned by node 0, through a 32-entry counter cache
// (the clean entry of "random unsynchronised writes" in coherence_test.go).
var _ = Describe("Coherence checkers against a counter cache that forgets", func() {
	run := func(mut map[string]int) (coherence []string, monitor []check.Violation) {
		GinkgoHelper()
		const nodes, words, writes = 8, 4, 60
		e := vtest.NewEnv(vtest.Options{Clock: tcClock, Mutations: mut, Seed: 9})
		cl, p := cluster(e, nodes, 2, func(c *tgtb.ClusterConfig) { c.HIB.CounterCache = 32 })
		Expect(cl.Replicate(rpage, 0, allNodes(nodes))).To(Succeed())
		co := cl.WatchCoherence(rpage, 0, allNodes(nodes))
		rng := e.Rand("Writers")
		for n := range nodes {
			var ops []cpu.Op
			for k := range writes {
				ops = append(ops, p[n].Compute(rng.IntN(600)), p[n].Store(n, rbase+uint32(4*rng.IntN(words)), uint32(n<<16|k)))
			}
			p[n].Start(ops...)
		}
		_, _ = e.Run()
		return co.Violations(func(n int, off uint32) uint32 { return mem(cl, n, off) }), e.Monitor.Violations()
	}

	It("is clean without a mutation", func() {
		c, m := run(nil)
		Expect(c).To(BeEmpty())
		Expect(m).To(BeEmpty())
	})

	It("tg.forget: reports sequences out of the owner's order and own reflections with no counter", func() {
		c, m := run(map[string]int{"tg.forget": 10})
		Expect(c).NotTo(BeEmpty())
		for _, v := range c {
			Expect(v).To(MatchRegexp(`^word 0x[0-9a-f]+: node \d (saw \[.*\], not in the owner's order \[.*\]|ends with \d+, the owner with \d+)$`))
		}
		Expect(c).To(ContainElement(ContainSubstring("not in the owner's order")))
		Expect(m).NotTo(BeEmpty())
		for _, v := range m {
			Expect(v.Check).To(Equal("tg.counter"))
			Expect(v.Msg).To(MatchRegexp(`^own reflected write .* with no pending counter$`))
		}
	})
})
