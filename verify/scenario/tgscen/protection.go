package tgscen

import (
	"fmt"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// The words of node 1 the protection phases aim at.
const (
	protKeyWord   = 0x40 // wrong key: holds 5, a forged fetch-and-inc must leave it
	protCtxWord   = 0x80 // foreign context: holds 0, an intruder's fetch-and-inc must leave it
	protRangeWord = 0xc0 // out of range: the one legal store lands here
)

// ProtectionParams are the parameters of telegraphos-protection. It runs
// Telegraphos II HIBs: contexts, keys and shadow addresses exist only
// there (2.2.4).
type ProtectionParams struct {
	// Nodes is the cluster size; the out-of-range accesses go to node
	// Nodes (the first node outside the cluster) and to node 15.
	Nodes int `toml:"nodes"`
	// WrongKey is the key the forging process puts in its shadow stores
	// to node 0's context 0, whose key is 0x100.
	WrongKey int `toml:"wrong_key"`
}

// ProtectionDefaults are 2 nodes and a forger with key 0xbad.
func ProtectionDefaults() *ProtectionParams { return &ProtectionParams{Nodes: 2, WrongKey: 0xbad} }

// Validate implements scenario.Params.
func (p *ProtectionParams) Validate() error {
	return scenario.FirstError(
		scenario.CheckKeys(p),
		scenario.Check(p.WrongKey == int(procKey(0)), "wrong_key", "%#x is context 0's real key", p.WrongKey),
	)
}

// ProtectionScenario is telegraphos-protection.
func ProtectionScenario() *scenario.Scenario {
	return scenario.Typed("telegraphos-protection",
		"2.2.4: bad key, foreign context, bad address: refused or fault",
		ProtectionDefaults, RunProtection)
}

// protPhase is what one phase left behind.
type protPhase struct {
	refused, faults, remoteWrites uint64
}

// RunProtection runs three phases on node 0 of one cluster in e, each
// ended by MEMORY_BARRIER so that the HIB has judged every access of the
// phase before the next begins: a process forging context 0's key, a
// process using context 1 which its page table does not map, and accesses
// outside the cluster and outside the window's regions (hib/telegraphos
// protect_test.go).
func RunProtection(e *env.Env, p *ProtectionParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cl, pr, err := build(e, config(p.Nodes, 2))
	if err != nil {
		return nil, err
	}
	h := cl.Nodes[0].HIB
	p0 := pr[0]
	forger := cl.Proc(0, 0, uint16(p.WrongKey)) // context 0, whose key is 0x100
	intruder := cl.Proc(0, 1, procKey(0))       // context 1, with its own context's key
	intruder.Contexts = []int{0}                // its page table maps context 0 only
	var phases [4]protPhase
	snap := func(i int) cpu.Op {
		return p0.Do(func(clock.Time) {
			phases[i] = protPhase{h.Stats().Refused, uint64(forger.Faults + intruder.Faults), h.Stats().RemoteWrites}
		})
	}
	var forged uint32 = 0xdead
	var outside []uint32
	ops := []cpu.Op{p0.Store(1, protKeyWord, 5)}
	ops = append(ops, p0.Fence()...)
	ops = append(ops, snap(0))
	// 1: wrong key.
	ops = append(ops, forger.FetchAndInc(1, protKeyWord, func(_ clock.Time, v uint32) { forged = v })...)
	ops = append(ops, p0.Fence()...)
	ops = append(ops, snap(1))
	// 2: foreign context.
	ops = append(ops, intruder.FetchAndInc(1, protCtxWord, nil)...)
	ops = append(ops, p0.Fence()...)
	ops = append(ops, snap(2))
	// 3: out of range: a node outside the cluster, node 15, region 3; then
	// a legal store.
	ops = append(ops, p0.Store(p.Nodes, protKeyWord, 1),
		p0.Load(15, protKeyWord, func(_ clock.Time, v uint32) { outside = append(outside, v) }),
		cpu.Op{Kind: cpu.Store, Addr: tg.WindowBase + 3<<28, Data: tg.Word(1)},
		p0.Store(1, protRangeWord, 8))
	ops = append(ops, p0.Fence()...)
	ops = append(ops, snap(3))
	p0.Start(ops...)
	res, runErr := run(e, cl)

	d := func(i int) protPhase {
		return protPhase{phases[i].refused - phases[i-1].refused, phases[i].faults - phases[i-1].faults,
			phases[i].remoteWrites - phases[i-1].remoteWrites}
	}
	key, ctx, rng := d(1), d(2), d(3)
	rep := &scenario.Report{Title: fmt.Sprintf("telegraphos-protection: %d nodes with Telegraphos II HIBs; on node 0 a process forging context 0's key (%#x, the real one %#x), one using context 1 outside its page table, and accesses outside the cluster",
		p.Nodes, p.WrongKey, procKey(0))}
	srcKey := paper + " 2.2.5 «Only processes that know the key that corresponds to a specific context can write physical addresses into that context»"
	rep.Add("wrong key: refusals (shadow store, then the launch with no address)", fmt.Sprint(key.refused), "refused", srcKey)
	rep.Add("wrong key: value the launch returned", fmt.Sprint(forged), "", "")
	rep.Add("foreign context: MMU page faults / HIB refusals", fmt.Sprintf("%d / %d", ctx.faults, ctx.refused), "page fault",
		paper+" 2.2.4 «an application that attempts to write to a Telegraphos context it is not allowed to, will immediately take a page fault»")
	rep.Add("out of range: refusals (node outside, node 15, region 3)", fmt.Sprint(rng.refused), "",
		paper+" 2.2.1 «The highest order bits of each physical address denote the node identification» (TG-P8)")
	rep.Add("out of range: the refused load returned", seqString(outside), "", "")
	rep.Add("refusals in all (RegRefused)", fmt.Sprint(h.Stats().Refused), "", "")

	completed(rep, res)
	_, _, args0 := h.Context(0)
	rep.Check("wrong key refused", key.refused == 2 && forged == 0 && key.faults == 0,
		"the shadow store and then the launch refused: %d refusals (want 2), the launch returned %d (want 0)", key.refused, forged)
	op1, data1, args1 := h.Context(1)
	rep.Check("foreign context faulted and refused", ctx.faults == 4 && ctx.refused == 1,
		"the MMU faulted the 4 context accesses (op, two operands, launch): %d; the HIB refused the shadow store's key: %d refusals (want 1)", ctx.faults, ctx.refused)
	rep.Check("out-of-range accesses refused", rng.refused == 3 && len(outside) == 1 && outside[0] == 0 && rng.remoteWrites == 1,
		"%d refusals (want 3), the load returned %v (want [0]), %d remote writes left the HIB (want 1, the legal store)", rng.refused, outside, rng.remoteWrites)
	words := []uint32{word(cl, 1, protKeyWord), word(cl, 1, protCtxWord), word(cl, 1, protRangeWord), word(cl, 0, protKeyWord)}
	rep.Check("memory untouched", words[0] == 5 && words[1] == 0 && words[2] == 8 && words[3] == 0,
		"node 1's words %#x, %#x, %#x hold %d, %d, %d (want 5, 0, 8: only the legal stores landed); node 0's %#x holds %d (want 0)",
		protKeyWord, protCtxWord, protRangeWord, words[0], words[1], words[2], protKeyWord, words[3])
	rep.Check("contexts untouched", len(args0) == 0 && op1 == 0 && data1 == [2]uint32{} && len(args1) == 0,
		"context 0 holds no forged address (%v); context 1: op %d, operands %v, addresses %v (want all empty)", args0, op1, data1, args1)
	rep.Measure("refused", float64(h.Stats().Refused), "")
	rep.Measure("faults", float64(forger.Faults+intruder.Faults), "")
	rep.Result = res
	return rep, runErr
}
