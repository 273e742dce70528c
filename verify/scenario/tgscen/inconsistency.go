package tgscen

import (
	"errors"
	"fmt"
	"strings"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// The replicated page of the coherence scenarios: page 1 of every node,
// owned by node 0.
const (
	rpage = 1
	rbase = rpage * tg.PageBytes
)

// InconsistencyParams are the parameters of telegraphos-inconsistency.
type InconsistencyParams struct {
	// Reads is how many times the writer of section 2.3.2 reads M back
	// after writing 2 and 3.
	Reads int `toml:"reads"`
	// CounterCache is the number of counter-cache entries of the
	// protected runs (2.3.4, «16-32 entries», TG-P21); the unprotected
	// runs have none.
	CounterCache int `toml:"counter_cache"`
	// Version is the HIB version.
	Version int `toml:"version"`
}

// InconsistencyDefaults are the specs' experiments.
func InconsistencyDefaults() *InconsistencyParams {
	return &InconsistencyParams{Reads: 30, CounterCache: 16, Version: 1}
}

// Validate implements scenario.Params.
func (p *InconsistencyParams) Validate() error {
	return scenario.FirstError(
		scenario.CheckKeys(p),
	)
}

// InconsistencyScenario is telegraphos-inconsistency.
func InconsistencyScenario() *scenario.Scenario {
	return scenario.Typed("telegraphos-inconsistency",
		"2.3.2, fig. 2: copies diverge without the remedies, never with",
		InconsistencyDefaults, RunInconsistency)
}

// readBack is section 2.3.2: node 1 holds a copy of M (owned by node 0),
// writes 2 and then 3 and keeps reading M. Its reflected writes come back
// from the owner some microseconds later. Without the counter cache the
// reflected 2 overwrites the 3 it has just written; with it both reflected
// writes find the word's counter pending and are ignored.
func readBack(e *env.Env, p *InconsistencyParams, cache int) ([]uint32, env.Result, error) {
	c := config(2, p.Version)
	c.HIB.CounterCache = cache
	cl, pr, err := build(e, c)
	if err != nil {
		return nil, env.Result{}, err
	}
	if err := cl.Replicate(rpage, 0, nodes(2)); err != nil {
		return nil, env.Result{}, err
	}
	var reads []uint32
	ops := []cpu.Op{pr[1].Store(1, rbase, 2), pr[1].Store(1, rbase, 3)}
	for range p.Reads {
		ops = append(ops, pr[1].Load(1, rbase, func(_ clock.Time, v uint32) { reads = append(reads, v) }))
	}
	pr[1].Start(ops...)
	res, err := run(e, cl)
	if err == nil && (word(cl, 0, rbase) != 3 || word(cl, 1, rbase) != 3) {
		err = fmt.Errorf("M ends %d at the owner and %d at the writer, want 3", word(cl, 0, rbase), word(cl, 1, rbase))
	}
	return reads, res, err
}

// divergence is what figure 2's run left: M at every node, the writes
// each node applied, and the coherence checker's findings.
type divergence struct {
	final      []uint32
	seqs       [][]string
	violations []string
}

// diverge is figure 2: nodes 1 and 2 hold copies of M and write 1 and 2
// at the same moment. Without ordering through the owner each multicasts
// its own write and every copy applies its own write first; through the
// owner one order reaches everyone.
func diverge(e *env.Env, p *InconsistencyParams, ordering bool, cache int) (divergence, error) {
	var d divergence
	c := config(4, p.Version)
	c.HIB.OwnerOrdering, c.HIB.CounterCache = ordering, cache
	cl, pr, err := build(e, c)
	if err != nil {
		return d, err
	}
	if err := cl.Replicate(rpage, 0, nodes(4)); err != nil {
		return d, err
	}
	co := cl.WatchCoherence(rpage, 0, nodes(4))
	pr[1].Start(pr[1].Store(1, rbase, 1))
	pr[2].Start(pr[2].Store(2, rbase, 2))
	_, err = run(e, cl)
	for n := range 4 {
		d.final = append(d.final, word(cl, n, rbase))
		d.seqs = append(d.seqs, co.Sequence(n, rbase))
	}
	d.violations = co.Violations(func(n int, off uint32) uint32 { return word(cl, n, off) })
	return d, err
}

// RunInconsistency runs section 2.3.2 without the counter cache in e (the
// captured run) and the other three runs in envs of their own.
func RunInconsistency(e *env.Env, p *InconsistencyParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var errs []error
	rbNo, res, err := readBack(e, p, 0)
	errs = append(errs, label("2.3.2 without the counter cache", err))
	rbYes, _, err := readBack(side(e.Seed), p, p.CounterCache)
	errs = append(errs, label("2.3.2 with the counter cache", err))
	dvNo, err := diverge(side(e.Seed), p, false, 0)
	errs = append(errs, label("figure 2 without owner ordering", err))
	dvYes, err := diverge(side(e.Seed), p, true, p.CounterCache)
	errs = append(errs, label("figure 2 through the owner", err))

	rep := &scenario.Report{Title: fmt.Sprintf("telegraphos-inconsistency: %s HIBs; section 2.3.2 (node 1 writes M=2, M=3 to a copy owned by node 0 and reads M %d times) and figure 2 (nodes 1 and 2 of 4 write M=1 and M=2 at once), without and with the remedies (a %d-entry counter cache, ordering through the owner)",
		versionName(p.Version), p.Reads, p.CounterCache)}
	src232 := paper + " 2.3.2 «P reads M expects 3 but gets 2 (error)»"
	rep.Add("2.3.2 values read back, no counter cache (repeats dropped)", seqString(compress(rbNo)), "3, 2, 3", src232)
	rep.Add(fmt.Sprintf("2.3.2 values read back, %d-entry counter cache", p.CounterCache), seqString(compress(rbYes)), "3",
		paper+" 2.3.3 «any value written in a memory location is always valid, and therefore, it is always safe to read it»")
	srcFig := paper + " 2.3 «the pages may end up with different values. Figure 2 illustrates how this can happen»"
	for _, v := range []struct {
		name  string
		d     divergence
		paper string
	}{{"figure 2, direct multicast (no owner)", dvNo, "copies differ"}, {"figure 2, through the owner", dvYes, "copies equal"}} {
		rep.Add(v.name+": M at nodes 0..3", seqString(v.d.final), v.paper, srcFig)
		for n, s := range v.d.seqs {
			rep.Add(fmt.Sprintf("%s: writes node %d applied (origin#seq=value)", v.name, n), strings.Join(s, ", "), "", "")
		}
	}
	rep.Add("waveform and trace show", "2.3.2 without the counter cache", "", "")

	completed(rep, res)
	rep.Check("2.3.2 reproduced without the counter cache", backwards(rbNo),
		"the writer's reads (repeats dropped): %s; want a 2 after a 3, its own older value", seqString(compress(rbNo)))
	rep.Check("2.3.2 impossible with the counter cache", !backwards(rbYes) && len(rbYes) == p.Reads,
		"the writer's %d reads (repeats dropped): %s; a 2 after a 3 would be its own older value", len(rbYes), seqString(compress(rbYes)))
	rep.Check("figure 2 reproduced without owner ordering", !allEqual(dvNo.final) && len(dvNo.violations) > 0,
		"copies end %s; the coherence checker found %d violations", seqString(dvNo.final), len(dvNo.violations))
	rep.Check("figure 2 impossible through the owner", allEqual(dvYes.final) && len(dvYes.violations) == 0,
		"copies end %s; %d violations %v", seqString(dvYes.final), len(dvYes.violations), dvYes.violations)
	rep.Measure("violations_without", float64(len(dvNo.violations)), "")
	rep.Measure("violations_with", float64(len(dvYes.violations)), "")
	rep.Result = res
	return rep, errors.Join(errs...)
}

// backwards reports whether the reads went back from 3 to 2.
func backwards(reads []uint32) bool {
	three := false
	for _, v := range reads {
		three = three || v == 3
		if three && v == 2 {
			return true
		}
	}
	return false
}

func allEqual(v []uint32) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

func seqString(v []uint32) string {
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}
