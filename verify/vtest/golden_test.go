package vtest_test

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
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

var _ = Describe("AlterGolden", func() {
	It("changes the first picked record line, never a comment, and refuses a golden with none picked", func() {
		dir := GinkgoT().TempDir()
		src := dir + "/src.trace"
		Expect(os.WriteFile(src, []byte("# a x\n1 1 A x\n2 2 B x\n3 3 C x\n"), 0o644)).To(Succeed())
		out, err := vtest.AlterGolden(GinkgoT().TempDir(), src, func(l string) bool { return strings.Contains(l, " x") },
			func(l string) string { return l + "y" })
		Expect(err).NotTo(HaveOccurred())
		Expect(filepath.Base(out)).To(Equal("src.trace"))
		got, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal("# a x\n1 1 A xy\n2 2 B x\n3 3 C x\n"))
		_, err = vtest.AlterGolden(dir, src, func(string) bool { return false }, func(l string) string { return l })
		Expect(err).To(MatchError(ContainSubstring("no record")))
		_, err = vtest.AlterGolden(dir, dir+"/missing.trace", func(string) bool { return true }, func(l string) string { return l })
		Expect(err).To(HaveOccurred())
	})
})

var _ = Describe("EventWindow and MergeByTime", func() {
	It("picks the n-th from event to the next to event, both included", func() {
		evs := []int{1, 5, 2, 5, 3, 9, 5, 9}
		is := func(v int) func(int) bool { return func(x int) bool { return x == v } }
		first, last, ok := vtest.EventWindow(evs, is(5), is(9), 2)
		Expect([]any{first, last, ok}).To(Equal([]any{3, 5, true}))
		first, last, ok = vtest.EventWindow(evs, is(5), is(5), 0)
		Expect([]any{first, last, ok}).To(Equal([]any{1, 1, true}), "the first event may close its own window")
		_, _, ok = vtest.EventWindow(evs, is(4), is(9), 1)
		Expect(ok).To(BeFalse(), "no first event")
		_, _, ok = vtest.EventWindow(evs, is(9), is(1), 1)
		Expect(ok).To(BeFalse(), "no last event")
	})

	It("interleaves two time-ordered lists, the first list's records first at equal times", func() {
		r := func(t int, k string) trace.Record { return trace.Record{Time: clock.Time(t), Kind: k} }
		got := vtest.MergeByTime([]trace.Record{r(1, "a"), r(3, "a"), r(3, "a2")}, []trace.Record{r(0, "b"), r(3, "b"), r(4, "b")})
		var kinds []string
		for _, x := range got {
			kinds = append(kinds, x.Kind)
		}
		Expect(kinds).To(Equal([]string{"b", "a", "a", "a2", "b", "b"}))
	})
})
