// Package scoreboard compares what a device under test produces with what
// an untimed reference model says it should produce. The reference model
// calls Expect for every item it predicts, the test's output monitor calls
// Actual for every item the device emits, and after the run Report lists
// every difference: mismatching items with a field-level diff (go-cmp),
// expected items never produced, and produced items nobody expected.
//
// In-order mode suits a single ordered stream (a FIFO, one flow of a
// link); out-of-order mode matches items by a key identifying the
// transaction ("src=2 seq=17"), for outputs that may be reordered (several
// sources sharing a network).
//
// Reports are deterministic: mismatches and unexpected items in order of
// arrival, missing items in the order they were expected.
//
// A scoreboard holds only what is pending: an expected item is dropped once
// an actual item has been paired with it, so its memory follows the items
// in flight, not the length of the run. Of the problems it finds it keeps
// the first check.MaxKept of each kind in full and counts the rest.
package scoreboard

import (
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/check"
)

// Mode says how actual items are paired with expected ones.
type Mode uint8

const (
	// InOrder compares each actual item with the oldest pending expected
	// item.
	InOrder Mode = iota
	// OutOfOrder compares each actual item with the oldest pending
	// expected item of the same key.
	OutOfOrder
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case InOrder:
		return "in-order"
	case OutOfOrder:
		return "out-of-order"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// expected is one Expect call.
type expected[T any] struct {
	item T
	seq  int    // order of the Expect call
	key  string // description for reports
	done bool   // paired with an actual item
}

// Scoreboard pairs the items of a reference model with those of a device
// under test. It is not safe for concurrent use (nisim runs are serial).
type Scoreboard[T any] struct {
	name string
	mode Mode
	key  func(T) string
	opts []cmp.Option

	order   []*expected[T]            // pending items in Expect order; done ones removed lazily
	done    int                       // done items still in order
	byKey   map[string][]*expected[T] // OutOfOrder: pending items per key, FIFO; lookup only
	nExpect int
	nActual int
	pending int

	matched        int
	mismatches     []Mismatch // the first check.MaxKept
	unexpected     []string   // the first check.MaxKept
	moreMismatches int        // counted only
	moreUnexpected int
}

// New returns a scoreboard named name (used as the violation path). key
// identifies an item's transaction; it is required for OutOfOrder (New
// panics without it) and used only to describe items in reports for
// InOrder, where it may be nil. opts are passed to cmp.Diff, for example
// cmpopts.IgnoreFields to leave out a timestamp; as with cmp, a T with
// unexported fields needs an option saying how to compare them.
func New[T any](name string, mode Mode, key func(T) string, opts ...cmp.Option) *Scoreboard[T] {
	switch {
	case mode > OutOfOrder:
		panic(fmt.Sprintf("scoreboard %s: unknown %v", name, mode))
	case mode == OutOfOrder && key == nil:
		panic(fmt.Sprintf("scoreboard %s: out-of-order mode needs a key function", name))
	}
	return &Scoreboard[T]{name: name, mode: mode, key: key, opts: opts, byKey: map[string][]*expected[T]{}}
}

// Name returns the scoreboard's name.
func (s *Scoreboard[T]) Name() string { return s.name }

// Pending returns the number of expected items not yet paired.
func (s *Scoreboard[T]) Pending() int { return s.pending }

// Expect records an item the reference model predicts.
func (s *Scoreboard[T]) Expect(item T) {
	x := &expected[T]{item: item, seq: s.nExpect, key: s.describe(item, "expected", s.nExpect)}
	s.nExpect++
	s.pending++
	s.order = append(s.order, x)
	if s.mode == OutOfOrder {
		s.byKey[x.key] = append(s.byKey[x.key], x)
	}
}

// Actual records an item the device under test produced and pairs it with
// an expected one: the oldest pending (InOrder) or the oldest pending with
// the same key (OutOfOrder). An item with nothing to pair with is
// unexpected.
func (s *Scoreboard[T]) Actual(item T) {
	idx := s.nActual
	s.nActual++
	var x *expected[T]
	switch s.mode {
	case InOrder:
		if len(s.order) > 0 {
			x = s.order[0]
		}
	case OutOfOrder:
		k := s.key(item)
		if q := s.byKey[k]; len(q) > 0 {
			x = q[0]
			q[0] = nil
			if len(q) == 1 {
				delete(s.byKey, k)
			} else {
				s.byKey[k] = q[1:]
			}
		}
	}
	if x == nil {
		if len(s.unexpected) < check.MaxKept {
			s.unexpected = append(s.unexpected, s.describe(item, "actual", idx))
		} else {
			s.moreUnexpected++
		}
		return
	}
	x.done = true
	s.pending--
	s.done++
	s.trim()
	if d := cmp.Diff(x.item, item, s.opts...); d != "" {
		if len(s.mismatches) == check.MaxKept {
			s.moreMismatches++
			return
		}
		// cmp deliberately varies its output between processes: some
		// runs indent with non-breaking spaces. Plain spaces keep
		// reports comparable from run to run.
		d = strings.ReplaceAll(d, "\u00a0", " ")
		s.mismatches = append(s.mismatches, Mismatch{Index: idx, Key: x.key, Diff: d})
		return
	}
	s.matched++
}

// trim drops paired items from the front of the Expect order, and, when
// paired items stuck behind an old pending one make up most of it (out of
// order), all of them: each item is moved a constant number of times on
// average, and what stays is at most about twice what is pending.
func (s *Scoreboard[T]) trim() {
	n := 0
	for n < len(s.order) && s.order[n].done {
		s.order[n] = nil
		n++
	}
	s.order, s.done = s.order[n:], s.done-n
	if s.done < 64 || 2*s.done < len(s.order) {
		return
	}
	keep := make([]*expected[T], 0, 2*s.pending)
	for _, x := range s.order {
		if !x.done {
			keep = append(keep, x)
		}
	}
	s.order, s.done = keep, 0
}

// describe names an item for reports: its key, or without a key function
// its role, position and value.
func (s *Scoreboard[T]) describe(item T, role string, i int) string {
	if s.key != nil {
		return s.key(item)
	}
	v := fmt.Sprintf("%+v", item)
	const maxLen = 120
	if len(v) > maxLen {
		v = v[:maxLen] + "..."
	}
	return fmt.Sprintf("%s #%d %s", role, i, v)
}

// Report summarises the comparison so far; after the run, expected items
// still pending are Missing. It may be called more than once.
func (s *Scoreboard[T]) Report() Report {
	r := Report{
		Name:           s.name,
		Matched:        s.matched,
		Mismatches:     append([]Mismatch(nil), s.mismatches...),
		Unexpected:     append([]string(nil), s.unexpected...),
		MoreMismatches: s.moreMismatches,
		MoreUnexpected: s.moreUnexpected,
	}
	for _, x := range s.order {
		if x.done {
			continue
		}
		if len(r.Missing) < check.MaxKept {
			r.Missing = append(r.Missing, x.key)
		} else {
			r.MoreMissing++
		}
	}
	return r
}

// ReportTo records every problem of the report as a violation on mon at
// time t, with the scoreboard's name as path: rules "scoreboard.mismatch",
// "scoreboard.missing" and "scoreboard.unexpected" (problems counted but
// not kept: one more violation of the rule, with their number).
func (s *Scoreboard[T]) ReportTo(mon *check.Monitor, t clock.Time) {
	r := s.Report()
	for _, m := range r.Mismatches {
		mon.Report(t, r.Name, "scoreboard.mismatch", "actual #%d (%s) differs from the expected item (-expected +actual):\n%s",
			m.Index, m.Key, strings.TrimRight(m.Diff, "\n"))
	}
	for _, k := range r.Missing {
		mon.Report(t, r.Name, "scoreboard.missing", "expected %s never produced", k)
	}
	for _, k := range r.Unexpected {
		mon.Report(t, r.Name, "scoreboard.unexpected", "produced %s without an expectation", k)
	}
	for _, more := range []struct {
		rule string
		n    int
	}{{"scoreboard.mismatch", r.MoreMismatches}, {"scoreboard.missing", r.MoreMissing}, {"scoreboard.unexpected", r.MoreUnexpected}} {
		if more.n > 0 {
			mon.Report(t, r.Name, more.rule, "%d more, not kept", more.n)
		}
	}
}

// Report is the outcome of a scoreboard.
type Report struct {
	// Name is the scoreboard's name.
	Name string
	// Matched counts actual items equal to their expected item.
	Matched int
	// Mismatches lists every actual item that differs from its expected
	// item, in order of arrival.
	Mismatches []Mismatch
	// Missing describes the expected items never produced, in the order
	// they were expected.
	Missing []string
	// Unexpected describes the actual items with no expected item to pair
	// with, in order of arrival.
	Unexpected []string
	// MoreMismatches, MoreMissing and MoreUnexpected count the problems
	// of each kind beyond the first check.MaxKept, which are not kept.
	MoreMismatches, MoreMissing, MoreUnexpected int
}

// Mismatch is an actual item that differs from the expected item it was
// paired with.
type Mismatch struct {
	// Index is the actual item's position among all Actual calls, from 0.
	Index int
	// Key describes the expected item (its key, if the scoreboard has a
	// key function).
	Key string
	// Diff is cmp.Diff(expected, actual): field by field, "-" lines
	// expected and "+" lines actual. It is meant for people: cmp does not
	// promise a stable format (the scoreboard turns the non-breaking
	// spaces it sometimes indents with into plain ones, but the layout of
	// a diff between long slices may still vary from process to process).
	Diff string
}

// OK reports whether every item matched: no mismatch, nothing missing,
// nothing unexpected.
func (r Report) OK() bool {
	mismatched, missing, unexpected := r.Counts()
	return mismatched == 0 && missing == 0 && unexpected == 0
}

// Counts returns the number of mismatched, missing and unexpected items,
// kept or not.
func (r Report) Counts() (mismatched, missing, unexpected int) {
	return len(r.Mismatches) + r.MoreMismatches, len(r.Missing) + r.MoreMissing, len(r.Unexpected) + r.MoreUnexpected
}

// Error returns nil if the report is OK, else an error listing every
// mismatch with its diff, every missing and every unexpected item.
func (r Report) Error() error {
	if r.OK() {
		return nil
	}
	var b strings.Builder
	mismatched, missing, unexpected := r.Counts()
	fmt.Fprintf(&b, "scoreboard %s: %d matched, %d mismatched, %d missing, %d unexpected",
		r.Name, r.Matched, mismatched, missing, unexpected)
	for _, m := range r.Mismatches {
		fmt.Fprintf(&b, "\n  mismatch: actual #%d (%s) (-expected +actual):", m.Index, m.Key)
		for _, line := range strings.Split(strings.TrimRight(m.Diff, "\n"), "\n") {
			b.WriteString("\n    ")
			b.WriteString(line)
		}
	}
	for _, k := range r.Missing {
		fmt.Fprintf(&b, "\n  missing: %s", k)
	}
	for _, k := range r.Unexpected {
		fmt.Fprintf(&b, "\n  unexpected: %s", k)
	}
	if n := r.MoreMismatches + r.MoreMissing + r.MoreUnexpected; n > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more problems, counted only", n)
	}
	return &Error{Text: b.String(), Report: r}
}

// Error is the error Report.Error returns; it carries the report.
type Error struct {
	Text   string
	Report Report
}

// Error returns the message listing every problem.
func (e *Error) Error() string { return e.Text }
