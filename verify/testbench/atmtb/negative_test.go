package atmtb_test

import (
	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/verify/testbench/atmtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// negRig is a two-node cluster with its segments connected and traced.
type negRig struct {
	e    *env.Env
	cl   *atmtb.Cluster
	segs []uint8
}

func newNegRig(mod func(c *atmtb.Config)) *negRig {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: tcClock, Trace: true, Seed: 1})
	c := atmtb.DefaultConfig()
	if mod != nil {
		mod(&c)
	}
	cl, err := atmtb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	segs, err := atmtb.Connect(cl)
	Expect(err).NotTo(HaveOccurred())
	return &negRig{e: e, cl: cl, segs: segs}
}

// run runs the rig to its end and returns the run's and Finish's errors.
func (r *negRig) run() (error, error) {
	_, err := r.e.Run()
	fin := r.cl.Finish()
	r.cl.Close()
	return err, fin
}

// refusals returns the rma.refuse records' side and reason.
func (r *negRig) refusals() []string {
	var out []string
	for _, rec := range r.e.Trace.Records() {
		if rec.Kind == "rma.refuse" {
			side, _ := rec.Get("side")
			why, _ := rec.Get("reason")
			out = append(out, rec.Path+" "+side+" "+why)
		}
	}
	return out
}

// segZero expects node's segment to be all zero (nothing written).
func (r *negRig) segZero(node int) {
	GinkgoHelper()
	b, err := r.cl.Nodes[node].Memory().Storage().Bytes(atmtb.SegBase, atmtb.SegBytes)
	Expect(err).NotTo(HaveOccurred())
	Expect(b).To(Equal(make([]byte, atmtb.SegBytes)))
}

// forged returns a cell from src to dst (its VC) with payload pl, sealed
// by the CRC-10 as a board would; id is a forged cell's id (node 0x7f).
func forged(id uint64, src, dst int, pl rma.Payload) [48]byte {
	GinkgoHelper()
	var b [48]byte
	if pl.Op >= rma.OpWrite && pl.Op <= rma.OpBlock && pl.Count >= 1 && pl.Count <= rma.MaxWords {
		var err error
		b, err = pl.Encode()
		Expect(err).NotTo(HaveOccurred())
	} else {
		// A payload Encode refuses: laid out by hand.
		b[0] = byte(pl.Op)<<5 | byte(pl.Count&0xf)
		b[1] = pl.Desc
	}
	fore.SealPayload(&b)
	return b
}

// forge injects payload b on VC (src, dst) into node dst's board.
func (r *negRig) forge(now clock.Time, id uint64, src, dst int, b [48]byte, spoil func(route []byte, data []byte)) {
	GinkgoHelper()
	f, err := atm.NewCell(0x7f<<40|id, atm.Header{VCI: rma.VCI(src, dst)}, b[:])
	Expect(err).NotTo(HaveOccurred())
	if spoil != nil {
		spoil(f.Route(), f.Data)
	}
	atmtb.Checks(r.cl).Forge(now, dst, f)
}

func words10() []uint32 { return []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} }

var _ = Describe("Refusals at the sender", func() {
	// Each trap checks descriptor, rights, bounds and count before
	// anything reaches the board (section 2.3): the trap returns the
	// reason, the refusal is counted and traced, no cell is sent and the
	// target's segment is untouched.
	DescribeTable("refuses the operation, sends nothing, writes nothing",
		func(op func(p *cpu.Proc, k *rma.Kernel) rma.Status, want rma.Status, setup func(r *negRig)) {
			r := newNegRig(nil)
			if setup != nil {
				setup(r)
			}
			k := r.cl.Nodes[0].Kernel
			var got rma.Status
			r.cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { got = op(p, k) }))
			runErr, finErr := r.run()
			Expect(runErr).NotTo(HaveOccurred())
			Expect(finErr).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
			Expect(k.Counters().RefusedSend[want]).To(Equal(uint64(1)))
			Expect(atmtb.RefOf(r.cl).Stats().RefusedSend[want]).To(Equal(uint64(1)))
			Expect(r.refusals()).To(Equal([]string{"N0.RMA send " + want.String()}))
			Expect(r.cl.Nodes[0].Board.Counters().TxCells).To(BeZero())
			r.segZero(1)
		},
		Entry("a descriptor register never loaded: desc", func(p *cpu.Proc, k *rma.Kernel) rma.Status {
			return k.Write(p, 40, 0, 10, false, words10())
		}, rma.ErrDesc, nil),
		Entry("WRITE through a read-only descriptor: rights", func(p *cpu.Proc, k *rma.Kernel) rma.Status {
			return k.Write(p, 5, 0, 10, false, words10())
		}, rma.ErrRights, func(r *negRig) {
			Expect(r.cl.Nodes[0].Kernel.Import(5, 1, r.segs[1], atmtb.SegBytes, rma.RightRead)).To(Succeed())
		}),
		Entry("off + count past the segment: bounds", func(p *cpu.Proc, k *rma.Kernel) rma.Status {
			return k.Write(p, 1, atmtb.SegBytes/4-5, 10, false, words10())
		}, rma.ErrBounds, nil),
		Entry("count 0: count", func(p *cpu.Proc, k *rma.Kernel) rma.Status {
			return k.Write(p, 1, 0, 0, false, nil)
		}, rma.ErrCount, nil),
		Entry("count 11: count", func(p *cpu.Proc, k *rma.Kernel) rma.Status {
			return k.Write(p, 1, 0, 11, false, append(words10(), 11))
		}, rma.ErrCount, nil),
		Entry("READ of 11 words: count", func(p *cpu.Proc, k *rma.Kernel) rma.Status {
			_, st := k.Read(p, 1, 0, 11, 0, 0, false)
			return st
		}, rma.ErrCount, nil),
		Entry("a block transfer from the kernel's memory: pointer", func(p *cpu.Proc, k *rma.Kernel) rma.Status {
			return k.Block(p, 1, 0, atmtb.DefaultConfig().KernelBase, 20, false)
		}, rma.ErrPointer, nil),
	)

	It("refuses a WRITE with the TX FIFO full (STATUS shows no room: AT-P17's overflow exception)", func() {
		// A TX FIFO of 2 cells in front of a link 17.5 times slower (1 MHz:
		// 53 us a cell): WRITE traps (about 5 us each) fill it.
		r := newNegRig(func(c *atmtb.Config) { c.Board.TxCells, c.Link.Clock = 2, clock.MHz(1) })
		k := r.cl.Nodes[0].Kernel
		var got []rma.Status
		r.cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			for i := range 4 {
				got = append(got, k.Write(p, 1, 10*i, 10, false, words10()))
			}
		}))
		runErr, finErr := r.run()
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		// The first cell leaves for the wire at once, two more fill the
		// FIFO, the fourth finds no room.
		Expect(got).To(Equal([]rma.Status{rma.OK, rma.OK, rma.OK, rma.ErrTxFull}))
		Expect(r.refusals()).To(Equal([]string{"N0.RMA send txfull"}))
		Expect(k.Counters().RefusedSend[rma.ErrTxFull]).To(Equal(uint64(1)))
		Expect(r.cl.Nodes[1].Kernel.Counters().Received[rma.OpWrite]).To(Equal(uint64(3)))
		Expect(r.cl.Nodes[0].Board.Counters().TxOverflow).To(BeZero())
	})

	It("reports a store to the TX port with the FIFO full (fore.txfull: software must read STATUS first)", func() {
		r := newNegRig(func(c *atmtb.Config) { c.Board.TxCells, c.Link.Clock = 2, clock.MHz(1) })
		base := r.cl.Config.BoardBase
		r.cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			cell := make([]byte, fore.CellBytes)
			copy(cell, []byte{0x00, 0x02, 0x10, 0x00}) // any header: VCI 33
			for range 4 {
				p.Step(cpu.Step{Label: "raw-store", Instrs: fore.CellWords, Accesses: []cpu.Access{
					{Addr: base + fore.TxPort, Data: cell, Write: true, IO: true, Burst: true, Instrs: fore.CellWords}}})
			}
		}))
		runErr, _ := r.run()
		Expect(runErr).To(HaveOccurred())
		v := r.e.Monitor.Violations()
		Expect(v).NotTo(BeEmpty())
		Expect(v[0].Check).To(Equal("fore.txfull"), v[0].String())
		Expect(r.cl.Nodes[0].Board.Counters().TxOverflow).To(BeNumerically(">", 0))
	})
})

var _ = Describe("Refusals at the receiver (forged cells)", func() {
	// A cell injected on node 1's link side as if from the wire: node 1's
	// kernel checks it (section 2.3) and refuses it with the reason; the
	// checkers agree (Ref's verdict is the same), nothing is written.
	type forgery struct {
		src   int
		pl    rma.Payload
		setup func(r *negRig)
	}
	wr := func(desc uint8, off uint16, n int) rma.Payload {
		pl := rma.Payload{Op: rma.OpWrite, Count: n, Desc: desc, Offset: off}
		for i := range min(n, rma.MaxWords) {
			pl.SetWord(i, uint32(0xa0+i))
		}
		return pl
	}
	DescribeTable("refuses the cell, writes nothing",
		func(f forgery, want rma.Status) {
			r := newNegRig(nil)
			if f.setup != nil {
				f.setup(r)
			}
			r.forge(0, 1, f.src, 1, forged(1, f.src, 1, f.pl), nil)
			runErr, finErr := r.run()
			Expect(runErr).NotTo(HaveOccurred())
			Expect(finErr).NotTo(HaveOccurred())
			Expect(r.cl.Nodes[1].Kernel.Counters().RefusedRecv[want]).To(Equal(uint64(1)))
			Expect(atmtb.RefOf(r.cl).Stats().RefusedRecv[want]).To(Equal(uint64(1)))
			Expect(r.refusals()).To(Equal([]string{"N1.RMA recv " + want.String()}))
			r.segZero(1)
			r.segZero(0)
		},
		Entry("a segment never exported: desc", forgery{src: 0, pl: wr(9, 0, 10)}, rma.ErrDesc),
		Entry("a revoked segment: desc", forgery{src: 0, pl: wr(0, 0, 10), setup: func(r *negRig) {
			Expect(r.cl.Nodes[1].Kernel.Revoke(r.segs[1])).To(Succeed())
			atmtb.RefOf(r.cl).Revoke(1, r.segs[1])
		}}, rma.ErrDesc),
		Entry("a VC from a node outside the cluster: vci", forgery{src: 3, pl: wr(0, 0, 10)}, rma.ErrSrcVCI),
		Entry("a segment not granted to the source: vci", forgery{src: 0, pl: wr(1, 0, 10), setup: func(r *negRig) {
			s, err := r.cl.Nodes[1].Kernel.Export(atmtb.SegBase+atmtb.SegBytes, rma.PageBytes, rma.RightRead|rma.RightWrite)
			Expect(err).NotTo(HaveOccurred())
			Expect(s).To(Equal(uint8(1)))
		}}, rma.ErrSrcVCI),
		Entry("a read-only segment written: rights", forgery{src: 0, pl: wr(1, 0, 10), setup: func(r *negRig) {
			_, err := r.cl.Nodes[1].Kernel.Export(atmtb.SegBase+atmtb.SegBytes, rma.PageBytes, rma.RightRead, 0)
			Expect(err).NotTo(HaveOccurred())
		}}, rma.ErrRights),
		Entry("words past the segment: bounds", forgery{src: 0, pl: wr(0, atmtb.SegBytes/4-3, 10)}, rma.ErrBounds),
		Entry("an unpinned page: unpinned", forgery{src: 0, pl: wr(0, 0, 10), setup: func(r *negRig) {
			Expect(r.cl.Nodes[1].Kernel.Unpin(r.segs[1], 0)).To(Succeed())
			atmtb.RefOf(r.cl).Unpin(1, r.segs[1], 0)
		}}, rma.ErrUnpinned),
		Entry("a READ reply with no outstanding request: noreq", forgery{src: 0,
			pl: rma.Payload{Op: rma.OpReadReply, Count: 2, Desc: 0, Offset: 0, ReqID: 77}}, rma.ErrNoRequest),
		Entry("a CAS reply with no outstanding request: noreq", forgery{src: 0,
			pl: rma.Payload{Op: rma.OpCASReply, Count: 1, Desc: 0, Offset: 0, ReqID: 78}}, rma.ErrNoRequest),
		Entry("count 0: count", forgery{src: 0, pl: rma.Payload{Op: rma.OpWrite, Count: 0}}, rma.ErrCount),
		Entry("count 11: count", forgery{src: 0, pl: rma.Payload{Op: rma.OpWrite, Count: 11}}, rma.ErrCount),
		Entry("an op that does not exist: op", forgery{src: 0, pl: rma.Payload{Op: 7, Count: 1}}, rma.ErrOp),
	)

	It("refuses a WRITE into a segment its owner write-inhibited: inhibit", func() {
		r := newNegRig(nil)
		k := r.cl.Nodes[1].Kernel
		r.cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			k.Inhibit(p, r.segs[1], true)
			r.forge(p.Now(), 1, 0, 1, forged(1, 0, 1, wr(0, 0, 10)), nil)
		}))
		runErr, finErr := r.run()
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		Expect(k.Counters().RefusedRecv[rma.ErrInhibit]).To(Equal(uint64(1)))
		Expect(r.refusals()).To(Equal([]string{"N1.RMA recv inhibit"}))
		r.segZero(1)
	})

	DescribeTable("the board discards a damaged cell before the kernel sees it",
		func(spoil func(route, data []byte), reason fore.DropReason) {
			r := newNegRig(nil)
			r.forge(0, 1, 0, 1, forged(1, 0, 1, wr(0, 0, 10)), spoil)
			runErr, finErr := r.run()
			Expect(runErr).NotTo(HaveOccurred())
			Expect(finErr).NotTo(HaveOccurred())
			bc := r.cl.Nodes[1].Board.Counters()
			Expect(bc.RxCells).To(BeZero())
			Expect(r.cl.Nodes[1].Kernel.Counters().Interrupts).To(BeZero())
			var drops []string
			for _, rec := range r.e.Trace.Records() {
				if rec.Kind == "fore.drop" {
					why, _ := rec.Get("reason")
					drops = append(drops, why)
				}
			}
			Expect(drops).To(Equal([]string{reason.String()}))
			s := atmtb.RefOf(r.cl).Stats()
			Expect(s.LostHEC + s.LostCRC).To(Equal(uint64(1)))
			r.segZero(1)
		},
		Entry("a header whose HEC does not match: hec", func(route, _ []byte) { route[4] ^= 0x01 }, fore.DropHEC),
		Entry("a payload bit flipped after the CRC-10 was made: crc", func(_, data []byte) { data[10] ^= 0x04 }, fore.DropCRC),
	)

	It("accepts the same forged cell when it is legal (the specs above differ only in what they break)", func() {
		r := newNegRig(nil)
		r.forge(0, 1, 0, 1, forged(1, 0, 1, wr(0, 0, 10)), nil)
		runErr, finErr := r.run()
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		Expect(r.refusals()).To(BeEmpty())
		b, err := r.cl.Nodes[1].Memory().Storage().Bytes(atmtb.SegBase, 8)
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(Equal([]byte{0xa0, 0, 0, 0, 0xa1, 0, 0, 0}))
		Expect(atmtb.RefOf(r.cl).Stats().MemWrites).To(Equal(uint64(10)))
	})

	// The protection checker against a broken kernel table: node 1
	// exports a read-only segment, and its record in kernel memory is
	// forged to grant writes (rights bits 8-9 of word 0, rma's segment
	// table), so the kernel accepts a WRITE into it; Ref, which knows the
	// export, does not: rma.protect, and the write is there.
	It("catches a write a forged segment record lets into a read-only segment (rma.protect)", func() {
		r := newNegRig(nil)
		k := r.cl.Nodes[1].Kernel
		seg, err := k.Export(atmtb.SegBase+atmtb.SegBytes, rma.PageBytes, rma.RightRead, 0)
		Expect(err).NotTo(HaveOccurred())
		st := r.cl.Nodes[1].Memory().Storage()
		rec := r.cl.Config.KernelBase + 0x1000 + uint64(seg)*512
		w0, err := st.Bytes(rec, 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(w0[1] & 3).To(Equal(byte(rma.RightRead)))
		Expect(st.Write(rec+1, []byte{w0[1] | byte(rma.RightWrite)})).To(Succeed())
		r.forge(0, 1, 0, 1, forged(1, 0, 1, wr(seg, 0, 2)), nil)
		runErr, finErr := r.run()
		Expect(runErr).To(HaveOccurred())
		Expect(finErr).To(HaveOccurred())
		v := r.e.Monitor.Violations()
		Expect(v).NotTo(BeEmpty())
		Expect(v[0].Check).To(Equal(atmtb.RuleProtect), v[0].String())
		Expect(v[0].Msg).To(ContainSubstring("Ref's rights"))
		Expect(k.Counters().Received[rma.OpWrite]).To(Equal(uint64(1)))
	})
})
