package cpu_test

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/google/go-cmp/cmp"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func le(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

var _ = Describe("sequential programs", func() {
	cfg := bus.PCI32()

	// pciNode is a 100 MHz processor and a memory on a PCI bus (the
	// setup of the CPU specs), with an interrupt at bus cycle 9.
	pciNode := func() (*env.Env, *cpu.CPU) {
		e := vtest.NewEnv(vtest.Options{Clock: cfg.Clock, Trace: true})
		b, err := bus.MakeBuilder().WithEnv(e).WithConfig(cfg).WithMasterChannelDepth(2).Build("Bus")
		Expect(err).NotTo(HaveOccurred())
		m, err := mem.MakeBuilder().WithEnv(e).WithClock(cfg.Clock).WithLatency(2).
			WithBytesPerCycle(4).WithPortWidth(4).Build("Mem")
		Expect(err).NotTo(HaveOccurred())
		Expect(b.AddTarget("Mem", 0, 1<<20, m.Port(0))).To(Succeed())
		c, err := cpu.MakeBuilder().WithEnv(e).WithClock(clock.MHz(100)).
			WithOSCosts(cpu.OSCosts{InterruptEntry: 4, InterruptReturn: 2}).Build("Cpu")
		Expect(err).NotTo(HaveOccurred())
		ch, err := b.AddMaster("Cpu")
		Expect(err).NotTo(HaveOccurred())
		c.Attach(ch)
		c.SetInterruptHandler(func(clock.Time) []cpu.Op {
			return []cpu.Op{{Kind: cpu.Load, Addr: 0x80, Len: 4, Label: "isr-status"}, {Kind: cpu.Compute, Cycles: 7, Label: "isr"}}
		})
		vtest.AtCycle(e, "Irq", cfg.Clock, 9, c.Interrupt)
		return e, c
	}

	It("gives the same trace as the equivalent Op list with continuations", func() {
		// The program: store 5, read it back, compute that many cycles,
		// store three times it, fence, read that and, if it is 15, compute
		// two more cycles.
		e1, c1 := pciNode()
		c1.Run(cpu.Go(func(p *cpu.Proc) {
			p.As("w0").Store32(0x40, 5)
			v := p.As("r0").Load32(0x40)
			p.As("c").Compute(int(v))
			p.As("w1").Store32(0x44, 3*v)
			p.As("f").Fence()
			if p.As("r1").Load32(0x44) == 15 {
				p.As("hit").Compute(2)
			}
		}))
		_, err := e1.Run()
		Expect(err).NotTo(HaveOccurred())

		e2, c2 := pciNode()
		c2.Run(cpu.Op{Kind: cpu.Store, Addr: 0x40, Data: le(5), Label: "w0"},
			cpu.Op{Kind: cpu.Load, Addr: 0x40, Len: 4, Label: "r0", Done: func(_ clock.Time, d []byte) {
				v := binary.LittleEndian.Uint32(d)
				c2.Insert(cpu.Op{Kind: cpu.Compute, Cycles: int(v), Label: "c"},
					cpu.Op{Kind: cpu.Store, Addr: 0x44, Data: le(3 * v), Label: "w1"},
					cpu.Op{Kind: cpu.Fence, Label: "f"},
					cpu.Op{Kind: cpu.Load, Addr: 0x44, Len: 4, Label: "r1", Done: func(_ clock.Time, d []byte) {
						if binary.LittleEndian.Uint32(d) == 15 {
							c2.Insert(cpu.Op{Kind: cpu.Compute, Cycles: 2, Label: "hit"})
						}
					}})
			}})
		_, err = e2.Run()
		Expect(err).NotTo(HaveOccurred())

		t1, t2 := traceText(e1), traceText(e2)
		Expect(cmp.Diff(t1, t2)).To(BeEmpty())
		// Every operation and the handler's show up, with the bus and
		// memory records: the comparison is not between two empty traces.
		Expect(lines(e1, "cpu.")).To(HaveLen(10))
		Expect(t1).To(ContainSubstring("cpu.retire op=hit"))
		Expect(t1).To(ContainSubstring("cpu.irq"))
		Expect(t1).To(ContainSubstring("mem.write"))
	})

	It("runs the same program twice to byte-identical traces, whatever other goroutines do", func() {
		run := func(noise bool) string {
			e := vtest.NewEnv(vtest.Options{Clock: clk100, Trace: true})
			nd := buildNode(e, 3, cpu.OSCosts{InterruptEntry: 2, TrapEntry: 3, TrapReturn: 2, FaultEntry: 5, Mprotect: 7}, 2)
			pt, err := cpu.NewPageTable(256, cpu.PermReadWrite)
			Expect(err).NotTo(HaveOccurred())
			pt.Protect(0x1000, 256, cpu.PermNone)
			for i, c := range nd.cpus {
				c.SetPageTable(pt)
				c.SetFaultHandler(cpu.Sequential(func(p *cpu.Proc, f *cpu.Frame) {
					p.As("fault-fix").Mprotect(f.Addr, 1, cpu.PermReadWrite)
				}))
				c.SetTrapHandler(1, cpu.Sequential(func(p *cpu.Proc, f *cpu.Frame) {
					f.Status = uint64(p.As("k-add").FetchAdd(0x300, uint32(f.Args[0])))
				}))
				c.SetInterruptProgram(func(p *cpu.Proc) { p.As("isr").Store32(0x400+uint64(4*i), uint32(p.Now())) })
				c.Run(cpu.Go(func(p *cpu.Proc) {
					for k := range 6 {
						p.As("add").FetchAdd(0x200, 1)
						p.As("trap").Trap(1, uint64(k))
						p.As("touch").Store32(0x1000+uint64(8*i), uint32(k))
						p.As("think").Compute(3 + i)
					}
				}))
				vtest.AtCycle(e, "Irq", clk100, clock.Cycle(7+5*i), c.Interrupt)
			}
			var wg sync.WaitGroup
			var stop atomic.Bool
			if noise {
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for !stop.Load() {
							runtime.Gosched()
						}
					}()
				}
			}
			_, err = e.Run()
			stop.Store(true)
			wg.Wait()
			Expect(err).NotTo(HaveOccurred())
			return traceText(e)
		}
		a, b := run(false), run(true)
		Expect(a).To(Equal(b))
		Expect(a).To(ContainSubstring("cpu.fault"))
		Expect(a).To(ContainSubstring("cpu.trap"))
		Expect(a).To(ContainSubstring("cpu.irq"))
	})

	It("releases a program that never finishes when the processor is closed", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		c := nd.cpus[0]
		reached := false
		c.Run(cpu.Go(func(p *cpu.Proc) {
			p.WaitUntil(func() bool { return false })
			reached = true
		}))
		_, err := nd.e.Run()
		Expect(err).To(MatchError(ContainSubstring("Cpu0"))) // the watchdog sees it stuck
		Expect(c.Programs()).To(Equal(1))
		c.Close()
		Expect(c.Programs()).To(Equal(0))
		Expect(reached).To(BeFalse())
	})

	It("runs a program that a program issues in place, to its end", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		c := nd.cpus[0]
		sub := func(p *cpu.Proc) {
			p.As("sub1").Compute(2)
			p.As("sub2").Compute(3)
		}
		c.Run(cpu.Go(func(p *cpu.Proc) {
			p.As("a").Compute(2)
			p.Do(cpu.Go(sub))
			p.As("b").Compute(2)
		}))
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// a (2) c0..c1, sub1 (2) c2..c3, sub2 (3) c4..c6, b (2) c7..c8:
		// 2+2+3+2 = 9 cycles, c0..c8.
		Expect(lines(nd.e, "cpu.")).To(Equal([]string{
			"10000 1 Cpu0 cpu.retire op=a cycles=1",
			"30000 3 Cpu0 cpu.retire op=sub1 cycles=1",
			"60000 6 Cpu0 cpu.retire op=sub2 cycles=2",
			"80000 8 Cpu0 cpu.retire op=b cycles=1",
		}))
	})

	It("runs operations a program's callback inserts before the program resumes", func() {
		nd := newNode(1, cpu.OSCosts{}, 2)
		c := nd.cpus[0]
		var order []string
		c.Run(cpu.Go(func(p *cpu.Proc) {
			p.Do(cpu.Op{Kind: cpu.Compute, Cycles: 2, Done: func(clock.Time, []byte) {
				order = append(order, "done")
				c.Insert(cpu.Op{Kind: cpu.Call, Fn: func(clock.Time) bool { order = append(order, "inserted"); return true }})
			}})
			order = append(order, "resumed")
		}))
		_, err := nd.e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(order).To(Equal([]string{"done", "inserted", "resumed"}))
	})
})
