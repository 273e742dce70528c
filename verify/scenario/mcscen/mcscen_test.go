package mcscen_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/mcscen"
)

var _ = Describe("mc-report", func() {
	It("declares every signal under the naming convention", func() {
		// Every signal is declared when the system is built, so a 1 ns
		// run sees them all (scenario.CheckWaveNames).
		Expect(scenario.CheckWaveNames(mcscen.ReportScenario(), GinkgoT().TempDir())).To(Succeed())
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
