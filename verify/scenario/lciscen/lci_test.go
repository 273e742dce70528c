package lciscen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/lciscen"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

type outputs struct {
	rep        *scenario.Report
	vcd, trace []byte
}

// execute runs the named scenario as `nisim run` does, with a waveform and
// a trace, and expects no setup error, no checker violation and no failed
// check.
func execute(name string, seed uint64, sets ...string) outputs {
	GinkgoHelper()
	s, err := scenario.Catalog(lciscen.Scenarios()).Lookup(name)
	Expect(err).NotTo(HaveOccurred())
	p := s.Defaults()
	Expect(scenario.Configure(p, "", sets)).To(Succeed())
	dir := GinkgoT().TempDir()
	vcdPath, tracePath := filepath.Join(dir, "run.vcd"), filepath.Join(dir, "run.trace")
	rep, _, violations, err := scenario.Exec(s, p, scenario.Options{Seed: seed, VCD: vcdPath, Trace: tracePath, Comment: name})
	Expect(err).NotTo(HaveOccurred())
	Expect(violations).NotTo(HaveOccurred())
	Expect(rep.Failed()).To(BeFalse(), "%+v", rep.Checks)
	var o outputs
	o.rep = rep
	o.vcd, err = os.ReadFile(vcdPath)
	Expect(err).NotTo(HaveOccurred())
	o.trace, err = os.ReadFile(tracePath)
	Expect(err).NotTo(HaveOccurred())
	Expect(vcd.Lint(bytes.NewReader(o.vcd))).To(BeEmpty())
	return o
}

func metric(r *scenario.Report, name string) float64 {
	GinkgoHelper()
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value
		}
	}
	Fail("no metric " + name)
	return 0
}

var _ = Describe("LCI scenarios", func() {
	It("lci-logp holds the calibration (PPro I-sdma within 10% of Table III) and dumps the ping-pong", func() {
		o := execute("lci-logp", 1, "iters=20", "stream=400")
		Expect(len(o.rep.Checks)).To(BeNumerically(">=", 6))
		Expect(string(o.vcd)).To(ContainSubstring("hsq"))
		Expect(o.trace).NotTo(BeEmpty())
	})

	It("lci-logp on the P3 with I-pio reports Table IV's row without holding it", func() {
		o := execute("lci-logp", 1, "platform=p3", "variant=pio", "iters=10", "stream=60")
		Expect(metric(o.rep, "p3_i-pio_latency_l")).To(BeNumerically(">", 0))
	})

	// The P3's cross-over was 784 bytes with the PCI bridge folded into
	// memory latency; on the memory bus and bridge (issue 11) it is 976:
	// the bridge's delayed read, re-fitted on the PPro's 16-byte gap and
	// kept on the P3 as the folded model kept its count, adds 18 PCI
	// cycles (0.5 µs) to the first 256-byte DMA read of every I-sdma
	// message of 256 bytes or more, which moves the crossing of two
	// nearly parallel curves by about 190 bytes (docs/lci-validation.md).
	// I-sdma's address and size field, a PIO store of its own on PCI
	// ahead of the descriptor, adds about 0.18 µs to every I-sdma
	// message and moved the crossing from 960 to 992 bytes on a 16-byte
	// grid; the 64-byte grid this spec used (976, 1040) put it at 1040,
	// 48 bytes beyond it, so the spec measures on the 16-byte grid.
	// The paper's ~800 bytes is a validation figure, reported by
	// lci-report with its error (1024 bytes, +28%, since the LANai 9's
	// calibrated CPI: its slower NI costs I-sdma's extra DMA handlers more
	// than it costs I-pio); the spec guards that the cross-over exists on
	// the P3 in the range scanned, 800 to 1104 bytes.
	It("lci-latency finds a P3 cross-over between 800 and 1104 bytes (the paper: ~800)", func() {
		o := execute("lci-latency", 1, "platform=p3", "from=800", "to=1104", "step=16", "iters=2")
		Expect(metric(o.rep, "p3_crossover_bytes")).To(And(BeNumerically(">=", 800), BeNumerically("<=", 1104)))
	})

	It("lci-throughput gives I-pio on the P3 under the paper's ~120 MB/s PIO bound", func() {
		o := execute("lci-throughput", 1, "platform=p3", "variant=pio", "sizes=[2048, 8192]", "messages=12")
		Expect(metric(o.rep, "mbps_8192")).To(And(BeNumerically(">", 50), BeNumerically("<", 125)))
	})

	It("lci-traffic delivers everything on 8 nodes with every checker on", func() {
		o := execute("lci-traffic", 3, "ops=20")
		Expect(metric(o.rep, "deliveries")).To(BeNumerically(">", 100))
	})

	It("lci-traffic delivers everything to a busy receiver everyone sends to, its senders' windows full", func() {
		o := execute("lci-traffic", 3, hotTraffic...)
		Expect(metric(o.rep, "deliveries")).To(BeNumerically(">", 300))
	})

	It("lci-broadcast on 16 nodes reaches every node", func() {
		execute("lci-broadcast", 1, "nodes=16", "stream_size=2048", "stream_messages=8", "iters=2")
	})

	It("lci-broadcast and lci-traffic run I-sdma-hmc with forward=host (section 5.4), the checkers on", func() {
		o := execute("lci-broadcast", 1, "nodes=8", "forward=host", "stream_size=2048", "stream_messages=8", "iters=2")
		Expect(o.rep.Title).To(HavePrefix("lci-broadcast: I-sdma-hmc, binary trees, 8 nodes"))
		hmc := metric(o.rep, "ppro_i-sdma-hmc_binary_bcast_latency_us")
		o = execute("lci-broadcast", 1, "nodes=8", "stream_size=2048", "stream_messages=8", "iters=2")
		// Two forwarding hosts on the path to node 7 (ranks 1 and 3):
		// later than the NIs' forwarding.
		Expect(hmc).To(BeNumerically(">", metric(o.rep, "ppro_i-sdma_binary_bcast_latency_us")))
		o = execute("lci-traffic", 2, "forward=host", "variant=pio", "mcast_pct=40", "ops=20")
		Expect(o.rep.Title).To(ContainSubstring("running I-pio-hmc"))
		Expect(metric(o.rep, "deliveries")).To(BeNumerically(">", 100))
	})

	It("gives the same trace and waveform for the same seed", func() {
		a := execute("lci-traffic", 5, "ops=10", "nodes=4")
		b := execute("lci-traffic", 5, "ops=10", "nodes=4")
		Expect(a.trace).To(Equal(b.trace))
		Expect(a.vcd).To(Equal(b.vcd))
	})

	It("refuses an I-rcpy message its receiver cannot poll, naming the key", func() {
		s, err := scenario.Catalog(lciscen.Scenarios()).Lookup("lci-logp")
		Expect(err).NotTo(HaveOccurred())
		Expect(scenario.Configure(s.Defaults(), "", []string{"variant=rcpy", "size=6"})).To(MatchError(
			"invalid parameter size: I-rcpy copies 4-byte aligned blocks of at least 4 bytes, its receiver polls the last word (got 6)"))
		Expect(scenario.Configure(s.Defaults(), "", []string{"variant=rcpy", "size=16"})).To(Succeed())
	})

	It("lci-logp runs I-rcpy (variant=rcpy) beside Table IV's row, its metrics measured", func() {
		o := execute("lci-logp", 1, "variant=rcpy", "iters=8", "stream=64")
		Expect(o.rep.Title).To(HavePrefix("lci-logp: I-rcpy on the PPro platform"))
		var rows []string
		for _, r := range o.rep.Rows {
			rows = append(rows, r.Metric+" | "+r.Paper)
		}
		Expect(rows).To(Equal([]string{
			"PPro I-rcpy: send overhead os | 1.8 µs", "PPro I-rcpy: receive overhead or | 1.2 µs", "PPro I-rcpy: latency L | 16.1 µs",
			"PPro I-rcpy: gap g | 13.9 µs", "PPro I-rcpy: end-to-end latency (os + L + or) | 19.1 µs"}))
		Expect(metric(o.rep, "ppro_i-rcpy_latency_l")).To(BeNumerically(">", 0))
	})

	DescribeTable("refuses bad parameters, naming the key",
		func(name string, set, key string) {
			s, err := scenario.Catalog(lciscen.Scenarios()).Lookup(name)
			Expect(err).NotTo(HaveOccurred())
			p := s.Defaults()
			err = scenario.Configure(p, "", []string{set})
			if err == nil {
				err = p.Validate()
			}
			Expect(err).To(MatchError(ContainSubstring(key)))
		},
		Entry("unknown platform", "lci-logp", "platform=pentium4", "platform"),
		Entry("unknown variant", "lci-logp", "variant=rdma", "variant"),
		// I-rcpy runs in lci-logp only (RemoteCopy's ping-pong and
		// stream); the other scenarios' traffic is send/receive.
		Entry("I-rcpy outside lci-logp", "lci-traffic", "variant=rcpy", "variant"),
		Entry("I-rcpy in lci-throughput", "lci-throughput", "variant=rcpy", "variant"),
		Entry("message over the MTU", "lci-logp", "size=4096", "size"),
		Entry("unknown tree", "lci-broadcast", "tree=ternary", "tree"),
		Entry("unknown forwarding", "lci-broadcast", "forward=switch", "forward"),
		Entry("unknown forwarding in traffic", "lci-traffic", `forward="NI"`, "forward"),
		Entry("too many nodes", "lci-traffic", "nodes=65", "nodes"),
		Entry("percentages over 100", "lci-traffic", "fa_pct=95", "fa_pct"),
		Entry("a hot share over 100", "lci-traffic", "hot_pct=101", "hot_pct"),
		Entry("a negative pause", "lci-traffic", "hot_pause_us=-1", "hot_pause_us"),
		Entry("empty sweep", "lci-throughput", "sizes=[]", "sizes"),
		Entry("unknown key", "lci-report", "steps=3", "steps"),
		Entry("an MTU Table II does not have", "lci-throughput", "mtu=3000", "mtu: 3000 bytes is not 1024, 2048 or 4096"),
		Entry("an MTU beyond 4 KB", "lci-traffic", "mtu=8192", "mtu"),
		Entry("an MTU that is not a number", "lci-logp", `mtu="1k"`, "mtu"),
	)

	It("bounds one-packet sizes by the MTU the parameters choose (section 5.3)", func() {
		s, err := scenario.Catalog(lciscen.Scenarios()).Lookup("lci-logp")
		Expect(err).NotTo(HaveOccurred())
		p := s.Defaults()
		Expect(scenario.Configure(p, "", []string{"mtu=1024", "size=2048"})).To(
			MatchError(ContainSubstring("size: above the limit 1024 (got 2048; one packet of the 1 KB MTU)")))
		t, err := scenario.Catalog(lciscen.Scenarios()).Lookup("lci-traffic")
		Expect(err).NotTo(HaveOccurred())
		q := t.Defaults()
		Expect(scenario.Configure(q, "", []string{"mtu=4096", "max_size=4096"})).To(Succeed())
		Expect(q.Validate()).To(Succeed())
	})

	It("lci-throughput runs I-pio-1k and I-sdma-4k, named as Table II composes them, the checkers on", func() {
		o := execute("lci-throughput", 1, "variant=pio", "mtu=1024", "sizes=[4096]", "messages=8")
		Expect(o.rep.Title).To(HavePrefix("lci-throughput: I-pio-1k on the PPro platform"))
		Expect(metric(o.rep, "mbps_4096")).To(BeNumerically(">", 0))
		o = execute("lci-throughput", 1, "platform=p3", "mtu=4096", "sizes=[4096]", "messages=8")
		Expect(o.rep.Title).To(HavePrefix("lci-throughput: I-sdma-4k on the P3 platform"))
	})

	It("lci-logp with I-4k compares with no table and checks no calibration (Tables III and IV are the 2 KB base's)", func() {
		o := execute("lci-logp", 1, "mtu=4096", "iters=4", "stream=16")
		for _, c := range o.rep.Checks {
			Expect(c.Name).NotTo(ContainSubstring("within 10%"))
		}
		for _, r := range o.rep.Rows {
			Expect(r.Metric).To(HavePrefix("PPro I-sdma-4k: "))
			Expect(r.Paper).To(Equal("-"))
		}
	})

	// Issue 12: every list and count has an upper bound. A listed size
	// keeps a report row and a metric for the run: Row (4 strings and the
	// calibrated mark, 72 B) and Metric (two strings and a float, 40 B) and
	// 96 B of text = 208 B on 64-bit; 2^30 / 208 = 5162220 sizes.
	It("bounds lci-traffic's planned operations by what each takes with its payload", func() {
		p := lciscen.TrafficDefaults()
		// 64 nodes x 20000 = 1.28M operations of 671 + 512 B: 2^30 / 1183
		// = 907643.
		p.Nodes, p.Ops = 64, 20000
		Expect(p.Validate()).To(MatchError("ops: above the limit 907643 (got 1280000; " +
			"1183 B per planned operation (ops x nodes) of 671+512 payload bytes x 907643 = 1023 MiB, the per-run memory budget)"))
		p.Ops = 14000 // 896000 operations
		Expect(p.Validate()).To(Succeed())
	})

	It("bounds the list of sizes by what their report rows take", func() {
		p := lciscen.ThroughputDefaults()
		p.Sizes = slices.Repeat([]int{64}, 5162220)
		Expect(p.Validate()).To(Succeed())
		p.Sizes = append(p.Sizes, 64)
		Expect(p.Validate()).To(MatchError("sizes: above the limit 5162220 (got 5162221; " +
			"208 B per size: a report row and a metric with their text x 5162220 = 1023 MiB, the per-run memory budget)"))
	})
})
