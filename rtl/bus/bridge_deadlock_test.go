package bus_test

import (
	"strconv"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Writes crossing the bridge both ways at once (the deadlock of commit
// dc3659e, found by the LCI regression lci#24). The rig: the test memory
// bus (66.67 MHz, 8 bytes) with host memory, 32-bit PCI with a device,
// and the LCI platforms' bridge preset, PCIHostBridge (256 bytes of posted
// writes each way, 32-byte lines, no memory-bus hold). The CPU posts
// eighteen 32-byte PIO writes to the device (Down), the NI twelve 36-byte
// DMA writes to memory (Up), each 2 + 32 + 2 bytes over three lines, so
// that one Up op costs three memory-bus transactions (the bridge
// re-arbitrates per line) while one Down op costs one PCI transaction.
//
// A direction's op cannot cross at once only when its crossing FIFO (four
// ops) is full behind the op its far half is issuing, and a sixth op
// waits to enter it: six writes taken and not yet on the far bus, whose
// data (at most 7 x 36 bytes here) the posted-write buffer must still
// hold, so that a seventh passes the buffer's room check. A write taken
// then holds its bus only when it has more beats than the bridge's 2-deep
// target channel (the CPU's 4, the NI's 10). So one write each way cannot
// deadlock; a direction must first be six writes behind. The CPU writes
// faster than PCI drains, so Down fills first and stays full. From then on each bus serves its two masters in turn
// (round-robin): per PCI round one Down op drains and one NI write (one Up
// op) arrives; per memory-bus round the bridge's Up master gets one
// transaction, a third of an Up op. Under the old acceptance rule
// (mutation bus.takeblocked) every CPU write is taken although its op
// cannot cross, and holds the memory bus in wait states until a Down op
// drains; Up grows by two thirds of an op per round until it is full, the
// next NI write is taken the same way and holds PCI, the Down op at the
// head of its far half needs PCI, the Up op at the head of the other needs
// the memory bus: both buses wait for ever. With the rule of dc3659e both
// writes are retried instead, the retries leave each bus to the bridge's
// master in between, and everything completes.
var _ = Describe("Bridge with writes crossing both ways", func() {
	const cpuWrites, niWrites = 18, 12
	run := func(mutations map[string]int) (*rig, []*op, []*op, error) {
		mc := memBusConfig()
		e := vtest.NewEnv(vtest.Options{Clock: mc.Clock, Mutations: mutations, Trace: true})
		r := newRigOn(e, mc, bus.PCIHostBridge(), 4)
		var cpu, ni []*op
		for i := range cpuWrites {
			d := make([]byte, 32)
			for k := range d {
				d[k] = byte(i + k)
			}
			cpu = append(cpu, &op{Req: &mem.Req{Op: mem.Write, Addr: uint64(0x80000000 + 32*i), Len: 32, Class: "pio", Posted: true}, Data: d})
		}
		for i := range niWrites {
			d := make([]byte, 36)
			for k := range d {
				d[k] = byte(0x80 + i + k)
			}
			ni = append(ni, &op{Req: &mem.Req{Op: mem.Write, Addr: uint64(0x101e + 64*i), Len: 36, Class: "dma", Posted: true}, Data: d})
		}
		runMaster(r.e, r.mb, "CPU", cpu)
		runMaster(r.e, r.pci, "NI", ni)
		_, err := r.e.Run()
		return r, cpu, ni, err
	}

	It("completes both streams: a write is retried while its op cannot cross", func() {
		r, cpu, ni, err := run(nil)
		Expect(err).NotTo(HaveOccurred())
		for i, o := range cpu {
			back, _ := r.dev.Storage().Bytes(uint64(32*i), 32)
			Expect(back).To(Equal(o.Data), "CPU write %d", i)
		}
		for i, o := range ni {
			back, _ := r.mem.Storage().Bytes(uint64(0x101e+64*i), 36)
			Expect(back).To(Equal(o.Data), "NI write %d", i)
		}
		// Steady state, once Down is full (from the CPU's seventh write
		// on): PCI alternates a Down write and an NI write, with hidden
		// arbitration. The Down write of 32 bytes: address 1, decode 1, 8
		// data phases and 1 wait state (the record's waits=1, not derived
		// here), idle 1 = 12 cycles; the NI's 36 bytes at ...1e are 10
		// data phases (2 + 8 x 4 + 2 bytes): 1 + 1 + 10 + 1 = 13. A round
		// is 25 PCI cycles = 50 memory-bus cycles. Each round frees one
		// Down op, so the CPU's retried write is taken once per round,
		// and the NI posts one write per round.
		type tenure struct {
			Master         string
			Start, End     clock.Cycle
			Waits          string
			NextStartAfter clock.Cycle
		}
		var pci []tenure
		for _, rec := range r.e.Trace.Records() {
			if rec.Path != "PCI" {
				continue
			}
			m, _ := rec.Get("master")
			st, _ := rec.Get("start")
			w, _ := rec.Get("waits")
			start, err := strconv.Atoi(st)
			Expect(err).NotTo(HaveOccurred())
			pci = append(pci, tenure{Master: m, Start: clock.Cycle(start), End: rec.Cycle, Waits: w})
		}
		// The NI's first write goes first (p1-p13); from then on, while
		// the NI has writes (its last is tenure 2 x 12 - 2), a Down
		// write's record ends 10 cycles after its address phase (decode,
		// 8 data, 1 wait), an NI write's 11 after (decode, 10 data), and
		// the next address phase follows the idle cycle.
		for k := 1; k < 2*niWrites-1; k++ {
			t := pci[k]
			if k%2 == 1 {
				Expect(t.Master).To(Equal("Br.Down"), "PCI tenure %d", k)
				Expect(t.End-t.Start).To(Equal(clock.Cycle(10)), "PCI tenure %d", k)
				Expect(t.Waits).To(Equal("1"), "PCI tenure %d", k)
			} else {
				Expect(t.Master).To(Equal("NI"), "PCI tenure %d", k)
				Expect(t.End-t.Start).To(Equal(clock.Cycle(11)), "PCI tenure %d", k)
				Expect(t.Waits).To(Equal("0"), "PCI tenure %d", k)
			}
			Expect(pci[k+1].Start).To(Equal(t.End+2), "PCI tenure %d", k+1)
		}
		for i := 7; i < cpuWrites-1; i++ {
			Expect(cpu[i].Done-cpu[i-1].Done).To(Equal(clock.Cycle(50)), "CPU write %d", i)
		}
		for i := 2; i < niWrites; i++ {
			Expect(ni[i].Done-ni[i-1].Done).To(Equal(clock.Cycle(25)), "NI write %d", i)
		}
		// The CPU waited by retries, not in wait states: the memory bus
		// never waited in a CPU data phase, and every retry was the Down
		// target's.
		down, up := r.br.Stats()
		Expect(down.WriteRetries).To(BeNumerically(">", 0))
		Expect(r.mb.Stats().Retries).To(Equal(down.WriteRetries))
		Expect(r.mb.Stats().Masters[1].WaitCycles).To(BeZero())
		Expect(down.Writes).To(Equal(uint64(cpuWrites)))
		Expect(up.Writes).To(Equal(uint64(niWrites)))
		// Three memory-bus transactions per NI write (2, 32 and 2 bytes).
		Expect(up.FarTransactions).To(Equal(uint64(3 * niWrites)))
	})

	It("bus.takeblocked: a write taken while its op cannot cross holds its bus; both buses end up waiting on each other", func() {
		r, cpu, ni, err := run(map[string]int{"bus.takeblocked": 1})
		// The progress watchdog stops the run (no hang): both buses are
		// in the data phase of a write that the bridge took and cannot
		// accept, and both crossing FIFOs are full.
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("[stuck]"))
		Expect(err.Error()).To(MatchRegexp(`MemBus: DATA: CPU write 0x8[0-9a-f]+\+32 .* wait cycles`))
		Expect(err.Error()).To(MatchRegexp(`PCI: DATA: NI write 0x[0-9a-f]+\+36 .* wait cycles`))
		Expect(err.Error()).To(ContainSubstring("Br.Down.Ops: 4/4 entries"))
		Expect(err.Error()).To(ContainSubstring("Br.Up.Ops: 4/4 entries"))
		Expect(cpu[cpuWrites-1].Done).To(BeZero())
		Expect(ni[niWrites-1].Done).To(BeZero())
		// No write was retried for its op: that is the old rule.
		down, up := r.br.Stats()
		Expect(down.WriteRetries).To(BeZero())
		Expect(up.WriteRetries).To(BeZero())
	})
})
