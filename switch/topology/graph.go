package topology

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/wormhole"
)

// Limits of a graph. They keep a hostile file from allocating without
// bound: a routing table holds 2 x routers x terminals entries.
const (
	MaxGraphRouters   = 1024
	MaxGraphTerminals = 4096
	MaxGraphLatency   = 1 << 20 // cycles
)

// DefaultLatency as a Channel's Latency selects the GraphConfig's
// ChannelLatency.
const DefaultLatency = -1

// Graph is a network of routers, terminals and channels, as read from a
// graph file.
//
// A graph file is plain text, one statement per line, close to BookSim's
// anynet network_file. A '#' starts a comment that runs to the end of the
// line; blank lines are ignored; fields are separated by spaces or tabs;
// numbers are decimal. The statements are:
//
//	routers N                  routers 0..N-1; the first statement, once
//	router R node T            terminal T is attached to router R
//	node T router R            the same, written from the terminal's side
//	router A router B          a bidirectional channel between routers A
//	                           and B, of the default latency
//	router A router B L        the same with a wire latency of L cycles
//	                           (both directions)
//
// Terminals (BookSim's nodes) are numbered 0..T-1 without gaps, each
// attached to exactly one router; a router may have any number of
// terminals, including none. Every channel is declared once (it carries
// traffic both ways), never from a router to itself, and every router must
// be reachable from every other. A BookSim anynet line that lists several
// items after its router ("router 0 node 0 router 1") is written here as
// one line per item, and each channel once rather than from both ends.
// testdata/example.graph is a commented example.
//
// In a network built from a graph (FromGraph) the ports of router R are
// numbered: first its terminals in increasing terminal number, then its
// channels in increasing number of the router at the other end. Input p
// and output p of a router belong to the same terminal or neighbour.
type Graph struct {
	// Routers is the number of routers, numbered 0..Routers-1.
	Routers int
	// Terminals[t] is the router terminal t is attached to.
	Terminals []int
	// Channels are the bidirectional router-router channels, in file order.
	Channels []Channel
}

// Channel is a bidirectional channel between routers A and B.
type Channel struct {
	A, B int
	// Latency is the wire latency in cycles, or DefaultLatency.
	Latency int
}

// GraphError is an error in a graph file: the line it was found on (for
// whole-file problems, such as a disconnected graph, the last line) and
// what is wrong.
type GraphError struct {
	Line int
	Msg  string
}

func (e *GraphError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ReadGraphFile reads a graph file; errors start with the path.
func ReadGraphFile(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g, err := ParseGraph(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// maxLine bounds a line of a graph file.
const maxLine = 4096

// ParseGraph reads a graph in the graph file format. A malformed file gives
// a *GraphError naming the line.
func ParseGraph(r io.Reader) (*Graph, error) {
	p := graphParser{g: &Graph{Routers: -1}, chanLine: map[[2]int]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxLine)
	for sc.Scan() {
		p.line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		if f := strings.Fields(text); len(f) > 0 {
			if msg := p.statement(f); msg != "" {
				return nil, &GraphError{Line: p.line, Msg: msg}
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &GraphError{Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		return nil, &GraphError{Line: p.line + 1, Msg: err.Error()}
	}
	end := max(p.line, 1)
	if p.g.Routers < 0 {
		return nil, &GraphError{Line: end, Msg: "end of file without a `routers N` statement"}
	}
	for t, r := range p.g.Terminals {
		if r < 0 {
			return nil, &GraphError{Line: end, Msg: fmt.Sprintf("end of file: terminal %d is missing "+
				"(terminals must be numbered 0..%d without gaps)", t, len(p.g.Terminals)-1)}
		}
	}
	if err := p.g.Validate(); err != nil {
		return nil, &GraphError{Line: end, Msg: "end of file: " + err.Error()}
	}
	return p.g, nil
}

type graphParser struct {
	g        *Graph
	line     int
	chanLine map[[2]int]int // lookup only: the line declaring a channel
	termLine []int          // the line attaching each terminal
}

// statement parses one statement and returns what is wrong with it, or "".
func (p *graphParser) statement(f []string) string {
	g := p.g
	switch f[0] {
	case "routers":
		if g.Routers >= 0 {
			return "`routers` given twice"
		}
		if len(f) != 2 {
			return "want `routers N`"
		}
		n, ok := number(f[1])
		if !ok || n < 1 || n > MaxGraphRouters {
			return fmt.Sprintf("routers %q: want a number of routers in 1..%d", f[1], MaxGraphRouters)
		}
		g.Routers = n
		return ""
	case "router", "node":
	default:
		return fmt.Sprintf("unknown keyword %q (want routers, router or node)", f[0])
	}
	if g.Routers < 0 {
		return "the first statement must be `routers N`"
	}
	if len(f) < 4 {
		return fmt.Sprintf("incomplete statement %q: want `router R node T`, `node T router R` or `router A router B [latency]`",
			strings.Join(f, " "))
	}
	if f[0] == "node" {
		if f[2] != "router" {
			return fmt.Sprintf("unknown keyword %q after node %s (want router)", f[2], f[1])
		}
		if len(f) > 4 {
			return fmt.Sprintf("unexpected %q after `node %s router %s` (one item per line)", f[4], f[1], f[3])
		}
		return p.attach(f[3], f[1])
	}
	switch f[2] {
	case "node":
		if len(f) > 4 {
			return fmt.Sprintf("unexpected %q after `router %s node %s` (one item per line)", f[4], f[1], f[3])
		}
		return p.attach(f[1], f[3])
	case "router":
		if len(f) > 5 {
			return fmt.Sprintf("unexpected %q after `router %s router %s %s` (one channel per line)", f[5], f[1], f[3], f[4])
		}
		return p.channel(f[1:])
	}
	return fmt.Sprintf("unknown keyword %q after router %s (want node or router)", f[2], f[1])
}

// attach attaches terminal ts to router rs.
func (p *graphParser) attach(rs, ts string) string {
	g := p.g
	r, msg := p.router(rs)
	if msg != "" {
		return msg
	}
	t, ok := number(ts)
	if !ok || t >= MaxGraphTerminals {
		return fmt.Sprintf("terminal %q: want a terminal number in 0..%d", ts, MaxGraphTerminals-1)
	}
	for len(g.Terminals) <= t {
		g.Terminals = append(g.Terminals, -1)
		p.termLine = append(p.termLine, 0)
	}
	if g.Terminals[t] >= 0 {
		return fmt.Sprintf("terminal %d is already attached to router %d (line %d)", t, g.Terminals[t], p.termLine[t])
	}
	g.Terminals[t], p.termLine[t] = r, p.line
	return ""
}

// channel adds the channel of `router A router B [L]` (f without the first
// keyword).
func (p *graphParser) channel(f []string) string {
	a, msg := p.router(f[0])
	if msg != "" {
		return msg
	}
	b, msg := p.router(f[2])
	if msg != "" {
		return msg
	}
	if a == b {
		return fmt.Sprintf("channel from router %d to itself", a)
	}
	lat := DefaultLatency
	if len(f) == 4 {
		l, ok := number(f[3])
		if !ok || l > MaxGraphLatency {
			return fmt.Sprintf("latency %q: want a number of cycles in 0..%d", f[3], MaxGraphLatency)
		}
		lat = l
	}
	key := [2]int{min(a, b), max(a, b)}
	if first, dup := p.chanLine[key]; dup {
		return fmt.Sprintf("duplicate channel between routers %d and %d (first at line %d; a channel carries both directions, declare it once)",
			key[0], key[1], first)
	}
	p.chanLine[key] = p.line
	p.g.Channels = append(p.g.Channels, Channel{A: a, B: b, Latency: lat})
	return ""
}

func (p *graphParser) router(s string) (int, string) {
	n, ok := number(s)
	if !ok {
		return 0, fmt.Sprintf("router %q: want a router number", s)
	}
	if n >= p.g.Routers {
		return 0, fmt.Sprintf("router %d out of range 0..%d", n, p.g.Routers-1)
	}
	return n, ""
}

// number parses a decimal number of at most 9 digits.
func number(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Validate checks a graph built in code the way ParseGraph checks a file.
func (g *Graph) Validate() error {
	switch {
	case g == nil:
		return errors.New("no graph")
	case g.Routers < 1 || g.Routers > MaxGraphRouters:
		return fmt.Errorf("routers: %d must be in 1..%d", g.Routers, MaxGraphRouters)
	case len(g.Terminals) == 0:
		return errors.New("no terminals: attach at least one with `router R node T`")
	case len(g.Terminals) > MaxGraphTerminals:
		return fmt.Errorf("%d terminals: at most %d", len(g.Terminals), MaxGraphTerminals)
	}
	for t, r := range g.Terminals {
		if r < 0 || r >= g.Routers {
			return fmt.Errorf("terminal %d: router %d out of range 0..%d", t, r, g.Routers-1)
		}
	}
	seen := map[[2]int]bool{} // lookup only
	for i, c := range g.Channels {
		switch {
		case c.A < 0 || c.A >= g.Routers || c.B < 0 || c.B >= g.Routers:
			return fmt.Errorf("channel %d: routers %d-%d out of range 0..%d", i, c.A, c.B, g.Routers-1)
		case c.A == c.B:
			return fmt.Errorf("channel %d: from router %d to itself", i, c.A)
		case c.Latency < DefaultLatency || c.Latency > MaxGraphLatency:
			return fmt.Errorf("channel %d: latency %d must be in 0..%d", i, c.Latency, MaxGraphLatency)
		}
		key := [2]int{min(c.A, c.B), max(c.A, c.B)}
		if seen[key] {
			return fmt.Errorf("channel %d: duplicate channel between routers %d and %d", i, key[0], key[1])
		}
		seen[key] = true
	}
	level := g.levels(g.neighbours())
	for r, l := range level {
		if l < 0 {
			return fmt.Errorf("router %d is not connected to router 0", r)
		}
	}
	return nil
}

// neighbour is one end of a channel seen from the other.
type neighbour struct{ peer, latency int }

// neighbours returns every router's neighbours in increasing number.
func (g *Graph) neighbours() [][]neighbour {
	nb := make([][]neighbour, g.Routers)
	for _, c := range g.Channels {
		nb[c.A] = append(nb[c.A], neighbour{c.B, c.Latency})
		nb[c.B] = append(nb[c.B], neighbour{c.A, c.Latency})
	}
	for _, l := range nb {
		slices.SortFunc(l, func(x, y neighbour) int { return x.peer - y.peer })
	}
	return nb
}

// levels returns every router's distance from router 0 (-1: unreachable),
// by breadth-first search visiting neighbours in increasing number.
func (g *Graph) levels(nb [][]neighbour) []int {
	level := make([]int, g.Routers)
	for i := range level {
		level[i] = -1
	}
	level[0] = 0
	queue := []int{0}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		for _, n := range nb[r] {
			if level[n.peer] < 0 {
				level[n.peer] = level[r] + 1
				queue = append(queue, n.peer)
			}
		}
	}
	return level
}

// Port is one port of a router of a graph network.
type Port struct {
	// Terminal is the terminal on this port, or -1 for a channel.
	Terminal int
	// Peer is the router at the other end of the channel and PeerPort its
	// port (-1 for a terminal port).
	Peer, PeerPort int
	// Latency is the channel's latency from the graph (DefaultLatency for a
	// terminal port or a channel of the default latency).
	Latency int
	// Up: the channel leaving on this port goes up (towards the root), so
	// the one arriving on it goes down.
	Up bool
}

// Table is a router's routing table: the output port towards every
// destination terminal.
type Table struct {
	// Any is the column for packets injected at this router or arrived on
	// an up channel; Down for packets arrived on a down channel (-1 where
	// no down-only route exists: no such packet ever arrives).
	Any, Down []int
}

// Hop is one router of a route and the output port the packet takes there.
type Hop struct{ Router, Port int }

// Routing is the up*/down* routing of a graph (Autonet, Schroeder et al.
// 1991). A breadth-first search from the root, router 0, visiting
// neighbours in increasing number, gives every router its level (its
// distance from the root). The up end of a channel is the end closer to the
// root (lower level), or the lower-numbered router when both ends have the
// same level. A legal route takes zero or more up channels and then zero or
// more down channels, never an up channel after a down one. The up channels
// are strictly ordered by the (level, number) of their up ends, and so are
// the down channels, so legal routes can never close a cycle of channel
// dependencies: the network is deadlock-free with any number of VCs.
//
// Every packet follows a shortest legal route; where several exist, the one
// whose first differing output port is lowest. The routes are stored as a
// table in every router, indexed by destination terminal, with two
// columns: Any, for a packet injected at this router or arrived on an up
// channel (it may still go up), and Down, for a packet arrived on a down
// channel (it may only go down). The router picks the column from the input
// port, like Autonet's forwarding tables indexed by input link and
// destination. One column indexed by the destination alone cannot always
// do: a router may lie, reached by a down channel, on another router's only
// shortest route, while its own shortest route to the same destination
// starts up (testdata/twocolumn.graph).
type Routing struct {
	// Root is the root router (0) and Level every router's distance from
	// it.
	Root  int
	Level []int
	// Ports describes every router's ports, Tables holds its table.
	Ports  [][]Port
	Tables []Table
	// termPort is each terminal's port on its router.
	termPort []int
	g        *Graph
}

// NewRouting computes the up*/down* routing tables of g.
func NewRouting(g *Graph) (*Routing, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	n, nt := g.Routers, len(g.Terminals)
	nb := g.neighbours()
	rt := &Routing{Level: g.levels(nb), Ports: make([][]Port, n), Tables: make([]Table, n),
		termPort: make([]int, nt), g: g}
	termsOf := make([][]int, n)
	for t, r := range g.Terminals { // increasing t
		rt.termPort[t] = len(rt.Ports[r])
		rt.Ports[r] = append(rt.Ports[r], Port{Terminal: t, Peer: -1, PeerPort: -1, Latency: DefaultLatency})
		termsOf[r] = append(termsOf[r], t)
	}
	for r := range n {
		for _, x := range nb[r] {
			rt.Ports[r] = append(rt.Ports[r], Port{Terminal: -1, Peer: x.peer, Latency: x.latency,
				Up: rt.above(x.peer, r)})
		}
	}
	for r, ports := range rt.Ports {
		for p := range ports {
			if q := ports[p].Peer; q >= 0 {
				ports[p].PeerPort = slices.IndexFunc(rt.Ports[q], func(x Port) bool { return x.Peer == r })
			}
		}
		rt.Tables[r] = Table{Any: make([]int, nt), Down: make([]int, nt)}
	}
	// Routers in increasing (level, number): every up channel leads to an
	// earlier router.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if a == b {
			return 0
		}
		if rt.above(a, b) {
			return -1
		}
		return 1
	})
	const inf = int(^uint(0) >> 1)
	down, anyd := make([]int, n), make([]int, n)
	for d := range n {
		if len(termsOf[d]) == 0 {
			continue
		}
		// down[r]: the shortest down-only route from r to d, found
		// backwards from d over the channels that go down into it.
		for i := range down {
			down[i] = inf
		}
		down[d] = 0
		queue := []int{d}
		for len(queue) > 0 {
			b := queue[0]
			queue = queue[1:]
			for _, x := range nb[b] {
				if a := x.peer; rt.above(a, b) && down[a] == inf {
					down[a] = down[b] + 1
					queue = append(queue, a)
				}
			}
		}
		// anyd[r]: the shortest legal route, down only or up first.
		for _, r := range order {
			anyd[r] = down[r]
			for _, x := range nb[r] {
				if rt.above(x.peer, r) && anyd[x.peer] < inf {
					anyd[r] = min(anyd[r], anyd[x.peer]+1)
				}
			}
		}
		for r := range n {
			pa, pd := -1, -1
			if r != d {
				for p, pt := range rt.Ports[r] {
					if pt.Peer < 0 {
						continue
					}
					if pa < 0 && (pt.Up && anyd[pt.Peer] == anyd[r]-1 || !pt.Up && down[pt.Peer] == anyd[r]-1) {
						pa = p
					}
					if pd < 0 && down[r] < inf && !pt.Up && down[pt.Peer] == down[r]-1 {
						pd = p
					}
				}
			}
			for _, t := range termsOf[d] {
				if r == d {
					pa, pd = rt.termPort[t], rt.termPort[t]
				}
				rt.Tables[r].Any[t], rt.Tables[r].Down[t] = pa, pd
			}
		}
	}
	return rt, nil
}

// above reports whether router a is closer to the root than b: the up end
// of a channel between them.
func (rt *Routing) above(a, b int) bool {
	la, lb := rt.Level[a], rt.Level[b]
	return la < lb || la == lb && a < b
}

// Next returns the output port of router for a packet to terminal dst
// that arrived on input port in, or -1 for a router or port that does not
// exist. A destination that does not exist is routed as terminal 0.
func (rt *Routing) Next(router, in, dst int) int {
	if router < 0 || router >= len(rt.Ports) || in < 0 || in >= len(rt.Ports[router]) {
		return -1
	}
	if dst < 0 || dst >= len(rt.termPort) {
		dst = 0
	}
	if rt.Ports[router][in].Up { // arrived on a down channel
		return rt.Tables[router].Down[dst]
	}
	return rt.Tables[router].Any[dst]
}

// RouteFunc returns the table routing as a router's routing function, any
// VC of [0, vcs-1] (as DOR); port 0 where Next has no answer (a router or
// input port that does not exist).
func (rt *Routing) RouteFunc(vcs int) wormhole.RouteFunc {
	return func(id, in, dst int) wormhole.Route {
		return wormhole.Route{Port: max(rt.Next(id, in, dst), 0), VCLo: 0, VCHi: vcs - 1}
	}
}

// Path returns the route from terminal src to terminal dst as the routers
// crossed and the output port taken at each (the last one the port of
// dst), or nil if src or dst does not exist.
func (rt *Routing) Path(src, dst int) []Hop {
	if src < 0 || src >= len(rt.termPort) || dst < 0 || dst >= len(rt.termPort) {
		return nil
	}
	r, in := rt.g.Terminals[src], rt.termPort[src]
	var path []Hop
	for range len(rt.Ports) { // a legal route crosses each router at most once
		p := rt.Next(r, in, dst)
		if p < 0 {
			return path
		}
		path = append(path, Hop{r, p})
		pt := rt.Ports[r][p]
		if pt.Peer < 0 {
			return path
		}
		r, in = pt.Peer, pt.PeerPort
	}
	return path
}

// Hops returns the number of routers the route from src to dst crosses.
func (rt *Routing) Hops(src, dst int) int { return len(rt.Path(src, dst)) }

// GraphConfig describes a network of wormhole routers on a graph.
type GraphConfig struct {
	Router wormhole.Config
	Clock  clock.Clock
	// ChannelLatency is the wire latency in cycles of every terminal
	// channel and of every router channel the graph gives no latency
	// (BookSim's channel latency: a flit sent at cycle t is seen by the
	// next router at t+1+latency).
	ChannelLatency int
	// FlitBytes is the flit size; each link moves one flit per cycle.
	FlitBytes int
	// Terminal configures the terminals (VCs and FlitBytes are set here).
	Terminal fabric.TerminalConfig
}

// Validate checks the network parameters.
func (c GraphConfig) Validate() error {
	switch {
	case !c.Clock.Valid():
		return errors.New("graph: no clock")
	case c.ChannelLatency < 0:
		return fmt.Errorf("channel latency %d must not be negative", c.ChannelLatency)
	case c.FlitBytes < 1:
		return fmt.Errorf("flit size %d bytes must be at least 1", c.FlitBytes)
	}
	return c.Router.Validate()
}

// linkConfig returns the configuration of a channel of latency lat
// (DefaultLatency: the configured one): the mesh's rules.
func (c GraphConfig) linkConfig(lat int, terminal bool) link.Config {
	if lat == DefaultLatency {
		lat = c.ChannelLatency
	}
	return routerLink(MeshConfig{Router: c.Router, Clock: c.Clock, ChannelLatency: lat, FlitBytes: c.FlitBytes}, terminal)
}

// FromGraph builds the network of graph g in e: router i is
// name.R[i], terminal t name.T[t], the channel between routers a and b
// name.L[a][b] (side A at router a as written in the graph) and the link of
// terminal t name.LT[t]. Routing is g's up*/down* table routing
// (NewRouting); a packet for a terminal that does not exist is reported
// and routed to terminal 0.
func FromGraph(e *env.Env, name string, g *Graph, c GraphConfig, sh *fabric.Shared) (*Network, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	rt, err := NewRouting(g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	net := &Network{Hops: rt.Hops}
	table := rt.RouteFunc(c.Router.NumVCs)
	nt := len(g.Terminals)
	route := func(id, in, dst int) wormhole.Route {
		if dst < 0 || dst >= nt {
			e.Report(e.Now(), fmt.Sprintf("%s.Router[%d]", name, id), "graph.route",
				"no terminal %d (the graph has %d): routed to terminal 0", dst, nt)
		}
		return table(id, in, dst)
	}
	for i := range g.Routers {
		r, err := wormhole.MakeBuilder().WithEnv(e).WithClock(c.Clock).WithConfig(c.Router).
			WithPorts(len(rt.Ports[i])).WithID(i).WithRouting(route).Build(fmt.Sprintf("%s.Router[%d]", name, i))
		if err != nil {
			return nil, err
		}
		net.Routers = append(net.Routers, r)
	}
	lb := link.MakeBuilder().WithEnv(e)
	for _, ch := range g.Channels {
		l, err := lb.WithConfig(c.linkConfig(ch.Latency, false)).Build(fmt.Sprintf("%s.Link[%d][%d]", name, ch.A, ch.B))
		if err != nil {
			return nil, err
		}
		pa := slices.IndexFunc(rt.Ports[ch.A], func(x Port) bool { return x.Peer == ch.B })
		pb := rt.Ports[ch.A][pa].PeerPort
		// A = router ch.A, B = router ch.B.
		net.Routers[ch.A].ConnectOutput(pa, l.From(link.A))
		net.Routers[ch.B].ConnectInput(pb, l.From(link.A))
		net.Routers[ch.B].ConnectOutput(pb, l.From(link.B))
		net.Routers[ch.A].ConnectInput(pa, l.From(link.B))
		net.Links = append(net.Links, l)
	}
	tl := c.linkConfig(DefaultLatency, true)
	tc := c.Terminal
	tc.VCs, tc.FlitBytes = c.Router.NumVCs, c.FlitBytes
	for t, r := range g.Terminals {
		l, err := lb.WithConfig(tl).Build(fmt.Sprintf("%s.LinkT[%d]", name, t))
		if err != nil {
			return nil, err
		}
		// The terminal's name (no signals of its own) seeds its traffic stream
		// (env.Rand): renaming it would change the traffic, so it stays short.
		term, err := fabric.NewTerminal(e, fmt.Sprintf("%s.T[%d]", name, t), c.Clock, t, tc, sh)
		if err != nil {
			return nil, err
		}
		term.Connect(l.From(link.A), l.From(link.B))
		net.Routers[r].ConnectInput(rt.termPort[t], l.From(link.A))
		net.Routers[r].ConnectOutput(rt.termPort[t], l.From(link.B))
		net.Terminals = append(net.Terminals, term)
		net.Links = append(net.Links, l)
	}
	return net, nil
}
