package tgtb_test

import (
	"strings"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/verify/testbench/tgtb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// only keeps the records whose kind starts with one of prefixes.
func only(recs []trace.Record, prefixes ...string) []trace.Record {
	var out []trace.Record
	for _, r := range recs {
		for _, p := range prefixes {
			if strings.HasPrefix(r.Kind, p) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

var _ = Describe("Telegraphos goldens", Label("golden"), func() {
	It("times a remote write and a remote read end to end", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock, Trace: true})
		cl, _ := cluster(e, 2, 1)
		cl.Nodes[0].CPU.Run(cpu.Op{Kind: cpu.Store, Addr: tg.Addr(1, 0x40), Data: tg.Word(7), Label: "store"},
			cpu.Op{Kind: cpu.Load, Addr: tg.Addr(1, 0x40), Len: 4, Label: "load"})
		run(e, cl)
		Expect(vtest.Golden("testdata/remote_write_read.trace", e.Trace.Records(),
			"Telegraphos I, 2 nodes: node 0's processor stores 7 to word 0x40 of node 1, then loads it back.",
			"Times in ps; cycles of the recording component (CPU 150 MHz, TURBOchannel and HIB 12.5 MHz,",
			"links and switch 25 MHz). The store retires at the write buffer (posted); the TURBOchannel write",
			"ends at HIB cycle 4 and the HIB has latched it; after decode (1) and header work (2) the write",
			"packet goes to the outgoing interface at 8 and the read request at 12. A 3-word packet takes 12",
			"link cycles; the switch adds its 54-cycle traversal (the calibrated delay) before the head",
			"leaves. Node 1 serves the write (parse 2, memory write, acknowledgement 2) and then the read",
			"(parse 2, memory read, response 2) in arrival order, so the read returns 7. The read holds",
			"node 0's TURBOchannel (93 wait cycles) until the response is back; it retires at 8.17 us, 7.7",
			"us after it issued, having waited behind the write at node 1 (a loop of reads: 7.2 us each).",
			"The processor (4 issue cycles an uncached access) begins the store in its cycle 0; the store",
			"executes in cycle 3 and retires there (cycles=3). An operation's successor begins in the cycle",
			"after it executes (host/cpu), so the load begins in cycle 4 (not 3, as before 8e23296), enters",
			"the write buffer in cycle 7 and retires in cycle 1225, the cycle after the TURBOchannel read's end",
			"(8.16 us = cycle 1224): cycles = 1225 - 4 = 1221. Its bus read still starts at TURBOchannel cycle",
			"6 (the CPU's cycle 7 is 46.7 ns, before the write ends at 320 ns), so no other record moved.")).To(Succeed())
	})

	It("launches a remote fetch-and-increment through a Telegraphos II context", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock, Trace: true})
		cl, p := cluster(e, 2, 2)
		p[0].Start(append([]cpu.Op{p[0].Store(1, 0x80, 41)}, p[0].FetchAndInc(1, 0x80, nil)...)...)
		run(e, cl)
		Expect(vtest.Golden("testdata/fetch_inc_context.trace", only(e.Trace.Records(), "bus.", "tg."),
			"Telegraphos II, 2 nodes, process of node 0 on context 0 (key 0x100): store 41 to word 0x80 of",
			"node 1, then fetch-and-increment it. The launch sequence (2.2.4) is four uncached stores to",
			"context 0 (operation 2 = fetch-and-inc at 0x10000000, operands at 0x10000004/8) and to the",
			"shadow of node 1's word (0x81000080 = 0x01000080 with bit 31 set, data 0x00000100 = context 0,",
			"key 0x100), then a read of the context's launch register (0x10000014), which returns the old",
			"value once node 1 has incremented the word: atomic request and response on the network.")).To(Succeed())
		Expect(mem(cl, 1, 0x80)).To(Equal(uint32(42)))
	})

	It("shows the counter cache ignoring reflected writes at the writer (2.3.3)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock, Trace: true})
		cl, p := cluster(e, 2, 1, func(c *tgtb.ClusterConfig) { c.HIB.CounterCache = 16 })
		Expect(cl.Replicate(rpage, 0, allNodes(2))).To(Succeed())
		p[1].Start(p[1].Store(1, rbase, 2), p[1].Store(1, rbase, 3))
		run(e, cl)
		Expect(vtest.Golden("testdata/counter_cache.trace", only(e.Trace.Records(), "tg."),
			"Page 1 is replicated on nodes 0 (owner) and 1, with a 16-entry counter cache. Node 1 writes 2",
			"and then 3 to word 0x2000 (page 1, offset 0). Rule 1: each write is applied locally, its",
			"counter goes up (tg.counter count=1, then 2) and it goes to the owner as an update. The owner",
			"applies each, reflects it to node 1 with origin 1 and acknowledges it. Rule 2: each reflected",
			"write of node 1's own comes back, is ignored (tg.ignore own=1) and the counter goes down (1,",
			"then 0: the entry is freed). Node 1's memory holds 3 throughout; without the cache the",
			"reflected 2 would overwrite it (section 2.3.2).")).To(Succeed())
		Expect(mem(cl, 1, rbase)).To(Equal(uint32(3)))
	})
})

var _ = Describe("Telegraphos waveforms", func() {
	It("shows the state machines, FIFO occupancy, outstanding operations and the counter cache", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 2, 2)
		Expect(cl.Replicate(rpage, 0, allNodes(2))).To(Succeed())
		var ops []cpu.Op
		for i := range 12 {
			ops = append(ops, p[1].Store(1, rbase+uint32(4*(i%3)), uint32(i)))
		}
		p[1].Start(ops...)
		run(e, cl)
		f, err := vcd.ParseFile(vtest.WriteWaves(e, GinkgoT().TempDir()+"/tg.vcd"))
		Expect(err).NotTo(HaveOccurred())
		values := func(name string) []string {
			v, err := f.Values(name)
			Expect(err).NotTo(HaveOccurred())
			return v
		}
		// Steps that take no time (the counter's increment, a lock taken
		// at once) change the state within a picosecond and do not show.
		Expect(values("n1.hib.ctl.state")).To(ContainElements("DECODE", "MEM_WRITE", "SEND_UPDATE", "IDLE"))
		Expect(values("n0.hib.srv.state")).To(ContainElements("PARSE", "MEM_WRITE", "SEND_REFLECT", "SEND_ACK"))
		Expect(values("n1.hib.sink.state")).To(ContainElements("PARSE", "IDLE"))
		Expect(values("n1.hib.outstanding")).To(ContainElement(Not(Equal("0"))))
		Expect(values("n1.hib.counter_cache.occupancy")).To(ContainElement("3"))
		Expect(values("n1.link.ab.tx0.occupancy")).To(ContainElement(Not(Equal("0"))))
	})
})

var _ = Describe("Telegraphos determinism", func() {
	It("gives the same trace for the same seed", func() {
		stress := func() []trace.Record {
			e := vtest.NewEnv(vtest.Options{Clock: tcClock, Trace: true, Seed: 42})
			cl, p := cluster(e, 4, 2)
			Expect(cl.Replicate(rpage, 0, allNodes(4))).To(Succeed())
			rng := e.Rand("Writers")
			for n := range 4 {
				var ops []cpu.Op
				for k := range 15 {
					ops = append(ops, p[n].Compute(rng.IntN(400)), p[n].Store(n, rbase+uint32(4*rng.IntN(3)), uint32(n<<8|k)))
				}
				ops = append(ops, p[n].FetchAndInc(0, 0x40, nil)...)
				p[n].Start(ops...)
			}
			run(e, cl)
			return e.Trace.Records()
		}
		a, b := stress(), stress()
		Expect(len(a)).To(BeNumerically(">", 500))
		Expect(trace.Diff(a, b)).To(BeNil())
	})
})
