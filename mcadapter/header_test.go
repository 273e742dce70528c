package mcadapter_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/mcadapter"
)

var _ = Describe("Header", func() {
	const page = 8192    // MC-P6
	const gpages = 16384 // 128 MB / 8 KB = 134217728 / 8192 (MC-P7, MC-P20)

	It("accepts a packet that ends exactly at its page end", func() {
		// 32 bytes at global page 5 offset 8160: 5 x 8192 + 8160 = 49120;
		// 8160 + 32 = 8192, the page end, not beyond it.
		h := mcadapter.Header{Addr: 49120, Len: 32, Src: 7, Seq: 1, Loopback: true}
		Expect(h.Validate(page, gpages)).To(Succeed())
		Expect(h.Page(page)).To(Equal(uint64(5)))
		Expect(h.Offset(page)).To(Equal(8160))
	})

	It("accepts a whole page", func() {
		// 8192 bytes at offset 0 of the last global page: 16383 x 8192 =
		// 134209536; 0 + 8192 = 8192 = page end.
		h := mcadapter.Header{Addr: 134209536, Len: page, Src: 0, Seq: 9}
		Expect(h.Validate(page, gpages)).To(Succeed())
	})

	DescribeTable("refuses a bad header, naming the field",
		func(h mcadapter.Header, pageBytes, globalPages int, want string) {
			err := h.Validate(pageBytes, globalPages)
			Expect(err).To(HaveOccurred())
			Expect(errors.Is(err, mcadapter.ErrBadHeader)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("length 0", mcadapter.Header{Addr: 0, Len: 0}, page, gpages, "length 0 must be at least 1"),
		Entry("negative length", mcadapter.Header{Addr: 0, Len: -4}, page, gpages, "length -4 must be at least 1"),
		// 8196 = 8192 + 4: more than one page even at offset 0.
		Entry("length beyond the page", mcadapter.Header{Addr: 0, Len: 8196}, page, gpages, "length 8196 exceeds the 8192-byte page"),
		// offset 8176 = 8192 - 16; 8176 + 32 = 8208 > 8192.
		Entry("crossing a page end", mcadapter.Header{Addr: 8176, Len: 32}, page, gpages, "32 bytes at offset 8176 cross the end of page 0"),
		// one byte past the space: 16384 x 8192 = 134217728 is page 16384.
		Entry("address beyond the space", mcadapter.Header{Addr: 134217728, Len: 4}, page, gpages, "global page 16384 is outside the 16384-page space"),
		Entry("negative source", mcadapter.Header{Addr: 0, Len: 4, Src: -1}, page, gpages, "source adapter -1 must be in 0..255"),
		Entry("source too large", mcadapter.Header{Addr: 0, Len: 4, Src: 256}, page, gpages, "source adapter 256 must be in 0..255"),
		Entry("page not a power of two", mcadapter.Header{Addr: 0, Len: 4}, 6000, gpages, "page bytes 6000 must be a power of two"),
		Entry("no global pages", mcadapter.Header{Addr: 0, Len: 4}, page, 0, "global pages 0 must be in 1..65536"),
	)
})
