package rma_test

import (
	"math/rand/v2"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
)

// mixed runs both nodes' programs at once: each WRITEs its own region of
// the other's segment (node 0 words 100..199 of node 1's, node 1 words
// 0..99 of node 0's),
// READs the other's fixed table (words 500..509) and increments the
// shared counter (node 0's word 900) by a CAS loop, in a seeded random
// order; interrupts land between and inside the programs' waits.
func mixed(seed uint64, ops int) (*rig, [2][]uint32, *[2]int) {
	r := newRig(nil)
	ids := r.share(rma.RightRead | rma.RightWrite)
	for i := range 2 {
		Expect(r.nodes[i].mem.Storage().Write(segBase+4*500, le(seq(10, uint32(7000+1000*i))))).To(Succeed())
	}
	var last [2][]uint32
	incs := new([2]int)
	for i := range 2 {
		last[i] = make([]uint32, 100)
		k := r.nodes[i].kernel
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		base := 100 * (1 - i)
		r.nodes[i].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			for range ops {
				switch rng.IntN(3) {
				case 0:
					n := 1 + rng.IntN(rma.MaxWords)
					off := rng.IntN(100 - n + 1)
					w := seq(n, rng.Uint32()>>8)
					Expect(k.Write(p, 0, base+off, n, false, w)).To(Equal(rma.OK))
					copy(last[i][off:], w)
				case 1:
					id, st := k.Read(p, 0, 500, 10, int(ids[i]), 600, false)
					Expect(st).To(Equal(rma.OK))
					p.WaitUntil(func() bool { return k.Done(id) })
					Expect(r.words(i, segBase+4*600, 10)).To(Equal(seq(10, uint32(7000+1000*(1-i)))))
				default:
					if i == 1 {
						for {
							old := r.words(0, segBase+4*900, 1)[0]
							if _, ok := k.CAS(p, 0, 900, old, old+1, int(ids[1]), 700); ok {
								break
							}
						}
						incs[i]++
					}
				}
			}
		}))
	}
	return r, last, incs
}

var _ = Describe("mixed traffic from both nodes", func() {
	It("lands every WRITE, answers every READ and CAS, with no checker report", func() {
		r, last, incs := mixed(3, 60)
		Expect(r.run()).To(Succeed())
		Expect(r.words(1, segBase+400, 100)).To(Equal(last[0]))
		Expect(r.words(0, segBase, 100)).To(Equal(last[1]))
		Expect(r.words(0, segBase+4*900, 1)).To(Equal([]uint32{uint32(incs[1])}))
		for i := range 2 {
			c := r.nodes[i].kernel.Counters()
			Expect(c.RefusedRecv).To(Equal([len(c.RefusedRecv)]uint64{}))
		}
	})

	It("gives a byte-identical trace when run again", func() {
		text := func() string {
			r, _, _ := mixed(9, 25)
			Expect(r.run()).To(Succeed())
			var b strings.Builder
			for _, rec := range r.e.Trace.Records() {
				b.WriteString(rec.Format())
				b.WriteByte('\n')
			}
			return b.String()
		}
		a := text()
		Expect(a).To(ContainSubstring("rma.recv"))
		Expect(text()).To(Equal(a))
	})
})
