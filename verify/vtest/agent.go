package vtest

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Agent is a clocked test driver: on every edge it runs Step with the time
// and cycle, and keeps ticking while Step returns true. Unit tests use it to
// push into and pop from the component under test on exact cycles.
type Agent struct {
	*clock.Ticking
	Step func(now clock.Time, cycle clock.Cycle) bool
}

// NewAgent creates an agent on clk; call Start (or Wake) to run it.
func NewAgent(e *env.Env, name string, clk clock.Clock, step func(now clock.Time, cycle clock.Cycle) bool) *Agent {
	a := &Agent{Step: step}
	a.Ticking = clock.NewTicking(name, e.Engine, clk, a)
	return a
}

// Tick implements clock.Ticker.
func (a *Agent) Tick(now clock.Time) bool {
	return a.Step(now, a.Clock().CycleAt(now))
}
