package cpu_test

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// These specs pin the processor's timing rule (the package comment): an
// operation of n >= 1 cycles that executes in cycle e lets the next one
// begin in e+1; a load's successor begins in the cycle its data arrives;
// zero-cycle operations add no cycle. Each program ends with a marker, a
// Call true at once, whose condition records the cycle it begins in.
var _ = Describe("operation timing", func() {
	// marker is a zero-cycle Call that records when it is evaluated: the
	// cycle the previous operation lets it begin in.
	marker := func(at *clock.Time) cpu.Op {
		return cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { *at = now; return true }}
	}
	done := func(at *clock.Time) func(clock.Time, []byte) {
		return func(now clock.Time, _ []byte) { *at = now }
	}

	It("gives a Compute(1) one cycle: two of them, then the marker in cycle 2", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		var a, b, m clock.Time
		nd.cpus[0].Run(cpu.Op{Kind: cpu.Compute, Cycles: 1, Label: "a", Done: done(&a)},
			cpu.Op{Kind: cpu.Compute, Cycles: 1, Label: "b", Done: done(&b)},
			marker(&m))
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// a (1) executes and retires in c0, b (1) in c0+1 = c1, the marker
		// begins in c1+1 = c2 (two instructions, two cycles; before
		// 8e23296 all three ran in c0).
		Expect([]clock.Time{a, b, m}).To(Equal([]clock.Time{cyc(0), cyc(1), cyc(2)}))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"0 0 Cpu0 cpu.retire op=a cycles=0",
			"10000 1 Cpu0 cpu.retire op=b cycles=0",
		}))
	})

	It("takes 13 cycles for a code step of 6 posted stores and 7 other instructions at CPI 1", func() {
		// A processor at CPI 1 (the Builder's default; newNode's is 3/2)
		// on the stand-in target, which takes a store a cycle.
		e := vtest.NewEnv(vtest.Options{Clock: clk100, Trace: true})
		tgt := newTarget(e, clk100, 1, 2)
		c, err := cpu.MakeBuilder().WithEnv(e).WithClock(clk100).Build("Cpu0")
		Expect(err).NotTo(HaveOccurred())
		c.Attach(tgt.ports[0])
		var acc []cpu.Access
		for i := range 6 {
			acc = append(acc, cpu.Access{Addr: 0x100 + uint64(8*i), Data: []byte{byte(i), 0, 0, 0}, Write: true})
		}
		var m clock.Time
		c.Run(cpu.Op{Kind: cpu.CodeStep, Step: &cpu.Step{Label: "cross-in", Instrs: 13, Accesses: acc}}, marker(&m))
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The stores issue one a cycle, c0..c5 (each executes in its
		// cycle, posted); the 13-6 = 7 other instructions at CPI 1 are a
		// Compute(7), c6..c12; the step ends (0 cycles) in c13: 6+7 = 13
		// cycles, one per instruction (11 before 8e23296: the Compute
		// began in the last store's cycle and the end in its last cycle).
		// The marker begins in c13 too.
		Expect(lines(e, "cpu.")).To(Equal([]string{
			"130000 13 Cpu0 cpu.step step=cross-in instrs=13 mem=6 io=0 cycles=13",
		}))
		Expect(m).To(Equal(cyc(13)))
		Expect(c.Instructions()).To(Equal(uint64(13)))
		d, _ := tgt.store.Bytes(0x128, 4)
		Expect(d).To(Equal([]byte{5, 0, 0, 0}))
	})

	It("begins a load's successor in the cycle the data arrives", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		var ld, m clock.Time
		nd.cpus[0].Run(cpu.Op{Kind: cpu.Load, Addr: 0x40, Len: 4, Done: done(&ld)}, marker(&m))
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The load issues in c0, reaches the target in c1, is answered in
		// c1+2 = c3 and seen in c4, where it retires; the marker begins in
		// c4 as well (the load's issue cycle c0 is long past).
		Expect(ld).To(Equal(cyc(4)))
		Expect(m).To(Equal(cyc(4)))
	})

	It("adds no cycle for zero-cycle operations: a Fence with nothing outstanding, a Call or Wait true at once", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		var a, f, call, wait, b, m clock.Time
		nd.cpus[0].Run(cpu.Op{Kind: cpu.Compute, Cycles: 1, Done: done(&a)},
			cpu.Op{Kind: cpu.Fence, Done: done(&f)},
			cpu.Op{Kind: cpu.Call, Fn: func(clock.Time) bool { return true }, Done: done(&call)},
			cpu.Op{Kind: cpu.Wait, Fn: func(clock.Time) bool { return true }, Done: done(&wait)},
			cpu.Op{Kind: cpu.Compute, Cycles: 1, Done: done(&b)},
			marker(&m))
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// a (1) in c0; the Fence (no store outstanding), the Call and the
		// Wait begin and retire in c0+1 = c1, each letting the next begin
		// in the same cycle; b (1) in c1; the marker in c2: the same as
		// two Compute(1)s alone (the first spec).
		Expect([]clock.Time{a, f, call, wait, b, m}).To(Equal([]clock.Time{cyc(0), cyc(1), cyc(1), cyc(1), cyc(1), cyc(2)}))
	})
})
