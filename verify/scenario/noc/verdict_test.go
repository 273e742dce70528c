package noc_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/noc"
)

// verdicts runs the named network scenario (small windows) with the given
// test-only faults and returns each check's outcome by name.
func verdicts(name string, muts map[string]int, sets ...string) map[string]bool {
	var s *scenario.Scenario
	for _, c := range noc.Scenarios() {
		if c.Name == name {
			s = c
		}
	}
	Expect(s).NotTo(BeNil())
	p := s.Defaults()
	Expect(scenario.Configure(p, "", sets)).To(Succeed())
	rep, _, _, err := scenario.Exec(s, p, scenario.Options{Seed: 2, Mutations: muts})
	Expect(err).NotTo(HaveOccurred())
	out := map[string]bool{}
	for _, c := range rep.Checks {
		out[c.Name] = c.OK
	}
	return out
}

// Every verdict line of the network reports is computed: a healthy run
// passes it, and a model broken in the way the line is about fails it.
var _ = Describe("network report verdicts", func() {
	small := []string{"sample_period=500", "warmup_periods=1", "measure_periods=2"}

	It("mesh: no loss or duplication, and the checkers line, turn FAIL on a duplicating terminal", func() {
		ok := verdicts("mesh", nil, small...)
		Expect(ok).To(HaveKeyWithValue("no loss or duplication", true))
		Expect(ok).To(HaveKeyWithValue("checkers", true))
		Expect(ok).To(HaveKeyWithValue("drained", true))
		bad := verdicts("mesh", map[string]int{"fabric.duplicate": 3}, small...)
		Expect(bad).To(HaveKeyWithValue("no loss or duplication", false))
		Expect(bad).To(HaveKeyWithValue("checkers", false))
	})

	It("mesh: drained and no loss turn FAIL when a leaking link clogs the network", func() {
		bad := verdicts("mesh", map[string]int{"link.leak": 100})
		Expect(bad).To(HaveKeyWithValue("drained", false))
		Expect(bad).To(HaveKeyWithValue("no loss or duplication", false))
		Expect(bad).To(HaveKeyWithValue("checkers", false))
	})

	It("atm-star: no loss and sent = delivered + dropped turn FAIL on a switch that discards cells uncounted", func() {
		ok := verdicts("atm-star", nil)
		Expect(ok).To(HaveKeyWithValue("no loss or duplication", true))
		Expect(ok).To(HaveKeyWithValue("sent = delivered + dropped, per port", true))
		// The discarded cells never resolve, so the run ends at its drain
		// limit: the loss cannot be told from a queue by the conservation
		// checker then, but no verdict that depends on it passes.
		bad := verdicts("atm-star", map[string]int{"atm.discard": 100})
		Expect(bad).To(HaveKeyWithValue("no loss or duplication", false))
		Expect(bad).To(HaveKeyWithValue("sent = delivered + dropped, per port", false))
		Expect(bad).To(HaveKeyWithValue("drained", false))
	})

	It("mchub-star: the global-order line turns FAIL on a hub output that reorders writes", func() {
		const order = "writes in the hub's global order at every receiver"
		const once = "every write at every mapped receiver exactly once"
		ok := verdicts("mchub-star", nil)
		Expect(ok).To(HaveKeyWithValue(order, true))
		Expect(ok).To(HaveKeyWithValue(once, true))
		bad := verdicts("mchub-star", map[string]int{"mchub.reorder": 20})
		Expect(bad).To(HaveKeyWithValue(order, false))
		Expect(bad).To(HaveKeyWithValue("checkers", false))
	})
})

// A run that measured nothing fails: cut off by --time-limit before its
// statistics window, every other verdict would hold of an empty set.
var _ = DescribeTable("a run that measured nothing fails its measured check",
	func(name string, limit clock.Time, sets ...string) {
		var s *scenario.Scenario
		for _, c := range noc.Scenarios() {
			if c.Name == name {
				s = c
			}
		}
		Expect(s).NotTo(BeNil())
		p := s.Defaults()
		Expect(scenario.Configure(p, "", sets)).To(Succeed())
		rep, _, _, err := scenario.Exec(s, p, scenario.Options{Seed: 1, TimeLimit: limit})
		Expect(err).NotTo(HaveOccurred())
		var line string
		for _, c := range rep.Checks {
			if c.Name == "measured" {
				Expect(c.OK).To(BeFalse())
				line = c.Detail
			}
		}
		Expect(line).To(HavePrefix("nothing measured: 0 "))
		Expect(rep.Failed()).To(BeTrue())
	},
	Entry("atm-star, --time-limit 1us (it simulated 0 ps and passed every check)", "atm-star", clock.Time(1_000_000)),
	Entry("mesh, --time-limit 1us", "mesh", clock.Time(1_000_000)),
	Entry("mchub-star, --time-limit 1us", "mchub-star", clock.Time(1_000_000)),
	Entry("myrinet-grid, --time-limit 1us", "myrinet-grid", clock.Time(1_000_000)),
)
