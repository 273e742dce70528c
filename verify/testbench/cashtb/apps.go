package cashtb

import (
	"fmt"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/env"
)

// The runtime's process handle is a cashapps.Proc (design section 2).
var _ cashapps.Proc = (*cashmere.Process)(nil)

// App runs one of host/cashapps's programs (the paper's applications,
// cashmere-2l-memory-channel.txt section 3.2, Table 2) on the bench: the
// runtime's *cashmere.Process has cashapps.Proc's method set
// (docs/cashmere-design.md section 2), so the adapter only passes it on.
type App struct{ Prog cashapps.Program }

// Name implements Program.
func (a App) Name() string { return a.Prog.Name() }

// SharedBytes implements Program.
func (a App) SharedBytes() uint64 { return a.Prog.SharedBytes() }

// Locks implements Program.
func (a App) Locks() int { return a.Prog.Locks() }

// Flags implements Program.
func (a App) Flags() int { return a.Prog.Flags() }

// Run implements Program.
func (a App) Run(p *cashmere.Process) { a.Prog.Run(p) }

// BuildApp builds the bench for the cashapps program prog; an error is
// Build's, or a nil program.
func BuildApp(e *env.Env, c Config, prog cashapps.Program) (*Bench, error) {
	if prog == nil {
		return nil, fmt.Errorf("cashtb: no program")
	}
	return Build(e, c, App{Prog: prog})
}

// RunApp builds the bench for prog on e with c and runs it (Build, then
// Run): the result and the run's error (the checkers' violations
// included).
func RunApp(e *env.Env, c Config, prog cashapps.Program) (Result, error) {
	b, err := BuildApp(e, c, prog)
	if err != nil {
		return Result{}, err
	}
	return b.Run()
}
