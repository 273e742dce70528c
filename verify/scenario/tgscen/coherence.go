package tgscen

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// CoherenceParams are the parameters of telegraphos-coherence.
type CoherenceParams struct {
	// Nodes is the cluster size; every node holds a copy of page 1, owned
	// by node 0, and writes it.
	Nodes int `toml:"nodes"`
	// Words is how many words of the page the writes fall on (few words:
	// many writes to the same word at once).
	Words int `toml:"words"`
	// Writes is the number of writes each node makes, with no
	// synchronisation («chaotic accesses», 2.3.4), each after a random
	// 0..Gap-1 processor cycles.
	Writes int `toml:"writes"`
	Gap    int `toml:"gap"`
	// CounterCache is the number of counter-cache entries of every HIB
	// (2.3.4, «16-32 entries», TG-P21); 0 leaves it out, and the protocol
	// then guarantees nothing: the run shows the violations and its check
	// on them is informational.
	CounterCache int `toml:"counter_cache"`
	// Version is the HIB version.
	Version int `toml:"version"`
}

// CoherenceDefaults are 8 Telegraphos II nodes writing 4 hot words 60
// times each with a 32-entry counter cache.
func CoherenceDefaults() *CoherenceParams {
	return &CoherenceParams{Nodes: 8, Words: 4, Writes: 60, Gap: 600, CounterCache: 32, Version: 2}
}

// Validate implements scenario.Params.
func (p *CoherenceParams) Validate() error {
	return scenario.FirstError(
		scenario.CheckKeys(p),
		// Every node's writes are planned before the run.
		checkQueued("writes", int64(p.Writes)*int64(p.Nodes), "queued write (writes x nodes)"),
	)
}

// CoherenceScenario is telegraphos-coherence.
func CoherenceScenario() *scenario.Scenario {
	return scenario.Typed("telegraphos-coherence",
		"2.3.3-2.3.4: random writes to a replicated page stay coherent",
		CoherenceDefaults, RunCoherence)
}

// RunCoherence runs the coherence stress in e.
func RunCoherence(e *env.Env, p *CoherenceParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := config(p.Nodes, p.Version)
	c.HIB.CounterCache = p.CounterCache
	cl, pr, err := build(e, c)
	if err != nil {
		return nil, err
	}
	all := nodes(p.Nodes)
	if err := cl.Replicate(rpage, 0, all); err != nil {
		return nil, err
	}
	co := cl.WatchCoherence(rpage, 0, all)
	rng := e.Rand("Writers")
	for n := range p.Nodes {
		var ops []cpu.Op
		for k := range p.Writes {
			ops = append(ops, pr[n].Compute(rng.IntN(p.Gap)),
				pr[n].Store(n, rbase+uint32(4*rng.IntN(p.Words)), uint32(n<<16|k)))
		}
		pr[n].Start(ops...)
	}
	res, runErr := run(e, cl)

	v := co.Violations(func(n int, off uint32) uint32 { return word(cl, n, off) })
	var stalls, own, ignored, updates, reflects uint64
	peak := 0
	for _, nd := range cl.Nodes {
		s := nd.HIB.Stats()
		stalls += s.CounterStalls
		own += s.OwnReflects
		ignored += s.ReflectsIgnored
		updates += s.Updates
		reflects += s.Reflects
		peak = max(peak, s.MaxCounters)
	}
	writes := p.Nodes * p.Writes
	cache := "no counter cache"
	if p.CounterCache > 0 {
		cache = fmt.Sprintf("a %d-entry counter cache", p.CounterCache)
	}
	rep := &scenario.Report{Title: fmt.Sprintf("telegraphos-coherence: %d %s nodes with %s, each a copy of page %d (owner node 0), %d unsynchronised writes each to %d words",
		p.Nodes, versionName(p.Version), cache, rpage, p.Writes, p.Words)}
	src := paper + " 2.3.3 «each node sees a subset of the values that the owner sees, and sees them in the proper order»"
	rep.Add("coherence violations", fmt.Sprint(len(v)), map[bool]string{true: "0", false: "possible"}[p.CounterCache > 0], src)
	for i, s := range v[:min(len(v), 3)] {
		rep.Add(fmt.Sprintf("violation %d", i+1), clip(s, 160), "", "")
	}
	rep.Add("reflected writes ignored (own, rule 2 / others', rule 3)", fmt.Sprintf("%d (%d / %d)", co.Ignored(), own, ignored), "", "")
	rep.Add("updates forwarded to the owner / reflected writes sent", fmt.Sprintf("%d / %d", updates, reflects), "", "")
	rep.Add("counter cache peak occupancy (busiest node)", fmt.Sprintf("%d of %d", peak, p.CounterCache), "16-32 entries enough",
		paper+" 2.3.4 «We expect that a cache that holds 16-32 entries will have enough space»")
	rep.Add("counter cache stall cycles (all nodes)", fmt.Sprint(stalls), "",
		paper+" 2.3.4 «If there is no free entry in the cache, the processor is stalled»")
	rate := float64(writes) / max(usf(res.End), 1e-9)
	rep.Add("writes per µs (all nodes, over the run)", fmt.Sprintf("%.3f (%d writes in %s)", rate, writes, us(res.End)), "", "")

	completed(rep, res)
	if p.CounterCache > 0 {
		rep.Check("coherent", len(v) == 0, "every copy applied a subsequence of the owner's writes, in its order, and all end equal: %d violations", len(v))
		rep.Check("counter cache within its size", peak <= p.CounterCache, "peak %d of %d entries", peak, p.CounterCache)
	}
	// Without the counter cache the protocol makes no promise (2.3.4:
	// chaotic accesses «may not run correctly»); a run with few conflicting
	// writes can be clean by luck, so what the run found is the
	// "coherence violations" row above, not a check.
	rep.Measure("violations", float64(len(v)), "")
	rep.Measure("ignored", float64(co.Ignored()), "")
	rep.Measure("counter_peak", float64(peak), "entries")
	rep.Measure("stall_cycles", float64(stalls), "cycles")
	rep.Measure("writes_per_us", rate, "1/µs")
	rep.Measure("updates", float64(updates), "packets")
	rep.Measure("reflects", float64(reflects), "packets")
	rep.Result = res
	return rep, runErr
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
