package shrimptb_test

import (
	"os"
	"strings"

	"github.com/nisim/nisim/host/cpu"
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
func golden(recs []trace.Record) []trace.Record {
	var out []trace.Record
	lastPoll := map[string]string{} // lookup only: the last poll's hash per CPU
	for _, r := range recs {
		switch {
		case r.Kind == "cpu.retire":
			if op, _ := r.Get("op"); op == "poll" {
				h, _ := r.Get("hash")
				if last, ok := lastPoll[r.Path]; ok && last == h {
					continue
				}
				lastPoll[r.Path] = h
			}
			out = append(out, r)
		case strings.HasPrefix(r.Kind, "bus."), strings.HasPrefix(r.Kind, "bridge."), strings.HasPrefix(r.Kind, "shrimp."),
			r.Kind == "link.packet", r.Kind == "dma.done", r.Kind == "cache.invalidate":
			out = append(out, r)
		}
	}
	return out
}

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

var _ = Describe("SHRIMP goldens", Label("golden"), func() {
	It("fails when the golden is wrong", func() {
		if trace.Updating() {
			Skip("regenerating goldens")
		}
		data, err := os.ReadFile("testdata/au_word_n0_n1.trace")
		Expect(err).NotTo(HaveOccurred())
		// Change the first packet record of node 0's NI: its time.
		lines := strings.Split(string(data), "\n")
		changed := false
		for i, l := range lines {
			if strings.Contains(l, " N0.NI ") && strings.Contains(l, "shrimp.") && !strings.HasPrefix(l, "#") {
				f := strings.SplitN(l, " ", 2)
				lines[i] = f[0] + "1 " + f[1]
				changed = true
				break
			}
		}
		Expect(changed).To(BeTrue())
		path := GinkgoT().TempDir() + "/au_word_n0_n1.trace"
		Expect(os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)).To(Succeed())
		Expect(vtest.Golden(path, auWord())).To(MatchError(ContainSubstring("N0.NI")))
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
var auWordHeader = []string{
	"SHRIMP, two nodes of the paper's cluster (DEC 560ST, SHRIMP NI, Paragon 4x4 mesh; nodes 0 and 1 are",
	"neighbours): node 1 exports a page at 0x1000000, node 0 imports it and binds its page 0x800000 to it",
	"for automatic update (write-through, no combining); node 0's CPU stores 0xdeadbeef at 0x800040 and",
	"fences; node 1's CPU polls 0x1000040. Clocks: CPU 16.667 ns, Xpress/NI core 33.333 ns, EISA 120 ns,",
	"NIC/link/mesh 10 ns.",
	"Sender. The store retires at issue (posted, CPU cycle 0), the MB 2 cycles later. The write-through",
	"store leaves the board cache for the Xpress: tenure from bus cycle 3 (arbitration), address 4, data",
	"5 (166.7 ns, bus.wt.write). The snoop board takes the beat in the data phase: snoop register 6,",
	"OPT lookup (OPTCycles 1) 7: page 0x800 is AU-bound to node 1's page 0x1000, so shrimp.snoop and,",
	"without combining, the packet at once (shrimp.pkt flush=store, core cycle 7, 233.3 ns). It passes",
	"the Outgoing FIFO and the arbiter and leaves for the NIC at core cycle 8 (266.7 ns: the checker's",
	"shrimp.expect, its record in Ref). The NIC port moves its 2 words (header 8, data 9); the NIC",
	"domain sees the packet at link cycle 31 (the first 10-ns edge after core cycle 9's end at 300 ns)",
	"and NICDelayCycles 96 later, link cycle 127 (1.27 us), sends it (shrimp.tx): route 2 + header 8 +",
	"data 4 = 14 B = 7 flits of 2 B, the tail on node 0's link at 133 (link.packet Mesh.LinkT[0].AB).",
	"Mesh. Router 0 forwards it +x: the tail on LinkX[0] at 137 and, through router 1, on node 1's",
	"link LinkT[1] at 141 (4 cycles per router, the wormhole pipeline behind the head).",
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
