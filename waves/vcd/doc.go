// Package vcd is a strict reader and linter for Value Change Dump files, the
// 4-state VCD format of IEEE 1364-2005 section 18.2 ("Format of four-state
// VCD file"), plus GTKWave's "$var string" extension that nisim uses for FSM
// state names.
//
// Viewers such as GTKWave and Surfer silently accept malformed dumps; this
// package does not. [Parse] returns an [*ErrorList] describing every problem
// it found (up to 100), each with its line number, and [Lint] returns all of
// them. Among the things rejected are unknown keywords, sections without
// $end, a missing or malformed $timescale, unknown scope and variable types,
// sizes that disagree with the bit-select, duplicate names, value changes
// before the first #time, time going backwards, undeclared identifier codes,
// values whose kind or width does not fit the variable, and binary data. The
// reader never panics, whatever its input.
//
// A successfully parsed [File] answers "what was signal S at time T":
//
//	f, err := vcd.ParseFile("run.vcd")
//	...
//	v, err := f.ValueAt("Demo.Bus[0].addr", 45000)
//	n, ok := v.Uint()
//
// Choices where IEEE 1364-2005 leaves room:
//
//   - White space (space, tab, CR, LF, VT, FF) separates tokens anywhere.
//     The identifier code of a vector, real or string value change must
//     follow its value on the same line; this is how every known writer
//     emits them, and it lets the reader report a missing identifier code
//     instead of swallowing the next line.
//   - A value change needs a preceding #time, also inside $dumpvars.
//   - Equal consecutive #time values are allowed; decreasing ones are not.
//   - Several variables may share an identifier code (aliases) provided they
//     have the same size and value class (bits, real or string); a change
//     then applies to all of them.
//   - A bit-select is only recognised as a separate fifth token of $var
//     ("addr [7:0]"); brackets attached to a name ("mem[3]", or a scope
//     "Bus[0]") are part of the name.
//   - SystemVerilog variable types (logic, bit, int, shortint, longint,
//     byte, enum, shortreal) and scope types (generate, struct, union,
//     class, interface, package, program) are accepted as common
//     extensions.
//   - A string variable may have any size, including 0; its values are
//     "s<text> <code>" where text has no white space and may be empty.
//   - The file must be UTF-8 text; control characters other than white
//     space or invalid UTF-8 stop the reader with a single error.
package vcd
