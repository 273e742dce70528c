package cpu_test

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("CPU", func() {
	var (
		e   *env.Env
		c   *cpu.CPU
		m   *mem.Memory
		cfg = bus.PCI32()
	)

	// setup puts a 100 MHz processor (3 cycles per 30 ns bus cycle) and a
	// memory on the bus clock on a PCI bus.
	setup := func(posted bool, wbuf, memLatency int) {
		e = vtest.NewEnv(vtest.Options{Clock: cfg.Clock, Trace: true})
		b, err := bus.MakeBuilder().WithEnv(e).WithConfig(cfg).WithMasterChannelDepth(wbuf).Build("Bus")
		Expect(err).NotTo(HaveOccurred())
		m, err = mem.MakeBuilder().WithEnv(e).WithClock(cfg.Clock).WithLatency(memLatency).
			WithBytesPerCycle(4).WithPortWidth(4).Build("Mem")
		Expect(err).NotTo(HaveOccurred())
		Expect(b.AddTarget("Mem", 0, 1<<20, m.Port(0))).To(Succeed())
		c, err = cpu.MakeBuilder().WithEnv(e).WithClock(clock.MHz(100)).WithPostedStores(posted).Build("Cpu")
		Expect(err).NotTo(HaveOccurred())
		ch, err := b.AddMaster("Cpu")
		Expect(err).NotTo(HaveOccurred())
		c.Attach(ch)
	}

	at := func(t *clock.Time) func(clock.Time, []byte) {
		return func(now clock.Time, _ []byte) { *t = now }
	}

	It("retires posted stores at the write buffer and stalls when it is full", func() {
		setup(true, 2, 1)
		var done [4]clock.Time
		var ops []cpu.Op
		for i := range 4 {
			ops = append(ops, cpu.Op{Kind: cpu.Store, Addr: uint64(4 * i), Data: []byte{byte(i), 0, 0, 0}, Done: at(&done[i])})
		}
		c.Run(ops...)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Stores 0 and 1 go into the 2-entry write buffer at 0 and 10 ns.
		// The bus takes store 0 at its data phase (bus cycle 4, 120 ns);
		// the freed slot is seen at the next processor edge, 130 ns, where
		// store 2 retires; store 1's data phase is 4 bus cycles later (240
		// ns), so store 3 retires at 250 ns.
		Expect(done).To(Equal([4]clock.Time{0, 10_000, 130_000, 250_000}))
	})

	It("begins the successor of a store that waited for the write buffer the cycle after the store was taken", func() {
		setup(true, 2, 1)
		var done [3]clock.Time
		var ops []cpu.Op
		for i := range 3 {
			ops = append(ops, cpu.Op{Kind: cpu.Store, Addr: uint64(4 * i), Data: []byte{byte(i), 0, 0, 0}, Done: at(&done[i])})
		}
		var mark clock.Time
		ops = append(ops, cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { mark = now; return true }})
		c.Run(ops...)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// As in the spec above: stores 0 and 1 go into the write buffer at
		// 0 and 10 ns; store 2 begins at 20 ns, finds it full, retries
		// each time it is woken and is taken at 130 ns (the slot store 0
		// freed at 120 ns, seen at the next processor edge). It executed
		// in that cycle, so the Call after it begins at 130+10 = 140 ns,
		// not in the cycle the store was taken.
		Expect(done).To(Equal([3]clock.Time{0, 10_000, 130_000}))
		Expect(mark).To(Equal(clock.Time(140_000)))
	})

	It("stalls on a load until its data returns", func() {
		setup(true, 2, 3)
		Expect(m.Storage().Write(0x40, []byte{0xde, 0xad, 0xbe, 0xef})).To(Succeed())
		var got []byte
		var t clock.Time
		c.Run(cpu.Op{Kind: cpu.Load, Addr: 0x40, Len: 4, Done: func(now clock.Time, d []byte) { got, t = d, now }})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]byte{0xde, 0xad, 0xbe, 0xef}))
		// Issued at 0; bus: ARB c1, ADDR c2 (request to memory), turnaround
		// c3; memory accepts at c3, data at c6 (latency 3); bus data phase
		// at c7 (210 ns); the processor sees it at its next edge, 220 ns.
		Expect(t).To(Equal(clock.Time(220_000)))
	})

	It("waits for acknowledgements of non-posted stores and at fences", func() {
		setup(false, 2, 2)
		var st, fence clock.Time
		c.Run(
			cpu.Op{Kind: cpu.Store, Addr: 0, Data: []byte{1, 2, 3, 4}, Done: at(&st)},
			cpu.Op{Kind: cpu.Fence, Done: at(&fence)},
		)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Data phase at c4; memory accepts at c5, writes at c7 and
		// acknowledges; the bus forwards at c8 (240 ns); the processor
		// retires the store at 250 ns and the fence in the same cycle.
		Expect(st).To(Equal(clock.Time(250_000)))
		Expect(fence).To(Equal(st))
	})

	It("spends compute cycles and waits on a condition", func() {
		setup(true, 2, 1)
		var t1, t2 clock.Time
		flag := false
		c.Run(
			cpu.Op{Kind: cpu.Compute, Cycles: 5, Done: at(&t1)},
			cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { flag = now >= 100_000; return flag }, Done: at(&t2)},
		)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(t1).To(Equal(clock.Time(40_000))) // cycles 0..4
		Expect(t2).To(Equal(clock.Time(100_000)))
	})

	It("reports a bus error on a load from an unmapped address", func() {
		setup(true, 2, 1)
		c.Run(cpu.Op{Kind: cpu.Load, Addr: 0x4000_0000, Len: 4})
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("bus.unmapped")))
		Expect(err).To(MatchError(ContainSubstring("cpu.buserror")))
	})
})
