package cashtb_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/cashtb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// row prints a model figure beside the paper's, with the error; a
// paperUS of 0 is a figure the paper does not give (printed alone).
func row(name string, model clock.Time, paperUS float64) {
	us := float64(model) / float64(clock.Microsecond)
	if paperUS == 0 {
		GinkgoWriter.Printf("%-34s model %8.1f us  (no paper figure)\n", name, us)
		return
	}
	GinkgoWriter.Printf("%-34s model %8.1f us  paper %6.0f us  error %+6.1f%%\n", name, us, paperUS, 100*(us-paperUS)/paperUS)
}

var _ = Describe("Section 3.1 and Table 1 costs (reported, not fitted)", func() {
	It("measures the page transfer, twin, full-page diff, lock and barrier on two nodes", func() {
		var c cashtb.Costs
		_, err := run(cashtb.CostProgram{Out: &c}, 2, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		row("page transfer (remote), 2L", c.PageTransfer, 824)
		row("  of which the fetch", c.Fetch, 0)
		row("twin of an 8 KB page", c.Twin, 199)
		row("write fault with twin", c.WriteFault, 199+72)
		row("outgoing diff, full page, remote", c.Diff, 363)
		row("lock acquire, 2L", c.Lock, 19)
		row("barrier, 2 processors (2 nodes)", c.Barrier, 58)
		// What must hold whatever the costs: the parts are inside the
		// wholes, and the fault (72 µs with its mprotect, the platform's)
		// is in the transfer.
		Expect(c.Fetch).To(BeNumerically("<", c.PageTransfer))
		Expect(c.PageTransfer - c.Fetch).To(BeNumerically(">=", 72*clock.Microsecond))
		Expect(c.Twin).To(BeNumerically("<", c.WriteFault))
		Expect([]clock.Time{c.Diff, c.Lock, c.Barrier}).To(HaveEach(BeNumerically(">", 0)))
	})

	It("measures the barrier on 8 nodes of 1 and of 4 processors", func() {
		var c8, c32 cashtb.Costs
		_, err := run(cashtb.CostProgram{BarrierOnly: true, Out: &c8}, 8, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = run(cashtb.CostProgram{BarrierOnly: true, Out: &c32}, 8, 4, nil)
		Expect(err).NotTo(HaveOccurred())
		row("barrier, 8 processors (8 nodes)", c8.Barrier, 0)
		row("barrier, 32 processors (8x4)", c32.Barrier, 321)
		Expect(c32.Barrier).To(BeNumerically(">=", c8.Barrier))
	})
})
