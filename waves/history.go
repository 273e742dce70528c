package waves

import (
	"bufio"
	"errors"
	"io"
	"strconv"

	"github.com/nisim/nisim/rtl/clock"
)

// change is one emitted value change, with the value it replaced so that
// the state at an earlier time can be rebuilt from the current one.
type change struct {
	t        clock.Time
	idx      int
	old, new uint64
}

// history is a ring of the most recent value changes.
type history struct {
	ring []change
	next int
	full bool
}

func newHistory(n int) *history { return &history{ring: make([]change, n)} }

func (h *history) add(t clock.Time, idx int, old, new uint64) {
	h.ring[h.next] = change{t: t, idx: idx, old: old, new: new}
	h.next++
	if h.next == len(h.ring) {
		h.next = 0
		h.full = true
	}
}

// ordered returns the retained changes, oldest first.
func (h *history) ordered() []change {
	if !h.full {
		return h.ring[:h.next]
	}
	out := make([]change, 0, len(h.ring))
	out = append(out, h.ring[h.next:]...)
	return append(out, h.ring[:h.next]...)
}

// WriteHistory writes a self-contained VCD of the last span picoseconds
// before the latest value change, using the in-memory history (see
// Options.History). If the history has been overwritten past that span, the
// dump starts at the oldest time it still describes exactly. It returns the
// time window written.
func (r *Registry) WriteHistory(w io.Writer, span clock.Time, o VCDOptions) (from, to clock.Time, err error) {
	if r == nil || r.hist == nil {
		return 0, 0, errors.New("waves: registry keeps no history")
	}
	r.Flush()
	changes := r.hist.ordered()
	to = r.stepTime
	from = max(to-span, 0)
	if r.hist.full && len(changes) > 0 && changes[0].t > from {
		from = changes[0].t
	}
	vals := make([]uint64, len(r.signals))
	for i, s := range r.signals {
		vals[i] = s.committed
	}
	first := len(changes)
	for i := len(changes) - 1; i >= 0 && changes[i].t > from; i-- {
		vals[changes[i].idx] = changes[i].old
		first = i
	}
	bw := bufio.NewWriter(w)
	b := appendHeader(nil, r.signals, o)
	b = append(b, '#')
	b = strconv.AppendInt(b, int64(from), 10)
	b = append(b, "\n$dumpvars\n"...)
	for i, s := range r.signals {
		b = r.appendValue(b, s, vals[i])
	}
	b = append(b, "$end\n"...)
	last := from
	for _, c := range changes[first:] {
		if c.t != last {
			b = append(b, '#')
			b = strconv.AppendInt(b, int64(c.t), 10)
			b = append(b, '\n')
			last = c.t
		}
		b = r.appendValue(b, r.signals[c.idx], c.new)
		if len(b) > 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return from, to, err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return from, to, err
	}
	return from, to, bw.Flush()
}
