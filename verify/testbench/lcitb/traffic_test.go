package lcitb_test

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/trace"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/nisim/nisim/firmware/lci"
)

// trafficEntry is one randomised traffic run of the specs below.
type trafficEntry struct {
	name     string
	nodes    int
	platform lcilib.Platform
	variant  fw.Variant
	tree     fw.Tree
	traffic  lcitb.Traffic
	seed     uint64
}

// uniform is traffic to random destinations with 15% multicasts and 15%
// fetch-and-adds.
func uniform(ops, maxSize int) lcitb.Traffic {
	return lcitb.Traffic{Ops: ops, MaxSize: maxSize, McastPct: 15, FAPct: 15}
}

// hot is the same mix with every unicast and fetch-and-add aimed at node
// 0, whose host computes 300 µs after each of its own operations before it
// polls: its receive side backs up and every sender's window towards it
// fills, the traffic that shows a sender exceeding its window.
func hot(ops, maxSize int) lcitb.Traffic {
	t := uniform(ops, maxSize)
	t.HotPct, t.HotPause = 100, 300*clock.Microsecond
	return t
}

// trafficEntries are the randomised runs; windowFull are those whose
// traffic fills senders' windows (the others' rarely or never do: 4
// operations per node cannot put W+1 packets in flight to one node, and
// uniform traffic on 8 nodes keeps at most 6 of the P3's W = 8 receive
// buffers busy per sender).
var (
	trafficEntries = []trafficEntry{
		{"2 PPro nodes, I-sdma", 2, lcilib.PPro(), fw.SDMA, fw.Binary, uniform(40, 512), 1},
		{"2 PPro nodes, I-pio", 2, lcilib.PPro(), fw.PIO, fw.Binary, uniform(40, 2048), 2},
		{"8 PPro nodes, I-sdma, binary", 8, lcilib.PPro(), fw.SDMA, fw.Binary, uniform(30, 512), 3},
		{"8 P3 nodes, I-pio, binomial", 8, lcilib.P3(), fw.PIO, fw.Binomial, uniform(30, 512), 4},
		{"8 P3 nodes, I-sdma, binary", 8, lcilib.P3(), fw.SDMA, fw.Binary, uniform(30, 1024), 5},
		{"64 PPro nodes (grid), I-sdma", 64, lcilib.PPro(), fw.SDMA, fw.Binary, uniform(4, 64), 6},
		{"64 P3 nodes (Clos), I-pio, binomial", 64, lcilib.P3(), fw.PIO, fw.Binomial, uniform(4, 64), 7},
	}
	windowFull = []trafficEntry{
		{"8 PPro nodes, I-sdma, a busy receiver everyone sends to", 8, lcilib.PPro(), fw.SDMA, fw.Binary, hot(60, 512), 8},
		{"8 P3 nodes, I-pio, binomial, a busy receiver everyone sends to", 8, lcilib.P3(), fw.PIO, fw.Binomial, hot(60, 512), 9},
	}
)

// runTraffic runs an entry with the given test-only faults.
func runTraffic(x trafficEntry, mut map[string]int) (lcitb.TrafficResult, *env.Env, error) {
	c := lcitb.DefaultConfig()
	c.Nodes, c.Platform, c.Variant, c.Tree = x.nodes, x.platform, x.variant, x.tree
	e := env.New(env.Options{Seed: x.seed, Mutations: mut})
	r, err := lcitb.RunTraffic(e, c, x.traffic)
	return r, e, err
}

// entries makes table entries of trafficEntries, named with their seeds.
func entries(xs ...trafficEntry) []TableEntry {
	var out []TableEntry
	for _, x := range xs {
		out = append(out, Entry(fmt.Sprintf("%s, seed %d", x.name, x.seed), x))
	}
	return out
}

var _ = Describe("randomised traffic with the checkers on", func() {
	DescribeTable("delivers everything exactly once, in order, with unique F&A values",
		func(x trafficEntry) {
			r, _, err := runTraffic(x, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Unicasts + r.Multicasts + r.FetchAdds).To(Equal(uint64(x.nodes * x.traffic.Ops)))
			// Every unicast once, every multicast at every other node.
			Expect(r.Deliveries).To(Equal(r.Unicasts + r.Multicasts*uint64(x.nodes-1)))
			Expect(r.Multicasts).To(BeNumerically(">", 0))
			Expect(r.FetchAdds).To(BeNumerically(">", 0))
		},
		append(entries(trafficEntries...), entries(windowFull...)...),
	)

	// lci.overdraw lets a sender go one credit below zero: W+1 packets in
	// flight to one destination. The receiver's window checker sees the
	// W+1-th buffer held for that sender.
	DescribeTable("catches a sender that exceeds its window (lci.overdraw)",
		func(x trafficEntry) {
			_, e, err := runTraffic(x, map[string]int{"lci.overdraw": 1})
			Expect(err).To(HaveOccurred())
			w := lcitb.DefaultConfig()
			w.Platform = x.platform
			window := w.FirmwareConfig().Window()
			v := e.Monitor.Violations()
			Expect(v).NotTo(BeEmpty())
			for _, x := range v {
				Expect(x.Check).To(Equal("lci.window"), x.String())
				Expect(x.Path).To(MatchRegexp(`^N\d+\.NI\.FW$`))
				Expect(x.Msg).To(MatchRegexp(fmt.Sprintf(`^node \d+ holds %d receive buffers, more than its W = %d$`, window+1, window)))
			}
		},
		entries(windowFull...),
	)

	It("gives the same trace for the same seed", func() {
		runOnce := func() []trace.Record {
			rec := trace.NewRecorder()
			e := env.New(env.Options{Seed: 9, Trace: rec})
			c := lcitb.DefaultConfig()
			c.Nodes = 4
			_, err := lcitb.RunTraffic(e, c, lcitb.Traffic{Ops: 10, MaxSize: 256, McastPct: 20, FAPct: 20})
			Expect(err).NotTo(HaveOccurred())
			return rec.Records()
		}
		a, b := runOnce(), runOnce()
		Expect(len(a)).To(BeNumerically(">", 1000))
		Expect(cmp.Diff(a, b)).To(BeEmpty())
	})
})

var _ = Describe("the base implementation on an unreliable link", func() {
	It("aborts with an error naming the link and the packet", func() {
		c := lcitb.DefaultConfig()
		c.Platform.Net.Link.CorruptProb = 1
		e := env.New(env.Options{Seed: 1})
		_, err := lcitb.PingPong(e, c, lcitb.DefaultBench())
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("lci.crc"), ContainSubstring("failed the CRC check on link Net.LinkH[1]"),
			ContainSubstring("from node 0 (32 bytes")))
	})
})

var _ = Describe("the polling watchdog", func() {
	It("interrupts a host that does not poll, and the signal handler receives", func() {
		c := lcitb.DefaultConfig()
		c.Interrupts = true
		e := env.New(env.Options{})
		cl, err := lcitb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		var got []clock.Time
		h1.OnSignal(func(s *lcilib.Seq, _ *lcilib.Msg) { got = append(got, s.Now()) })
		var sent clock.Time
		h0.Run(func(s *lcilib.Seq) {
			s.Send(1, []byte("wake up"), 7)
			sent = s.Now()
		})
		// Node 1 computes for 500 µs without polling.
		h1.Run(func(s *lcilib.Seq) { s.Compute(100_000) })
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(1))
		Expect(cl.Nodes[1].Card.Stats().Interrupts).To(Equal(uint64(1)))
		// The interrupt comes the watchdog's 70 µs (MY-P26) after the
		// delivery, and the signal costs its cycles on top: not before.
		Expect(got[0] - sent).To(BeNumerically(">", 70*clock.Microsecond))
	})

	It("does not interrupt a host that polls in time", func() {
		c := lcitb.DefaultConfig()
		c.Interrupts = true
		e := env.New(env.Options{})
		cl, err := lcitb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		h1.OnSignal(func(*lcilib.Seq, *lcilib.Msg) {})
		h0.Run(func(s *lcilib.Seq) { s.Send(1, []byte("hello"), 7) })
		h1.Run(func(s *lcilib.Seq) { s.Recv(nil) })
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Nodes[1].Card.Stats().Interrupts).To(BeZero())
	})
})
