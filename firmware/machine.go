package firmware

import (
	"fmt"
	"slices"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// State is a machine state; Event a machine input.
type (
	State string
	Event string
)

// Transition is a row of a machine's table: in state From, event On moves
// the machine to To (From again if To is empty), charges Cost NI processor
// cycles and runs Do (which may fire other machines: a control transfer
// between modules).
type Transition struct {
	From State
	On   Event
	To   State
	Cost int
	Do   func(c *Ctx, arg any)
}

// Machine is a state machine of a control program.
type Machine struct {
	env   *env.Env
	name  string
	state State
	rows  []Transition
	index map[key]int
	fired []uint64
	sig   *waves.Signal
}

type key struct {
	s State
	e Event
}

// NewMachine creates a machine in state initial from its table; the table
// may not have two rows for one (state, event) pair, and every row needs a
// state and an event.
func NewMachine(e *env.Env, name string, initial State, table []Transition) (*Machine, error) {
	m := &Machine{env: e, name: name, state: initial, rows: table, index: make(map[key]int, len(table)), fired: make([]uint64, len(table))}
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
func (m *Machine) Name() string { return m.name }

// State returns the current state.
func (m *Machine) State() State { return m.state }

// Can reports whether the machine has a transition for ev in its state.
func (m *Machine) Can(ev Event) bool {
	_, ok := m.index[key{m.state, ev}]
	return ok
}

// fire runs the transition for ev; an event the state has no row for is
// reported as a checker error and changes nothing.
func (m *Machine) fire(c *Ctx, ev Event, arg any) bool {
	i, ok := m.index[key{m.state, ev}]
	if !ok {
		m.env.Report(c.Now, m.name, "fw.transition", "no transition on %s in state %s", ev, m.state)
		return false
	}
	t := &m.rows[i]
	m.fired[i]++
	c.cycles += t.Cost
	from := m.state
	if t.To != "" && t.To != m.state {
		m.state = t.To
		m.sig.SetString(c.Now, string(t.To))
		m.env.Monitor.Progress(c.Now)
	}
	if m.env.Trace.Enabled() {
		m.env.Trace.Emit(c.Now, c.Cycle, m.name, "fw.state", trace.Str("from", string(from)),
			trace.Str("on", string(ev)), trace.Str("to", string(m.state)), trace.Int("cost", int64(t.Cost)))
	}
	if t.Do != nil {
		t.Do(c, arg)
	}
	return true
}

// Coverage is how often each row of a machine's table fired.
type Coverage struct {
	Machine string
	From    State
	On      Event
	Count   uint64
}

// Coverage returns the table's rows with their counts, in table order.
func (m *Machine) Coverage() []Coverage {
	out := make([]Coverage, len(m.rows))
	for i, t := range m.rows {
		out[i] = Coverage{m.name, t.From, t.On, m.fired[i]}
	}
	return out
}

// Uncovered lists the rows of machines that never fired ("machine: event
// in state").
func Uncovered(ms ...*Machine) []string {
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
// same table (the same module on every NI of a cluster): a cluster-wide
// view, in the table's order, named after the first machine.
func MergeCoverage(ms ...*Machine) []Coverage {
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
