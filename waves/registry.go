package waves

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
)

// Kind is the VCD type of a signal.
type Kind uint8

// Signal kinds.
const (
	// Wire is a 1..64-bit vector (a single bit for flags).
	Wire Kind = iota
	// Integer is a counter or occupancy, 1..64 bits, shown as a number.
	Integer
	// Real is a float64 (VCD "real").
	Real
	// String is an FSM state name (GTKWave's "$var string" extension).
	String
)

func (k Kind) String() string {
	switch k {
	case Wire:
		return "wire"
	case Integer:
		return "integer"
	case Real:
		return "real"
	case String:
		return "string"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Options configure a Registry.
type Options struct {
	// Select lists glob patterns over hierarchical signal names
	// ("host.bus.state"). A signal is dumped when a pattern matches its name
	// or one of its enclosing scopes ("host.bus" selects every signal of the
	// bus). Empty means everything. '*' matches any run of characters, dots
	// included; '?' matches one character. A pattern goes through
	// ScopeName first, like the names, so a component's Akita name as its
	// trace records show it ("N0.NI.SDMA", "Host.Bus") selects it too.
	Select []string
	// Exclude removes signals that a pattern matches, after Select.
	Exclude []string
	// From and To bound the dumped time window in picoseconds; To == 0
	// means no upper bound.
	From, To clock.Time
	// History keeps the last History value changes in memory so that a
	// failing test can dump the waveform leading up to the failure
	// (WriteHistory). 0 disables it.
	History int
}

// Registry is the set of signals of one simulation. Components declare their
// signals when they are built and report value changes as they happen;
// nothing is sampled per cycle. A nil *Registry is valid: it declares nil
// signals, whose Set methods return after one nil check.
//
// Value changes arrive in non-decreasing time (components tick in time
// order). Changes within one picosecond are collected and emitted together
// when time advances, in declaration order, keeping the last value of each
// signal, so the output does not depend on the order in which components
// ran within that picosecond.
type Registry struct {
	opts    Options
	signals []*Signal
	byName  map[string]*Signal
	sel     []string        // opts.Select through ScopeName
	excl    []string        // opts.Exclude through ScopeName
	names   map[string]bool // every declared name, selected or not; lookup only
	scopes  map[string]bool // every scope enclosing a declared name; lookup only
	// scopeConv maps a declared scope as given to its ScopeName, for the
	// scopes whose names passed CheckName; lookup only.
	scopeConv map[string]string
	frozen    bool // no more declarations: dumping has begun
	begun     bool // stepTime is valid
	err       error

	stepTime clock.Time
	dirty    []*Signal

	vcd     *vcdWriter
	hist    *history
	strings []string          // interned string values; index 0 is "x", unset
	strIdx  map[string]uint64 // lookup only, never iterated
	changes uint64
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	r := &Registry{
		opts:      opts,
		byName:    map[string]*Signal{},
		names:     map[string]bool{},
		scopes:    map[string]bool{},
		scopeConv: map[string]string{},
		strings:   []string{"x"},
		strIdx:    map[string]uint64{"x": 0},
	}
	for _, p := range opts.Select {
		r.sel = append(r.sel, ScopeName(p))
	}
	for _, p := range opts.Exclude {
		r.excl = append(r.excl, ScopeName(p))
	}
	if opts.History > 0 {
		r.hist = newHistory(opts.History)
	}
	return r
}

// Signal is one traced value. A nil *Signal ignores every call.
type Signal struct {
	reg       *Registry
	idx       int
	kind      Kind
	width     int
	mask      uint64
	scope     string
	name      string
	cur       uint64 // value, float64 bits for Real, string index for String
	committed uint64
	dirty     bool
	id        string // VCD identifier code, assigned when dumping starts
}

// Name returns the hierarchical name, scope + "." + name.
func (s *Signal) Name() string {
	if s.scope == "" {
		return s.name
	}
	return s.scope + "." + s.name
}

// Kind returns the signal's kind.
func (s *Signal) Kind() Kind { return s.kind }

// Width returns the width in bits (64 for reals, 1 for strings).
func (s *Signal) Width() int { return s.width }

// Wire declares a vector of width bits (1 for a flag) in scope, usually the
// declaring component's name. It returns nil when r is nil or the signal is
// not selected.
func (r *Registry) Wire(scope, name string, width int) *Signal {
	return r.declare(scope, name, Wire, width)
}

// Integer declares a counter of width bits.
func (r *Registry) Integer(scope, name string, width int) *Signal {
	return r.declare(scope, name, Integer, width)
}

// Real declares a float64 signal.
func (r *Registry) Real(scope, name string) *Signal {
	return r.declare(scope, name, Real, 64)
}

// String declares a signal whose values are short strings such as FSM state
// names. Values may not contain white space.
func (r *Registry) String(scope, name string) *Signal {
	return r.declare(scope, name, String, 1)
}

// WidthFor returns the number of bits that hold values 0..max, at least 1.
func WidthFor(maxValue uint64) int {
	return max(bits.Len64(maxValue), 1)
}

func (r *Registry) declare(scope, name string, k Kind, width int) *Signal {
	if r == nil {
		return nil
	}
	rawScope := scope
	scope, scopeChecked := r.scopeConv[rawScope]
	if !scopeChecked {
		scope = ScopeName(rawScope)
	}
	name = ScopeName(name)
	full := scope + "." + name
	if scope == "" {
		full = name
	}
	switch {
	case r.frozen:
		r.fail(fmt.Errorf("waves: signal %s declared after the simulation started", full))
		return nil
	case width < 1 || width > 64:
		r.fail(fmt.Errorf("waves: signal %s has width %d, want 1..64", full, width))
		return nil
	case name == "" || strings.ContainsAny(full, " \t\r\n"):
		r.fail(fmt.Errorf("waves: invalid signal name %q", full))
		return nil
	case r.names[full]:
		r.fail(fmt.Errorf("waves: signal %s declared twice", full))
		return nil
	}
	// A scope that passed once needs only its new last part checked: the
	// scopes of big systems hold many signals each.
	if scopeChecked {
		if err := checkLast(full, scope, name); err != nil {
			r.fail(err)
			return nil
		}
	} else {
		if err := CheckName(full); err != nil {
			r.fail(err)
			return nil
		}
		if scope != "" {
			r.scopeConv[rawScope] = scope
		}
	}
	if err := r.claimScopes(full); err != nil {
		r.fail(err)
		return nil
	}
	if !r.selected(full) {
		return nil
	}
	s := &Signal{reg: r, idx: len(r.signals), kind: k, width: width, scope: scope, name: name,
		id: idCode(len(r.signals))}
	s.mask = math.MaxUint64 // reals hold float bits, strings an index
	if (k == Wire || k == Integer) && width < 64 {
		s.mask = 1<<uint(width) - 1
	}
	r.signals = append(r.signals, s)
	r.byName[full] = s
	return s
}

// claimScopes records the scopes enclosing full and refuses a name that is
// both a signal and a scope (n0.bridge.down.credits as a counter and as
// the scope of a FIFO's signals), which a viewer shows as two rows of one
// name.
func (r *Registry) claimScopes(full string) error {
	if r.scopes[full] {
		return fmt.Errorf("waves: name %s is both a scope and a signal", full)
	}
	for i := len(full) - 1; i > 0; i-- {
		if full[i] != '.' {
			continue
		}
		s := full[:i]
		if r.names[s] {
			return fmt.Errorf("waves: name %s is both a scope and a signal", s)
		}
		if r.scopes[s] {
			break // its enclosing scopes are recorded too
		}
		r.scopes[s] = true
	}
	r.names[full] = true
	return nil
}

func (r *Registry) selected(full string) bool {
	in := len(r.sel) == 0 || matchAny(r.sel, full)
	return in && !matchAny(r.excl, full)
}

// matchAny reports whether a pattern matches name or one of its scopes.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		for n := name; ; {
			if Match(p, n) {
				return true
			}
			i := strings.LastIndexByte(n, '.')
			if i < 0 {
				break
			}
			n = n[:i]
		}
	}
	return false
}

// Match reports whether the glob pattern matches the whole of name. '*'
// matches any run of characters (dots included) and '?' any one character.
func Match(pattern, name string) bool {
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			// Checked first: a '*' in the pattern is a wildcard even where
			// the name holds a literal '*'.
			star, mark = p, n
			p++
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == name[n]):
			p++
			n++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// Signals returns the declared (selected) signals in declaration order.
func (r *Registry) Signals() []*Signal {
	if r == nil {
		return nil
	}
	return r.signals
}

// UnusedSelects returns, in the order given, the Select patterns that no
// dumped signal matches (by its name or one of its scopes): a pattern that
// matched nothing, or only signals that Exclude then removed. A command
// warns about them, since they leave a dump without what was asked for.
func (r *Registry) UnusedSelects() []string {
	if r == nil {
		return nil
	}
	var unused []string
	for i, p := range r.opts.Select {
		used := false
		for _, s := range r.signals {
			if matchAny(r.sel[i:i+1], s.Name()) {
				used = true
				break
			}
		}
		if !used {
			unused = append(unused, p)
		}
	}
	return unused
}

// Lookup returns the signal with the given hierarchical name, or nil.
func (r *Registry) Lookup(name string) *Signal {
	if r == nil {
		return nil
	}
	return r.byName[name]
}

// Err returns the first error the registry met (a bad declaration, a value
// change back in time, a failed write).
func (r *Registry) Err() error {
	if r == nil {
		return nil
	}
	return r.err
}

func (r *Registry) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Changes returns the number of value changes emitted so far.
func (r *Registry) Changes() uint64 {
	if r == nil {
		return 0
	}
	return r.changes
}

// Set records that the signal has value v from time t on. Bits above the
// signal's width are dropped.
func (s *Signal) Set(t clock.Time, v uint64) {
	if s != nil { // small enough to inline: a disabled signal costs a comparison
		s.set(t, v)
	}
}

func (s *Signal) set(t clock.Time, v uint64) {
	r := s.reg
	if t != r.stepTime || !r.begun {
		r.advance(t) // emits the previous step before this value replaces it
	}
	v &= s.mask
	if v == s.cur {
		return
	}
	s.cur = v
	if !s.dirty {
		s.dirty = true
		r.dirty = append(r.dirty, s)
	}
}

// SetBool sets a 1-bit signal to 1 or 0.
func (s *Signal) SetBool(t clock.Time, b bool) {
	if s != nil {
		var v uint64
		if b {
			v = 1
		}
		s.set(t, v)
	}
}

// SetReal records a float value.
func (s *Signal) SetReal(t clock.Time, f float64) {
	if s == nil {
		return
	}
	s.Set(t, math.Float64bits(f))
}

// SetString records a string value, such as an FSM state name.
func (s *Signal) SetString(t clock.Time, v string) {
	if s == nil {
		return
	}
	s.Set(t, s.reg.intern(v))
}

// Value returns the current raw value (float bits for reals, an interned
// index for strings); see Registry.Format.
func (s *Signal) Value() uint64 {
	if s == nil {
		return 0
	}
	return s.cur
}

func (r *Registry) intern(v string) uint64 {
	if i, ok := r.strIdx[v]; ok {
		return i
	}
	if v == "" || strings.ContainsAny(v, " \t\r\n") {
		r.fail(fmt.Errorf("waves: string value %q is empty or has white space", v))
		v = strings.Join(strings.Fields(v), "_")
		if v == "" {
			v = "_"
		}
	}
	i := uint64(len(r.strings))
	r.strings = append(r.strings, v)
	r.strIdx[v] = i
	return i
}

func (r *Registry) advance(t clock.Time) {
	if !r.begun {
		r.begun = true
		r.stepTime = t
		return
	}
	if t < r.stepTime {
		r.fail(fmt.Errorf("waves: value change at %v after a change at %v", t, r.stepTime))
		return
	}
	r.commit()
	r.stepTime = t
}

// commit emits the changes of the current step.
func (r *Registry) commit() {
	if len(r.dirty) == 0 {
		return
	}
	r.Start()
	slices.SortFunc(r.dirty, func(a, b *Signal) int { return a.idx - b.idx })
	if r.vcd != nil {
		r.vcd.step(r.stepTime, r.dirty)
	}
	for _, s := range r.dirty {
		s.dirty = false
		if s.cur == s.committed {
			continue
		}
		if r.hist != nil {
			r.hist.add(r.stepTime, s.idx, s.committed, s.cur)
		}
		s.committed = s.cur
		r.changes++
	}
	r.dirty = r.dirty[:0]
}

// Start ends the declaration phase: the signal set is fixed and a VCD
// header can be written. It is called by the first emitted step at the
// latest; declaring a signal afterwards is an error.
func (r *Registry) Start() {
	if r == nil || r.frozen {
		return
	}
	r.frozen = true
	if r.vcd != nil {
		r.vcd.header()
	}
}

// Flush emits the changes of the current picosecond. Call it when the
// simulation ends (or before reading History) so the last step is included.
func (r *Registry) Flush() {
	if r == nil {
		return
	}
	r.commit()
}
