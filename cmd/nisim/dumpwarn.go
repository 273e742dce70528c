package main

import (
	"fmt"
	"io"
)

// warnNoVCD warns on w, one line per flag, about the dump flags of a run
// without --vcd: --select, --exclude, --from and --to only shape the VCD,
// so without one they do nothing (issue 12: they were ignored silently).
func warnNoVCD(w io.Writer, f runFlags) {
	if f.vcd != "" {
		return
	}
	for _, g := range []struct {
		flag string
		set  bool
	}{{"--select", len(f.sel) > 0}, {"--exclude", len(f.excl) > 0}, {"--from", f.from != ""}, {"--to", f.to != ""}} {
		if g.set {
			fmt.Fprintf(w, "nisim: run: warning: %s does nothing without --vcd (it only shapes the waveform dump)\n", g.flag)
		}
	}
}
