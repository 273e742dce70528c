package mcadapter_test

import (
	"encoding/binary"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/verify/vtest"
)

// pioOp is one 32-bit PIO access of the spec's CPU, issued at cycle at or
// later (after the previous one completed).
type pioOp struct {
	at    clock.Cycle
	write bool
	addr  uint64
	val   uint32
	// got receives a read's value and done the cycle it completed; got64,
	// if set, makes the read 8 bytes wide (two PCI data phases).
	got   *uint32
	got64 *uint64
	done  *clock.Cycle
}

// pio adds a PCI master "Cpu" that runs ops in order: a posted write is
// done when its beat is handed to the bus, a read when its data returns.
func (r *rxRig) pio(ops ...pioOp) {
	ch, err := r.pci.AddMaster("Cpu")
	Expect(err).NotTo(HaveOccurred())
	var (
		i    int
		wait *mem.Req
		seq  uint64
		data []byte
	)
	agent := vtest.NewAgent(r.e, "Cpu", pciClk, func(now clock.Time, c clock.Cycle) bool {
		if wait != nil {
			b, ok := ch.Up.Pop(now)
			if !ok {
				return true
			}
			Expect(b.Req).To(BeIdenticalTo(wait))
			Expect(b.Err).To(BeEmpty())
			data = append(data, b.Data...)
			if !b.Last {
				return true
			}
			if op := ops[i]; op.got != nil {
				*op.got = binary.LittleEndian.Uint32(data)
			}
			if op := ops[i]; op.got64 != nil {
				*op.got64 = binary.LittleEndian.Uint64(data)
			}
			data = nil
			if d := ops[i].done; d != nil {
				*d = c
			}
			wait = nil
			i++
			return i < len(ops)
		}
		if i == len(ops) || c < ops[i].at || !ch.Down.CanPush(now) {
			return i < len(ops)
		}
		op := ops[i]
		seq++
		if op.write {
			req := &mem.Req{Op: mem.Write, Addr: op.addr, Len: 4, Posted: true, Class: "pio", Master: "Cpu", Seq: seq}
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], op.val)
			ch.Down.Push(now, mem.Beat{Req: req, Data: b[:], First: true, Last: true})
			if op.done != nil {
				*op.done = c
			}
			i++
			return i < len(ops)
		}
		n := 4
		if op.got64 != nil {
			n = 8
		}
		wait = &mem.Req{Op: mem.Read, Addr: op.addr, Len: n, Class: "pio", Master: "Cpu", Seq: seq}
		ch.Down.Push(now, mem.Beat{Req: wait, First: true, Last: true})
		return true
	})
	ch.ConnectMaster(agent)
	agent.Start()
}

// CSR addresses of the MC1 map on the rig's PCI bus.
func csrTx(i int) uint64 { return rigCSRBase + mcadapter.MC1().CSRTxTable() + 4*uint64(i) }
func csrRx(g int) uint64 { return rigCSRBase + mcadapter.MC1().CSRRxTable() + 4*uint64(g) }
func csrReg(off uint64) uint64 {
	return rigCSRBase + mcadapter.MC1().CSRRegs() + off
}

var _ = Describe("Adapter CSRs", func() {
	It("lays the MC1 window out as documented", func() {
		c := mcadapter.MC1()
		// 16384 entries x 4 B = 0x10000 per table; registers after both;
		// the 11 counters end at 0x20000 + 0x10 + 11 x 8 = 0x20068, inside
		// the 256 KB window.
		Expect([]uint64{c.CSRTxTable(), c.CSRRxTable(), c.CSRRegs()}).To(Equal([]uint64{0, 0x10000, 0x20000}))
		Expect(c.CSRRegs() + mcadapter.CSRCounters + 8*uint64(len(mcadapter.CounterNames))).To(BeNumerically("<=", c.CSRBytes))
	})

	It("refuses a CSR window too small for its registers", func() {
		e := vtest.NewEnv(vtest.Options{Clock: pciClk})
		cfg := mcadapter.MC1()
		cfg.TxPages, cfg.GlobalPages, cfg.CSRBytes = 2, 2, 32 // tables 16 B, registers from 0x10 to 0x78
		_, err := mcadapter.MakeBuilder().WithEnv(e).WithClock(pciClk).WithConfig(cfg).Build("MC")
		Expect(err).To(MatchError(ContainSubstring("CSRBytes 32 must hold both tables and the registers (120 bytes)")))
	})

	It("maps and unmaps a receive page and writes a transmit entry through CSR writes", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		var rxWord, txWord, rxAfter, pkts, bytes uint32
		var bytes64 uint64
		// Global page 5 -> host frame 3 (0x6000); window page 2 -> global
		// page 7 with loop-back.
		r.pio(
			pioOp{write: true, addr: csrRx(5), val: 0x8000_0003},
			pioOp{write: true, addr: csrTx(2), val: 0xc000_0007},
			pioOp{addr: csrRx(5), got: &rxWord},
			pioOp{addr: csrTx(2), got: &txWord},
			// After the first packet (sent at c40, DMA near c110), unmap
			// page 5 before the second arrives (sent at c300).
			pioOp{at: 200, write: true, addr: csrRx(5), val: 0},
			pioOp{addr: csrRx(5), got: &rxAfter},
			pioOp{at: 500, addr: csrReg(mcadapter.CSRCounters + 8*6), got: &pkts},  // RxPackets, low word
			pioOp{at: 500, addr: csrReg(mcadapter.CSRCounters + 8*7), got: &bytes}, // RxBytes, low word
			pioOp{addr: csrReg(mcadapter.CSRCounters + 8*7), got64: &bytes64},      // both words, two beats
		)
		first := []byte{1, 2, 3, 4, 5, 6, 7, 8}
		r.sendAt(40, 1, 0, 1, 5*8192+0x20, first)
		r.sendAt(300, 2, 0, 2, 5*8192+0x28, []byte{9, 9, 9, 9})
		r.run()
		Expect(rxWord).To(Equal(uint32(0x8000_0003)))
		Expect(txWord).To(Equal(uint32(0xc000_0007)))
		Expect(rxAfter).To(BeZero())
		e, err := r.a.TxTable.Entry(2)
		Expect(err).NotTo(HaveOccurred())
		Expect(e).To(Equal(mcadapter.TxEntry{Valid: true, GlobalPage: 7, LoopBack: true}))
		Expect(r.mem(0x6020, 8)).To(Equal(first))
		Expect(r.mem(0x6028, 4)).To(Equal([]byte{0, 0, 0, 0}))
		c := r.a.Counters()
		Expect([]uint64{c.RxPackets, c.RxUnmapped}).To(Equal([]uint64{1, 1}))
		Expect([]uint32{pkts, bytes}).To(Equal([]uint32{1, 8}))
		Expect(bytes64).To(Equal(uint64(8)))
	})

	It("returns the cause in a status read and lowers the line on a clear", func() {
		lc := mchub.LinkConfig()
		lc.CorruptProb = 1
		r := newRxRig(mcadapter.MC1(), lc, nil)
		var status, page, crcs, cleared uint32
		var clearAt clock.Cycle
		r.pio(
			pioOp{at: 30, addr: csrReg(mcadapter.CSRStatus), got: &status},
			pioOp{addr: csrReg(mcadapter.CSRPage), got: &page},
			pioOp{addr: csrReg(mcadapter.CSRCounters + 8*9), got: &crcs}, // RxCRC
			pioOp{at: 60, write: true, addr: csrReg(mcadapter.CSRStatus), val: 0xffff_ffff, done: &clearAt},
			pioOp{addr: csrReg(mcadapter.CSRStatus), got: &cleared},
		)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		r.send(1, 0, 1, rigGPage*8192, payload(1, 4))
		r.run()
		// The packet (12 wire bytes) is taken at c4: the line rises then.
		Expect(r.irqs).To(Equal([]clock.Cycle{4}))
		Expect(status).To(Equal(mcadapter.CSRStatusLine | mcadapter.CauseRxCRC))
		Expect(page).To(Equal(uint32(rigGPage))) // the CRC drop's global page
		Expect(crcs).To(Equal(uint32(1)))
		Expect(clearAt).To(Equal(clock.Cycle(60)))
		Expect(cleared).To(BeZero())
		Expect(r.a.Status()).To(Equal(mcadapter.Status{}))
		// The counter survives the clear.
		Expect(r.a.Counters().RxCRC).To(Equal(uint64(1)))
	})

	It("latches a masked cause without interrupting and interrupts when it is enabled", func() {
		lc := mchub.LinkConfig()
		lc.CorruptProb = 1
		r := newRxRig(mcadapter.MC1(), lc, nil)
		Expect(r.a.IRQEnable()).To(Equal(mcadapter.CauseTxInvalid | mcadapter.CauseRxCRC)) // reset: all enabled
		var status uint32
		var enableAt clock.Cycle
		r.pio(
			pioOp{write: true, addr: csrReg(mcadapter.CSRIRQEnable), val: 0},
			pioOp{at: 50, addr: csrReg(mcadapter.CSRStatus), got: &status},
			pioOp{at: 100, write: true, addr: csrReg(mcadapter.CSRIRQEnable), val: mcadapter.CauseRxCRC, done: &enableAt},
		)
		Expect(r.a.MapRx(rigGPage, rigFrame)).To(Succeed())
		r.sendAt(10, 1, 0, 1, rigGPage*8192, payload(1, 4))
		r.run()
		Expect(status).To(Equal(mcadapter.CauseRxCRC)) // latched, line low
		// Worked by hand: the CPU hands the write to its channel at c100;
		// the bus sees it at c101 and, idle, arbitrates (c101), runs the
		// address phase (c102), decode (c103) and the data phase (c104);
		// the CSR block sees the beat at c105 and, after its 1-cycle
		// latency, applies it at c106: the line rises then.
		Expect(enableAt).To(Equal(clock.Cycle(100)))
		Expect(r.irqs).To(Equal([]clock.Cycle{106}))
		Expect(r.a.Status().Pending).To(BeTrue())
	})

	It("latches the page of a write to an invalid transmit page", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		var status, page uint32
		r.pio(
			// Window page 5 has no valid transmit entry.
			pioOp{write: true, addr: rigTxBase + 5*8192 + 0x10, val: 0x1234_5678},
			pioOp{at: 60, addr: csrReg(mcadapter.CSRStatus), got: &status},
			pioOp{addr: csrReg(mcadapter.CSRPage), got: &page},
		)
		r.run()
		Expect(status).To(Equal(mcadapter.CSRStatusLine | mcadapter.CauseTxInvalid))
		Expect(page).To(Equal(uint32(5)))
		Expect(r.irqs).To(HaveLen(1))
	})

	It("refuses a table entry outside its range and reports it", func() {
		r := newRxRig(mcadapter.MC1(), mchub.LinkConfig(), nil)
		Expect(r.a.MapTx(1, 9, false)).To(Succeed())
		// Global page 0x5000 = 20480 is beyond the 16384-page space; host
		// frame 0x7fff_ffff is beyond 256 MB.
		r.pio(
			pioOp{write: true, addr: csrTx(1), val: 0x8000_5000},
			pioOp{write: true, addr: csrRx(1), val: 0xffff_ffff},
		)
		_, err := r.e.Run()
		Expect(err).To(MatchError(ContainSubstring("TX table entry 1 := 0x80005000")))
		Expect(err).To(MatchError(ContainSubstring("RX table entry 1 := 0xffffffff")))
		e, _ := r.a.TxTable.Entry(1)
		Expect(e).To(Equal(mcadapter.TxEntry{Valid: true, GlobalPage: 9}))
		x, _ := r.a.RxTable.Entry(1)
		Expect(x.Valid).To(BeFalse())
	})
})
