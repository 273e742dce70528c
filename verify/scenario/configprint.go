package scenario

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// ConfigWidth is the width `nisim config` lines fit in (a value longer
// than a line, a long list, is the only exception).
const ConfigWidth = 100

// Sources says where the value of each key of an effective configuration
// came from: the embedded default, the --config file, or a --set.
type Sources struct {
	// File is the --config file ("" for none).
	File string
	file []string // lower-case dotted keys the file sets
	sets []string // lower-case keys of the --set arguments
}

// SourcesOf records the keys that the file (a TOML document that
// Configure has accepted, read again; not standard input, see
// SourcesOfData) and the --set arguments give. A key set by both
// comes from --set, which Configure applies last.
func SourcesOf(file string, sets []string) Sources {
	var data []byte
	if file != "" && file != StdinConfig {
		data, _ = ReadConfig(file)
	}
	return SourcesOfData(file, data, sets)
}

// SourcesOfData is SourcesOf with the file's contents given: standard
// input (--config -) cannot be read twice, so the command reads it once
// for ConfigureData and for this.
func SourcesOfData(file string, data []byte, sets []string) Sources {
	s := Sources{File: file}
	if file != "" {
		var m map[string]any
		if toml.Unmarshal(data, &m) == nil {
			s.file = flatten("", m, nil)
		}
	}
	for _, a := range sets {
		k, _, _ := strings.Cut(a, "=")
		s.sets = append(s.sets, strings.ToLower(strings.TrimSpace(k)))
	}
	return s
}

// flatten lists the dotted keys of the leaves of a decoded TOML table,
// sorted (a table value is walked; any other value is a leaf).
func flatten(prefix string, m map[string]any, out []string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		full := strings.ToLower(k)
		if prefix != "" {
			full = prefix + "." + full
		}
		if sub, ok := m[k].(map[string]any); ok {
			out = flatten(full, sub, out)
			continue
		}
		out = append(out, full)
	}
	return out
}

// Of returns where key's value came from: "--set", "--config FILE" or
// "default". A --set or file entry of a whole table (firmware.costs = {...})
// counts for every key under it.
func (s Sources) Of(key string) string {
	key = strings.ToLower(key)
	under := func(list []string) bool {
		for _, k := range list {
			if k == key || strings.HasPrefix(key, k+".") {
				return true
			}
		}
		return false
	}
	switch {
	case under(s.sets):
		return "--set"
	case under(s.file):
		return "--config " + s.File
	}
	return "default"
}

// ConfigEntry is one key of an effective configuration.
type ConfigEntry struct {
	// Key is the dotted key, Value the field's value (an int, float64,
	// string, bool or list), TOML the value as the TOML text prints it.
	Key   string
	Value any
	TOML  string
	// Spec is the key's KeySpec (a zero Spec, Key "", when the scenario
	// documents none).
	Spec KeySpec
	// Integer says the value is an integer (or a list of integers).
	Integer bool
	// Source is where the value came from (Sources.Of).
	Source string
}

// Comment is the key's comment line as `nisim config` prints it, before
// wrapping: "unit; range R; source" with the default's origin, the empty
// parts left out.
func (c ConfigEntry) Comment() string {
	var parts []string
	if c.Spec.Unit != "" {
		parts = append(parts, c.Spec.Unit)
	}
	if r := c.Spec.RangeText(c.Integer); r != "" {
		parts = append(parts, r)
	}
	src := c.Source
	if src == "default" && c.Spec.Origin != "" {
		src += " (" + c.Spec.Origin + ")"
	}
	return strings.Join(append(parts, src), "; ")
}

// EffectiveConfig lists every key of p in the order the TOML text prints
// them, with its value, KeySpec and source.
func EffectiveConfig(p Params, src Sources) ([]ConfigEntry, error) {
	text, err := Dump(p)
	if err != nil {
		return nil, err
	}
	specs := KeysOf(p)
	var out []ConfigEntry
	forEachKey(text, func(key, value string) {
		e := ConfigEntry{Key: key, TOML: value, Source: src.Of(key)}
		for _, s := range specs {
			if strings.EqualFold(s.Key, key) {
				e.Spec = s
				break
			}
		}
		if v, ok := lookupValue(reflect.ValueOf(p), key); ok {
			e.Value = v.Interface()
			// A text whose bound is on a number derived from it (the
			// largest size of a distribution) has integer bounds.
			e.Integer = isInteger(v.Type()) || (v.Kind() == reflect.String && (e.Spec.HasMin || e.Spec.HasMax))
		}
		out = append(out, e)
	})
	return out, nil
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.Slice, reflect.Array:
		return isInteger(t.Elem())
	}
	return false
}

// forEachKey calls f with the dotted key and the value text of every
// key = value line of a TOML text as Dump writes it (tables as [a.b]
// headers, one key per line).
func forEachKey(text string, f func(key, value string)) {
	table := ""
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
		case strings.HasPrefix(t, "["):
			table = strings.Trim(t, "[] ")
		default:
			k, v, ok := strings.Cut(t, " = ")
			if !ok {
				continue
			}
			k = strings.Trim(k, `'"`)
			if table != "" {
				k = table + "." + k
			}
			f(k, v)
		}
	}
}

// WriteConfig writes p as TOML that --config reads back to the same
// effective configuration: a header naming the scenario, then Dump's text
// with each key preceded by its comment (ConfigEntry.Comment) wrapped to
// ConfigWidth columns.
func WriteConfig(w io.Writer, name string, p Params, src Sources) error {
	text, err := Dump(p)
	if err != nil {
		return err
	}
	entries, err := EffectiveConfig(p, src)
	if err != nil {
		return err
	}
	var b strings.Builder
	writeComment(&b, fmt.Sprintf("The effective configuration of %s, read back by 'nisim run %s --config FILE'.", name, name))
	writeComment(&b, "Above each key: its unit; its allowed range (what the run enforces); where the value came from: "+
		"the default (with the default's origin where the code gives one), --config FILE or --set.")
	b.WriteString("\n")
	i := 0
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "#") && strings.Contains(t, " = ") && i < len(entries) {
			writeComment(&b, entries[i].Comment())
			i++
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// writeComment writes s as TOML comment lines of at most ConfigWidth
// runes, broken at spaces, continuation lines indented under the text.
func writeComment(w io.Writer, s string) {
	var buf strings.Builder
	writeWrapped(&buf, "# ", s, ConfigWidth)
	for i, l := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if i > 0 {
			l = "#  " + strings.TrimPrefix(l, "  ")
		}
		fmt.Fprintln(w, l)
	}
}
