package noc_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/noc"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// BookSim 2's own figures for its example mesh88_lat with uniform traffic
// (docs/booksim-crosscheck.md: a run of 30,000 measured cycles each, on
// BookSim rebuilt from booksim/booksim2). nisim's mesh must stay close to
// them; the tolerances cover the seed-to-seed spread of these shorter
// runs (about 1% below saturation, measured over 3 seeds).
var _ = Describe("the mesh against BookSim 2", func() {
	DescribeTable("mesh88_lat under uniform traffic matches BookSim's latencies and throughput",
		func(rate, packet, network, flit float64) {
			p := noc.MeshDefaults()
			Expect(scenario.Configure(p, "testdata/mesh88_lat.toml", []string{
				"injection_rate_uses_flits=true", fmt.Sprintf("injection_rate=%g", rate),
				"sample_period=5000", "warmup_periods=1", "measure_periods=3"})).To(Succeed())
			rep, err := noc.Run(env.New(env.Options{Seed: 4}), p)
			Expect(err).NotTo(HaveOccurred())
			Expect(metric(rep, "latency")).To(BeNumerically("~", packet, 0.04*packet))
			Expect(metric(rep, "network_latency")).To(BeNumerically("~", network, 0.04*network))
			Expect(metric(rep, "flit_latency")).To(BeNumerically("~", flit, 0.04*flit))
			Expect(metric(rep, "accepted")).To(BeNumerically("~", rate, 0.03*rate))
			Expect(metric(rep, "hops")).To(BeNumerically("~", 6.25, 0.1))
		},
		Entry("0.10 flits/node/cycle", 0.10, 55.33, 54.07, 30.67),
		Entry("0.30 flits/node/cycle", 0.30, 102.24, 92.56, 49.97),
	)
})
