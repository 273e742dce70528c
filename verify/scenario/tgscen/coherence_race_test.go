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
// the case; the HIBs run at 12.5 MHz (80 ns a cycle), cycles below are the
// HIB's:
//
//   - 2418: the owner, node 0, takes node 2's 20th write (2#20, value
//     131091 = 2<<16|19) and applies it; at 2428 it reflects it to node 1.
//   - 2466: node 1's HIB receives that reflected write (tg.recv) and, in the
//     same cycle, latches its processor's 20th store (1#20, value 65555 =
//     1<<16|19) to the same word 0x2000 of its copy (bus.pio.write).
//   - 2468: the sink, after PARSE (2 cycles), checks the word's counter: 0,
//     so the reflected write is to be applied and its memory write starts
//     (Sink.state MEM_WRITE). In the same cycle the processor side, after
//     DECODE, is ready to raise the counter and write the word.
//
// Without the interlock (the tg.nointerlock mutation gives the old model
// back, trace for trace) the store raises the counter at 2468 and issues its
// memory write at once on port 0, beside the sink's on port 2. The memory's
// last transaction was the sink's (the reflected 2#19), so its round-robin
// takes port 0 first: the store lands at 2472, the reflected write at 2475.
// Node 1 has applied 1#20 and then 2#20, but the owner applied 2#20 at 2418
// and gets 1#20's update only at 2513: the copy's order is not a
// subsequence of the owner's, one coherence violation.
//
// With the interlock the processor side waits in REFLECT_WAIT from 2468:
// the reflected write lands at 2472 (port 2), the sink takes the memory's
// answer at 2473, and in that cycle the store raises the counter and
// starts its write, which lands at 2477 (port 0). Node 1 applies 2#20 and
// then 1#20, the owner's order (1#20's update reaches it at 2518); the
// reflected 1#20 comes back at 2566 and is ignored by rule 2.
var _ = Describe("telegraphos-coherence: a reflected write and a local store to one word in one cycle", func() {
	const (
		cycle      = 80_000 // ps, a HIB cycle at 12.5 MHz
		checkCycle = 2468   // the sink's counter check and the store's raise
	)
	type outcome struct {
		rep   *scenario.Report
		node1 []string // node 1's HIB, memory and bus records of cycles 2466..2480
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
			case (r.Path == "N1.HIB" || r.Path == "N1.Shared" || r.Path == "N1.TC") && r.Cycle >= 2466 && r.Cycle <= 2480:
				o.node1 = append(o.node1, r.Format())
			case r.Path == "N0.HIB" && r.Kind == "tg.recv" && field(r, "kind") == "update" &&
				(field(r, "data") == "131091" || field(r, "data") == "65555"):
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
			"197280000 2466 N1.HIB tg.recv kind=reflect src=0 dst=1 addr=0x2000 data=131091 origin=2",
			"197280000 2466 N1.TC bus.pio.write master=N1.Cpu target=N1.HIB addr=0x201002000 len=4 start=2463 waits=0 posted=1 hash=ecce490d57627cbf",
			"197760000 2472 N1.Shared mem.write addr=0x2000 len=4 port=2 hash=ecc4170d5759d344",
			"197840000 2473 N1.HIB tg.counter addr=0x2000 count=1",
			"198160000 2477 N1.Shared mem.write addr=0x2000 len=4 port=0 hash=ecce490d57627cbf",
			"198400000 2480 N1.HIB tg.send kind=update src=1 dst=0 addr=0x2000 data=65555 origin=1",
		}, o.node1)).To(BeEmpty())
		Expect(cmp.Diff([]string{
			"193440000 2418 N0.HIB tg.recv kind=update src=2 dst=0 addr=0x2000 data=131091 origin=2",
			"201440000 2518 N0.HIB tg.recv kind=update src=1 dst=0 addr=0x2000 data=65555 origin=1",
		}, o.owner)).To(BeEmpty())
		// The same cycle: the sink has checked the counter and writes; the
		// processor side waits for it, through the memory's write, then
		// raises the counter and writes.
		Expect(state(o, "n1.hib.sink.state", checkCycle)).To(Equal("MEM_WRITE"))
		for c := int64(checkCycle); c <= 2472; c++ {
			Expect(state(o, "n1.hib.ctl.state", c)).To(Equal("REFLECT_WAIT"), "cycle %d", c)
		}
		Expect(state(o, "n1.hib.ctl.state", 2473)).To(Equal("MEM_WRITE"))
	})

	It("tg.nointerlock: the store overtakes the reflected write and the checker reports it", func() {
		o := run(map[string]int{"tg.nointerlock": 1})
		Expect(metric(o.rep, "violations")).To(Equal(1.0))
		Expect(failed(o.rep)).To(ConsistOf(HaveField("Detail", ContainSubstring(": 1 violations"))))
		Expect(cmp.Diff([]string{
			"197280000 2466 N1.HIB tg.recv kind=reflect src=0 dst=1 addr=0x2000 data=131091 origin=2",
			"197280000 2466 N1.TC bus.pio.write master=N1.Cpu target=N1.HIB addr=0x201002000 len=4 start=2463 waits=0 posted=1 hash=ecce490d57627cbf",
			"197440000 2468 N1.HIB tg.counter addr=0x2000 count=1",
			"197760000 2472 N1.Shared mem.write addr=0x2000 len=4 port=0 hash=ecce490d57627cbf",
			"198000000 2475 N1.HIB tg.send kind=update src=1 dst=0 addr=0x2000 data=65555 origin=1",
			"198000000 2475 N1.Shared mem.write addr=0x2000 len=4 port=2 hash=ecc4170d5759d344",
		}, o.node1)).To(BeEmpty())
		Expect(cmp.Diff([]string{
			"193440000 2418 N0.HIB tg.recv kind=update src=2 dst=0 addr=0x2000 data=131091 origin=2",
			"201040000 2513 N0.HIB tg.recv kind=update src=1 dst=0 addr=0x2000 data=65555 origin=1",
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
