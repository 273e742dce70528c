package lci_test

import (
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Regressions of defects the module specs found (each fails without its
// fix).
var _ = Describe("fixed defects", func() {
	It("leaves hsq IDLE after refusing a bad I-sdma descriptor", func() {
		r := newRig(testConfig(), 0, 8)
		r.hostInit(8)
		r.boot()
		// Once, hsq moved to FETCH before checking the descriptor and
		// showed FETCH with no fetch running.
		r.sendFrom(lci.Desc{Type: 9, Dst: 1, Len: 8, Buf: 0}, 0x1000)
		Expect(r.violations()).To(ConsistOf(HavePrefix("lci.desc")))
		Expect(r.state("hsq")).To(BeEquivalentTo("IDLE"))
		Expect(r.ni.dmas).To(BeEmpty())
	})

	It("fires the watchdog when the host gave fewer buffers at start than the slots", func() {
		cfg := testConfig()
		cfg.Interrupts = true
		r := newRig(cfg, 0, 8)
		// Two Free records of HostSlots = 8: an unsigned subtraction once
		// wrapped and the interrupt never came.
		r.hostInit(2)
		r.boot()
		r.arrive(lci.Header{Type: lci.TypeData, Src: 1, Seq: 1}, payload(8, 0))
		r.dmaDone()
		r.handle(firmware.HWEvent{Kind: firmware.Timer})
		Expect(r.ni.irqs).To(Equal(1))
	})
})
