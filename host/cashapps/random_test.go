package cashapps_test

import (
	"encoding/binary"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cashapps"
)

var _ = Describe("Random, the randomised data-race-free program", func() {
	build := func(seed uint64, procs int) *cashapps.Random {
		r, err := cashapps.NewRandom(cashapps.DefaultRandom(seed, procs))
		Expect(err).NotTo(HaveOccurred())
		return r
	}

	It("replays to the final memory of one process", func() {
		r := build(1, 1)
		mem, err := cashapps.RunSequential(r)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Check(mem)).To(Succeed())
	})

	It("is race-free and replays in lock order at 2, 4 and 16 processes, whatever the interleaving", func() {
		for _, procs := range []int{2, 4, 16} {
			for seed := uint64(1); seed <= 3; seed++ {
				r := build(seed, procs)
				mem, st, err := cashapps.RunInterleaved(r, procs, seed*7)
				Expect(err).NotTo(HaveOccurred(), "procs %d seed %d", procs, seed)
				Expect(r.Check(mem)).To(Succeed(), "procs %d seed %d", procs, seed)
				c := r.Config()
				Expect(st.Barriers).To(Equal(c.Phases))
				Expect(st.LockAcquires).To(Equal(procs * c.Phases * c.Sections))
				Expect(st.FlagAcquires).To(Equal(procs * c.Phases))
			}
		}
	})

	It("gives different lock orders under different interleavings, and each replays", func() {
		r := build(5, 16)
		a, _, err := cashapps.RunInterleaved(r, 16, 1)
		Expect(err).NotTo(HaveOccurred())
		b, _, err := cashapps.RunInterleaved(r, 16, 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(a).NotTo(Equal(b)) // the logs differ: the replay is not vacuous
		Expect(r.Check(a)).To(Succeed())
		Expect(r.Check(b)).To(Succeed())
	})

	It("catches a corrupted word, a reordered log and a lost critical section", func() {
		r := build(2, 4)
		mem, _, err := cashapps.RunInterleaved(r, 4, 3)
		Expect(err).NotTo(HaveOccurred())
		word := func(m []byte, w int) uint64 { return binary.LittleEndian.Uint64(m[w*8:]) }
		put := func(m []byte, w int, v uint64) { binary.LittleEndian.PutUint64(m[w*8:], v) }

		bad := append([]byte(nil), mem...)
		put(bad, 5, word(bad, 5)^1) // a data word
		Expect(r.Check(bad)).To(MatchError(ContainSubstring("data word 5")))

		// Swap lock 0's first two log slots: the replay's order changes, so
		// the block no longer matches (or the slots' sections differ).
		lock0 := 2 * r.Config().DataPages / 2 * cashapps.PageBytes / 8
		bad = append([]byte(nil), mem...)
		s0, s1 := word(bad, lock0+1+r.Config().BlockWords), word(bad, lock0+2+r.Config().BlockWords)
		Expect(s0).NotTo(Equal(s1))
		put(bad, lock0+1+r.Config().BlockWords, s1)
		put(bad, lock0+2+r.Config().BlockWords, s0)
		Expect(r.Check(bad)).To(MatchError(ContainSubstring("lock 0's block")))

		bad = append([]byte(nil), mem...)
		put(bad, lock0, word(bad, lock0)-1) // a lost ticket
		Expect(r.Check(bad)).To(MatchError(ContainSubstring("lock 0's ticket")))
	})

	It("is caught as a race when its critical sections skip their locks", func() {
		r := build(3, 4)
		r.SkipLocks()
		_, _, err := cashapps.RunInterleaved(r, 4, 1)
		Expect(err).To(MatchError(ContainSubstring("data race")))
	})

	It("refuses a bad size with one line naming it", func() {
		c := cashapps.DefaultRandom(1, 4)
		c.Granule = 3
		_, err := cashapps.NewRandom(c)
		Expect(err).To(MatchError("random: granule = 3: need a divisor of a page's 1024 words"))
	})
})
