package tgscen

import (
	"fmt"

	"github.com/nisim/nisim/verify/scenario"
)

// The bounds of the Telegraphos scenarios' counts that are not queued
// operations (checkQueued): each is derived from scenario.MemoryBudget and
// what one unit costs in the model, or from a limit of the model, and says
// which in its error (issue 12: these were plain constants, 4096 entries,
// 1000 seeds, 1000000 cycles).

// counterCacheEntryBytes is what one counter-cache entry costs in every
// HIB. derived: an rtl/cam slot of a uint32 key and an int value holds a
// valid flag, the key, the value, two clock.Times and two uint64 stamps,
// 48 B aligned, and its index map entry the key and the slot number, 12 B
// plus a control byte in a map at most 7/8 full, 16 B: 64 B.
const counterCacheEntryBytes = 48 + 16

// counterCacheKey bounds the counter cache of each of nodes HIBs against
// the memory budget (the model's CAM allocates every entry at build).
func counterCacheKey(k scenario.KeySpec, nodes int) scenario.KeySpec {
	nodes = max(nodes, 1)
	return k.Budget(int64(nodes)*counterCacheEntryBytes, fmt.Sprintf("entry of %d B in each of %d HIBs", counterCacheEntryBytes, nodes))
}

// gapKey bounds a count of processor cycles of computation between two
// operations to scenario.MaxDelay on the workstation's processor clock
// (the longest delay a scenario accepts; 2^63 cycles overflowed clock.Time).
func gapKey(k scenario.KeySpec) scenario.KeySpec {
	return k.Cycles(config(2, 1).Host.CPU.Clock, scenario.MaxDelay)
}

// seedRuns is how many runs one seed of telegraphos-prodcons costs: one
// without the barrier and one with it.
const seedRuns = 2

// seedsKey bounds prodcons' seeds by scenario.MaxRuns, the runs one
// invocation may start (the sweep's bound of points times seeds): each
// seed is seedRuns runs, built and dropped in turn, so the bound is on run
// count, not memory.
func seedsKey(k scenario.KeySpec) scenario.KeySpec {
	return k.Limit(float64(scenario.MaxRuns/seedRuns), fmt.Sprintf("%d runs per seed x %d = scenario.MaxRuns, the runs one invocation may start", seedRuns, scenario.MaxRuns/seedRuns))
}

// queuedKey bounds a key whose every unit queues per operations before
// the run (why says which) by checkQueued's budget, so that the key table
// shows and enforces the limit on the key itself.
func queuedKey(k scenario.KeySpec, per int64, unit, why string) scenario.KeySpec {
	per = max(per, 1)
	return k.Budget(per*queuedOpBytes, fmt.Sprintf("%s (%d queued operation(s) of %d B: %s)", unit, per, queuedOpBytes, why))
}
