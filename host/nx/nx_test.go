package nx_test

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/nx"
)

// The library's pure parts; its timed behaviour on the SHRIMP cluster is
// specified in verify/testbench/shrimptb (oceannx_test.go: Ocean-NX and
// the flow-control stream, the mutation nx.no-credit).

var _ = Describe("Tree", func() {
	DescribeTable("is the binomial tree rooted at 0, farthest child first",
		func(me, nodes, parent int, children []int) {
			p, c := nx.Tree(me, nodes)
			Expect(p).To(Equal(parent))
			Expect(cmp.Diff(children, c)).To(BeEmpty())
		},
		// 16 nodes: 0's children 8, 4, 2, 1; 8's 12, 10, 9; 6 = 0b110
		// has the low bit 2: parent 4, child 7; odd nodes are leaves.
		Entry("16: the root", 0, 16, -1, []int{8, 4, 2, 1}),
		Entry("16: node 8", 8, 16, 0, []int{12, 10, 9}),
		Entry("16: node 6", 6, 16, 4, []int{7}),
		Entry("16: node 15", 15, 16, 14, []int(nil)),
		// 5 nodes: the root spans 8; 4 has no child below 5.
		Entry("5: the root", 0, 5, -1, []int{4, 2, 1}),
		Entry("5: node 4", 4, 5, 0, []int(nil)),
		Entry("2: node 1", 1, 2, 0, []int(nil)),
	)

	It("reaches every node exactly once from the root", func() {
		for _, n := range []int{2, 3, 7, 16} {
			seen := map[int]int{}
			var walk func(i int)
			walk = func(i int) {
				seen[i]++
				_, cs := nx.Tree(i, n)
				for _, c := range cs {
					p, _ := nx.Tree(c, n)
					Expect(p).To(Equal(i))
					walk(c)
				}
			}
			walk(0)
			Expect(seen).To(HaveLen(n))
			for i := range n {
				Expect(seen[i]).To(Equal(1), "node %d of %d", i, n)
			}
		}
	})
})

var _ = Describe("Params", func() {
	It("cuts a message into chunks of SlotBytes minus the trailer", func() {
		p := nx.DefaultParams()
		// 4096 - 32 = 4064 a chunk: 5000 = 4064 + 936; 514 x 8 = 4112 =
		// 4064 + 48; an empty message is one empty chunk.
		Expect(p.ChunkBytes()).To(Equal(4064))
		Expect(cmp.Diff([]int{4064, 936}, p.Chunks(5000))).To(BeEmpty())
		Expect(cmp.Diff([]int{4064, 48}, p.Chunks(4112))).To(BeEmpty())
		Expect(cmp.Diff([]int{4064}, p.Chunks(4064))).To(BeEmpty())
		Expect(cmp.Diff([]int{0}, p.Chunks(0))).To(BeEmpty())
	})

	DescribeTable("refuses a bad parameter, naming it",
		func(mod func(p *nx.Params), want string) {
			p := nx.DefaultParams()
			mod(&p)
			Expect(p.Validate(4096)).To(MatchError(ContainSubstring(want)))
		},
		Entry("one slot", func(p *nx.Params) { p.Slots = 1 }, "Slots 1"),
		Entry("a slot not of whole pages", func(p *nx.Params) { p.SlotBytes = 5000 }, "SlotBytes 5000"),
		Entry("negative instructions", func(p *nx.Params) { p.RecvInstrs = -1 }, "RecvInstrs -1"),
		Entry("no patience", func(p *nx.Params) { p.Patience = 0 }, "Patience"),
		Entry("an unknown mode", func(p *nx.Params) { p.Mode = 7 }, "Mode 7"),
	)

	It("refuses a reserved type before touching the process", func() {
		var e nx.Endpoint
		Expect(e.Send(nil, 1, nx.TypeReserved, 0, 4)).To(MatchError(ContainSubstring("reserved")))
	})
})

var _ = Describe("Layout", func() {
	It("puts the regions one after the other, page-aligned where bound or exported", func() {
		p := nx.DefaultParams()
		l, err := nx.NewLayout(0x100_0000, 16, p, 4096)
		Expect(err).NotTo(HaveOccurred())
		// 16 rings of 4 x 4 KB = 256 KB each side; the credit page; 16
		// link pages; then 16 x 4 trailers of 32 bytes (2 KB) and 16 x 4
		// credit words (256 bytes), the value word: one more page.
		Expect(l.RecvRing(1)).To(Equal(uint64(0x100_4000)))
		Expect(l.CreditPage()).To(Equal(uint64(0x104_0000)))
		Expect(l.OutRing(0)).To(Equal(uint64(0x104_1000)))
		Expect(l.Link(0)).To(Equal(uint64(0x108_1000)))
		Expect(l.Trailer(0, 0)).To(Equal(uint64(0x109_1000)))
		Expect(l.CreditWord(0, 0)).To(Equal(uint64(0x109_1800)))
		Expect(l.CreditWord(0, 4)).To(Equal(l.CreditWord(0, 0)), "credit words cycle through Slots")
		Expect(l.Value()).To(Equal(uint64(0x109_1900)))
		Expect(l.End()).To(Equal(uint64(0x109_2000)))
	})

	It("refuses an unaligned base, naming it", func() {
		_, err := nx.NewLayout(0x100_0010, 4, nx.DefaultParams(), 4096)
		Expect(err).To(MatchError(ContainSubstring("Base 0x1000010")))
	})
})
