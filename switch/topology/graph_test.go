package topology_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/topology"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/switch/wormhole"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var clk = clock.MHz(1000) // 1 ns cycles

func parse(text string) *topology.Graph {
	GinkgoHelper()
	g, err := topology.ParseGraph(strings.NewReader(text))
	Expect(err).NotTo(HaveOccurred())
	return g
}

func readGraph(path string) *topology.Graph {
	GinkgoHelper()
	g, err := topology.ReadGraphFile(path)
	Expect(err).NotTo(HaveOccurred())
	return g
}

// ringText is a ring of n routers, router i linked to i+1 mod n, with
// terminals per router (terminal i*per+j on router i).
func ringText(n, per int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# ring of %d\nrouters %d\n", n, n)
	for i := range n {
		for j := range per {
			fmt.Fprintf(&b, "router %d node %d\n", i, i*per+j)
		}
	}
	for i := range n {
		fmt.Fprintf(&b, "router %d router %d\n", i, (i+1)%n)
	}
	return b.String()
}

// meshText is a k x k mesh with terminal i at position (i mod k, i / k) on
// router id(x, y).
func meshText(k int, id func(x, y int) int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "routers %d\n", k*k)
	for i := range k * k {
		fmt.Fprintf(&b, "router %d node %d\n", id(i%k, i/k), i)
	}
	for y := range k {
		for x := range k {
			if x+1 < k {
				fmt.Fprintf(&b, "router %d router %d\n", id(x, y), id(x+1, y))
			}
			if y+1 < k {
				fmt.Fprintf(&b, "router %d router %d\n", id(x, y), id(x, y+1))
			}
		}
	}
	return b.String()
}

// updown is the test's own view of up*/down* on a graph, computed from the
// graph alone: levels from router 0 and, for every destination router, the
// length of the shortest legal route from every router in either phase
// (0: may still go up, 1: arrived on a down channel).
type updown struct {
	g     *topology.Graph
	adj   [][]int
	level []int
	dist  [][2][]int // dist[d][phase][r]: channels from r to router d, -1: none
}

func newUpdown(g *topology.Graph) *updown {
	u := &updown{g: g, adj: make([][]int, g.Routers), level: make([]int, g.Routers)}
	for _, c := range g.Channels {
		u.adj[c.A] = append(u.adj[c.A], c.B)
		u.adj[c.B] = append(u.adj[c.B], c.A)
	}
	for i := range u.level {
		u.level[i] = -1
	}
	u.level[0] = 0
	for q := []int{0}; len(q) > 0; q = q[1:] {
		for _, n := range u.adj[q[0]] {
			if u.level[n] < 0 {
				u.level[n] = u.level[q[0]] + 1
				q = append(q, n)
			}
		}
	}
	u.dist = make([][2][]int, g.Routers)
	for d := range g.Routers {
		for ph := range 2 {
			u.dist[d][ph] = make([]int, g.Routers)
			for r := range g.Routers {
				u.dist[d][ph][r] = u.bfs(r, ph, d)
			}
		}
	}
	return u
}

// up reports whether the channel from a to b goes up.
func (u *updown) up(a, b int) bool {
	return u.level[b] < u.level[a] || u.level[b] == u.level[a] && b < a
}

// bfs returns the channels of the shortest legal route from router r in
// phase ph to router d, over the states (router, phase).
func (u *updown) bfs(r, ph, d int) int {
	seen := make([][2]bool, u.g.Routers)
	type state struct{ r, ph, n int }
	seen[r][ph] = true
	for q := []state{{r, ph, 0}}; len(q) > 0; q = q[1:] {
		s := q[0]
		if s.r == d {
			return s.n
		}
		for _, n := range u.adj[s.r] {
			nph := 1
			if u.up(s.r, n) {
				if s.ph == 1 {
					continue
				}
				nph = 0
			}
			if !seen[n][nph] {
				seen[n][nph] = true
				q = append(q, state{n, nph, s.n + 1})
			}
		}
	}
	return -1
}

// next returns the phase after taking the channel from a to b in phase ph,
// or -1 if that turn is illegal.
func (u *updown) next(a, b, ph int) int {
	if !u.up(a, b) {
		return 1
	}
	if ph == 1 {
		return -1
	}
	return 0
}

// findCycle returns a cycle of the directed graph given by adjacency
// lists, or nil.
func findCycle(adj [][]int) []int {
	color := make([]int, len(adj)) // 0 new, 1 on the stack, 2 done
	var stack []int
	var visit func(v int) []int
	visit = func(v int) []int {
		color[v] = 1
		stack = append(stack, v)
		for _, w := range adj[v] {
			switch color[w] {
			case 1:
				return append(slices.Clone(stack[slices.Index(stack, w):]), w)
			case 0:
				if c := visit(w); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[v] = 2
		return nil
	}
	for v := range adj {
		if color[v] == 0 {
			if c := visit(v); c != nil {
				return c
			}
		}
	}
	return nil
}

// checkRouting follows the routing function of g's routing from every
// terminal to every terminal and checks, against the test's own up*/down*
// computation: the ports are numbered as documented; every route reaches
// its destination, never goes up after going down, is a shortest legal
// route, and at every router takes the lowest-numbered port that still
// allows one; Path and Hops agree with the walk; and the channel
// dependency graph of all routes is acyclic. It returns the routing.
func checkRouting(g *topology.Graph) *topology.Routing {
	GinkgoHelper()
	rt, err := topology.NewRouting(g)
	Expect(err).NotTo(HaveOccurred())
	u := newUpdown(g)
	Expect(rt.Level).To(Equal(u.level))

	// Ports: the router's terminals in increasing number, then its
	// channels in increasing number of the router at the other end.
	base := make([]int, g.Routers) // channel (r, p) is vertex base[r]+p
	nv := 0
	for r := range g.Routers {
		var want []topology.Port
		for t, tr := range g.Terminals {
			if tr == r {
				want = append(want, topology.Port{Terminal: t, Peer: -1, PeerPort: -1, Latency: topology.DefaultLatency})
			}
		}
		peers := slices.Sorted(slices.Values(u.adj[r]))
		for _, q := range peers {
			lat := topology.DefaultLatency
			for _, c := range g.Channels {
				if c.A == r && c.B == q || c.A == q && c.B == r {
					lat = c.Latency
				}
			}
			want = append(want, topology.Port{Terminal: -1, Peer: q, Latency: lat, Up: u.up(r, q)})
		}
		got := rt.Ports[r]
		Expect(got).To(HaveLen(len(want)))
		for p := range got {
			if got[p].Peer >= 0 {
				Expect(rt.Ports[got[p].Peer][got[p].PeerPort].Peer).To(Equal(r), "router %d port %d", r, p)
				want[p].PeerPort = got[p].PeerPort
			}
		}
		Expect(cmp.Diff(want, got)).To(BeEmpty(), "ports of router %d", r)
		base[r] = nv
		nv += len(got)
	}

	const vcs = 3
	route := rt.RouteFunc(vcs)
	deps := make([][]int, nv)
	nt := len(g.Terminals)
	for s := range nt {
		for d := range nt {
			dr := g.Terminals[d]
			r := g.Terminals[s]
			in := slices.IndexFunc(rt.Ports[r], func(p topology.Port) bool { return p.Terminal == s })
			ph, prev := 0, -1
			var walk []topology.Hop
			for {
				Expect(len(walk)).To(BeNumerically("<", g.Routers), "route %d->%d loops: %v", s, d, walk)
				rem := u.dist[dr][ph][r]
				Expect(rem).To(BeNumerically(">=", 0), "route %d->%d: router %d cannot reach router %d legally", s, d, r, dr)
				got := route(r, in, d)
				Expect(got.VCLo).To(Equal(0))
				Expect(got.VCHi).To(Equal(vcs - 1))
				p := got.Port
				walk = append(walk, topology.Hop{Router: r, Port: p})
				pt := rt.Ports[r][p]
				if r == dr {
					Expect(pt.Terminal).To(Equal(d), "route %d->%d does not eject at router %d", s, d, r)
					break
				}
				Expect(pt.Peer).To(BeNumerically(">=", 0), "route %d->%d ejects at router %d to terminal %d", s, d, r, pt.Terminal)
				nph := u.next(r, pt.Peer, ph)
				Expect(nph).To(BeNumerically(">=", 0), "route %d->%d goes up after down at router %d: %v", s, d, r, walk)
				Expect(u.dist[dr][nph][pt.Peer]).To(Equal(rem-1), "route %d->%d at router %d: port %d is not on a shortest legal route", s, d, r, p)
				for lp := range p {
					lo := rt.Ports[r][lp]
					if lo.Peer < 0 {
						continue
					}
					if lph := u.next(r, lo.Peer, ph); lph >= 0 {
						Expect(u.dist[dr][lph][lo.Peer]).NotTo(Equal(rem-1), "route %d->%d at router %d: lower port %d is as short as %d", s, d, r, lp, p)
					}
				}
				c := base[r] + p
				if prev >= 0 {
					deps[prev] = append(deps[prev], c)
				}
				r, in, ph, prev = pt.Peer, pt.PeerPort, nph, c
			}
			Expect(len(walk)-1).To(Equal(u.dist[dr][0][g.Terminals[s]]), "route %d->%d", s, d)
			Expect(rt.Hops(s, d)).To(Equal(len(walk)), "hops %d->%d", s, d)
			Expect(cmp.Diff(walk, rt.Path(s, d))).To(BeEmpty(), "path %d->%d", s, d)
		}
	}
	Expect(findCycle(deps)).To(BeNil(), "channel dependency cycle (vertices router ports, base %v)", base)
	return rt
}

// destinationOnlyMinimal reports whether one routing table column indexed
// by destination alone can give every router a shortest legal route to
// router d. A router can take a down channel in such a table only if its
// shortest route may be down-only and the down neighbour it takes can too
// (the packet arrives there on a down channel and must continue down);
// every other router must take an up channel to a router one step closer.
func destinationOnlyMinimal(u *updown, d int) bool {
	anyd, down := u.dist[d][0], u.dist[d][1]
	order := make([]int, 0, u.g.Routers)
	for r := range u.g.Routers {
		if down[r] >= 0 {
			order = append(order, r)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return down[a] - down[b] })
	canDown := make([]bool, u.g.Routers)
	for _, r := range order {
		if r == d {
			canDown[r] = true
			continue
		}
		for _, m := range u.adj[r] {
			if !u.up(r, m) && down[m] == down[r]-1 && canDown[m] && anyd[r] == down[r] {
				canDown[r] = true
			}
		}
	}
	for r := range u.g.Routers {
		if canDown[r] {
			continue
		}
		ok := false
		for _, m := range u.adj[r] {
			ok = ok || u.up(r, m) && anyd[m] == anyd[r]-1
		}
		if !ok {
			return false
		}
	}
	return true
}

var _ = Describe("Graph files", func() {
	It("reads a ring", func() {
		g := parse(ringText(4, 1))
		Expect(cmp.Diff(&topology.Graph{Routers: 4, Terminals: []int{0, 1, 2, 3}, Channels: []topology.Channel{
			{A: 0, B: 1, Latency: -1}, {A: 1, B: 2, Latency: -1}, {A: 2, B: 3, Latency: -1}, {A: 3, B: 0, Latency: -1},
		}}, g)).To(BeEmpty())
	})

	It("reads the commented example, with terminals written both ways and latencies", func() {
		g := readGraph("testdata/example.graph")
		d := topology.DefaultLatency
		Expect(cmp.Diff(&topology.Graph{Routers: 10,
			Terminals: []int{0, 0, 1, 2, 2, 3, 6, 5, 5, 6, 7, 7, 8, 9, 9, 3},
			Channels: []topology.Channel{{0, 1, d}, {0, 2, 2}, {1, 3, d}, {2, 3, d}, {2, 4, d}, {3, 5, d}, {4, 5, d},
				{4, 6, 3}, {5, 7, d}, {6, 7, d}, {6, 8, d}, {7, 9, d}, {8, 9, d}, {1, 9, 4}, {3, 8, d}},
		}, g)).To(BeEmpty())
	})

	It("accepts comments, blank lines, tabs and a single router", func() {
		g := parse("\n  # nothing yet\nrouters\t1 # one crossbar\n\nrouter 0 node 1\t\nnode 0 router 0#x\n")
		Expect(cmp.Diff(&topology.Graph{Routers: 1, Terminals: []int{0, 0}}, g)).To(BeEmpty())
	})

	DescribeTable("rejects malformed files, naming the line and the problem",
		func(text string, line int, fragment string) {
			g, err := topology.ParseGraph(strings.NewReader(text))
			Expect(g).To(BeNil())
			var ge *topology.GraphError
			Expect(errors.As(err, &ge)).To(BeTrue(), "%v", err)
			Expect(ge.Line).To(Equal(line), "%v", err)
			Expect(ge.Msg).To(ContainSubstring(fragment))
			Expect(err.Error()).To(HavePrefix(fmt.Sprintf("line %d: ", line)))
		},
		Entry("unknown keyword", "routers 2\nswitch 0 node 0\n", 2, `unknown keyword "switch"`),
		Entry("unknown item", "routers 2\nrouter 0 host 0\n", 2, `unknown keyword "host" after router 0`),
		Entry("node without router", "routers 2\nnode 0 switch 1\n", 2, `unknown keyword "switch" after node 0`),
		Entry("statement before routers", "# hi\nrouter 0 node 0\nrouters 1\n", 2, "first statement must be `routers N`"),
		Entry("routers twice", "routers 2\nrouters 2\n", 2, "`routers` given twice"),
		Entry("routers without a count", "routers\n", 1, "want `routers N`"),
		Entry("routers not a number", "routers two\n", 1, `routers "two"`),
		Entry("no routers", "routers 0\n", 1, "in 1..1024"),
		Entry("too many routers", "routers 1025\n", 1, "in 1..1024"),
		Entry("router id out of range", "routers 2\nrouter 2 node 0\n", 2, "router 2 out of range 0..1"),
		Entry("channel end out of range", "routers 2\nrouter 0 node 0\nrouter 0 router 5\n", 3, "router 5 out of range 0..1"),
		Entry("negative router id", "routers 2\nrouter -1 node 0\n", 2, `router "-1": want a router number`),
		Entry("router id not a number", "routers 2\nrouter 0 router 1x\n", 2, `router "1x"`),
		Entry("terminal id not a number", "routers 2\nrouter 0 node n0\n", 2, `terminal "n0"`),
		Entry("terminal id too large", "routers 2\nrouter 0 node 4096\n", 2, "0..4095"),
		Entry("incomplete statement", "routers 2\nrouter 0 node\n", 2, "incomplete statement"),
		Entry("two items on one line", "routers 2\nrouter 0 node 0 router 1\n", 2, `unexpected "router"`),
		Entry("extra field after a channel", "routers 2\nrouter 0 router 1 2 3\n", 2, `unexpected "3"`),
		Entry("self loop", "routers 3\nrouter 1 router 1\n", 2, "channel from router 1 to itself"),
		Entry("duplicate channel", "routers 3\nrouter 0 router 1\nrouter 1 router 2\nrouter 0 router 1 4\n", 4,
			"duplicate channel between routers 0 and 1 (first at line 2"),
		Entry("duplicate channel written backwards", "routers 3\n\nrouter 2 router 1\nrouter 1 router 2\n", 4,
			"duplicate channel between routers 1 and 2 (first at line 3"),
		Entry("negative latency", "routers 2\nrouter 0 router 1 -1\n", 2, `latency "-1"`),
		Entry("latency too large", "routers 2\nrouter 0 router 1 2000000\n", 2, `latency "2000000"`),
		Entry("terminal attached twice", "routers 2\nrouter 0 node 0\nrouter 0 router 1\nnode 0 router 1\n", 4,
			"terminal 0 is already attached to router 0 (line 2)"),
		Entry("terminal attached twice to one router", "routers 1\nrouter 0 node 3\nrouter 0 node 3\n", 3,
			"terminal 3 is already attached"),
		Entry("empty file", "", 1, "without a `routers N` statement"),
		Entry("comments only", "# a\n# b\n", 2, "without a `routers N` statement"),
		Entry("no terminals", "routers 2\nrouter 0 router 1\n", 2, "no terminals"),
		Entry("gap in the terminal numbers", "routers 2\nrouter 0 node 0\nrouter 1 node 2\nrouter 0 router 1\n# end\n", 5,
			"terminal 1 is missing"),
		Entry("disconnected graph", "routers 4\nrouter 0 node 0\nrouter 0 router 1\nrouter 2 router 3\n", 4,
			"router 2 is not connected to router 0"),
		Entry("isolated router", "routers 2\nrouter 0 node 0\nrouter 1 node 1\n", 3, "router 1 is not connected"),
		Entry("line too long", "routers 2\n"+strings.Repeat("#", 5000)+"\n", 2, "longer than"),
	)

	It("names the file in the errors of ReadGraphFile", func() {
		path := filepath.Join(GinkgoT().TempDir(), "bad.graph")
		Expect(os.WriteFile(path, []byte("routers 3\nrouter 0 node 0\nrouter 0 router 3\n"), 0o644)).To(Succeed())
		_, err := topology.ReadGraphFile(path)
		Expect(err).To(MatchError(path + ": line 3: router 3 out of range 0..2"))
		_, err = topology.ReadGraphFile(filepath.Join(GinkgoT().TempDir(), "none.graph"))
		Expect(err).To(MatchError(ContainSubstring("none.graph")))
	})

	It("checks graphs built in code", func() {
		for _, c := range []struct {
			g   *topology.Graph
			msg string
		}{
			{nil, "no graph"},
			{&topology.Graph{Routers: 0, Terminals: []int{0}}, "routers: 0"},
			{&topology.Graph{Routers: 1}, "no terminals"},
			{&topology.Graph{Routers: 1, Terminals: []int{1}}, "terminal 0: router 1 out of range"},
			{&topology.Graph{Routers: 2, Terminals: []int{0}, Channels: []topology.Channel{{0, 2, -1}}}, "channel 0: routers 0-2"},
			{&topology.Graph{Routers: 2, Terminals: []int{0}, Channels: []topology.Channel{{1, 1, -1}}}, "to itself"},
			{&topology.Graph{Routers: 2, Terminals: []int{0}, Channels: []topology.Channel{{0, 1, -2}}}, "latency -2"},
			{&topology.Graph{Routers: 2, Terminals: []int{0}, Channels: []topology.Channel{{0, 1, -1}, {1, 0, 3}}}, "channel 1: duplicate"},
			{&topology.Graph{Routers: 3, Terminals: []int{0}, Channels: []topology.Channel{{0, 1, -1}}}, "router 2 is not connected"},
		} {
			Expect(c.g.Validate()).To(MatchError(ContainSubstring(c.msg)))
			_, err := topology.NewRouting(c.g)
			Expect(err).To(MatchError(ContainSubstring(c.msg)))
			e := env.New(env.Options{})
			_, err = topology.FromGraph(e, "G", c.g, topology.GraphConfig{Router: wormhole.Mesh88Lat(), Clock: clk, FlitBytes: 16}, &fabric.Shared{})
			Expect(err).To(MatchError(ContainSubstring(c.msg)))
		}
	})
})

var _ = Describe("Up*/down* table routing", func() {
	DescribeTable("routes every pair on a shortest legal route, lowest port first, without a dependency cycle",
		func(g func() *topology.Graph) { checkRouting(g()) },
		Entry("ring of 6", func() *topology.Graph { return parse(ringText(6, 1)) }),
		Entry("ring of 5 with two terminals per router", func() *topology.Graph { return parse(ringText(5, 2)) }),
		Entry("the example (10 routers, one without terminals)", func() *topology.Graph { return readGraph("testdata/example.graph") }),
		Entry("the two-column graph", func() *topology.Graph { return readGraph("testdata/twocolumn.graph") }),
		Entry("4x4 mesh", func() *topology.Graph { return parse(meshText(4, func(x, y int) int { return y*4 + x })) }),
		Entry("complete graph of 5", func() *topology.Graph {
			t := "routers 5\n"
			for i := range 5 {
				t += fmt.Sprintf("router %d node %d\n", i, i)
				for j := i + 1; j < 5; j++ {
					t += fmt.Sprintf("router %d router %d\n", j, i)
				}
			}
			return parse(t)
		}),
		Entry("a line, terminals only at the ends", func() *topology.Graph {
			return parse("routers 4\nrouter 3 node 0\nrouter 0 node 1\nrouter 1 router 0\nrouter 1 router 2\nrouter 3 router 2\n")
		}),
		Entry("a star whose root is a leaf", func() *topology.Graph {
			return parse("routers 5\nrouter 4 router 0\nrouter 4 router 1\nrouter 4 router 2\nrouter 4 router 3\n" +
				"router 0 node 0\nrouter 1 node 1\nrouter 2 node 2\nrouter 3 node 3\nrouter 4 node 4\n")
		}),
		Entry("one router", func() *topology.Graph { return parse("routers 1\nrouter 0 node 0\nrouter 0 node 1\n") }),
	)

	It("takes the long way round the ring where the short way turns up after down", func() {
		rt := checkRouting(parse(ringText(6, 1)))
		// Levels from router 0: 1 and 5 at 1, 2 and 4 at 2, 3 at 3. From 2
		// to 4 the short way, 2-3-4, goes down to 3 (level 3) and then up
		// to 4 (level 2): illegal. The legal route goes up 2-1-0 and down
		// 0-5-4: 5 routers instead of 3.
		Expect(rt.Level).To(Equal([]int{0, 1, 2, 3, 2, 1}))
		Expect(rt.Hops(2, 4)).To(Equal(5))
		Expect(rt.Hops(4, 2)).To(Equal(5)) // 4-3-2: down to 3, then up: illegal too
		// Through router 3 only downwards: 1-2-3, or from 3 upwards: 3-4-5.
		Expect(rt.Path(1, 3)).To(Equal([]topology.Hop{{Router: 1, Port: 2}, {Router: 2, Port: 2}, {Router: 3, Port: 0}}))
		Expect(rt.Path(3, 5)).To(Equal([]topology.Hop{{Router: 3, Port: 2}, {Router: 4, Port: 2}, {Router: 5, Port: 0}}))
	})

	It("needs the Down column on testdata/twocolumn.graph", func() {
		g := readGraph("testdata/twocolumn.graph")
		u := newUpdown(g)
		rt := checkRouting(g)
		var failing []int
		for d := range g.Routers {
			if !destinationOnlyMinimal(u, d) {
				failing = append(failing, d)
			}
		}
		Expect(failing).NotTo(BeEmpty())
		// And the tables use it: some router sends transit packets that
		// arrived on a down channel elsewhere than its own packets.
		differ := 0
		for r := range g.Routers {
			for t := range g.Terminals {
				if d := rt.Tables[r].Down[t]; d >= 0 && d != rt.Tables[r].Any[t] {
					differ++
				}
			}
		}
		Expect(differ).To(BeNumerically(">", 0))
		// Every destination of the example and the ring can do with one
		// column: the check is not vacuous.
		for _, g := range []*topology.Graph{parse(ringText(6, 1)), readGraph("testdata/example.graph")} {
			u := newUpdown(g)
			for d := range g.Routers {
				Expect(destinationOnlyMinimal(u, d)).To(BeTrue())
			}
		}
	})

	It("finds the dependency cycle of shortest-path routing on the ring of 6", func() {
		// The check of checkRouting is not vacuous: shortest-path routing
		// on a ring (clockwise on ties) uses the six clockwise channels in
		// a cycle. Channel i is i -> i+1 (vertex i), channel 6+i is i ->
		// i-1.
		const n = 6
		deps := make([][]int, 2*n)
		for s := range n {
			for d := range n {
				cw := (d - s + n) % n
				prev := -1
				for h, r := 0, s; r != d; h++ {
					c, next := r, (r+1)%n
					if cw > n/2 {
						c, next = n+r, (r+n-1)%n
					}
					if prev >= 0 {
						deps[prev] = append(deps[prev], c)
					}
					prev, r = c, next
				}
			}
		}
		Expect(findCycle(deps)).To(Equal([]int{0, 1, 2, 3, 4, 5, 0}))
	})

	It("is minimal on a 2-D mesh wherever the root is, so its hop counts are the mesh's", func() {
		// Levels on a mesh are Manhattan distances from the root, so every
		// channel goes up or down by exactly one level. Between s and d, let
		// p be the root clamped into the rectangle spanned by s and d: every
		// step from s towards p brings the packet closer to the root (up),
		// every step from p on towards d takes it further away (down), and
		// |s-p| + |p-d| = |s-d|. So a minimal route is always legal, and
		// up*/down* hop counts equal dimension-order ones (Manhattan + 1) for
		// every pair, with the root in a corner or anywhere else.
		const k = 4
		e := env.New(env.Options{})
		mc := topology.MeshConfig{K: k, Router: wormhole.Mesh88Lat(), Clock: clk, ChannelLatency: 1, FlitBytes: 16}
		mesh, err := topology.Mesh(e, "M", mc, &fabric.Shared{})
		Expect(err).NotTo(HaveOccurred())
		gc := topology.GraphConfig{Router: mc.Router, Clock: clk, ChannelLatency: 1, FlitBytes: 16}
		for _, m := range []struct {
			name string
			id   func(x, y int) int
		}{
			{"row-major", func(x, y int) int { return y*k + x }},
			{"root at (2, 1)", func(x, y int) int { return ((y+3)%k)*k + (x+2)%k }}, // router 0 at x=2, y=1
		} {
			name := m.name
			g := parse(meshText(k, m.id))
			checkRouting(g)
			net, err := topology.FromGraph(env.New(env.Options{}), "G", g, gc, &fabric.Shared{})
			Expect(err).NotTo(HaveOccurred())
			for s := range k * k {
				for d := range k * k {
					Expect(net.Hops(s, d)).To(Equal(mesh.Hops(s, d)), "%s: %d->%d", name, s, d)
				}
			}
		}
	})
})

// delivered is one packet delivered in a graph network.
type delivered struct {
	Src, Dst, Hops int
	Latency        uint64 // tail arrival minus creation
}

var _ = Describe("Graph networks", func() {
	// path is a line of 4 routers with channel latencies 2, 0 and 3 cycles,
	// terminal 0 on router 0, terminal 1 on router 3 and terminal 2 on
	// router 1.
	const path = "routers 4\nrouter 0 node 0\nrouter 3 node 1\nrouter 1 node 2\n" +
		"router 0 router 1 2\nrouter 1 router 2 0\nrouter 3 router 2 3\n"

	DescribeTable("zero-load latency is the sum of the pipeline and channel delays",
		// As on the mesh (wormhole's zero-load table), a packet of P flits
		// over H routers takes l + H*(RD + VA + SA + ST) + (the latencies of
		// the channels after each router) + P cycles from creation to its
		// tail, where l is the terminal channels' latency (the mesh's
		// l + H*(RD+VA+SA+ST+l) + P with one latency per channel).
		func(rd, va, st, l, p, src, dst int, want uint64) {
			rc := wormhole.Mesh88Lat()
			rc.RoutingDelay, rc.VCAllocDelay, rc.STPrepareDelay, rc.STFinalDelay = rd, va, st-1, 1
			rc.VCBufSize = 64 // no credit stalls
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			var got []delivered
			sh := &fabric.Shared{Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
				OnDeliver: func(now clock.Time, pk *fabric.Packet) {
					got = append(got, delivered{pk.Src, pk.Dst, pk.Hops, uint64(clk.CycleAt(now)) - pk.Created})
				}}
			net, err := topology.FromGraph(e, "G", parse(path), topology.GraphConfig{Router: rc, Clock: clk,
				ChannelLatency: l, FlitBytes: 16}, sh)
			Expect(err).NotTo(HaveOccurred())
			net.Terminals[src].SetReplay([]traffic.Record{{Cycle: 3, Src: src, Dst: dst, Size: p}})
			net.Terminals[src].Start()
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			sh.Packets.Finish(e.Now())
			Expect(e.Monitor.Err()).NotTo(HaveOccurred())
			Expect(got).To(Equal([]delivered{{src, dst, net.Hops(src, dst), want}}))
		},
		// 4 routers: 1 + 4*(0+1+1+1) + (2+0+3) + 1 + 5 = 24.
		Entry("mesh88_lat, 5 flits, end to end", 0, 1, 1, 1, 5, 0, 1, uint64(24)),
		Entry("mesh88_lat, 5 flits, back", 0, 1, 1, 1, 5, 1, 0, uint64(24)),
		// 3 routers (1, 2, 3): 1 + 3*3 + (0+3) + 1 + 5 = 19.
		Entry("mesh88_lat, from the middle", 0, 1, 1, 1, 5, 2, 1, uint64(19)),
		// 0 + 4*(1+2+1+2) + 5 + 0 + 3 = 32.
		Entry("slow pipeline, no terminal wire", 1, 2, 2, 0, 3, 0, 1, uint64(32)),
		// 2 + 4*3 + 5 + 2 + 1 = 22.
		Entry("one flit, long terminal wires", 0, 1, 1, 2, 1, 1, 0, uint64(22)),
		// 2 routers (0, 1): 1 + 2*3 + 2 + 1 + 20 = 30.
		Entry("20 flits next door", 0, 1, 1, 1, 20, 0, 2, uint64(30)),
	)

	// runUniform runs uniform random traffic at rate flits/terminal/cycle on
	// g through warm-up, measurement and drain and checks that every packet
	// was delivered exactly once over the routers its route crosses, with
	// the checkers and the watchdog clean. It returns the packets
	// delivered.
	//
	// It runs twice, traced (the links' slow path) and untraced (their
	// fast path), and expects every packet delivered at the same cycle.
	runUniform := func(g *topology.Graph, rc wormhole.Config, rate float64, win stats.Window) int {
		GinkgoHelper()
		recv := 0
		_, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(e *env.Env) []arrivalRec {
			var got []arrivalRec
			recv = runUniformIn(e, g, rc, rate, win, &got)
			return got
		})
		Expect(diff).To(BeEmpty(), "deliveries traced (-) and untraced (+)")
		return recv
	}

	DescribeTable("delivers thousands of random packets exactly once",
		func(g func() *topology.Graph, mod func(*wormhole.Config), rate float64) {
			rc := wormhole.Mesh88Lat()
			mod(&rc)
			n := runUniform(g(), rc, rate, stats.Window{Warmup: 1000, Measure: 8000})
			Expect(n).To(BeNumerically(">", 2000))
		},
		Entry("ring of 6, two terminals per router, mesh88_lat", func() *topology.Graph { return parse(ringText(6, 2)) },
			func(*wormhole.Config) {}, 0.1),
		Entry("ring of 6, one VC of 2 flits", func() *topology.Graph { return parse(ringText(6, 2)) },
			func(c *wormhole.Config) { c.NumVCs, c.InputSpeedup, c.VCBufSize = 1, 1, 2 }, 0.1),
		Entry("the example, mesh88_lat", func() *topology.Graph { return readGraph("testdata/example.graph") },
			func(*wormhole.Config) {}, 0.1),
		Entry("the example, one VC with a shared buffer", func() *topology.Graph { return readGraph("testdata/example.graph") },
			func(c *wormhole.Config) { *c = wormhole.Telegraphos(); c.NumVCs, c.InputSpeedup = 1, 1 }, 0.1),
		Entry("the example, the Telegraphos switch (two VCs sharing a buffer)", func() *topology.Graph { return readGraph("testdata/example.graph") },
			func(c *wormhole.Config) { *c = wormhole.Telegraphos() }, 0.1),
	)

	DescribeTable("drains after running into saturation (no deadlock)",
		// Every terminal offers 0.8 flits/cycle for 1500 cycles with one VC
		// of 2 flits per port, far beyond what the network accepts: at the
		// end of generation most packets still wait. Generation then stops
		// and the run must end with every packet delivered.
		func(g func() *topology.Graph) {
			gr := g()
			nt := len(gr.Terminals)
			rc := wormhole.Mesh88Lat()
			rc.NumVCs, rc.InputSpeedup, rc.VCBufSize = 1, 1, 2
			// Traced (the links' slow path) and untraced (their fast path):
			// the same deliveries at the same cycles; the checks below are
			// on the untraced run.
			var (
				e                      *env.Env
				sh                     *fabric.Shared
				net                    *topology.Network
				res                    env.Result
				sentAtStop, recvAtStop int
			)
			_, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(en *env.Env) []arrivalRec {
				e = en
				var got []arrivalRec
				sizes, _ := traffic.ParseSizes("2,8,16")
				inj, err := traffic.NewBernoulli(0.8, sizes)
				Expect(err).NotTo(HaveOccurred())
				pat, err := traffic.New("uniform", nt, traffic.Options{})
				Expect(err).NotTo(HaveOccurred())
				sh = &fabric.Shared{Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
					OnDeliver: func(now clock.Time, p *fabric.Packet) {
						got = append(got, arrivalRec{ID: p.ID, At: uint64(clk.CycleAt(now))})
					}}
				net, err = topology.FromGraph(e, "G", gr, topology.GraphConfig{Router: rc, Clock: clk, ChannelLatency: 1,
					FlitBytes: 16, Terminal: fabric.TerminalConfig{Pattern: pat, Injection: inj, Sizes: sizes}}, sh)
				Expect(err).NotTo(HaveOccurred())
				for _, t := range net.Terminals {
					t.Start()
				}
				stopper := vtest.NewAgent(e, "Stop", clk, func(now clock.Time, c clock.Cycle) bool {
					if c < 1500 {
						return true
					}
					for _, t := range net.Terminals {
						t.StopGenerating()
					}
					sentAtStop, recvAtStop, _ = sh.Packets.Counts()
					return false
				})
				stopper.Start()
				res, err = e.Run()
				Expect(err).NotTo(HaveOccurred())
				return got
			})
			Expect(diff).To(BeEmpty(), "deliveries traced (-) and untraced (+)")
			Expect(res.Stopped).To(BeFalse())
			sh.Packets.Finish(e.Now())
			Expect(e.Monitor.Err()).NotTo(HaveOccurred())
			for _, t := range net.Terminals {
				Expect(t.Idle()).To(BeTrue(), t.State())
			}
			sent, recv, _ := sh.Packets.Counts()
			Expect(recv).To(Equal(sent))
			Expect(sentAtStop).To(Equal(sent))
			// Saturated: less than half of what was offered had arrived
			// when generation stopped.
			Expect(2 * recvAtStop).To(BeNumerically("<", sentAtStop))
			Expect(recv).To(BeNumerically(">", 1000))
		},
		Entry("ring of 6", func() *topology.Graph { return parse(ringText(6, 2)) }),
		Entry("the example", func() *topology.Graph { return readGraph("testdata/example.graph") }),
	)

	It("rejects bad configurations, naming the parameter", func() {
		g := parse(ringText(3, 1))
		ok := topology.GraphConfig{Router: wormhole.Mesh88Lat(), Clock: clk, ChannelLatency: 1, FlitBytes: 16}
		for _, c := range []struct {
			mod func(*topology.GraphConfig)
			msg string
		}{
			{func(c *topology.GraphConfig) { c.Clock = clock.Clock{} }, "no clock"},
			{func(c *topology.GraphConfig) { c.ChannelLatency = -1 }, "channel latency -1"},
			{func(c *topology.GraphConfig) { c.FlitBytes = 0 }, "flit size 0"},
			{func(c *topology.GraphConfig) { c.Router.NumVCs = 0 }, "num_vcs"},
		} {
			gc := ok
			c.mod(&gc)
			_, err := topology.FromGraph(env.New(env.Options{}), "G", g, gc, &fabric.Shared{})
			Expect(err).To(MatchError(ContainSubstring(c.msg)))
		}
	})

	It("reports a packet for a terminal that does not exist", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		net, err := topology.FromGraph(e, "G", parse(ringText(3, 1)), topology.GraphConfig{Router: wormhole.Mesh88Lat(),
			Clock: clk, ChannelLatency: 1, FlitBytes: 16}, &fabric.Shared{})
		Expect(err).NotTo(HaveOccurred())
		net.Terminals[1].SetReplay([]traffic.Record{{Cycle: 0, Src: 1, Dst: 7, Size: 2}})
		net.Terminals[1].Start()
		_, err = e.Run()
		Expect(err).To(MatchError(ContainSubstring("no terminal 7")))
		Expect(err).To(MatchError(ContainSubstring("misroute")))
	})
})

// FuzzParseGraph checks that ParseGraph never panics, reports errors as a
// *GraphError with a line in the file, and that every graph it accepts
// gets routing tables whose routes reach their destinations.
func FuzzParseGraph(f *testing.F) {
	example, err := os.ReadFile("testdata/example.graph")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(example),
		ringText(6, 1),
		"routers 1\nrouter 0 node 0\n",
		"routers 3\nrouter 0 node 0\nnode 1 router 2\nrouter 0 router 1 7\nrouter 2 router 1\n",
		"routers 2\nrouter 0 router 0\n",
		"routers 2\nrouter 0 node 0 router 1\n",
		"",
		"\x00\xff#\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		g, err := topology.ParseGraph(strings.NewReader(text))
		if err != nil {
			var ge *topology.GraphError
			lines := strings.Count(text, "\n") + 1
			if !errors.As(err, &ge) || ge.Line < 1 || ge.Line > lines || ge.Msg == "" || g != nil {
				t.Fatalf("bad error %#v for a file of %d lines (graph %v)", err, lines, g)
			}
			return
		}
		rt, err := topology.NewRouting(g)
		if err != nil {
			t.Fatalf("parsed graph %+v has no routing: %v", g, err)
		}
		nt := min(len(g.Terminals), 16)
		for s := range nt {
			for d := range nt {
				p := rt.Path(s, d)
				if len(p) == 0 || len(p) > g.Routers {
					t.Fatalf("route %d->%d: %v", s, d, p)
				}
				last := p[len(p)-1]
				if last.Router != g.Terminals[d] || rt.Ports[last.Router][last.Port].Terminal != d {
					t.Fatalf("route %d->%d ends at %v", s, d, last)
				}
			}
		}
	})
}

var _ = Describe("Paragon backplane", func() {
	It("streams a packet at 200 MB/s over the mesh (SH-P3)", func() {
		mc := topology.Paragon(4)
		Expect(mc.Validate()).To(Succeed())
		// latency returns the time from creation to the tail's delivery of
		// one packet of n flits, corner to corner on an idle backplane.
		latency := func(n int) clock.Time {
			e := vtest.NewEnv(vtest.Options{Clock: mc.Clock})
			var at clock.Time
			sh := &fabric.Shared{Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
				OnDeliver: func(now clock.Time, _ *fabric.Packet) { at = now }}
			net, err := topology.Mesh(e, "P", mc, sh)
			Expect(err).NotTo(HaveOccurred())
			net.Terminals[0].SetReplay([]traffic.Record{{Cycle: 0, Src: 0, Dst: 15, Size: n}})
			net.Terminals[0].Start()
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			return at
		}
		// Once the path is set up the body streams a 2-byte flit per 10 ns
		// cycle: 999 more flits (1998 bytes) take 9.99 µs, 200 MB/s.
		Expect(latency(1000) - latency(1)).To(Equal(9990 * clock.Nanosecond))
	})

	Describe("MeshConfig.Attach", func() {
		// run sends one 8-flit packet from host 0 to host 15 on a Paragon(4)
		// mesh, with the terminals the mesh builds (attach false) or with
		// terminals of the test's own put on hosts 0 and 15 by Attach
		// (every other host declined); it returns the tail's arrival and
		// the network.
		run := func(attach bool) (clock.Time, *topology.Network, []int) {
			mc := topology.Paragon(4)
			e := vtest.NewEnv(vtest.Options{Clock: mc.Clock})
			var at clock.Time
			sh := &fabric.Shared{Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
				OnDeliver: func(now clock.Time, _ *fabric.Packet) { at = now }}
			var asked []int
			var mine []*fabric.Terminal
			if attach {
				mc.Attach = func(host int, out, in *link.Dir) (bool, error) {
					asked = append(asked, host)
					if host != 0 && host != 15 {
						return false, nil
					}
					tc := mc.Terminal
					tc.VCs, tc.FlitBytes = mc.Router.NumVCs, mc.FlitBytes
					t, err := fabric.NewTerminal(e, fmt.Sprintf("P.T[%d]", host), mc.Clock, host, tc, sh)
					if err != nil {
						return false, err
					}
					t.Connect(out, in)
					mine = append(mine, t)
					return true, nil
				}
			}
			net, err := topology.Mesh(e, "P", mc, sh)
			Expect(err).NotTo(HaveOccurred())
			src := net.Terminals
			if attach {
				src = mine
			}
			src[0].SetReplay([]traffic.Record{{Cycle: 0, Src: 0, Dst: 15, Size: 8}})
			src[0].Start()
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			return at, net, asked
		}

		It("attaches what Attach connects in place of the terminals, with the same timing", func() {
			want, _, _ := run(false)
			got, net, asked := run(true)
			Expect(got).To(BeNumerically(">", 0))
			// The attached link is the terminal's link: same arrival.
			Expect(got).To(Equal(want))
			Expect(asked).To(Equal([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}))
			// No terminal of the mesh's own; links: 2 × 4 × 3 = 24 between
			// routers and the 2 attached hosts'.
			Expect(net.Terminals).To(BeEmpty())
			Expect(net.Links).To(HaveLen(24 + 2))
		})

		It("names the host whose Attach fails", func() {
			mc := topology.Paragon(4)
			mc.Attach = func(host int, _, _ *link.Dir) (bool, error) {
				if host == 3 {
					return false, errors.New("no NI")
				}
				return false, nil
			}
			_, err := topology.Mesh(vtest.NewEnv(vtest.Options{Clock: mc.Clock}), "P", mc, &fabric.Shared{})
			Expect(err).To(MatchError(ContainSubstring("attach host 3: no NI")))
		})
	})
})

// arrivalRec is a delivered packet and the cycle its tail arrived.
type arrivalRec struct {
	ID, At uint64
}

// runUniformIn is runUniform's run in e, recording every delivery in got.
func runUniformIn(e *env.Env, g *topology.Graph, rc wormhole.Config, rate float64, win stats.Window, got *[]arrivalRec) int {
	GinkgoHelper()
	nt := len(g.Terminals)
	sizes, err := traffic.ParseSizes("1,2,4,8")
	Expect(err).NotTo(HaveOccurred())
	inj, err := traffic.NewBernoulli(rate, sizes)
	Expect(err).NotTo(HaveOccurred())
	pat, err := traffic.New("uniform", nt, traffic.Options{SelfTraffic: true})
	Expect(err).NotTo(HaveOccurred())
	x := fabric.NewExperiment(e, clk, nt, win)
	var net *topology.Network
	badHops := 0
	sh := &fabric.Shared{Stats: x.Stats(), Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
		OnDeliver: func(now clock.Time, p *fabric.Packet) {
			x.Delivered(now)
			*got = append(*got, arrivalRec{ID: p.ID, At: uint64(clk.CycleAt(now))})
			if p.Hops != net.Hops(p.Src, p.Dst) {
				badHops++
			}
		}}
	net, err = topology.FromGraph(e, "G", g, topology.GraphConfig{Router: rc, Clock: clk, ChannelLatency: 1,
		FlitBytes: 16, Terminal: fabric.TerminalConfig{Pattern: pat, Injection: inj, Sizes: sizes}}, sh)
	Expect(err).NotTo(HaveOccurred())
	for _, t := range net.Terminals {
		x.Add(t)
	}
	x.Start()
	res, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Stopped).To(BeFalse())
	Expect(x.Saturated()).To(BeFalse())
	sh.Packets.Finish(e.Now())
	Expect(e.Monitor.Err()).NotTo(HaveOccurred())
	for _, t := range net.Terminals {
		Expect(t.Idle()).To(BeTrue(), t.State())
	}
	sent, recv, dropped := sh.Packets.Counts()
	Expect(recv).To(Equal(sent))
	Expect(dropped).To(BeZero())
	Expect(badHops).To(BeZero())
	Expect(x.Stats().Result().Lost).To(BeZero())
	return recv
}
