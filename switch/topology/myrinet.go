package topology

import (
	"fmt"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/myrinet"
)

// SourceNet is a network of source-routed Myrinet switches.
type SourceNet struct {
	Switches  []*myrinet.Switch
	Terminals []*fabric.Terminal
	Links     []*link.Link
	// Route returns the route bytes from src to dst; Hops the number of
	// switches on that route.
	Route func(src, dst int) []byte
	Hops  func(src, dst int) int
}

// MyrinetConfig configures a Myrinet cluster.
type MyrinetConfig struct {
	Platform myrinet.Platform
	Terminal fabric.TerminalConfig
	// Attach, if set, replaces the traffic terminals: it is called for
	// every host with the link directions the host sends on (out) and
	// receives from (in), and reports whether it connected something (a
	// network interface). Hosts it declines get no link.
	Attach func(host int, out, in *link.Dir) (bool, error)
}

// Grid port numbers on the 8-port switches of the 3-D grid.
const (
	GridXPlus = iota
	GridXMinus
	GridYPlus
	GridYMinus
	GridZPlus
	GridZMinus
	GridHost
)

// MyrinetGrid builds the PPro cluster of the LCI paper: 64 nodes «via a 3D
// grid of 8-port switches» (MY-P17), here 4 x 4 x 4 switches with one host
// each, so the longest route crosses 10 switches («the maximum distance
// between two NIs is 10 hops», MY-P18). Routes are dimension-ordered
// (x, then y, then z), which is deadlock-free on a grid without
// wrap-around.
func MyrinetGrid(e *env.Env, name string, c MyrinetConfig, sh *fabric.Shared) (*SourceNet, error) {
	const k = 4
	n := k * k * k
	coord := func(i int) (int, int, int) { return i % k, (i / k) % k, i / (k * k) }
	route := func(src, dst int) []byte {
		x, y, z := coord(src)
		dx, dy, dz := coord(dst)
		var r []byte
		step := func(cur *int, to, plus, minus int) {
			for *cur != to {
				if to > *cur {
					r = append(r, byte(plus))
					*cur++
				} else {
					r = append(r, byte(minus))
					*cur--
				}
			}
		}
		step(&x, dx, GridXPlus, GridXMinus)
		step(&y, dy, GridYPlus, GridYMinus)
		step(&z, dz, GridZPlus, GridZMinus)
		return append(r, GridHost)
	}
	net := &SourceNet{Route: route, Hops: func(s, d int) int { return len(route(s, d)) }}
	if err := buildSwitches(e, name, c, net, n, 8); err != nil {
		return nil, err
	}
	lb := link.MakeBuilder().WithEnv(e).WithConfig(c.Platform.Link)
	for i := range n {
		x, y, z := coord(i)
		for _, nb := range []struct {
			ok     bool
			j, out int // neighbour and this switch's port towards it
			dim    string
		}{{x+1 < k, i + 1, GridXPlus, "X"}, {y+1 < k, i + k, GridYPlus, "Y"}, {z+1 < k, i + k*k, GridZPlus, "Z"}} {
			if !nb.ok {
				continue
			}
			l, err := lb.Build(fmt.Sprintf("%s.Link%s[%d]", name, nb.dim, i))
			if err != nil {
				return nil, err
			}
			wire(net, i, nb.out, nb.j, nb.out+1, l) // the neighbour's minus port
		}
	}
	return net, attachHosts(e, name, c, net, sh, func(h int) (int, int) { return h, GridHost })
}

// MyrinetClos builds the P3 cluster: 64 nodes on «one large modular
// Myrinet-2000 switch» with «a topology allowing full bisection bandwidth»
// (MY-P20), here a two-level Clos of 16-port crossbars: 8 leaf switches
// with 8 hosts each (ports 0-7) and 8 uplinks (ports 8-15), one to each of
// 8 spine switches (port l of a spine goes to leaf l). A route crosses at
// most 3 switches (MY-P21). Packets go up to spine dst mod 8 and down, an
// up/down route, which is deadlock-free.
func MyrinetClos(e *env.Env, name string, c MyrinetConfig, sh *fabric.Shared) (*SourceNet, error) {
	const hostsPerLeaf, leaves, spines = 8, 8, 8
	route := func(src, dst int) []byte {
		sl, dl := src/hostsPerLeaf, dst/hostsPerLeaf
		if sl == dl {
			return []byte{byte(dst % hostsPerLeaf)}
		}
		spine := dst % spines
		return []byte{byte(hostsPerLeaf + spine), byte(dl), byte(dst % hostsPerLeaf)}
	}
	net := &SourceNet{Route: route, Hops: func(s, d int) int { return len(route(s, d)) }}
	if err := buildSwitches(e, name, c, net, leaves+spines, 16); err != nil {
		return nil, err
	}
	lb := link.MakeBuilder().WithEnv(e).WithConfig(c.Platform.Link)
	for l := range leaves {
		for s := range spines {
			ln, err := lb.Build(fmt.Sprintf("%s.LinkUp[%d][%d]", name, l, s))
			if err != nil {
				return nil, err
			}
			wire(net, l, hostsPerLeaf+s, leaves+s, l, ln)
		}
	}
	return net, attachHosts(e, name, c, net, sh, func(h int) (int, int) { return h / hostsPerLeaf, h % hostsPerLeaf })
}

func buildSwitches(e *env.Env, name string, c MyrinetConfig, net *SourceNet, n, ports int) error {
	for i := range n {
		s, err := myrinet.MakeBuilder().WithEnv(e).WithClock(c.Platform.Link.Clock).WithPorts(ports).
			WithFallThrough(c.Platform.FallThrough).Build(fmt.Sprintf("%s.Switch[%d]", name, i))
		if err != nil {
			return err
		}
		net.Switches = append(net.Switches, s)
	}
	return nil
}

// wire connects port pa of switch a to port pb of switch b with l (A = a).
func wire(net *SourceNet, a, pa, b, pb int, l *link.Link) {
	net.Switches[a].ConnectOutput(pa, l.From(link.A))
	net.Switches[b].ConnectInput(pb, l.From(link.A))
	net.Switches[b].ConnectOutput(pb, l.From(link.B))
	net.Switches[a].ConnectInput(pa, l.From(link.B))
	net.Links = append(net.Links, l)
}

// attachHosts gives every host a terminal linked to (switch, port) =
// at(host).
func attachHosts(e *env.Env, name string, c MyrinetConfig, net *SourceNet, sh *fabric.Shared, at func(int) (int, int)) error {
	tc := c.Terminal
	tc.VCs, tc.FlitBytes, tc.Route = 1, c.Platform.FlitBytes, net.Route
	lb := link.MakeBuilder().WithEnv(e).WithConfig(c.Platform.HostLinkConfig())
	for h := range 64 {
		if c.Attach != nil {
			l, err := lb.Build(fmt.Sprintf("%s.LinkH[%d]", name, h))
			if err != nil {
				return err
			}
			ok, err := c.Attach(h, l.From(link.A), l.From(link.B))
			if err != nil {
				return err
			}
			if ok {
				s, p := at(h)
				net.Switches[s].ConnectInput(p, l.From(link.A))
				net.Switches[s].ConnectOutput(p, l.From(link.B))
				net.Links = append(net.Links, l)
			}
			continue
		}
		l, err := lb.Build(fmt.Sprintf("%s.LinkH[%d]", name, h))
		if err != nil {
			return err
		}
		// The terminal's name (no signals of its own) seeds its traffic stream
		// (env.Rand): renaming it would change the traffic, so it stays short.
		t, err := fabric.NewTerminal(e, fmt.Sprintf("%s.H[%d]", name, h), c.Platform.Link.Clock, h, tc, sh)
		if err != nil {
			return err
		}
		s, p := at(h)
		t.Connect(l.From(link.A), l.From(link.B))
		net.Switches[s].ConnectInput(p, l.From(link.A))
		net.Switches[s].ConnectOutput(p, l.From(link.B))
		net.Terminals = append(net.Terminals, t)
		net.Links = append(net.Links, l)
	}
	return nil
}
