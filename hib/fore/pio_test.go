package fore_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/google/go-cmp/cmp"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/rtl/clock"
)

var _ = Describe("TURBOchannel PIO", func() {
	It("reads one cell as a 56-byte burst in 14 back-to-back 40 ns data cycles (AT-P5: 560 ns)", func() {
		r := newRig(unitConfig(), 1, nil)
		fl := cellFlit(7, 0x30)
		// Injected at t=0: the link side takes it at link edge 1, the RX
		// pipe adds CellLatency 9: it enters the RX FIFO at link cycle 10
		// = 10 x 57.14 ns = 571.4 ns, visible to TC edges from cycle 15
		// (571.4 / 40 = 14.3).
		r.boards[0].Inject(0, fl)
		o := rd(20, fore.RxPort, fore.CellBytes)
		r.master(o)
		Expect(r.run()).To(Succeed())

		// The master pushes its request at cycle 20, visible to the bus at
		// 21: ARB 21, ADDR 22 (the request reaches the board's channel),
		// DECODE 23 (max(DecodeCycles 1, ReadTurnaround 1) + 0 wait
		// states, AT-P4), the board sees the request at 23 and pushes word
		// k at 23+k, so DATA runs 24..37 with no wait state, IDLE 38; the
		// master takes the last word at 38.
		var got []clock.Cycle
		for _, p := range r.phases {
			Expect(p.Write).To(BeFalse())
			got = append(got, p.Cycle)
		}
		want := []clock.Cycle{24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37}
		Expect(cmp.Diff(want, got)).To(BeEmpty())
		Expect(o.Done).To(Equal(clock.Cycle(38)))
		// Data cycles 14 x 40 ns = 560 ns, the paper's «14 (40 nanosecond)
		// I/O bus read cycles» (AT-P5); the tenure ARB+ADDR+DECODE+14+IDLE
		// = 18 cycles = 720 ns (21..38).
		data := tcAt(got[len(got)-1]+1) - tcAt(got[0])
		tenure := tcAt(o.Done+1) - tcAt(21)
		Expect(data).To(Equal(560 * clock.Nanosecond))
		Expect(tenure).To(Equal(720 * clock.Nanosecond))
		AddReportEntry("AT-P5 cell read", fmt.Sprintf("data cycles %d = %v (paper 14 x 40 ns = 560 ns); TC tenure %v (ARB+ADDR+DECODE+14 DATA+IDLE)",
			len(got), data, tenure))
		GinkgoWriter.Printf("AT-P5: one cell read as a 56-byte burst: data %v (paper 560 ns), tenure %v\n", data, tenure)

		Expect(cmp.Diff(rxImage(fl), o.Got)).To(BeEmpty())
		// Word 13 is pushed at 23+13 = 36: the cell leaves the FIFO then.
		Expect(r.of(0, "pop")).To(HaveLen(1))
		Expect(r.of(0, "pop")[0].At).To(Equal(tcAt(36)))
		Expect(r.boards[0].RxLen()).To(BeZero())
	})

	It("serves single-word reads, one 5-cycle tenure each (word at a time, AT-P4)", func() {
		r := newRig(unitConfig(), 1, nil)
		fl := cellFlit(8, 0x40)
		r.boards[0].Inject(0, fl)
		var ops []*op
		for w := range fore.CellWords {
			ops = append(ops, rd(20, fore.RxPort+uint64(4*w), 4))
		}
		r.master(ops...)
		Expect(r.run()).To(Succeed())
		// The first word as above: ARB 21, ADDR 22, DECODE 23, DATA 24,
		// IDLE 25, taken by the master at 25, which pushes the next
		// request at 25 (visible 26): each word is ARB, ADDR, DECODE,
		// DATA, IDLE = 5 cycles, its data phase at 24 + 5k.
		var got []byte
		for k, o := range ops {
			got = append(got, o.Got...)
			Expect(r.phases[k].Cycle).To(Equal(clock.Cycle(24+5*k)), "word %d", k)
			Expect(o.Done).To(Equal(clock.Cycle(25 + 5*k)))
		}
		Expect(cmp.Diff(rxImage(fl), got)).To(BeEmpty())
		Expect(r.of(0, "pop")).To(HaveLen(1))
	})

	It("takes a 56-byte burst write at one word a cycle; word 13 queues the cell the cycle after its data phase", func() {
		r := newRig(unitConfig(), 1, nil)
		o := wr(20, fore.TxPort, txCell(0x11))
		r.master(o)
		// No link: the cell stays queued, and the watchdog names it.
		Expect(r.run()).To(MatchError(ContainSubstring("N0.Fore.TxFIFO: 1/40 entries")))
		// Posted write issued at 20: ARB 21, ADDR 22, DECODE 23 (write:
		// DecodeCycles 1), DATA 24..37 (word k at 24+k), IDLE 38. The
		// board takes word k from its channel register one cycle after
		// its data phase, at 25+k: word 13 at 38, when the cell enters
		// the TX FIFO (fore.tx).
		Expect(r.phases).To(HaveLen(fore.CellWords))
		for k, p := range r.phases {
			Expect(p.Write).To(BeTrue())
			Expect(p.Cycle).To(Equal(clock.Cycle(24 + k)))
		}
		tx := r.of(0, "tx")
		Expect(tx).To(HaveLen(1))
		Expect(tx[0].At).To(Equal(tcAt(38)))
		Expect(tx[0].ID).To(Equal(uint64(0)<<40 | 1))
		recs := r.records("fore.tx")
		Expect(recs).To(HaveLen(1))
		Expect(recs[0].Cycle).To(Equal(clock.Cycle(38)))
		Expect(r.boards[0].TxFree()).To(Equal(39))
	})
})
