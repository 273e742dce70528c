package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
)

// KeySpec documents one parameter key and bounds it: its unit, the range
// of a number (or of each element of a list of numbers, or of a list's
// length), the values a string may take, and where its default comes
// from. A scenario's Params list their KeySpecs (Keyed); Validate enforces
// them through CheckKeys and `nisim config` prints them from the same
// table, so the range a user reads is the range a run enforces.
type KeySpec struct {
	// Key is the dotted TOML key ("ni.fifo_depth").
	Key string
	// Unit is what the number counts ("cycles", "bytes", "flits/node/cycle").
	Unit string
	// Min and Max bound the value where HasMin and HasMax say so.
	Min, Max       float64
	HasMin, HasMax bool
	// MaxWhy, when set, is why Max is the limit (a structure of the model,
	// the memory budget); above it the error reads "above the limit Max
	// (got v; MaxWhy)".
	MaxWhy string
	// MaxKey, when set, names the key whose value Max is ("1..max_len =
	// 4096").
	MaxKey string
	// OpenMin makes Min exclusive (a fraction in (0, 1]).
	OpenMin bool
	// Values, when set, are the only values a string key may take.
	Values []string
	// MaxEntries, when HasMaxEntries, bounds a list's length (the other
	// bounds apply to each entry), for the reason EntriesWhy.
	MaxEntries    int64
	HasMaxEntries bool
	EntriesWhy    string
	// Note is a rule that ties the key to others, printed after its
	// range (Validate checks it, from the same constant).
	Note string
	// Origin is a short form of where the default comes from: a paper's
	// figure, "derived: ...", "assumed: ...", "calibrated: ...".
	Origin string
}

// Key starts the KeySpec of key counted in unit; the methods below add
// its bounds and origin (value receivers: a spec is built in one
// expression).
func Key(key, unit string) KeySpec { return KeySpec{Key: key, Unit: unit} }

// Range bounds the value to lo..hi inclusive.
func (k KeySpec) Range(lo, hi float64) KeySpec {
	k.Min, k.Max, k.HasMin, k.HasMax = lo, hi, true, true
	return k
}

// AtLeast bounds the value below by lo.
func (k KeySpec) AtLeast(lo float64) KeySpec {
	k.Min, k.HasMin = lo, true
	return k
}

// Above bounds the value below by lo, exclusive.
func (k KeySpec) Above(lo float64) KeySpec {
	k.Min, k.HasMin, k.OpenMin = lo, true, true
	return k
}

// AtMost bounds the value above by hi.
func (k KeySpec) AtMost(hi float64) KeySpec {
	k.Max, k.HasMax = hi, true
	return k
}

// UpTo bounds the value above by the value hi of another key.
func (k KeySpec) UpTo(key string, hi float64) KeySpec {
	k.Max, k.HasMax, k.MaxKey = hi, true, key
	return k
}

// Limit bounds the value above by hi, a limit explained by why.
func (k KeySpec) Limit(hi float64, why string) KeySpec {
	k.Max, k.HasMax, k.MaxWhy = hi, true, why
	return k
}

// Budget bounds the value above by how many units of bytesPer bytes each
// (described by unit, "flit in each of 2 FIFOs") fit in MemoryBudget, the
// bound and message of CheckBudget.
func (k KeySpec) Budget(bytesPer int64, unit string) KeySpec {
	limit := BudgetLimit(bytesPer)
	return k.Limit(float64(limit), fmt.Sprintf("%d B per %s x %d = %s, the per-run memory budget", bytesPer, unit, limit, mib(limit*bytesPer)))
}

// Cycles bounds a count of clk's cycles to those that fit in limit
// (MaxDelay for a delay, MaxRun for a run), the bound of CheckCycles: a
// delay of 2^63 cycles overflowed clock.Time. An invalid clock (refused by
// Validate on its own key) leaves the spec as it is.
func (k KeySpec) Cycles(clk clock.Clock, limit clock.Time) KeySpec {
	if !clk.Valid() {
		return k
	}
	return k.Limit(float64(clk.CycleAt(limit)), fmt.Sprintf("%v of %v cycles", limit, clk))
}

// EntriesBudget bounds a list's length by how many entries of bytesPer
// bytes each (described by unit) fit in MemoryBudget, with CheckBudget's
// message.
func (k KeySpec) EntriesBudget(bytesPer int64, unit string) KeySpec {
	limit := BudgetLimit(bytesPer)
	return k.Entries(limit, fmt.Sprintf("%d B per %s x %d = %s, the per-run memory budget", bytesPer, unit, limit, mib(limit*bytesPer)))
}

// OneOf restricts a string key to values.
func (k KeySpec) OneOf(values ...string) KeySpec {
	k.Values = values
	return k
}

// Entries bounds a list's length to n, a limit explained by why.
func (k KeySpec) Entries(n int64, why string) KeySpec {
	k.MaxEntries, k.HasMaxEntries, k.EntriesWhy = n, true, why
	return k
}

// Also records a rule that ties the key to others (Note).
func (k KeySpec) Also(note string) KeySpec {
	k.Note = note
	return k
}

// From records where the default comes from.
func (k KeySpec) From(origin string) KeySpec {
	k.Origin = origin
	return k
}

// Keyed is implemented by Params that document and bound their keys.
// Keys may depend on the current values (a bound derived from another
// key, as the memory budget of a FIFO from its width); it must not fail
// on values Validate refuses.
type Keyed interface {
	Keys() []KeySpec
}

// KeysOf returns p's KeySpecs, or nil when p does not list them.
func KeysOf(p Params) []KeySpec {
	if k, ok := p.(Keyed); ok {
		return k.Keys()
	}
	return nil
}

// CheckKeys checks every value of p against its KeySpecs, in their order,
// and returns the first violation as a *KeyError; Validate methods call it
// first. A spec whose key names no field of p is an error too (a table
// that has drifted from its struct).
func CheckKeys(p Params) error {
	for _, k := range KeysOf(p) {
		v, ok := lookupValue(reflect.ValueOf(p), k.Key)
		if !ok {
			return &KeyError{Key: k.Key, Msg: "documented but not a parameter (the key table has drifted from its struct)"}
		}
		if err := k.check(v); err != nil {
			return err
		}
	}
	return nil
}

// check checks one value of the key's field.
func (k KeySpec) check(v reflect.Value) error {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return k.checkNumber(float64(v.Int()), true, "")
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return k.checkNumber(float64(v.Uint()), true, "")
	case reflect.Float32, reflect.Float64:
		return k.checkNumber(v.Float(), false, "")
	case reflect.String:
		if len(k.Values) > 0 && !contains(k.Values, v.String()) {
			return &KeyError{Key: k.Key, Msg: fmt.Sprintf("%q is not %s", v.String(), orList(k.Values))}
		}
	case reflect.Slice:
		if k.HasMaxEntries && int64(v.Len()) > k.MaxEntries {
			return &KeyError{Key: k.Key, Msg: fmt.Sprintf("above the limit %d (got %d; %s)", k.MaxEntries, v.Len(), k.EntriesWhy)}
		}
		for i := range v.Len() {
			if err := k.check(v.Index(i)); err != nil {
				if ke, ok := err.(*KeyError); ok {
					return &KeyError{Key: ke.Key, Msg: fmt.Sprintf("entry %d: %s", i, ke.Msg)}
				}
				return err
			}
		}
	}
	return nil
}

// CheckInt checks n against the spec's numeric bounds, for a key whose
// bound applies to a number derived from its text (the largest size of a
// distribution such as "1:0.5,20:0.5").
func (k KeySpec) CheckInt(n int64) error { return k.checkNumber(float64(n), true, "") }

// checkNumber checks x; integer says how to print it, what prefixes the
// message ("list length ").
func (k KeySpec) checkNumber(x float64, integer bool, what string) error {
	num := func(f float64) string {
		if integer && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return fmt.Sprintf("%d", int64(f))
		}
		return fmt.Sprintf("%g", f)
	}
	low := k.HasMin && (x < k.Min || (k.OpenMin && x == k.Min))
	high := k.HasMax && x > k.Max
	if !low && !high {
		return nil
	}
	if high && k.MaxWhy != "" {
		return &KeyError{Key: k.Key, Msg: fmt.Sprintf("%sabove the limit %s (got %s; %s)", what, num(k.Max), num(x), k.MaxWhy)}
	}
	if k.MaxWhy != "" {
		// Below the minimum of a key whose maximum is a limit: the
		// minimum alone ("must be at least 1"); the limit has its message.
		k.HasMax = false
	}
	r := k.rangeText(integer)
	if r == "not negative" {
		return &KeyError{Key: k.Key, Msg: fmt.Sprintf("%smust not be negative (got %s)", what, num(x))}
	}
	return &KeyError{Key: k.Key, Msg: fmt.Sprintf("%smust be %s (got %s)", what, r, num(x))}
}

// rangeText is the allowed range as the errors and `nisim config` write
// it: "1..64", "at least 1", "in [0, 1]", "in (0, 1]", "not negative",
// "at most 512"; "" when the key is not bounded.
func (k KeySpec) rangeText(integer bool) string {
	num := func(f float64) string {
		if integer && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return fmt.Sprintf("%d", int64(f))
		}
		return fmt.Sprintf("%g", f)
	}
	hi := num(k.Max)
	if k.MaxKey != "" {
		hi = k.MaxKey + " = " + hi
	}
	switch {
	case k.HasMin && k.HasMax && integer && !k.OpenMin:
		return num(k.Min) + ".." + hi
	case k.HasMin && k.HasMax:
		open := "["
		if k.OpenMin {
			open = "("
		}
		return fmt.Sprintf("in %s%s, %s]", open, num(k.Min), hi)
	case k.HasMin && k.Min == 0 && !k.OpenMin:
		return "not negative"
	case k.HasMin && k.OpenMin:
		return "above " + num(k.Min)
	case k.HasMin:
		return "at least " + num(k.Min)
	case k.HasMax:
		return "at most " + hi
	}
	return ""
}

// RangeText is the allowed range of the key as `nisim config` prints it,
// for a value of kind integer or not: "range 1..64 (why)", "one of a, b",
// "range 0..3, at most 4 entries (why)"; "" for an unbounded key.
func (k KeySpec) RangeText(integer bool) string {
	if len(k.Values) > 0 {
		return "one of " + strings.Join(k.Values, ", ")
	}
	r := k.rangeText(integer)
	if r != "" {
		r = "range " + r
	}
	if r != "" && k.HasMax && k.MaxWhy != "" {
		why := k.MaxWhy
		if strings.HasSuffix(why, "the per-run memory budget") {
			why = "memory budget"
		}
		r += " (" + why + ")"
	}
	if k.HasMaxEntries {
		if r != "" {
			r += ", "
		}
		r += fmt.Sprintf("at most %d entries (%s)", k.MaxEntries, k.EntriesWhy)
	}
	if k.Note != "" {
		if r != "" {
			r += ", "
		}
		r += k.Note
	}
	return r
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// orList writes "a, b or c".
func orList(vs []string) string {
	if len(vs) == 1 {
		return vs[0]
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// lookupValue follows the dotted key from v (a pointer to a Params
// struct) through `toml` tags, field names and embedded structs.
func lookupValue(v reflect.Value, key string) (reflect.Value, bool) {
	for _, part := range strings.Split(key, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f, ok := fieldValue(v, part)
		if !ok {
			return reflect.Value{}, false
		}
		v = f
	}
	return v, true
}

// fieldValue is fieldByKey on a value.
func fieldValue(v reflect.Value, k string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			if fv := reflect.Indirect(v.Field(i)); fv.Kind() == reflect.Struct {
				if x, ok := fieldValue(fv, k); ok {
					return x, true
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
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}
