package clock_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/sarchlab/akita/v3/sim"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Clock", func() {
	pci, _ := clock.Ratio(100_000_000, 3) // 33.33 MHz: a 30 ns period exactly
	lanai9 := clock.MHz(133)              // 7518.796... ps: not a whole picosecond

	DescribeTable("TimeOf puts edge n at ceil(n * period)",
		func(c clock.Clock, n clock.Cycle, want clock.Time) {
			Expect(c.TimeOf(n)).To(Equal(want))
		},
		Entry("PCI edge 0", pci, clock.Cycle(0), clock.Time(0)),
		Entry("PCI edge 1", pci, clock.Cycle(1), clock.Time(30_000)),
		Entry("PCI edge 1e9", pci, clock.Cycle(1_000_000_000), clock.Time(30_000_000_000_000)),
		// 1e12/133e6 = 7518.796992...: edge 1 at 7519 ps, edge 2 at ceil(15037.59) = 15038 ps
		Entry("133 MHz edge 1", lanai9, clock.Cycle(1), clock.Time(7519)),
		Entry("133 MHz edge 2", lanai9, clock.Cycle(2), clock.Time(15038)),
		// edge 133 is exactly 1 us
		Entry("133 MHz edge 133", lanai9, clock.Cycle(133), clock.Time(1_000_000)),
		Entry("133 MHz edge 133e6 (1 s)", lanai9, clock.Cycle(133_000_000), clock.Second),
	)

	DescribeTable("CycleAt is the last edge at or before t",
		func(c clock.Clock, t clock.Time, want clock.Cycle) {
			Expect(c.CycleAt(t)).To(Equal(want))
		},
		Entry("before 0", pci, clock.Time(-5), clock.Cycle(0)),
		Entry("on edge 2", pci, clock.Time(60_000), clock.Cycle(2)),
		Entry("1 ps before edge 2", pci, clock.Time(59_999), clock.Cycle(1)),
		Entry("133 MHz 1 ps before edge 1", lanai9, clock.Time(7518), clock.Cycle(0)),
		Entry("133 MHz on edge 1", lanai9, clock.Time(7519), clock.Cycle(1)),
		Entry("133 MHz on edge 2", lanai9, clock.Time(15038), clock.Cycle(2)),
		Entry("133 MHz 1 ps before edge 2", lanai9, clock.Time(15037), clock.Cycle(1)),
	)

	It("round-trips every edge of a non-integer-period clock", func() {
		for n := clock.Cycle(0); n < 200_000; n++ {
			t := lanai9.TimeOf(n)
			Expect(lanai9.CycleAt(t)).To(Equal(n))
			Expect(lanai9.CycleAt(t - 1)).To(Equal(max(n, 1) - 1))
			Expect(lanai9.NextEdge(t)).To(Equal(lanai9.TimeOf(n + 1)))
		}
	})

	It("answers next-edge and at-or-after queries", func() {
		Expect(pci.NextEdge(0)).To(Equal(clock.Time(30_000)))
		Expect(pci.NextEdge(29_999)).To(Equal(clock.Time(30_000)))
		Expect(pci.NextEdge(30_000)).To(Equal(clock.Time(60_000)))
		Expect(pci.EdgeAtOrAfter(30_000)).To(Equal(clock.Time(30_000)))
		Expect(pci.EdgeAtOrAfter(30_001)).To(Equal(clock.Time(60_000)))
		Expect(pci.IsEdge(90_000)).To(BeTrue())
		Expect(pci.IsEdge(90_001)).To(BeFalse())
		Expect(pci.Cycles(61_000)).To(Equal(clock.Cycle(3)))
		Expect(pci.Cycles(60_000)).To(Equal(clock.Cycle(2)))
	})

	It("shares edges between clocks whose periods are multiples", func() {
		// A 100 MHz clock and the 33.33 MHz PCI clock meet every 30 ns.
		host := clock.MHz(100)
		for n := clock.Cycle(0); n < 1000; n++ {
			Expect(host.TimeOf(3 * n)).To(Equal(pci.TimeOf(n)))
		}
	})

	DescribeTable("ParseFreq",
		func(s string, num, den uint64) {
			c, err := clock.ParseFreq(s)
			Expect(err).NotTo(HaveOccurred())
			n, d := c.Hz()
			Expect([]uint64{n, d}).To(Equal([]uint64{num, den}))
		},
		Entry("MHz", "33MHz", uint64(33_000_000), uint64(1)),
		Entry("decimal MHz with space", "12.5 MHz", uint64(12_500_000), uint64(1)),
		Entry("ratio", "100/3 MHz", uint64(100_000_000), uint64(3)),
		Entry("GHz", "1.28GHz", uint64(1_280_000_000), uint64(1)),
		Entry("plain Hz", "8333333", uint64(8_333_333), uint64(1)),
	)

	DescribeTable("ParseFreq rejects bad input",
		func(s string) {
			_, err := clock.ParseFreq(s)
			Expect(err).To(HaveOccurred())
		},
		Entry("empty", ""),
		Entry("zero", "0MHz"),
		Entry("negative", "-5MHz"),
		Entry("word", "fast"),
		Entry("above 1 THz", "2THz"),
		Entry("above 1 THz in GHz", "1001GHz"),
	)

	It("converts to and from Akita time exactly", func() {
		for _, t := range []clock.Time{0, 1, 7519, 30_000, 123_456_789_012, 3 * clock.Second} {
			Expect(clock.FromSim(clock.ToSim(t))).To(Equal(t))
		}
		Expect(clock.FromSim(sim.VTimeInSec(3e-9))).To(Equal(clock.Time(3000)))
	})

	It("formats times exactly", func() {
		Expect(clock.Time(30_000).String()).To(Equal("30ns"))
		Expect(clock.Time(7519).String()).To(Equal("7519ps"))
		Expect(clock.Time(1_500_000).String()).To(Equal("1500ns"))
		Expect(clock.Time(2 * clock.Microsecond).String()).To(Equal("2us"))
	})
})

// ticker counts its ticks and keeps going for a fixed number of them.
type ticker struct {
	*clock.Ticking
	times []clock.Time
	left  int
}

func (t *ticker) Tick(now clock.Time) bool {
	t.times = append(t.times, now)
	t.left--
	return t.left > 0
}

var _ = Describe("Ticking", func() {
	It("ticks on exact edges and sleeps when it makes no progress", func() {
		engine := sim.NewSerialEngine()
		pci, _ := clock.Ratio(100_000_000, 3)
		t := &ticker{left: 3}
		t.Ticking = clock.NewTicking("T", engine, pci, t)
		t.Start()
		Expect(engine.Run()).To(Succeed())
		Expect(t.times).To(Equal([]clock.Time{0, 30_000, 60_000}))

		// A wake at 61 ns runs the next edge, 90 ns; two wakes for the same
		// edge give one tick.
		t.left = 1
		t.Wake(61_000)
		t.Wake(75_000)
		Expect(engine.Run()).To(Succeed())
		Expect(t.times).To(Equal([]clock.Time{0, 30_000, 60_000, 90_000}))
		Expect(t.Ticks()).To(Equal(uint64(4)))
	})

	It("wakes at a future edge for timers", func() {
		engine := sim.NewSerialEngine()
		t := &ticker{left: 1}
		t.Ticking = clock.NewTicking("T", engine, clock.MHz(100), t)
		t.WakeAt(45_000) // not an edge: the next one is at 50 ns
		t.WakeAt(50_000) // same edge: no second tick
		Expect(engine.Run()).To(Succeed())
		Expect(t.times).To(Equal([]clock.Time{50_000}))
	})
})
