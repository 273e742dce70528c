package vcd

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// maxWidth bounds the declared size of a variable (16 Mi bits), so that a
// corrupt size cannot make the reader allocate gigabytes.
const maxWidth = 1 << 24

// varTypes maps the accepted $var types to their kinds: the IEEE 1364-2005
// types, GTKWave's string and common SystemVerilog ones.
var varTypes = map[string]Kind{
	"event": Wire, "integer": Integer, "parameter": Wire, "real": Real,
	"realtime": Real, "reg": Wire, "supply0": Wire, "supply1": Wire,
	"time": Wire, "tri": Wire, "triand": Wire, "trior": Wire,
	"trireg": Wire, "tri0": Wire, "tri1": Wire, "wand": Wire, "wire": Wire,
	"wor": Wire,
	// GTKWave extension.
	"string": String,
	// SystemVerilog.
	"logic": Wire, "bit": Wire, "enum": Wire, "int": Integer,
	"shortint": Integer, "longint": Integer, "byte": Integer,
	"shortreal": Real,
}

// scopeTypes are the accepted $scope types: IEEE 1364-2005 and common
// extensions.
var scopeTypes = map[string]bool{
	"module": true, "task": true, "function": true, "begin": true, "fork": true,
	"generate": true, "struct": true, "union": true, "class": true,
	"interface": true, "package": true, "program": true,
}

// keyword returns the keyword tok spells if it is one of the IEEE ones, or
// "".
func keyword(tok []byte) string {
	switch string(tok) {
	case "$end":
		return "$end"
	case "$comment":
		return "$comment"
	case "$date":
		return "$date"
	case "$enddefinitions":
		return "$enddefinitions"
	case "$scope":
		return "$scope"
	case "$timescale":
		return "$timescale"
	case "$upscope":
		return "$upscope"
	case "$var":
		return "$var"
	case "$version":
		return "$version"
	case "$dumpall":
		return "$dumpall"
	case "$dumpoff":
		return "$dumpoff"
	case "$dumpon":
		return "$dumpon"
	case "$dumpvars":
		return "$dumpvars"
	}
	return ""
}

type scopeEntry struct {
	name string
	line int
}

type parser struct {
	sc      *scanner
	f       *File
	errs    []Error
	limit   int  // stop after this many errors; 0: no limit
	stopped bool // fatal error or limit reached
	anyTok  bool
	last    int // line of the last token

	inBody       bool
	junk         bool // reported text outside sections; until the next section
	scopes       []scopeEntry
	scopePath    string
	tsLine       int // line of $timescale, 0 if none yet
	dateLine     int
	versionLine  int
	comments     []string
	ids          map[string]int
	haveTime     bool
	now          int64
	noTimeWarned bool
	val          []byte
}

func newParser(r io.Reader, limit int) *parser {
	return &parser{
		sc:    newScanner(r),
		f:     &File{byName: map[string]*Var{}},
		limit: limit,
		ids:   map[string]int{},
	}
}

func (p *parser) errorf(line int, format string, args ...any) {
	if p.stopped {
		return
	}
	p.errs = append(p.errs, Error{Line: line, Msg: fmt.Sprintf(format, args...)})
	if p.limit > 0 && len(p.errs) >= p.limit {
		p.stopped = true
	}
}

// sorted returns the errors in line order.
func (p *parser) sorted() []Error {
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	return p.errs
}

// quote quotes a token for a message, shortening a long one.
func quote(tok []byte) string {
	const max = 40
	if len(tok) > max {
		return strconv.Quote(string(tok[:max])) + "..."
	}
	return strconv.Quote(string(tok))
}

// next advances to the next token; false at the end of the input, after a
// fatal error, or once the error limit is reached.
func (p *parser) next() bool {
	if p.stopped {
		return false
	}
	if p.sc.next() {
		p.anyTok = true
		p.last = p.sc.tokLine
		return true
	}
	if p.sc.fatal != "" {
		p.errorf(p.sc.fatalLine, "%s", p.sc.fatal)
		p.stopped = true
	}
	return false
}

func (p *parser) run() {
	for p.next() {
		if p.inBody {
			p.bodyToken()
		} else {
			p.headerToken()
		}
	}
	if p.stopped {
		return
	}
	if !p.anyTok {
		p.errorf(1, "empty file")
		return
	}
	if !p.inBody {
		p.errorf(p.last, "missing $enddefinitions (end of file in the header)")
		p.endHeader(p.last)
	}
	p.f.Comment = strings.Join(p.comments, "\n")
}

// collect reads the tokens of a section up to its $end and returns the
// first few of them and their count. $comment sections inside are skipped.
// A missing $end is reported at line, the line of the keyword; if another
// IEEE keyword turns up instead, it is left for the caller's loop.
func (p *parser) collect(kw string, line int) (toks []string, n int) {
	for p.next() {
		t := p.sc.tok
		if t[0] == '$' {
			switch keyword(t) {
			case "$end":
				return toks, n
			case "$comment":
				p.freeText("$comment", p.sc.tokLine, false)
				continue
			case "":
			default:
				p.errorf(line, "%s section has no $end", kw)
				p.sc.unread = true
				return toks, n
			}
		}
		if n < 8 {
			toks = append(toks, string(t))
		}
		n++
	}
	p.errorf(line, "%s section has no $end (end of file)", kw)
	return toks, n
}

// freeText reads the text of a $comment, $date or $version section up to
// its $end; with capture, it returns it trimmed.
func (p *parser) freeText(kw string, line int, capture bool) (string, bool) {
	sc := p.sc
	sc.capture = capture
	sc.capBuf = sc.capBuf[:0]
	defer func() { sc.capture = false }()
	for {
		mark := len(sc.capBuf)
		if !p.next() {
			break
		}
		if keyword(sc.tok) == "$end" {
			return strings.TrimSpace(string(sc.capBuf[:mark])), true
		}
	}
	p.errorf(line, "%s section has no $end (end of file)", kw)
	return "", false
}

func (p *parser) headerToken() {
	tok, line := p.sc.tok, p.sc.tokLine
	if tok[0] != '$' {
		if tok[0] == '#' {
			p.errorf(line, "missing $enddefinitions before the first #time")
			p.endHeader(line)
			p.inBody = true
			p.sc.unread = true
			return
		}
		if !p.junk {
			p.errorf(line, "unexpected text %s outside a section", quote(tok))
			p.junk = true
		}
		return
	}
	p.junk = false
	kw := keyword(tok)
	switch kw {
	case "$end":
		p.errorf(line, "$end without a section")
	case "$comment":
		if text, ok := p.freeText(kw, line, true); ok && text != "" {
			p.comments = append(p.comments, text)
		}
	case "$date":
		text, _ := p.freeText(kw, line, true)
		if p.dateLine != 0 {
			p.errorf(line, "duplicate $date (first at line %d)", p.dateLine)
			return
		}
		p.dateLine, p.f.Date = line, text
	case "$version":
		text, _ := p.freeText(kw, line, true)
		if p.versionLine != 0 {
			p.errorf(line, "duplicate $version (first at line %d)", p.versionLine)
			return
		}
		p.versionLine, p.f.Version = line, text
	case "$timescale":
		p.timescale(line)
	case "$scope":
		p.scope(line)
	case "$upscope":
		p.upscope(line)
	case "$var":
		p.variable(line)
	case "$enddefinitions":
		if _, n := p.collect(kw, line); n > 0 {
			p.errorf(line, "unexpected text in $enddefinitions")
		}
		p.endHeader(line)
		p.inBody = true
	case "$dumpvars", "$dumpall", "$dumpon", "$dumpoff":
		p.errorf(line, "missing $enddefinitions before %s", kw)
		p.endHeader(line)
		p.inBody = true
		p.sc.unread = true
	default:
		kw = string(tok)
		p.errorf(line, "unknown keyword %s", quote(tok))
		p.collect(kw, line)
	}
}

// endHeader makes the checks due at $enddefinitions.
func (p *parser) endHeader(line int) {
	if p.tsLine == 0 {
		p.errorf(line, "missing $timescale")
	}
	if n := len(p.scopes); n > 0 {
		in := p.scopes[n-1]
		p.errorf(line, "%d scope(s) still open at the end of the definitions (innermost %q, opened at line %d)",
			n, in.name, in.line)
		p.scopes, p.scopePath = nil, ""
	}
}

var timeUnits = map[string]bool{"s": true, "ms": true, "us": true, "ns": true, "ps": true, "fs": true}

func (p *parser) timescale(line int) {
	toks, n := p.collect("$timescale", line)
	if p.tsLine != 0 {
		p.errorf(line, "duplicate $timescale (first at line %d)", p.tsLine)
		return
	}
	p.tsLine = line
	var num, unit string
	switch n {
	case 1:
		s := toks[0]
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		num, unit = s[:i], s[i:]
	case 2:
		num, unit = toks[0], toks[1]
	}
	if (num != "1" && num != "10" && num != "100") || !timeUnits[unit] {
		p.errorf(line, "malformed $timescale %q: want 1, 10 or 100 followed by s, ms, us, ns, ps or fs",
			strings.Join(toks, " "))
		return
	}
	p.f.TimescaleNum, _ = strconv.Atoi(num)
	p.f.TimescaleUnit = unit
}

func (p *parser) scope(line int) {
	toks, n := p.collect("$scope", line)
	switch {
	case n != 2:
		p.errorf(line, "$scope needs a scope type and a name, got %d token(s)", n)
	case !scopeTypes[toks[0]]:
		p.errorf(line, "unknown scope type %q", toks[0])
	}
	name := "?"
	if n > 0 {
		name = toks[min(n, 2)-1]
	}
	p.scopes = append(p.scopes, scopeEntry{name, line})
	if p.scopePath == "" {
		p.scopePath = name
	} else {
		p.scopePath += "." + name
	}
}

func (p *parser) upscope(line int) {
	if _, n := p.collect("$upscope", line); n > 0 {
		p.errorf(line, "unexpected text in $upscope")
	}
	if len(p.scopes) == 0 {
		p.errorf(line, "$upscope without an open $scope")
		return
	}
	p.scopes = p.scopes[:len(p.scopes)-1]
	p.scopePath = ""
	for i, s := range p.scopes {
		if i > 0 {
			p.scopePath += "."
		}
		p.scopePath += s.name
	}
}

// valueClass tells which values a kind takes: bits, real or string.
func valueClass(k Kind) Kind {
	if k == Integer {
		return Wire
	}
	return k
}

func (p *parser) variable(line int) {
	toks, n := p.collect("$var", line)
	if len(p.scopes) == 0 {
		p.errorf(line, "$var outside any $scope")
	}
	if n != 4 && n != 5 {
		p.errorf(line, "$var needs a type, a size, an identifier code and a reference (and an optional bit-select), got %d token(s)", n)
		if n >= 3 && validID(toks[2]) {
			p.declare(toks[2], signal{lax: true, name: toks[2]}, line)
		}
		return
	}
	typ, size, id, ref := toks[0], toks[1], toks[2], toks[3]
	bad := false
	kind, ok := varTypes[typ]
	if !ok {
		p.errorf(line, "unknown variable type %q", typ)
		bad = true
	}
	width, ok := parseSize(size)
	switch {
	case !ok:
		p.errorf(line, "size %q is not a positive decimal integer", size)
		bad = true
	case width > maxWidth:
		p.errorf(line, "size %d is too large (at most %d)", width, maxWidth)
		bad = true
	case width == 0 && kind != String:
		p.errorf(line, "size %q is not a positive decimal integer", size)
		bad = true
	case kind == Real && width != 32 && width != 64:
		p.errorf(line, "%s variable must have size 32 or 64, not %d", typ, width)
		bad = true
	}
	rng := ""
	if n == 5 {
		rng = toks[4]
		w, ok := bitSelectWidth(rng)
		switch {
		case !ok:
			p.errorf(line, "malformed bit-select %q", rng)
			bad = true
		case !bad && w != width:
			p.errorf(line, "bit-select %s is %d bit(s) wide but the size is %d", rng, w, width)
			bad = true
		}
	}
	if !validID(id) {
		p.errorf(line, "identifier code %q has a character outside '!'..'~'", id)
		return
	}
	v := &Var{Scope: p.scopePath, Name: ref, Type: typ, Kind: kind, Width: width, ID: id, Range: rng, Line: line}
	full := v.FullName()
	sig, ok := p.declare(id, signal{kind: kind, typ: typ, width: width, lax: bad, name: full}, line)
	if !ok || bad {
		return
	}
	if prev := p.f.byName[full]; prev != nil {
		p.errorf(line, "%q is already declared at line %d", full, prev.Line)
		return
	}
	v.sig = sig
	p.f.byName[full] = v
	p.f.Vars = append(p.f.Vars, v)
}

// declare registers a variable's identifier code, or checks that an alias
// agrees with the first declaration of the code.
func (p *parser) declare(id string, s signal, line int) (int, bool) {
	i, seen := p.ids[id]
	if !seen {
		p.ids[id] = len(p.f.sigs)
		s.line = line
		p.f.sigs = append(p.f.sigs, s)
		return len(p.f.sigs) - 1, true
	}
	old := &p.f.sigs[i]
	if !s.lax && !old.lax && (valueClass(old.kind) != valueClass(s.kind) || old.width != s.width) {
		p.errorf(line, "identifier code %q is already declared at line %d as %s %d; an alias needs the same size and value kind",
			id, old.line, old.typ, old.width)
		return i, false
	}
	return i, true
}

// parseSize parses a decimal size; values above maxWidth come back as
// maxWidth+1.
func parseSize(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = min(n*10+int(c-'0'), maxWidth+1)
	}
	return n, true
}

// bitSelectWidth returns the width of a bit-select "[n]" or "[m:l]".
func bitSelectWidth(s string) (int, bool) {
	if len(s) < 3 || s[0] != '[' || s[len(s)-1] != ']' {
		return 0, false
	}
	msb, lsb, pair := strings.Cut(s[1:len(s)-1], ":")
	m, ok1 := parseIndex(msb)
	if !pair {
		return 1, ok1
	}
	l, ok2 := parseIndex(lsb)
	if !ok1 || !ok2 {
		return 0, false
	}
	if m < l {
		m, l = l, m
	}
	return m - l + 1, true
}

// parseIndex parses an optionally negative decimal of at most 9 digits.
func parseIndex(s string) (int, bool) {
	s, neg := strings.CutPrefix(s, "-")
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func validID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '!' || id[i] > '~' {
			return false
		}
	}
	return true
}

func (p *parser) bodyToken() {
	tok, line := p.sc.tok, p.sc.tokLine
	switch tok[0] {
	case '#':
		p.timestamp()
		return
	case '$':
	default:
		p.change()
		return
	}
	kw := keyword(tok)
	switch kw {
	case "$end":
		p.errorf(line, "$end without a section")
	case "$comment":
		p.freeText(kw, line, false)
	case "$dumpvars", "$dumpall", "$dumpon", "$dumpoff":
		p.dump(kw, line)
	case "$date", "$version":
		p.errorf(line, "%s after $enddefinitions", kw)
		p.freeText(kw, line, false)
	case "$enddefinitions":
		p.errorf(line, "duplicate $enddefinitions")
		p.collect(kw, line)
	case "$var", "$scope", "$upscope", "$timescale":
		p.errorf(line, "%s after $enddefinitions", kw)
		p.collect(kw, line)
	default:
		kw = string(tok)
		p.errorf(line, "unknown keyword %s", quote(tok))
		p.collect(kw, line)
	}
}

// dump reads the value changes of a $dumpvars, $dumpall, $dumpon or
// $dumpoff section.
func (p *parser) dump(kw string, line int) {
	for p.next() {
		tok := p.sc.tok
		switch tok[0] {
		case '$':
			switch keyword(tok) {
			case "$end":
				return
			case "$comment":
				p.freeText("$comment", p.sc.tokLine, false)
				continue
			}
		case '#':
		default:
			p.change()
			continue
		}
		p.errorf(line, "%s section has no $end", kw)
		p.sc.unread = true
		return
	}
	p.errorf(line, "%s section has no $end (end of file)", kw)
}

func (p *parser) timestamp() {
	tok, line := p.sc.tok, p.sc.tokLine
	d := tok[1:]
	if len(d) == 0 {
		p.errorf(line, "malformed time %s: want # followed by a non-negative decimal", quote(tok))
		return
	}
	var t int64
	for _, c := range d {
		if c < '0' || c > '9' {
			p.errorf(line, "malformed time %s: want # followed by a non-negative decimal", quote(tok))
			return
		}
		if t > (1<<63-1-9)/10 {
			p.errorf(line, "time %s is too large", quote(tok))
			return
		}
		t = t*10 + int64(c-'0')
	}
	if p.haveTime && t < p.now {
		p.errorf(line, "time #%d goes backwards (previous #%d)", t, p.now)
		return
	}
	p.now, p.haveTime = t, true
	p.f.EndTime = t
}

// change checks and records the value change in p.sc.tok.
func (p *parser) change() {
	sc := p.sc
	tok, line := sc.tok, sc.tokLine
	var val, id []byte
	switch tok[0] {
	case '0', '1', 'x', 'X', 'z', 'Z':
		val, id = tok[:1], tok[1:]
		if len(id) == 0 {
			p.errorf(line, "scalar value change %s has no identifier code (it must follow the value without a space)", quote(tok))
			// Skip what is probably the separated identifier code.
			if p.next() && sc.tokLine != line {
				sc.unread = true
			}
			return
		}
	case 'b', 'B', 'r', 'R', 's', 'S':
		p.val = append(p.val[:0], tok...) // tok dies with the next token
		val = p.val
		if !p.next() || sc.tokLine != line {
			if !p.stopped {
				p.errorf(line, "value change %s has no identifier code on its line", quote(val))
				if sc.tok != nil {
					sc.unread = true
				}
			}
			return
		}
		id = sc.tok
	default:
		p.errorf(line, "malformed value change %s", quote(tok))
		return
	}
	if !p.haveTime && !p.noTimeWarned {
		p.errorf(line, "value change before the first #time")
		p.noTimeWarned = true
	}
	ok := p.checkSyntax(val, line)
	idx, declared := p.ids[string(id)]
	if !declared {
		p.errorf(line, "undeclared identifier %s", quote(id))
		return
	}
	s := &p.f.sigs[idx]
	if !ok || (!s.lax && !p.checkType(s, val, line)) || !p.haveTime {
		return
	}
	s.recs = append(s.recs, rec{time: p.now, off: len(p.f.arena), n: uint32(len(val)), line: int32(line)})
	p.f.arena = append(p.f.arena, val...)
}

// checkSyntax checks a value on its own.
func (p *parser) checkSyntax(val []byte, line int) bool {
	switch val[0] {
	case 'b', 'B':
		if len(val) == 1 {
			p.errorf(line, "vector value %s has no digits", quote(val))
			return false
		}
		for _, c := range val[1:] {
			switch c {
			case '0', '1', 'x', 'X', 'z', 'Z':
			default:
				p.errorf(line, "invalid digit %q in vector value %s (want 0, 1, x or z)", c, quote(val))
				return false
			}
		}
	case 'r', 'R':
		if _, err := strconv.ParseFloat(string(val[1:]), 64); err != nil {
			p.errorf(line, "malformed real value %s", quote(val))
			return false
		}
	}
	return true
}

// checkType checks that a value suits its variable.
func (p *parser) checkType(s *signal, val []byte, line int) bool {
	switch val[0] {
	case 'b', 'B':
		if s.kind == Real || s.kind == String {
			p.errorf(line, "vector value change on %s variable %q", s.typ, s.name)
			return false
		}
		if len(val)-1 > s.width {
			p.errorf(line, "width mismatch: vector value %s has %d digits but %q has size %d",
				quote(val), len(val)-1, s.name, s.width)
			return false
		}
	case 'r', 'R':
		if s.kind != Real {
			p.errorf(line, "real value change on %s variable %q", s.typ, s.name)
			return false
		}
	case 's', 'S':
		if s.kind != String {
			p.errorf(line, "string value change on %s variable %q", s.typ, s.name)
			return false
		}
	default:
		if s.kind == Real || s.kind == String {
			p.errorf(line, "scalar value change on %s variable %q", s.typ, s.name)
			return false
		}
		if s.width != 1 {
			p.errorf(line, "scalar value change on %q, which has size %d", s.name, s.width)
			return false
		}
	}
	return true
}
