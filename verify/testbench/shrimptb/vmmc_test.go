package shrimptb_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// vmmcCluster builds a 2-node cluster (nodes 0 and 1 are mesh
// neighbours) with every checker on.
func vmmcCluster(mod func(*shrimptb.Config)) (*env.Env, *shrimptb.Cluster) {
	c := shrimptb.DefaultConfig()
	c.Nodes = 2
	if mod != nil {
		mod(&c)
	}
	e := env.New(env.Options{Seed: 1})
	cl, err := shrimptb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cl.Close)
	return e, cl
}

// runClean runs e to its end and expects no checker finding.
func runClean(e *env.Env, cl *shrimptb.Cluster) {
	res, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Stopped).To(BeFalse())
	Expect(cl.Finish()).To(Succeed())
	Expect(e.Monitor.Count()).To(BeZero(), "%v", e.Monitor.Err())
}

// word reads the 32-bit word at addr of node i's memory.
func word(cl *shrimptb.Cluster, i int, addr uint64) uint32 {
	b := make([]byte, 4)
	Expect(cl.Nodes[i].Memory().Storage().Read(addr, b)).To(Succeed())
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

const (
	rxBuf = 0x10_0000
	txBuf = 0x40_0000
)

// vmmcPair is a two-node cluster where node 1's process rx exports two
// pages at rxBuf (with notifications or not) and node 0's process tx
// imports them.
func vmmcPair(notify bool) (*env.Env, *shrimptb.Cluster, *vmmc.Process, *vmmc.Process, *vmmc.Proxy) {
	GinkgoHelper()
	e, cl := vmmcCluster(nil)
	rx := cl.Nodes[1].Kernel.NewProcess("rx")
	tx := cl.Nodes[0].Kernel.NewProcess("tx")
	b, err := rx.Export(nil, rxBuf, 8192, notify)
	Expect(err).NotTo(HaveOccurred())
	px, err := tx.Import(nil, b)
	Expect(err).NotTo(HaveOccurred())
	return e, cl, rx, tx, px
}

var _ = Describe("VMMC on the SHRIMP cluster", func() {
	It("delivers an automatic update through a binding, and a deliberate update through a proxy", func() {
		e, cl, _, tx, px := vmmcPair(false)
		Expect(px.OPT).To(HaveLen(2))
		Expect(tx.Bind(nil, txBuf, px, 0, 4096, false, 4096)).To(Succeed())
		var sendErr error
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(txBuf+8, 0xA0A0_0001) // AU: bound page 0
			p.Store32(txBuf+4096+16, 0xD0D0_0002)
			// DU: 4 bytes from the second (unbound) local page to the
			// buffer's second page.
			sendErr = tx.Send(p, txBuf+4096+16, px, 4096+16, 4, false)
		}))
		runClean(e, cl)
		Expect(sendErr).NotTo(HaveOccurred())
		Expect(word(cl, 1, rxBuf+8)).To(Equal(uint32(0xA0A0_0001)))
		Expect(word(cl, 1, rxBuf+4096+16)).To(Equal(uint32(0xD0D0_0002)))
		Expect(tx.Stats().Pieces).To(Equal(uint64(1)))
	})

	It("splits a send at the local and the remote page boundaries", func() {
		e, cl, _, tx, px := vmmcPair(false)
		var sendErr error
		// 512 bytes from 0x40_0F00 (256 to the local page end) to buffer
		// offset 0xF80 (128 to the remote page end): pieces 128, 128, 256.
		src := uint64(txBuf + 0xF00)
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			for i := uint64(0); i < 512; i += 4 {
				p.Store32(src+i, uint32(i)|0x7700_0000)
			}
			sendErr = tx.Send(p, src, px, 0xF80, 512, false)
		}))
		runClean(e, cl)
		Expect(sendErr).NotTo(HaveOccurred())
		Expect(tx.Stats().Pieces).To(Equal(uint64(3)))
		for i := uint64(0); i < 512; i += 4 {
			Expect(word(cl, 1, rxBuf+0xF80+i)).To(Equal(uint32(i)|0x7700_0000), "byte %d", i)
		}
	})

	It("refuses an unaligned bind and leaves the OPT untouched", func() {
		_, cl, _, tx, px := vmmcPair(false)
		page := int(txBuf / 4096)
		before := cl.Nodes[0].NI.OPT(page)
		Expect(tx.Bind(nil, txBuf+64, px, 0, 4096, false, 4096)).To(MatchError(ContainSubstring("not page-aligned")))
		Expect(tx.Bind(nil, txBuf, px, 64, 4096, false, 4096)).To(MatchError(ContainSubstring("not page-aligned")))
		Expect(cl.Nodes[0].NI.OPT(page)).To(Equal(before))
	})

	It("faults a store to a device-proxy page never imported, and the NI sees nothing", func() {
		e, cl := vmmcCluster(nil)
		tx := cl.Nodes[0].Kernel.NewProcess("tx")
		_ = tx
		n0 := cl.Nodes[0]
		faults := 0
		n0.CPUs[0].SetFaultHandler(cpu.Sequential(func(p *cpu.Proc, f *cpu.Frame) {
			faults++
			// The handler grants nothing: the access is dropped and
			// reported; the spec takes the report as the fault's proof.
		}))
		before := n0.NI.Counters()
		n0.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(cl.Config.Map.DevProxy+7*4096, 4)
		}))
		_, _ = e.Run()
		Expect(faults).To(Equal(1))
		Expect(n0.NI.Counters()).To(Equal(before))
	})

	It("makes the UDMA pair again when a context switch invalidates its STORE", func() {
		e, cl := vmmcCluster(nil)
		rx := cl.Nodes[1].Kernel.NewProcess("rx")
		k := cl.Nodes[0].Kernel
		tx := k.NewProcess("tx")
		other := k.NewProcess("other")
		b, err := rx.Export(nil, rxBuf, 4096, false)
		Expect(err).NotTo(HaveOccurred())
		px, err := tx.Import(nil, b)
		Expect(err).NotTo(HaveOccurred())
		n0 := cl.Nodes[0]
		var status uint32
		n0.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(txBuf, 0xC0FFEE)
			dst := cl.Config.Map.DevProxy + uint64(px.OPT[0])*4096
			p.Store32(dst, 4) // the first reference
			k.ContextSwitch(p, other)
			k.ContextSwitch(p, tx)
			status = p.Load32(cl.Config.Map.MemProxy + txBuf) // refused: no destination
			Expect(tx.Send(p, txBuf, px, 0, 4, false)).To(Succeed())
		}))
		runClean(e, cl)
		Expect(status&0x104).To(Equal(uint32(0x104)), "Error|CauseNoDest") // shrimp.StatusError|shrimp.CauseNoDest
		Expect(word(cl, 1, rxBuf)).To(Equal(uint32(0xC0FFEE)))
	})

	It("refuses to replace a page a queued deliberate update still reads", func() {
		e, cl := vmmcCluster(func(c *shrimptb.Config) { c.NI.DUQueue = 2; c.Params.AsyncSend = true })
		rx := cl.Nodes[1].Kernel.NewProcess("rx")
		k := cl.Nodes[0].Kernel
		tx := k.NewProcess("tx")
		b, err := rx.Export(nil, rxBuf, 4096, false)
		Expect(err).NotTo(HaveOccurred())
		px, err := tx.Import(nil, b)
		Expect(err).NotTo(HaveOccurred())
		var first, after error
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			Expect(tx.Send(p, txBuf, px, 0, 4096, false)).To(Succeed())
			first = k.ReplacePage(p, int(txBuf/4096))
			tx.Wait(p)
			after = k.ReplacePage(p, int(txBuf/4096))
		}))
		runClean(e, cl)
		Expect(errors.Is(first, vmmc.ErrDUPending)).To(BeTrue(), "%v", first)
		Expect(after).NotTo(HaveOccurred())
		Expect(k.Stats().Refused).To(Equal(uint64(1)))
		Expect(k.Stats().Replaced).To(Equal(uint64(1)))
	})

	It("deschedules an automatic-update writer above the FIFO threshold and resumes it", func() {
		// An 8 KB FIFO (the smallest that holds a 4 KB packet) with a 1 KB
		// threshold: 1024 per-store packets, 16 bytes of FIFO words each
		// (header + data word), fill it at about 120 MB/s while node 1's
		// EISA drains about 33 MB/s (design 3.4, 3.5), so it crosses.
		e, cl := vmmcCluster(func(c *shrimptb.Config) { c.NI.FIFOBytes = 8192; c.NI.FIFOThreshold = 1024 })
		rx := cl.Nodes[1].Kernel.NewProcess("rx")
		k := cl.Nodes[0].Kernel
		tx := k.NewProcess("tx")
		b, err := rx.Export(nil, rxBuf, 4096, false)
		Expect(err).NotTo(HaveOccurred())
		px, err := tx.Import(nil, b)
		Expect(err).NotTo(HaveOccurred())
		Expect(tx.Bind(nil, txBuf, px, 0, 4096, false, 4096)).To(Succeed())
		var last clock.Time
		cl.Nodes[0].CPUs[0].Run(cpu.Go(shrimptb.AUFlood{Local: txBuf, Stores: 1024, Span: 4096}.Program(&last)))
		runClean(e, cl)
		Expect(k.Stats().Deschedules).To(BeNumerically(">", 0))
		Expect(cl.Nodes[0].NI.Counters().Overflows).To(BeZero())
		Expect(word(cl, 1, rxBuf+4092)).To(Equal(uint32(1024)))
	})

	It("queues notifications while blocked and delivers them in order on unblock", func() {
		e, cl, rx, tx, px := vmmcPair(true)
		var got []shrimp.Notification
		var queuedAtUnblock int
		rx.OnNotify(func(p *cpu.Proc, n shrimp.Notification) { got = append(got, n) })
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(txBuf, 1)
			Expect(tx.Send(p, txBuf, px, 0, 4, true)).To(Succeed())    // page 0x100
			Expect(tx.Send(p, txBuf, px, 4096, 4, true)).To(Succeed()) // page 0x101
			Expect(tx.Send(p, txBuf, px, 8, 4, false)).To(Succeed())   // no notify bit
			p.Store32(txBuf+4, 2)
			Expect(tx.Send(p, txBuf+4, px, 4096+4, 4, false)).To(Succeed()) // the end mark
		}))
		cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			rx.Block(p)
			shrimptb.Poll(p, rxBuf+4096+4, 2, clock.Millisecond)
			queuedAtUnblock = rx.Queued()
			rx.Unblock(p)
		}))
		runClean(e, cl)
		// Two sends had the notify bit, to interrupting pages: two
		// records, held while blocked, delivered in arrival order.
		Expect(queuedAtUnblock).To(Equal(2))
		Expect(got).To(Equal([]shrimp.Notification{{Page: rxBuf / 4096, Src: 0}, {Page: rxBuf/4096 + 1, Src: 0}}))
		Expect(rx.Stats().Notifications).To(Equal(uint64(2)))
		Expect(cl.Nodes[1].Kernel.Stats().Notify).To(BeNumerically(">=", 1))
	})

	It("runs the handler at the interrupt's return with interrupts enabled: a record that arrives meanwhile is popped then, and delivered after it", func() {
		// VMMC's notifications are «similar in semantics to Unix signals»
		// and queued (section 2.2). The first handler computes 100 us;
		// node 0's three more notifying sends arrive meanwhile: a nested
		// interrupt pops their records into the kernel's queue (the NI's
		// queue does not wait for the handler), and they are delivered in
		// order after the first handler returns, never nested in it.
		e, cl, rx, tx, px := vmmcPair(true)
		var got []shrimp.Notification
		var masked []bool
		depth, deepest, queuedAfterFirst := 0, 0, -1
		rx.OnNotify(func(p *cpu.Proc, n shrimp.Notification) {
			depth++
			deepest = max(deepest, depth)
			masked = append(masked, p.CPU().Masked())
			if len(got) == 0 {
				p.Compute(6000) // 100 us at 60 MHz
				queuedAfterFirst = rx.Queued()
			}
			got = append(got, n)
			depth--
		})
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(txBuf, 1)
			Expect(tx.Send(p, txBuf, px, 0, 4, true)).To(Succeed()) // page 0x100
			for i := range 3 {
				Expect(tx.Send(p, txBuf, px, 4096+8*uint64(i), 4, true)).To(Succeed()) // page 0x101
			}
			p.Store32(txBuf+4, 2)
			Expect(tx.Send(p, txBuf+4, px, 4096+64, 4, false)).To(Succeed()) // the end mark
		}))
		cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			shrimptb.Poll(p, rxBuf+4096+64, 2, clock.Millisecond)
			p.Compute(12000) // the handlers' 200 us
		}))
		runClean(e, cl)
		first, second := shrimp.Notification{Page: rxBuf / 4096, Src: 0}, shrimp.Notification{Page: rxBuf/4096 + 1, Src: 0}
		Expect(got).To(Equal([]shrimp.Notification{first, second, second, second}))
		Expect(deepest).To(Equal(1), "a handler never runs inside another")
		Expect(masked).To(Equal([]bool{false, false, false, false}), "handlers run with interrupts enabled")
		Expect(queuedAfterFirst).To(Equal(3), "the records that came during the first handler were popped during it")
		Expect(cl.Nodes[1].Kernel.Stats().Interrupts).To(BeNumerically(">=", 2))
	})
})
