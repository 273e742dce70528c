package noc_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/noc"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func metric(r *scenario.Report, name string) float64 {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value
		}
	}
	Fail("no metric " + name)
	return 0
}

var _ = Describe("network scenarios", func() {
	It("reads BookSim's mesh88_lat as written and measures its near-zero-load latency", func() {
		p := noc.MeshDefaults()
		Expect(scenario.Configure(p, "testdata/mesh88_lat.toml", nil)).To(Succeed())
		rep, err := noc.Run(env.New(env.Options{Seed: 3}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		// 0.005 packets = 0.1 flits/node/cycle is accepted in full, and
		// contention already adds some cycles to the 46.0-cycle zero-load
		// mean (4H+P+1 over all pairs, self-traffic included).
		Expect(metric(rep, "zero_load_latency")).To(BeNumerically("~", 46.0, 1e-9))
		Expect(metric(rep, "latency")).To(BeNumerically(">", 46.0))
		Expect(metric(rep, "accepted")).To(BeNumerically("~", 0.1, 0.015))
		// A tenth of that load is nearly contention-free: within 2 cycles.
		Expect(scenario.Configure(p, "", []string{"injection_rate=0.0005", "measure_periods=10"})).To(Succeed())
		rep, err = noc.Run(env.New(env.Options{Seed: 3}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(metric(rep, "latency")).To(BeNumerically("~", 46.0, 2))
		Expect(metric(rep, "hops")).To(BeNumerically("~", 6.25, 0.6))
	})

	DescribeTable("every network runs its defaults with the checkers on",
		func(name string) {
			var s *scenario.Scenario
			for _, c := range noc.Scenarios() {
				if c.Name == name {
					s = c
				}
			}
			Expect(s).NotTo(BeNil(), name)
			rep, err := s.Run(env.New(env.Options{Seed: 1}), s.Defaults())
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Failed()).To(BeFalse())
			Expect(metric(rep, "latency")).To(BeNumerically(">=", metric(rep, "zero_load_latency")*0.8))
		},
		Entry("mesh", "mesh"),
		Entry("graph", "graph"),
		Entry("myrinet-grid", "myrinet-grid"),
		Entry("myrinet-clos", "myrinet-clos"),
	)

	It("replays a traffic trace", func() {
		p := noc.MeshDefaults()
		Expect(scenario.Configure(p, "", []string{"trace_file=testdata/small.traffic", "warmup_periods=0", "sample_period=100", "measure_periods=1"})).To(Succeed())
		rec := trace.NewRecorder()
		_, err := noc.Run(env.New(env.Options{Trace: rec}), p)
		Expect(err).NotTo(HaveOccurred())
		// Corner to corner (14 hops): 4*15 + 20 + 1 = 81 cycles; the
		// one-flit packet to itself: 4 + 1 + 1 = 6 after its creation at 5.
		var got []string
		for _, r := range rec.Records() {
			if r.Kind == "net.deliver" {
				src, _ := r.Get("src")
				got = append(got, src+"@"+fmt.Sprint(r.Cycle))
			}
		}
		Expect(got).To(ConsistOf("9@11", "0@81", "63@81"))
	})

	DescribeTable("rejects impossible parameters, naming the key",
		func(set, key string) {
			err := scenario.Configure(noc.MeshDefaults(), "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(key)))
		},
		Entry("topology", "topology=torus", "topology"),
		Entry("radix", "k=1", "k"),
		Entry("rate", "injection_rate=1.5", "injection_rate"),
		Entry("packet size", "packet_size=0", "packet_size"),
		Entry("router", "router.num_vcs=0", "router.num_vcs"),
		Entry("platform", "myrinet=gm", "myrinet"),
		Entry("traffic", "traffic=tornado", "traffic"),
	)

	It("reports an unreadable trace file by key", func() {
		p := noc.MeshDefaults()
		p.TraceFile = "testdata/none.traffic"
		_, err := noc.Run(env.New(env.Options{}), p)
		Expect(err).To(MatchError(ContainSubstring("trace_file")))
	})
})
