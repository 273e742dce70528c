// Package waves is nisim's waveform layer: a registry of signals that
// components declare and update on value changes, a streaming VCD writer
// (IEEE 1364-2005 section 18, 1 ps timescale, GTKWave's string extension),
// selection of scopes and signals by glob and of a time window, and an
// in-memory history that lets a failing test dump the cycles leading up to
// the failure. The strict reader and linter are in waves/vcd.
//
// A component asks the registry for its signals when it is built:
//
//	b.state = reg.String(name, "state")
//	b.occ = reg.Integer(name, "occupancy", waves.WidthFor(depth))
//
// and reports changes as they happen:
//
//	b.state.SetString(now, "DATA")
//
// With no registry, or a registry whose selection leaves a signal out, the
// signal is nil and each update costs one nil check.
package waves
