package mctb_test

import (
	"encoding/binary"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/testbench/mctb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// store is an uncached store of data (up to the write buffer's 32-byte
// block) as one burst.
func store(p *cpu.Proc, addr uint64, data []byte) {
	p.Do(cpu.Op{Kind: cpu.Store, Addr: addr, Data: data, Burst: true})
}

// word reads the 32-bit word at addr of node n's memory.
func word(cl *mctb.Cluster, n int, addr uint64) uint32 {
	GinkgoHelper()
	b := make([]byte, 4)
	Expect(cl.Nodes[n].Memory().Storage().Read(addr, b)).To(Succeed())
	return binary.LittleEndian.Uint32(b)
}

// seq returns n bytes 1, 2, ..., n (mod 256) plus base.
func seq(n int, base byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = base + byte(i+1)
	}
	return b
}

// txIndex returns the transmit window page of CPU address a.
func txIndex(cl *mctb.Cluster, a uint64) int {
	return int((a - cl.Config.TxBase) / uint64(cl.Config.Adapter.PageBytes))
}

var crcSeed uint64 = 3

var _ = Describe("System negative tests", func() {
	var e *env.Env
	newClusterSeed := func(seed uint64, mod func(c *mctb.Config)) *mctb.Cluster {
		e = vtest.NewEnv(vtest.Options{Clock: pciClock, Trace: true, Seed: seed})
		return build(e, mod)
	}
	newCluster := func(mod func(c *mctb.Config)) *mctb.Cluster { return newClusterSeed(0, mod) }
	run := func(cl *mctb.Cluster) {
		GinkgoHelper()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Finish()).To(Succeed())
		cl.Close()
	}

	It("drops a write to an unmapped transmit page: counted, status, one interrupt, nothing on the link", func() {
		cl := newCluster(nil)
		const idx = 100 // no region maps window page 100
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(cl.Config.TxBase+idx*8192+16, 7)
			p.Fence()
		}))
		run(cl)
		a := cl.Nodes[0].Adapter
		Expect(a.Counters().TxInvalid).To(Equal(uint64(1)))
		Expect(a.Counters().TxPackets).To(BeZero())
		Expect(a.Status().Cause & mcadapter.CauseTxInvalid).NotTo(BeZero())
		Expect(a.Status().Page).To(Equal(idx))
		Expect(cl.Nodes[0].IRQs).To(Equal(1))
		Expect(cl.Ref.Stats().TxInvalid).To(Equal(uint64(1)))
		Expect(cl.Ref.Stats().Sent).To(BeZero())
		for _, r := range e.Trace.Records() {
			Expect(r.Kind).NotTo(Equal("mc.order"))
		}
	})

	It("answers a PIO read of the window with a bus error: one cpu.buserror, PIOReads 1, no hang", func() {
		cl := newCluster(nil)
		r, err := cl.PointToPoint("p2p", 1, 64)
		Expect(err).NotTo(HaveOccurred())
		done := false
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Load32(r.Tx[0])
			done = true
		}))
		_, err = e.Run()
		Expect(err).To(HaveOccurred())
		v := e.Monitor.Violations()
		Expect(v).To(HaveLen(1))
		Expect(v[0].Check).To(Equal("cpu.buserror"))
		Expect(done).To(BeTrue())
		Expect(cl.Nodes[0].Adapter.Counters().PIOReads).To(Equal(uint64(1)))
		cl.Close()
	})

	It("drops a packet for a page not mapped for receive: counted, no DMA, memory unchanged", func() {
		cl := newCluster(nil)
		r, err := cl.PointToPoint("p2p", 1, 64)
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.UnmapRx(1, r.GlobalPage)).To(Succeed())
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(r.Tx[0], 0x1234_5678)
			p.Fence()
		}))
		run(cl)
		for i, n := range cl.Nodes[1:] {
			c := n.Adapter.Counters()
			Expect(c.RxUnmapped).To(Equal(uint64(1)), "node %d", i+1)
			Expect(c.RxPackets).To(BeZero())
			Expect(c.RxDMAs).To(BeZero())
		}
		Expect(word(cl, 1, r.Rx[1])).To(BeZero())
		Expect(cl.Ref.Stats().Expected).To(BeZero())
	})

	Describe("a burst crossing a page", func() {
		// 32 bytes at 16 bytes before the end of the region's first page:
		// the packetiser cuts it at the page end into two packets, one per
		// transmit entry.
		cross := func(unmapSecond bool) (*mctb.Cluster, mctb.Region) {
			cl := newCluster(nil)
			r, err := cl.PointToPoint("p2p", 1, 2*8192)
			Expect(err).NotTo(HaveOccurred())
			if unmapSecond {
				Expect(cl.Nodes[0].Adapter.UnmapTx(txIndex(cl, r.Tx[0]) + 1)).To(Succeed())
			}
			cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				store(p, r.Tx[0]+8192-16, seq(32, 0))
				p.Fence()
			}))
			run(cl)
			return cl, r
		}
		It("becomes two packets, both delivered", func() {
			cl, r := cross(false)
			Expect(cl.Nodes[0].Adapter.Counters().TxPackets).To(Equal(uint64(2)))
			got := make([]byte, 32)
			Expect(cl.Nodes[1].Memory().Storage().Read(r.Rx[1]+8192-16, got)).To(Succeed())
			Expect(got).To(Equal(seq(32, 0)))
		})
		It("with the second page's entry invalid, delivers the first half and drops the second", func() {
			cl, r := cross(true)
			a := cl.Nodes[0].Adapter
			Expect(a.Counters().TxPackets).To(Equal(uint64(1)))
			Expect(a.Counters().TxInvalid).To(Equal(uint64(1)))
			Expect(a.Status().Page).To(Equal(txIndex(cl, r.Tx[0]) + 1))
			got := make([]byte, 32)
			Expect(cl.Nodes[1].Memory().Storage().Read(r.Rx[1]+8192-16, got)).To(Succeed())
			Expect(got[:16]).To(Equal(seq(32, 0)[:16]))
			Expect(got[16:]).To(Equal(make([]byte, 16)))
		})
	})

	It("with loop-back off, the writer never sees its own writes; the 7 others do", func() {
		cl := newCluster(nil)
		r, err := cl.Broadcast("shared", 64, false)
		Expect(err).NotTo(HaveOccurred())
		var seen []uint32
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			for i := range 100 {
				p.Store32(r.Tx[0]+4*uint64(i%16), uint32(1000+i))
				seen = append(seen, p.Load32(r.Rx[0]+4*uint64(i%16)))
			}
			p.Fence()
		}))
		run(cl)
		Expect(seen).To(HaveEach(BeZero()))
		Expect(cl.Nodes[0].Adapter.Counters().RxPackets).To(BeZero())
		for i := range 16 {
			Expect(word(cl, 0, r.Rx[0]+4*uint64(i))).To(BeZero())
			for n := 1; n < 8; n++ {
				// Word i last got write 84+i (i, i+16, ..., i+80, i+96 < 100
				// for i < 4).
				last := 1000 + i + 16*((99-i)/16)
				Expect(word(cl, n, r.Rx[n]+4*uint64(i))).To(Equal(uint32(last)))
			}
		}
		Expect(cl.Ref.Stats().Delivered).To(Equal(uint64(7 * 100)))
	})

	It("with loop-back on, the writer sees its own write come back through the hub", func() {
		cl := newCluster(nil)
		r, err := cl.Loopback("locks", 32)
		Expect(err).NotTo(HaveOccurred())
		var polls int
		cl.Nodes[3].CPUs[2].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(r.Tx[3]+12, 0xabcd)
			for p.Load32(r.Rx[3]+12) != 0xabcd {
				polls++
			}
		}))
		run(cl)
		Expect(polls).To(BeNumerically(">", 1))
		Expect(cl.Nodes[3].Adapter.Counters().RxPackets).To(Equal(uint64(1)))
		Expect(cl.Ref.Stats().Delivered).To(Equal(uint64(8)))
	})

	DescribeTable("drop a packet with a link CRC error where it is received, counted and reported, the rest delivered",
		func(seed uint64, corruptedDir string, receiversDropping int) {
			// One bit flipped per packet with probability 0.005 per link
			// crossing: node 0's 80 writes to a broadcast region each cross
			// one uplink and seven downlinks, and the seeds are ones where
			// exactly one packet is corrupted (found by trying seeds 1-12).
			cl := newClusterSeed(seed, func(c *mctb.Config) { c.Link.CorruptProb = 0.005 })
			r, err := cl.Broadcast("shared", 1024, false)
			Expect(err).NotTo(HaveOccurred())
			cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				for i := range 80 {
					store(p, r.Tx[0]+uint64(32*(i%32)), seq(32, byte(i)))
				}
				p.Fence()
			}))
			run(cl)
			var bad []string
			for _, l := range cl.Star.Links {
				for _, d := range []link.Side{link.A, link.B} {
					if s := l.From(d).Stats(); s.Corrupted > 0 {
						Expect(s.Corrupted).To(Equal(uint64(1)))
						Expect(s.CRCErrors).To(Equal(uint64(1)))
						bad = append(bad, l.From(d).Name())
					}
				}
			}
			Expect(bad).To(Equal([]string{corruptedDir}))
			var dropping int
			for _, n := range cl.Nodes {
				c := n.Adapter.Counters()
				if c.RxCRC > 0 {
					dropping++
					if receiversDropping == 1 {
						Expect(n.ID).To(Equal(6))
					}
					Expect(c.RxCRC).To(Equal(uint64(1)))
					Expect(n.Adapter.Status().Cause & mcadapter.CauseRxCRC).NotTo(BeZero())
					Expect(n.IRQs).To(Equal(1))
				} else {
					Expect(n.IRQs).To(BeZero())
				}
			}
			Expect(dropping).To(Equal(receiversDropping))
			// Every other (write, receiver) pair reached memory (Finish
			// checked each and the frames against Ref).
			s := cl.Ref.Stats()
			Expect(s.Expected).To(Equal(uint64(7 * 80)))
			Expect(s.Lost).To(Equal(uint64(receiversDropping)))
			Expect(s.Delivered).To(Equal(s.Expected - s.Lost))
		},
		Entry("on a hub-to-adapter link: that receiver alone drops it", uint64(4), "MC.Link6.BA", 1),
		Entry("on the sender's link to the hub: the hub forwards it bad and all seven receivers drop it", uint64(7), "MC.Link0.AB", 7),
	)

	It("back-pressures a full transmit FIFO to the CPUs (retries, wait states, stalls) and loses nothing", func() {
		// All 32 CPUs stream 32-byte writes into one broadcast region: the
		// hub bus carries about one link's bandwidth, far less than eight
		// PCI buses offer, so the transmit FIFOs fill.
		cl := newCluster(nil)
		r, err := cl.Broadcast("shared", 8192, false)
		Expect(err).NotTo(HaveOccurred())
		const writes = 40
		for _, n := range cl.Nodes {
			for k, c := range n.CPUs {
				c.Run(cpu.Go(func(p *cpu.Proc) {
					for i := range writes {
						store(p, r.Tx[n.ID]+uint64(32*(k*writes+i)), seq(32, byte(n.ID*16+i)))
					}
					p.Fence()
				}))
			}
		}
		run(cl)
		var retries, waits uint64
		var stall int64
		for _, n := range cl.Nodes {
			retries += n.Adapter.Counters().TxRetries
			waits += n.Adapter.Counters().TxWaitCycles
			for _, c := range n.CPUs {
				stall += int64(c.StallTime())
			}
		}
		GinkgoWriter.Printf("retries %d waits %d stall %d ref %+v\n", retries, waits, stall, cl.Ref.Stats())
		Expect(retries).To(BeNumerically(">", 0))
		Expect(waits).To(BeNumerically(">", 0))
		Expect(stall).To(BeNumerically(">", 0))
		s := cl.Ref.Stats()
		Expect(s.Sent).To(Equal(uint64(8 * 4 * writes)))
		Expect(s.Delivered).To(Equal(uint64(7 * 8 * 4 * writes)))
	})
})
