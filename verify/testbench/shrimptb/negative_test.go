package shrimptb_test

import (
	"encoding/binary"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// eisaClock is the failure window's unit: the EISA bus, the NIs' DMA
// clock.
var eisaClock = platform.DEC560ST().IOBus.Clock

// Addresses of the system specs and goldens (assumed, as the traffic's:
// user memory below the kernel's proxy pool): node 1's receive buffer, node 0's bound page
// and its DU source.
const (
	gRecv = 16 << 20
	gBind = 8 << 20
	gSrc  = 12 << 20
)

// pair is what a golden between nodes 0 and 1 sets up before time 0:
// node 1 exports pages of gRecv, node 0 imports them.
type pair struct {
	cl     *shrimptb.Cluster
	tx, rx *vmmc.Process
	px     *vmmc.Proxy
}

// setupPair exports pages pages at gRecv on node 1 (notify: the interrupt
// bit) and imports them on node 0, untimed.
func setupPair(cl *shrimptb.Cluster, pages int, notify bool) pair {
	GinkgoHelper()
	rx := cl.Nodes[1].Kernel.NewProcess("rx")
	tx := cl.Nodes[0].Kernel.NewProcess("tx")
	page := cl.Config.NI.PageBytes
	b, err := rx.Export(nil, gRecv, pages*page, notify)
	Expect(err).NotTo(HaveOccurred())
	px, err := tx.Import(nil, b)
	Expect(err).NotTo(HaveOccurred())
	return pair{cl: cl, tx: tx, rx: rx, px: px}
}

// memWord reads the 32-bit word at addr of node n's memory.
func memWord(cl *shrimptb.Cluster, n int, addr uint64) uint32 {
	GinkgoHelper()
	b := make([]byte, 4)
	Expect(cl.Nodes[n].Memory().Storage().Read(addr, b)).To(Succeed())
	return binary.LittleEndian.Uint32(b)
}

// udmaCount is a UDMA STORE's data word: the count and the notify bit.
func udmaCount(n int, notify bool) uint32 {
	v := uint32(n) & shrimp.UDMACountMask
	if notify {
		v |= shrimp.UDMANotify
	}
	return v
}

// udma makes the two UDMA references by hand (no library): the STORE of
// the count and notify bit to the device proxy of OPT entry opt at byte
// off, then the LOAD of the memory proxy of src; it returns the status.
func udma(cl *shrimptb.Cluster, p *cpu.Proc, opt int, off uint64, src uint64, n int, notify bool) shrimp.Status {
	m := cl.Config.Map
	page := uint64(cl.Config.NI.PageBytes)
	p.As("udma.store").Store32(m.DevProxy+uint64(opt)*page+off, udmaCount(n, notify))
	return shrimp.Status(p.As("udma.load").Load32(m.MemProxy + src))
}

var _ = Describe("System negative tests", func() {
	var e *env.Env
	var mutations map[string]int
	BeforeEach(func() { mutations = nil })
	newCluster := func(nodes int, mod func(c *shrimptb.Config)) *shrimptb.Cluster {
		e = vtest.NewEnv(vtest.Options{Clock: eisaClock, Trace: true, Seed: 1, Mutations: mutations})
		c := shrimptb.DefaultConfig()
		c.Nodes = nodes
		if mod != nil {
			mod(&c)
		}
		cl, err := shrimptb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		return cl
	}
	run := func(cl *shrimptb.Cluster) {
		GinkgoHelper()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Finish()).To(Succeed())
		cl.Close()
	}

	It("refuses an unaligned bind: an error, the OPT untouched", func() {
		cl := newCluster(2, nil)
		pr := setupPair(cl, 1, false)
		page := cl.Config.NI.PageBytes
		Expect(pr.tx.Bind(nil, gBind+8, pr.px, 0, page, false, 0)).To(MatchError(ContainSubstring("not page-aligned")))
		Expect(cl.Nodes[0].NI.OPT(gBind / page)).To(Equal(shrimp.OPTEntry{}))
		Expect(cl.Nodes[0].NI.OPT(gBind/page + 1)).To(Equal(shrimp.OPTEntry{}))
		run(cl)
	})

	// unexported: node 0's bound page points at node 1's buffer, which
	// node 1's kernel no longer exports (backdoor, t=0); node 0 stores.
	unexported := func() *shrimptb.Cluster {
		cl := newCluster(2, nil)
		pr := setupPair(cl, 1, false)
		page := cl.Config.NI.PageBytes
		Expect(pr.tx.Bind(nil, gBind, pr.px, 0, page, false, 0)).To(Succeed())
		Expect(cl.Nodes[1].NI.SetIPT(gRecv/page, shrimp.IPTEntry{})).To(Succeed())
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Store32(gBind+16, 0x1234_5678)
			p.Fence()
		}))
		return cl
	}

	It("drops an AU packet for a page no longer exported: counted, memory unchanged, no interrupt", func() {
		cl := unexported()
		run(cl)
		Expect(cl.Nodes[1].NI.Counters().RxUnexported).To(Equal(uint64(1)))
		Expect(cl.Nodes[1].NI.Counters().RxPackets).To(BeZero())
		Expect(cl.Ref.Stats().RxUnexported).To(Equal(uint64(1)))
		Expect(cl.Ref.Stats().Lost).To(Equal(uint64(1)))
		Expect(memWord(cl, 1, gRecv+16)).To(BeZero())
		Expect(cl.Nodes[1].IRQs).To(BeZero())
	})

	It("with shrimp.ipt-ignore, the write into the unexported page is a protection violation", func() {
		mutations = map[string]int{"shrimp.ipt-ignore": 1}
		cl := unexported()
		_, err := e.Run()
		Expect(err).To(HaveOccurred())
		Expect(cl.Finish()).To(HaveOccurred())
		cl.Close()
		v := e.Monitor.Violations()
		Expect(v[0].Check).To(Equal(shrimptb.RuleProtect), v[0].String())
		Expect(v[0].Path).To(Equal("N1.SHRIMPCheck"))
	})

	It("refuses a DU that crosses the remote page: status Error|CauseCross, no DMA", func() {
		cl := newCluster(2, nil)
		pr := setupPair(cl, 2, false)
		var st shrimp.Status
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			// 64 bytes from 32 bytes before the end of the first remote page.
			st = udma(cl, p, pr.px.OPT[0], uint64(cl.Config.NI.PageBytes)-32, gSrc, 64, false)
		}))
		run(cl)
		Expect(st & shrimp.StatusError).NotTo(BeZero())
		Expect(st & shrimp.CauseCross).NotTo(BeZero())
		c := cl.Nodes[0].NI.Counters()
		Expect(c.UDMAErrors).To(Equal(uint64(1)))
		Expect(c.UDMAStarts).To(BeZero())
		Expect(c.DUPackets).To(BeZero())
		Expect(cl.Ref.Stats().DUStarts).To(BeZero())
	})

	It("with shrimp.du-cross, the page-crossing DU starts and the protection monitor names it", func() {
		mutations = map[string]int{"shrimp.du-cross": 1}
		cl := newCluster(2, nil)
		pr := setupPair(cl, 2, false)
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			udma(cl, p, pr.px.OPT[0], uint64(cl.Config.NI.PageBytes)-32, gSrc, 64, false)
		}))
		_, err := e.Run()
		Expect(err).To(HaveOccurred())
		cl.Close()
		v := e.Monitor.Violations()
		Expect(v[0].Check).To(Equal(shrimptb.RuleProtect), v[0].String())
		Expect(v[0].Msg).To(ContainSubstring("crosses a page"))
	})

	It("answers Busy while the engine runs (du_queue 0); the retried initiation starts after it", func() {
		cl := newCluster(2, nil)
		pr := setupPair(cl, 2, false)
		var first, second shrimp.Status
		busy := 0
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			first = udma(cl, p, pr.px.OPT[0], 0, gSrc, 4096, false)
			for {
				second = udma(cl, p, pr.px.OPT[1], 0, gSrc+4096, 64, false)
				if second&shrimp.StatusBusy == 0 {
					break
				}
				busy++
			}
		}))
		run(cl)
		Expect(first & shrimp.StatusStarted).NotTo(BeZero())
		Expect(busy).To(BeNumerically(">", 0))
		Expect(second & shrimp.StatusStarted).NotTo(BeZero())
		c := cl.Nodes[0].NI.Counters()
		Expect(c.UDMABusy).To(Equal(uint64(busy)))
		Expect(c.DUPackets).To(Equal(uint64(2)))
		Expect(cl.Ref.Stats().Delivered).To(Equal(uint64(2)))
	})

	It("drops a UDMA destination at a context switch: the LOAD returns Error|CauseNoDest, no DMA", func() {
		cl := newCluster(2, nil)
		pr := setupPair(cl, 1, false)
		other := cl.Nodes[0].Kernel.NewProcess("other")
		page := uint64(cl.Config.NI.PageBytes)
		var st shrimp.Status
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.As("udma.store").Store32(cl.Config.Map.DevProxy+uint64(pr.px.OPT[0])*page, udmaCount(64, false))
			cl.Nodes[0].Kernel.ContextSwitch(p, other)
			st = shrimp.Status(p.As("udma.load").Load32(cl.Config.Map.MemProxy + gSrc))
		}))
		run(cl)
		Expect(st & shrimp.StatusError).NotTo(BeZero())
		Expect(st & shrimp.CauseNoDest).NotTo(BeZero())
		Expect(cl.Nodes[0].NI.Counters().UDMAStarts).To(BeZero())
		Expect(cl.Nodes[0].NI.Counters().DUPackets).To(BeZero())
	})

	It("with shrimp.udma-noinval, the other process's LOAD starts a transfer: the protection monitor names it", func() {
		mutations = map[string]int{"shrimp.udma-noinval": 1}
		cl := newCluster(2, nil)
		pr := setupPair(cl, 1, false)
		other := cl.Nodes[0].Kernel.NewProcess("other")
		page := uint64(cl.Config.NI.PageBytes)
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.As("udma.store").Store32(cl.Config.Map.DevProxy+uint64(pr.px.OPT[0])*page, udmaCount(64, false))
			cl.Nodes[0].Kernel.ContextSwitch(p, other)
			p.As("udma.load").Load32(cl.Config.Map.MemProxy + gSrc)
		}))
		_, err := e.Run()
		Expect(err).To(HaveOccurred())
		cl.Close()
		v := e.Monitor.Violations()
		Expect(v[0].Check).To(Equal(shrimptb.RuleProtect), v[0].String())
		Expect(v[0].Msg).To(ContainSubstring("process other"))
	})

	Describe("replacing a page a queued DU reads", func() {
		// Node 0 (du_queue 2: SH-P24's queue and its CAM) starts two
		// asynchronous 4 KB sends, from pages A and B of non-zero bytes:
		// A's runs, B's waits in the queue; then it asks its kernel to
		// replace page B (zero it, write-through so the zeroes reach
		// memory, where the engine reads).
		replace := func() (*shrimptb.Cluster, *error) {
			cl := newCluster(2, func(c *shrimptb.Config) { c.NI.DUQueue, c.Params.AsyncSend = 2, true })
			pr := setupPair(cl, 3, false)
			page := cl.Config.NI.PageBytes
			src := make([]byte, 2*page)
			for i := range src {
				src[i] = byte(i%251 + 1)
			}
			Expect(cl.Nodes[0].Memory().Storage().Write(gSrc, src)).To(Succeed())
			Expect(cl.Nodes[0].Mem.SetPolicy(gSrc, uint64(2*page), memsys.WriteThrough)).To(Succeed())
			var rerr error
			cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				Expect(pr.tx.Send(p, gSrc, pr.px, uint64(page), page, false)).To(Succeed())
				Expect(pr.tx.Send(p, gSrc+uint64(page), pr.px, uint64(2*page), page, false)).To(Succeed())
				rerr = cl.Nodes[0].Kernel.ReplacePage(p, gSrc/page+1)
				pr.tx.Wait(p)
				p.Fence()
			}))
			return cl, &rerr
		}
		It("is refused while the CAM holds the page (ErrDUPending); the DU delivers the old bytes", func() {
			cl, rerr := replace()
			run(cl)
			Expect(*rerr).To(MatchError(vmmc.ErrDUPending))
			Expect(memWord(cl, 1, gRecv+2*4096+4092)).To(Equal(memWord(cl, 0, gSrc+4096+4092)))
			Expect(memWord(cl, 1, gRecv+2*4096+4092)).NotTo(BeZero())
		})
		It("with vmmc.skip-cam, the zeroed source reaches the destination: the scoreboard names it", func() {
			mutations = map[string]int{"vmmc.skip-cam": 1}
			cl, rerr := replace()
			_, err := e.Run()
			Expect(*rerr).NotTo(HaveOccurred())
			Expect(err).To(HaveOccurred())
			cl.Close()
			v := e.Monitor.Violations()
			Expect(v[0].Check).To(Equal(shrimptb.RuleScoreboard), v[0].String())
		})
	})

	// A stream 4 mod 8 buffers at most 60 of the bridge's 64 bytes (its
	// first Xpress beat is 4 bytes): the bridge lets the read through
	// then (it hung before, the engine's read never answered).
	It("completes a DU send whose source is 4 mod 8 (a word-aligned buffer)", func() {
		cl := newCluster(2, nil)
		pr := setupPair(cl, 2, false)
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			Expect(pr.tx.Send(p, gSrc+0x354, pr.px, 4096, 172, false)).To(Succeed())
		}))
		run(cl)
		Expect(cl.Ref.Stats().Delivered).To(Equal(uint64(1)))
	})
	It("completes asynchronous DU sends both ways between two nodes (DU reads and incoming DMA writes in each bridge)", func() {
		cl := newCluster(2, func(c *shrimptb.Config) { c.Params.AsyncSend = true })
		procs := []*vmmc.Process{cl.Nodes[0].Kernel.NewProcess("p0"), cl.Nodes[1].Kernel.NewProcess("p1")}
		for i, tx := range procs {
			b, err := procs[1-i].Export(nil, gRecv, 4096, false)
			Expect(err).NotTo(HaveOccurred())
			px, err := tx.Import(nil, b)
			Expect(err).NotTo(HaveOccurred())
			cl.Nodes[i].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				for k := range 8 {
					Expect(tx.Send(p, gSrc+uint64(512*k), px, uint64(512*k), 512, false)).To(Succeed())
				}
				tx.Wait(p)
			}))
		}
		run(cl)
		Expect(cl.Ref.Stats().Delivered).To(Equal(uint64(16)))
	})

	// The hang of issue 14's first session (a DU spec with two processes
	// per node, killed after 374 s): the kernel runs the first process
	// made (the receiver), so the sender's UDMA STORE faulted (its
	// device-proxy page is not in the running page table: cpu.fault,
	// access dropped), the LOAD found no destination (CauseNoDest) and the
	// library remade the pair for ever, a pair per 1.15 µs. The progress
	// watchdog never fired: every retired LOAD is progress. Bounded here
	// by a 1 ms time limit: the send is refused at once now.
	Describe("a send by a process the kernel is not running", func() {
		twoProcs := func() (*shrimptb.Cluster, *vmmc.Process, *vmmc.Process, *vmmc.Proxy) {
			e = vtest.NewEnv(vtest.Options{Clock: eisaClock, Trace: true, Seed: 1, TimeLimit: clock.Millisecond})
			c := shrimptb.DefaultConfig()
			c.Nodes = 2
			cl, err := shrimptb.Build(e, c)
			Expect(err).NotTo(HaveOccurred())
			// Node 0: a receiver made first (the running one), then the
			// sender; node 1 exports.
			rx0 := cl.Nodes[0].Kernel.NewProcess("rx0")
			tx0 := cl.Nodes[0].Kernel.NewProcess("tx0")
			rx1 := cl.Nodes[1].Kernel.NewProcess("rx1")
			b, err := rx1.Export(nil, gRecv, 4096, false)
			Expect(err).NotTo(HaveOccurred())
			px, err := tx0.Import(nil, b)
			Expect(err).NotTo(HaveOccurred())
			return cl, rx0, tx0, px
		}
		It("is refused with ErrNotRunning, no reference made; after a context switch it is delivered", func() {
			cl, rx0, tx0, px := twoProcs()
			var refused, sent error
			cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				refused = tx0.Send(p, gSrc, px, 0, 64, false)
				cl.Nodes[0].Kernel.ContextSwitch(p, tx0)
				sent = tx0.Send(p, gSrc, px, 0, 64, false)
			}))
			res, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Stopped).To(BeFalse(), "the run reached the time limit: the send looped")
			Expect(cl.Finish()).To(Succeed())
			cl.Close()
			Expect(refused).To(MatchError(vmmc.ErrNotRunning))
			Expect(refused).To(MatchError(ContainSubstring("by process tx0 while the kernel runs rx0")))
			Expect(sent).NotTo(HaveOccurred())
			Expect(tx0.Stats().Retried).To(BeZero())
			Expect(rx0.Stats().Sends).To(BeZero())
			Expect(cl.Nodes[0].NI.Counters().UDMAStarts).To(Equal(uint64(1)))
			Expect(cl.Ref.Stats().Delivered).To(Equal(uint64(1)))
		})
		It("through another process's proxy is refused with ErrNotImporter", func() {
			cl, rx0, _, px := twoProcs()
			var refused error
			cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { refused = rx0.Send(p, gSrc, px, 0, 64, false) }))
			res, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Stopped).To(BeFalse())
			cl.Close()
			Expect(refused).To(MatchError(vmmc.ErrNotImporter))
			Expect(cl.Nodes[0].NI.Counters().UDMAStarts).To(BeZero())
		})
	})

	// A link CRC error (issue 14 section 6): rtl/link's CorruptPacket
	// flips a bit of the second of three AU packets from node 0 to node 1
	// on one link of their path. The link's CRC check marks its tail Bad,
	// the routers forward it as it is, and node 1's incoming path drops it
	// at its tail (design R8: a one-word AU packet writes nothing):
	// counted (RxCRC), traced (shrimp.drop reason=crc), IRQError raised
	// and taken by the kernel; Ref accounts the packet as lost (not
	// delivered, not pending), and the other two packets, node 0 and
	// the checkers see nothing else.
	DescribeTable("drops a packet with a link CRC error at the receiving NI: counted, reported, the loss accounted, the rest delivered",
		func(corrupted string) {
			cl := newCluster(2, nil)
			pr := setupPair(cl, 1, false)
			Expect(pr.tx.Bind(nil, gBind, pr.px, 0, cl.Config.NI.PageBytes, false, 0)).To(Succeed())
			dirs := map[string]*link.Dir{} // lookup by name only
			for _, l := range cl.Net.Links {
				for _, side := range []link.Side{link.A, link.B} {
					dirs[l.From(side).Name()] = l.From(side)
				}
			}
			Expect(dirs).To(HaveKey(corrupted))
			Expect(dirs[corrupted].CorruptPacket(2)).To(Succeed())
			var drops []shrimp.Drop
			cl.OnDrop(func(_ clock.Time, node int, d shrimp.Drop) {
				Expect(node).To(Equal(1))
				drops = append(drops, d)
			})
			cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				for i := range 3 {
					p.Store32(gBind+uint64(16*i), uint32(0x100+i))
				}
				p.Fence()
			}))
			run(cl) // no checker finding: the loss is accounted, not hidden
			// The link: one corruption, caught by its CRC.
			for name, d := range dirs {
				st := d.Stats()
				if name == corrupted {
					Expect(st.Corrupted).To(Equal(uint64(1)), name)
					Expect(st.CRCErrors).To(Equal(uint64(1)), name)
				} else {
					Expect(st.Corrupted+st.CRCErrors).To(BeZero(), name)
				}
			}
			// The receiving NI: dropped, counted, reported, interrupted.
			c := cl.Nodes[1].NI.Counters()
			Expect(c.RxCRC).To(Equal(uint64(1)))
			Expect(c.RxPackets).To(Equal(uint64(2)))
			Expect(drops).To(HaveLen(1))
			Expect(drops[0].Reason).To(Equal(shrimp.DropCRC))
			Expect(drops[0].Pkt.Seq).To(Equal(uint64(2)))
			Expect(drops[0].Addr).To(Equal(uint64(gRecv + 16)))
			Expect(drops[0].Len).To(Equal(4))
			Expect(cl.Nodes[1].IRQs).To(Equal(1))
			Expect(cl.Nodes[1].Kernel.Stats().Error).To(Equal(uint64(1)))
			var traced []string
			for _, r := range e.Trace.Records() {
				if r.Kind == "shrimp.drop" {
					traced = append(traced, r.Format())
				}
			}
			Expect(traced).To(ConsistOf(ContainSubstring("N1.NI shrimp.drop reason=crc src=0 seq=2 addr=0x1000010 len=4")))
			// Ref: three packets expected, two delivered, one lost to the
			// CRC; the memory has the other two and not the lost word.
			st := cl.Ref.Stats()
			Expect(st.AUPackets).To(Equal(uint64(3)))
			Expect(st.Expected).To(Equal(uint64(3)))
			Expect(st.Delivered).To(Equal(uint64(2)))
			Expect(st.RxCRC).To(Equal(uint64(1)))
			Expect(st.Lost).To(Equal(uint64(1)))
			Expect(cl.Ref.Pending(1)).To(BeEmpty())
			Expect([]uint32{memWord(cl, 1, gRecv), memWord(cl, 1, gRecv+16), memWord(cl, 1, gRecv+32)}).To(Equal([]uint32{0x100, 0, 0x102}))
			// The sender is undisturbed.
			Expect(cl.Nodes[0].IRQs).To(BeZero())
			Expect(cl.Nodes[0].NI.Counters().AUPackets).To(Equal(uint64(3)))
		},
		Entry("on the receiver's link (router 1 to NI 1)", "Mesh.LinkT[1].BA"),
		Entry("on the sender's link (NI 0 to router 0): the routers forward it with its Bad tail", "Mesh.LinkT[0].AB"),
	)

	It("lets an AU store overtake an earlier 4 KB DU to the same node (section 4.2); both checked", func() {
		cl := newCluster(2, func(c *shrimptb.Config) { c.Params.AsyncSend = true })
		pr := setupPair(cl, 2, false)
		page := cl.Config.NI.PageBytes
		Expect(pr.tx.Bind(nil, gBind, pr.px, 0, page, false, 0)).To(Succeed())
		var order []shrimp.Kind
		var at []clock.Time
		cl.OnMemory(func(now clock.Time, node int, x *shrimptb.Expect) {
			order = append(order, x.Kind)
			at = append(at, now)
		})
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			Expect(pr.tx.Send(p, gSrc, pr.px, uint64(page), page, false)).To(Succeed())
			p.As("au").Store32(gBind, 0xfeed)
			pr.tx.Wait(p)
			p.Fence()
		}))
		run(cl)
		Expect(order).To(Equal([]shrimp.Kind{shrimp.KindAU, shrimp.KindDU}))
		GinkgoWriter.Printf("AU in memory at %v, DU at %v\n", at[0], at[1])
		Expect(memWord(cl, 1, gRecv)).To(Equal(uint32(0xfeed)))
	})

	It("with the threshold off, 15-to-1 AU overflows the senders' FIFOs: reported, the lost stores accounted, nothing else", func() {
		// A 4.5 KB FIFO (it must hold one 4 KB packet) that never
		// interrupts (shrimp.no-threshold, N=1: no crossing raises it); 15
		// writers of 512 per-store packets of 16 FIFO bytes (8 KB each)
		// into one receiver's EISA.
		mutations = map[string]int{"shrimp.no-threshold": 1}
		cl := newCluster(16, func(c *shrimptb.Config) {
			c.NI.FIFOBytes, c.NI.FIFOThreshold = 4608, 2304
		})
		page := cl.Config.NI.PageBytes
		rx := cl.Nodes[0].Kernel.NewProcess("rx")
		for s := 1; s < 16; s++ {
			b, err := rx.Export(nil, gRecv+uint64(s*page), page, false)
			Expect(err).NotTo(HaveOccurred())
			tx := cl.Nodes[s].Kernel.NewProcess("tx")
			px, err := tx.Import(nil, b)
			Expect(err).NotTo(HaveOccurred())
			Expect(tx.Bind(nil, gBind, px, 0, page, false, 0)).To(Succeed())
			cl.Nodes[s].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				for i := range 512 {
					p.Store32(gBind+uint64(4*(i%1024)), uint32(i))
				}
				p.Fence()
			}))
		}
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("shrimp.overflow")))
		Expect(cl.Finish()).To(HaveOccurred())
		cl.Close()
		for _, v := range e.Monitor.Violations() {
			Expect(v.Check).To(Equal("shrimp.overflow"), v.String())
		}
		var over uint64
		for _, n := range cl.Nodes[1:] {
			over += n.NI.Counters().Overflows
		}
		Expect(over).To(BeNumerically(">", 0))
		s := cl.Ref.Stats()
		Expect(s.Overflows).To(Equal(over))
		Expect(s.LostStores).To(BeNumerically(">=", over))
		Expect(s.Stores + s.LostStores).To(Equal(s.Snooped))
		Expect(s.Delivered).To(Equal(s.Expected))
	})
})

// The reference model on its own, fed by hand: what it accepts and the
// differences it names.
var _ = Describe("Ref", func() {
	au := shrimp.OPTEntry{Valid: true, AU: true, DstNode: 1, DstPage: 0x1000}
	pkt := func(addr uint64, data ...byte) *shrimp.Packet {
		return &shrimp.Packet{Kind: shrimp.KindAU, Src: 0, Dst: 1, DstAddr: addr, Len: len(data), Data: data}
	}
	It("takes a combined AU packet for consecutive stores, translated by the OPT", func() {
		r := shrimptb.NewRef(2)
		Expect(r.Snoop(0, 0x8000_10, []byte{1, 2, 3, 4}, au)).To(Succeed())
		Expect(r.Snoop(0, 0x8000_14, []byte{5, 6, 7, 8}, au)).To(Succeed())
		// Page 0x800 bound to node 1's page 0x1000: 0x800010 -> 0x1000010.
		x, lost, err := r.PacketOut(0, pkt(0x100_0010, 1, 2, 3, 4, 5, 6, 7, 8))
		Expect(err).NotTo(HaveOccurred())
		Expect(lost).To(BeEmpty())
		Expect(x.Seq).To(Equal(uint64(1)))
		Expect(x.Addr).To(Equal(uint64(0x100_0010)))
		Expect(r.PendingStores(0)).To(BeZero())
		Expect(r.Pending(1)).To(HaveLen(1))
		Expect(r.Stats().Stores).To(Equal(uint64(2)))
	})
	It("names a snooped store a later packet skipped", func() {
		r := shrimptb.NewRef(2)
		Expect(r.Snoop(0, 0x8000_10, []byte{1, 2, 3, 4}, au)).To(Succeed())
		Expect(r.Snoop(0, 0x8000_40, []byte{9, 9, 9, 9}, au)).To(Succeed())
		_, lost, err := r.PacketOut(0, pkt(0x100_0040, 9, 9, 9, 9))
		Expect(err).NotTo(HaveOccurred())
		Expect(lost).To(ConsistOf(ContainSubstring("at 0x800010")))
	})
	It("refuses an AU packet whose bytes no store wrote, and one that joins a non-consecutive store", func() {
		r := shrimptb.NewRef(2)
		Expect(r.Snoop(0, 0x8000_10, []byte{1, 2, 3, 4}, au)).To(Succeed())
		_, _, err := r.PacketOut(0, pkt(0x100_0010, 1, 2, 3, 5))
		Expect(err).To(MatchError(ContainSubstring("next snooped store")))
		r = shrimptb.NewRef(2)
		Expect(r.Snoop(0, 0x8000_10, []byte{1, 2, 3, 4}, au)).To(Succeed())
		Expect(r.Snoop(0, 0x8000_80, []byte{5, 6, 7, 8}, au)).To(Succeed())
		_, _, err = r.PacketOut(0, pkt(0x100_0010, 1, 2, 3, 4, 5, 6, 7, 8))
		Expect(err).To(MatchError(ContainSubstring("byte 4")))
	})
	It("checks a DU packet against the source as it was when the transfer started", func() {
		r := shrimptb.NewRef(2)
		d := shrimp.DUStart{Node: 0, Src: 0x2000, DstAddr: 0x5000, Len: 4}
		Expect(r.DUStarted(d, 1, []byte{1, 2, 3, 4}, func(uint64) bool { return false })).To(Succeed())
		p := &shrimp.Packet{Kind: shrimp.KindDU, Src: 0, Dst: 1, DstAddr: 0x5000, Len: 4, Data: []byte{1, 2, 0, 4}}
		_, _, err := r.PacketOut(0, p)
		Expect(err).To(MatchError(ContainSubstring("at byte 2")))
		// A byte a cache held dirty is not known: the destination's memory
		// gives it. A packet leaving as its header (the data follows) is
		// expected to deliver the snapshot.
		r = shrimptb.NewRef(2)
		Expect(r.DUStarted(d, 1, []byte{1, 2, 3, 4}, func(a uint64) bool { return a == 0x2002 })).To(Succeed())
		x, _, err := r.PacketOut(0, p)
		Expect(err).NotTo(HaveOccurred())
		Expect(x.Known).To(Equal([]bool{true, true, false, true}))
		Expect(r.Started(0)).To(BeEmpty())
		r = shrimptb.NewRef(2)
		Expect(r.DUStarted(d, 1, []byte{1, 2, 3, 4}, func(uint64) bool { return false })).To(Succeed())
		x, _, err = r.PacketOut(0, &shrimp.Packet{Kind: shrimp.KindDU, Src: 0, Dst: 1, DstAddr: 0x5000, Len: 4})
		Expect(err).NotTo(HaveOccurred())
		Expect(x.Data).To(Equal([]byte{1, 2, 3, 4}))
		Expect(x.Known).To(Equal([]bool{true, true, true, true}))
		// A source byte written after the start (a local store, or an
		// incoming packet: host/svm serves pages other nodes' updates are
		// still reaching) is not known either, even once its packet has
		// left: the engine may read either value.
		r.LocalWrite(0, 0x2001, []byte{9})
		Expect(x.Known).To(Equal([]bool{true, false, true, true}))
		r.LocalWrite(0, 0x2004, []byte{9})
		Expect(x.Known).To(Equal([]bool{true, false, true, true}))
	})
	It("removes a packet dropped at its destination, and only that one", func() {
		r := shrimptb.NewRef(2)
		Expect(r.Snoop(0, 0x8000_10, []byte{1, 2, 3, 4}, au)).To(Succeed())
		Expect(r.Snoop(0, 0x8000_20, []byte{5, 6, 7, 8}, au)).To(Succeed())
		p1, p2 := pkt(0x100_0010, 1, 2, 3, 4), pkt(0x100_0020, 5, 6, 7, 8)
		p1.Seq, p2.Seq = 1, 2
		_, _, err := r.PacketOut(0, p1)
		Expect(err).NotTo(HaveOccurred())
		_, _, err = r.PacketOut(0, p2)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.RxDropped(1, p2)).NotTo(BeNil())
		Expect(r.Pending(1)).To(ConsistOf(HaveField("Addr", uint64(0x100_0010))))
		Expect(r.Stats().Lost).To(Equal(uint64(1)))
	})
	It("accounts an overflow's stores as lost, not as pending, and keeps the older ones still in the FIFO", func() {
		r := shrimptb.NewRef(2)
		Expect(r.Snoop(0, 0x8000_10, []byte{1, 2, 3, 4}, au)).To(Succeed())
		Expect(r.Snoop(0, 0x8000_20, []byte{5, 6, 7, 8}, au)).To(Succeed())
		Expect(r.Overflowed(0, pkt(0x100_0020, 5, 6, 7, 8), 0, 0)).To(Succeed())
		Expect(r.PendingStores(0)).To(Equal(1))
		Expect(r.Stats().LostStores).To(Equal(uint64(1)))
		_, lost, err := r.PacketOut(0, pkt(0x100_0010, 1, 2, 3, 4))
		Expect(err).NotTo(HaveOccurred())
		Expect(lost).To(BeEmpty())
		Expect(r.PendingStores(0)).To(BeZero())
		Expect(r.Pending(1)).To(ConsistOf(HaveField("Addr", uint64(0x100_0010))))
	})
})
