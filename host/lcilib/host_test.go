package lcilib_test

import (
	"encoding/binary"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("PlatformPreset", func() {
	It("names Table I's two platforms and refuses any other, naming the choices", func() {
		p, err := lcilib.PlatformPreset("ppro")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Name).To(Equal(lcilib.PPro().Name))
		p, err = lcilib.PlatformPreset("P3")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Name).To(Equal(lcilib.P3().Name))
		_, err = lcilib.PlatformPreset("alpha")
		Expect(err).To(MatchError(`unknown platform "alpha" (have ppro, p3)`))
	})
})

var _ = Describe("Host.Init", func() {
	// Init writes what the library sets up in the card's SRAM before the
	// first message, untimed: the control block, every host receive slot
	// as a free-buffer record, and the node's row of each root's
	// forwarding tree.
	It("writes the control block, the free host buffers in order and the forwarding rows", func() {
		e := env.New(env.Options{})
		plat := lcilib.PPro()
		c, err := cpu.MakeBuilder().WithEnv(e).WithClock(plat.CPU()).Build("N1.CPU")
		Expect(err).NotTo(HaveOccurred())
		m, err := mem.MakeBuilder().WithEnv(e).WithClock(plat.Host.Memory.Clock).WithSize(lcilib.HostMemBytes).Build("N1.Mem")
		Expect(err).NotTo(HaveOccurred())
		fw := lci.DefaultConfig()
		fw.Interrupts = true
		h := lcilib.NewHost(e, "N1.LCI", 1, 4, plat, lcilib.DefaultCosts(), fw, c, m)
		sram := mem.NewStorage(uint64(plat.NI.SRAMBytes))
		Expect(h.Init(sram, lci.Binary)).To(Succeed())

		cb, err := sram.Bytes(lci.CtlFlags, 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(binary.LittleEndian.Uint32(cb)).To(Equal(uint32(1)), "interrupts enabled")

		// A slot is the MTU and the 16-byte header rounded up to 64
		// bytes: 2048 + 16 = 2064 -> 2112; the slots start at 1 MB
		// (0x0010_0000) of host memory.
		lay := lci.NewLayout(fw)
		for i := range fw.HostSlots {
			b, err := sram.Bytes(uint64(lay.FreeQ)+uint64(i*lci.FreeBytes), lci.FreeBytes)
			Expect(err).NotTo(HaveOccurred())
			Expect(lci.DecodeFree(b)).To(Equal(lci.Free{Seq: uint32(i + 1), Addr: 0x0010_0000 + uint64(i)*2112}))
		}

		// Binary trees over 4 nodes: rooted at 0, node 1 (rank 1) has
		// child rank 3; rooted at 3, node 1 has rank 2 and no child
		// (ranks 5 and 6 are beyond 4); rooted at 2, node 1 has rank 3
		// and no child; rooted at itself (rank 0) its children are ranks
		// 1 and 2, nodes 2 and 3. Unused entries are 0xff.
		row := func(root int) []byte {
			b, err := sram.Bytes(uint64(lay.Fwd)+uint64(root*lci.FwdWidth), lci.FwdWidth)
			Expect(err).NotTo(HaveOccurred())
			return b
		}
		none := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		Expect(row(0)).To(Equal([]byte{3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
		Expect(row(1)).To(Equal([]byte{2, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
		Expect(row(3)).To(Equal(none))
		Expect(row(2)).To(Equal(none))
	})
})
