package scenario_test

import (
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

type typedParams struct{ N int }

func (typedParams) Validate() error { return nil }

var _ = Describe("Typed", func() {
	It("gives Run the scenario's own parameter type, as Defaults made and the caller changed it", func() {
		var got *typedParams
		s := scenario.Typed("t", "a typed scenario", func() *typedParams { return &typedParams{N: 3} },
			func(_ *env.Env, p *typedParams) (*scenario.Report, error) {
				got = p
				return &scenario.Report{Title: "t"}, nil
			})
		Expect(s.Name).To(Equal("t"))
		p := s.Defaults()
		Expect(p).To(Equal(&typedParams{N: 3}))
		p.(*typedParams).N = 5
		rep, err := s.Run(nil, p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Title).To(Equal("t"))
		Expect(got).To(BeIdenticalTo(p))
		Expect(got.N).To(Equal(5))
	})
})
