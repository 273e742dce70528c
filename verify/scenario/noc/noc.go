// Package noc runs synthetic or trace-driven traffic on nisim's switched
// networks (the wormhole mesh and the two Myrinet clusters) through
// warm-up, measurement and drain, and reports latency and throughput. Its
// parameters carry BookSim's names so that a BookSim configuration such as
// examples/mesh88_lat can be written down directly.
package noc

import (
	"fmt"
	"math"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/myrinet"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/topology"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/switch/wormhole"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/scenario"
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
	Router wormhole.Config `toml:"router"`
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

	graph *topology.Graph // read from GraphFile by Validate
}

// MeshDefaults is BookSim's examples/mesh88_lat with uniform traffic at 0.1
// flits/node/cycle.
func MeshDefaults() *Params {
	return &Params{Topology: "mesh", K: 8, Router: wormhole.Mesh88Lat(), ChannelLatency: 1, FlitBytes: 16,
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
	return []*scenario.Scenario{
		mk("mesh", "8x8 wormhole mesh, BookSim mesh88_lat router, uniform traffic: latency and throughput", MeshDefaults),
		mk("graph", "wormhole routers on an irregular graph (a file, default the 10-router example) with up*/down* table routing",
			func() *Params { p := MeshDefaults(); p.Topology, p.PacketSize = "graph", "5"; return p }),
		mk("myrinet-grid", "64 hosts on a 4x4x4 grid of 8-port Myrinet switches (LCI PPro cluster)",
			func() *Params { return MyrinetDefaults("myrinet-grid", "ppro") }),
		mk("myrinet-clos", "64 hosts on a full-bisection Clos of 16-port Myrinet-2000 switches (LCI P3 cluster)",
			func() *Params { return MyrinetDefaults("myrinet-clos", "p3") }),
		ATMScenario(),
		MCScenario(),
	}
}

// Validate implements scenario.Params.
func (p *Params) Validate() error {
	if _, err := clock.ParseFreq(p.Clock); err != nil {
		return &scenario.KeyError{Key: "clock", Msg: err.Error()}
	}
	sizes, err := traffic.ParseSizes(p.PacketSize)
	if err != nil {
		return &scenario.KeyError{Key: "packet_size", Msg: err.Error()}
	}
	if _, err := p.platform(); err != nil {
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
	p.graph = nil
	if p.Topology == "graph" {
		p.graph = topology.ExampleGraph()
		if p.GraphFile != "" {
			g, err := topology.ReadGraphFile(p.GraphFile)
			if err != nil {
				return &scenario.KeyError{Key: "graph_file", Msg: err.Error()}
			}
			p.graph = g
		}
	}
	if p.TraceFile == "" && p.K >= 2 {
		if _, err := traffic.New(p.Traffic, p.nodes(), traffic.Options{K: p.K, Hotspots: p.Hotspots, HotFraction: p.HotFraction}); err != nil {
			return &scenario.KeyError{Key: "traffic", Msg: err.Error()}
		}
	}
	return scenario.FirstError(
		scenario.Check(p.Topology != "mesh" && p.Topology != "graph" && p.Topology != "myrinet-grid" && p.Topology != "myrinet-clos",
			"topology", "%q is not mesh, graph, myrinet-grid or myrinet-clos", p.Topology),
		scenario.Check(p.Topology == "mesh" && (p.K < 2 || p.K > 64), "k", "must be 2..64 (got %d)", p.K),
		scenario.Check(p.ChannelLatency < 0, "channel_latency", "must not be negative (got %d)", p.ChannelLatency),
		scenario.Check(p.FlitBytes < 1, "flit_bytes", "must be at least 1 (got %d)", p.FlitBytes),
		scenario.Check(p.InjectionRate < 0 || p.InjectionRate > 1, "injection_rate", "must be in [0, 1] (got %g)", p.InjectionRate),
		scenario.Check(p.SamplePeriod < 1, "sample_period", "must be at least 1 (got %d)", p.SamplePeriod),
		scenario.Check(p.WarmupPeriods < 0, "warmup_periods", "must not be negative (got %d)", p.WarmupPeriods),
		scenario.Check(p.MeasurePeriods < 1, "measure_periods", "must be at least 1 (got %d)", p.MeasurePeriods),
		scenario.Check(p.DrainLimit < 1, "drain_limit", "must be at least 1 (got %d)", p.DrainLimit),
		// A flit crosses a link in one cycle: its link FIFOs are flit_bytes
		// wide, and a FIFO is at most 4096 bits.
		scenario.Check(p.FlitBytes > 512, "flit_bytes", "must be at most 512 (got %d)", p.FlitBytes),
		p.checkCycles(),
	)
}

// checkCycles refuses delays beyond scenario.MaxDelay and runs beyond
// scenario.MaxRun on the network's clock (2^63 cycles overflowed Time).
func (p *Params) checkCycles() error {
	clk, _ := clock.ParseFreq(p.Clock)
	if pl, err := p.platform(); err == nil && !p.wormhole() {
		clk = pl.Link.Clock
	}
	errs := []error{checkRun(p.SamplePeriod, p.WarmupPeriods, p.MeasurePeriods, p.DrainLimit, clk)}
	if p.wormhole() {
		r := p.Router
		for _, d := range []struct {
			key string
			n   int
		}{{"channel_latency", p.ChannelLatency}, {"router.credit_delay", r.CreditDelay}, {"router.routing_delay", r.RoutingDelay},
			{"router.vc_alloc_delay", r.VCAllocDelay}, {"router.sw_alloc_delay", r.SWAllocDelay},
			{"router.st_prepare_delay", r.STPrepareDelay}, {"router.st_final_delay", r.STFinalDelay}} {
			errs = append(errs, scenario.CheckCycles(d.key, int64(d.n), clk, scenario.MaxDelay))
		}
	}
	return scenario.FirstError(errs...)
}

// wormhole reports whether the network is made of wormhole routers.
func (p *Params) wormhole() bool { return p.Topology == "mesh" || p.Topology == "graph" }

// nodes returns the number of terminals (after Validate).
func (p *Params) nodes() int {
	switch {
	case p.Topology == "mesh":
		return p.K * p.K
	case p.Topology == "graph" && p.graph != nil:
		return len(p.graph.Terminals)
	}
	return 64
}

func (p *Params) platform() (myrinet.Platform, error) {
	switch p.Myrinet {
	case "ppro":
		return myrinet.PPro(), nil
	case "p3":
		return myrinet.P3(), nil
	}
	return myrinet.Platform{}, &scenario.KeyError{Key: "myrinet", Msg: fmt.Sprintf("%q is not ppro or p3", p.Myrinet)}
}

// terminals is what Run needs from any of the networks.
type built struct {
	terminals []*fabric.Terminal
	clk       clock.Clock
	nodes     int
	k         int
	hops      func(s, d int) int
	zeroLoad  func(src, dst, flits int) float64 // packet latency on an idle network, cycles
	links     []*link.Link
	stalls    func() (credit, blocked uint64)
	hopCycles int // Myrinet: a head's time per switch on an idle path
}

// Run builds the network in e, runs the experiment and reports.
func Run(e *env.Env, p *Params) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sizes, _ := traffic.ParseSizes(p.PacketSize)
	win := stats.Window{Warmup: uint64(p.SamplePeriod * p.WarmupPeriods),
		Measure: uint64(p.SamplePeriod * p.MeasurePeriods), DrainLimit: uint64(p.DrainLimit)}
	nodes := p.nodes()
	tc, err := p.terminalConfig(nodes, sizes)
	if err != nil {
		return nil, err
	}
	var clk clock.Clock
	if p.wormhole() {
		clk, _ = clock.ParseFreq(p.Clock)
	} else {
		pl, _ := p.platform()
		clk = pl.Link.Clock
	}
	x := fabric.NewExperiment(e, clk, nodes, win)
	sh := &fabric.Shared{Stats: x.Stats(), Packets: check.NewConservation[uint64](e.Monitor, "Network.Packets"),
		OnDeliver: func(now clock.Time, _ *fabric.Packet) { x.Delivered(now) },
		OnDrop:    func(now clock.Time, _ *fabric.Packet) { x.Dropped(now) }}
	if !p.wormhole() || p.Router.NumVCs == 1 {
		// One path and one queue per hop: delivery is in order per
		// source and destination, so check it.
		sh.Order = check.NewOrdering[[2]int](e.Monitor, "Network.Order")
	}
	b, err := p.build(e, clk, tc, sh)
	if err != nil {
		return nil, err
	}
	for _, t := range b.terminals {
		x.Add(t)
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
		for i, t := range b.terminals {
			t.SetReplay(per[i])
		}
	}
	x.Start()
	res, runErr := e.Run()
	if !x.Saturated() {
		sh.Packets.Finish(res.End) // everything generated has been delivered
		if runErr == nil {
			runErr = e.Monitor.Err()
		}
	}
	rep := p.report(b, x.Stats().Result(), res, sizes)
	paths := []string{"Network.Packets"}
	if sh.Order != nil {
		paths = append(paths, "Network.Order")
	}
	sent, recv, dropped := sh.Packets.Counts()
	conserved(rep, "no loss or duplication", e.Monitor, !x.Saturated(), sent, recv, dropped, "packets", paths...)
	rep.Stuck = x.StuckState()
	rep.Result = res
	return rep, runErr
}

func (p *Params) terminalConfig(nodes int, sizes traffic.Sizes) (fabric.TerminalConfig, error) {
	var tc fabric.TerminalConfig
	tc.Sizes = sizes
	if p.TraceFile != "" {
		return tc, nil
	}
	pat, err := traffic.New(p.Traffic, nodes, traffic.Options{K: p.K, Hotspots: p.Hotspots, HotFraction: p.HotFraction,
		SelfTraffic: p.wormhole()}) // BookSim's uniform includes the source itself
	if err != nil {
		return tc, &scenario.KeyError{Key: "traffic", Msg: err.Error()}
	}
	tc.Pattern = pat
	if p.InjectionRateUsesFlits {
		tc.Injection, err = traffic.NewBernoulli(p.InjectionRate, sizes)
	} else {
		tc.Injection, err = traffic.NewBernoulliPackets(p.InjectionRate)
	}
	if err != nil {
		return tc, &scenario.KeyError{Key: "injection_rate", Msg: err.Error()}
	}
	return tc, nil
}

func (p *Params) build(e *env.Env, clk clock.Clock, tc fabric.TerminalConfig, sh *fabric.Shared) (*built, error) {
	switch p.Topology {
	case "mesh":
		net, err := topology.Mesh(e, "Mesh", topology.MeshConfig{K: p.K, Router: p.Router, Clock: clk,
			ChannelLatency: p.ChannelLatency, FlitBytes: p.FlitBytes, Terminal: tc}, sh)
		if err != nil {
			return nil, err
		}
		l, pipe := p.ChannelLatency, p.pipeline()
		return &built{terminals: net.Terminals, clk: clk, nodes: p.K * p.K, k: p.K, hops: net.Hops, links: net.Links,
			zeroLoad: func(s, d, flits int) float64 { return float64(l + net.Hops(s, d)*(pipe+l) + flits) },
			stalls:   routerStalls(net)}, nil
	case "graph":
		net, err := topology.FromGraph(e, "Graph", p.graph, topology.GraphConfig{Router: p.Router, Clock: clk,
			ChannelLatency: p.ChannelLatency, FlitBytes: p.FlitBytes, Terminal: tc}, sh)
		if err != nil {
			return nil, err
		}
		rt, err := topology.NewRouting(p.graph)
		if err != nil {
			return nil, err
		}
		pipe := p.pipeline()
		return &built{terminals: net.Terminals, clk: clk, nodes: len(p.graph.Terminals), k: p.K, hops: net.Hops, links: net.Links,
			// The injection link, then per router its pipeline and the
			// latency of the link it sends on, then the body.
			zeroLoad: func(s, d, flits int) float64 {
				z := p.ChannelLatency + flits
				for _, h := range rt.Path(s, d) {
					lat := rt.Ports[h.Router][h.Port].Latency
					if lat == topology.DefaultLatency {
						lat = p.ChannelLatency
					}
					z += pipe + lat
				}
				return float64(z)
			},
			stalls: routerStalls(net)}, nil
	default:
		pl, _ := p.platform()
		c := topology.MyrinetConfig{Platform: pl, Terminal: tc}
		var net *topology.SourceNet
		var err error
		if p.Topology == "myrinet-grid" {
			net, err = topology.MyrinetGrid(e, "Myri", c, sh)
		} else {
			net, err = topology.MyrinetClos(e, "Myri", c, sh)
		}
		if err != nil {
			return nil, err
		}
		ser := (pl.FlitBytes + pl.Link.BytesPerCycle - 1) / pl.Link.BytesPerCycle
		// The first and last links are host links (longer on the P3: its
		// fiber/SAN crossings).
		hostExtra := 2 * (pl.HostLinkConfig().DelayCycles - pl.Link.DelayCycles)
		return &built{terminals: net.Terminals, clk: clk, nodes: 64, hops: net.Hops, links: net.Links, hopCycles: pl.HopCycles(),
			zeroLoad: func(src, dst, flits int) float64 {
				return float64(ser + pl.Link.DelayCycles + net.Hops(src, dst)*pl.HopCycles() + ser*(flits-1) + hostExtra)
			},
			stalls: func() (uint64, uint64) {
				var stop, blocked uint64
				for _, l := range net.Links {
					stop += l.From(link.A).Stats().StopStalls + l.From(link.B).Stats().StopStalls
				}
				for _, sw := range net.Switches {
					for q := range sw.Ports() {
						blocked += sw.PortStats(q).BlockedCycles
					}
				}
				return stop, blocked
			}}, nil
	}
}

// pipeline is the cycles a head spends in a router on an idle network.
func (p *Params) pipeline() int {
	r := p.Router
	return r.RoutingDelay + r.VCAllocDelay + r.SWAllocDelay + r.STPrepareDelay + r.STFinalDelay
}

// routerStalls sums the routers' credit stalls and lost allocations.
func routerStalls(net *topology.Network) func() (uint64, uint64) {
	return func() (uint64, uint64) {
		var c, v uint64
		for _, r := range net.Routers {
			st := r.Stalls()
			c += st.Credit
			v += st.VCAlloc + st.Switch
		}
		return c, v
	}
}

func (p *Params) report(b *built, r stats.Result, res env.Result, sizes traffic.Sizes) *scenario.Report {
	rep := &scenario.Report{Title: fmt.Sprintf("%s: %s traffic at %g %s/node/cycle, %s-flit packets",
		p.Topology, p.Traffic, p.InjectionRate, map[bool]string{true: "flits", false: "packets"}[p.InjectionRateUsesFlits], p.PacketSize)}
	// Zero-load reference: the mean over all source/destination pairs (the
	// mix of uniform traffic; other patterns use fewer pairs), from the
	// pipeline and link delays.
	var sum float64
	var n int
	for s := range b.nodes {
		for d := range b.nodes {
			if s == d && !p.wormhole() {
				continue
			}
			sum += b.zeroLoad(s, d, int(math.Round(sizes.Mean())))
			n++
		}
	}
	zl := sum / float64(n)
	ns := func(cycles float64) string {
		return fmt.Sprintf("%.1f cycles (%.0f ns)", cycles, cycles*float64(b.clk.Period())/1000)
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
	for s := range b.nodes {
		for d := range b.nodes {
			longest = max(longest, b.hops(s, d))
		}
	}
	rep.Add("switches crossed, mean / longest route", fmt.Sprintf("%.2f / %d", r.MeanHops, longest), hopsRef, hopsSrc)
	if b.hopCycles > 0 {
		// The zero-load tables of switch/myrinet check that a packet's
		// simulated latency grows by exactly this per switch.
		hop := float64(b.hopCycles) * float64(b.clk.Period()) / 1000
		paper, src := "", "" // the paper gives the switch delay of the PPro cluster only
		if p.Myrinet == "ppro" {
			paper, src = "about 100 ns", "MY-P18 «The switch delay is approximately 100 ns»"
		}
		rep.Add("switch delay per hop (idle path: flit, wire, fall-through)", fmt.Sprintf("%d cycles (%.0f ns)", b.hopCycles, hop), paper, src)
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
		for _, l := range b.links {
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
	st1, st2 := b.stalls()
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
