package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/pelletier/go-toml/v2"
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
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("config %s: %w", file, unwrapPath(err))
		}
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
// ":<line>: " (or ": ") and names the key.
func decode(p Params, data []byte) error {
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

// FirstError returns the first non-nil error.
func FirstError(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
