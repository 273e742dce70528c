package vcd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/nisim/nisim/waves"
)

// Kind classifies a variable by the values it takes; it is the writer's
// waves.Kind. Wire covers every 4-state bit-vector type (the IEEE net and
// register types, parameter, time, event, and SystemVerilog logic, bit and
// enum), Integer the integer types, Real real/realtime/shortreal, and
// String GTKWave's "$var string" extension.
type Kind = waves.Kind

// Variable kinds.
const (
	Wire    = waves.Wire
	Integer = waves.Integer
	Real    = waves.Real
	String  = waves.String
)

// Var is one declared variable ($var).
type Var struct {
	// Scope is the dot-joined names of the enclosing scopes, e.g.
	// "Demo.Bus[0]".
	Scope string
	// Name is the reference name without the bit-select, e.g. "addr".
	Name string
	// Type is the variable type as declared: "wire", "integer", "real",
	// "string", "reg", ...
	Type string
	// Kind classifies Type.
	Kind Kind
	// Width is the declared size.
	Width int
	// ID is the identifier code.
	ID string
	// Range is the bit-select as declared, e.g. "[7:0]", or "" if none.
	Range string
	// Line is the line of the $var keyword.
	Line int

	sig int // index into File.sigs
}

// FullName returns Scope + "." + Name, or Name if there is no scope.
func (v *Var) FullName() string {
	if v.Scope == "" {
		return v.Name
	}
	return v.Scope + "." + v.Name
}

// ValueKind tells which fields of a Value are meaningful.
type ValueKind uint8

// Value kinds. The zero ValueKind means "no value".
const (
	// Scalar is a one-bit change such as "1!" or "x!"; see Value.Bits.
	Scalar ValueKind = iota + 1
	// Vector is a "b..." change; see Value.Bits.
	Vector
	// RealValue is an "r..." change; see Value.Real.
	RealValue
	// StringValue is an "s..." change; see Value.Str.
	StringValue
)

// String returns "scalar", "vector", "real", "string" or "none".
func (k ValueKind) String() string {
	switch k {
	case 0:
		return "none"
	case Scalar:
		return "scalar"
	case Vector:
		return "vector"
	case RealValue:
		return "real"
	case StringValue:
		return "string"
	}
	return fmt.Sprintf("ValueKind(%d)", uint8(k))
}

// Value is the value of one change.
type Value struct {
	// Kind says which of the other fields holds the value.
	Kind ValueKind
	// Bits holds the digits of a Scalar or Vector, lower-cased ("1", "x",
	// "1010", "z"). A vector shorter than its variable is left-extended to
	// the declared width as IEEE 1364-2005 18.2.1 prescribes: with 0 if its
	// leftmost digit is 0 or 1, with x if it is x, with z if it is z.
	Bits string
	// Real is the value of a RealValue.
	Real float64
	// Str is the text of a StringValue.
	Str string
}

// Uint returns the numeric value of a Scalar or Vector whose digits are all
// 0 or 1 and whose value fits in 64 bits (leading zeros beyond 64 digits are
// allowed). ok is false otherwise.
func (v Value) Uint() (n uint64, ok bool) {
	if (v.Kind != Scalar && v.Kind != Vector) || v.Bits == "" {
		return 0, false
	}
	b := v.Bits
	for i := 0; i < len(b); i++ {
		if b[i] != '0' && b[i] != '1' {
			return 0, false
		}
	}
	b = strings.TrimLeft(b, "0")
	if len(b) > 64 {
		return 0, false
	}
	for i := 0; i < len(b); i++ {
		n = n<<1 | uint64(b[i]-'0')
	}
	return n, true
}

// String formats the value as in a dump, without the identifier code:
// "1" (scalar), "b1010", "r2.5", "sIDLE"; "" for the zero Value.
func (v Value) String() string {
	switch v.Kind {
	case Scalar:
		return v.Bits
	case Vector:
		return "b" + v.Bits
	case RealValue:
		return "r" + strconv.FormatFloat(v.Real, 'g', -1, 64)
	case StringValue:
		return "s" + v.Str
	}
	return ""
}

// Change is one value change of a variable.
type Change struct {
	// Time is the #time in effect, in timescale units.
	Time int64
	// Value is the new value.
	Value Value
	// Line is the line of the change in the file.
	Line int
}

// File is a parsed VCD file. Its methods may be called concurrently.
type File struct {
	// Date, Version and Comment are the trimmed texts of the header's
	// $date, $version and $comment sections ("" if absent); several header
	// comments are joined with newlines.
	Date, Version, Comment string
	// TimescaleNum is 1, 10 or 100.
	TimescaleNum int
	// TimescaleUnit is "s", "ms", "us", "ns", "ps" or "fs".
	TimescaleUnit string
	// Vars are the variables in declaration order.
	Vars []*Var
	// EndTime is the last #time in the file (0 if there is none).
	EndTime int64

	sigs   []signal // one per identifier code
	byName map[string]*Var
	arena  []byte // text of all value changes
}

// signal is what one identifier code refers to; aliased Vars share it.
type signal struct {
	kind  Kind
	typ   string
	width int
	lax   bool   // the declaration was wrong: do not check values
	line  int    // of the first declaration
	name  string // full name of the first Var, for messages
	recs  []rec
}

// rec is one stored value change: its text (with the 'b', 'r' or 's'
// prefix, or the scalar digit) is arena[off:off+n].
type rec struct {
	time int64
	off  int
	n    uint32
	line int32
}

// maxErrors bounds the errors Parse collects.
const maxErrors = 100

// Parse reads a VCD file. It is strict: if anything is wrong it returns a
// nil File and an *ErrorList holding the problems found, in line order (at
// most 100; parsing stops there).
func Parse(r io.Reader) (*File, error) {
	p := newParser(r, maxErrors)
	p.run()
	if errs := p.sorted(); len(errs) > 0 {
		if len(errs) > maxErrors {
			errs = errs[:maxErrors]
		}
		l := ErrorList(errs)
		return nil, &l
	}
	return p.f, nil
}

// ParseFile opens and parses the VCD file at path. Errors from Parse are
// wrapped with the path; errors.As still finds the *ErrorList.
func ParseFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := Parse(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Lint reads a VCD file and returns every problem found, in line order, or
// nil if there is none. It makes the same checks as Parse, without a limit
// on the number of errors (but it stops at binary data or a read error).
func Lint(r io.Reader) []Error {
	p := newParser(r, 0)
	p.run()
	return p.sorted()
}

// LintFile lints the VCD file at path. Problems in the file are the
// returned []Error (as Lint's); a path that cannot be linted (missing,
// unreadable, a directory or other non-regular file, a read error part way)
// is the error instead, naming the path once, so a caller can tell bad
// input from a bad VCD.
func LintFile(path string) ([]Error, error) {
	fh, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a VCD file", path)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	p := newParser(fh, 0)
	p.run()
	if err := p.sc.rerr; err != nil && err != io.EOF {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: read error: %w", path, err)
	}
	return p.sorted(), nil
}

// Error is one problem in a VCD file.
type Error struct {
	// Line is the 1-based line of the problem.
	Line int
	// Msg describes it.
	Msg string
}

// Error returns "line N: Msg".
func (e Error) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// ErrorList is the error Parse returns: the problems in line order.
type ErrorList []Error

// Error returns the first error, followed by "(and N more)" if there are
// others.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more)", l[0].Error(), len(l)-1)
}

// Lookup returns the variable with the given full name ("Scope.Name"), or
// nil if there is none.
func (f *File) Lookup(fullName string) *Var {
	if f == nil {
		return nil
	}
	return f.byName[fullName]
}

// Changes returns the value changes of the named variable in file order
// (several may share a time). It fails if there is no such variable.
func (f *File) Changes(fullName string) ([]Change, error) {
	v := f.Lookup(fullName)
	if v == nil {
		return nil, fmt.Errorf("vcd: no variable %q", fullName)
	}
	recs := f.sigs[v.sig].recs
	out := make([]Change, len(recs))
	for i, r := range recs {
		out[i] = Change{Time: r.time, Value: f.value(r, v.Width), Line: int(r.line)}
	}
	return out, nil
}

// Values returns the named variable's successive values as text: numbers
// (scalars and vectors without x or z) in decimal, strings as they are,
// anything else as Value.String gives it. Tests compare a signal's history
// with it ("the state went IDLE, FETCH, IDLE").
func (f *File) Values(fullName string) ([]string, error) {
	ch, err := f.Changes(fullName)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ch))
	for i, c := range ch {
		switch n, ok := c.Value.Uint(); {
		case ok:
			out[i] = strconv.FormatUint(n, 10)
		case c.Value.Kind == StringValue:
			out[i] = c.Value.Str
		default:
			out[i] = c.Value.String()
		}
	}
	return out, nil
}

// ValueAt returns the value of the named variable in effect at time t: that
// of its last change at a time <= t (within one time, the last change
// wins). It fails if there is no such variable or t precedes its first
// change.
func (f *File) ValueAt(fullName string, t int64) (Value, error) {
	v := f.Lookup(fullName)
	if v == nil {
		return Value{}, fmt.Errorf("vcd: no variable %q", fullName)
	}
	recs := f.sigs[v.sig].recs
	if len(recs) == 0 {
		return Value{}, fmt.Errorf("vcd: %q never changes", fullName)
	}
	i := sort.Search(len(recs), func(i int) bool { return recs[i].time > t }) - 1
	if i < 0 {
		return Value{}, fmt.Errorf("vcd: %q has no value at time %d (first change at %d)",
			fullName, t, recs[0].time)
	}
	return f.value(recs[i], v.Width), nil
}

// value decodes a stored change of a variable of the given width.
func (f *File) value(r rec, width int) Value {
	text := f.arena[r.off : r.off+int(r.n)]
	switch text[0] {
	case 'b', 'B':
		return Value{Kind: Vector, Bits: extend(text[1:], width)}
	case 'r', 'R':
		x, _ := strconv.ParseFloat(string(text[1:]), 64) // checked by the parser
		return Value{Kind: RealValue, Real: x}
	case 's', 'S':
		return Value{Kind: StringValue, Str: string(text[1:])}
	}
	return Value{Kind: Scalar, Bits: scalarBits[lower(text[0])]}
}

var scalarBits = map[byte]string{'0': "0", '1': "1", 'x': "x", 'z': "z"}

// extend lower-cases the digits of a vector and left-extends them to width
// (IEEE 1364-2005 18.2.1).
func extend(d []byte, width int) string {
	n := max(len(d), width)
	b := make([]byte, n)
	pad := lower(d[0])
	if pad == '1' {
		pad = '0'
	}
	k := n - len(d)
	for i := 0; i < k; i++ {
		b[i] = pad
	}
	for i, c := range d {
		b[k+i] = lower(c)
	}
	return string(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
