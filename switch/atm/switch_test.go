package atm_test

import (
	"bytes"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rxCell is a cell an endpoint popped, with the cycle it popped it in.
type rxCell struct {
	Cycle clock.Cycle
	F     link.Flit
}

// txCell is a cell an endpoint sends at a cycle (or as soon after as its
// link is free).
type txCell struct {
	At clock.Cycle
	F  link.Flit
}

// endpoint is a scripted host interface: it sends its cells at their
// cycles and pops every cell that arrives.
type endpoint struct {
	idx    int
	agent  *vtest.Agent
	port   star.Port
	clk    clock.Clock
	script []txCell
	next   int
	got    []rxCell
	onSend func(now clock.Time, f link.Flit)
	onRecv func(now clock.Time, f link.Flit)
}

func newEndpoint(e *env.Env, idx int, clk clock.Clock, p star.Port) *endpoint {
	ep := &endpoint{idx: idx, port: p, clk: clk}
	ep.agent = vtest.NewAgent(e, fmt.Sprintf("Host%d", idx), ep.clk, ep.step)
	p.Connect(ep.agent)
	return ep
}

func (ep *endpoint) step(now clock.Time, c clock.Cycle) bool {
	if f, ok := ep.port.Recv.Rx(0).Pop(now); ok {
		ep.got = append(ep.got, rxCell{c, f})
		if ep.onRecv != nil {
			ep.onRecv(now, f)
		}
	}
	if ep.next >= len(ep.script) {
		return false
	}
	s := ep.script[ep.next]
	if c < s.At {
		ep.agent.WakeAt(ep.clk.TimeOf(s.At))
		return false
	}
	if !ep.port.Send.CanSend(now, 0) {
		return true // the serialiser is busy: poll
	}
	ep.port.Send.Send(now, &s.F)
	if ep.onSend != nil {
		ep.onSend(now, s.F)
	}
	ep.next++
	return ep.next < len(ep.script)
}

// send appends a cell to the endpoint's script. Its source is the
// endpoint; its destination is left to the switch's route (-1).
func (ep *endpoint) send(at clock.Cycle, id uint64, vci uint16, payload ...byte) {
	f, err := atm.NewCell(id, atm.Header{VPI: 1, VCI: vci}, payload)
	Expect(err).NotTo(HaveOccurred())
	f.Info.Src, f.Info.Dst = ep.idx, -1 // NewCell's fresh PacketInfo
	ep.script = append(ep.script, txCell{at, f})
}

func (ep *endpoint) start() {
	if len(ep.script) > 0 {
		ep.agent.Start()
	}
}

// cycles returns the cycles at which the endpoint received its cells.
func (ep *endpoint) cycles() []clock.Cycle {
	var out []clock.Cycle
	for _, r := range ep.got {
		out = append(out, r.Cycle)
	}
	return out
}

// ids returns the ids of the cells the endpoint received.
func (ep *endpoint) ids() []uint64 {
	var out []uint64
	for _, r := range ep.got {
		out = append(out, r.F.Packet())
	}
	return out
}

// testLink is the 140 Mb/s ATM link with a wire delay, so that the hand
// computations below show where the delay goes.
func testLink(delay int) link.Config {
	c := atm.LinkConfig()
	c.DelayCycles = delay
	return c
}

// buildStar builds a star and one endpoint per port.
func buildStar(e *env.Env, sw atm.Builder, lc link.Config) (*atm.Star, []*endpoint) {
	st, err := atm.MakeStarBuilder().WithEnv(e).WithSwitch(sw).WithLink(lc).Build("Net")
	Expect(err).NotTo(HaveOccurred())
	var eps []*endpoint
	for i, p := range st.Ports {
		eps = append(eps, newEndpoint(e, i, lc.Clock, p))
	}
	return st, eps
}

func startAll(eps []*endpoint) {
	for _, ep := range eps {
		ep.start()
	}
}

// kinds returns "<kind>@<cycle>" of the records of one kind prefix.
func kinds(recs []trace.Record, prefix string) []string {
	var out []string
	for _, r := range recs {
		if len(r.Kind) >= len(prefix) && r.Kind[:len(prefix)] == prefix {
			out = append(out, fmt.Sprintf("%s %s@%d", r.Path, r.Kind, r.Cycle))
		}
	}
	return out
}

var _ = Describe("ATM switch", func() {
	clk := atm.LinkClock()

	It("carries one cell through with every time worked out by hand", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, eps := buildStar(e, atm.ASX100().WithLatency(10).WithQueueDepth(4), testLink(2))
		Expect(st.Switch.AddRoute(0, 100, 2, 200)).To(Succeed())
		eps[0].send(0, 1, 100, 0xca, 0xfe)
		startAll(eps)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Host0 sends at c0: 53 serialisation cycles end at c52, the wire
		// delay of 2 lands the cell in the switch's input buffer at c54
		// (link.packet), visible at c55, when the switch takes it. Latency
		// 10: it enters output queue 2 at c65 (atm.cell), is visible to the
		// output at c66 and starts on Link2 then; it lands in Host2's buffer
		// at c66+52+2 = c120 and Host2 pops it at c121.
		Expect(eps[2].cycles()).To(Equal([]clock.Cycle{121}))
		Expect(kinds(e.Trace.Records(), "")).To(Equal([]string{
			"Net.Link0.AB link.packet@54",
			"Net.Switch atm.cell@65",
			"Net.Link2.BA link.packet@120",
		}))
		r := e.Trace.Records()[1]
		Expect(r.Format()).To(HaveSuffix("Net.Switch atm.cell in=0 invci=100 out=2 outvci=200 cell=1"))
		s := st.Switch.Stats(0)
		Expect(s.CellsIn).To(Equal(uint64(1)))
		Expect(st.Switch.Stats(2).CellsOut).To(Equal(uint64(1)))
	})

	It("adds about 7 µs to a cell's trip with the ASX-100 preset (AT-P9)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, eps := buildStar(e, atm.ASX100(), atm.LinkConfig())
		Expect(st.Switch.AddRoute(0, 100, 1, 100)).To(Succeed())
		eps[0].send(0, 1, 100)
		startAll(eps)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Taken at c53 (no wire delay), queued at c53+69 = c122, sent at
		// c123, popped at c123+53 = c176. A direct cable delivers at c53:
		// the switch adds 123 cycles = 7.03 µs.
		Expect(eps[1].cycles()).To(Equal([]clock.Cycle{176}))
		added := clk.TimeOf(176) - clk.TimeOf(53)
		Expect(added).To(BeNumerically("~", 7*clock.Microsecond, 50*clock.Nanosecond))
	})

	It("translates the VCI and passes everything else through", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, eps := buildStar(e, atm.ASX100().WithLatency(3), testLink(0))
		Expect(st.Switch.AddRoute(1, 0x1234, 3, 0x0042)).To(Succeed())
		payload := bytes.Repeat([]byte{0x5a}, 48)
		f, err := atm.NewCell(9, atm.Header{GFC: 3, VPI: 77, VCI: 0x1234, PT: 2, CLP: true}, payload)
		Expect(err).NotTo(HaveOccurred())
		meta := &struct{ op string }{"remote-write"}
		f.Info.Src, f.Info.Dst, f.Info.Meta = 1, 3, meta
		f.Carries |= link.HasMeta
		eps[1].script = []txCell{{0, f}}
		startAll(eps)
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(eps[3].got).To(HaveLen(1))
		g := eps[3].got[0].F
		h, err := atm.CellHeader(g)
		Expect(err).NotTo(HaveOccurred())
		Expect(h).To(Equal(atm.Header{GFC: 3, VPI: 77, VCI: 0x0042, PT: 2, CLP: true}))
		Expect(g.Data).To(Equal(payload))
		Expect(g.Packet()).To(Equal(uint64(9)))
		Expect(g.Src()).To(Equal(1))
		Expect(g.Dst()).To(Equal(3))
		Expect(g.Meta()).To(BeIdenticalTo(meta))
		// The sender's header bytes are untouched.
		sent, _ := atm.CellHeader(f)
		Expect(sent.VCI).To(Equal(uint16(0x1234)))
		out, vci, ok := st.Switch.Route(1, 0x1234)
		Expect([]any{out, vci, ok}).To(Equal([]any{3, uint16(0x42), true}))
	})

	It("queues cells from two inputs for one output in arrival order at line rate", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, eps := buildStar(e, atm.ASX100().WithLatency(10).WithQueueDepth(4), testLink(2))
		Expect(st.Switch.AddRoute(0, 100, 2, 200)).To(Succeed())
		Expect(st.Switch.AddRoute(1, 100, 2, 201)).To(Succeed())
		eps[0].send(0, 10, 100)
		eps[1].send(0, 11, 100)
		startAll(eps)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Both cells are taken at c55 and reach queue 2 at c65, port 0's
		// first. Cell 10 starts at c66 and is popped at c121; cell 11 waits
		// for the line: it starts when cell 10's 53 cycles are over, at
		// c119, and is popped at c119+55 = c174.
		Expect(eps[2].ids()).To(Equal([]uint64{10, 11}))
		Expect(eps[2].cycles()).To(Equal([]clock.Cycle{121, 174}))
		h, _ := atm.CellHeader(eps[2].got[1].F)
		Expect(h.VCI).To(Equal(uint16(201)))
	})

	It("keeps line rate through the latency line", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, eps := buildStar(e, atm.ASX100().WithLatency(100).WithQueueDepth(2), testLink(2))
		Expect(st.Switch.AddRoute(0, 100, 1, 100)).To(Succeed())
		var want []clock.Cycle
		for k := range 20 {
			eps[0].send(clock.Cycle(53*k), uint64(k), 100)
			// Taken at 53k+55, queued at 53k+155, sent at 53k+156,
			// popped at 53k+211.
			want = append(want, clock.Cycle(53*k+211))
		}
		startAll(eps)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// A latency of ~2 cells' time with a 2-cell queue loses nothing:
		// the cells in the latency line are independent.
		Expect(eps[1].cycles()).To(Equal(want))
		Expect(st.Switch.Stats(1).Dropped).To(BeZero())
	})

	// overflow runs the directed overflow test: three inputs send 4 cells
	// each, back to back and one cycle apart, to output 3 whose queue holds
	// 2 cells.
	overflow := func(e *env.Env) (*atm.Star, []*endpoint, *check.Conservation[uint64]) {
		st, eps := buildStar(e, atm.ASX100().WithLatency(10).WithQueueDepth(2), testLink(2))
		cons := check.NewConservation[uint64](e.Monitor, "Cells")
		for i := range 3 {
			Expect(st.Switch.AddRoute(i, uint16(100+i), 3, uint16(300+i))).To(Succeed())
			for k := range 4 {
				// Cell ids: 10*input + k (A = input 0, B = 1, C = 2).
				eps[i].send(clock.Cycle(53*k+i), uint64(10*i+k), uint16(100+i), byte(10*i+k))
			}
			eps[i].onSend = func(now clock.Time, f link.Flit) { cons.Sent(now, f.Packet()) }
		}
		eps[3].onRecv = func(now clock.Time, f link.Flit) { cons.Received(now, f.Packet()) }
		st.Switch.OnDrop(func(now clock.Time, port int, f link.Flit, why atm.DropReason) {
			Expect(why).To(Equal(atm.QueueFull))
			Expect(port).To(Equal(3))
			cons.Dropped(now, f.Packet())
		})
		startAll(eps)
		return st, eps, cons
	}

	It("drops and counts cells at a full output queue and loses nothing else", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, eps, cons := overflow(e)
		res, err := e.Run()
		cons.Finish(res.End)
		Expect(err).NotTo(HaveOccurred())
		Expect(e.Monitor.Err()).NotTo(HaveOccurred())
		// Input i's cell k reaches queue 3 at 53k+i+65 (sent at 53k+i,
		// taken 55 cycles later, latency 10). Queue of 2:
		//   c65 A0 in; c66 A0 starts (line busy to c119), B0 in (1 free);
		//   c67 C0 in: full. c118 A1 dropped; c119 B0 starts, and B1 is
		//   dropped: the slot B0 freed is usable from c120 (registered full
		//   flag); c120 C1 in. The pattern repeats every 53 cycles: A and B
		//   lose cells 1..3, C loses none.
		Expect(eps[3].ids()).To(Equal([]uint64{0, 10, 20, 21, 22, 23}))
		Expect(eps[3].cycles()).To(Equal([]clock.Cycle{121, 174, 227, 280, 333, 386}))
		sent, recv, dropped := cons.Counts()
		Expect([]int{sent, recv, dropped}).To(Equal([]int{12, 6, 6}))
		s := st.Switch.Stats(3)
		Expect(s.Dropped).To(Equal(uint64(6)))
		Expect(s.CellsOut).To(Equal(uint64(6)))
		Expect(st.Switch.Queue(3).Stats().Drops).To(Equal(uint64(6)))
		for i := range 3 {
			Expect(st.Switch.Stats(i).CellsIn).To(Equal(uint64(4)))
			Expect(st.Switch.Stats(i).Dropped).To(BeZero())
		}
		var drops []string
		for _, r := range e.Trace.Records() {
			if r.Kind == "atm.drop" {
				cell, _ := r.Get("cell")
				reason, _ := r.Get("reason")
				port, _ := r.Get("port")
				drops = append(drops, fmt.Sprintf("%s@%d:%s/%s", cell, r.Cycle, port, reason))
			}
		}
		Expect(drops).To(Equal([]string{"1@118:3/queue", "11@119:3/queue", "2@171:3/queue",
			"12@172:3/queue", "3@224:3/queue", "13@225:3/queue"}))
	})

	It("shows queue occupancy, drops and the latency line in the waveform", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		overflow(e)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		f, err := vcd.ParseFile(vtest.WriteWaves(e, GinkgoT().TempDir()+"/atm.vcd"))
		Expect(err).NotTo(HaveOccurred())
		numbers := func(name string) []uint64 {
			ch, err := f.Changes(name)
			Expect(err).NotTo(HaveOccurred())
			var out []uint64
			for _, c := range ch {
				v, ok := c.Value.Uint()
				Expect(ok).To(BeTrue())
				out = append(out, v)
			}
			return out
		}
		Expect(numbers("net.switch.out3.occupancy")).To(ContainElement(uint64(2)))
		Expect(numbers("net.switch.out3.drops")).To(HaveLen(7)) // 0 and one change per drop
		Expect(numbers("net.switch.out3.drops")[6]).To(Equal(uint64(6)))
		Expect(numbers("net.switch.in_flight")).To(ContainElement(uint64(1)))
	})

	It("matches the golden trace of the overflow test", Label("golden"), func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		overflow(e)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(vtest.Golden("testdata/overflow.trace", e.Trace.Records(), overflowComments...)).To(Succeed())
	})

	It("drops and counts cells without a route or with a bad header", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, eps := buildStar(e, atm.ASX100().WithLatency(3), testLink(0))
		Expect(st.Switch.AddRoute(0, 100, 1, 100)).To(Succeed())
		var why []atm.DropReason
		st.Switch.OnDrop(func(_ clock.Time, port int, _ link.Flit, r atm.DropReason) {
			Expect(port).To(Equal(0))
			why = append(why, r)
		})
		eps[0].send(0, 1, 101)
		bad, _ := atm.NewCell(2, atm.Header{VCI: 100}, nil)
		bad.SetRoute(append([]byte(nil), bad.Route()...))
		bad.Route()[4] ^= 0xff
		eps[0].script = append(eps[0].script, txCell{53, bad})
		eps[0].send(106, 3, 100)
		startAll(eps)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(why).To(Equal([]atm.DropReason{atm.NoRoute, atm.BadHeader}))
		Expect(eps[1].ids()).To(Equal([]uint64{3}))
		s := st.Switch.Stats(0)
		Expect([]uint64{s.CellsIn, s.NoRoute, s.BadHeader}).To(Equal([]uint64{3, 1, 1}))
		Expect(kinds(e.Trace.Records(), "atm.drop")).To(Equal([]string{"Net.Switch atm.drop@53", "Net.Switch atm.drop@106"}))
	})

	It("delivers the cells of every VC in order", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, eps := buildStar(e, atm.ASX100().WithLatency(7).WithQueueDepth(64), testLink(1))
		order := check.NewOrdering[uint64](e.Monitor, "VCs")
		seq := map[uint64][2]uint64{} // cell id -> (flow, seq)
		n := 0
		for i := range 4 {
			for v := range 3 {
				vci := uint16(32 + v)
				// Every input spreads its VCs over the outputs; VC 0 of
				// inputs 1..3 all go to output 0.
				out := (i + v) % 4
				if v == 0 {
					out = 0
				}
				Expect(st.Switch.AddRoute(i, vci, out, uint16(1000+10*i+v))).To(Succeed())
			}
			for k := range 30 {
				v := (k * (i + 1)) % 3
				id := uint64(1000*i + k)
				seq[id] = [2]uint64{uint64(10*i + v), uint64(k)}
				eps[i].send(clock.Cycle(k*60+i*7), id, uint16(32+v))
				n++
			}
		}
		got := 0
		for _, ep := range eps {
			ep.onRecv = func(now clock.Time, f link.Flit) {
				s := seq[f.Packet()]
				order.Observe(now, s[0], s[1])
				got++
			}
		}
		startAll(eps)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(n))
	})

	It("loses nothing it does not count, and keeps every VC in order, under random load", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: false})
		r := runRandom(e, 1000, 8)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.sent).To(Equal(4000))
		Expect(r.recv + r.queueDrops + r.noRoute).To(Equal(r.sent))
		// Port 0 is overloaded, and 2% of the cells use a VCI without a
		// route.
		Expect(r.queueDrops).To(BeNumerically(">", 0))
		Expect(r.noRoute).To(BeNumerically(">", 0))
		Expect(r.recv).To(BeNumerically(">", 2000)) // most cells arrive
		var dropped, noRoute uint64
		for p := range 4 {
			dropped += r.st.Switch.Stats(p).Dropped
			noRoute += r.st.Switch.Stats(p).NoRoute
		}
		Expect(int(dropped)).To(Equal(r.queueDrops))
		Expect(int(noRoute)).To(Equal(r.noRoute))
	})

	It("gives the same trace whatever else ticks in the same picoseconds", func() {
		base := runWith("")
		Expect(len(base)).To(BeNumerically(">", 500))
		for _, f := range []string{"17.5MHz", "35MHz", "100/3MHz", "7MHz", "1GHz"} {
			Expect(trace.Diff(base, runWith(f))).To(BeNil(), "with an idle %s component", f)
		}
	})

	DescribeTable("rejects impossible parameters",
		func(mod func(atm.Builder) atm.Builder, msg string) {
			b := mod(atm.ASX100().WithEnv(env.New(env.Options{})))
			_, err := b.Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("no env", func(b atm.Builder) atm.Builder { return b.WithEnv(nil) }, "no env"),
		Entry("no clock", func(b atm.Builder) atm.Builder { return b.WithClock(clock.Clock{}) }, "no clock"),
		Entry("no ports", func(b atm.Builder) atm.Builder { return b.WithPorts(0) }, "ports 0"),
		Entry("negative latency", func(b atm.Builder) atm.Builder { return b.WithLatency(-1) }, "latency -1"),
		Entry("empty queue", func(b atm.Builder) atm.Builder { return b.WithQueueDepth(0) }, "queue depth 0"),
	)

	It("rejects bad routes and attachments, naming the parameter", func() {
		e := env.New(env.Options{})
		st, err := atm.MakeStarBuilder().WithEnv(e).Build("Net")
		Expect(err).NotTo(HaveOccurred())
		sw := st.Switch
		Expect(sw.AddRoute(4, 1, 0, 1)).To(MatchError(ContainSubstring("input port 4")))
		Expect(sw.AddRoute(0, 1, -1, 1)).To(MatchError(ContainSubstring("output port -1")))
		Expect(sw.AddRoute(0, 1, 1, 1)).To(Succeed())
		Expect(sw.AddRoute(0, 1, 2, 1)).To(MatchError(ContainSubstring("already routed")))
		Expect(sw.Attach(0, st.Ports[0].Send, st.Ports[0].Recv)).To(MatchError(ContainSubstring("already attached")))
		Expect(sw.Attach(9, st.Ports[0].Send, st.Ports[0].Recv)).To(MatchError(ContainSubstring("port 9")))
		_, err = atm.MakeStarBuilder().Build("Net")
		Expect(err).To(MatchError(ContainSubstring("no env")))
		bad := atm.LinkConfig()
		bad.BytesPerCycle = 0
		_, err = atm.MakeStarBuilder().WithEnv(e).WithLink(bad).Build("Net2")
		Expect(err).To(MatchError(ContainSubstring("bytes per cycle")))
	})
})

// overflowComments explain why the golden overflow trace is right; `make
// golden` keeps the comments of an existing file.
var overflowComments = []string{
	"switch/atm directed overflow test: 4-port switch (latency 10 cycles, output queues of 2 cells),",
	"140 Mb/s links (17.5 MHz, 1 byte/cycle, wire delay 2 cycles); cycles are of that clock.",
	"Inputs 0, 1, 2 (cells A=0..3, B=10..13, C=20..23) send 4 cells each to output 3, cell k at 53k+i.",
	"Rules the records follow (package doc of switch/atm, rtl/link):",
	"- link.packet on Net.Link<i>.AB is written when the cell lands in the switch's input buffer: the last of",
	"  its 53 serialisation cycles plus the wire delay of 2, 54 cycles after it was sent (53k+i+54); the switch",
	"  takes it at the next edge",
	"- atm.cell: the cell enters output queue 3 (VCI 100+i translated to 300+i) 10 cycles after it was taken;",
	"  atm.drop reason=queue: the queue was full as of the previous edge (a slot freed by the output at",
	"  the same edge is usable only from the next), so A1..A3 (queue full) and B1..B3 (the slot B0 freed",
	"  that edge) are lost, C loses none",
	"- the output sends its head cell whenever Link3 is free, one cell per 53 cycles from c66;",
	"  link.packet on Net.Link3.BA: the cell lands in Host3's buffer 54 cycles after it was sent",
	"- received + dropped = sent: 6 + 6 = 12",
}

// idler ticks every cycle until a time and does nothing else.
type idler struct {
	*clock.Ticking
	until clock.Time
}

func (d *idler) Tick(now clock.Time) bool { return now < d.until }

// runWith runs a random workload with an idle component on the given clock
// ("" for none) and returns the trace.
func runWith(freq string) []trace.Record {
	rec := trace.NewRecorder()
	e := env.New(env.Options{Trace: rec, Seed: 7})
	if freq != "" {
		c, err := clock.ParseFreq(freq)
		Expect(err).NotTo(HaveOccurred())
		d := &idler{until: 300 * clock.Microsecond}
		d.Ticking = clock.NewTicking("Idler", e.Engine, c, d)
		d.Start()
	}
	r := runRandom(e, 60, 2)
	Expect(r.err).NotTo(HaveOccurred())
	Expect(r.queueDrops).To(BeNumerically(">", 0))
	return rec.Records()
}

// randomResult is what runRandom saw.
type randomResult struct {
	st                     *atm.Star
	sent, recv, queueDrops int
	noRoute                int
	err                    error
}

// runRandom sends perPort cells from every port of a 4-port switch with
// output queues of depth cells, at random times on random VCs (a quarter of
// them on VC 0, which every input routes to port 0: more than port 0's line
// rate, so it loses cells whatever the seed), and checks
// every arrival against a reference that knows each cell's output port,
// VCI, payload and place in its VC.
func runRandom(e *env.Env, perPort, depth int) randomResult {
	rng := e.Rand("Workload")
	st, eps := buildStar(e, atm.ASX100().WithLatency(20).WithQueueDepth(depth), testLink(1))
	type expect struct {
		out     int
		vci     uint16
		flow    int
		seq     uint64
		payload []byte
	}
	ref := map[uint64]expect{}
	cons := check.NewConservation[uint64](e.Monitor, "Cells")
	order := check.NewOrdering[int](e.Monitor, "VCs")
	res := randomResult{st: st}
	const vcs = 8
	routes := map[[2]int][2]int{}
	for i := range 4 {
		for v := range vcs {
			out := rng.IntN(4)
			if v == 0 {
				out = 0 // a hot spot: VC 0 of every input goes to port 0
			}
			Expect(st.Switch.AddRoute(i, uint16(32+v), out, uint16(1000+16*i+v))).To(Succeed())
			routes[[2]int{i, v}] = [2]int{out, 1000 + 16*i + v}
		}
		next := map[int]uint64{}
		at := clock.Cycle(rng.IntN(53))
		for k := range perPort {
			v := rng.IntN(vcs)
			if rng.IntN(4) == 0 {
				v = 0
			}
			vci := uint16(32 + v)
			if rng.IntN(50) == 0 {
				vci = 99 // no route
			}
			payload := make([]byte, atm.PayloadBytes)
			for j := range payload {
				payload[j] = byte(rng.IntN(256))
			}
			id := uint64(i)<<32 | uint64(k)
			if vci != 99 {
				r := routes[[2]int{i, v}]
				ref[id] = expect{out: r[0], vci: uint16(r[1]), flow: i*vcs + v, seq: next[v], payload: payload}
				next[v]++
			}
			f, err := atm.NewCell(id, atm.Header{VPI: 2, VCI: vci}, payload)
			Expect(err).NotTo(HaveOccurred())
			f.Info.Src = i
			eps[i].script = append(eps[i].script, txCell{at, f})
			at += clock.Cycle(53 + rng.IntN(40))
		}
		eps[i].onSend = func(now clock.Time, f link.Flit) {
			res.sent++
			cons.Sent(now, f.Packet())
		}
		eps[i].onRecv = func(now clock.Time, f link.Flit) {
			res.recv++
			cons.Received(now, f.Packet())
			x, ok := ref[f.Packet()]
			h, err := atm.CellHeader(f)
			switch {
			case !ok:
				e.Report(now, "Reference", "atm.ref", "cell %d should not have arrived", f.Packet())
			case err != nil:
				e.Report(now, "Reference", "atm.ref", "cell %d: %v", f.Packet(), err)
			case x.out != i || h.VCI != x.vci || h.VPI != 2 || !bytes.Equal(f.Data, x.payload):
				e.Report(now, "Reference", "atm.ref", "cell %d arrived at port %d with %v, want port %d vci %d",
					f.Packet(), i, h, x.out, x.vci)
			default:
				order.Observe(now, x.flow, x.seq)
			}
		}
	}
	st.Switch.OnDrop(func(now clock.Time, _ int, f link.Flit, why atm.DropReason) {
		cons.Dropped(now, f.Packet())
		if why == atm.NoRoute {
			res.noRoute++
		} else {
			res.queueDrops++
		}
	})
	startAll(eps)
	out, err := e.Run()
	cons.Finish(out.End)
	if err == nil {
		err = e.Monitor.Err()
	}
	res.err = err
	return res
}
