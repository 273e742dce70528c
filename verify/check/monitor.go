// Package check holds the checkers that are always on in nisim runs: the
// Monitor that collects violations, conservation (nothing lost or
// duplicated), per-flow ordering, and the completion/deadlock watchdog.
// FIFO overflow and credit conservation are checked by rtl/fifo and
// rtl/link themselves and reported to the Monitor.
package check

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
)

// Violation is one broken rule.
type Violation struct {
	Time  clock.Time
	Path  string // component (or checker) that saw it
	Check string // short rule name: "fifo.overflow", "lost", "order", ...
	Msg   string
}

func (v Violation) String() string {
	return fmt.Sprintf("%v %s [%s] %s", v.Time, v.Path, v.Check, v.Msg)
}

// Unit is a component or buffer the watchdog can question once the engine
// has run out of events.
type Unit interface {
	// Name is the hierarchical name.
	Name() string
	// Idle reports that the unit holds no unfinished work.
	Idle() bool
	// State describes what the unit holds or waits for, for the report.
	State() string
}

// MaxKept bounds the violations kept in full; later ones are only counted.
const MaxKept = 1000

// Monitor collects every violation of one simulation and knows every unit
// the watchdog must question.
type Monitor struct {
	kept  []Violation
	total int
	units []Unit

	byPath map[string]int // violations per reporting path, for verdicts

	lastProgress clock.Time
}

// NewMonitor returns an empty monitor.
func NewMonitor() *Monitor { return &Monitor{} }

// Report records a violation.
func (m *Monitor) Report(t clock.Time, path, check, format string, args ...any) {
	m.total++
	if m.byPath == nil {
		m.byPath = map[string]int{}
	}
	m.byPath[path]++
	if len(m.kept) < MaxKept {
		m.kept = append(m.kept, Violation{Time: t, Path: path, Check: check, Msg: fmt.Sprintf(format, args...)})
	}
}

// Violations returns the kept violations in the order they were reported.
func (m *Monitor) Violations() []Violation { return m.kept }

// Count returns the number of violations, including those not kept.
func (m *Monitor) Count() int { return m.total }

// CountPath returns how many violations were reported under the given
// paths (checker or component names), kept or not: a report's verdict on
// one checker is computed from it.
func (m *Monitor) CountPath(paths ...string) int {
	n := 0
	for _, p := range paths {
		n += m.byPath[p]
	}
	return n
}

// Register adds a unit for the watchdog. Units are questioned in
// registration order.
func (m *Monitor) Register(u Unit) { m.units = append(m.units, u) }

// Units returns the registered units.
func (m *Monitor) Units() []Unit { return m.units }

// Err returns nil when nothing was violated, else an error listing every
// kept violation.
func (m *Monitor) Err() error {
	if m.total == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d checker violation(s):", m.total)
	for _, v := range m.kept {
		b.WriteString("\n  ")
		b.WriteString(v.String())
	}
	if m.total > len(m.kept) {
		fmt.Fprintf(&b, "\n  ... and %d more", m.total-len(m.kept))
	}
	return &Error{Text: b.String(), Violations: m.kept}
}

// Error is the error Monitor.Err and Watchdog return.
type Error struct {
	Text       string
	Violations []Violation
}

func (e *Error) Error() string { return e.Text }

// Watchdog questions every unit after the engine ran out of events at now.
// Akita's Run returns quietly when a model deadlocks, so every run ends with
// this check: a unit that still holds work means the model stopped with work
// undone. The error lists the state of every busy unit and the oldest
// outstanding transaction (see StuckReport).
func (m *Monitor) Watchdog(now clock.Time) error {
	return m.stuck(now, "deadlock", fmt.Sprintf("deadlock or unfinished work: the simulation ran out of events at %v with", now), "when events ran out")
}
