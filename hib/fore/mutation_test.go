package fore_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/fore"
)

// The board's test-only faults (env.DeclareMutation in board.go): each
// spec shows the board misbehaving the way the checker that catches it
// expects (fore.rxempty here; the lost-interrupt checker and the
// remote-memory scoreboard in verify/testbench/atmtb), and the same run
// without it is the corresponding clean spec of board_test.go.
var _ = Describe("mutations", func() {
	It("with fore.crc-off delivers a payload that fails the CRC-10 (the scoreboard's mutation)", func() {
		r := newRig(unitConfig(), 1, map[string]int{"fore.crc-off": 1})
		crc := cellFlit(2, 0)
		crc.Data[17] ^= 0x10
		r.boards[0].Inject(0, crc)
		cell := rd(30, fore.RxPort, fore.CellBytes)
		r.master(cell)
		Expect(r.run()).To(Succeed())
		Expect(r.of(0, "drop")).To(BeEmpty())
		Expect(cell.Got).To(Equal(rxImage(crc)))
	})

	It("with fore.rx-count STATUS shows a cell that is not there, and the read of it reports fore.rxempty", func() {
		r := newRig(unitConfig(), 1, map[string]int{"fore.rx-count": 1})
		st := rd(20, fore.RegStatus, 4)
		o := rd(21, fore.RxPort, fore.CellBytes)
		r.master(st, o)
		Expect(r.run()).To(MatchError(ContainSubstring("fore.rxempty")))
		Expect(u32(st) & fore.StatusRxMask).To(Equal(uint32(1)))
	})

	It("with fore.no-irq loses every Nth edge (the lost-interrupt checker's mutation)", func() {
		r := newRig(unitConfig(), 1, map[string]int{"fore.no-irq": 2})
		r.boards[0].Inject(0, cellFlit(1, 1))
		r.injectAt(0, 60, cellFlit(2, 2))
		st := rd(150, fore.RegStatus, 4)
		r.master(wr(2, fore.RegControl, word(1)), rd(20, fore.RxPort, fore.CellBytes), st, rd(160, fore.RxPort, fore.CellBytes))
		Expect(r.run()).To(Succeed())
		// Edge 1 at link 10 raised; cell 1 popped at 36; edge 2 (cell 2
		// at link 70) lost: the line stays low with a cell waiting.
		Expect(r.of(0, "irq")).To(HaveLen(1))
		Expect(u32(st)).To(Equal(uint32(40<<fore.StatusTxShift | 1)))
	})
})
