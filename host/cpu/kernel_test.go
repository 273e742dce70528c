package cpu_test

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// All processors and the stand-in target below run at 100 MHz: cycle n is
// at n*10 ns. Timing rules the hand arithmetic uses (host/cpu's model):
// an operation of n >= 1 cycles (a Compute of n, a store or load of its
// one issue cycle, an exception's entry or return cost) started at cycle s
// executes, and a Compute retires (Done), at s+n-1, and the next operation
// begins at s+n; a store that waited for room in the write buffer
// executes when it is taken. A zero-cycle operation (a Fence with nothing
// outstanding, a Call or Wait whose condition holds, a free exception
// return) retires in the cycle it begins and the next one begins in that
// cycle too. A load issued at cycle s reaches the target at s+1 (the
// channel FIFO is a register), is answered lat cycles later, and the
// processor sees the answer one cycle after that: the load retires then
// and the next operation begins in that same cycle. A trace record's
// cycles= is its retire cycle minus its start cycle (n-1 for a Compute of
// n). A sequential program's Go code between two operations runs when its
// next operation is fetched (p.Now() is that cycle).
var clk100 = clock.MHz(100)

func cyc(n int) clock.Time { return clk100.TimeOf(clock.Cycle(n)) }

// node is one or more processors on a stand-in target.
type node struct {
	e    *env.Env
	cpus []*cpu.CPU
	mem  *llscTarget
}

func newNode(n int, os cpu.OSCosts, lat int) *node {
	e := vtest.NewEnv(vtest.Options{Clock: clk100, Trace: true})
	return buildNode(e, n, os, lat)
}

func buildNode(e *env.Env, n int, os cpu.OSCosts, lat int) *node {
	nd := &node{e: e, mem: newTarget(e, clk100, n, lat)}
	for i := range n {
		c, err := cpu.MakeBuilder().WithEnv(e).WithClock(clk100).WithOSCosts(os).WithCPI(3, 2).Build(fmt.Sprintf("Cpu%d", i))
		if err != nil {
			panic(err)
		}
		c.Attach(nd.mem.ports[i])
		nd.cpus = append(nd.cpus, c)
	}
	return nd
}

// lines formats the trace records whose kind starts with one of kinds.
func lines(e *env.Env, kinds ...string) []string {
	var out []string
	for _, r := range e.Trace.Records() {
		for _, k := range kinds {
			if strings.HasPrefix(r.Kind, k) {
				out = append(out, r.Format())
				break
			}
		}
	}
	return out
}

func traceText(e *env.Env) string {
	var b strings.Builder
	for _, r := range e.Trace.Records() {
		b.WriteString(r.Format())
		b.WriteByte('\n')
	}
	return b.String()
}

var _ = Describe("interrupts inside operations", func() {
	irqCosts := cpu.OSCosts{InterruptEntry: 3, InterruptReturn: 2}

	It("suspends a Compute and resumes it with the cycles it had left", func() {
		nd := newNode(1, irqCosts, 2)
		c := nd.cpus[0]
		c.SetInterruptHandler(func(clock.Time) []cpu.Op {
			return []cpu.Op{{Kind: cpu.Compute, Cycles: 4, Label: "isr"}}
		})
		var end clock.Time
		c.Run(cpu.Op{Kind: cpu.Compute, Cycles: 20, Label: "work", Done: func(now clock.Time, _ []byte) { end = now }})
		vtest.AtCycle(nd.e, "Irq", clk100, 5, c.Interrupt)
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// work: started c0, would retire at c0+20-1 = c19. The line rises
		// at c5 and wakes the processor at c6: work ran c0..c5 (6 cycles),
		// 19-6+1 = 14 cycles left. Entry (3) c6..c8, isr (4) c9..c12
		// (retire record: 12-9 = 3), return (2) c13..c14; work resumes at
		// c15 with 14 cycles and retires at c15+14-1 = c28 (record: 28-15 =
		// 13). The total is unchanged: work's 20 cycles plus the handler's
		// 3+4+2 = 9, c0..c28, nine cycles later than c19.
		Expect(end).To(Equal(cyc(28)))
		Expect(end - cyc(19)).To(Equal(cyc(3 + 4 + 2)))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"60000 6 Cpu0 cpu.irq in=\"compute work\"",
			"120000 12 Cpu0 cpu.retire op=isr cycles=3",
			"280000 28 Cpu0 cpu.retire op=work cycles=13",
		}))
		Expect(c.Interrupts()).To(Equal(uint64(1)))
		Expect(c.Masked()).To(BeFalse())
	})

	It("recognises an interrupt InterruptDelay cycles late while the program runs on", func() {
		costs := irqCosts
		costs.InterruptDelay = 4
		nd := newNode(1, costs, 2)
		c := nd.cpus[0]
		c.SetInterruptHandler(func(clock.Time) []cpu.Op {
			return []cpu.Op{{Kind: cpu.Compute, Cycles: 4, Label: "isr"}}
		})
		var end clock.Time
		c.Run(cpu.Op{Kind: cpu.Compute, Cycles: 20, Label: "work", Done: func(now clock.Time, _ []byte) { end = now }})
		vtest.AtCycle(nd.e, "Irq", clk100, 5, c.Interrupt)
		// A second rise while the first is being recognised merges with it.
		vtest.AtCycle(nd.e, "Irq2", clk100, 7, c.Interrupt)
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// work: c0..c19. The line rises at c5; without a delay the
		// processor takes it at c6 (the spec above); with 4 cycles of
		// recognition at c6+4 = c10, work running on meanwhile (c0..c9, 10
		// cycles): 19-10+1 = 10 cycles left. Entry (3) c10..c12, isr (4)
		// c13..c16 (record 16-13 = 3), return (2) c17..c18; work resumes
		// at c19 with 10 cycles and retires at c19+10-1 = c28 (record
		// 28-19 = 9): the same end as the spec above (the handler's 9
		// cycles start 4 cycles later, with 4 fewer cycles of work left).
		Expect(end).To(Equal(cyc(28)))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"100000 10 Cpu0 cpu.irq in=\"compute work\"",
			"160000 16 Cpu0 cpu.retire op=isr cycles=3",
			"280000 28 Cpu0 cpu.retire op=work cycles=9",
		}))
		Expect(c.Interrupts()).To(Equal(uint64(1)))
	})

	It("names InterruptDelay when it is negative", func() {
		Expect(cpu.OSCosts{InterruptDelay: -1}.Validate()).To(MatchError(ContainSubstring("InterruptDelay -1")))
	})

	It("takes an interrupt in a Wait whose flag the handler sets, and the Wait then ends", func() {
		nd := newNode(1, irqCosts, 2)
		c := nd.cpus[0]
		flag := false
		c.SetInterruptProgram(func(p *cpu.Proc) {
			p.As("isr").Compute(4)
			flag = true
		})
		var woke clock.Time
		c.Run(cpu.Go(func(p *cpu.Proc) {
			p.As("wait").WaitUntil(func() bool { return flag })
			woke = p.Now()
		}))
		vtest.AtCycle(nd.e, "Irq", clk100, 5, c.Interrupt)
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The Wait sleeps from c0 (flag false). The interrupt wakes the
		// processor at c6: entry (3) c6..c8, isr (4) c9..c12 (record
		// 12-9 = 3); at c13 the handler program sets the flag and returns;
		// return (2) c13..c14; the Wait (zero cycles) is evaluated again
		// at c15 and retires in that cycle (record 15-15 = 0), where the
		// program resumes.
		Expect(woke).To(Equal(cyc(15)))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"60000 6 Cpu0 cpu.irq in=\"wait wait\"",
			"120000 12 Cpu0 cpu.retire op=isr cycles=3",
			"150000 15 Cpu0 cpu.retire op=wait cycles=0",
		}))
		Expect(c.Programs()).To(Equal(0))
	})

	It("takes an interrupt in a polled Call and evaluates it again after the handler", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		c := nd.cpus[0]
		polls := 0
		c.SetInterruptHandler(func(clock.Time) []cpu.Op { return []cpu.Op{{Kind: cpu.Compute, Cycles: 5, Label: "isr"}} })
		c.Run(cpu.Op{Kind: cpu.Call, Label: "poll", Fn: func(now clock.Time) bool { polls++; return now >= cyc(8) }})
		vtest.AtCycle(nd.e, "Irq", clk100, 2, c.Interrupt)
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Polled at c0..c3 (false); the line rises at c2, seen at c3 after
		// the poll: isr (5) c3..c7 (no entry cost; record 7-3 = 4), return
		// (0 cycles) at c8, the cycle after isr; the poll resumes at c8,
		// where it holds (record 8-8 = 0). Polls: c0..c3, c8.
		Expect(polls).To(Equal(5))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"30000 3 Cpu0 cpu.irq in=\"call poll\"",
			"70000 7 Cpu0 cpu.retire op=isr cycles=4",
			"80000 8 Cpu0 cpu.retire op=poll cycles=0",
		}))
	})

	It("does not interrupt a chained operation", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		c := nd.cpus[0]
		c.SetInterruptHandler(func(clock.Time) []cpu.Op { return []cpu.Op{{Kind: cpu.Compute, Cycles: 2, Label: "isr"}} })
		c.Run(cpu.Op{Kind: cpu.Compute, Cycles: 3, Label: "a"},
			cpu.Op{Kind: cpu.Compute, Cycles: 10, Label: "pal", Chained: true})
		vtest.AtCycle(nd.e, "Irq", clk100, 4, c.Interrupt)
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// a (3) c0..c2, pal (10, chained) c3..c12 (record 12-3 = 9); the
		// interrupt (c4) waits for pal to retire and is taken at c13, the
		// next operation boundary: isr (2) c13..c14.
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"20000 2 Cpu0 cpu.retire op=a cycles=2",
			"120000 12 Cpu0 cpu.retire op=pal cycles=9",
			"130000 13 Cpu0 cpu.irq in=\"\"",
			"140000 14 Cpu0 cpu.retire op=isr cycles=1",
		}))
	})
})

var _ = Describe("chained operations of a sequential program", func() {
	It("takes no interrupt between them: the program's next operation is seen before the interrupt", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		c := nd.cpus[0]
		c.SetInterruptHandler(func(clock.Time) []cpu.Op { return []cpu.Op{{Kind: cpu.Compute, Cycles: 2, Label: "isr"}} })
		c.Run(cpu.Go(func(p *cpu.Proc) {
			p.Do(cpu.Op{Kind: cpu.Compute, Cycles: 3, Label: "a"})
			p.Do(cpu.Op{Kind: cpu.Compute, Cycles: 10, Label: "pal", Chained: true})
			p.Do(cpu.Op{Kind: cpu.Compute, Cycles: 2, Label: "pal2", Chained: true})
			p.Do(cpu.Op{Kind: cpu.Compute, Cycles: 2, Label: "b"})
		}))
		vtest.AtCycle(nd.e, "Irq", clk100, 4, c.Interrupt)
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// a (3) c0..c2, pal (10) c3..c12, pal2 (2, chained to pal)
		// c13..c14: the interrupt (c4) waits for the sequence and is taken
		// at c15, in front of b: isr (2) c15..c16, return (0 cycles) at
		// c17, b (2) c17..c18.
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"20000 2 Cpu0 cpu.retire op=a cycles=2",
			"120000 12 Cpu0 cpu.retire op=pal cycles=9",
			"140000 14 Cpu0 cpu.retire op=pal2 cycles=1",
			"150000 15 Cpu0 cpu.irq in=\"\"",
			"160000 16 Cpu0 cpu.retire op=isr cycles=1",
			"180000 18 Cpu0 cpu.retire op=b cycles=1",
		}))
	})
})

var _ = Describe("kernel mode", func() {
	costs := cpu.OSCosts{TrapEntry: 5, TrapReturn: 4}

	It("enters a trap handler with interrupts masked and takes the pending interrupt at the return", func() {
		nd := newNode(1, costs, 2)
		c := nd.cpus[0]
		var maskedInHandler bool
		c.SetTrapHandler(7, cpu.Sequential(func(p *cpu.Proc, f *cpu.Frame) {
			p.As("syscall-body").Compute(10)
			maskedInHandler = p.CPU().Masked()
			f.Status = f.Args[0] + f.Args[1]
		}))
		c.SetInterruptHandler(func(clock.Time) []cpu.Op { return []cpu.Op{{Kind: cpu.Compute, Cycles: 3, Label: "isr"}} })
		var status uint64
		var back clock.Time
		c.Run(cpu.Go(func(p *cpu.Proc) {
			status = p.As("trap").Trap(7, 40, 2)
			back = p.Now()
			p.As("after").Compute(2)
		}))
		vtest.AtCycle(nd.e, "Irq", clk100, 5, c.Interrupt)
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(uint64(42)))
		Expect(maskedInHandler).To(BeTrue())
		// Trap issued c0, entry 5 cycles: c0..c4 (the trap record at c4),
		// the handler starts at c5: body (10) c5..c14 (record 14-5 = 9;
		// the interrupt at c5 is masked and waits). Return 4 cycles:
		// c15..c18, the trap retires at c18 (record 18-0 = 18, status 42).
		// At c19 the program's code after the trap runs (it fetches its
		// next operation, before any handler) and the pending interrupt is
		// taken in front of that operation: isr (3) c19..c21, return (0
		// cycles) at c22, after (2) c22..c23.
		Expect(back).To(Equal(cyc(19)))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"40000 4 Cpu0 cpu.trap trap=7 args=2",
			"140000 14 Cpu0 cpu.retire op=syscall-body cycles=9",
			"180000 18 Cpu0 cpu.retire op=trap cycles=18 trap=7 status=42",
			"190000 19 Cpu0 cpu.irq in=\"\"",
			"210000 21 Cpu0 cpu.retire op=isr cycles=2",
			"230000 23 Cpu0 cpu.retire op=after cycles=1",
		}))
		Expect(c.Traps()).To(Equal(uint64(1)))
		Expect(c.Masked()).To(BeFalse())
	})

	It("nests an interrupt in a handler that unmasks", func() {
		nd := newNode(1, costs, 2)
		c := nd.cpus[0]
		c.SetTrapHandler(1, cpu.Sequential(func(p *cpu.Proc, f *cpu.Frame) {
			p.EnableInterrupts()
			p.As("long").Compute(10)
		}))
		c.SetInterruptHandler(func(clock.Time) []cpu.Op { return []cpu.Op{{Kind: cpu.Compute, Cycles: 3, Label: "isr"}} })
		c.Run(cpu.Op{Kind: cpu.Trap, Trap: 1, Label: "trap"})
		vtest.AtCycle(nd.e, "Irq", clk100, 6, c.Interrupt)
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Entry (5) c0..c4, unmask (0 cycles) at c5, long (10) from c5
		// (would end c14); the interrupt (c6) is taken inside it at c7,
		// long having run c5..c6: isr (3) c7..c9 (record 9-7 = 2), return
		// (0 cycles) at c10; long resumes with 14-7+1 = 8 cycles, c10..c17
		// (record 17-10 = 7); return (4) c18..c21: the trap retires at c21
		// (record 21-0 = 21 = 5+10+3+4-1).
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"40000 4 Cpu0 cpu.trap trap=1 args=0",
			"70000 7 Cpu0 cpu.irq in=\"compute long\"",
			"90000 9 Cpu0 cpu.retire op=isr cycles=2",
			"170000 17 Cpu0 cpu.retire op=long cycles=7",
			"210000 21 Cpu0 cpu.retire op=trap cycles=21 trap=1 status=0",
		}))
	})

	It("reports a trap with no handler", func() {
		nd := newNode(1, costs, 2)
		nd.cpus[0].Run(cpu.Op{Kind: cpu.Trap, Trap: 3})
		_, err := nd.e.Run()
		Expect(err).To(MatchError(ContainSubstring("trap 3 has no handler")))
	})
})

var _ = Describe("page protection", func() {
	costs := cpu.OSCosts{FaultEntry: 10, SignalDelivery: 20, Mprotect: 50, FaultReturn: 8}

	It("runs the fault handler, which upgrades the page, and restarts the store", func() {
		nd := newNode(1, costs, 2)
		c := nd.cpus[0]
		pt, err := cpu.NewPageTable(4096, cpu.PermReadWrite)
		Expect(err).NotTo(HaveOccurred())
		pt.Protect(0x1000, 4096, cpu.PermRead)
		c.SetPageTable(pt)
		var seen cpu.Frame
		c.SetFaultHandler(cpu.Sequential(func(p *cpu.Proc, f *cpu.Frame) {
			seen = *f
			p.As("mprotect").Mprotect(f.Addr, 1, cpu.PermReadWrite)
		}))
		var got uint32
		c.Run(cpu.Go(func(p *cpu.Proc) {
			p.As("store").Store32(0x1010, 0xcafe)
			got = p.As("load").Load32(0x1010)
		}))
		_, err = nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Store (1 issue cycle) at c0 faults: entry + signal 30 cycles
		// c1..c30 (the frame's Now, the entry's last cycle), the handler
		// at c31: mprotect (50) c31..c80 (record 80-31 = 49); return (8)
		// c81..c88; the store restarts at c89 and retires there (posted,
		// record 0). The load begins and pushes at c90; the target takes
		// the store at c90 and the load at c91, answers at c91+2 = c93,
		// seen at c94 (record 94-90 = 4).
		Expect(seen).To(Equal(cpu.Frame{Now: cyc(30), Addr: 0x1010, Write: true}))
		Expect(got).To(Equal(uint32(0xcafe)))
		Expect(pt.Perm(0x1fff)).To(Equal(cpu.PermReadWrite))
		Expect(c.Faults()).To(Equal(uint64(1)))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"0 0 Cpu0 cpu.fault addr=0x1010 access=write",
			"800000 80 Cpu0 cpu.retire op=mprotect cycles=49",
			"890000 89 Cpu0 cpu.retire op=store cycles=0 addr=0x1010 hash=" + trace.HashBytes([]byte{0xfe, 0xca, 0, 0}),
			"940000 94 Cpu0 cpu.retire op=load cycles=4 addr=0x1010 hash=" + trace.HashBytes([]byte{0xfe, 0xca, 0, 0}),
		}))
	})

	It("reports a fault handler that returns without granting the access", func() {
		nd := newNode(1, costs, 2)
		c := nd.cpus[0]
		pt, _ := cpu.NewPageTable(8192, cpu.PermNone)
		c.SetPageTable(pt)
		c.SetFaultHandler(func(*cpu.Frame) []cpu.Op { return nil })
		c.Run(cpu.Op{Kind: cpu.Load, Addr: 0x40, Len: 4})
		_, err := nd.e.Run()
		Expect(err).To(MatchError(ContainSubstring("read of 0x40 without permission (none): the fault handler returned without granting it")))
	})

	DescribeTable("rejects bad parameters",
		func(build func() error, msg string) { Expect(build()).To(MatchError(ContainSubstring(msg))) },
		Entry("page size", func() error { _, err := cpu.NewPageTable(3000, cpu.PermRead); return err }, "page size 3000"),
		Entry("negative cost", func() error {
			_, err := cpu.MakeBuilder().WithEnv(env.New(env.Options{})).WithClock(clk100).WithOSCosts(cpu.OSCosts{Mprotect: -1}).Build("C")
			return err
		}, "Mprotect -1"),
		Entry("cpi", func() error {
			_, err := cpu.MakeBuilder().WithEnv(env.New(env.Options{})).WithClock(clk100).WithCPI(0, 1).Build("C")
			return err
		}, "cpi 0/1"),
	)
})

var _ = Describe("load-locked / store-conditional", func() {
	It("succeeds when nothing wrote the line in between", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		var ok bool
		var t clock.Time
		nd.cpus[0].Run(cpu.Go(func(p *cpu.Proc) {
			v := p.As("ll").LoadLocked32(0x100)
			ok = p.As("sc").StoreConditional32(0x100, v+1)
			t = p.Now()
		}))
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// LL issued c0, at the target c1, answered c3, seen c4; SC issued
		// c4 (never posted), at the target c5, completion c7, seen c8.
		Expect(ok).To(BeTrue())
		Expect(t).To(Equal(cyc(8)))
		d, _ := nd.mem.store.Bytes(0x100, 4)
		Expect(d).To(Equal([]byte{1, 0, 0, 0}))
		Expect(lines(nd.e, "cpu.")[1]).To(HaveSuffix("ok=1"))
	})

	It("fails when another processor stored to the line, and when a DMA wrote it", func() {
		nd := newNode(2, cpu.OSCosts{}, 2)
		var ok1, ok2 bool
		nd.cpus[0].Run(cpu.Go(func(p *cpu.Proc) {
			v := p.LoadLocked32(0x100)
			p.Compute(10)
			ok1 = p.StoreConditional32(0x100, v+1)
			v = p.LoadLocked32(0x100)
			p.Compute(10)
			ok2 = p.StoreConditional32(0x108, v+1) // same 64-byte line
		}))
		nd.cpus[1].Run(cpu.Go(func(p *cpu.Proc) {
			p.Compute(3)
			p.Store32(0x104, 9)
		}))
		vtest.AtCycle(nd.e, "Dma", clk100, 30, func(clock.Time) { nd.mem.Poke(0x120, []byte{7}) })
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Cpu0: LL c0 (reservation set at c1, seen c4), Compute (10)
		// c4..c13, SC issued c14. Cpu1: Compute (3) c0..c2, store issued
		// c3, at the target c4: it clears Cpu0's reservation, so the SC
		// fails (target c15, answered c17, seen c18). Second LL c18
		// (reserved c19, seen c22), Compute c22..c31, SC issued c32, at
		// the target c33; the DMA stand-in wrote the line at c30, after
		// the reservation: it fails too.
		Expect(ok1).To(BeFalse())
		Expect(ok2).To(BeFalse())
		d, _ := nd.mem.store.Bytes(0x100, 12)
		Expect(d).To(Equal([]byte{0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}))
	})

	It("builds fetch-and-add from an LL/SC retry loop that stays atomic under contention", func() {
		nd := newNode(2, cpu.OSCosts{}, 2)
		var olds [2][]uint32
		for i, c := range nd.cpus {
			c.Run(cpu.Go(func(p *cpu.Proc) {
				for range 5 {
					olds[i] = append(olds[i], p.FetchAdd(0x200, 1))
				}
			}))
		}
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		d, _ := nd.mem.store.Bytes(0x200, 4)
		Expect(d[0]).To(Equal(byte(10)))
		all := append(append([]uint32{}, olds[0]...), olds[1]...)
		Expect(all).To(ConsistOf(uint32(0), uint32(1), uint32(2), uint32(3), uint32(4), uint32(5), uint32(6), uint32(7), uint32(8), uint32(9)))
	})
})

var _ = Describe("costed code steps", func() {
	It("issues the accesses, spends the other instructions at the CPI and counts the instructions", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		c := nd.cpus[0]
		Expect(nd.mem.store.Write(0x2000, []byte{1, 2, 3, 4})).To(Succeed())
		var reads [][]byte
		c.Run(cpu.Go(func(p *cpu.Proc) {
			reads = p.Step(cpu.Step{Label: "Device Interrupt Handler", Instrs: 21, Accesses: []cpu.Access{
				{Addr: 0x2000, Len: 4, IO: true},
				{Addr: 0x3000, Data: []byte{5, 6, 7, 8}, Write: true},
			}})
		}))
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// CPI 3/2: 21-2 = 19 other instructions cost ceil(19*3/2) = 29
		// cycles. The I/O load issues c0, at the target c1, answered c3,
		// seen c4; the store issues and retires c4 (posted); the compute
		// c5..c33; the step ends at c34: 4+1+29 = 34 cycles.
		Expect(reads).To(Equal([][]byte{{1, 2, 3, 4}}))
		Expect(c.Instructions()).To(Equal(uint64(21)))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			`340000 34 Cpu0 cpu.step step="Device Interrupt Handler" instrs=21 mem=1 io=1 cycles=34`,
		}))
		d, _ := nd.mem.store.Bytes(0x3000, 4)
		Expect(d).To(Equal([]byte{5, 6, 7, 8}))
	})

	It("counts an access standing for several instructions once, and issues a burst store as one transaction", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		c := nd.cpus[0]
		Expect(nd.mem.store.Write(0x2000, []byte{1, 2, 3, 4, 5, 6, 7, 8})).To(Succeed())
		var reads [][]byte
		c.Run(cpu.Go(func(p *cpu.Proc) {
			reads = p.Step(cpu.Step{Label: "cell", Instrs: 30, Accesses: []cpu.Access{
				{Addr: 0x2000, Len: 8, IO: true, Instrs: 14},
				{Addr: 0x3000, Data: make([]byte, 16), Write: true, Burst: true, Instrs: 4},
			}})
		}))
		_, err := nd.e.Run()
		// No "spans 2 bus beats" report: the 16-byte store is one burst.
		Expect(err).NotTo(HaveOccurred())
		// The load stands for 14 instructions and the store for 4: 30-18 =
		// 12 other instructions at CPI 3/2 cost 18 cycles. The load issues
		// c0, answered c3, seen c4; the store's first 8-byte beat enters the
		// write buffer at c4, its second at c5 (one beat a cycle), where the
		// posted store retires; the compute c6..c23; the step ends at c24:
		// 4+2+18 = 24 cycles.
		Expect(reads).To(Equal([][]byte{{1, 2, 3, 4, 5, 6, 7, 8}}))
		Expect(c.Instructions()).To(Equal(uint64(30)))
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			`240000 24 Cpu0 cpu.step step=cell instrs=30 mem=4 io=14 cycles=24`,
		}))
	})

	It("reports a step whose accesses stand for more instructions than it has", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		nd.cpus[0].Run(cpu.Op{Kind: cpu.CodeStep, Step: &cpu.Step{Label: "bad", Instrs: 10, Accesses: []cpu.Access{{Addr: 0, Len: 8, Instrs: 14}}}})
		_, err := nd.e.Run()
		Expect(err).To(MatchError(ContainSubstring(`step "bad": 10 instructions cannot hold its 14 accesses`)))
	})

	It("reports a step whose instructions cannot hold its accesses", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		nd.cpus[0].Run(cpu.Op{Kind: cpu.CodeStep, Step: &cpu.Step{Label: "bad", Instrs: 0, Accesses: []cpu.Access{{Addr: 0, Len: 4}}}})
		_, err := nd.e.Run()
		Expect(err).To(MatchError(ContainSubstring(`step "bad": 0 instructions cannot hold its 1 accesses`)))
	})
})
