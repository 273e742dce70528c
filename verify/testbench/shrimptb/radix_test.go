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

	It("sorts with automatic update, the rows sent as the DU version sends them, every checker clean", func() {
		r, _, err := shrimptb.MeasureRadix(newEnv(), shrimptb.DefaultConfig(), small(true))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Sorted).To(BeTrue())
		// The histogram exchange is the DU version's, one send of the row
		// per pair and pass: 16 x 15 x 3 = 720; the keys and the done
		// flags are automatic updates.
		Expect(r.Messages).To(Equal(uint64(16 * 15 * 3)))
		Expect(r.Notifications).To(BeZero())
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

	It("changes by under 1% with combining: only the sparse key stores and the done flags are automatic updates", func() {
		// The failure this reproduces: the AU version exchanged its
		// histogram rows by automatic update, 65 consecutive stores (64
		// counts and the flag) to each of 15 nodes per pass; without
		// combining every receiver's EISA took 975 one-word packets
		// before the barrier that waits for them, and combining made the
		// sort 4% faster (the paper: «less than a 1% effect», 4.5.1).
		// A node's consecutive key stores go to one destination's
		// consecutive words only when two keys in a row share the digit
		// (1/64), so combining finds almost nothing to combine.
		c := shrimptb.DefaultConfig()
		run := func(comb bool) shrimptb.RadixResult {
			rc := small(true)
			rc.Combine = comb
			r, _, err := shrimptb.MeasureRadix(newEnv(), c, rc)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Sorted).To(BeTrue())
			return r
		}
		off, on := run(false), run(true)
		Expect(float64(on.Time)).To(BeNumerically("~", float64(off.Time), float64(off.Time)/100))
		// Without combining, one packet per AU store: the remote key
		// stores (at most 16 x 256 x 3 = 12,288) and the 16 x 15 x 3 =
		// 720 done flags. With combining the same stores either open a
		// packet or join one, and few join: about 1 in 64.
		Expect(off.Combined).To(BeZero())
		Expect(off.AUPackets).To(BeNumerically(">", 720))
		Expect(off.AUPackets).To(BeNumerically("<=", 12288+720))
		Expect(on.AUPackets + on.Combined).To(Equal(off.AUPackets))
		Expect(on.Combined).To(BeNumerically(">", 0))
		Expect(on.Combined).To(BeNumerically("<", off.AUPackets/20))
	})

	It("runs the same with a 1 KB Outgoing FIFO: the key stores never fill it", func() {
		run := func(c shrimptb.Config) shrimptb.RadixResult {
			r, _, err := shrimptb.MeasureRadix(newEnv(), c, small(true))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Sorted).To(BeTrue())
			return r
		}
		big := run(shrimptb.DefaultConfig())
		c := shrimptb.DefaultConfig()
		// The report's 1 KB FIFO: a 384-byte threshold, 512-byte packets.
		c.NI.FIFOBytes, c.NI.FIFOThreshold, c.NI.MaxPacketBytes = 1024, 384, 512
		kb := run(c)
		// A key store is a packet of two FIFO words (16 bytes) every
		// 109 cycles of work (1.8 µs), drained in about 0.5 µs: the FIFO
		// holds at most a couple of packets, never the threshold, so its
		// size changes nothing.
		Expect(big.FIFOMax).To(BeNumerically("<", 384))
		Expect(kb.Thresholds).To(BeZero())
		Expect(kb.Time).To(Equal(big.Time))
	})
})
