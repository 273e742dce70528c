package atmtb_test

import (
	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/atmtb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// build builds the default cluster, changed by mod.
func build(e *env.Env, mod func(c *atmtb.Config)) *atmtb.Cluster {
	GinkgoHelper()
	c := atmtb.DefaultConfig()
	if mod != nil {
		mod(&c)
	}
	cl, err := atmtb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	return cl
}

var _ = Describe("Cluster", func() {
	It("joins two DECstations by one direct link (section 2.3: «connected directly without a switch»)", func() {
		e := env.New(env.Options{Seed: 1})
		cl := build(e, nil)
		defer cl.Close()
		Expect(cl.Nodes).To(HaveLen(2))
		Expect(cl.Star).To(BeNil())
		Expect(cl.Direct).NotTo(BeNil())
		Expect(cl.Direct.Name()).To(Equal("ATM.Link"))
		for i, n := range cl.Nodes {
			Expect(n.ID).To(Equal(i))
			Expect(n.CPUs).To(HaveLen(1))
			Expect(n.DMA).To(BeNil())
			Expect(n.PCI.Name()).To(HaveSuffix(".TC"))
			Expect(n.Kernel).NotTo(BeNil())
			Expect(n.Board).NotTo(BeNil())
			// Every page of memory is write-through (design F6).
			Expect(n.Caches()[0].PolicyAt(0x1000).String()).To(Equal("write-through"))
		}
	})

	It("puts the ASX-100 between two to four nodes, one VC per ordered pair routed", func() {
		for _, nodes := range []int{2, 3, 4} {
			e := env.New(env.Options{Seed: 1})
			cl := build(e, func(c *atmtb.Config) { c.Nodes, c.Switched = nodes, true })
			Expect(cl.Nodes).To(HaveLen(nodes))
			Expect(cl.Direct).To(BeNil())
			Expect(cl.Star.Switch.Ports()).To(Equal(nodes))
			Expect(cl.Star.Links).To(HaveLen(nodes))
			out, _, ok := cl.Star.Switch.Route(0, rma.VCI(0, nodes-1))
			Expect(ok).To(BeTrue())
			Expect(out).To(Equal(nodes - 1))
			cl.Close()
		}
	})

	It("refuses bad parameters with an error naming them", func() {
		for _, x := range []struct {
			mod  func(c *atmtb.Config)
			want string
		}{
			{func(c *atmtb.Config) { c.Nodes = 1 }, "Nodes 1"},
			{func(c *atmtb.Config) { c.Nodes = 5; c.Switched = true }, "Nodes 5"},
			{func(c *atmtb.Config) { c.Nodes = 3 }, "Nodes 3 must be 2 without the switch"},
			{func(c *atmtb.Config) { c.MemCycles = 0 }, "MemCycles 0"},
			{func(c *atmtb.Config) { c.BoardBase = 0x1000 }, "BoardBase"},
			{func(c *atmtb.Config) { c.BoardBase = 0x1000_0100 }, "BoardBase"},
			{func(c *atmtb.Config) { c.KernelBase = 0 }, "KernelBase"},
			{func(c *atmtb.Config) { c.Board.RxCells = 0 }, "RxCells"},
			{func(c *atmtb.Config) { c.Link.BytesPerCycle = 0 }, "Link"},
			{func(c *atmtb.Config) { c.Board.Clock = c.Link.Clock }, "Board.Clock"},
		} {
			c := atmtb.DefaultConfig()
			x.mod(&c)
			_, err := atmtb.Build(env.New(env.Options{Seed: 1}), c)
			Expect(err).To(MatchError(ContainSubstring(x.want)), x.want)
		}
		_, err := atmtb.Build(nil, atmtb.DefaultConfig())
		Expect(err).To(MatchError(ContainSubstring("no env")))
		_ = fore.WindowBytes
	})
})

var _ = Describe("PIO costs on the real node", func() {
	It("measures a STATUS read, a 56-byte cell load and a cell burst store as the R3000 sees them", func() {
		e := env.New(env.Options{Seed: 1})
		pio, err := atmtb.MeasurePIO(e, atmtb.DefaultConfig())
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("STATUS %v, cell load %v (TC busy %d, data %d), cell store %v\n",
			pio.Status, pio.CellLoad, pio.CellLoadTCBusy, pio.CellLoadTCData, pio.CellStore)
		// Read off the bus records (bus.pio.read on N0.Bus and N0.TC) of
		// the same accesses, 40 ns cycles, each access issued in cycle c
		// (the program resumes in the cycle its next operation may begin).
		// A STATUS read reaches the memory bus 3 cycles after issue (2
		// channel registers, the cache lookup), holds it 11 cycles c+3..
		// c+13 (ARB, ADDR, 8 wait states while the TURBOchannel runs ARB,
		// ADDR, DECODE, DATA and the word crosses back, DATA), the cache
		// passes the word over its port at c+14 and the load retires when
		// the processor takes it: 3 + 11 + 1 = 15 cycles = 600 ns (design
		// F1's delayed read: 720 ns). The cell load: memory bus ARB c+3,
		// ADDR c+4, 8 wait states while the TC runs ARB c+7, ADDR, DECODE
		// and its 14 data cycles c+10..c+23 (AT-P5's 560 ns; TC busy 18
		// with its IDLE), the memory bus passing each word on 3 cycles
		// later (c+13..c+26: the bridge's 64-byte read buffer), the cache
		// forwarding each over its 4-byte port as it arrives (host/memsys
		// cut-through: c+14..c+27), the processor taking the 14th, Last,
		// at c+28: 28 cycles = 1.12 µs (store-and-forward, the whole cell
		// first, then 14 port beats c+27..c+40: 41 cycles, 1.64 µs; F2:
		// 2.28 µs). The burst store: the write buffer takes one word a
		// cycle, c..c+13, and the next operation begins at c+14 (one cycle
		// per instruction, the 14 sw's it stands for): 14 cycles = 560 ns.
		Expect(pio.Status).To(Equal(15 * 40 * clock.Nanosecond))
		Expect(pio.CellLoad).To(Equal(28 * 40 * clock.Nanosecond))
		Expect(pio.CellStore).To(Equal(14 * 40 * clock.Nanosecond))
		Expect(pio.CellLoadTCBusy).To(BeEquivalentTo(18))
		Expect(pio.CellLoadTCData).To(BeEquivalentTo(fore.CellWords))
	})
})

// us is a time in microseconds.
func us(t clock.Time) float64 { return float64(t) / float64(clock.Microsecond) }

var _ = Describe("Measurement drivers", func() {
	const rounds = 20 // 2 warm-up (atmtb.Warmup), 18 measured

	It("reproduce the figures the calibrated: comments quote (C1 11.74 µs, C2 30.00 µs, C3 93.00 µs)", func() {
		c := atmtb.DefaultConfig()
		raw, err := atmtb.MeasureRaw(env.New(env.Options{Seed: 1}), c, rounds)
		Expect(err).NotTo(HaveOccurred())
		wr, err := atmtb.MeasureWrite(env.New(env.Options{Seed: 1}), c, 40, rounds)
		Expect(err).NotTo(HaveOccurred())
		rpcs, err := atmtb.MeasureRPC(env.New(env.Options{Seed: 1}), c, 4, rounds)
		Expect(err).NotTo(HaveOccurred())
		Expect(raw.N).To(Equal(rounds - atmtb.Warmup(rounds)))
		// The model is deterministic (fore.TCA100's CellLatency 2,
		// DefaultConfig's MemCycles 18, rpc.Defaults' StubInstrs 268).
		// Every raw round is the same: 11.74 µs.
		Expect(raw.Mean).To(Equal(11740 * clock.Nanosecond))
		// The WRITE's rounds repeat every 3 from the fourth on (the
		// receiver's spin loop's phase against the arrival): 29.92,
		// 30.04, 30.04 µs, 30.00 µs a period, which atm-report's 1000
		// measured rounds print; these 18 average 29.993 µs.
		for i := 3; i+3 < len(wr.Rounds); i++ {
			Expect(wr.Rounds[i+3]).To(Equal(wr.Rounds[i]), "WRITE round %d", i+3)
		}
		Expect(wr.Rounds[3] + wr.Rounds[4] + wr.Rounds[5]).To(Equal(3 * 30000 * clock.Nanosecond))
		// The calls repeat every 8 from the second on: seven of 92.88
		// µs and one of 93.84, 93.00 µs a period, atm-report's Simple
		// row (99 calls: 93.00).
		var period clock.Time
		for i := 1; i < len(rpcs.Rounds); i++ {
			if i+8 < len(rpcs.Rounds) {
				Expect(rpcs.Rounds[i+8]).To(Equal(rpcs.Rounds[i]), "call %d", i+8)
			}
			if i <= 8 {
				period += rpcs.Rounds[i]
			}
		}
		Expect(period).To(Equal(8 * 93000 * clock.Nanosecond))
		// Each WRITE round is one interrupt at each end: the receiver's
		// handler drains one cell per interrupt.
		Expect(wr.IRQs).To(BeEquivalentTo(2 * rounds))
		Expect(wr.Drained).To(BeEquivalentTo(2 * rounds))
	})

	It("time the ASX-100 as its preset's 7.03 µs per cell (AT-P9) on top of the direct WRITE", func() {
		c := atmtb.DefaultConfig()
		direct, err := atmtb.MeasureWrite(env.New(env.Options{Seed: 1}), c, 40, rounds)
		Expect(err).NotTo(HaveOccurred())
		c.Switched = true
		sw, err := atmtb.MeasureWrite(env.New(env.Options{Seed: 1}), c, 40, rounds)
		Expect(err).NotTo(HaveOccurred())
		// switch/atm ASX100: 69 + 1 + 53 = 123 link cycles = 7.03 µs more
		// per cell; each half round trip carries one cell through it, and
		// the receiver's poll loop moves the arrival by up to one of its
		// iterations (4 cycles, 0.16 µs).
		Expect(us(sw.Mean - direct.Mean)).To(BeNumerically("~", 7.03, 0.16))
	})

	It("stream 4 KB by WRITEs and by one block transfer at nearly the same rate, one interrupt each (AT-P16)", func() {
		c := atmtb.DefaultConfig()
		w, err := atmtb.MeasureStream(env.New(env.Options{Seed: 1}), c, 4096, false)
		Expect(err).NotTo(HaveOccurred())
		b, err := atmtb.MeasureStream(env.New(env.Options{Seed: 1}), c, 4096, true)
		Expect(err).NotTo(HaveOccurred())
		// 4096 bytes = 102 cells of 40 bytes and one of 16.
		Expect(w.Cells).To(BeEquivalentTo(103))
		Expect(b.Cells).To(BeEquivalentTo(103))
		Expect(w.Drained).To(BeEquivalentTo(103))
		Expect(w.IRQs).To(BeEquivalentTo(1))
		Expect(b.IRQs).To(BeEquivalentTo(1))
		Expect(b.Mbps).To(BeNumerically("~", w.Mbps, 0.05*w.Mbps))
		Expect(w.LinkBusy).To(BeNumerically("<", 0.5))
		raw, err := atmtb.MeasureRawStream(env.New(env.Options{Seed: 1}), c, 103)
		Expect(err).NotTo(HaveOccurred())
		Expect(raw.Cells).To(BeEquivalentTo(103))
		Expect(raw.MBps).To(BeNumerically(">", w.MBps), "raw mode moves cells faster than the kernel")
	})

	It("count Table 1's instructions of one WRITE (209) and one READ (375) from cpu.step records", func() {
		c := atmtb.DefaultConfig()
		sum := func(ss []atmtb.StepStat) (n int) {
			for _, s := range ss {
				n += s.Instrs
			}
			return n
		}
		ws, err := atmtb.TraceSteps(c, 1, "write")
		Expect(err).NotTo(HaveOccurred())
		Expect(sum(ws)).To(Equal(209))
		Expect(ws).To(HaveLen(6))
		Expect(ws[3].Node).To(Equal(1), "the dispatcher runs on the destination")
		rs, err := atmtb.TraceSteps(c, 1, "read")
		Expect(err).NotTo(HaveOccurred())
		Expect(sum(rs)).To(Equal(375))
		Expect(rs).To(HaveLen(9))
		_, err = atmtb.TraceSteps(c, 1, "cas")
		Expect(err).To(MatchError(ContainSubstring(`op "cas"`)))
	})

	It("make a one-cell block transfer slower than a WRITE (section 2.3, pointer checking)", func() {
		c := atmtb.DefaultConfig()
		b, err := atmtb.MeasureBlock(env.New(env.Options{Seed: 1}), c, 40, rounds)
		Expect(err).NotTo(HaveOccurred())
		w, err := atmtb.MeasureWrite(env.New(env.Options{Seed: 1}), c, 40, rounds)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Mean).To(BeNumerically(">", w.Mean))
	})

	It("refuse bad arguments with an error naming them", func() {
		c := atmtb.DefaultConfig()
		e := func() *env.Env { return env.New(env.Options{Seed: 1}) }
		_, err := atmtb.MeasureRaw(e(), c, 1)
		Expect(err).To(MatchError(ContainSubstring("rounds 1")))
		_, err = atmtb.MeasureWrite(e(), c, 42, rounds)
		Expect(err).To(MatchError(ContainSubstring("bytes 42")))
		_, err = atmtb.MeasureStream(e(), c, 0, false)
		Expect(err).To(MatchError(ContainSubstring("bytes 0")))
		_, err = atmtb.MeasureRawStream(e(), c, 0)
		Expect(err).To(MatchError(ContainSubstring("cells 0")))
		_, err = atmtb.MeasureRPC(e(), c, 10_000, rounds)
		Expect(err).To(MatchError(ContainSubstring("RPC words 10000")))
		c.Nodes = 9
		_, err = atmtb.MeasureRead(e(), c, rounds)
		Expect(err).To(MatchError(ContainSubstring("Nodes 9")))
	})
})
