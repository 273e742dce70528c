package atmtb_test

import (
	"encoding/binary"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/testbench/atmtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// casLoop is a process's CAS increments of node d's counter at word
// off: n increments, each retried from the value seen until it swaps.
// It returns how many swapped (all of them, if CAS loses nothing).
func casLoop(p *cpu.Proc, k *rma.Kernel, d, off, reply, n int, own uint8) int {
	done, guess := 0, uint32(0)
	for range n {
		for try := 0; try < 64; try++ {
			seen, swapped := k.CAS(p, d, off, guess, guess+1, int(own), reply)
			if swapped {
				guess++
				done++
				break
			}
			guess = seen
		}
	}
	return done
}

// counter reads node's segment word w.
func counter(cl *atmtb.Cluster, node, w int) uint32 {
	GinkgoHelper()
	b, err := cl.Nodes[node].Memory().Storage().Bytes(atmtb.SegBase+4*uint64(w), 4)
	Expect(err).NotTo(HaveOccurred())
	return binary.LittleEndian.Uint32(b)
}

var _ = Describe("Faults", func() {
	It("switch output overflow: 3 hosts stream to 1 through the ASX-100 (16-cell queues): drops counted, CAS loses nothing", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock, Seed: 1})
		c := atmtb.DefaultConfig()
		c.Nodes, c.Switched = 4, true
		c.Switch = c.Switch.WithQueueDepth(16)
		cl, err := atmtb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		segs, err := atmtb.Connect(cl)
		Expect(err).NotTo(HaveOccurred())
		const words, casN = 1000, 10 // 100 cells per sender
		swaps := make([]int, 4)
		for s := 1; s < 4; s++ {
			k := cl.Nodes[s].Kernel
			cl.Nodes[s].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				// The user buffer in the cache first (a program that has
				// just read it): the block's per-cell loads hit.
				for w := range words {
					p.Load32(atmtb.SrcBase + 4*uint64(w))
				}
				Expect(k.Block(p, 0, (s-1)*words, atmtb.SrcBase, words, false)).To(Equal(rma.OK))
				swaps[s] = casLoop(p, k, 0, 4000, 4000+s, casN, segs[s])
			}))
		}
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Finish()).To(Succeed())
		s := atmtb.RefOf(cl).Stats()
		GinkgoWriter.Printf("ref %+v max queue %d\n", s, cl.Star.Switch.Queue(0).Stats().MaxOccupancy)
		Expect(s.LostSwitch).To(BeNumerically(">", 0), "the output queue overflowed")
		Expect(cl.Star.Switch.Stats(0).Dropped).To(BeNumerically(">", 0))
		// Every block cell delivered or lost at the switch (conservation:
		// Finish), and every CAS increment done once.
		Expect(s.Delivered[rma.OpBlock] + s.LostSwitch + s.LostRxFull).To(BeNumerically(">=", 300))
		Expect(swaps[1:]).To(Equal([]int{casN, casN, casN}))
		Expect(counter(cl, 0, 4000)).To(Equal(uint32(3 * casN)))
		cl.Close()
	})

	It("link drops and corruption on the direct link: every loss counted, CRC-10 catches every corruption, CAS loses nothing", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock, Seed: 2})
		c := atmtb.DefaultConfig()
		c.Link.DropProb, c.Link.CorruptProb = 0.02, 0.02
		cl, err := atmtb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		tr, err := atmtb.StartTraffic(cl, atmtb.Traffic{Ops: 300, Write: 5, CAS: 3, Block: 1, MaxGap: 300, MaxBlockWords: 40})
		Expect(err).NotTo(HaveOccurred())
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Finish()).To(Succeed())
		s := atmtb.RefOf(cl).Stats()
		GinkgoWriter.Printf("ops %d ref %+v\n", tr.Operations(), s)
		Expect(s.LostLink).To(BeNumerically(">", 5))
		Expect(s.LostCRC).To(BeNumerically(">", 5))
		corrupted := cl.Direct.From(link.A).Stats().Corrupted + cl.Direct.From(link.B).Stats().Corrupted
		Expect(s.LostCRC).To(Equal(corrupted), "every corrupted cell discarded by the CRC-10")
		Expect(s.Retransmits).To(BeNumerically(">", 0))
		Expect(s.Mismatches).To(BeZero())
		cl.Close()
	})

	It("a directed link corruption (Dir.CorruptPacket): the WRITE is lost, counted, and nothing of it written", func() {
		r := newNegRig(nil)
		Expect(r.cl.Direct.From(link.A).CorruptPacket(2)).To(Succeed())
		k := r.cl.Nodes[0].Kernel
		r.cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			for i := range 3 {
				Expect(k.Write(p, 1, 10*i, 10, false, words10())).To(Equal(rma.OK))
			}
		}))
		runErr, finErr := r.run()
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		s := atmtb.RefOf(r.cl).Stats()
		Expect(s.LostCRC).To(Equal(uint64(1)))
		Expect(s.Delivered[rma.OpWrite]).To(Equal(uint64(2)))
		Expect(counter(r.cl, 1, 0)).To(Equal(uint32(1)))
		Expect(counter(r.cl, 1, 10)).To(BeZero(), "the corrupted second WRITE wrote nothing")
		Expect(counter(r.cl, 1, 20)).To(Equal(uint32(1)))
	})

	It("RX overflow: the receiver's handler masked while 400 cells arrive: 100 dropped and counted, no lost-interrupt report", func() {
		r := newNegRig(nil)
		k0 := r.cl.Nodes[0].Kernel
		b1 := r.cl.Nodes[1].Board
		sent := false
		r.cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			Expect(k0.Block(p, 1, 0, atmtb.SrcBase, 4000, false)).To(Equal(rma.OK))
			sent = true
		}))
		r.cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.DisableInterrupts()
			p.PollUntil(func() bool { return sent && b1.Idle() && b1.RxLen() == 300 })
			p.EnableInterrupts()
		}))
		runErr, finErr := r.run()
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		s := atmtb.RefOf(r.cl).Stats()
		Expect(s.LostRxFull).To(Equal(uint64(100)))
		Expect(s.Delivered[rma.OpBlock]).To(Equal(uint64(300)))
		bc := b1.Counters()
		Expect(bc.RxDropFull).To(Equal(uint64(100)))
		Expect(bc.RxMax).To(Equal(300))
		// One interrupt drained the 300 cells (AT-P16).
		Expect(r.cl.Nodes[1].Kernel.Counters().Interrupts).To(Equal(uint64(1)))
	})

	// The CAS checker against a kernel that forgets: the target's
	// per-source CAS cache (rma kernel memory, 16 bytes per source from
	// KernelBase + 0x400) is wiped between the execution and the resend,
	// so the resent request executes again: rma.cas.
	It("catches a CAS executed twice when the target's cache is wiped before the resend (rma.cas)", func() {
		r := newNegRig(nil)
		st := r.cl.Nodes[1].Memory().Storage()
		Expect(st.Write(atmtb.SegBase+28, []byte{5, 0, 0, 0})).To(Succeed())
		r.cl.DropNext(1, rma.OpCASReply)
		k := r.cl.Nodes[0].Kernel
		r.cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			k.CAS(p, 1, 7, 5, 6, int(r.segs[0]), 200)
		}))
		// At 200 us: the first execution is long done (47 us, the CAS
		// golden), the resend is at 412 us.
		vtest.AtCycle(r.e, "N1.Wipe", tcClock, 5000, func(_ clock.Time) {
			Expect(st.Write(r.cl.Config.KernelBase+0x400, make([]byte, 16))).To(Succeed())
		})
		runErr, finErr := r.run()
		Expect(runErr).To(HaveOccurred())
		Expect(finErr).To(HaveOccurred())
		v := r.e.Monitor.Violations()
		Expect(v).NotTo(BeEmpty())
		Expect(v[0].Check).To(Equal(atmtb.RuleCAS), v[0].String())
		Expect(v[0].Msg).To(ContainSubstring("executed a second time"))
	})
})
