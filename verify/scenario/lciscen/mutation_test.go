package lciscen_test

import (
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/lciscen"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// hotTraffic is lci-traffic on its 8 PPro nodes with node 0 a busy
// receiver everyone sends to: every sender's window towards it fills.
var hotTraffic = []string{"ops=60", "hot_pct=100", "hot_pause_us=300"}

// lci-traffic against a sender allowed one packet beyond its window
// (lci.overdraw, W+1 in flight): the "delivered" check fails, naming the
// window checker. Uniform traffic at this volume does not fill a window
// (the issue found the fault at nodes=16 ops=1000); the busy receiver
// does.
var _ = Describe("lci-traffic against a sender that exceeds its window", func() {
	run := func(mut map[string]int) scenario.CheckResult {
		GinkgoHelper()
		s, err := scenario.Catalog(lciscen.Scenarios()).Lookup("lci-traffic")
		Expect(err).NotTo(HaveOccurred())
		p := s.Defaults()
		Expect(scenario.Configure(p, "", hotTraffic)).To(Succeed())
		rep, _ := s.Run(env.New(env.Options{Seed: 3, Mutations: mut}), p)
		Expect(rep).NotTo(BeNil())
		for _, c := range rep.Checks {
			if c.Name == "delivered" {
				return c
			}
		}
		Fail("no delivered check")
		return scenario.CheckResult{}
	}

	It("passes without the fault and fails the delivered check with it", func() {
		Expect(run(nil).OK).To(BeTrue())
		c := run(map[string]int{"lci.overdraw": 1})
		Expect(c.OK).To(BeFalse())
		Expect(c.Detail).To(MatchRegexp(`\[lci\.window\] node \d holds 5 receive buffers, more than its W = 4`))
	})
})
