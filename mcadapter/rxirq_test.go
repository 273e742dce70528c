package mcadapter_test

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/switch/mchub"
)

var _ = Describe("Adapter receive interrupt (RxEntry.Interrupt, opt-in)", func() {
	It("interrupts once per packet for an interrupting page, on hand-worked cycles, and never for the others", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		Expect(r.a.MapRxInterrupt(rigGPage, rigFrame)).To(Succeed())
		Expect(r.a.MapRx(rigGPage+1, rigFrame+0x2000)).To(Succeed())
		type rxIRQ struct {
			Cycle clock.Cycle
			Page  int
		}
		var got []rxIRQ
		r.a.OnReceiveInterrupt(func(now clock.Time, gpage int) { got = append(got, rxIRQ{pciClk.CycleAt(now), gpage}) })
		data := []byte{0xde, 0xad, 0xbe, 0xef}
		r.send(7, 0, 1, uint64(rigGPage*8192+0x40), data)
		r.sendAt(200, 8, 0, 2, uint64((rigGPage+1)*8192+0x40), data)
		r.run()
		// The first packet's cycles are the receive spec's ("writes one
		// 4-byte packet ... on hand-worked cycles"): its one descriptor
		// completes for the engine at c64 (dma.done), and the adapter
		// applies the completion at its next edge, c65, where the
		// packet's last descriptor frees its FIFO room and the page's
		// interrupt is raised. The posted data phase reaches host memory
		// at c69, 4 cycles later; any handler (a CPU's interrupt entry is
		// thousands of cycles) reads it there. The second packet, to a
		// page mapped without the attribute, raises nothing.
		Expect(cmp.Diff([]rxIRQ{{65, rigGPage}}, got)).To(BeEmpty())
		Expect(r.irqs).To(BeEmpty(), "the error line is untouched")
		Expect(r.a.Status().Cause).To(BeZero())
		Expect(r.mem(rigFrame+0x2040, 4)).To(Equal(data))
	})
})
