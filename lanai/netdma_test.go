package lanai_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// linkByte is one byte on the PPro Myrinet link: one 160 MHz cycle,
// 6.25 ns (160 MB/s).
const linkByte = clock.Time(6250)

// pair is two cards on one link: A (node 0) sends, B (node 1) receives.
type pair struct {
	a, b    *node
	link    *link.Link
	payload []byte
	got     []byte // what B's firmware read from its buffer on RecvDone
}

// pairOpts configure a two-card run.
type pairOpts struct {
	len    int // packet length
	buf    int // B's receive buffer
	armAt  int // B arms at boot (0) or on a timer of this many cycles
	pci    bool
	sentry byte        // B's SRAM is filled with it around the buffer
	link   link.Config // the link (default: the PPro platform's)
}

const (
	sendAt = 0x1000 // A's packet in SRAM
	recvAt = 0x2000 // B's receive buffer
)

// newPair builds the run: A's boot handler writes the packet into SRAM,
// starts the send and marks its commit on the interrupt line; B arms its
// receive engine at boot or when a timer expires (marking that commit on
// its interrupt line) and reads the packet from SRAM on RecvDone.
func newPair(e *env.Env, o pairOpts) *pair {
	p := &pair{payload: pattern(o.len, 1)}
	fa := newFW(firmware.SendDone)
	fb := newFW(firmware.RecvDone, firmware.Timer)
	p.a = newNode(e, "A", 0, 2, fa, nodeOpts{pci: o.pci})
	p.b = newNode(e, "B", 1, 2, fb, nodeOpts{pci: o.pci})
	if !o.link.Clock.Valid() {
		o.link = netPlat.Link
	}
	p.link = connect(e, p.a, p.b, o.link)
	if o.sentry != 0 {
		fill := make([]byte, 2*o.buf+256)
		for i := range fill {
			fill[i] = o.sentry
		}
		Expect(p.b.card.WriteSRAM(recvAt, fill)).To(Succeed())
	}
	fa.boot = func(f *testFW, c *firmware.Ctx) error {
		c.Write(sendAt, p.payload)
		f.send(c, firmware.Packet{Dst: 1, SRAM: sendAt, Len: o.len, Tag: 9})
		c.Interrupt()
		return nil
	}
	fb.boot = func(f *testFW, c *firmware.Ctx) error {
		if o.armAt == 0 {
			f.arm(c, recvAt, o.buf)
		} else {
			f.timer(c, o.armAt)
		}
		return nil
	}
	fb.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
		switch ev.Kind {
		case firmware.Timer:
			c.Charge(5)
			f.arm(c, recvAt, o.buf)
			c.Interrupt()
		case firmware.RecvDone:
			p.got = c.Read(ev.Addr, ev.Len)
		}
	}
	p.a.card.Start()
	p.b.card.Start()
	return p
}

var _ = Describe("network DMA", func() {
	var e *env.Env
	BeforeEach(func() { e = env.New(env.Options{Trace: trace.NewRecorder()}) })

	It("sends a packet from one card's SRAM into the other's at no more than the link rate", func() {
		const n = 256
		p := newPair(e, pairOpts{len: n, buf: 1024})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(e.Monitor.Err()).NotTo(HaveOccurred())

		Expect(p.got).To(Equal(p.payload))
		Expect(p.a.fw.kinds()).To(Equal([]firmware.EventKind{firmware.SendDone}))
		sent := p.a.fw.log[0]
		Expect([]any{sent.Tag, sent.Addr, sent.Len}).To(Equal([]any{uint64(9), uint32(sendAt), n}))
		Expect(p.b.fw.kinds()).To(Equal([]firmware.EventKind{firmware.RecvDone}))
		recv := p.b.fw.log[0]
		Expect([]any{recv.Addr, recv.Len, recv.Bad}).To(Equal([]any{uint32(recvAt), n, false}))

		// A's boot handler committed the send at its interrupt. 256 bytes
		// are 64 flits of 4 bytes, 4 link cycles each: the tail starts
		// after 63 flits (252 bytes) and is in B only after all 256 bytes
		// and the 4-cycle cable.
		Expect(p.a.irqs).To(HaveLen(1))
		start := p.a.irqs[0]
		Expect(sent.At - start).To(BeNumerically(">=", (n-4)*linkByte))
		Expect(recv.At - start).To(BeNumerically(">=", n*linkByte+4*linkByte))

		ab := p.link.From(link.A).Stats()
		Expect([]uint64{ab.Flits, ab.Packets, ab.Bytes, ab.BusyCycles, ab.CRCErrors}).To(Equal([]uint64{64, 1, n, n, 0}))
		sa, sb := p.a.card.Stats(), p.b.card.Stats()
		Expect([]uint64{sa.PacketsSent, sa.BytesSent, sb.PacketsReceived, sb.BytesReceived}).To(Equal([]uint64{1, n, 1, n}))
	})

	It("holds the packet in the link until the receiver arms (STOP/GO), losing nothing", func() {
		const n = 256
		// B arms when its timer expires: boot commits at cycle 0, the timer
		// fires at cycle 300 and the handler commits 5 cycles later.
		p := newPair(e, pairOpts{len: n, buf: 1024, armAt: 300})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())

		Expect(p.b.irqs).To(Equal([]clock.Time{cyc(305)}))
		armed := p.b.irqs[0]
		Expect(p.b.fw.kinds()).To(Equal([]firmware.EventKind{firmware.Timer, firmware.RecvDone}))
		recv := p.b.fw.log[1]
		Expect(recv.At).To(BeNumerically(">", armed))
		Expect(recv.Len).To(Equal(n))
		Expect(p.got).To(Equal(p.payload))

		// The slack buffer (64 bytes) took the head of the packet, then
		// STOP held A: the rest, at least 192 bytes, left only after B
		// armed, so A's tail flit started at least 188 bytes of link time
		// after that.
		cfg := netPlat.Link
		ab := p.link.From(link.A).Stats()
		Expect(ab.StopStalls).To(BeNumerically(">", 0))
		Expect(ab.MaxRxBytes).To(BeNumerically(">", cfg.StopAt))
		Expect(ab.MaxRxBytes).To(BeNumerically("<=", cfg.SlackBytes))
		sent := p.a.fw.events(firmware.SendDone)
		Expect(sent).To(HaveLen(1))
		Expect(sent[0].At - armed).To(BeNumerically(">=", clock.Time(n-cfg.SlackBytes-4)*linkByte))
		Expect([]uint64{ab.Flits, ab.Bytes, ab.CRCErrors}).To(Equal([]uint64{64, n, 0}))
	})

	It("reports a packet longer than the receive buffer and keeps to the buffer", func() {
		const n, buf = 256, 100
		p := newPair(e, pairOpts{len: n, buf: buf, sentry: 0xee})
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("ni.recv")))
		Expect(e.Monitor.Err()).To(MatchError(ContainSubstring("ni.recv")))
		Expect(e.Monitor.Err()).To(MatchError(ContainSubstring("longer than the 100-byte buffer")))

		Expect(p.b.fw.kinds()).To(Equal([]firmware.EventKind{firmware.RecvDone}))
		Expect(p.b.fw.log[0].Len).To(Equal(buf))
		Expect(p.got).To(Equal(p.payload[:buf]))
		after, _ := p.b.card.ReadSRAM(recvAt+buf, 64)
		Expect(after).To(HaveEach(byte(0xee)), "nothing written past the buffer")
	})

	It("gives byte-identical traces for identical runs", func() {
		// Host DMA into A's SRAM, A sends to B, B DMAs the packet to its
		// host: every engine of both cards, the buses and the link.
		run := func() ([]trace.Record, []byte) {
			rec := trace.NewRecorder()
			e := env.New(env.Options{Trace: rec, Seed: 7})
			const n = 512
			fa := newFW(firmware.HostDMADone, firmware.SendDone)
			fb := newFW(firmware.RecvDone, firmware.HostDMADone)
			a := newNode(e, "A", 0, 2, fa, nodeOpts{pci: true})
			b := newNode(e, "B", 1, 2, fb, nodeOpts{pci: true})
			cfg := netPlat.Link
			cfg.TraceFlits = true // every flit's timing is compared too
			connect(e, a, b, cfg)
			Expect(a.host.Storage().Write(0x4000, pattern(n, 5))).To(Succeed())
			fa.boot = func(f *testFW, c *firmware.Ctx) error {
				f.dma(c, firmware.HostDMA{Dir: firmware.ToNI, HostAddr: 0x4000, SRAM: sendAt, Len: n, Tag: 1})
				return nil
			}
			fa.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
				if ev.Kind == firmware.HostDMADone {
					c.Charge(20)
					f.send(c, firmware.Packet{Dst: 1, SRAM: sendAt, Len: n, Tag: 2})
				}
			}
			fb.boot = func(f *testFW, c *firmware.Ctx) error {
				f.arm(c, recvAt, 1024)
				return nil
			}
			fb.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
				if ev.Kind == firmware.RecvDone {
					c.Charge(30)
					c.Read(ev.Addr, 16)
					f.dma(c, firmware.HostDMA{Dir: firmware.ToHost, HostAddr: 0x9000, SRAM: ev.Addr, Len: ev.Len, Tag: 3})
				}
			}
			a.card.Start()
			b.card.Start()
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			got, _ := b.host.Storage().Bytes(0x9000, n)
			return rec.Records(), got
		}
		r1, got1 := run()
		r2, got2 := run()
		Expect(got1).To(Equal(pattern(512, 5)))
		Expect(got2).To(Equal(got1))
		Expect(len(r1)).To(BeNumerically(">", 128))
		Expect(cmp.Diff(r1, r2)).To(BeEmpty())
		kinds := map[string]bool{}
		for _, r := range r1 {
			kinds[r.Kind] = true
		}
		for _, k := range []string{"ni.event", "ni.sent", "ni.received", "dma.done", "mem.write", "link.packet"} {
			Expect(kinds).To(HaveKey(k))
		}
	})
})
