package firmware

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fsm"
)

// The machines of a control program are rtl/fsm machines driven by the
// handler context: a transition happens at the handler's start (Ctx.Now,
// Ctx.Cycle) and its cost is charged to the handler (Ctx.Charge). The
// table, the state signal, the fw.state trace records, the fw.transition
// checker error and the row coverage are the machine's, shared with
// hardware controllers that drive an fsm.Machine themselves.

// State is a machine state; Event a machine input.
type (
	State = fsm.State
	Event = fsm.Event
)

// Transition is a row of a program machine's table: in state From, event
// On moves the machine to To (From again if To is empty), charges Cost NI
// processor cycles and runs Do (which may fire other machines: a control
// transfer between modules).
type Transition = fsm.Transition[*Ctx]

// Machine is a state machine of a control program.
type Machine = fsm.Machine[*Ctx]

// Coverage is how often one row of a machine's table fired.
type Coverage = fsm.Coverage

// machineOptions name the records and the checker rule of program
// machines.
var machineOptions = fsm.Options{TraceKind: "fw.state", Check: "fw.transition"}

// NewMachine creates a machine in state initial from its table; the table
// may not have two rows for one (state, event) pair, and every row needs a
// state and an event.
func NewMachine(e *env.Env, name string, initial State, table []Transition) (*Machine, error) {
	return fsm.NewWith(e, name, initial, table, machineOptions)
}

// Edge implements fsm.Driver: a handler's transitions happen when it
// started.
func (c *Ctx) Edge() (clock.Time, clock.Cycle) { return c.Now, c.Cycle }

// Uncovered lists the rows of machines that never fired ("machine: event
// in state"), sorted.
func Uncovered(ms ...*Machine) []string { return fsm.Uncovered(covered(ms)...) }

// MergeCoverage adds up, row by row, the counts of machines built from the
// same table (the same module on every NI of a cluster): a cluster-wide
// view, in the table's order, named after the first machine.
func MergeCoverage(ms ...*Machine) []Coverage { return fsm.MergeCoverage(covered(ms)...) }

func covered(ms []*Machine) []fsm.Covered {
	out := make([]fsm.Covered, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}
