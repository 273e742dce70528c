package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/nisim/nisim/internal/outpath"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/waves"
	"github.com/spf13/cobra"
)

// This file is the waveform view of `nisim run` (issue 12 section 5): a
// scenario's default --select and the GTKWave save file written beside
// its VCD.

// addGTKWFlag adds --gtkw to run and lists, in its help, the scenarios
// that dump only part of their signals by default.
func addGTKWFlag(c *cobra.Command) {
	c.Flags().Bool("gtkw", true, "with --vcd F.vcd, also write the GTKWave save file F.gtkw beside it: the scenario's key signals, grouped and zoomed to the action; --gtkw=false: none")
	c.Long += "\n\n" + selectionHelp(catalog())
}

// helpWidth is the width the selection list of `nisim run --help` fits in
// (issue 12: a 100-column terminal).
const helpWidth = 100

// selectionHelp is the paragraph of `nisim run --help` that names each
// scenario's default waveform selection.
func selectionHelp(cat scenario.Catalog) string {
	var b strings.Builder
	b.WriteString(`Waveforms: --vcd F.vcd also writes the GTKWave save file F.gtkw (open both
with 'gtkwave F.vcd F.gtkw'). Scenarios whose fabric is mostly idle dump only
their interesting scopes unless --select is given (--select '*' dumps
everything):`)
	n := 0
	for _, s := range cat {
		sel := s.View(s.Defaults()).Select
		if len(sel) == 0 {
			continue
		}
		n++
		// One line per scenario, wrapped at helpWidth columns under the
		// first pattern.
		line := fmt.Sprintf("  %-16s", s.Name)
		indent := strings.Repeat(" ", len(line))
		for i, p := range sel {
			if i > 0 && len(line)+1+len(p) > helpWidth {
				b.WriteString("\n" + line)
				line = indent
			}
			line += " " + p
		}
		b.WriteString("\n" + line)
	}
	if n == 0 {
		b.WriteString("\n  (none)")
	}
	return b.String()
}

// gtkwPath is the save file of a VCD path: the same name with .gtkw in
// place of its extension.
func gtkwPath(vcd string) string {
	return strings.TrimSuffix(vcd, filepath.Ext(vcd)) + ".gtkw"
}

// saveFileOf returns the GTKWave save file c writes for --vcd vcd: none
// ("") without a VCD, with the VCD on standard output or with --gtkw=false.
func saveFileOf(c *cobra.Command, vcd string) string {
	on := true
	if f := c.Flags().Lookup("gtkw"); f != nil {
		on = f.Value.String() == "true"
	}
	if !on || vcd == "" || vcd == outpath.Stdout {
		return ""
	}
	return gtkwPath(vcd)
}

// execWithView is scenario.Exec with the scenario's waveform view: with a
// VCD and no --select it dumps the scenario's default selection, the VCD
// comment says what was selected, and the GTKWave save file (saveFileOf,
// which runScenario checks with the other outputs before anything runs)
// is written when the run has written its VCD.
func execWithView(c *cobra.Command, s *scenario.Scenario, p scenario.Params, o scenario.Options, f runFlags) (*scenario.Report, *env.Env, error, error) {
	view := s.View(p)
	save := saveFileOf(c, o.VCD)
	if o.VCD != "" {
		o.Select, o.Comment = selection(view, o.Select, o.Comment)
	}
	rep, e, violations, err := scenario.Exec(s, p, o)
	if err != nil || save == "" {
		return rep, e, violations, err
	}
	warn := io.Discard
	if len(f.sel) == 0 && len(f.excl) == 0 {
		// Key signals missing from a dump the user narrowed (--select,
		// --exclude) are expected; from the default selection they are a
		// broken declaration.
		warn = c.ErrOrStderr()
	}
	if err := writeSaveFile(warn, s.Name, o.VCD, save, view, f.sel); err != nil {
		return rep, e, violations, err
	}
	return rep, e, violations, nil
}

// selection returns the --select patterns of a run and its VCD comment
// saying what they are: the user's, the scenario's default, or everything.
func selection(view scenario.WaveView, sel []string, comment string) ([]string, string) {
	quote := func(ps []string) string {
		q := make([]string, len(ps))
		for i, p := range ps {
			q[i] = fmt.Sprintf("%q", strings.ReplaceAll(p, "$end", "$ end"))
		}
		return strings.Join(q, " ")
	}
	switch {
	case len(sel) > 0:
		comment += "; signals: --select " + quote(sel)
	case len(view.Select) > 0:
		sel = view.Select
		comment += "; signals: the scenario's default selection " + quote(sel) + " (--select '*' dumps everything)"
	default:
		comment += "; signals: all"
	}
	return sel, comment
}

// maxFallbackTraces bounds the traces of a save file whose key signals are
// all outside the dump. assumed: a screenful of traces.
const maxFallbackTraces = 64

// writeSaveFile writes the GTKWave save file of the dump at vcd to save:
// the view's key signals grouped, zoomed to their action (or to view.Span
// from its start). Key-signal patterns that match nothing are named on
// warn. If no key signal is in the dump (a --select elsewhere), the first
// signals of each --select pattern are shown instead.
func writeSaveFile(warn io.Writer, name, vcd, save string, view scenario.WaveView, sel []string) error {
	fh, err := os.Open(vcd)
	if err != nil {
		return fmt.Errorf("--gtkw %s: reading the VCD: %w", save, err)
	}
	d, err := waves.ScanVCD(fh)
	fh.Close()
	if err != nil {
		return fmt.Errorf("--gtkw %s: reading %s: %w", save, vcd, err)
	}
	groups, unmatched := d.Resolve(view.Groups)
	for _, p := range unmatched {
		fmt.Fprintf(warn, "nisim: run: warning: %s's key signal pattern %q matched no signal in %s: %s leaves it out\n", name, p, vcd, save)
	}
	if len(groups) == 0 {
		groups = fallbackGroups(d, sel)
	}
	start, end := d.Start, d.End
	if first, last, ok := waves.Activity(groups); ok {
		if view.Span > 0 {
			last = first + view.Span
		}
		start, end = waves.Window(first, last, d.Start, d.End)
	} else if end <= start {
		end = start + 1
	}
	absVCD, err := filepath.Abs(vcd)
	if err != nil {
		return fmt.Errorf("--gtkw %s: %w", save, err)
	}
	absSave, err := filepath.Abs(save)
	if err != nil {
		return fmt.Errorf("--gtkw %s: %w", save, err)
	}
	sf := waves.NewSaveFile(absVCD, absSave, groups, start, end)
	sf.Comment = []string{"GTKWave save file written by nisim", d.Comment,
		fmt.Sprintf("shows %s to %s", clock.Time(start), clock.Time(end))}
	text, err := sf.Encode()
	if err != nil {
		return fmt.Errorf("--gtkw %s: %w", save, err)
	}
	return atomicfile.WriteFile(save, text)
}

// fallbackGroups is the view of a dump without any key signal: a group
// per --select pattern (one group of everything without one), at most
// maxFallbackTraces traces in all.
func fallbackGroups(d *waves.Dump, sel []string) []waves.VarGroup {
	if len(sel) == 0 {
		sel = []string{"*"}
	}
	var vg []waves.ViewGroup
	for _, p := range sel {
		vg = append(vg, waves.ViewGroup{Name: p, Patterns: []string{p}})
	}
	groups, _ := d.Resolve(vg)
	left := maxFallbackTraces
	var out []waves.VarGroup
	for _, g := range groups {
		if left == 0 {
			break
		}
		if len(g.Vars) > left {
			g.Vars = g.Vars[:left]
		}
		left -= len(g.Vars)
		out = append(out, g)
	}
	return out
}
