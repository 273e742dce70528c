package mcadapter_test

import (
	"errors"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/mcadapter"
)

var _ = Describe("TxPageTable", func() {
	var t *mcadapter.TxPageTable

	BeforeEach(func() {
		var err error
		t, err = mcadapter.MakeTxPageTableBuilder().Build("tx")
		Expect(err).NotTo(HaveOccurred())
	})

	It("has the paper's geometry by default", func() {
		// 8 KB pages (MC-P6); 128 MB / 8 KB = 134217728 / 8192 = 16384
		// pages; window 16384 x 8192 = 134217728 bytes = 128 MB (MC-P7).
		Expect(t.PageBytes()).To(Equal(8192))
		Expect(t.Pages()).To(Equal(16384))
		Expect(t.WindowBytes()).To(Equal(uint64(134217728)))
		e, err := t.Entry(0)
		Expect(err).NotTo(HaveOccurred())
		Expect(e.Valid).To(BeFalse())
	})

	It("translates at both sides of a page boundary", func() {
		Expect(t.Set(2, mcadapter.TxEntry{Valid: true, GlobalPage: 100})).To(Succeed())
		Expect(t.Set(3, mcadapter.TxEntry{Valid: true, GlobalPage: 7, LoopBack: true})).To(Succeed())

		// Last byte of window page 2: 3 x 8192 - 1 = 24575 = page 2,
		// offset 8191; global 100 x 8192 + 8191 = 819200 + 8191 = 827391.
		g, lb, ok := t.Translate(24575)
		Expect(ok).To(BeTrue())
		Expect(lb).To(BeFalse())
		Expect(g).To(Equal(uint64(827391)))

		// First byte of window page 3: 24576 = page 3, offset 0; global
		// 7 x 8192 + 0 = 57344, with page 3's loop-back.
		g, lb, ok = t.Translate(24576)
		Expect(ok).To(BeTrue())
		Expect(lb).To(BeTrue())
		Expect(g).To(Equal(uint64(57344)))

		// First byte of page 2: 2 x 8192 = 16384 -> 819200 + 0.
		g, _, ok = t.Translate(16384)
		Expect(ok).To(BeTrue())
		Expect(g).To(Equal(uint64(819200)))
		Expect(t.Dropped()).To(BeZero())
	})

	It("splits a burst crossing a page end into two pieces", func() {
		// A 32-byte burst (one merged write-buffer block) at 8176 = 8192 -
		// 16: 16 bytes fit before the end of page 0 (8176..8191), the other
		// 32 - 16 = 16 start page 1 at 8192.
		got := t.SplitAtPages(8176, 32)
		want := []mcadapter.Piece{{Addr: 8176, Len: 16}, {Addr: 8192, Len: 16}}
		Expect(cmp.Diff(want, got)).To(BeEmpty())
	})

	It("keeps a burst inside one page whole, including one ending exactly at the page end", func() {
		// 8160 + 32 = 8192: the last byte is 8191, still page 0.
		Expect(cmp.Diff([]mcadapter.Piece{{Addr: 8160, Len: 32}}, t.SplitAtPages(8160, 32))).To(BeEmpty())
		Expect(t.SplitAtPages(0, 0)).To(BeEmpty())
		Expect(t.SplitAtPages(0, -4)).To(BeEmpty())
	})

	It("cuts a long burst at every page end", func() {
		// 4096 + 20000 = 24096: page 0 holds 8192 - 4096 = 4096 bytes,
		// page 1 all 8192 (8192..16383), page 2 the rest, 20000 - 4096 -
		// 8192 = 7712 (16384..24095).
		want := []mcadapter.Piece{{Addr: 4096, Len: 4096}, {Addr: 8192, Len: 8192}, {Addr: 16384, Len: 7712}}
		Expect(cmp.Diff(want, t.SplitAtPages(4096, 20000))).To(BeEmpty())
	})

	It("drops a write to an invalid page, counts it, sets the status register and raises the interrupt", func() {
		var irq []int
		t.Interrupt = func(page int) { irq = append(irq, page) }
		Expect(t.Set(5, mcadapter.TxEntry{Valid: true, GlobalPage: 1})).To(Succeed())

		// 9 x 8192 + 40 = 73768: page 9, never mapped.
		_, _, ok := t.Translate(73768)
		Expect(ok).To(BeFalse())
		Expect(t.Dropped()).To(Equal(uint64(1)))
		Expect(t.Status()).To(Equal(mcadapter.TxStatus{Fault: true, Page: 9}))

		// A mapped write changes neither counter nor status:
		// 5 x 8192 = 40960 -> global 1 x 8192 = 8192.
		g, _, ok := t.Translate(40960)
		Expect(ok).To(BeTrue())
		Expect(g).To(Equal(uint64(8192)))

		// The status register holds the last faulting page: 12 x 8192 =
		// 98304 -> page 12; two drops in all.
		_, _, ok = t.Translate(98304)
		Expect(ok).To(BeFalse())
		Expect(t.Dropped()).To(Equal(uint64(2)))
		Expect(t.Status()).To(Equal(mcadapter.TxStatus{Fault: true, Page: 12}))
		Expect(irq).To(Equal([]int{9, 12}))

		t.ClearStatus()
		Expect(t.Status()).To(Equal(mcadapter.TxStatus{}))
		Expect(t.Dropped()).To(Equal(uint64(2)))

		// Invalidating a page drops writes to it again.
		Expect(t.Set(5, mcadapter.TxEntry{})).To(Succeed())
		_, _, ok = t.Translate(40960)
		Expect(ok).To(BeFalse())
		Expect(t.Status()).To(Equal(mcadapter.TxStatus{Fault: true, Page: 5}))
	})

	It("does not claim or count an address beyond the window", func() {
		// The window ends at 16384 x 8192 = 134217728.
		_, _, ok := t.Translate(134217728)
		Expect(ok).To(BeFalse())
		Expect(t.Dropped()).To(BeZero())
		Expect(t.Status().Fault).To(BeFalse())
	})

	It("refuses entries outside the table or the global space", func() {
		err := t.Set(16384, mcadapter.TxEntry{Valid: true})
		Expect(errors.Is(err, mcadapter.ErrBadPage)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("window page 16384")))
		err = t.Set(0, mcadapter.TxEntry{Valid: true, GlobalPage: 16384})
		Expect(errors.Is(err, mcadapter.ErrBadPage)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("global page 16384")))
		_, err = t.Entry(-1)
		Expect(errors.Is(err, mcadapter.ErrBadPage)).To(BeTrue())
	})

	It("uses a smaller page size from the builder", func() {
		s, err := mcadapter.MakeTxPageTableBuilder().WithPageBytes(4096).WithPages(4).WithGlobalPages(8).Build("s")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Set(1, mcadapter.TxEntry{Valid: true, GlobalPage: 6})).To(Succeed())
		// 4096 + 10 -> page 1, offset 10 -> 6 x 4096 + 10 = 24586.
		g, _, ok := s.Translate(4106)
		Expect(ok).To(BeTrue())
		Expect(g).To(Equal(uint64(24586)))
		// Window 4 x 4096 = 16384.
		Expect(s.WindowBytes()).To(Equal(uint64(16384)))
	})

	DescribeTable("Build names the bad parameter",
		func(b mcadapter.TxPageTableBuilder, want string) {
			_, err := b.Build("tx")
			Expect(err).To(MatchError(And(ContainSubstring("tx: "), ContainSubstring(want))))
		},
		Entry("page not a power of two", mcadapter.MakeTxPageTableBuilder().WithPageBytes(6000), "page bytes 6000 must be a power of two"),
		Entry("page too small", mcadapter.MakeTxPageTableBuilder().WithPageBytes(2), "page bytes 2 must be in 4..65536"),
		Entry("page too large", mcadapter.MakeTxPageTableBuilder().WithPageBytes(131072), "page bytes 131072"),
		Entry("no entries", mcadapter.MakeTxPageTableBuilder().WithPages(0), "pages 0 must be in 1..65536"),
		Entry("too many entries", mcadapter.MakeTxPageTableBuilder().WithPages(65537), "pages 65537"),
		Entry("no global pages", mcadapter.MakeTxPageTableBuilder().WithGlobalPages(0), "global pages 0"),
		Entry("too many global pages", mcadapter.MakeTxPageTableBuilder().WithGlobalPages(70000), "global pages 70000"),
	)
})
