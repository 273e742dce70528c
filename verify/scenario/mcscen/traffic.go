package mcscen

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/mctb"
)

// TrafficParams are mc-traffic's parameters: the cluster's size and the
// random load every CPU makes (mctb.Traffic).
type TrafficParams struct {
	// Nodes and CPUs are the cluster's nodes and the CPUs of each.
	Nodes int `toml:"nodes"`
	CPUs  int `toml:"cpus"`
	// Writes is each CPU's operations; MinBytes..MaxBytes each write's
	// size (word multiples); MaxGap the most CPU cycles of work before
	// each; LoadEvery makes about one operation in LoadEvery a checked
	// load of a receive copy instead (0: none).
	Writes    int `toml:"writes"`
	MinBytes  int `toml:"min_bytes"`
	MaxBytes  int `toml:"max_bytes"`
	MaxGap    int `toml:"max_gap"`
	LoadEvery int `toml:"load_every"`
}

// TrafficDefaults are the paper's cluster (MC-P12: eight nodes; MC-P14:
// four CPUs each) with a short random load.
func TrafficDefaults() *TrafficParams {
	c := mctb.DefaultConfig()
	return &TrafficParams{Nodes: c.Nodes, CPUs: c.CPUs,
		// assumed: 40 operations per CPU, 1280 in all; 4 to 32 bytes, a
		// longword (MC-P18) to the 21064A's 32-byte write-buffer block;
		// up to 400 CPU cycles (1.7 µs) of work before each, so that the
		// hub is loaded but not saturated; one operation in 8 a load.
		Writes: 40, MinBytes: 4, MaxBytes: 32, MaxGap: 400, LoadEvery: 8}
}

// trafficOpBytes is what one queued write of a traffic run costs before
// and during the run (its data, the checkers' expectation per receiver,
// the reference model's history). assumed: 4 KB, a generous bound on 8
// receivers' expectations of a 128-byte write and its history.
const trafficOpBytes = 4 << 10

// maxTrafficBytes bounds the write size: the smallest random region is
// 128 bytes (mctb.Cluster.RandomRegions).
const maxTrafficBytes = 128

// maxTrafficGap bounds max_gap: assumed: 2^20 CPU cycles (4.5 ms at 233
// MHz) between a CPU's operations, far beyond any gap that changes the
// traffic's interleaving; a run's simulated time grows with writes x
// max_gap (200 writes per CPU at this gap simulate 0.48 s).
const maxTrafficGap = 1 << 20

// maxLoadEvery bounds load_every: derived: no CPU does more operations
// than writes' memory-budget limit, scenario.BudgetLimit(trafficOpBytes)
// = 2^30 / 4096 = 262144, so a larger interval would never load.
var maxLoadEvery = scenario.BudgetLimit(trafficOpBytes)

// Keys implements scenario.Keyed.
func (p *TrafficParams) Keys() []scenario.KeySpec {
	c := mctb.DefaultConfig()
	return []scenario.KeySpec{
		scenario.Key("nodes", "nodes").Range(2, float64(c.Nodes)).From("MC-P12: eight nodes"),
		scenario.Key("cpus", "CPUs per node").Range(1, float64(c.Host.CPU.Count)).From("MC-P14: four 21064A"),
		scenario.Key("writes", "operations per CPU").AtLeast(0).Budget(trafficOpBytes, "write").From("assumed: 40"),
		scenario.Key("min_bytes", "bytes").Range(4, maxTrafficBytes).Also("a multiple of 4").From("MC-P18: a longword"),
		scenario.Key("max_bytes", "bytes").Range(4, maxTrafficBytes).Also("a multiple of 4, at least min_bytes").
			From("derived: the 21064A's 32-byte write-buffer block"),
		scenario.Key("max_gap", "CPU cycles").Range(0, maxTrafficGap).From("assumed: 400"),
		scenario.Key("load_every", "operations per checked load (0: none)").Range(0, float64(maxLoadEvery)).From("assumed: 8"),
	}
}

// Validate implements scenario.Params.
func (p *TrafficParams) Validate() error {
	return scenario.FirstError(scenario.CheckKeys(p),
		scenario.Check(p.MinBytes%4 != 0, "min_bytes", "must be a multiple of 4 (a longword, MC-P18), got %d", p.MinBytes),
		scenario.Check(p.MaxBytes%4 != 0 || p.MaxBytes < p.MinBytes, "max_bytes", "must be a multiple of 4 and at least min_bytes %d, got %d", p.MinBytes, p.MaxBytes),
		scenario.CheckBudget("writes", int64(p.Writes)*int64(p.Nodes)*int64(p.CPUs), trafficOpBytes, "write (writes x nodes x cpus)"))
}

// TrafficScenario is mc-traffic.
func TrafficScenario() *scenario.Scenario {
	return scenario.Typed("mc-traffic", "random writes on the 8x4 cluster, every MC checker on",
		TrafficDefaults, RunTraffic)
}

// RunTraffic runs the random load on a cluster in e with e's seed: random
// regions (mctb.Cluster.RandomRegions: broadcast, point-to-point and
// loop-back, each with or without loop-back), every CPU's random writes
// and checked loads, every checker on; the writes metric counts the MC
// writes the hub put in its global order (each then checked at every
// receiver that maps its page) plus those dropped at the sender with a
// reason.
func RunTraffic(e *env.Env, p *TrafficParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := mctb.DefaultConfig()
	c.Nodes, c.CPUs = p.Nodes, p.CPUs
	cl, err := mctb.Build(e, c)
	if err != nil {
		return nil, err
	}
	cl.Ref.KeepHistory()
	regions, err := cl.RandomRegions(e.Rand("regions"))
	if err != nil {
		return nil, err
	}
	t := mctb.Traffic{Writes: p.Writes, MinBytes: p.MinBytes, MaxBytes: p.MaxBytes, MaxGap: p.MaxGap, LoadEvery: p.LoadEvery}
	if err := cl.StartTraffic(t, regions); err != nil {
		return nil, err
	}
	res, runErr := e.Run()
	defer cl.Close()
	if !res.Stopped {
		before := e.Monitor.Count()
		_ = cl.Finish()
		if e.Monitor.Count() > before {
			runErr = errors.Join(runErr, e.Monitor.Err())
		}
	}
	s := cl.Ref.Stats()
	rep := &scenario.Report{Title: fmt.Sprintf(
		"mc-traffic: %d AlphaServer nodes x %d CPUs on an MC1 hub, %d random operations per CPU (%d-%d bytes, up to %d cycles apart, a checked load in %d), %d random regions",
		p.Nodes, p.CPUs, p.Writes, p.MinBytes, p.MaxBytes, p.MaxGap, p.LoadEvery, len(regions)), Result: res}
	rep.Add("MC writes ordered by the hub", fmt.Sprint(s.Ordered), "", "one packet each: a burst is cut at 32 bytes and page ends")
	rep.Add("(write, receiver) pairs delivered to memory", fmt.Sprintf("%d of %d expected", s.Delivered, s.Expected), "",
		"each checked where the receive DMA writes memory: once, in the hub's order, no torn word")
	rep.Add("drops: invalid transmit page / unmapped at receiver / CRC", fmt.Sprintf("%d / %d / %d", s.TxInvalid, s.RxUnmapped, s.RxCRC), "",
		"unmapped: the receive filter of the adapters that do not map the page (the hub broadcasts)")
	rep.Check("completed", !res.Stopped, "the run ended with no event left (not cut off by --time-limit) at %v", res.End)
	rep.Check("every write sent was ordered", s.Ordered == s.Sent, "%d sent, %d ordered", s.Sent, s.Ordered)
	rep.Check("every expected delivery reached memory", s.Delivered == s.Expected, "%d of %d", s.Delivered, s.Expected)
	rep.Measure("writes", float64(s.Ordered+s.TxInvalid), "")
	rep.Measure("deliveries", float64(s.Delivered), "")
	return rep, runErr
}
