package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Params are a scenario's parameters: a pointer to a struct whose fields
// carry `toml` tags (nested structs are tables: key "fifo.depth" is field
// Depth of table fifo). Validate names the offending key in its errors.
type Params interface {
	Validate() error
}

// Configure overrides the embedded defaults in p, first with the TOML file
// (if file is not empty), then with each "key=value" of sets, in order.
// Decoding is strict: an unknown key, a value of the wrong type or a
// malformed file is an error naming the key and where it came from. Finally
// p.Validate rejects impossible values.
func Configure(p Params, file string, sets []string) error {
	var data []byte
	if file != "" {
		var err error
		if data, err = ReadConfig(file); err != nil {
			return err
		}
	}
	return ConfigureData(p, file, data, sets)
}

// ConfigureData is Configure with the file's contents given (a job of a
// sweep's manifest carries its configuration inlined); name is the file's
// name in error messages, and an empty name skips the file.
func ConfigureData(p Params, name string, data []byte, sets []string) error {
	file := name
	if file != "" {
		if err := decode(p, data); err != nil {
			return fmt.Errorf("config %s%s", file, err)
		}
	}
	for _, s := range sets {
		key, val, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return fmt.Errorf("--set %q: want key=value", s)
		}
		if !validKey.MatchString(key) {
			return fmt.Errorf("--set %q: malformed key %q", s, key)
		}
		val = strings.TrimSpace(val)
		doc := key + " = " + tomlValue(val)
		if err := decode(p, []byte(doc)); err != nil {
			// A string key given a bare number or boolean
			// (--set packet_size=20) takes it as written.
			if quoted := key + " = " + fmt.Sprintf("%q", val); doc == quoted || decode(p, []byte(quoted)) != nil {
				return fmt.Errorf("--set %s%s", printable(s), stripLine(err))
			}
		}
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("invalid parameter %w", err)
	}
	return nil
}

// printable returns s as written, or Go-quoted if it holds a control
// character: a newline in a --set value must not break the one-line error.
func printable(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

var validKey = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// tomlValue returns v as TOML: as written if it parses as a TOML value
// (number, boolean, quoted string, array), else as a quoted string, so that
// --set bus.preset=pci64 works without quotes.
func tomlValue(v string) string {
	var probe struct {
		V any `toml:"v"`
	}
	if v != "" && toml.Unmarshal([]byte("v = "+v), &probe) == nil {
		return v
	}
	return fmt.Sprintf("%q", v)
}

var typeMsg = regexp.MustCompile(`cannot decode TOML (\w+) into .* of type (.+)$`)

// decode applies a TOML document to p strictly; the error starts with
// ":<line>: " (or ": ") and names the key. Unknown keys are found first by
// firstUnknown, in one pass that stops at the first: go-toml's strict mode
// collects every unknown key and computes each one's line by scanning the
// document from its start, and its duplicate-key tracker searches every
// earlier key of a table, so 20k unknown keys took 11.6 s (quadratic).
func decode(p Params, data []byte) error {
	if err := firstUnknown(p, data); err != nil {
		return err
	}
	d := toml.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	err := d.Decode(p)
	if err == nil {
		return nil
	}
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		e := sm.Errors[0]
		row, _ := e.Position()
		return fmt.Errorf(":%d: unknown key %s", row, strings.Join(e.Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := typeMsg.FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("want %s, got a TOML %s", describeType(m[2]), m[1])
		}
		if k := de.Key(); len(k) > 0 {
			return fmt.Errorf(":%d: key %s: %s", row, strings.Join(k, "."), msg)
		}
		return fmt.Errorf(":%d: %s", row, msg)
	}
	return fmt.Errorf(": %v", err)
}

// firstUnknown returns ":<line>: unknown key K" for the first key of the
// TOML document data, in document order, that names no field of p, or nil
// when there is none or the document does not parse (decode reports that).
// It reads each expression once with go-toml's streaming parser, looks
// each key part up among the fields of one struct (a constant cost: the
// parameter structs have a few dozen fields), counts lines incrementally
// and returns at the first unknown key: its cost is linear in the size of
// the document up to that key, whatever follows.
func firstUnknown(p Params, data []byte) error {
	root := reflect.TypeOf(p)
	var ps unstable.Parser
	ps.Reset(data)
	line, pos := 1, 0
	lineAt := func(off int) int {
		for ; pos < off && pos < len(data); pos++ {
			if data[pos] == '\n' {
				line++
			}
		}
		return line
	}
	var table []string
	cur := root
	for ps.NextExpression() {
		e := ps.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			t, path, bad := walkKey(root, nil, e.Key())
			if bad != nil {
				return fmt.Errorf(":%d: unknown key %s", lineAt(int(bad.Raw.Offset)), strings.Join(path, "."))
			}
			table, cur = path, t
			if e.Kind == unstable.ArrayTable && t != nil && t.Kind() == reflect.Slice {
				cur = deref(t.Elem())
			}
		case unstable.KeyValue:
			if err := checkKeyValue(cur, table, e, lineAt); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkKeyValue checks the key of the key-value node e, relative to the
// table path (of type t), and the keys of an inline table it holds.
func checkKeyValue(t reflect.Type, table []string, e *unstable.Node, lineAt func(int) int) error {
	ft, path, bad := walkKey(t, table, e.Key())
	if bad != nil {
		return fmt.Errorf(":%d: unknown key %s", lineAt(int(bad.Raw.Offset)), strings.Join(path, "."))
	}
	v := e.Value()
	if v == nil || ft == nil {
		return nil
	}
	if ft.Kind() == reflect.Slice && v.Kind == unstable.Array {
		ft, v = deref(ft.Elem()), nil
		for it := e.Value().Children(); it.Next(); {
			if n := it.Node(); n.Kind == unstable.InlineTable {
				if err := checkInline(ft, path, n, lineAt); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if v.Kind == unstable.InlineTable {
		return checkInline(ft, path, v, lineAt)
	}
	return nil
}

// checkInline checks the keys of the inline table n of type t at path.
func checkInline(t reflect.Type, path []string, n *unstable.Node, lineAt func(int) int) error {
	for it := n.Children(); it.Next(); {
		if kv := it.Node(); kv.Kind == unstable.KeyValue {
			if err := checkKeyValue(t, path, kv, lineAt); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkKey follows the key parts of it from type t (at path prefix) and
// returns the type reached, the full path, and the first part that names no
// field of a struct (nil if none). A map, an interface or a value that is
// not a table ends the walk as known (a wrong type is decode's error).
func walkKey(t reflect.Type, prefix []string, it unstable.Iterator) (reflect.Type, []string, *unstable.Node) {
	path := append([]string(nil), prefix...)
	for it.Next() {
		n := it.Node()
		path = append(path, string(n.Data))
		if t == nil {
			continue
		}
		t = deref(t)
		if t.Kind() != reflect.Struct {
			t = nil
			continue
		}
		ft, ok := fieldByKey(t, string(n.Data))
		if !ok {
			return nil, path, n
		}
		t = ft
	}
	return t, path, nil
}

// fieldByKey returns the type of the field of struct t that TOML key k
// decodes into: by `toml` tag or field name, case-insensitively as go-toml
// matches, through embedded structs.
func fieldByKey(t reflect.Type, k string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			if et := deref(f.Type); et.Kind() == reflect.Struct {
				if ft, ok := fieldByKey(et, k); ok {
					return ft, true
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if strings.EqualFold(tag, k) {
			return f.Type, true
		}
	}
	return nil, false
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func describeType(t string) string {
	switch {
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "a table"
}

// stripLine drops the ":1" line number of a one-line --set document.
func stripLine(err error) string {
	s := err.Error()
	if strings.HasPrefix(s, ":1:") {
		return ":" + s[3:]
	}
	return s
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Dump renders p as TOML (the effective configuration of a run).
func Dump(p Params) (string, error) {
	b, err := toml.Marshal(p)
	return string(b), err
}

// KeyError is a validation error about one key.
type KeyError struct {
	Key string
	Msg string
}

// Error is one line: control characters in the message (a file name with a
// newline, echoed by the operating system's error) are written as Go
// escapes, since bad input gets a one-line error naming the key.
func (e *KeyError) Error() string { return e.Key + ": " + escapeControls(e.Msg) }

// escapeControls writes each control character of s as its Go escape
// (a newline as \n) and leaves everything else as it is.
func escapeControls(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Check returns a *KeyError for key when bad is true.
func Check(bad bool, key, format string, args ...any) error {
	if !bad {
		return nil
	}
	return &KeyError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// MaxDelay is the longest latency, delay or handler cost a scenario
// accepts, and MaxRun the longest run (warm-up, measurement and drain
// together), in simulated time. Nothing in these networks takes a second,
// and within these bounds every time a run computes stays far inside
// clock.Time: a delay of 2^63 cycles overflowed it (and the clocks
// panicked) even in a run bounded by --time-limit.
const (
	MaxDelay = clock.Second
	MaxRun   = 3600 * clock.Second
)

// CheckCycles returns a *KeyError for key when n cycles of clk last longer
// than limit. A negative n is left to the caller's own check.
func CheckCycles(key string, n int64, clk clock.Clock, limit clock.Time) error {
	if n <= 0 || !clk.Valid() {
		return nil
	}
	if most := clk.CycleAt(limit); uint64(n) > uint64(most) {
		return &KeyError{Key: key, Msg: fmt.Sprintf("%d cycles of %v last more than %v (at most %d)", n, clk, limit, most)}
	}
	return nil
}

// RunCycles returns sample*(warmup+measure)+drain for non-negative
// arguments, saturated at math.MaxInt64 instead of overflowing.
func RunCycles(sample, warmup, measure, drain int) int64 {
	var sum uint64
	for _, t := range [][2]int{{sample, warmup}, {sample, measure}, {drain, 1}} {
		hi, lo := bits.Mul64(uint64(max(t[0], 0)), uint64(max(t[1], 0)))
		if hi != 0 || lo > math.MaxInt64-sum {
			return math.MaxInt64
		}
		sum += lo
	}
	return int64(sum)
}

// MemoryBudget is the heap one run may give to the state that its size and
// count parameters scale: queue and FIFO entries, buffers, virtual
// channels, listed sizes. assumed: 1 GiB. The suite's machine has 23 GiB
// shared by two cores and by up to a dozen concurrent runs (engineers,
// `make test`, a sweep on -j workers), so one run must stay within about a
// twentieth of it; the largest default scenario needs a few tens of MiB.
// Each bound derived from it divides it by the bytes one unit of the
// parameter costs in the model (all its copies together) and says so in
// its error.
const MemoryBudget = 1 << 30

// BudgetLimit returns how many units of bytesPer bytes each fit in
// MemoryBudget (at least 1).
func BudgetLimit(bytesPer int64) int64 {
	return max(MemoryBudget/max(bytesPer, 1), 1)
}

// CheckBudget returns a *KeyError for key when n units of bytesPer bytes
// each (what one unit costs across every copy in the model, described by
// unit, e.g. "flit in each of 2 FIFOs of 16 B entries") exceed
// MemoryBudget. The message names the limit and its derivation on one
// line: "above the limit 33554432 (got 1000000000000; 32 B per flit ... x
// 33554432 = 1 GiB, the per-run memory budget)".
func CheckBudget(key string, n, bytesPer int64, unit string) error {
	limit := BudgetLimit(bytesPer)
	if n <= limit {
		return nil
	}
	return &KeyError{Key: key, Msg: fmt.Sprintf("above the limit %d (got %d; %d B per %s x %d = %s, the per-run memory budget)",
		limit, n, bytesPer, unit, limit, mib(limit*bytesPer))}
}

// CheckLimit returns a *KeyError for key when n exceeds a structural limit
// of the model (a field width, an address range), explained by why.
func CheckLimit(key string, n, limit int64, why string) error {
	if n <= limit {
		return nil
	}
	return &KeyError{Key: key, Msg: fmt.Sprintf("above the limit %d (got %d; %s)", limit, n, why)}
}

// mib writes n bytes in MiB, or in KiB or B when smaller.
func mib(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// FirstError returns the first non-nil error.
func FirstError(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
