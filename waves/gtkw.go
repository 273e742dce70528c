package waves

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
)

// This file writes GTKWave save files (.gtkw) and reads back, from a dump
// this package wrote, what a save file needs: the variables under the names
// GTKWave gives them and when each first and last changed.
//
// The save-file format is GTKWave 3.3's (savefile.c, write_save_helper and
// parsewavline): a line per setting in brackets, then the traces, each a
// name preceded by an "@flags" line (hexadecimal TR_* bits of analyzer.h)
// whenever the flags change. A group is a blank trace with TR_GRP_BEGIN
// whose name is the group's, the group's traces, and a blank trace with
// TR_GRP_END.

// Format is how GTKWave shows a trace's value.
type Format uint8

// Trace formats.
const (
	// FormatAuto picks by kind: binary for a 1-bit wire, hexadecimal for
	// a wider wire, decimal for a counter, ASCII for a string.
	FormatAuto Format = iota
	// FormatBinary shows the bits.
	FormatBinary
	// FormatHex shows a hexadecimal number.
	FormatHex
	// FormatDecimal shows an unsigned decimal number.
	FormatDecimal
	// FormatSigned shows a two's-complement decimal number.
	FormatSigned
	// FormatASCII shows the value as text (string signals).
	FormatASCII
)

func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatBinary:
		return "binary"
	case FormatHex:
		return "hex"
	case FormatDecimal:
		return "decimal"
	case FormatSigned:
		return "signed"
	case FormatASCII:
		return "ascii"
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// GTKWave's trace flags (enum TraceEntFlagBits in its analyzer.h: each flag
// is 1 shifted by the bit's position in the enum).
const (
	trHex       = 1 << 1
	trDec       = 1 << 2
	trBin       = 1 << 3
	trRJustify  = 1 << 5
	trBlank     = 1 << 9
	trSigned    = 1 << 10
	trASCII     = 1 << 11
	trGrpBegin  = 1 << 23
	trGrpEnd    = 1 << 24
	flagsGroupB = trGrpBegin | trBlank
	flagsGroupE = trGrpEnd | trBlank
)

// flags returns the trace flags of a format, right-justified values as
// GTKWave sets them on every trace it adds.
func (f Format) flags() uint32 {
	switch f {
	case FormatBinary:
		return trBin | trRJustify
	case FormatHex:
		return trHex | trRJustify
	case FormatDecimal:
		return trDec | trRJustify
	case FormatSigned:
		return trSigned | trRJustify
	case FormatASCII:
		return trASCII | trRJustify
	}
	return trBin | trRJustify
}

// DefaultFormat is the format FormatAuto stands for on a variable of kind k
// and width bits.
func DefaultFormat(k Kind, width int) Format {
	switch {
	case k == String:
		return FormatASCII
	case k == Integer:
		return FormatDecimal
	case k == Wire && width > 1:
		return FormatHex
	}
	return FormatBinary
}

// SaveTrace is one trace of a save file.
type SaveTrace struct {
	// Name is the variable as GTKWave names it: the full hierarchical
	// name, with the bit range of a vector ("host.bus.addr[31:0]";
	// DumpVar.GTKWaveName).
	Name string
	// Alias, when set, is the name shown instead (GTKWave's "+{alias}").
	Alias string
	// Format is how the value is shown; FormatAuto means binary here (the
	// caller resolves it with DefaultFormat, which knows the kind).
	Format Format
}

// SaveGroup is a named group of traces (GTKWave's group markers); an empty
// Name puts the traces at the top level, outside any group.
type SaveGroup struct {
	Name   string
	Traces []SaveTrace
}

// SaveFile is a GTKWave save file: the dump to open, the window, the time
// span shown and the traces.
type SaveFile struct {
	// DumpFile and SaveFile are the paths of the dump and of the save file
	// itself, absolute as GTKWave writes them: given both, GTKWave finds
	// a dump that moved together with its save file (find_dumpfile).
	DumpFile, SaveFile string
	// Comment lines go into the "[*]" header.
	Comment []string
	// Start and End are the time span the wave pane shows, in dump time
	// units (picoseconds): [timestart] and the zoom that fits End-Start
	// into the wave pane.
	Start, End clock.Time
	// Width and Height are the window size in pixels ([size]).
	Width, Height int
	// SSTWidth and SignalsWidth are the widths of the signal search tree
	// and of the signal name pane ([sst_width], [signals_width]).
	SSTWidth, SignalsWidth int
	// TreeOpen lists the scopes expanded in the search tree ([treeopen]).
	TreeOpen []string
	// Groups are the traces, in order.
	Groups []SaveGroup
}

// GTKWave's time scale: calczoom (analyzer.c) maps zoom z to 2^-z time
// units per 200 pixels, pixelsperframe being fixed at 200.
const gtkwPixelsPerFrame = 200

// wavePaneMargin is the width of the window that is neither the search
// tree, the signal names nor the wave pane: the panes' borders and the
// vertical scroll bar. calibrated: GTKWave 3.3.118 (GTK 3) under Xvfb, a
// 1400-pixel window with a 320-pixel search tree and a 200-pixel signal
// pane drew an 851-pixel wave pane (1400 - 320 - 200 - 851 = 29).
const wavePaneMargin = 29

// zoomSlack: a window that starts after time 0 is zoomed for a wave pane
// wider by 1/zoomSlack than WavePixels and moved right by half of what no
// longer fits, so that it cannot end past End even in a pane that is
// 1/(2*zoomSlack) wider than estimated. GTKWave moves a window that would
// end past the dump's end back to time 0, and the pane it drew was up to 5
// pixels wider than estimated (936 for 931: remotewrite's save file, whose
// window ends at the dump's end, opened at 0 instead of 2.36 us; moved by
// all of the slack instead of half, it did again). calibrated: 1/32 gives
// 931 pixels 14 of room, three times that error; the start moves by 1.5%
// of the window, less than the 5% padding before the first change
// (Window). A window from 0 cannot be moved back and is zoomed as it is.
const zoomSlack = 32

// Zoom returns the zoom GTKWave needs to show span time units across a wave
// pane of pixels pixels: span/pixels units per pixel is 2^-z/200 (calczoom).
func Zoom(span clock.Time, pixels int) float64 {
	if span < 1 {
		span = 1
	}
	if pixels < 1 {
		pixels = 1
	}
	return -math.Log2(float64(span) * gtkwPixelsPerFrame / float64(pixels))
}

// WavePixels returns the width of the wave pane of the save file's window.
func (s *SaveFile) WavePixels() int {
	return s.Width - s.SSTWidth - s.SignalsWidth - wavePaneMargin
}

// Validate reports the first field of s that GTKWave could not read.
func (s *SaveFile) Validate() error {
	switch {
	case s.DumpFile == "" || strings.ContainsAny(s.DumpFile, "\"\n\r"):
		return fmt.Errorf("gtkw: dump file %q is empty or holds a quote or line break", s.DumpFile)
	case strings.ContainsAny(s.SaveFile, "\"\n\r"):
		return fmt.Errorf("gtkw: save file %q holds a quote or line break", s.SaveFile)
	case s.Start < 0 || s.End <= s.Start:
		return fmt.Errorf("gtkw: time span %d..%d ps is empty or negative", s.Start, s.End)
	case s.Width < 1 || s.Height < 1:
		return fmt.Errorf("gtkw: window size %dx%d is not positive", s.Width, s.Height)
	case s.SSTWidth < 0 || s.SignalsWidth < 0 || s.WavePixels() < 1:
		return fmt.Errorf("gtkw: panes %d and %d pixels leave no wave pane in a %d-pixel window",
			s.SSTWidth, s.SignalsWidth, s.Width)
	}
	for _, c := range s.Comment {
		if strings.ContainsAny(c, "\n\r") {
			return fmt.Errorf("gtkw: comment %q holds a line break", c)
		}
	}
	for _, t := range s.TreeOpen {
		if t == "" || strings.ContainsAny(t, " \t\n\r") {
			return fmt.Errorf("gtkw: tree scope %q is empty or holds white space", t)
		}
	}
	for _, g := range s.Groups {
		if strings.ContainsAny(g.Name, "\n\r") {
			return fmt.Errorf("gtkw: group name %q holds a line break", g.Name)
		}
		for _, t := range g.Traces {
			if t.Name == "" || strings.ContainsAny(t.Name, " \t\n\r{}") {
				return fmt.Errorf("gtkw: trace name %q is empty or holds white space or braces", t.Name)
			}
			if strings.ContainsAny(t.Alias, "\n\r{}") {
				return fmt.Errorf("gtkw: alias %q of %s holds a line break or brace", t.Alias, t.Name)
			}
		}
	}
	return nil
}

// Encode returns the save file's text: the header comment, the dump and
// save-file paths, [timestart], [size], [pos] (-1 -1: where the window
// manager puts it), the zoom line (the zoom that fits End-Start into the
// wave pane, narrowed by zoomSlack when the window starts after 0, no
// primary marker, the 26 named markers unset), the open tree scopes, the pane widths, and the traces
// with their flags and group markers.
func (s *SaveFile) Encode() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("[*]\n")
	for _, c := range s.Comment {
		fmt.Fprintf(&b, "[*] %s\n", c)
	}
	b.WriteString("[*]\n")
	fmt.Fprintf(&b, "[dumpfile] \"%s\"\n", s.DumpFile)
	if s.SaveFile != "" {
		fmt.Fprintf(&b, "[savefile] \"%s\"\n", s.SaveFile)
	}
	px := s.WavePixels()
	start, zoom := s.Start, Zoom(s.End-s.Start, px)
	if s.Start > 0 {
		wide := px + px/zoomSlack
		zoom = Zoom(s.End-s.Start, wide)
		start = s.Start + clock.Time(float64(s.End-s.Start)*(1-float64(px)/float64(wide))/2)
	}
	fmt.Fprintf(&b, "[timestart] %d\n", start)
	fmt.Fprintf(&b, "[size] %d %d\n", s.Width, s.Height)
	b.WriteString("[pos] -1 -1\n")
	fmt.Fprintf(&b, "*%s -1%s\n", strconv.FormatFloat(zoom, 'f', 6, 64), strings.Repeat(" -1", 26))
	for _, t := range s.TreeOpen {
		fmt.Fprintf(&b, "[treeopen] %s.\n", t)
	}
	fmt.Fprintf(&b, "[sst_width] %d\n", s.SSTWidth)
	fmt.Fprintf(&b, "[signals_width] %d\n", s.SignalsWidth)
	b.WriteString("[sst_expanded] 1\n")
	fmt.Fprintf(&b, "[sst_vpaned_height] %d\n", s.Height*2/5)
	flags := uint32(0)
	setFlags := func(f uint32) {
		if f != flags {
			fmt.Fprintf(&b, "@%x\n", f)
			flags = f
		}
	}
	for _, g := range s.Groups {
		if g.Name != "" {
			setFlags(flagsGroupB)
			fmt.Fprintf(&b, "-%s\n", g.Name)
		}
		for _, t := range g.Traces {
			setFlags(t.Format.flags())
			if t.Alias != "" {
				fmt.Fprintf(&b, "+{%s} ", t.Alias)
			}
			fmt.Fprintf(&b, "%s\n", t.Name)
		}
		if g.Name != "" {
			setFlags(flagsGroupE)
			fmt.Fprintf(&b, "-%s\n", g.Name)
		}
	}
	return []byte(b.String()), nil
}

// DumpVar is a variable of a dump as ScanVCD found it.
type DumpVar struct {
	// Name is the full hierarchical name, scopes joined by dots.
	Name string
	// Kind and Width are the declared type and size.
	Kind  Kind
	Width int
	// Range is the declared bit range ("[31:0]"), "" if none.
	Range string
	// Changes counts the value changes after the initial values
	// ($dumpvars); First and Last are the times of the first and the last
	// of them (meaningless when Changes is 0).
	Changes     int
	First, Last clock.Time
}

// GTKWaveName is the name GTKWave gives the variable in its signal list
// and save files: the full name, followed by the bit range of a vector.
func (v *DumpVar) GTKWaveName() string { return v.Name + v.Range }

// Dump is what ScanVCD read from a dump: its comment, variables and end.
type Dump struct {
	// Comment is the text of the $comment section.
	Comment string
	// Vars are the variables in declaration order.
	Vars []*DumpVar
	// End is the last #time of the dump.
	End clock.Time
	// Start is the time of the initial values ($dumpvars).
	Start clock.Time
}

// ScanVCD reads a dump written by this package (Registry.DumpVCD: 1 ps
// timescale, one value change per line, no aliased identifiers) in one
// pass, in memory proportional to its variables, not to its changes. It
// returns an error naming the line of anything it does not expect.
func ScanVCD(r io.Reader) (*Dump, error) {
	d := &Dump{}
	br := bufio.NewReaderSize(r, 64<<10)
	byID := map[string]*DumpVar{} // lookup only
	var scopes []string
	line := 0
	next := func() (string, error) {
		s, err := br.ReadString('\n')
		if err == io.EOF && s != "" {
			err = nil
		}
		line++
		return strings.TrimRight(s, "\r\n"), err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("vcd line %d: %s", line, fmt.Sprintf(format, args...))
	}
	// Header: sections of whitespace-separated tokens up to $enddefinitions.
	var section []string
	inSection := ""
header:
	for {
		s, err := next()
		if err == io.EOF {
			return nil, bad("end of file before $enddefinitions")
		}
		if err != nil {
			return nil, fmt.Errorf("vcd line %d: %w", line, err)
		}
		for _, tok := range strings.Fields(s) {
			if inSection == "" {
				if !strings.HasPrefix(tok, "$") {
					return nil, bad("unexpected %q in the header", tok)
				}
				inSection, section = tok, section[:0]
				continue
			}
			if tok != "$end" {
				section = append(section, tok)
				continue
			}
			switch inSection {
			case "$comment":
				d.Comment = strings.TrimSpace(strings.Join(section, " "))
			case "$timescale":
				if strings.Join(section, "") != "1ps" {
					return nil, bad("timescale %q, want 1ps", strings.Join(section, " "))
				}
			case "$scope":
				if len(section) != 2 {
					return nil, bad("malformed $scope")
				}
				scopes = append(scopes, section[1])
			case "$upscope":
				if len(scopes) == 0 {
					return nil, bad("$upscope outside a scope")
				}
				scopes = scopes[:len(scopes)-1]
			case "$var":
				v, id, err := scanVar(section, scopes)
				if err != nil {
					return nil, bad("%v", err)
				}
				if byID[id] != nil {
					return nil, bad("identifier %q declared twice", id)
				}
				byID[id] = v
				d.Vars = append(d.Vars, v)
			case "$enddefinitions":
				break header
			}
			inSection = ""
		}
	}
	// Body: #time lines, $dumpvars ... $end, one value change per line,
	// read in place (ReadSlice) so that a change costs no allocation.
	t := clock.Time(-1)
	initial := false
	var long []byte // a line longer than the reader's buffer
	for {
		raw, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], raw...)
			for err == bufio.ErrBufferFull {
				raw, err = br.ReadSlice('\n')
				long = append(long, raw...)
			}
			raw = long
		}
		if err == io.EOF && len(raw) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("vcd line %d: %w", line+1, err)
		}
		line++
		s := bytes.TrimSpace(raw)
		switch {
		case len(s) == 0:
			continue
		case s[0] == '#':
			n, err := strconv.ParseInt(string(s[1:]), 10, 64)
			if err != nil || n < int64(t) {
				return nil, bad("bad or decreasing time %q", s)
			}
			t = clock.Time(n)
			d.End = t
			continue
		case string(s) == "$dumpvars":
			initial = true
			d.Start = max(t, 0)
			continue
		case string(s) == "$end":
			initial = false
			continue
		case s[0] == '$':
			return nil, bad("unexpected %q", s)
		}
		var id []byte
		switch s[0] {
		case 'b', 'B', 'r', 'R', 's', 'S':
			i := bytes.LastIndexByte(s, ' ')
			if i < 0 {
				return nil, bad("value %q without an identifier", s)
			}
			id = s[i+1:]
		default:
			id = s[1:]
		}
		v := byID[string(id)]
		if v == nil {
			return nil, bad("unknown identifier %q", id)
		}
		if t < 0 {
			return nil, bad("value change before the first #time")
		}
		if initial {
			continue
		}
		if v.Changes == 0 {
			v.First = t
		}
		v.Last = t
		v.Changes++
	}
	return d, nil
}

// scanVar reads the tokens of a $var section: type, size, identifier,
// name and an optional bit range.
func scanVar(tok, scopes []string) (*DumpVar, string, error) {
	if len(tok) != 4 && len(tok) != 5 {
		return nil, "", errors.New("malformed $var")
	}
	w, err := strconv.Atoi(tok[1])
	if err != nil || w < 1 {
		return nil, "", fmt.Errorf("$var %s has size %q", tok[3], tok[1])
	}
	v := &DumpVar{Name: strings.Join(append(append([]string(nil), scopes...), tok[3]), "."), Width: w}
	switch tok[0] {
	case "integer":
		v.Kind = Integer
	case "real":
		v.Kind = Real
	case "string":
		v.Kind = String
	default:
		v.Kind = Wire
	}
	if len(tok) == 5 {
		v.Range = tok[4]
	}
	return v, tok[2], nil
}

// ViewGroup is a named group of key signals as glob patterns, each matching
// a variable by its full name or one of its scopes as Options.Select does.
type ViewGroup struct {
	Name     string
	Patterns []string
}

// VarGroup is a ViewGroup resolved against a dump.
type VarGroup struct {
	Name string
	Vars []*DumpVar
}

// Selects reports whether the glob pattern selects the signal name as
// Options.Select does: by the full name or one of its scopes.
func Selects(pattern, name string) bool {
	return matchAny([]string{pattern}, name)
}

// Lookup returns the variables a pattern matches (Selects), in declaration
// order.
func (d *Dump) Lookup(pattern string) []*DumpVar {
	var out []*DumpVar
	for _, v := range d.Vars {
		if Selects(pattern, v.Name) {
			out = append(out, v)
		}
	}
	return out
}

// Resolve expands the groups' patterns against the dump: each group's
// variables in pattern order, then declaration order, each variable once
// (in the first group that names it); groups left empty are dropped. It
// also returns the patterns that matched no variable, in order.
func (d *Dump) Resolve(groups []ViewGroup) (out []VarGroup, unmatched []string) {
	seen := map[*DumpVar]bool{} // lookup only
	for _, g := range groups {
		vg := VarGroup{Name: g.Name}
		for _, p := range g.Patterns {
			m := d.Lookup(p)
			if len(m) == 0 {
				unmatched = append(unmatched, p)
			}
			for _, v := range m {
				if !seen[v] {
					seen[v] = true
					vg.Vars = append(vg.Vars, v)
				}
			}
		}
		if len(vg.Vars) > 0 {
			out = append(out, vg)
		}
	}
	return out, unmatched
}

// Activity returns the first and last change times of the groups'
// variables; ok is false when none of them changes after its initial value.
func Activity(groups []VarGroup) (first, last clock.Time, ok bool) {
	for _, g := range groups {
		for _, v := range g.Vars {
			if v.Changes == 0 {
				continue
			}
			if !ok || v.First < first {
				first = v.First
			}
			if !ok || v.Last > last {
				last = v.Last
			}
			ok = true
		}
	}
	return first, last, ok
}

// Layout of the save files NewSaveFile writes.
const (
	// SaveWidth and SaveHeight are the window size. assumed: a 1400x900
	// window fits a laptop screen and is the screen the documentation's
	// screenshots are taken on.
	SaveWidth, SaveHeight = 1400, 900
	// saveSSTWidth is the signal search tree's width. calibrated: GTKWave
	// 3.3.118 (GTK 3) does not draw it narrower than 276 pixels (asked
	// for 150 or 250, it drew the wave pane from x = 488 with a 200-pixel
	// signal pane: 488 - 200 - 12 of borders = 276), so a narrower value
	// would make the zoom miss.
	saveSSTWidth = 280
	// charPixels is the width of a character of the signal pane's font,
	// and namePad the room around a name (indent, margin). calibrated:
	// GTKWave 3.3.118 under Xvfb drew "state" 41 pixels wide (8.2 per
	// character).
	charPixels, namePad = 8, 40
	// minSignalsWidth and maxSignalsWidth bound the signal pane. assumed:
	// the wave pane keeps at least 800 pixels of the 1400.
	minSignalsWidth, maxSignalsWidth = 120, 350
	// MinPad is the least time shown before the first and after the last
	// change of a window (a twentieth of the span otherwise). assumed: 1 ns
	// is a few cycles of the slowest clock that still shows an edge with
	// its neighbourhood.
	MinPad = clock.Time(1000)
	// treeDepth is how many levels of the search tree are opened.
	// assumed: the top scopes' children (n0.cpu, n0.ni, link.ab) show
	// where the traces are; a second level made the demo's tree taller
	// than its pane.
	treeDepth = 1
)

// Window pads the span first..last by a twentieth of its length, at least
// MinPad, on each side and clips it to the dump's start..end, so that the
// first and the last change are inside the wave pane, not on its edges. The
// result is never empty.
func Window(first, last, start, end clock.Time) (clock.Time, clock.Time) {
	pad := max((last-first)/20, MinPad)
	from, to := max(first-pad, start, 0), last+pad
	if end > from {
		to = min(to, end)
	}
	if to <= from {
		to = from + 1
	}
	return from, to
}

// NewSaveFile lays out a save file showing groups over start..end: a
// SaveWidth x SaveHeight window, each trace in its variable's default
// format under an alias that drops the scopes its group's variables share
// (keeping the enclosing scope: "bus/addr" in a group of host.bus and
// host.cpu signals, "cpu/state" alone; slashes, because GTKWave shows only
// the last dot-separated part of a name), the signal pane as wide as the
// longest alias or group name, and the search tree opened on the top
// scopes that hold a trace.
func NewSaveFile(dumpPath, savePath string, groups []VarGroup, start, end clock.Time) *SaveFile {
	s := &SaveFile{DumpFile: dumpPath, SaveFile: savePath, Start: start, End: end,
		Width: SaveWidth, Height: SaveHeight, SSTWidth: saveSSTWidth}
	longest := 0
	opened := map[string]bool{} // lookup only
	for _, g := range groups {
		sg := SaveGroup{Name: g.Name}
		longest = max(longest, len(g.Name))
		prefix := commonScope(g.Vars)
		for _, v := range g.Vars {
			alias := strings.ReplaceAll(strings.TrimPrefix(v.Name, prefix), ".", "/")
			sg.Traces = append(sg.Traces, SaveTrace{Name: v.GTKWaveName(), Alias: alias,
				Format: DefaultFormat(v.Kind, v.Width)})
			longest = max(longest, len(alias))
			parts := strings.Split(v.Name, ".")
			for i := 1; i < len(parts) && i <= treeDepth; i++ {
				if sc := strings.Join(parts[:i], "."); !opened[sc] {
					opened[sc] = true
					s.TreeOpen = append(s.TreeOpen, sc)
				}
			}
		}
		s.Groups = append(s.Groups, sg)
	}
	s.SignalsWidth = min(max(longest*charPixels+namePad, minSignalsWidth), maxSignalsWidth)
	return s
}

// commonScope returns the scopes (with their trailing dot) that every
// variable's name starts with, less the innermost scope of a variable that
// would be left with its bare name: an alias always keeps the scope that
// holds the signal.
func commonScope(vars []*DumpVar) string {
	if len(vars) == 0 {
		return ""
	}
	common := strings.Split(vars[0].Name, ".")
	for _, v := range vars {
		parts := strings.Split(v.Name, ".")
		n := 0
		for n < len(common) && n < len(parts)-2 && common[n] == parts[n] {
			n++
		}
		common = common[:n]
	}
	if len(common) == 0 {
		return ""
	}
	return strings.Join(common, ".") + "."
}
