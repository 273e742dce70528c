package tgscen

import (
	"fmt"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/verify/scenario"
)

// The Telegraphos scenarios' key tables (scenario.Keyed): each key's unit,
// range and the origin of its default. Each Validate enforces them first
// (scenario.CheckKeys); the rules on several keys (the queued operations
// against the memory budget, checkQueued) follow, and their bound is
// noted beside the key from the same constant.

// nodesKey is the cluster size: «4 node bits» (TG-P8), from lo nodes.
func nodesKey(lo int) scenario.KeySpec {
	return scenario.Key("nodes", "workstations").AtLeast(float64(lo)).Limit(tg.MaxNodes, "4 node bits, TG-P8")
}

// versionKey is the HIB version.
func versionKey() scenario.KeySpec {
	return scenario.Key("version", "HIB: 1 Telegraphos I, 2 Telegraphos II").Range(1, 2)
}

// Keys implements scenario.Keyed.
func (p *CalibrationParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		queuedKey(scenario.Key("ops", "operations per loop").AtLeast(1), 2, "op", "a remote write and a remote read").
			From("«by performing 10000 operations» (3.2)"),
		versionKey().From("Telegraphos I, the board the paper measured"),
	}
}

// Keys implements scenario.Keyed.
func (p *FetchIncParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		nodesKey(1).From("assumed: 8"),
		queuedKey(scenario.Key("ops", "fetch-and-increments per node").AtLeast(1), int64(min(p.Nodes, tg.MaxNodes)), "op", "one on each node").From("assumed: 25"),
		versionKey(),
	}
}

// Keys implements scenario.Keyed.
func (p *ProdConsParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		seedsKey(scenario.Key("seeds", "seeds, each with and without the barrier").AtLeast(1)).From("assumed: 12 show the hazard"),
		// A seed's runs are built and dropped in turn.
		queuedKey(scenario.Key("background", "writes from each of nodes 4 and 5").AtLeast(0), 2*2,
			"background write", "a compute and a store on each of nodes 4 and 5").From("assumed: 60"),
		versionKey(),
	}
}

// Keys implements scenario.Keyed.
func (p *AlarmsParams) Keys() []scenario.KeySpec {
	words := float64(tg.PageBytes / tg.WordBytes)
	return []scenario.KeySpec{
		// «64 K pages x (16+16) bits» (TG-P16): 16-bit counters.
		scenario.Key("read_counters", "accesses per page (0: never fires)").Range(0, 0xffff).Entries(alarmPages, fmt.Sprintf("node 1's %d pages from page %d, less one", tg.PagesPerNode, alarmFirstPage)).
			Also("at least 1 entry").From("assumed: counters that run out at different accesses"),
		scenario.Key("write_counters", "accesses per page (0: never fires)").Range(0, 0xffff).Also("as many entries as read_counters"),
		scenario.Key("reads", "remote reads per page").Range(0, words).Also("reads + writes at least 1"),
		scenario.Key("writes", "remote writes per page").Range(0, words),
		versionKey(),
	}
}

// Keys implements scenario.Keyed.
func (p *MulticastParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		nodesKey(2).From("assumed: a page and 3 copies"),
		queuedKey(scenario.Key("writes", "stores to the page").AtLeast(1), int64(min(max(p.Nodes-1, 1), tg.MaxNodes)), "write", "reflected to each of nodes - 1 copies"),
		versionKey(),
	}
}

// Keys implements scenario.Keyed.
func (p *InconsistencyParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		queuedKey(scenario.Key("reads", "reads of M after the writes").AtLeast(1), 1, "read", "the read itself"),
		// Figure 2's run has 4 nodes (diverge), the read-back 2.
		counterCacheKey(scenario.Key("counter_cache", "entries").AtLeast(1), 4).From("«16-32 entries» (TG-P21)"),
		versionKey(),
	}
}

// Keys implements scenario.Keyed.
func (p *CoherenceParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		nodesKey(2).From("assumed: 8"),
		scenario.Key("words", "hot words of the page").AtLeast(1).Limit(float64(tg.PageBytes/tg.WordBytes), "the words of an 8 KB page"),
		queuedKey(scenario.Key("writes", "writes per node").AtLeast(1), int64(min(p.Nodes, tg.MaxNodes)), "write", "one on each node"),
		gapKey(scenario.Key("gap", "processor cycles between writes, at most").AtLeast(1)).From("assumed: 600"),
		counterCacheKey(scenario.Key("counter_cache", "entries (0: none, no guarantee)").AtLeast(0), min(p.Nodes, tg.MaxNodes)).From("«16-32 entries» (TG-P21)"),
		versionKey().From("Telegraphos II (shared data in host memory)"),
	}
}

// Keys implements scenario.Keyed.
func (p *ProtectionParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		// Node 15 must lie outside the cluster.
		scenario.Key("nodes", "workstations").AtLeast(2).Limit(tg.MaxNodes-1, "node 15 must lie outside the cluster"),
		scenario.Key("wrong_key", "16-bit key").Range(0, 0xffff).Also(fmt.Sprintf("not %#x, context 0's real key", procKey(0))),
	}
}
