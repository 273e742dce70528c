package tbutil_test

import (
	"github.com/nisim/nisim/verify/testbench/tbutil"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("FirstStale", func() {
	// 16 bytes from address 0x100 in lines of 4: want is 0..15.
	want := make([]byte, 16)
	for i := range want {
		want[i] = byte(i)
	}
	clean := func(uint64) bool { return false }

	It("finds the first byte that differs", func() {
		got := append([]byte(nil), want...)
		Expect(tbutil.FirstStale(got, want, 0x100, 4, nil, clean)).To(Equal(-1))
		got[9] = 0xff
		Expect(tbutil.FirstStale(got, want, 0x100, 4, nil, clean)).To(Equal(9))
	})

	It("skips bytes the model does not know", func() {
		got := append([]byte(nil), want...)
		got[9] = 0xff
		Expect(tbutil.FirstStale(got, want, 0x100, 4, func(off int) bool { return off == 9 }, clean)).To(Equal(-1))
	})

	It("skips the rest of a line a cache holds dirty, and compares the next", func() {
		got := append([]byte(nil), want...)
		got[5], got[7], got[8] = 0xff, 0xff, 0xff
		// Byte 5 is address 0x105, in the line 0x104..0x107: skipped to
		// offset 8 (0x108), which is clean and differs.
		dirty := func(a uint64) bool { return a/4 == 0x104/4 }
		Expect(tbutil.FirstStale(got, want, 0x100, 4, nil, dirty)).To(Equal(8))
	})
})
