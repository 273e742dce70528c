package rma_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
)

var _ = Describe("parameters and set-up", func() {
	It("defaults to Table 1", func() {
		t := rma.Defaults().StepInstrs
		Expect(t.CrossIn + t.CrossOut + t.WriteTx + t.Dispatch + t.Handler + t.RxWrite).To(Equal(209))
		Expect(t.CrossIn + t.CrossOut + t.ReadTx + 2*(t.Dispatch+t.Handler) + t.RxReadReq + t.RxWrite).To(Equal(375))
		Expect(rma.Defaults().Validate()).To(Succeed())
	})

	DescribeTable("Validate names the bad parameter",
		func(mut func(p *rma.Params), want string) {
			p := rma.Defaults()
			mut(&p)
			Expect(p.Validate()).To(MatchError(ContainSubstring(want)))
		},
		Entry("dispatcher", func(p *rma.Params) { p.StepInstrs.Dispatch = 0 }, "StepInstrs.Dispatch 0"),
		Entry("per word", func(p *rma.Params) { p.PerWord = -1 }, "PerWord -1"),
		Entry("CAS timeout", func(p *rma.Params) { p.CASTimeout = 0 }, "CASTimeout 0"),
		Entry("CAS timeout huge", func(p *rma.Params) { p.CASTimeout = 2 * clock.Second }, "CASTimeout"),
		Entry("batch", func(p *rma.Params) { p.RxBatch = -2 }, "RxBatch -2"),
		Entry("raw poll", func(p *rma.Params) { p.RawPollInstrs = 0 }, "RawPollInstrs 0"),
	)

	It("refuses a kernel without hardware, naming the field", func() {
		r := newRig(nil)
		hw := r.nodes[0].kernel.Hardware()
		hw.CPU = nil
		_, err := rma.NewKernel(hw, rma.Defaults())
		Expect(err).To(MatchError(ContainSubstring("Hardware.CPU")))
		hw = r.nodes[0].kernel.Hardware()
		hw.Node = 2
		_, err = rma.NewKernel(hw, rma.Defaults())
		Expect(err).To(MatchError(ContainSubstring("Hardware.Node 2")))
		hw = r.nodes[0].kernel.Hardware()
		hw.KernelBase = memBytes - 4096
		_, err = rma.NewKernel(hw, rma.Defaults())
		Expect(err).To(MatchError(ContainSubstring("Hardware.KernelBase")))
		Expect(r.run()).To(Succeed())
	})

	DescribeTable("Export and Import refuse what does not fit, naming it",
		func(call func(k *rma.Kernel) error, want string) {
			r := newRig(nil)
			Expect(call(r.nodes[0].kernel)).To(MatchError(ContainSubstring(want)))
			Expect(r.run()).To(Succeed())
		},
		Entry("size 0", func(k *rma.Kernel) error { _, err := k.Export(segBase, 0, rma.RightRead); return err }, "Export size 0"),
		Entry("size beyond 256 KB", func(k *rma.Kernel) error {
			_, err := k.Export(0, rma.SegmentMaxBytes+4, rma.RightRead)
			return err
		}, "Export size"),
		Entry("unaligned base", func(k *rma.Kernel) error { _, err := k.Export(segBase+2, 8, rma.RightRead); return err }, "Export base"),
		Entry("over the kernel", func(k *rma.Kernel) error { _, err := k.Export(kernelBase, 8, rma.RightRead); return err }, "kernel's memory"),
		Entry("no rights", func(k *rma.Kernel) error { _, err := k.Export(segBase, 8, 0); return err }, "Export rights 0"),
		Entry("a grant to a node outside the cluster", func(k *rma.Kernel) error { _, err := k.Export(segBase, 8, rma.RightRead, 5); return err }, "grant node 5"),
		Entry("register 64", func(k *rma.Kernel) error { return k.Import(64, 1, 0, 8, rma.RightRead) }, "Import register 64"),
		Entry("its own node", func(k *rma.Kernel) error { return k.Import(0, 0, 0, 8, rma.RightRead) }, "Import node 0"),
		Entry("revoking a segment never exported", func(k *rma.Kernel) error { return k.Revoke(3) }, "Revoke: segment 3"),
		Entry("unpinning a page outside the segment", func(k *rma.Kernel) error {
			s, err := k.Export(segBase, 4096, rma.RightRead)
			Expect(err).NotTo(HaveOccurred())
			return k.Unpin(s, 1)
		}, "Unpin page 1"),
	)

	It("takes a write inhibit off again", func() {
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		r.nodes[0].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			r.nodes[0].kernel.Inhibit(p, ids[0], true)
			r.nodes[0].kernel.Inhibit(p, ids[0], false)
		}))
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			p.Compute(500) // after both inhibit calls (about 150 cycles)
			Expect(r.nodes[1].kernel.Write(p, 0, 0, 1, false, []uint32{77})).To(Equal(rma.OK))
		}))
		Expect(r.run()).To(Succeed())
		Expect(r.words(0, segBase, 1)).To(Equal([]uint32{77}))
		Expect(r.nodes[0].kernel.Segment(ids[0]).Inhibited).To(BeFalse())
		// Each call: the crossing, the record's load and store.
		Expect(r.steps(0)[:3]).To(Equal([]string{"rma.cross-in 13", "rma.inhibit 10", "rma.cross-out 12"}))
	})

	It("drains in batches of RxBatch cells, one handler step each", func() {
		p := rma.Defaults()
		p.RxBatch = 2
		r := newRig(nil)
		// Replace node 0's kernel parameters: a second kernel on the same
		// hardware takes over the traps and the interrupt.
		k, err := rma.NewKernel(r.nodes[0].kernel.Hardware(), p)
		Expect(err).NotTo(HaveOccurred())
		r.nodes[0].kernel = k
		r.share(rma.RightRead | rma.RightWrite)
		r.nodes[1].cpu.Run(cpu.Go(func(pp *cpu.Proc) {
			for i := range 4 {
				Expect(r.nodes[1].kernel.Write(pp, 0, 10*i, 10, false, seq(10, uint32(i)))).To(Equal(rma.OK))
			}
		}))
		r.nodes[0].cpu.Run(cpu.Go(func(pp *cpu.Proc) {
			pp.DisableInterrupts()
			pp.PollUntil(func() bool { return r.nodes[0].board.RxLen() == 4 })
			pp.EnableInterrupts()
		}))
		Expect(r.run()).To(Succeed())
		st := r.steps(0)
		Expect(st[len(st)-7:]).To(Equal([]string{"rma.dispatch 73",
			"rma.handler 21", "rma.rx-write 58", "rma.rx-write 58",
			"rma.handler 21", "rma.rx-write 58", "rma.rx-write 58"}))
		Expect(k.Counters().Drained[4]).To(Equal(uint64(1)))
	})
})
