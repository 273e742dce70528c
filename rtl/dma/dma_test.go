package dma_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("DMA engine", func() {
	var (
		e      *env.Env
		a, b   *mem.Memory
		eng    *dma.Engine
		clk    = clock.MHz(100)
		pa, pb int
	)

	setup := func(builder dma.Builder) {
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		var err error
		mk := func(name string) *mem.Memory {
			m, err := mem.MakeBuilder().WithEnv(e).WithClock(clk).WithSize(1 << 16).
				WithLatency(1).WithBytesPerCycle(8).WithPortWidth(8).Build(name)
			Expect(err).NotTo(HaveOccurred())
			return m
		}
		a, b = mk("A"), mk("B")
		eng, err = builder.WithEnv(e).WithClock(clk).Build("Dma")
		Expect(err).NotTo(HaveOccurred())
		pa = eng.AddMemPort("A", a.Port(0))
		pb = eng.AddMemPort("B", b.Port(0))
	}

	submitAt := func(cycle clock.Cycle, d dma.Descriptor) {
		vtest.NewAgent(e, "Cpu", clk, func(now clock.Time, c clock.Cycle) bool {
			if c < cycle {
				return true
			}
			Expect(eng.Submit(now, d)).To(BeTrue())
			return false
		}).Start()
	}

	pattern := func(n int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(i*13 + 1)
		}
		return p
	}

	cyclesOf := func(kind, dir string) []clock.Cycle {
		var out []clock.Cycle
		for _, r := range e.Trace.Records() {
			if r.Path != "Dma" || r.Kind != kind {
				continue
			}
			if d, _ := r.Get("dir"); d == dir {
				out = append(out, r.Cycle)
			}
		}
		return out
	}

	It("moves real bytes in bursts, overlapping reads with writes", func() {
		setup(dma.MakeBuilder().WithSetupCycles(2).WithBurst(16).WithBuffer(32))
		data := pattern(64)
		Expect(a.Storage().Write(0x100, data)).To(Succeed())
		var doneAt clock.Cycle
		eng.OnDone(func(now clock.Time, d dma.Descriptor, err string) {
			Expect(err).To(BeEmpty())
			doneAt = clk.CycleAt(now)
		})
		submitAt(0, dma.Descriptor{Src: dma.Mem(pa, 0x100), Dst: dma.Mem(pb, 0x2000), Len: 64, Tag: 7})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		got, _ := b.Storage().Bytes(0x2000, 64)
		Expect(got).To(Equal(data))
		// Worked by hand: descriptor popped at c1, setup c1-c2, first read
		// issued at c3. Each 16-byte read: accepted by memory A one cycle
		// after issue, data one cycle later (latency 1), two 8-byte beats,
		// seen by the engine one cycle after each push: the read's last beat
		// arrives at c7, c11, c15, c19. With one read outstanding the next
		// read is issued in the same cycle. A burst is written from the cycle
		// after it is staged, one beat per cycle: last beats at c9, c13, c17,
		// c21; the posted descriptor completes at c22.
		Expect(cyclesOf("dma.burst", "read")).To(Equal([]clock.Cycle{7, 11, 15, 19}))
		Expect(cyclesOf("dma.burst", "write")).To(Equal([]clock.Cycle{9, 13, 17, 21}))
		Expect(doneAt).To(Equal(clock.Cycle(22)))
		var done []string
		for _, r := range e.Trace.Records() {
			if r.Kind == "dma.done" {
				done = append(done, r.Format())
			}
		}
		Expect(done).To(Equal([]string{"220000 22 Dma dma.done tag=7 src=port0:0x100 dst=port1:0x2000 len=64 hash=" + trace.HashBytes(data)}))
	})

	It("overlaps reads when more than one may be outstanding", func() {
		setup(dma.MakeBuilder().WithSetupCycles(2).WithBurst(16).WithBuffer(64).WithOutstandingReads(2))
		Expect(a.Storage().Write(0, pattern(64))).To(Succeed())
		submitAt(0, dma.Descriptor{Src: dma.Mem(pa, 0), Dst: dma.Mem(pb, 0), Len: 64})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Reads issued at c3 and c4 (two outstanding): memory A accepts the
		// second in the cycle it finishes the first (c6), so the last beats
		// arrive at c7 and c9 instead of c7 and c11.
		Expect(cyclesOf("dma.burst", "read")[:2]).To(Equal([]clock.Cycle{7, 9}))
		got, _ := b.Storage().Bytes(0, 64)
		Expect(got).To(Equal(pattern(64)))
	})

	It("splits transfers at burst-aligned boundaries", func() {
		setup(dma.MakeBuilder().WithSetupCycles(0).WithBurst(16).WithBuffer(32))
		Expect(a.Storage().Write(0x0, pattern(64))).To(Succeed())
		submitAt(0, dma.Descriptor{Src: dma.Mem(pa, 0x8), Dst: dma.Mem(pb, 0x4), Len: 40})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		var reads, writes []string
		for _, r := range e.Trace.Records() {
			if r.Kind == "dma.burst" {
				d, _ := r.Get("dir")
				addr, _ := r.Get("addr")
				n, _ := r.Get("len")
				if d == "read" {
					reads = append(reads, addr+"+"+n)
				} else {
					writes = append(writes, addr+"+"+n)
				}
			}
		}
		Expect(reads).To(Equal([]string{"0x8+8", "0x10+16", "0x20+16"}))
		Expect(writes).To(Equal([]string{"0x4+12", "0x10+16", "0x20+12"}))
		got, _ := b.Storage().Bytes(0x4, 40)
		Expect(got).To(Equal(pattern(64)[8:48]))
	})

	It("waits for write acknowledgements when writes are not posted", func() {
		setup(dma.MakeBuilder().WithSetupCycles(2).WithBurst(16).WithBuffer(32).WithPostedWrites(false))
		Expect(a.Storage().Write(0x100, pattern(16))).To(Succeed())
		var doneAt clock.Cycle
		eng.OnDone(func(now clock.Time, d dma.Descriptor, err string) { doneAt = clk.CycleAt(now) })
		submitAt(0, dma.Descriptor{Src: dma.Mem(pa, 0x100), Dst: dma.Mem(pb, 0), Len: 16})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The write's last beat goes at c9 (as above); memory B accepts at
		// c9, writes at c10-c11 and acknowledges at c11; the engine takes the
		// ack at c12 and completes at c13 (completion is decided first in a
		// cycle, on what was registered before it).
		Expect(doneAt).To(Equal(clock.Cycle(13)))
	})

	It("queues descriptors and runs them in order", func() {
		setup(dma.MakeBuilder().WithSetupCycles(1).WithBurst(16).WithQueueDepth(2))
		Expect(a.Storage().Write(0, pattern(48))).To(Succeed())
		var tags []uint64
		eng.OnDone(func(now clock.Time, d dma.Descriptor, err string) { tags = append(tags, d.Tag) })
		n := 0
		vtest.NewAgent(e, "Cpu", clk, func(now clock.Time, c clock.Cycle) bool {
			if n < 3 && eng.Submit(now, dma.Descriptor{Src: dma.Mem(pa, uint64(16*n)), Dst: dma.Mem(pb, uint64(16*n)), Len: 16, Tag: uint64(n)}) {
				n++
			}
			return n < 3
		}).Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(tags).To(Equal([]uint64{0, 1, 2}))
		got, _ := b.Storage().Bytes(0, 48)
		Expect(got).To(Equal(pattern(48)))
		Expect(eng.Stats()).To(Equal(dma.Stats{Descriptors: 3, Bytes: 48}))
	})

	It("streams into and out of FIFOs", func() {
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		var err error
		a, err = mem.MakeBuilder().WithEnv(e).WithClock(clk).WithLatency(1).Build("A")
		Expect(err).NotTo(HaveOccurred())
		b, err = mem.MakeBuilder().WithEnv(e).WithClock(clk).WithLatency(1).Build("B")
		Expect(err).NotTo(HaveOccurred())
		mid, err := fifo.MakeBuilder[[]byte]().WithEnv(e).WithDepth(4).WithWidth(64).Build("Mid")
		Expect(err).NotTo(HaveOccurred())
		send, err := dma.MakeBuilder().WithEnv(e).WithClock(clk).WithBurst(16).Build("Send")
		Expect(err).NotTo(HaveOccurred())
		recv, err := dma.MakeBuilder().WithEnv(e).WithClock(clk).WithBurst(16).Build("Rx")
		Expect(err).NotTo(HaveOccurred())
		sa := send.AddMemPort("A", a.Port(0))
		so := send.AddStreamOut("Mid", mid)
		ri := recv.AddStreamIn("Mid", mid)
		rb := recv.AddMemPort("B", b.Port(0))
		Expect(a.Storage().Write(0, pattern(100))).To(Succeed())
		vtest.NewAgent(e, "Cpu", clk, func(now clock.Time, c clock.Cycle) bool {
			send.Submit(now, dma.Descriptor{Src: dma.Mem(sa, 0), Dst: dma.StreamPort(so), Len: 100})
			recv.Submit(now, dma.Descriptor{Src: dma.StreamPort(ri), Dst: dma.Mem(rb, 0x40), Len: 100})
			return false
		}).Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		got, _ := b.Storage().Bytes(0x40, 100)
		Expect(got).To(Equal(pattern(100)))
	})

	It("refuses a bad descriptor and reports it", func() {
		setup(dma.MakeBuilder())
		var errs []string
		eng.OnDone(func(now clock.Time, d dma.Descriptor, err string) { errs = append(errs, err) })
		submitAt(0, dma.Descriptor{Src: dma.Mem(pa, 0), Dst: dma.Mem(9, 0), Len: 8})
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("dma.descriptor")))
		Expect(errs).To(ConsistOf(ContainSubstring("no port 9")))
	})

	It("shows its states in the waveform", func() {
		setup(dma.MakeBuilder().WithSetupCycles(2).WithBurst(16).WithBuffer(32))
		submitAt(0, dma.Descriptor{Src: dma.Mem(pa, 0), Dst: dma.Mem(pb, 0), Len: 16})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		st := e.Waves.Lookup("dma.state")
		Expect(st).NotTo(BeNil())
		Expect(e.Waves.Format(st, st.Value())).To(Equal("sIDLE"))
	})

	DescribeTable("rejects impossible parameters",
		func(bld dma.Builder, msg string) {
			_, err := bld.WithEnv(env.New(env.Options{})).WithClock(clk).Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("zero queue", dma.MakeBuilder().WithQueueDepth(0), "queue depth 0"),
		Entry("zero burst", dma.MakeBuilder().WithBurst(0), "burst 0"),
		Entry("buffer below burst", dma.MakeBuilder().WithBurst(64).WithBuffer(32), "at least one burst"),
		Entry("negative setup", dma.MakeBuilder().WithSetupCycles(-1), "setup"),
		Entry("no outstanding reads", dma.MakeBuilder().WithOutstandingReads(0), "outstanding"),
	)
})
