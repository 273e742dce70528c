package lciscen_test

import (
	"bytes"
	"strings"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/lciscen"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("lci-apps", func() {
	It("runs one application x variant on 8 nodes, measures the declared metrics, byte-identical on a rerun", func() {
		sets := []string{"app=awari", "variant=hrx", "platform=p3", "nodes=8", "warm=1", "steps=2"}
		o := execute("lci-apps", 1, sets...)
		// I-sdma first (the baseline), then I-hrx.
		Expect(o.rep.Rows[0].Metric).To(Equal("P3 Awari sdma"))
		Expect(o.rep.Rows[1].Metric).To(Equal("P3 Awari hrx"))
		Expect(metric(o.rep, "p3_sdma_step_us")).To(BeNumerically(">", 0))
		rel := metric(o.rep, "p3_rel")
		Expect(rel).To(BeNumerically("~", metric(o.rep, "p3_step_us")/metric(o.rep, "p3_sdma_step_us"), 1e-9))
		s, err := scenario.Catalog(lciscen.Scenarios()).Lookup("lci-apps")
		Expect(err).NotTo(HaveOccurred())
		p := s.Defaults()
		Expect(scenario.Configure(p, "", sets)).To(Succeed())
		declared := map[string]bool{}
		for _, d := range p.(scenario.MetricLister).Metrics() {
			declared[d.Name] = true
		}
		for _, m := range o.rep.Metrics {
			Expect(declared).To(HaveKey(m.Name))
		}
		again := execute("lci-apps", 1, sets...)
		Expect(bytes.Equal(o.trace, again.trace)).To(BeTrue())
		Expect(again.rep.Metrics).To(Equal(o.rep.Metrics))
	})

	It("runs SOR on I-rcpy at a column size (variant 10, colsize), 4 nodes: the ratio against I-sdma at the same size", func() {
		o := execute("lci-apps", 1, "app=sor", "variant=10", "colsize=3072", "platform=ppro", "nodes=4", "warm=1", "steps=1")
		Expect(o.rep.Rows[1].Metric).To(Equal("PPro SOR rcpy"))
		Expect(metric(o.rep, "ppro_rel")).To(BeNumerically("<", 1))
	})

	It("fig14: SOR at 1536, 3072, 6144 x sdma, async, rcpy, rcpy-async on the P3 (2 nodes, 1 step): the declared metrics, four findings", func() {
		sets := []string{"app=sor", "fig14=true", "platform=p3", "nodes=2", "warm=0", "steps=1"}
		o := execute("lci-apps", 1, sets...)
		s, err := scenario.Catalog(lciscen.Scenarios()).Lookup("lci-apps")
		Expect(err).NotTo(HaveOccurred())
		p := s.Defaults()
		Expect(scenario.Configure(p, "", sets)).To(Succeed())
		var declared []string
		for _, d := range p.(scenario.MetricLister).Metrics() {
			declared = append(declared, d.Name)
		}
		var measured []string
		for _, m := range o.rep.Metrics {
			measured = append(measured, m.Name)
		}
		// 3 column sizes x (I-sdma's µs + 3 ratios), all declared, all
		// measured.
		Expect(measured).To(Equal(declared))
		Expect(measured).To(HaveLen(12))
		Expect(metric(o.rep, "p3_sor_col6144_rcpy_async_rel")).To(BeNumerically(">", 0))
		findings := 0
		for _, r := range o.rep.Rows {
			if strings.HasPrefix(r.Metric, "P3 finding: ") {
				findings++
			}
		}
		Expect(findings).To(Equal(4))
	})

	It("takes Table VII's column and the variant's number (a sweep's grid): app=8 variant=5 is Radix on I-1k", func() {
		o := execute("lci-apps", 1, "app=8", "variant=5", "platform=ppro", "nodes=4", "warm=1", "steps=2")
		Expect(o.rep.Rows[1].Metric).To(Equal("PPro Radix 1k"))
	})

	It("refuses bad values with a one-line error naming the key", func() {
		s, err := scenario.Catalog(lciscen.Scenarios()).Lookup("lci-apps")
		Expect(err).NotTo(HaveOccurred())
		for _, c := range []struct{ set, key string }{
			{"app=fft", "app"}, {"variant=dma", "variant"}, {"variant=rcpy", "variant"}, {"colsize=3072", "colsize"}, {"fig14=true", "fig14"},
			{"nodes=65", "nodes"}, {"steps=0", "steps"}, {"platform=alpha", "platform"},
		} {
			p := s.Defaults()
			// QR (the default app) takes neither I-rcpy, a column size
			// nor figure 14: they are SOR's.
			sets := []string{c.set}
			err := scenario.Configure(p, "", sets)
			Expect(err).To(HaveOccurred(), c.set)
			Expect(err.Error()).To(ContainSubstring(c.key), c.set)
			Expect(err.Error()).NotTo(ContainSubstring("\n"), c.set)
		}
		for _, bad := range [][]string{{"app=sor", "colsize=0"}, {"app=sor", "colsize=100000"}, {"app=sor", "colsize=1000000", "nodes=8"}} {
			err := scenario.Configure(s.Defaults(), "", bad)
			Expect(err).To(MatchError(ContainSubstring("colsize")), bad[1])
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		}
		Expect(scenario.Configure(s.Defaults(), "", []string{"app=sor", "variant=rcpy-async", "colsize=3072"})).To(Succeed())
		p := s.Defaults()
		err = scenario.Configure(p, "", []string{"app=qr", "variant=async"})
		Expect(err).To(MatchError(ContainSubstring("variant")))
		Expect(strings.Count(err.Error(), "\n")).To(BeZero())
	})
})
