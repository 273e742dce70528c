package shrimptb_test

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// golden keeps the records a reviewer reads: the programs' operations
// (of a polling loop only the loads whose value changed), the bus
// transactions and bridge crossings, the NIs' and checkers' shrimp.*
// records, link packets, DMA completions and the cache invalidations the
// incoming DMA causes.
func golden(recs []trace.Record) []trace.Record { return vtest.ReviewRecords(recs, "shrimp.") }

// gpoll is a reader's loop: load the 32-bit word at addr until it is want
// (each load labelled poll), then a labelled 1-cycle step marks the time.
func gpoll(p *cpu.Proc, addr uint64, want uint32) {
	for p.As("poll").Load32(addr) != want {
	}
	p.As("seen").Compute(1)
}

// goldenRun builds the cluster with seed 1 and a trace (mod changes its
// configuration), lets setup start programs, runs it with the checkers
// and returns the golden's records.
func goldenRun(mod func(c *shrimptb.Config), setup func(cl *shrimptb.Cluster)) []trace.Record {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: eisaClock, Trace: true, Seed: 1})
	c := shrimptb.DefaultConfig()
	c.Nodes = 2
	if mod != nil {
		mod(&c)
	}
	cl, err := shrimptb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	setup(cl)
	_, err = e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(cl.Finish()).To(Succeed())
	cl.Close()
	return golden(e.Trace.Records())
}

// auWord is the first golden's run: node 0 stores 0xdeadbeef to a page
// bound to node 1's buffer; node 1 polls its copy.
func auWord() []trace.Record {
	return goldenRun(nil, func(cl *shrimptb.Cluster) {
		pr := setupPair(cl, 1, false)
		Expect(pr.tx.Bind(nil, gBind, pr.px, 0, cl.Config.NI.PageBytes, false, 0)).To(Succeed())
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.As("write").Store32(gBind+64, 0xdeadbeef)
			p.As("mb").Fence()
		}))
		cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { gpoll(p, gRecv+64, 0xdeadbeef) }))
	})
}

// duSend is the second golden's run: node 0's process sends the 4-byte
// word at its gSrc (0xcafef00d) to byte 64 of node 1's buffer by a
// synchronous deliberate update (the library's two UDMA references);
// node 1 polls its copy.
func duSend() []trace.Record {
	return goldenRun(nil, func(cl *shrimptb.Cluster) {
		pr := setupPair(cl, 1, false)
		Expect(cl.Nodes[0].Memory().Storage().Write(gSrc, []byte{0x0d, 0xf0, 0xfe, 0xca})).To(Succeed())
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			Expect(pr.tx.Send(p, gSrc, pr.px, 64, 4, false)).To(Succeed())
			p.As("sent").Compute(1)
		}))
		cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { gpoll(p, gRecv+64, 0xcafef00d) }))
	})
}

// notify is the notification golden's run: node 1 exports its buffer
// with notifications (the IPT's interrupt bit) and its process has a
// handler; node 0 sends a word with the notify bit (a deliberate update);
// node 1's kernel takes the interrupt, pops the record and runs the
// handler. got receives what the handler saw.
func notify(got *[]shrimp.Notification) []trace.Record {
	return goldenRun(nil, func(cl *shrimptb.Cluster) {
		pr := setupPair(cl, 1, true)
		pr.rx.OnNotify(func(p *cpu.Proc, n shrimp.Notification) {
			*got = append(*got, n)
			p.As("handler").Compute(1)
		})
		Expect(cl.Nodes[0].Memory().Storage().Write(gSrc, []byte{1, 0, 0, 0})).To(Succeed())
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			Expect(pr.tx.Send(p, gSrc, pr.px, 0, 4, true)).To(Succeed())
		}))
	})
}

// combine is the combining golden's run: node 0 binds its page 0x800000
// to node 1's first page with combining (no sub-page) and 0x801000 to the
// second with 64-byte sub-pages, then makes 8-byte stores that close
// packets for each of the four reasons of SH-P17: non-consecutive, timer,
// sub-page and page.
func combine() []trace.Record {
	return goldenRun(nil, func(cl *shrimptb.Cluster) {
		pr := setupPair(cl, 2, false)
		page := cl.Config.NI.PageBytes
		Expect(pr.tx.Bind(nil, gBind, pr.px, 0, page, true, page)).To(Succeed())
		Expect(pr.tx.Bind(nil, gBind+uint64(page), pr.px, uint64(page), page, true, 64)).To(Succeed())
		v := func(i byte) []byte { return []byte{i, i, i, i, i, i, i, i} }
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			// Two consecutive stores, then one elsewhere: the first packet
			// (16 bytes) is closed as non-consecutive.
			p.As("a0").Store(gBind, v(1))
			p.As("a1").Store(gBind+8, v(2))
			p.As("b").Store(gBind+0x100, v(3))
			// Nothing more for 3 µs: the open packet (the store at +0x100)
			// is closed by the combining timer.
			p.As("wait").Compute(180)
			// Two stores ending at a 64-byte sub-page boundary of the second
			// page: closed as sub-page.
			p.As("s0").Store(gBind+uint64(page)+0x30, v(4))
			p.As("s1").Store(gBind+uint64(page)+0x38, v(5))
			// The last two words of the first page: closed as page.
			p.As("p0").Store(gBind+uint64(page)-16, v(6))
			p.As("p1").Store(gBind+uint64(page)-8, v(7))
			p.Fence()
		}))
	})
}

// thrStores is the threshold golden's writer: that many 4-byte stores,
// thrGap CPU cycles of work after each.
const (
	thrStores = 12
	thrGap    = 40
)

// thrResult is what the threshold golden's run saw besides its records:
// the FIFO occupancies the kernel's RegOccupancy reads returned (taken on
// node 0's EISA bus), and node 0's kernel and NI counts.
type thrResult struct {
	recs   []trace.Record
	polls  []uint32
	kernel vmmc.KernelStats
	ni     shrimp.Counters
}

// threshold is the threshold golden's run (section 4.5.2, SH-P21):
// node 0's NI has a tiny Outgoing FIFO (128 B, threshold 32 B; packets of
// at most 8 data bytes, so that 128 B holds one) and a one-word NIC TX
// FIFO, so that its NIC drains one per-store packet per 2 µs; node 0's
// process is bound to node 1's page for automatic update and stores a
// word every 41 CPU cycles (683.3 ns: the store's cycle and the
// Compute's 40, each op beginning in the cycle after the previous one
// executed). The FIFO crosses the threshold, the
// kernel's interrupt handler holds the writer until RegOccupancy reads at
// most Resume (16 B), and the writer resumes.
func threshold() thrResult {
	var r thrResult
	var cl *shrimptb.Cluster
	r.recs = goldenRun(func(c *shrimptb.Config) {
		c.NI.FIFOBytes, c.NI.FIFOThreshold, c.NI.MaxPacketBytes, c.NI.NICTxBytes = 128, 32, 8, 8
	}, func(c *shrimptb.Cluster) {
		cl = c
		pr := setupPair(cl, 1, false)
		Expect(pr.tx.Bind(nil, gBind, pr.px, 0, cl.Config.NI.PageBytes, false, 0)).To(Succeed())
		occ := cl.Config.Map.CSR + cl.Config.NI.CSRReg(shrimp.RegOccupancy)
		cl.Nodes[0].PCI.Observe(func(_ clock.Time, o bus.Observation) {
			if !o.Write && o.Addr == occ && len(o.Data) == 4 {
				r.polls = append(r.polls, binary.LittleEndian.Uint32(o.Data))
			}
		})
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			for i := range thrStores {
				p.As(fmt.Sprintf("s%d", i)).Store32(gBind+uint64(4*i), uint32(i+1))
				p.Compute(thrGap)
			}
			p.As("mb").Fence()
		}))
	})
	r.kernel, r.ni = cl.Nodes[0].Kernel.Stats(), cl.Nodes[0].NI.Counters()
	return r
}

var _ = Describe("SHRIMP goldens", Label("golden"), func() {
	// A golden with one record changed must fail, with a message naming
	// the record: change picks the line and returns its changed text.
	DescribeTable("fails when the golden is wrong",
		func(file string, run func() []trace.Record, pick func(l string) bool, change func(l string) string, want string) {
			if trace.Updating() {
				Skip("regenerating goldens")
			}
			path, err := vtest.AlterGolden(GinkgoT().TempDir(), "testdata/"+file, pick, change)
			Expect(err).NotTo(HaveOccurred())
			Expect(vtest.Golden(path, run())).To(MatchError(ContainSubstring(want)))
		},
		// The first packet record of node 0's NI: its time.
		Entry("au_word: a packet record's time", "au_word_n0_n1.trace", auWord,
			func(l string) bool { return strings.Contains(l, " N0.NI ") && strings.Contains(l, "shrimp.") },
			func(l string) string { f := strings.SplitN(l, " ", 2); return f[0] + "1 " + f[1] }, "N0.NI"),
		// The threshold crossing's occupancy.
		Entry("threshold: the crossing's occupancy", "threshold_n0_n1.trace", func() []trace.Record { return threshold().recs },
			func(l string) bool { return strings.Contains(l, "shrimp.fifo event=above") },
			func(l string) string { return strings.Replace(l, "bytes=48", "bytes=40", 1) }, "bytes=48"),
		// The resumed writer's first store: its time.
		Entry("threshold: the resumed store's time", "threshold_n0_n1.trace", func() []trace.Record { return threshold().recs },
			func(l string) bool { return strings.Contains(l, "op=s10 ") },
			func(l string) string { f := strings.SplitN(l, " ", 2); return "1" + f[0] + " " + f[1] }, "op=s10"),
	)

	It("times a one-word deliberate update from node 0 to node 1 with its UDMA pair", func() {
		Expect(vtest.Golden("testdata/du_send_n0_n1.trace", duSend(), duSendHeader...)).To(Succeed())
	})

	It("times a notification: one interrupt, the record popped, the handler run", func() {
		var got []shrimp.Notification
		recs := notify(&got)
		Expect(got).To(Equal([]shrimp.Notification{{Page: gRecv / 4096, Src: 0}}))
		Expect(vtest.Golden("testdata/notify_n0_n1.trace", recs, notifyHeader...)).To(Succeed())
	})

	It("closes combined AU packets for each of the four reasons", func() {
		Expect(vtest.Golden("testdata/combine_flushes_n0_n1.trace", combine(), combineHeader...)).To(Succeed())
	})

	It("interrupts above the FIFO threshold, holds the AU writer until the FIFO drains to Resume, then resumes it", func() {
		r := threshold()
		// One rising crossing, one interrupt, one deschedule; the kernel
		// read the occupancy until it was at most Resume (16 B = 32 / 2),
		// the FIFO never overflowed, and its peak stayed inside 128 B:
		// 104 B at s9's packet (core 191), packet 4's data word and
		// packets 5-10 (8 + 6 x 16; packet 4's header moved at core 189).
		Expect(r.ni.ThresholdIRQs).To(Equal(uint64(1)))
		Expect(r.ni.Overflows).To(BeZero())
		Expect(r.ni.FIFOMax).To(Equal(104))
		Expect(r.kernel.Threshold).To(Equal(uint64(1)))
		Expect(r.kernel.Deschedules).To(Equal(uint64(1)))
		Expect(r.polls).To(Equal([]uint32{72, 48, 32, 16}))
		// Held from CPU cycle 577 (the acknowledgement's store in 526,
		// the cycle the cause read retired, then KernelInstrs 50 in
		// 527-576) to the fourth read's retirement at 1102: 525 cycles,
		// 8.75 us.
		Expect(r.kernel.Descheduled).To(Equal(cpuClock.TimeOf(1102) - cpuClock.TimeOf(577)))
		Expect(vtest.Golden("testdata/threshold_n0_n1.trace", r.recs, thresholdHeader...)).To(Succeed())
	})

	It("times a one-word automatic update from node 0 to node 1", func() {
		Expect(vtest.Golden("testdata/au_word_n0_n1.trace", auWord(), auWordHeader...)).To(Succeed())
	})
})

// The goldens' headers: how each record's time follows from the previous
// ones. Clocks: CPU 60 MHz (16.667 ns), Xpress memory bus and NI core 30
// MHz (33.333 ns), EISA 8.333 MHz (120 ns), NIC, links and mesh 100 MHz
// (10 ns); the first number of a record is ps, the second the recording
// component's cycle (the checker's records: the memory bus's).
// cpuClock is node 0's processor clock (60 MHz), the unit of the
// threshold golden's hand-worked cycles.
var cpuClock = platform.DEC560ST().CPU.Clock

var auWordHeader = []string{
	"SHRIMP, two nodes of the paper's cluster (DEC 560ST, SHRIMP NI, Paragon 4x4 mesh; nodes 0 and 1 are",
	"neighbours): node 1 exports a page at 0x1000000, node 0 imports it and binds its page 0x800000 to it",
	"for automatic update (write-through, no combining); node 0's CPU stores 0xdeadbeef at 0x800040 and",
	"fences; node 1's CPU polls 0x1000040. Clocks: CPU 16.667 ns, Xpress/NI core 33.333 ns, EISA 120 ns,",
	"NIC/link/mesh 10 ns.",
	"Sender. The store retires at issue (posted, CPU cycle 0); the MB begins in cycle 1, the cycle after",
	"the store executed, and retires at 2 (cycles=1), once the store has left the CPU's port to the",
	"caches. The write-through store leaves the board cache for the Xpress: tenure from bus cycle 3",
	"(arbitration), address 4, data 5 (166.7 ns, bus.wt.write). The snoop board takes the beat in the",
	"data phase: snoop register 6, OPT lookup (OPTCycles 1) 7: page 0x800 is AU-bound to node 1's page",
	"0x1000, so shrimp.snoop and, without combining, the packet at once (shrimp.pkt flush=store, core",
	"cycle 7, 233.3 ns). It passes the Outgoing FIFO and the arbiter and leaves for the NIC at core cycle",
	"8 (266.7 ns: the checker's shrimp.expect, its record in Ref). The NIC port moves its 2 words (header",
	"8, data 9); the NIC domain sees the packet at link cycle 31 (the first 10-ns edge after core cycle",
	"9's end at 300 ns) and NICDelayCycles 96 later, link cycle 127 (1.27 us), sends it (shrimp.tx):",
	"route 2 + header 8 + data 4 = 14 B = 7 flits of 2 B, the tail on node 0's link at 133 (link.packet",
	"Mesh.LinkT[0].AB).",
	"Mesh. Router 0 forwards it +x: the tail on LinkX[0] at 137 and, through router 1, on node 1's link",
	"LinkT[1] at 141 (4 cycles per router, the wormhole pipeline behind the head).",
	"Receiver NI. NICDelayCycles 96 after the tail, 2.37 us, the NIC hands it to the NIC port (core",
	"clock, edge 2.4 us); the IPT says page 0x1000 is exported (shrimp.rx exported=1, recorded on the",
	"EISA clock, cycle 20 = 2.4 us). InSetupCycles 1 and the staging of its one word put the incoming",
	"DMA's descriptor at EISA cycle 22 (shrimp.rxdma, 2.64 us); its EISA write: arbitration 23, address",
	"24, data 25 (3.0 us, bus.dma.write master N1.NI.In), posted by the Xpress-EISA bridge at 26",
	"(bridge.dma.write). The bridge's far half (Xpress clock) gets the op and its word through the",
	"crossing FIFOs and after CrossCycles 1 takes the Xpress: tenure 99, address 100, data 101 (3.367",
	"us): memory has the word, the checker matches it to Ref's expectation (shrimp.mem), and the data",
	"phase invalidates node 1's cached line (cache.invalidate at CPU cycle 203, the next CPU edge).",
	"Reader. The first poll missed (fill: tenure 3, data 10, 2 memory wait states) and returned 0 at",
	"CPU cycle 22; later polls hit the cached 0 (not recorded: only polls whose value changed are",
	"kept). The poll after the invalidation misses: fill tenure 104, data 111, so the load returns",
	"0xdeadbeef at CPU cycle 224: 3.733 us after the store, the paper's «3.71 µs» one-word automatic-",
	"update latency (section 4.2; +0.6%, NICDelayCycles is calibrated to it).",
	"Breakdown (ns): CPU and Xpress 0-167; snoop, OPT, FIFO, arbiter, NIC port 167-310; NIC TX delay",
	"310-1270; wire and 2 routers 1270-1410; NIC RX delay 1410-2370; NIC port, IPT, DMA setup 2370-2640;",
	"EISA write 2640-3000; bridge and Xpress 3000-3367; reader's invalidation and miss 3367-3733.",
}

var duSendHeader = []string{
	"SHRIMP, two nodes of the paper's cluster: node 1 exports a page at 0x1000000 and node 0 imports",
	"it (OPT entry 6144, the kernel's first proxy entry); node 0's process sends the word 0xcafef00d at",
	"0xc00000 to byte 64 of the buffer, a synchronous deliberate update through the VMMC library;",
	"node 1's CPU polls 0x1000040. Clocks as in au_word_n0_n1.trace (EISA 120 ns, Xpress 33.333 ns).",
	"Library: 20 instructions (SendInstrs), then the UDMA pair (section 2.3, [10]). STORE of the count",
	"and notify bit to the device proxy 0x43800040 (0x42000000 + 6144 x 4096 + 64): the 20 instructions",
	"occupy CPU cycles 0-19 and the store begins in 20, the cycle after; retired at issue (posted, CPU",
	"cycle 20, 333.3 ns); uncached, on the Xpress tenure 13, data 15 (500 ns), into the bridge's PIO",
	"window (posted at 16), on EISA tenure 6, data 8 (960 ns: the EISA edges are 120 ns apart, so the",
	"bridge's posting at 533.3 ns makes the same tenure as at 500); the NI latches the destination at",
	"EISA cycle 9 (shrimp.udma op=store, 1.08 us). LOAD of the memory proxy 0x40c00000, begun in CPU",
	"cycle 21 (the cycle after the store executed, cycles=95): the bridge",
	"cannot answer it, so it is a delayed read: the CPU is retried while the bridge reads EISA, tenure",
	"10; the NI checks the request (one page, 4 <= 4096 bytes, OPT valid) and starts the transfer at",
	"12 (shrimp.du ev=start, shrimp.udma status=started, 1.44 us), the status word after",
	"StatusWaitCycles 1 (data 13). The CPU's retry on the Xpress (tenure 53: its retry train, an",
	"attempt every 3 bus cycles, is one cycle later since the load began 2 CPU cycles later) finds it:",
	"data 57, the load retires at CPU cycle 116 (1.933 us): the send overhead so far.",
	"DU engine. After DUSetupCycles 1 (hidden: the EISA carries the status read until its idle",
	"cycle 14) it reads the 4 source bytes over EISA: arbitration 15, address 16. EISA has no retry:",
	"the bridge takes the read and holds the engine in wait states (IOReadWaitStates; 4 waits,",
	"17-20, bridge.du.read start 17) while the read crosses (CrossCycles 1) and reads memory on the",
	"Xpress (bus.du.read tenure 66, data 70 with 2 memory wait states, 2.333 us); the data crosses",
	"back (first 20) and the bus moves it at EISA 21 (2.52 us); dma.done at 24. The packet leaves the",
	"arbiter for the NIC at core cycle 87 (2.9 us, shrimp.expect: Ref's snapshot of the source taken",
	"at the start); the engine is done at EISA 25 (shrimp.du ev=done, 3.0 us) and the library's",
	"status poll (Wait) sees it: the send returns at CPU cycle 181 (3.017 us).",
	"Network. As the AU golden: NICDelayCycles 96 after the NIC has the packet, link cycle 390",
	"(shrimp.tx, 7 flits); the data word follows the header through the NIC port, so the tail leaves",
	"at 401 and, behind it, crosses router 0 (LinkX[0] 403) and router 1 (LinkT[1] 405).",
	"Receiver: NICDelayCycles 96 after the tail (5.01 us), the NIC port and the IPT: shrimp.rx at EISA",
	"cycle 42 (5.04 us); rxdma at 44; EISA write 45-47 (5.64 us), bridge 48; Xpress tenure 178, data",
	"180 (6.0 us, shrimp.mem), invalidating node 1's line (CPU cycle 361). The poll after it misses",
	"(fill 182-189) and returns 0xcafef00d at CPU cycle 380: 6.333 us from the send call, against",
	"the paper's «6 µs» deliberate-update latency (section 4.1; +5.6%: DUSetupCycles is calibrated",
	"to it, and 0 or 1 give the same latency here, the setup hidden behind the status read).",
	"Breakdown (ns): library 0-333; UDMA STORE to the NI 333-1080; LOAD and start 1080-1440; status",
	"back to the CPU 1440-1933; DU setup and the source read in wait states 1440-2520; engine and",
	"arbiter 2520-2900; NIC TX, wire, routers 2900-4050; NIC RX 4050-5040; incoming DMA, bridge,",
	"Xpress 5040-6000; reader's miss 6000-6333.",
}

var notifyHeader = []string{
	"SHRIMP, two nodes: node 1 exports its page 0x1000000 with notifications (the IPT's interrupt bit,",
	"SH-P18) and its process installs a handler; node 0 sends the word 1 to byte 0 with the notify bit",
	"(a synchronous deliberate update). Clocks as in au_word_n0_n1.trace.",
	"Sender and network: du_send_n0_n1.trace's records to the cycle (the UDMA STORE now carries the",
	"notify bit: shrimp.udma notify=1, and the packet's header bit).",
	"Receiver. shrimp.rx notify=1 at EISA cycle 42 (5.04 us); the packet's bit and the page's bit are",
	"both set, so with the incoming DMA's descriptor (rxdma, 44) the NI queues a notification record",
	"(page 4096 = 0x1000000 / 4096, source 0: shrimp.notify) and raises its interrupt line to CPU 0",
	"(5.28 us); the data reaches memory at Xpress cycle 180 (6.0 us, shrimp.mem), as without notify.",
	"Kernel. The CPU recognises the interrupt InterruptDelay 256 cycles after the next edge (cycle 317",
	"+ 256 = 573, 9.55 us; SH-P22's derivation); InterruptEntry 64 occupies cycles 573-636 and the",
	"kernel's interrupt program begins in the cycle after, 637 (10.617 us). Its first access, the cause",
	"in RegStatus (CSR 0x44018000), is an uncached load through the bridge as a delayed read: EISA read",
	"at 91-95 with 2 waits (the CSR port's csrLatency 1 and the register), the CPU's retry on the Xpress",
	"(348-352) gets it, retired at CPU cycle 706 (11.767 us, cycles=69). The kernel acknowledges every",
	"cause it read at once: the RegIRQAck store (IRQNotify), posted, retired at issue in 706, the",
	"cycle the load's data came: Xpress 356-358, bridge 359, EISA 101-103, the NI's CSR write at EISA",
	"105 (12.6 us). KernelInstrs 50 occupy 707-756; in 757 (12.617 us) it pops the notification queue",
	"(RegNotify, 8 bytes: EISA 108-113, 13.56 us, after the acknowledgement: a read does not pass the",
	"posted write). In the CPU's retry train (an attempt every 3 Xpress cycles: arbitration, address",
	"answered with a retry, idle) the attempt at 411 (address 412) is the first after the bridge holds",
	"the answer: data 415, retired at CPU 832 (13.867 us, cycles=75). The kernel's KernelInstrs 50 for",
	"the record occupy 832-881 and it queues the record for the page's process. The next pop, the",
	"level's re-read after serving, begins in 882 and finds the queue empty (EISA 126-131; Xpress retry",
	"477-481; retired at CPU 964, 16.067 us, cycles=82). The kernel's part is done; at the interrupt's",
	"return to user mode the process's handler (Compute(1)) runs with interrupts enabled (as a signal",
	"handler: VMMC's notifications, section 2.2), in 964 (16.067 us, the cycle the empty pop's data",
	"came), then the interrupt returns. One interrupt, one record, one handler call: the notification",
	"checker (shrimp.notify) matched the interrupt to the packet.",
	"Breakdown (ns): packet as du_send until the incoming descriptor 0-5280; interrupt recognition",
	"5280-9550; entry 9550-10617; cause read 10617-11767 (the acknowledgement posted at its end); pop",
	"11767-13867; the record's kernel work and the empty pop 13867-16067; handler 16067.",
}

var combineHeader = []string{
	"SHRIMP, two nodes: node 0 binds its page 0x800000 to node 1's page 0x1000000 with combining and no",
	"sub-page (4096), and 0x801000 to 0x1001000 with combining and 64-byte sub-pages (SH-P17); its CPU",
	"makes 8-byte write-through stores: a0 0x800000, a1 0x800008, b 0x800100, 180 cycles of work, s0",
	"0x801030, s1 0x801038, p0 0x800ff0, p1 0x800ff8. Clocks as in au_word_n0_n1.trace.",
	"Each store is one Xpress write 4 bus cycles after the previous (arbitration, address, data, idle:",
	"data phases 5, 9, 13), snooped 2 core cycles after its data phase (snoop register, OPTCycles 1:",
	"shrimp.snoop at 7, 11, 15).",
	"Non-consecutive: a0 opens a packet, a1 (the next 8 bytes) joins it; b at +0x100 does not follow,",
	"so at its lookup (core cycle 15) the open packet is closed (shrimp.pkt flush=nonconsecutive, 16",
	"bytes at 0x1000000) and b opens the next. The 16-byte packet is 2 + 8 + 16 = 26 wire bytes = 13",
	"flits (shrimp.tx at link cycle 153: the NIC has it at 57, + NICDelayCycles 96).",
	"Timer: nothing joins b's packet; CombineCycles 32 after b's lookup, core cycle 47 (1.567 us), the",
	"timer closes it (flush=timer, 8 bytes at 0x1000100; shrimp.tx at 260, 9 flits).",
	"Sub-page: the 180 cycles begin in cycle 3, the cycle after b executed, and occupy 3-182 (wait",
	"retires at 182, 3.033 us); s0 begins in 183 and s0, s1, p0 retire at issue in 183, 184, 185; p1",
	"waits for a write-buffer entry until 188 (cycles=2). Their Xpress writes: data phases 96, 100, 104,",
	"108 (3.2 to 3.6 us), snooped at 98, 102, 106, 110. s0 and s1 fill 0x801030-0x80103f, the end of a",
	"64-byte sub-page: the packet is closed at s1's lookup (core 102) as soon as it reaches the",
	"boundary (flush=subpage, 16 bytes at 0x1001030; shrimp.expect 103).",
	"Page: p0 and p1 fill the last 16 bytes of page 0x800000: closed at p1's lookup (core 110) at the",
	"page boundary (flush=page, 16 bytes at 0x1000ff0; shrimp.expect 111). (A page or sub-page packet",
	"is closed by its last store, not by the next one.) The NIC has each packet at the first link edge",
	"after the core cycle that follows its shrimp.expect (3.467 us: link 347; 3.733 us: 374), and",
	"sends it NICDelayCycles 96 later: shrimp.tx at 443 and 470 (13 flits; tails on node 1's link at",
	"463 and 490).",
	"Receiver: each packet arrives as au_word's (NICDelayCycles 96 at each NIC), one EISA DMA write",
	"per packet (L247: 16 or 8 bytes), crossing the bridge to an Xpress write that the held bus streams",
	"at the EISA's pace (4 wait states for 16 bytes); the checker matches each to its expectation in",
	"order (shrimp.mem seq 1-4 at 3.9, 4.667, 6.9 and 7.733 us; the last two: shrimp.rx at EISA 47 and",
	"50, rxdma 53 and 57, EISA writes data 56 and 63, Xpress data 207 and 232). Four packets for seven",
	"stores: the combined ones carry two stores each.",
}

var thresholdHeader = []string{
	"SHRIMP, two nodes: the threshold interrupt, deschedule and resume of an automatic-update writer",
	"(section 4.5.2; SH-P20, SH-P21, SH-P22). Node 1 exports its page 0x1000000, node 0 imports it and",
	"binds its page 0x800000 to it (write-through, no combining). The NIs have a directed configuration",
	"in which a dozen stores fill the FIFO: Outgoing FIFO 128 B = 16 words of 8 B (SH-P20's width; it",
	"must hold one largest packet, so MaxPacketBytes 8), FIFOThreshold 32 B, the kernel's Resume 16 B",
	"(Params.FIFOResume 0: half the threshold), and a one-word NIC TX FIFO (NICTxBytes 8): the NIC is the",
	"one bottleneck, each word waits NICDelayCycles 96 link cycles in it and the next moves only after it",
	"left. The writer, node 0's CPU: s0..s11, a 4-byte store of i+1 at 0x800000 + 4i, each followed by",
	"Compute(40): a store every 41 CPU cycles (683.3 ns: the store takes its cycle, the Compute the 40",
	"after it, and each op begins in the cycle after the previous one executed: s_i at cycle 41i, s0..s9",
	"at 0, 41, ..., 369), then mb. Clocks as in au_word_n0_n1.trace.",
	"Fill and drain. Each store is one Xpress write and one per-store packet (shrimp.pkt flush=store 2",
	"core cycles after its data phase, as au_word's): a header and a data word, 16 B of FIFO every 683.3",
	"ns. The arbiter takes packet j once packet j-1's last word has moved to the NIC (shrimp.expect at",
	"core 8, then 40, 100, 160, ...: every 60 core cycles = 2 us). Its words then pass the one-word NIC",
	"TX FIFO one at a time: the port moves a word at a core edge, the NIC takes it NICDelayCycles 96 plus",
	"one link cycle later, and the port moves the next at the following core edge, 3 link cycles on: 100",
	"link cycles per word (packet 1's header moved at core 9, 300 ns, sent at link 127, shrimp.tx; its",
	"data word moved at core 39, sent at 227; packet 2's header moved at core 69, sent at 327; packet j's",
	"header at core 9 + 60(j-1), its data word 30 later), so shrimp.tx is every 200 link cycles: 127,",
	"327, ..., 2327 (23.27 us). Fill 16 B per 683.3 ns, drain 16 B per 2 us.",
	"Threshold (SH-P21). At s3's packet (core 68, 2.267 us) the FIFO holds packet 2 (its header moves at",
	"69), 3 and 4: 48 B > 32 (shrimp.fifo event=above bytes=48), and the NI raises IRQThreshold on CPU",
	"0's line (CPU cycle 136, the same instant).",
	"Recognition (SH-P22). The CPU recognises it InterruptDelay 256 cycles after the next edge, at cycle",
	"137 + 256 = 393 (6.55 us); meanwhile the writer runs on: s4..s9 (cycles 164..369), and the FIFO",
	"peaks at 104 B at s9's packet (core 191, 6.367 us: packet 4's header moved at 189, so its data word",
	"and packets 5-10, 8 + 6 x 16: FIFOMax, 24 B short of overflow; SH-P22's lower bound on the room",
	"above the threshold is this recognition time multiplied by the write bandwidth). The interrupt is",
	"taken in cycle 393, inside s9's Compute (cycles 370-409; its 17 cycles 393-409 are left), and",
	"InterruptEntry 64 occupies 393-456: the kernel's handler begins its first op in 457 (7.617 us).",
	"Kernel (host/vmmc; section 4.5.2: the system software de-schedules the processes that perform",
	"automatic update until the FIFO drains sufficiently). The cause, RegStatus at 0x44018000, through",
	"the bridge as a delayed read as in notify_n0_n1.trace: the NI's CSR read at EISA 69 (8.28 us,",
	"IRQThreshold), EISA 66-70 with 2 wait states, the CPU's retry on the Xpress 258-262; retired at CPU",
	"526 (8.767 us, cycles=69). The kernel acknowledges the cause it read at once (RegIRQAck, posted,",
	"retired at issue in 526, the cycle the load's data came: Xpress 266-268, bridge 269, EISA 76-78, the",
	"NI's CSR write at EISA 80, 9.6 us). KernelInstrs 50 occupy 527-576; from cycle 577 (9.617 us) the",
	"writer is held: per round, ResumePollCycles 60 (Compute) and a RegOccupancy read (0x44018008), the",
	"level's re-read, until the read returns at most Resume. Round 1: Compute 577-636, read 637-706",
	"(cycles=69); the NI answers at EISA 94 (11.28 us, after the acknowledgement: a read does not pass",
	"the posted write) with 72 B (packet 6's data word, which moves at core 339, and packets 7-10). Round",
	"2: Compute 706-765 (a load's successor begins in the cycle its data came), read 766-842 (cycles=76),",
	"EISA 113 (13.56 us): 48 B (packets 8-10: packet 7's data word moved at 399). Round 3: Compute",
	"842-901, read 902-972, EISA 131 (15.72 us): 32 B (packets 9-10). Round 4: Compute 972-1031, read",
	"1032-1102, EISA 149 (17.88 us): 16 B (packet 10, taken by the arbiter at core 520). The reads retire",
	"at CPU 706, 842, 972, 1102 (11.767, 14.033, 16.2, 18.367 us). The FIFO is back at the threshold at",
	"core 459 (15.3 us, shrimp.fifo event=below bytes=32: packet 8's data word moved). 16 <= 16: the",
	"kernel releases the writer and returns. Held from cycle 577 to 1102: 525 cycles = 8.75 us",
	"(KernelStats.Descheduled).",
	"Resume. InterruptReturn 64 occupies 1102-1165 (the last read retired in 1102; a load's successor",
	"may begin in that cycle) and the Compute's 17 cycles 1166-1182, so s10 retires at CPU cycle 1183",
	"(19.717 us) instead of 410 (369 + 41): 773 cycles (12.883 us) late; s11 at 1224, mb at 1265",
	"(21.083 us). Their packets (11 and 12, shrimp.pkt at core 598 and 619) hold the",
	"FIFO at most at 24 B (packet 11's header moved at core 609, so at 619 its data word and packet",
	"12), not above the threshold: no second interrupt.",
	"Receiver. Each packet reaches node 1 as au_word's does (shrimp.rx 1.13 to 1.21 us after its",
	"shrimp.tx, by the EISA clock's phase), its data word 1 us behind its header; the incoming DMA then",
	"writes it over EISA, the bridge and the Xpress (shrimp.mem 2.90 to 2.96 us after shrimp.tx: packet 1",
	"at 4.2 us, packet 12 at 26.167 us), one packet per 2 us, so the receiver never backs up the sender.",
	"Twelve stores, twelve packets, each matched once (shrimp.mem seq 1-12); 213 records.",
}
