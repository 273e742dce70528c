package vtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/clock"
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

// EventWindow picks a protocol golden's window in a time-ordered event
// list: from the n-th event (n 0 or 1: the first) that from accepts to the
// first event at or after it that to accepts, both included, as indexes;
// ok is false if either is missing.
func EventWindow[E any](evs []E, from, to func(E) bool, n int) (first, last int, ok bool) {
	first = -1
	for i, k := 0, 0; i < len(evs); i++ {
		if from(evs[i]) {
			if k++; k >= n {
				first = i
				break
			}
		}
	}
	if first < 0 {
		return 0, 0, false
	}
	for i := first; i < len(evs); i++ {
		if to(evs[i]) {
			return first, i, true
		}
	}
	return first, 0, false
}

// MergeByTime interleaves two time-ordered record lists, a's records
// first at equal times.
func MergeByTime(a, b []trace.Record) []trace.Record {
	out := make([]trace.Record, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || len(a) > 0 && a[0].Time <= b[0].Time {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// CompareGolden compares recs with the golden at path record by record,
// as they read back from text (the file's form), with go-cmp, and names
// the differing fields; under `make golden` (trace.Updating) it rewrites
// the golden with header instead.
func CompareGolden(path string, recs []trace.Record, header ...string) error {
	if trace.Updating() {
		return Golden(path, recs, header...)
	}
	want, have, err := trace.ReadFileComments(path)
	if err != nil {
		return fmt.Errorf("golden: %w", err)
	}
	var got []trace.Record
	for _, r := range recs {
		g, ok, err := trace.ParseLine(r.Format())
		if err != nil || !ok {
			return fmt.Errorf("record %q does not parse back: %v", r.Format(), err)
		}
		got = append(got, g)
	}
	if d := cmp.Diff(want, got); d != "" {
		return fmt.Errorf("golden %s differs (-golden +this run):\n%s", path, d)
	}
	return trace.CheckHeader(path, have, header)
}

// Later is an AlterGolden change: the record line's time ps picoseconds
// and its cycle cycles later (a wrong golden whose record is late).
func Later(ps, cycles int64) func(line string) string {
	return func(l string) string {
		f := strings.Fields(l)
		if len(f) < 2 {
			return l
		}
		t, _ := strconv.ParseInt(f[0], 10, 64)
		c, _ := strconv.ParseInt(f[1], 10, 64)
		f[0], f[1] = strconv.FormatInt(t+ps, 10), strconv.FormatInt(c+cycles, 10)
		return strings.Join(f, " ")
	}
}

// SortByTime sorts protocol events by their time (at), keeping the order
// of equal times: they come in simulation order, so it only guards a
// golden's merge.
func SortByTime[E any](evs []E, at func(E) clock.Time) {
	slices.SortStableFunc(evs, func(a, b E) int {
		switch ta, tb := at(a), at(b); {
		case ta < tb:
			return -1
		case ta > tb:
			return 1
		}
		return 0
	})
}
