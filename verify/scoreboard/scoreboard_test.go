package scoreboard_test

import (
	"errors"
	"fmt"

	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/scoreboard"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Pkt is a small transaction: a source, a sequence number, an address and
// a payload.
type Pkt struct {
	Src, Seq int
	Addr     uint64
	Data     []byte
}

func pktKey(p Pkt) string { return fmt.Sprintf("src=%d seq=%d", p.Src, p.Seq) }

// stream returns n packets of source src with sequence numbers 0..n-1.
func stream(src, n int) []Pkt {
	var ps []Pkt
	for i := range n {
		ps = append(ps, Pkt{Src: src, Seq: i, Addr: uint64(0x1000 + 8*i), Data: []byte{byte(src), byte(i)}})
	}
	return ps
}

// changed matches a diff that marks field as removed or inserted; cmp also
// prints unchanged fields as context.
func changed(field string) OmegaMatcher {
	return MatchRegexp(`(?m)^[-+]\s+` + field + `:`)
}

var _ = Describe("Scoreboard", func() {
	expectAll := func(sb *scoreboard.Scoreboard[Pkt], ps []Pkt) {
		for _, p := range ps {
			sb.Expect(p)
		}
	}

	It("matches an in-order stream", func() {
		sb := scoreboard.New("Test.SB", scoreboard.InOrder, pktKey)
		ps := stream(1, 5)
		expectAll(sb, ps)
		Expect(sb.Pending()).To(Equal(5))
		for _, p := range ps {
			sb.Actual(p)
		}
		r := sb.Report()
		Expect(r.OK()).To(BeTrue())
		Expect(r.Error()).To(Succeed())
		Expect(r).To(Equal(scoreboard.Report{Name: "Test.SB", Matched: 5}))
		Expect(sb.Pending()).To(BeZero())
	})

	It("shows the differing field of an in-order mismatch", func() {
		sb := scoreboard.New("Test.SB", scoreboard.InOrder, pktKey)
		ps := stream(1, 3)
		expectAll(sb, ps)
		bad := ps[1]
		bad.Addr = 0xdead
		sb.Actual(ps[0])
		sb.Actual(bad)
		sb.Actual(ps[2])
		r := sb.Report()
		Expect(r.OK()).To(BeFalse())
		Expect(r.Matched).To(Equal(2))
		Expect(r.Mismatches).To(HaveLen(1))
		m := r.Mismatches[0]
		Expect(m.Index).To(Equal(1))
		Expect(m.Key).To(Equal("src=1 seq=1"))
		Expect(m.Diff).To(changed("Addr"))
		Expect(m.Diff).To(MatchRegexp(`(?m)^- \tAddr: 4104,$`))   // 0x1008
		Expect(m.Diff).To(MatchRegexp(`(?m)^\+ \tAddr: 57005,$`)) // 0xdead
		Expect(m.Diff).NotTo(changed("Data"))
		Expect(m.Diff).NotTo(ContainSubstring("\u00a0"))
		Expect(r.Missing).To(BeEmpty())
		Expect(r.Unexpected).To(BeEmpty())
	})

	It("reports every mismatch, not only the first", func() {
		sb := scoreboard.New("Test.SB", scoreboard.InOrder, pktKey)
		ps := stream(2, 6)
		expectAll(sb, ps)
		for i, p := range ps {
			switch i {
			case 1:
				p.Addr++
			case 3:
				p.Data = nil
			case 4:
				p.Seq = 40
			}
			sb.Actual(p)
		}
		r := sb.Report()
		Expect(r.Matched).To(Equal(3))
		var idx []int
		for _, m := range r.Mismatches {
			idx = append(idx, m.Index)
		}
		Expect(idx).To(Equal([]int{1, 3, 4}))
		Expect(r.Mismatches[0].Diff).To(changed("Addr"))
		Expect(r.Mismatches[1].Diff).To(changed("Data"))
		Expect(r.Mismatches[2].Diff).To(changed("Seq"))
		Expect(r.Mismatches[2].Key).To(Equal("src=2 seq=4")) // the expected item's key
		err := r.Error()
		Expect(err).To(HaveOccurred())
		msg := err.Error()
		Expect(msg).To(ContainSubstring("3 matched, 3 mismatched, 0 missing, 0 unexpected"))
		for _, s := range []string{"actual #1 (src=2 seq=1)", "Addr", "actual #3 (src=2 seq=3)", "Data", "actual #4 (src=2 seq=4)", "Seq"} {
			Expect(msg).To(ContainSubstring(s))
		}
		var se *scoreboard.Error
		Expect(errors.As(err, &se)).To(BeTrue())
		Expect(se.Report.Mismatches).To(HaveLen(3))
	})

	It("reports missing and unexpected items in order", func() {
		sb := scoreboard.New("Test.SB", scoreboard.InOrder, pktKey)
		expectAll(sb, stream(1, 4))
		for _, p := range stream(1, 2) {
			sb.Actual(p)
		}
		r := sb.Report()
		Expect(r.Missing).To(Equal([]string{"src=1 seq=2", "src=1 seq=3"}))
		Expect(r.Unexpected).To(BeEmpty())

		sb = scoreboard.New("Test.SB", scoreboard.InOrder, pktKey)
		expectAll(sb, stream(1, 1))
		for _, p := range stream(3, 3) {
			sb.Actual(p)
		}
		r = sb.Report()
		Expect(r.Mismatches).To(HaveLen(1)) // seq 0 of source 3 against source 1's
		Expect(r.Mismatches[0].Diff).To(changed("Src"))
		Expect(r.Missing).To(BeEmpty())
		Expect(r.Unexpected).To(Equal([]string{"src=3 seq=1", "src=3 seq=2"}))
		Expect(r.Error()).To(MatchError(ContainSubstring("unexpected: src=3 seq=2")))
	})

	It("describes items by position and value without a key function", func() {
		sb := scoreboard.New[Pkt]("Test.SB", scoreboard.InOrder, nil)
		expectAll(sb, stream(1, 2))
		sb.Actual(stream(1, 1)[0])
		r := sb.Report()
		Expect(r.Missing).To(Equal([]string{"expected #1 {Src:1 Seq:1 Addr:4104 Data:[1 1]}"}))
		sb.Actual(Pkt{})
		sb.Actual(Pkt{Src: 5})
		r = sb.Report()
		Expect(r.Missing).To(BeEmpty())
		Expect(r.Mismatches).To(HaveLen(1))
		Expect(r.Mismatches[0].Key).To(HavePrefix("expected #1 "))
		Expect(r.Unexpected).To(Equal([]string{"actual #2 {Src:5 Seq:0 Addr:0 Data:[]}"}))
	})

	It("matches a reordered stream by key", func() {
		sb := scoreboard.New("Test.SB", scoreboard.OutOfOrder, pktKey)
		a, b := stream(1, 4), stream(2, 4)
		expectAll(sb, a)
		expectAll(sb, b)
		// Interleave the two sources and deliver each source backwards.
		for i := 3; i >= 0; i-- {
			sb.Actual(b[i])
			sb.Actual(a[i])
		}
		r := sb.Report()
		Expect(r.Error()).To(Succeed())
		Expect(r.Matched).To(Equal(8))
	})

	It("reports out-of-order mismatches, missing and unexpected items", func() {
		sb := scoreboard.New("Test.SB", scoreboard.OutOfOrder, pktKey)
		ps := stream(1, 5)
		expectAll(sb, ps)
		bad := ps[3]
		bad.Data = nil
		sb.Actual(bad)
		sb.Actual(Pkt{Src: 7, Seq: 1})
		sb.Actual(ps[0])
		r := sb.Report()
		Expect(r.Matched).To(Equal(1))
		Expect(r.Mismatches).To(HaveLen(1))
		Expect(r.Mismatches[0].Index).To(Equal(0))
		Expect(r.Mismatches[0].Key).To(Equal("src=1 seq=3"))
		Expect(r.Mismatches[0].Diff).To(changed("Data"))
		Expect(r.Missing).To(Equal([]string{"src=1 seq=1", "src=1 seq=2", "src=1 seq=4"}))
		Expect(r.Unexpected).To(Equal([]string{"src=7 seq=1"}))
	})

	It("queues duplicate expected keys first in, first out", func() {
		sb := scoreboard.New("Test.SB", scoreboard.OutOfOrder, pktKey)
		// Two transactions share a key (a sequence number that wrapped).
		first := Pkt{Src: 1, Seq: 0, Addr: 0x10}
		second := Pkt{Src: 1, Seq: 0, Addr: 0x20}
		other := Pkt{Src: 2, Seq: 0, Addr: 0x30}
		sb.Expect(first)
		sb.Expect(other)
		sb.Expect(second)
		sb.Actual(first)
		sb.Actual(other)
		sb.Actual(second)
		Expect(sb.Report().Error()).To(Succeed())

		// Delivered the other way round, each pairs with the older
		// expectation: two mismatches on Addr.
		sb = scoreboard.New("Test.SB", scoreboard.OutOfOrder, pktKey)
		sb.Expect(first)
		sb.Expect(second)
		sb.Actual(second)
		sb.Actual(first)
		sb.Actual(first) // a third delivery of the key is unexpected
		r := sb.Report()
		Expect(r.Mismatches).To(HaveLen(2))
		for _, m := range r.Mismatches {
			Expect(m.Diff).To(changed("Addr"))
		}
		Expect(r.Unexpected).To(Equal([]string{"src=1 seq=0"}))
		Expect(r.Missing).To(BeEmpty())
	})

	It("ignores fields through cmp options", func() {
		sb := scoreboard.New("Test.SB", scoreboard.InOrder, pktKey, cmpopts.IgnoreFields(Pkt{}, "Addr"))
		ps := stream(1, 2)
		expectAll(sb, ps)
		moved := ps[0]
		moved.Addr = 0xffff
		sb.Actual(moved)
		corrupt := ps[1]
		corrupt.Data = nil // a lost payload
		sb.Actual(corrupt)
		r := sb.Report()
		Expect(r.Matched).To(Equal(1))
		Expect(r.Mismatches).To(HaveLen(1))
		Expect(r.Mismatches[0].Diff).To(changed("Data"))
		Expect(r.Mismatches[0].Diff).NotTo(ContainSubstring("Addr"))
	})

	It("turns every problem into a monitor violation", func() {
		sb := scoreboard.New("Test.SB", scoreboard.OutOfOrder, pktKey)
		ps := stream(1, 3)
		expectAll(sb, ps)
		bad := ps[0]
		bad.Addr = 1
		sb.Actual(bad)
		sb.Actual(Pkt{Src: 9})
		sb.Actual(ps[2])
		mon := check.NewMonitor()
		sb.ReportTo(mon, clock.Time(50_000))
		vs := mon.Violations()
		Expect(vs).To(HaveLen(3))
		var rules []string
		for _, v := range vs {
			Expect(v.Path).To(Equal("Test.SB"))
			Expect(v.Time).To(Equal(clock.Time(50_000)))
			rules = append(rules, v.Check)
		}
		Expect(rules).To(Equal([]string{"scoreboard.mismatch", "scoreboard.missing", "scoreboard.unexpected"}))
		Expect(vs[0].Msg).To(ContainSubstring("Addr"))
		Expect(vs[1].Msg).To(ContainSubstring("src=1 seq=1"))
		Expect(vs[2].Msg).To(ContainSubstring("src=9 seq=0"))
		Expect(mon.Err()).To(MatchError(ContainSubstring("scoreboard.mismatch")))
	})

	It("adds nothing to the monitor when everything matched", func() {
		sb := scoreboard.New("Test.SB", scoreboard.OutOfOrder, pktKey)
		sb.Expect(Pkt{Src: 1})
		sb.Actual(Pkt{Src: 1})
		mon := check.NewMonitor()
		sb.ReportTo(mon, 0)
		Expect(mon.Err()).To(Succeed())
		Expect(sb.Report().Error()).To(BeNil())
	})

	DescribeTable("holds only what is pending, however long the run",
		func(mode scoreboard.Mode) {
			// 100000 items pass with up to 40 pending, each window of 8
			// produced in reverse out of order; out of order, one expected
			// item is never produced and stays pending throughout.
			sb := scoreboard.New("Test.SB", mode, pktKey)
			if mode == scoreboard.OutOfOrder {
				sb.Expect(Pkt{Src: 7})
			}
			ps := stream(1, 100_000)
			most := 0
			for i, p := range ps {
				sb.Expect(p)
				if i%8 == 7 && i >= 39 {
					for k := range 8 {
						j := i - 32 - k
						if mode == scoreboard.InOrder {
							j = i - 39 + k
						}
						sb.Actual(ps[j])
					}
				}
				order, keys := scoreboard.Held(sb)
				most = max(most, order)
				Expect(keys).To(BeNumerically("<=", 41))
			}
			Expect(most).To(BeNumerically("<=", 2*64+41))
			for _, p := range ps[len(ps)-32:] {
				sb.Actual(p)
			}
			r := sb.Report()
			Expect(r.Matched).To(Equal(100_000))
			if mode == scoreboard.OutOfOrder {
				Expect(r.Missing).To(Equal([]string{"src=7 seq=0"}))
			} else {
				Expect(r.OK()).To(BeTrue())
			}
			order, keys := scoreboard.Held(sb)
			Expect(order).To(BeNumerically("<=", 64))
			Expect(keys).To(BeNumerically("<=", 1))
		},
		Entry("in order", scoreboard.InOrder),
		Entry("out of order", scoreboard.OutOfOrder),
	)

	It("keeps the first MaxKept problems of each kind and counts the rest", func() {
		sb := scoreboard.New("Test.SB", scoreboard.InOrder, pktKey)
		ps := stream(1, check.MaxKept+5)
		expectAll(sb, ps)
		for _, p := range ps {
			p.Addr++
			sb.Actual(p)
		}
		for i := range check.MaxKept + 3 {
			sb.Actual(Pkt{Src: 2, Seq: i})
		}
		r := sb.Report()
		Expect(r.Mismatches).To(HaveLen(check.MaxKept))
		Expect(r.Unexpected).To(HaveLen(check.MaxKept))
		Expect([]int{r.MoreMismatches, r.MoreMissing, r.MoreUnexpected}).To(Equal([]int{5, 0, 3}))
		mis, miss, unex := r.Counts()
		Expect([]int{mis, miss, unex}).To(Equal([]int{check.MaxKept + 5, 0, check.MaxKept + 3}))
		Expect(r.Mismatches[check.MaxKept-1].Key).To(Equal(fmt.Sprintf("src=1 seq=%d", check.MaxKept-1)))
		Expect(r.Error()).To(MatchError(HavePrefix(fmt.Sprintf("scoreboard Test.SB: 0 matched, %d mismatched, 0 missing, %d unexpected",
			check.MaxKept+5, check.MaxKept+3))))
		Expect(r.Error()).To(MatchError(HaveSuffix("\n  ... and 8 more problems, counted only")))
		// Every kept problem is a violation, and each count one more (the
		// monitor itself keeps only the first MaxKept of them in full).
		mon := check.NewMonitor()
		sb.ReportTo(mon, 0)
		Expect(mon.Count()).To(Equal(2*check.MaxKept + 2))
		Expect(scoreboard.Report{Name: "Test.SB", MoreMismatches: 1}.OK()).To(BeFalse())
	})

	It("counts missing items beyond MaxKept", func() {
		sb := scoreboard.New("Test.SB", scoreboard.OutOfOrder, pktKey)
		expectAll(sb, stream(3, check.MaxKept+2))
		r := sb.Report()
		Expect(r.Missing).To(HaveLen(check.MaxKept))
		Expect(r.Missing[0]).To(Equal("src=3 seq=0"))
		Expect(r.MoreMissing).To(Equal(2))
		Expect(r.OK()).To(BeFalse())
	})

	It("refuses an out-of-order scoreboard without a key function", func() {
		Expect(func() { scoreboard.New[Pkt]("Bad", scoreboard.OutOfOrder, nil) }).To(PanicWith(ContainSubstring("key function")))
		Expect(func() { scoreboard.New("Bad", scoreboard.Mode(5), pktKey) }).To(PanicWith(ContainSubstring("mode(5)")))
		Expect(scoreboard.OutOfOrder.String()).To(Equal("out-of-order"))
	})
})
