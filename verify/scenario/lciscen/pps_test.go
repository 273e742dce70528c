package lciscen_test

import (
	"bytes"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/lciscen"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("lci-pps", func() {
	It("prints Table V on the PPro beside the paper, the five fitted deltas marked and held, byte-identical on a rerun", func() {
		sets := []string{"platform=ppro", "multicast=false", "iters=4", "stream_messages=4", "stream_size=4096"}
		o := execute("lci-pps", 1, sets...)
		var fitted []string
		for _, r := range o.rep.Rows {
			if r.Calibrated {
				fitted = append(fitted, r.Metric)
				Expect(r.Paper).NotTo(Equal("-"))
			}
		}
		Expect(fitted).To(Equal([]string{"PPro CRL over LCI", "PPro Panda-ST over LCI", "PPro MPI over Panda-ST",
			"PPro Panda-MT over LCI", "PPro Orca over Panda-MT"}))
		// The round trips are short enough at 4 iterations to hold the fit
		// (the deltas do not depend on the count: every round trip is the
		// same once warm).
		Expect(metric(o.rep, "ppro_panda_st_over_lci")).To(BeNumerically("~", 6.6, 0.1))
		Expect(metric(o.rep, "ppro_orca_over_panda_mt")).To(BeNumerically("~", 17.1, 0.1))
		again := execute("lci-pps", 1, sets...)
		Expect(bytes.Equal(o.trace, again.trace)).To(BeTrue())
		Expect(bytes.Equal(o.vcd, again.vcd)).To(BeTrue())
	})

	It("refuses an unknown platform with a one-line error naming the key", func() {
		s, err := scenario.Catalog(lciscen.Scenarios()).Lookup("lci-pps")
		Expect(err).NotTo(HaveOccurred())
		p := s.Defaults()
		err = scenario.Configure(p, "", []string{"platform=alpha"})
		if err == nil {
			err = p.Validate()
		}
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("platform"))
		Expect(err.Error()).NotTo(ContainSubstring("\n"))
	})
})
