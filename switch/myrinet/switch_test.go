package myrinet_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/myrinet"
	"github.com/nisim/nisim/switch/topology"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

type delivery struct {
	Src, Dst int
	Latency  uint64
}

// build makes a Myrinet cluster with every checker on and returns the
// deliveries as they happen.
func build(e *env.Env, clos bool, p myrinet.Platform) (*topology.SourceNet, *fabric.Shared, *[]delivery) {
	return buildWith(e, clos, p, fabric.TerminalConfig{})
}

func buildWith(e *env.Env, clos bool, p myrinet.Platform, tc fabric.TerminalConfig) (*topology.SourceNet, *fabric.Shared, *[]delivery) {
	var got []delivery
	clk := p.Link.Clock
	sh := &fabric.Shared{
		Packets: check.NewConservation[uint64](e.Monitor, "Packets"),
		Order:   check.NewOrdering[[2]int](e.Monitor, "Order"),
		OnDeliver: func(now clock.Time, pk *fabric.Packet) {
			got = append(got, delivery{pk.Src, pk.Dst, uint64(clk.CycleAt(now)) - pk.Created})
		},
	}
	c := topology.MyrinetConfig{Platform: p, Terminal: tc}
	var net *topology.SourceNet
	var err error
	if clos {
		net, err = topology.MyrinetClos(e, "Myri", c, sh)
	} else {
		net, err = topology.MyrinetGrid(e, "Myri", c, sh)
	}
	Expect(err).NotTo(HaveOccurred())
	return net, sh, &got
}

func replay(net *topology.SourceNet, recs []traffic.Record) {
	per := make([][]traffic.Record, 64)
	for _, r := range recs {
		per[r.Src] = append(per[r.Src], r)
	}
	for i, t := range net.Terminals {
		t.SetReplay(per[i])
		t.Start()
	}
}

var _ = Describe("Myrinet switch and clusters", func() {
	p := myrinet.PPro()

	It("takes 100 ns per switch on the PPro platform", func() {
		Expect(p.HopCycles()).To(Equal(16))
		Expect(p.Link.Clock.TimeOf(clock.Cycle(p.HopCycles()))).To(Equal(100 * clock.Nanosecond))
	})

	It("has the paper's hop counts: at most 10 on the grid, 3 on the Clos switch", func() {
		for _, clos := range []bool{false, true} {
			e := env.New(env.Options{})
			net, _, _ := build(e, clos, p)
			longest := 0
			for s := range 64 {
				for d := range 64 {
					longest = max(longest, net.Hops(s, d))
				}
			}
			if clos {
				Expect(longest).To(Equal(3))
			} else {
				Expect(longest).To(Equal(10))
			}
		}
	})

	DescribeTable("zero-load latency is the first link, a hop per switch and the body at link rate",
		// The head flit (4 bytes at 1 byte per cycle) takes 4 + 4 (cable)
		// = 8 cycles from the host to the first switch; each switch adds its
		// 8-cycle fall-through and the next 8-cycle link; the tail follows
		// at one 4-byte flit per 4 cycles: 8 + 16*H + 4*(P-1).
		func(clos bool, src, dst, flits int) {
			e := vtest.NewEnv(vtest.Options{Clock: p.Link.Clock})
			net, sh, got := build(e, clos, p)
			replay(net, []traffic.Record{{Cycle: 5, Src: src, Dst: dst, Size: flits}})
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			sh.Packets.Finish(e.Now())
			h := net.Hops(src, dst)
			Expect(*got).To(Equal([]delivery{{src, dst, uint64(8 + 16*h + 4*(flits-1))}}))
		},
		Entry("grid, corner to corner, 10 switches", false, 0, 63, 16),
		Entry("grid, next door", false, 21, 22, 1),
		Entry("grid, same switch (to itself)", false, 7, 7, 3),
		Entry("Clos, across the spine", true, 3, 60, 16),
		Entry("Clos, same leaf", true, 8, 15, 2),
	)

	It("holds a blocked packet's path and stops its sender with STOP/GO, losing nothing", Label("golden"), func() {
		e := vtest.NewEnv(vtest.Options{Clock: p.Link.Clock, Trace: true})
		net, sh, got := build(e, false, p)
		// Hosts 1 and 4 (the switches east and north of switch 0) each send
		// a 64-flit packet to host 0 at the same cycle. Switch 0's host port
		// goes to one of them; the other waits at its input, its slack
		// buffer fills past STOP, its sender stops, and it goes once the
		// first tail has passed.
		replay(net, []traffic.Record{{Cycle: 0, Src: 1, Dst: 0, Size: 64}, {Cycle: 0, Src: 4, Dst: 0, Size: 64}})
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(*got).To(HaveLen(2))
		first, second := (*got)[0].Latency, (*got)[1].Latency
		Expect(first).To(Equal(uint64(8 + 16*2 + 4*63)))
		Expect(second).To(BeNumerically(">=", first+4*64-16))
		stops := uint64(0)
		for _, l := range net.Links {
			stops += l.From(0).Stats().StopStalls + l.From(1).Stats().StopStalls
		}
		Expect(stops).To(BeNumerically(">", 0))
		blocked := uint64(0)
		for p := range 8 {
			blocked += net.Switches[0].PortStats(p).BlockedCycles
		}
		Expect(blocked).To(BeNumerically(">", 200))
		sh.Packets.Finish(e.Now())
		Expect(vtest.Golden("testdata/stopgo.trace", e.Trace.Records(),
			"Hosts 1 and 4 send 64 4-byte flits each to host 0 at cycle 0 (PPro Myrinet, 160 MHz, 1 byte/cycle).",
			"link.packet: a packet's tail lands at the end of a link; myri.route: a switch connects a head to an output;",
			"net.deliver: the tail reaches its host. Each head reaches its first switch at 8 (4 cycles to send a",
			"4-byte flit, 4 on the cable) and is routed there; both reach switch 0 at 24 (8 fall-through + 8 link);",
			"the round-robin gives the host port to input 0 (from switch 1), which delivers after",
			"8 + 2*16 + 4*63 = 292 cycles; host 4's packet (input 2) waits, is routed at 284 once the first tail",
			"has gone, and its sender is held back by STOP/GO meanwhile (no overflow, no loss).")).To(Succeed())
	})

	It("counts corrupted packets at the destination and never delivers them", func() {
		pc := p
		pc.Link.CorruptProb = 1
		e := vtest.NewEnv(vtest.Options{Clock: p.Link.Clock})
		// The flits carry payload bytes, so the link CRCs cover something
		// to corrupt; every link flips one bit of every packet.
		net, sh, got := buildWith(e, true, pc, fabric.TerminalConfig{Payload: true})
		var recs []traffic.Record
		for i := range 20 {
			recs = append(recs, traffic.Record{Cycle: uint64(10 * i), Src: i, Dst: 63 - i, Size: 4})
		}
		replay(net, recs)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(*got).To(BeEmpty())
		drops := uint64(0)
		for _, t := range net.Terminals {
			drops += t.CRCDrops()
		}
		Expect(drops).To(Equal(uint64(20)))
		sent, recv, dropped := sh.Packets.Counts()
		Expect([]int{sent, recv, dropped}).To(Equal([]int{20, 0, 20}))
	})

	DescribeTable("delivers thousands of random packets in order on both clusters",
		func(clos bool, pl myrinet.Platform) {
			e := vtest.NewEnv(vtest.Options{Clock: pl.Link.Clock})
			net, sh, got := build(e, clos, pl)
			rng := e.Rand("Traffic")
			var recs []traffic.Record
			for c := uint64(0); c < 4000; c += 4 {
				for src := range 64 {
					if rng.Float64() < 0.04 {
						recs = append(recs, traffic.Record{Cycle: c, Src: src, Dst: rng.IntN(64), Size: 1 + rng.IntN(32)})
					}
				}
			}
			replay(net, recs)
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			sh.Packets.Finish(e.Now())
			Expect(e.Monitor.Err()).NotTo(HaveOccurred())
			Expect(*got).To(HaveLen(len(recs)))
			Expect(len(recs)).To(BeNumerically(">", 2000))
		},
		Entry("PPro grid", false, myrinet.PPro()),
		Entry("P3 Clos", true, myrinet.P3()),
	)

	It("reports and discards a packet with no valid route byte", func() {
		clk := p.Link.Clock
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		s, err := myrinet.MakeBuilder().WithEnv(e).WithClock(clk).WithPorts(4).Build("S")
		Expect(err).NotTo(HaveOccurred())
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(p.Link).Build("L")
		Expect(err).NotTo(HaveOccurred())
		s.ConnectInput(0, l.From(link.A))
		s.ConnectOutput(0, l.From(link.B))
		sent := 0
		a := vtest.NewAgent(e, "Host", clk, func(now clock.Time, c clock.Cycle) bool {
			if sent < 2 && l.From(link.A).CanSend(now, 0) {
				l.From(link.A).Send(now, &link.Flit{Seq: int32(sent), Head: sent == 0, Tail: sent == 1, Size: 4, Info: &link.PacketInfo{ID: 7, Route: []byte{9}}, Carries: link.HasRoute})
				sent++
			}
			return sent < 2
		})
		l.From(link.A).SetSender(a)
		a.Start()
		_, err = e.Run()
		Expect(err).To(MatchError(ContainSubstring("myri.route")))
		Expect(e.Monitor.Count()).To(Equal(1)) // reported once per packet
		Expect(l.From(link.A).Rx(0).Len()).To(BeZero())
		_, err = myrinet.MakeBuilder().WithEnv(e).WithClock(clk).WithPorts(1).Build("T")
		Expect(err).To(MatchError(ContainSubstring("ports 1")))
	})

	It("arbitrates round-robin across more than 64 ports (inputs beyond the first word of the busy-input sets)", func() {
		clk := p.Link.Clock
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		s, err := myrinet.MakeBuilder().WithEnv(e).WithClock(clk).WithPorts(130).Build("S")
		Expect(err).NotTo(HaveOccurred())
		// Inputs 129, 65 and 1 (the third, second and first 64-port word)
		// each send a 4-flit packet to output 70 at cycle 0; the heads land
		// together, and output 70's round-robin pointer starts at input 0,
		// so it serves 1, then 65 (the first at or after 2), then 129.
		srcs := []int{129, 65, 1}
		for _, in := range srcs {
			l, err := link.MakeBuilder().WithEnv(e).WithConfig(p.Link).Build(fmt.Sprintf("L%d", in))
			Expect(err).NotTo(HaveOccurred())
			d := l.From(link.A)
			s.ConnectInput(in, d)
			sent := 0
			a := vtest.NewAgent(e, fmt.Sprintf("Host%d", in), clk, func(now clock.Time, c clock.Cycle) bool {
				if sent < 4 && d.CanSend(now, 0) {
					d.Send(now, &link.Flit{Seq: int32(sent), Head: sent == 0, Tail: sent == 3, Size: 4, Info: &link.PacketInfo{ID: uint64(in), Route: []byte{70}}, Carries: link.HasRoute})
					sent++
				}
				return sent < 4
			})
			d.SetSender(a)
			a.Start()
		}
		lo, err := link.MakeBuilder().WithEnv(e).WithConfig(p.Link).Build("Lo")
		Expect(err).NotTo(HaveOccurred())
		out := lo.From(link.A)
		s.ConnectOutput(70, out)
		var order []uint64
		sink := vtest.NewAgent(e, "Sink", clk, func(now clock.Time, c clock.Cycle) bool {
			f, ok := out.Rx(0).Pop(now)
			if ok && f.Tail {
				order = append(order, f.Packet())
			}
			return ok
		})
		out.SetReceiver(sink)
		// A probe reads input 65's count every cycle while the run goes on.
		var seen []uint64
		probe := vtest.NewAgent(e, "Probe", clk, func(now clock.Time, c clock.Cycle) bool {
			seen = append(seen, s.PortStats(65).BlockedCycles)
			return c < 80
		})
		probe.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(order).To(Equal([]uint64{1, 65, 129}))
		// Read during its wait, the count grows by one a cycle, though the
		// switch does not tick then, and stops at the wait's 20 cycles.
		Expect(seen[len(seen)-1]).To(Equal(uint64(20)))
		steps := map[uint64]int{}
		for k := 1; k < len(seen); k++ {
			steps[seen[k]-seen[k-1]]++
		}
		Expect(steps).To(Equal(map[uint64]int{0: len(seen) - 1 - 20, 1: 20}))
		Expect(s.PortStats(70).FlitsOut).To(Equal(uint64(12)))
		// The later packets wait at their inputs while the earlier ones
		// hold the output. Input 1 wins at cycle c (its head landed): it
		// forwards after the 8-cycle fall-through, one 4-byte flit per 4
		// cycles at 1 byte a cycle, its tail at c+8+3*4 = c+20, and in that
		// cycle's connect 65 wins: 65 lost cycles c..c+19, 20 cycles, and
		// 129 a second packet more, 40. (The switch sleeps while they wait:
		// the counts come from the cycle each wait began.)
		Expect(s.PortStats(1).BlockedCycles).To(BeZero())
		Expect(s.PortStats(65).BlockedCycles).To(Equal(uint64(20)))
		Expect(s.PortStats(129).BlockedCycles).To(Equal(uint64(40)))
		Expect(s.Idle()).To(BeTrue())
	})
})
