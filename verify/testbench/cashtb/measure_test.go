package cashtb_test

import (
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
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

var _ = Describe("Section 3.1 rows from the trace and the 1LD rows of Table 1 (reported, not fitted)", func() {
	It("measures the directory updates, the resident fault and the incoming diff on 2x2 (2L)", func() {
		r, err := cashtb.MeasureRows(env.Options{Seed: 1})
		Expect(err).NotTo(HaveOccurred())
		row("directory update with the lock", r.DirLocked, 16)
		row("directory update without the lock", r.DirUnlocked, 5)
		row("page fault, resident page", r.ResidentFault, 72)
		row("incoming diff (1023 words)", r.IncomingDiff, 541)
		row("  the fetch with it", r.FetchIncoming, 0)
		// One incoming diff, inside its fetch; the locked update holds
		// two MC loop-back rounds (the lock entry set and cleared, at
		// least 2 x 3 µs of the hub's latency), the unlocked one none;
		// the resident fault holds the platform's 72 µs (fault entry,
		// signal, return and the handler's mprotect, host/platform).
		Expect(r.Incoming).To(Equal(1))
		Expect(r.IncomingDiff).To(BeNumerically("<", r.FetchIncoming))
		Expect(r.DirLocked).To(BeNumerically(">", 6*clock.Microsecond))
		Expect(r.DirUnlocked).To(BeNumerically("<", r.DirLocked))
		Expect(r.DirUnlocked).To(BeNumerically(">", 0))
		Expect(r.ResidentFault).To(BeNumerically(">=", 72*clock.Microsecond))
	})

	It("measures 1LD's lock, barrier and page transfers (remote on 2x1, local on 1x2) and its diffs", func() {
		var rem, loc, b8 cashtb.Costs
		_, err := runV(cashtb.CostProgram{Out: &rem}, cashmere.Variant1LD, 2, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = runV(cashtb.CostProgram{Out: &loc}, cashmere.Variant1LD, 1, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = runV(cashtb.CostProgram{BarrierOnly: true, Out: &b8}, cashmere.Variant1LD, 2, 4, nil)
		Expect(err).NotTo(HaveOccurred())
		row("1LD page transfer (remote)", rem.PageTransfer, 777)
		row("1LD page transfer (local)", loc.PageTransfer, 467)
		row("1LD lock acquire", rem.Lock, 11)
		row("1LD barrier, 2 processors", rem.Barrier, 41)
		row("1LD barrier, 8 processors (2x4)", b8.Barrier, 0)
		row("1LD outgoing diff, remote home", rem.Diff, 363)
		row("1LD outgoing diff, local home", loc.Diff, 561)
		row("1LD twin", rem.Twin, 199)
		// The local transfer crosses the Memory Channel by loop-back like
		// the remote one (mapRegions1): both hold a fault and a fetch.
		Expect(loc.Fetch).To(BeNumerically("<", loc.PageTransfer))
		Expect(rem.Fetch).To(BeNumerically("<", rem.PageTransfer))
		Expect([]clock.Time{rem.Lock, rem.Barrier, loc.Diff, rem.Diff, b8.Barrier}).To(HaveEach(BeNumerically(">", 0)))
	})
})
