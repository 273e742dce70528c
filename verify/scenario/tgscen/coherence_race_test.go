package tgscen_test

import (
	"path/filepath"

	"github.com/google/go-cmp/cmp"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// A reflected write and a store of the copy's own processor to the same word
// in the same cycle (2.3.3, rules 1-3; the interlock of sinkReflect in
// hib/telegraphos). telegraphos-coherence with nodes=3 words=1 writes=50
// gap=3000 seed=1 (`bin/nisim run telegraphos-coherence --set nodes=3 --set
// words=1 --set writes=50 --set gap=3000 --seed 1`, 0.5 ms simulated) has
// the case; the HIBs and the TURBOchannels run at 12.5 MHz (80 ns a cycle),
// the processors at 150 MHz (12 processor cycles a HIB cycle); cycles below
// are the HIB's unless they are called processor cycles.
//
// When the two meet, by hand. Node n's program is Compute(g0), store n#1,
// Compute(g1), store n#2, ... with gk = rng.IntN(3000) of the "Writers"
// stream (seed 1). A Compute(g) occupies g processor cycles and a store its
// 4 issue cycles, and an operation's successor begins in the cycle after it
// executes (host/cpu, 8e23296), so store n#(k+1) enters the write buffer in
// processor cycle E = S + 4k + 3, S = g0+...+gk; its TURBOchannel write
// starts in the next TURBOchannel cycle, floor(E/12)+1, and ends 3 cycles
// later, when the HIB latches it.
//
//   - Node 2's gaps g0..g7 are 418, 2926, 2157, 1642, 1813, 264, 1836, 2924
//     (S = 13980): its 8th store (2#8, value 131079 = 2<<16|7) enters the
//     buffer at E = 13980+28+3 = 14011, its write runs 1168..1171. Its HIB
//     sends the update at 1180; the owner, node 0, receives it at 1218 and
//     applies it (1224); at 1228 it reflects it to node 1.
//   - 1266: node 1's HIB receives that reflected write (tg.recv). Node 1's
//     gaps g0..g10 are 201, 2894, 850, 162, 477, 838, 5, 2989, 2796, 1139,
//     2752 (S = 15103): its 11th store (1#11, value 65546 = 1<<16|10) to
//     the same word 0x2000 enters the buffer at E = 15103+40+3 = 15146,
//     floor(15146/12)+1 = 1263, and its write ends at 1266 (bus.pio.write
//     start=1263): the same cycle. (Its 12th, 1#12, g11 = 56 later: E =
//     15206, written 1268..1271.)
//   - 1268: the sink, after PARSE (2 cycles), checks the word's counter: 0,
//     so the reflected write is to be applied and its memory write starts
//     (Sink.state MEM_WRITE). In the same cycle the processor side, after
//     DECODE, is ready to raise the counter and write the word.
//
// Before 8e23296 a Compute's successor began in the Compute's last cycle and
// a store's in the store's (E = S + 2k + 2); the case was then 1#20 and 2#20
// at 2466. With the new rule 1#20 lands at 2469 and the reflected 2#20 at
// 2470, a cycle apart; 1#11 and 2#8 at 1266 is now the run's first meeting
// (the other, 2#19 and node 0's 0#18 reflected at node 2 in 2342, has the
// memory's round robin favour the reflected write: no violation with or
// without the interlock).
//
// Without the interlock (the tg.nointerlock mutation gives the old model
// back, trace for trace) the store raises the counter at 1268 and issues its
// memory write at once on port 0, beside the sink's on port 2. The memory's
// last transaction was the sink's (the reflected 0#8, at 1224), so its
// round-robin takes port 0 first: the store lands at 1272, the reflected
// write at 1275 (1#12 raises the counter to 2 at 1277). Node 1 has applied
// 1#11 and then 2#8, but the owner applied 2#8 at 1218 and gets 1#11's
// update only at 1313: the copy's order is not a subsequence of the owner's,
// one coherence violation.
//
// With the interlock the processor side waits in REFLECT_WAIT from 1268:
// the reflected write lands at 1272 (port 2), the sink takes the memory's
// answer at 1273, and in that cycle the store raises the counter and
// starts its write, which lands at 1277 (port 0). Node 1 applies 2#8 and
// then 1#11, the owner's order (1#11's update reaches it at 1318); the
// reflected 1#11 comes back at 1366 and is ignored by rule 2.
var _ = Describe("telegraphos-coherence: a reflected write and a local store to one word in one cycle", func() {
	const (
		cycle      = 80_000 // ps, a HIB cycle at 12.5 MHz
		meetCycle  = 1266   // the reflected write and the store both reach node 1's HIB
		checkCycle = 1268   // the sink's counter check and the store's raise: meetCycle + PARSE's 2
	)
	type outcome struct {
		rep   *scenario.Report
		node1 []string // node 1's HIB, memory and bus records of cycles 1266..1280
		owner []string // the owner's records of the two writes
		waves *vcd.File
	}
	run := func(mut map[string]int) outcome {
		GinkgoHelper()
		s := lookup("telegraphos-coherence")
		p := s.Defaults()
		Expect(scenario.Configure(p, "", []string{"nodes=3", "words=1", "writes=50", "gap=3000"})).To(Succeed())
		path := filepath.Join(GinkgoT().TempDir(), "race.vcd")
		rep, e, violations, err := scenario.Exec(s, p, scenario.Options{Seed: 1, VCD: path, KeepTrace: true, Mutations: mut})
		Expect(err).NotTo(HaveOccurred())
		Expect(violations).NotTo(HaveOccurred())
		o := outcome{rep: rep}
		for _, r := range e.Trace.Records() {
			switch {
			case (r.Path == "N1.HIB" || r.Path == "N1.Shared" || r.Path == "N1.TC") && r.Cycle >= meetCycle && r.Cycle <= meetCycle+14:
				o.node1 = append(o.node1, r.Format())
			case r.Path == "N0.HIB" && r.Kind == "tg.recv" && field(r, "kind") == "update" &&
				(field(r, "data") == "131079" || field(r, "data") == "65546"):
				o.owner = append(o.owner, r.Format())
			}
		}
		o.waves, err = vcd.ParseFile(path)
		Expect(err).NotTo(HaveOccurred())
		return o
	}
	state := func(o outcome, signal string, c int64) string {
		GinkgoHelper()
		v, err := o.waves.ValueAt(signal, c*cycle)
		Expect(err).NotTo(HaveOccurred())
		return v.Str
	}

	It("lands the reflected write before the store: no coherence violation", func() {
		o := run(nil)
		Expect(metric(o.rep, "violations")).To(BeZero())
		Expect(failed(o.rep)).To(BeEmpty())
		Expect(cmp.Diff([]string{
			"101280000 1266 N1.HIB tg.recv kind=reflect src=0 dst=1 addr=0x2000 data=131079 origin=2",
			"101280000 1266 N1.TC bus.pio.write master=N1.Cpu target=N1.HIB addr=0x201002000 len=4 start=1263 waits=0 posted=1 hash=8cecc8d2fbe48e76",
			"101680000 1271 N1.TC bus.pio.write master=N1.Cpu target=N1.HIB addr=0x201002000 len=4 start=1268 waits=0 posted=1 hash=ecf8e8caa5b49837",
			"101760000 1272 N1.Shared mem.write addr=0x2000 len=4 port=2 hash=6d2ea6669b2717f0",
			"101840000 1273 N1.HIB tg.counter addr=0x2000 count=1",
			"102160000 1277 N1.Shared mem.write addr=0x2000 len=4 port=0 hash=8cecc8d2fbe48e76",
			"102400000 1280 N1.HIB tg.send kind=update src=1 dst=0 addr=0x2000 data=65546 origin=1",
		}, o.node1)).To(BeEmpty())
		Expect(cmp.Diff([]string{
			"97440000 1218 N0.HIB tg.recv kind=update src=2 dst=0 addr=0x2000 data=131079 origin=2",
			"105440000 1318 N0.HIB tg.recv kind=update src=1 dst=0 addr=0x2000 data=65546 origin=1",
		}, o.owner)).To(BeEmpty())
		// The same cycle: the sink has checked the counter and writes; the
		// processor side waits for it, through the memory's write, then
		// raises the counter and writes.
		Expect(state(o, "n1.hib.sink.state", checkCycle)).To(Equal("MEM_WRITE"))
		for c := int64(checkCycle); c <= 1272; c++ {
			Expect(state(o, "n1.hib.ctl.state", c)).To(Equal("REFLECT_WAIT"), "cycle %d", c)
		}
		Expect(state(o, "n1.hib.ctl.state", 1273)).To(Equal("MEM_WRITE"))
	})

	It("tg.nointerlock: the store overtakes the reflected write and the checker reports it", func() {
		o := run(map[string]int{"tg.nointerlock": 1})
		Expect(metric(o.rep, "violations")).To(Equal(1.0))
		Expect(failed(o.rep)).To(ConsistOf(HaveField("Detail", ContainSubstring(": 1 violations"))))
		Expect(cmp.Diff([]string{
			"101280000 1266 N1.HIB tg.recv kind=reflect src=0 dst=1 addr=0x2000 data=131079 origin=2",
			"101280000 1266 N1.TC bus.pio.write master=N1.Cpu target=N1.HIB addr=0x201002000 len=4 start=1263 waits=0 posted=1 hash=8cecc8d2fbe48e76",
			"101440000 1268 N1.HIB tg.counter addr=0x2000 count=1",
			"101680000 1271 N1.TC bus.pio.write master=N1.Cpu target=N1.HIB addr=0x201002000 len=4 start=1268 waits=0 posted=1 hash=ecf8e8caa5b49837",
			"101760000 1272 N1.Shared mem.write addr=0x2000 len=4 port=0 hash=8cecc8d2fbe48e76",
			"102000000 1275 N1.HIB tg.send kind=update src=1 dst=0 addr=0x2000 data=65546 origin=1",
			"102000000 1275 N1.Shared mem.write addr=0x2000 len=4 port=2 hash=6d2ea6669b2717f0",
			"102160000 1277 N1.HIB tg.counter addr=0x2000 count=2",
		}, o.node1)).To(BeEmpty())
		Expect(cmp.Diff([]string{
			"97440000 1218 N0.HIB tg.recv kind=update src=2 dst=0 addr=0x2000 data=131079 origin=2",
			"105040000 1313 N0.HIB tg.recv kind=update src=1 dst=0 addr=0x2000 data=65546 origin=1",
		}, o.owner)).To(BeEmpty())
		Expect(state(o, "n1.hib.sink.state", checkCycle)).To(Equal("MEM_WRITE"))
		Expect(state(o, "n1.hib.ctl.state", checkCycle)).To(Equal("MEM_WRITE"))
	})
})

// field returns a trace record's field, "" if it has none.
func field(r trace.Record, key string) string {
	v, _ := r.Get(key)
	return v
}
