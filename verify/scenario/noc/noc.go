// Package noc holds the network scenarios: synthetic or trace-driven
// traffic on nisim's switched networks (the wormhole mesh and graphs, the
// two Myrinet clusters, the ATM cell switch and the Memory Channel hub),
// run through warm-up, measurement and drain by the networks' testbench
// (verify/testbench/noctb), with reports of latency and throughput and
// their verdicts. Its parameters carry BookSim's names so that a BookSim
// configuration such as examples/mesh88_lat can be written down directly.
package noc

import (
	"fmt"
	"math"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/noctb"
)

// Params are the network experiment's parameters.
type Params struct {
	// Topology is mesh, graph, myrinet-grid or myrinet-clos.
	Topology string `toml:"topology"`
	// K is the mesh radix (mesh only; for graphs, the radix the transpose
	// and neighbor patterns assume).
	K int `toml:"k"`
	// GraphFile is the network of a graph topology (the format is
	// switch/topology.Graph's; routing is up*/down* tables); empty selects
	// the example network switch/topology/testdata/example.graph.
	GraphFile string `toml:"graph_file"`
	// Router is the wormhole router (mesh and graph), BookSim's keys.
	Router noctb.RouterConfig `toml:"router"`
	// ChannelLatency and FlitBytes are the wormhole networks' channels (a
	// graph file may give channels their own latencies).
	ChannelLatency int `toml:"channel_latency"`
	FlitBytes      int `toml:"flit_bytes"`
	// Clock is the mesh's clock (the default 1 GHz makes a cycle a ns).
	Clock string `toml:"clock"`
	// Myrinet is the platform of the Myrinet clusters: ppro or p3.
	Myrinet string `toml:"myrinet"`
	// Traffic is uniform, transpose, bitcomp, hotspot or neighbor.
	Traffic     string  `toml:"traffic"`
	Hotspots    []int   `toml:"hotspots"`
	HotFraction float64 `toml:"hot_fraction"`
	// InjectionRate is per node per cycle, in flits if
	// InjectionRateUsesFlits, else in packets (BookSim's default).
	InjectionRate          float64 `toml:"injection_rate"`
	InjectionRateUsesFlits bool    `toml:"injection_rate_uses_flits"`
	// PacketSize is "20" or a distribution such as "1:0.5,20:0.5" (flits).
	PacketSize string `toml:"packet_size"`
	// SamplePeriod cycles per period; WarmupPeriods of warm-up and
	// MeasurePeriods of measurement; the drain may last DrainLimit cycles
	// before the network counts as saturated.
	SamplePeriod   int `toml:"sample_period"`
	WarmupPeriods  int `toml:"warmup_periods"`
	MeasurePeriods int `toml:"measure_periods"`
	DrainLimit     int `toml:"drain_limit"`
	// TraceFile replays "cycle source destination size" records instead of
	// synthetic traffic (see switch/traffic.ReadTrace).
	TraceFile string `toml:"trace_file"`

	graph *noctb.Graph // read from GraphFile by Validate
}

// MeshDefaults is BookSim's examples/mesh88_lat with uniform traffic at 0.1
// flits/node/cycle.
func MeshDefaults() *Params {
	return &Params{Topology: "mesh", K: 8, Router: noctb.Mesh88Lat(), ChannelLatency: 1, FlitBytes: 16,
		Clock: "1GHz", Myrinet: "ppro", Traffic: "uniform", InjectionRate: 0.1, InjectionRateUsesFlits: true,
		PacketSize: "20", SamplePeriod: 1000, WarmupPeriods: 3, MeasurePeriods: 3, DrainLimit: 30000}
}

// MyrinetDefaults is a Myrinet cluster with uniform traffic of 64-byte
// packets (16 4-byte flits).
func MyrinetDefaults(topo, platform string) *Params {
	p := MeshDefaults()
	p.Topology, p.Myrinet, p.PacketSize, p.InjectionRate = topo, platform, "16", 0.05
	return p
}

// Scenarios returns the network scenarios: mesh, myrinet-grid, myrinet-clos,
// atm-star and mchub-star.
func Scenarios() []*scenario.Scenario {
	mk := func(name, summary string, d func() *Params) *scenario.Scenario {
		return &scenario.Scenario{Name: name, Summary: summary,
			Defaults: func() scenario.Params { return d() },
			Run:      func(e *env.Env, p scenario.Params) (*scenario.Report, error) { return Run(e, p.(*Params)) }}
	}
	const sys = "networks"
	// Typical run times: the defaults, measured once with /usr/bin/time on a
	// 2-core machine shared with other jobs, 2026-11-27 (documentation only).
	return withWaves([]*scenario.Scenario{
		mk("mesh", "8x8 wormhole mesh, BookSim mesh88_lat, uniform traffic", MeshDefaults).In(sys, "0.2 s"),
		mk("graph", "wormhole routers on an irregular graph, up*/down* routing",
			func() *Params { p := MeshDefaults(); p.Topology, p.PacketSize = "graph", "5"; return p }).In(sys, "< 0.1 s"),
		mk("myrinet-grid", "64 hosts, 4x4x4 grid of 8-port Myrinet switches (LCI PPro)",
			func() *Params { return MyrinetDefaults("myrinet-grid", "ppro") }).In(sys, "0.1 s"),
		mk("myrinet-clos", "64 hosts, Clos of 16-port Myrinet-2000 switches (LCI P3)",
			func() *Params { return MyrinetDefaults("myrinet-clos", "p3") }).In(sys, "0.1 s"),
		ATMScenario().In("ATM", "< 0.1 s"),
		MCScenario().In("Memory Channel", "< 0.1 s"),
	})
}

// Validate implements scenario.Params: the ranges of Keys (one key each)
// after the network's graph is read, then the rules that tie keys
// together.
func (p *Params) Validate() error {
	if _, err := clock.ParseFreq(p.Clock); err != nil {
		return &scenario.KeyError{Key: "clock", Msg: err.Error()}
	}
	sizes, err := traffic.ParseSizes(p.PacketSize)
	if err != nil {
		return &scenario.KeyError{Key: "packet_size", Msg: err.Error()}
	}
	if err := p.checkPlatform(); err != nil {
		return err
	}
	p.graph = nil
	if p.Topology == "graph" {
		p.graph = noctb.ExampleGraph()
		if p.GraphFile != "" {
			g, err := noctb.ReadGraphFile(p.GraphFile)
			if err != nil {
				return &scenario.KeyError{Key: "graph_file", Msg: err.Error()}
			}
			p.graph = g
		}
	}
	// The one-key ranges (the mesh radix before the traffic pattern
	// below, which sizes itself by the k x k terminals).
	if err := scenario.CheckKeys(p); err != nil {
		return err
	}
	if p.wormhole() {
		if err := p.Router.Validate(); err != nil {
			return fmt.Errorf("router.%w", err)
		}
		if p.Router.CutThrough && sizes.Max() > p.Router.VCBufSize {
			// Virtual cut-through grants an output VC only when the
			// downstream VC can hold the whole packet: a longer packet
			// never leaves its source.
			return &scenario.KeyError{Key: "packet_size", Msg: fmt.Sprintf(
				"packets of up to %d flits can never move under router.vct=true with router.vc_buf_size=%d "+
					"(cut-through needs room for the whole packet in one VC buffer)", sizes.Max(), p.Router.VCBufSize)}
		}
	}
	if p.TraceFile == "" && p.K >= 2 {
		if _, err := traffic.New(p.Traffic, p.nodes(), traffic.Options{K: p.K, Hotspots: p.Hotspots, HotFraction: p.HotFraction}); err != nil {
			return &scenario.KeyError{Key: "traffic", Msg: err.Error()}
		}
	}
	return scenario.FirstError(
		p.checkCycles(),
		p.checkPacketBudget(sizes),
	)
}

// checkCycles refuses runs beyond scenario.MaxRun on the network's clock
// (2^63 cycles overflowed Time; the delays' bound is in Keys).
func (p *Params) checkCycles() error {
	clk, _ := clock.ParseFreq(p.Clock)
	if pl, ok := noctb.MyrinetPlatform(p.Myrinet); ok && !p.wormhole() {
		clk = pl.Link.Clock
	}
	return checkRun(p.SamplePeriod, p.WarmupPeriods, p.MeasurePeriods, p.DrainLimit, clk)
}

// wormhole reports whether the network is made of wormhole routers.
func (p *Params) wormhole() bool { return p.Topology == "mesh" || p.Topology == "graph" }

// nodes returns the number of terminals (after Validate).
func (p *Params) nodes() int { return p.netConfig().Nodes() }

func (p *Params) checkPlatform() error {
	if _, ok := noctb.MyrinetPlatform(p.Myrinet); !ok {
		return &scenario.KeyError{Key: "myrinet", Msg: fmt.Sprintf("%q is not ppro or p3", p.Myrinet)}
	}
	return nil
}

// netConfig is the network of p (after Validate), without its traffic and
// window.
func (p *Params) netConfig() noctb.NetConfig {
	clk, _ := clock.ParseFreq(p.Clock)
	pl, _ := noctb.MyrinetPlatform(p.Myrinet)
	return noctb.NetConfig{Topology: p.Topology, K: p.K, Graph: p.graph, Router: p.Router,
		ChannelLatency: p.ChannelLatency, FlitBytes: p.FlitBytes, Clock: clk, Platform: pl}
}

// Run builds the network of p in e (noctb.RunNet), runs the experiment
// and reports.
func Run(e *env.Env, p *Params) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sizes, _ := traffic.ParseSizes(p.PacketSize)
	c := p.netConfig()
	c.Window = stats.Window{Warmup: uint64(p.SamplePeriod * p.WarmupPeriods),
		Measure: uint64(p.SamplePeriod * p.MeasurePeriods), DrainLimit: uint64(p.DrainLimit)}
	nodes := c.Nodes()
	if err := p.setTraffic(&c, nodes, sizes); err != nil {
		return nil, err
	}
	if p.TraceFile != "" {
		recs, err := traffic.ReadTraceFile(p.TraceFile, nodes)
		if err != nil {
			return nil, &scenario.KeyError{Key: "trace_file", Msg: err.Error()}
		}
		per := make([][]traffic.Record, nodes)
		for _, r := range recs {
			per[r.Src] = append(per[r.Src], r)
		}
		c.Replay = per
	}
	run, runErr := noctb.RunNet(e, c)
	if run == nil {
		return nil, runErr
	}
	rep := p.report(run, sizes)
	conserved(rep, "no loss or duplication", e.Monitor, !run.Saturated, run.Sent, run.Received, run.Dropped, "packets", run.Checkers...)
	measured(rep, run.Stats.Packet.N, "packets")
	rep.Stuck = run.Stuck
	rep.Result = run.Result
	return rep, runErr
}

// setTraffic sets c's synthetic traffic from p (none when p replays a
// trace: only the sizes).
func (p *Params) setTraffic(c *noctb.NetConfig, nodes int, sizes traffic.Sizes) error {
	c.Sizes = sizes
	if p.TraceFile != "" {
		return nil
	}
	pat, err := traffic.New(p.Traffic, nodes, traffic.Options{K: p.K, Hotspots: p.Hotspots, HotFraction: p.HotFraction,
		SelfTraffic: p.wormhole()}) // BookSim's uniform includes the source itself
	if err != nil {
		return &scenario.KeyError{Key: "traffic", Msg: err.Error()}
	}
	c.Pattern = pat
	if p.InjectionRateUsesFlits {
		c.Injection, err = traffic.NewBernoulli(p.InjectionRate, sizes)
	} else {
		c.Injection, err = traffic.NewBernoulliPackets(p.InjectionRate)
	}
	if err != nil {
		return &scenario.KeyError{Key: "injection_rate", Msg: err.Error()}
	}
	return nil
}

func (p *Params) report(run *noctb.NetRun, sizes traffic.Sizes) *scenario.Report {
	b, r := run.Net, run.Stats
	rep := &scenario.Report{Title: fmt.Sprintf("%s: %s traffic at %g %s/node/cycle, %s-flit packets",
		p.Topology, p.Traffic, p.InjectionRate, map[bool]string{true: "flits", false: "packets"}[p.InjectionRateUsesFlits], p.PacketSize)}
	// Zero-load reference: the mean over all source/destination pairs (the
	// mix of uniform traffic; other patterns use fewer pairs), from the
	// pipeline and link delays.
	var sum float64
	var n int
	for s := range b.Nodes {
		for d := range b.Nodes {
			if s == d && !p.wormhole() {
				continue
			}
			sum += b.ZeroLoad(s, d, int(math.Round(sizes.Mean())))
			n++
		}
	}
	zl := sum / float64(n)
	ns := func(cycles float64) string {
		return fmt.Sprintf("%.1f cycles (%.0f ns)", cycles, cycles*float64(b.Clock.Period())/1000)
	}
	src := "pipeline + link delays"
	if p.Topology == "mesh" {
		src = "BookSim iq_router rules: 4H+P+1 for mesh88_lat"
	}
	rep.Add("packet latency, mean (creation to tail)", ns(r.Packet.Mean), "zero load, all pairs "+ns(zl), src)
	rep.Add("packet latency p50 / p99 / max", fmt.Sprintf("%d / %d / %d cycles", r.Packet.P50, r.Packet.P99, r.Packet.Max), "", "")
	rep.Add("network latency, mean", ns(r.Network.Mean), "", "")
	rep.Add("flit latency, mean", ns(r.Flit.Mean), "", "")
	hopsRef, hopsSrc := "", ""
	switch p.Topology {
	case "myrinet-grid":
		hopsRef, hopsSrc = "at most 10", "MY-P18 «the maximum distance between two NIs is 10 hops»"
	case "myrinet-clos":
		hopsRef, hopsSrc = "at most 3", "MY-P21 «(3 hops)»"
	}
	longest := 0
	for s := range b.Nodes {
		for d := range b.Nodes {
			longest = max(longest, b.Hops(s, d))
		}
	}
	rep.Add("switches crossed, mean / longest route", fmt.Sprintf("%.2f / %d", r.MeanHops, longest), hopsRef, hopsSrc)
	if b.HopCycles > 0 {
		// The zero-load tables of switch/myrinet check that a packet's
		// simulated latency grows by exactly this per switch.
		hop := float64(b.HopCycles) * float64(b.Clock.Period()) / 1000
		paper, src := "", "" // the paper gives the switch delay of the PPro cluster only
		if p.Myrinet == "ppro" {
			paper, src = "about 100 ns", "MY-P18 «The switch delay is approximately 100 ns»"
		}
		rep.Add("switch delay per hop (idle path: flit, wire, fall-through)", fmt.Sprintf("%d cycles (%.0f ns)", b.HopCycles, hop), paper, src)
		if p.Myrinet == "ppro" {
			rep.Add("total switch delay, longest route", fmt.Sprintf("%.0f ns", hop*float64(longest)),
				"at most 1 µs", "MY-P19 «so the total switch delay is at most 1 µs»")
		}
		rep.Measure("hop_delay", hop, "ns")
	}
	rep.Add("offered / accepted flits/node/cycle", fmt.Sprintf("%.4f / %.4f", r.Offered, r.Accepted), "", "")
	rep.Add("measured packets delivered / dropped (failed CRC)", fmt.Sprintf("%d / %d", r.Packet.N, r.Dropped), "", "")
	// Utilisation over the run until the network emptied.
	if cycles := float64(r.LastDelivery); cycles > 0 {
		var sum, peak float64
		n := 0
		for _, l := range b.Links {
			for _, d := range []*link.Dir{l.From(link.A), l.From(link.B)} {
				u := float64(d.Stats().BusyCycles) / cycles
				sum += u
				peak = max(peak, u)
				n++
			}
		}
		rep.Add("link utilisation, mean / busiest", fmt.Sprintf("%.3f / %.3f", sum/float64(n), peak), "", "")
		rep.Measure("link_utilisation", sum/float64(n), "")
		rep.Measure("link_utilisation_max", peak, "")
	}
	st1, st2 := b.Stalls()
	if p.wormhole() {
		rep.Add("router stalls: no credit / lost allocation", fmt.Sprintf("%d / %d", st1, st2), "", "")
	} else {
		rep.Add("STOP seen / head cycles blocked at switches", fmt.Sprintf("%d / %d", st1, st2), "", "")
	}
	rep.Check("drained", !r.Saturated, "%d measured packets undelivered after the drain limit", r.Lost)
	rep.Measure("packets", float64(r.Packet.N), "measured")
	rep.Measure("dropped", float64(r.Dropped), "measured packets")
	rep.Measure("offered", r.Offered, "flits/node/cycle")
	rep.Measure("accepted", r.Accepted, "flits/node/cycle")
	rep.Measure("latency", r.Packet.Mean, "cycles")
	rep.Measure("latency_p99", float64(r.Packet.P99), "cycles")
	rep.Measure("network_latency", r.Network.Mean, "cycles")
	rep.Measure("flit_latency", r.Flit.Mean, "cycles")
	rep.Measure("hops", r.MeanHops, "switches")
	rep.Measure("zero_load_latency", zl, "cycles")
	rep.Measure("saturated", map[bool]float64{true: 1, false: 0}[r.Saturated], "")
	return rep
}
