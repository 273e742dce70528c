package vtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/nisim/nisim/verify/trace"
)

// ReviewRecords keeps the records of a system golden that a reviewer reads:
// the programs' operations (of a polling loop, labelled poll, only the
// loads whose value hash changed, per CPU), the bus transactions and
// bridge crossings, the board's own records (kinds starting with
// boardPrefix, such as "mc." or "shrimp."), link packets, DMA completions
// and cache invalidations.
func ReviewRecords(recs []trace.Record, boardPrefix string) []trace.Record {
	var out []trace.Record
	lastPoll := map[string]string{} // lookup only: the last poll's hash per CPU
	for _, r := range recs {
		switch {
		case r.Kind == "cpu.retire":
			if op, _ := r.Get("op"); op == "poll" {
				h, _ := r.Get("hash")
				if last, ok := lastPoll[r.Path]; ok && last == h {
					continue
				}
				lastPoll[r.Path] = h
			}
			out = append(out, r)
		case strings.HasPrefix(r.Kind, "bus."), strings.HasPrefix(r.Kind, "bridge."), strings.HasPrefix(r.Kind, boardPrefix),
			r.Kind == "link.packet", r.Kind == "dma.done", r.Kind == "cache.invalidate":
			out = append(out, r)
		}
	}
	return out
}

// AlterGolden writes into dir a copy of the golden file at path whose
// first record line (not a # comment) that pick accepts is replaced by
// change's text, and returns the copy's path: the wrong golden of a spec
// proving that Golden fails, and names the record, when a golden is
// wrong. It is an error if no record line is picked.
func AlterGolden(dir, path string, pick func(line string) bool, change func(line string) string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(data), "\n")
	changed := false
	for i, l := range lines {
		if !strings.HasPrefix(l, "#") && pick(l) {
			lines[i] = change(l)
			changed = true
			break
		}
	}
	if !changed {
		return "", errors.New("vtest: AlterGolden: no record of " + path + " picked")
	}
	out := filepath.Join(dir, filepath.Base(path))
	return out, os.WriteFile(out, []byte(strings.Join(lines, "\n")), 0o644)
}
