package link_test

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"
)

// A direction's deterministic fault plan (issue 17 section 2): the n-th
// packet dropped or corrupted on the wire by the same path as the random
// DropProb and CorruptProb faults.
var _ = Describe("Link fault plan", func() {
	clk := clock.MHz(100)

	// run sends n packets of two 8-byte flits (2 serialisation cycles
	// each at 4 B/cycle) from side A through its transmit queue, with a
	// conservation checker from the push to the receiver's pop of the
	// tail (a Bad tail counts as received: the receiver sees it); the
	// receiver pops one flit per cycle from cycle popFrom on. It returns
	// the pop cycles, the packets whose tail was Bad, the link and env.
	type result struct {
		pops []clock.Cycle
		bad  []uint64
		l    *link.Link
		e    *env.Env
	}
	run := func(cfg link.Config, plan link.FaultPlan, n int, popFrom clock.Cycle) result {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).WithFaults(link.A, plan).Build("L")
		Expect(err).NotTo(HaveOccurred())
		d := l.From(link.A)
		cons := check.NewConservation[uint64](e.Monitor, "Packets")
		var flits []link.Flit
		for p := range n {
			info := &link.PacketInfo{ID: uint64(p)}
			for i := range 2 {
				flits = append(flits, link.Flit{Info: info, Seq: int32(i), Head: i == 0, Tail: i == 1,
					Data: []byte{byte(p), byte(i), 3, 4, 5, 6, 7, 8}})
			}
		}
		r := result{l: l, e: e}
		i := 0
		snd := vtest.NewAgent(e, "Snd", clk, func(now clock.Time, c clock.Cycle) bool {
			if i < len(flits) && d.Tx(0).CanPush(now) {
				if flits[i].Head {
					cons.Sent(now, flits[i].Packet())
				}
				d.Tx(0).Push(now, flits[i])
				i++
			}
			return i < len(flits)
		})
		rcv := vtest.NewAgent(e, "Rcv", clk, func(now clock.Time, c clock.Cycle) bool {
			if c < popFrom {
				return true
			}
			if f, ok := d.Rx(0).Pop(now); ok {
				r.pops = append(r.pops, c)
				if f.Tail {
					cons.Received(now, f.Packet())
					if f.Bad {
						r.bad = append(r.bad, f.Packet())
					}
				}
			}
			return i < len(flits) || d.Rx(0).Len() > 0 || !l.Idle()
		})
		d.Connect(snd, rcv)
		snd.Start()
		rcv.Start()
		_, _ = e.Run()
		cons.Finish(e.Now())
		return r
	}
	kinds := func(e *env.Env, kind string) []string {
		var out []string
		for _, rec := range e.Trace.Records() {
			if rec.Kind == kind {
				p, _ := rec.Get("pkt")
				crc, _ := rec.Get("crc")
				out = append(out, rec.Path+" "+p+crc)
			}
		}
		return out
	}
	// lostOnly expects the conservation checker's report of the lost
	// packet and nothing else: when events run out it still holds the
	// packet (the watchdog reports it busy), Finish reports it lost.
	lostOnly := func(e *env.Env, msg string) {
		GinkgoHelper()
		v := e.Monitor.Violations()
		Expect(cmp.Diff([]check.Violation{{Time: v[0].Time, Path: "Watchdog", Check: "deadlock",
			Msg: "1 busy unit(s) when events ran out"}, {Time: v[0].Time, Path: "Packets", Check: "lost", Msg: msg}}, v)).To(BeEmpty())
	}
	stopGo := func(slack int) link.Config {
		return link.Config{Clock: clk, BytesPerCycle: 4, DelayCycles: 2, FlowControl: link.StopGo,
			SlackBytes: slack, StopAt: 16, GoAt: 8, TxDepth: 2}
	}

	It("STOP/GO: a dropped packet's flits never count in the slack buffer, and STOP/GO goes on", func() {
		r := run(stopGo(48), link.FaultPlan{{N: 2, Kind: link.Drop}}, 4, 30)
		// Worked by hand. Flits f0..f7 (packet p is f2p, f2p+1), 2 cycles
		// each: f0 starts at c1, f1 c3, f2 c5, f3 c7, f4 c9, f5 c11, f6 c13;
		// a flit started at t lands at t+1+2 (serialisation end, wire
		// delay 2). f0 lands c4 (slack 8), f1 c6 (16, not above STOP's 16);
		// f2 and f3 (packet 1, the 2nd) land at c8 and c10 lost: slack
		// stays 16. f4 lands c12 (24 > 16: STOP leaves, reaches the sender
		// at c14), f5 c14 (32), f6, started at c13 before STOP arrived,
		// c16 (40: the maximum). f7 waits for GO. From c30 the receiver
		// pops one a cycle: f0 c30 (32), f1 c31 (24), f4 c32 (16), f5 c33
		// (8, not below GO's 8), f6 c34 (0 < 8: GO leaves, reaches the
		// sender at c36); f7 starts c36, lands c39, is popped at c40.
		Expect(r.pops).To(Equal([]clock.Cycle{30, 31, 32, 33, 34, 40}))
		st := r.l.From(link.A).Stats()
		Expect(st.MaxRxBytes).To(Equal(40))
		Expect(st.StopStalls).To(Equal(uint64(1)))
		Expect(st.Dropped).To(Equal(uint64(1)))
		Expect(st.Packets).To(Equal(uint64(3)))
		Expect(st.Flits).To(Equal(uint64(6)))
		Expect(r.bad).To(BeEmpty())
		// The loss is traced as a random drop's is, at the lost tail's
		// landing (c10), and the conservation checker reports packet 1
		// lost at the end (nothing else: nothing overflowed, the slack
		// drained to 0).
		Expect(kinds(r.e, "link.drop")).To(Equal([]string{"L.AB 1"}))
		Expect(kinds(r.e, "link.packet")).To(Equal([]string{"L.AB 0", "L.AB 2", "L.AB 3"}))
		lostOnly(r.e, "1 of 4 sent never arrived (first: [1])")
	})

	It("STOP/GO: a corrupted packet reaches the receiver with its tail Bad", func() {
		r := run(stopGo(48), link.FaultPlan{{N: 3, Kind: link.Corrupt}}, 4, 0)
		// Popped as they land, a cycle later: c5, c7, ..., c19 (f7 starts
		// at c15 and lands at c18); nothing is lost, packet 2 (the 3rd)
		// fails its CRC.
		Expect(r.pops).To(Equal([]clock.Cycle{5, 7, 9, 11, 13, 15, 17, 19}))
		Expect(r.bad).To(Equal([]uint64{2}))
		st := r.l.From(link.A).Stats()
		Expect(st.Corrupted).To(Equal(uint64(1)))
		Expect(st.CRCErrors).To(Equal(uint64(1)))
		Expect(st.Dropped).To(BeZero())
		Expect(kinds(r.e, "link.packet")).To(Equal([]string{"L.AB 0", "L.AB 1", "L.AB 2bad", "L.AB 3"}))
		Expect(r.e.Monitor.Violations()).To(BeEmpty())
	})

	It("credits: a dropped packet's credits return at its landing, conservation holds", func() {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.DelayCycles, cfg.BufferFlits, cfg.CreditDelay, cfg.TraceFlits = 4, 2, 2, 1, false
		r := run(cfg, link.FaultPlan{{N: 2, Kind: link.Drop}}, 3, 10)
		// Worked by hand (2 credits, credit delay 1). f0 starts c1, lands
		// c4; f1 starts c3, lands c6: no credits left. The receiver pops
		// f0 at c10 (credit usable c11) and f1 at c11 (c12). f2 starts c11,
		// lands c14 lost: its credit returns at once, usable c15; f3
		// starts c13 (serialiser free, f1's credit), lands c16 lost
		// (credit usable c17). f4 starts c15, lands c18, popped c19; f5
		// starts c17, lands c20, popped c21.
		Expect(r.pops).To(Equal([]clock.Cycle{10, 11, 19, 21}))
		Expect(r.l.From(link.A).Credits(0)).To(Equal(2))
		Expect(r.l.From(link.A).Stats().Dropped).To(Equal(uint64(1)))
		// The link's credit checker (link.credits) finds nothing: the lost
		// flits' credits came back; only the conservation checker sees
		// the loss.
		lostOnly(r.e, "1 of 3 sent never arrived (first: [1])")
	})

	It("is set per direction with SetFaultPlan, in any order, on the fast path too", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk}) // no tracing: a fast-path link
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle = 8
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("L")
		Expect(err).NotTo(HaveOccurred())
		d := l.From(link.A)
		plan := link.FaultPlan{{N: 4, Kind: link.Drop}, {N: 1, Kind: link.Corrupt}}
		Expect(d.SetFaultPlan(plan)).To(Succeed())
		Expect(d.FaultPlan()).To(Equal(link.FaultPlan{{N: 1, Kind: link.Corrupt}, {N: 4, Kind: link.Drop}}))
		Expect(l.From(link.B).FaultPlan()).To(BeEmpty())
		var got []uint64
		var bad []bool
		sent := 0
		snd := vtest.NewAgent(e, "S", clk, func(now clock.Time, c clock.Cycle) bool {
			if sent < 5 && d.CanSend(now, 0) {
				d.Send(now, &link.Flit{Head: true, Tail: true, Data: []byte{1, 2, 3, 4}, Info: &link.PacketInfo{ID: uint64(sent)}})
				sent++
			}
			return sent < 5
		})
		rcv := vtest.NewAgent(e, "R", clk, func(now clock.Time, c clock.Cycle) bool {
			if f, ok := d.Rx(0).Pop(now); ok {
				got, bad = append(got, f.Packet()), append(bad, f.Bad)
			}
			return d.Rx(0).Len() > 0
		})
		d.Connect(snd, rcv)
		snd.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]uint64{0, 1, 2, 4}))
		Expect(bad).To(Equal([]bool{true, false, false, false}))
		// Set after the direction has sent: its packet count has begun.
		Expect(d.SetFaultPlan(link.FaultPlan{{N: 9, Kind: link.Drop}})).To(MatchError(
			"link L.AB: fault plan set after the direction sent 5 serialiser cycles of flits (set it before the run)"))
	})

	It("leaves every other packet's random fate as it was", func() {
		// The same seeded 30% drops with and without a plan on packet 5:
		// only packet 5's fate differs.
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.BufferFlits, cfg.DropProb, cfg.TraceFlits = 4, 4, 0.3, false
		without := run(cfg, nil, 20, 0)
		with := run(cfg, link.FaultPlan{{N: 5, Kind: link.Corrupt}}, 20, 0)
		lost := func(r result) []string {
			return kinds(r.e, "link.drop")
		}
		Expect(lost(without)).NotTo(BeEmpty())
		Expect(lost(with)).To(Equal(func() []string {
			var out []string
			for _, s := range lost(without) {
				if s != "L.AB 4" {
					out = append(out, s)
				}
			}
			return out
		}()))
		Expect(with.bad).To(Equal([]uint64{4}))
	})

	DescribeTable("rejects an invalid plan with a one-line error naming it",
		func(plan link.FaultPlan, msg string) {
			_, err := link.MakeBuilder().WithEnv(env.New(env.Options{})).WithConfig(link.DefaultCredit(clk)).
				WithFaults(link.B, plan).Build("Bad")
			Expect(err).To(MatchError(msg))
		},
		Entry("a packet 0", link.FaultPlan{{N: 0, Kind: link.Drop}}, "Bad.BA: link fault plan entry 0: packet 0 must be at least 1"),
		Entry("a packet twice", link.FaultPlan{{N: 3, Kind: link.Drop}, {N: 1, Kind: link.Drop}, {N: 3, Kind: link.Corrupt}},
			"Bad.BA: link fault plan entry 2: packet 3 is planned twice"),
		Entry("no kind", link.FaultPlan{{N: 2}}, "Bad.BA: link fault plan entry 0: packet 2: unknown kind FaultKind(0) (drop or corrupt)"),
	)
})
