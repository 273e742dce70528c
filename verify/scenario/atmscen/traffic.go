package atmscen

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/atmtb"
)

// TrafficParams are atm-traffic's parameters: the cluster, the random
// load every node makes (atmtb.Traffic) and the links' faults.
type TrafficParams struct {
	// Nodes is the cluster's nodes; Switched puts the ASX-100 between
	// them (required above 2).
	Nodes    int  `toml:"nodes"`
	Switched bool `toml:"switched"`
	// Ops is each node's operations.
	Ops int `toml:"ops"`
	// Write, Read, CAS, Block, RPC and Illegal are the operation mix's
	// weights (RPC: calls of 1..223 argument words to another node's
	// server, atmtb.Traffic).
	Write   int `toml:"write"`
	Read    int `toml:"read"`
	CAS     int `toml:"cas"`
	Block   int `toml:"block"`
	RPC     int `toml:"rpc"`
	Illegal int `toml:"illegal"`
	// MaxGap is the most CPU cycles of work before each operation;
	// MaxBlockWords a block transfer's largest size.
	MaxGap        int `toml:"max_gap"`
	MaxBlockWords int `toml:"max_block_words"`
	// DropProb and CorruptProb are every link's cell loss and payload
	// corruption probabilities.
	DropProb    float64 `toml:"drop_prob"`
	CorruptProb float64 `toml:"corrupt_prob"`
}

// TrafficDefaults are 4 nodes on the ASX-100 with atmtb.DefaultTraffic's
// mix and the design's fault rates (section 6.4: one cell in a thousand
// dropped, one in a thousand corrupted).
func TrafficDefaults() *TrafficParams {
	t := atmtb.DefaultTraffic(100)
	return &TrafficParams{Nodes: atmtb.MaxNodes, Switched: true, Ops: t.Ops,
		Write: t.Write, Read: t.Read, CAS: t.CAS, Block: t.Block, RPC: t.RPC, Illegal: t.Illegal,
		MaxGap: t.MaxGap, MaxBlockWords: t.MaxBlockWords, DropProb: 1e-3, CorruptProb: 1e-3}
}

// trafficOpBytes is what one operation of a traffic run costs before and
// during the run (the reference model's expectation of a block's words
// and its verdicts). assumed: 1 KB, a generous bound for a 64-word block.
const trafficOpBytes = 1 << 10

// maxTrafficGap bounds max_gap: atmtb.Traffic's own limit (2^24 CPU
// cycles, 0.67 s at 25 MHz).
const maxTrafficGap = 1 << 24

// maxWeight bounds each weight: atmtb's (assumed: any larger ratio says
// nothing more).
const maxWeight = atmtb.MaxTrafficWeight

// Keys implements scenario.Keyed.
func (p *TrafficParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("nodes", "nodes").Range(2, atmtb.MaxNodes).From("AT-P8: the ASX-100's 4 ports"),
		scenario.Key("switched", "true/false").From("assumed: true (more than 2 nodes need the switch)"),
		scenario.Key("ops", "operations per node").AtLeast(0).Budget(trafficOpBytes, "operation").From("assumed: 100"),
		scenario.Key("write", "weight").Range(0, maxWeight).From("design 6.5: 50"),
		scenario.Key("read", "weight").Range(0, maxWeight).From("design 6.5: 15"),
		scenario.Key("cas", "weight").Range(0, maxWeight).From("design 6.5: 10"),
		scenario.Key("block", "weight").Range(0, maxWeight).From("design 6.5: 10"),
		scenario.Key("rpc", "weight").Range(0, maxWeight).From("design 6.5: 10 (10% of the calls with the other defaults)"),
		scenario.Key("illegal", "weight").Range(0, maxWeight).From("design 6.5: 5"),
		scenario.Key("max_gap", "CPU cycles").Range(0, maxTrafficGap).From("design 6.5: 2000"),
		scenario.Key("max_block_words", "words").Range(1, atmtb.MaxTrafficBlockWords).From("atmtb.DefaultTraffic: 64 (7 cells)"),
		scenario.Key("drop_prob", "probability per cell").Range(0, 0.1).From("design 6.4: 1e-3"),
		scenario.Key("corrupt_prob", "probability per cell").Range(0, 0.1).From("design 6.4: 1e-3"),
	}
}

// Validate implements scenario.Params.
func (p *TrafficParams) Validate() error {
	return scenario.FirstError(scenario.CheckKeys(p),
		scenario.Check(p.Nodes > 2 && !p.Switched, "switched", "must be true for %d nodes (a direct link joins 2)", p.Nodes),
		scenario.Check(p.Write+p.Read+p.CAS+p.Block+p.RPC+p.Illegal == 0, "write", "the weights write, read, cas, block, rpc and illegal must not all be 0"),
		scenario.CheckBudget("ops", int64(p.Ops)*int64(p.Nodes), trafficOpBytes, "operation (ops x nodes)"))
}

// traffic is the atmtb load of p.
func (p *TrafficParams) traffic() atmtb.Traffic {
	t := atmtb.DefaultTraffic(p.Ops)
	t.Write, t.Read, t.CAS, t.Block, t.RPC, t.Illegal = p.Write, p.Read, p.CAS, p.Block, p.RPC, p.Illegal
	t.MaxGap, t.MaxBlockWords = p.MaxGap, p.MaxBlockWords
	return t
}

// TrafficScenario is atm-traffic.
func TrafficScenario() *scenario.Scenario {
	return scenario.Typed("atm-traffic", "random RMA operations on 2-4 DECstations, faults and every checker on",
		TrafficDefaults, RunTraffic)
}

// RunTraffic runs the random load (atmtb.StartTraffic) on a cluster in e
// with e's seed, every checker on; the operations metric counts what the
// regression tier counts (atmtb.TrafficRun.Operations).
func RunTraffic(e *env.Env, p *TrafficParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := atmtb.DefaultConfig()
	c.Nodes, c.Switched = p.Nodes, p.Switched
	c.Link.DropProb, c.Link.CorruptProb = p.DropProb, p.CorruptProb
	cl, err := atmtb.Build(e, c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	tr, err := atmtb.StartTraffic(cl, p.traffic())
	if err != nil {
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
	s := atmtb.RefOf(cl).Stats()
	where := "joined directly"
	if p.Switched {
		where = "on the ASX-100"
	}
	rep := &scenario.Report{Title: fmt.Sprintf(
		"atm-traffic: %d DECstations %s, %d random operations per node (WRITE/READ/CAS/block/RPC/illegal %d/%d/%d/%d/%d/%d, up to %d cycles apart), links dropping %g and corrupting %g of the cells",
		p.Nodes, where, p.Ops, p.Write, p.Read, p.CAS, p.Block, p.RPC, p.Illegal, p.MaxGap, p.DropProb, p.CorruptProb), Result: res}
	rep.Add("operations", fmt.Sprint(tr.Operations()), "", "cells issued as WRITE, READ request, CAS request or block cell, and traps refused at the sender")
	rep.Add("delivered: WRITE/block/READ/CAS cells", fmt.Sprintf("%d / %d / %d / %d",
		s.Delivered[rma.OpWrite], s.Delivered[rma.OpBlock], s.Delivered[rma.OpReadReq], s.Delivered[rma.OpCASReq]), "", "each checked by the scoreboard word by word")
	rep.Add("refused: at the sender / at the receiver", fmt.Sprintf("%d / %d", sum(s.RefusedSend[:]), sum(s.RefusedRecv[:])), "", "each with its reason; nothing written")
	rep.Add("lost: switch / link / RX full / HEC / CRC-10", fmt.Sprintf("%d / %d / %d / %d / %d", s.LostSwitch, s.LostLink, s.LostRxFull, s.LostHEC, s.LostCRC), "",
		"cell conservation: every cell sent is delivered or lost with a reason")
	rep.Add("CAS executed / answered again / resent", fmt.Sprintf("%d / %d / %d", s.CASExec, s.CASDup, s.Retransmits), "", "section 2.3: CAS «is reliable in the face of cell loss»")
	rs := tr.RPCStats()
	rep.Add("RPC calls / checked / executed / answered from the cache / cells re-sent", fmt.Sprintf("%d / %d / %d / %d / %d",
		tr.RPCCalls, tr.RPCChecked, rs.Calls, rs.DupCalls, rs.Resent), "", "exactly once (rpc.once): every call returns its arguments' checksum, each executed once (section 3.1.2)")
	rep.Check("completed", !res.Stopped && tr.Done == p.Nodes, "the run ended with no event left (not cut off by --time-limit) at %v, %d of %d programs done", res.End, tr.Done, p.Nodes)
	rep.Check("no scoreboard, protection or CAS mismatch", s.Mismatches == 0, "%d", s.Mismatches)
	rep.Check("every RPC call returned its result, executed once", tr.RPCChecked == tr.RPCCalls && rs.Calls == tr.RPCCalls,
		"%d calls, %d results right, %d executions", tr.RPCCalls, tr.RPCChecked, rs.Calls)
	rep.Measure("operations", float64(tr.Operations()), "")
	return rep, runErr
}

// sum adds counts.
func sum(v []uint64) uint64 {
	var n uint64
	for _, x := range v {
		n += x
	}
	return n
}
