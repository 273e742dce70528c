package mcscen_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/mcscen"
)

var _ = Describe("waveform names", func() {
	for _, s := range mcscen.Scenarios() {
		It(s.Name+" declares every signal under the naming convention", func() {
			// Every signal is declared when the system is built, so a 1 ns
			// run sees them all (scenario.CheckWaveNames).
			Expect(scenario.CheckWaveNames(s, GinkgoT().TempDir())).To(Succeed())
		})
	}
})

var _ = Describe("mc-traffic", func() {
	It("counts every write ordered and checks every delivery, on a small cluster", func() {
		p := mcscen.TrafficDefaults()
		Expect(scenario.Configure(p, "", []string{"nodes=3", "cpus=2", "writes=30", "min_bytes=8", "max_bytes=64"})).To(Succeed())
		rep, err := mcscen.RunTraffic(env.New(env.Options{Seed: 5}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		var writes float64
		for _, m := range rep.Metrics {
			if m.Name == "writes" {
				writes = m.Value
			}
		}
		// 3 x 2 CPUs x 30 operations, 7 in 8 writes of 8..64 bytes (1 +
		// (36/4-1)/8 = 2 packets on average): about 315 packets.
		Expect(writes).To(BeNumerically("~", 315, 100))
	})

	DescribeTable("refuses a bad parameter, naming its key",
		func(set, key string) {
			p := mcscen.TrafficDefaults()
			err := scenario.Configure(p, "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(key)))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		},
		Entry("one node", "nodes=1", "nodes"),
		Entry("five CPUs", "cpus=5", "cpus"),
		Entry("a torn longword", "min_bytes=6", "min_bytes"),
		Entry("a size range upside down", "min_bytes=64", "max_bytes"),
		Entry("a write larger than the smallest region", "max_bytes=132", "max_bytes"),
		Entry("nodes beyond the paper's eight", "nodes=100000", "nodes"),
		Entry("negative nodes", "nodes=-1", "nodes"),
		Entry("writes beyond the memory budget", "writes=99999999999", "writes"),
		Entry("writes x nodes x cpus beyond the memory budget", "writes=262144", "writes"),
		Entry("a float count", "writes=1e30", "writes"),
		Entry("a word for a number", "max_gap=abc", "max_gap"),
		Entry("a negative gap", "max_gap=-5", "max_gap"),
		Entry("a gap beyond its bound", "max_gap=1048577", "max_gap"),
		// 262145 > BudgetLimit(4096) = 262144: no CPU could do that many
		// operations, so the interval would never load.
		Entry("a load interval longer than any run", "load_every=262145", "load_every"),
	)
})

var _ = Describe("mc-report", func() {

	It("reports every figure of issue 13 section 4 with the paper's value, and its checks pass", func() {
		// Short streams and few rounds: the figures barely move (the
		// model is deterministic; the windows hold 100+ packets).
		p := &mcscen.ReportParams{Rounds: 3, LinkBytes: 4 << 10, AggregateBytes: 2 << 10, LockRounds: 2}
		rep, err := mcscen.RunReport(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		for _, c := range rep.Checks {
			Expect(c.OK).To(BeTrue(), c.Name+": "+c.Detail)
		}
		paper := map[string]string{}
		calibrated := map[string]bool{}
		for _, r := range rep.Rows {
			paper[r.Metric], calibrated[r.Metric] = r.Paper, r.Calibrated
		}
		for _, x := range []struct {
			metric, paper string
			calibrated    bool
		}{
			{"fitted: unicast write latency, node 0 to node 1", "5.2 µs", true},
			{"fitted: per-link bandwidth, 32 B writes, 0 to 1", "29 MB/s", true},
			{"multicast write latency, to the last of 7 nodes", "5.2 µs", false},
			{"aggregate bandwidth, 8 senders, loop-back off", "~60 MB/s", false},
			{"lock acquire + release, release waits (assumed)", "~11 µs", false},
			{"lock acquire + release, release does not wait", "~11 µs", false},
			{"MC flush (loop-back write until seen)", "-", false},
			{"  breakdown: total", "5.2 µs", false},
		} {
			Expect(paper).To(HaveKeyWithValue(x.metric, x.paper))
			Expect(calibrated[x.metric]).To(Equal(x.calibrated), x.metric)
		}
		n := 0
		for _, r := range rep.Rows {
			if strings.HasPrefix(r.Metric, "  breakdown: ") {
				n++
			}
		}
		// 15 blocks and the total.
		Expect(n).To(Equal(16))
	})

	DescribeTable("refuses a bad parameter, naming its key",
		func(set, key string) {
			p := mcscen.ReportDefaults()
			err := scenario.Configure(p, "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(key)))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		},
		Entry("one round is all warm-up", "rounds=1", "rounds"),
		Entry("a stream that is not whole packets", "link_bytes=1000", "link_bytes"),
		Entry("an aggregate stream that is not whole packets", "aggregate_bytes=1000", "aggregate_bytes"),
		Entry("a stream beyond the bound", "aggregate_bytes=4194304", "aggregate_bytes"),
		Entry("one lock round", "lock_rounds=1", "lock_rounds"),
		Entry("rounds beyond the bound", "rounds=100000", "rounds"),
		Entry("a negative stream", "link_bytes=-32", "link_bytes"),
		Entry("a huge float stream", "link_bytes=1e15", "link_bytes"),
		Entry("a word for a number", "aggregate_bytes=x", "aggregate_bytes"),
		Entry("lock rounds beyond the bound", "lock_rounds=1000000", "lock_rounds"),
	)
})
