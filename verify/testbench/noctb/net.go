package noctb

import (
	"fmt"

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
)

// RouterConfig is a wormhole router's parameters, under BookSim's names
// (switch/wormhole.Config), so that a BookSim configuration can be written
// down directly.
type RouterConfig = wormhole.Config

// Graph is an irregular network of routers and terminals
// (switch/topology.Graph; routing is by up*/down* tables).
type Graph = topology.Graph

// Mesh88Lat is the router of BookSim's examples/mesh88_lat
// (switch/wormhole.Mesh88Lat).
func Mesh88Lat() RouterConfig { return wormhole.Mesh88Lat() }

// ExampleGraph is the irregular network of 10 routers and 16 terminals
// shipped as the example of the graph file format
// (switch/topology/testdata/example.graph).
func ExampleGraph() *Graph { return topology.ExampleGraph() }

// ReadGraphFile reads a network in switch/topology's graph file format.
func ReadGraphFile(path string) (*Graph, error) { return topology.ReadGraphFile(path) }

// MyrinetPlatform returns the Myrinet generation of an LCI cluster by the
// name of its host platform: "ppro" (LANai 4.1 and 8-port switches of the
// grid) or "p3" (Myrinet-2000 and the 16-port switches of the Clos). ok is
// false for any other name.
func MyrinetPlatform(name string) (pl myrinet.Platform, ok bool) {
	switch name {
	case "ppro":
		return myrinet.PPro(), true
	case "p3":
		return myrinet.P3(), true
	}
	return myrinet.Platform{}, false
}

// NetConfig is a network of terminals to build and run: one of the
// wormhole networks (Topology "mesh" or "graph") or one of the LCI paper's
// Myrinet clusters ("myrinet-grid", "myrinet-clos").
type NetConfig struct {
	// Topology is mesh, graph, myrinet-grid or myrinet-clos.
	Topology string
	// K is the mesh radix (mesh only).
	K int
	// Graph is the network of a graph topology.
	Graph *Graph
	// Router, ChannelLatency (cycles), FlitBytes and Clock are the wormhole
	// networks' routers, channels and clock (a graph may give channels
	// their own latencies).
	Router         RouterConfig
	ChannelLatency int
	FlitBytes      int
	Clock          clock.Clock
	// Platform is the Myrinet clusters' link and switch timing (their
	// clock is its link clock).
	Platform myrinet.Platform
	// Pattern, Injection and Sizes are every terminal's synthetic traffic
	// (Pattern nil: none).
	Pattern   traffic.Pattern
	Injection traffic.Bernoulli
	Sizes     traffic.Sizes
	// Replay, when not nil, holds each terminal's records of a traffic
	// trace (indexed by source, cycles ascending), replayed by it.
	Replay [][]traffic.Record
	// Window is the warm-up, measurement and drain, in network cycles.
	Window stats.Window
}

// Wormhole reports whether the network is made of wormhole routers.
func (c NetConfig) Wormhole() bool { return c.Topology == "mesh" || c.Topology == "graph" }

// Nodes returns the number of terminals: K x K on a mesh, the graph's
// terminals, 64 on the Myrinet clusters (MY-P18, MY-P21).
func (c NetConfig) Nodes() int {
	switch {
	case c.Topology == "mesh":
		return c.K * c.K
	case c.Topology == "graph" && c.Graph != nil:
		return len(c.Graph.Terminals)
	}
	return 64
}

// NetClock is the network's clock: Clock for the wormhole networks, the
// platform's link clock for Myrinet.
func (c NetConfig) NetClock() clock.Clock {
	if c.Wormhole() {
		return c.Clock
	}
	return c.Platform.Link.Clock
}

// pipeline is the cycles a head spends in a router on an idle network.
func (c NetConfig) pipeline() int {
	r := c.Router
	return r.RoutingDelay + r.VCAllocDelay + r.SWAllocDelay + r.STPrepareDelay + r.STFinalDelay
}

// Net is a built network and what a report needs to know of it.
type Net struct {
	// Terminals are the network's endpoints, one per node.
	Terminals []*fabric.Terminal
	// Clock is the network's clock, Nodes the number of terminals, K the
	// mesh radix (0 for Myrinet).
	Clock clock.Clock
	Nodes int
	K     int
	// Hops returns the routers (switches) a packet from s to d crosses.
	Hops func(s, d int) int
	// ZeroLoad returns the latency, in cycles, of a packet of flits from
	// src to dst on an idle network, from the pipeline and link delays:
	// on a mesh BookSim's iq_router rule, channel latency + hops x
	// (pipeline + channel latency) + flits (4H+P+1 for mesh88_lat).
	ZeroLoad func(src, dst, flits int) float64
	// Links are every link of the network.
	Links []*link.Link
	// Stalls sums, on a wormhole network, the routers' credit stalls and
	// lost allocations; on Myrinet, the STOP cycles the links saw and the
	// head cycles blocked at the switches.
	Stalls func() (first, second uint64)
	// HopCycles is, on Myrinet, a head's time per switch on an idle path
	// (flit, wire, fall-through); 0 on the wormhole networks.
	HopCycles int
}

// BuildNet builds the network of c in e, with terminals that share sh
// (statistics and checkers); c's traffic fields configure the terminals
// (not Replay: RunNet sets it).
func BuildNet(e *env.Env, c NetConfig, sh *fabric.Shared) (*Net, error) {
	clk := c.NetClock()
	tc := fabric.TerminalConfig{Pattern: c.Pattern, Injection: c.Injection, Sizes: c.Sizes}
	switch c.Topology {
	case "mesh":
		net, err := topology.Mesh(e, "Mesh", topology.MeshConfig{K: c.K, Router: c.Router, Clock: clk,
			ChannelLatency: c.ChannelLatency, FlitBytes: c.FlitBytes, Terminal: tc}, sh)
		if err != nil {
			return nil, err
		}
		l, pipe := c.ChannelLatency, c.pipeline()
		return &Net{Terminals: net.Terminals, Clock: clk, Nodes: c.K * c.K, K: c.K, Hops: net.Hops, Links: net.Links,
			ZeroLoad: func(s, d, flits int) float64 { return float64(l + net.Hops(s, d)*(pipe+l) + flits) },
			Stalls:   routerStalls(net)}, nil
	case "graph":
		net, err := topology.FromGraph(e, "Graph", c.Graph, topology.GraphConfig{Router: c.Router, Clock: clk,
			ChannelLatency: c.ChannelLatency, FlitBytes: c.FlitBytes, Terminal: tc}, sh)
		if err != nil {
			return nil, err
		}
		rt, err := topology.NewRouting(c.Graph)
		if err != nil {
			return nil, err
		}
		pipe := c.pipeline()
		return &Net{Terminals: net.Terminals, Clock: clk, Nodes: len(c.Graph.Terminals), K: c.K, Hops: net.Hops, Links: net.Links,
			// The injection link, then per router its pipeline and the
			// latency of the link it sends on, then the body.
			ZeroLoad: func(s, d, flits int) float64 {
				z := c.ChannelLatency + flits
				for _, h := range rt.Path(s, d) {
					lat := rt.Ports[h.Router][h.Port].Latency
					if lat == topology.DefaultLatency {
						lat = c.ChannelLatency
					}
					z += pipe + lat
				}
				return float64(z)
			},
			Stalls: routerStalls(net)}, nil
	case "myrinet-grid", "myrinet-clos":
		pl := c.Platform
		mc := topology.MyrinetConfig{Platform: pl, Terminal: tc}
		var net *topology.SourceNet
		var err error
		if c.Topology == "myrinet-grid" {
			net, err = topology.MyrinetGrid(e, "Myri", mc, sh)
		} else {
			net, err = topology.MyrinetClos(e, "Myri", mc, sh)
		}
		if err != nil {
			return nil, err
		}
		ser := (pl.FlitBytes + pl.Link.BytesPerCycle - 1) / pl.Link.BytesPerCycle
		// The first and last links are host links (longer on the P3: its
		// fiber/SAN crossings).
		hostExtra := 2 * (pl.HostLinkConfig().DelayCycles - pl.Link.DelayCycles)
		return &Net{Terminals: net.Terminals, Clock: clk, Nodes: 64, Hops: net.Hops, Links: net.Links, HopCycles: pl.HopCycles(),
			ZeroLoad: func(src, dst, flits int) float64 {
				return float64(ser + pl.Link.DelayCycles + net.Hops(src, dst)*pl.HopCycles() + ser*(flits-1) + hostExtra)
			},
			Stalls: func() (uint64, uint64) {
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
	return nil, fmt.Errorf("noctb: topology %q is not mesh, graph, myrinet-grid or myrinet-clos", c.Topology)
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

// NetRun is what RunNet built and measured.
type NetRun struct {
	// Net is the network.
	Net *Net
	// Stats are the measurement window's statistics.
	Stats stats.Result
	// Result is the simulation's end.
	Result env.Result
	// Saturated says the drain limit stopped the run with measured
	// packets undelivered; Stuck is the watchdog's state of the network
	// then.
	Saturated bool
	Stuck     string
	// Sent, Received and Dropped are the conservation checker's counts of
	// packets over the whole run.
	Sent, Received, Dropped int
	// Checkers are the paths of the conservation checker and, where the
	// network promises order, the order checker.
	Checkers []string
}

// RunNet builds the network of c in e with the experiment's checkers and
// runs it through warm-up, measurement and drain (switch/fabric's
// Experiment). The checkers, always on: every packet created is delivered
// exactly once, to the terminal it names ("Network.Packets"), and, where
// the network has one path and one queue per hop (Myrinet, or wormhole
// routers with one VC), in order per source and destination
// ("Network.Order"); the links check their credits and the watchdog that
// work progresses. A build error returns a nil run; otherwise the error
// is the run's (the checkers' violations, a stuck model).
func RunNet(e *env.Env, c NetConfig) (*NetRun, error) {
	nodes := c.Nodes()
	x := fabric.NewExperiment(e, c.NetClock(), nodes, c.Window)
	sh := &fabric.Shared{Stats: x.Stats(), Packets: check.NewConservation[uint64](e.Monitor, "Network.Packets"),
		OnDeliver: func(now clock.Time, _ *fabric.Packet) { x.Delivered(now) },
		OnDrop:    func(now clock.Time, _ *fabric.Packet) { x.Dropped(now) }}
	if !c.Wormhole() || c.Router.NumVCs == 1 {
		// One path and one queue per hop: delivery is in order per
		// source and destination, so check it.
		sh.Order = check.NewOrdering[[2]int](e.Monitor, "Network.Order")
	}
	net, err := BuildNet(e, c, sh)
	if err != nil {
		return nil, err
	}
	for _, t := range net.Terminals {
		x.Add(t)
	}
	if c.Replay != nil {
		if len(c.Replay) != len(net.Terminals) {
			return nil, fmt.Errorf("noctb: a replay for %d terminals on a network of %d", len(c.Replay), len(net.Terminals))
		}
		for i, t := range net.Terminals {
			t.SetReplay(c.Replay[i])
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
	r := &NetRun{Net: net, Stats: x.Stats().Result(), Result: res, Saturated: x.Saturated(),
		Checkers: []string{"Network.Packets"}}
	if sh.Order != nil {
		r.Checkers = append(r.Checkers, "Network.Order")
	}
	r.Sent, r.Received, r.Dropped = sh.Packets.Counts()
	r.Stuck = x.StuckState()
	return r, runErr
}
