package atmscen_test

import (
	"github.com/nisim/nisim/rtl/env"
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
		Expect(p.StubInstrs).To(Equal(c.RPC.StubInstrs))
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
			{func(p *atmscen.ReportParams) { p.RPCN = 0 }, "rpc_n"},
			{func(p *atmscen.ReportParams) { p.StubInstrs = -1 }, "stub_instrs"},
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
		p.Write, p.Read, p.CAS, p.Block, p.RPC, p.Illegal = 0, 0, 0, 0, 0, 0
		Expect(p.Validate()).To(MatchError(ContainSubstring("weights")))
		Expect(scenario.KeysOf(p)).NotTo(BeEmpty())
	})
})

var _ = Describe("atm-report", func() {
	It("runs short, every calibration and qualitative check passing, every row with a model figure", func() {
		p := atmscen.ReportDefaults()
		p.Rounds, p.RPCRounds, p.StreamCells = 12, 3, 40
		rep, err := atmscen.RunReport(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse(), "%+v", rep.Checks)
		Expect(rep.Checks).To(HaveLen(8), "3 calibrations, 5 qualitative checks")
		for _, r := range rep.Rows {
			Expect(r.Model).NotTo(BeEmpty(), r.Metric)
		}
	})
})

var _ = Describe("atm-traffic", func() {
	It("runs 3 nodes on the switch with faults, every operation checked", func() {
		p := atmscen.TrafficDefaults()
		p.Nodes, p.Ops = 3, 30
		rep, err := atmscen.RunTraffic(env.New(env.Options{Seed: 2}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse(), "%+v", rep.Checks)
		Expect(rep.Metrics).NotTo(BeEmpty())
	})
})
