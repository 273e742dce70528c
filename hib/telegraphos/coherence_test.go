package telegraphos_test

import (
	"fmt"

	tg "github.com/nisim/nisim/hib/telegraphos"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The replicated page of these specs: page 1 of every node, owned by node 0.
const (
	rpage = 1
	rbase = rpage * tg.PageBytes
)

func allNodes(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

var _ = Describe("Coherence checker", func() {
	// w names a write as the checker prints it.
	w := func(origin int, seq uint64, v uint32) string { return fmt.Sprintf("%d#%d=%d", origin, seq, v) }
	same := func(node int, off uint32) uint32 { return 0 }

	It("accepts a copy that applies its own write before the owner and skips writes it ignored", func() {
		c := tg.NewCoherence(rpage, 0, allNodes(3))
		c.Apply(0, rbase, 2, 1, 20) // owner: 2#1
		c.Apply(1, rbase, 1, 1, 10) // node 1's own write, before the owner has it
		c.Apply(0, rbase, 1, 1, 10) // owner: 1#1
		c.Apply(2, rbase, 1, 1, 10) // node 2 skips 2#1 (its own, ignored)
		c.Apply(0, rbase, 0, 1, 5)
		c.Apply(1, rbase, 0, 1, 5)
		Expect(c.Violations(same)).To(BeEmpty())
		Expect(c.Sequence(1, rbase)).To(Equal([]string{w(1, 1, 10), w(0, 1, 5)}))
	})

	It("reports a copy that applied two writes in the other order than the owner", func() {
		c := tg.NewCoherence(rpage, 0, allNodes(2))
		c.Apply(0, rbase+4, 0, 1, 10)
		c.Apply(1, rbase+4, 2, 1, 20)
		c.Apply(0, rbase+4, 2, 1, 20)
		c.Apply(1, rbase+4, 0, 1, 10)
		Expect(c.Violations(same)).To(Equal([]string{
			"word 0x4: node 1 saw [2#1=20 0#1=10], not in the owner's order [0#1=10 2#1=20]"}))
	})

	It("keeps the last SequenceKept writes of each copy for its reports", func() {
		c := tg.NewCoherence(rpage, 0, allNodes(2))
		for i := range uint64(tg.SequenceKept + 4) {
			c.Apply(0, rbase, 0, i+1, uint32(i))
		}
		c.Apply(1, rbase, 3, 1, 99) // never applied by the owner
		seq := c.Sequence(0, rbase)
		Expect(seq).To(HaveLen(tg.SequenceKept))
		Expect(seq[0]).To(Equal(w(0, 5, 4)))
		v := c.Violations(same)
		Expect(v).To(HaveLen(1))
		Expect(v[0]).To(HavePrefix("word 0x0: node 1 saw [3#1=99], not in the owner's order [(4 earlier) 0#5=4 0#6=5 "))
	})

	It("reports a copy that leaves its window instead of holding more", func() {
		c := tg.NewCoherence(rpage, 0, allNodes(3))
		// Node 1 applies writes the owner never applies; node 2 applies
		// nothing while the owner applies many.
		for i := range uint64(tg.CoherenceWindow + 1) {
			c.Apply(1, rbase, 1, i+1, 1)
		}
		for i := range uint64(3 * tg.CoherenceWindow) {
			c.Apply(0, rbase, 0, i+1, 2)
		}
		log, pending := c.Held()
		Expect(log).To(BeNumerically("<=", 2*tg.CoherenceWindow))
		Expect(pending).To(BeNumerically("<=", tg.CoherenceWindow))
		Expect(c.Violations(same)).To(Equal([]string{
			fmt.Sprintf("word 0x0: node 1 applied more than %d writes the owner has not applied: its order is no longer checked", tg.CoherenceWindow),
			fmt.Sprintf("word 0x0: node 2 applied none of the owner's last %d writes: its order is no longer checked", tg.CoherenceWindow)}))
	})
})
