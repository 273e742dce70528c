package shrimptb_test

import (
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/svm"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Goldens of SVM protocol events (issue 19 section 4): the runtime's
// events (svm.Hooks.Event, host/svm/events.go) of a tiny program, as trace
// records of the node's processor (kind svm.*, in integer picoseconds with
// the CPU's 60 MHz cycle), interleaved with the NIs' packet records
// (shrimp.tx leaving a node's NIC, shrimp.rx entering the destination's,
// shrimp.notify its notification) and the scoreboard's shrimp.mem (an
// incoming transfer written into the destination's memory). Each golden
// is the window of the run between two of its events.
//
// Recorded only by `make golden PKGS=./verify/testbench/shrimptb` (the
// golden label; NISIM_UPDATE_GOLDEN); compared with go-cmp.

// svmWindow picks a golden's records: from the n-th event (n 0 or 1: the
// first) from accepts to the first event at or after it that to accepts,
// both included.
type svmWindow struct {
	from, to func(ev svm.Event) bool
	n        int
}

// svmIs matches an event by kind, node and page (-1: any).
func svmIs(kind string, node, page int) func(ev svm.Event) bool {
	return func(ev svm.Event) bool {
		return ev.Kind == kind && ev.Node == node && (page < 0 || ev.Page == page)
	}
}

// svmGoldenRun runs prog on nodes nodes under protocol with seed 1, the
// events and the packet records kept, checks the run (checkers, the
// program's own check) and returns the records of w.
func svmGoldenRun(protocol string, nodes int, prog cashapps.Program, w svmWindow) []trace.Record {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: eisaClock, Trace: true, Seed: 1, TimeLimit: clock.Second})
	e.Trace.OnlyKinds("shrimp.snoop", "shrimp.tx", "shrimp.rx", "shrimp.notify", "shrimp.mem")
	c := shrimptb.DefaultSVM(protocol)
	c.Cluster.Nodes = nodes
	var evs []svm.Event
	c.Events = func(ev svm.Event) { evs = append(evs, ev) }
	b, err := shrimptb.BuildSVM(e, c, prog)
	Expect(err).NotTo(HaveOccurred())
	res, err := b.Run()
	Expect(err).NotTo(HaveOccurred())
	if ck, ok := prog.(interface{ Check([]byte) error }); ok {
		Expect(ck.Check(res.Memory)).To(Succeed())
	}
	vtest.SortByTime(evs, func(e svm.Event) clock.Time { return e.Time })
	from, last, ok := vtest.EventWindow(evs, w.from, w.to, w.n)
	Expect(ok).To(BeTrue(), "the window's first and last events")
	t0, t1 := evs[from].Time, evs[last].Time
	var ev []trace.Record
	for _, x := range evs[from : last+1] {
		cpu := b.Procs[x.Node].CPU()
		r := trace.Record{Time: x.Time, Cycle: cpu.Clock().CycleAt(x.Time), Path: cpu.Name(), Kind: "svm." + x.Kind}
		for _, a := range x.Attrs() {
			r.Fields = append(r.Fields, trace.Str(a.Key, a.Val))
		}
		ev = append(ev, r)
	}
	var hw []trace.Record
	for _, r := range e.Trace.Records() {
		if r.Time >= t0 && r.Time <= t1 {
			hw = append(hw, r)
		}
	}
	return vtest.MergeByTime(ev, hw)
}

// The golden programs. SharedBytes is two or four 4 KB pages; homes are
// contiguous blocks (svm.Layout.Block): on 2 nodes page 0 is node 0's and
// page 1 node 1's; on 3 nodes pages 0-1 are node 0's, 2 node 1's, 3 node
// 2's. Word w of page 0 is at byte 8w.

// gFetchProg (HLRC, 2 nodes): process 0 writes word 0 of its home page 0;
// a barrier; process 1 reads it: a read fault, the fetch from the home.
type gFetchProg struct{ got uint64 }

func (*gFetchProg) Name() string        { return "golden-svm-fetch" }
func (*gFetchProg) SharedBytes() uint64 { return 8192 }
func (*gFetchProg) Locks() int          { return 0 }
func (*gFetchProg) Flags() int          { return 0 }
func (g *gFetchProg) Run(p cashapps.Proc) {
	if p.ID() == 0 {
		p.Store(0, []uint64{0x1111})
	}
	p.Barrier()
	if p.ID() == 1 {
		v := make([]uint64, 1)
		p.Load(0, v)
		g.got = v[0]
	}
}

func (g *gFetchProg) Check([]byte) error {
	if g.got != 0x1111 {
		return fmt.Errorf("process 1 read %#x, want 0x1111", g.got)
	}
	return nil
}

// gNoticeHold is how long process 1 holds the lock in the notice golden
// and gNoticeLate how long process 2 waits before asking for it, CPU
// cycles (60 MHz): process 2 asks while process 1 holds it.
const (
	gNoticeHold = 30000
	gNoticeLate = 20000
)

// gNoticeProg (HLRC, 3 nodes): process 0 writes word 0 of its home page
// 0; a barrier; process 2 reads it (a copy) and process 1 takes lock 0,
// writes word 1 of page 0 (a write fault off the home: the fetch and the
// twin), holds the lock, releases it; process 2 asks for the lock while
// process 1 holds it, and reads word 1 once it has it.
type gNoticeProg struct{ got uint64 }

func (*gNoticeProg) Name() string        { return "golden-svm-notice" }
func (*gNoticeProg) SharedBytes() uint64 { return 16384 }
func (*gNoticeProg) Locks() int          { return 1 }
func (*gNoticeProg) Flags() int          { return 0 }
func (g *gNoticeProg) Run(p cashapps.Proc) {
	v := make([]uint64, 1)
	if p.ID() == 0 {
		p.Store(0, []uint64{0x1111})
	}
	p.Barrier()
	switch p.ID() {
	case 1:
		p.Lock(0)
		p.Store(8, []uint64{0x2222})
		p.Compute(gNoticeHold)
		p.Unlock(0)
	case 2:
		p.Load(0, v)
		p.Compute(gNoticeLate)
		p.Lock(0)
		p.Load(8, v)
		g.got = v[0]
		p.Unlock(0)
	}
}

func (g *gNoticeProg) Check([]byte) error {
	if g.got != 0x2222 {
		return fmt.Errorf("process 2 read %#x under the lock, want 0x2222", g.got)
	}
	return nil
}

// gAULate is how long process 0 works before asking for the lock in the
// AURC golden, CPU cycles: process 1 has released it by then.
const gAULate = 30000

// gAUProg (AURC, 2 nodes): process 1 takes lock 0, writes word 1 of page
// 0 (homed at node 0; the write fault fetches it and binds it for
// automatic update to the home's copy), releases the lock; process 0
// takes it later and reads word 1 from its home copy.
type gAUProg struct{ got uint64 }

func (*gAUProg) Name() string        { return "golden-svm-aurc" }
func (*gAUProg) SharedBytes() uint64 { return 8192 }
func (*gAUProg) Locks() int          { return 1 }
func (*gAUProg) Flags() int          { return 0 }
func (g *gAUProg) Run(p cashapps.Proc) {
	switch p.ID() {
	case 1:
		p.Lock(0)
		p.Store(8, []uint64{0x3333})
		p.Unlock(0)
	case 0:
		p.Compute(gAULate)
		p.Lock(0)
		v := make([]uint64, 1)
		p.Load(8, v)
		g.got = v[0]
		p.Unlock(0)
	}
}

func (g *gAUProg) Check([]byte) error {
	if g.got != 0x3333 {
		return fmt.Errorf("process 0 read %#x under the lock, want 0x3333", g.got)
	}
	return nil
}

// svmGoldens are the three: file, protocol, nodes, program, window, header.
var svmGoldens = []struct {
	file     string
	protocol string
	nodes    int
	prog     func() cashapps.Program
	w        svmWindow
	header   []string
}{
	{"testdata/svm_hlrc_fetch.trace", svm.HLRC, 2, func() cashapps.Program { return &gFetchProg{} },
		svmWindow{svmIs(svm.EvFault, 1, 0), svmIs(svm.EvMapped, 1, 0), 1}, svmFetchHeader},
	{"testdata/svm_hlrc_release.trace", svm.HLRC, 3, func() cashapps.Program { return &gNoticeProg{} },
		svmWindow{svmIs(svm.EvUnlock, 1, -1), svmIs(svm.EvMapped, 2, 0), 1}, svmReleaseHeader},
	{"testdata/svm_aurc_write.trace", svm.AURC, 2, func() cashapps.Program { return &gAUProg{} },
		svmWindow{svmIs(svm.EvMapped, 1, 0), svmIs(svm.EvLock, 0, -1), 1}, svmAUHeader},
}

var _ = Describe("SVM protocol goldens", Label("golden"), func() {
	for _, g := range svmGoldens {
		It("matches "+g.file, func() {
			recs := svmGoldenRun(g.protocol, g.nodes, g.prog(), g.w)
			Expect(vtest.CompareGolden(g.file, recs, g.header...)).To(Succeed())
		})
	}

	It("fails when an SVM golden is wrong", func() {
		if trace.Updating() {
			Skip("regenerating goldens")
		}
		g := svmGoldens[0]
		// The page's seal seen one CPU cycle (16.667 ns) late.
		bad, err := vtest.AlterGolden(GinkgoT().TempDir(), g.file,
			func(l string) bool { return strings.Contains(l, " svm.fetched ") },
			vtest.Later(16667, 1))
		Expect(err).NotTo(HaveOccurred())
		err = vtest.CompareGolden(bad, svmGoldenRun(g.protocol, g.nodes, g.prog(), g.w))
		GinkgoWriter.Println(err)
		Expect(err).To(MatchError(ContainSubstring("svm.fetched")))
		Expect(err).To(MatchError(ContainSubstring("differs")))
	})

	It("gives byte-identical SVM records on two runs", func() {
		g := svmGoldens[2]
		a := svmGoldenRun(g.protocol, g.nodes, g.prog(), g.w)
		b := svmGoldenRun(g.protocol, g.nodes, g.prog(), g.w)
		Expect(cmp.Diff(a, b)).To(BeEmpty())
	})
})

// The goldens' headers: why each record is there (the paper's rule or the
// runtime's, docs/svm-design.md) and how its time follows; svmCommonHeader
// is what the three share.
var svmCommonHeader = []string{
	"Records: svm.* are the runtime's protocol events (host/svm events.go) at the time the node's",
	"processor finished the step before them (ps; 60 MHz CPU cycle, 16.667 ns). shrimp.snoop: the NI's",
	"memory-bus board takes a write-through store (SH-P7); shrimp.tx: a packet's head leaves the",
	"sender's NIC (100 MHz NIC cycle); shrimp.rx: its header reaches the receiver's NI, shrimp.rxdma:",
	"an incoming-DMA burst (at most 1 KB) done, shrimp.notify: a notification queued for the kernel",
	"(SH-P18; EISA cycle, 120 ns); shrimp.mem: the scoreboard sees the transfer in the receiver's",
	"memory (Xpress cycle, 33.333 ns). Platform (DEC 560ST preset, all assumed there): fault entry +",
	"signal 680 cycles (11.33 us) before the handler, return 340 (5.67 us), mprotect 3300 (55.0 us);",
	"an interrupt is recognised 256 cycles (4.27 us, derived from SH-P22) after it is raised and",
	"entered in 64 more (1.07 us); kernel steps 50 instructions; an EISA register read about 75",
	"cycles (1.25 us). Runtime steps (host/svm, assumed): fault 60 instructions, message 30, sync",
	"40, release 20 a page, a diff 4 a word + 10 a run; a request is a deliberate update of its",
	"words and its seal into the end of a 1 KB slot of the home's ring, with the notify bit (section",
	"4.4 «The SVM implementation relies on the notification mechanism»); a reply or an",
	"acknowledgement is one without it, which the waiter polls. Node memory: shared page k at",
	"0x100000 + 4096k, then twins, mirrors, the rings (1 KB slots, nodes+4 per sender), the reply",
	"page, the acknowledgement page, the timestamp page, the timestamp-out pages. Homes are blocks",
	"of consecutive pages (svm.Layout.Block).",
}

var svmFetchHeader = append([]string{
	"HLRC page fault and fetch from the home (section 4.2: HLRC «uses only deliberate update",
	"communication»; docs/svm-design.md) on 2 nodes: process 0 wrote word 0 (0x1111) of page 0 at",
	"its home, node 0; a barrier; process 1 reads word 0. Window: P1's fault to its mprotect.",
}, append(svmCommonHeader,
	"219.233 us svm.fault write=0: P1's load faulted at 206.883 (page 0 is invalid: node 1 has no",
	"  copy); 680 cycles of entry and signal and the handler's 60 instructions (+1: the op's cycle).",
	"219.233 svm.fetch home=0: an invalid page is fetched from its home (node 0 holds pages [0,1)).",
	"220.050 svm.send type=pagereq: 30 instructions and the 5 words staged (page, request ID,",
	"  vector time of 2, seal): the slot's last 40 bytes, 0x107fd8-0x107fff of node 0's inbox",
	"  (node 1's ring is slots 6-11 at 0x107800; this is its second message, after its barrier",
	"  arrival).",
	"224.100 shrimp.tx: the library's 20 instructions and the UDMA pair (as du_send_n0_n1.trace), the",
	"  DU engine's read of 40 bytes over EISA, the NIC's delay: 4.05 us from the send (the 4-byte",
	"  golden's 2.9 us plus the longer source read); 25 flits. 225.240 shrimp.rx at node 0.",
	"227.400 shrimp.rxdma, shrimp.notify page=263: the 40 bytes written by incoming DMA; the",
	"  header's notify bit and the IPT's interrupt bit of the inbox page (0x107000/4096 = 263, SH-P18)",
	"  queue a notification. 227.933 shrimp.mem: the bytes in node 0's memory.",
	"239.783 svm.recv, svm.serve: P0 waits in its barrier (it sleeps on the reply word, so it does",
	"  not poll its ring): the interrupt is taken 4.28 us after the raise (231.683), entered 1.07",
	"  us later; the kernel reads the cause over EISA (234.0), acknowledges it (posted), 50",
	"  instructions, pops the notification record over EISA (236.1), 50 instructions, and queues it",
	"  for the process; its next pop reads the queue empty (the level's re-read, 1.37 us). At the",
	"  interrupt's return the process's handler runs, with interrupts enabled (section 2.2:",
	"  notifications are «similar in semantics to Unix signals»): the seal (a miss, 22 cycles) and",
	"  the 4 payload words, 30 instructions. HLRC's home serves at once (no timestamps to wait for).",
	"243.770 shrimp.tx len=4096: the page by one deliberate update into node 1's copy of page 0",
	"  (SH-P13: «Transfers of up to a page (4K bytes)»), one packet of 2053 flits; 244.920",
	"  shrimp.rx at node 1. The DU engine reads the page over EISA and the receiver writes it over",
	"  EISA, each at about 32 MB/s (docs/shrimp-validation.md, DU bandwidth: 31.4 MB/s at 4 KB):",
	"  the incoming DMA's four 1 KB bursts end 306.120, 337.680, 369.120, 400.800 (31.4-31.7 us",
	"  apart: the reply's seal takes its place on the EISA among them).",
	"368.567 svm.reply type=page: the home's send returned when its engine finished reading the",
	"  page (the library's send is synchronous); the seal (8 bytes) to node 1's reply page",
	"  (0x109ff8): shrimp.tx 372.670, shrimp.rx 373.800, behind the page in the NI's order: its",
	"  rxdma 401.040 after the page's last burst. shrimp.mem 401.333 (the page, 4096 bytes) and",
	"  402.000 (the seal).",
	"402.933 svm.fetched: the seal's write wakes P1's wait (402.083), a wait step of 31 instructions",
	"  and its load. 457.933 svm.mapped perm=1: the mprotect to read-only, 55.0 us.",
	"Page fault with a remote fetch: 206.883 -> 457.933 + the return 5.67 = 256.7 us (no paper",
	"  figure; the page's transfer, 243.77 -> 401.333, is 157.6 us of it, at the EISA's rate).",
)...)

var svmReleaseHeader = append([]string{
	"HLRC release with its diff and write notice (section 4.2; lazy release consistency: the notice",
	"travels with the next acquirer's grant) on 3 nodes: node 0 is the home of pages 0-1, node 1",
	"of 2, node 2 of 3. P0 wrote word 0 of page 0 before a barrier; P2 read it (a copy); P1 took",
	"lock 0, wrote word 1 (0x2222; a write fault: the fetch and the twin), holds the lock 500 us;",
	"P2 asks for the lock 333 us after reading (the manager, node 0, forwards the request to P1,",
	"its last holder, which queues it). Window: P1's unlock to P2's mprotect after the re-fetch;",
	"the program checks that P2 reads 0x2222 under the lock.",
}, append(svmCommonHeader,
	"1295.583 us svm.unlock, svm.release pages=1: the interval's only dirty page is page 0.",
	"1415.550 svm.diff words=1: the page compared with its twin, 512 words: 1024 loads at 5 cycles",
	"  (both in the board cache) and 2058 instructions (4 a word, 10 for the one run).",
	"1471.217 svm.send type=diff: the dirty page made read-only again first (mprotect, 55.0 us),",
	"  then 30 instructions and 4 words staged (interval, the run's header, the word, the seal):",
	"  32 bytes into node 1's slot 3 at node 0 (0x10ebe0; its 4th message: barrier arrival, lock",
	"  request, page request, this). HLRC «uses only deliberate update» (section 4.2).",
	"1475.230 shrimp.tx, 1476.360 shrimp.rx, 1478.040 shrimp.rxdma and shrimp.notify page=270",
	"  (0x10e000/4096), 1478.567 shrimp.mem: as the page request of svm_hlrc_fetch.trace, 4.0 us",
	"  from the send to the NIC.",
	"1490.050 svm.recv type=diff, 1490.233 svm.apply interval=1: P0, waiting in its exit barrier,",
	"  takes the interrupt (1482.313, 4.27 us after the raise) and runs the handler as in",
	"  svm_hlrc_fetch.trace (12.01 us from the notification: the handler runs after the kernel's empty pop); the run's word stored into the home's",
	"  copy and 10 instructions. «diffs are applied at the home before the write notice that",
	"  depends on them is acted on» (issue 19's checker svm.diff): the sender waits for the",
	"  acknowledgement before its interval's notice can leave.",
	"1490.867 svm.ack count=1: the drained rings' acknowledgements, one 8-byte deliberate update of",
	"  node 0's word in node 1's acknowledgement page (0x113000); tx 1494.900, rx 1496.040, rxdma",
	"  1496.400, shrimp.mem 1497.000.",
	"1497.933 svm.acked messages=1, svm.interval interval=1: P1's poll of the word wakes; the",
	"  interval's write notice (page 0) joins node 1's log and its vector time.",
	"1499.600 svm.grant to=2: the queued request is granted at the unlock with the notices P2's",
	"  vector time lacks (40 + 60 instructions); 1500.850 svm.reply type=grant: 48 bytes (P2's vector",
	"  time of 3, the mask, one bitmap word, the seal) to node 2's reply page: tx 1504.870, rx",
	"  1506.000, rxdma 1508.640, shrimp.mem 1509.167.",
	"1506.750 svm.send type=arrive: P1's program has returned; its end barrier's arrival at node 0",
	"  (56 bytes: tx 1510.730, rx 1511.880, rxdma and notify 1514.880, mem 1515.400; 1527.317",
	"  svm.recv at P0, 12.44 us after the notification).",
	"1511.333 svm.acquire writers=1: P2's wait wakes at 1509.217 (the grant's seal), two wait steps",
	"  and 5 loads of the payload. 1566.867 svm.invalidate pages=1: page 0 is in node 1's notice and",
	"  node 2 is not its home: invalidated (20 instructions, mprotect 55.0 us). svm.lock: P2 holds",
	"  the lock.",
	"1579.217 svm.fault, svm.fetch: P2's load of word 1 faults at 1566.867 (741 cycles as in",
	"  svm_hlrc_fetch.trace); 1580.050 svm.send type=pagereq (48 bytes: 3 nodes' vector time); tx",
	"  1584.070, rx 1585.320, notify 1587.840; 1600.367 svm.recv and svm.serve at P0 (12.53 us).",
	"1604.470 shrimp.tx len=4096: the home's copy with the diff applied (its hash differs from",
	"  svm_hlrc_fetch.trace's page: word 1 is 0x2222); 1605.720 rx; bursts end 1666.800, 1698.360,",
	"  1729.920, 1761.480; 1729.250 svm.reply type=page, its seal tx 1733.230, rx 1734.480, rxdma",
	"  1761.720; shrimp.mem 1762.000 (the page) and 1762.667 (the seal). 1763.600 svm.fetched,",
	"  1818.600 svm.mapped perm=1 (55.0 us): the fetch of svm_hlrc_fetch.trace, interval for",
	"  interval within 0.7 us (a 48-byte request; P0's handler drains a third ring).",
	"Release to the acquirer's invalidation: 1295.583 -> 1566.867 = 271.3 us, of which the diff",
	"  120.0 us and the two mprotects 110.0 us (the paper's «significant amount of overhead on",
	"  diffing in the HLRC case», section 4.2).",
)...)

var svmAUHeader = append([]string{
	"AURC: a write seen at the home and a later acquire reading it (section 4.2: AURC «eliminates",
	"diffs entirely and uses automatic update mappings to propagate updates eagerly to home pages»)",
	"on 2 nodes: page 0's home is node 0. P1 takes lock 0 (from the manager, node 0: an empty",
	"grant), writes word 1 of page 0 (0x3333): the write fault fetches the page, and node 1's copy",
	"is bound write-through for automatic update to the home's copy; P1 releases the lock. P0",
	"computes 30,000 cycles, then takes the lock and reads word 1 of its home copy; the program",
	"checks it reads 0x3333. Window: P1's mprotect after the fetch to P0's lock.",
}, append(svmCommonHeader,
	"99.750 us svm.mapped perm=3: P1's copy read-write; AURC makes no twin.",
	"105.433 svm.unlock, svm.release pages=1: the fault's return (5.67 us), the faulting store",
	"  retried (write-through: on the Xpress at 105.483), the unlock. No diff: AURC.",
	"105.633 shrimp.snoop addr=0x100008: the NI's memory-bus board takes the store (SH-P7) and the",
	"  OPT sends it to node 0's 0x100008, its home copy (SH-P14, SH-P16: «creates a packet for",
	"  every individual store»).",
	"105.783 svm.tsflush interval=1: 20 instructions, then the interval stored into node 1's word",
	"  of the timestamp-out page for node 0 (0x10c008), bound to node 0's timestamp page",
	"  (0x10b008): 106.000 shrimp.snoop. The outgoing FIFO keeps the order, so the timestamp",
	"  reaches the home behind the data (docs/svm-design.md: the timestamp flush).",
	"107.030 shrimp.tx seq=1 (the data) and 107.150 seq=2 (the timestamp), 9 flits each; 108.240",
	"  and 108.480 shrimp.rx at node 0; rxdma 108.600 and 108.840.",
	"109.200 shrimp.mem kind=AU addr=0x100008: the write is in the home's copy 3.767 us after the",
	"  store retired (105.433) against the paper's «end-to-end latency is just 3.71 us for a",
	"  single-word transfer» (section 4.2): +1.5% (au_word_n0_n1.trace: 3.733 us to a reader's",
	"  load). 109.800 shrimp.mem addr=0x10b008: the timestamp, after it.",
	"160.783 svm.interval interval=1: the downgrade's mprotect (55.0 us); the notice joins the log.",
	"162.950 svm.send type=arrive: P1's program has returned; its end barrier's arrival (48 bytes:",
	"  tx 166.970, rx 168.120, rxdma and notify page=263 170.640, mem 171.167); 183.100 svm.recv",
	"  at P0, in its compute (the interrupt's handler, 12.46 us after the notification: it runs after",
	"  the kernel's empty pop, at the interrupt's return).",
	"528.017 svm.send type=lockfwd: P0's Lock at 526.050 (its compute and the interrupt it took);",
	"  it manages lock 0, whose last requester is node 1: the request (56 bytes: lock, requester,",
	"  request ID, the count asked, vector time) is forwarded to node 1 (TreadMarks-style queue,",
	"  docs/svm-design.md). tx 532.030, rx 533.160, rxdma and notify page=262 536.280, mem 536.800.",
	"548.717 svm.recv type=lockfwd at P1 (waiting in its end barrier: the interrupt at 540.550),",
	"  549.650 svm.grant to=0: node 1 holds the lock's token and has released it: grant now, with",
	"  the notice of its interval 1 (page 0). 550.850 svm.reply type=grant (40 bytes): tx 554.830, rx",
	"  555.960, rxdma 558.000, mem 558.533.",
	"560.617 svm.acquire writers=1: P0 sees the grant's seal and loads the payload. Node 0 is page",
	"  0's home, so nothing is invalidated; under AURC the home waits until the writer's timestamp",
	"  has reached the interval the notice names (docs/svm-design.md: a home reads its own pages",
	"  only then).",
	"561.600 svm.tsseen writer=1 value=1: the word (in memory since 109.800) is loaded: 1 >= 1.",
	"  svm.lock: P0 holds the lock and its load of word 1 returns 0x3333 from the home's copy.",
)...)
