package mcscen_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/mcscen"
)

var _ = Describe("mc-report", func() {
	It("declares every signal under the naming convention", func() {
		// Every signal is declared when the system is built, so a 1 ns
		// run sees them all (scenario.CheckWaveNames).
		Expect(scenario.CheckWaveNames(mcscen.ReportScenario(), GinkgoT().TempDir())).To(Succeed())
	})

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
			{"unicast write latency, node 0 to node 1", "5.2 µs", true},
			{"per-link bandwidth, node 0 to node 1, 32 B writes", "29 MB/s", true},
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
			Expect(scenario.Configure(p, "", []string{set})).To(MatchError(ContainSubstring(key)))
		},
		Entry("one round is all warm-up", "rounds=1", "rounds"),
		Entry("a stream that is not whole packets", "link_bytes=1000", "link_bytes"),
		Entry("an aggregate stream that is not whole packets", "aggregate_bytes=1000", "aggregate_bytes"),
		Entry("a stream beyond the bound", "aggregate_bytes=4194304", "aggregate_bytes"),
		Entry("one lock round", "lock_rounds=1", "lock_rounds"),
	)
})
