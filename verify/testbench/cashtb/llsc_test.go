package cashtb_test

import (
	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/cashtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Four processors of a node incrementing the logical clock at once (2L)", func() {
	It("all get through: Gauss n=16 on 2 nodes x 4 CPUs ends bit-exact", func() {
		// Before host/memsys dropped an upgrade lost before it reached
		// the bus, node 1's four processors failed every
		// store-conditional on the clock (each stale upgrade taking the
		// line and the reservation from the next) and the run hit its
		// time limit with node 0 waiting on a flag.
		prog, err := cashapps.Build("gauss", map[string]int{"n": 16})
		Expect(err).NotTo(HaveOccurred())
		want, err := cashapps.RunSequential(prog)
		Expect(err).NotTo(HaveOccurred())
		e := env.New(env.Options{Seed: vtest.Seed(), TimeLimit: 200 * clock.Millisecond})
		c := cashtb.DefaultConfig()
		c.Nodes, c.CPUs = 2, 4
		res, err := cashtb.RunApp(e, c, prog)
		Expect(err).NotTo(HaveOccurred())
		Expect(firstDiff(res.Memory, want)).To(BeEmpty())
		Expect(res.Time).To(BeNumerically("<", 100*clock.Millisecond))
	})
})
