package link_test

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"
)

// The link's test-only faults against the checkers that exist to catch
// them: credit conservation (link.credits) for a flit lost with its credit,
// the conservation checker for a packet that vanishes.
var _ = Describe("Link mutations", func() {
	clk := clock.MHz(100)

	// stream sends n one-flit packets of 4 bytes (one cycle each at 4
	// B/cycle) from side A as fast as credits allow, with a conservation
	// checker from Send to the receiver's pop; the receiver pops one flit
	// per cycle. It returns the packets popped and the run's violations.
	stream := func(mut map[string]int, buf, n int) ([]uint64, []check.Violation) {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Mutations: mut})
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.BufferFlits, cfg.TraceFlits = 4, buf, false
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("L")
		Expect(err).NotTo(HaveOccurred())
		d := l.From(link.A)
		cons := check.NewConservation[uint64](e.Monitor, "Packets")
		var got []uint64
		sent := 0
		snd := vtest.NewAgent(e, "S", clk, func(now clock.Time, c clock.Cycle) bool {
			if sent < n && d.CanSend(now, 0) {
				cons.Sent(now, uint64(sent))
				d.Send(now, &link.Flit{Head: true, Tail: true, Data: []byte{1, 2, 3, 4}, Info: &link.PacketInfo{ID: uint64(sent)}})
				sent++
			}
			return sent < n
		})
		rcv := vtest.NewAgent(e, "R", clk, func(now clock.Time, c clock.Cycle) bool {
			if f, ok := d.Rx(0).Pop(now); ok {
				cons.Received(now, f.Packet())
				got = append(got, f.Packet())
			}
			return d.Rx(0).Len() > 0
		})
		d.Connect(snd, rcv)
		snd.Start()
		_, _ = e.Run()
		cons.Finish(e.Now())
		return got, e.Monitor.Violations()
	}

	It("link.leak: a flit lost with its credit breaks credit conservation at once", func() {
		got, v := stream(nil, 4, 8)
		Expect(v).To(BeEmpty())
		Expect(got).To(Equal([]uint64{0, 1, 2, 3, 4, 5, 6, 7}))

		// Every 3rd flit (packets 2 and 5) is lost and keeps its credit:
		// from the send of packet 2 on (cycle 2), the sender's credits, the
		// flits on the wire or buffered and the credits returning add up to
		// one less than the 4-flit buffer, and after packet 5 to two less.
		// (At cycle 2 the sender holds 2 credits, 4 less packets 0..2 plus
		// packet 0's, back from its pop at 1; packet 1 is buffered or, if
		// the receiver has popped it this cycle already, its credit is
		// returning.)
		got, v = stream(map[string]int{"link.leak": 3}, 4, 8)
		Expect(got).To(Equal([]uint64{0, 1, 3, 4, 6, 7}))
		Expect(v[0].Time).To(Equal(clk.TimeOf(2)))
		Expect(v[0].Path).To(Equal("L.AB"))
		Expect(v[0].Check).To(Equal("link.credits"))
		Expect(v[0].Msg).To(MatchRegexp(`^VC 0: credits 2 \+ on the wire or buffered [01] \+ returning [01] = 3, want 4$`))
		rules := map[string]int{}
		for _, x := range v {
			rules[x.Check]++
		}
		Expect(rules["link.credits"]).To(BeNumerically(">=", 2))
		Expect(v[len(v)-1]).To(Equal(check.Violation{Time: v[len(v)-1].Time, Path: "Packets", Check: "lost",
			Msg: "2 of 8 sent never arrived (first: [2 5])"}))
	})

	It("link.lose: a packet that vanishes uncounted is lost to the conservation checker, credits intact", func() {
		got, v := stream(map[string]int{"link.lose": 4}, 2, 10)
		// Packets 3 and 7 (the 4th and 8th) vanish; their credits come
		// back, so the link's own checker has nothing to say. When events
		// run out the conservation checker still holds them (the watchdog
		// reports it busy); Finish reports them lost.
		Expect(got).To(Equal([]uint64{0, 1, 2, 4, 5, 6, 8, 9}))
		Expect(cmp.Diff([]check.Violation{{Time: v[0].Time, Path: "Watchdog", Check: "deadlock",
			Msg: "1 busy unit(s) when events ran out"}, {Time: v[0].Time, Path: "Packets", Check: "lost",
			Msg: "2 of 10 sent never arrived (first: [3 7])"}}, v)).To(BeEmpty())
	})
})
