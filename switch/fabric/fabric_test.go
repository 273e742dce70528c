package fabric_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/switch/wormhole"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var clk = clock.MHz(1000) // 1 ns cycles: cycle numbers read as ns

// creditLink returns a credit link configuration on clk: bpc bytes per
// cycle, a wire of delay cycles, vcs VCs of buf flits, credits usable
// credit cycles after the receiver frees a slot.
func creditLink(bpc, delay, vcs, buf, credit int) link.Config {
	return link.Config{Clock: clk, BytesPerCycle: bpc, DelayCycles: delay, VCs: vcs, FlowControl: link.Credits,
		BufferFlits: buf, CreditDelay: credit, TxDepth: 1}
}

func newTerminal(e *env.Env, name string, id int, tc fabric.TerminalConfig, sh *fabric.Shared) *fabric.Terminal {
	GinkgoHelper()
	t, err := fabric.NewTerminal(e, name, clk, id, tc, sh)
	Expect(err).NotTo(HaveOccurred())
	return t
}

func newLink(e *env.Env, name string, lc link.Config) *link.Link {
	GinkgoHelper()
	l, err := link.MakeBuilder().WithEnv(e).WithConfig(lc).Build(name)
	Expect(err).NotTo(HaveOccurred())
	return l
}

// rxFlit is a flit a sink popped, with the cycle it popped it in.
type rxFlit struct {
	Cycle      uint64
	VC         int
	Packet     uint64
	Seq        int
	Head, Tail bool
}

// sink is a scripted receiver at the end of a link direction: it pops every
// flit the cycle it becomes visible (so each credit goes back at once),
// except on VC 0 before cycle hold0.
type sink struct {
	a     *vtest.Agent
	d     *link.Dir
	hold0 clock.Cycle
	got   []rxFlit
	flits []link.Flit
}

func newSink(e *env.Env, d *link.Dir) *sink {
	s := &sink{d: d}
	s.a = vtest.NewAgent(e, "Sink", clk, func(now clock.Time, c clock.Cycle) bool {
		more := false
		for v := range d.VCs() {
			if v != 0 || c >= s.hold0 {
				for {
					f, ok := d.Rx(v).Pop(now)
					if !ok {
						break
					}
					s.got = append(s.got, rxFlit{Cycle: uint64(c), VC: int(f.VC), Packet: f.Packet(), Seq: int(f.Seq), Head: f.Head, Tail: f.Tail})
					s.flits = append(s.flits, f)
				}
			}
			more = more || d.Rx(v).Len() > 0
		}
		return more
	})
	d.SetReceiver(s.a)
	return s
}

// soloTerminal is terminal 0 sending over one link (it on side A) to a sink.
func soloTerminal(e *env.Env, lc link.Config, tc fabric.TerminalConfig, sh *fabric.Shared) (*fabric.Terminal, *sink, *link.Link) {
	GinkgoHelper()
	l := newLink(e, "L", lc)
	t := newTerminal(e, "T0", 0, tc, sh)
	t.Connect(l.From(link.A), l.From(link.B))
	return t, newSink(e, l.From(link.A)), l
}

// injectAt has an agent hand t the given packets (to terminal 1, of the
// given sizes) at cycle c; the packets are returned as Inject creates them.
func injectAt(e *env.Env, t *fabric.Terminal, c clock.Cycle, sizes ...int) *[]*fabric.Packet {
	var pkts []*fabric.Packet
	a := vtest.NewAgent(e, "Driver", clk, func(now clock.Time, cy clock.Cycle) bool {
		if cy == c {
			for _, n := range sizes {
				pkts = append(pkts, t.Inject(now, 1, n))
			}
		}
		return cy < c
	})
	a.Start()
	return &pkts
}

func run(e *env.Env) env.Result {
	GinkgoHelper()
	res, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	return res
}

// fieldsOf formats trace fields as key=value pairs.
func fieldsOf(fs []trace.Field) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.Key+"="+f.Val)
	}
	return strings.Join(parts, " ")
}

// delivery is a packet as the OnDeliver hook saw it.
type delivery struct {
	ID                uint64
	Src, Dst, Flits   int
	Created, Injected uint64
	At                uint64 // cycle its tail was ejected
	Hops              int
	Measured          bool
}

// recorder returns a Shared with a conservation checker whose OnDeliver
// appends every delivery to *out (and calls then, if set).
func recorder(e *env.Env, out *[]delivery, then func(now clock.Time)) *fabric.Shared {
	return &fabric.Shared{
		Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
		OnDeliver: func(now clock.Time, p *fabric.Packet) {
			*out = append(*out, delivery{ID: p.ID, Src: p.Src, Dst: p.Dst, Flits: p.Flits, Created: p.Created,
				Injected: p.Injected, At: uint64(clk.CycleAt(now)), Hops: p.Hops, Measured: p.Measured})
			if then != nil {
				then(now)
			}
		},
	}
}

// linkedPair is terminals 0 and 1 joined by one link (0 on side A).
func linkedPair(e *env.Env, lc link.Config, tc fabric.TerminalConfig, sh *fabric.Shared) []*fabric.Terminal {
	GinkgoHelper()
	l := newLink(e, "L", lc)
	t0 := newTerminal(e, "T0", 0, tc, sh)
	t1 := newTerminal(e, "T1", 1, tc, sh)
	t0.Connect(l.From(link.A), l.From(link.B))
	t1.Connect(l.From(link.B), l.From(link.A))
	return []*fabric.Terminal{t0, t1}
}

// routedPair is terminals 0 and 1 on ports 0 and 1 of one wormhole router,
// wired as topology.Mesh wires a terminal: a link with the terminal on side
// A, latency cycles of wire, credits back to the terminal 1 + latency cycles
// after a slot is freed and to the router 1 + latency + credit_delay.
func routedPair(e *env.Env, rc wormhole.Config, latency int, route wormhole.RouteFunc, tc fabric.TerminalConfig,
	sh *fabric.Shared) ([]*fabric.Terminal, *wormhole.Router) {
	GinkgoHelper()
	const flitBytes = 16
	if route == nil {
		route = func(_, _, dst int) wormhole.Route { return wormhole.Route{Port: dst, VCLo: 0, VCHi: rc.NumVCs - 1} }
	}
	r, err := wormhole.MakeBuilder().WithEnv(e).WithClock(clk).WithConfig(rc).WithPorts(2).WithRouting(route).Build("R")
	Expect(err).NotTo(HaveOccurred())
	tc.VCs, tc.FlitBytes = rc.NumVCs, flitBytes
	lc := link.Config{Clock: clk, BytesPerCycle: flitBytes, DelayCycles: latency, VCs: rc.NumVCs,
		FlowControl: link.Credits, BufferFlits: rc.BufferFlits(), TxDepth: 1,
		CreditDelay: 1 + latency, CreditDelayBA: 1 + latency + rc.CreditDelay}
	var ts []*fabric.Terminal
	for i := range 2 {
		l := newLink(e, fmt.Sprintf("LT[%d]", i), lc)
		t := newTerminal(e, fmt.Sprintf("T%d", i), i, tc, sh)
		t.Connect(l.From(link.A), l.From(link.B))
		r.ConnectInput(i, l.From(link.A))
		r.ConnectOutput(i, l.From(link.B))
		ts = append(ts, t)
	}
	return ts, r
}

var _ = Describe("Terminal", func() {
	It("rejects a configuration without VCs or flit bytes, naming the terminal", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		_, err := fabric.NewTerminal(e, "Net.T[3]", clk, 3, fabric.TerminalConfig{VCs: 0, FlitBytes: 4}, nil)
		Expect(err).To(MatchError("Net.T[3]: a terminal needs at least one VC and one byte per flit"))
		_, err = fabric.NewTerminal(e, "Net.T[3]", clk, 3, fabric.TerminalConfig{VCs: 2}, nil)
		Expect(err).To(MatchError(ContainSubstring("Net.T[3]:")))
	})

	// Inject at cycle 5 hands the packet to the terminal for its next edge,
	// 6, which is its creation cycle; the VC is free, so the head is sent
	// in that same cycle (Injected 6). The link serialises a flit of
	// FlitBytes in s = ceil(FlitBytes / BytesPerCycle) cycles and shows it
	// to the receiver s + DelayCycles cycles after it was sent (rtl/link,
	// Send). The terminal sends the next flit as soon as the serialiser is
	// free (the buffer is deep enough for credits never to run out), so
	// flit i is sent at 6 + i*s and popped at 6 + (i+1)*s + delay.
	DescribeTable("injects a packet at its creation cycle, one flit per serialisation time",
		func(bpc, flitBytes, delay, flits int, popped []uint64) {
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			t, s, _ := soloTerminal(e, creditLink(bpc, delay, 1, 64, 1), fabric.TerminalConfig{VCs: 1, FlitBytes: flitBytes}, nil)
			pkts := injectAt(e, t, 5, flits)
			run(e)
			Expect(*pkts).To(HaveLen(1))
			p := (*pkts)[0]
			Expect(*p).To(Equal(fabric.Packet{ID: 1, Src: 0, Dst: 1, Flits: flits, Created: 6, Injected: 6}))
			Expect(p.NumFlits()).To(Equal(flits))
			var want []rxFlit
			for i, c := range popped {
				want = append(want, rxFlit{Cycle: c, VC: 0, Packet: 1, Seq: i, Head: i == 0, Tail: i == flits-1})
			}
			Expect(s.got).To(Equal(want))
			for _, f := range s.flits {
				Expect(f.Src()).To(Equal(0))
				Expect(f.Dst()).To(Equal(1))
				Expect(f.WireBytes()).To(Equal(flitBytes))
				Expect(f.Meta()).To(BeIdenticalTo(p))
				Expect(clk.CycleAt(f.Stamp)).To(Equal(clock.Cycle(6 + int(f.Seq)*((flitBytes+bpc-1)/bpc))))
			}
			Expect(t.Sent()).To(Equal(uint64(flits)))
			Expect(t.Idle()).To(BeTrue())
		},
		Entry("1-cycle flits, no wire delay: 7, 8, 9", 4, 4, 0, 3, []uint64{7, 8, 9}),
		Entry("1-cycle flits, 2-cycle wire: 9, 10, 11", 4, 4, 2, 3, []uint64{9, 10, 11}),
		Entry("2-cycle flits (8 B at 4 B/cycle): 8, 10, 12", 4, 8, 0, 3, []uint64{8, 10, 12}),
		Entry("3-cycle flits (5 B at 2 B/cycle), 1-cycle wire: 10, 13", 2, 5, 1, 2, []uint64{10, 13}),
		Entry("a one-flit packet: head and tail at 7", 4, 4, 0, 1, []uint64{7}),
	)

	// One VC of buf flits, 1-cycle flits, no wire delay: a flit sent at t
	// is popped at t+1 and its credit is usable at t+1+credit. With one slot
	// the next flit therefore leaves at t+1+credit; with two slots, two
	// flits leave back to back and then wait for the first credit.
	DescribeTable("sends only with a credit",
		func(buf, credit int, popped []uint64) {
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			t, s, l := soloTerminal(e, creditLink(4, 0, 1, buf, credit), fabric.TerminalConfig{VCs: 1, FlitBytes: 4}, nil)
			injectAt(e, t, 5, 5)
			run(e)
			var got []uint64
			for _, f := range s.got {
				got = append(got, f.Cycle)
			}
			Expect(got).To(Equal(popped))
			Expect(l.From(link.A).Credits(0)).To(Equal(buf), "every credit is back")
		},
		Entry("1 slot, credit delay 1: sent 6, 8, 10, 12, 14", 1, 1, []uint64{7, 9, 11, 13, 15}),
		Entry("1 slot, credit delay 3: sent 6, 10, 14, 18, 22", 1, 3, []uint64{7, 11, 15, 19, 23}),
		Entry("2 slots, credit delay 2: sent 6, 7, 9, 10, 12", 2, 2, []uint64{7, 8, 10, 11, 13}),
		Entry("2 slots, credit delay 1: full rate", 2, 1, []uint64{7, 8, 9, 10, 11}),
	)

	It("puts the source route in the head flit only", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		route := func(src, dst int) []byte { return []byte{byte(0x80 | dst), byte(src)} }
		t, s, _ := soloTerminal(e, creditLink(4, 0, 1, 8, 1), fabric.TerminalConfig{VCs: 1, FlitBytes: 4, Route: route}, nil)
		injectAt(e, t, 0, 3)
		run(e)
		Expect(s.flits).To(HaveLen(3))
		Expect(s.flits[0].Route()).To(Equal([]byte{0x81, 0}))
		Expect(s.flits[1].Route()).To(BeEmpty())
		Expect(s.flits[2].Route()).To(BeEmpty())
	})

	It("takes VCs round-robin and frees one only when the tail's credit is back", func() {
		// 3 VCs, credit delay 4. Five one-flit packets handed over at cycle
		// 0, all created at 1. P1 takes VC 0 at 1 (popped 2, credit back
		// at 6), P2 VC 1 at 2 (credit at 7), P3 VC 2 at 3 (credit at 8). At
		// 4 and 5 every VC still waits for its tail credit although each has
		// 3 free slots. P4 takes VC 0 at 6, P5 VC 1 at 7.
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		t, s, _ := soloTerminal(e, creditLink(4, 0, 3, 4, 4), fabric.TerminalConfig{VCs: 3, FlitBytes: 4}, nil)
		pkts := injectAt(e, t, 0, 1, 1, 1, 1, 1)
		run(e)
		Expect(s.got).To(Equal([]rxFlit{
			{Cycle: 2, VC: 0, Packet: 1, Head: true, Tail: true},
			{Cycle: 3, VC: 1, Packet: 2, Head: true, Tail: true},
			{Cycle: 4, VC: 2, Packet: 3, Head: true, Tail: true},
			{Cycle: 7, VC: 0, Packet: 4, Head: true, Tail: true},
			{Cycle: 8, VC: 1, Packet: 5, Head: true, Tail: true},
		}))
		var created, injected []uint64
		for _, p := range *pkts {
			created = append(created, p.Created)
			injected = append(injected, p.Injected)
		}
		Expect(created).To(Equal([]uint64{1, 1, 1, 1, 1}))
		Expect(injected).To(Equal([]uint64{1, 2, 3, 6, 7}))
	})

	It("sends a packet's flits back to back on the VC its head took", func() {
		// 2 VCs, credit delay 1, three 3-flit packets created at 1: P1 on
		// VC 0 at 1, 2, 3; P2 on VC 1 at 4, 5, 6; P3 back on VC 0 (its tail
		// credit came back at 5) at 7, 8, 9. Each flit is popped a cycle
		// after it was sent.
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		t, s, _ := soloTerminal(e, creditLink(4, 0, 2, 4, 1), fabric.TerminalConfig{VCs: 2, FlitBytes: 4}, nil)
		injectAt(e, t, 0, 3, 3, 3)
		run(e)
		var want []rxFlit
		for i := range 9 {
			pkt := i/3 + 1
			want = append(want, rxFlit{Cycle: uint64(2 + i), VC: (pkt - 1) % 2, Packet: uint64(pkt), Seq: i % 3,
				Head: i%3 == 0, Tail: i%3 == 2})
		}
		Expect(s.got).To(Equal(want))
	})

	It("skips a VC whose tail credit is held downstream", func() {
		// 2 VCs, credit delay 1; the sink leaves VC 0 alone until cycle 20.
		// P1 takes VC 0 at 1 and its flit stays in the buffer. P2 takes VC
		// 1 at 2 (popped 3, credit at 4); P3 waits for VC 1 until 4 (popped
		// 5, credit at 6), P4 until 6 (popped 7). P1 is popped at 20.
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		t, s, _ := soloTerminal(e, creditLink(4, 0, 2, 4, 1), fabric.TerminalConfig{VCs: 2, FlitBytes: 4}, nil)
		s.hold0 = 20
		pkts := injectAt(e, t, 0, 1, 1, 1, 1)
		run(e)
		Expect(s.got).To(Equal([]rxFlit{
			{Cycle: 3, VC: 1, Packet: 2, Head: true, Tail: true},
			{Cycle: 5, VC: 1, Packet: 3, Head: true, Tail: true},
			{Cycle: 7, VC: 1, Packet: 4, Head: true, Tail: true},
			{Cycle: 20, VC: 0, Packet: 1, Head: true, Tail: true},
		}))
		Expect((*pkts)[3].Injected).To(Equal(uint64(6)))
	})

	// Packet.Injected is the cycle the head entered the network, not the
	// cycle the packet took its VC: with 2-cycle flits (8 B at 4 B/cycle)
	// and two VCs, P2 takes VC 1 at 2 while the serialiser is still busy
	// with P1 and sends its head at 3; P3 takes VC 0 at 4 and sends at 5.
	// (Setting it at the VC would overstate network latency by up to
	// ceil(FlitBytes/BytesPerCycle)-1 cycles, 3 on the Myrinet platforms.)
	It("records a packet's injection when its head is sent", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		t, s, _ := soloTerminal(e, creditLink(4, 0, 2, 4, 1), fabric.TerminalConfig{VCs: 2, FlitBytes: 8}, nil)
		pkts := injectAt(e, t, 0, 1, 1, 1)
		run(e)
		var injected, stamped []uint64
		for i, p := range *pkts {
			injected = append(injected, p.Injected)
			stamped = append(stamped, uint64(clk.CycleAt(s.flits[i].Stamp)))
		}
		Expect(stamped).To(Equal([]uint64{1, 3, 5}))
		Expect(injected).To(Equal(stamped))
	})

	// StopGenerating ends synthetic generation only: a terminal stopped at
	// 10 still wakes for its trace records of 50 and 100 (and until then
	// it is not Idle, so the watchdog would notice a record never
	// replayed).
	It("keeps replaying trace records after StopGenerating", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		var got []delivery
		ts := linkedPair(e, creditLink(4, 0, 2, 4, 1), fabric.TerminalConfig{VCs: 2, FlitBytes: 4}, recorder(e, &got, nil))
		ts[0].SetReplay([]traffic.Record{{Cycle: 0, Src: 0, Dst: 1, Size: 1}, {Cycle: 50, Src: 0, Dst: 1, Size: 1},
			{Cycle: 100, Src: 0, Dst: 1, Size: 1}})
		ts[0].Start()
		vtest.AtCycle(e, "Stopper", clk, 10, func(clock.Time) { ts[0].StopGenerating() })
		run(e)
		Expect(got).To(HaveLen(3))
	})

	It("replays trace records at their cycles", func() {
		// 2 VCs, 1-cycle flits, no wire delay, credit delay 1; terminal 1
		// ejects each flit the cycle after it was sent. R1 (cycle 0) is
		// injected at 0 on VC 0: delivered 1. The terminal sleeps until 3.
		// R2 (2 flits) takes VC 1 at 3 and 4: delivered 5; R3 (same cycle)
		// waits behind it and takes VC 0 at 5: delivered 6. R4 at 10 on VC
		// 1 (R2's tail credit came back at 6): delivered 11.
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		var got []delivery
		sh := recorder(e, &got, nil)
		ts := linkedPair(e, creditLink(4, 0, 2, 4, 1), fabric.TerminalConfig{VCs: 2, FlitBytes: 4}, sh)
		ts[0].SetReplay([]traffic.Record{{Cycle: 0, Src: 0, Dst: 1, Size: 1}, {Cycle: 3, Src: 0, Dst: 1, Size: 2},
			{Cycle: 3, Src: 0, Dst: 1, Size: 1}, {Cycle: 10, Src: 0, Dst: 1, Size: 1}})
		ts[0].Start()
		ts[1].Start() // nothing to send: stays asleep
		run(e)
		Expect(got).To(Equal([]delivery{
			{ID: 1, Src: 0, Dst: 1, Flits: 1, Created: 0, Injected: 0, At: 1},
			{ID: 2, Src: 0, Dst: 1, Flits: 2, Created: 3, Injected: 3, At: 5},
			{ID: 3, Src: 0, Dst: 1, Flits: 1, Created: 3, Injected: 5, At: 6},
			{ID: 4, Src: 0, Dst: 1, Flits: 1, Created: 10, Injected: 10, At: 11},
		}))
		// Both sleep when they have nothing to do: terminal 0 runs at 0, 3
		// (R2's head, R3 queued), 4 (R2's tail), 5 (R3) and 10; terminal 1
		// only when flits arrive, at 1, 4, 5, 6 and 11.
		Expect([]uint64{ts[0].Ticks(), ts[1].Ticks()}).To(Equal([]uint64{5, 5}))
		Expect(ts[0].Sent()).To(Equal(uint64(5)))
		Expect(ts[1].Received()).To(Equal(uint64(5)))
		sent, recv, dropped := sh.Packets.Counts()
		Expect([]int{sent, recv, dropped}).To(Equal([]int{4, 4, 0}))
		sh.Packets.Finish(e.Now())
		Expect(e.Monitor.Err()).NotTo(HaveOccurred())
	})

	It("traces deliveries and CRC drops, with the same timing as without tracing", func() {
		// Tracing takes the link's slow path (flits kept on a wire list
		// instead of landing in the buffer at once), which must not change
		// a cycle: the replay spec's packets, delivered at 1, 5, 6 and 11.
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		var got []delivery
		sh := recorder(e, &got, nil)
		ts := linkedPair(e, creditLink(4, 0, 2, 4, 1), fabric.TerminalConfig{VCs: 2, FlitBytes: 4}, sh)
		Expect(ts[1].ID()).To(Equal(1))
		ts[0].SetReplay([]traffic.Record{{Cycle: 0, Src: 0, Dst: 1, Size: 1}, {Cycle: 3, Src: 0, Dst: 1, Size: 2},
			{Cycle: 3, Src: 0, Dst: 1, Size: 1}, {Cycle: 10, Src: 0, Dst: 1, Size: 1}})
		ts[0].Start()
		run(e)
		var lines []string
		for _, r := range e.Trace.Records() {
			if r.Kind == "net.deliver" {
				lines = append(lines, fmt.Sprintf("%d %s %s", r.Cycle, r.Path, fieldsOf(r.Fields)))
			}
		}
		Expect(lines).To(Equal([]string{
			"1 T1 pkt=1 src=0 dst=1 flits=1 created=0 hops=0",
			"5 T1 pkt=2 src=0 dst=1 flits=2 created=3 hops=0",
			"6 T1 pkt=3 src=0 dst=1 flits=1 created=3 hops=0",
			"11 T1 pkt=4 src=0 dst=1 flits=1 created=10 hops=0",
		}))

		// Every packet corrupted: one net.crcdrop per packet, no delivery.
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		lc := creditLink(8, 0, 1, 8, 1)
		lc.CorruptProb = 1
		ts = linkedPair(e, lc, fabric.TerminalConfig{VCs: 1, FlitBytes: 8, Payload: true}, recorder(e, &got, nil))
		ts[0].SetReplay([]traffic.Record{{Cycle: 2, Src: 0, Dst: 1, Size: 3}})
		ts[0].Start()
		run(e)
		lines = nil
		for _, r := range e.Trace.Records() {
			if r.Kind == "net.crcdrop" || r.Kind == "net.deliver" {
				lines = append(lines, fmt.Sprintf("%d %s %s %s", r.Cycle, r.Path, r.Kind, fieldsOf(r.Fields)))
			}
		}
		// 1-cycle flits sent at 2, 3, 4: the tail is ejected at 5.
		Expect(lines).To(Equal([]string{"5 T1 net.crcdrop pkt=1 src=0 dst=1"}))
	})

	It("reports a flit that carries no packet", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		// A raw flit pushed into the link's own transmitter towards T0.
		l := newLink(e, "L", creditLink(4, 0, 1, 4, 1))
		t := newTerminal(e, "T0", 0, fabric.TerminalConfig{VCs: 1, FlitBytes: 4}, nil)
		t.Connect(l.From(link.A), l.From(link.B))
		a := vtest.NewAgent(e, "Raw", clk, func(now clock.Time, _ clock.Cycle) bool {
			l.From(link.B).Tx(0).Push(now, link.Flit{Head: true, Tail: true, Size: 4, Info: &link.PacketInfo{ID: 9}})
			return false
		})
		a.Start()
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("T0 [terminal.protocol] flit pkt 9 flit 0 vc 0 4B head tail without a packet")))
	})

	Describe("payload", func() {
		It("fills every flit with FlitBytes of data when asked", func() {
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			t, s, _ := soloTerminal(e, creditLink(8, 0, 1, 8, 1), fabric.TerminalConfig{VCs: 1, FlitBytes: 8, Payload: true}, nil)
			injectAt(e, t, 0, 3, 3)
			run(e)
			Expect(s.flits).To(HaveLen(6))
			seen := map[string]bool{}
			for _, f := range s.flits {
				Expect(f.Data).To(HaveLen(8))
				seen[string(f.Data)] = true
			}
			Expect(seen).To(HaveLen(6), "every flit of every packet carries different data")
		})

		It("sends no data without Payload (the flit still occupies FlitBytes on the wire)", func() {
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			t, s, _ := soloTerminal(e, creditLink(4, 0, 1, 8, 1), fabric.TerminalConfig{VCs: 1, FlitBytes: 8}, nil)
			injectAt(e, t, 0, 2)
			run(e)
			Expect(s.flits).To(HaveLen(2))
			for _, f := range s.flits {
				Expect(f.Data).To(BeEmpty())
				Expect(f.WireBytes()).To(Equal(8))
			}
			// 2-cycle flits (8 B at 4 B/cycle) sent at 1 and 3, popped 2 cycles later.
			Expect([]uint64{s.got[0].Cycle, s.got[1].Cycle}).To(Equal([]uint64{3, 5}))
		})

		It("is the same in every run", func() {
			data := func() [][]byte {
				e := vtest.NewEnv(vtest.Options{Clock: clk, Seed: 1})
				t, s, _ := soloTerminal(e, creditLink(8, 0, 1, 8, 1), fabric.TerminalConfig{VCs: 1, FlitBytes: 8, Payload: true}, nil)
				injectAt(e, t, 0, 2)
				run(e)
				var d [][]byte
				for _, f := range s.flits {
					d = append(d, f.Data)
				}
				return d
			}
			Expect(data()).To(Equal(data()))
		})
	})

	Describe("CRC drops", func() {
		// Every packet gets a flipped bit on the wire (corrupt probability
		// 1); the receiving link flags its tail and terminal 1 must count
		// and drop it, never deliver it.
		crcRun := func(payload bool) (*fabric.Shared, []*fabric.Terminal, []delivery, *link.Link) {
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			var got []delivery
			sh := recorder(e, &got, nil)
			lc := creditLink(8, 0, 1, 8, 1)
			lc.CorruptProb = 1
			l := newLink(e, "L", lc)
			tc := fabric.TerminalConfig{VCs: 1, FlitBytes: 8, Payload: payload}
			t0 := newTerminal(e, "T0", 0, tc, sh)
			t1 := newTerminal(e, "T1", 1, tc, sh)
			t0.Connect(l.From(link.A), l.From(link.B))
			t1.Connect(l.From(link.B), l.From(link.A))
			injectAt(e, t0, 0, 2, 1, 3)
			run(e)
			sh.Packets.Finish(e.Now())
			Expect(e.Monitor.Err()).NotTo(HaveOccurred())
			return sh, []*fabric.Terminal{t0, t1}, got, l
		}

		It("counts and drops packets whose CRC failed", func() {
			sh, ts, got, l := crcRun(true)
			Expect(got).To(BeEmpty())
			Expect(ts[1].CRCDrops()).To(Equal(uint64(3)))
			Expect(ts[1].Received()).To(Equal(uint64(6)), "the flits still arrive")
			sent, recv, dropped := sh.Packets.Counts()
			Expect([]int{sent, recv, dropped}).To(Equal([]int{3, 0, 3}))
			Expect(l.From(link.A).Stats().CRCErrors).To(Equal(uint64(3)))
		})

		It("has nothing to corrupt without a payload", func() {
			sh, ts, got, _ := crcRun(false)
			Expect(got).To(HaveLen(3))
			Expect(ts[1].CRCDrops()).To(BeZero())
			sent, recv, dropped := sh.Packets.Counts()
			Expect([]int{sent, recv, dropped}).To(Equal([]int{3, 3, 0}))
		})
	})

	Describe("through a wormhole router", func() {
		// The terminal sends the head at its creation cycle c; the wire
		// shows it to the router at c + 1 + L; with the mesh88_lat stages
		// the router allocates a VC in that cycle, the switch in the next
		// and sends the head 2 cycles after it became visible (router
		// package doc); the ejection link shows it to terminal 1 at
		// 1 + L later, and the body follows one flit per cycle. So the tail
		// arrives c + (1+L) + 2 + (1+L) + (P-1) = c + 2L + 3 + P, as the
		// router suite's L + H*(3+L) + P with H = 1. The VC buffers are
		// made deeper than any credit round trip so that the body is never
		// held back by credits.
		DescribeTable("delivers with the zero-load latency of one hop",
			func(latency, flits int) {
				e := vtest.NewEnv(vtest.Options{Clock: clk})
				var got []delivery
				sh := recorder(e, &got, nil)
				rc := wormhole.Mesh88Lat()
				rc.VCBufSize = 64
				ts, r := routedPair(e, rc, latency, nil, fabric.TerminalConfig{}, sh)
				ts[0].SetReplay([]traffic.Record{{Cycle: 5, Src: 0, Dst: 1, Size: flits}})
				ts[0].Start()
				run(e)
				Expect(got).To(Equal([]delivery{{ID: 1, Src: 0, Dst: 1, Flits: flits, Created: 5, Injected: 5,
					At: uint64(5 + 2*latency + 3 + flits), Hops: 1}}))
				Expect(r.FlitsOut(1)).To(Equal(uint64(flits)))
				sh.Packets.Finish(e.Now())
				Expect(e.Monitor.Err()).NotTo(HaveOccurred())
			},
			Entry("no wire delay, 1 flit: 5 + 4", 0, 1),
			Entry("1-cycle wires, 1 flit: 5 + 6", 1, 1),
			Entry("1-cycle wires, 4 flits: 5 + 9", 1, 4),
			Entry("3-cycle wires, 20 flits: 5 + 29", 3, 20),
		)

		It("reports a packet ejected at the wrong terminal", func() {
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			var got []delivery
			sh := recorder(e, &got, nil)
			toZero := func(_, _, _ int) wormhole.Route { return wormhole.Route{Port: 0, VCLo: 0, VCHi: 7} }
			ts, _ := routedPair(e, wormhole.Mesh88Lat(), 1, toZero, fabric.TerminalConfig{}, sh)
			ts[0].SetReplay([]traffic.Record{{Cycle: 0, Src: 0, Dst: 1, Size: 2}})
			ts[0].Start()
			_, err := e.Run()
			Expect(err).To(MatchError(ContainSubstring("[misroute] pkt 1 0->1 delivered to terminal 0")))
		})
	})
})

var _ = Describe("Experiment", func() {
	// Every experiment below joins terminals 0 and 1 by one link of 1-cycle
	// flits with no wire delay and credits back 1 cycle after the receiver
	// frees a slot: a flit sent at t is ejected at t+1 and its credit is
	// usable at t+2. Both terminals send bit-complement traffic (to each
	// other) at 1 packet/node/cycle, so a one-flit packet is created at
	// every cycle, deterministically.
	type setup struct {
		e      *env.Env
		x      *fabric.Experiment
		sh     *fabric.Shared
		ts     []*fabric.Terminal
		got    []delivery
		res    env.Result
		runErr error
	}
	experiment := func(vcs int, size string, rate float64, w stats.Window) *setup {
		GinkgoHelper()
		s := &setup{e: vtest.NewEnv(vtest.Options{Clock: clk})}
		s.x = fabric.NewExperiment(s.e, clk, 2, w)
		s.sh = recorder(s.e, &s.got, func(now clock.Time) { s.x.Delivered(now) })
		s.sh.Stats = s.x.Stats()
		pat, err := traffic.New("bitcomp", 2, traffic.Options{})
		Expect(err).NotTo(HaveOccurred())
		inj, err := traffic.NewBernoulliPackets(rate)
		Expect(err).NotTo(HaveOccurred())
		sizes, err := traffic.ParseSizes(size)
		Expect(err).NotTo(HaveOccurred())
		tc := fabric.TerminalConfig{VCs: vcs, FlitBytes: 4, Pattern: pat, Injection: inj, Sizes: sizes}
		s.ts = linkedPair(s.e, creditLink(4, 0, vcs, 4, 1), tc, s.sh)
		for _, t := range s.ts {
			s.x.Add(t)
		}
		s.x.Start()
		s.res, s.runErr = s.e.Run()
		return s
	}
	// drained checks what every run that drains must end with.
	drained := func(s *setup) {
		GinkgoHelper()
		Expect(s.runErr).NotTo(HaveOccurred())
		Expect(s.res.Stopped).To(BeFalse(), "the run ends by running out of events")
		Expect(s.x.Saturated()).To(BeFalse())
		Expect(s.x.Stats().Outstanding()).To(BeZero())
		for _, t := range s.ts {
			Expect(t.Idle()).To(BeTrue(), t.State())
		}
		s.sh.Packets.Finish(s.e.Now())
		Expect(s.e.Monitor.Err()).NotTo(HaveOccurred())
		sent, recv, dropped := s.sh.Packets.Counts()
		Expect(recv).To(Equal(sent))
		Expect(dropped).To(BeZero())
		Expect(s.ts[0].Sent() + s.ts[1].Sent()).To(Equal(s.ts[0].Received() + s.ts[1].Received()))
	}

	It("measures a network running at full rate and drains it", func() {
		// With 2 VCs a VC is free again 2 cycles after it was taken (tail
		// sent at t, credit back at t+2), so each terminal sends the packet
		// of cycle k at k and it arrives at k+1: every latency is 1 cycle.
		// Warm-up 10, measurement 20: the packets of cycles 10..29 of both
		// terminals (40) are measured, and the flits arriving in 10..29
		// (those of cycles 9..28, 40) are accepted. The last measured
		// packets arrive at 30, which ends the run.
		s := experiment(2, "1", 1, stats.Window{Warmup: 10, Measure: 20})
		drained(s)
		r := s.x.Stats().Result()
		one := stats.Dist{N: 40, Mean: 1, Min: 1, Max: 1, P50: 1, P99: 1}
		// Offered: 40 flits / (2 nodes * 20 cycles); no router: 0 hops.
		Expect(r).To(Equal(stats.Result{Packet: one, Network: one, Flit: one,
			Offered: 1, Accepted: 1, AcceptedPackets: 1, LastDelivery: r.LastDelivery}))
		// 30, or 31 if a packet of cycle 30 was created (tick order).
		Expect(r.LastDelivery).To(BeNumerically(">=", 30))
		Expect(r.LastDelivery).To(BeNumerically("<=", 31))
		measured := 0
		for _, d := range s.got {
			Expect(d.Measured).To(Equal(d.Created >= 10 && d.Created < 30), "packet created at %d", d.Created)
			if d.Measured {
				measured++
			}
			// Generation stops at 30, when the last measured packets
			// arrive: a terminal that ticks at 30 before that delivery may
			// still create one (see the report on tick order).
			Expect(d.Created).To(BeNumerically("<=", 30))
		}
		Expect(measured).To(Equal(40))
	})

	It("keeps generating while it drains and stops once every measured packet is in", func() {
		// One VC: a VC is free again only 2 cycles after it was taken, so a
		// terminal sends one packet every 2 cycles while it creates one per
		// cycle: the packet of cycle k is sent at 2k and arrives at 2k+1,
		// latency k+1. Warm-up 4, measurement 4: the packets of 4..7 (two
		// terminals: 8) have latencies 5, 6, 7, 8 each; the last arrives at
		// 15, in the drain, which ends the run. Packets created during the
		// drain (8..14) are still sent, unmeasured.
		s := experiment(1, "1", 1, stats.Window{Warmup: 4, Measure: 4, DrainLimit: 100})
		drained(s)
		r := s.x.Stats().Result()
		Expect(r.Packet).To(Equal(stats.Dist{N: 8, Mean: 6.5, Min: 5, Max: 8, P50: 6, P99: 8}))
		Expect(r.Network).To(Equal(stats.Dist{N: 8, Mean: 1, Min: 1, Max: 1, P50: 1, P99: 1}))
		Expect(r.Offered).To(Equal(1.0))  // 8 flits / (2 nodes * 4 cycles)
		Expect(r.Accepted).To(Equal(0.5)) // arrivals at 5 and 7 at each terminal
		maxCreated := uint64(0)
		for _, d := range s.got {
			maxCreated = max(maxCreated, d.Created)
		}
		// 14 by both terminals; 15 only by one that ticked at 15 before the
		// delivery that ended the run (tick order, see the report).
		Expect(maxCreated).To(BeNumerically(">=", 14))
		Expect(maxCreated).To(BeNumerically("<=", 15))
		Expect(r.LastDelivery).To(BeNumerically(">", 15), "drain-phase packets are delivered after the end")
	})

	It("stops a saturated network at the drain limit", func() {
		// As above (one VC: packet k sent at 2k, arrives at 2k+1), warm-up
		// 10, measurement 10, drain limit 6. The packets of 10..19 are
		// measured; by cycle 26 those of 10, 11 and 12 have arrived (at 21,
		// 23, 25) and those of 13..19 have not: 7 per terminal, 14 lost. No
		// packet arrives at an even cycle, so the count does not depend on
		// the order in which the terminals and the harness tick at 26.
		s := experiment(1, "1", 1, stats.Window{Warmup: 10, Measure: 10, DrainLimit: 6})
		Expect(s.runErr).NotTo(HaveOccurred())
		Expect(s.x.Saturated()).To(BeTrue())
		Expect(s.res.Stopped).To(BeTrue())
		Expect(clk.CycleAt(s.res.End)).To(Equal(clock.Cycle(26)))
		r := s.x.Stats().Result()
		Expect(r.Saturated).To(BeTrue())
		Expect(r.Lost).To(Equal(14))
		Expect(s.x.Stats().Outstanding()).To(Equal(14))
		// Latencies k+1 for k = 10, 11, 12 at both terminals.
		Expect(r.Packet).To(Equal(stats.Dist{N: 6, Mean: 12, Min: 11, Max: 13, P50: 12, P99: 13}))
		// Offered 1 flit/node/cycle (20 packets in 2*10 node-cycles),
		// accepted half of it (arrivals at 11, 13, ..., 19).
		Expect(r.Offered).To(Equal(1.0))
		Expect(r.Accepted).To(Equal(0.5))
		Expect(r.LastDelivery).To(Equal(uint64(25)))
	})

	It("drains a random load through a wormhole router with every checker clean", func() {
		// Bernoulli traffic at 0.1 flits/node/cycle of 1- and 4-flit
		// packets (mean 2.5: p = 0.04) through one mesh88_lat router with a
		// single VC. A terminal's only VC is held from its head to the
		// tail's credit (about P + 4 cycles, 6.5 on average), so each
		// terminal is busy about 0.04 * 6.5 = 26% of the time: well below
		// saturation.
		// Run traced (the links' slow path) and untraced (their fast path):
		// the same packets at the same cycles. The checks below are on the
		// untraced run.
		var (
			e   *env.Env
			x   *fabric.Experiment
			sh  *fabric.Shared
			ts  []*fabric.Terminal
			res env.Result
		)
		got, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(en *env.Env) []delivery {
			e = en
			w := stats.Window{Warmup: 200, Measure: 2000}
			x = fabric.NewExperiment(e, clk, 2, w)
			var got []delivery
			sh = recorder(e, &got, func(now clock.Time) { x.Delivered(now) })
			sh.Stats = x.Stats()
			sh.Order = check.NewOrdering[[2]int](e.Monitor, "Order")
			pat, err := traffic.New("uniform", 2, traffic.Options{})
			Expect(err).NotTo(HaveOccurred())
			sizes, err := traffic.ParseSizes("1:0.5,4:0.5")
			Expect(err).NotTo(HaveOccurred())
			inj, err := traffic.NewBernoulli(0.1, sizes)
			Expect(err).NotTo(HaveOccurred())
			rc := wormhole.Mesh88Lat()
			rc.NumVCs, rc.InputSpeedup = 1, 1 // one VC: delivery in order per source and destination
			ts, _ = routedPair(e, rc, 1, nil, fabric.TerminalConfig{Pattern: pat, Injection: inj, Sizes: sizes}, sh)
			for _, t := range ts {
				x.Add(t)
			}
			x.Start()
			res, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			return got
		})
		Expect(diff).To(BeEmpty(), "deliveries traced (-) and untraced (+)")
		Expect(res.Stopped).To(BeFalse())
		Expect(x.Saturated()).To(BeFalse())
		Expect(x.Stats().Outstanding()).To(BeZero())
		for _, t := range ts {
			Expect(t.Idle()).To(BeTrue(), t.State())
		}
		sh.Packets.Finish(e.Now())
		Expect(e.Monitor.Err()).NotTo(HaveOccurred())
		measured := 0
		for _, d := range got {
			Expect(d.Hops).To(Equal(1))
			Expect(d.Dst).To(Equal(1 - d.Src))
			Expect(d.At-d.Created).To(BeNumerically(">=", uint64(5+d.Flits)), "at least the zero-load latency")
			if d.Measured {
				measured++
			}
		}
		r := x.Stats().Result()
		Expect(r.Packet.N).To(Equal(measured))
		Expect(r.Packet.Min).To(BeNumerically(">=", 6)) // zero load, 1 flit
		Expect(r.MeanHops).To(Equal(1.0))
		// Offered load: 2 nodes * 2000 cycles = 4000 Bernoulli trials with
		// p = 0.04 of a size S (E[S] = 2.5, E[S^2] = (1+16)/2 = 8.5): the
		// flit count has mean 4000 * 0.04 * 2.5 = 400 and variance
		// 4000 * 0.04 * (E[S^2] - 0.04 * E[S]^2) = 1320 (sd 36), so
		// offered = 0.1 +- 6 * 36/4000 = 0.1 +- 0.055.
		Expect(r.Offered).To(BeNumerically("~", 0.1, 0.055))
		// Accepted differs from offered only by the flits queued or in
		// flight at the window's edges; at 26% load more than 40 of them
		// (16 packets) is out of the question.
		Expect(r.Accepted).To(BeNumerically("~", r.Offered, 40/4000.0))
	})

	It("creates packets with geometric gaps at the Bernoulli rate", func() {
		// 0.2 packets/node/cycle of one flit, 2 VCs (full link rate):
		// nothing queues. A Bernoulli trial per cycle gives 2 * 5000 * 0.2 =
		// 2000 measured packets +- 6 sigma (sigma = sqrt(10000*0.2*0.8) =
		// 40), and gaps between successive creations at one terminal of g
		// cycles with probability 0.8^(g-1) * 0.2.
		const p = 0.2
		// Traced (slow link path) and untraced (fast): the same deliveries.
		var x *fabric.Experiment
		got, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(e *env.Env) []delivery {
			x = fabric.NewExperiment(e, clk, 2, stats.Window{Measure: 5000})
			var got []delivery
			sh := recorder(e, &got, func(now clock.Time) { x.Delivered(now) })
			sh.Stats = x.Stats()
			pat, err := traffic.New("bitcomp", 2, traffic.Options{})
			Expect(err).NotTo(HaveOccurred())
			inj, err := traffic.NewBernoulliPackets(p)
			Expect(err).NotTo(HaveOccurred())
			tc := fabric.TerminalConfig{VCs: 2, FlitBytes: 4, Pattern: pat, Injection: inj, Sizes: traffic.Fixed(1)}
			for _, t := range linkedPair(e, creditLink(4, 0, 2, 4, 1), tc, sh) {
				x.Add(t)
			}
			x.Start()
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			return got
		})
		Expect(diff).To(BeEmpty(), "deliveries traced (-) and untraced (+)")
		r := x.Stats().Result()
		Expect(float64(r.Packet.N)).To(BeNumerically("~", 2000, 6*40))
		Expect(r.Offered).To(BeNumerically("~", p, 6*40/10000.0))
		// Gaps in bins 1, 2, 3, 4 and 5 or more.
		probs := []float64{p, 0.8 * p, 0.64 * p, 0.512 * p, 0.4096}
		counts := make([]int, len(probs))
		last := []int64{-1, -1}
		n := 0
		for _, d := range got { // in creation order per source: one VC-free link, no overtaking
			if last[d.Src] >= 0 {
				g := int(int64(d.Created) - last[d.Src])
				Expect(g).To(BeNumerically(">=", 1))
				counts[min(g, 5)-1]++
				n++
			}
			last[d.Src] = int64(d.Created)
		}
		chi := 0.0
		for i, q := range probs {
			m := float64(n) * q
			Expect(float64(counts[i])).To(BeNumerically("~", m, 6*math.Sqrt(m*(1-q))), "gap bin %d", i+1)
			chi += (float64(counts[i]) - m) * (float64(counts[i]) - m) / m
		}
		// 4 degrees of freedom: P(chi-square > 33.4) = 1e-6.
		Expect(chi).To(BeNumerically("<", 33.4))
	})

	// A measured packet dropped for a bad CRC is never delivered: the
	// terminal tells the collector (Dropped) and the harness (OnDrop), so
	// the drain ends once every measured packet is delivered or dropped
	// instead of running into the time limit (or, with a drain limit,
	// reporting saturation at any load).
	It("ends the drain when measured packets are lost to CRC errors", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, TimeLimit: clk.TimeOf(2000)})
		x := fabric.NewExperiment(e, clk, 2, stats.Window{Measure: 200}) // ~40 measured packets
		var got []delivery
		sh := recorder(e, &got, func(now clock.Time) { x.Delivered(now) })
		sh.Stats = x.Stats()
		sh.OnDrop = func(now clock.Time, _ *fabric.Packet) { x.Dropped(now) }
		pat, err := traffic.New("bitcomp", 2, traffic.Options{})
		Expect(err).NotTo(HaveOccurred())
		inj, err := traffic.NewBernoulliPackets(0.1)
		Expect(err).NotTo(HaveOccurred())
		lc := creditLink(8, 0, 2, 4, 1)
		lc.CorruptProb = 1
		tc := fabric.TerminalConfig{VCs: 2, FlitBytes: 8, Pattern: pat, Injection: inj, Sizes: traffic.Fixed(1), Payload: true}
		for _, t := range linkedPair(e, lc, tc, sh) {
			x.Add(t)
		}
		x.Start()
		res, _ := e.Run()
		Expect(res.Stopped).To(BeFalse(), "the run ends by itself")
		Expect(x.Saturated()).To(BeFalse())
		r := x.Stats().Result()
		Expect(r.Dropped).To(BeNumerically(">", 0))
		Expect(r.Packet.N).To(BeZero()) // every packet was corrupted
		Expect(r.Saturated).To(BeFalse())
	})

	// The harness stops generation from inside the tick of whichever
	// component delivers the last measured packet; generation still runs
	// to the end of that cycle, so terminals that tick before and after it
	// create the same packets, whatever order they were built in (at full
	// rate, 2 VCs, a packet per cycle, warm-up 10, measurement 20).
	It("creates the same packets whatever order the terminals were built in", func() {
		sent := func(order []int) []uint64 {
			e := vtest.NewEnv(vtest.Options{Clock: clk})
			x := fabric.NewExperiment(e, clk, 2, stats.Window{Warmup: 10, Measure: 20})
			var got []delivery
			sh := recorder(e, &got, func(now clock.Time) { x.Delivered(now) })
			sh.Stats = x.Stats()
			pat, err := traffic.New("bitcomp", 2, traffic.Options{})
			Expect(err).NotTo(HaveOccurred())
			inj, err := traffic.NewBernoulliPackets(1)
			Expect(err).NotTo(HaveOccurred())
			tc := fabric.TerminalConfig{VCs: 2, FlitBytes: 4, Pattern: pat, Injection: inj, Sizes: traffic.Fixed(1)}
			l := newLink(e, "L", creditLink(4, 0, 2, 4, 1))
			ts := make([]*fabric.Terminal, 2)
			for _, i := range order {
				ts[i] = newTerminal(e, fmt.Sprintf("T%d", i), i, tc, sh)
			}
			ts[0].Connect(l.From(link.A), l.From(link.B))
			ts[1].Connect(l.From(link.B), l.From(link.A))
			x.Add(ts[0])
			x.Add(ts[1])
			x.Start()
			run(e)
			return []uint64{ts[0].Sent(), ts[1].Sent()}
		}
		Expect(vtest.SameInEveryOrder(2, sent)).To(BeEmpty())
	})
})
