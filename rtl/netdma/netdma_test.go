package netdma_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/rtl/netdma"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rig is a send engine on memory A and a receive engine on memory B, the
// two joined by one credit link: memories of 8-byte ports, 1 cycle of
// latency, 8 bytes per cycle, 2-deep channels; the link moves 8 bytes per
// cycle with no wire delay; engines of 8-byte flits and 16-byte bursts;
// everything on one 100 MHz clock.
type rig struct {
	e      *env.Env
	a, b   *mem.Memory
	s      *netdma.Sender
	r      *netdma.Receiver
	sent   []netdma.Packet
	sentAt []clock.Cycle
	got    []netdma.Received
	gotAt  []clock.Cycle
}

var clk = clock.MHz(100)

func newRig() *rig {
	x := &rig{e: vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})}
	mk := func(n string) *mem.Memory {
		m, err := mem.MakeBuilder().WithEnv(x.e).WithClock(clk).WithSize(1 << 16).Build(n)
		Expect(err).NotTo(HaveOccurred())
		return m
	}
	x.a, x.b = mk("A"), mk("B")
	lc := link.DefaultCredit(clk)
	lc.BytesPerCycle, lc.DelayCycles = 8, 0
	l, err := link.MakeBuilder().WithEnv(x.e).WithConfig(lc).Build("L")
	Expect(err).NotTo(HaveOccurred())
	x.s, err = netdma.MakeSendBuilder().WithEnv(x.e).WithClock(clk).WithMemory(x.a.Port(0)).WithFlitBytes(8).
		WithBurst(16).WithNode(3).Build("S")
	Expect(err).NotTo(HaveOccurred())
	x.r, err = netdma.MakeRecvBuilder().WithEnv(x.e).WithClock(clk).WithMemory(x.b.Port(0)).WithBurst(16).Build("R")
	Expect(err).NotTo(HaveOccurred())
	x.s.Connect(l.From(link.A))
	x.r.Connect(l.From(link.A))
	x.s.OnSent(func(now clock.Time, p netdma.Packet) {
		x.sent, x.sentAt = append(x.sent, p), append(x.sentAt, clk.CycleAt(now))
	})
	x.r.OnReceived(func(now clock.Time, d netdma.Received) {
		x.got, x.gotAt = append(x.got, d), append(x.gotAt, clk.CycleAt(now))
	})
	return x
}

// cycles returns the cycles of the records of kind at path.
func (x *rig) cycles(path, kind string) []clock.Cycle {
	var out []clock.Cycle
	for _, r := range x.e.Trace.Records() {
		if r.Path == path && r.Kind == kind {
			out = append(out, r.Cycle)
		}
	}
	return out
}

var payload = []byte("0123456789abcdefghijklmnopqrstuv")

var _ = Describe("Packet engines between memory and a link", func() {
	It("sends a packet from memory A into a buffer of memory B, a flit per cycle", func() {
		x := newRig()
		Expect(x.a.Storage().Write(0x100, payload)).To(Succeed())
		x.r.Arm(0, 0x200, 64)
		x.s.Submit(0, netdma.Packet{Dst: 1, Addr: 0x100, Len: 20, Tag: 5, Route: []byte{7}})
		_, err := x.e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Worked by hand. Send engine: woken by Submit, it starts the
		// packet at c1, requests 0x100+16 at c2 and 0x110+4 at c3 (at most
		// two bursts ahead). Memory A accepts the first at c3 (one cycle
		// after the push), moves 8 bytes at c4 and c5 (latency 1) and
		// finishes at c5, accepts the second then and moves its 4 bytes
		// at c6. The engine pops each beat a cycle after its push (c5,
		// c6, c7) and sends a flit once it holds the flit's bytes: c6,
		// c7, and the 4-byte tail at c7+1 = c8, when the packet is sent.
		Expect(x.cycles("A", "mem.read")).To(Equal([]clock.Cycle{5, 6}))
		Expect(x.cycles("L.AB", "link.flit")).To(Equal([]clock.Cycle{6, 7, 8}))
		Expect(x.sentAt).To(Equal([]clock.Cycle{8}))
		Expect(x.sent).To(Equal([]netdma.Packet{{Dst: 1, Addr: 0x100, Len: 20, Tag: 5, Route: []byte{7}}}))
		// Receive engine: a flit sent at t (one cycle of serialisation, no
		// wire) is visible at t+1: taken at c7, c8, c9. At c8 it holds 8
		// bytes, less than an aligned 16-byte burst, and waits; at c9 it
		// writes 0x200+16 (posted) in two beats, filling the 2-deep
		// channel, and takes the tail. Memory B accepts at c10 and writes
		// at c11 and c12. The tail's 4 bytes (0x210, not posted) are ready
		// at c10, but the channel's slot that B frees at c11 is usable from
		// c12: pushed at c12, accepted at c13, written at c14 and
		// acknowledged; the engine takes the acknowledgement at c15.
		Expect(x.cycles("B", "mem.write")).To(Equal([]clock.Cycle{12, 14}))
		Expect(x.gotAt).To(Equal([]clock.Cycle{15}))
		Expect(x.got).To(Equal([]netdma.Received{{Addr: 0x200, Len: 20, Packet: 3<<40 | 1, Src: 3}}))
		got, _ := x.b.Storage().Bytes(0x200, 20)
		Expect(got).To(Equal(payload[:20]))
		Expect([]uint64{x.s.Packets(), x.s.Bytes(), x.r.Packets(), x.r.Bytes()}).To(Equal([]uint64{1, 20, 1, 20}))
		Expect(x.s.Idle()).To(BeTrue())
		Expect(x.r.Idle()).To(BeTrue())
		Expect(x.r.Armed()).To(BeFalse())
		var recs []string
		for _, r := range x.e.Trace.Records() {
			if r.Kind == "ni.sent" || r.Kind == "ni.received" {
				recs = append(recs, r.Format())
			}
		}
		Expect(recs).To(Equal([]string{"80000 8 S ni.sent dst=1 len=20 sram=0x100",
			"150000 15 R ni.received len=20 sram=0x200 bad=0"}))
	})

	It("takes nothing until it is armed: the link holds the packet back", func() {
		x := newRig()
		Expect(x.a.Storage().Write(0x100, payload)).To(Succeed())
		x.s.Submit(0, netdma.Packet{Dst: 1, Addr: 0x100, Len: 32, Tag: 1})
		vtest.AtCycle(x.e, "Armer", clk, 40, func(now clock.Time) {
			Expect(x.r.State()).To(Equal("unarmed"))
			x.r.Arm(now, 0x300, 32)
		})
		_, err := x.e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(x.gotAt).To(HaveLen(1))
		Expect(x.gotAt[0]).To(BeNumerically(">", 40))
		// Nothing was popped before the arming: every flit was taken
		// after c40.
		got, _ := x.b.Storage().Bytes(0x300, 32)
		Expect(got).To(Equal(payload))
	})

	It("cuts a packet longer than its buffer and reports it", func() {
		x := newRig()
		Expect(x.a.Storage().Write(0x100, payload)).To(Succeed())
		Expect(x.b.Storage().Write(0x200, make([]byte, 32))).To(Succeed())
		x.r.Arm(0, 0x200, 12)
		x.s.Submit(0, netdma.Packet{Dst: 1, Addr: 0x100, Len: 32})
		_, err := x.e.Run()
		Expect(err).To(HaveOccurred())
		v := x.e.Monitor.Violations()
		Expect(v).To(HaveLen(1))
		Expect(v[0].Check).To(Equal("ni.recv"))
		Expect(v[0].Msg).To(Equal("packet 3298534883329 from node 3 is longer than the 12-byte buffer"))
		Expect(x.got).To(HaveLen(1))
		Expect(x.got[0].Len).To(Equal(12))
		got, _ := x.b.Storage().Bytes(0x200, 32)
		Expect(got).To(Equal(append(append([]byte(nil), payload[:12]...), make([]byte, 20)...)))
	})

	It("refuses a packet beyond its queue, an empty one and a second arming", func() {
		x := newRig()
		x.s.Submit(0, netdma.Packet{Dst: 1, Addr: 0x100, Len: 8})
		Expect(x.s.Free()).To(Equal(0))
		x.s.Submit(0, netdma.Packet{Dst: 2, Addr: 0x100, Len: 8})
		x.s.Submit(0, netdma.Packet{Dst: 1})
		x.r.Arm(0, 0x200, 64)
		x.r.Arm(0, 0x200, 64)
		var msgs []string
		for _, v := range x.e.Monitor.Violations() {
			msgs = append(msgs, v.Check+": "+v.Msg)
		}
		Expect(msgs).To(Equal([]string{"ni.send: packet to 2 submitted while the send engine is full",
			"ni.send: packet to 1 submitted while the send engine is full", "ni.recv: armed while armed"}))
	})

	DescribeTable("refuses a bad configuration, naming the parameter",
		func(build func(e *env.Env, ch *mem.Channel) error, want string) {
			e := env.New(env.Options{Trace: trace.NewRecorder()})
			m, err := mem.MakeBuilder().WithEnv(e).WithClock(clk).WithPorts(1).Build("M")
			Expect(err).NotTo(HaveOccurred())
			Expect(build(e, m.Port(0))).To(MatchError(want))
		},
		Entry("send: no env", func(_ *env.Env, ch *mem.Channel) error {
			_, err := netdma.MakeSendBuilder().WithClock(clk).WithMemory(ch).WithFlitBytes(8).Build("S")
			return err
		}, "S: send engine: no env"),
		Entry("send: no memory", func(e *env.Env, _ *mem.Channel) error {
			_, err := netdma.MakeSendBuilder().WithEnv(e).WithClock(clk).WithFlitBytes(8).Build("S")
			return err
		}, "S: send engine: no memory channel"),
		Entry("send: zero flit", func(e *env.Env, ch *mem.Channel) error {
			_, err := netdma.MakeSendBuilder().WithEnv(e).WithClock(clk).WithMemory(ch).Build("S")
			return err
		}, "S: send engine: flit of 0 bytes, need 1 to 1048576"),
		Entry("send: flit larger than a link flit can be", func(e *env.Env, ch *mem.Channel) error {
			_, err := netdma.MakeSendBuilder().WithEnv(e).WithClock(clk).WithMemory(ch).WithFlitBytes(1<<20 + 1).Build("S")
			return err
		}, "S: send engine: flit of 1048577 bytes, need 1 to 1048576"),
		Entry("send: zero queue", func(e *env.Env, ch *mem.Channel) error {
			_, err := netdma.MakeSendBuilder().WithEnv(e).WithClock(clk).WithMemory(ch).WithFlitBytes(8).WithQueueDepth(0).Build("S")
			return err
		}, "S: send engine: queue depth 0, need at least 1"),
		Entry("send: zero burst", func(e *env.Env, ch *mem.Channel) error {
			_, err := netdma.MakeSendBuilder().WithEnv(e).WithClock(clk).WithMemory(ch).WithFlitBytes(8).WithBurst(0).Build("S")
			return err
		}, "S: send engine: burst 0 bytes, need at least 1"),
		Entry("receive: no clock", func(e *env.Env, ch *mem.Channel) error {
			_, err := netdma.MakeRecvBuilder().WithEnv(e).WithMemory(ch).Build("R")
			return err
		}, "R: receive engine: no clock"),
		Entry("receive: zero burst", func(e *env.Env, ch *mem.Channel) error {
			_, err := netdma.MakeRecvBuilder().WithEnv(e).WithClock(clk).WithMemory(ch).WithBurst(0).Build("R")
			return err
		}, "R: receive engine: burst 0 bytes, need at least 1"),
	)
})
