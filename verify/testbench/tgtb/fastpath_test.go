package tgtb_test

import (
	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/tgtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// seen is a write landing in a node's memory or a load's value coming
// back, and when.
type seen struct {
	Node, Origin int
	Off, Value   uint32
	Seq          uint64
	At           clock.Time
}

// Tracing puts the Telegraphos links on their slow path (flits on a wire
// list until they land); untraced runs land them when they are sent. A
// mixed random workload on 8 nodes (remote stores and loads, writes to a
// page replicated everywhere through its owner and the counter cache) must
// apply every write and return every load at the same time either way.
var _ = Describe("Telegraphos traced and untraced", func() {
	It("applies every write and answers every load at the same time on both link paths", func() {
		const n, rounds = 8, 150
		got, diff := vtest.TracedAndUntraced(vtest.Options{Clock: tcClock}, func(e *env.Env) []seen {
			cl, p := cluster(e, n, 2, func(c *tgtb.ClusterConfig) { c.HIB.CounterCache = 16 })
			Expect(cl.Replicate(rpage, 0, allNodes(n))).To(Succeed())
			var out []seen
			for i := range n {
				h := cl.Nodes[i].HIB
				h.SetHooks(tg.Hooks{Applied: func(now clock.Time, off, v uint32, origin int, seq uint64) {
					out = append(out, seen{Node: i, Origin: origin, Off: off, Value: v, Seq: seq, At: now})
				}})
			}
			rng := e.Rand("Mixed")
			for i := range n {
				var ops []cpu.Op
				for k := range rounds {
					dst := (i + 1 + rng.IntN(n-1)) % n
					off := uint32(4 * rng.IntN(1024))
					ops = append(ops, p[i].Compute(rng.IntN(200)), p[i].Store(dst, off, uint32(k)),
						p[i].Store(i, rbase+uint32(4*rng.IntN(8)), uint32(i<<16|k)),
						p[i].Load(dst, off, func(now clock.Time, v uint32) {
							out = append(out, seen{Node: i, Origin: dst, Off: off, Value: v, At: now})
						}))
				}
				p[i].Start(ops...)
			}
			run(e, cl)
			return out
		})
		Expect(diff).To(BeEmpty(), "traced (-) and untraced (+)")
		Expect(len(got)).To(BeNumerically(">", n*rounds*2))
	})
})
