package shrimptb_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
	"github.com/nisim/nisim/verify/trace"
)

var _ = Describe("the SHRIMP cluster", func() {
	It("builds the paper's sixteen DEC 560ST nodes on a 4 x 4 Paragon mesh, each NI on its router", func() {
		e := env.New(env.Options{Seed: 1})
		cl, err := shrimptb.Build(e, shrimptb.DefaultConfig())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cl.Close)
		Expect(cl.Nodes).To(HaveLen(16)) // SH-P1
		Expect(cl.Net.Routers).To(HaveLen(16))
		// No terminals: the NIs sit on the routers' local ports; links: 2
		// × 4 × 3 = 24 between routers and 16 NI links.
		Expect(cl.Net.Terminals).To(BeEmpty())
		Expect(cl.Net.Links).To(HaveLen(24 + 16))
		n := cl.Nodes[5]
		Expect(n.ID).To(Equal(5))
		Expect(n.NI.Name()).To(Equal("N5.NI"))
		Expect(n.NI.Node()).To(Equal(5))
		Expect(n.PCI.Name()).To(Equal("N5.EISA"))
		Expect(n.CPUs).To(HaveLen(1))
		Expect(n.Kernel).NotTo(BeNil())
		Expect(n.Bridge.Config().HoldMemoryBus).To(BeTrue()) // SH-P10
		Expect(cl.Dir).NotTo(BeNil())
	})

	It("leaves the routers beyond Nodes empty and lets HoldMemoryBus off (membus_cycle_share)", func() {
		c := shrimptb.DefaultConfig()
		c.Nodes, c.HoldMemoryBus = 3, false
		cl, err := shrimptb.Build(env.New(env.Options{Seed: 1}), c)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cl.Close)
		Expect(cl.Nodes).To(HaveLen(3))
		Expect(cl.Net.Links).To(HaveLen(24 + 3))
		Expect(cl.Nodes[0].Bridge.Config().HoldMemoryBus).To(BeFalse())
	})

	DescribeTable("refuses a bad configuration with an error naming the field",
		func(mod func(*shrimptb.Config), want string) {
			c := shrimptb.DefaultConfig()
			mod(&c)
			_, err := shrimptb.Build(env.New(env.Options{Seed: 1}), c)
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("nodes", func(c *shrimptb.Config) { c.Nodes = 17 }, "Nodes 17 must be in 1..16"),
		Entry("no nodes", func(c *shrimptb.Config) { c.Nodes = 0 }, "Nodes 0"),
		Entry("memory", func(c *shrimptb.Config) { c.NI.MemoryBytes = 16 << 20 }, "NI.MemoryBytes"),
		Entry("proxy in memory", func(c *shrimptb.Config) { c.Map.MemProxy = 0x10_0000 }, "Map.MemProxy"),
		Entry("overlap", func(c *shrimptb.Config) { c.Map.DevProxy = c.Map.MemProxy + 0x1000 }, "overlaps Map.MemProxy"),
		Entry("beyond 32 bits", func(c *shrimptb.Config) { c.Map.CSR = 0xffff_f000 }, "32-bit"),
		Entry("unaligned", func(c *shrimptb.Config) { c.Map.CSR += 4 }, "page-aligned"),
		Entry("mesh", func(c *shrimptb.Config) { c.Mesh.K = 1 }, "Mesh"),
		Entry("NI", func(c *shrimptb.Config) { c.NI.PageBytes = 3000 }, "NI: shrimp: PageBytes"),
		Entry("params", func(c *shrimptb.Config) { c.Params.SendInstrs = -1 }, "Params"),
	)

	It("carries a one-word automatic update from node 0 to node 1 (OPT and IPT set through the back door)", func() {
		c := shrimptb.DefaultConfig()
		c.Nodes = 2
		e := env.New(env.Options{Seed: 1, Trace: trace.NewRecorder()})
		cl, err := shrimptb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cl.Close)
		n0, n1 := cl.Nodes[0], cl.Nodes[1]
		const src, dstPage = 0x0003_0000, 0x50 // node 0's page 0x30 → node 1's page 0x50
		pb := uint64(c.NI.PageBytes)
		Expect(n1.NI.SetIPT(dstPage, shrimp.IPTEntry{Exported: true})).To(Succeed())
		Expect(n0.NI.SetOPT(int(src/pb), shrimp.OPTEntry{Valid: true, AU: true, DstNode: 1, DstPage: dstPage})).To(Succeed())
		// The bound page is write-through, so the store reaches the Xpress
		// where the NI snoops it (SH-P9).
		Expect(n0.Mem.SetPolicy(src, pb, memsys.WriteThrough)).To(Succeed())
		var stored, arrived clock.Time
		n1.Mem.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.Write && o.Master == "N1.Bridge.Up" && o.Addr == dstPage*pb+0x10 {
				arrived = now
			}
		})
		n0.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store(src+0x10, []byte{0xde, 0xad, 0xbe, 0xef})
			stored = p.Now()
		}))
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse())
		Expect(cl.Finish()).To(Succeed())
		got, err := n1.Memory().Storage().Bytes(dstPage*pb+0x10, 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]byte{0xde, 0xad, 0xbe, 0xef}))
		Expect(n0.NI.Counters().AUPackets).To(Equal(uint64(1)))
		Expect(n1.NI.Counters().RxPackets).To(Equal(uint64(1)))
		Expect(n1.NI.Counters().RxBytes).To(Equal(uint64(4)))
		Expect(arrived).To(BeNumerically(">", stored))
		GinkgoWriter.Printf("store retired at %v, in node 1's memory (Xpress data phase) at %v: %v\n", stored, arrived, arrived-stored)
		// The trace shows each block once: snoop, packet, NIC, node 1's
		// incoming path, both EISA and Xpress writes.
		var kinds []string
		for _, r := range e.Trace.Records() {
			f := strings.Fields(r.Format())
			if len(f) > 3 && strings.HasPrefix(f[3], "shrimp.") {
				kinds = append(kinds, f[2]+" "+f[3])
			}
		}
		Expect(kinds).To(ContainElements("N0.NI shrimp.snoop", "N0.NI shrimp.pkt", "N0.NI shrimp.tx", "N1.NI shrimp.rx", "N1.NI shrimp.rxdma"))
	})

	It("delivers an all-to-all automatic-update flood on sixteen nodes without deadlock (R3), every word once", func() {
		c := shrimptb.DefaultConfig()
		e := env.New(env.Options{Seed: 1})
		cl, err := shrimptb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cl.Close)
		pb := uint64(c.NI.PageBytes)
		const words = 16
		// Node i's page 0x100+j is bound to node j's page 0x200+i
		// (combining on: consecutive words join a packet).
		src := func(j int) uint64 { return (0x100 + uint64(j)) * pb }
		dst := func(i int) uint64 { return (0x200 + uint64(i)) * pb }
		for i, n := range cl.Nodes {
			for j := range cl.Nodes {
				if i == j {
					continue
				}
				Expect(cl.Nodes[j].NI.SetIPT(int(dst(i)/pb), shrimp.IPTEntry{Exported: true})).To(Succeed())
				Expect(n.NI.SetOPT(int(src(j)/pb), shrimp.OPTEntry{Valid: true, AU: true, Combine: true, DstNode: j,
					DstPage: uint32(dst(i) / pb)})).To(Succeed())
				Expect(n.Mem.SetPolicy(src(j), pb, memsys.WriteThrough)).To(Succeed())
			}
			n.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				for k := range words {
					for j := range cl.Nodes {
						if j != i {
							p.Store(src(j)+uint64(4*k), []byte{byte(i), byte(j), byte(k), 0x5a})
						}
					}
				}
			}))
		}
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse())
		Expect(cl.Finish()).To(Succeed())
		var rx uint64
		for j, n := range cl.Nodes {
			Expect(n.NI.Idle()).To(BeTrue(), n.NI.State())
			rx += n.NI.Counters().RxBytes
			for i := range cl.Nodes {
				if i == j {
					continue
				}
				got, err := n.Memory().Storage().Bytes(dst(i), 4*words)
				Expect(err).NotTo(HaveOccurred())
				for k := range words {
					Expect(got[4*k:4*k+4]).To(Equal([]byte{byte(i), byte(j), byte(k), 0x5a}), "node %d from %d word %d", j, i, k)
				}
			}
		}
		// 16 senders × 15 destinations × 16 words × 4 bytes: with every
		// word in place, no byte was written twice.
		Expect(rx).To(Equal(uint64(16 * 15 * words * 4)))
		GinkgoWriter.Printf("flood of %d words done at %v\n", 16*15*words, res.End)
	})

	// heldBurst runs node 0 writing a whole page through a combining AU
	// binding (one 4 KB packet, closed at the page boundary: four 1 KB
	// EISA bursts at node 1) while node 1's CPU streams write-through
	// stores to a page of its own; it returns node 1's CPU data phases on
	// the Xpress that fall strictly inside one incoming EISA burst's
	// Xpress writes (between its first and last bridge beat).
	heldBurst := func(hold bool) (inside, bursts, before, after int) {
		c := shrimptb.DefaultConfig()
		c.Nodes, c.HoldMemoryBus = 2, hold
		e := env.New(env.Options{Seed: 1})
		cl, err := shrimptb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cl.Close)
		n0, n1 := cl.Nodes[0], cl.Nodes[1]
		pb := uint64(c.NI.PageBytes)
		const src, dst, local = 0x30 * 4096, 0x50 * 4096, 0x70 * 4096
		Expect(n1.NI.SetIPT(dst/4096, shrimp.IPTEntry{Exported: true})).To(Succeed())
		Expect(n0.NI.SetOPT(src/4096, shrimp.OPTEntry{Valid: true, AU: true, Combine: true, DstNode: 1, DstPage: dst / 4096})).To(Succeed())
		Expect(n0.Mem.SetPolicy(src, pb, memsys.WriteThrough)).To(Succeed())
		Expect(n1.Mem.SetPolicy(local, pb, memsys.WriteThrough)).To(Succeed())
		type beat struct {
			cycle  clock.Cycle
			bridge bool
			addr   uint64
		}
		var beats []beat
		n1.Mem.Bus.Observe(func(_ clock.Time, o bus.Observation) {
			if o.Write && o.Data != nil {
				beats = append(beats, beat{o.Cycle, o.Master == "N1.Bridge.Up", o.Addr})
			}
		})
		n0.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			for k := range 1024 {
				p.Store(src+uint64(4*k), []byte{byte(k), byte(k >> 8), 1, 2})
			}
		}))
		n1.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			for k := range 6000 {
				p.Store(local+uint64(4*(k%1024)), []byte{byte(k), 0, 0, 0})
			}
		}))
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse())
		Expect(cl.Finish()).To(Succeed())
		got, _ := n1.Memory().Storage().Bytes(dst+4*1023, 4)
		Expect(got).To(Equal([]byte{0xff, 3, 1, 2}))
		for b := range 4 {
			lo, hi := uint64(dst+1024*b), uint64(dst+1024*(b+1))
			var first, last clock.Cycle
			seen := false
			for _, x := range beats {
				if x.bridge && x.addr >= lo && x.addr < hi {
					if !seen {
						first, seen = x.cycle, true
					}
					last = x.cycle
				}
			}
			Expect(seen).To(BeTrue(), "burst %d", b)
			bursts++
			for _, x := range beats {
				switch {
				case x.bridge:
				case x.cycle > first && x.cycle < last:
					inside++
				case b == 0 && x.cycle < first:
					before++
				case b == 3 && x.cycle > last:
					after++
				}
			}
		}
		return inside, bursts, before, after
	}

	It("holds node 1's Xpress for a whole incoming 1 KB EISA burst: the CPU's writes wait (SH-P10, HoldSplits)", func() {
		inside, bursts, before, after := heldBurst(true)
		Expect(bursts).To(Equal(4))
		Expect(inside).To(BeZero())
		// The CPU was writing all along: before the first burst and after
		// the last.
		Expect(before).To(BeNumerically(">", 0))
		Expect(after).To(BeNumerically(">", 0))
	})

	It("lets node 1's CPU write between the lines of an incoming burst with membus_cycle_share (control)", func() {
		inside, _, _, _ := heldBurst(false)
		GinkgoWriter.Printf("CPU data phases inside the incoming bursts: %d\n", inside)
		Expect(inside).To(BeNumerically(">", 0))
	})

	It("invalidates the reader's cached copy: node 1's poll of a cached word sees node 0's automatic update", func() {
		c := shrimptb.DefaultConfig()
		c.Nodes = 2
		e := env.New(env.Options{Seed: 1})
		cl, err := shrimptb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cl.Close)
		n0, n1 := cl.Nodes[0], cl.Nodes[1]
		pb := uint64(c.NI.PageBytes)
		const src, dst = 0x30 * 4096, 0x50 * 4096
		Expect(n1.NI.SetIPT(dst/4096, shrimp.IPTEntry{Exported: true})).To(Succeed())
		Expect(n0.NI.SetOPT(src/4096, shrimp.OPTEntry{Valid: true, AU: true, DstNode: 1, DstPage: dst / 4096})).To(Succeed())
		Expect(n0.Mem.SetPolicy(src, pb, memsys.WriteThrough)).To(Succeed())
		polls, seen := 0, false
		var first []byte
		// Node 1 reads the word first (a miss: the line is now in its
		// board cache, write-back), then polls it: only the incoming DMA's
		// invalidation can make the new value visible.
		n1.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			first = p.Load(dst, 4)
			for range 5000 {
				polls++
				if b := p.Load(dst, 4); b[0] == 0x77 {
					seen = true
					return
				}
			}
		}))
		n0.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Compute(600) // 10 µs: after node 1 has cached the line
			p.Store(src, []byte{0x77, 0, 0, 0})
		}))
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse())
		Expect(cl.Finish()).To(Succeed())
		Expect(first).To(Equal([]byte{0, 0, 0, 0}))
		Expect(seen).To(BeTrue())
		Expect(polls).To(BeNumerically(">", 1)) // it did poll a cached stale copy first
	})
})
