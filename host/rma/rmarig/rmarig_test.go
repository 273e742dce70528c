package rmarig_test

import (
	"encoding/binary"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rma/rmarig"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/vtest"
)

var _ = Describe("the two-node RMA rig", func() {
	It("refuses a configuration naming the parameter", func() {
		for _, tc := range []struct {
			set  func(c *rmarig.Config)
			want string
		}{
			{func(c *rmarig.Config) { c.Clock = clock.Clock{} }, "Clock"},
			{func(c *rmarig.Config) { c.MemBytes = 0 }, "MemBytes"},
			{func(c *rmarig.Config) { c.KernelBase = uint64(c.MemBytes) }, "KernelBase"},
			{func(c *rmarig.Config) { c.BoardBase = 0x1000 }, "BoardBase"},
		} {
			c := rmarig.DefaultConfig()
			tc.set(&c)
			Expect(c.Validate()).To(MatchError(ContainSubstring(tc.want)))
			_, err := rmarig.Build(vtest.NewEnv(vtest.Options{Clock: rmarig.Clock}), c)
			Expect(err).To(MatchError(ContainSubstring(tc.want)))
		}
		Expect(rmarig.DefaultConfig().Validate()).To(Succeed())
	})

	It("carries a protected WRITE from node 0's kernel into node 1's segment, Table 1's 209 instructions", func() {
		e := vtest.NewEnv(vtest.Options{Clock: rmarig.Clock, Trace: true, TimeLimit: 10 * clock.Millisecond})
		r, err := rmarig.Build(e, rmarig.DefaultConfig())
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Nodes).To(HaveLen(2))
		const seg = 0x8000
		id, err := r.Nodes[1].Kernel.Export(seg, 4096, rma.RightRead|rma.RightWrite, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Nodes[0].Kernel.Import(0, 1, id, 4096, rma.RightRead|rma.RightWrite)).To(Succeed())
		var st rma.Status
		r.Nodes[0].CPU.Run(cpu.Go(func(p *cpu.Proc) {
			st = r.Nodes[0].Kernel.Write(p, 0, 2, 10, false, rmarig.Seq(10, 100)) // word offset 2 = byte 8
		}))
		_, err = r.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(rma.OK))
		got, err := r.Nodes[1].Mem.Storage().Bytes(seg+8, 40)
		Expect(err).NotTo(HaveOccurred())
		for i := range 10 {
			Expect(binary.LittleEndian.Uint32(got[4*i:])).To(Equal(uint32(100 + i)))
		}
		// Table 1: 25 + 32 at the sender, 73 + 21 + 58 at the receiver.
		Expect(r.Nodes[0].CPU.Instructions() + r.Nodes[1].CPU.Instructions()).To(Equal(uint64(209)))
		Expect(r.Steps(0)).To(HaveLen(3))
		Expect(r.Steps(1)).To(HaveLen(3))
		Expect(r.Records("fore.tx")).To(HaveLen(1))
	})
})
