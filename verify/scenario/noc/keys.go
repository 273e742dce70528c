package noc

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/noctb"
)

// The values the string keys of the networks take.
var (
	topologies  = []string{"mesh", "graph", "myrinet-grid", "myrinet-clos"}
	patterns    = []string{"uniform", "transpose", "bitcomp", "hotspot", "neighbor"}
	starTraffic = []string{"uniform", "hotspot", "bitcomp", "neighbor"}
	allocators  = []string{"islip", "separable_input_first"}
)

// booksim is the origin of the keys BookSim's examples/mesh88_lat sets.
const booksim = "BookSim examples/mesh88_lat"

// Keys implements scenario.Keyed: every key's unit, range and the origin
// of its default. Validate enforces these ranges (scenario.CheckKeys) in
// this order, so a key's bound may use the keys above it; the router's
// own Validate (switch/wormhole) stays behind them as its Build's check.
// The bounds that depend on the network (the router buffers and packets
// against scenario.MemoryBudget) are computed for p's network.
func (p *Params) Keys() []scenario.KeySpec {
	clk, _ := clock.ParseFreq(p.Clock)
	if pl, ok := noctb.MyrinetPlatform(p.Myrinet); ok && !p.wormhole() {
		clk = pl.Link.Clock
	}
	k := scenario.Key("k", "routers per dimension").From(booksim)
	if p.Topology == "mesh" {
		k = k.Range(2, 64)
	}
	ks := []scenario.KeySpec{
		scenario.Key("topology", "").OneOf(topologies...),
		k,
		scenario.Key("graph_file", "file (empty: switch/topology/testdata/example.graph)"),
		scenario.Key("flit_bytes", "bytes").AtLeast(1).Limit(512, "a flit crosses a link in a cycle; a FIFO is at most 4096 bits"),
		scenario.Key("clock", "frequency (1GHz makes a cycle a ns)").From("assumed: 1 GHz"),
		scenario.Key("myrinet", "platform (myrinet-* topologies)").OneOf("ppro", "p3").From("LCI paper Table I"),
		scenario.Key("traffic", "pattern").OneOf(patterns...),
		scenario.Key("hotspots", "terminals").Entries(int64(p.nodesSafe()), "one entry per terminal"),
		scenario.Key("hot_fraction", "fraction of the traffic"),
		scenario.Key("injection_rate", "flits (or packets)/node/cycle").Range(0, 1),
		scenario.Key("injection_rate_uses_flits", "true: flits, false: packets (BookSim's default)").From(booksim),
		p.packetSpec(),
		scenario.Key("sample_period", "cycles").AtLeast(1).From(booksim),
		scenario.Key("warmup_periods", "sample periods").AtLeast(0).From(booksim),
		scenario.Key("measure_periods", "sample periods").AtLeast(1).From(booksim),
		scenario.Key("drain_limit", "cycles").AtLeast(1).From("assumed"),
		scenario.Key("trace_file", "file of 'cycle source destination size' records (empty: synthetic)"),
	}
	lat := scenario.Key("channel_latency", "cycles").AtLeast(0).From(booksim)
	if p.wormhole() {
		lat = lat.Cycles(clk, scenario.MaxDelay)
	}
	ks = append(ks, lat)
	return append(ks, p.routerKeys(clk)...)
}

// routerKeys are the router's keys (BookSim's names): the bounds of
// switch/wormhole's Config.Validate that concern one key, the delays
// within scenario.MaxDelay, the buffers within scenario.MemoryBudget.
func (p *Params) routerKeys(clk clock.Clock) []scenario.KeySpec {
	r := p.Router
	delay := func(key string, lo float64) scenario.KeySpec {
		s := scenario.Key("router."+key, "cycles").AtLeast(lo).From(booksim)
		if p.wormhole() {
			s = s.Cycles(clk, scenario.MaxDelay)
		}
		return s
	}
	perFlit := flitBytes + int64(p.FlitBytes)
	in := p.routerInputs()
	vcBuf := scenario.Key("router.vc_buf_size", "flits per VC").From(booksim)
	buf := scenario.Key("router.buf_size", "flits per input port (buffer_policy = shared)")
	if r.BufferPolicy == "private" {
		vcBuf = vcBuf.AtLeast(1)
		if p.wormhole() {
			vcBuf = vcBuf.Budget(in*int64(r.NumVCs)*perFlit,
				fmt.Sprintf("flit of %d+%d B in each of %d VCs of %d router inputs", flitBytes, p.FlitBytes, r.NumVCs, in))
		}
	}
	if r.BufferPolicy == "shared" {
		buf = buf.AtLeast(1)
		if p.wormhole() {
			buf = buf.Budget(in*perFlit, fmt.Sprintf("flit of %d+%d B in each of %d router inputs", flitBytes, p.FlitBytes, in))
		}
	}
	return []scenario.KeySpec{
		scenario.Key("router.num_vcs", "virtual channels per port").Range(1, 64).From(booksim),
		scenario.Key("router.buffer_policy", "").OneOf("private", "shared").From(booksim),
		vcBuf,
		buf,
		delay("credit_delay", 0),
		delay("routing_delay", 0),
		delay("vc_alloc_delay", 1),
		delay("sw_alloc_delay", 1),
		delay("st_prepare_delay", 0),
		delay("st_final_delay", 0),
		scenario.Key("router.speculative", "switch bids in the VC allocation cycle (needs 1-cycle allocators)").From(booksim),
		scenario.Key("router.input_speedup", "crossbar ports per input").Range(1, float64(max(r.NumVCs, 1))).From(booksim),
		scenario.Key("router.output_speedup", "crossbar ports per output").Range(1, 64).From(booksim),
		scenario.Key("router.vc_allocator", "").OneOf(allocators...).From(booksim),
		scenario.Key("router.sw_allocator", "").OneOf(allocators...).From(booksim),
		scenario.Key("router.wait_for_tail_credit", "hold an output VC until the tail's credit returns").From(booksim),
		scenario.Key("router.vct", "virtual cut-through").From(booksim),
	}
}

// nodesSafe is nodes() for any values (a mesh radix outside its range
// counts as 64 terminals: the key's own bound refuses it first).
func (p *Params) nodesSafe() int {
	if p.Topology == "mesh" && (p.K < 2 || p.K > 64) {
		return 64
	}
	return p.nodes()
}

// Keys implements scenario.Keyed for atm-star (see Params.Keys).
func (p *ATMParams) Keys() []scenario.KeySpec {
	ports := max(p.Ports, 2)
	return []scenario.KeySpec{
		scenario.Key("ports", "hosts").Range(2, 1024).From("FORE ASX-100 preset (switch/atm)"),
		scenario.Key("latency", "switch cycles").AtLeast(0).Cycles(noctb.ATMClock(), scenario.MaxDelay).From("FORE ASX-100 preset (switch/atm)"),
		scenario.Key("queue_depth", "cells per output queue").AtLeast(1).
			Budget(int64(ports)*(flitBytes+noctb.CellBytes), fmt.Sprintf("cell of %d+%d B at each of %d outputs", flitBytes, noctb.CellBytes, ports)).
			From("FORE ASX-100 preset (switch/atm)"),
		scenario.Key("traffic", "pattern").OneOf(starTraffic...).From("assumed: the paper gives no traffic mix"),
		scenario.Key("hotspots", "hosts").Range(0, float64(ports-1)).Entries(int64(ports), "one entry per host"),
		scenario.Key("hot_fraction", "fraction of the cells").Above(0).AtMost(1),
		scenario.Key("injection_rate", "fraction of the link's cell rate").Range(0, 1).From("assumed: a moderate load"),
		scenario.Key("sample_period", "link cycles").AtLeast(1),
		scenario.Key("warmup_periods", "sample periods").AtLeast(0),
		scenario.Key("measure_periods", "sample periods").AtLeast(1),
		scenario.Key("drain_limit", "link cycles").AtLeast(1),
	}
}

// Keys implements scenario.Keyed for mchub-star (see Params.Keys).
func (p *MCParams) Keys() []scenario.KeySpec {
	fb := int64(noctb.MCFlitBytes())
	ports := max(p.Ports, 2)
	return []scenario.KeySpec{
		scenario.Key("ports", "adapters").Range(2, 1024).From("MC1 preset, MC-P12 «a cluster of eight»"),
		scenario.Key("delay", "hub cycles").AtLeast(0).Cycles(noctb.MCClock(), scenario.MaxDelay).From("MC1 preset (switch/mchub)"),
		scenario.Key("queue_depth", "flits per output queue").AtLeast(1).
			Budget(int64(ports)*(flitBytes+fb), fmt.Sprintf("flit of %d+%d B at each of %d outputs", flitBytes, fb, ports)).
			From("MC1 preset (switch/mchub)"),
		scenario.Key("mapping", "").OneOf("broadcast", "single").From("assumed: Cashmere's shared structures"),
		scenario.Key("pages", "pages").Range(1, 1<<16).From("assumed: 16 shared pages"),
		scenario.Key("loopback", "writers get their own writes (MC-P8)"),
		scenario.Key("injection_rate", "fraction of the link bandwidth, data bytes").Range(0, 1).From("assumed: 0.05"),
		scenario.Key("write_size", "bytes, or size:weight,... distribution").From("assumed: words and 64-byte lines, MC-P17/P18"),
		scenario.Key("sample_period", "link cycles").AtLeast(1),
		scenario.Key("warmup_periods", "sample periods").AtLeast(0),
		scenario.Key("measure_periods", "sample periods").AtLeast(1),
		scenario.Key("drain_limit", "link cycles").AtLeast(1),
	}
}
