package fifo_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The FIFO's overflow and rate checks against FIFOs whose flow-control
// outputs lie (fifo.nofull, fifo.norate) to a producer that trusts them: it
// offers up to two entries per cycle, each only if CanPush says yes. The
// FIFO takes one push per cycle; its consumer pops one per cycle from
// cycle 6 on, so the FIFO fills first.
var _ = Describe("FIFO checks against lying flow control", func() {
	clk := clock.MHz(100)

	run := func(depth int, mut map[string]int) ([]int, []check.Violation) {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Mutations: mut})
		f, err := fifo.MakeBuilder[int]().WithEnv(e).WithDepth(depth).Build("Test.Fifo")
		Expect(err).NotTo(HaveOccurred())
		next := 0
		prod := vtest.NewAgent(e, "Prod", clk, func(now clock.Time, c clock.Cycle) bool {
			for range 2 {
				if next == 12 || !f.CanPush(now) {
					break
				}
				if f.Push(now, next) {
					next++
				}
			}
			return next < 12
		})
		var got []int
		cons := vtest.NewAgent(e, "Cons", clk, func(now clock.Time, c clock.Cycle) bool {
			if c < 6 {
				return true
			}
			if v, ok := f.Pop(now); ok {
				got = append(got, v)
			}
			return next < 12 || f.Len() > 0
		})
		f.Connect(prod, cons)
		prod.Start()
		cons.Start()
		_, _ = e.Run()
		return got, e.Monitor.Violations()
	}
	seq := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}

	It("is clean when the FIFO tells the truth", func() {
		got, v := run(2, nil)
		Expect(v).To(BeEmpty())
		Expect(got).To(Equal(seq))
	})

	It("fifo.nofull: a push into a full FIFO is an overflow", func() {
		// Full from cycle 2 (entries 0 and 1); every refusal is a yes, so
		// the producer pushes into the full FIFO each cycle until the
		// consumer starts (cycles 2..6) and whenever it is full again.
		got, v := run(2, map[string]int{"fifo.nofull": 1})
		Expect(got).To(Equal(seq))
		Expect(len(v)).To(BeNumerically(">=", 5))
		Expect(v[0]).To(Equal(check.Violation{Time: clk.TimeOf(2), Path: "Test.Fifo", Check: "fifo.overflow",
			Msg: "push into a full FIFO (2 entries)"}))
		for _, x := range v {
			Expect(x.Check).To(Equal("fifo.overflow"))
		}
	})

	It("fifo.norate: a second push in one cycle breaks the rate", func() {
		// Deep enough never to fill: every cycle's second offer is refused
		// by the rate, and every second refusal is a yes.
		got, v := run(16, map[string]int{"fifo.norate": 2})
		Expect(got).To(Equal(seq))
		Expect(v).NotTo(BeEmpty())
		Expect(v[0]).To(Equal(check.Violation{Time: clk.TimeOf(1), Path: "Test.Fifo", Check: "fifo.rate",
			Msg: "more than 1 pushes in one cycle"}))
		for _, x := range v {
			Expect(x.Check).To(Equal("fifo.rate"))
		}
	})
})
