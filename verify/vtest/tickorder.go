package vtest

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// The components of one clock tick in the order they were created
// (clock.Domain), so a result that must not depend on tick order is
// checked by building the same system in different creation orders, and
// an action that must happen "in cycle c" whatever ticks before or after
// it is run by an agent of its own. These helpers are that harness, shared
// by the network suites (fabric terminals, ATM and Memory Channel
// endpoints) instead of a copy in each.

// AtCycle creates and starts an agent named name on clk that calls fn
// once, at the first edge at or after cycle c (an agent started at cycle 0
// sleeps until c). Stoppers use it: a stopper that ends traffic generation
// in the last cycle of a measurement window acts in that cycle whether the
// endpoints tick before or after it, so the count of measured packets does
// not depend on tick order.
func AtCycle(e *env.Env, name string, clk clock.Clock, c clock.Cycle, fn func(now clock.Time)) *Agent {
	done := false
	var a *Agent
	a = NewAgent(e, name, clk, func(now clock.Time, cy clock.Cycle) bool {
		switch {
		case done:
		case cy < c:
			a.WakeAt(clk.TimeOf(c))
		default:
			done = true
			fn(now)
		}
		return false
	})
	a.Start()
	return a
}

// CreationOrders returns the orders in which to create n components of
// one clock so that each of the two ends of the tick order is exercised:
// 0..n-1 and n-1..0 (one order when n < 2).
func CreationOrders(n int) [][]int {
	up := make([]int, n)
	down := make([]int, n)
	for i := range n {
		up[i], down[i] = i, n-1-i
	}
	if n < 2 {
		return [][]int{up}
	}
	return [][]int{up, down}
}

// SameInEveryOrder runs run once per creation order of n components
// (CreationOrders) and returns the go-cmp diff between the result of the
// first order and the first result that differs, naming the order; ""
// when every order gives the same result. run builds its components in the
// order it is given (order[k] is the k-th component to create), runs the
// simulation and returns what must not depend on tick order.
func SameInEveryOrder[T any](n int, run func(order []int) T, opts ...cmp.Option) string {
	orders := CreationOrders(n)
	want := run(orders[0])
	for _, o := range orders[1:] {
		if d := cmp.Diff(want, run(o), opts...); d != "" {
			return fmt.Sprintf("creation order %v differs from %v (-%v +%v):\n%s", o, orders[0], orders[0], o, d)
		}
	}
	return ""
}
