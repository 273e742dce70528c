package cam_test

import (
	"github.com/nisim/nisim/rtl/cam"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Calls are driven at explicit times, 10 ns apart, as an owning component
// would make them on successive 100 MHz edges.
const ns10 = clock.Time(10_000)

var _ = Describe("CAM", func() {
	var e *env.Env

	BeforeEach(func() { e = vtest.NewEnv(vtest.Options{}) })

	build := func(b cam.Builder[uint64, int]) *cam.CAM[uint64, int] {
		c, err := b.WithEnv(e).Build("Test.Cam")
		Expect(err).NotTo(HaveOccurred())
		return c
	}

	// fill allocates keys 100, 101, ... with values 0, 1, ... at times
	// 10, 20, ... ns, one per slot.
	fill := func(c *cam.CAM[uint64, int]) {
		for i := range c.Cap() {
			r := c.Allocate(clock.Time(i+1)*ns10, uint64(100+i), i)
			Expect(r).To(Equal(cam.Result[uint64, int]{Slot: i, OK: true}))
		}
		Expect(c.Full()).To(BeTrue())
	}

	It("counts hits and misses; Peek counts nothing", func() {
		c := build(cam.MakeBuilder[uint64, int]())
		Expect(c.Cap()).To(Equal(16))
		Expect(c.Allocate(ns10, 0x40, 7).OK).To(BeTrue())
		v, ok := c.Lookup(2*ns10, 0x40)
		Expect(ok).To(BeTrue())
		Expect(v).To(Equal(7))
		_, ok = c.Lookup(3*ns10, 0x44)
		Expect(ok).To(BeFalse())
		Expect(c.Update(4*ns10, 0x40, 8)).To(BeTrue())
		Expect(c.Update(4*ns10, 0x48, 1)).To(BeFalse())
		v, ok = c.Peek(0x40)
		Expect(ok).To(BeTrue())
		Expect(v).To(Equal(8))
		_, ok = c.Peek(0x44)
		Expect(ok).To(BeFalse())
		Expect(c.Stats()).To(Equal(cam.Stats{Lookups: 2, Hits: 1, Misses: 1, Allocs: 1, MaxOccupancy: 1}))
	})

	It("allocates the lowest free slot and lists entries in slot order", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithEntries(4))
		for i, k := range []uint64{9, 3, 7} {
			Expect(c.Allocate(clock.Time(i+1)*ns10, k, i).Slot).To(Equal(i))
		}
		Expect(c.Free(4*ns10, 3)).To(BeTrue())
		Expect(c.Free(4*ns10, 3)).To(BeFalse())
		Expect(c.Len()).To(Equal(2))
		// Slot 1 is free again and lower than slot 3.
		Expect(c.Allocate(5*ns10, 5, 50).Slot).To(Equal(1))
		Expect(c.Allocate(6*ns10, 6, 60).Slot).To(Equal(3))
		Expect(c.Entries()).To(Equal([]cam.Entry[uint64, int]{
			{Slot: 0, Key: 9, Val: 0}, {Slot: 1, Key: 5, Val: 50},
			{Slot: 2, Key: 7, Val: 2}, {Slot: 3, Key: 6, Val: 60},
		}))
		Expect(c.Stats()).To(Equal(cam.Stats{Allocs: 5, Frees: 1, MaxOccupancy: 4}))
	})

	It("uses a lowest-free search that works past 64 entries", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithEntries(130))
		fill(c)
		Expect(c.Free(200*ns10, 100+129)).To(BeTrue())
		Expect(c.Free(200*ns10, 100+70)).To(BeTrue())
		Expect(c.Allocate(201*ns10, 1, 1).Slot).To(Equal(70))
		Expect(c.Allocate(202*ns10, 2, 2).Slot).To(Equal(129))
	})

	It("stalls when full under the Stall policy and succeeds after a Free", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithEntries(2))
		fill(c)
		// The owner retries on three successive cycles.
		for t := 3 * ns10; t <= 5*ns10; t += ns10 {
			Expect(c.Allocate(t, 0x80, 1)).To(Equal(cam.Result[uint64, int]{Slot: -1}))
		}
		Expect(c.Stats().FullStalls).To(Equal(uint64(3)))
		Expect(c.Free(6*ns10, 100)).To(BeTrue())
		Expect(c.Full()).To(BeFalse())
		Expect(c.Allocate(7*ns10, 0x80, 1)).To(Equal(cam.Result[uint64, int]{Slot: 0, OK: true}))
		Expect(c.Stats()).To(Equal(cam.Stats{Allocs: 3, Frees: 1, FullStalls: 3, MaxOccupancy: 2}))
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred()) // a stall is not a violation; no watchdog
	})

	It("evicts the least recently used entry; a Lookup hit refreshes its age", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithEntries(3).WithPolicy(cam.EvictLRU))
		// Keys 100, 101, 102 are allocated in that order; the hit on 100
		// makes it the most recent, so 101 is now the least recently used.
		fill(c)
		_, ok := c.Lookup(4*ns10, 100)
		Expect(ok).To(BeTrue())
		_, ok = c.Lookup(4*ns10, 999) // a miss refreshes nothing
		Expect(ok).To(BeFalse())
		Expect(c.Update(4*ns10, 101, 11)).To(BeTrue()) // nor does an Update
		r := c.Allocate(5*ns10, 200, 20)
		Expect(r).To(Equal(cam.Result[uint64, int]{Slot: 1, OK: true, Evicted: true, EvictedKey: 101, EvictedVal: 11}))
		// Now 102 is the LRU, then 100, then 200.
		r = c.Allocate(6*ns10, 201, 21)
		Expect(r.Evicted).To(BeTrue())
		Expect(r.EvictedKey).To(Equal(uint64(102)))
		r = c.Allocate(7*ns10, 202, 22)
		Expect(r.EvictedKey).To(Equal(uint64(100)))
		Expect(c.Entries()).To(Equal([]cam.Entry[uint64, int]{
			{Slot: 0, Key: 202, Val: 22}, {Slot: 1, Key: 200, Val: 20}, {Slot: 2, Key: 201, Val: 21},
		}))
		_, ok = c.Peek(101)
		Expect(ok).To(BeFalse())
		st := c.Stats()
		Expect(st.Evictions).To(Equal(uint64(3)))
		Expect(st.Allocs).To(Equal(uint64(6)))
		Expect(st.FullStalls).To(BeZero())
	})

	It("evicts the oldest allocation under FIFO, whatever was looked up", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithEntries(3).WithPolicy(cam.EvictFIFO))
		fill(c)
		for _, k := range []uint64{100, 100, 101} {
			_, ok := c.Lookup(4*ns10, k)
			Expect(ok).To(BeTrue())
		}
		var evicted []uint64
		for i, k := range []uint64{200, 201, 202, 203} {
			r := c.Allocate(clock.Time(5+i)*ns10, k, 0)
			Expect(r.OK && r.Evicted).To(BeTrue())
			evicted = append(evicted, r.EvictedKey)
		}
		Expect(evicted).To(Equal([]uint64{100, 101, 102, 200}))
	})

	It("reports a duplicate allocation as a checker violation", func() {
		c := build(cam.MakeBuilder[uint64, int]())
		Expect(c.Allocate(ns10, 0x40, 1).OK).To(BeTrue())
		r := c.Allocate(2*ns10, 0x40, 2)
		Expect(r).To(Equal(cam.Result[uint64, int]{Slot: -1}))
		v, _ := c.Peek(0x40)
		Expect(v).To(Equal(1)) // unchanged
		Expect(c.Len()).To(Equal(1))
		Expect(e.Monitor.Violations()).To(HaveLen(1))
		Expect(e.Monitor.Violations()[0].Check).To(Equal("cam.duplicate"))
		Expect(e.Monitor.Violations()[0].Path).To(Equal("Test.Cam"))
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("cam.duplicate")))
	})

	It("reports leftover entries to the watchdog when enabled", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithEntries(8).WithWatchdog(true))
		for i := range 6 {
			c.Allocate(clock.Time(i+1)*ns10, uint64(0x100+i), i)
		}
		Expect(c.Free(7*ns10, 0x100)).To(BeTrue())
		Expect(c.Idle()).To(BeFalse())
		err := e.Monitor.Watchdog(0)
		Expect(err).To(MatchError(ContainSubstring("Test.Cam: 5/8 entries: slot 1 key 257 (allocated 20ns")))
		Expect(err).To(MatchError(ContainSubstring("... and 1 more")))
	})

	It("passes the watchdog once its entries are freed", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithWatchdog(true))
		c.Allocate(ns10, 1, 1)
		c.Free(2*ns10, 1)
		Expect(c.Idle()).To(BeTrue())
		Expect(c.State()).To(Equal("empty"))
		Expect(e.Monitor.Watchdog(0)).To(Succeed())
	})

	It("keeps leftover entries out of the watchdog when disabled", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithPolicy(cam.EvictLRU))
		c.Allocate(ns10, 1, 1)
		Expect(c.Idle()).To(BeFalse())
		Expect(e.Monitor.Watchdog(0)).To(Succeed())
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
	})

	It("drives the occupancy and full signals", func() {
		c := build(cam.MakeBuilder[uint64, int]().WithEntries(2).WithPolicy(cam.EvictFIFO))
		occ, full := e.Waves.Lookup("test.cam.occupancy"), e.Waves.Lookup("test.cam.full")
		Expect(occ.Width()).To(Equal(2)) // holds 0..2
		Expect(full.Width()).To(Equal(1))
		c.Allocate(ns10, 1, 1)
		Expect(occ.Value()).To(Equal(uint64(1)))
		Expect(full.Value()).To(Equal(uint64(0)))
		c.Allocate(2*ns10, 2, 2)
		Expect(occ.Value()).To(Equal(uint64(2)))
		Expect(full.Value()).To(Equal(uint64(1)))
		c.Allocate(3*ns10, 3, 3) // evicts: still full
		Expect(occ.Value()).To(Equal(uint64(2)))
		c.Free(4*ns10, 3)
		Expect(occ.Value()).To(Equal(uint64(1)))
		Expect(full.Value()).To(Equal(uint64(0)))
		c.Free(5*ns10, 2)
		Expect(occ.Value()).To(Equal(uint64(0)))
	})

	It("works without waveforms", func() {
		e = env.New(env.Options{})
		c := build(cam.MakeBuilder[uint64, int]().WithEntries(1))
		Expect(c.Allocate(ns10, 1, 1).OK).To(BeTrue())
		Expect(c.Full()).To(BeTrue())
	})

	It("names its policies", func() {
		Expect(cam.Stall.String()).To(Equal("stall"))
		Expect(cam.EvictLRU.String()).To(Equal("evict-lru"))
		Expect(cam.EvictFIFO.String()).To(Equal("evict-fifo"))
		Expect(cam.Policy(9).String()).To(Equal("policy(9)"))
	})

	DescribeTable("rejects impossible parameters",
		func(b cam.Builder[uint64, int], msg string) {
			_, err := b.WithEnv(e).Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
			Expect(err).To(MatchError(ContainSubstring("Bad: ")))
		},
		Entry("zero entries", cam.MakeBuilder[uint64, int]().WithEntries(0), "entries 0"),
		Entry("negative entries", cam.MakeBuilder[uint64, int]().WithEntries(-4), "entries -4"),
		Entry("unknown policy", cam.MakeBuilder[uint64, int]().WithPolicy(cam.Policy(7)), "policy(7) is unknown"),
	)

	It("rejects a builder without env", func() {
		_, err := cam.MakeBuilder[uint64, int]().Build("Bad")
		Expect(err).To(MatchError(ContainSubstring("no env")))
	})
})
