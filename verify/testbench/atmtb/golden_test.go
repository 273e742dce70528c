package atmtb_test

import (
	"strconv"
	"strings"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/verify/testbench/atmtb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// golden keeps the records a reviewer reads: the CPUs' code steps,
// traps, interrupts and the user's labelled operations, every TCA-100
// and kernel record (fore.*, rma.*), the TURBOchannel's PIO transactions
// (bus.pio.* on N<i>.TC: STATUS reads, cell bursts), link packets and the
// writes reaching a node's exported segment in memory (mem.write inside
// [SegBase, SegBase+SegBytes)).
func golden(recs []trace.Record) []trace.Record {
	var out []trace.Record
	for _, r := range recs {
		switch {
		case r.Kind == "cpu.step", r.Kind == "cpu.trap", r.Kind == "cpu.irq", r.Kind == "cpu.retire",
			strings.HasPrefix(r.Kind, "fore."), strings.HasPrefix(r.Kind, "rma."), r.Kind == "link.packet":
			out = append(out, r)
		case strings.HasPrefix(r.Kind, "bus.pio.") && strings.HasSuffix(r.Path, ".TC"):
			out = append(out, r)
		case r.Kind == "mem.write":
			a, _ := r.Get("addr")
			if v, err := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64); err == nil && v >= atmtb.SegBase && v < atmtb.SegBase+atmtb.SegBytes {
				out = append(out, r)
			}
		}
	}
	return out
}

// goldenConfig is the default cluster with C1 and C2 pinned at
// CellLatency 0 link cycles and MemCycles 16 (their fits before the
// one-instruction-a-cycle CPU rule of 8e23296 and memsys's cut-through
// of uncached reads; atmtb.DefaultConfig holds the current fits), so
// that the goldens time the model, not a later re-calibration.
func goldenConfig() atmtb.Config {
	c := atmtb.DefaultConfig()
	c.Board.CellLatency, c.MemCycles = 0, 16
	return c
}

// goldenRun builds the default two-node cluster (direct link) with seed 1
// and a trace, connects the segments (node j's segment in descriptor
// register j everywhere, atmtb.Connect), lets setup start programs, runs
// it with the checkers and returns the golden's records.
func goldenRun(setup func(cl *atmtb.Cluster, segs []uint8)) []trace.Record {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: tcClock, Trace: true, Seed: 1})
	cl, err := atmtb.Build(e, goldenConfig())
	Expect(err).NotTo(HaveOccurred())
	segs, err := atmtb.Connect(cl)
	Expect(err).NotTo(HaveOccurred())
	setup(cl, segs)
	_, err = e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(cl.Finish()).To(Succeed())
	s := atmtb.RefOf(cl).Stats()
	Expect(s.Mismatches).To(BeZero())
	cl.Close()
	return golden(e.Trace.Records())
}

// gWords are the golden WRITE's and READ's ten words.
var gWords = []uint32{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa}

// writeGolden: node 0 WRITEs ten words (40 bytes, one cell) to word 0 of
// node 1's segment; node 1 takes the interrupt.
func writeGolden() []trace.Record {
	return goldenRun(func(cl *atmtb.Cluster, _ []uint8) {
		k := cl.Nodes[0].Kernel
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			Expect(k.Write(p, 1, 0, 10, false, gWords)).To(Equal(rma.OK))
			p.As("done").Compute(1)
		}))
	})
}

// readGolden: node 1's segment holds gWords at word 0 (set before the
// run); node 0 READs them into its own segment at word 100 and waits for
// the reply.
func readGolden() []trace.Record {
	return goldenRun(func(cl *atmtb.Cluster, segs []uint8) {
		b := make([]byte, 40)
		for i, w := range gWords {
			b[4*i] = byte(w)
		}
		Expect(cl.Nodes[1].Memory().Storage().Write(atmtb.SegBase, b)).To(Succeed())
		k := cl.Nodes[0].Kernel
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			id, st := k.Read(p, 1, 0, 10, int(segs[0]), 100, false)
			Expect(st).To(Equal(rma.OK))
			p.WaitUntil(func() bool { return k.Done(id) })
			p.As("done").Compute(1)
		}))
	})
}

// casGolden: node 1's segment holds 5 at word 7; node 0 compare-and-
// swaps it from 5 to 6 (reply to its own word 200); node 1's board drops
// its first CAS reply at the wire (Cluster.DropNext); the request is
// resent after CASTimeout and answered from node 1's cache.
func casGolden(old *uint32, swapped *bool) []trace.Record {
	return goldenRun(func(cl *atmtb.Cluster, segs []uint8) {
		Expect(cl.Nodes[1].Memory().Storage().Write(atmtb.SegBase+28, []byte{5, 0, 0, 0})).To(Succeed())
		cl.DropNext(1, rma.OpCASReply)
		k := cl.Nodes[0].Kernel
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			*old, *swapped = k.CAS(p, 1, 7, 5, 6, int(segs[0]), 200)
			p.As("done").Compute(1)
		}))
	})
}

var _ = Describe("ATM goldens", Label("golden"), func() {
	It("times a 40-byte WRITE from node 0 to node 1 across the direct link", func() {
		Expect(vtest.Golden("testdata/write_n0_n1.trace", writeGolden(), writeHeader...)).To(Succeed())
	})

	It("times a 40-byte READ of node 1's memory by node 0", func() {
		Expect(vtest.Golden("testdata/read_n0_n1.trace", readGolden(), readHeader...)).To(Succeed())
	})

	It("times a CAS whose reply is dropped: resent after the timeout, answered once from the target's cache", func() {
		var old uint32
		var swapped bool
		recs := casGolden(&old, &swapped)
		Expect(old).To(Equal(uint32(5)))
		Expect(swapped).To(BeTrue())
		kinds := map[string]int{}
		for _, r := range recs {
			kinds[r.Kind]++
		}
		Expect(kinds["rma.cas"]).To(Equal(1), "executed once")
		Expect(kinds["rma.retx"]).To(Equal(1))
		Expect(kinds["rma.dup"]).To(Equal(1))
		Expect(vtest.Golden("testdata/cas_reply_dropped.trace", recs, casHeader...)).To(Succeed())
	})

	// A golden with one record changed must fail, naming the record.
	DescribeTable("fails when the golden is wrong",
		func(file string, run func() []trace.Record, pick func(l string) bool, change func(l string) string, want string) {
			if trace.Updating() {
				Skip("regenerating goldens")
			}
			path, err := vtest.AlterGolden(GinkgoT().TempDir(), "testdata/"+file, pick, change)
			Expect(err).NotTo(HaveOccurred())
			Expect(vtest.Golden(path, run())).To(MatchError(ContainSubstring(want)))
		},
		Entry("write: the cell's arrival time", "write_n0_n1.trace", writeGolden,
			func(l string) bool { return strings.Contains(l, " fore.rx ") },
			func(l string) string { f := strings.SplitN(l, " ", 2); return f[0] + "0 " + f[1] }, "fore.rx"),
		Entry("read: the reply's data", "read_n0_n1.trace", readGolden,
			func(l string) bool { return strings.Contains(l, " rma.mem ") && strings.Contains(l, "N0.RMA") },
			func(l string) string { return strings.Replace(l, "hash=", "hash=0", 1) }, "rma.mem"),
		Entry("cas: the retransmission's time", "cas_reply_dropped.trace", func() []trace.Record {
			var o uint32
			var s bool
			return casGolden(&o, &s)
		},
			func(l string) bool { return strings.Contains(l, " rma.retx ") },
			func(l string) string { f := strings.SplitN(l, " ", 2); return "1" + f[0] + " " + f[1] }, "rma.retx"),
	)
})

// The goldens' headers: how each record's time follows from the ones
// before it. Clocks: R3000, 3max memory bus and TURBOchannel 25 MHz (40
// ns), link 17.5 MHz (57.14 ns); the first number of a record is ps, the
// second the recording component's cycle (fore.wire/fore.rx/fore.drop and
// link records: link cycles).
var writeHeader = []string{
	"FORE ATM, two DECstation 5000/200s joined by one direct 140 Mb/s link (section 2.3), CellLatency 0 link",
	"cycles and MemCycles 16 pinned (the C1/C2 fits before 8e23296; not the current ones); caches cold. Node",
	"0's process WRITEs ten words 0x11..0xaa (40 bytes, one cell) to word 0 of node 1's segment (descriptor",
	"register 1, segment 0 at 0x100000); node 1 is idle and takes the interrupt. Clocks: CPU/memory",
	"bus/TURBOchannel 40 ns, link 57.14 ns. One instruction a cycle: an operation of n cycles begun in cycle",
	"s lets the next begin in s+n; a load lets it begin in the cycle its last word arrives.",
	"Boot (both nodes): the kernel's store of CONTROL.irq_enable (0x10000084) retires at 0 (posted), crosses",
	"the memory bus (cycle 5) and the 3max-tc bridge (6) to the TURBOchannel (bus.pio.write at TC cycle 11):",
	"fore.control irq_enable=1 at 12 (480 ns).",
	"Sender (Table 1: crossing 13 + access check and cell 32 + crossing 12 = 57 instructions). cpu.trap 1",
	"(WRITE, 4 arguments and 10 message registers) at 1, the cycle after the boot store; rma.cross-in: 13",
	"instructions, 6 of them stack saves (AT-P14, floor(13/2)) taken by the write buffer one a cycle, 13",
	"cycles -> 14. rma.write-tx: 32 instructions, 17 of them accesses (mem=2, io=15): the descriptor",
	"register's two words (cold: two cache fills of 18 cycles behind the saves draining write-through at 11",
	"memory-bus cycles each), the STATUS read (held in wait states: TC tenure from 113, data at 116, back at",
	"the CPU at 121), the 56-byte burst store standing for 14 instructions (the write buffer takes a word a",
	"cycle, 121..134), then the 15 others 135..149; it ends at cycle 150 (6.00 us, 136 cycles): rma.send.",
	"The burst crosses the bridge and runs on the TC as one tenure from 141 with 14 data phases, word 13",
	"at 157 (bus.pio.write len=56): fore.tx cell 1 at 158 (6.32 us). rma.cross-out: 12 instructions, 6",
	"restores (cold loads, 18 cycles each) and 6 others, 6 x 18 + 6 = 114 cycles -> 264 (10.56 us); the",
	"user's done at 10.56 us.",
	"Wire: the link side sees the cell at its first edge after 6.32 us, link cycle 111 (6.343 us), and",
	"with CellLatency 0 sends it there (fore.wire); 53 bytes at one a cycle: its last byte arrives at 163",
	"(9.314 us, link.packet ATM.Link.AB); the board takes it at the next edge, 164 (9.371 us), it passes",
	"HEC and CRC-10 into the RX FIFO (fore.rx) and the interrupt line rises (fore.irq rx=1, TC cycle 234).",
	"Sender's TX FIFO to receiver's RX FIFO: link cycles 111 -> 164 = 53 + 2 x CellLatency.",
	"Receiver (Table 1: dispatcher 73 + handler 21 + reading data and writing destination 58 = 152",
	"instructions). cpu.irq at the next CPU edge, 235 (9.4 us). rma.dispatch: 73 instructions, 35 memory",
	"+ 1 I/O: the STATUS read (TC data at 245, 9.8 us, rx=1), 17 cold loads of cause/status/vector words",
	"from the kernel stack (a fill each, 18 cycles apart), 18 saves draining write-through at 11 cycles",
	"each, then the 37 others from the cycle after the last save is taken; ends at 690 (27.60 us, 455",
	"cycles). rma.handler: 21 instructions, the 56-byte load of the RX port (14 of them): TC tenure from",
	"743 (behind the saves still draining), data 746..759 (word 13 popped at 758, 30.32 us, fore.pop), each",
	"word forwarded to the CPU as it arrives (memory bus 3 cycles later, the cache's port, the CPU), the",
	"last at 764, then the 7 others 764..770: ends at 771 (30.84 us, 81 cycles). rma.rx-write: 58",
	"instructions, the segment record (4 loads) and the page's translation entry, the 10 data stores",
	"through the translation (reaching memory 11 memory-bus cycles apart: mem.write 0x100000 at 35.08 us",
	"... 0x100024 at 39.04 us), the STATUS re-read (TC 963, 38.52 us: rx=0, the loop ends), restores to",
	"28 memory instructions; ends at 1235 (49.40 us, 464 cycles): rma.recv and one rma.mem per word, each",
	"checked by the scoreboard against the cell as sent. One interrupt, one cell drained.",
	"Cold: 49.40 us from the start to the last step, against the paper's 30 us and atm-report's warm",
	"ping-pong (C2's fit): the 17 + 6 + 6 cold kernel-stack loads cost 18 cycles each here.",
}

var readHeader = []string{
	"FORE ATM, two DECstations joined directly, CellLatency 0 and MemCycles 16 pinned; caches cold. Node",
	"1's segment holds 0x11..0xaa at words 0-9 (written before the run); node 0's process READs the ten",
	"words into its own segment at word 100 (descriptor register 1; reply segment 0) and waits for the",
	"reply. Clocks and the one-instruction-a-cycle rule as in write_n0_n1.trace.",
	"Request (Table 1's READ: 25 + 37 at node 0, 73 + 21 + 67 at node 1, 73 + 21 + 58 at node 0 = 375).",
	"cpu.trap 2 at 1, rma.cross-in 13 cycles -> 14. rma.read-tx: 37 instructions, 19 accesses (mem=4,",
	"io=15): the descriptor register and the reply segment's record (cold fills), STATUS (TC data 152,",
	"back at the CPU at 157), the 56-byte request cell (157..170), the 18 others (171..188); ends at 189",
	"(7.56 us, 175 cycles): rma.send readreq req=1; the burst's word 13 on the TC at 193, fore.tx at 194",
	"(7.76 us). cross-out 12 (6 x 18 + 6 = 114 cycles) -> 303 (12.12 us); the process then waits (in",
	"WaitUntil, interrupts taken).",
	"Wire as the WRITE's: link cycle 136 (7.771 us, fore.wire) + 52 -> 188 (link.packet), + 1 -> 189",
	"(10.8 us): fore.rx and fore.irq at node 1; cpu.irq at 271 (10.84 us).",
	"Target: rma.dispatch 73 (cold, 455 cycles as the WRITE's) -> 726 (29.04 us); rma.handler 21, the cell",
	"on the TC 779..795 (popped at 794, 31.76 us), at the CPU at 795 + 5 = 800, + 7 -> 807 (32.28 us, 81",
	"cycles). rma.rx-readreq: 67 instructions: record and translation loads, the 10 words read from the",
	"segment (cold fills), the 56-byte reply cell stored (TC tenure from 1097, word 13 at 1113: fore.tx",
	"cell 0x10000000001 at 1114, 44.56 us), STATUS re-read at 1118 (rx=0), restores; ends at 1211 (48.44",
	"us, 404 cycles): rma.recv readreq, the reads' rma.mem (each compared with Ref's image: unknown words,",
	"written before the run, are not), rma.send readreply.",
	"Reply wire: link 780 (44.571 us, the first edge after 44.56) -> link.packet ATM.Link.BA 832 -> fore.rx",
	"at node 0 at 833 (47.600 us); node 0's CPU takes the interrupt inside its wait (cpu.irq in=wait, 47.64",
	"us).",
	"Requester: rma.dispatch 73 (cold, 455 cycles) -> 1646 (65.84 us); rma.handler 21 (81 cycles), pop at",
	"68.56 us -> 1727 (69.08 us); rma.rx-write 58 (the reply's 10 words stored at 0x100190.. through node",
	"0's translation entry; STATUS at 1889) -> 2067 (82.68 us, 340 cycles): rma.recv readreply and ten",
	"rma.mem, the request done; the process sees it at once (done at 82.68 us). 82.68 us cold against the",
	"paper's 45 us (warm: atm-report's READ).",
}

var casHeader = []string{
	"FORE ATM, two DECstations joined directly, CellLatency 0 and MemCycles 16 pinned; caches cold. Node",
	"1's segment holds 5 at word 7 (0x10001c); node 0's process compare-and-swaps it from 5 to 6 (reply to",
	"its own word 200, 0x100320). Node 1's board drops its first CAS reply at the wire (Cluster.DropNext:",
	"fore.drop reason=test, counted). Clocks and the one-instruction-a-cycle rule as in write_n0_n1.trace.",
	"First request: as read_n0_n1.trace's (the CAS request has the READ's shape, 13 + 37 + 12): rma.send",
	"casreq off=7 req=1 at 7.56 us, fore.tx 7.76 us, fore.rx at node 1 at 10.8 us, rma.dispatch (cold)",
	"-> 29.04 us, rma.handler -> 32.28 us. The CAS executes in node 1's rx-cas step (67 instructions, the",
	"READ target's count, assumed): the word read 5 = compare 5, so 6 is stored (rma.cas req=1 swapped=1",
	"old=5, stamped with the step's start) and the per-source cache written (req 1, old 5, swapped); the",
	"reply cell enters the TX FIFO at TC 1020 (40.80 us, fore.tx cell 0x10000000001, link edge 714) and is",
	"dropped at the wire at the link side's next edge, link cycle 715 (40.857 us). The step ends at 1153",
	"(46.12 us, 346 cycles): rma.recv casreq, rma.mem 0x10001c (the 6), rma.send casreply.",
	"Timeout: node 0's CAS trap returned at cycle 303 (12.12 us) and waits CASTimeout 400 us (rma.Defaults,",
	"10000 cycles): at 412.12 us (cycle 10303) it resends the same request id (cpu.trap 3, rma.retx req=1);",
	"warm now: cross-in 13 cycles, read-tx 82 (STATUS at TC 10361), fore.tx cell 2 at 416.12 us, cross-out",
	"24.",
	"Resend: fore.wire link 7283, link.packet 7335, fore.rx at node 1 at 7336 (419.200 us); dispatch 200",
	"cycles (warm) -> 427.24 us; handler -> 430.48 us: the cache holds req 1, so the request is answered",
	"from it (rma.dup req=1 swapped=1 old=5) and nothing is written (no rma.mem at node 1: executed",
	"once); the reply (fore.tx cell 0x10000000002, 432.92 us) is sent; rx-cas ends at 10971 (438.84 us).",
	"Reply: fore.rx at node 0 at 436.000 us (cpu.irq in=wait); dispatch 73 (cold at node 0) -> 454.24 us,",
	"handler -> 457.48 us, rma.rx-write 31 instructions (58 - 3 x 9: one word, AT-P15) -> 463.40 us: the",
	"old value 5 stored at 0x100320 (rma.mem), the request done; CAS returns (5, swapped) at 463.40 us.",
}
