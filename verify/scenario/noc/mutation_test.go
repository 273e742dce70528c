package noc_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/noc"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The mesh scenario (8x8, mesh88_lat, uniform 0.1 flits/node/cycle)
// against broken models: the lossy link, and routers that stop
// forwarding. The clean run of the same defaults is "every network runs
// its defaults with the checkers on" (noc_test.go).
var _ = Describe("the mesh against mutations", func() {
	check := func(rep *scenario.Report, name string) scenario.CheckResult {
		GinkgoHelper()
		for _, c := range rep.Checks {
			if c.Name == name {
				return c
			}
		}
		Fail("no check " + name)
		return scenario.CheckResult{}
	}

	It("link.leak: a link that loses every 1000th flit and keeps its credit breaks credit conservation", func() {
		e := env.New(env.Options{Seed: 1, Mutations: map[string]int{"link.leak": 1000}})
		rep, err := noc.Run(e, noc.MeshDefaults())
		Expect(err).To(HaveOccurred())
		v := e.Monitor.Violations()
		Expect(e.Monitor.Count()).To(BeNumerically(">", 100))
		Expect(v[0].Check).To(Equal("link.credits"))
		Expect(v[0].Path).To(MatchRegexp(`^Mesh\.Link[XYT]?\[\d+\]\.(AB|BA)$`))
		Expect(v[0].Msg).To(MatchRegexp(`^VC \d: credits \d+ \+ on the wire or buffered \d+ \+ returning \d+ = 7, want 8$`))
		// The packets the lost flits belonged to never complete: the
		// network clogs, the drain limit stops the run with the stuck
		// state, and no verdict says PASS.
		Expect(rep.Result.Stopped).To(BeTrue())
		Expect(check(rep, "drained").OK).To(BeFalse())
		Expect(check(rep, "no loss or duplication").OK).To(BeFalse())
		Expect(rep.Stuck).To(ContainSubstring("busy unit(s)"))
	})

	// The routers keep ticking with full buffers and nothing is delivered
	// any more. The drain limit (30000 cycles, 30 µs) would stop this run
	// long before the default progress limit (500 µs), so the spec sets the
	// limit to 20 µs: the progress watchdog stops the run.
	It("wormhole.halt: routers that stop forwarding are stopped by the progress watchdog with the stuck state", func() {
		e := env.New(env.Options{Seed: 1, Mutations: map[string]int{"wormhole.halt": 2000}, StallLimit: 20 * clock.Microsecond})
		rep, err := noc.Run(e, noc.MeshDefaults())
		Expect(rep.Result.Stuck).To(BeTrue())
		Expect(rep.Result.End).To(BeNumerically("<", 25*clock.Microsecond))
		Expect(err).To(MatchError(ContainSubstring("stuck: no progress for more than 20us at")))
		Expect(err.Error()).To(ContainSubstring("\n  Mesh.Router[0]: route 0, VC alloc 0, switch alloc "))
		Expect(err.Error()).To(MatchRegexp(`\n  oldest outstanding transaction: \d+, since \d+ns`))
		Expect(e.Monitor.Violations()[0].Check).To(Equal("stuck"))
		Expect(check(rep, "no loss or duplication").OK).To(BeFalse())
	})
})
