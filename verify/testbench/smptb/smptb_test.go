package smptb_test

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/smptb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The address map of the specs: each shared word on a 64-byte line of its
// own («A cache line is 64 bytes», MC-P17), so the lock's line and the
// data's line move between the caches independently.
const (
	lockAddr    = 0x1_0000
	counterAddr = 0x1_0040
	countAddr   = 0x1_0080 // the barrier's arrival counter
	senseAddr   = 0x1_00c0 // the barrier's sense flag
	slotAddr    = 0x1_0100 // the barrier spec's per-CPU slots, a line each
	dataAddr    = 0x2_0000 // the line the DMA spec's CPU holds under LoadLocked
	otherAddr   = 0x3_0000 // a line only the DMA writes (determinism spec)
)

// backoff is the cycles a waiter computes between two reads of a held lock
// or an unflipped barrier flag (program code, not hardware: as
// docs/host-programs.md's example).
const backoff = 10

var alpha = platform.AlphaServer2100()

// cpuCycle is one 233 MHz CPU cycle («four 21064A processors operating at
// 233 MHz», MC-P14).
var cpuCycle = alpha.CPU.Clock

// newNode builds the 4-CPU AlphaServer node on a spec environment.
func newNode(traced bool, order []int) (*env.Env, *smptb.Node) {
	e := vtest.NewEnv(vtest.Options{Clock: alpha.CPU.Clock, Trace: traced, TimeLimit: 10 * clock.Millisecond, Seed: 1})
	b := smptb.MakeBuilder().WithEnv(e)
	if order != nil {
		b = b.WithCreationOrder(order)
	}
	n, err := b.Build("N")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(n.Close)
	return e, n
}

func run(e *env.Env) env.Result {
	res, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Stopped).To(BeFalse(), "the run hit its time limit")
	return res
}

func word(n *smptb.Node, addr uint64) uint32 {
	b, err := n.Memory().Storage().Bytes(addr, 4)
	Expect(err).NotTo(HaveOccurred())
	return binary.LittleEndian.Uint32(b)
}

// lockRun starts CounterProgram with k rounds on each of the node's CPUs
// (20 cycles of work inside the lock); after the run, holds has the holds
// in the order they ended and failed the store-conditionals the programs
// saw fail.
func lockRun(n *smptb.Node, k int) (holds *[]smptb.Hold, failed *int) {
	lock := smptb.Lock{Addr: lockAddr, Backoff: backoff}
	holds, failed = new([]smptb.Hold), new(int)
	for i, c := range n.CPUs {
		c.Run(cpu.Go(smptb.CounterProgram(i, lock, counterAddr, k, 20, func(h smptb.Hold) { *holds = append(*holds, h) }, failed)))
	}
	return holds, failed
}

var _ = Describe("the AlphaServer 2100 4/233 node", func() {
	It("is built from the preset: four CPUs with their 1 MB caches on one memory bus, the T2 bridge and 32-bit PCI", func() {
		_, n := newNode(false, nil)
		Expect(n.CPUs).To(HaveLen(4))
		Expect(n.Caches()).To(HaveLen(4))
		for _, c := range n.Caches() {
			// The last level of the preset: «The secondary cache size is 1
			// Mbyte.» (MC-P16), «A cache line is 64 bytes.» (MC-P17).
			Expect(c.Config().CapacityBytes).To(Equal(1 << 20))
			Expect(c.Config().LineBytes).To(Equal(64))
		}
		Expect(n.Memory().Storage().Size()).To(Equal(uint64(256 << 20))) // «256MB of shared memory» (MC-P14)
		Expect(n.MemBus().Config().Name).To(Equal("sable-sysbus"))
		Expect(n.PCI.Config().WidthBytes).To(Equal(4)) // «the 32-bit AlphaServer 2100 PCI bus» (MC-P2)
		Expect(n.Bridge.Config().Name).To(Equal("t2"))
	})

	It("refuses bad parameters with an error naming the parameter", func() {
		e := env.New(env.Options{})
		for _, c := range []struct {
			b    smptb.Builder
			want string
		}{
			{smptb.MakeBuilder(), "no env"},
			{smptb.MakeBuilder().WithEnv(e).WithCPUs(0), "CPUs 0"},
			{smptb.MakeBuilder().WithEnv(e).WithCPUs(5), "CPUs 5 must be 1 to the host's CPU.Count 4"},
			{smptb.MakeBuilder().WithEnv(e).WithCreationOrder([]int{0, 1, 1, 3}), "creation order"},
			{smptb.MakeBuilder().WithEnv(e).WithCreationOrder([]int{0, 1}), "creation order"},
			{smptb.MakeBuilder().WithEnv(e).WithDMA(smptb.DMAConfig{BufferBytes: 64, BurstBytes: 0, QueueDepth: 1}), "DMA.BurstBytes 0"},
			{smptb.MakeBuilder().WithEnv(e).WithDMA(smptb.DMAConfig{BufferBytes: 64, BurstBytes: 6, QueueDepth: 1}), "DMA.BurstBytes 6 must be a multiple of IOBus.WidthBytes 4"},
			{smptb.MakeBuilder().WithEnv(e).WithDMA(smptb.DMAConfig{BufferBytes: 64, BurstBytes: 64, QueueDepth: 0}), "DMA.QueueDepth 0"},
			{smptb.MakeBuilder().WithEnv(e).WithDMA(smptb.DMAConfig{BufferBytes: 64, BurstBytes: 64, SetupCycles: -1, QueueDepth: 1}), "DMA.SetupCycles -1"},
			{smptb.MakeBuilder().WithEnv(e).WithHost(func() platform.Host { h := platform.AlphaServer2100(); h.Memory.LatencyNs = 0; return h }()), "Memory.LatencyNs"},
			{smptb.MakeBuilder().WithEnv(e).WithIOBusName("E.ISA"), "I/O bus name \"E.ISA\""},
		} {
			_, err := c.b.Build("N")
			Expect(err).To(MatchError(ContainSubstring(c.want)))
		}
		_, err := smptb.BuildNode(e, platform.AlphaServer2100(), 4)
		Expect(err).NotTo(HaveOccurred())
		n, err := smptb.BuildNode(e, platform.AlphaServer2100(), 2)
		Expect(err).NotTo(HaveOccurred())
		_, err = n.DMAWrite(0, dataAddr, nil)
		Expect(err).To(MatchError(ContainSubstring("no bytes")))
		_, err = n.DMAWrite(0, dataAddr, make([]byte, 8<<10+1))
		Expect(err).To(MatchError(ContainSubstring("exceeds DMA.BufferBytes 8192")))
	})

	It("names the I/O bus after the host's (WithIOBusName): a SHRIMP node's EISA", func() {
		e := env.New(env.Options{})
		n, err := smptb.MakeBuilder().WithEnv(e).WithHost(platform.DEC560ST()).WithoutDMA().
			WithIOBusName("EISA").Build("N0")
		Expect(err).NotTo(HaveOccurred())
		Expect(n.PCI.Name()).To(Equal("N0.EISA"))
		Expect(n.PCI.Config().WidthBytes).To(Equal(4)) // EISA's 32-bit data path
		d, err := smptb.MakeBuilder().WithEnv(e).WithHost(platform.DEC560ST()).WithoutDMA().Build("N1")
		Expect(err).NotTo(HaveOccurred())
		Expect(d.PCI.Name()).To(Equal("N1.PCI")) // the default
	})

	It("builds every preset (its own I/O bus and bridge) and runs a CPU's load on it", func() {
		for _, name := range platform.Names() {
			h, _ := platform.Lookup(name)
			e := env.New(env.Options{})
			n, err := smptb.BuildNode(e, h, h.CPU.Count)
			Expect(err).NotTo(HaveOccurred(), name)
			Expect(n.Memory().Storage().Write(0x4000, []byte("node"))).To(Succeed())
			var got []byte
			n.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { got = p.Load(0x4000, 4) }))
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred(), name)
			Expect(string(got)).To(Equal("node"), name)
		}
	})

	It("keeps a shared counter under an LL/SC spin lock: 4 CPUs x 10 rounds end at 40, holds disjoint, store-conditionals fail", func() {
		const k = 10
		e, n := newNode(false, nil)
		hp, fp := lockRun(n, k)
		run(e)
		holds, failed := *hp, *fp
		Expect(word(n, counterAddr)).To(Equal(uint32(4 * k)))
		Expect(holds).To(HaveLen(4 * k))
		slices.SortFunc(holds, func(a, b smptb.Hold) int { return int(a.From - b.From) })
		perCPU := map[int]int{}
		for i, h := range holds {
			perCPU[h.CPU]++
			// Each holder read the value its predecessor left: the
			// sections ran one after the other, in the order they began.
			Expect(h.Seen).To(Equal(uint32(i)), "hold %d (CPU %d)", i, h.CPU)
			Expect(h.Till).To(BeNumerically(">", h.From))
			if i > 0 {
				Expect(h.From).To(BeNumerically(">", holds[i-1].Till), "hold %d (CPU %d) began before hold %d (CPU %d) ended", i, h.CPU, i-1, holds[i-1].CPU)
			}
		}
		Expect(perCPU).To(Equal(map[int]int{0: k, 1: k, 2: k, 3: k}))
		// Contention shows: two CPUs saw the lock free and both
		// load-locked it; the later store-conditional failed.
		var scFailed, lost uint64
		for _, c := range n.Caches() {
			scFailed += c.Stats().SCFailed
			lost += c.Stats().ReservationsLost
		}
		GinkgoWriter.Printf("%d holds, %d store-conditionals failed (%d reservations lost)\n", len(holds), scFailed, lost)
		Expect(failed).To(BeNumerically(">", 0))
		Expect(scFailed).To(Equal(uint64(failed)), "the caches' count of failed store-conditionals is the programs'")
		Expect(n.Mem.CheckCoherence()).To(Succeed())
	})

	It("lets nobody leave a sense-reversing barrier's round before all four CPUs arrived at it, and shows each what all stored before it", func() {
		const rounds = 4
		e, n := newNode(false, nil)
		bar := smptb.Barrier{Count: countAddr, Sense: senseAddr, N: 4, Backoff: backoff}
		var arrive, leave [rounds][4]clock.Time
		var seen [rounds][4][4]uint32 // seen[r][i][j]: CPU i's read of CPU j's slot after round r
		for i, c := range n.CPUs {
			c.Run(cpu.Go(func(p *cpu.Proc) {
				var sense uint32
				for r := range rounds {
					// Uneven work: a different CPU arrives last in each
					// round.
					p.Compute(100 + 400*((i+r)%4))
					// Publish this round's value in the CPU's slot (a
					// line of its own) before arriving; the fence is the
					// Alpha's MB that makes it visible first.
					p.Store32(slotAddr+64*uint64(i), uint32(r+1))
					p.Fence()
					arrive[r][i] = p.Now()
					bar.Wait(p, &sense)
					leave[r][i] = p.Now()
					for j := range 4 {
						seen[r][i][j] = p.Load32(slotAddr + 64*uint64(j))
					}
				}
			}))
		}
		run(e)
		for r := range rounds {
			last := slices.Max(arrive[r][:])
			first := slices.Min(leave[r][:])
			GinkgoWriter.Printf("round %d: arrivals %v, departures %v\n", r, arrive[r], leave[r])
			Expect(first).To(BeNumerically(">", last), "round %d: a CPU left at %v before the last arrival at %v", r, first, last)
			// The last to arrive is CPU (3-r) mod 4, the one with the most
			// work in round r; the others waited for it.
			Expect(slices.Index(arrive[r][:], last)).To(Equal((3 - r + 4) % 4))
			// Everything stored before the barrier is seen after it: no
			// CPU reads a slot's value of an earlier round (a CPU that
			// left first may already have stored its next round's value,
			// r+2, before a slower one reads it).
			for i := range 4 {
				for j := range 4 {
					Expect(seen[r][i][j]).To(BeElementOf(uint32(r+1), uint32(r+2)), "round %d: CPU %d's read of CPU %d's slot", r, i, j)
				}
			}
		}
		Expect(word(n, countAddr)).To(BeZero(), "the last arrival resets the counter")
		Expect(word(n, senseAddr)).To(Equal(uint32(rounds % 2)))
	})

	Describe("a DMA write into a line a CPU holds under LoadLocked", func() {
		// llRun: CPU 0 load-locks dataAddr (a cold miss), optionally starts
		// the PCI master's DMA write of 8 bytes to that line, waits until
		// the DMA's write is on the memory bus (or, without it, for 200
		// cycles), then store-conditionals the line and loads it again.
		type result struct {
			ll, sc, load          clock.Time // when each retired
			llCycles, loadCycles  clock.Cycle
			ok                    bool
			got                   uint32
			heldBefore, heldAfter bool
			fills                 []clock.Time // N.Cache[0]'s fills on the memory bus (last beat)
			dmaOnBus              clock.Time
		}
		llRun := func(withDMA bool) (result, *smptb.Node) {
			e, n := newNode(true, nil)
			var r result
			n.MemBus().Observe(func(now clock.Time, o bus.Observation) {
				switch {
				case o.Master == "N.Bridge.Up" && o.Write && o.Last:
					r.dmaOnBus = now
				case o.Master == "N.Cache[0]" && !o.Write && o.Last && o.Req.Class == memsys.ClassFill:
					r.fills = append(r.fills, now)
				}
			})
			c0 := n.Caches()[0]
			n.CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				Expect(p.LoadLocked32(dataAddr)).To(BeZero())
				r.ll = p.Now()
				r.heldBefore, _ = c0.Holds(dataAddr)
				if withDMA {
					_, err := n.DMAWrite(p.Now(), dataAddr, []byte{0x11, 0x22, 0x33, 0x44, 5, 6, 7, 8})
					Expect(err).NotTo(HaveOccurred())
					p.PollUntil(func() bool { return r.dmaOnBus != 0 })
				} else {
					p.Compute(200)
				}
				// The cache applies a snoop at its next edge after the bus
				// beat; two cycles later it has.
				p.Compute(2)
				r.heldAfter, _ = c0.Holds(dataAddr)
				r.ok = p.StoreConditional32(dataAddr, 0x99)
				r.sc = p.Now()
				r.got = p.Load32(dataAddr)
				r.load = p.Now()
			}))
			run(e)
			r.llCycles = cpuCycle.Cycles(r.ll)
			r.loadCycles = cpuCycle.Cycles(r.load - r.sc)
			return r, n
		}

		// missCycles is a load's time in CPU cycles from cycle c (an idle
		// bus, the line in no cache), worked out from the preset: the CPU
		// channel's register cycle and the cache lookup (HitCycles 6) put
		// the fill on the cache's bus channel at cycle c+7; a bus cycle is
		// 7 CPU cycles (the system bus is 233 MHz / 7), and the bus starts
		// it at its first edge after that, s = (c+7)/7 + 1 (arbitration
		// hidden); address 1 + decode 1 + memory 2 (memoryCycles: 300 ns -
		// 34.3 - 210.3 = 55.4 ns, 2 cycles) + 4 beats of 16 bytes for the
		// 64-byte line = 8 bus cycles to the last beat at s+8; the data
		// reaches the CPU 2 cycles after that edge, at 7(s+8)+2.
		missCycles := func(c clock.Cycle) clock.Cycle {
			s := (c+7)/7 + 1
			return 7*(s+8) + 2 - c
		}

		It("breaks the reservation: the store-conditional fails and the next load misses, paying a fill", func() {
			r, n := llRun(true)
			GinkgoWriter.Printf("LL retired c%d, DMA on the memory bus at %v, SC retired at %v (c%d), load %d cycles, fills %v\n",
				r.llCycles, r.dmaOnBus, r.sc, cpuCycle.Cycles(r.sc), r.loadCycles, r.fills)
			// The cold load-locked from cycle 0: s = 7/7+1 = 2, data at
			// 7x10+2 = 72 cycles (309.0 ns, about the preset's 300 ns).
			Expect(r.llCycles).To(Equal(clock.Cycle(72)))
			Expect(missCycles(0)).To(Equal(clock.Cycle(72)))
			Expect(r.heldBefore).To(BeTrue())
			Expect(r.dmaOnBus).To(BeNumerically(">", r.ll))
			Expect(r.heldAfter).To(BeFalse(), "the DMA write invalidated the line")
			Expect(r.ok).To(BeFalse(), "the store-conditional after the DMA write must fail")
			c0 := n.Caches()[0].Stats()
			Expect(c0.SCFailed).To(Equal(uint64(1)))
			Expect(c0.ReservationsLost).To(Equal(uint64(1)))
			// The load sees the DMA's data, not the failed store's, and
			// misses: a second fill of the line on the memory bus, after
			// the store-conditional.
			Expect(r.got).To(Equal(uint32(0x44332211)))
			Expect(r.fills).To(HaveLen(2))
			Expect(r.fills[1]).To(BeNumerically(">", r.sc))
			Expect(c0.Misses).To(Equal(uint64(2)))
			Expect(r.loadCycles).To(Equal(missCycles(cpuCycle.Cycles(r.sc))))
			// The DMA crossed the bridge: one PCI write into the bridge's
			// Up direction, posted to the memory bus.
			_, up := n.Bridge.Stats()
			Expect(up).NotTo(BeZero())
			Expect(n.DMADone()).To(HaveLen(1))
			Expect(n.DMADone()[0].Err).To(BeEmpty())
		})

		It("without the DMA, the store-conditional succeeds and the next load hits in HitCycles", func() {
			r, n := llRun(false)
			Expect(r.heldAfter).To(BeTrue())
			Expect(r.ok).To(BeTrue())
			Expect(r.got).To(Equal(uint32(0x99)))
			Expect(r.fills).To(HaveLen(1))
			// A hit: the channel's 2 register cycles + HitCycles 6 = 8.
			Expect(r.loadCycles).To(Equal(clock.Cycle(8)))
			Expect(n.Caches()[0].Stats().SCFailed).To(BeZero())
		})
	})

	It("carries an 8-byte DMA write over PCI and across the T2 bridge onto the memory bus in the cycles the presets give", func() {
		e, n := newNode(true, nil)
		_, err := n.DMAWrite(0, dataAddr, []byte("12345678"))
		Expect(err).NotTo(HaveOccurred())
		run(e)
		find := func(path, kind string) trace.Record {
			for _, r := range e.Trace.Records() {
				if r.Path == path && r.Kind == kind {
					return r
				}
			}
			Fail("no " + kind + " record at " + path)
			return trace.Record{}
		}
		start := func(r trace.Record) clock.Cycle {
			v, ok := r.Get("start")
			Expect(ok).To(BeTrue())
			c, err := strconv.Atoi(v)
			Expect(err).NotTo(HaveOccurred())
			return clock.Cycle(c)
		}
		pciRec := find("N.PCI", "bus.dma.write")
		brRec := find("N.Bridge.Up", "bridge.dma.write")
		memRec := find("N.Bus", "bus.dma.write")
		GinkgoWriter.Printf("PCI c%d (start %d), bridge c%d, memory bus c%d (start %d)\n",
			pciRec.Cycle, start(pciRec), brRec.Cycle, memRec.Cycle, start(memRec))
		// On PCI (PCI32: arbitration hidden in the start cycle, address 1,
		// decode 1, then 8 bytes in 2 beats of 4): the last beat at start
		// + 1 + 1 + 2.
		Expect(pciRec.Cycle).To(Equal(start(pciRec) + 4))
		// The bridge takes the write at PCI edge b (its record) and posts
		// it; it reaches the memory-bus side at the first memory-bus edge
		// after PCI edge b + CrossCycles 4 (rtl/bus BridgeConfig), where
		// the transaction starts: PCI edge b+4 is at (b+4) x 30 ns, and a
		// memory-bus cycle is 7 CPU cycles (30.04 ns). In this run b is 16
		// (the DMA engine's setup and buffer read put the PCI write at
		// 11..15): (16+4) x 30 ns = 600 ns, between memory-bus edges 19
		// (570.8 ns) and 20 (600.9 ns), so start 20 and the beat at 23.
		pci, mb := n.PCI.Config().Clock, n.MemBus().Config().Clock
		b := brRec.Cycle
		Expect(start(memRec)).To(Equal(mb.CycleAt(pci.TimeOf(b+4)) + 1))
		// On the memory bus (sable-sysbus: arbitration hidden in the start
		// cycle, address 1, decode 1): 8 bytes are one 16-byte beat, at
		// start + 3.
		Expect(memRec.Cycle).To(Equal(start(memRec) + 3))
		Expect(word(n, dataAddr)).To(Equal(uint32(0x34333231)))
	})

	It("carries a DMA write of four lines across the bridge: each CPU's copy of its line is invalidated and memory has the data", func() {
		e, n := newNode(true, nil)
		const base = 0x4_0000
		payload := make([]byte, 4*64)
		for i := range payload {
			payload[i] = byte(i*7 + 1)
		}
		var before, after [4]bool
		var reloaded [4][]byte
		dmaOnBus := 0
		n.MemBus().Observe(func(now clock.Time, o bus.Observation) {
			if o.Master == "N.Bridge.Up" && o.Write && o.Last {
				dmaOnBus++
			}
		})
		started := 0
		for i, c := range n.CPUs {
			line := uint64(base + 64*i)
			c.Run(cpu.Go(func(p *cpu.Proc) {
				p.Load32(line) // brings the line into CPU i's cache
				before[i], _ = n.Caches()[i].Holds(line)
				started++
				if started == 4 {
					_, err := n.DMAWrite(p.Now(), base, payload)
					Expect(err).NotTo(HaveOccurred())
				}
				p.PollUntil(func() bool { return len(n.DMADone()) == 1 && dmaOnBus == 4 })
				p.Compute(2) // the snoop applies at the cache's next edge
				after[i], _ = n.Caches()[i].Holds(line)
				reloaded[i] = p.Load(line, 8)
			}))
		}
		run(e)
		Expect(before).To(Equal([4]bool{true, true, true, true}))
		Expect(after).To(Equal([4]bool{false, false, false, false}))
		for i := range 4 {
			Expect(reloaded[i]).To(Equal(payload[64*i:64*i+8]), "CPU %d", i)
			s := n.Caches()[i].Stats()
			Expect(s.Invalidations).To(Equal(uint64(1)), "CPU %d", i)
			Expect(s.Fills).To(Equal(uint64(2)), "CPU %d: the cold fill and the refill", i)
		}
		got, err := n.Memory().Storage().Bytes(base, len(payload))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(payload))
		// One memory-bus write per 64-byte line: the bridge re-arbitrates
		// per line (HoldMemoryBus false in the T2 preset).
		Expect(dmaOnBus).To(Equal(4))
	})

	It("gives a byte-identical trace whatever order the CPUs are created in, and on a second run", func() {
		traceOf := func(order []int) []string {
			e, n := newNode(true, order)
			lockRun(n, 6)
			_, err := n.DMAWrite(0, otherAddr, []byte("dma-data"))
			Expect(err).NotTo(HaveOccurred())
			run(e)
			Expect(word(n, counterAddr)).To(Equal(uint32(24)))
			var out []string
			for _, r := range e.Trace.Records() {
				out = append(out, r.Format())
			}
			return out
		}
		Expect(vtest.SameInEveryOrder(4, traceOf)).To(BeEmpty())
		a, b := traceOf(nil), traceOf(nil)
		Expect(cmp.Diff(a, b)).To(BeEmpty())
		kinds := map[string]bool{}
		for _, r := range a {
			kinds[strings.Fields(r)[3]] = true
		}
		GinkgoWriter.Printf("%d trace records\n", len(a))
		for _, k := range []string{"cache.fill", "cache.invalidate", "cache.scfail", "bus.dma.write", "bridge.dma.write"} {
			Expect(kinds).To(HaveKey(k))
		}
	})
})
