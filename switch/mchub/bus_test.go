package mchub_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// busMC1 is the MC1 hub (a bus).
func busMC1() mchub.Builder { return mchub.MC1() }

var _ = Describe("Memory Channel hub as a bus", func() {
	clk := mchub.LinkClock()

	It("orders two writers' writes once for everyone, a flit taking size/4 bus cycles", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, as := buildStar(e, busMC1().WithPorts(5), mchub.LinkConfig())
		as[0].write(0, 5, 0, fill(1, 64))   // A1: 40 B head + 32 B body
		as[0].write(0, 5, 64, fill(2, 32))  // A2: 40 B
		as[1].write(2, 5, 0, fill(3, 32))   // B1: 40 B
		as[1].write(2, 5, 128, fill(4, 32)) // B2: 40 B
		startAll(as)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Arrivals as in the page-map test: A1's head is in the hub's input
		// buffer from c11 and its body from c19, A2 from c29; B1 from c13,
		// B2 from c23. The bus is 4 bytes wide (MC1): a 40-byte flit holds
		// it 10 cycles, a 32-byte one 8.
		//   c11 pick A1 (order 1), granted; c12 take its head (bus c12..c21);
		//   c22 take its body (bus c22..c29): mc.order 1 at c22, and in the
		//   same cycle pick B1 (order 2, round-robin after input 0).
		//   c30 take B1 (c30..c39): mc.order 2; pick after input 1: input 0
		//   has A2 (since c29), so A2 is order 3.
		//   c40 take A2 (c40..c49): mc.order 3; pick B2 (order 4).
		//   c50 take B2: mc.order 4.
		Expect(records(e.Trace.Records(), "mc.order", "order", "src", "seq", "dests")).To(Equal([]string{
			"mc.order@22 order=1 src=0 seq=1 dests=1,2,3,4",
			"mc.order@30 order=2 src=1 seq=1 dests=0,2,3,4",
			"mc.order@40 order=3 src=0 seq=2 dests=1,2,3,4",
			"mc.order@50 order=4 src=1 seq=2 dests=0,2,3,4",
		}))
		// A flit lands in the output queues 8 cycles (MC1's delay) after
		// the last of its bus cycles: A1 head c21+8 = c29, body c29+8 =
		// c37, B1 c39+8 = c47, A2 c57, B2 c67. An output sends the head
		// flit in the cycle after it lands when its link is free: A1's head
		// at c30 (10 cycles), its body at c40 (mc.deliver), B1 c48, A2 c58,
		// B2 c68. A tail started at t on a link of s cycles is popped by
		// the adapter at t+s+1: A1 40+8+1 = c49, B1 48+10+1 = c59, A2 c69,
		// B2 c79.
		for _, r := range []int{2, 3, 4} {
			Expect(as[r].orders()).To(Equal([]uint64{1, 2, 3, 4}))
			Expect(as[r].cycles()).To(Equal([]clock.Cycle{49, 59, 69, 79}))
		}
		// The writers get each other's writes (the bus carries every write
		// to every port) but not their own (no loop-back).
		Expect(as[0].orders()).To(Equal([]uint64{2, 4}))
		Expect(as[0].cycles()).To(Equal([]clock.Cycle{59, 79}))
		Expect(as[1].orders()).To(Equal([]uint64{1, 3}))
		Expect(as[1].cycles()).To(Equal([]clock.Cycle{49, 69}))
		Expect(as[2].got[0].Data).To(Equal(fill(1, 64)))
		Expect(as[0].got[1].Data).To(Equal(fill(4, 32)))
		// Bus cycles: A1 10+8, A2, B1, B2 10 each = 48.
		Expect(st.Hub.BusyCycles()).To(Equal(uint64(48)))
	})

	DescribeTable("delivers a write back to its sender only when its header asks for loop-back (MC-P8)",
		func(loop bool, want []int, dests string) {
			e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
			_, as := buildStar(e, busMC1().WithPorts(3), mchub.LinkConfig())
			as[0].writeLoop(0, 7, 100, fill(5, 8), loop)
			startAll(as)
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			var got []int
			for i, a := range as {
				if len(a.got) > 0 {
					Expect(a.got[0].Data).To(Equal(fill(5, 8)))
					Expect(a.got[0].W.Loopback).To(Equal(loop))
					// One 16-byte flit (8 bytes + header): sent at c0 for 4
					// cycles, in the hub's buffer at c5, picked then, taken
					// at c6 (bus c6..c9), lands c9+8 = c17, sent c18 for 4
					// cycles, popped at 18+4+1 = c23.
					Expect(a.cycles()).To(Equal([]clock.Cycle{23}))
					got = append(got, i)
				}
			}
			Expect(got).To(Equal(want))
			Expect(records(e.Trace.Records(), "mc.order", "dests")).To(Equal([]string{"mc.order@6 dests=" + dests}))
		},
		Entry("off", false, []int{1, 2}, "1,2"),
		Entry("on", true, []int{0, 1, 2}, "0,1,2"),
	)

	It("carries one packet at a time: four streaming writers share one link's bandwidth", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, as := buildStar(e, busMC1().WithPorts(4), mchub.LinkConfig())
		for i, a := range as {
			for k := range 10 {
				a.write(0, uint64(i), 64*k, fill(10*i+k, 64))
			}
		}
		startAll(as)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Every 64-byte write is a 40-byte head and a 32-byte body: 18 link
		// cycles on its uplink, 18 bus cycles on the hub. All four heads
		// are in the hub at c11; the bus takes input 0's head at c12 and
		// from then on always finds the next round-robin input's head
		// waiting (each input has 3 bus slots of 18 cycles to send its next
		// write in 18), so the 40 writes hold the bus for 40 x 18 = 720
		// cycles without a gap: c12..c731. The last body is taken at
		// c731-7 = c724.
		Expect(st.Hub.BusyCycles()).To(Equal(uint64(720)))
		ords := records(e.Trace.Records(), "mc.order", "order", "src")
		Expect(ords).To(HaveLen(40))
		Expect(ords[39]).To(Equal("mc.order@724 order=40 src=3"))
		for k, o := range ords {
			// c12 + 18(k+1) - 8 = the cycle the k-th tail is taken;
			// round-robin over the four inputs.
			Expect(o).To(Equal(fmt.Sprintf("mc.order@%d order=%d src=%d", 22+18*k, k+1, k%4)))
		}
		// The hub moved 40 x 64 B of data in 720 cycles: 3.56 B/cycle, 118.5
		// MB/s at 33.33 MHz, in all; each adapter receives the 30 writes of
		// the 3 others.
		for _, a := range as {
			Expect(a.got).To(HaveLen(30))
		}
	})

	It("keeps a packet corrupted on its uplink bad at every receiver", func() {
		// The hub is cut-through and copies the tail as it is; the next
		// link's transmitter computes a CRC over the corrupted data, so the
		// downlinks find it good, and only the Bad mark carried by the tail
		// tells the receivers (rtl/link).
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, Seed: 3})
		h, err := busMC1().WithPorts(3).WithEnv(e).Build("MC.Hub")
		Expect(err).NotTo(HaveOccurred())
		var as []*adapter
		for i := range 3 {
			lc := mchub.LinkConfig()
			if i == 0 {
				lc.CorruptProb = 1 // every packet on adapter 0's link
			}
			l, err := link.MakeBuilder().WithEnv(e).WithConfig(lc).Build(fmt.Sprintf("MC.Link%d", i))
			Expect(err).NotTo(HaveOccurred())
			Expect(h.Attach(i, l.From(link.A), l.From(link.B))).To(Succeed())
			a := &adapter{idx: i, clk: clk, format: h.Format(), popEvery: 1,
				port: star.Port{Send: l.From(link.A), Recv: l.From(link.B)}}
			a.agent = vtest.NewAgent(e, fmt.Sprintf("Adapter%d", i), clk, a.step)
			a.port.Send.Connect(a.agent, h)
			a.port.Recv.Connect(h, a.agent)
			as = append(as, a)
		}
		as[0].write(0, 1, 0, fill(1, 64)) // corrupted on the way to the hub
		as[1].write(0, 1, 64, fill(2, 64))
		startAll(as)
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(as[1].got).To(HaveLen(1))
		Expect(as[2].got).To(HaveLen(2))
		for _, d := range append(as[1].got, as[2].got...) {
			Expect(d.Bad).To(Equal(d.W.Src == 0), "%v", d.W)
		}
		Expect(as[0].got).To(HaveLen(1))
		Expect(as[0].got[0].Bad).To(BeTrue(), "adapter 1's write crosses adapter 0's corrupting downlink")
		Expect(h.Stats(0).InPackets).To(Equal(uint64(1)))
	})

	It("is stalled as a whole by a slow receiver but loses nothing", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, as := buildStar(e, busMC1().WithPorts(4).WithQueueDepth(4), mchub.LinkConfig())
		cons := check.NewConservation[check.Key](e.Monitor, "Writes")
		for w := range 2 {
			for k := range 20 {
				as[w].write(0, 3, 32*k, fill(100*w+k, 32))
			}
			as[w].onSend = func(now clock.Time, x *mchub.Write) {
				for r := range 4 {
					if r != x.Src {
						cons.Sent(now, check.Key{Flow: fmt.Sprintf("%d>%d", x.Src, r), Seq: x.Seq})
					}
				}
			}
		}
		for r := range 4 {
			as[r].onRecv = func(now clock.Time, d delivered) {
				cons.Received(now, check.Key{Flow: fmt.Sprintf("%d>%d", d.W.Src, r), Seq: d.W.Seq})
			}
		}
		as[2].popEvery = 60 // adapter 2 takes one flit every 60 cycles
		startAll(as)
		res, err := e.Run()
		cons.Finish(res.End)
		Expect(err).NotTo(HaveOccurred())
		Expect(e.Monitor.Err()).NotTo(HaveOccurred())
		Expect(as[2].orders()).To(Equal(as[3].orders()))
		Expect(as[3].orders()).To(HaveLen(40))
		// Every write goes to the slow adapter too, so the bus can run
		// ahead of it only by its queue (4 flits) and link buffer (4) and
		// the flit on the wire: the fast adapter 3 cannot have the 40th
		// write before about (40-9)*60 cycles, nor the writers each
		// other's last.
		Expect(int(as[2].cycles()[39])).To(BeNumerically(">=", 39*60))
		Expect(int(as[3].cycles()[39])).To(BeNumerically(">=", 31*60))
		Expect(int(as[0].cycles()[19])).To(BeNumerically(">=", 31*60))
		Expect(st.Hub.Stats(0).WaitCycles + st.Hub.Stats(1).WaitCycles).To(BeNumerically(">", 1000))
	})

	It("forwards thousands of random writes with random loop-back as the reference says", func() {
		var r randomResult
		_, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(e *env.Env) []arrivalAt {
			r = runRandom(e, 500)
			return r.arrivals
		})
		Expect(diff).To(BeEmpty(), "deliveries traced (-) and untraced (+)")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.sent).To(Equal(3000))
		Expect(r.delivered).To(Equal(r.expected))
		// 3000 writes to 5 others each, plus about a third looped back.
		Expect(r.delivered).To(BeNumerically(">", 5*3000))
	})
})
