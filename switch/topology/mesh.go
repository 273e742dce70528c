// Package topology builds networks: the k x k mesh of wormhole routers with
// dimension-order routing (BookSim's mesh and dor, the Paragon backplane of
// SHRIMP), arbitrary graphs of wormhole routers from a file with
// deterministic table routing, and stars around a hub or a cell switch.
// Every network comes with its terminals, so traffic can be injected and
// statistics collected the same way on all of them.
package topology

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/wormhole"
)

// MeshConfig describes a k x k mesh of wormhole routers, one terminal per
// router.
type MeshConfig struct {
	K      int
	Router wormhole.Config
	Clock  clock.Clock
	// ChannelLatency is the wire latency of every channel in cycles
	// (BookSim's channel latency: a flit sent at cycle t is seen by the
	// next router at t+1+latency).
	ChannelLatency int
	// FlitBytes is the flit size; each link moves one flit per cycle.
	FlitBytes int
	// Terminal configures the terminals (VCs and FlitBytes are set here).
	Terminal fabric.TerminalConfig
	// TraceFlits makes every link record each flit it delivers (link.flit)
	// when the run is traced, for flit-level goldens and debugging.
	TraceFlits bool
	// VCClasses keeps every packet on the VC it was injected on
	// (wormhole.Builder.WithVCClasses): VCs as message classes.
	VCClasses bool
	// Attach, if set, replaces the traffic terminals (as MyrinetConfig's):
	// it is called for every router i with the directions of router i's
	// local link that host i sends on (out) and receives from (in), and
	// reports whether it connected something (a network interface: SHRIMP's
	// NI on the Paragon backplane, shrimp-design-choices.txt section 2.1).
	// A declined host gets no link: its router's local port stays
	// unconnected, so no packet may be addressed to it. Nil keeps the
	// terminals.
	Attach func(host int, out, in *link.Dir) (bool, error)
}

// Network is a built network.
type Network struct {
	Routers   []*wormhole.Router
	Terminals []*fabric.Terminal
	Links     []*link.Link
	// Hops returns the number of routers a packet from src to dst crosses.
	Hops func(src, dst int) int
}

// Mesh port numbers, as BookSim's kncube: output 0 goes to +x, 1 to -x, 2
// to +y, 3 to -y, 4 to the terminal; input p comes from the neighbour that
// output p leads to (input 0 from +x, ...), input 4 from the terminal.
const (
	PortXPlus = iota
	PortXMinus
	PortYPlus
	PortYMinus
	PortLocal
)

// DOR returns dimension-order routing on a k x k mesh: x first, then y,
// any VC of [0, vcs-1] (BookSim's dim_order_mesh).
func DOR(k, vcs int) wormhole.RouteFunc {
	return func(id, _, dst int) wormhole.Route {
		x, y, dx, dy := id%k, id/k, dst%k, dst/k
		p := PortLocal
		switch {
		case dx > x:
			p = PortXPlus
		case dx < x:
			p = PortXMinus
		case dy > y:
			p = PortYPlus
		case dy < y:
			p = PortYMinus
		}
		return wormhole.Route{Port: p, VCLo: 0, VCHi: vcs - 1}
	}
}

// routerLink returns the configuration of a link between two routers, or
// (terminal true) between a terminal on side A and its router on side B.
// Credit delays follow BookSim: a credit freed at cycle s crosses the
// channel (1 + latency cycles) and is then processed for credit_delay
// cycles by a router, at once by a terminal.
func routerLink(c MeshConfig, terminal bool) link.Config {
	r := c.Router
	lc := link.Config{Clock: c.Clock, BytesPerCycle: c.FlitBytes, DelayCycles: c.ChannelLatency,
		VCs: r.NumVCs, FlowControl: link.Credits, BufferFlits: r.BufferFlits(),
		SharedBuffer: r.BufferPolicy == "shared",
		// TxDepth 0: routers and terminals drive their links with CanSend
		// and Send, so transmit queues would never be pushed.
		TxDepth:     0,
		CreditDelay: 1 + c.ChannelLatency + r.CreditDelay, TraceFlits: c.TraceFlits}
	if terminal {
		lc.CreditDelay = 1 + c.ChannelLatency                   // back to the terminal
		lc.CreditDelayBA = 1 + c.ChannelLatency + r.CreditDelay // back to the router
	}
	return lc
}

// Validate checks the mesh parameters.
func (c MeshConfig) Validate() error {
	switch {
	case c.K < 2:
		return fmt.Errorf("k: %d must be at least 2", c.K)
	case !c.Clock.Valid():
		return fmt.Errorf("mesh: no clock")
	case c.ChannelLatency < 0:
		return fmt.Errorf("channel latency %d must not be negative", c.ChannelLatency)
	case c.FlitBytes < 1:
		return fmt.Errorf("flit size %d bytes must be at least 1", c.FlitBytes)
	}
	return c.Router.Validate()
}

// Mesh builds a k x k mesh in e. Router and terminal i sit at (i mod k,
// i / k).
func Mesh(e *env.Env, name string, c MeshConfig, sh *fabric.Shared) (*Network, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	k := c.K
	n := k * k
	net := &Network{Hops: func(s, d int) int { return abs(s%k-d%k) + abs(s/k-d/k) + 1 }}
	route := DOR(k, c.Router.NumVCs)
	rb := wormhole.MakeBuilder().WithEnv(e).WithClock(c.Clock).WithConfig(c.Router).WithPorts(5).WithRouting(route)
	if c.VCClasses {
		rb = rb.WithVCClasses()
	}
	for i := range n {
		r, err := rb.WithID(i).Build(fmt.Sprintf("%s.Router[%d]", name, i))
		if err != nil {
			return nil, err
		}
		net.Routers = append(net.Routers, r)
	}
	lb := link.MakeBuilder().WithEnv(e)
	rl := routerLink(c, false)
	for i := range n {
		x, y := i%k, i/k
		for _, nb := range []struct {
			ok       bool
			j        int
			out, in  int // i's output towards j, and j's output towards i
			dim, dir string
		}{{x+1 < k, i + 1, PortXPlus, PortXMinus, "X", ""}, {y+1 < k, i + k, PortYPlus, PortYMinus, "Y", ""}} {
			if !nb.ok {
				continue
			}
			l, err := lb.WithConfig(rl).Build(fmt.Sprintf("%s.Link%s[%d]", name, nb.dim, i))
			if err != nil {
				return nil, err
			}
			// A = router i, B = its +dim neighbour j.
			net.Routers[i].ConnectOutput(nb.out, l.From(link.A))
			net.Routers[nb.j].ConnectInput(nb.in, l.From(link.A))
			net.Routers[nb.j].ConnectOutput(nb.in, l.From(link.B))
			net.Routers[i].ConnectInput(nb.out, l.From(link.B))
			net.Links = append(net.Links, l)
		}
	}
	tl := routerLink(c, true)
	tc := c.Terminal
	tc.VCs, tc.FlitBytes = c.Router.NumVCs, c.FlitBytes
	for i := range n {
		l, err := lb.WithConfig(tl).Build(fmt.Sprintf("%s.LinkT[%d]", name, i))
		if err != nil {
			return nil, err
		}
		if c.Attach != nil {
			ok, err := c.Attach(i, l.From(link.A), l.From(link.B))
			if err != nil {
				return nil, fmt.Errorf("%s: attach host %d: %w", name, i, err)
			}
			if ok {
				net.Routers[i].ConnectInput(PortLocal, l.From(link.A))
				net.Routers[i].ConnectOutput(PortLocal, l.From(link.B))
				net.Links = append(net.Links, l)
			}
			continue
		}
		// The terminal's name (no signals of its own) seeds its traffic stream
		// (env.Rand): renaming it would change the traffic, so it stays short.
		t, err := fabric.NewTerminal(e, fmt.Sprintf("%s.T[%d]", name, i), c.Clock, i, tc, sh)
		if err != nil {
			return nil, err
		}
		t.Connect(l.From(link.A), l.From(link.B))
		net.Routers[i].ConnectInput(PortLocal, l.From(link.A))
		net.Routers[i].ConnectOutput(PortLocal, l.From(link.B))
		net.Terminals = append(net.Terminals, t)
		net.Links = append(net.Links, l)
	}
	return net, nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Paragon returns the mesh of the Intel Paragon routing backplane that
// connects SHRIMP's nodes: «The backplane is organized as a
// two-dimensional mesh, and supports oblivious, wormhole routing with a
// maximum link bandwidth of 200 Mbytes/second» (SH-P2, SH-P3). k is the
// mesh radix (4 for SHRIMP's 16 nodes, SH-P1; a cabinet holds 64, SH-P4).
//
//   - Links move a 16-bit flit per cycle of 100 MHz: 200 MB/s (SH-P3).
//     assumed: the paper gives the bandwidth only; a 16-bit channel at
//     100 MHz is the Paragon mesh routing chip's organisation.
//   - One VC (deadlock freedom from dimension-order routing alone, as the
//     backplane's «oblivious» routing), 16-flit input buffers, a 1-cycle
//     route, switch and traversal pipeline and no wire delay between
//     neighbouring routers. assumed: the paper gives no router internals.
func Paragon(k int) MeshConfig {
	return MeshConfig{K: k, Clock: clock.MHz(100), FlitBytes: 2, ChannelLatency: 0,
		Router: wormhole.Config{NumVCs: 1, VCBufSize: 16, BufferPolicy: "private", CreditDelay: 1,
			RoutingDelay: 1, VCAllocDelay: 1, SWAllocDelay: 1, STFinalDelay: 1,
			InputSpeedup: 1, OutputSpeedup: 1, VCAllocator: "separable_input_first", SWAllocator: "separable_input_first",
			WaitForTailCredit: true}}
}
