package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/sarchlab/akita/v3/sim"
)

// Header is the first line of every trace file nisim writes.
const Header = "# nisim trace v1"

// Recorder collects the records components emit. A nil *Recorder is valid
// and ignores everything, so components guard record construction with
// `if rec.Enabled()`.
//
// Records of one picosecond are held back until time advances, then sorted
// by Path (stably, so records of one component keep their program order).
// The trace therefore does not depend on the order in which components ran
// within a picosecond.
type Recorder struct {
	out     *bufio.Writer
	keep    bool
	kept    []Record
	kinds   []string // kind prefixes to keep; empty keeps all
	pending []Record
	pendT   clock.Time
	n       uint64
	err     error
}

// NewRecorder returns a recorder that keeps its records in memory.
func NewRecorder() *Recorder { return &Recorder{keep: true} }

// NewStreamRecorder returns a recorder that writes each record as a line to
// w (after a Header line and optional comment lines) instead of keeping it.
func NewStreamRecorder(w io.Writer, comments ...string) *Recorder {
	r := &Recorder{out: bufio.NewWriterSize(w, 64<<10)}
	r.writeLine(Header)
	for _, c := range comments {
		for _, l := range strings.Split(c, "\n") {
			r.writeLine("# " + l)
		}
	}
	return r
}

// KeepAlso makes a streaming recorder keep its records in memory too.
func (r *Recorder) KeepAlso() *Recorder {
	r.keep = true
	return r
}

// OnlyKinds restricts the recorder to records whose Kind starts with one of
// the prefixes ("bus.", "dma.done").
func (r *Recorder) OnlyKinds(prefixes ...string) *Recorder {
	r.kinds = prefixes
	return r
}

// Enabled reports whether records are wanted at all.
func (r *Recorder) Enabled() bool { return r != nil }

// Emit adds a record.
func (r *Recorder) Emit(t clock.Time, c clock.Cycle, path, kind string, fields ...Field) {
	if r == nil {
		return
	}
	r.Add(Record{Time: t, Cycle: c, Path: path, Kind: kind, Fields: fields})
}

// Add adds a record. Records must come in non-decreasing time.
func (r *Recorder) Add(rec Record) {
	if r == nil {
		return
	}
	if len(r.kinds) > 0 && !hasPrefix(rec.Kind, r.kinds) {
		return
	}
	// pendT is the time of the latest record, pending or already released
	// by a Flush, so time going backwards is caught in both cases.
	if (len(r.pending) > 0 || r.n > 0) && rec.Time < r.pendT {
		r.fail(fmt.Errorf("trace: record at %v after one at %v: %s", rec.Time, r.pendT, rec.Format()))
		return
	}
	if len(r.pending) > 0 && rec.Time != r.pendT {
		r.Flush()
	}
	r.pendT = rec.Time
	r.pending = append(r.pending, rec)
}

func hasPrefix(kind string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(kind, p) {
			return true
		}
	}
	return false
}

// Flush releases the records of the current picosecond.
func (r *Recorder) Flush() {
	if r == nil || len(r.pending) == 0 {
		return
	}
	slices.SortStableFunc(r.pending, func(a, b Record) int { return strings.Compare(a.Path, b.Path) })
	for _, rec := range r.pending {
		r.n++
		if r.keep {
			r.kept = append(r.kept, rec)
		}
		if r.out != nil {
			r.writeLine(rec.Format())
		}
	}
	r.pending = r.pending[:0]
}

func (r *Recorder) writeLine(s string) {
	if r.err != nil {
		return
	}
	if _, err := r.out.WriteString(s); err != nil {
		r.fail(err)
		return
	}
	if err := r.out.WriteByte('\n'); err != nil {
		r.fail(err)
	}
}

func (r *Recorder) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Records returns the kept records (after a Flush).
func (r *Recorder) Records() []Record {
	if r == nil {
		return nil
	}
	r.Flush()
	return r.kept
}

// Count returns how many records were released so far.
func (r *Recorder) Count() uint64 {
	if r == nil {
		return 0
	}
	return r.n
}

// Err returns the first error met so far (a record back in time, a failed
// write), without flushing.
func (r *Recorder) Err() error {
	if r == nil {
		return nil
	}
	return r.err
}

// Close flushes everything and returns the first error met.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.Flush()
	if r.out != nil && r.err == nil {
		r.err = r.out.Flush()
	}
	return r.err
}

// Write writes records as a trace file: the Header, comment lines, then one
// line per record.
func Write(w io.Writer, recs []Record, comments ...string) error {
	r := NewStreamRecorder(w, comments...)
	for _, rec := range recs {
		r.writeLine(rec.Format())
	}
	return r.Close()
}

// Read parses a trace file. Comment lines are returned separately. Errors
// name the line.
func Read(rd io.Reader) (recs []Record, comments []string, err error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(text), "#") {
			comments = append(comments, text)
			continue
		}
		rec, ok, err := ParseLine(text)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", line, err)
		}
		if ok {
			recs = append(recs, rec)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return recs, comments, nil
}

// Describer turns an Akita message seen at a port into a record kind and
// fields; it returns ok == false for messages that should not be traced.
type Describer func(msg sim.Msg) (kind string, fields []Field, ok bool)

// PortHook records the messages that pass Akita ports (sent, received into
// the port buffer, retrieved by the owner), for components built on Akita
// ports rather than nisim FIFOs. Attach it with port.AcceptHook. The record
// Path is the port's name and the Kind gets a ".send", ".recv" or
// ".retrieve" suffix. Message IDs are never recorded.
type PortHook struct {
	rec      *Recorder
	time     sim.TimeTeller
	clk      clock.Clock
	describe Describer
}

// NewPortHook returns a hook that records into rec, stamping records with
// the engine time and the cycle of clk.
func NewPortHook(rec *Recorder, engine sim.TimeTeller, clk clock.Clock, d Describer) *PortHook {
	return &PortHook{rec: rec, time: engine, clk: clk, describe: d}
}

// Func implements sim.Hook.
func (h *PortHook) Func(ctx sim.HookCtx) {
	var suffix string
	switch ctx.Pos {
	case sim.HookPosPortMsgSend:
		suffix = ".send"
	case sim.HookPosPortMsgRecvd:
		suffix = ".recv"
	case sim.HookPosPortMsgRetrieve:
		suffix = ".retrieve"
	default:
		return
	}
	msg, ok := ctx.Item.(sim.Msg)
	if !ok {
		return
	}
	kind, fields, ok := h.describe(msg)
	if !ok {
		return
	}
	port, _ := ctx.Domain.(sim.Named)
	path := "?"
	if port != nil {
		path = port.Name()
	}
	t := clock.FromSim(h.time.CurrentTime())
	h.rec.Emit(t, h.clk.CycleAt(t), path, kind+suffix, fields...)
}

// ErrNoRecords is returned when a comparison is asked of an empty trace.
var ErrNoRecords = errors.New("trace: no records")
