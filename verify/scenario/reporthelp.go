package scenario

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Micros is a duration in microseconds, the unit of the reports' latency
// figures.
func Micros(t clock.Time) float64 { return float64(t) / float64(clock.Microsecond) }

// PctError is a model figure's error relative to the paper's, in percent.
func PctError(model, paper float64) float64 { return 100 * (model - paper) / paper }

// Versus formats a model figure with its error against the paper's, as
// in "5.31 µs (+2.1%)".
func Versus(model, paper float64, unit string) string {
	return fmt.Sprintf("%.2f %s (%+.1f%%)", model, unit, PctError(model, paper))
}

// SideEnv is the env of a measurement beside the captured one: fresh,
// with the run's seed and no waveform or trace.
func SideEnv(seed uint64) *env.Env { return env.New(env.Options{Seed: seed}) }

// Phases counts a report runner's phases on its env's progress line.
type Phases struct {
	e     *env.Env
	n, at int
}

// NewPhases is a counter of n phases shown on e.
func NewPhases(e *env.Env, n int) *Phases { return &Phases{e: e, n: n} }

// Next starts the next phase, named what.
func (p *Phases) Next(what string) {
	p.e.Phase(p.at, p.n, what)
	p.at++
}

// Label wraps err with the name of the measurement that failed; nil stays
// nil.
func Label(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Typed wraps a run function over a scenario's own parameter type P as a
// Scenario: Defaults returns a fresh P, Run receives the P the command
// line configured.
func Typed[P Params](name, summary string, defaults func() P, run func(*env.Env, P) (*Report, error)) *Scenario {
	return &Scenario{Name: name, Summary: summary,
		Defaults: func() Params { return defaults() },
		Run:      func(e *env.Env, p Params) (*Report, error) { return run(e, p.(P)) }}
}
