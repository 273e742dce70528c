package vmmc_test

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/vmmc"
)

var _ = Describe("Params", func() {
	It("accepts the defaults", func() {
		Expect(vmmc.DefaultParams().Validate()).To(Succeed())
	})
	DescribeTable("names the bad parameter",
		func(mod func(*vmmc.Params), want string) {
			p := vmmc.DefaultParams()
			mod(&p)
			Expect(p.Validate()).To(MatchError(ContainSubstring(want)))
		},
		Entry("SendInstrs", func(p *vmmc.Params) { p.SendInstrs = -1 }, "SendInstrs"),
		Entry("RecvInterrupt", func(p *vmmc.Params) { p.RecvInterrupt = "always" }, "RecvInterrupt"),
		Entry("FIFOResume", func(p *vmmc.Params) { p.FIFOResume = -8 }, "FIFOResume"),
		Entry("ResumePollCycles", func(p *vmmc.Params) { p.ResumePollCycles = 0 }, "ResumePollCycles"),
		Entry("KernelInstrs", func(p *vmmc.Params) { p.KernelInstrs = -1 }, "KernelInstrs"),
	)
})

var _ = Describe("Pieces", func() {
	It("keeps a send inside one page whole", func() {
		Expect(vmmc.Pieces(0x1000, 0x8000, 16, 256, 4096, 4096)).To(Equal([]vmmc.Piece{{Src: 0x1000, Off: 16, Len: 256}}))
	})
	It("cuts at the local and at the remote page boundaries, whichever comes first", func() {
		// src 0x1f00: 256 bytes to its page end; dst 0x8000+0x80: 3968
		// bytes to its page end. Pieces: 256 (local end), then src 0x2000
		// and dst 0x8180: 3712 bytes to the remote end, then the last 32.
		got := vmmc.Pieces(0x1f00, 0x8000, 0x80, 4000, 4096, 4096)
		want := []vmmc.Piece{{Src: 0x1f00, Off: 0x80, Len: 256}, {Src: 0x2000, Off: 0x180, Len: 3712}, {Src: 0x2e80, Off: 0x1000, Len: 32}}
		Expect(cmp.Diff(want, got)).To(BeEmpty())
	})
	It("never makes a piece longer than the engine's maximum", func() {
		got := vmmc.Pieces(0, 0, 0, 4096, 4096, 1024)
		Expect(got).To(HaveLen(4))
		for _, pc := range got {
			Expect(pc.Len).To(Equal(1024))
		}
	})
	It("covers every byte once for aligned and unaligned sends", func() {
		for _, c := range []struct {
			src, dst, off uint64
			n             int
		}{{0, 0, 0, 65536}, {3, 4093, 7, 9000}, {4095, 1, 0, 2}} {
			next, off, total := c.src, c.off, 0
			for _, pc := range vmmc.Pieces(c.src, c.dst, c.off, c.n, 4096, 4096) {
				Expect(pc.Src).To(Equal(next))
				Expect(pc.Off).To(Equal(off))
				Expect(pc.Src/4096).To(Equal((pc.Src+uint64(pc.Len)-1)/4096), "local crossing")
				Expect((c.dst+pc.Off)/4096).To(Equal((c.dst+pc.Off+uint64(pc.Len)-1)/4096), "remote crossing")
				next += uint64(pc.Len)
				off += uint64(pc.Len)
				total += pc.Len
			}
			Expect(total).To(Equal(c.n))
		}
	})
})

var _ = Describe("Directory", func() {
	It("refuses to publish a buffer never exported", func() {
		d := vmmc.NewDirectory()
		Expect(d.Publish("keys", vmmc.Buffer{Node: 3, ID: 0})).To(MatchError(ContainSubstring("never exported")))
		_, ok := d.Find("keys")
		Expect(ok).To(BeFalse())
	})
})
