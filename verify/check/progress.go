package check

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
)

// Progress records forward progress at t: a delivery, a retirement, a
// state change of a firmware machine, a DMA completion. The stall watchdog
// (rtl/env) stops a run in which work is outstanding and nothing has made
// progress for its limit. Calling it costs one comparison.
func (m *Monitor) Progress(t clock.Time) {
	if t > m.lastProgress {
		m.lastProgress = t
	}
}

// LastProgress returns the time of the last recorded progress (0 before
// any).
func (m *Monitor) LastProgress() clock.Time { return m.lastProgress }

// Busy returns the registered units that hold unfinished work, in
// registration order.
func (m *Monitor) Busy() []Unit {
	var busy []Unit
	for _, u := range m.units {
		if !u.Idle() {
			busy = append(busy, u)
		}
	}
	return busy
}

// Outstanding is implemented by units that own transactions (conservation
// checkers, scoreboards): the oldest transaction not yet resolved, for the
// stuck-state report.
type Outstanding interface {
	// Oldest describes the oldest unresolved transaction and the time it
	// entered the system; ok is false when none is outstanding.
	Oldest() (desc string, since clock.Time, ok bool)
}

// StuckReport describes the stuck state of the model at now: every busy
// unit with its State (FIFOs with their heads, components, links with
// their credits, firmware machines), and the oldest outstanding
// transaction over all checkers. why says what stopped the run ("no
// progress for 200µs", "drain limit hit"). It records one "stuck"
// violation and returns the report as an *Error; it returns nil when no
// unit is busy.
func (m *Monitor) StuckReport(now clock.Time, why string) error {
	return m.stuck(now, "stuck", fmt.Sprintf("stuck: %s at %v (last progress at %v) with", why, now, m.lastProgress), "after "+why)
}

// Snapshot returns the stuck-state report of StuckReport without recording
// a violation, for runs stopped on purpose with work outstanding (a
// saturated network at its drain limit); "" when no unit is busy.
func (m *Monitor) Snapshot(now clock.Time, why string) string {
	busy := m.Busy()
	if len(busy) == 0 {
		return ""
	}
	return m.describe(now, fmt.Sprintf("%s at %v (last progress at %v) with", why, now, m.lastProgress), busy)
}

// stuck writes the report: head, the busy units, the oldest transaction;
// the violation's message is the busy count and tail.
func (m *Monitor) stuck(now clock.Time, rule, head, tail string) error {
	busy := m.Busy()
	if len(busy) == 0 {
		return nil
	}
	text := m.describe(now, head, busy)
	m.Report(now, "Watchdog", rule, "%d busy unit(s) %s", len(busy), tail)
	return &Error{Text: text}
}

func (m *Monitor) describe(now clock.Time, head string, busy []Unit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d busy unit(s):", head, len(busy))
	// The oldest outstanding transaction first: with hundreds of busy
	// units it is where to start reading.
	var oldest string
	var oldestAt clock.Time
	found := false
	for _, u := range busy {
		if o, ok := u.(Outstanding); ok {
			if d, t, ok := o.Oldest(); ok && (!found || t < oldestAt) {
				oldest, oldestAt, found = d, t, true
			}
		}
	}
	if found {
		fmt.Fprintf(&b, "\n  oldest outstanding transaction: %s, since %v (%v ago)", oldest, oldestAt, now-oldestAt)
	}
	for _, u := range busy {
		fmt.Fprintf(&b, "\n  %s: %s", u.Name(), u.State())
	}
	return b.String()
}
