package atmscen

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/atmtb"
)

// TrafficParams are atm-traffic's parameters: the cluster's size and the
// random WRITEs every node makes.
//
// This is the minimal driver the scenario was registered with (issue 15
// design 3.6): random protected WRITEs of 1 to 10 words from every node to
// every other, on disjoint per-source areas, checked word for word against
// what the senders wrote once the run has ended. The full driver of the
// design (READ, CAS, block, RPC, illegal operations, link faults, the
// reference model's checkers) is atmtb's traffic.go, not built yet.
type TrafficParams struct {
	// Nodes is the cluster's nodes (switched when more than 2).
	Nodes int `toml:"nodes"`
	// Switched puts the ASX-100 between 2 nodes too.
	Switched bool `toml:"switched"`
	// Ops is each node's WRITEs.
	Ops int `toml:"ops"`
	// MaxGap is the most CPU cycles of work before each WRITE.
	MaxGap int `toml:"max_gap"`
}

// TrafficDefaults are 4 nodes on the switch with a short random load.
func TrafficDefaults() *TrafficParams {
	// assumed: 50 WRITEs per node, up to 2000 cycles (80 µs) apart:
	// the design's gap range (section 6.5).
	return &TrafficParams{Nodes: atmtb.MaxNodes, Switched: true, Ops: 50, MaxGap: 2000}
}

// trafficOpBytes is what one WRITE of a traffic run costs before and
// during the run (its expectation). assumed: 256 bytes, a generous bound
// on 10 words of expectation and the program's state.
const trafficOpBytes = 256

// maxTrafficGap bounds max_gap: assumed: 2^20 CPU cycles (42 ms at 25
// MHz), far beyond any gap that changes the interleaving.
const maxTrafficGap = 1 << 20

// area is the words of a node's segment each source writes into: source
// s owns [s·area, (s+1)·area), the segment split in MaxNodes.
const area = atmtb.SegBytes / 4 / atmtb.MaxNodes

// Keys implements scenario.Keyed.
func (p *TrafficParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("nodes", "nodes").Range(2, atmtb.MaxNodes).From("AT-P8: the ASX-100's 4 ports"),
		scenario.Key("switched", "").From("assumed: true (more than 2 nodes need the switch)"),
		scenario.Key("ops", "WRITEs per node").AtLeast(0).Budget(trafficOpBytes, "WRITE").From("assumed: 50"),
		scenario.Key("max_gap", "CPU cycles").Range(0, maxTrafficGap).From("design 6.5: 0-2000"),
	}
}

// Validate implements scenario.Params.
func (p *TrafficParams) Validate() error {
	return scenario.FirstError(scenario.CheckKeys(p),
		scenario.Check(p.Nodes > 2 && !p.Switched, "switched", "must be true for %d nodes (a direct link joins 2)", p.Nodes),
		scenario.CheckBudget("ops", int64(p.Ops)*int64(p.Nodes), trafficOpBytes, "WRITE (ops x nodes)"))
}

// TrafficScenario is atm-traffic.
func TrafficScenario() *scenario.Scenario {
	return scenario.Typed("atm-traffic", "random protected WRITEs between 2-4 DECstations, every word checked",
		TrafficDefaults, RunTraffic)
}

// RunTraffic runs the random WRITEs on a cluster in e with e's seed and
// compares every destination word with the last value its source wrote
// there.
func RunTraffic(e *env.Env, p *TrafficParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := atmtb.DefaultConfig()
	c.Nodes, c.Switched = p.Nodes, p.Switched
	cl, err := atmtb.Build(e, c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if _, err := atmtb.Connect(cl); err != nil {
		return nil, err
	}
	words := area
	// want[dst][src] is the words src last wrote into dst's area for src.
	want := make([][][]uint32, p.Nodes)
	for d := range want {
		want[d] = make([][]uint32, p.Nodes)
		for s := range want[d] {
			want[d][s] = make([]uint32, words)
		}
	}
	var refused []string
	sent := 0
	for s := range p.Nodes {
		rng := e.Rand(fmt.Sprintf("atm-traffic.n%d", s))
		k := cl.Nodes[s].Kernel
		type op struct{ dst, off, n, gap int }
		ops := make([]op, p.Ops)
		vals := make([][]uint32, p.Ops)
		for i := range ops {
			d := rng.IntN(p.Nodes - 1)
			if d >= s {
				d++
			}
			n := 1 + rng.IntN(rma.MaxWords)
			o := op{dst: d, off: rng.IntN(words - n + 1), n: n, gap: rng.IntN(p.MaxGap + 1)}
			ops[i] = o
			vals[i] = make([]uint32, n)
			for w := range n {
				vals[i][w] = uint32(s)<<28 | uint32(i)<<8 | uint32(w) | 1<<27
				want[d][s][o.off+w] = vals[i][w]
			}
		}
		sent += p.Ops
		cl.Nodes[s].CPUs[0].Run(cpu.Go(func(pr *cpu.Proc) {
			for i, o := range ops {
				if o.gap > 0 {
					pr.Compute(o.gap)
				}
				if st := k.Write(pr, o.dst, s*words+o.off, o.n, false, vals[i]); st != rma.OK {
					refused = append(refused, fmt.Sprintf("node %d op %d: %v", s, i, st))
				}
			}
		}))
	}
	res, runErr := e.Run()
	if !res.Stopped {
		before := e.Monitor.Count()
		_ = cl.Finish()
		if e.Monitor.Count() > before {
			runErr = errors.Join(runErr, e.Monitor.Err())
		}
	}
	bad, checked := 0, 0
	first := ""
	for d := range p.Nodes {
		img := make([]byte, atmtb.SegBytes)
		if err := cl.Nodes[d].Memory().Storage().Read(atmtb.SegBase, img); err != nil {
			return nil, err
		}
		for s := range p.Nodes {
			for w, v := range want[d][s] {
				if v == 0 {
					continue
				}
				checked++
				if got := binary.LittleEndian.Uint32(img[4*(s*words+w):]); got != v {
					bad++
					if first == "" {
						first = fmt.Sprintf("node %d word %d (from node %d): %#x, want %#x", d, s*words+w, s, got, v)
					}
				}
			}
		}
	}
	rep := &scenario.Report{Title: fmt.Sprintf(
		"atm-traffic (minimal driver): %d DECstations %s, %d random WRITEs of 1-10 words per node, up to %d cycles apart",
		p.Nodes, map[bool]string{true: "on the ASX-100", false: "joined directly"}[p.Switched], p.Ops, p.MaxGap), Result: res}
	rep.Add("WRITE traps issued", fmt.Sprint(sent), "", "every node to a random other node, into that source's own area of the segment")
	rep.Add("destination words checked", fmt.Sprint(checked), "", "each the last value its source wrote there (one VC per pair keeps a source's WRITEs in order, AT-P19)")
	rep.Check("completed", !res.Stopped, "the run ended with no event left (not cut off by --time-limit) at %v", res.End)
	rep.Check("no WRITE refused", len(refused) == 0, "%d refused %v", len(refused), refused)
	rep.Check("every destination word as written", bad == 0, "%d of %d wrong; first: %s", bad, checked, first)
	rep.Measure("writes", float64(sent), "")
	return rep, runErr
}
