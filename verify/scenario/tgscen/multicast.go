package tgscen

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// mcPage is the page node 0 maps out; node i's copy is its page mcPage+i.
const (
	mcPage  = 2
	mcValue = 1000 // write i stores mcValue+i
)

// MulticastParams are the parameters of telegraphos-multicast.
type MulticastParams struct {
	// Nodes is the cluster size: node 0 owns the page, every other node
	// holds a copy.
	Nodes int `toml:"nodes"`
	// Writes is the number of stores node 0's processor makes to the page
	// (word i mod 2048 of the page gets write i).
	Writes int `toml:"writes"`
	// Version is the HIB version.
	Version int `toml:"version"`
}

// MulticastDefaults map a page out to 3 copies and write it 50 times.
func MulticastDefaults() *MulticastParams { return &MulticastParams{Nodes: 4, Writes: 50, Version: 1} }

// Validate implements scenario.Params.
func (p *MulticastParams) Validate() error {
	return scenario.FirstError(
		scenario.CheckKeys(p),
		// Each write reaches nodes-1 copies, each a HIB transaction.
		checkQueued("writes", int64(p.Writes)*int64(max(p.Nodes-1, 1)), "reflected write (writes x copies)"),
	)
}

// MulticastScenario is telegraphos-multicast.
func MulticastScenario() *scenario.Scenario {
	return scenario.Typed("telegraphos-multicast",
		"2.2.7: eager-update multicast; every copy gets every write",
		MulticastDefaults, RunMulticast)
}

// applied is a write as a copy applied it.
type applied struct {
	Word  uint32 // offset in the page
	Value uint32
}

// RunMulticast runs the eager-update experiment in e.
func RunMulticast(e *env.Env, p *MulticastParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cl, pr, err := build(e, config(p.Nodes, p.Version))
	if err != nil {
		return nil, err
	}
	var copies []tg.Copy
	for i := 1; i < p.Nodes; i++ {
		copies = append(copies, tg.Copy{Node: i, Page: mcPage + i})
	}
	if err := cl.Nodes[0].HIB.MapOut(mcPage, copies...); err != nil {
		return nil, err
	}
	seen := make([][]applied, p.Nodes) // per node, in the order applied
	issued := make([]clock.Time, p.Writes)
	done := make([]clock.Time, p.Writes) // when the last copy applied write i
	for n := range p.Nodes {
		page := mcPage + n
		cl.Nodes[n].HIB.SetHooks(tg.Hooks{Applied: func(now clock.Time, off, v uint32, _ int, _ uint64) {
			if int(off/tg.PageBytes) != page {
				return
			}
			seen[n] = append(seen[n], applied{off % tg.PageBytes, v})
			if i := int(v) - mcValue; n > 0 && i >= 0 && i < p.Writes {
				done[i] = max(done[i], now)
			}
		}})
	}
	words := uint32(tg.PageBytes / tg.WordBytes)
	p0 := pr[0]
	var ops []cpu.Op
	want := make([]applied, p.Writes)
	for i := range p.Writes {
		off := uint32(i) % words * tg.WordBytes
		want[i] = applied{off, uint32(mcValue + i)}
		ops = append(ops, p0.Do(func(now clock.Time) { issued[i] = now }), p0.Store(0, mcPage*tg.PageBytes+off, uint32(mcValue+i)))
	}
	var storesDone clock.Time
	ops = append(ops, p0.Do(func(now clock.Time) { storesDone = now }))
	p0.Start(ops...)
	res, runErr := run(e, cl)

	rep := &scenario.Report{Title: fmt.Sprintf("telegraphos-multicast: node 0 (%s HIB) maps its page %d out to %d copies (node i's page %d+i) and writes it %d times",
		versionName(p.Version), mcPage, p.Nodes-1, mcPage, p.Writes)}
	completed(rep, res)
	var bad []string
	for n := range p.Nodes {
		if d := cmp.Diff(want, seen[n]); d != "" && len(bad) < 4 {
			bad = append(bad, fmt.Sprintf("node %d applied %d writes: %q", n, len(seen[n]), d))
		}
	}
	rep.Check("every copy has every value, in order", len(bad) == 0,
		"node 0 and its %d copies each applied the %d writes in the order written; mismatches: %v", p.Nodes-1, p.Writes, bad)
	var differ []string
	for i := range min(p.Writes, int(words)) {
		off := uint32(i) * tg.WordBytes
		v0 := word(cl, 0, mcPage*tg.PageBytes+off)
		for n := 1; n < p.Nodes; n++ {
			if v := word(cl, n, uint32(mcPage+n)*tg.PageBytes+off); v != v0 && len(differ) < 4 {
				differ = append(differ, fmt.Sprintf("word %#x: node %d holds %d, node 0 %d", off, n, v, v0))
			}
		}
	}
	rep.Check("copies end equal to the page", len(differ) == 0, "every written word of every copy against node 0's; differing: %v", differ)
	st := cl.Nodes[0].HIB.Stats()
	wantRefl := uint64(p.Writes * (p.Nodes - 1))
	rep.Check("one reflected packet per write and copy", st.Reflects == wantRefl, "node 0 sent %d, want %d x %d", st.Reflects, p.Writes, p.Nodes-1)

	var last, sum clock.Time
	for i := range p.Writes {
		last = max(last, done[i])
		sum += done[i] - issued[i]
	}
	perWrite := (last - issued[0]) / clock.Time(p.Writes)
	src := paper + " 2.2.7 «Every update made by the processor to the local page is transparently sent to all remote pages»"
	rep.Add("time per multicast write (first store to the last copy's last write, / writes)", us(perWrite), "", src)
	rep.Add("first write: store to the last copy applying it", us(done[0]-issued[0]), "", "")
	rep.Add("write: store to the last copy applying it, mean", us(sum/clock.Time(p.Writes)), "", "")
	rep.Add("processor: time to issue the stores, per store", us((storesDone-issued[0])/clock.Time(p.Writes)), "",
		"posted: «release the TurboChannel as soon as the write request is latched by the HIB» (TG-P10)")
	rep.Add("reflected packets sent by node 0", fmt.Sprint(st.Reflects), fmt.Sprint(wantRefl), "")
	rep.Measure("per_write_us", usf(perWrite), "µs")
	rep.Measure("first_latency_us", usf(done[0]-issued[0]), "µs")
	rep.Measure("mean_latency_us", usf(sum/clock.Time(p.Writes)), "µs")
	rep.Measure("reflects", float64(st.Reflects), "")
	rep.Result = res
	return rep, runErr
}
