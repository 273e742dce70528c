package fore_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/google/go-cmp/cmp"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
)

var _ = Describe("the link side", func() {
	It("sends a cell over a direct link to another board in 53 link cycles + 2 x CellLatency", func() {
		cfg := unitConfig()
		Expect(cfg.CellLatency).To(Equal(9))
		r := newRig(cfg, 2, nil)
		r.direct(0, 1)
		w := wr(20, on(0, fore.TxPort), txCell(0x21))
		o := rd(200, on(1, fore.RxPort), fore.CellBytes)
		r.master(w, o)
		Expect(r.run()).To(Succeed())

		// fore.tx at TC cycle 38 = 1520 ns (the write spec). The link side
		// first sees it at the first link edge after 1520 ns: 1520 /
		// 57.143 = 26.6, link cycle 27 (1542.9 ns); the TX pipe adds
		// CellLatency 9: fore.wire at link cycle 36 (2057.1 ns). The link
		// serialises 53 bytes at one a cycle: the cell is visible to board
		// 1 from link cycle 36 + 53 = 89, the RX pipe adds 9: fore.rx at
		// link cycle 98 (5600 ns). From the link side's first sight to
		// the RX FIFO: 98 - 27 = 71 = 53 + 2 x 9.
		tx, wire, rx := r.of(0, "tx"), r.of(0, "wire"), r.of(1, "rx")
		Expect(tx).To(HaveLen(1))
		Expect(wire).To(HaveLen(1))
		Expect(rx).To(HaveLen(1))
		Expect(tx[0].At).To(Equal(tcAt(38)))
		Expect(wire[0].At).To(Equal(lnAt(36)))
		Expect(rx[0].At).To(Equal(lnAt(98)))
		Expect(linkClock.CycleAt(rx[0].At) - 27).To(BeEquivalentTo(atm.CellBytes + 2*cfg.CellLatency))
		Expect(rx[0].ID).To(Equal(tx[0].ID))
		Expect(r.records("fore.wire")[0].Cycle).To(BeEquivalentTo(36))
		Expect(r.records("fore.rx")[0].Cycle).To(BeEquivalentTo(98))

		// Board 1 returns the cell as written, with the HEC the board made
		// and the CRC-10 it sealed.
		want := txCell(0x21)
		h, _ := testHeader.Encode()
		want[4] = h[4]
		var p [48]byte
		copy(p[:], want[8:])
		fore.SealPayload(&p)
		copy(want[8:], p[:])
		Expect(cmp.Diff(want, o.Got)).To(BeEmpty())
		Expect(r.boards[0].Counters().TxCells).To(Equal(uint64(1)))
		Expect(r.boards[1].Counters().RxCells).To(Equal(uint64(1)))
	})

	It("works on a port of the ASX-100 star, 123 link cycles later than on a direct link", func() {
		cfg := unitConfig()
		r := newRig(cfg, 2, nil)
		st, err := atm.MakeStarBuilder().WithEnv(r.e).Build("ATM")
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Switch.AddRoute(0, testHeader.VCI, 1, testHeader.VCI)).To(Succeed())
		for i, f := range r.boards {
			Expect(f.ConnectLink(st.Ports[i])).To(Succeed())
		}
		r.master(wr(20, on(0, fore.TxPort), txCell(0x22)), rd(400, on(1, fore.RxPort), fore.CellBytes))
		Expect(r.run()).To(Succeed())
		// fore.wire at link cycle 36 as on the direct link; the ASX-100
		// preset adds 69 + 1 + 53 = 123 cycles (7.03 µs, AT-P9) to the
		// trip: fore.rx at 98 + 123 = 221.
		Expect(r.of(0, "wire")[0].At).To(Equal(lnAt(36)))
		rx := r.of(1, "rx")
		Expect(rx).To(HaveLen(1))
		Expect(rx[0].At).To(Equal(lnAt(221)))
	})

	It("discards a cell the link corrupted, by its CRC-10, and counts it", func() {
		r := newRig(unitConfig(), 2, nil)
		l := r.direct(0, 1)
		Expect(l.From(link.A).CorruptPacket(1)).To(Succeed())
		r.master(wr(20, on(0, fore.TxPort), txCell(0x23)), wr(21, on(0, fore.TxPort), txCell(0x24)),
			rd(400, on(1, fore.RxPort), fore.CellBytes), rd(401, on(1, fore.RegCRCDrops), 4))
		Expect(r.run()).To(Succeed())
		// The first cell has one payload bit flipped on the wire: CRC-10
		// catches every single-bit error (crc10_test.go).
		drops := r.of(1, "drop")
		Expect(drops).To(HaveLen(1))
		Expect(drops[0].Why).To(Equal("crc"))
		Expect(drops[0].ID).To(Equal(r.of(0, "wire")[0].ID))
		Expect(r.of(1, "rx")).To(HaveLen(1))
		Expect(r.of(1, "rx")[0].ID).To(Equal(r.of(0, "wire")[1].ID))
		Expect(r.boards[1].Counters().RxDropCRC).To(Equal(uint64(1)))
		Expect(r.records("fore.drop")[0].Fields).To(ContainElement(HaveField("Val", "crc")))
	})

	It("drops the next matching TX cell at the wire with DropNextTx, counted as a test drop", func() {
		r := newRig(unitConfig(), 2, nil)
		r.direct(0, 1)
		first := true
		r.boards[0].DropNextTx(func(c *fore.Cell) bool {
			if first { // the predicate sees every cell until one matches
				first = false
				return false
			}
			return true
		})
		r.master(wr(20, on(0, fore.TxPort), txCell(1)), wr(21, on(0, fore.TxPort), txCell(2)), wr(22, on(0, fore.TxPort), txCell(3)),
			rd(600, on(1, fore.RxPort), fore.CellBytes), rd(601, on(1, fore.RxPort), fore.CellBytes))
		Expect(r.run()).To(Succeed())
		tx := r.of(0, "tx")
		Expect(tx).To(HaveLen(3))
		drops := r.of(0, "drop")
		Expect(drops).To(HaveLen(1))
		Expect(drops[0]).To(HaveField("ID", tx[1].ID))
		Expect(drops[0].Why).To(Equal("test"))
		var got []uint64
		for _, ev := range r.of(1, "rx") {
			got = append(got, ev.ID)
		}
		Expect(got).To(Equal([]uint64{tx[0].ID, tx[2].ID}))
		c := r.boards[0].Counters()
		Expect(c.TxCells).To(Equal(uint64(2)))
		Expect(c.TxDropTest).To(Equal(uint64(1)))
	})
})
