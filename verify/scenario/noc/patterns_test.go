package noc_test

import (
	"fmt"
	"io"

	"github.com/google/go-cmp/cmp"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/noc"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Every network under every traffic pattern, below saturation: the
// terminals' conservation checker (each packet created is delivered exactly
// once, to the terminal it names: the reference of what must arrive), the
// per-flow order checker where the network promises order (Myrinet, or a
// mesh with one VC), credit conservation on every link and the watchdog are
// on in every run; noc.Run returns their violations as its error.
// exampleGraph is the irregular network of 10 routers and 16 terminals
// shipped as an example of the graph file format.
const exampleGraph = "../../../switch/topology/testdata/example.graph"

var _ = Describe("traffic patterns on every network", func() {
	DescribeTable("deliver thousands of packets exactly once, in order where promised, and drain",
		func(topology, pattern string, rate float64, extra ...string) {
			var p *noc.Params
			switch topology {
			case "mesh":
				p = noc.MeshDefaults()
			case "graph":
				p = noc.MeshDefaults()
				extra = append([]string{"topology=graph", "graph_file=" + exampleGraph}, extra...)
			default:
				p = noc.MyrinetDefaults(topology, map[string]string{"myrinet-grid": "ppro", "myrinet-clos": "p3"}[topology])
			}
			// 6000 measured cycles: at least ~700 packets in every entry.
			sets := append([]string{"traffic=" + pattern, fmt.Sprintf("injection_rate=%g", rate),
				"sample_period=1000", "warmup_periods=1", "measure_periods=6"}, extra...)
			Expect(scenario.Configure(p, "", sets)).To(Succeed())
			rep, err := noc.Run(env.New(env.Options{Seed: 11}), p)
			Expect(err).NotTo(HaveOccurred())
			if topology == "mesh" || topology == "graph" {
				// Traced, the credit links take their slow path (flits on a
				// wire list; Myrinet's STOP/GO links have no other): every
				// figure of the report must come out the same, to the last
				// digit of the mean latency.
				traced, err := noc.Run(env.New(env.Options{Seed: 11, Trace: trace.NewStreamRecorder(io.Discard)}), p)
				Expect(err).NotTo(HaveOccurred())
				Expect(cmp.Diff(rep.Metrics, traced.Metrics)).To(BeEmpty(), "untraced (-) and traced (+)")
				Expect(cmp.Diff(rep.Rows, traced.Rows)).To(BeEmpty(), "untraced (-) and traced (+)")
			}
			Expect(rep.Failed()).To(BeFalse())
			Expect(metric(rep, "saturated")).To(BeZero())
			Expect(metric(rep, "packets")).To(BeNumerically(">=", 500))
			// Below saturation the network accepts what is offered.
			Expect(metric(rep, "accepted")).To(BeNumerically("~", metric(rep, "offered"), 0.1*metric(rep, "offered")))
			// Contention only ever adds to the zero-load latency of the
			// pairs the pattern uses (transpose and neighbor use fewer pairs
			// than the all-pairs reference, so the bound is loose for them).
			Expect(metric(rep, "latency")).To(BeNumerically(">", 0.5*metric(rep, "zero_load_latency")))
		},
		Entry("mesh, uniform", "mesh", "uniform", 0.2),
		Entry("mesh, transpose", "mesh", "transpose", 0.15),
		Entry("mesh, bit complement", "mesh", "bitcomp", 0.15),
		Entry("mesh, hotspot", "mesh", "hotspot", 0.05, "hotspots=[27]", "hot_fraction=0.2"),
		Entry("mesh, nearest neighbour", "mesh", "neighbor", 0.3),
		// 16 terminals: 5-flit packets for enough of them.
		Entry("irregular graph (up*/down*), uniform", "graph", "uniform", 0.1, "packet_size=5"),
		Entry("irregular graph, hotspot", "graph", "hotspot", 0.05, "packet_size=5", "hotspots=[4]", "hot_fraction=0.2"),
		Entry("irregular graph with one VC, uniform (order checked)", "graph", "uniform", 0.05, "packet_size=5",
			"router.num_vcs=1", "router.input_speedup=1"),
		Entry("mesh with one VC, uniform (order checked)", "mesh", "uniform", 0.1, "router.num_vcs=1", "router.input_speedup=1"),
		// Myrinet rates are in 4-byte flits per byte-wide link cycle: 0.03
		// uses 12% of a host link.
		Entry("Myrinet grid, uniform", "myrinet-grid", "uniform", 0.03),
		Entry("Myrinet grid, transpose", "myrinet-grid", "transpose", 0.03),
		// Adversarial patterns load a few links many times over: every
		// bit-complement route crosses the grid's middle planes, and ...
		Entry("Myrinet grid, bit complement", "myrinet-grid", "bitcomp", 0.01, "packet_size=4"),
		Entry("Myrinet grid, hotspot", "myrinet-grid", "hotspot", 0.01, "packet_size=4", "hotspots=[5]", "hot_fraction=0.2"),
		Entry("Myrinet grid, nearest neighbour", "myrinet-grid", "neighbor", 0.05),
		Entry("Myrinet Clos, uniform", "myrinet-clos", "uniform", 0.05),
		// ... destination-mod-8 spine choice sends the 7 transposed flows of
		// a leaf up one uplink (they all go to hosts ≡ leaf mod 8).
		Entry("Myrinet Clos, transpose", "myrinet-clos", "transpose", 0.02, "packet_size=4"),
		Entry("Myrinet Clos, bit complement", "myrinet-clos", "bitcomp", 0.05),
		Entry("Myrinet Clos, hotspot", "myrinet-clos", "hotspot", 0.01, "packet_size=4", "hotspots=[63]", "hot_fraction=0.2"),
		Entry("Myrinet Clos, nearest neighbour", "myrinet-clos", "neighbor", 0.05),
	)

	It("lets a mesh driven far beyond saturation drain completely once sources stop (no deadlock)", func() {
		p := noc.MeshDefaults()
		// 0.6 flits/node/cycle is well past the ~0.45 an 8x8 mesh with
		// dimension-order routing accepts under uniform traffic: source
		// queues grow for 1500 cycles and every buffer of the busy links
		// fills. The drain limit is large enough to empty them.
		Expect(scenario.Configure(p, "", []string{"injection_rate=0.6", "sample_period=500", "warmup_periods=1",
			"measure_periods=2", "drain_limit=60000"})).To(Succeed())
		rep, err := noc.Run(env.New(env.Options{Seed: 5}), p)
		Expect(err).NotTo(HaveOccurred()) // conservation, credits, watchdog
		Expect(metric(rep, "saturated")).To(BeZero())
		Expect(metric(rep, "accepted")).To(BeNumerically("<", 0.55))
		Expect(metric(rep, "accepted")).To(BeNumerically(">", 0.35))
		// Queueing at the sources dominates the latency of a saturated run.
		Expect(metric(rep, "latency")).To(BeNumerically(">", 5*metric(rep, "zero_load_latency")))
	})
})

var _ = Describe("graph networks", func() {
	It("come within two cycles of the zero-load latency from the graph's routes at low load", func() {
		p := noc.MeshDefaults()
		Expect(scenario.Configure(p, "", []string{"topology=graph", "graph_file=" + exampleGraph,
			"injection_rate=0.005", "sample_period=2000", "measure_periods=5"})).To(Succeed())
		rep, err := noc.Run(env.New(env.Options{Seed: 2}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		zl := metric(rep, "zero_load_latency")
		// At least the pipeline of one router plus two links and the body.
		Expect(zl).To(BeNumerically(">", 20+3+2))
		Expect(metric(rep, "latency")).To(BeNumerically("~", zl, 2))
	})

	It("default to the embedded example network", func() {
		p := noc.MeshDefaults()
		Expect(scenario.Configure(p, "", []string{"topology=graph", "sample_period=200", "measure_periods=2"})).To(Succeed())
		rep, err := noc.Run(env.New(env.Options{Seed: 2}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		Expect(metric(rep, "packets")).To(BeNumerically(">", 0))
	})

	DescribeTable("reject an unreadable or malformed graph file, naming the key",
		func(sets []string, msg string) {
			err := scenario.Configure(noc.MeshDefaults(), "", append([]string{"topology=graph"}, sets...))
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("unreadable file", []string{"graph_file=testdata/none.graph"}, "graph_file: open testdata/none.graph"),
		Entry("malformed file", []string{"graph_file=testdata/small.traffic"}, "graph_file: testdata/small.traffic: line"),
	)
})
