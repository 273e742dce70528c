package tgscen

import (
	"fmt"
	"slices"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// counterOff is the word of node 0's shared memory the fetch-and-inc
// scenario increments.
const counterOff = 0x100

// FetchIncParams are the parameters of telegraphos-fetchinc.
type FetchIncParams struct {
	// Nodes is the cluster size; every node's process (node 0's included,
	// whose operations are local) increments the counter at node 0.
	Nodes int `toml:"nodes"`
	// Ops is the number of fetch-and-increments each process makes, one
	// after the other (each waits for its result, 2.2.4).
	Ops int `toml:"ops"`
	// Version is the HIB: 1 (PAL-code launch in special mode) or 2
	// (contexts, keys and shadow addresses).
	Version int `toml:"version"`
}

// FetchIncDefaults are 8 nodes making 25 fetch-and-increments each.
func FetchIncDefaults() *FetchIncParams { return &FetchIncParams{Nodes: 8, Ops: 25, Version: 1} }

// Validate implements scenario.Params.
func (p *FetchIncParams) Validate() error {
	return scenario.FirstError(
		scenario.CheckKeys(p),
		// Every node's program is queued before the run: 16 x 100000
		// operations took 2 GB before the first cycle.
		checkQueued("ops", int64(p.Ops)*int64(p.Nodes), "queued operation (ops x nodes)"),
	)
}

// FetchIncScenario is telegraphos-fetchinc.
func FetchIncScenario() *scenario.Scenario {
	return scenario.Typed("telegraphos-fetchinc",
		"2.2.3: N nodes fetch-and-increment one counter; values unique",
		FetchIncDefaults, RunFetchInc)
}

// RunFetchInc runs the contended counter in e.
func RunFetchInc(e *env.Env, p *FetchIncParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cl, procs, err := build(e, config(p.Nodes, p.Version))
	if err != nil {
		return nil, err
	}
	total := p.Nodes * p.Ops
	var got []uint32
	var last clock.Time
	latency := make([]clock.Time, p.Nodes) // sum over the node's operations
	for i, pr := range procs {
		var ops []cpu.Op
		for range p.Ops {
			var start clock.Time
			ops = append(ops, pr.Do(func(now clock.Time) { start = now }))
			ops = append(ops, pr.FetchAndInc(0, counterOff, func(now clock.Time, old uint32) {
				got = append(got, old)
				latency[i] += now - start
				last = max(last, now)
			})...)
		}
		pr.Start(ops...)
	}
	res, runErr := run(e, cl)

	rep := &scenario.Report{Title: fmt.Sprintf("telegraphos-fetchinc: %d nodes with %s HIBs, %d fetch-and-increments each on one word of node 0",
		p.Nodes, versionName(p.Version), p.Ops)}
	missing, dup := handedOut(got, total)
	final := word(cl, 0, counterOff)
	completed(rep, res)
	rep.Check("every value handed out exactly once", len(got) == total && len(missing) == 0 && len(dup) == 0,
		"%d results for %d operations; values 0..%d missing: %v, handed out twice: %v", len(got), total, total-1, missing, dup)
	rep.Check("counter ends at N x K", final == uint32(total), "node 0's word holds %d, want %d x %d = %d", final, p.Nodes, p.Ops, total)
	var atomics uint64
	for _, n := range cl.Nodes {
		atomics += n.HIB.Stats().Atomics
	}
	rep.Check("every operation launched once", atomics == uint64(total), "the HIBs launched %d atomic operations, want %d", atomics, total)

	perOp := last / clock.Time(max(total, 1))
	rep.Add("all operations done (from time 0)", us(last), "", "")
	rep.Add("time per operation, aggregate (total / N x K)", us(perOp), "",
		paper+" 2.2.3 «Telegraphos implements the fetch-and-store, fetch-and-inc, and compare-and-swap remote atomic operations» (no figure)")
	rep.Add("operations per µs, aggregate", fmt.Sprintf("%.3f", float64(total)/max(usf(last), 1e-9)), "", "")
	var remote clock.Time
	for i, l := range latency {
		where := "remote"
		if i == 0 {
			where = "local"
		} else {
			remote += l
		}
		rep.Add(fmt.Sprintf("node %d (%s): mean latency per operation", i, where), us(l/clock.Time(p.Ops)), "", "")
	}
	rep.Add("final counter value", fmt.Sprint(final), fmt.Sprint(total), "")
	rep.Measure("total_us", usf(last), "µs")
	rep.Measure("per_op_us", usf(perOp), "µs")
	rep.Measure("local_latency_us", usf(latency[0]/clock.Time(p.Ops)), "µs")
	if p.Nodes > 1 {
		rep.Measure("remote_latency_us", usf(remote/clock.Time((p.Nodes-1)*p.Ops)), "µs")
	}
	rep.Measure("results", float64(len(got)), "")
	rep.Measure("missing", float64(len(missing)), "")
	rep.Measure("duplicates", float64(len(dup)), "")
	rep.Result = res
	return rep, runErr
}

// handedOut returns the values of 0..n-1 missing from got and the values
// got holds more than once (at most 10 of each).
func handedOut(got []uint32, n int) (missing, dup []uint32) {
	s := slices.Clone(got)
	slices.Sort(s)
	seen := make([]int, n)
	for _, v := range s {
		if int(v) < n {
			seen[v]++
		} else if len(dup) < 10 {
			dup = append(dup, v) // out of range: handed out wrongly
		}
	}
	for v, c := range seen {
		if c == 0 && len(missing) < 10 {
			missing = append(missing, uint32(v))
		}
		if c > 1 && len(dup) < 10 {
			dup = append(dup, uint32(v))
		}
	}
	return missing, dup
}
