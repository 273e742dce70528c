package atmscen_test

import (
	"strings"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario/atmscen"
	"github.com/nisim/nisim/verify/testbench/atmtb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("atm-traffic's RPC share", func() {
	It("defaults to atmtb.DefaultTraffic's RPC weight and refuses one out of range, naming the key", func() {
		p := atmscen.TrafficDefaults()
		Expect(p.RPC).To(Equal(atmtb.DefaultTraffic(1).RPC))
		for _, w := range []int{-1, atmtb.MaxTrafficWeight + 1} {
			p := atmscen.TrafficDefaults()
			p.RPC = w
			Expect(p.Validate()).To(MatchError(ContainSubstring("rpc")))
		}
		p = atmscen.TrafficDefaults()
		p.Write, p.Read, p.CAS, p.Block, p.Illegal = 0, 0, 0, 0, 0
		Expect(p.Validate()).To(Succeed(), "RPC calls alone are a mix")
	})

	It("runs RPC calls among the operations and reports them checked, each executed once", func() {
		p := atmscen.TrafficDefaults()
		p.Nodes, p.Ops, p.RPC = 3, 30, 40
		rep, err := atmscen.RunTraffic(env.New(env.Options{Seed: 4}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse(), "%+v", rep.Checks)
		found := false
		for _, r := range rep.Rows {
			if strings.HasPrefix(r.Metric, "RPC calls") {
				found = true
				// "calls / checked / executed / cached / re-sent": the
				// first three equal and not 0.
				f := strings.Split(r.Model, " / ")
				Expect(f).To(HaveLen(5))
				Expect(f[0]).NotTo(Equal("0"))
				Expect(f[1]).To(Equal(f[0]))
				Expect(f[2]).To(Equal(f[0]))
			}
		}
		Expect(found).To(BeTrue(), "no RPC row")
		Expect(rep.Title).To(ContainSubstring("RPC"))
	})
})
