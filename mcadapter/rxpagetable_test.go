package mcadapter_test

import (
	"errors"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/mcadapter"
)

var _ = Describe("RxPageTable", func() {
	var t *mcadapter.RxPageTable

	BeforeEach(func() {
		var err error
		t, err = mcadapter.MakeRxPageTableBuilder().Build("rx")
		Expect(err).NotTo(HaveOccurred())
	})

	It("is sized like the transmit table", func() {
		// 8 KB pages (MC-P6); 128 MB / 8 KB = 16384 global pages (MC-P7);
		// host memory 256 MB = 268435456 bytes (MC-P14).
		Expect(t.PageBytes()).To(Equal(8192))
		Expect(t.Pages()).To(Equal(16384))
		Expect(t.HostBytes()).To(Equal(uint64(268435456)))
		tx, err := mcadapter.MakeTxPageTableBuilder().Build("tx")
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Pages()).To(Equal(tx.Pages()))
		Expect(t.PageBytes()).To(Equal(tx.PageBytes()))
		e, err := t.Entry(16383)
		Expect(err).NotTo(HaveOccurred())
		Expect(e.Valid).To(BeFalse())
	})

	It("maps both sides of a page boundary to their own frames", func() {
		// Global page 4 -> frame 0x0100_0000 (16 MB), page 5 -> frame
		// 0x0000_2000 (8 KB): adjacent global pages need not be adjacent in
		// host memory.
		Expect(t.Set(4, mcadapter.RxEntry{Valid: true, HostFrame: 0x0100_0000})).To(Succeed())
		Expect(t.Set(5, mcadapter.RxEntry{Valid: true, HostFrame: 0x2000})).To(Succeed())

		// Last byte of page 4: 5 x 8192 - 1 = 40959 = page 4, offset 8191
		// = 0x1fff -> 0x0100_0000 + 0x1fff = 0x0100_1fff.
		h, ok := t.Lookup(40959)
		Expect(ok).To(BeTrue())
		Expect(h).To(Equal(uint64(0x0100_1fff)))

		// First byte of page 5: 40960 = page 5, offset 0 -> 0x2000.
		h, ok = t.Lookup(40960)
		Expect(ok).To(BeTrue())
		Expect(h).To(Equal(uint64(0x2000)))

		// Offset 12 of page 5: 40972 -> 0x2000 + 12 = 0x200c.
		h, ok = t.Lookup(40972)
		Expect(ok).To(BeTrue())
		Expect(h).To(Equal(uint64(0x200c)))
		Expect(t.Unmapped()).To(BeZero())
	})

	It("rejects a packet for an unmapped page, counting nothing (the adapter counts drops)", func() {
		Expect(t.Set(4, mcadapter.RxEntry{Valid: true, HostFrame: 0x4000})).To(Succeed())

		// Page 3 (3 x 8192 = 24576) was never mapped.
		_, ok := t.Lookup(24576)
		Expect(ok).To(BeFalse())
		// A failed lookup is not yet a drop: the packet's tail decides
		// (rx.go), so Unmapped stays 0 here.
		Expect(t.Unmapped()).To(BeZero())

		// Unmapping page 4 (Valid false) makes its packets drop too:
		// 4 x 8192 + 8 = 32776.
		Expect(t.Set(4, mcadapter.RxEntry{})).To(Succeed())
		_, ok = t.Lookup(32776)
		Expect(ok).To(BeFalse())

		// Beyond the global space: 16384 x 8192 = 134217728 is page
		// 16384, one past the last entry; rejected.
		_, ok = t.Lookup(134217728)
		Expect(ok).To(BeFalse())
		Expect(t.Unmapped()).To(BeZero())
	})

	It("reads back what Set wrote", func() {
		want := mcadapter.RxEntry{Valid: true, HostFrame: 0x0fff_e000}
		Expect(t.Set(16383, want)).To(Succeed())
		got, err := t.Entry(16383)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(want, got)).To(BeEmpty())
	})

	DescribeTable("Set and Entry refuse out-of-range pages and frames",
		func(page int, e mcadapter.RxEntry, want string) {
			err := t.Set(page, e)
			Expect(err).To(HaveOccurred())
			Expect(errors.Is(err, mcadapter.ErrBadPage)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("negative page", -1, mcadapter.RxEntry{}, "global page -1 of 16384"),
		Entry("page past the table", 16384, mcadapter.RxEntry{}, "global page 16384 of 16384"),
		// 0x1001 is not a multiple of 8192.
		Entry("unaligned frame", 0, mcadapter.RxEntry{Valid: true, HostFrame: 0x1001}, "host frame 0x1001 must be a multiple of 8192"),
		// 256 MB = 0x1000_0000 is one past the last byte of memory.
		Entry("frame beyond memory", 0, mcadapter.RxEntry{Valid: true, HostFrame: 0x1000_0000}, "host frame 0x10000000"),
	)

	It("Entry refuses a page outside the table", func() {
		_, err := t.Entry(16384)
		Expect(errors.Is(err, mcadapter.ErrBadPage)).To(BeTrue())
		_, err = t.Entry(-1)
		Expect(errors.Is(err, mcadapter.ErrBadPage)).To(BeTrue())
	})

	It("ignores the frame of an invalid entry", func() {
		// An unmapped entry's frame is never used, so Set accepts any.
		Expect(t.Set(0, mcadapter.RxEntry{Valid: false, HostFrame: 0x1001})).To(Succeed())
	})

	DescribeTable("Build names the bad parameter",
		func(b mcadapter.RxPageTableBuilder, want string) {
			_, err := b.Build("rx0")
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(HavePrefix("rx0: "))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("page too small", mcadapter.MakeRxPageTableBuilder().WithPageBytes(2), "page bytes 2 must be in 4..65536"),
		Entry("page too large", mcadapter.MakeRxPageTableBuilder().WithPageBytes(131072), "page bytes 131072 must be in 4..65536"),
		Entry("page not a power of two", mcadapter.MakeRxPageTableBuilder().WithPageBytes(6000), "page bytes 6000 must be a power of two"),
		Entry("no pages", mcadapter.MakeRxPageTableBuilder().WithPages(0), "pages 0 must be in 1..65536"),
		Entry("too many pages", mcadapter.MakeRxPageTableBuilder().WithPages(65537), "pages 65537 must be in 1..65536"),
		Entry("no host memory", mcadapter.MakeRxPageTableBuilder().WithHostBytes(0), "host bytes 0 must be a non-zero multiple of the 8192-byte page"),
		Entry("host memory not whole pages", mcadapter.MakeRxPageTableBuilder().WithHostBytes(12288), "host bytes 12288 must be a non-zero multiple"),
	)

	It("builds a small table with other geometry", func() {
		// 4 KB pages, 4 global pages, 16 KB host memory: frames 0..0x3000.
		s, err := mcadapter.MakeRxPageTableBuilder().WithPageBytes(4096).WithPages(4).WithHostBytes(16384).Build("small")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Set(3, mcadapter.RxEntry{Valid: true, HostFrame: 0x3000})).To(Succeed())
		// 3 x 4096 + 100 = 12388 -> 0x3000 + 100 = 0x3064.
		h, ok := s.Lookup(12388)
		Expect(ok).To(BeTrue())
		Expect(h).To(Equal(uint64(0x3064)))
		// 0x4000 = 16384 is past the 16 KB memory.
		Expect(errors.Is(s.Set(0, mcadapter.RxEntry{Valid: true, HostFrame: 0x4000}), mcadapter.ErrBadPage)).To(BeTrue())
	})
})
