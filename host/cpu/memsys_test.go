package cpu_test

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// These specs run the sequential LL/SC programs on host/memsys's caches
// (the real reservation keeper) instead of the stand-in target: a 2-CPU
// node with a small memory bus, as memsys's own specs build it.
var _ = Describe("programs on host/memsys caches", func() {
	node := func(n int) (*memsys.Node, []*cpu.CPU, func() error) {
		e := vtest.NewEnv(vtest.Options{Clock: clk100, Trace: true})
		nd, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(n, clk100).
			WithBus(bus.Config{Name: "membus", Clock: clk100, WidthBytes: 8, ArbCycles: 1, AddrCycles: 1,
				ReadTurnaround: 1, MaxBurstBytes: 64}).
			WithMemory(1<<20, 0, 2, 0).Build("N")
		Expect(err).NotTo(HaveOccurred())
		var cpus []*cpu.CPU
		for i := range n {
			c, err := cpu.MakeBuilder().WithEnv(e).WithClock(clk100).Build(fmt.Sprintf("N.Cpu[%d]", i))
			Expect(err).NotTo(HaveOccurred())
			c.Attach(nd.Caches[i].Port())
			cpus = append(cpus, c)
		}
		return nd, cpus, func() error { _, err := e.Run(); return err }
	}

	It("keeps fetch-and-add atomic on two CPUs whose store-conditionals the caches fail", func() {
		nd, cpus, run := node(2)
		fails := 0
		for _, c := range cpus {
			c.Run(cpu.Go(func(p *cpu.Proc) {
				for range 8 {
					for {
						old := p.LoadLocked32(0x200)
						p.Compute(3) // the add, and a window for the other CPU
						if p.StoreConditional32(0x200, old+1) {
							break
						}
						fails++
					}
				}
			}))
		}
		Expect(run()).To(Succeed())
		v, err := nd.Memory.Storage().Bytes(0x200, 4)
		Expect(err).NotTo(HaveOccurred())
		// The value may still sit dirty in a cache: read it through one.
		var got uint32
		cpus[0].Run(cpu.Go(func(p *cpu.Proc) { got = p.Load32(0x200) }))
		Expect(run()).To(Succeed())
		Expect(got).To(Equal(uint32(16)), "memory had % x", v)
		Expect(fails).To(BeNumerically(">", 0), "the two CPUs never broke each other's reservation: the spec tests nothing")
	})

	It("runs the lock example through the caches", func() {
		_, cpus, run := node(2)
		var counter uint32
		for _, c := range cpus {
			c.Run(cpu.Go(func(p *cpu.Proc) {
				for range 3 {
					Acquire(p, 0x100)
					v := p.Load32(0x300)
					p.Compute(20)
					p.Store32(0x300, v+1)
					Release(p, 0x100)
				}
			}))
		}
		Expect(run()).To(Succeed())
		cpus[1].Run(cpu.Go(func(p *cpu.Proc) { counter = p.Load32(0x300) }))
		Expect(run()).To(Succeed())
		Expect(counter).To(Equal(uint32(6)))
	})

	It("charges a costed step's memory access a cache hit the second time", func() {
		_, cpus, run := node(1)
		c := cpus[0]
		step := cpu.Step{Label: "touch", Instrs: 4, Accesses: []cpu.Access{{Addr: 0x400, Len: 8}}}
		var first, second clock.Time
		c.Run(cpu.Go(func(p *cpu.Proc) {
			t0 := p.Now()
			p.Step(step)
			first = p.Now() - t0
			t0 = p.Now()
			p.Step(step)
			second = p.Now() - t0
		}))
		Expect(run()).To(Succeed())
		// The first step misses (a line fill over the bus), the second
		// hits; both spend the same 3 other instructions at CPI 1.
		Expect(second).To(BeNumerically("<", first))
		Expect(c.Instructions()).To(Equal(uint64(8)))
	})
})
