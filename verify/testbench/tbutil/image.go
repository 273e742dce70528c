package tbutil

import "github.com/nisim/nisim/host/memsys"

// FirstStale is the scoreboard's comparison of a receive page in host
// memory (got, starting at address base) with the reference model's image
// of it (want): it returns the offset of the first byte that differs, or
// -1. A byte the model does not know (unknown(off) true; unknown may be
// nil) is not compared, and neither is any byte of a line of line bytes
// that dirty says a cache holds dirty: its newest value is in the cache,
// not in memory.
func FirstStale(got, want []byte, base uint64, line int, unknown func(off int) bool, dirty func(addr uint64) bool) int {
	for off := 0; off < len(got) && off < len(want); off++ {
		if got[off] == want[off] || (unknown != nil && unknown(off)) {
			continue
		}
		a := base + uint64(off)
		if dirty(a) {
			off = int((a/uint64(line)+1)*uint64(line)-base) - 1
			continue
		}
		return off
	}
	return -1
}

// DirtyIn reports whether one of caches holds the line of addr dirty.
func DirtyIn(caches []*memsys.Cache, addr uint64) bool {
	for _, ch := range caches {
		if _, d := ch.Holds(addr); d {
			return true
		}
	}
	return false
}
