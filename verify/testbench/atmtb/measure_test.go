package atmtb_test

import (
	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/atmtb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// build builds the default cluster, changed by mod.
func build(e *env.Env, mod func(c *atmtb.Config)) *atmtb.Cluster {
	GinkgoHelper()
	c := atmtb.DefaultConfig()
	if mod != nil {
		mod(&c)
	}
	cl, err := atmtb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	return cl
}

var _ = Describe("Cluster", func() {
	It("refuses bad parameters with an error naming them", func() {
		for _, x := range []struct {
			mod  func(c *atmtb.Config)
			want string
		}{
			{func(c *atmtb.Config) { c.Nodes = 1 }, "Nodes 1"},
			{func(c *atmtb.Config) { c.Nodes = 5; c.Switched = true }, "Nodes 5"},
			{func(c *atmtb.Config) { c.Nodes = 3 }, "Nodes 3 must be 2 without the switch"},
			{func(c *atmtb.Config) { c.MemCycles = 0 }, "MemCycles 0"},
			{func(c *atmtb.Config) { c.BoardBase = 0x1000 }, "BoardBase"},
			{func(c *atmtb.Config) { c.BoardBase = 0x1000_0100 }, "BoardBase"},
			{func(c *atmtb.Config) { c.KernelBase = 0 }, "KernelBase"},
			{func(c *atmtb.Config) { c.Board.RxCells = 0 }, "RxCells"},
			{func(c *atmtb.Config) { c.Link.BytesPerCycle = 0 }, "Link"},
			{func(c *atmtb.Config) { c.Board.Clock = c.Link.Clock }, "Board.Clock"},
		} {
			c := atmtb.DefaultConfig()
			x.mod(&c)
			_, err := atmtb.Build(env.New(env.Options{Seed: 1}), c)
			Expect(err).To(MatchError(ContainSubstring(x.want)), x.want)
		}
		_, err := atmtb.Build(nil, atmtb.DefaultConfig())
		Expect(err).To(MatchError(ContainSubstring("no env")))
		_ = fore.WindowBytes
	})
})
