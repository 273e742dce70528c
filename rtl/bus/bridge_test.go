package bus_test

import (
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// memBusConfig is the test memory bus: 66.67 MHz (15 ns, two edges per
// PCI cycle), 8 bytes wide, one arbitration cycle, one address cycle, no
// decode or turnaround wait, no idle cycle, bursts of one 32-byte line.
func memBusConfig() bus.Config {
	clk, _ := clock.Ratio(200_000_000, 3)
	return bus.Config{Name: "membus", Clock: clk, WidthBytes: 8, ArbCycles: 1, AddrCycles: 1,
		DecodeCycles: 0, ReadTurnaround: 0, IdleCycles: 0, MaxBurstBytes: 32}
}

// ratio is a clock of num/den Hz.
func ratio(num, den uint64) clock.Clock {
	c, err := clock.Ratio(num, den)
	if err != nil {
		panic(err)
	}
	return c
}

// op is one request of a test master and when it finished.
type op struct {
	Req  *mem.Req
	Data []byte
	// At is the master's earliest cycle to issue it; it also waits for
	// the previous op to finish.
	At clock.Cycle
	// Done is the master's cycle in which it popped the last read beat or
	// the completion, or pushed the last beat of a posted write.
	Done clock.Cycle
	Got  []byte
}

// runMaster drives ops in order on a bus master channel.
func runMaster(e *env.Env, b *bus.Bus, name string, ops []*op) {
	ch, err := b.AddMaster(name)
	Expect(err).NotTo(HaveOccurred())
	w := b.Config().WidthBytes
	clk := b.Config().Clock
	i, k := 0, 0 // current op, next beat of it
	var beats []mem.Beat
	waiting := false
	a := vtest.NewAgent(e, name, clk, func(now clock.Time, c clock.Cycle) bool {
		if i >= len(ops) {
			return false
		}
		o := ops[i]
		if beat, ok := ch.Up.Pop(now); ok {
			o.Got = append(o.Got, beat.Data...)
			if beat.Last {
				o.Done = c
				i, k, beats, waiting = i+1, 0, nil, false
				return i < len(ops)
			}
		}
		if waiting || c < o.At {
			return true
		}
		if beats == nil {
			o.Req.Master = name
			if o.Req.Op == mem.Write {
				beats = mem.WriteBeats(o.Req, o.Data, w)
			} else {
				beats = []mem.Beat{{Req: o.Req, First: true, Last: true}}
			}
		}
		if k < len(beats) && ch.Down.CanPush(now) {
			ch.Down.Push(now, beats[k])
			k++
			if k == len(beats) {
				if o.Req.Op == mem.Write && o.Req.Posted {
					o.Done = c
					i, k, beats = i+1, 0, nil
				} else {
					waiting = true
				}
			}
		}
		return true
	})
	ch.ConnectMaster(a)
	a.Start()
}

// rig is a memory bus with host memory, a 32-bit PCI bus with a device,
// and a bridge between them.
type rig struct {
	e        *env.Env
	mb, pci  *bus.Bus
	mem, dev *mem.Memory
	br       *bus.Bridge
}

// testBridge is the bridge of the directed specs: small numbers so that
// the cycles can be followed by hand.
func testBridge() bus.BridgeConfig {
	return bus.BridgeConfig{Name: "test", PostedWriteBytes: 64, CrossCycles: 1, DelayedReadCycles: 2,
		ReadHitCycles: 1, LineBytes: 32, ReadBufferBytes: 128, PrefetchBytes: 0}
}

// newRig builds the rig: host memory at 0 on the memory bus (latency
// memLatency memory-bus cycles, 8 bytes per cycle), a device memory at
// 0x80000000 on PCI (latency 1), the DMA window [0, 64 KiB) on PCI onto
// memory and the PIO window [0x80000000, +4 KiB) on the memory bus onto
// the device.
func newRig(mc bus.Config, cfg bus.BridgeConfig, memLatency int) *rig {
	return newRigOn(vtest.NewEnv(vtest.Options{Clock: mc.Clock, Trace: true}), mc, cfg, memLatency)
}

// newRigOn builds the rig in e.
func newRigOn(e *env.Env, mc bus.Config, cfg bus.BridgeConfig, memLatency int) *rig {
	r := &rig{e: e}
	var err error
	r.mb, err = bus.MakeBuilder().WithEnv(r.e).WithConfig(mc).Build("MemBus")
	Expect(err).NotTo(HaveOccurred())
	r.pci, err = bus.MakeBuilder().WithEnv(r.e).WithConfig(bus.PCI32()).Build("PCI")
	Expect(err).NotTo(HaveOccurred())
	r.mem, err = mem.MakeBuilder().WithEnv(r.e).WithClock(mc.Clock).WithSize(1 << 16).
		WithLatency(memLatency).WithBytesPerCycle(8).WithPortWidth(8).Build("Mem")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.mb.AddTarget("Mem", 0, 1<<16, r.mem.Port(0))).To(Succeed())
	r.dev, err = mem.MakeBuilder().WithEnv(r.e).WithClock(bus.PCI32().Clock).WithSize(1 << 12).
		WithLatency(1).WithBytesPerCycle(4).WithPortWidth(4).Build("Dev")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.pci.AddTarget("Dev", 0x80000000, 1<<12, r.dev.Port(0))).To(Succeed())
	r.br, err = bus.MakeBridgeBuilder().WithEnv(r.e).WithConfig(cfg).WithBuses(r.mb, r.pci).
		WithDMAWindow(0, 1<<16, 0).WithPIOWindow(0x80000000, 1<<12, 0x80000000).Build("Br")
	Expect(err).NotTo(HaveOccurred())
	return r
}

// records returns the formatted trace records of path.
func (r *rig) records(path string) []string {
	var out []string
	for _, rec := range r.e.Trace.Records() {
		if rec.Path == path {
			out = append(out, rec.Format())
		}
	}
	return out
}

// beat is a memory-bus data phase as an observer saw it.
type beat struct {
	Cycle  clock.Cycle
	Master string
	Addr   uint64
	Write  bool
}

func (r *rig) watch() *[]beat {
	var got []beat
	r.mb.Observe(func(_ clock.Time, o bus.Observation) {
		got = append(got, beat{o.Cycle, o.Master, o.Addr, o.Write})
	})
	return &got
}

var _ = Describe("Bridge", func() {
	// Clocks: PCI 33.33 MHz (30 ns), memory bus 66.67 MHz (15 ns), so PCI
	// cycle p is memory-bus cycle 2p. The test memory bus has one
	// arbitration and one address cycle and no decode, turnaround or idle
	// cycles, and no hidden arbitration; PCI has arbitration 1 (hidden
	// when the bus was busy the cycle before), address 1,
	// decode/turnaround 1, idle 1.

	It("posts a DMA write: the PCI master is done when the bridge has it, the memory-bus write follows", func() {
		r := newRig(memBusConfig(), testBridge(), 16)
		seen := r.watch()
		data := []byte("ABCDEFGH")
		ni := []*op{{Req: &mem.Req{Op: mem.Write, Addr: 0x100, Len: 8, Class: "dma", Posted: true}, Data: data}}
		runMaster(r.e, r.pci, "NI", ni)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// PCI: the NI pushes its two beats at p0 and p1 (done at p1);
		// ARB p1, ADDR p2, DECODE p3, data p4 and p5.
		Expect(ni[0].Done).To(Equal(clock.Cycle(1)))
		Expect(r.records("PCI")).To(Equal([]string{
			"150000 5 PCI bus.dma.write master=NI target=Br.Up addr=0x100 len=8 start=1 waits=0 posted=1 hash=" + trace.HashBytes(data)}))
		// The bridge sees the request at p5 and takes a beat at p5 and
		// p6 into its posted-write buffer (memory-bus edges 10 and 12):
		// the PCI side is done at p6.
		Expect(r.records("Br.Up")).To(Equal([]string{
			"180000 6 Br.Up bridge.dma.write master=NI addr=0x100 len=8 start=5 posted=1 hash=" + trace.HashBytes(data)}))
		// The write op, pushed at p5, crosses in CrossCycles = 1 (p6 =
		// memory edge 12) and is seen at memory edge 13, where the far
		// half has the whole line piece (8 bytes) and starts it: ARB 14,
		// ADDR 15, data phase 16 (no decode).
		Expect(*seen).To(Equal([]beat{{16, "Br.Up", 0x100, true}}))
		back, _ := r.mem.Storage().Bytes(0x100, 8)
		Expect(back).To(Equal(data))
	})

	It("posts a CPU's PIO write to a device on PCI", func() {
		r := newRig(memBusConfig(), testBridge(), 4)
		data := []byte("pio data")
		cpu := []*op{{Req: &mem.Req{Op: mem.Write, Addr: 0x80000010, Len: 8, Class: "pio", Posted: true}, Data: data}}
		runMaster(r.e, r.mb, "CPU", cpu)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Memory bus: the CPU pushes at m0; ARB m1, ADDR m2, data m3.
		// The bridge takes the 8-byte beat at m4 (done for the CPU); the
		// op crosses in 1 cycle (m5 = 75 ns) and the far half sees it at
		// the next PCI edge, p3, with the data (pushed at m4 = p2): it
		// starts the write with the first 4 bytes at p3 and pushes the
		// second at p4 (PIO writes are never held back for a line): ARB
		// p4, ADDR p5, DECODE p6, data p7 and p8.
		Expect(r.records("MemBus")).To(Equal([]string{
			"45000 3 MemBus bus.pio.write master=CPU target=Br.Down addr=0x80000010 len=8 start=1 waits=0 posted=1 hash=" + trace.HashBytes(data)}))
		Expect(r.records("Br.Down")).To(Equal([]string{
			"60000 4 Br.Down bridge.pio.write master=CPU addr=0x80000010 len=8 start=4 posted=1 hash=" + trace.HashBytes(data)}))
		Expect(r.records("PCI")).To(Equal([]string{
			"240000 8 PCI bus.pio.write master=Br.Down target=Dev addr=0x80000010 len=8 start=4 waits=0 posted=1 hash=" + trace.HashBytes(data)}))
		back, _ := r.dev.Storage().Bytes(0x10, 8)
		Expect(back).To(Equal(data))
	})

	It("retries a PIO write its full posted-write buffer cannot take instead of holding the memory bus", func() {
		cfg := testBridge()
		cfg.PostedWriteBytes = 32
		r := newRig(memBusConfig(), cfg, 4)
		var cpu []*op
		var want []byte
		for i := range 3 {
			d := make([]byte, 32)
			for k := range d {
				d[k] = byte(32*i + k)
			}
			want = append(want, d...)
			cpu = append(cpu, &op{Req: &mem.Req{Op: mem.Write, Addr: uint64(0x80000100 + 32*i), Len: 32, Class: "pio", Posted: true}, Data: d})
		}
		runMaster(r.e, r.mb, "CPU", cpu)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		back, _ := r.dev.Storage().Bytes(0x100, 96)
		Expect(back).To(Equal(want))
		// The memory bus moves 32 bytes in 4 cycles, PCI in 8 cycles of
		// twice the length: the second and third writes find the buffer
		// still full and are retried; the memory bus never waits in a
		// data phase.
		down, _ := r.br.Stats()
		Expect(down.WriteRetries).To(BeNumerically(">", 0))
		Expect(r.mb.Stats().Retries).To(Equal(down.WriteRetries))
		Expect(r.mb.Stats().WaitCycles).To(BeZero())
	})

	It("answers a first DMA read with retries until its delayed read has fetched the data", func() {
		r := newRig(memBusConfig(), testBridge(), 4)
		Expect(r.mem.Storage().Write(0x200, []byte("abcdefgh"))).To(Succeed())
		seen := r.watch()
		ni := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 8, Class: "dma"}}}
		runMaster(r.e, r.pci, "NI", ni)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// p1 ARB, p2 ADDR: the bridge has nothing, latches the read and
		// retries it; the NI tries again every 2 cycles (ADDR, idle;
		// arbitration hidden) at p4, p6, ...
		// p3: the near half takes the latch; the read crosses in
		// CrossCycles + DelayedReadCycles = 3 cycles (p6 = memory edge
		// 12) and the far half sees it at memory edge 13 and asks for
		// the line piece [0x200, 0x208): ARB 14, ADDR 15, the memory takes
		// it at 16 and has data at 16+4 = 20, the bus moves it at 21.
		Expect(*seen).To(Equal([]beat{{21, "Br.Up", 0x200, false}}))
		// The far half pushes it across at memory edge 22 (= p11); the near
		// half has it at p12. The attempt at p12 still sees the state of
		// p11 and is retried; the one at p14 goes ahead: DECODE p15, the
		// bridge sees the request at p15 and has data ReadHitCycles = 1
		// later, p16 and p17; the bus moves them at p17 and p18; the NI
		// pops the last at p19.
		Expect(ni[0].Done).To(Equal(clock.Cycle(19)))
		Expect(ni[0].Got).To(Equal([]byte("abcdefgh")))
		Expect(r.records("PCI")).To(Equal([]string{
			"540000 18 PCI bus.dma.read master=NI target=Br.Up addr=0x200 len=8 start=14 waits=1 hash=" + trace.HashBytes([]byte("abcdefgh"))}))
		Expect(r.records("Br.Up")).To(Equal([]string{
			"510000 17 Br.Up bridge.dma.read master=NI addr=0x200 len=8 start=15 hit=0 first=16 hash=" + trace.HashBytes([]byte("abcdefgh"))}))
		// Six retried attempts: p2, p4, p6, p8, p10, p12.
		Expect(r.pci.Stats().Retries).To(Equal(uint64(6)))
		_, up := r.br.Stats()
		Expect(up.ReadMisses).To(Equal(uint64(1)))
		Expect(up.ReadHits).To(Equal(uint64(0)))
		Expect(up.Retries).To(Equal(uint64(6)))
	})

	It("holds a DMA read in wait states instead of retrying it, with IOReadWaitStates (EISA)", func() {
		cfg := testBridge()
		cfg.IOReadWaitStates = true
		r := newRig(memBusConfig(), cfg, 4)
		Expect(r.mem.Storage().Write(0x200, []byte("abcdefgh"))).To(Succeed())
		seen := r.watch()
		ni := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 8, Class: "dma"}}}
		runMaster(r.e, r.pci, "NI", ni)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// p1 ARB, p2 ADDR: the bridge takes the read (no retry), DECODE
		// p3, where the near half accepts it; it crosses in CrossCycles =
		// 1 (p4 = memory edge 8; DelayedReadCycles does not apply) and the
		// far half sees it at m9: ARB 10, ADDR 11, the memory takes it at
		// 12 and has data at 12+4 = 16, the bus moves it at 17 (four
		// memory edges before the retried read's 21).
		Expect(*seen).To(Equal([]beat{{17, "Br.Up", 0x200, false}}))
		// The far half pushes it across at m18 (= p9); the near half has
		// it at p10 and drives the first 4-byte beat, the second at p11;
		// the bus moves them at p11 and p12 (wait states p4..p10); the NI
		// pops the last at p13, six PCI cycles before the retried read's
		// p19.
		Expect(ni[0].Done).To(Equal(clock.Cycle(13)))
		Expect(ni[0].Got).To(Equal([]byte("abcdefgh")))
		Expect(r.pci.Stats().Retries).To(BeZero())
		_, up := r.br.Stats()
		Expect([]uint64{up.ReadMisses, up.ReadHits, up.Retries}).To(Equal([]uint64{1, 0, 0}))
	})

	It("serves a continuing DMA read from the prefetch buffer", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		for i := range 0x80 {
			Expect(r.mem.Storage().Write(uint64(0x200+i), []byte{byte(i)})).To(Succeed())
		}
		seen := r.watch()
		ni := []*op{
			{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 32, Class: "dma"}},
			{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: "dma"}},
		}
		runMaster(r.e, r.pci, "NI", ni)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// First read, a delayed read as in the spec above with a 32-byte
		// line: memory-bus data phases 21-24, crossed at memory edges
		// 22-25, in the near half at p12 (16 bytes) and p13 (32). The
		// attempt at p14 goes ahead: data beats p16-p23, moved p17-p24,
		// the NI pops the last at p25.
		Expect(ni[0].Done).To(Equal(clock.Cycle(25)))
		// Meanwhile the prefetch: at p4 the near half asks for
		// [0x220, 0x260) (demand end + 64 bytes), crossing behind the
		// delayed read; the far half issues it as two line reads at
		// memory edges 14 and 16 (the master channel holds two requests),
		// which run after the demand line. The memory bus has no hidden
		// arbitration: ARB 25, ADDR 26, the memory takes it at 27, data
		// at 31, moved 32-35; ARB 36, ADDR 37, moved 43-46. When the
		// second read is taken (p29, below) the demand end moves to
		// 0x240 and the prefetch to 0x280: one more line, asked at p29,
		// across at p30 = m60, seen at m61: ARB 62, ADDR 63, taken 64,
		// moved 69-72.
		var fetch []beat
		for _, b := range *seen {
			Expect(b.Master).To(Equal("Br.Up"))
			fetch = append(fetch, beat{Cycle: b.Cycle, Addr: b.Addr})
		}
		want := []beat{}
		for i, c := range []clock.Cycle{21, 32, 43, 69} {
			for k := range 4 {
				want = append(want, beat{Cycle: c + clock.Cycle(k), Addr: uint64(0x200 + 32*i + 8*k)})
			}
		}
		Expect(fetch).To(Equal(want))
		// Second read: the NI pushes it at p26; the bus was idle at p25,
		// so ARB p27, ADDR p28: the buffer holds [0x220, 0x240) since
		// p18, the read goes ahead at once: DECODE p29, data ready at
		// p29+1, beats p30-p37, moved p31-p38, the NI pops the last at
		// p39.
		Expect(ni[1].Done).To(Equal(clock.Cycle(39)))
		data := make([]byte, 32)
		for i := range data {
			data[i] = byte(0x20 + i)
		}
		Expect(ni[1].Got).To(Equal(data))
		_, up := r.br.Stats()
		Expect(up.ReadMisses).To(Equal(uint64(1)))
		Expect(up.ReadHits).To(Equal(uint64(1)))
		// Only the first read was retried (p2 ... p12).
		Expect(r.pci.Stats().Retries).To(Equal(uint64(6)))
		// [0x240, 0x280) stays prefetched.
		Expect(up.FetchedBytes).To(Equal(uint64(128)))
	})

	It("does not prefetch past the end of its DMA window", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		ni := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0xffe0, Len: 32, Class: "dma"}}}
		runMaster(r.e, r.pci, "NI", ni)
		// The window ends at 64 KiB, where nothing decodes on the memory
		// bus: a prefetch of [0x10000, 0x10040) would be a master abort
		// (bus.unmapped) and fail the run.
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		_, up := r.br.Stats()
		Expect(up.FetchedBytes).To(Equal(uint64(32)))
	})

	It("lets a PIO read and a DMA read cross in opposite directions at once, the same with and without a trace", func() {
		// Without retries each bus would be held by a read waiting for the
		// other bus: the CPU's on the memory bus, the NI's on PCI.
		type result struct {
			CPU, NI       clock.Cycle
			CPUGot, NIGot []byte
		}
		got, diff := vtest.TracedAndUntraced(vtest.Options{}, func(e *env.Env) result {
			cfg := testBridge()
			cfg.PrefetchBytes = 64
			r := newRigOn(e, memBusConfig(), cfg, 4)
			Expect(r.mem.Storage().Write(0x300, []byte("host mem"))).To(Succeed())
			Expect(r.dev.Storage().Write(0x20, []byte("dev!"))).To(Succeed())
			cpu := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x80000020, Len: 4, Class: "pio"}}}
			ni := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x300, Len: 8, Class: "dma"}}}
			runMaster(r.e, r.mb, "CPU", cpu)
			runMaster(r.e, r.pci, "NI", ni)
			_, err := r.e.Run()
			Expect(err).NotTo(HaveOccurred())
			return result{cpu[0].Done, ni[0].Done, cpu[0].Got, ni[0].Got}
		})
		Expect(diff).To(BeEmpty())
		Expect(string(got.CPUGot)).To(Equal("dev!"))
		Expect(string(got.NIGot)).To(Equal("host mem"))
		Expect(got.CPU).To(BeNumerically(">", 0))
		Expect(got.NI).To(BeNumerically(">", 0))
	})

	It("serves two DMA masters reading different places, one delayed read at a time", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		Expect(r.mem.Storage().Write(0x1000, []byte("from A, line one"))).To(Succeed())
		Expect(r.mem.Storage().Write(0x3000, []byte("from B, line one"))).To(Succeed())
		var a, b []*op
		for i := range 4 {
			a = append(a, &op{Req: &mem.Req{Op: mem.Read, Addr: uint64(0x1000 + 16*i), Len: 16, Class: "dma"}})
			b = append(b, &op{Req: &mem.Req{Op: mem.Read, Addr: uint64(0x3000 + 16*i), Len: 16, Class: "dma"}})
		}
		runMaster(r.e, r.pci, "A", a)
		runMaster(r.e, r.pci, "B", b)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Each master's reads would break the other's stream if a second
		// delayed read could start while the first waits for its master:
		// the bridge retries the second without latching it until the
		// first is taken.
		Expect(string(a[0].Got)).To(Equal("from A, line one"))
		Expect(string(b[0].Got)).To(Equal("from B, line one"))
		Expect(a[3].Done).To(BeNumerically(">", 0))
		Expect(b[3].Done).To(BeNumerically(">", 0))
	})

	It("carries a PIO read from the memory bus to a device on PCI as a delayed read", func() {
		r := newRig(memBusConfig(), testBridge(), 4)
		Expect(r.dev.Storage().Write(0x10, []byte{1, 2, 3, 4})).To(Succeed())
		cpu := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x80000010, Len: 4, Class: "pio"}}}
		runMaster(r.e, r.mb, "CPU", cpu)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Memory bus (cycles m): ARB m1, ADDR m2: retried and latched;
		// with no idle cycle and no hidden arbitration the CPU tries again
		// every 2 cycles (ARB, ADDR) at m4, m6, ...
		// The near half takes the latch at m3; it crosses in CrossCycles
		// = 1 (m4 = p2) and the far half sees it at p3 and issues it: PCI
		// ARB p4, ADDR p5, DECODE p6; the device takes it at p6 and has
		// data at p7, moved at p8; the far half pushes it across at p9 (=
		// m18); the near half has it at m19. The attempt at m18 was
		// retried; the one at m20 goes ahead: the
		// bridge sees it at m21, has the beat at m22, the bus moves it at
		// m23, the CPU pops it at m24.
		Expect(cpu[0].Done).To(Equal(clock.Cycle(24)))
		Expect(cpu[0].Got).To(Equal([]byte{1, 2, 3, 4}))
		Expect(r.records("PCI")).To(Equal([]string{
			"240000 8 PCI bus.pio.read master=Br.Down target=Dev addr=0x80000010 len=4 start=4 waits=1 hash=" + trace.HashBytes([]byte{1, 2, 3, 4})}))
		// Retried attempts at m2, m4, ..., m18.
		Expect(r.mb.Stats().Retries).To(Equal(uint64(9)))
		down, _ := r.br.Stats()
		Expect(down.ReadMisses).To(Equal(uint64(1)))
		Expect(down.Retries).To(Equal(uint64(9)))
	})

	It("holds a PIO read in wait states instead of retrying it, with PIOReadWaitStates", func() {
		cfg := testBridge()
		cfg.PIOReadWaitStates = true
		r := newRig(memBusConfig(), cfg, 4)
		Expect(r.dev.Storage().Write(0x10, []byte{1, 2, 3, 4})).To(Succeed())
		cpu := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x80000010, Len: 4, Class: "pio"}}}
		runMaster(r.e, r.mb, "CPU", cpu)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Memory bus: ARB m1, ADDR m2: taken (no retry); the near half
		// accepts it at m3 and it crosses in CrossCycles = 1 (m4 = p2), the
		// PCI side as for the delayed read: ARB p4, ADDR p5, DECODE p6,
		// data p8, pushed across p9 (= m18), the near half has it at m19
		// and drives the beat, moved at m20 (wait states m3..m19), popped
		// by the CPU at m21: three memory cycles before the retried read's
		// m24 (its last retry and re-arbitration).
		Expect(cpu[0].Done).To(Equal(clock.Cycle(21)))
		Expect(cpu[0].Got).To(Equal([]byte{1, 2, 3, 4}))
		Expect(r.mb.Stats().Retries).To(BeZero())
		down, _ := r.br.Stats()
		Expect([]uint64{down.ReadMisses, down.Retries}).To(Equal([]uint64{1, 0}))
	})

	It("records progress for a PIO read that crosses it, none for a spin loop's poll (mem.Req.Poll)", func() {
		for _, poll := range []bool{false, true} {
			cfg := testBridge()
			cfg.PIOReadWaitStates = true
			r := newRig(memBusConfig(), cfg, 4)
			cpu := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x80000010, Len: 4, Class: "pio", Poll: poll}}}
			runMaster(r.e, r.mb, "CPU", cpu)
			_, err := r.e.Run()
			Expect(err).NotTo(HaveOccurred())
			// The same read as above: it crosses (finishes on the near
			// half) when its beat moves on the memory bus at m20.
			Expect(cpu[0].Done).To(Equal(clock.Cycle(21)))
			if poll {
				Expect(r.e.Monitor.LastProgress()).To(BeZero())
			} else {
				Expect(r.e.Monitor.LastProgress()).To(BeNumerically(">", 0))
			}
		}
	})

	Describe("holding the memory bus for a whole I/O burst (SH-P10)", func() {
		// The NI writes 64 bytes (one PCI burst, 16 beats at p4-p19) to
		// memory; from m20 a CPU on the memory bus posts 8-byte writes
		// back to back. The memory bus takes 64-byte bursts (the whole
		// I/O burst fits in one tenure) or 32-byte ones (the Xpress's
		// line: the bus splits the held burst and, with the hold, grants
		// the bridge its second piece without arbitration, Bus.HoldSplits).
		run := func(hold bool, maxBurst ...int) (bridge, cpu []clock.Cycle) {
			mc := memBusConfig()
			mc.MaxBurstBytes = 64
			if len(maxBurst) > 0 {
				mc.MaxBurstBytes = maxBurst[0]
			}
			cfg := testBridge()
			cfg.HoldMemoryBus = hold
			r := newRig(mc, cfg, 1)
			seen := r.watch()
			data := make([]byte, 64)
			for i := range data {
				data[i] = byte(i)
			}
			runMaster(r.e, r.pci, "NI", []*op{{Req: &mem.Req{Op: mem.Write, Addr: 0x1000, Len: 64, Class: "dma", Posted: true}, Data: data}})
			var cpuOps []*op
			for i := range 6 {
				cpuOps = append(cpuOps, &op{Req: &mem.Req{Op: mem.Write, Addr: uint64(0x8000 + 8*i), Len: 8, Posted: true, Class: "pio"},
					Data: make([]byte, 8), At: 20})
			}
			runMaster(r.e, r.mb, "CPU", cpuOps)
			_, err := r.e.Run()
			Expect(err).NotTo(HaveOccurred())
			back, _ := r.mem.Storage().Bytes(0x1000, 64)
			Expect(back).To(Equal(data))
			for _, b := range *seen {
				if b.Master == "Br.Up" {
					bridge = append(bridge, b.Cycle)
				} else {
					cpu = append(cpu, b.Cycle)
				}
			}
			return bridge, cpu
		}

		It("holds it: the CPU waits for the end of the I/O burst", func() {
			bridge, cpu := run(true)
			// The bridge takes PCI beat k at p(5+k) (memory edge 10+2k);
			// the far half starts the write with the first 8 bytes at m13
			// (ARB 14, ADDR 15, data 16) and feeds beat j once PCI beats
			// 2j and 2j+1 are across, at m(13+4j); the bus moves it at
			// m(14+4j), waiting in between: 16, 18, 22, ..., 42.
			Expect(bridge).To(Equal([]clock.Cycle{16, 18, 22, 26, 30, 34, 38, 42}))
			// The CPU asks from m20 but gets the bus only after m42: ARB
			// 43, ADDR 44, data 45, then every 3 cycles.
			Expect(cpu).To(Equal([]clock.Cycle{45, 48, 51, 54, 57, 60}))
		})

		It("holds it across the memory bus's 32-byte pieces of the burst (HoldSplits)", func() {
			bridge, cpu := run(true, 32)
			// The first piece (beats 0-3) moves at 16, 18, 22, 26 as in one
			// tenure and ends at m26 (no idle cycle). At m27 the bus, idle,
			// re-grants the bridge without arbitration: ADDR 27, data from
			// 28; beat 4 is fed at m29 (13+4*4) and moves at m30, then
			// every 4 cycles: 34, 38, 42 as in one tenure. The CPU, asking
			// since m20, gets the bus only after m42: ARB 43, ADDR 44, data
			// 45, then every 3 cycles, the same cycles as with 64-byte
			// bursts.
			Expect(bridge).To(Equal([]clock.Cycle{16, 18, 22, 26, 30, 34, 38, 42}))
			Expect(cpu).To(Equal([]clock.Cycle{45, 48, 51, 54, 57, 60}))
		})

		It("names the master HoldSplits cannot find", func() {
			b, err := bus.MakeBuilder().WithEnv(vtest.NewEnv(vtest.Options{})).WithConfig(memBusConfig()).Build("MB")
			Expect(err).NotTo(HaveOccurred())
			Expect(b.HoldSplits("Nobody")).To(MatchError(ContainSubstring("no master Nobody")))
		})

		It("re-arbitrates per line without it: the CPU's writes go between the lines", func() {
			bridge, cpu := run(false)
			// The first line's 8 PCI beats are across by m25 (the 8th
			// pushed at p12 = m24): the far half starts it at m25; the CPU
			// has had the bus since m21 (ARB 21, ADDR 22, data 23; ARB
			// 24, ADDR 25, data 26); round-robin then grants the bridge:
			// ARB 27, ADDR 28, data 29 and 30. The memory (write latency
			// 1) sees the request at 30 and takes beat 0 at 31, so its
			// 2-deep port is full at 31 and the bus waits a cycle: beats 2
			// and 3 move at 32 and 33. The CPU gets the bus back: ARB 34,
			// ADDR 35, data 36.
			Expect(bridge[:4]).To(Equal([]clock.Cycle{29, 30, 32, 33}))
			Expect(cpu[:3]).To(Equal([]clock.Cycle{23, 26, 36}))
			// The second line goes out after more CPU writes.
			Expect(bridge).To(HaveLen(8))
			between := 0
			for _, c := range cpu {
				if c > bridge[3] && c < bridge[4] {
					between++
				}
			}
			Expect(between).To(BeNumerically(">", 0))
		})
	})

	// The folded bridge host/lcilib modelled before the LCI hosts were
	// wired onto host/platform (that model is gone; this spec builds it):
	// host memory on the PCI bus, a DMA read waiting the memory latency +
	// 60 PCI cycles before its first data, one that continues the previous
	// read 2. PCIHostBridge's DelayedReadCycles 16 (34 on the P3's buses)
	// gives the LANai's host DMA engine (256-byte bursts, one after the
	// other) the same completion cycles; the LCI platforms now re-fit the
	// count on the wired host (host/platform lciHostBridge).
	DescribeTable("reproduces host/lcilib's folded PCI bridge",
		func(pci bus.Config, memBus clock.Clock, memLatencyNs, delayed int) {
			reads := func() []*op {
				var o []*op
				for i := range 6 {
					o = append(o, &op{Req: &mem.Req{Op: mem.Read, Addr: uint64(256 * i), Len: 256, Class: "dma"}})
				}
				return o
			}
			lat := clock.Time(memLatencyNs) * clock.Nanosecond
			// The folded model: host memory on PCI.
			e := vtest.NewEnv(vtest.Options{})
			pb, err := bus.MakeBuilder().WithEnv(e).WithConfig(pci).Build("PCI")
			Expect(err).NotTo(HaveOccurred())
			folded, err := mem.MakeBuilder().WithEnv(e).WithClock(pci.Clock).WithSize(1 << 16).WithPortWidth(pci.WidthBytes).
				WithBytesPerCycle(pci.WidthBytes).WithLatency(int(pci.Clock.Cycles(lat)) + 60).
				WithSequentialReadLatency(2).WithWriteLatency(2).Build("Mem")
			Expect(err).NotTo(HaveOccurred())
			Expect(pb.AddTarget("Mem", 0, 1<<16, folded.Port(0))).To(Succeed())
			want := reads()
			runMaster(e, pb, "NI", want)
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())

			// The bridge: host memory on an 8-byte memory bus, its
			// latency in memory-bus cycles, the next line of an open page
			// in 2 (assumed, as the folded model's sequential reads;
			// without it every line of the first read pays the full
			// latency and the first read ends 48 PCI cycles later on the
			// PPro, 24 on the P3).
			e = vtest.NewEnv(vtest.Options{})
			mc := memBusConfig()
			mc.Clock = memBus
			mb, err := bus.MakeBuilder().WithEnv(e).WithConfig(mc).Build("MemBus")
			Expect(err).NotTo(HaveOccurred())
			pb, err = bus.MakeBuilder().WithEnv(e).WithConfig(pci).Build("PCI")
			Expect(err).NotTo(HaveOccurred())
			hm, err := mem.MakeBuilder().WithEnv(e).WithClock(memBus).WithSize(1 << 16).WithPortWidth(8).WithBytesPerCycle(8).
				WithLatency(int(memBus.Cycles(lat))).WithSequentialReadLatency(2).Build("Mem")
			Expect(err).NotTo(HaveOccurred())
			Expect(mb.AddTarget("Mem", 0, 1<<16, hm.Port(0))).To(Succeed())
			cfg := bus.PCIHostBridge()
			cfg.DelayedReadCycles = delayed
			_, err = bus.MakeBridgeBuilder().WithEnv(e).WithConfig(cfg).WithBuses(mb, pb).WithDMAWindow(0, 1<<16, 0).Build("Br")
			Expect(err).NotTo(HaveOccurred())
			got := reads()
			runMaster(e, pb, "NI", got)
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			for i := range want {
				Expect(got[i].Done).To(Equal(want[i].Done), "read %d", i)
			}
		},
		// PPro: 32-bit PCI, 236 ns memory (MY-P6) = 8 PCI cycles folded,
		// 16 cycles of a 66.67 MHz memory bus (the P6 bus's 66 MHz).
		// Folded: the first read's data from p4+68, the NI done at p136,
		// then every 71 cycles (64 beats, 2 cycles of latency, address,
		// turnaround, idle, arbitration). Bridged: 2 + 16 cycles of
		// crossing and delayed-read logic, the 8 line reads on the memory
		// bus (16 + 2 x 7 cycles of latency and 4 beats each) and the
		// retry loop reach p136 as well; continuing reads hit.
		Entry("PPro: DelayedReadCycles 16", bus.PCI32(), ratio(200_000_000, 3), 236, 16),
		// P3: 64-bit PCI, 113 ns memory (MY-P6) = 4 PCI cycles folded, 16
		// cycles of a 133.33 MHz memory bus (assumed: the P3's 133 MHz
		// front-side bus): the fetch is faster, so the delayed-read logic
		// is longer.
		Entry("P3: DelayedReadCycles 34", bus.PCI64(), ratio(400_000_000, 3), 113, 34),
	)

	DescribeTable("rejects impossible bridge configurations, naming the parameter",
		func(mod func(*bus.BridgeConfig), msg string) {
			e := env.New(env.Options{})
			mb, err := bus.MakeBuilder().WithEnv(e).WithConfig(memBusConfig()).Build("MemBus")
			Expect(err).NotTo(HaveOccurred())
			pci, err := bus.MakeBuilder().WithEnv(e).WithConfig(bus.PCI32()).Build("PCI")
			Expect(err).NotTo(HaveOccurred())
			c := bus.PCIHostBridge()
			mod(&c)
			_, err = bus.MakeBridgeBuilder().WithEnv(e).WithConfig(c).WithBuses(mb, pci).WithDMAWindow(0, 1<<16, 0).Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("negative posted buffer", func(c *bus.BridgeConfig) { c.PostedWriteBytes = -1 }, "PostedWriteBytes -1"),
		Entry("posted buffer not in lines", func(c *bus.BridgeConfig) { c.PostedWriteBytes = 40 }, "PostedWriteBytes 40"),
		Entry("negative crossing", func(c *bus.BridgeConfig) { c.CrossCycles = -1 }, "CrossCycles -1"),
		Entry("negative delayed read", func(c *bus.BridgeConfig) { c.DelayedReadCycles = -2 }, "DelayedReadCycles -2"),
		Entry("negative hit", func(c *bus.BridgeConfig) { c.ReadHitCycles = -1 }, "ReadHitCycles -1"),
		Entry("line not a power of two", func(c *bus.BridgeConfig) { c.LineBytes = 24 }, "LineBytes 24"),
		Entry("line narrower than the memory bus", func(c *bus.BridgeConfig) {
			c.LineBytes, c.ReadBufferBytes, c.PrefetchBytes, c.PostedWriteBytes = 4, 64, 0, 64
		}, "LineBytes 4 must be a multiple of bus MemBus's width 8"),
		Entry("read buffer below a line", func(c *bus.BridgeConfig) { c.ReadBufferBytes = 16 }, "ReadBufferBytes 16"),
		Entry("prefetch beyond the buffer", func(c *bus.BridgeConfig) { c.PrefetchBytes = 2048 }, "PrefetchBytes 2048"),
		Entry("prefetch not in lines", func(c *bus.BridgeConfig) { c.PrefetchBytes = 48 }, "PrefetchBytes 48"),
	)

	It("refuses a bridge without buses or windows, or with one bus on both sides", func() {
		e := env.New(env.Options{})
		mb, err := bus.MakeBuilder().WithEnv(e).WithConfig(memBusConfig()).Build("MemBus")
		Expect(err).NotTo(HaveOccurred())
		pci, err := bus.MakeBuilder().WithEnv(e).WithConfig(bus.PCI32()).Build("PCI")
		Expect(err).NotTo(HaveOccurred())
		_, err = bus.MakeBridgeBuilder().WithBuses(mb, pci).WithDMAWindow(0, 1, 0).Build("B")
		Expect(err).To(MatchError("B: no env"))
		_, err = bus.MakeBridgeBuilder().WithEnv(e).WithDMAWindow(0, 1, 0).Build("B")
		Expect(err).To(MatchError(ContainSubstring("needs a memory bus and an I/O bus")))
		_, err = bus.MakeBridgeBuilder().WithEnv(e).WithBuses(mb, mb).WithDMAWindow(0, 1, 0).Build("B")
		Expect(err).To(MatchError(ContainSubstring("are the same bus MemBus")))
		_, err = bus.MakeBridgeBuilder().WithEnv(e).WithBuses(mb, pci).Build("B")
		Expect(err).To(MatchError(ContainSubstring("no window")))
		Expect(bus.PCIHostBridge().Validate()).To(Succeed())
		Expect(bus.XpressEISABridge().Validate()).To(Succeed())
		Expect(bus.XpressEISABridge().HoldMemoryBus).To(BeTrue())
	})

	It("drops prefetched data that a memory-bus master overwrites, so a later DMA read sees the new data", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		Expect(r.mem.Storage().Write(0x200, make([]byte, 0x80))).To(Succeed())
		ni := []*op{
			{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 32, Class: "dma"}},
			{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: "dma"}},
		}
		runMaster(r.e, r.pci, "NI", ni)
		// As in the prefetch spec, [0x220, 0x260) is in the bridge by
		// m46; the CPU writes 0x228 at m49 (pushed at m44, the bus busy
		// with the prefetch until m46: ARB 47, ADDR 48, data 49), before
		// the NI's second read (ADDR p28 = m56).
		cpu := []*op{{Req: &mem.Req{Op: mem.Write, Addr: 0x228, Len: 8, Posted: true, Class: "pio"}, Data: []byte("NEWDATA!"), At: 44}}
		runMaster(r.e, r.mb, "CPU", cpu)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(ni[1].Got[8:16])).To(Equal("NEWDATA!"))
		_, up := r.br.Stats()
		Expect(up.Invalidations).To(Equal(uint64(1)))
		Expect(up.ReadMisses).To(Equal(uint64(2)))
		Expect(up.ReadHits).To(Equal(uint64(0)))
		// The second read was a delayed read again: retried.
		Expect(r.pci.Stats().Retries).To(BeNumerically(">", 6))
	})

	It("drops prefetched data that a memory-bus master reads for ownership, so a later DMA read sees its stores", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		Expect(r.mem.Storage().Write(0x200, make([]byte, 0x80))).To(Succeed())
		ni := []*op{
			{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 32, Class: "dma"}},
			{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: "dma"}, At: 32},
		}
		runMaster(r.e, r.pci, "NI", ni)
		// A write-back cache's store to 0x228: it reads the line
		// [0x220, 0x240) for ownership (no write on the bus) and, once the
		// fill is in, stores to memory directly (as host/memsys does).
		cpu := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: bus.ClassRFO}, At: 44}}
		runMaster(r.e, r.mb, "CPU", cpu)
		var rfo []clock.Cycle
		r.mb.Observe(func(_ clock.Time, o bus.Observation) {
			if o.Master == "CPU" {
				rfo = append(rfo, o.Cycle)
				if o.Last {
					Expect(r.mem.Storage().Write(0x228, []byte("NEWDATA!"))).To(Succeed())
				}
			}
		})
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// As in the prefetch spec, [0x220, 0x260) is in the bridge by
		// m46. The RFO pushed at m44 waits for the prefetch: ARB 47, ADDR
		// 48, the memory takes it at 49 and with its latency of 4 pushes
		// data at 53, moved 54-57.
		Expect(rfo).To(Equal([]clock.Cycle{54, 55, 56, 57}))
		// The bridge sees the first beat at m54 = p27 and drops the
		// buffer at its next PCI edge, p28. The NI's second read (pushed
		// at p32, ARB p33, ADDR p34) misses: a delayed read, which fetches
		// the stored bytes. Before RFOs dropped read-ahead data it was a
		// prefetch hit that returned the old zeros.
		Expect(string(ni[1].Got[8:16])).To(Equal("NEWDATA!"))
		_, up := r.br.Stats()
		Expect(up.Invalidations).To(Equal(uint64(1)))
		Expect(up.ReadMisses).To(Equal(uint64(2)))
		Expect(up.ReadHits).To(Equal(uint64(0)))
	})

	It("keeps the read-ahead before the line an RFO claims, and fetches the rest again", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		Expect(r.mem.Storage().Write(0x200, make([]byte, 0x80))).To(Succeed())
		ni := []*op{
			{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 32, Class: "dma"}},
			{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 64, Class: "dma"}, At: 32},
		}
		runMaster(r.e, r.pci, "NI", ni)
		// The second line of the read-ahead, [0x240, 0x260), is claimed.
		cpu := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x240, Len: 32, Class: bus.ClassRFO}, At: 44}}
		runMaster(r.e, r.mb, "CPU", cpu)
		r.mb.Observe(func(_ clock.Time, o bus.Observation) {
			if o.Master == "CPU" && o.Last {
				Expect(r.mem.Storage().Write(0x248, []byte("NEWDATA!"))).To(Succeed())
			}
		})
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// [0x220, 0x260) is in the bridge by m46; the RFO's first beat at
		// m54 (as above) cuts the buffer at 0x240: [0x220, 0x240) stays, so
		// the NI's read at p34 is a prefetch hit for its first line and
		// waits in the buffer for the second, fetched again behind the RFO,
		// with the stored bytes.
		Expect(string(ni[1].Got[0x28:0x30])).To(Equal("NEWDATA!"))
		_, up := r.br.Stats()
		Expect(up.Invalidations).To(Equal(uint64(1)))
		Expect(up.ReadHits).To(Equal(uint64(1)))
		Expect(up.ReadMisses).To(Equal(uint64(1)))
	})

	It("keeps read-ahead data that a plain read (not for ownership) covers", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		ni := []*op{
			{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 32, Class: "dma"}},
			{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: "dma"}, At: 32},
		}
		runMaster(r.e, r.pci, "NI", ni)
		cpu := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: "fill"}, At: 44}}
		runMaster(r.e, r.mb, "CPU", cpu)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The same timing as above with a cache's plain line fill: the
		// second read is served from the read-ahead buffer.
		_, up := r.br.Stats()
		Expect(up.Invalidations).To(Equal(uint64(0)))
		Expect(up.ReadHits).To(Equal(uint64(1)))
	})

	It("keeps a DMA read behind the NI's own posted write to the prefetched range", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		Expect(r.mem.Storage().Write(0x200, make([]byte, 0x80))).To(Succeed())
		ni := []*op{
			{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 32, Class: "dma"}},
			{Req: &mem.Req{Op: mem.Write, Addr: 0x228, Len: 8, Posted: true, Class: "dma"}, Data: []byte("NEWDATA!")},
			{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: "dma"}},
		}
		runMaster(r.e, r.pci, "NI", ni)
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The write is still in the posted buffer when the read comes:
		// the read must not be answered from the prefetched line (PCI 2.1
		// appendix E: a read pushes posted writes ahead of it).
		Expect(string(ni[2].Got[8:16])).To(Equal("NEWDATA!"))
	})

	DescribeTable("completes a non-posted DMA write when the bridge has it, or, without posting, when memory has it",
		func(posted int, done clock.Cycle) {
			cfg := testBridge()
			cfg.PostedWriteBytes = posted
			r := newRig(memBusConfig(), cfg, 16)
			ni := []*op{{Req: &mem.Req{Op: mem.Write, Addr: 0x100, Len: 8, Class: "dma"}, Data: []byte("ABCDEFGH")}}
			runMaster(r.e, r.pci, "NI", ni)
			_, err := r.e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(ni[0].Done).To(Equal(done))
		},
		// Posting: as in the posted-write spec, the bridge takes the beats
		// at p5 and p6 and answers at once (completion pushed at p6); the
		// bus forwards it at p7 (COMPL), the NI pops it at p8.
		Entry("posted, 64 bytes", 64, clock.Cycle(8)),
		// No posting: the far write is non-posted: data phase m16; the
		// memory (write latency 16) sees it at m17 and writes it at m33,
		// answering; the bus forwards the completion at m34 (COMPL) to the
		// far half, which sends it across at m35; the near half has it at
		// p18 (m36), answers at p18, the bus forwards it at p19, the NI
		// pops it at p20.
		Entry("not posted", 0, clock.Cycle(20)),
	)

	It("shows its state and buffer in the waveform", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		runMaster(r.e, r.pci, "NI", []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 32, Class: "dma"}}})
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		path := GinkgoT().TempDir() + "/bridge.vcd"
		Expect(vtest.WriteWaves(r.e, path)).NotTo(BeEmpty())
		file, err := vcd.ParseFile(path)
		Expect(err).NotTo(HaveOccurred())
		at := func(sig string, p int64) waveValue {
			v, err := file.ValueAt(sig, p*30000)
			Expect(err).NotTo(HaveOccurred())
			n, _ := v.Uint()
			return waveValue{v.Str, n}
		}
		// p3-p14: the delayed read waits (DELAYED); p15 the read is taken
		// and served until p23. The read buffer holds the line at p13
		// (32 bytes) and is empty again once the read has it, until the
		// prefetched lines arrive (64 bytes by m46 = p23).
		Expect(at("br.up.near", 5).Str).To(Equal("DELAYED"))
		Expect(at("br.up.near", 16).Str).To(Equal("READ"))
		Expect(at("br.up.rbuf", 13).Uint).To(Equal(uint64(32)))
		Expect(at("br.up.rbuf", 30).Uint).To(Equal(uint64(64)))
		Expect(at("br.up.near", 30).Str).To(Equal("IDLE"))
	})
})

type waveValue struct {
	Str  string
	Uint uint64
}
