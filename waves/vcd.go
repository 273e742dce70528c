package waves

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
)

// Version is written into the $version section of every dump.
const Version = "nisim waves 1"

// VCDOptions are the optional header sections of a dump.
type VCDOptions struct {
	// Date is written as $date when non-empty. nisim never fills it in by
	// itself, so identical runs give byte-identical files.
	Date string
	// Comment is written as a $comment section (e.g. scenario and seed).
	Comment string
}

// vcdWriter streams a registry's changes as IEEE 1364-2005 section 18 VCD
// with a 1 ps timescale, plus GTKWave's "$var string" extension.
type vcdWriter struct {
	reg      *Registry
	w        *bufio.Writer
	opts     VCDOptions
	from, to clock.Time
	dumped   bool // $dumpvars written
	ended    bool // past the window
	lastT    clock.Time
	buf      []byte
	err      error
}

// DumpVCD makes the registry write a VCD file to w. It must be called before
// the simulation starts. The dump covers Options.From..Options.To.
func (r *Registry) DumpVCD(w io.Writer, o VCDOptions) error {
	if r == nil {
		return errors.New("waves: no registry")
	}
	if r.frozen {
		return errors.New("waves: DumpVCD called after the simulation started")
	}
	if r.vcd != nil {
		return errors.New("waves: registry already dumps a VCD")
	}
	if strings.Contains(o.Date, "$end") || strings.Contains(o.Comment, "$end") {
		return errors.New("waves: $end inside a VCD header section")
	}
	r.vcd = &vcdWriter{reg: r, w: bufio.NewWriterSize(w, 64<<10), opts: o,
		from: r.opts.From, to: r.opts.To, lastT: -1}
	return nil
}

// Close emits the last step, writes the end time (so viewers show how long
// the final values lasted) and flushes the dump. It returns the first error
// of the registry or of the writer.
func (r *Registry) Close(end clock.Time) error {
	if r == nil {
		return nil
	}
	r.Start()
	r.commit()
	if v := r.vcd; v != nil {
		v.finish(end)
		if v.err != nil {
			r.fail(fmt.Errorf("waves: writing VCD: %w", v.err))
		}
		r.vcd = nil
	}
	return r.err
}

func (v *vcdWriter) header() {
	v.buf = appendHeader(v.buf[:0], v.reg.signals, v.opts)
	v.write()
}

func appendHeader(b []byte, sigs []*Signal, o VCDOptions) []byte {
	if o.Date != "" {
		b = append(b, "$date\n\t"...)
		b = append(b, o.Date...)
		b = append(b, "\n$end\n"...)
	}
	b = append(b, "$version\n\t"+Version+"\n$end\n"...)
	if o.Comment != "" {
		b = append(b, "$comment\n\t"...)
		b = append(b, o.Comment...)
		b = append(b, "\n$end\n"...)
	}
	b = append(b, "$timescale 1ps $end\n"...)
	b = appendScopes(b, sigs)
	return append(b, "$enddefinitions $end\n"...)
}

// scopeNode is one $scope module of the dump, children in first-declared
// order.
type scopeNode struct {
	name     string
	children []*scopeNode
	byName   map[string]*scopeNode // lookup only
	signals  []*Signal
}

func appendScopes(b []byte, sigs []*Signal) []byte {
	root := &scopeNode{byName: map[string]*scopeNode{}}
	for _, s := range sigs {
		n := root
		if s.scope != "" {
			for _, part := range strings.Split(s.scope, ".") {
				c := n.byName[part]
				if c == nil {
					c = &scopeNode{name: part, byName: map[string]*scopeNode{}}
					n.byName[part] = c
					n.children = append(n.children, c)
				}
				n = c
			}
		}
		n.signals = append(n.signals, s)
	}
	if len(root.signals) > 0 {
		// Signals without a scope go into a top-level "top" module:
		// GTKWave needs every variable inside a scope.
		top := &scopeNode{name: "top", signals: root.signals}
		root.children = append([]*scopeNode{top}, root.children...)
	}
	for _, c := range root.children {
		b = appendScope(b, c)
	}
	return b
}

func appendScope(b []byte, n *scopeNode) []byte {
	b = append(b, "$scope module "...)
	b = append(b, n.name...)
	b = append(b, " $end\n"...)
	for _, s := range n.signals {
		b = append(b, "$var "...)
		switch s.kind {
		case Wire:
			b = append(b, "wire "...)
		case Integer:
			b = append(b, "integer "...)
		case Real:
			b = append(b, "real "...)
		case String:
			b = append(b, "string "...)
		}
		b = strconv.AppendInt(b, int64(vcdWidth(s)), 10)
		b = append(b, ' ')
		b = append(b, s.id...)
		b = append(b, ' ')
		b = append(b, s.name...)
		if s.kind == Wire && s.width > 1 {
			b = append(b, " ["...)
			b = strconv.AppendInt(b, int64(s.width-1), 10)
			b = append(b, ":0]"...)
		}
		b = append(b, " $end\n"...)
	}
	for _, c := range n.children {
		b = appendScope(b, c)
	}
	return append(b, "$upscope $end\n"...)
}

// vcdWidth is the declared size in the dump. Viewers show a VCD "integer"
// as a signed number, so counters are declared as Verilog integers, 32 bits
// wide (64 for wider counters): a counter narrower than 32 bits never
// reaches the sign bit and shows as a plain decimal.
func vcdWidth(s *Signal) int {
	if s.kind != Integer {
		return s.width
	}
	if s.width > 32 {
		return 64
	}
	return 32
}

// idCode returns the VCD identifier of the i-th signal: base 94 over the
// printable characters '!'..'~'.
func idCode(i int) string {
	var b []byte
	for {
		b = append(b, byte('!'+i%94))
		i /= 94
		if i == 0 {
			break
		}
		i--
	}
	return string(b)
}

// step writes the changes of the step at t; it runs before the registry
// updates the committed values, so s.committed is the previous value.
func (v *vcdWriter) step(t clock.Time, dirty []*Signal) {
	if v.ended || v.err != nil || t < v.from || !anyChanged(dirty) {
		return
	}
	if v.to > 0 && t > v.to {
		v.ended = true
		return
	}
	b := v.buf[:0]
	if !v.dumped {
		v.dumped = true
		if t > v.from {
			b = v.appendDumpvars(b, v.from, false)
		} else {
			v.buf = v.appendDumpvars(b, t, true)
			v.lastT = t
			v.write()
			return
		}
	}
	b = append(b, '#')
	b = strconv.AppendInt(b, int64(t), 10)
	b = append(b, '\n')
	for _, s := range dirty {
		if s.cur != s.committed {
			b = v.reg.appendValue(b, s, s.cur)
		}
	}
	v.lastT = t
	v.buf = b
	v.write()
}

// anyChanged reports whether a step changes any value: signals that were
// set within the step and then back to their previous value are dirty but
// must not produce a (bare) #time line.
func anyChanged(dirty []*Signal) bool {
	for _, s := range dirty {
		if s.cur != s.committed {
			return true
		}
	}
	return false
}

// appendDumpvars writes the initial values at time t: the values after the
// step at t (cur) or before it (committed).
func (v *vcdWriter) appendDumpvars(b []byte, t clock.Time, cur bool) []byte {
	b = append(b, '#')
	b = strconv.AppendInt(b, int64(t), 10)
	b = append(b, "\n$dumpvars\n"...)
	for _, s := range v.reg.signals {
		val := s.committed
		if cur {
			val = s.cur
		}
		b = v.reg.appendValue(b, s, val)
	}
	return append(b, "$end\n"...)
}

func (v *vcdWriter) finish(end clock.Time) {
	if v.err != nil {
		return
	}
	b := v.buf[:0]
	if !v.dumped {
		v.dumped = true
		t := max(v.from, 0)
		b = v.appendDumpvars(b, t, false)
		v.lastT = t
	}
	if v.to > 0 && end > v.to {
		end = v.to
	}
	if end > v.lastT {
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(end), 10)
		b = append(b, '\n')
		v.lastT = end
	}
	v.buf = b
	v.write()
	if v.err == nil {
		v.err = v.w.Flush()
	}
}

func (v *vcdWriter) write() {
	if v.err != nil {
		return
	}
	_, v.err = v.w.Write(v.buf)
}

// appendValue formats one value change line.
func (r *Registry) appendValue(b []byte, s *Signal, val uint64) []byte {
	switch {
	case s.kind == Wire && s.width == 1:
		b = append(b, byte('0'+val&1))
	case s.kind == Real:
		b = append(b, 'r')
		b = strconv.AppendFloat(b, math.Float64frombits(val), 'g', -1, 64)
		b = append(b, ' ')
	case s.kind == String:
		b = append(b, 's')
		b = append(b, r.strings[val]...)
		b = append(b, ' ')
	default:
		b = append(b, 'b')
		b = strconv.AppendUint(b, val, 2)
		b = append(b, ' ')
	}
	b = append(b, s.id...)
	return append(b, '\n')
}

// Format renders a raw signal value as it would appear in a dump ("1",
// "b101", "r2.5", "sIDLE" without the identifier).
func (r *Registry) Format(s *Signal, val uint64) string {
	line := string(r.appendValue(nil, s, val))
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), s.id))
}
