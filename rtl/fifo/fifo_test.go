package fifo_test

import (
	"fmt"
	"unsafe"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// event is one push or pop seen by the test drivers.
type event struct {
	Cycle clock.Cycle
	Op    string
	V     int
}

var _ = Describe("FIFO", func() {
	var e *env.Env
	clk := clock.MHz(100) // 10 ns cycles

	BeforeEach(func() { e = vtest.NewEnv(vtest.Options{Clock: clk}) })

	build := func(b fifo.Builder[int]) *fifo.FIFO[int] {
		f, err := b.WithEnv(e).Build("Test.Fifo")
		Expect(err).NotTo(HaveOccurred())
		return f
	}

	It("copies an entry pushed by pointer and keeps no reference to it", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(4))
		// 7 is pushed at cycle 0 (visible from cycle 1), 8 at cycle 1 but
		// visible only after the edge of cycle 3: at cycle 2 only the
		// first is visible, at cycle 4 both.
		v := 7
		Expect(f.PushPtr(0, &v)).To(BeTrue())
		v = 8
		Expect(f.PushAtPtr(clk.TimeOf(1), clk.TimeOf(3), &v)).To(BeTrue())
		v = 9 // changing the caller's variable changes neither entry
		got, ok := f.PeekAt(clk.TimeOf(2), 0)
		Expect(ok).To(BeTrue())
		Expect(got).To(Equal(7))
		_, ok = f.PeekAt(clk.TimeOf(2), 1)
		Expect(ok).To(BeFalse())
		got, ok = f.PeekAt(clk.TimeOf(4), 1)
		Expect(ok).To(BeTrue())
		Expect(got).To(Equal(8))
	})

	It("makes a push visible at the consumer's next edge, whatever the tick order", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(4))
		var log []event
		// The producer pushes 0..5 on cycles 0..5 while it can; the consumer
		// pops one per cycle. Worked by hand: the value pushed at cycle c is
		// visible at cycle c+1 and popped then, so the FIFO never holds more
		// than one entry and every value takes exactly one cycle.
		next := 0
		prod := vtest.NewAgent(e, "Prod", clk, func(now clock.Time, c clock.Cycle) bool {
			if next < 6 && f.CanPush(now) {
				f.Push(now, next)
				log = append(log, event{c, "push", next})
				next++
			}
			return next < 6
		})
		cons := vtest.NewAgent(e, "Cons", clk, func(now clock.Time, c clock.Cycle) bool {
			if v, ok := f.Pop(now); ok {
				log = append(log, event{c, "pop", v})
				return true
			}
			return false
		})
		f.Connect(prod, cons)
		prod.Start()
		cons.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		var pops []event
		for _, ev := range log {
			if ev.Op == "pop" {
				pops = append(pops, ev)
			}
		}
		Expect(pops).To(Equal([]event{{1, "pop", 0}, {2, "pop", 1}, {3, "pop", 2}, {4, "pop", 3}, {5, "pop", 4}, {6, "pop", 5}}))
		Expect(f.Stats().MaxOccupancy).To(Equal(1))
	})

	It("fills, back-pressures the producer and frees space one edge after a pop", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(2))
		var log []event
		// Producer pushes every cycle it can, 5 values. Consumer starts popping
		// at cycle 4, one per cycle.
		// c0 push0 (occ 1), c1 push1 (occ 2, full), c2 c3 blocked,
		// c4 pop0 (the slot frees after c4), c5 push2 + pop1, c6 push3 + pop2,
		// c7 push4 + pop3, c8 pop4.
		next := 0
		prod := vtest.NewAgent(e, "Prod", clk, func(now clock.Time, c clock.Cycle) bool {
			if next < 5 && f.CanPush(now) {
				Expect(f.Push(now, next)).To(BeTrue())
				log = append(log, event{c, "push", next})
				next++
			}
			return next < 5
		})
		cons := vtest.NewAgent(e, "Cons", clk, func(now clock.Time, c clock.Cycle) bool {
			if c < 4 {
				return true
			}
			if v, ok := f.Pop(now); ok {
				log = append(log, event{c, "pop", v})
			}
			return f.Len() > 0 || next < 5
		})
		f.Connect(prod, cons)
		prod.Start()
		cons.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(log).To(ConsistOf(
			event{0, "push", 0}, event{1, "push", 1},
			event{4, "pop", 0},
			event{5, "push", 2}, event{5, "pop", 1},
			event{6, "push", 3}, event{6, "pop", 2},
			event{7, "push", 4}, event{7, "pop", 3},
			event{8, "pop", 4},
		))
	})

	It("crosses clock domains: visible at the first consumer edge after the push", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(4))
		slow := clock.MHz(25) // 40 ns
		var pops []clock.Time
		prod := vtest.NewAgent(e, "Prod", clk, func(now clock.Time, c clock.Cycle) bool {
			if c == 3 { // pushed at 30 ns
				f.Push(now, 7)
			}
			return c < 3
		})
		cons := vtest.NewAgent(e, "Cons", slow, func(now clock.Time, c clock.Cycle) bool {
			if _, ok := f.Pop(now); ok {
				pops = append(pops, now)
			}
			return false
		})
		f.Connect(prod, cons)
		prod.Start()
		cons.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(pops).To(Equal([]clock.Time{40_000})) // the 25 MHz edge after 30 ns
	})

	It("limits enqueues per cycle and reports the violation", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(8).WithEnqPerCycle(2))
		a := vtest.NewAgent(e, "Prod", clk, func(now clock.Time, c clock.Cycle) bool {
			Expect(f.CanPush(now)).To(BeTrue())
			f.Push(now, 1)
			Expect(f.CanPush(now)).To(BeTrue())
			f.Push(now, 2)
			Expect(f.CanPush(now)).To(BeFalse())
			Expect(f.Push(now, 3)).To(BeFalse())
			return false
		})
		a.Start()
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("fifo.rate")))
		Expect(f.Len()).To(Equal(2))
	})

	It("reports overflow as a checker violation and leftover entries to the watchdog", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(1))
		a := vtest.NewAgent(e, "Prod", clk, func(now clock.Time, c clock.Cycle) bool {
			f.Push(now, int(c))
			return c < 1
		})
		a.Start()
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("fifo.overflow")))
		Expect(err).To(MatchError(ContainSubstring("Test.Fifo: 1/1 entries")))
	})

	It("drops and counts when configured to", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(2).WithOverflow(fifo.Drop))
		a := vtest.NewAgent(e, "Prod", clk, func(now clock.Time, c clock.Cycle) bool {
			f.Push(now, int(c))
			return c < 4
		})
		cons := vtest.NewAgent(e, "Cons", clk, func(now clock.Time, c clock.Cycle) bool {
			if c < 10 {
				return true
			}
			_, ok := f.Pop(now)
			return ok
		})
		a.Start()
		cons.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Stats()).To(Equal(fifo.Stats{Pushes: 2, Pops: 2, Drops: 3, MaxOccupancy: 2}))
		Expect(e.Waves.Lookup("test.fifo.drops").Value()).To(Equal(uint64(3)))
	})

	It("raises the high-water signal when occupancy exceeds the mark", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(8).WithHighWater(2))
		var crossings []event
		f.OnHighWater(func(now clock.Time, above bool) {
			v := 0
			if above {
				v = 1
			}
			crossings = append(crossings, event{clk.CycleAt(now), "hwm", v})
		})
		// Push on cycles 0..3 (occupancy 1..4): it exceeds 2 at cycle 2.
		// Pop from cycle 5 on: occupancy 3 at c5, 2 at c6 (falls).
		a := vtest.NewAgent(e, "Drv", clk, func(now clock.Time, c clock.Cycle) bool {
			if c <= 3 {
				f.Push(now, int(c))
			}
			if c >= 5 {
				f.Pop(now)
			}
			return f.Len() > 0 || c < 5
		})
		a.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(crossings).To(Equal([]event{{2, "hwm", 1}, {6, "hwm", 0}}))
	})

	It("takes a high-water mark set at run time on a FIFO built without one", func() {
		f := build(fifo.MakeBuilder[int]().WithDepth(8))
		var crossings []event
		f.OnHighWater(func(now clock.Time, above bool) {
			crossings = append(crossings, event{clk.CycleAt(now), "hwm", map[bool]int{false: 0, true: 1}[above]})
		})
		// Push on cycles 0..2 (occupancy 3 from c2); no mark: no crossing.
		// The mark 1 set at c4 is exceeded at once (3 > 1); pops at c5 and
		// c6 leave 2 and 1: it falls at c6.
		a := vtest.NewAgent(e, "Drv", clk, func(now clock.Time, c clock.Cycle) bool {
			switch {
			case c <= 2:
				f.Push(now, int(c))
			case c == 4:
				Expect(f.AboveHighWater()).To(BeFalse())
				f.SetHighWater(now, 1)
			case c >= 5:
				f.Pop(now)
			}
			return f.Len() > 0 || c < 5
		})
		a.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(crossings).To(Equal([]event{{4, "hwm", 1}, {6, "hwm", 0}}))
	})

	It("stays small: what few FIFOs use sits behind one pointer", func() {
		// issue 16: a 32x32 mesh holds 48,128 receive buffers. The FIFO is
		// 224 bytes on 64-bit (a malloc size class): name 16, env 8, buf 24,
		// head/n/depth/width/enq/deq 48, overflow+producerWaiting 8,
		// lastEnq/lastDeq/enqAt/deqAt 32, onPop 8, producer/consumer 32,
		// pushes/pops 16, maxOcc/lastChange 16, sig 8, cold 8.
		Expect(int(unsafe.Sizeof(fifo.FIFO[uint64]{}))).To(BeNumerically("<=", 224))
	})

	It("asks a namer for its name only when it needs it", func() {
		n := &countingNamer{}
		f, err := fifo.MakeBuilder[int]().WithEnv(e).WithDepth(1).BuildNamed(n, 3)
		Expect(err).NotTo(HaveOccurred())
		asked := n.asked // the test env may have a waves registry
		Expect(f.Name()).To(Equal("Bulk[3]"))
		Expect(n.asked).To(Equal(asked + 1))
		_, err = fifo.MakeBuilder[int]().WithEnv(e).WithDepth(0).BuildNamed(n, 4)
		Expect(err).To(MatchError("Bulk[4]: fifo depth 0 must be at least 1"))
		_, err = fifo.MakeBuilder[int]().WithEnv(e).BuildNamed(n, -1)
		Expect(err).To(MatchError(ContainSubstring("index -1")))
	})

	DescribeTable("rejects impossible parameters",
		func(b fifo.Builder[int], msg string) {
			_, err := b.WithEnv(e).Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("zero depth", fifo.MakeBuilder[int]().WithDepth(0), "depth 0"),
		Entry("negative depth", fifo.MakeBuilder[int]().WithDepth(-3), "depth -3"),
		Entry("zero width", fifo.MakeBuilder[int]().WithWidth(0), "width 0"),
		Entry("zero rate", fifo.MakeBuilder[int]().WithDeqPerCycle(0), "per cycle"),
		Entry("mark at depth", fifo.MakeBuilder[int]().WithDepth(4).WithHighWater(4), "high-water"),
	)
})

var _ = Describe("FIFO tracing", func() {
	It("records each step's pushes, pops and settled occupancy when asked", func() {
		clk := clock.MHz(100)
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		f, err := fifo.MakeBuilder[int]().WithEnv(e).WithDepth(2).WithTrace(clk).Build("T.Fifo")
		Expect(err).NotTo(HaveOccurred())
		vtest.NewAgent(e, "D", clk, func(now clock.Time, c clock.Cycle) bool {
			if c <= 1 {
				f.Push(now, int(c))
			}
			if c >= 1 {
				f.Pop(now)
			}
			return c < 2
		}).Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		var lines []string
		for _, r := range e.Trace.Records() {
			lines = append(lines, r.Format())
		}
		Expect(lines).To(Equal([]string{
			"0 0 T.Fifo fifo.step pushes=1 pops=0 occ=1",
			"10000 1 T.Fifo fifo.step pushes=1 pops=1 occ=1",
			"20000 2 T.Fifo fifo.step pushes=0 pops=1 occ=0",
		}))
	})
})

// countingNamer names FIFOs "Bulk[i]" and counts the requests.
type countingNamer struct{ asked int }

func (n *countingNamer) FIFOName(i int) string {
	n.asked++
	return fmt.Sprintf("Bulk[%d]", i)
}
