package vtest

import (
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
