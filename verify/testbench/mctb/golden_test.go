package mctb_test

import (
	"os"
	"strings"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/mctb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// golden keeps the records a reviewer reads: the programs' operations
// (of a polling loop only the loads whose value changed), the bus
// transactions and bridge crossings, the adapters', hub's and checkers'
// mc.* records, link packets, the receive DMA's completions and the cache
// invalidations the DMA causes.
func golden(recs []trace.Record) []trace.Record { return vtest.ReviewRecords(recs, "mc.") }

// poll is a reader's loop: load the 32-bit word at addr until it is want
// (each load labelled poll), then a labelled 1-cycle step marks the time.
func poll(p *cpu.Proc, addr uint64, want uint32) {
	for p.As("poll").Load32(addr) != want {
	}
	p.As("seen").Compute(1)
}

// goldenRun builds the default cluster with seed 1 and a trace, lets
// setup map regions and start programs, runs it with the checkers and
// returns the golden's records.
func goldenRun(setup func(cl *mctb.Cluster)) []trace.Record {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: pciClock, Trace: true, Seed: 1})
	cl := build(e, nil)
	setup(cl)
	_, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(cl.Finish()).To(Succeed())
	cl.Close()
	return golden(e.Trace.Records())
}

// write4 is the first golden's run: node 0's CPU 0 stores 0xdeadbeef to a
// point-to-point region node 1 receives; node 1's CPU 0 polls its copy.
func write4() []trace.Record {
	return goldenRun(func(cl *mctb.Cluster) {
		r, err := cl.PointToPoint("p2p", 1, 8192)
		Expect(err).NotTo(HaveOccurred())
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.As("write").Store32(r.Tx[0], 0xdeadbeef)
			p.As("mb").Fence()
		}))
		cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { poll(p, r.Rx[1], 0xdeadbeef) }))
	})
}

var _ = Describe("Memory Channel goldens", Label("golden"), func() {
	It("fails when the golden is wrong", func() {
		if trace.Updating() {
			Skip("regenerating goldens")
		}
		data, err := os.ReadFile("testdata/write4_n0_n1.trace")
		Expect(err).NotTo(HaveOccurred())
		// One PCI cycle later for the packet leaving node 0's adapter.
		bad := strings.Replace(string(data), "2130000 71 N0.MC mc.tx", "2160000 72 N0.MC mc.tx", 1)
		Expect(bad).NotTo(Equal(string(data)))
		path := GinkgoT().TempDir() + "/write4_n0_n1.trace"
		Expect(os.WriteFile(path, []byte(bad), 0o644)).To(Succeed())
		Expect(vtest.Golden(path, write4())).To(MatchError(ContainSubstring("N0.MC")))
	})

	It("times a 4-byte write from node 0 to node 1", func() {
		Expect(vtest.Golden("testdata/write4_n0_n1.trace", write4(), write4Header...)).To(Succeed())
	})

	It("times a broadcast write with doubling", func() {
		recs := goldenRun(func(cl *mctb.Cluster) {
			r, err := cl.Broadcast("shared", 8192, false)
			Expect(err).NotTo(HaveOccurred())
			cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				// Doubling (Figure 1): the own receive copy, then the
				// transmit window.
				cl.Ref.LocalWrite(0, r.Rx[0]+64, []byte{0x11, 0x22, 0x33, 0x44})
				p.As("local").Store32(r.Rx[0]+64, 0x44332211)
				p.As("write").Store32(r.Tx[0]+64, 0x44332211)
				p.As("mb").Fence()
				p.As("own").Load32(r.Rx[0] + 64)
			}))
			cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { poll(p, r.Rx[1]+64, 0x44332211) }))
		})
		Expect(vtest.Golden("testdata/broadcast_doubling.trace", recs, broadcastHeader...)).To(Succeed())
	})

	It("times a loop-back write seen by its writer", func() {
		recs := goldenRun(func(cl *mctb.Cluster) {
			only0 := []bool{true, false, false, false, false, false, false, false}
			r, err := cl.Map("flush", 32, true, only0, only0)
			Expect(err).NotTo(HaveOccurred())
			cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				p.As("write").Store32(r.Tx[0], 1)
				p.As("mb").Fence()
				poll(p, r.Rx[0], 1)
			}))
		})
		Expect(vtest.Golden("testdata/loopback_self.trace", recs, loopbackHeader...)).To(Succeed())
	})

	It("times a lock acquire and release without contention", func() {
		var rounds []mctb.LockRound
		recs := goldenRun(func(cl *mctb.Cluster) {
			// Section 2.3: the 8-entry array, one longword per node, in a
			// broadcast region with loop-back; node 0's flag in its memory.
			r, err := cl.Loopback("lock", 4*len(cl.Nodes))
			Expect(err).NotTo(HaveOccurred())
			l := mctb.Lock{Flag: 0x1_0000, Tx: r.Tx[0], Rx: r.Rx[0], Node: 0, Nodes: len(cl.Nodes), Backoff: 100,
				WaitRelease: true, Patience: clock.Millisecond}
			Expect(l.Validate()).To(Succeed())
			cl.Nodes[0].CPUs[0].Run(cpu.Go(mctb.LockProgram(l, 1, 0, 0, &rounds)))
		})
		Expect(rounds).To(HaveLen(1))
		Expect(rounds[0].Lost).To(BeZero())
		Expect(vtest.Golden("testdata/lock_acquire_release.trace", recs, lockHeader...)).To(Succeed())
	})
})

// The goldens' headers: how each record's time follows from the previous
// ones. Clocks: CPU 233 MHz (4.292 ns), memory bus 33.3 MHz (30.04 ns),
// PCI, adapter, link and hub 33.33 MHz (30 ns); the first number of a
// record is ps, the second the recording component's cycle.
var write4Header = []string{
	"Memory Channel, the paper's cluster (8 AlphaServer 2100 4/233 nodes, MC1 adapters, MC1 hub in bus",
	"mode): node 0's CPU 0 stores 0xdeadbeef to a point-to-point region only node 1 receives (window",
	"0x40000000 = global page 0, node 1's frame 0x8000000 at 128 MB) and fences; node 1's CPU 0 polls",
	"its copy. Clocks: CPU 4.292 ns, memory bus 30.04 ns, PCI/adapter/link/hub 30 ns.",
	"Sender. The store retires at issue (posted, cycle 0); the MB begins in cycle 1, the cycle after",
	"the store executed (host/cpu: an operation's successor begins the cycle after it executes), and",
	"retires in cycle 2 (cycles=1), when the store has left the CPU's channel. (Before host/cpu's",
	"commit 8e23296 the MB began in cycle 0, cycles=2; no record's time moved.) The TX window lies",
	"beyond memory, so the cache sends the store uncached: bus",
	"tenure from memory-bus cycle 2 (arbitration), address 3, decode 4, data 5 (150 ns) into the",
	"bridge's PIO window; the T2 bridge posts it at 6 and crosses it (CrossCycles 4 and the clock",
	"crossing) to PCI, where the tenure starts at PCI cycle 12 and the data phase is at 18 (address",
	"13, decode 14, the TX port's TxBeatCycles-1 = 3 wait states 15-17, data 18 = 540 ns).",
	"Adapter TX: the beat is in the TX FIFO at c19; PipelineCycles 52 later, c71 (2.13 us), the packet",
	"leaves (mc.tx, global address 0, no loop-back). One flit of 8 header + 4 data = 12 wire bytes =",
	"3 link cycles: the tail is sent at c74 (link.packet), at the hub after the wire's 1 cycle (c75).",
	"Hub: picked and put in the global order at c76 (order 1; dests = every port but the sender, the",
	"bus broadcasts); the flit holds the hub bus ceil(12/4) = 3 cycles (c77-79) and reaches every",
	"output queue after the 8-cycle forwarding delay, c87 (mc.deliver x 7); each output link takes 3",
	"cycles (link.packet at c90) plus the wire's 1: at every adapter at c91.",
	"Receivers. Nodes 2-7 have no receive mapping for page 0: their filters drop it at c91",
	"(mc.drop rx-unmapped). Node 1 maps it to 0x8000000: its descriptor goes to the DMA engine",
	"1 + PipelineCycles = 53 cycles later, c144 (mc.rxdma, 4.32 us); DMASetupCycles 4 and the FIFO",
	"read put the engine's write at c151 (dma.done: handed to PCI), tenure 151, data phase 154;",
	"the bridge posts it at 155 and writes it on node 1's memory bus (tenure 160, data 163 =",
	"4.897 us, where the checker sees it: mc.mem) and memory takes it. The data phase invalidates",
	"CPU 0's cached copy of the line (cache.invalidate at CPU cycle 1142, the next CPU edge).",
	"Reader. Its first poll missed (memory-bus fill, data at cycle 10: 2 memory wait states) and read",
	"0; later polls hit the cached 0 (not recorded: only polls whose value changed are kept). The",
	"poll after the invalidation misses: fill tenure 165, data 173 (3 waits: memory is still",
	"writing the DMA's word), so the load returns 0xdeadbeef at CPU cycle 1213: 5.206 us from the",
	"store, the paper's 5.2 us («Unicast and multicast process-to-process writes have a latency of",
	"5.2 us», section 2.1; PipelineCycles is calibrated to it).",
	"Breakdown (ns): CPU + write buffer + memory bus 0-150; bridge down + sender PCI 150-540;",
	"adapter TX 540-2130 (FIFO 30 + pipeline 1560); uplink 2130-2250; hub 2250-2610; downlink",
	"2610-2730; adapter RX 2730-4320 (1590); receive DMA + PCI 4320-4620; bridge up + memory bus",
	"4620-4897; reader's invalidation and miss 4897-5206.",
}

var broadcastHeader = []string{
	"Memory Channel, the paper's cluster: a broadcast region (every node transmits and receives, no",
	"loop-back). Node 0's CPU 0 doubles a store (Figure 1): 0x44332211 to its own receive copy",
	"(0x8000040, write-back cached memory) and the same to the transmit window (0x40000040), then",
	"MB and a load of its own copy; node 1's CPU 0 polls its copy. Times as in write4_n0_n1.trace.",
	"The local store misses: the cache reads the line for ownership (bus.rfo.read, tenure 2, data 10",
	"with 2 memory wait states). Stores leave in program order, so the window store goes out behind",
	"it: memory-bus tenure 12, data 14 (9 bus cycles = 270 ns later than without doubling), bridge",
	"15, PCI tenure 21, data 27. The window store begins in CPU cycle 1, the cycle after the local",
	"store executed, and retires in it (cycles=0; it began in 0 and waited a cycle for the write",
	"buffer before host/cpu's commit 8e23296: cycles=1); the MB begins in 2 and retires when the",
	"fill has completed the local store (CPU cycle 72, cycles=70, was 71; the time is unchanged)",
	"and the own load hits the line it now holds dirty (84): the writer sees its write",
	"from its own store, long before the network delivers it.",
	"From the PCI data phase every record is write4_n0_n1's shifted by 9 PCI cycles (270 ns): mc.tx",
	"c80, uplink c83, order 1 at c85 with dests 1-7 (no loop-back: not the sender), mc.deliver c96,",
	"downlinks c99. All seven receivers map the page, so all seven do the same in the same cycles:",
	"mc.rxdma c153, dma.done c160, PCI data 163, bridge 164, memory-bus tenure 169, data 172 (5.167",
	"us, mc.mem at each). Node 0 gets nothing (its own packet is not looped back). Node 1's poll",
	"misses after the invalidation (CPU cycle 1205) and returns the value at CPU cycle 1276, 5.476",
	"us: multicast costs what unicast does (the hub bus delivers to every output in the same",
	"cycles), plus the 270 ns the doubling's local miss added ahead of the window store.",
}

var lockHeader = []string{
	"Memory Channel, the paper's cluster: Cashmere-2L's global lock (section 2.3: «a test-and-set flag",
	"on each node and an 8-entry array in Memory Channel space»; mctb.Lock) taken and released once by",
	"node 0's CPU 0, nobody contending. The array is 8 longwords in a broadcast region with loop-back",
	"(«Only locks use loopback mode», Figure 1(a)): window 0x40000000 (global page 0), every node's",
	"copy at 0x8000000; node 0's flag at 0x10000 in its memory. Times as in write4_n0_n1.trace.",
	"Acquire, step 1, «acquires the per-node test-and-set flag using ll/sc»: the flag read (lock.test)",
	"misses (memory-bus fill, tenure 2, data 10, 2 wait states) and returns 0 at CPU cycle 72, as",
	"write4's first poll; the LL hits the line (8 cycles, c80) and reads 0; the SC, to write the line",
	"the read fill brought in unowned, claims it with an address-only upgrade (bus.upgrade.addr,",
	"tenure 13, address 14), writes 1 and retires at c100 (ok=1): 429 ns.",
	"Step 2, «sets the array entry for its node, waits for the write to appear via loop-back»: an MC",
	"flush (mctb.Flush) of 1 to node 0's entry. The store retires at issue (c100); the MB begins at",
	"c101 (host/cpu: an operation's successor begins the cycle after it executes) and retires at",
	"c102 (cycles=1; 2 before commit 8e23296). The PIO tenure starts at memory-bus cycle 16, the",
	"second edge after the store as in",
	"write4 (0 -> 2), but the bus was busy the cycle before, so arbitration is hidden (rtl/bus grant)",
	"and the data phase is at 18, not 19. From there every record is loopback_self's shifted by 13",
	"cycles: bridge 19, PCI tenure 25, data 31 (930 ns); mc.tx c84 (31 + 1 + PipelineCycles 52) with",
	"loopback=1; uplink c87; order 1 at c89 with dests 0-7 (the loop-back bit includes the sender);",
	"mc.deliver c100 (3 bus cycles + 8 delay); downlinks c103. Every node maps the page, so all eight",
	"adapters do the same in the same cycles: mc.rxdma c157 (103 + 1 + 53), dma.done c164, PCI data",
	"167, bridge 168, memory-bus tenure 173, data 176 (5.288 us, mc.mem at each). Only node 0's CPU",
	"holds the line: its invalidation at CPU cycle 1233, the next CPU edge.",
	"The poll (labelled poll; only loads whose value changed are kept) first missed: fill tenure 20,",
	"data 27 (hidden arbitration again, behind the PIO store) and read 0 at c191. The poll after the",
	"invalidation misses (fill tenure 178, data 186, 3 waits: memory is still writing the DMA's word)",
	"and returns 1 at c1304, 71 cycles after the invalidation as in write4: 5.167 us after the store.",
	"Step 3, «reads the whole array. If its entry is the only one set, then the process has acquired",
	"the lock»: 7 lock.read loads of entries 1-7, each a hit (8 cycles: c1312 ... c1360) on the line",
	"the poll just fetched, all 0; the lock is held at c1360 after lock.mb (nothing outstanding, 0",
	"cycles): the acquire took 5.837 us.",
	"Release (WaitRelease, mctb.Lock): lock.mb (0 cycles), then the flush of 0 to the entry: store at",
	"c1360, MB from c1361 to c1362 (cycles=1, was 2); PIO tenure 196 (arbitration, the bus idle),",
	"data 199 (3 cycles as write4's 2-5),",
	"bridge 200, PCI tenure 206, data 212: from here write4's records shifted by 194 PCI cycles: mc.tx",
	"c265, uplink c268, order 2 at c270, mc.deliver c281, downlinks c284, mc.rxdma c338, dma.done",
	"c345, PCI data 348, bridge 349, memory-bus data 357 (10.725 us) at all eight nodes; node 0's",
	"invalidation at CPU cycle 2500; the poll's miss (fill 359-367) returns 0 at c2571, 71 cycles",
	"later (the first polls read the 1 still cached and are not kept). lock.free clears the flag at",
	"c2571 with a hit on the line the SC owns (no bus). The release took 5.197 us; acquire and",
	"release 11.034 us, the paper's «In the absence of contention, acquiring and releasing a lock",
	"takes about 11 us» (section 2.3): two loop-back flushes of about 5.2 us each (section 2.1's",
	"one-way latency, to which PipelineCycles is calibrated), plus the flag's miss and the array read.",
}

var loopbackHeader = []string{
	"Memory Channel, the paper's cluster: a one-page region with loop-back that only node 0 maps, for",
	"transmit and receive (the MC flush: write, wait for the write to come back). Node 0's CPU 0",
	"stores 1 to the window (0x40000000), fences and polls its own receive copy (0x8000000). The",
	"store retires at issue (cycle 0), the MB begins in cycle 1 and retires in 2 (cycles=1; 2 before",
	"host/cpu's commit 8e23296, when it began in the store's cycle), as in write4_n0_n1.trace.",
	"The store's path to the hub is write4_n0_n1's, record for record (memory bus data 5, PCI 18,",
	"mc.tx c71 now with loopback=1, uplink c74). The header's loop-back bit makes the hub include the",
	"sender: mc.order at c76 lists dests 0-7, and port 0 gets a copy too (mc.deliver c87, Link0.BA",
	"c90). Nodes 1-7 do not map the page and drop it (rx-unmapped, c91). Node 0's adapter receives",
	"its own write: mc.rxdma c144, dma.done c151, PCI data 154, bridge 155, memory-bus data 163",
	"(4.897 us, mc.mem), then the invalidation of CPU 0's line. The poll's first load missed (fill",
	"data at bus cycle 14, behind the PIO store on the bus) and read 0; the poll after the",
	"invalidation misses and returns 1 at CPU cycle 1213: 5.206 us, a whole one-way latency, which",
	"is what an MC flush or a lock's loop-back wait costs.",
}
