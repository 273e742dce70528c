package wormhole

import (
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// matches runs one allocation of reqs (per input, the outputs it requests)
// and returns the output granted to each input (-1: none).
func matches(a Allocator, reqs [][]int) []int {
	a.Clear()
	for in, outs := range reqs {
		for _, o := range outs {
			a.Request(in, o)
		}
	}
	a.Allocate()
	got := make([]int, len(reqs))
	for in := range reqs {
		got[in] = a.OutputOf(in)
	}
	return got
}

var _ = Describe("Allocators", func() {
	// Inputs 0, 1 and 2 request outputs {0, 1}, {0} and {0, 2}, every cycle.
	reqs := [][]int{{0, 1}, {0}, {0, 2}}

	DescribeTable("iSLIP desynchronises its pointers after one cycle",
		func(a Allocator) {
			// Cycle 1, all pointers at 0. Grants: output 0 -> input 0 (first
			// requester from 0), output 1 -> input 0, output 2 -> input 2.
			// Accepts: input 0 takes output 0 (first grant from 0), input 2
			// takes output 2. Accepted grants move the pointers one past the
			// partner: gptr[0] = 1, aptr[0] = 1, gptr[2] = 0, aptr[2] = 0;
			// output 1's grant was not accepted, so gptr[1] stays 0.
			Expect(matches(a, reqs)).To(Equal([]int{0, -1, 2}))
			// Cycle 2. Grants: output 0 -> input 1 (first from 1), output 1 ->
			// input 0, output 2 -> input 2. Every grant is the only one its
			// input gets: a full matching.
			Expect(matches(a, reqs)).To(Equal([]int{1, 0, 2}))
		},
		Entry("one-word sets", newISLIP64(3, 3)),
		Entry("multi-word sets", newISLIP(3, 3)),
	)

	DescribeTable("separable input-first arbitrates inputs, then outputs",
		func(a Allocator) {
			// Cycle 1, pointers at 0: every input picks output 0 (its first
			// request from 0); output 0 picks input 0. inPtr[0] = 1 and
			// outPtr[0] = 1.
			Expect(matches(a, reqs)).To(Equal([]int{0, -1, -1}))
			// Cycle 2: input 0 picks output 1 (first from 1), inputs 1 and 2
			// pick output 0, which picks input 1 (first from 1).
			Expect(matches(a, reqs)).To(Equal([]int{1, 0, -1}))
		},
		Entry("one-word sets", newSepIF64(3, 3)),
		Entry("multi-word sets", newSepIF(3, 3)),
	)

	DescribeTable("one-word and multi-word sets grant the same, cycle after cycle",
		func(kind string, inputs, outputs int) {
			var small, big Allocator
			if kind == "islip" {
				small, big = newISLIP64(inputs, outputs), newISLIP(inputs, outputs)
			} else {
				small, big = newSepIF64(inputs, outputs), newSepIF(inputs, outputs)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			granted := 0
			for range 2000 {
				reqs := make([][]int, inputs)
				for in := range reqs {
					for range rng.IntN(4) {
						reqs[in] = append(reqs[in], rng.IntN(outputs))
					}
				}
				got := matches(small, reqs)
				Expect(got).To(Equal(matches(big, reqs)))
				// A legal matching: each input gets a requested output, each
				// output at most one input.
				seen := map[int]bool{}
				for in, o := range got {
					if o < 0 {
						continue
					}
					Expect(reqs[in]).To(ContainElement(o))
					Expect(seen[o]).To(BeFalse())
					seen[o] = true
					granted++
				}
			}
			Expect(granted).To(BeNumerically(">", 2000))
		},
		Entry("iSLIP, switch of a mesh router (10 x 5)", "islip", 10, 5),
		Entry("iSLIP, VCs of a mesh router (40 x 40)", "islip", 40, 40),
		Entry("iSLIP, 64 x 64", "islip", 64, 64),
		Entry("separable, 10 x 5", "separable_input_first", 10, 5),
		Entry("separable, 64 x 64", "separable_input_first", 64, 64),
	)

	It("uses multi-word sets beyond 64 inputs or outputs", func() {
		a, err := NewAllocator("islip", 65, 8)
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(BeAssignableToTypeOf(&islip{}))
		a, err = NewAllocator("separable_input_first", 8, 64)
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(BeAssignableToTypeOf(&sepIF64{}))
	})
})
