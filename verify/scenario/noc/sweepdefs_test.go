package noc_test

import (
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/noc"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("sweep declarations", func() {
	DescribeTable("declares every metric it measures, with its unit, in the order measured",
		func(name string, sets ...string) {
			var s *scenario.Scenario
			for _, c := range noc.Scenarios() {
				if c.Name == name {
					s = c
				}
			}
			Expect(s).NotTo(BeNil(), name)
			p := s.Defaults()
			Expect(scenario.Configure(p, "", sets)).To(Succeed())
			rep, err := s.Run(env.New(env.Options{Seed: 1}), p)
			Expect(err).NotTo(HaveOccurred())
			var measured, declared []scenario.MetricDef
			for _, m := range rep.Metrics {
				measured = append(measured, scenario.MetricDef{Name: m.Name, Unit: m.Unit})
			}
			for _, d := range p.(scenario.MetricLister).Metrics() {
				declared = append(declared, scenario.MetricDef{Name: d.Name, Unit: d.Unit})
			}
			Expect(measured).To(Equal(declared))
			Expect(scenario.ParamUnit(p, "injection_rate")).NotTo(BeEmpty())
		},
		Entry("mesh", "mesh", "k=3", "sample_period=300"),
		Entry("myrinet-clos", "myrinet-clos", "sample_period=300", "measure_periods=2"),
		Entry("atm-star", "atm-star", "sample_period=2000"),
		Entry("mchub-star", "mchub-star", "sample_period=2000"),
	)

	It("gives injection_rate the unit it is counted in", func() {
		p := noc.MeshDefaults()
		Expect(scenario.ParamUnit(p, "injection_rate")).To(Equal("flits/node/cycle"))
		p.InjectionRateUsesFlits = false
		Expect(scenario.ParamUnit(p, "injection_rate")).To(Equal("packets/node/cycle"))
	})
})
