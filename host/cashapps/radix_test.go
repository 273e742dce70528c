package cashapps_test

import (
	"encoding/binary"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cashapps"
)

var _ = Describe("Radix (SPLASH-2 radix sort, shrimp-design-choices.txt section 3)", func() {
	words := func(b []byte, from, n int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = binary.LittleEndian.Uint64(b[8*(from+i):])
		}
		return out
	}

	It("sorts: the sequential run's last destination holds the keys in order, the histogram ends zero", func() {
		c := cashapps.RadixConfig{Keys: 1024, RadixBits: 4, KeyBits: 10, Seed: 7}
		r, err := cashapps.NewRadix(c)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Passes()).To(Equal(3)) // 10 bits, 4 a pass
		mem, err := cashapps.RunSequential(r)
		Expect(err).NotTo(HaveOccurred())
		a, b := words(mem, 0, c.Keys), words(mem, c.Keys, c.Keys)
		// 3 passes: A->B, B->A, A->B: the sorted keys are in B, and B's
		// keys are A's (the previous pass's order) sorted.
		Expect(slices.IsSorted(b)).To(BeTrue())
		sorted := slices.Clone(a)
		slices.Sort(sorted)
		Expect(b).To(Equal(sorted))
		// Not a constant array: 1024 10-bit keys take many values.
		Expect(len(slices.Compact(slices.Clone(b)))).To(BeNumerically(">", 500))
		hist := words(mem, 2*c.Keys, cashapps.MaxRadixProcs<<c.RadixBits)
		Expect(slices.ContainsFunc(hist, func(w uint64) bool { return w != 0 })).To(BeFalse())
	})

	It("equals the one-process run bit for bit at 1, 2, 4, 16 and 32 processes under several interleavings, with 2 + 2 x passes barriers", func() {
		r, err := cashapps.NewRadix(cashapps.RadixConfig{Keys: 512, RadixBits: 3, KeyBits: 9, Seed: 3})
		Expect(err).NotTo(HaveOccurred())
		want, err := cashapps.RunSequential(r)
		Expect(err).NotTo(HaveOccurred())
		for _, procs := range []int{1, 2, 4, 16, 32} {
			for seed := uint64(1); seed <= 2; seed++ {
				got, st, err := cashapps.RunInterleaved(r, procs, seed)
				Expect(err).NotTo(HaveOccurred(), "procs %d seed %d", procs, seed)
				Expect(firstDiff(want, got)).To(BeEmpty(), "procs %d seed %d", procs, seed)
				Expect(st.Barriers).To(Equal(2+2*r.Passes()), "procs %d", procs)
				Expect(st.LockAcquires + st.FlagAcquires).To(BeZero())
			}
		}
	})

	It("charges 143 cycles a key-pass (Table 1's 14.3 s on 60 MHz over 2 x 10^6 keys x 3 passes)", func() {
		c := cashapps.DefaultRadix()
		r, err := cashapps.NewRadix(c)
		Expect(err).NotTo(HaveOccurred())
		_, st, err := cashapps.RunInterleaved(r, 4, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.ComputeCycles).To(Equal(int64(143 * c.Keys * r.Passes())))
		// Every key stored once a pass (its place) and once at the start.
		Expect(st.StoreWords).To(BeNumerically(">=", int64(c.Keys*(1+r.Passes()))))
	})

	It("refuses bad sizes with a one-line error naming the key", func() {
		for _, c := range []struct {
			cfg cashapps.RadixConfig
			key string
		}{
			{cashapps.RadixConfig{Keys: 100, RadixBits: 4, KeyBits: 8}, "keys"},
			{cashapps.RadixConfig{Keys: 64, RadixBits: 0, KeyBits: 8}, "radix_bits"},
			{cashapps.RadixConfig{Keys: 64, RadixBits: 4, KeyBits: 63}, "key_bits"},
		} {
			_, err := cashapps.NewRadix(c.cfg)
			Expect(err).To(MatchError(ContainSubstring(c.key + " =")))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		}
	})
})
