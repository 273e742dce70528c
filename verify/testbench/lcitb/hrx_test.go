package lcitb_test

import (
	"fmt"

	"github.com/google/go-cmp/cmp"

	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = rxFaultTable(fw.HostRetransmit, 200, map[int]int{2: 3500, 8: 500, 64: 25})

var _ = Describe("I-hrx's receive buffer pool", func() {
	It("drops what it has no buffer for and the sender's timeout resends it", func() {
		// 32 shared receive buffers, 7 senders with windows of 16 towards
		// a receiver whose host computes 500 µs between polls: its 64 host
		// slots fill, then its pool runs dry. I-hrx has no retransmission
		// request: the senders' timers recover. (I-nirx's spec pauses 2
		// ms; here a host that computes, with its slots full of packets
		// for the process, lets nothing move for longer than the
		// testbench's quiet allowance, 770 µs on the PPro, and the
		// deadlock watchdog fires.)
		c := lcitb.DefaultConfig()
		c.Nodes, c.Reliability = 8, fw.HostRetransmit
		c.Platform.RecvBufs = 32
		t := hot(30, 512)
		t.HotPause = 500 * clock.Microsecond
		r, err := lcitb.RunTraffic(env.New(env.Options{Seed: 11}), c, t)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Completed()).To(Equal(uint64(8 * 30)))
		Expect(r.Rx.NoBufDrops).To(BeNumerically(">", 0))
		Expect(r.Rx.Timeouts).To(BeNumerically(">", 0))
		Expect(r.Rx.Retransmitted).To(BeNumerically(">", 0))
		Expect(r.Rx.NacksSent).To(BeZero())
		AddReportEntry("counters", fmt.Sprintf("%+v", r.Rx))
	})
})

var _ = Describe("I-hrx's checkers against mutations", func() {
	x := rxRun{rel: fw.HostRetransmit, platform: lcilib.PPro(), nodes: 8, p: 1e-2, ops: 200, seed: 7}
	rules := func(mut map[string]int) (map[string][]string, error) {
		e := env.New(env.Options{Seed: x.seed, Mutations: mut})
		_, err := lcitb.RunTraffic(e, x.config(), rxTraffic(x.ops))
		out := map[string][]string{}
		for _, v := range e.Monitor.Violations() {
			out[v.Check] = append(out[v.Check], v.Msg)
		}
		return out, err
	}
	It("passes the clean run", func() {
		got, err := rules(nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(BeEmpty())
	})
	It("lci.hrxdup: a duplicate delivered again reaches an upcall twice (lci.dup)", func() {
		got, err := rules(map[string]int{"lci.hrxdup": 1})
		Expect(err).To(HaveOccurred())
		Expect(got["lci.dup"]).NotTo(BeEmpty())
		for _, m := range got["lci.dup"] {
			Expect(m).To(MatchRegexp(`^packet \d+ \(type [12]\) from node \d reached the upcall again \(\d+ was due\)$`))
		}
	})
	It("lci.hrxleak: a send buffer never freed leaves the library not quiescent (lci.quiescent)", func() {
		_, err := rules(map[string]int{"lci.hrxleak": 50})
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(MatchRegexp(`lci.quiescent: node \d's library is not quiescent at the end: .*\d+ of 16 send buffers free`))
	})
	It("gives the same trace for the same seed, faults and retransmissions included", func() {
		runOnce := func() []trace.Record {
			rec := trace.NewRecorder()
			y := rxRun{rel: fw.HostRetransmit, platform: lcilib.P3(), nodes: 4, p: 2e-2, ops: 40, seed: 9}
			_, err := lcitb.RunTraffic(env.New(env.Options{Seed: y.seed, Trace: rec}), y.config(), rxTraffic(y.ops))
			Expect(err).NotTo(HaveOccurred())
			return rec.Records()
		}
		a, b := runOnce(), runOnce()
		resends := 0
		for _, r := range a {
			if v, _ := r.Get("event"); r.Kind == "lci.hrx" && v == "resend" {
				resends++
			}
		}
		Expect(resends).To(BeNumerically(">", 0))
		Expect(cmp.Diff(a, b)).To(BeEmpty())
	})
})

// Table III's I-hrx rows (section 5.1.3), reported beside the paper's with
// the error, never fitted but for os on the PPro (lcilib.Costs.HrxSend),
// and the paper's findings about I-hrx that the model reproduces.
var _ = Describe("I-hrx's Table III rows", func() {
	paper := map[string][6]float64{ // os, or, L, g, e2e, F&A (µs)
		"PPro": {3.3, 5.9, 9.3, 10.2, 18.5, 32.5},
		"P3":   {0.9, 1.2, 7.8, 4.6, 9.9, 13.4},
	}
	for _, pl := range []lcilib.Platform{lcilib.PPro(), lcilib.P3()} {
		It("reports os, or, L, g, e2e and F&A on the "+pl.Name+" and raises the host overheads over I-sdma", func() {
			measure := func(rel fw.Reliability) lcitb.LogP {
				c := lcitb.DefaultConfig()
				c.Platform, c.Reliability = pl, rel
				r, err := lcitb.MeasureLogP(nil, c, lcitb.DefaultBench())
				Expect(err).NotTo(HaveOccurred())
				return r
			}
			sdma, hrx := measure(fw.NoRetransmit), measure(fw.HostRetransmit)
			us := func(t clock.Time) float64 { return float64(t) / float64(clock.Microsecond) }
			model := [6]float64{us(hrx.Os), us(hrx.Or), us(hrx.L), us(hrx.G), us(hrx.E2E), us(hrx.FA)}
			row := ""
			for i, name := range []string{"os", "or", "L", "g", "e2e", "F&A"} {
				p := paper[pl.Name][i]
				row += fmt.Sprintf("%s %.2f/%.1f (%+.1f%%) ", name, model[i], p, 100*(model[i]-p)/p)
			}
			AddReportEntry(pl.Name+" I-hrx model/paper", row)
			// «I-hrx runs a retransmission protocol on the host and
			// therefore has larger send and receive overheads than
			// I-sdma» (section 5.1.3).
			Expect(hrx.Os).To(BeNumerically(">", sdma.Os))
			Expect(hrx.Or).To(BeNumerically(">", sdma.Or))
			// F&A «I-hrx, which handles F&A requests on the host
			// processor, is the slowest» (above I-sdma's here).
			Expect(hrx.FA).To(BeNumerically(">", sdma.FA))
			if pl.Name == "PPro" {
				// The one fitted figure: os = 3.3 µs within 1%.
				Expect(us(hrx.Os)).To(BeNumerically("~", 3.3, 0.033))
				// «explaining the lower gap of I-hrx on the PPro
				// platform».
				Expect(hrx.G).To(BeNumerically("<", sdma.G))
			}
		})
	}
})

var _ = Describe("I-hrx's timer signal", func() {
	It("recovers the losses of a process that has stopped calling the library", func() {
		// No network interrupts: node 0 sends 200 packets and returns;
		// node 1 receives them all. What is lost after node 0's last
		// call (a packet, or the acknowledgment of the last ones) is
		// recovered by node 0's alarm alone: its signal runs the
		// library, which resends, and takes the acknowledgments.
		c := lcitb.DefaultConfig()
		c.Reliability = fw.HostRetransmit
		c.CorruptProb, c.DropProb = 2e-2, 2e-2
		e := env.New(env.Options{Seed: 5})
		cl, err := lcitb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		var sentAt clock.Time
		var before fw.RxStats
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range 200 {
				s.Send(1, []byte{byte(i), 1, 2, 3}, uint32(i))
			}
			sentAt, before = s.Now(), s.Host().HrxStats()
		})
		got := 0
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			for got < 200 {
				s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) {
					Expect(m.Tag).To(Equal(uint32(got)))
					Expect(m.Data).To(Equal([]byte{byte(got), 1, 2, 3}))
					got++
				})
			}
		})
		res, err := e.Run()
		cl.Close()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(200))
		h := cl.Nodes[0].Host
		ok, st := h.Quiescent()
		Expect(ok).To(BeTrue(), st)
		Expect(h.Alarms()).To(BeNumerically(">", 0))
		// Resent after the process's last call: by the signal alone.
		Expect(h.HrxStats().Retransmitted).To(BeNumerically(">", before.Retransmitted))
		Expect(cl.Nodes[0].CPU.Interrupts()).To(Equal(h.Alarms())) // every signal was the alarm's
		Expect(res.End).To(BeNumerically(">", sentAt))
		AddReportEntry("sender", fmt.Sprintf("%+v, %d alarms, last send at %v (%d resent by then), end at %v", h.HrxStats(), h.Alarms(), sentAt, before.Retransmitted, res.End))
	})
})

var _ = Describe("I-hrx's send call", func() {
	It("costs I-sdma's send, the counter check and the protocol, and the alarm's system call once", func() {
		// PPro, 16-byte sends 2000 cycles apart. I-sdma's call is 360
		// cycles (lcilib.Costs.Send: 337 + copy loop 14 + copy store 2 +
		// address and size field 1 + descriptor 6, of which 2 wait for
		// the field's beats). I-hrx's: the counter check first
		// (HrxTimer 40), then the same 337 + 14 + 2 + 1, the protocol
		// (HrxSend 260), and the descriptor's store in 4 cycles (the
		// field has left the write buffer during the 260): 658 cycles,
		// 3.29 µs at 200 MHz. The first call leaves a packet
		// unacknowledged with no alarm pending, so it arms one
		// (Alarm 1000): 1658 cycles, 8.29 µs; the next find it pending.
		c := lcitb.DefaultConfig()
		c.Reliability = fw.HostRetransmit
		e := env.New(env.Options{})
		cl, err := lcitb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		var took []clock.Time
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range 3 {
				t0 := s.Now()
				s.Send(1, make([]byte, 16), uint32(i))
				took = append(took, s.Now()-t0)
				s.Compute(2000)
			}
		})
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			for range 3 {
				s.Recv(nil)
			}
		})
		_, err = e.Run()
		cl.Close()
		Expect(err).NotTo(HaveOccurred())
		Expect(took).To(Equal([]clock.Time{1658 * 5 * clock.Nanosecond, 658 * 5 * clock.Nanosecond, 658 * 5 * clock.Nanosecond}))
	})
})
