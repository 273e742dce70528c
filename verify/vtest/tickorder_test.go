package vtest_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Tick-order harness", func() {
	clk := clock.MHz(100)

	It("lists both ends of the tick order", func() {
		Expect(vtest.CreationOrders(3)).To(Equal([][]int{{0, 1, 2}, {2, 1, 0}}))
		Expect(vtest.CreationOrders(1)).To(Equal([][]int{{0}}))
	})

	// run creates a counter agent and an AtCycle(4) stopper in the given
	// order; the counter counts the edges 0, 1, 2, ... until it sees the
	// stop flag. Counter first: at cycle 4 it counts (5 edges: 0..4), then
	// the stopper acts. Stopper first: it acts at 4, and the counter stops
	// before counting 4 (4 edges). The stopper itself acts at cycle 4 in
	// both orders, once.
	run := func(order []int) [2]int {
		e := env.New(env.Options{})
		stop, count, acted, at := false, 0, 0, clock.Cycle(0)
		for _, k := range order {
			if k == 0 {
				vtest.NewAgent(e, "Counter", clk, func(_ clock.Time, c clock.Cycle) bool {
					if stop {
						return false
					}
					count++
					return true
				}).Start()
			} else {
				vtest.AtCycle(e, "Stopper", clk, 4, func(now clock.Time) {
					stop, at = true, clk.CycleAt(now)
					acted++
				})
			}
		}
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(at).To(Equal(clock.Cycle(4)))
		Expect(acted).To(Equal(1))
		return [2]int{count, acted}
	}

	It("runs an AtCycle action once, in its cycle, whichever agent ticks first", func() {
		Expect(run([]int{0, 1})).To(Equal([2]int{5, 1}))
		Expect(run([]int{1, 0})).To(Equal([2]int{4, 1}))
	})

	It("reports a result that depends on the creation order, naming the order", func() {
		d := vtest.SameInEveryOrder(2, run)
		Expect(d).To(ContainSubstring("creation order [1 0] differs from [0 1]"))
		Expect(vtest.SameInEveryOrder(2, func(order []int) string {
			r := run(order)
			return fmt.Sprint(r[1]) // the stopper acts once in both orders
		})).To(BeEmpty())
	})
})
