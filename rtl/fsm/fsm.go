// Package fsm is the explicit state machine that control programs and
// hardware controllers share: a table of transitions (state, event) ->
// state with a cost in cycles and an action, whose current state is a
// waveform signal, whose every transition is a trace record, whose
// disallowed transitions are checker errors (never silent no-ops), and
// whose rows are counted for coverage.
//
// The LCI control program is written as such machines, one per module
// (figure 4 of lci-myrinet-cluster-protocols.txt; package firmware runs
// them on the LANai processor). A hardware block with a sequencer of its
// own (a UDMA engine, an adapter's packetiser) uses the same machine with
// a Driver of its own: whatever fires a transition says when it happens
// and takes the transition's cost, in its own clock's cycles.
package fsm

import (
	"fmt"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// State is a machine state; Event a machine input.
type (
	State string
	Event string
)

// Driver is what fires a machine's transitions: the NI processor's
// handler context for a control program, the clocked component itself for
// hardware.
type Driver interface {
	// Edge is when the transition happens: the time, and the driver's
	// clock cycle for the trace record.
	Edge() (clock.Time, clock.Cycle)
	// Charge takes a transition's cost, in the driver's cycles.
	Charge(cycles int)
}

// Transition is a row of a machine's table: in state From, event On moves
// the machine to To (From again if To is empty), charges Cost cycles to
// the driver and runs Do (which may fire other machines).
type Transition[D Driver] struct {
	From State
	On   Event
	To   State
	Cost int
	Do   func(d D, arg any)
}

// Options name what a machine reports; the zero value means the defaults.
type Options struct {
	// TraceKind is the kind of the record of every transition (default
	// "fsm.state").
	TraceKind string
	// Check is the rule a disallowed transition breaks (default
	// "fsm.transition").
	Check string
}

// Machine is a state machine driven by a D.
type Machine[D Driver] struct {
	env   *env.Env
	name  string
	kind  string
	check string
	state State
	rows  []Transition[D]
	index map[key]int // lookup only, never iterated
	fired []uint64
	sig   *waves.Signal
}

type key struct {
	s State
	e Event
}

// New creates a machine in state initial from its table, with the default
// Options. The table may not have two rows for one (state, event) pair,
// every row needs a state and an event, and no cost may be negative.
func New[D Driver](e *env.Env, name string, initial State, table []Transition[D]) (*Machine[D], error) {
	return NewWith(e, name, initial, table, Options{})
}

// NewWith is New with Options. The machine's state is the waveform signal
// name.state, starting at initial.
func NewWith[D Driver](e *env.Env, name string, initial State, table []Transition[D], o Options) (*Machine[D], error) {
	if e == nil {
		return nil, fmt.Errorf("%s: fsm: no env", name)
	}
	if initial == "" {
		return nil, fmt.Errorf("%s: fsm: no initial state", name)
	}
	m := &Machine[D]{env: e, name: name, kind: o.TraceKind, check: o.Check, state: initial, rows: table,
		index: make(map[key]int, len(table)), fired: make([]uint64, len(table))}
	if m.kind == "" {
		m.kind = "fsm.state"
	}
	if m.check == "" {
		m.check = "fsm.transition"
	}
	for i, t := range table {
		if t.From == "" || t.On == "" {
			return nil, fmt.Errorf("%s: row %d has no state or event", name, i)
		}
		if t.Cost < 0 {
			return nil, fmt.Errorf("%s: row %d (%s on %s) has a negative cost %d", name, i, t.From, t.On, t.Cost)
		}
		k := key{t.From, t.On}
		if j, dup := m.index[k]; dup {
			return nil, fmt.Errorf("%s: rows %d and %d both handle %s in state %s", name, j, i, t.On, t.From)
		}
		m.index[k] = i
	}
	m.sig = e.Waves.String(name, "state")
	m.sig.SetString(0, string(initial))
	return m, nil
}

// Name returns the machine's name.
func (m *Machine[D]) Name() string { return m.name }

// State returns the current state.
func (m *Machine[D]) State() State { return m.state }

// Can reports whether the machine has a transition for ev in its state.
func (m *Machine[D]) Can(ev Event) bool {
	_, ok := m.index[key{m.state, ev}]
	return ok
}

// Fire runs the transition for ev at d's edge: it counts the row, charges
// its cost to d, changes the state (signal, and progress for the deadlock
// watchdog), emits the trace record (from, on, to, cost) and runs the
// row's action. An event the state has no row for is reported as a
// checker error and changes nothing; Fire returns whether the row
// existed.
func (m *Machine[D]) Fire(d D, ev Event, arg any) bool {
	now, cycle := d.Edge()
	i, ok := m.index[key{m.state, ev}]
	if !ok {
		m.env.Report(now, m.name, m.check, "no transition on %s in state %s", ev, m.state)
		return false
	}
	t := &m.rows[i]
	m.fired[i]++
	d.Charge(t.Cost)
	from := m.state
	if t.To != "" && t.To != m.state {
		m.state = t.To
		m.sig.SetString(now, string(t.To))
		m.env.Monitor.Progress(now)
	}
	if m.env.Trace.Enabled() {
		m.env.Trace.Emit(now, cycle, m.name, m.kind, trace.Str("from", string(from)),
			trace.Str("on", string(ev)), trace.Str("to", string(m.state)), trace.Int("cost", int64(t.Cost)))
	}
	if t.Do != nil {
		t.Do(d, arg)
	}
	return true
}

// Coverage is how often one row of a machine's table fired.
type Coverage struct {
	Machine string
	From    State
	On      Event
	Count   uint64
}

// Coverage returns the table's rows with their counts, in table order.
func (m *Machine[D]) Coverage() []Coverage {
	out := make([]Coverage, len(m.rows))
	for i, t := range m.rows {
		out[i] = Coverage{m.name, t.From, t.On, m.fired[i]}
	}
	return out
}

// Covered is any machine, whatever drives it: what coverage needs.
type Covered interface {
	Coverage() []Coverage
}

// Uncovered lists the rows of machines that never fired ("machine: event
// in state"), sorted.
func Uncovered(ms ...Covered) []string {
	var out []string
	for _, m := range ms {
		for _, c := range m.Coverage() {
			if c.Count == 0 {
				out = append(out, fmt.Sprintf("%s: %s in %s", c.Machine, c.On, c.From))
			}
		}
	}
	slices.Sort(out)
	return out
}

// MergeCoverage adds up, row by row, the counts of machines built from the
// same table (the same module on every NI of a cluster, the same engine
// on every board): a system-wide view, in the table's order, named after
// the first machine.
func MergeCoverage(ms ...Covered) []Coverage {
	if len(ms) == 0 {
		return nil
	}
	out := ms[0].Coverage()
	for _, m := range ms[1:] {
		for i, c := range m.Coverage() {
			if i < len(out) && c.From == out[i].From && c.On == out[i].On {
				out[i].Count += c.Count
			}
		}
	}
	return out
}
