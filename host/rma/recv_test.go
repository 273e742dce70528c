package rma_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/vtest"
)

var _ = Describe("receiver checks", func() {
	// Each forged cell reaches node 0 from the wire (Board.Inject): the
	// handler reads it, refuses it with its reason, counts and traces the
	// refusal and writes nothing.
	write := func(desc uint8, off uint16, n int) rma.Payload {
		p := rma.Payload{Op: rma.OpWrite, Count: n, Desc: desc, Offset: off}
		for i := range rma.MaxWords {
			p.SetWord(i, 0xA0+uint32(i))
		}
		return p
	}
	DescribeTable("refuse a forged cell, count it, trace it and write nothing",
		func(setup func(r *rig, seg uint8), vci uint16, pl func(seg uint8) rma.Payload, want rma.Status) {
			r := newRig(nil)
			ids := r.share(rma.RightRead | rma.RightWrite)
			if setup != nil {
				setup(r, ids[0])
			}
			fl := forged(7, vci, pl(ids[0]))
			vtest.AtCycle(r.e, "Forge", cpuClock, 20, func(now clock.Time) { r.nodes[0].board.Inject(now, fl) })
			Expect(r.run()).To(Succeed())
			k := r.nodes[0].kernel
			Expect(k.Counters().RefusedRecv[want]).To(Equal(uint64(1)), want.String())
			recs := r.records("rma.refuse")
			Expect(recs).To(HaveLen(1))
			Expect(field(recs[0], "side")).To(Equal("recv"))
			Expect(field(recs[0], "reason")).To(Equal(want.String()))
			Expect(r.records("rma.mem")).To(BeEmpty())
			Expect(r.words(0, segBase, 1024)).To(Equal(make([]uint32, 1024)))
			var kinds []rma.EventKind
			for _, ev := range r.nodes[0].events {
				kinds = append(kinds, ev.Kind)
			}
			Expect(kinds).To(Equal([]rma.EventKind{rma.EvRefuseRecv}))
			Expect(r.nodes[0].events[0].Reason).To(Equal(want))
			// The refused cell still runs the handler's path: Table 1's
			// dispatcher and handler, then its data step.
			st := r.steps(0)
			Expect(st[len(st)-3 : len(st)-1]).To(Equal([]string{"rma.dispatch 73", "rma.handler 21"}))
			Expect(st[len(st)-1]).To(HavePrefix("rma.rx-"))
		},
		Entry("an op that does not decode", nil, rma.VCI(1, 0),
			func(uint8) rma.Payload { return rma.Payload{Op: 7, Count: 1} }, rma.ErrOp),
		Entry("a count of 0", nil, rma.VCI(1, 0),
			func(s uint8) rma.Payload { return rma.Payload{Op: rma.OpWrite, Count: 0, Desc: s} }, rma.ErrCount),
		Entry("a VCI outside the RMA range", nil, uint16(5),
			func(s uint8) rma.Payload { return write(s, 0, 1) }, rma.ErrSrcVCI),
		Entry("a VCI addressed to another node", nil, rma.VCI(1, 1),
			func(s uint8) rma.Payload { return write(s, 0, 1) }, rma.ErrSrcVCI),
		Entry("a source the segment is not granted to", func(r *rig, _ uint8) {
			_, err := r.nodes[0].kernel.Export(segBase+8192, 4096, rma.RightWrite) // granted to nobody
			Expect(err).NotTo(HaveOccurred())
		}, rma.VCI(1, 0), func(s uint8) rma.Payload { return write(s+1, 0, 1) }, rma.ErrSrcVCI),
		Entry("a descriptor never exported", nil, rma.VCI(1, 0),
			func(uint8) rma.Payload { return write(77, 0, 1) }, rma.ErrDesc),
		Entry("a revoked segment", func(r *rig, s uint8) { Expect(r.nodes[0].kernel.Revoke(s)).To(Succeed()) },
			rma.VCI(1, 0), func(s uint8) rma.Payload { return write(s, 0, 1) }, rma.ErrDesc),
		Entry("a read-only segment", func(r *rig, _ uint8) {
			_, err := r.nodes[0].kernel.Export(segBase+8192, 4096, rma.RightRead, 1)
			Expect(err).NotTo(HaveOccurred())
		}, rma.VCI(1, 0), func(s uint8) rma.Payload { return write(s+1, 0, 1) }, rma.ErrRights),
		Entry("past the segment's end: word 1020 + 5 > 1024", nil, rma.VCI(1, 0),
			func(s uint8) rma.Payload { return write(s, 1020, 5) }, rma.ErrBounds),
		Entry("a write-inhibited segment", func(r *rig, s uint8) {
			r.nodes[0].cpu.Run(cpu.Go(func(p *cpu.Proc) { r.nodes[0].kernel.Inhibit(p, s, true) }))
		}, rma.VCI(1, 0), func(s uint8) rma.Payload { return write(s, 0, 1) }, rma.ErrInhibit),
		Entry("an unpinned page", func(r *rig, s uint8) { Expect(r.nodes[0].kernel.Unpin(s, 0)).To(Succeed()) },
			rma.VCI(1, 0), func(s uint8) rma.Payload { return write(s, 0, 1) }, rma.ErrUnpinned),
		Entry("a READ reply with no outstanding request", nil, rma.VCI(1, 0),
			func(s uint8) rma.Payload {
				p := write(s, 0, 2)
				p.Op, p.ReqID = rma.OpReadReply, 42
				return p
			}, rma.ErrNoRequest),
		Entry("a CAS reply with no outstanding request", nil, rma.VCI(1, 0),
			func(s uint8) rma.Payload {
				p := write(s, 0, 1)
				p.Op, p.ReqID = rma.OpCASReply, 43
				return p
			}, rma.ErrNoRequest),
	)

	It("checks the cells it reads, so a forged segment record changes the outcome", func() {
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		// Forge the record's bytes word (w2) to 8 bytes: a 3-word write is
		// then out of bounds although the segment was exported with 4 KB.
		Expect(r.nodes[0].mem.Storage().Write(kernelBase+0x1000+512*uint64(ids[0])+8, le([]uint32{8}))).To(Succeed())
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			Expect(r.nodes[1].kernel.Write(p, 0, 0, 3, false, seq(3, 1))).To(Equal(rma.OK))
		}))
		Expect(r.run()).To(Succeed())
		Expect(r.nodes[0].kernel.Counters().RefusedRecv[rma.ErrBounds]).To(Equal(uint64(1)))
		Expect(r.words(0, segBase, 3)).To(Equal([]uint32{0, 0, 0}))
	})
})

var _ = Describe("the interrupt handler", func() {
	It("drains a burst of cells in one interrupt (section 2.3 «only the first arrival would interrupt»)", func() {
		r := newRig(nil)
		r.share(rma.RightRead | rma.RightWrite)
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			for i := range 4 {
				Expect(r.nodes[1].kernel.Write(p, 0, 10*i, 10, false, seq(10, uint32(100*i)))).To(Equal(rma.OK))
			}
		}))
		// Node 0 keeps interrupts masked until all four cells are in its RX
		// FIFO, so one interrupt finds them all.
		r.nodes[0].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			p.DisableInterrupts()
			p.PollUntil(func() bool { return r.nodes[0].board.RxLen() == 4 })
			p.EnableInterrupts()
		}))
		Expect(r.run()).To(Succeed())
		for i := range 4 {
			Expect(r.words(0, segBase+40*uint64(i), 10)).To(Equal(seq(10, uint32(100*i))))
		}
		c := r.nodes[0].kernel.Counters()
		Expect(c.Interrupts).To(Equal(uint64(1)))
		Expect(c.Drained[4]).To(Equal(uint64(1)))
		// One dispatcher for the burst; the device handler (its STATUS
		// read) and the 58 per cell: «the overhead on the receiving side
		// is on a per cell basis» (section 2.3; Params.RxBatch 1).
		Expect(r.steps(0)).To(Equal([]string{"rma.dispatch 73",
			"rma.handler 21", "rma.rx-write 58", "rma.handler 21", "rma.rx-write 58",
			"rma.handler 21", "rma.rx-write 58", "rma.handler 21", "rma.rx-write 58"}))
	})

	It("answers a READ drained right behind a WRITE of the same words with the written words", func() {
		// A slow memory (200 cycles) keeps the WRITE's last stores in
		// flight when the READ's step reads the words.
		memLatency = 200
		DeferCleanup(func() { memLatency = 5 })
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		var id uint16
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			k := r.nodes[1].kernel
			Expect(k.Write(p, 0, 0, 10, false, seq(10, 300))).To(Equal(rma.OK))
			var st rma.Status
			id, st = k.Read(p, 0, 0, 10, int(ids[1]), 100, false)
			Expect(st).To(Equal(rma.OK))
			p.WaitUntil(func() bool { return k.Done(id) })
		}))
		// Both cells wait in node 0's FIFO: the READ's step runs while the
		// WRITE's ten stores may still be on their way to memory.
		r.nodes[0].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			p.DisableInterrupts()
			p.PollUntil(func() bool { return r.nodes[0].board.RxLen() == 2 })
			p.EnableInterrupts()
		}))
		Expect(r.run()).To(Succeed())
		Expect(r.words(1, segBase+400, 10)).To(Equal(seq(10, 300)))
		Expect(r.nodes[0].kernel.Counters().Drained[2]).To(Equal(uint64(1)))
	})

	It("notifies the owning process of an intr=1 WRITE", func() {
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		var got []int
		r.nodes[0].kernel.OnNotify(func(_ *cpu.Proc, seg uint8, off, n int) { got = append(got, int(seg), off, n) })
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			Expect(r.nodes[1].kernel.Write(p, 0, 3, 2, true, seq(2, 9))).To(Equal(rma.OK))
		}))
		Expect(r.run()).To(Succeed())
		Expect(got).To(Equal([]int{int(ids[0]), 3, 2}))
		Expect(r.nodes[0].kernel.Counters().Notifies).To(Equal(uint64(1)))
	})
})

var _ = Describe("CAS", func() {
	It("swaps once and returns the old value", func() {
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		Expect(r.nodes[0].mem.Storage().Write(segBase+16, le([]uint32{5}))).To(Succeed())
		var olds []uint32
		var oks []bool
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			for _, c := range [][2]uint32{{5, 6}, {5, 7}} {
				o, ok := r.nodes[1].kernel.CAS(p, 0, 4, c[0], c[1], int(ids[1]), 0)
				olds, oks = append(olds, o), append(oks, ok)
			}
		}))
		Expect(r.run()).To(Succeed())
		Expect(olds).To(Equal([]uint32{5, 6}))
		Expect(oks).To(Equal([]bool{true, false}))
		Expect(r.words(0, segBase+16, 1)).To(Equal([]uint32{6}))
		// The old value also lands at the requester's reply word.
		Expect(r.words(1, segBase, 1)).To(Equal([]uint32{6}))
		Expect(r.nodes[0].kernel.Counters().CASExec).To(Equal(uint64(2)))
		// The request's EvSend carries old, new and the reply location.
		var sent [][]byte
		for _, ev := range r.nodes[1].events {
			if ev.Kind == rma.EvSend {
				sent = append(sent, ev.Data)
			}
		}
		Expect(sent).To(HaveLen(2))
		Expect(sent[0]).To(Equal([]byte{5, 0, 0, 0, 6, 0, 0, 0, ids[1], 0, 0, 0}))
		// READ's shape: the request 25+37, the target 73+21+67, the reply
		// 73+21+31 (one word: 58 − 27).
		target := []string{"rma.dispatch 73", "rma.handler 21", "rma.rx-cas 67"}
		Expect(r.steps(0)).To(Equal(append(append([]string{}, target...), target...)))
		src := []string{"rma.cross-in 13", "rma.read-tx 37", "rma.cross-out 12", "rma.dispatch 73", "rma.handler 21", "rma.rx-write 31"}
		Expect(r.steps(1)).To(Equal(append(append([]string{}, src...), src...)))
	})

	It("gives up, counted, on a CAS its target keeps refusing", func() {
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		r.nodes[0].cpu.Run(cpu.Go(func(p *cpu.Proc) { r.nodes[0].kernel.Inhibit(p, ids[0], true) }))
		var ok bool
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			p.Compute(500) // after the inhibit call
			_, ok = r.nodes[1].kernel.CAS(p, 0, 4, 0, 1, int(ids[1]), 0)
		}))
		Expect(r.run()).To(Succeed())
		Expect(ok).To(BeFalse())
		// The first send and MaxCASTries resends, each refused.
		Expect(r.nodes[0].kernel.Counters().RefusedRecv[rma.ErrInhibit]).To(Equal(uint64(rma.MaxCASTries + 1)))
		Expect(r.nodes[1].kernel.Counters().CASFailed).To(Equal(uint64(1)))
		Expect(r.words(0, segBase+16, 1)).To(Equal([]uint32{0}))
	})

	It("never gives a new CAS the id the target has cached, even after the id counter wraps", func() {
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		k := r.nodes[1].kernel
		var olds []uint32
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			k.SetNextReq(100)
			o, _ := k.CAS(p, 0, 4, 0, 1, int(ids[1]), 0)
			olds = append(olds, o)
			k.SetNextReq(100) // the counter came round to the cached id
			o, _ = k.CAS(p, 0, 4, 1, 2, int(ids[1]), 0)
			olds = append(olds, o)
		}))
		Expect(r.run()).To(Succeed())
		Expect(olds).To(Equal([]uint32{0, 1}))
		Expect(r.words(0, segBase+16, 1)).To(Equal([]uint32{2}))
		c := r.nodes[0].kernel.Counters()
		Expect([]uint64{c.CASExec, c.CASDup}).To(Equal([]uint64{2, 0}))
	})

	It("resends on timeout after a lost reply; the target answers from its cache and executes once", func() {
		r := newRig(nil)
		ids := r.share(rma.RightRead | rma.RightWrite)
		Expect(r.nodes[0].mem.Storage().Write(segBase+16, le([]uint32{5}))).To(Succeed())
		dropped := false
		r.nodes[0].board.DropNextTx(func(c *fore.Cell) bool {
			p, err := rma.Decode(c.Payload)
			dropped = dropped || (err == nil && p.Op == rma.OpCASReply)
			return err == nil && p.Op == rma.OpCASReply
		})
		var old uint32
		var ok bool
		var t0, t1 clock.Time
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			t0 = p.Now()
			old, ok = r.nodes[1].kernel.CAS(p, 0, 4, 5, 9, int(ids[1]), 0)
			t1 = p.Now()
		}))
		Expect(r.run()).To(Succeed())
		Expect(dropped).To(BeTrue())
		Expect([]any{old, ok}).To(Equal([]any{uint32(5), true}))
		Expect(r.words(0, segBase+16, 1)).To(Equal([]uint32{9}))
		c0, c1 := r.nodes[0].kernel.Counters(), r.nodes[1].kernel.Counters()
		Expect([]uint64{c0.CASExec, c0.CASDup, c1.Retransmits}).To(Equal([]uint64{1, 1, 1}))
		// One store of the new value, none for the resend.
		Expect(r.records("rma.cas")).To(HaveLen(1))
		Expect(r.records("rma.dup")).To(HaveLen(1))
		Expect(r.records("rma.retx")).To(HaveLen(1))
		Expect(field(r.records("rma.retx")[0], "req")).To(Equal(field(r.records("rma.dup")[0], "req")))
		// The CAS took more than its timeout (400 µs).
		Expect(t1 - t0).To(BeNumerically(">", r.nodes[1].kernel.Params().CASTimeout))
	})
})

var _ = Describe("block transfer", func() {
	It("sends 25 words in one trap as three cells, a pointer check each", func() {
		r := newRig(nil)
		r.share(rma.RightRead | rma.RightWrite)
		const buf = 0x2_0000
		Expect(r.nodes[1].mem.Storage().Write(buf, le(seq(25, 1000)))).To(Succeed())
		var st rma.Status
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			st = r.nodes[1].kernel.Block(p, 0, 100, buf, 25, false)
		}))
		Expect(r.run()).To(Succeed())
		Expect(st).To(Equal(rma.OK))
		Expect(r.words(0, segBase+400, 25)).To(Equal(seq(25, 1000)))
		// BlockCheck 20 + the cell's loads from the user buffer (10, 10,
		// 5); the send step is the WRITE's (32, the whole cell written).
		Expect(r.steps(1)).To(Equal([]string{"rma.cross-in 13",
			"rma.block-check 30", "rma.write-tx 32",
			"rma.block-check 30", "rma.write-tx 32",
			"rma.block-check 25", "rma.write-tx 32",
			"rma.cross-out 12"}))
		// The receiver's copy shrinks with the last cell's 5 words: 58 − 15.
		Expect(r.steps(0)[len(r.steps(0))-1]).To(Equal("rma.rx-write 43"))
		Expect(r.nodes[0].kernel.Counters().Received[rma.OpBlock]).To(Equal(uint64(3)))
	})
})

var _ = Describe("block transfer of one cell", func() {
	It("costs the pointer check more than a WRITE (section 2.3 «higher latency because of the overhead of pointer checking»)", func() {
		r := newRig(nil)
		r.share(rma.RightRead | rma.RightWrite)
		const buf = 0x2_0000
		Expect(r.nodes[1].mem.Storage().Write(buf, le(seq(10, 1)))).To(Succeed())
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			Expect(r.nodes[1].kernel.Block(p, 0, 0, buf, 10, false)).To(Equal(rma.OK))
		}))
		Expect(r.run()).To(Succeed())
		// 13 + (20 + 10 loads) + 32 + 12 = 87 against the WRITE's 57.
		Expect(r.nodes[1].cpu.Instructions()).To(Equal(uint64(87)))
		Expect(r.words(0, segBase, 10)).To(Equal(seq(10, 1)))
	})
})

var _ = Describe("raw mode", func() {
	It("sends and polls a cell with no trap, no check and no interrupt", func() {
		r := newRig(nil)
		var pl [46]byte
		for i := range pl {
			pl[i] = byte(i + 1)
		}
		var got [48]byte
		var vci uint16
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			r.nodes[1].kernel.Raw().Send(p, atmHeader(rma.VCI(1, 0)), pl)
		}))
		r.nodes[0].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			raw := r.nodes[0].kernel.Raw()
			for {
				b, h, ok := raw.Poll(p)
				if ok {
					got, vci = b, h.VCI
					return
				}
			}
		}))
		Expect(r.run()).To(Succeed())
		Expect(got[:46]).To(Equal(pl[:]))
		Expect(vci).To(Equal(rma.VCI(1, 0)))
		Expect(r.nodes[0].cpu.Interrupts()).To(BeZero())
		Expect(r.nodes[1].cpu.Traps()).To(BeZero())
		st := r.steps(1)
		Expect(st[len(st)-1]).To(Equal("rma.raw-send 24"))
		st = r.steps(0)
		Expect(st[len(st)-1]).To(Equal("rma.raw-recv 14"))
	})

	It("stops a receiver polling for a cell the link lost with a stuck report (its STATUS polls are not progress), not at the time limit", func() {
		r := newRig(nil)
		r.nodes[1].board.DropNextTx(func(*fore.Cell) bool { return true })
		r.nodes[1].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			r.nodes[1].kernel.Raw().Send(p, atmHeader(rma.VCI(1, 0)), [46]byte{1})
		}))
		r.nodes[0].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			for {
				if _, _, ok := r.nodes[0].kernel.Raw().Poll(p); ok {
					return
				}
			}
		}))
		res, err := r.Run()
		Expect(res.Stuck).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("no progress for more than 500us")))
		Expect(err).To(MatchError(ContainSubstring("polling")))
		// The last progress is node 1's send (its steps and the drop);
		// the watchdog fires 500 µs (env.DefaultStallLimit) later, far
		// before the rig's 100 ms limit.
		Expect(res.End).To(BeNumerically("<", env.DefaultStallLimit+50*clock.Microsecond))
	})
})
