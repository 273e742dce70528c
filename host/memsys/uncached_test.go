package memsys_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// cpuBeat is one answer beat as the CPU popped it.
type cpuBeat struct {
	Cycle       clock.Cycle
	Data        string
	First, Last bool
	Err         string
}

// loadAgent pushes one load of n bytes at addr on ch at cycle 0 and
// records every answer beat with the cycle it was popped in.
func loadAgent(e *env.Env, ch *mem.Channel, addr uint64, n int, got *[]cpuBeat) {
	sent, done := false, false
	a := vtest.NewAgent(e, "Cpu", clk, func(now clock.Time, c clock.Cycle) bool {
		for {
			b, ok := ch.Up.Pop(now)
			if !ok {
				break
			}
			*got = append(*got, cpuBeat{c, string(b.Data), b.First, b.Last, b.Err})
			done = done || b.Last
		}
		if !sent && ch.Down.CanPush(now) {
			req := &mem.Req{Op: mem.Read, Addr: addr, Len: n, Class: "cpu", Master: "Cpu"}
			ch.Down.Push(now, mem.Beat{Req: req, First: true, Last: true})
			sent = true
		}
		return !done
	})
	ch.ConnectMaster(a)
	a.Start()
}

// The memory holds "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345" at 0x100, then
// "abcdefghijklmnopqrstuvwxyz6789!?" at 0x120 and "<0123456789abcdef>" at
// 0x140, on an uncached page.
const uncachedText = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345abcdefghijklmnopqrstuvwxyz6789!?<0123456789abcdef>"

var _ = Describe("Cache: uncached reads forwarded as they arrive (cut-through)", func() {
	// Timing on testBus and a memory of latency 2 streaming 8 bytes a
	// cycle, as the fill timing in cache_test.go: the CPU pushes the load
	// at c0, the cache takes it at c1 and looks it up at c2 (HitCycles 1):
	// uncached, the read goes to the bus as it is, pushed at p=2. The bus
	// arbitrates at c3, sends the address at c4 and turns around at c5,
	// when the memory takes the request; with its latency of 2 it pushes
	// its k-th 8-byte beat at c7+k, the bus moves it at c8+k and the cache
	// pops it at c9+k. A CPU beat pushed by the cache at cycle t is popped
	// by the CPU at t+1, and the port takes one push a cycle.
	DescribeTable("sends each CPU beat in the cycle the bus beat completing it arrives, not after the whole read",
		func(portWidth int, addr uint64, n int, want []cpuBeat) {
			e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: 100 * clock.Microsecond})
			cc := testCache()
			cc.PortWidthBytes = portWidth
			nd, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithCache(cc).WithBus(testBus()).
				WithMemory(1<<16, 0, 2, 8).WithPolicy(0, 0x1000, memsys.Uncached).Build("N")
			Expect(err).NotTo(HaveOccurred())
			Expect(nd.Memory.Storage().Write(0x100, []byte(uncachedText))).To(Succeed())
			var got []cpuBeat
			loadAgent(e, nd.Caches[0].Port(), addr, n, &got)
			res, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Stopped).To(BeFalse(), "the run reached its time limit")
			Expect(cmp.Diff(want, got)).To(BeEmpty())
			s := nd.Caches[0].Stats()
			Expect([]uint64{s.Hits, s.Misses, s.Fills, s.Uncached}).To(Equal([]uint64{0, 0, 0, 1}))
		},
		// One beat: the cache pops it at c9 and answers at once, popped at
		// c10, as before cut-through (the uncached spec in cache_test.go).
		Entry("one beat: unchanged", 8, uint64(0x100), 8, []cpuBeat{
			{10, "ABCDEFGH", true, true, ""},
		}),
		// Four bus beats popped at c9..c12, each forwarded in its cycle:
		// popped c10..c13. Store-and-forward sent them after the last
		// (c12..c15): popped c13..c16, the whole read 3 cycles later.
		Entry("port as wide as the bus: one CPU beat per bus beat", 8, uint64(0x100), 32, []cpuBeat{
			{10, "ABCDEFGH", true, false, ""},
			{11, "IJKLMNOP", false, false, ""},
			{12, "QRSTUVWX", false, false, ""},
			{13, "YZ012345", false, true, ""},
		}),
		// A 4-byte port: the bus beat popped at c9 makes two CPU beats,
		// pushed at c9 and (one push a cycle) c10; the one popped at c10
		// two more, pushed c11 and c12. Popped c10..c13: the port's rate,
		// one cycle ahead of store-and-forward's c11..c14.
		Entry("narrower port: two CPU beats per bus beat, at the port's rate", 4, uint64(0x100), 16, []cpuBeat{
			{10, "ABCD", true, false, ""},
			{11, "EFGH", false, false, ""},
			{12, "IJKL", false, false, ""},
			{13, "MNOP", false, true, ""},
		}),
		// A 16-byte port: CPU beat 0 is complete with the bus beat popped
		// at c10, beat 1 with the last, popped at c12: popped c11 and c13
		// (store-and-forward: c13, c14).
		Entry("wider port: a CPU beat once its bus beats are in", 16, uint64(0x100), 32, []cpuBeat{
			{11, "ABCDEFGHIJKLMNOP", true, false, ""},
			{13, "QRSTUVWXYZ012345", false, true, ""},
		}),
		// Bytes 0x104..0x114 on 8-byte beats are 4, 8 and 4 bytes (the
		// memory answers aligned beats), popped at c9, c10, c11 and
		// forwarded as the 8-byte port's chunks of the same sizes: popped
		// c10, c11, c12 (store-and-forward: c12, c13, c14).
		Entry("unaligned: the port's chunks follow the address", 8, uint64(0x104), 16, []cpuBeat{
			{10, "EFGH", true, false, ""},
			{11, "IJKLMNOP", false, false, ""},
			{12, "QRST", false, true, ""},
		}),
		// 80 bytes cross testBus's 64-byte burst boundary: the bus splits
		// the read in two transactions. The first's eight beats are popped
		// at c9..c16 (popped by the CPU c10..c17). The bus's last data
		// cycle of the first burst is c15; the second burst (0x140, 16
		// bytes) arbitrates at c16 (no hidden arbitration), sends its
		// address at c17 and turns around at c18, when the memory takes
		// it; its beats are pushed at c20 and c21, moved at c21 and c22 and
		// popped by the cache at c22 and c23: popped by the CPU at c23 and
		// c24. First only on the first beat, Last only on the second
		// burst's last.
		Entry("a read split in two bus bursts: First and Last of the whole read", 8, uint64(0x100), 80, []cpuBeat{
			{10, "ABCDEFGH", true, false, ""},
			{11, "IJKLMNOP", false, false, ""},
			{12, "QRSTUVWX", false, false, ""},
			{13, "YZ012345", false, false, ""},
			{14, "abcdefgh", false, false, ""},
			{15, "ijklmnop", false, false, ""},
			{16, "qrstuvwx", false, false, ""},
			{17, "yz6789!?", false, false, ""},
			{23, "<0123456", false, false, ""},
			{24, "789abcde", false, true, ""},
		}),
	)

	It("carries an error seen on a bus beat on every later CPU beat, the last one included", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: 100 * clock.Microsecond})
		nd, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithCache(testCache()).WithBus(testBus()).
			WithMemory(1<<16, 0, 2, 8).Build("N")
		Expect(err).NotTo(HaveOccurred())
		// A device at 0x20000 (I/O space: uncached) answers a read the
		// cycle after it takes it with one 8-byte beat a cycle, the third
		// beat flagged (a parity error on the device's bus).
		dev, err := mem.NewChannel(e, "Dev", 8, 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(nd.Bus.AddTarget("Dev", 0x20000, 0x1000, dev)).To(Succeed())
		var req *mem.Req
		k := 0
		d := vtest.NewAgent(e, "Dev", clk, func(now clock.Time, c clock.Cycle) bool {
			if req == nil {
				b, ok := dev.Down.Pop(now)
				if !ok {
					return false
				}
				req = b.Req
				return true
			}
			if k < req.Len/8 && dev.Up.CanPush(now) {
				b := mem.Beat{Req: req, Data: []byte{'0' + byte(k), '-', '-', '-', '-', '-', '-', '-'},
					First: k == 0, Last: k == req.Len/8-1}
				if k == 2 {
					b.Err = "parity"
				}
				dev.Up.Push(now, b)
				k++
			}
			return k < req.Len/8
		})
		dev.ConnectTarget(d)
		var got []cpuBeat
		loadAgent(e, nd.Caches[0].Port(), 0x20000, 32, &got)
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse(), "the run reached its time limit")
		// Read pushed at p=2, arbitration c3, address c4: the device takes
		// it at c5 (the bus turns around meanwhile) and pushes its beats at
		// c6..c9; the bus moves them at c7..c10 (its data phase starts
		// after the turnaround), the cache pops and forwards them at
		// c8..c11, popped by the CPU at c9..c12. Beats 0 and 1 left before
		// the error: they are clean; beats 2 and 3 carry it.
		Expect(cmp.Diff([]cpuBeat{
			{9, "0-------", true, false, ""},
			{10, "1-------", false, false, ""},
			{11, "2-------", false, false, "parity"},
			{12, "3-------", false, true, "parity"},
		}, got)).To(BeEmpty())
	})
})
