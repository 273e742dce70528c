package trace

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode"

	"github.com/nisim/nisim/rtl/clock"
)

// Record is one transaction: what happened (Kind), where (Path, the
// component's name), when (Time in picoseconds and Cycle of the component's
// clock) and its normalised fields. Records never carry Akita message IDs or
// other process-global counters, so traces of identical runs are identical.
type Record struct {
	Time   clock.Time
	Cycle  clock.Cycle
	Path   string
	Kind   string
	Fields []Field
}

// Field is one key=value pair of a record. Values are normalised text:
// addresses in hex, sizes and counts in decimal, payloads as hashes.
type Field struct {
	Key, Val string
}

// Get returns the value of the field key and whether it is present.
func (r Record) Get(key string) (string, bool) {
	for _, f := range r.Fields {
		if f.Key == key {
			return f.Val, true
		}
	}
	return "", false
}

// Int returns a decimal integer field.
func Int(key string, v int64) Field { return Field{key, strconv.FormatInt(v, 10)} }

// Uint returns a decimal unsigned field.
func Uint(key string, v uint64) Field { return Field{key, strconv.FormatUint(v, 10)} }

// Addr returns an address field in hex ("0x1f00").
func Addr(key string, a uint64) Field { return Field{key, "0x" + strconv.FormatUint(a, 16)} }

// Str returns a text field. White space and '=' are escaped so the record
// stays one line of space-separated tokens (see Format).
func Str(key, v string) Field { return Field{key, v} }

// Bool returns a field with value 1 or 0.
func Bool(key string, b bool) Field {
	if b {
		return Field{key, "1"}
	}
	return Field{key, "0"}
}

// Hash returns a field holding a 64-bit FNV-1a hash of a payload, so a trace
// shows that the bytes match without listing them.
func Hash(key string, data []byte) Field {
	h := fnv.New64a()
	_, _ = h.Write(data)
	return Field{key, fmt.Sprintf("%016x", h.Sum64())}
}

// HashBytes is the hash Hash writes, for comparisons in tests.
func HashBytes(data []byte) string { return Hash("", data).Val }

// Format renders the record as one line:
//
//	<ps> <cycle> <path> <kind> key=value ...
//
// A value that is empty or contains white space (any Unicode space), '"',
// '=' or '#' is written as a Go-quoted string.
func (r Record) Format() string {
	var b strings.Builder
	b.Grow(64 + 16*len(r.Fields))
	b.WriteString(strconv.FormatInt(int64(r.Time), 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatUint(uint64(r.Cycle), 10))
	b.WriteByte(' ')
	b.WriteString(r.Path)
	b.WriteByte(' ')
	b.WriteString(r.Kind)
	for _, f := range r.Fields {
		b.WriteByte(' ')
		b.WriteString(f.Key)
		b.WriteByte('=')
		b.WriteString(quoteIfNeeded(f.Val))
	}
	return b.String()
}

func (r Record) String() string { return r.Format() }

func quoteIfNeeded(v string) string {
	// Any Unicode space, not only ' ' and '\t': ParseLine trims the line
	// with strings.TrimSpace, which would eat a trailing '\v' or U+00A0.
	if v == "" || strings.ContainsAny(v, "\"=#") || strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return strconv.Quote(v)
	}
	return v
}

// ParseLine parses one line written by Format. Blank lines and lines
// starting with '#' are not records: ParseLine reports ok == false for them.
func ParseLine(line string) (rec Record, ok bool, err error) {
	s := strings.TrimSpace(line)
	if s == "" || s[0] == '#' {
		return Record{}, false, nil
	}
	toks, err := tokenize(s)
	if err != nil {
		return Record{}, false, err
	}
	if len(toks) < 4 {
		return Record{}, false, fmt.Errorf("want <ps> <cycle> <path> <kind> [key=value...], got %d fields", len(toks))
	}
	t, err := strconv.ParseInt(toks[0], 10, 64)
	if err != nil || t < 0 {
		return Record{}, false, fmt.Errorf("bad time %q", toks[0])
	}
	c, err := strconv.ParseUint(toks[1], 10, 64)
	if err != nil {
		return Record{}, false, fmt.Errorf("bad cycle %q", toks[1])
	}
	// Names (path, kind and field keys) are bare words: Format writes them
	// unquoted, so a '"' in one would open a quote when the line is read
	// back (the record `0 0 p k "= "` would have the key `"`).
	for i, what := range []string{"path", "kind"} {
		if strings.ContainsRune(toks[2+i], '"') {
			return Record{}, false, fmt.Errorf("bad %s %q: a name cannot contain '\"'", what, toks[2+i])
		}
	}
	rec = Record{Time: clock.Time(t), Cycle: clock.Cycle(c), Path: toks[2], Kind: toks[3]}
	for _, kv := range toks[4:] {
		k, v, found := strings.Cut(kv, "=")
		if !found || k == "" {
			return Record{}, false, fmt.Errorf("field %q is not key=value", kv)
		}
		if strings.ContainsRune(k, '"') {
			return Record{}, false, fmt.Errorf("field %q: a key cannot contain '\"'", kv)
		}
		if strings.HasPrefix(v, "\"") {
			uq, err := strconv.Unquote(v)
			if err != nil {
				return Record{}, false, fmt.Errorf("field %q: bad quoted value", kv)
			}
			v = uq
		}
		rec.Fields = append(rec.Fields, Field{k, v})
	}
	return rec, true, nil
}

// tokenize splits on spaces, keeping quoted values (after '=') whole.
func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			if s[j] == '"' {
				end, err := closingQuote(s, j)
				if err != nil {
					return nil, err
				}
				j = end
			}
			j++
		}
		toks = append(toks, s[i:j])
		i = j
	}
	return toks, nil
}

func closingQuote(s string, open int) (int, error) {
	for k := open + 1; k < len(s); k++ {
		switch s[k] {
		case '\\':
			k++
		case '"':
			return k, nil
		}
	}
	return 0, fmt.Errorf("unterminated quote in %q", s)
}
