package atmscen_test

import (
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/atmscen"
	"github.com/nisim/nisim/verify/testbench/atmtb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("atm-report parameters", func() {
	It("default to the calibrated cluster and issue 15's 1000 rounds after warm-up", func() {
		p := atmscen.ReportDefaults()
		Expect(p.Validate()).To(Succeed())
		c := atmtb.DefaultConfig()
		Expect(p.CellLatency).To(Equal(c.Board.CellLatency))
		Expect(p.MemCycles).To(Equal(c.MemCycles))
		// 1100 rounds, a tenth (capped at 100) warm-up: 1000 measured.
		Expect(p.Rounds - atmtb.Warmup(p.Rounds)).To(Equal(1000))
	})

	It("refuse out-of-range keys, naming them", func() {
		for _, x := range []struct {
			set  func(p *atmscen.ReportParams)
			want string
		}{
			{func(p *atmscen.ReportParams) { p.Rounds = 1 }, "rounds"},
			{func(p *atmscen.ReportParams) { p.StreamCells = 300 }, "stream_cells"},
			{func(p *atmscen.ReportParams) { p.MemCycles = 0 }, "mem_cycles"},
			{func(p *atmscen.ReportParams) { p.CellLatency = -1 }, "cell_latency"},
		} {
			p := atmscen.ReportDefaults()
			x.set(p)
			Expect(p.Validate()).To(MatchError(ContainSubstring(x.want)))
		}
	})
})

var _ = Describe("atm-traffic parameters", func() {
	It("refuse more than 2 nodes without the switch and a bad node count", func() {
		p := atmscen.TrafficDefaults()
		Expect(p.Validate()).To(Succeed())
		p.Nodes, p.Switched = 3, false
		Expect(p.Validate()).To(MatchError(ContainSubstring("switched")))
		p = atmscen.TrafficDefaults()
		p.Nodes = 5
		Expect(p.Validate()).To(MatchError(ContainSubstring("nodes")))
		p = atmscen.TrafficDefaults()
		p.Write, p.Read, p.CAS, p.Block, p.Illegal = 0, 0, 0, 0, 0
		Expect(p.Validate()).To(MatchError(ContainSubstring("weights")))
		Expect(scenario.KeysOf(p)).NotTo(BeEmpty())
	})
})
