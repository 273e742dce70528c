package svm

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Unit specs of the runtime's pieces that need no cluster; the protocols
// run on the SHRIMP bench (verify/testbench/shrimptb/svm_test.go).
var _ = Describe("svm", func() {
	good := Config{Protocol: HLRC, Nodes: 16, Pages: 100, PageBytes: 4096, Locks: 2, Flags: 1}

	It("names each event kind's fields, a message type by name", func() {
		for _, x := range []struct {
			ev   Event
			want []Attr
		}{
			{Event{Kind: EvFault, Node: 1, Page: 3, Peer: -1, Arg: 1}, []Attr{{"node", "1"}, {"page", "3"}, {"write", "1"}}},
			{Event{Kind: EvSend, Node: 2, Page: -1, Peer: 0, Arg: mDiff}, []Attr{{"node", "2"}, {"to", "0"}, {"type", "diff"}}},
			{Event{Kind: EvReply, Node: 0, Page: -1, Peer: 5, Arg: rRetry}, []Attr{{"node", "0"}, {"to", "5"}, {"type", "retry"}}},
			{Event{Kind: EvRecv, Node: 0, Page: -1, Peer: 1, Arg: 99}, []Attr{{"node", "0"}, {"from", "1"}, {"type", "99"}}},
			{Event{Kind: EvTwin, Node: 4, Page: 7, Peer: -1}, []Attr{{"node", "4"}, {"page", "7"}}},
			{Event{Kind: EvTSSeen, Node: 0, Page: -1, Peer: 1, Arg: 3}, []Attr{{"node", "0"}, {"writer", "1"}, {"value", "3"}}},
			{Event{Kind: EvApply, Node: 0, Page: 2, Peer: 1, Arg: 4}, []Attr{{"node", "0"}, {"page", "2"}, {"from", "1"}, {"interval", "4"}}},
		} {
			Expect(cmp.Diff(x.want, x.ev.Attrs())).To(BeEmpty(), x.ev.Kind)
		}
		for k := range eventKeys {
			Expect(k).NotTo(BeEmpty())
		}
		Expect(eventKeys).To(HaveLen(23), "every kind has its keys")
	})

	DescribeTable("refuses a bad configuration, naming the field",
		func(mod func(*Config), field string) {
			c := good
			mod(&c)
			Expect(c.Validate()).To(MatchError(ContainSubstring(field)))
		},
		Entry("an unknown protocol", func(c *Config) { c.Protocol = "lrc" }, "Protocol"),
		Entry("no nodes", func(c *Config) { c.Nodes = 0 }, "Nodes"),
		Entry("17 nodes", func(c *Config) { c.Nodes = 17 }, "Nodes"),
		Entry("a page not a power of two", func(c *Config) { c.PageBytes = 3000 }, "PageBytes"),
		Entry("no pages", func(c *Config) { c.Pages = 0 }, "Pages"),
		// 4096-byte reply slot: 512 words - the seal, the header's 2 and
		// 16 vector-time words = 493, 30 bitmap words a node at 16 nodes,
		// 1920 pages.
		Entry("more pages than a grant's notices hold", func(c *Config) { c.Pages = 1921 }, "1..1920"),
		Entry("negative locks", func(c *Config) { c.Locks = -1 }, "Locks"),
	)

	It("homes pages in contiguous blocks whose bounds Block gives", func() {
		for _, c := range []Config{good, {Protocol: AURC, Nodes: 3, Pages: 10, PageBytes: 4096}, {Protocol: AURC, Nodes: 16, Pages: 5, PageBytes: 4096}} {
			l, err := NewLayout(c)
			Expect(err).NotTo(HaveOccurred())
			for b := range c.Nodes {
				first, end := l.Block(b)
				for pg := first; pg < end; pg++ {
					Expect(l.Home(pg)).To(Equal(b))
				}
			}
			// 10 pages on 3 nodes: pg*3/10 = 0,0,0,0,1,1,1,2,2,2.
			if c.Nodes == 3 {
				var homes []int
				for pg := range c.Pages {
					homes = append(homes, l.Home(pg))
				}
				Expect(homes).To(Equal([]int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}))
			}
		}
	})

	It("counts the import entries: every other node's copy of the home block, its home block under AU, the message pages", func() {
		// 4 nodes, 8 pages (blocks of 2), rings of 4+4 1 KB slots per
		// sender: 4 x 8 KB = 32 KB, 8 pages; plus reply and ack: 10 message
		// pages per other node; HLRC adds 2 (this node's block at the
		// other); AU adds 2 (the other's block) and 1 (its timestamps).
		c := Config{Protocol: HLRC, Nodes: 4, Pages: 8, PageBytes: 4096}
		l, err := NewLayout(c)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.ImportPages(c)).To(Equal(3 * (10 + 2)))
		c.Protocol = AURC
		l, err = NewLayout(c)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.ImportPages(c)).To(Equal(3 * (10 + 1 + 2 + 2)))
	})

	It("packs and unpacks a seal", func() {
		w := seal(mDiff, 127, 15, 0xdeadbeef)
		t, n, src, seq := unseal(w)
		Expect([]any{t, n, src, seq}).To(Equal([]any{mDiff, 127, 15, uint32(0xdeadbeef)}))
	})

	It("merges consecutive pages into runs for the mprotects", func() {
		Expect(cmp.Diff([][2]int{{1, 4}, {7, 8}, {9, 11}}, ranges([]int{9, 2, 1, 7, 3, 10}))).To(BeEmpty())
	})

	It("answers a union of intervals from the log, and says when the log does not cover it", func() {
		rt := &Runtime{cfg: Config{Protocol: HLRC, Nodes: 2, Pages: 128, PageBytes: 4096}}
		pr := &Process{rt: rt, log: make([][]entry, 2)}
		bm := func(pages ...int) []uint64 { return bitmapOf(pages, 2) }
		pr.addEntry(1, 0, 1, bm(3))
		pr.addEntry(1, 1, 2, bm(70))
		pr.addEntry(1, 1, 2, bm(99)) // not beyond the log: ignored
		pr.addEntry(1, 2, 4, bm(5, 6))
		Expect(pr.union(1, 0, 4)).To(Equal(bm(3, 70, 5, 6)))
		Expect(pr.union(1, 1, 2)).To(Equal(bm(70)))
		Expect(pr.union(1, 2, 2)).To(Equal(bm()))
		// (3, 4] lies in the entry (2, 4]: the whole entry is taken (an
		// over-approximation only invalidates more).
		Expect(pr.union(1, 3, 4)).To(Equal(bm(5, 6)))
		Expect(rt.Err()).NotTo(HaveOccurred())
		pr.union(1, 0, 5)
		Expect(rt.Err()).To(MatchError(ContainSubstring("ends before interval 5")))
	})

	It("builds a grant's notices and parses them back", func() {
		rt := &Runtime{cfg: Config{Protocol: HLRC, Nodes: 3, Pages: 64, PageBytes: 4096}}
		pr := &Process{rt: rt, id: 0, log: make([][]entry, 3)}
		pr.addEntry(2, 0, 3, bitmapOf([]int{1, 63}, 1))
		payload := pr.notices([]uint32{0, 0, 1}, []uint32{0, 0, 3})
		vc, bms, err := pr.parseNotices(payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(vc).To(Equal([]uint32{0, 0, 3}))
		Expect(bms[0]).To(BeNil())
		Expect(bms[1]).To(BeNil())
		Expect(bms[2]).To(Equal(bitmapOf([]int{1, 63}, 1)))
		_, _, err = pr.parseNotices(payload[:2])
		Expect(err).To(MatchError(ContainSubstring("shorter than its header")))
	})
})
