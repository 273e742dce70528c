package shrimptb_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// Radix-VMMC at the report's radix (design section 7: 64, the paper's
// histogram-to-keys ratio at 4096 keys per node), at reduced key counts.

var _ = Describe("Radix-VMMC histogram matrix", func() {
	DescribeTable("sizes a row to hold r counts and two flags, a power of two of at least 256 bytes",
		func(r, want int) { Expect(shrimptb.RadixRowBytes(r)).To(Equal(want)) },
		// 4 x 16 + 8 = 72 bytes: the 256-byte floor, 16 rows a page.
		Entry("radix 16", 16, 256),
		// 4 x 62 + 8 = 256: still one 256-byte row.
		Entry("radix 62", 62, 256),
		// 4 x 64 + 8 = 264 > 256: 512-byte rows, 8 a page, the 16 rows
		// two pages.
		Entry("radix 64", 64, 512),
		// 4 x 256 + 8 = 1032: 2048-byte rows, the 16 rows 32 KB.
		Entry("radix 256", 256, 2048),
	)

	It("refuses a radix beyond MaxRadix, naming the field", func() {
		rc := shrimptb.DefaultRadixCI()
		rc.Radix = 2 * shrimptb.MaxRadix
		_, _, err := shrimptb.MeasureRadix(newEnv(), shrimptb.DefaultConfig(), rc)
		Expect(err).To(MatchError(ContainSubstring("Radix 512")))
	})
})

var _ = Describe("Radix-VMMC at radix 64", func() {
	// 16 nodes x 256 keys, radix 64: the matrix is 16 x 512 B = two
	// pages, bound page by page to every node's (AU) or sent row by row
	// (DU, a row never straddles a page).
	small := func(au bool) shrimptb.RadixConfig {
		rc := shrimptb.DefaultRadixCI()
		rc.KeysPerNode, rc.Radix, rc.AU = 256, 64, au
		return rc
	}

	It("sorts with automatic update, the matrix two pages bound per destination, every checker clean", func() {
		r, _, err := shrimptb.MeasureRadix(newEnv(), shrimptb.DefaultConfig(), small(true))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Sorted).To(BeTrue())
		Expect(r.Messages).To(BeZero())
	})

	It("sorts with deliberate update in Table 3's 2,160 messages, every checker clean", func() {
		r, _, err := shrimptb.MeasureRadix(newEnv(), shrimptb.DefaultConfig(), small(false))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Sorted).To(BeTrue())
		// 16 x 15 pairs x 3 passes x 3 messages (row, keys, done flag):
		// every node has keys for every other at 256 keys per node
		// (about 16 per destination per pass), so none is skipped.
		Expect(r.Messages).To(Equal(uint64(16 * 15 * 3 * 3)))
		Expect(r.Notifications).To(BeZero())
	})

	It("takes combining's gain from the histogram rows, not from the sparse key stores", func() {
		c := shrimptb.DefaultConfig()
		run := func(comb, keysOnly bool) float64 {
			rc := small(true)
			rc.Combine, rc.CombineKeysOnly = comb, keysOnly
			r, _, err := shrimptb.MeasureRadix(newEnv(), c, rc)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Sorted).To(BeTrue())
			return float64(r.Time)
		}
		off, keys, all := run(false, false), run(true, true), run(true, false)
		// A node's consecutive key stores go to one destination's
		// consecutive words only when two keys in a row share the digit
		// (1/64): combining the keys alone changes the sort by under 1%.
		Expect(keys).To(BeNumerically("~", off, off/100))
		// A row is 65 consecutive stores (64 counts and the flag) to each
		// of 15 nodes per pass: combined, 15 packets instead of 975 reach
		// every receiver's EISA before the barrier that waits for them.
		Expect(all).To(BeNumerically("<", keys*0.99))
	})
})
