package shrimpscen

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// TrafficParams are shrimp-traffic's parameters: the random VMMC load
// every node makes (shrimptb.Traffic) and the design choices of issue 14
// section 4, each a key.
type TrafficParams struct {
	// Nodes is the cluster's nodes.
	Nodes int `toml:"nodes"`
	// Ops is each node's operations; AUPercent the share that are
	// automatic-update runs (the rest deliberate-update sends); StoreBytes
	// the AU stores' width (0: either); MaxRun the most stores of a run;
	// MinDU..MaxDU a send's bytes; NotifyPercent the sends with the
	// notify bit; MaxGap the most CPU cycles of work before each
	// operation.
	Ops           int `toml:"ops"`
	AUPercent     int `toml:"au_percent"`
	StoreBytes    int `toml:"store_bytes"`
	MaxRun        int `toml:"max_run"`
	MinDU         int `toml:"min_du"`
	MaxDU         int `toml:"max_du"`
	NotifyPercent int `toml:"notify_percent"`
	MaxGap        int `toml:"max_gap"`
	// The design choices (issue 14 section 4).
	AU               bool   `toml:"au"`
	Combine          string `toml:"combine"`
	CombineCycles    int    `toml:"combine_cycles"`
	Subpage          int    `toml:"subpage"`
	FIFOBytes        int    `toml:"fifo_bytes"`
	FIFOThreshold    int    `toml:"fifo_threshold"`
	DUQueue          int    `toml:"du_queue"`
	AsyncSend        bool   `toml:"async_send"`
	SendSyscall      bool   `toml:"send_syscall"`
	RecvInterrupt    string `toml:"recv_interrupt"`
	FIFOResume       int    `toml:"fifo_resume"`
	MembusCycleShare bool   `toml:"membus_cycle_share"`
}

// TrafficDefaults are the paper's cluster (SH-P1: sixteen nodes) and NI
// with a short random load (design section 5: AU stores of 4/8 B, DU
// sends of 4-512 B, notify 5%).
func TrafficDefaults() *TrafficParams {
	c := shrimptb.DefaultConfig()
	ni, v := c.NI, c.Params
	return &TrafficParams{Nodes: c.Nodes,
		// assumed: 40 operations per node, two in three AU runs of up to 4
		// stores; sends of 4 to 512 bytes (design section 5); up to 300
		// CPU cycles (5 µs) of work before each.
		Ops: 40, AUPercent: 67, StoreBytes: 0, MaxRun: 4, MinDU: 4, MaxDU: 512, NotifyPercent: 5, MaxGap: 300,
		AU: ni.AU, Combine: "random", CombineCycles: ni.CombineCycles, Subpage: ni.SubpageBytes,
		FIFOBytes: ni.FIFOBytes, FIFOThreshold: ni.FIFOThreshold, DUQueue: ni.DUQueue,
		AsyncSend: v.AsyncSend, SendSyscall: v.SendSyscall, RecvInterrupt: v.RecvInterrupt, FIFOResume: v.FIFOResume,
		MembusCycleShare: !c.HoldMemoryBus}
}

// trafficOpBytes is what one operation of a traffic run may cost in the
// reference model and checkers (its stores or snapshot, expectations).
// assumed: 8 KB, a 4 KB send's snapshot and expectation.
const trafficOpBytes = 8 << 10

// maxTrafficGap bounds max_gap: assumed: 2^20 CPU cycles (17 ms at 60
// MHz) between operations, far beyond any gap that changes the
// interleaving.
const maxTrafficGap = 1 << 20

// maxFIFOBytes bounds fifo_bytes: assumed: 1 MB, 32 times the prototype's
// 32 KB (SH-P20); the FIFO's words are allocated.
const maxFIFOBytes = 1 << 20

// maxDelay bounds combine_cycles: shrimp.MaxDelayCycles.
var maxDelay = float64(shrimp.MaxDelayCycles)

// Keys implements scenario.Keyed.
func (p *TrafficParams) Keys() []scenario.KeySpec {
	c := shrimptb.DefaultConfig()
	return []scenario.KeySpec{
		scenario.Key("nodes", "nodes").Range(2, float64(c.Nodes)).From("SH-P1: sixteen PC nodes"),
		scenario.Key("ops", "operations per node").AtLeast(0).Budget(trafficOpBytes, "operation").From("assumed: 40"),
		scenario.Key("au_percent", "% AU runs").Range(0, 100).From("assumed: 67"),
		scenario.Key("store_bytes", "bytes (0: either)").Range(0, 8).Also("0, 4 or 8").From("assumed: either"),
		scenario.Key("max_run", "stores").Range(1, 512).From("assumed: 4"),
		scenario.Key("min_du", "bytes").Range(4, 4096).Also("a multiple of 4").From("assumed: 4"),
		scenario.Key("max_du", "bytes").Range(4, 4096).Also("a multiple of 4, at least min_du").From("SH-P13: up to a page; assumed: 512, design section 5"),
		scenario.Key("notify_percent", "% sends").Range(0, 100).From("design 5: 5%"),
		scenario.Key("max_gap", "CPU cycles").Range(0, maxTrafficGap).From("assumed: 300"),
		scenario.Key("au", "true/false").From("SH-P16: automatic update on"),
		scenario.Key("combine", "").OneOf("off", "on", "random").From("design 5: random per binding"),
		scenario.Key("combine_cycles", "core cycles").Range(1, maxDelay).From("assumed: 32 (hib/shrimp)"),
		scenario.Key("subpage", "bytes").Range(4, 4096).Also("a power of two").From("assumed: 4096 (off)"),
		scenario.Key("fifo_bytes", "bytes").Range(8, maxFIFOBytes).Also("a multiple of 8 holding a packet").From("SH-P20: 32 KB"),
		scenario.Key("fifo_threshold", "bytes").Range(0, maxFIFOBytes).Also("below fifo_bytes").From("assumed: half"),
		scenario.Key("du_queue", "requests").Range(0, 2).From("SH-P24: 0 (the experiment's 2)"),
		scenario.Key("async_send", "true/false").From("assumed: synchronous"),
		scenario.Key("send_syscall", "true/false").From("Table 2: off (the what-if on)"),
		scenario.Key("recv_interrupt", "").OneOf(vmmc.RecvNone, vmmc.RecvMessage, vmmc.RecvPacket).From("4.4: none (polling)"),
		scenario.Key("fifo_resume", "bytes (0: threshold/2)").Range(0, maxFIFOBytes).From("assumed: threshold/2"),
		scenario.Key("membus_cycle_share", "true/false").From("SH-P10: off (held)"),
	}
}

// Validate implements scenario.Params.
func (p *TrafficParams) Validate() error {
	return scenario.FirstError(scenario.CheckKeys(p),
		scenario.Check(p.StoreBytes != 0 && p.StoreBytes != 4 && p.StoreBytes != 8, "store_bytes", "must be 0, 4 or 8, got %d", p.StoreBytes),
		scenario.Check(p.MinDU%4 != 0, "min_du", "must be a multiple of 4, got %d", p.MinDU),
		scenario.Check(p.MaxDU%4 != 0 || p.MaxDU < p.MinDU, "max_du", "must be a multiple of 4 and at least min_du %d, got %d", p.MinDU, p.MaxDU),
		scenario.Check(p.Subpage&(p.Subpage-1) != 0, "subpage", "must be a power of two, got %d", p.Subpage),
		scenario.Check(p.FIFOThreshold >= p.FIFOBytes, "fifo_threshold", "must be below fifo_bytes %d (a threshold at the size is never crossed), got %d", p.FIFOBytes, p.FIFOThreshold),
		scenario.CheckBudget("ops", int64(p.Ops)*int64(p.Nodes), trafficOpBytes, "operation (ops x nodes)"))
}

// config is the cluster p describes.
func (p *TrafficParams) config() (shrimptb.Config, shrimptb.Traffic, error) {
	c := shrimptb.DefaultConfig()
	c.Nodes = p.Nodes
	c.NI.AU, c.NI.CombineCycles, c.NI.SubpageBytes = p.AU, p.CombineCycles, p.Subpage
	c.NI.FIFOBytes, c.NI.FIFOThreshold, c.NI.DUQueue = p.FIFOBytes, p.FIFOThreshold, p.DUQueue
	c.Params.AsyncSend, c.Params.SendSyscall, c.Params.RecvInterrupt, c.Params.FIFOResume = p.AsyncSend, p.SendSyscall, p.RecvInterrupt, p.FIFOResume
	c.HoldMemoryBus = !p.MembusCycleShare
	if err := c.NI.Validate(); err != nil {
		return c, shrimptb.Traffic{}, fmt.Errorf("shrimp-traffic: %w", err)
	}
	comb := map[string]int{"off": shrimptb.CombineOff, "on": shrimptb.CombineOn, "random": shrimptb.CombineRandom}[p.Combine]
	t := shrimptb.Traffic{Ops: p.Ops, AUPercent: p.AUPercent, StoreBytes: p.StoreBytes, MaxRun: p.MaxRun,
		MinDU: p.MinDU, MaxDU: p.MaxDU, NotifyPercent: p.NotifyPercent, MaxGap: p.MaxGap, Combine: comb}
	return c, t, t.Validate()
}

// TrafficScenario is shrimp-traffic.
func TrafficScenario() *scenario.Scenario {
	return scenario.Typed("shrimp-traffic", "random AU/DU/notify load on the 16 PCs, every SHRIMP checker on",
		TrafficDefaults, RunTraffic)
}

// RunTraffic runs the random load on a cluster in e with e's seed, every
// checker on; the transactions metric counts AU stores and DU transfers
// checked at their receivers plus drops with a reason.
func RunTraffic(e *env.Env, p *TrafficParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c, t, err := p.config()
	if err != nil {
		return nil, err
	}
	cl, err := shrimptb.Build(e, c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if err := cl.StartTraffic(t); err != nil {
		return nil, err
	}
	res, runErr := e.Run()
	if !res.Stopped {
		before := e.Monitor.Count()
		_ = cl.Finish()
		if e.Monitor.Count() > before {
			runErr = errors.Join(runErr, e.Monitor.Err())
		}
	}
	s := cl.Ref.Stats()
	rep := &scenario.Report{Title: fmt.Sprintf(
		"shrimp-traffic: %d SHRIMP nodes, %d random operations per node (%d%% AU runs of up to %d stores, DU sends of %d-%d bytes, %d%% with notify), combine %s, FIFO %d B (threshold %d), du_queue %d",
		p.Nodes, p.Ops, p.AUPercent, p.MaxRun, p.MinDU, p.MaxDU, p.NotifyPercent, p.Combine, p.FIFOBytes, p.FIFOThreshold, p.DUQueue), Result: res}
	rep.Add("AU stores snooped / sent in packets / lost to overflow", fmt.Sprintf("%d / %d / %d", s.Snooped, s.Stores, s.LostStores), "",
		"every AU-enabled store beat on a memory bus")
	rep.Add("DU transfers started / refused", fmt.Sprintf("%d / %d", s.DUStarts, s.DURefused), "", "UDMA initiations")
	rep.Add("packets delivered to memory", fmt.Sprintf("%d of %d expected", s.Delivered, s.Expected), "",
		"each checked where the incoming DMA writes memory: once, in order per (source, kind)")
	rep.Add("drops: overflow / unexported / CRC", fmt.Sprintf("%d / %d / %d", s.Overflows, s.RxUnexported, s.RxCRC), "", "")
	rep.Check("completed", !res.Stopped, "the run ended with no event left (not cut off by --time-limit) at %v", res.End)
	rep.Check("every expected packet reached memory or was dropped with a reason", s.Delivered+s.Lost == s.Expected,
		"%d delivered + %d lost of %d", s.Delivered, s.Lost, s.Expected)
	rep.Measure("transactions", float64(s.Stores+s.DUStarts+s.LostStores+s.DURefused), "")
	rep.Measure("packets", float64(s.Delivered), "")
	return rep, runErr
}
