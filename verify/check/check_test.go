package check_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/check"
)

// unit is a scripted check.Unit.
type unit struct {
	name, state string
	idle        bool
}

func (u *unit) Name() string  { return u.name }
func (u *unit) Idle() bool    { return u.idle }
func (u *unit) State() string { return u.state }

// rules returns "check: msg" of every kept violation.
func rules(m *check.Monitor) []string {
	var out []string
	for _, v := range m.Violations() {
		out = append(out, v.Check+": "+v.Msg)
	}
	return out
}

var _ = Describe("Monitor", func() {
	var m *check.Monitor
	BeforeEach(func() { m = check.NewMonitor() })

	It("is clean when nothing was reported", func() {
		Expect(m.Err()).To(Succeed())
		Expect(m.Count()).To(BeZero())
		Expect(m.Violations()).To(BeEmpty())
	})

	It("keeps violations in report order and lists them in Err", func() {
		m.Report(30*clock.Nanosecond, "Demo.Fifo", "fifo.overflow", "push into a full FIFO (%d/%d)", 4, 4)
		m.Report(7518, "Demo.Link", "credit", "credit returned twice")
		Expect(m.Count()).To(Equal(2))
		Expect(cmp.Diff([]check.Violation{
			{Time: 30000, Path: "Demo.Fifo", Check: "fifo.overflow", Msg: "push into a full FIFO (4/4)"},
			{Time: 7518, Path: "Demo.Link", Check: "credit", Msg: "credit returned twice"},
		}, m.Violations())).To(BeEmpty())
		Expect(m.Violations()[0].String()).To(Equal("30ns Demo.Fifo [fifo.overflow] push into a full FIFO (4/4)"))
		err := m.Err()
		Expect(err).To(MatchError("2 checker violation(s):\n" +
			"  30ns Demo.Fifo [fifo.overflow] push into a full FIFO (4/4)\n" +
			"  7518ps Demo.Link [credit] credit returned twice"))
		var ce *check.Error
		Expect(errors.As(err, &ce)).To(BeTrue())
		Expect(ce.Violations).To(Equal(m.Violations()))
	})

	It("keeps MaxKept violations in full and counts the rest", func() {
		for i := range check.MaxKept + 3 {
			m.Report(clock.Time(i), "P", "rule", "violation %d", i)
		}
		Expect(m.Count()).To(Equal(check.MaxKept + 3))
		Expect(m.Violations()).To(HaveLen(check.MaxKept))
		// The first ones are kept, the last three only counted.
		Expect(m.Violations()[check.MaxKept-1].Msg).To(Equal(fmt.Sprintf("violation %d", check.MaxKept-1)))
		text := m.Err().Error()
		Expect(text).To(HavePrefix(fmt.Sprintf("%d checker violation(s):\n  0ps P [rule] violation 0\n", check.MaxKept+3)))
		Expect(text).To(HaveSuffix(fmt.Sprintf("[rule] violation %d\n  ... and 3 more", check.MaxKept-1)))
		Expect(strings.Count(text, "\n")).To(Equal(check.MaxKept + 1))
	})

	It("lists registered units in registration order", func() {
		a, b := &unit{name: "B"}, &unit{name: "A"}
		m.Register(a)
		m.Register(b)
		Expect(m.Units()).To(Equal([]check.Unit{a, b}))
	})
})

var _ = Describe("Conservation", func() {
	var (
		m *check.Monitor
		c *check.Conservation[string]
	)
	BeforeEach(func() {
		m = check.NewMonitor()
		c = check.NewConservation[string](m, "Demo.Net")
	})

	It("counts sent, received and dropped keys", func() {
		c.Sent(10, "a")
		c.Sent(11, "b")
		c.Sent(12, "c")
		c.Received(20, "a")
		c.Dropped(21, "b")
		c.Received(22, "c")
		sent, recv, dropped := c.Counts()
		Expect([]int{sent, recv, dropped}).To(Equal([]int{3, 2, 1}))
		c.Finish(100)
		Expect(m.Err()).To(Succeed())
	})

	DescribeTable("violations",
		func(script func(c *check.Conservation[string]), want []string, counts [3]int) {
			script(c)
			Expect(rules(m)).To(Equal(want))
			for _, v := range m.Violations() {
				Expect(v.Path).To(Equal("Demo.Net"))
			}
			sent, recv, dropped := c.Counts()
			Expect([3]int{sent, recv, dropped}).To(Equal(counts))
		},
		Entry("a duplicate receive", func(c *check.Conservation[string]) {
			c.Sent(1, "a")
			c.Received(2, "a")
			c.Received(3, "a")
		}, []string{"duplicate: a received twice"}, [3]int{1, 1, 0}),
		Entry("an unknown receive", func(c *check.Conservation[string]) {
			c.Received(2, "z")
		}, []string{"unknown: z received but never sent or already resolved"}, [3]int{0, 0, 0}),
		Entry("a receive after a drop", func(c *check.Conservation[string]) {
			c.Sent(1, "a")
			c.Dropped(2, "a")
			c.Received(3, "a")
		}, []string{"dropped-received: a received after it was dropped"}, [3]int{1, 0, 1}),
		Entry("a drop of a key never sent", func(c *check.Conservation[string]) {
			c.Dropped(2, "z")
		}, []string{"bad-drop: z dropped but not in flight"}, [3]int{0, 0, 0}),
		Entry("a drop after the receive", func(c *check.Conservation[string]) {
			c.Sent(1, "a")
			c.Received(2, "a")
			c.Dropped(3, "a")
		}, []string{"bad-drop: a dropped but not in flight"}, [3]int{1, 1, 0}),
		Entry("a double drop", func(c *check.Conservation[string]) {
			c.Sent(1, "a")
			c.Dropped(2, "a")
			c.Dropped(3, "a")
		}, []string{"bad-drop: a dropped but not in flight"}, [3]int{1, 0, 1}),
		Entry("a duplicate send", func(c *check.Conservation[string]) {
			c.Sent(1, "a")
			c.Sent(2, "a")
		}, []string{"duplicate-send: a sent twice"}, [3]int{1, 0, 0}),
		Entry("a send of a key already received", func(c *check.Conservation[string]) {
			c.Sent(1, "a")
			c.Received(2, "a")
			c.Sent(3, "a")
		}, []string{"duplicate-send: a sent twice"}, [3]int{1, 1, 0}),
	)

	It("reports the violation time", func() {
		c.Received(4500, "z")
		Expect(m.Violations()[0].Time).To(Equal(clock.Time(4500)))
	})

	It("reports lost keys in send order", func() {
		k := check.NewConservation[check.Key](m, "Demo.Flows")
		// Sent in the order f#5, g#3, f#9, f#1; g#3 arrives, f#9 is dropped.
		for _, key := range []check.Key{{Flow: "f", Seq: 5}, {Flow: "g", Seq: 3}, {Flow: "f", Seq: 9}, {Flow: "f", Seq: 1}} {
			k.Sent(10, key)
		}
		k.Received(20, check.Key{Flow: "g", Seq: 3})
		k.Dropped(20, check.Key{Flow: "f", Seq: 9})
		k.Finish(1000)
		Expect(cmp.Diff([]check.Violation{{
			Time: 1000, Path: "Demo.Flows", Check: "lost",
			Msg: "2 of 4 sent never arrived (first: [f#5 f#1])",
		}}, m.Violations())).To(BeEmpty())
	})

	It("remembers the last ResolvedWindow resolved keys: a repeat beyond them is reported as unknown, never accepted", func() {
		c.Sent(1, "a")
		c.Received(2, "a")
		c.Sent(1, "d")
		c.Dropped(2, "d")
		// a and d are resolved; ResolvedWindow-2 more keep them in the window.
		for i := range check.ResolvedWindow - 2 {
			k := fmt.Sprintf("k%d", i)
			c.Sent(3, k)
			c.Received(4, k)
		}
		c.Received(5, "a")
		c.Received(5, "d")
		c.Sent(5, "a")
		Expect(rules(m)).To(Equal([]string{"duplicate: a received twice", "dropped-received: d received after it was dropped",
			"duplicate-send: a sent twice"}))
		// Two more resolved keys push a and d out of the window.
		for _, k := range []string{"x", "y"} {
			c.Sent(6, k)
			c.Received(7, k)
		}
		c.Received(8, "a")
		c.Received(8, "d")
		c.Dropped(8, "a")
		Expect(rules(m)[3:]).To(Equal([]string{"unknown: a received but never sent or already resolved",
			"unknown: d received but never sent or already resolved", "bad-drop: a dropped but not in flight"}))
		// Sent again after it left the window, a is a new transaction.
		c.Sent(9, "a")
		c.Received(10, "a")
		Expect(m.Count()).To(Equal(6))
		sent, recv, dropped := c.Counts()
		Expect([3]int{sent, recv, dropped}).To(Equal([3]int{check.ResolvedWindow + 3, check.ResolvedWindow + 2, 1}))
		c.Finish(11)
		Expect(m.Count()).To(Equal(6))
	})

	It("holds only the outstanding keys and the window, however long the run", func() {
		// "old" stays outstanding for the whole run while 100000 keys pass
		// behind it, with up to 50 in flight: what the checker holds stays
		// bounded, and the oldest is still "old".
		c.Sent(1, "old")
		most := 0
		for i := range 100_000 {
			c.Sent(clock.Time(10+i), fmt.Sprintf("k%d", i))
			if i >= 50 {
				c.Received(clock.Time(10+i), fmt.Sprintf("k%d", i-50))
			}
			q, w := check.QueueLen(c)
			most = max(most, q)
			Expect(w).To(BeNumerically("<=", check.ResolvedWindow))
		}
		Expect(c.Outstanding()).To(Equal(51))
		Expect(most).To(BeNumerically("<=", 2*64+51))
		d, at, ok := c.Oldest()
		Expect([]any{d, at, ok}).To(Equal([]any{"old", clock.Time(1), true}))
		c.Received(200_000, "old")
		d, at, _ = c.Oldest()
		Expect([]any{d, at}).To(Equal([]any{"k99950", clock.Time(10 + 99_950)}))
		c.Finish(300_000)
		Expect(rules(m)).To(Equal([]string{"lost: 50 of 100001 sent never arrived (first: [k99950 k99951 k99952 k99953 k99954 k99955 k99956 k99957 k99958 k99959])"}))
	})

	It("reports lost keys in send order after resolved keys behind them were compacted away", func() {
		// Every third key is lost; the rest arrive, most of them after
		// later keys.
		for i := range 3000 {
			c.Sent(clock.Time(i), fmt.Sprintf("k%d", i))
		}
		for i := 2999; i >= 0; i-- {
			if i%3 != 0 {
				c.Received(5000, fmt.Sprintf("k%d", i))
			}
		}
		q, _ := check.QueueLen(c)
		Expect(q).To(BeNumerically("<=", 2*1000))
		c.Finish(6000)
		Expect(rules(m)).To(Equal([]string{"lost: 1000 of 3000 sent never arrived (first: [k0 k3 k6 k9 k12 k15 k18 k21 k24 k27])"}))
	})

	It("is a watchdog unit: busy while keys are outstanding, with the oldest in the stuck-state report", func() {
		Expect(m.Units()).To(Equal([]check.Unit{c}))
		Expect(c.Name()).To(Equal("Demo.Net"))
		Expect(c.Idle()).To(BeTrue())
		_, _, ok := c.Oldest()
		Expect(ok).To(BeFalse())
		Expect(m.Watchdog(5)).To(Succeed())
		c.Sent(10*clock.Nanosecond, "a")
		c.Sent(20*clock.Nanosecond, "b")
		c.Sent(30*clock.Nanosecond, "c")
		c.Dropped(35*clock.Nanosecond, "c")
		c.Received(40*clock.Nanosecond, "a")
		Expect(c.Idle()).To(BeFalse())
		Expect(c.Outstanding()).To(Equal(1))
		Expect(c.State()).To(Equal("1 outstanding (3 sent, 1 received, 1 dropped), the oldest b sent at 20ns"))
		Expect(m.LastProgress()).To(Equal(40 * clock.Nanosecond))
		// The report's layout is the Monitor's; what this checker adds is
		// its state and its oldest key.
		err := m.Watchdog(100 * clock.Nanosecond)
		Expect(err).To(MatchError(ContainSubstring("1 busy unit(s)")))
		Expect(err).To(MatchError(ContainSubstring("\n  Demo.Net: 1 outstanding (3 sent, 1 received, 1 dropped), the oldest b sent at 20ns")))
		Expect(err).To(MatchError(ContainSubstring("oldest outstanding transaction: b, since 20ns (80ns ago)")))
		c.Received(110*clock.Nanosecond, "b")
		Expect(c.Idle()).To(BeTrue())
		Expect(m.LastProgress()).To(Equal(110 * clock.Nanosecond))
	})

	It("lists at most the first ten lost keys", func() {
		for i := 12; i > 0; i-- {
			c.Sent(1, fmt.Sprintf("k%d", i))
		}
		c.Received(2, "k12")
		c.Finish(3)
		// Sent k12..k1; k12 arrived; the first ten lost are k11..k2.
		Expect(rules(m)).To(Equal([]string{"lost: 11 of 12 sent never arrived (first: [k11 k10 k9 k8 k7 k6 k5 k4 k3 k2])"}))
	})
})

var _ = Describe("Ordering", func() {
	var (
		m *check.Monitor
		o *check.Ordering[string]
	)
	BeforeEach(func() {
		m = check.NewMonitor()
		o = check.NewOrdering[string](m, "Demo.Rx")
	})

	It("passes increasing sequence numbers, gaps allowed, starting at 0", func() {
		for _, s := range []uint64{0, 1, 2, 5, 9} {
			o.Observe(10, "a", s)
		}
		Expect(m.Err()).To(Succeed())
	})

	It("reports a reordering and keeps the highest sequence seen", func() {
		o.Observe(10, "a", 1)
		o.Observe(20, "a", 3)
		o.Observe(30, "a", 2) // late: reported, last stays 3
		o.Observe(40, "a", 3) // a duplicate of 3 is not increasing either
		o.Observe(50, "a", 4) // fine
		Expect(cmp.Diff([]check.Violation{
			{Time: 30, Path: "Demo.Rx", Check: "order", Msg: "flow a: seq 2 arrived after seq 3"},
			{Time: 40, Path: "Demo.Rx", Check: "order", Msg: "flow a: seq 3 arrived after seq 3"},
		}, m.Violations())).To(BeEmpty())
	})

	It("keeps flows independent", func() {
		// Interleaved, each flow increasing on its own; b starts below a.
		o.Observe(1, "a", 5)
		o.Observe(2, "b", 1)
		o.Observe(3, "a", 6)
		o.Observe(4, "b", 2)
		Expect(m.Err()).To(Succeed())
		o.Observe(5, "b", 2)
		Expect(rules(m)).To(Equal([]string{"order: flow b: seq 2 arrived after seq 2"}))
	})

	It("formats keys", func() {
		Expect(check.Key{Flow: "nic0->nic1", Seq: 42}.String()).To(Equal("nic0->nic1#42"))
	})
})

var _ = Describe("Watchdog", func() {
	var m *check.Monitor
	BeforeEach(func() { m = check.NewMonitor() })

	It("is quiet with no units or only idle ones", func() {
		Expect(m.Watchdog(100)).To(Succeed())
		m.Register(&unit{name: "A", idle: true, state: "empty"})
		m.Register(&unit{name: "B", idle: true})
		Expect(m.Watchdog(100)).To(Succeed())
		Expect(m.Count()).To(BeZero())
	})

	It("lists every busy unit in registration order and reports a deadlock", func() {
		// Registered Z, A (idle), C, B: the busy ones are listed Z, C, B.
		m.Register(&unit{name: "Demo.Z", state: "holds 3 packets"})
		m.Register(&unit{name: "Demo.A", idle: true, state: "empty"})
		m.Register(&unit{name: "Demo.C", state: "waits for a grant"})
		m.Register(&unit{name: "Demo.B", state: "2 credits outstanding"})
		err := m.Watchdog(50 * clock.Nanosecond)
		Expect(err).To(MatchError("deadlock or unfinished work: the simulation ran out of events at 50ns with 3 busy unit(s):\n" +
			"  Demo.Z: holds 3 packets\n" +
			"  Demo.C: waits for a grant\n" +
			"  Demo.B: 2 credits outstanding"))
		var ce *check.Error
		Expect(errors.As(err, &ce)).To(BeTrue())
		Expect(cmp.Diff([]check.Violation{{
			Time: 50000, Path: "Watchdog", Check: "deadlock", Msg: "3 busy unit(s) when events ran out",
		}}, m.Violations())).To(BeEmpty())
		Expect(m.Err()).To(MatchError("1 checker violation(s):\n  50ns Watchdog [deadlock] 3 busy unit(s) when events ran out"))
	})
})
