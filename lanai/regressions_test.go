package lanai_test

import (
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Regressions: each spec shows a defect the card had (described below)
// and fails without its fix.
var _ = Describe("fixed defects", func() {
	var e *env.Env
	BeforeEach(func() { e = env.New(env.Options{Trace: trace.NewRecorder()}) })

	// Defect (fixed): rtl/netdma Receiver.Tick. When a packet overflows a buffer
	// whose end is burst-aligned, the buffer's last burst is written
	// (posted) before the tail arrives; the tail is truncated to no bytes,
	// so no last write is ever issued, complete never runs, RecvDone never
	// comes and the engine stays armed (the watchdog reports B.NI busy).
	It("finishes a packet that overflows a burst-aligned buffer", func() {
		const n, buf = 256, 64
		p := newPair(e, pairOpts{len: n, buf: buf})
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("ni.recv")))
		Expect(err).NotTo(MatchError(ContainSubstring("deadlock")))
		Expect(p.b.fw.kinds()).To(Equal([]firmware.EventKind{firmware.RecvDone}))
		Expect(p.b.fw.log[0].Len).To(Equal(buf))
		Expect(p.got).To(Equal(p.payload[:buf]))
	})

	// Defect (fixed): card.go Card.next. The spin branch pops a HostWrite without
	// clearing watchHit, so after SpinUntil(HostWrite) the watched range
	// never raises HostWrite again: later host writes are lost.
	It("keeps raising HostWrite after the program spun on one", func() {
		fw := newFW(firmware.HostWrite)
		nd := newNode(e, "H", 0, 1, fw, nodeOpts{pci: true, cpu: true})
		fw.boot = func(f *testFW, c *firmware.Ctx) error {
			c.Watch(0x100, 64)
			c.SpinUntil(firmware.HostWrite)
			return nil
		}
		// Three stores 10 µs apart: the processor is idle before each.
		nd.cpu.Run(cpu.Op{Kind: cpu.Store, Addr: niBase + 0x100, Data: []byte{1, 1, 1, 1}},
			cpu.Op{Kind: cpu.Compute, Cycles: 2000},
			cpu.Op{Kind: cpu.Store, Addr: niBase + 0x104, Data: []byte{2, 2, 2, 2}},
			cpu.Op{Kind: cpu.Compute, Cycles: 2000},
			cpu.Op{Kind: cpu.Store, Addr: niBase + 0x108, Data: []byte{3, 3, 3, 3}})
		nd.card.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(fw.events(firmware.HostWrite)).To(HaveLen(3))
	})

	// Defect (fixed): the SRAM cannot feed the link. config.go gives the SRAM 8
	// bytes per cycle (264 MB/s at 33 MHz) so that it «can feed the link
	// (160 MB/s)», but every SRAM port is a 4-byte channel whose FIFOs take
	// one beat per cycle, and the memory serves one transaction at a time:
	// a transaction moves at most 4 bytes per cycle, 132 MB/s. The send
	// engine then leaves a gap of one link cycle after most flits: 256
	// bytes take about 1.91 µs on the link instead of 1.6 µs.
	It("keeps the link busy back to back while it sends a packet", func() {
		const n = 256
		cfg := netPlat.Link
		cfg.TraceFlits = true
		newPair(e, pairOpts{len: n, buf: 1024, link: cfg})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		var arrivals []clock.Time
		for _, r := range e.Trace.Records() {
			if r.Kind == "link.flit" {
				arrivals = append(arrivals, r.Time)
			}
		}
		Expect(arrivals).To(HaveLen(n / 4))
		// 64 flits of 4 link cycles: the last arrives 63 x 4 cycles after
		// the first.
		Expect(arrivals[len(arrivals)-1] - arrivals[0]).To(Equal(63 * 4 * linkByte))
	})
})
