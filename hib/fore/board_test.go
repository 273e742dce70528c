package fore_test

import (
	"encoding/binary"

	"github.com/google/go-cmp/cmp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/vtest"
)

// u32 is the little-endian word an op read.
func u32(o *op) uint32 { return binary.LittleEndian.Uint32(o.Got) }

// injectAt injects fl into board i at link cycle c: the board takes it
// at link cycle c+1 and it enters the RX FIFO CellLatency cycles later.
func (r *rig) injectAt(i int, c clock.Cycle, fl link.Flit) {
	vtest.AtCycle(r.e, "Inject", linkClock, c, func(now clock.Time) { r.boards[i].Inject(now, fl) })
}

var _ = Describe("FIFOs", func() {
	It("reports a TX port write with the TX FIFO full (fore.txfull, AT-P17) and loses that cell", func() {
		cfg := unitConfig()
		cfg.TxCells = 2
		r := newRig(cfg, 1, nil)
		st := rd(100, fore.RegStatus, 4)
		// No link: nothing drains the TX FIFO.
		r.master(wr(20, fore.TxPort, txCell(1)), wr(21, fore.TxPort, txCell(2)), wr(22, fore.TxPort, txCell(3)), st)
		err := r.run()
		Expect(err).To(MatchError(ContainSubstring("fore.txfull")))
		Expect(r.checks()).To(ConsistOf("fore.txfull", "deadlock"))
		Expect(r.of(0, "tx")).To(HaveLen(2))
		c := r.boards[0].Counters()
		Expect(c.TxOverflow).To(Equal(uint64(fore.CellWords)), "every word of the third cell found the FIFO full")
		Expect(c.TxMax).To(Equal(2))
		// STATUS: TX free 0 (bits 16-21), RX 0, IRQ 0.
		Expect(u32(st)).To(Equal(uint32(0)))
	})

	It("drops a cell that finds the RX FIFO full and counts it (RegRxDrops)", func() {
		cfg := unitConfig()
		cfg.RxCells = 2
		r := newRig(cfg, 1, nil)
		for k := range 3 {
			r.boards[0].Inject(0, cellFlit(uint64(100+k), byte(k)))
		}
		st := rd(30, fore.RegStatus, 4)
		dr := rd(31, fore.RegRxDrops, 4)
		a, b := rd(32, fore.RxPort, fore.CellBytes), rd(33, fore.RxPort, fore.CellBytes)
		rc := rd(34, fore.RegRxCells, 4)
		r.master(st, dr, a, b, rc)
		Expect(r.run()).To(Succeed())
		// All three reach the end of the RX pipe at link cycle 10; one
		// cell a cycle goes through the checks: two enter (10, 11), the
		// third is dropped (12).
		drops := r.of(0, "drop")
		Expect(drops).To(HaveLen(1))
		Expect(drops[0]).To(Equal(event{Kind: "drop", At: lnAt(12), ID: 102, Why: "rxfull"}))
		Expect(u32(st) & fore.StatusRxMask).To(Equal(uint32(2)))
		Expect(u32(st) >> fore.StatusTxShift & fore.StatusTxMask).To(Equal(uint32(40)))
		Expect(u32(dr)).To(Equal(uint32(1)))
		Expect(u32(rc)).To(Equal(uint32(2)))
		Expect(a.Got).To(Equal(rxImage(cellFlit(100, 0))))
		Expect(b.Got).To(Equal(rxImage(cellFlit(101, 1))))
		Expect(r.boards[0].Counters().RxMax).To(Equal(2))
	})

	It("discards a cell with a bad HEC and one with a bad CRC-10, counting each", func() {
		r := newRig(unitConfig(), 1, nil)
		bad := cellFlit(1, 0)
		bad.Route()[4] ^= 0x01
		r.boards[0].Inject(0, bad)
		crc := cellFlit(2, 0)
		crc.Data[17] ^= 0x10
		r.boards[0].Inject(0, crc)
		short := cellFlit(3, 0)
		short.Data = short.Data[:40]
		r.boards[0].Inject(0, short)
		good := cellFlit(4, 0)
		r.boards[0].Inject(0, good)
		hec, crcr := rd(30, fore.RegHECDrops, 4), rd(31, fore.RegCRCDrops, 4)
		cell := rd(32, fore.RxPort, fore.CellBytes)
		r.master(hec, crcr, cell)
		Expect(r.run()).To(Succeed())
		var why []string
		for _, d := range r.of(0, "drop") {
			why = append(why, d.Why)
		}
		Expect(why).To(Equal([]string{"hec", "crc", "crc"}))
		Expect(u32(hec)).To(Equal(uint32(1)))
		Expect(u32(crcr)).To(Equal(uint32(2)))
		Expect(cell.Got).To(Equal(rxImage(good)))
		Expect(r.of(0, "rx")).To(HaveLen(1))
	})

	It("reads zeros from an empty RX port and reports fore.rxempty", func() {
		r := newRig(unitConfig(), 1, nil)
		o := rd(20, fore.RxPort, fore.CellBytes)
		r.master(o)
		Expect(r.run()).To(MatchError(ContainSubstring("fore.rxempty")))
		Expect(r.checks()).To(Equal([]string{"fore.rxempty"}), "once per access")
		Expect(o.Got).To(Equal(make([]byte, fore.CellBytes)))
		Expect(r.boards[0].Counters().RxUnderrun).To(Equal(uint64(fore.CellWords)))
	})

	It("reports TX words out of order (fore.txseq) and drops the partial cell", func() {
		r := newRig(unitConfig(), 1, nil)
		c := txCell(5)
		r.master(wr(20, fore.TxPort+4, c[4:8]), wr(30, fore.TxPort, c[:28]), wr(40, fore.TxPort, c))
		err := r.run()
		Expect(err).To(MatchError(ContainSubstring("fore.txseq")))
		Expect(r.checks()).To(ConsistOf("fore.txseq", "fore.txseq", "deadlock"))
		// Word 1 first: refused. Words 0..6, then a new word 0: the
		// partial cell is dropped and the third write is a whole cell.
		Expect(r.of(0, "tx")).To(HaveLen(1))
	})

	It("reports accesses to read-only, write-only and unused offsets (fore.access)", func() {
		r := newRig(unitConfig(), 1, nil)
		r.master(rd(20, fore.TxPort, 4), wr(30, fore.RegStatus, word(1)), rd(40, 0x200, 4))
		Expect(r.run()).To(HaveOccurred())
		Expect(r.checks()).To(Equal([]string{"fore.access", "fore.access", "fore.access"}))
	})
})

var _ = Describe("the interrupt line", func() {
	It("rises once for back-to-back cells (AT-P16) and falls when software drains them", func() {
		r := newRig(unitConfig(), 1, nil)
		r.boards[0].Inject(0, cellFlit(1, 1))
		r.injectAt(0, 20, cellFlit(2, 2))
		st := rd(40, fore.RegStatus, 4)
		st2 := rd(200, fore.RegStatus, 4)
		r.master(wr(2, fore.RegControl, word(1)), st,
			rd(100, fore.RxPort, fore.CellBytes), rd(101, fore.RxPort, fore.CellBytes), st2)
		Expect(r.run()).To(Succeed())
		// CONTROL written at cycle 2: ARB 3, ADDR 4, DECODE 5, DATA 6,
		// taken at 7 (280 ns). Cell 1 enters the RX FIFO at link cycle 10
		// (571.4 ns): the rising edge, one interrupt. Cell 2 enters at
		// link cycle 21 + 9 = 30 with the line already high: none.
		irq := r.of(0, "irq")
		Expect(irq).To(HaveLen(1))
		Expect(irq[0].At).To(Equal(lnAt(10)))
		Expect(r.of(0, "rx")[1].At).To(Equal(lnAt(30)))
		Expect(u32(st)).To(Equal(uint32(fore.StatusIRQ | 40<<fore.StatusTxShift | 2)))
		Expect(u32(st2)).To(Equal(uint32(40 << fore.StatusTxShift)))
		Expect(r.boards[0].IRQ()).To(BeFalse())
		Expect(r.boards[0].Counters().IRQs).To(Equal(uint64(1)))
		Expect(r.records("fore.irq")).To(HaveLen(1))
	})

	It("rises when software enables it with cells already waiting (no lost wake-up)", func() {
		r := newRig(unitConfig(), 1, nil)
		r.boards[0].Inject(0, cellFlit(1, 1))
		r.master(wr(30, fore.RegControl, word(1)), rd(40, fore.RxPort, fore.CellBytes),
			wr(60, fore.RegControl, word(0)))
		r.injectAt(0, 50, cellFlit(2, 2)) // lands at link 60 (3429 ns), disabled
		r.master2(wr(100, fore.RegControl, word(1)), rd(110, fore.RxPort, fore.CellBytes))
		Expect(r.run()).To(Succeed())
		// Cell 1 waits from link cycle 10 with the interrupt disabled.
		// CONTROL = 1 written at 30: data phase 34, taken at 35 (1400 ns):
		// the edge. Disabled again at 60 (taken 65 = 2600 ns), cell 2
		// lands at 3429 ns: no edge; enabled at 100 (taken 105 = 4200 ns):
		// the second edge.
		irq := r.of(0, "irq")
		Expect(irq).To(HaveLen(2))
		Expect(irq[0].At).To(Equal(tcAt(35)))
		Expect(irq[1].At).To(Equal(tcAt(105)))
	})

	It("raises a new edge for a cell that lands in the picosecond the handler's STATUS read sees the FIFO empty", func() {
		r := newRig(unitConfig(), 1, nil)
		r.boards[0].Inject(0, cellFlit(1, 1)) // link 10
		// Cell 2 is taken at link 26 and enters at 26 + 9 = 35 = 2000 ns,
		// TC cycle 50 (the clocks share an edge every 400 ns).
		r.injectAt(0, 25, cellFlit(2, 2))
		// The handler drains cell 1 (burst at 20: pop at 23 + 13 = 36),
		// then reads STATUS with the request pushed at 47: the board
		// answers at 47 + 3 = 50, the picosecond cell 2 lands, and sees it
		// not yet (entries are visible from the edge after their push).
		st := rd(47, fore.RegStatus, 4)
		st2 := rd(70, fore.RegStatus, 4)
		r.master(wr(2, fore.RegControl, word(1)), rd(20, fore.RxPort, fore.CellBytes), st, st2,
			rd(80, fore.RxPort, fore.CellBytes))
		Expect(r.run()).To(Succeed())
		Expect(r.of(0, "pop")[0].At).To(Equal(tcAt(36)))
		Expect(r.of(0, "rx")[1].At).To(Equal(tcAt(50)))
		Expect(u32(st) & fore.StatusRxMask).To(BeZero())
		// The line fell at the pop (1440 ns) and rises again at 2000 ns:
		// the CPU is interrupted again, whatever the handler concluded.
		irq := r.of(0, "irq")
		Expect(irq).To(HaveLen(2))
		Expect(irq[1].At).To(Equal(tcAt(50)))
		Expect(u32(st2)).To(Equal(uint32(fore.StatusIRQ | 40<<fore.StatusTxShift | 1)))
	})

	It("keeps the line high when a cell lands in the picosecond the handler pops the last one; STATUS shows it", func() {
		r := newRig(unitConfig(), 1, nil)
		r.boards[0].Inject(0, cellFlit(1, 1))
		// Cell 2 taken at link 19, enters at 28 = 1600 ns = TC cycle 40.
		r.injectAt(0, 18, cellFlit(2, 2))
		st := rd(45, fore.RegStatus, 4)
		// The burst pushed at 24 pops cell 1 at 24 + 3 + 13 = 40.
		r.master(wr(2, fore.RegControl, word(1)), rd(24, fore.RxPort, fore.CellBytes), st, rd(60, fore.RxPort, fore.CellBytes))
		Expect(r.run()).To(Succeed())
		Expect(r.of(0, "pop")[0].At).To(Equal(tcAt(40)))
		Expect(r.of(0, "rx")[1].At).To(Equal(tcAt(40)))
		// Settled at the end of the picosecond the FIFO holds one cell:
		// the condition never fell, so there is no new edge, and the
		// handler's next STATUS read (served at 48) shows the cell: it
		// loops instead of returning.
		Expect(r.of(0, "irq")).To(HaveLen(1))
		Expect(u32(st)).To(Equal(uint32(fore.StatusIRQ | 40<<fore.StatusTxShift | 1)))
	})

})

var _ = Describe("wiring", func() {
	It("refuses a bus of the wrong width or clock, a misaligned base and a second attach", func() {
		e := vtest.NewEnv(vtest.Options{})
		f, err := fore.MakeBuilder().WithEnv(e).Build("N0.Fore")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.AttachTC(nil, base)).To(MatchError(ContainSubstring("no bus")))
		pci, err := bus.MakeBuilder().WithEnv(e).WithConfig(bus.PCI64()).Build("PCI")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.AttachTC(pci, base)).To(MatchError(ContainSubstring("8 bytes wide")))
		tc12, err := bus.MakeBuilder().WithEnv(e).WithConfig(bus.TurboChannel()).Build("TC12")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.AttachTC(tc12, base)).To(MatchError(ContainSubstring("Clock")))
		tc, err := bus.MakeBuilder().WithEnv(e).WithConfig(bus.TurboChannel25()).Build("TC")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.AttachTC(tc, base+4)).To(MatchError(ContainSubstring("aligned")))
		Expect(f.AttachTC(tc, base)).To(Succeed())
		Expect(f.AttachTC(tc, base+fore.WindowBytes)).To(MatchError(ContainSubstring("already attached")))
	})

	It("refuses a port without links and a second link", func() {
		e := vtest.NewEnv(vtest.Options{})
		f, err := fore.MakeBuilder().WithEnv(e).Build("N0.Fore")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.ConnectLink(star.Port{})).To(MatchError(ContainSubstring("without links")))
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(fore.TCA100().Link).Build("L")
		Expect(err).NotTo(HaveOccurred())
		p := star.Port{Send: l.From(link.A), Recv: l.From(link.B)}
		Expect(f.ConnectLink(p)).To(Succeed())
		Expect(f.ConnectLink(p)).To(MatchError(ContainSubstring("already connected")))
	})

	It("refuses a bad node and a bad config at Build, naming them", func() {
		e := vtest.NewEnv(vtest.Options{})
		_, err := fore.MakeBuilder().WithEnv(e).WithNode(-1).Build("N0.Fore")
		Expect(err).To(MatchError(ContainSubstring("node -1")))
		c := fore.TCA100()
		c.RxCells = 0
		_, err = fore.MakeBuilder().WithEnv(e).WithConfig(c).Build("N0.Fore")
		Expect(err).To(MatchError(ContainSubstring("N0.Fore: fore: RxCells 0")))
	})
})

var _ = Describe("observability", func() {
	It("drives its signals: FIFO occupancies, the interrupt line, its enable, the RX drops", func() {
		cfg := unitConfig()
		cfg.RxCells = 1
		r := newRig(cfg, 1, nil)
		r.boards[0].Inject(0, cellFlit(1, 1))
		r.boards[0].Inject(0, cellFlit(2, 2)) // finds the FIFO full
		st := rd(40, fore.RegStatus, 4)
		r.master(wr(2, fore.RegControl, word(1)), st)
		// The cell stays: the RX FIFO names it at the end.
		Expect(r.run()).To(MatchError(ContainSubstring("N0.Fore.RxFIFO: 1/1 entries")))
		// Signal names are the waves registry's (N0.Fore.TxFIFO becomes
		// n0.fore.tx_fifo), the design's section 3.1 names.
		sig := func(name string) uint64 {
			s := r.e.Waves.Lookup(name)
			Expect(s).NotTo(BeNil(), name)
			return s.Value()
		}
		Expect(sig("n0.fore.irq")).To(Equal(uint64(1)))
		Expect(sig("n0.fore.irq_enable")).To(Equal(uint64(1)))
		Expect(sig("n0.fore.rx_drops")).To(Equal(uint64(1)))
		Expect(sig("n0.fore.rx_fifo.occupancy")).To(Equal(uint64(1)))
		Expect(sig("n0.fore.tx_fifo.occupancy")).To(Equal(uint64(0)))
		Expect(u32(st)).To(Equal(uint32(fore.StatusIRQ | 40<<fore.StatusTxShift | 1)))
	})

	It("behaves the same traced (the link's slow path) and untraced (its fast path)", func() {
		got, diff := vtest.TracedAndUntraced(vtest.Options{Clock: tcClock}, func(e *env.Env) [][]event {
			r := newRigEnv(e, unitConfig(), []int{0, 1})
			r.direct(0, 1)
			r.master(wr(2, on(1, fore.RegControl), word(1)),
				wr(20, on(0, fore.TxPort), txCell(1)), wr(21, on(0, fore.TxPort), txCell(2)),
				rd(300, on(1, fore.RxPort), fore.CellBytes), rd(301, on(1, fore.RxPort), fore.CellBytes))
			Expect(r.run()).To(Succeed())
			return r.events
		}, cmp.AllowUnexported(event{}))
		Expect(diff).To(BeEmpty())
		Expect(got[1]).To(HaveLen(2 + 1 + 2)) // rx x2, irq, pop x2
	})

	It("gives the same events and trace whatever order the boards were built in", func() {
		run := func(order []int) []string {
			r := newRigOrder(unitConfig(), order, nil)
			r.direct(0, 1)
			// Both boards send at once, so both directions and both RX
			// FIFOs work in the same cycles; interrupts on.
			r.master(wr(2, on(0, fore.RegControl), word(1)), wr(3, on(1, fore.RegControl), word(1)),
				wr(20, on(0, fore.TxPort), txCell(1)), wr(21, on(1, fore.TxPort), txCell(2)),
				rd(300, on(0, fore.RxPort), fore.CellBytes), rd(301, on(1, fore.RxPort), fore.CellBytes))
			Expect(r.run()).To(Succeed())
			var out []string
			for _, rec := range r.e.Trace.Records() {
				if len(rec.Kind) > 5 && rec.Kind[:5] == "fore." {
					out = append(out, rec.Format())
				}
			}
			Expect(out).To(HaveLen(2 + 2*4 + 2)) // 2 fore.control; tx, wire, rx, pop per cell; 2 fore.irq
			return out
		}
		Expect(vtest.SameInEveryOrder(2, run)).To(BeEmpty())
	})
})
