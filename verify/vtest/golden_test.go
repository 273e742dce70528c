package vtest_test

import (
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("ReviewRecords", func() {
	It("keeps a CPU's polls only where the value changed, the board's records and the shared kinds", func() {
		poll := func(path, hash string) trace.Record {
			return trace.Record{Path: path, Kind: "cpu.retire", Fields: []trace.Field{{Key: "op", Val: "poll"}, {Key: "hash", Val: hash}}}
		}
		kind := func(k string) trace.Record { return trace.Record{Path: "X", Kind: k} }
		in := []trace.Record{
			poll("A", "1"), poll("A", "1"), poll("B", "1"), poll("A", "2"), poll("A", "2"),
			kind("bus.req"), kind("bridge.cross"), kind("mc.tx"), kind("shrimp.au"),
			kind("link.packet"), kind("dma.done"), kind("cache.invalidate"), kind("cache.fill"),
		}
		got := vtest.ReviewRecords(in, "mc.")
		// A's second "1" and second "2" repeat the last value: dropped; B's
		// first poll is its own; shrimp.* and cache.fill are not kept.
		Expect(got).To(Equal([]trace.Record{
			poll("A", "1"), poll("B", "1"), poll("A", "2"),
			kind("bus.req"), kind("bridge.cross"), kind("mc.tx"),
			kind("link.packet"), kind("dma.done"), kind("cache.invalidate"),
		}))
	})
})
