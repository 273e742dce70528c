package rma_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rma/rmarig"
)

var _ = Describe("Table 1", func() {
	It("counts a 40-byte WRITE as 25+32 at the sender and 73+21+58 at the receiver, 209 in all", func() {
		r := newRig(nil)
		r.share(rma.RightRead | rma.RightWrite)
		var st rma.Status
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			st = r.nodes[1].kernel.Write(p, 0, 2, 10, false, seq(10, 100))
		}))
		Expect(r.run()).To(Succeed())
		Expect(st).To(Equal(rma.OK))
		Expect(r.words(0, segBase+8, 10)).To(Equal(seq(10, 100)))
		Expect(r.steps(1)).To(Equal([]string{"rma.cross-in 13", "rma.write-tx 32", "rma.cross-out 12"}))
		Expect(r.steps(0)).To(Equal([]string{"rma.dispatch 73", "rma.handler 21", "rma.rx-write 58"}))
		Expect(r.nodes[1].cpu.Instructions() + r.nodes[0].cpu.Instructions()).To(Equal(uint64(209)))
		// AT-P14 «nearly 50%»: every step's memory and I/O instructions
		// are at least half its count.
		m1, n1 := r.memShare(1)
		m0, n0 := r.memShare(0)
		frac := float64(m0+m1) / float64(n0+n1)
		Expect(frac).To(BeNumerically("~", 0.5, 0.06))
		Expect(r.nodes[0].kernel.Counters().Received[rma.OpWrite]).To(Equal(uint64(1)))
		Expect(r.nodes[0].kernel.Counters().Drained[1]).To(Equal(uint64(1)))
		Expect(r.records("rma.mem")).To(HaveLen(10))
	})

	It("counts a 40-byte READ as 25+37, 73+21+67 at the target and 73+21+58 at the source, 375 in all", func() {
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		Expect(r.nodes[0].mem.Storage().Write(segBase+40, le(seq(10, 500)))).To(Succeed())
		var id uint16
		var st rma.Status
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			id, st = r.nodes[1].kernel.Read(p, 0, 10, 10, int(ids[1]), 20, false)
			p.WaitUntil(func() bool { return r.nodes[1].kernel.Done(id) })
		}))
		Expect(r.run()).To(Succeed())
		Expect(st).To(Equal(rma.OK))
		Expect(r.nodes[1].kernel.Done(id)).To(BeTrue())
		Expect(r.words(1, segBase+80, 10)).To(Equal(seq(10, 500)))
		Expect(r.steps(1)).To(Equal([]string{"rma.cross-in 13", "rma.read-tx 37", "rma.cross-out 12",
			"rma.dispatch 73", "rma.handler 21", "rma.rx-write 58"}))
		Expect(r.steps(0)).To(Equal([]string{"rma.dispatch 73", "rma.handler 21", "rma.rx-readreq 67"}))
		Expect(r.nodes[1].cpu.Instructions() + r.nodes[0].cpu.Instructions()).To(Equal(uint64(375)))
	})

	It("is affine in words, PerWord (3) a word (AT-P15)", func() {
		for _, n := range []int{1, 4, 7, 10} {
			r := newRig(nil)
			r.share(rma.RightRead | rma.RightWrite)
			r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
				Expect(r.nodes[1].kernel.Write(p, 0, 0, n, false, seq(n, 1))).To(Equal(rma.OK))
			}))
			Expect(r.run()).To(Succeed())
			// 58 − 3·(10 − n): 31, 40, 49, 58; the sender writes the whole
			// cell whatever n (32), so the WRITE costs 209 − 3·(10 − n).
			Expect(r.steps(0)[2]).To(Equal("rma.rx-write " + itoa(58-3*(10-n))))
			Expect(r.steps(1)[1]).To(Equal("rma.write-tx 32"))
			Expect(r.nodes[0].cpu.Instructions() + r.nodes[1].cpu.Instructions()).To(Equal(uint64(209 - 3*(10-n))))
			Expect(r.words(0, segBase, n)).To(Equal(seq(n, 1)))
		}
	})
})

var _ = Describe("sender checks", func() {
	DescribeTable("refuse, count, trace and send nothing",
		func(reg, off, n int, rights rma.Rights, want rma.Status) {
			r := newRig(nil)
			r.share(rights)
			var st rma.Status
			r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
				st = r.nodes[1].kernel.Write(p, reg, off, n, false, seq(10, 7))
			}))
			Expect(r.run()).To(Succeed())
			Expect(st).To(Equal(want))
			Expect(r.nodes[1].kernel.Counters().RefusedSend[want]).To(Equal(uint64(1)))
			Expect(r.nodes[1].board.Counters().TxCells).To(BeZero())
			recs := r.records("rma.refuse")
			Expect(recs).To(HaveLen(1))
			Expect(field(recs[0], "reason")).To(Equal(want.String()))
			Expect(field(recs[0], "side")).To(Equal("send"))
			Expect(r.words(0, segBase, 10)).To(Equal(make([]uint32, 10)))
		},
		Entry("count 0", 0, 0, 0, rma.RightRead|rma.RightWrite, rma.ErrCount),
		Entry("count 11", 0, 0, 11, rma.RightRead|rma.RightWrite, rma.ErrCount),
		Entry("a register never imported", 5, 0, 1, rma.RightRead|rma.RightWrite, rma.ErrDesc),
		Entry("a register out of range", 99, 0, 1, rma.RightRead|rma.RightWrite, rma.ErrDesc),
		Entry("a read-only segment", 0, 0, 1, rma.RightRead, rma.ErrRights),
		Entry("past the segment's end: 1020+5 words > 1024", 0, 1020, 5, rma.RightRead|rma.RightWrite, rma.ErrBounds),
		Entry("a negative offset", 0, -1, 1, rma.RightRead|rma.RightWrite, rma.ErrBounds),
	)

	It("returns ErrTxFull when STATUS shows no room, never overflowing the FIFO (AT-P17)", func() {
		// One TX cell, held 2000 link cycles (114 µs) in the TX pipe: the
		// next WRITEs (a few µs apart) find the FIFO full.
		boardConfig.TxCells, boardConfig.CellLatency = 1, 2000
		DeferCleanup(func() { boardConfig = rmarig.UnitBoard() })
		r := newRig(nil)
		r.share(rma.RightRead | rma.RightWrite)
		var sts []rma.Status
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			for i := range 3 {
				sts = append(sts, r.nodes[1].kernel.Write(p, 0, 10*i, 10, false, seq(10, uint32(i))))
			}
		}))
		// No fore.txfull report: the kernel never wrote a full FIFO.
		Expect(r.run()).To(Succeed())
		Expect(sts).To(Equal([]rma.Status{rma.OK, rma.ErrTxFull, rma.ErrTxFull}))
		c := r.nodes[1].kernel.Counters()
		sent := c.Sent[rma.OpWrite]
		Expect(sent + c.RefusedSend[rma.ErrTxFull]).To(Equal(uint64(3)))
		Expect(r.nodes[1].board.Counters().TxCells).To(Equal(sent))
		Expect(r.nodes[1].board.Counters().TxOverflow).To(BeZero())
	})

	It("refuses a READ whose reply segment is not this node's", func() {
		r := newRig(nil)
		r.share(rma.RightRead | rma.RightWrite)
		var st rma.Status
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			_, st = r.nodes[1].kernel.Read(p, 0, 0, 4, 9, 0, false)
		}))
		Expect(r.run()).To(Succeed())
		Expect(st).To(Equal(rma.ErrDesc))
		Expect(r.nodes[1].board.Counters().TxCells).To(BeZero())
	})

	It("refuses a block whose buffer is not the process's", func() {
		r := newRig(nil)
		r.share(rma.RightRead | rma.RightWrite)
		var st rma.Status
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			st = r.nodes[1].kernel.Block(p, 0, 0, kernelBase+16, 20, false)
		}))
		Expect(r.run()).To(Succeed())
		Expect(st).To(Equal(rma.ErrPointer))
		Expect(r.nodes[1].board.Counters().TxCells).To(BeZero())
	})
})

func itoa(n int) string {
	s := ""
	if n == 0 {
		return "0"
	}
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

func le(w []uint32) []byte {
	b := make([]byte, 4*len(w))
	for i, v := range w {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return b
}
