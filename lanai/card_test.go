package lanai_test

import (
	"errors"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// pciCycle is one PCI clock period (33.33 MHz): one 4-byte data phase.
const pciCycle = clock.Time(30000)

var _ = Describe("Card", func() {
	var e *env.Env
	BeforeEach(func() { e = env.New(env.Options{Trace: trace.NewRecorder()}) })

	// lastWrite returns the time of the last write transaction that memory
	// path finished (from the trace).
	lastWrite := func(path string) clock.Time {
		var t clock.Time
		for _, r := range e.Trace.Records() {
			if r.Path == path && r.Kind == "mem.write" {
				t = r.Time
			}
		}
		return t
	}

	Describe("host DMA", func() {
		It("copies host memory into SRAM and back, no faster than the PCI bus", func() {
			const n = 1024
			fw := newFW(firmware.HostDMADone)
			nd := newNode(e, "H", 0, 1, fw, nodeOpts{pci: true})
			data := pattern(n, 3)
			Expect(nd.host.Storage().Write(0x1000, data)).To(Succeed())
			fw.boot = func(f *testFW, c *firmware.Ctx) error {
				c.Charge(10)
				f.dma(c, firmware.HostDMA{Dir: firmware.ToNI, HostAddr: 0x1000, SRAM: 0x400, Len: n, Tag: 1})
				return nil
			}
			var inSRAM []byte
			fw.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
				if ev.Tag == 1 {
					inSRAM, _ = nd.card.ReadSRAM(0x400, n)
					c.Charge(5)
					f.dma(c, firmware.HostDMA{Dir: firmware.ToHost, HostAddr: 0x8000, SRAM: 0x400, Len: n, Tag: 2})
				}
			}
			nd.card.Start()
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(e.Monitor.Err()).NotTo(HaveOccurred())

			Expect(inSRAM).To(Equal(data), "host to SRAM")
			got, err := nd.host.Storage().Bytes(0x8000, n)
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(data), "SRAM back to host")

			done := fw.events(firmware.HostDMADone)
			Expect(done).To(HaveLen(2))
			Expect([]uint64{done[0].Tag, done[1].Tag}).To(Equal([]uint64{1, 2}))
			Expect([]int{done[0].Len, done[1].Len}).To(Equal([]int{n, n}))

			// The bus moves 4 bytes per data phase: 1024 bytes need at least
			// 256 PCI cycles of 30 ns, 7.68 µs, whatever the overheads.
			busTime := n / 4 * pciCycle
			// To the NI: from the boot handler's commit (cycle 10) to the
			// completion.
			Expect(done[0].At - cyc(10)).To(BeNumerically(">=", busTime))
			// To the host: from the commit of the handler that started it (5
			// cycles after its dispatch) to the last burst written into host
			// memory (the engine's writes are posted: it completes once the
			// data is on its way).
			back := lanaiClk.After(done[0].Start, 5)
			Expect(lastWrite("H.Mem") - back).To(BeNumerically(">=", busTime))

			st := nd.card.Stats()
			Expect(st.HostDMAs).To(Equal(uint64(2)))
			Expect(st.HostDMABytes).To(Equal(uint64(2 * n)))
			Expect(st.Handlers).To(Equal(uint64(2)))
		})
	})

	DescribeTable("reports a control program's misuse of the hardware, once",
		func(boot func(f *testFW, c *firmware.Ctx) error, bArms bool, rule string) {
			fa := newFW(firmware.HostDMADone, firmware.SendDone)
			fb := newFW(firmware.RecvDone)
			a := newNode(e, "A", 0, 2, fa, nodeOpts{pci: true})
			b := newNode(e, "B", 1, 2, fb, nodeOpts{})
			connect(e, a, b, netPlat.Link)
			fa.boot = boot
			if bArms {
				fb.boot = func(f *testFW, c *firmware.Ctx) error {
					f.arm(c, 0, 1024)
					return nil
				}
			}
			a.card.Start()
			b.card.Start()
			_, err := e.Run()
			Expect(err).To(MatchError(ContainSubstring("[" + rule + "]")))
			vs := e.Monitor.Violations()
			Expect(vs).To(HaveLen(1))
			Expect(vs[0].Check).To(Equal(rule))
		},
		Entry("a packet to itself", func(_ *testFW, c *firmware.Ctx) error {
			c.StartSend(firmware.Packet{Dst: 0, SRAM: 0, Len: 64})
			return nil
		}, false, "ni.send"),
		Entry("a packet to a node outside the cluster", func(_ *testFW, c *firmware.Ctx) error {
			c.StartSend(firmware.Packet{Dst: 2, SRAM: 0, Len: 64})
			return nil
		}, false, "ni.send"),
		Entry("an empty packet", func(_ *testFW, c *firmware.Ctx) error {
			c.StartSend(firmware.Packet{Dst: 1, SRAM: 0, Len: 0})
			return nil
		}, false, "ni.send"),
		Entry("a second packet while the send engine is full", func(f *testFW, c *firmware.Ctx) error {
			f.send(c, firmware.Packet{Dst: 1, SRAM: 0, Len: 64})
			c.StartSend(firmware.Packet{Dst: 1, SRAM: 64, Len: 64})
			return nil
		}, true, "fw.overflow"),
		Entry("a second host DMA while the engine is full", func(f *testFW, c *firmware.Ctx) error {
			f.dma(c, firmware.HostDMA{Dir: firmware.ToNI, Len: 64})
			c.StartHostDMA(firmware.HostDMA{Dir: firmware.ToNI, SRAM: 64, Len: 64})
			return nil
		}, false, "fw.overflow"),
		Entry("arming the receive engine twice", func(_ *testFW, c *firmware.Ctx) error {
			c.ArmRecv(0, 64)
			c.ArmRecv(64, 64)
			return nil
		}, false, "fw.overflow"),
		Entry("an SRAM access outside SRAM", func(_ *testFW, c *firmware.Ctx) error {
			c.Read(c.SRAMSize()-2, 4)
			return nil
		}, false, "fw.sram"),
		Entry("a boot that fails", func(_ *testFW, _ *firmware.Ctx) error {
			return errors.New("no room for the queues")
		}, false, "fw.boot"),
	)

	Describe("HostWrite", func() {
		It("raises one event per burst of PIO writes into a watched range before the next poll", func() {
			fw := newFW(firmware.HostWrite)
			nd := newNode(e, "H", 0, 1, fw, nodeOpts{pci: true, cpu: true})
			fw.boot = func(f *testFW, c *firmware.Ctx) error {
				c.Watch(0x100, 64)
				return nil
			}
			// Each HostWrite handler keeps the processor busy for 2000
			// cycles (60.6 µs).
			fw.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) { c.Charge(2000) }
			word := func(b byte) []byte { return []byte{b, b, b, b} }
			nd.cpu.Run(
				// 1: raises event 1; the processor takes it at once.
				cpu.Op{Kind: cpu.Store, Addr: niBase + 0x100, Data: word(1)},
				cpu.Op{Kind: cpu.Compute, Cycles: 200}, // 1 µs: handler 1 is running
				// 2 and 3, back to back while handler 1 runs: one event.
				cpu.Op{Kind: cpu.Store, Addr: niBase + 0x104, Data: word(2)},
				cpu.Op{Kind: cpu.Store, Addr: niBase + 0x108, Data: word(3)},
				// Outside the watched range: no event.
				cpu.Op{Kind: cpu.Store, Addr: niBase + 0x800, Data: word(4)},
				// 100 µs later, during handler 2 (event 2 has been
				// taken): a new event.
				cpu.Op{Kind: cpu.Compute, Cycles: 20000},
				cpu.Op{Kind: cpu.Store, Addr: niBase + 0x10c, Data: word(5)},
			)
			nd.card.Start()
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())

			hw := fw.events(firmware.HostWrite)
			Expect(hw).To(HaveLen(3))
			for _, h := range hw {
				// The event names the watched range (and the watch).
				Expect([]any{h.Addr, h.Len, h.Tag}).To(Equal([]any{uint32(0x100), 64, uint64(0)}))
			}
			// Each handler is dispatched when the previous one commits,
			// 2000 cycles after its dispatch; events 2 and 3 were raised
			// while the previous handler ran.
			for i := 1; i < 3; i++ {
				Expect(hw[i].Cycle).To(Equal(hw[i-1].Cycle+2000), "handler %d", i+1)
				Expect(hw[i].At).To(BeNumerically("<", hw[i].Start))
				Expect(hw[i].At).To(BeNumerically(">", hw[i-1].Start))
			}
			// Every store landed in SRAM.
			sram := nd.card.SRAM().Storage()
			got, _ := sram.Bytes(0x100, 16)
			Expect(got).To(Equal([]byte{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 5, 5, 5, 5}))
			got, _ = sram.Bytes(0x800, 4)
			Expect(got).To(Equal(word(4)))
		})
	})

	Describe("SpinUntil", func() {
		It("busy-waits for the DMA it started, leaving other events for later", func() {
			const n = 2048
			// HostWrite is polled first: without the spin it would be
			// handled before the DMA completion.
			fw := newFW(firmware.HostWrite, firmware.HostDMADone)
			nd := newNode(e, "H", 0, 1, fw, nodeOpts{pci: true, cpu: true})
			fw.boot = func(f *testFW, c *firmware.Ctx) error {
				c.Watch(0x100, 64)
				c.Charge(10)
				f.dma(c, firmware.HostDMA{Dir: firmware.ToNI, HostAddr: 0, SRAM: 0x1000, Len: n, Tag: 5})
				c.SpinUntil(firmware.HostDMADone)
				return nil
			}
			// 2 µs in, long before the 2 KiB transfer (at least 15.36 µs of
			// data phases) is done.
			nd.cpu.Run(cpu.Op{Kind: cpu.Compute, Cycles: 400},
				cpu.Op{Kind: cpu.Store, Addr: niBase + 0x100, Data: []byte{9, 9, 9, 9}})
			nd.card.Start()
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())

			Expect(fw.kinds()).To(Equal([]firmware.EventKind{firmware.HostDMADone, firmware.HostWrite}))
			done, hw := fw.log[0], fw.log[1]
			Expect(done.Tag).To(Equal(uint64(5)))
			Expect(hw.At).To(BeNumerically("<", done.At), "the host write came first")
			Expect(hw.Start).To(BeNumerically(">=", done.Start))
			// The processor spun from the boot handler's commit (cycle 10)
			// until it took the completion.
			st := nd.card.Stats()
			Expect(st.Spin).To(BeNumerically(">", 0))
			Expect(st.Spin).To(Equal(done.Start - cyc(10)))
		})
	})

	Describe("timer and interrupt", func() {
		It("fires the timer n cycles after the commit and drives the interrupt line", func() {
			fw := newFW(firmware.Timer)
			nd := newNode(e, "H", 0, 1, fw, nodeOpts{})
			fw.boot = func(f *testFW, c *firmware.Ctx) error {
				c.Charge(10)
				f.timer(c, 100)
				return nil
			}
			fw.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
				c.Charge(7)
				c.Interrupt()
			}
			nd.card.Start()
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			// Boot is dispatched at cycle 0 and commits at cycle 10; the
			// timer expires 100 cycles later, at cycle 110, and the idle
			// processor takes the event in that cycle. Its handler commits
			// 7 cycles later: the interrupt at cycle 117.
			Expect(fw.log).To(HaveLen(1))
			Expect(fw.log[0].Cycle).To(Equal(clock.Cycle(110)))
			Expect(fw.log[0].At).To(Equal(cyc(110)))
			Expect(nd.irqs).To(Equal([]clock.Time{cyc(117)}))
			Expect(nd.card.Stats().Interrupts).To(Equal(uint64(1)))
		})

		It("restarts on a second SetTimer and stops on CancelTimer", func() {
			fw := newFW(firmware.Timer)
			nd := newNode(e, "H", 0, 1, fw, nodeOpts{})
			fw.boot = func(f *testFW, c *firmware.Ctx) error {
				c.SetTimer(500)
				f.timer(c, 50) // commands run in order: this one wins
				return nil
			}
			fw.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
				c.SetTimer(20)
				c.CancelTimer()
				c.Interrupt()
				c.Interrupt()
			}
			nd.card.Start()
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			// Boot commits at cycle 0: one expiry, at cycle 50; the
			// cancelled timer never fires.
			Expect(fw.log).To(HaveLen(1))
			Expect(fw.log[0].Cycle).To(Equal(clock.Cycle(50)))
			Expect(nd.irqs).To(Equal([]clock.Time{cyc(50), cyc(50)}))
			Expect(nd.card.Stats().Interrupts).To(Equal(uint64(2)))
		})
	})

	Describe("handler timing", func() {
		// The handler under test runs on a timer at cycle 5 (boot commits
		// at cycle 0), charges its cycles, reads SRAM and marks its commit
		// with the interrupt line.
		const at = 5
		timed := func(cost, sram int) *testFW {
			fw := newFW(firmware.HostDMADone, firmware.Timer)
			fw.boot = func(f *testFW, c *firmware.Ctx) error {
				f.timer(c, at)
				return nil
			}
			fw.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
				if ev.Kind != firmware.Timer {
					return
				}
				c.Charge(cost)
				if sram > 0 {
					c.Read(0x400, sram)
				}
				c.Interrupt()
			}
			return fw
		}

		DescribeTable("commits as soon as its cycles and its SRAM traffic are done",
			func(cost, sram, commit int) {
				fw := timed(cost, sram)
				nd := newNode(e, "H", 0, 1, fw, nodeOpts{})
				nd.card.Start()
				_, err := e.Run()
				Expect(err).NotTo(HaveOccurred())
				Expect(fw.events(firmware.Timer)[0].Cycle).To(Equal(clock.Cycle(at)))
				Expect(nd.irqs).To(Equal([]clock.Time{cyc(commit)}))
				// Boot took no time, the handler the rest.
				Expect(nd.card.Stats().Busy).To(Equal(cyc(commit) - cyc(at)))
			},
			// Dispatched at cycle 5: 5 + 37 = 42.
			Entry("37 cycles, no SRAM traffic", 37, 0, 42),
			// 96 bytes of SRAM: the request, pushed at cycle 5, is seen and
			// accepted by the SRAM at cycle 6; after its 1-cycle latency
			// the data flows from cycle 7, one 8-byte beat per cycle on the
			// processor's port (the SRAM's 8 bytes per cycle), the 12th at
			// cycle 18, taken by the processor at cycle 19.
			Entry("96 bytes of SRAM traffic alone", 0, 96, 19),
			// The same traffic runs under the 37 cycles: it adds nothing.
			Entry("37 cycles and 96 bytes of SRAM traffic", 37, 96, 42),
		)

		It("takes longer than its cycles when the host DMA engine holds SRAM", func() {
			// The same 37-cycle, 96-byte handler at each cycle from 150 to
			// 259 of a 2 KiB host-to-NI DMA started at boot: meanwhile the
			// engine writes its 256-byte bursts into SRAM, each holding it
			// for 32 cycles, so some handlers find the SRAM busy and wait
			// for the burst in progress, and others do not.
			const cost = 37
			run := func(late int) (took, burstEnd, readEnd int) {
				e := env.New(env.Options{Trace: trace.NewRecorder()})
				fw := newFW(firmware.HostDMADone, firmware.Timer)
				nd := newNode(e, "H", 0, 1, fw, nodeOpts{pci: true})
				fw.boot = func(f *testFW, c *firmware.Ctx) error {
					f.dma(c, firmware.HostDMA{Dir: firmware.ToNI, HostAddr: 0, SRAM: 0x1000, Len: 2048, Tag: 1})
					f.timer(c, late)
					return nil
				}
				fw.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
					if ev.Kind == firmware.Timer {
						c.Charge(cost)
						c.Read(0x400, 96)
						c.Interrupt()
					}
				}
				nd.card.Start()
				_, err := e.Run()
				Expect(err).NotTo(HaveOccurred())
				Expect(fw.events(firmware.Timer)[0].Cycle).To(Equal(clock.Cycle(late)))
				Expect(nd.irqs).To(HaveLen(1))
				took = int(lanaiClk.CycleAt(nd.irqs[0])) - late
				// From the SRAM's trace: the first DMA burst (port 1) to end
				// after the handler's request, and the processor's read
				// (port 0).
				for _, r := range e.Trace.Records() {
					if r.Path != "H.NI.SRAM" {
						continue
					}
					port, _ := r.Get("port")
					switch {
					case port == "1" && burstEnd == 0 && r.Cycle > clock.Cycle(late):
						burstEnd = int(r.Cycle)
					case port == "0":
						readEnd = int(r.Cycle)
					}
				}
				return took, burstEnd, readEnd
			}
			delayed := 0
			for late := 150; late < 260; late++ {
				took, burstEnd, readEnd := run(late)
				Expect(took).To(BeNumerically(">=", cost))
				if took > cost {
					// Round-robin hands the SRAM to the processor when the
					// burst ends: its 12 beats follow the 1-cycle latency,
					// the last one is taken a cycle later, and the handler
					// (its 37 cycles long gone) commits then.
					delayed++
					Expect(readEnd).To(Equal(burstEnd+12), "handler at cycle %d", late)
					Expect(took).To(Equal(readEnd+1-late), "handler at cycle %d", late)
				}
			}
			Expect(delayed).To(BeNumerically(">", 0))
		})
	})
})
