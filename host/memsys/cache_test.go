package memsys_test

import (
	"encoding/binary"
	"fmt"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// clk is every clock of the test node (CPU, bus, memory), so cycle numbers
// line up across components.
var clk = clock.MHz(100)

// testBus is a small memory bus: 8-byte data path, one arbitration cycle
// on an idle bus, one address cycle, one turnaround cycle before read data,
// no decode wait and no idle cycle after a transaction.
func testBus() bus.Config {
	return bus.Config{Name: "membus", Clock: clk, WidthBytes: 8, ArbCycles: 1, AddrCycles: 1,
		DecodeCycles: 0, ReadTurnaround: 1, IdleCycles: 0, MaxBurstBytes: 64}
}

// testCache has 32-byte lines, 2 sets of 2 ways (so lines 0x0, 0x40 and
// 0x80 compete for set 0) and a 1-cycle hit.
func testCache() memsys.CacheConfig {
	c := memsys.DefaultCacheConfig()
	c.LineBytes, c.CapacityBytes, c.Ways, c.HitCycles = 32, 128, 2, 1
	return c
}

// Timing of a line fill on this node, used by the specs below. A fill read
// pushed by the cache at cycle p: the bus arbitrates at p+1, sends the
// address to the memory at p+2 and turns around at p+3; the memory takes
// the request at p+3 and, with its latency of 2, pushes the four 8-byte
// beats at p+5..p+8; the bus moves them at p+6..p+9 and the cache pops
// them at p+7..p+10. The cache answers in the cycle it pops the last beat.

// step is one access of a scripted CPU.
type step struct {
	At     clock.Cycle // earliest cycle to issue
	Op     mem.Op
	Addr   uint64
	Data   []byte // a store's data
	Len    int    // a load's length
	Atomic mem.Atomic
	Posted bool
}

// done is an answer the scripted CPU got.
type done struct {
	Cycle      clock.Cycle
	Data       string
	CondFailed bool
}

// cpuAgent issues the steps in order on the cache's port, one at a time: a
// load or non-posted store waits for its answer, a posted store moves on.
func cpuAgent(e *env.Env, name string, ch *mem.Channel, steps []step, got *[]done) {
	cpuAgentOn(e, clk, name, ch, steps, got)
}

// cpuAgentOn is cpuAgent on clock cclk.
func cpuAgentOn(e *env.Env, cclk clock.Clock, name string, ch *mem.Channel, steps []step, got *[]done) {
	i, waiting := 0, false
	var data []byte
	a := vtest.NewAgent(e, name, cclk, func(now clock.Time, c clock.Cycle) bool {
		if b, ok := ch.Up.Pop(now); ok {
			data = append(data, b.Data...)
			if b.Last {
				*got = append(*got, done{c, string(data), b.CondFailed})
				data, waiting = nil, false
			}
		}
		if !waiting && i < len(steps) && c >= steps[i].At && ch.Down.CanPush(now) {
			s := steps[i]
			req := &mem.Req{Op: s.Op, Addr: s.Addr, Len: s.Len, Atomic: s.Atomic, Posted: s.Posted,
				Class: "cpu", Master: name, Seq: uint64(i)}
			if s.Op == mem.Write {
				req.Len = len(s.Data)
				ch.Down.Push(now, mem.WriteBeats(req, s.Data, ch.Width)[0])
			} else {
				ch.Down.Push(now, mem.Beat{Req: req, First: true, Last: true})
			}
			waiting = s.Op == mem.Read || !s.Posted
			i++
		}
		return i < len(steps) || waiting
	})
	ch.ConnectMaster(a)
	a.Start()
}

// dmaAgent writes data at addr as a posted bus write pushed at cycle at,
// as an I/O device's DMA on the memory bus.
func dmaAgent(e *env.Env, b *bus.Bus, at clock.Cycle, addr uint64, data []byte) {
	ch, err := b.AddMaster("Dma")
	Expect(err).NotTo(HaveOccurred())
	sent := false
	a := vtest.NewAgent(e, "Dma", clk, func(now clock.Time, c clock.Cycle) bool {
		if !sent && c >= at && ch.Down.CanPush(now) {
			req := &mem.Req{Op: mem.Write, Addr: addr, Len: len(data), Posted: true, Class: "dma", Master: "Dma"}
			ch.Down.Push(now, mem.WriteBeats(req, data, ch.Width)[0])
			sent = true
		}
		return !sent
	})
	ch.ConnectMaster(a)
	a.Start()
}

// seen is a bus beat as an observer saw it.
type seen struct {
	Cycle  clock.Cycle
	Master string
	Class  string
	Addr   uint64
	Write  bool
}

var _ = Describe("Cache", func() {
	var (
		e *env.Env
		n *memsys.Node
		// beats are the first beats of every bus request, as a bus
		// observer saw them.
		beats []seen
	)

	build := func(cpus int, nb memsys.NodeBuilder) {
		// The time limit turns a livelock into a failure, not a hang.
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: 500 * clock.Microsecond})
		var err error
		n, err = nb.WithEnv(e).WithCPUs(cpus, clk).WithCache(testCache()).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).Build("N")
		Expect(err).NotTo(HaveOccurred())
		beats = nil
		n.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.First {
				beats = append(beats, seen{o.Cycle, o.Master, o.Req.Class, o.Addr, o.Write})
			}
		})
		Expect(n.Memory.Storage().Write(0x100, []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"))).To(Succeed())
	}

	run := func() {
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse(), "the run reached its time limit")
	}

	It("misses on the first load (arbitration, address, memory latency, line transfer) and hits on the second", func() {
		build(1, memsys.MakeNodeBuilder())
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x108, Len: 8},
			{Op: mem.Read, Addr: 0x108, Len: 8},
		}, &got)
		run()
		// Load pushed at c0, taken by the cache at c1, looked up at c2
		// (HitCycles 1): a miss, the fill pushed at p=2 and answered at
		// p+10 = c12 (see the fill timing above), popped at c13. The second
		// load is pushed at c13, taken at c14, hits at c15, popped at c16.
		Expect(cmp.Diff([]done{{13, "IJKLMNOP", false}, {16, "IJKLMNOP", false}}, got)).To(BeEmpty())
		Expect(beats).To(Equal([]seen{{8, "N.Cache[0]", memsys.ClassFill, 0x100, false}}))
		s := n.Caches[0].Stats()
		Expect([]uint64{s.Hits, s.Misses, s.Fills}).To(Equal([]uint64{1, 1, 1}))
		present, dirty := n.Caches[0].Holds(0x11f)
		Expect([]bool{present, dirty}).To(Equal([]bool{true, false}))
		Expect(e.Waves.Lookup("n.cache0.hits").Value()).To(Equal(uint64(1)))
		Expect(e.Waves.Lookup("n.cache0.misses").Value()).To(Equal(uint64(1)))
		Expect(e.Waves.Lookup("n.cache0.fill_addr").Value()).To(Equal(uint64(0x100)))
		Expect(records(e, "N.Cache[0]", "cache.fill")).To(Equal([]string{"20000 2 N.Cache[0] cache.fill addr=0x100 class=fill"}))
	})

	It("crosses clocks: a 200 MHz CPU's miss on a 50 MHz bus and memory", func() {
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: 500 * clock.Microsecond})
		fast, slow := clock.MHz(200), clock.MHz(50)
		bc := testBus()
		bc.Clock = slow
		var err error
		n, err = memsys.MakeNodeBuilder().WithEnv(e).WithCPUClocks(fast).WithCache(testCache()).WithBus(bc).
			WithMemory(1<<16, 0, 2, 8).Build("N")
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Memory.Storage().Write(0x100, []byte("ABCDEFGH"))).To(Succeed())
		var got []done
		cpuAgentOn(e, fast, "Cpu", n.Caches[0].Port(), []step{{Op: mem.Read, Addr: 0x100, Len: 8}}, &got)
		run()
		// CPU cycles are 5 ns, bus and memory cycles 20 ns. Pushed at 0,
		// taken at 5 ns, missed at 10 ns (HitCycles 1): the fill is pushed
		// at 10 ns. The bus sees it at its next edge, 20 ns (arbitration),
		// addresses it at 40 and turns around at 60, when the memory takes
		// it; with its latency of 2 cycles it pushes the beats at 100, 120,
		// 140 and 160 ns, which the bus moves at 120..180 ns. The cache pops
		// the last at its first edge after 180 ns, 185 ns (CPU cycle 37),
		// and answers; the CPU pops it at 190 ns, cycle 38.
		Expect(got).To(Equal([]done{{38, "ABCDEFGH", false}}))
	})

	It("sends a store to a write-through page to the bus, where an observer sees it", func() {
		build(1, memsys.MakeNodeBuilder().WithPolicy(0x1000, 0x1000, memsys.WriteThrough))
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Write, Addr: 0x1000, Data: []byte("12345678"), Posted: true},
		}, &got)
		var data []string
		n.Bus.Observe(func(now clock.Time, o bus.Observation) {
			data = append(data, string(o.Data))
		})
		run()
		// Store pushed at c0, taken at c1, looked up at c2: a write-through
		// miss (no allocation) pushes the bus write at c2; the bus
		// arbitrates at c3, sends the address at c4 and, with no decode
		// wait for a write, moves the data at c5.
		Expect(beats).To(Equal([]seen{{5, "N.Cache[0]", memsys.ClassWriteThrough, 0x1000, true}}))
		Expect(data).To(Equal([]string{"12345678"}))
		back, _ := n.Memory.Storage().Bytes(0x1000, 8)
		Expect(string(back)).To(Equal("12345678"))
		present, _ := n.Caches[0].Holds(0x1000)
		Expect(present).To(BeFalse())
		Expect(n.Caches[0].Stats().WriteThroughs).To(Equal(uint64(1)))
	})

	It("drops a line that a DMA write on the bus covers, so the next load misses and sees the DMA's data", func() {
		build(1, memsys.MakeNodeBuilder())
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 30, Op: mem.Read, Addr: 0x100, Len: 8},
		}, &got)
		dmaAgent(e, n.Bus, 20, 0x100, []byte("dmadata!"))
		run()
		// First load: c13 as in the miss spec. The DMA write pushed at c20
		// is arbitrated at c21, addressed at c22 and moves its data at c23;
		// the cache applies the observation at its next edge, c24, and
		// drops the line. The load pushed at c30 is taken at c31, misses
		// at c32 (fill p=32) and is answered at c42, popped at c43, with
		// the DMA's bytes (the memory wrote them at c26: taken c24 +
		// latency 2).
		Expect(got).To(Equal([]done{{13, "ABCDEFGH", false}, {43, "dmadata!", false}}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x100, false},
			{23, "Dma", "dma", 0x100, true},
			{38, "N.Cache[0]", memsys.ClassFill, 0x100, false},
		}))
		s := n.Caches[0].Stats()
		Expect([]uint64{s.Hits, s.Misses, s.Invalidations}).To(Equal([]uint64{0, 2, 1}))
		Expect(records(e, "N.Cache[0]", "cache.invalidate")).To(Equal([]string{
			"240000 24 N.Cache[0] cache.invalidate addr=0x100 by=Dma",
		}))
	})

	It("lets a load-locked/store-conditional pair succeed when nothing touches the line", func() {
		build(1, memsys.MakeNodeBuilder())
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8, Atomic: mem.LoadLocked},
			{Op: mem.Write, Addr: 0x100, Data: []byte("locked!!"), Atomic: mem.StoreConditional},
		}, &got)
		run()
		// LL: a miss answered at c12 (reservation set), popped at c13. The
		// SC is pushed at c13, taken at c14, looked up at c15: the
		// reservation holds but the line is only shared, so the cache
		// claims it with an upgrade (pushed p=15): the bus arbitrates at
		// c16 and runs the address phase at c17, where the upgrade ends;
		// the cache pops its completion at c18, stores and answers; popped
		// at c19 (an RFO would have been answered at p+10 = c25).
		Expect(got).To(Equal([]done{{13, "ABCDEFGH", false}, {19, "", false}}))
		back, _ := n.Memory.Storage().Bytes(0x100, 8)
		Expect(string(back)).To(Equal("locked!!"))
		_, dirty := n.Caches[0].Holds(0x100)
		Expect(dirty).To(BeTrue())
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x100, false},
			{17, "N.Cache[0]", memsys.ClassUpgrade, 0x100, false},
		}))
		s := n.Caches[0].Stats()
		Expect([]uint64{s.Fills, s.Upgrades, s.UpgradesLost}).To(Equal([]uint64{1, 1, 0}))
	})

	It("fails a store-conditional after another CPU's store to the line", func() {
		build(2, memsys.MakeNodeBuilder())
		var got0, got1 []done
		cpuAgent(e, "Cpu0", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8, Atomic: mem.LoadLocked},
			{At: 30, Op: mem.Write, Addr: 0x100, Data: []byte("mine!!!!"), Atomic: mem.StoreConditional},
		}, &got0)
		cpuAgent(e, "Cpu1", n.Caches[1].Port(), []step{
			{At: 14, Op: mem.Write, Addr: 0x104, Data: []byte("zz"), Posted: true},
		}, &got1)
		run()
		// Cpu0's LL completes at c13. Cpu1's store, pushed at c14, is taken
		// at c15 and misses at c16: a read for ownership (p=16) whose first
		// data beat is on the bus at p+6 = c22. Cache 0 applies it at c23:
		// line and reservation gone. The SC pushed at c30 is taken at c31
		// and fails at its lookup, c32, without touching memory; popped at
		// c33 with CondFailed.
		Expect(got0).To(Equal([]done{{13, "ABCDEFGH", false}, {33, "", true}}))
		back, _ := n.Memory.Storage().Bytes(0x100, 8)
		Expect(string(back)).To(Equal("ABCDzzGH"))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x100, false},
			{22, "N.Cache[1]", memsys.ClassRFO, 0x100, false},
		}))
		s := n.Caches[0].Stats()
		Expect([]uint64{s.Invalidations, s.ReservationsLost, s.SCFailed}).To(Equal([]uint64{1, 1, 1}))
		Expect(records(e, "N.Cache[0]", "cache.scfail")).To(Equal([]string{"320000 32 N.Cache[0] cache.scfail addr=0x100"}))
	})

	It("fails a store-conditional after a DMA write to the line", func() {
		build(1, memsys.MakeNodeBuilder())
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8, Atomic: mem.LoadLocked},
			{At: 30, Op: mem.Write, Addr: 0x100, Data: []byte("mine!!!!"), Atomic: mem.StoreConditional},
		}, &got)
		dmaAgent(e, n.Bus, 20, 0x118, []byte("dmadata!"))
		run()
		// The DMA write to the same line (bytes 0x118..0x11f) moves its
		// data at c23 (as in the DMA spec); the cache applies it at c24.
		// The SC fails at c32, popped at c33.
		Expect(got).To(Equal([]done{{13, "ABCDEFGH", false}, {33, "", true}}))
		back, _ := n.Memory.Storage().Bytes(0x100, 8)
		Expect(string(back)).To(Equal("ABCDEFGH"))
		Expect(n.Caches[0].Stats().SCFailed).To(Equal(uint64(1)))
	})

	It("writes a dirty victim back before filling the line that evicts it", func() {
		build(1, memsys.MakeNodeBuilder())
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Write, Addr: 0x0, Data: []byte("dirty!!!"), Posted: true},
			{Op: mem.Read, Addr: 0x40, Len: 8},
			{Op: mem.Read, Addr: 0x80, Len: 8},
		}, &got)
		run()
		// The store (pushed c0) misses at c2 and reads line 0x0 for
		// ownership (p=2, done c12: dirty). The load of 0x40, pushed at c1,
		// is taken at c12 and misses at c13 (p=13, answered c23, popped
		// c24). The load of 0x80 (same set) is pushed at c24, taken at c25
		// and misses at c26: the LRU way holds the dirty line 0x0, so the
		// cache queues its write-back (four beats, pushed one per cycle at
		// c26..c29) and then the fill (pushed at c30). The write-back is
		// arbitrated at c27, addressed at c28 and moves data at c29, c30;
		// the memory's 2-deep port is then full until the memory takes the
		// request (c30, sees the first beat) and starts writing at c32
		// (latency 2), so the last beats move at c33 and c34 (each freed
		// slot is visible one cycle after the memory's pop). The fill is
		// arbitrated at c35, addressed at c36; the memory, busy with the
		// write until c35 (beats written at c32..c35), takes the read at
		// c37 and pushes its beats at c39..c42; the bus moves them at
		// c40..c43, the cache pops the last at c44 and answers; popped c45.
		Expect(got).To(Equal([]done{{24, "\x00\x00\x00\x00\x00\x00\x00\x00", false}, {45, "\x00\x00\x00\x00\x00\x00\x00\x00", false}}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassRFO, 0x0, false},
			{19, "N.Cache[0]", memsys.ClassFill, 0x40, false},
			{29, "N.Cache[0]", memsys.ClassWriteBack, 0x0, true},
			{40, "N.Cache[0]", memsys.ClassFill, 0x80, false},
		}))
		back, _ := n.Memory.Storage().Bytes(0, 8)
		Expect(string(back)).To(Equal("dirty!!!"))
		present, _ := n.Caches[0].Holds(0x0)
		Expect(present).To(BeFalse())
		Expect(n.Caches[0].Stats().WriteBacks).To(Equal(uint64(1)))
		Expect(records(e, "N.Cache[0]", "cache.writeback")).To(Equal([]string{"260000 26 N.Cache[0] cache.writeback addr=0x0 why=evict"}))
	})

	It("sends accesses to uncached pages to the bus every time and allocates nothing", func() {
		build(1, memsys.MakeNodeBuilder())
		Expect(n.SetPolicy(0x0, 0x1000, memsys.Uncached)).To(Succeed())
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8},
			{Op: mem.Read, Addr: 0x100, Len: 8},
		}, &got)
		run()
		// Load pushed at c0, taken c1, looked up c2: uncached, the 8-byte
		// read goes to the bus as it is (p=2): arbitration c3, address c4,
		// turnaround c5; the memory takes it at c5 and pushes the beat at
		// c7, the bus moves it at c8, the cache pops it at c9 and answers;
		// popped c10. The second load, pushed at c10, is 10 cycles too.
		Expect(got).To(Equal([]done{{10, "ABCDEFGH", false}, {20, "ABCDEFGH", false}}))
		Expect(beats).To(Equal([]seen{{8, "N.Cache[0]", "cpu", 0x100, false}, {18, "N.Cache[0]", "cpu", 0x100, false}}))
		present, _ := n.Caches[0].Holds(0x100)
		Expect(present).To(BeFalse())
		s := n.Caches[0].Stats()
		Expect([]uint64{s.Hits, s.Misses, s.Fills, s.Uncached}).To(Equal([]uint64{0, 0, 0, 2}))
	})

	It("follows a page's policy changed at run time: a store after the switch to write-through reaches the bus", func() {
		build(1, memsys.MakeNodeBuilder())
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Write, Addr: 0x2000, Data: []byte("wb-store"), Posted: true},
			{At: 30, Op: mem.Write, Addr: 0x2008, Data: []byte("wt-store"), Posted: true},
		}, &got)
		kernel := vtest.NewAgent(e, "Os", clk, func(_ clock.Time, c clock.Cycle) bool {
			if c < 20 {
				return true
			}
			Expect(n.SetPolicy(0x2000, 0x1000, memsys.WriteThrough)).To(Succeed())
			return false
		})
		kernel.Start()
		run()
		// The first store misses at c2 and reads the line for ownership
		// (data on the bus from p+6 = c8): nothing is written on the bus.
		// At c20 the page becomes write-through. The second store, pushed
		// at c30, is taken at c31 and hits the (still dirty) line at c32;
		// its bus write is arbitrated at c33, addressed at c34 and moves
		// its data at c35.
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassRFO, 0x2000, false},
			{35, "N.Cache[0]", memsys.ClassWriteThrough, 0x2008, true},
		}))
		Expect(n.Caches[0].PolicyAt(0x2fff)).To(Equal(memsys.WriteThrough))
		Expect(n.Caches[0].PolicyAt(0x3000)).To(Equal(memsys.WriteBack))
		s := n.Caches[0].Stats()
		Expect([]uint64{s.Hits, s.Misses, s.WriteThroughs}).To(Equal([]uint64{1, 1, 1}))
	})

	It("makes a line dirty in one cache shared when another cache reads it, writing it back", func() {
		build(2, memsys.MakeNodeBuilder())
		var got0, got1 []done
		cpuAgent(e, "Cpu0", n.Caches[0].Port(), []step{
			{Op: mem.Write, Addr: 0x100, Data: []byte("cpu0"), Posted: true},
		}, &got0)
		cpuAgent(e, "Cpu1", n.Caches[1].Port(), []step{
			{At: 20, Op: mem.Read, Addr: 0x100, Len: 8},
		}, &got1)
		run()
		// Cpu0's store reads line 0x100 for ownership (p=2, data on the bus
		// from c8, dirty at c12). Cpu1's load, pushed at c20, misses at c22
		// (p=22, data on the bus from c28). Cache 0 applies that beat at
		// c29: it queues the line's write-back (first beat pushed at c29)
		// and keeps the line shared. The bus, busy with cache 1's fill until
		// its last beat at p+9 = c31, arbitrates the write-back at c32,
		// addresses it at c33 and moves its first beat at c34. Cache 1's
		// load is answered at p+10 = c32, popped at c33, with cpu0's bytes
		// (memory holds them: the cache keeps no copy). The write-back
		// costs bus time but does not delay the reader: observers cannot
		// stall the bus.
		Expect(got1).To(Equal([]done{{33, "cpu0EFGH", false}}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassRFO, 0x100, false},
			{28, "N.Cache[1]", memsys.ClassFill, 0x100, false},
			{34, "N.Cache[0]", memsys.ClassWriteBack, 0x100, true},
		}))
		present, dirty := n.Caches[0].Holds(0x100)
		Expect([]bool{present, dirty}).To(Equal([]bool{true, false}))
	})

	It("with an implicit write-back, keeps a dirty line read by another master shared without a write-back of its own", func() {
		c := testCache()
		c.ImplicitWriteBack = true
		// The node of build, with the option.
		var err error
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: 500 * clock.Microsecond})
		n, err = memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(2, clk).WithCache(c).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).Build("N")
		Expect(err).NotTo(HaveOccurred())
		beats = nil
		n.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.First {
				beats = append(beats, seen{o.Cycle, o.Master, o.Req.Class, o.Addr, o.Write})
			}
		})
		var got0, got1 []done
		cpuAgent(e, "Cpu0", n.Caches[0].Port(), []step{
			{Op: mem.Write, Addr: 0x100, Data: []byte("cpu0"), Posted: true},
		}, &got0)
		cpuAgent(e, "Cpu1", n.Caches[1].Port(), []step{
			{At: 20, Op: mem.Read, Addr: 0x100, Len: 8},
		}, &got1)
		run()
		// As in the spec above up to cache 1's fill (RFO data from c8,
		// the fill's from c28, the load answered at c32 and popped at c33
		// with cpu0's bytes); cache 0 applies the fill's beat at c29 and
		// only marks its line shared: the reader's transaction carried it,
		// so the bus sees no write-back at c34.
		Expect(got1).To(Equal([]done{{33, "cpu0\x00\x00\x00\x00", false}}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassRFO, 0x100, false},
			{28, "N.Cache[1]", memsys.ClassFill, 0x100, false},
		}))
		present, dirty := n.Caches[0].Holds(0x100)
		Expect([]bool{present, dirty}).To(Equal([]bool{true, false}))
		Expect(n.Caches[0].Stats().WriteBacks).To(Equal(uint64(1)))
	})

	It("drops lines that a device writes through a memory port of its own (the memory's write hook)", func() {
		build(1, memsys.MakeNodeBuilder().WithDevicePorts(1))
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 30, Op: mem.Read, Addr: 0x100, Len: 8},
		}, &got)
		ch := n.DevicePort(0)
		sent := false
		dev := vtest.NewAgent(e, "Dev", clk, func(now clock.Time, c clock.Cycle) bool {
			if !sent && c >= 20 {
				req := &mem.Req{Op: mem.Write, Addr: 0x100, Len: 8, Posted: true, Master: "Dev"}
				ch.Down.Push(now, mem.WriteBeats(req, []byte("device!!"), 8)[0])
				sent = true
			}
			return !sent
		})
		ch.ConnectMaster(dev)
		dev.Start()
		run()
		// The device's write, pushed at c20, is taken by the idle memory at
		// c21 and written at c23 (latency 2), when the memory announces it;
		// the cache drops the line at c24. The load pushed at c30 misses
		// as in the DMA spec: popped at c43 with the device's bytes. The
		// bus never saw the write.
		Expect(got).To(Equal([]done{{13, "ABCDEFGH", false}, {43, "device!!", false}}))
		Expect(records(e, "N.Cache[0]", "cache.invalidate")).To(Equal([]string{
			"240000 24 N.Cache[0] cache.invalidate addr=0x100 by=Dev",
		}))
		Expect(beats).To(HaveLen(2))
	})

	It("looks up each line of an access that spans two, filling both", func() {
		build(1, memsys.MakeNodeBuilder())
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{{Op: mem.Read, Addr: 0x118, Len: 16}}, &got)
		run()
		// Pushed c0, taken c1, line 0x100 misses at c2 (fill p=2, done
		// c12); line 0x120 is looked up HitCycles later, c13, and misses
		// (p=13, done c23). The two 8-byte beats leave at c23 and c24 (one
		// push per cycle) and the last is popped at c25.
		Expect(got).To(Equal([]done{{25, "YZ012345\x00\x00\x00\x00\x00\x00\x00\x00", false}}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x100, false},
			{19, "N.Cache[0]", memsys.ClassFill, 0x120, false},
		}))
		Expect(n.Caches[0].Stats().Misses).To(Equal(uint64(2)))
	})

	It("serves a host/cpu program: a store, then a load of the same word, through the cache", func() {
		build(1, memsys.MakeNodeBuilder())
		p, err := cpu.MakeBuilder().WithEnv(e).WithClock(clk).Build("Cpu")
		Expect(err).NotTo(HaveOccurred())
		p.Attach(n.Caches[0].Port())
		var loaded []byte
		p.Run(
			cpu.Op{Kind: cpu.Store, Addr: 0x208, Data: []byte("fromcpu!")},
			cpu.Op{Kind: cpu.Load, Addr: 0x208, Len: 8, Done: func(_ clock.Time, d []byte) { loaded = append([]byte(nil), d...) }},
		)
		run()
		Expect(string(loaded)).To(Equal("fromcpu!"))
		s := n.Caches[0].Stats()
		// The store misses (read for ownership), the load hits the line
		// the store made dirty.
		Expect([]uint64{s.Hits, s.Misses, s.Fills}).To(Equal([]uint64{1, 1, 1}))
		present, dirty := n.Caches[0].Holds(0x208)
		Expect([]bool{present, dirty}).To(Equal([]bool{true, true}))
		Expect(p.Retired()).To(Equal(uint64(2)))
	})

	It("keeps an LL/SC counter exact when four CPUs increment it at once, and ends coherent", func() {
		build(4, memsys.MakeNodeBuilder())
		const perCPU = 40
		const counter = 0x300
		var failures [4]int
		for i, c := range n.Caches {
			ch := c.Port()
			r := e.Rand(fmt.Sprintf("Cpu%d", i))
			phase, incs, waiting := 0, 0, false
			var val uint64
			a := vtest.NewAgent(e, fmt.Sprintf("Cpu%d", i), clk, func(now clock.Time, _ clock.Cycle) bool {
				if b, ok := ch.Up.Pop(now); ok {
					waiting = false
					switch phase {
					case 0: // the load-locked's data
						val = binary.LittleEndian.Uint64(b.Data)
						phase = 1
					case 1: // the store-conditional's completion
						if b.CondFailed {
							failures[i]++
							phase = 0
						} else {
							incs++
							phase = 2
						}
					}
				}
				if waiting || incs == perCPU && phase != 2 || !ch.Down.CanPush(now) {
					return !waiting && incs < perCPU
				}
				switch phase {
				case 0:
					ch.Down.Push(now, mem.Beat{Req: &mem.Req{Op: mem.Read, Addr: counter, Len: 8, Atomic: mem.LoadLocked}, First: true, Last: true})
					waiting = true
				case 1:
					req := &mem.Req{Op: mem.Write, Addr: counter, Len: 8, Atomic: mem.StoreConditional}
					ch.Down.Push(now, mem.WriteBeats(req, binary.LittleEndian.AppendUint64(nil, val+1), 8)[0])
					waiting = true
				case 2: // a posted store elsewhere in memory, evicting now and then
					addr := 0x1000 + uint64(i)*0x400 + r.Uint64N(128)*8
					req := &mem.Req{Op: mem.Write, Addr: addr, Len: 8, Posted: true}
					ch.Down.Push(now, mem.WriteBeats(req, []byte("otherwrk"), 8)[0])
					phase = 0
				}
				return true
			})
			ch.ConnectMaster(a)
			a.Start()
		}
		run()
		v, _ := n.Memory.Storage().Bytes(counter, 8)
		Expect(binary.LittleEndian.Uint64(v)).To(Equal(uint64(4 * perCPU)))
		Expect(n.CheckCoherence()).To(Succeed())
		var scFailed uint64
		total := 0
		for i, c := range n.Caches {
			scFailed += c.Stats().SCFailed
			total += failures[i]
		}
		Expect(scFailed).To(Equal(uint64(total)))
		Expect(total).To(BeNumerically(">", 0), "the CPUs should have contended")
		GinkgoWriter.Printf("store-conditionals failed: %v\n", failures)
	})
})

// records returns the formatted trace records of path with kind.
func records(e *env.Env, path, kind string) []string {
	var out []string
	for _, r := range e.Trace.Records() {
		if r.Path == path && r.Kind == kind {
			out = append(out, r.Format())
		}
	}
	return out
}

var _ = Describe("CacheConfig", func() {
	DescribeTable("rejects impossible parameters, naming them",
		func(mod func(*memsys.CacheConfig), msg string) {
			c := testCache()
			mod(&c)
			e := env.New(env.Options{})
			_, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithCache(c).WithBus(testBus()).Build("N")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("line not a power of two", func(c *memsys.CacheConfig) { c.LineBytes = 48 }, "LineBytes 48"),
		Entry("capacity not a multiple of line x ways", func(c *memsys.CacheConfig) { c.CapacityBytes = 100 }, "CapacityBytes 100"),
		Entry("zero ways", func(c *memsys.CacheConfig) { c.Ways = 0 }, "Ways 0"),
		Entry("negative hit time", func(c *memsys.CacheConfig) { c.HitCycles = -1 }, "HitCycles -1"),
		Entry("page smaller than a line", func(c *memsys.CacheConfig) { c.PageBytes = 16 }, "PageBytes 16"),
		Entry("no write buffer", func(c *memsys.CacheConfig) { c.BusWriteEntries = 0 }, "BusWriteEntries 0"),
		Entry("negative miss registers", func(c *memsys.CacheConfig) { c.MaxMisses = -1 }, "MaxMisses -1"),
	)

	It("rejects a policy region not aligned to pages", func() {
		e := env.New(env.Options{})
		_, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithCache(testCache()).WithBus(testBus()).
			WithPolicy(0x800, 0x1000, memsys.Uncached).Build("N")
		Expect(err).To(MatchError(ContainSubstring("not aligned to PageBytes 4096")))
	})
})

var _ = Describe("Cache write buffers (BusWriteEntries)", func() {
	// storeBurst builds a node whose cache has entries write buffers and a
	// 2-deep CPU port, and an agent that pushes n posted 8-byte stores to a
	// write-through page as fast as the port takes them. It returns the
	// cycles the agent pushed each store at and the cycles of the bus's
	// data beats.
	storeBurst := func(entries, n int) (pushed, onBus []clock.Cycle) {
		e := vtest.NewEnv(vtest.Options{Clock: clk, TimeLimit: 100 * clock.Microsecond})
		c := testCache()
		c.BusWriteEntries, c.PortDepth = entries, 2
		node, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithCache(c).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).WithPolicy(0x1000, 0x1000, memsys.WriteThrough).Build("N")
		Expect(err).NotTo(HaveOccurred())
		node.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.Write {
				onBus = append(onBus, o.Cycle)
			}
		})
		ch := node.Caches[0].Port()
		i := 0
		a := vtest.NewAgent(e, "Cpu", clk, func(now clock.Time, cy clock.Cycle) bool {
			if i < n && ch.Down.CanPush(now) {
				req := &mem.Req{Op: mem.Write, Addr: 0x1000 + uint64(8*i), Len: 8, Posted: true, Class: "cpu", Master: "Cpu"}
				ch.Down.Push(now, mem.WriteBeats(req, []byte("abcdefgh"), ch.Width)[0])
				pushed = append(pushed, cy)
				i++
			}
			return i < n
		})
		ch.ConnectMaster(a)
		a.Start()
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse(), "the run reached its time limit")
		Expect(node.Caches[0].Idle()).To(BeTrue())
		return pushed, onBus
	}

	It("stalls the CPU while every write buffer holds a bus write the bus has not carried", func() {
		pushed, onBus := storeBurst(1, 5)
		// One write buffer. S0 pushed c0, taken c1, looked up c2, its bus
		// write pushed c2: arbitration c3, address c4, data c5 (as in the
		// write-through spec). The cache sees its own last beat at c5 and
		// frees the buffer at its next edge, c6, where it takes S1: lookup
		// c7, bus data c10; likewise S2 taken c11, data c15, S3 c16 -> c20,
		// S4 c21 -> c25: one store per 5 cycles, the bus's pace.
		Expect(onBus).To(Equal([]clock.Cycle{5, 10, 15, 20, 25}))
		// The CPU pushes S0 c0, S1 c1, S2 c2 (the port holds S1 and S2
		// after the cache took S0 at c1); S3 finds the port full until the
		// cache takes S1 at c6 and is pushed at c7, S4 after S2 is taken
		// (c11) at c12: the CPU stalls on its port.
		Expect(pushed).To(Equal([]clock.Cycle{0, 1, 2, 7, 12}))
	})

	It("lets the CPU run ahead of the bus with enough write buffers", func() {
		pushed, onBus := storeBurst(4, 5)
		// Four write buffers: the cache takes S0 at c1 and each next store
		// in the cycle its predecessor's lookup ends (S1 c2, S2 c3, S3 c4,
		// whose bus write at c5 fills the fourth buffer; S4 is taken when
		// S0's buffer is free, c6). The bus carries a write every 3 cycles
		// (arbitration, address, data), back to back from S0's data at c5:
		// 5, 8, 11, 14, 17. The port never fills: the CPU pushes a store
		// every cycle.
		Expect(onBus).To(Equal([]clock.Cycle{5, 8, 11, 14, 17}))
		Expect(pushed).To(Equal([]clock.Cycle{0, 1, 2, 3, 4}))
	})
})

// dmaReadAgent reads n bytes at addr with a bus read pushed at cycle at, as
// an I/O device's DMA read through a bridge; it records the cycle it
// popped the last beat in.
func dmaReadAgent(e *env.Env, b *bus.Bus, at clock.Cycle, addr uint64, n int, doneAt *clock.Cycle) {
	ch, err := b.AddMaster("Dma")
	Expect(err).NotTo(HaveOccurred())
	sent, finished := false, false
	a := vtest.NewAgent(e, "Dma", clk, func(now clock.Time, c clock.Cycle) bool {
		if bt, ok := ch.Up.Pop(now); ok && bt.Last {
			*doneAt, finished = c, true
		}
		if !sent && c >= at && ch.Down.CanPush(now) {
			req := &mem.Req{Op: mem.Read, Addr: addr, Len: n, Class: "dma", Master: "Dma"}
			ch.Down.Push(now, mem.Beat{Req: req, First: true, Last: true})
			sent = true
		}
		return !finished
	})
	ch.ConnectMaster(a)
	a.Start()
}

var _ = Describe("Cache upgrades (a store to a line held shared)", func() {
	var (
		e     *env.Env
		n     *memsys.Node
		beats []seen
	)
	build := func(cpus int) {
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: 500 * clock.Microsecond})
		var err error
		n, err = memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(cpus, clk).WithCache(testCache()).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).Build("N")
		Expect(err).NotTo(HaveOccurred())
		beats = nil
		n.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.First {
				beats = append(beats, seen{o.Cycle, o.Master, o.Req.Class, o.Addr, o.Write})
			}
		})
		Expect(n.Memory.Storage().Write(0x100, []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"))).To(Succeed())
	}
	run := func() {
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse(), "the run reached its time limit")
		Expect(n.CheckCoherence()).To(Succeed())
	}

	It("claims a line a DMA read made shared with an address-only upgrade, not a line fill", func() {
		build(1)
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Write, Addr: 0x100, Data: []byte("st1!")},
			{At: 50, Op: mem.Write, Addr: 0x108, Data: []byte("st2!")},
		}, &got)
		var dmaDone clock.Cycle
		dmaReadAgent(e, n.Bus, 20, 0x100, 32, &dmaDone)
		run()
		// The first store misses at c2 and reads the line for ownership
		// (p=2, data c8..c11): dirty at c12, popped c13. The DMA read
		// pushed at c20 is arbitrated at c21, addressed at c22, turned
		// around at c23 and moves the memory's beats at c26..c29 (popped
		// c27..c30). Cache 0 applies its first beat at c27: the line is
		// dirty, and without ImplicitWriteBack the cache queues its
		// write-back (pushed from c27) and keeps it shared. The bus, busy
		// until c29, arbitrates the write-back at c30, addresses it at c31
		// and moves its first beat at c32. The second store, pushed at
		// c50, is taken at c51 and looked up at c52: the line is shared,
		// so the cache claims it with an upgrade (p=52): arbitration c53,
		// address phase c54, where it ends; the cache pops the completion
		// at c55, stores and answers, popped at c56. An RFO would have
		// been answered at p+10 = c62 (popped c63).
		Expect(got).To(Equal([]done{{13, "", false}, {56, "", false}}))
		Expect(dmaDone).To(Equal(clock.Cycle(30)))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassRFO, 0x100, false},
			{26, "Dma", "dma", 0x100, false},
			{32, "N.Cache[0]", memsys.ClassWriteBack, 0x100, true},
			{54, "N.Cache[0]", memsys.ClassUpgrade, 0x100, false},
		}))
		back, _ := n.Memory.Storage().Bytes(0x100, 12)
		Expect(string(back)).To(Equal("st1!EFGHst2!"))
		present, dirty := n.Caches[0].Holds(0x100)
		Expect([]bool{present, dirty}).To(Equal([]bool{true, true}))
		s := n.Caches[0].Stats()
		Expect([]uint64{s.Fills, s.Upgrades, s.WriteBacks, s.Misses}).To(Equal([]uint64{1, 1, 1, 2}))
		Expect(records(e, "N.Cache[0]", "cache.upgrade")).To(Equal([]string{"520000 52 N.Cache[0] cache.upgrade addr=0x100"}))
		Expect(records(e, "N.Bus", "bus.upgrade.addr")).To(Equal([]string{
			"540000 54 N.Bus bus.upgrade.addr master=N.Cache[0] target=N.Mem addr=0x100 len=32 start=53 waits=0",
		}))
	})

	It("invalidates the line in another cache that holds it shared; that cache's next load misses", func() {
		build(2)
		var got0, got1 []done
		cpuAgent(e, "Cpu0", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 40, Op: mem.Write, Addr: 0x100, Data: []byte("cpu0")},
		}, &got0)
		cpuAgent(e, "Cpu1", n.Caches[1].Port(), []step{
			{At: 20, Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 50, Op: mem.Read, Addr: 0x100, Len: 8},
		}, &got1)
		run()
		// Cpu0's load misses (p=2), popped c13. Cpu1's, pushed at c20,
		// misses at c22 (p=22, data c28..c31), popped c33: both caches
		// hold the line shared. Cpu0's store, pushed at c40, is looked up
		// at c42 and upgrades (p=42): arbitration c43, address phase c44;
		// cache 0 pops the completion at c45 (popped by Cpu0 at c46), and
		// cache 1 applies the observation at c45 and drops its copy.
		// Cpu1's second load, pushed at c50, misses at c52 (p=52, data
		// c58..c61) and is answered at c62 with cpu0's bytes, popped c63.
		// Cache 0 applies that read at c59 and writes its dirty line back
		// (no ImplicitWriteBack): arbitration c62, address c63, data c64.
		Expect(got0).To(Equal([]done{{13, "ABCDEFGH", false}, {46, "", false}}))
		Expect(got1).To(Equal([]done{{33, "ABCDEFGH", false}, {63, "cpu0EFGH", false}}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x100, false},
			{28, "N.Cache[1]", memsys.ClassFill, 0x100, false},
			{44, "N.Cache[0]", memsys.ClassUpgrade, 0x100, false},
			{58, "N.Cache[1]", memsys.ClassFill, 0x100, false},
			{64, "N.Cache[0]", memsys.ClassWriteBack, 0x100, true},
		}))
		Expect(records(e, "N.Cache[1]", "cache.invalidate")).To(Equal([]string{
			"450000 45 N.Cache[1] cache.invalidate addr=0x100 by=N.Cache[0]",
		}))
		Expect(n.Caches[1].Stats().Invalidations).To(Equal(uint64(1)))
	})

	It("breaks another CPU's load-locked reservation with its upgrade", func() {
		build(2)
		var got0, got1 []done
		cpuAgent(e, "Cpu0", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8, Atomic: mem.LoadLocked},
			{At: 50, Op: mem.Write, Addr: 0x100, Data: []byte("mine!!!!"), Atomic: mem.StoreConditional},
		}, &got0)
		cpuAgent(e, "Cpu1", n.Caches[1].Port(), []step{
			{At: 20, Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 40, Op: mem.Write, Addr: 0x104, Data: []byte("zz")},
		}, &got1)
		run()
		// Cpu0's LL: c13 (reservation on 0x100). Cpu1's load: c33, the line
		// shared in both caches. Cpu1's store, pushed at c40, upgrades at
		// c42 (arbitration c43, address phase c44; popped c46); cache 0
		// applies it at c45: line and reservation gone. Cpu0's SC, pushed
		// at c50, is taken at c51 and fails at its lookup, c52, without
		// touching memory; popped at c53 with CondFailed.
		Expect(got0).To(Equal([]done{{13, "ABCDEFGH", false}, {53, "", true}}))
		Expect(got1).To(Equal([]done{{33, "ABCDEFGH", false}, {46, "", false}}))
		back, _ := n.Memory.Storage().Bytes(0x100, 8)
		Expect(string(back)).To(Equal("ABCDzzGH"))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x100, false},
			{28, "N.Cache[1]", memsys.ClassFill, 0x100, false},
			{44, "N.Cache[1]", memsys.ClassUpgrade, 0x100, false},
		}))
		s := n.Caches[0].Stats()
		Expect([]uint64{s.Invalidations, s.ReservationsLost, s.SCFailed}).To(Equal([]uint64{1, 1, 1}))
	})

	It("reads the line for ownership after an upgrade that another cache's upgrade beat to the bus", func() {
		build(2)
		var got0, got1 []done
		cpuAgent(e, "Cpu0", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 40, Op: mem.Write, Addr: 0x100, Data: []byte("0000")},
		}, &got0)
		cpuAgent(e, "Cpu1", n.Caches[1].Port(), []step{
			{At: 20, Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 40, Op: mem.Write, Addr: 0x102, Data: []byte("11")},
		}, &got1)
		run()
		// Both caches hold the line shared by c33 (as above) and both
		// stores, pushed at c40, upgrade at c42. Round robin grants cache
		// 0 first (cache 1 had the last grant): arbitration c43, address
		// c44, popped by Cpu0 at c46. Cache 1's upgrade follows:
		// arbitration c45, address c46. Cache 1 applied cache 0's upgrade
		// at c45, before its own was on the bus: its line is gone, so the
		// completion it pops at c47 finds the upgrade lost and it reads the
		// line for ownership (p=47, data c53..c56), popped c57, stored, and
		// Cpu1 pops the answer at c58. Cache 0 applies that RFO at c54:
		// it writes its dirty line back (arbitration c57, address c58,
		// data from c59) and drops it.
		Expect(got0).To(Equal([]done{{13, "ABCDEFGH", false}, {46, "", false}}))
		Expect(got1).To(Equal([]done{{33, "ABCDEFGH", false}, {58, "", false}}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x100, false},
			{28, "N.Cache[1]", memsys.ClassFill, 0x100, false},
			{44, "N.Cache[0]", memsys.ClassUpgrade, 0x100, false},
			{46, "N.Cache[1]", memsys.ClassUpgrade, 0x100, false},
			{53, "N.Cache[1]", memsys.ClassRFO, 0x100, false},
			{59, "N.Cache[0]", memsys.ClassWriteBack, 0x100, true},
		}))
		back, _ := n.Memory.Storage().Bytes(0x100, 8)
		Expect(string(back)).To(Equal("0011EFGH"))
		s1 := n.Caches[1].Stats()
		Expect([]uint64{s1.Upgrades, s1.UpgradesLost, s1.Fills}).To(Equal([]uint64{1, 1, 2}))
		present, dirty := n.Caches[1].Holds(0x100)
		Expect([]bool{present, dirty}).To(Equal([]bool{true, true}))
		present, _ = n.Caches[0].Holds(0x100)
		Expect(present).To(BeFalse())
	})
})

var _ = Describe("Cache upgrades lost before the bus (issue 18)", func() {
	It("takes neither the line nor the reservation of a cache that read it after the upgrade that won", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: 500 * clock.Microsecond})
		n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(3, clk).WithCache(testCache()).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).Build("N")
		Expect(err).NotTo(HaveOccurred())
		var beats []seen
		n.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.First {
				beats = append(beats, seen{o.Cycle, o.Master, o.Req.Class, o.Addr, o.Write})
			}
		})
		Expect(n.Memory.Storage().Write(0x100, []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"))).To(Succeed())
		var got0, got1, got2 []done
		cpuAgent(e, "Cpu0", n.Caches[0].Port(), []step{
			{At: 20, Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 40, Op: mem.Write, Addr: 0x100, Data: []byte("0000")},
		}, &got0)
		cpuAgent(e, "Cpu1", n.Caches[1].Port(), []step{
			{Op: mem.Read, Addr: 0x100, Len: 8},
			{At: 40, Op: mem.Write, Addr: 0x102, Data: []byte("11")},
		}, &got1)
		cpuAgent(e, "Cpu2", n.Caches[2].Port(), []step{
			{At: 40, Op: mem.Read, Addr: 0x100, Len: 8, Atomic: mem.LoadLocked},
			{At: 56, Op: mem.Write, Addr: 0x104, Data: []byte("2222"), Atomic: mem.StoreConditional},
		}, &got2)
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse(), "the run reached its time limit")
		Expect(n.CheckCoherence()).To(Succeed())
		// Cpu1's load: fill at c8, popped c13; Cpu0's: fill at c28,
		// popped c33; the line shared in caches 0 and 1. At c40 both
		// stores and Cpu2's load-locked are pushed; the stores upgrade,
		// Cpu2 misses. Round robin after cache 0 (the last grant) gives
		// cache 1's upgrade the address phase at c44 (popped c46). Cache 0
		// observes it at c44 while its own upgrade still waits for the
		// bus: that upgrade is lost (Lost set, line gone at c45). Cache
		// 2's fill is next (c50; cache 1, dirty, writes back at c58) and
		// its load-locked is popped at c55, reservation set. Cache 0's
		// lost upgrade reaches the bus at c55: it claims nothing, so cache
		// 2 keeps its line and reservation (before the fix it took both at
		// c56, and Cpu2's SC, pushed at c56, failed at its lookup, popped
		// c59 with CondFailed; three such LL/SC loops failed each other in
		// turn for ever on an 8 x 4 Cashmere-2L run). Cpu2's SC upgrades at
		// c65 and is popped at c67, stored. Cache 0, its upgrade found
		// lost, reads the line for ownership at c71 (cache 2 writes back
		// at c77) and Cpu0 pops its store at c76.
		Expect(got1).To(Equal([]done{{13, "ABCDEFGH", false}, {46, "", false}}))
		Expect(got0).To(Equal([]done{{33, "ABCDEFGH", false}, {76, "", false}}))
		Expect(got2).To(Equal([]done{{55, "AB11EFGH", false}, {67, "", false}}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[1]", memsys.ClassFill, 0x100, false},
			{28, "N.Cache[0]", memsys.ClassFill, 0x100, false},
			{44, "N.Cache[1]", memsys.ClassUpgrade, 0x100, false},
			{50, "N.Cache[2]", memsys.ClassFill, 0x100, false},
			{55, "N.Cache[0]", memsys.ClassUpgrade, 0x100, false},
			{58, "N.Cache[1]", memsys.ClassWriteBack, 0x100, true},
			{65, "N.Cache[2]", memsys.ClassUpgrade, 0x100, false},
			{71, "N.Cache[0]", memsys.ClassRFO, 0x100, false},
			{77, "N.Cache[2]", memsys.ClassWriteBack, 0x100, true},
		}))
		back, _ := n.Memory.Storage().Bytes(0x100, 8)
		Expect(string(back)).To(Equal("00002222"))
		s0, s2 := n.Caches[0].Stats(), n.Caches[2].Stats()
		Expect([]uint64{s0.Upgrades, s0.UpgradesLost}).To(Equal([]uint64{1, 1}))
		Expect([]uint64{s2.ReservationsLost, s2.SCFailed, s2.Upgrades}).To(Equal([]uint64{0, 0, 1}))
	})
})

var _ = Describe("Cache miss status holding registers (MaxMisses)", func() {
	// overlap runs the program of the specs below on a one-CPU node whose
	// cache has maxMisses registers: a load miss, then two posted stores
	// to line 0x100 (the second merges), a posted store to line 0x120, a
	// load that hits line 0x180 and a load of line 0x100. It returns the
	// loads' answers, the first beats on the bus, the cycles at which
	// the stores' bytes were in memory (sampled by an agent created after
	// the node, which ticks after the cache at an edge) and the stats.
	overlap := func(maxMisses int) (got []done, beats []seen, performed map[string]clock.Cycle, st memsys.Stats) {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: 500 * clock.Microsecond})
		c := testCache()
		c.MaxMisses = maxMisses
		n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithCache(c).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).Build("N")
		Expect(err).NotTo(HaveOccurred())
		n.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.First {
				beats = append(beats, seen{o.Cycle, o.Master, o.Req.Class, o.Addr, o.Write})
			}
		})
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Read, Addr: 0x180, Len: 8},
			{At: 13, Op: mem.Write, Addr: 0x100, Data: []byte("s1s1s1s1"), Posted: true},
			{Op: mem.Write, Addr: 0x108, Data: []byte("s1b!s1b!"), Posted: true},
			{Op: mem.Write, Addr: 0x120, Data: []byte("s2s2s2s2"), Posted: true},
			{Op: mem.Read, Addr: 0x188, Len: 8},
			{Op: mem.Read, Addr: 0x108, Len: 8},
		}, &got)
		performed = map[string]clock.Cycle{}
		probe := vtest.NewAgent(e, "Probe", clk, func(_ clock.Time, cy clock.Cycle) bool {
			for _, w := range []struct {
				addr uint64
				data string
			}{{0x100, "s1s1s1s1"}, {0x108, "s1b!s1b!"}, {0x120, "s2s2s2s2"}} {
				b, _ := n.Memory.Storage().Bytes(w.addr, 8)
				if _, ok := performed[w.data]; !ok && string(b) == w.data {
					performed[w.data] = cy
				}
			}
			return len(performed) < 3
		})
		probe.Start()
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse(), "the run reached its time limit")
		Expect(n.Caches[0].Idle()).To(BeTrue())
		return got, beats, performed, n.Caches[0].Stats()
	}

	It("keeps two store misses outstanding at once, merges a store into one, and serves a hit under them", func() {
		got, beats, performed, st := overlap(2)
		// The load of 0x180 misses (p=2), popped at c13. S1 (0x100),
		// pushed at c13, is taken at c14 and looked up at c15: a miss, so
		// the cache takes register 0 and pushes its RFO (p=15), and moves
		// on. S1b (0x108, pushed c14) is taken at c15 and looked up at
		// c16: register 0 is the youngest and holds its line, so it merges.
		// S2 (0x120, pushed c15) is taken at c16 and misses at c17:
		// register 1, RFO pushed p=17. The load of 0x188 (pushed c16) is
		// taken at c17 and hits at c18, under both misses; popped c19.
		// The CPU then pushes the load of 0x108 at c19; the cache takes it
		// at c20 and at c21 finds register 0 on its line: it waits.
		// RFO 0: arbitration c16, address c17, turnaround c18, the memory's
		// beats on the bus c21..c24, the last popped by the cache at c25,
		// where register 0 performs S1 and S1b and frees; the waiting load
		// looks up again at c25, hits, and is popped at c26 with S1b's
		// bytes. RFO 1's request waited in the bus channel behind
		// RFO 0: arbitration c25 (the bus is free after c24), address c26,
		// turnaround c27, data c30..c33, popped c34: S2 performed at c34.
		Expect(got).To(Equal([]done{
			{13, "\x00\x00\x00\x00\x00\x00\x00\x00", false},
			{19, "\x00\x00\x00\x00\x00\x00\x00\x00", false},
			{26, "s1b!s1b!", false},
		}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x180, false},
			{21, "N.Cache[0]", memsys.ClassRFO, 0x100, false},
			{30, "N.Cache[0]", memsys.ClassRFO, 0x120, false},
		}))
		Expect(performed).To(Equal(map[string]clock.Cycle{"s1s1s1s1": 25, "s1b!s1b!": 25, "s2s2s2s2": 34}))
		Expect([]uint64{st.Hits, st.Misses, st.Merged, st.Fills}).To(Equal([]uint64{2, 4, 1, 3}))
	})

	It("keeps stores in program order: a store to an older miss's line, and an uncached store, wait", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, TimeLimit: 500 * clock.Microsecond})
		c := testCache()
		c.MaxMisses = 2
		n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithCache(c).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).WithPolicy(0x2000, 0x1000, memsys.Uncached).Build("N")
		Expect(err).NotTo(HaveOccurred())
		var beats []seen
		n.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.First {
				beats = append(beats, seen{o.Cycle, o.Master, o.Req.Class, o.Addr, o.Write})
			}
		})
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), []step{
			{Op: mem.Write, Addr: 0x100, Data: []byte("AAAAAAAA"), Posted: true},
			{Op: mem.Write, Addr: 0x120, Data: []byte("BBBBBBBB"), Posted: true},
			{Op: mem.Write, Addr: 0x108, Data: []byte("aaaaaaaa"), Posted: true},
			{Op: mem.Write, Addr: 0x2000, Data: []byte("uncached"), Posted: true},
		}, &got)
		performed := map[string]clock.Cycle{}
		probe := vtest.NewAgent(e, "Probe", clk, func(_ clock.Time, cy clock.Cycle) bool {
			for _, a := range []uint64{0x100, 0x120, 0x108} {
				b, _ := n.Memory.Storage().Bytes(a, 8)
				if _, ok := performed[string(b)]; !ok && b[0] != 0 {
					performed[string(b)] = cy
				}
			}
			return len(performed) < 3
		})
		probe.Start()
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse())
		// A (line 0x100) misses at c2: register 0, RFO p=2, popped c12,
		// where A is performed. B (line 0x120) misses at c3: register 1,
		// RFO p=3, which waits for the bus: arbitration c12, address c13,
		// turnaround c14, data c17..c20, popped c21. A' (0x108, line 0x100)
		// is looked up at c4: register 0 holds its line but is not the
		// youngest, so merging would let A' be performed before B: it
		// waits. At c12 its line is owned, but B is still outstanding: it
		// waits again, and is performed at c21, after B. The uncached
		// store, taken at c21 and looked up at c22, found no register
		// outstanding: its bus write is arbitrated at c23, addressed at c24
		// and moves its data at c25 (had it not waited, it would have
		// reached memory before A, B and A').
		Expect(performed).To(Equal(map[string]clock.Cycle{"AAAAAAAA": 12, "BBBBBBBB": 21, "aaaaaaaa": 21}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassRFO, 0x100, false},
			{17, "N.Cache[0]", memsys.ClassRFO, 0x120, false},
			{25, "N.Cache[0]", "cpu", 0x2000, true},
		}))
		Expect(n.Caches[0].Stats().Merged).To(BeZero())
	})

	It("is blocking with one register, as without the field: every store waits for its own miss", func() {
		got, beats, performed, st := overlap(1)
		// S1 misses at c15 (p=15) and is performed when the cache pops the
		// fill's last beat, c25; S1b is then taken at c25 and hits the
		// owned line at c26; S2 is taken at c26 and misses at c27 (p=27:
		// arbitration c28, address c29, data c33..c36, popped c37,
		// performed c37). The load of 0x188 is taken at c37 and hits at
		// c38 (popped c39), the load of 0x108 pushed at c39 hits at c41,
		// popped c42.
		Expect(got).To(Equal([]done{
			{13, "\x00\x00\x00\x00\x00\x00\x00\x00", false},
			{39, "\x00\x00\x00\x00\x00\x00\x00\x00", false},
			{42, "s1b!s1b!", false},
		}))
		Expect(beats).To(Equal([]seen{
			{8, "N.Cache[0]", memsys.ClassFill, 0x180, false},
			{21, "N.Cache[0]", memsys.ClassRFO, 0x100, false},
			{33, "N.Cache[0]", memsys.ClassRFO, 0x120, false},
		}))
		Expect(performed).To(Equal(map[string]clock.Cycle{"s1s1s1s1": 25, "s1b!s1b!": 26, "s2s2s2s2": 37}))
		Expect([]uint64{st.Hits, st.Misses, st.Merged, st.Fills}).To(Equal([]uint64{3, 3, 0, 3}))
		got0, beats0, performed0, _ := overlap(0)
		Expect(got0).To(Equal(got))
		Expect(beats0).To(Equal(beats))
		Expect(performed0).To(Equal(performed))
	})
})

var _ = Describe("Cache: a send buffer refilled with cached stores after a DMA read", func() {
	// refill runs one CPU that fills a 128-byte buffer (four lines) with
	// sixteen posted 8-byte stores, a DMA read of the whole buffer at c100
	// (as an NI's host DMA through a bridge), and the CPU's second round of
	// sixteen stores from c200. The cache has 1 KiB (8 sets of 2 ways),
	// ImplicitWriteBack (the P6's: the DMA read leaves the lines shared
	// and clean with no write-back of their own) and maxMisses registers.
	// It returns the cycle at which the second round's last bytes were
	// in memory (sampled by an agent that ticks after the cache), the
	// second round's first beats on the bus, and the stats.
	refill := func(maxMisses int) (clock.Cycle, []seen, memsys.Stats) {
		e := vtest.NewEnv(vtest.Options{Clock: clk, TimeLimit: 500 * clock.Microsecond})
		c := testCache()
		c.CapacityBytes, c.ImplicitWriteBack, c.MaxMisses = 1024, true, maxMisses
		n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithCache(c).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).Build("N")
		Expect(err).NotTo(HaveOccurred())
		var beats []seen
		n.Bus.Observe(func(now clock.Time, o bus.Observation) {
			if o.First && o.Cycle >= 200 {
				beats = append(beats, seen{o.Cycle, o.Master, o.Req.Class, o.Addr, o.Write})
			}
		})
		var steps []step
		for round, at := range []clock.Cycle{0, 200} {
			for k := range 16 {
				s := step{Op: mem.Write, Addr: 0x1000 + uint64(8*k), Data: []byte(fmt.Sprintf("r%d.w%02d..", round, k)), Posted: true}
				if k == 0 {
					s.At = at
				}
				steps = append(steps, s)
			}
		}
		var got []done
		cpuAgent(e, "Cpu", n.Caches[0].Port(), steps, &got)
		var dmaDone clock.Cycle
		dmaReadAgent(e, n.Bus, 100, 0x1000, 128, &dmaDone)
		var last clock.Cycle
		probe := vtest.NewAgent(e, "Probe", clk, func(_ clock.Time, cy clock.Cycle) bool {
			b, _ := n.Memory.Storage().Bytes(0x1000, 128)
			for k := range 16 {
				if string(b[8*k:8*k+8]) != fmt.Sprintf("r1.w%02d..", k) {
					return true
				}
			}
			last = cy
			return false
		})
		probe.Start()
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse(), "the run reached its time limit")
		Expect(dmaDone).To(BeNumerically("<", 200), "the DMA read ends before the second round")
		return last, beats, n.Caches[0].Stats()
	}

	It("claims each line with an address-only upgrade and, with four registers, overlaps the claims with the stores", func() {
		last4, beats4, st4 := refill(4)
		last1, beats1, st1 := refill(1)
		// The second round's store k is pushed at c200+k and reaches its
		// lookup at c202+k (taken a cycle after it is pushed, looked up
		// HitCycles later), the lines 0x1000, 0x1020, 0x1040, 0x1060
		// shared since the DMA read. Four registers: stores 0, 4, 8 and 12
		// each take a register and push an upgrade (p = 202, 206, 210,
		// 214); the others merge, or hit once their line's register has
		// performed its stores. Each upgrade is arbitrated at p+1 and
		// addressed at p+2, and the cache pops its completion at p+3: the
		// last register performs its stores at c217 (store 15, looked up at
		// c217, hits the line that register made dirty that very edge).
		Expect(last4).To(Equal(clock.Cycle(217)))
		Expect(beats4).To(Equal([]seen{
			{204, "N.Cache[0]", memsys.ClassUpgrade, 0x1000, false},
			{208, "N.Cache[0]", memsys.ClassUpgrade, 0x1020, false},
			{212, "N.Cache[0]", memsys.ClassUpgrade, 0x1040, false},
			{216, "N.Cache[0]", memsys.ClassUpgrade, 0x1060, false},
		}))
		// Blocking: store 0 upgrades at c202 and is performed at c205;
		// stores 1..3 are looked up at c206..c208 and hit; store 4 upgrades
		// at c209 (performed c212), and so on: every line costs 3 + 4
		// cycles, the last store is looked up at c229. With a read for
		// ownership instead of the upgrade (p+10 per line) it would have
		// been c257.
		Expect(last1).To(Equal(clock.Cycle(229)))
		Expect(beats1).To(Equal([]seen{
			{204, "N.Cache[0]", memsys.ClassUpgrade, 0x1000, false},
			{211, "N.Cache[0]", memsys.ClassUpgrade, 0x1020, false},
			{218, "N.Cache[0]", memsys.ClassUpgrade, 0x1040, false},
			{225, "N.Cache[0]", memsys.ClassUpgrade, 0x1060, false},
		}))
		// Four RFOs for the first round, four upgrades for the second; no
		// write-back (ImplicitWriteBack), and no line of data for the
		// second round.
		for _, s := range []memsys.Stats{st4, st1} {
			Expect([]uint64{s.Fills, s.Upgrades, s.WriteBacks}).To(Equal([]uint64{4, 4, 4}))
		}
		// Merged with four registers: in the first round the RFOs take
		// longer than the stores, so stores 1-3, 5-7, 9-11 and 13-15 all
		// merge (12); in the second, stores 3, 7, 11 and 15 are looked up
		// in the edge their line's register performs its stores and hit,
		// so 8 merge.
		Expect(st4.Merged).To(Equal(uint64(12 + 8)))
	})
})
