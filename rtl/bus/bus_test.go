package bus_test

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
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

// rx is an upstream beat a master received, with the bus cycle it was
// popped in.
type rx struct {
	Cycle clock.Cycle
	Len   int
	Last  bool
}

var _ = Describe("Bus", func() {
	var (
		e   *env.Env
		b   *bus.Bus
		m   *mem.Memory
		cfg bus.Config
		clk clock.Clock
	)

	setup := func(c bus.Config, memLatency int) {
		cfg = c
		clk = c.Clock
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		var err error
		b, err = bus.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("Bus")
		Expect(err).NotTo(HaveOccurred())
		// The memory runs on the bus clock so the cycles below line up.
		m, err = mem.MakeBuilder().WithEnv(e).WithClock(clk).WithSize(1 << 16).
			WithLatency(memLatency).WithBytesPerCycle(cfg.WidthBytes).WithPortWidth(cfg.WidthBytes).Build("Mem")
		Expect(err).NotTo(HaveOccurred())
		Expect(b.AddTarget("Mem", 0x10000, 1<<16, m.Port(0))).To(Succeed())
	}

	// master issues the requests' beats in order from cycle 0 and records
	// what comes back.
	master := func(name string, reqs []*mem.Req, data [][]byte, got *[]rx) {
		ch, err := b.AddMaster(name)
		Expect(err).NotTo(HaveOccurred())
		var beats []mem.Beat
		for i, r := range reqs {
			r.Master = name
			if r.Op == mem.Write {
				beats = append(beats, mem.WriteBeats(r, data[i], cfg.WidthBytes)...)
			} else {
				beats = append(beats, mem.Beat{Req: r, First: true, Last: true})
			}
		}
		i := 0
		a := vtest.NewAgent(e, name, clk, func(now clock.Time, c clock.Cycle) bool {
			if beat, ok := ch.Up.Pop(now); ok && got != nil {
				*got = append(*got, rx{c, len(beat.Data), beat.Last})
			}
			if i < len(beats) && ch.Down.CanPush(now) {
				ch.Down.Push(now, beats[i])
				i++
			}
			return i < len(beats)
		})
		ch.ConnectMaster(a)
		a.Start()
	}

	busRecords := func() []string {
		var out []string
		for _, r := range e.Trace.Records() {
			if r.Path == "Bus" {
				out = append(out, r.Format())
			}
		}
		return out
	}

	It("runs a posted PCI write: arbitration, address, decode, data, idle", func() {
		setup(bus.PCI32(), 1)
		data := []byte{1, 2, 3, 4}
		master("Cpu", []*mem.Req{{Op: mem.Write, Addr: 0x10100, Len: 4, Posted: true, Class: "pio"}}, [][]byte{data}, nil)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Pushed at c0, seen at c1 (ARB), c2 ADDR, c3 DECODE (medium DEVSEL),
		// c4 the data phase, which ends the posted write.
		Expect(busRecords()).To(Equal([]string{
			"120000 4 Bus bus.pio.write master=Cpu target=Mem addr=0x10100 len=4 start=1 waits=0 posted=1 hash=" + trace.HashBytes(data),
		}))
		back, _ := m.Storage().Bytes(0x100, 4)
		Expect(back).To(Equal(data))
	})

	It("stalls a read for the target's latency and counts the wait states", func() {
		setup(bus.PCI32(), 2)
		Expect(m.Storage().Write(0x200, []byte("ABCDEFGHIJKLMNOP"))).To(Succeed())
		var got []rx
		master("Cpu", []*mem.Req{{Op: mem.Read, Addr: 0x10200, Len: 16, Class: "pio"}}, nil, &got)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// c1 ARB, c2 ADDR (request to memory), c3 turnaround; the memory
		// accepts at c3 and streams from c5; the bus sees beat k one cycle
		// after it is pushed, so data phases at c6..c9 after 2 wait states
		// (c4, c5); the master pops each beat one cycle later.
		Expect(got).To(Equal([]rx{{7, 4, false}, {8, 4, false}, {9, 4, false}, {10, 4, true}}))
		recs := busRecords()
		Expect(recs).To(HaveLen(1))
		Expect(recs[0]).To(HavePrefix("270000 9 Bus bus.pio.read master=Cpu target=Mem addr=0x10200 len=16 start=1 waits=2"))
	})

	It("holds the bus for a non-posted write until the target completes it", func() {
		setup(bus.PCI32(), 3)
		var got []rx
		master("Cpu", []*mem.Req{{Op: mem.Write, Addr: 0x10000, Len: 4, Class: "pio"}}, [][]byte{{9, 9, 9, 9}}, &got)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Data phase at c4 hands the beat to the memory, which sees it at
		// c5, writes at c8 (latency 3) and answers; the bus sees the
		// completion at c9, forwards it, and the master pops it at c10.
		Expect(got).To(Equal([]rx{{10, 0, true}}))
		Expect(busRecords()[0]).To(HavePrefix("270000 9 Bus bus.pio.write master=Cpu target=Mem addr=0x10000 len=4 start=1 waits=4 posted=0"))
	})

	It("splits a request at max-burst boundaries and re-arbitrates for each piece", func() {
		c := bus.PCI32()
		c.MaxBurstBytes = 8
		setup(c, 1)
		data := []byte("0123456789abcdef")
		master("Dma", []*mem.Req{{Op: mem.Write, Addr: 0x10004, Len: 16, Posted: true, Class: "dma"}}, [][]byte{data}, nil)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		recs := busRecords()
		Expect(recs).To(HaveLen(3))
		// [4,8) at c4; idle c5; [8,16) address at c6, data c8-c9; idle c10;
		// [16,20) address at c11, data c13.
		Expect(recs[0]).To(HavePrefix("120000 4 Bus bus.dma.write master=Dma target=Mem addr=0x10004 len=4 start=1"))
		Expect(recs[1]).To(HavePrefix("270000 9 Bus bus.dma.write master=Dma target=Mem addr=0x10008 len=8 start=6"))
		Expect(recs[2]).To(HavePrefix("390000 13 Bus bus.dma.write master=Dma target=Mem addr=0x10010 len=4 start=11"))
		back, _ := m.Storage().Bytes(4, 16)
		Expect(back).To(Equal(data))
	})

	It("grants masters round-robin, hiding arbitration behind the previous transaction", func() {
		setup(bus.PCI32(), 1)
		for _, name := range []string{"A", "B"} {
			master(name, []*mem.Req{
				{Op: mem.Write, Addr: 0x10000, Len: 4, Posted: true},
				{Op: mem.Write, Addr: 0x10004, Len: 4, Posted: true},
			}, [][]byte{{1, 1, 1, 1}, {2, 2, 2, 2}}, nil)
		}
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		var order []string
		for _, r := range e.Trace.Records() {
			if r.Path == "Bus" {
				mst, _ := r.Get("master")
				start, _ := r.Get("start")
				order = append(order, mst+"@"+start)
			}
		}
		// A: ARB c1, addr c2, data c4, idle c5; B hidden: addr c6 ... every
		// 4 cycles after the first.
		Expect(order).To(Equal([]string{"A@1", "B@6", "A@10", "B@14"}))
	})

	It("reaches the paper's peak rate asymptotically on a long burst", func() {
		setup(bus.PCI32(), 0)
		n := 4096
		master("Dma", []*mem.Req{{Op: mem.Write, Addr: 0x10000, Len: n, Posted: true, Class: "dma"}}, [][]byte{make([]byte, n)}, nil)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		s := b.Stats()
		// 1024 data phases, no wait states (the master pushes one beat per
		// cycle and the memory takes 4 bytes per cycle).
		Expect(s.DataCycles).To(Equal(uint64(1024)))
		Expect(s.WaitCycles).To(Equal(uint64(0)))
		// 4 bytes x 33.33 MHz = 127.2 MiB/s (LCI Table I).
		Expect(cfg.PeakBytesPerSecond() / (1 << 20)).To(BeNumerically("~", 127.2, 0.05))
		Expect(bus.PCI64().PeakBytesPerSecond() / (1 << 20)).To(BeNumerically("~", 254.3, 0.05))
	})

	It("aborts an access that nothing decodes and reports it", func() {
		setup(bus.PCI32(), 1)
		var got []rx
		master("Cpu", []*mem.Req{{Op: mem.Read, Addr: 0x90000, Len: 4}}, nil, &got)
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("bus.unmapped")))
		Expect(got).To(HaveLen(1))
	})

	It("shows its phases in the waveform", func() {
		setup(bus.PCI32(), 1)
		master("Cpu", []*mem.Req{{Op: mem.Write, Addr: 0x10000, Len: 4, Posted: true}}, [][]byte{{1, 2, 3, 4}}, nil)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		path := GinkgoT().TempDir() + "/bus.vcd"
		f := vtest.WriteWaves(e, path)
		Expect(f).NotTo(BeEmpty())
		file, err := vcd.ParseFile(path)
		Expect(err).NotTo(HaveOccurred())
		at := func(cycle int64) string {
			v, err := file.ValueAt("bus.phase", cycle*30000)
			Expect(err).NotTo(HaveOccurred())
			return v.Str
		}
		Expect([]string{at(1), at(2), at(3), at(4), at(5), at(6)}).To(Equal([]string{"ARB", "ADDR", "DECODE", "DATA", "TURN", "IDLE"}))
	})

	It("names the granted master and the decoded target in string signals and sizes addr to the bus", func() {
		setup(bus.PCI32(), 1)
		master("Cpu", []*mem.Req{{Op: mem.Write, Addr: 0x10000, Len: 4, Posted: true}}, [][]byte{{1, 2, 3, 4}}, nil)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		path := GinkgoT().TempDir() + "/bus.vcd"
		Expect(vtest.WriteWaves(e, path)).NotTo(BeEmpty())
		file, err := vcd.ParseFile(path)
		Expect(err).NotTo(HaveOccurred())
		at := func(sig string, cycle int64) vcd.Value {
			v, err := file.ValueAt(sig, cycle*30000)
			Expect(err).NotTo(HaveOccurred())
			return v
		}
		// The phases of the spec above: ARB at edge 1 (the grant), ADDR 2,
		// DECODE 3, DATA 4, TURN 5, IDLE from 6.
		Expect([]string{at("bus.master", 0).Str, at("bus.master", 1).Str, at("bus.master", 4).Str, at("bus.master", 6).Str}).
			To(Equal([]string{"-", "Cpu", "Cpu", "-"}))
		Expect([]string{at("bus.target", 0).Str, at("bus.target", 1).Str, at("bus.target", 6).Str}).
			To(Equal([]string{"-", "Mem", "-"}))
		Expect(file.Lookup("bus.addr").Width).To(Equal(32), "PCI's 32-bit AD bus")
		addr, ok := at("bus.addr", 2).Uint()
		Expect(ok).To(BeTrue())
		Expect(addr).To(Equal(uint64(0x10000)))
	})

	It("refuses a target window beyond its address width, naming both", func() {
		setup(bus.PCI32(), 1)
		ch, err := mem.NewChannel(e, "Far", 4, 2)
		Expect(err).NotTo(HaveOccurred())
		// 0x1_0000_0000 + 16 - 1 needs 33 bits; the PCI preset has 32.
		Expect(b.AddTarget("Far", 1<<32, 16, ch)).To(MatchError(
			"Bus: window of Far [0x100000000,0x100000010) needs 33 address bits, the bus has 32 (WithAddrBits)"))
		wide, err := bus.MakeBuilder().WithEnv(e).WithAddrBits(33).Build("Wide")
		Expect(err).NotTo(HaveOccurred())
		Expect(wide.AddTarget("Far", 1<<32, 16, ch)).To(Succeed())
	})

	It("refuses an address width outside 1..64, naming it", func() {
		e := vtest.NewEnv(vtest.Options{Clock: bus.PCI32().Clock})
		_, err := bus.MakeBuilder().WithEnv(e).WithAddrBits(65).Build("Bus")
		Expect(err).To(MatchError("Bus: address width 65 bits, want 1..64"))
		_, err = bus.MakeBuilder().WithEnv(e).WithAddrBits(0).Build("Bus")
		Expect(err).To(MatchError("Bus: address width 0 bits, want 1..64"))
	})

	It("ends a read with a retry when its target says so; the master tries again", func() {
		setup(bus.PCI32(), 1)
		Expect(m.Storage().Write(0x200, []byte("WXYZ"))).To(Succeed())
		var asked []string
		Expect(b.SetTargetRetry("Mem", func(now clock.Time, r *mem.Req) bool {
			asked = append(asked, fmt.Sprintf("c%d %#x+%d", clk.CycleAt(now), r.Addr, r.Len))
			return len(asked) > 2
		})).To(Succeed())
		Expect(b.SetTargetRetry("Nope", nil)).To(MatchError(ContainSubstring("no target Nope")))
		var got []rx
		master("Cpu", []*mem.Req{{Op: mem.Read, Addr: 0x10200, Len: 4, Class: "pio"}}, nil, &got)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// ARB c1, ADDR c2: retry; idle c3; ADDR c4 (arbitration hidden
		// behind the busy c3): retry; idle c5; ADDR c6: taken, with the
		// window-relative address. Turnaround c7; the memory takes the
		// request at c7 and has data at c8, moved at c9 (a wait state at
		// c8); the master pops it at c10.
		Expect(asked).To(Equal([]string{"c2 0x200+4", "c4 0x200+4", "c6 0x200+4"}))
		Expect(got).To(Equal([]rx{{10, 4, true}}))
		Expect(busRecords()).To(Equal([]string{
			"270000 9 Bus bus.pio.read master=Cpu target=Mem addr=0x10200 len=4 start=6 waits=1 hash=" + trace.HashBytes([]byte("WXYZ"))}))
		s := b.Stats()
		Expect(s.Retries).To(Equal(uint64(2)))
		Expect(s.Masters[0].Retries).To(Equal(uint64(2)))
	})

	It("forwards a request's Atomic qualifier to its target and carries a failed store-conditional back to the master", func() {
		setup(bus.PCI32(), 1)
		// A stand-in for a cache that keeps reservations: it answers every
		// non-posted write at once, failing each StoreConditional.
		sc, err := mem.NewChannel(e, "SC", cfg.WidthBytes, 2)
		Expect(err).NotTo(HaveOccurred())
		var atomics []string
		tgt := vtest.NewAgent(e, "SC", clk, func(now clock.Time, c clock.Cycle) bool {
			beat, ok := sc.Down.Pop(now)
			if !ok {
				return false
			}
			atomics = append(atomics, fmt.Sprintf("c%d %s %#x atomic=%d", c, beat.Req.Op, beat.Req.Addr, beat.Req.Atomic))
			if beat.Req.Op == mem.Write && beat.Last && !beat.Req.Posted {
				sc.Up.Push(now, mem.Beat{Req: beat.Req, First: true, Last: true,
					CondFailed: beat.Req.Atomic == mem.StoreConditional})
			}
			return true
		})
		sc.ConnectTarget(tgt)
		Expect(b.AddTarget("SC", 0x40000, 0x1000, sc)).To(Succeed())

		type done struct {
			Cycle      clock.Cycle
			Seq        uint64
			CondFailed bool
		}
		var got []done
		ch, err := b.AddMaster("Cpu")
		Expect(err).NotTo(HaveOccurred())
		reqs := []*mem.Req{
			{Op: mem.Write, Addr: 0x40010, Len: 4, Class: "pio", Master: "Cpu", Seq: 1, Atomic: mem.StoreConditional},
			{Op: mem.Write, Addr: 0x40010, Len: 4, Class: "pio", Master: "Cpu", Seq: 2},
		}
		i := 0
		cpu := vtest.NewAgent(e, "Cpu", clk, func(now clock.Time, c clock.Cycle) bool {
			if beat, ok := ch.Up.Pop(now); ok {
				got = append(got, done{c, beat.Req.Seq, beat.CondFailed})
			}
			// One write at a time, as a CPU waits for a store-conditional's
			// outcome before it goes on.
			if i < len(reqs) && len(got) == i && ch.Down.CanPush(now) {
				ch.Down.Push(now, mem.WriteBeats(reqs[i], []byte{1, 2, 3, 4}, cfg.WidthBytes)[0])
				i++
			}
			return len(got) < len(reqs)
		})
		ch.ConnectMaster(cpu)
		cpu.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		// SC pushed at c0: ARB c1, ADDR c2, DECODE c3, data phase c4 hands
		// the beat to the stand-in, which pops it at c5 and answers; the bus
		// sees the completion at c6 and forwards it, the master pops it at
		// c7 (the bus's idle turnaround cycle) and pushes the plain write,
		// seen at c8: ADDR c8 (arbitration hidden behind the busy c7),
		// DECODE c9, data c10, the stand-in answers at c11, the bus forwards
		// at c12 and the master pops at c13.
		Expect(atomics).To(Equal([]string{
			fmt.Sprintf("c5 write 0x10 atomic=%d", mem.StoreConditional),
			fmt.Sprintf("c11 write 0x10 atomic=%d", mem.NotAtomic),
		}))
		Expect(got).To(Equal([]done{{7, 1, true}, {13, 2, false}}))
	})

	// seen is one observer call, as the specs below record it.
	type seen struct {
		Who         string
		Cycle       clock.Cycle
		Master      string
		Addr        uint64
		Data        string
		Write       bool
		First, Last bool
	}
	watch := func(who string, into *[]seen) {
		b.Observe(func(now clock.Time, o bus.Observation) {
			Expect(o.Cycle).To(Equal(clk.CycleAt(now)))
			*into = append(*into, seen{who, o.Cycle, o.Master, o.Addr, string(o.Data), o.Write, o.First, o.Last})
		})
	}

	It("shows every beat of a split burst write to every observer, in subscription order", func() {
		c := bus.PCI32()
		c.MaxBurstBytes = 8
		setup(c, 1)
		var got []seen
		watch("A", &got)
		watch("B", &got)
		data := []byte("0123456789abcdef")
		master("Dma", []*mem.Req{{Op: mem.Write, Addr: 0x10004, Len: 16, Posted: true, Class: "dma"}}, [][]byte{data}, nil)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The data phases of the split-burst spec above: [4,8) at c4 (ARB
		// c1, ADDR c2, DECODE c3); idle c5; [8,16) ADDR c6 (hidden
		// arbitration), DECODE c7, data c8 and c9; idle c10; [16,20) ADDR
		// c11, DECODE c12, data c13. Each beat goes to A then B.
		var want []seen
		for _, w := range []seen{
			{Cycle: 4, Addr: 0x10004, Data: "0123", First: true},
			{Cycle: 8, Addr: 0x10008, Data: "4567"},
			{Cycle: 9, Addr: 0x1000c, Data: "89ab"},
			{Cycle: 13, Addr: 0x10010, Data: "cdef", Last: true},
		} {
			w.Master, w.Write = "Dma", true
			a, bb := w, w
			a.Who, bb.Who = "A", "B"
			want = append(want, a, bb)
		}
		Expect(cmp.Diff(want, got)).To(BeEmpty())
		// Observers do not change the bus's timing: same records as the
		// split-burst spec.
		Expect(busRecords()[2]).To(HavePrefix("390000 13 Bus bus.dma.write master=Dma target=Mem addr=0x10010 len=4 start=11"))
	})

	It("shows a read's beats with the data the target returned, in the data phases", func() {
		setup(bus.PCI32(), 2)
		Expect(m.Storage().Write(0x200, []byte("ABCDEFGHIJKLMNOP"))).To(Succeed())
		var got []seen
		watch("A", &got)
		master("Cpu", []*mem.Req{{Op: mem.Read, Addr: 0x10200, Len: 16, Class: "pio"}}, nil, nil)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The read-stall spec above: data phases at c6..c9 after two wait
		// states (c4, c5); the master pops each beat a cycle later.
		Expect(cmp.Diff([]seen{
			{"A", 6, "Cpu", 0x10200, "ABCD", false, true, false},
			{"A", 7, "Cpu", 0x10204, "EFGH", false, false, false},
			{"A", 8, "Cpu", 0x10208, "IJKL", false, false, false},
			{"A", 9, "Cpu", 0x1020c, "MNOP", false, false, true},
		}, got)).To(BeEmpty())
		Expect(b.Stats().DataCycles).To(Equal(uint64(4)))
	})

	It("runs an address-only upgrade: arbitration and address phase, no data, the target never sees it", func() {
		setup(bus.PCI32(), 1)
		Expect(m.Storage().Write(0x100, []byte("12345678"))).To(Succeed())
		var got []rx
		master("Cpu", []*mem.Req{
			{Op: mem.Read, Addr: 0x10100, Len: 32, Class: bus.ClassUpgrade},
			{Op: mem.Write, Addr: 0x10200, Len: 4, Posted: true, Class: "pio"},
		}, [][]byte{nil, {1, 2, 3, 4}}, &got)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The upgrade's request beat is pushed at c0 and the write's at c1.
		// Upgrade: ARB c1, ADDR c2, where it ends: the completion beat is
		// pushed to the master (popped at c3), and there is no decode,
		// turnaround or data phase. Idle c3 (IdleCycles 1). The write's
		// arbitration is hidden (the bus was busy at c3): ADDR c4, DECODE
		// c5, data c6. A 32-byte read would have taken ARB, ADDR,
		// turnaround and 8 data phases after the memory's latency.
		Expect(got).To(Equal([]rx{{3, 0, true}}))
		Expect(busRecords()).To(Equal([]string{
			"60000 2 Bus bus.upgrade.addr master=Cpu target=Mem addr=0x10100 len=32 start=1 waits=0",
			"180000 6 Bus bus.pio.write master=Cpu target=Mem addr=0x10200 len=4 start=4 waits=0 posted=1 hash=" + trace.HashBytes([]byte{1, 2, 3, 4}),
		}))
		s := b.Stats()
		// Busy: ARB, ADDR and idle of the upgrade, ADDR, DECODE, data and
		// idle of the write; one data cycle, the write's.
		Expect([]uint64{s.BusyCycles, s.DataCycles, s.WaitCycles}).To(Equal([]uint64{7, 1, 0}))
		Expect(s.Masters[0]).To(Equal(bus.MasterStats{Requests: 2, Bursts: 2, Bytes: 4}))
		// The memory never saw it: its only access is the write.
		Expect(m.Stats().Writes).To(Equal(uint64(1)))
		Expect(m.Stats().Reads).To(BeZero())
		back, _ := m.Storage().Bytes(0x100, 8)
		Expect(string(back)).To(Equal("12345678"))
	})

	It("shows an address-only upgrade to its observers once, in its address phase, with no data", func() {
		setup(bus.PCI32(), 1)
		var got []seen
		var reqs []*mem.Req
		watch("A", &got)
		b.Observe(func(_ clock.Time, o bus.Observation) {
			reqs = append(reqs, o.Req)
			Expect(o.Data).To(BeNil())
			Expect([]bool{o.BurstFirst, o.BurstLast}).To(Equal([]bool{true, true}))
			Expect(o.Target).To(Equal("Mem"))
			Expect(o.Err).To(BeEmpty())
		})
		master("Cpu", []*mem.Req{{Op: mem.Read, Addr: 0x10140, Len: 32, Class: bus.ClassUpgrade}}, nil, nil)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// ARB c1, ADDR c2 (as in the spec above): one observation, a read
		// (not a write: no data changes memory), first and last at once.
		Expect(cmp.Diff([]seen{{"A", 2, "Cpu", 0x10140, "", false, true, true}}, got)).To(BeEmpty())
		Expect(reqs).To(HaveLen(1))
		Expect([]any{reqs[0].Class, reqs[0].Len}).To(Equal([]any{bus.ClassUpgrade, 32}))
	})

	It("ends an address-only upgrade that nothing decodes with an error, without a data phase", func() {
		setup(bus.PCI32(), 1)
		var got []rx
		var errs []string
		b.Observe(func(_ clock.Time, o bus.Observation) { errs = append(errs, o.Err) })
		master("Cpu", []*mem.Req{{Op: mem.Read, Addr: 0x900, Len: 32, Class: bus.ClassUpgrade}}, nil, &got)
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("bus.unmapped")))
		// ARB c1, ADDR c2 with the error; popped at c3.
		Expect(got).To(Equal([]rx{{3, 0, true}}))
		Expect(errs).To(Equal([]string{"no target at 0x900"}))
	})

	DescribeTable("rejects impossible configurations",
		func(mod func(*bus.Config), msg string) {
			c := bus.PCI32()
			mod(&c)
			_, err := bus.MakeBuilder().WithEnv(env.New(env.Options{})).WithConfig(c).Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("zero width", func(c *bus.Config) { c.WidthBytes = 0 }, "width"),
		Entry("odd width", func(c *bus.Config) { c.WidthBytes = 3 }, "power of two"),
		Entry("burst below width", func(c *bus.Config) { c.MaxBurstBytes = 2 }, "max burst"),
		Entry("no address phase", func(c *bus.Config) { c.AddrCycles = 0 }, "address phase"),
		Entry("negative idle", func(c *bus.Config) { c.IdleCycles = -1 }, "negative"),
	)

	It("knows its presets and rejects unknown names", func() {
		for _, n := range []string{"pci32", "pci64", "turbochannel", "turbochannel25", "eisa"} {
			c, err := bus.Preset(n)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Validate()).To(Succeed())
		}
		// The DECstation 5000/200's TURBOchannel runs the 40 ns cycle of
		// AT-P5, twice the DEC 3000/300's 80 ns.
		Expect(bus.TurboChannel25().Clock.Period()).To(Equal(40 * clock.Nanosecond))
		Expect(bus.TurboChannel().Clock.Period()).To(Equal(80 * clock.Nanosecond))
		_, err := bus.Preset("isa")
		Expect(err).To(MatchError(ContainSubstring(`unknown bus preset "isa"`)))
	})
})

var _ = Describe("Bridge and address-only upgrades", func() {
	It("drops prefetched data that a memory-bus master claims with an upgrade, so a later DMA read sees its stores", func() {
		cfg := testBridge()
		cfg.PrefetchBytes = 64
		r := newRig(memBusConfig(), cfg, 4)
		Expect(r.mem.Storage().Write(0x200, make([]byte, 0x80))).To(Succeed())
		ni := []*op{
			{Req: &mem.Req{Op: mem.Read, Addr: 0x200, Len: 32, Class: "dma"}},
			{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: "dma"}, At: 32},
		}
		runMaster(r.e, r.pci, "NI", ni)
		// A write-back cache holding [0x220, 0x240) shared stores to
		// 0x228: it claims the line with an upgrade (no data on the bus)
		// and, once it owns it, stores to memory directly (as host/memsys
		// does), which no bus transaction shows.
		cpu := []*op{{Req: &mem.Req{Op: mem.Read, Addr: 0x220, Len: 32, Class: bus.ClassUpgrade}, At: 44}}
		runMaster(r.e, r.mb, "CPU", cpu)
		var up []clock.Cycle
		r.mb.Observe(func(_ clock.Time, o bus.Observation) {
			if o.Master == "CPU" {
				up = append(up, o.Cycle)
				Expect(r.mem.Storage().Write(0x228, []byte("NEWDATA!"))).To(Succeed())
			}
		})
		_, err := r.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// As in the bridge's RFO spec, [0x220, 0x260) is in the bridge by
		// m46 and the upgrade pushed at m44 waits for the prefetch: ARB
		// m47, ADDR m48, where the observers see it and it ends (the CPU
		// pops its completion at m49), six cycles before an RFO's first
		// data beat (m54).
		Expect(up).To(Equal([]clock.Cycle{48}))
		Expect(cpu[0].Done).To(Equal(clock.Cycle(49)))
		// The bridge drops the buffer at its next PCI edge, p25 (m50). The
		// NI's second read (ADDR p34) misses: a delayed read, which
		// fetches the stored bytes instead of the stale prefetched zeros.
		Expect(string(ni[1].Got[8:16])).To(Equal("NEWDATA!"))
		_, st := r.br.Stats()
		Expect(st.Invalidations).To(Equal(uint64(1)))
		Expect(st.ReadMisses).To(Equal(uint64(2)))
		Expect(st.ReadHits).To(Equal(uint64(0)))
	})
})
