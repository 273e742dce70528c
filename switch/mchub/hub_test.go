package mchub_test

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// delivered is a write an adapter received, with the cycle its tail flit
// was popped in.
type delivered struct {
	Cycle clock.Cycle
	W     *mchub.Write
	Data  []byte
	// Bad is the tail's link CRC verdict.
	Bad bool
}

// txWrite is a write an adapter sends from a cycle on, its flits back to
// back as its link takes them.
type txWrite struct {
	At    clock.Cycle
	Flits []link.Flit
}

// adapter is a scripted Memory Channel adapter: it sends its writes and
// pops the flits that arrive, one every popEvery cycles.
type adapter struct {
	idx      int
	agent    *vtest.Agent
	port     star.Port
	clk      clock.Clock
	format   mchub.Format
	script   []txWrite
	next     int // write
	flit     int // flit of that write
	popEvery clock.Cycle
	nextPop  clock.Cycle
	cur      *mchub.Write
	buf      []byte
	got      []delivered
	pkt      uint64
	seq      uint64
	onSend   func(now clock.Time, w *mchub.Write)
	onRecv   func(now clock.Time, d delivered)
}

func newAdapter(e *env.Env, idx int, clk clock.Clock, f mchub.Format, p star.Port) *adapter {
	a := &adapter{idx: idx, port: p, clk: clk, format: f, popEvery: 1}
	a.agent = vtest.NewAgent(e, fmt.Sprintf("Adapter%d", idx), clk, a.step)
	p.Connect(a.agent)
	return a
}

func (a *adapter) step(now clock.Time, c clock.Cycle) bool {
	rx := a.port.Recv.Rx(0)
	if c >= a.nextPop {
		if f, ok := rx.Pop(now); ok {
			a.nextPop = c + a.popEvery
			if f.Head {
				a.cur, _ = f.Meta.(*mchub.Write)
				a.buf = nil
			}
			a.buf = append(a.buf, f.Data...)
			if f.Tail {
				d := delivered{c, a.cur, a.buf, f.Bad}
				a.got = append(a.got, d)
				if a.onRecv != nil {
					a.onRecv(now, d)
				}
			}
		}
	}
	if rx.Len() > 0 && a.nextPop > c {
		// Flits wait but may not be popped yet: come back when they may.
		a.agent.WakeAt(a.clk.TimeOf(a.nextPop))
	}
	if a.next >= len(a.script) {
		return false
	}
	s := a.script[a.next]
	if c < s.At {
		a.agent.WakeAt(a.clk.TimeOf(s.At))
		return false
	}
	if !a.port.Send.CanSend(now, 0) {
		// A busy serialiser is polled; a missing credit wakes us.
		return !a.port.Send.Idle(now)
	}
	f := s.Flits[a.flit]
	a.port.Send.Send(now, f)
	if f.Head && a.onSend != nil {
		a.onSend(now, f.Meta.(*mchub.Write))
	}
	a.flit++
	if a.flit == len(s.Flits) {
		a.next, a.flit = a.next+1, 0
	}
	return a.next < len(a.script)
}

// write appends a write of data to page at offset, sent from cycle at on.
func (a *adapter) write(at clock.Cycle, page uint64, offset int, data []byte) *mchub.Write {
	return a.writeLoop(at, page, offset, data, false)
}

// writeLoop is write with the header's loop-back bit.
func (a *adapter) writeLoop(at clock.Cycle, page uint64, offset int, data []byte, loop bool) *mchub.Write {
	a.seq++
	w := &mchub.Write{Src: a.idx, Addr: page*mchub.PageSize + uint64(offset), Len: len(data), Seq: a.seq, Loopback: loop}
	a.pkt++
	fl, err := a.format.Packet(w, data, uint64(a.idx)<<32|a.pkt)
	Expect(err).NotTo(HaveOccurred())
	a.script = append(a.script, txWrite{at, fl})
	return w
}

func (a *adapter) start() {
	if len(a.script) > 0 {
		a.agent.Start()
	}
}

// cycles returns the cycles at which the adapter received whole writes.
func (a *adapter) cycles() []clock.Cycle {
	var out []clock.Cycle
	for _, d := range a.got {
		out = append(out, d.Cycle)
	}
	return out
}

// orders returns the global order numbers of the writes the adapter
// received.
func (a *adapter) orders() []uint64 {
	var out []uint64
	for _, d := range a.got {
		out = append(out, d.W.Order)
	}
	return out
}

// buildStar builds a star and one adapter per port.
func buildStar(e *env.Env, hb mchub.Builder, lc link.Config) (*mchub.Star, []*adapter) {
	st, err := mchub.MakeStarBuilder().WithEnv(e).WithHub(hb).WithLink(lc).Build("MC")
	Expect(err).NotTo(HaveOccurred())
	var as []*adapter
	for i, p := range st.Ports {
		as = append(as, newAdapter(e, i, lc.Clock, hb.Format(), p))
	}
	return st, as
}

func startAll(as []*adapter) {
	for _, a := range as {
		a.start()
	}
}

// fill returns n bytes derived from a tag.
func fill(tag, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(tag*37 + i)
	}
	return b
}

// records returns "<kind>@<cycle> key=value..." for the records of one kind
// with the chosen fields.
func records(recs []trace.Record, kind string, keys ...string) []string {
	var out []string
	for _, r := range recs {
		if r.Kind != kind {
			continue
		}
		s := fmt.Sprintf("%s@%d", r.Kind, r.Cycle)
		for _, k := range keys {
			v, _ := r.Get(k)
			s += " " + k + "=" + v
		}
		out = append(out, s)
	}
	return out
}

// mapMC1 is the MC1 hub in page-map mode.
func mapMC1() mchub.Builder { return mchub.MC1().WithBroadcast(false) }

var _ = Describe("Memory Channel hub", func() {
	clk := mchub.LinkClock()

	// twoWriters is the directed test: adapters 0 and 1 write
	// interleaved to page 5. In page-map mode (bus false) adapters 2, 3
	// and 4 map it; in bus mode every write goes to every adapter but its
	// writer.
	twoWriters := func(e *env.Env, bus bool) (*mchub.Star, []*adapter) {
		st, as := buildStar(e, mchub.MC1().WithPorts(5).WithBroadcast(bus), mchub.LinkConfig())
		for _, r := range []int{2, 3, 4} {
			if !bus {
				Expect(st.Hub.Map(5, r)).To(Succeed())
			}
		}
		as[0].write(0, 5, 0, fill(1, 64))   // A1: 2 flits
		as[0].write(0, 5, 64, fill(2, 32))  // A2: right after A1
		as[1].write(2, 5, 0, fill(3, 32))   // B1
		as[1].write(2, 5, 128, fill(4, 32)) // B2: right after B1
		startAll(as)
		return st, as
	}

	It("orders two writers' interleaved writes the same way at every receiver (page-map mode)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, as := twoWriters(e, false)
		order := check.NewOrdering[int](e.Monitor, "Receivers")
		for _, r := range []int{2, 3, 4} {
			as[r].onRecv = func(now clock.Time, d delivered) { order.Observe(now, r, d.W.Order) }
		}
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Worked by hand (MC1: 4 bytes/cycle, wire delay 1, 32-byte flits
		// with an 8-byte header on the head, hub delay 8). Adapter 0 sends
		// A1's head (40 B, 10 cycles) at c0, its body (32 B, 8 cycles) at
		// c10, A2 (40 B) at c18: in the hub's input buffer from c11, c19,
		// c29. Adapter 1 sends B1 at c2 and B2 at c12: there from c13 and
		// c23.
		//   c11 the hub picks A1 (order 1) and grants it; c12 takes its
		//   head; c19 its body (mc.order 1), and picks B1 (order 2); c20
		//   takes B1 (mc.order 2). c23 picks B2 (order 3), c24 takes it.
		//   c29 picks A2 (order 4), c30 takes it.
		Expect(records(e.Trace.Records(), "mc.order", "order", "src", "seq", "offset", "len")).To(Equal([]string{
			"mc.order@19 order=1 src=0 seq=1 offset=0 len=64",
			"mc.order@20 order=2 src=1 seq=1 offset=0 len=32",
			"mc.order@24 order=3 src=1 seq=2 offset=128 len=32",
			"mc.order@30 order=4 src=0 seq=2 offset=64 len=32",
		}))
		// Each flit enters the three output queues 8 cycles after it was
		// taken: A1 head c20, body c27, B1 c28, B2 c32, A2 c38. An output
		// sends A1's head at c21 (10 cycles), its body at c31 (8 cycles),
		// then B1 at c39, B2 at c49, A2 at c59 (mc.deliver at each tail);
		// each tail is in the adapter's buffer s+1 cycles after it started
		// and popped at the next edge: c40, c50, c60, c70.
		for _, r := range []int{2, 3, 4} {
			Expect(as[r].orders()).To(Equal([]uint64{1, 2, 3, 4}))
			Expect(as[r].cycles()).To(Equal([]clock.Cycle{40, 50, 60, 70}))
			Expect(as[r].got[0].Data).To(Equal(fill(1, 64)))
			Expect(as[r].got[3].Data).To(Equal(fill(2, 32)))
		}
		Expect(records(e.Trace.Records(), "mc.deliver", "port", "order")).To(Equal([]string{
			"mc.deliver@31 port=2 order=1", "mc.deliver@31 port=3 order=1", "mc.deliver@31 port=4 order=1",
			"mc.deliver@39 port=2 order=2", "mc.deliver@39 port=3 order=2", "mc.deliver@39 port=4 order=2",
			"mc.deliver@49 port=2 order=3", "mc.deliver@49 port=3 order=3", "mc.deliver@49 port=4 order=3",
			"mc.deliver@59 port=2 order=4", "mc.deliver@59 port=3 order=4", "mc.deliver@59 port=4 order=4",
		}))
		// Every receiver's sequence of (source, seq) is the hub's order.
		var hubOrder []string
		for _, r := range e.Trace.Records() {
			if r.Kind == "mc.order" {
				src, _ := r.Get("src")
				seq, _ := r.Get("seq")
				hubOrder = append(hubOrder, src+"/"+seq)
			}
		}
		for _, r := range []int{2, 3, 4} {
			var seen []string
			for _, d := range as[r].got {
				seen = append(seen, fmt.Sprintf("%d/%d", d.W.Src, d.W.Seq))
			}
			Expect(seen).To(Equal(hubOrder))
		}
		// Nothing goes back to the writers (no loop-back, no mapping).
		Expect(as[0].got).To(BeEmpty())
		Expect(as[1].got).To(BeEmpty())
		Expect(st.Hub.Stats(0).InPackets).To(Equal(uint64(2)))
		Expect(st.Hub.Stats(0).InFlits).To(Equal(uint64(3)))
		Expect(st.Hub.Stats(3).OutPackets).To(Equal(uint64(4)))
		Expect(st.Hub.Stats(3).OutFlits).To(Equal(uint64(5)))
	})

	It("matches the golden trace of the two-writer test", Label("golden"), func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		twoWriters(e, true)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(vtest.Golden("testdata/two_writers.trace", e.Trace.Records(), twoWritersComments...)).To(Succeed())
	})

	DescribeTable("delivers a write back to its sender only with loop-back on (MC-P8, page-map mode)",
		func(loop bool, want []int, dests string) {
			e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
			st, as := buildStar(e, mapMC1().WithPorts(3), mchub.LinkConfig())
			Expect(st.Hub.Map(7, 0)).To(Succeed())
			Expect(st.Hub.Map(7, 1)).To(Succeed())
			st.Hub.SetLoopback(7, loop)
			as[0].write(0, 7, 100, fill(5, 8))
			startAll(as)
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			var got []int
			for i, a := range as {
				if len(a.got) > 0 {
					Expect(a.got[0].Data).To(Equal(fill(5, 8)))
					got = append(got, i)
				}
			}
			Expect(got).To(Equal(want))
			// One 16-byte flit (8 bytes + header, 4 cycles) sent at c0 is in
			// the hub's buffer at c5: picked then, taken (mc.order) at c6.
			Expect(records(e.Trace.Records(), "mc.order", "dests")).To(Equal([]string{"mc.order@6 dests=" + dests}))
		},
		Entry("off", false, []int{1}, "1"),
		Entry("on", true, []int{0, 1}, "0,1"),
	)

	It("consumes and counts writes to pages nobody maps (page-map mode)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, as := buildStar(e, mapMC1().WithPorts(3), mchub.LinkConfig())
		Expect(st.Hub.Map(1, 0)).To(Succeed()) // only the writer maps page 1
		Expect(st.Hub.Map(2, 2)).To(Succeed())
		as[0].write(0, 9, 0, fill(1, 40)) // unmapped
		as[0].write(0, 1, 0, fill(2, 8))  // ordered, but no receiver
		as[0].write(0, 2, 0, fill(3, 8))  // to adapter 2
		startAll(as)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// The 40-byte write is a 40-byte head (10 cycles, c0) and an 8-byte
		// body (2 cycles, c10): there from c11 and c13; picked at c11, its
		// tail taken at c13. The 8-byte writes (16-byte flits, 4 cycles)
		// start at c12 and c16: there from c17 and c21, taken at c18, c22.
		Expect(records(e.Trace.Records(), "mc.unmapped", "src", "page", "len")).To(Equal([]string{"mc.unmapped@13 src=0 page=9 len=40"}))
		// The unmapped write gets no place in the global order.
		Expect(records(e.Trace.Records(), "mc.order", "order", "page", "dests")).To(Equal([]string{
			"mc.order@18 order=1 page=1 dests=-", "mc.order@22 order=2 page=2 dests=2"}))
		Expect(st.Hub.Stats(0).Unmapped).To(Equal(uint64(1)))
		Expect(st.Hub.Stats(0).InPackets).To(Equal(uint64(3)))
		Expect(as[0].got).To(BeEmpty())
		Expect(as[1].got).To(BeEmpty())
		Expect(as[2].orders()).To(Equal([]uint64{2}))
	})

	It("is held up by a slow receiver but loses nothing (page-map mode)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, as := buildStar(e, mapMC1().WithPorts(4).WithQueueDepth(4), mchub.LinkConfig())
		Expect(st.Hub.Map(3, 2)).To(Succeed())
		Expect(st.Hub.Map(3, 3)).To(Succeed())
		cons := check.NewConservation[check.Key](e.Monitor, "Writes")
		for w := range 2 {
			for k := range 20 {
				as[w].write(0, 3, 32*k, fill(100*w+k, 32))
			}
			as[w].onSend = func(now clock.Time, x *mchub.Write) {
				for _, r := range []int{2, 3} {
					cons.Sent(now, check.Key{Flow: fmt.Sprintf("%d>%d", x.Src, r), Seq: x.Seq})
				}
			}
		}
		for _, r := range []int{2, 3} {
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
		// The slow adapter takes 40 flits 60 cycles apart. The hub can run
		// ahead of it by its queue (4) and the link's buffer (4) and the
		// flit on the wire, so the fast adapter cannot have the 40th write
		// before about (40-9)*60 cycles.
		Expect(int(as[2].cycles()[39])).To(BeNumerically(">=", 39*60))
		Expect(int(as[3].cycles()[39])).To(BeNumerically(">=", 31*60))
		// The writers were held back by credits and the hub waited for
		// room.
		Expect(st.Ports[0].Send.Stats().CreditStalls).To(BeNumerically(">", 0))
		Expect(st.Hub.Stats(0).WaitCycles + st.Hub.Stats(1).WaitCycles).To(BeNumerically(">", 1000))
		Expect(st.Hub.Queue(2).Stats().MaxOccupancy).To(Equal(4))
	})

	It("shows its state, the input served and the queue occupancies in the waveform", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		twoWriters(e, true)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		f, err := vcd.ParseFile(vtest.WriteWaves(e, GinkgoT().TempDir()+"/mc.vcd"))
		Expect(err).NotTo(HaveOccurred())
		at := func(name string, cycle int64) vcd.Value {
			v, err := f.ValueAt(name, cycle*30000)
			Expect(err).NotTo(HaveOccurred())
			return v
		}
		// Bus mode (bus_test.go's two-writer spec): the hub serves A1 from
		// input 0 from its pick at c11 until its tail is taken at c22,
		// where it picks B1 from input 1, then A2 (c30) and B2 (c40),
		// whose tail it takes at c50: busy throughout, idle after.
		Expect(at("mc.hub.state", 10).Str).To(Equal("IDLE"))
		Expect(at("mc.hub.state", 12).Str).To(Equal("COPY"))
		Expect(at("mc.hub.state", 49).Str).To(Equal("COPY"))
		Expect(at("mc.hub.state", 50).Str).To(Equal("IDLE"))
		serving := func(c int64) uint64 {
			v, _ := at("mc.hub.serving", c).Uint()
			return v
		}
		Expect([]uint64{serving(21), serving(22), serving(30), serving(40)}).To(Equal([]uint64{0, 1, 0, 1}))
		// Queue 3: each flit lands 8 cycles after its last bus cycle and
		// leaves the next cycle, its link being free by then: A1's head
		// c29..c30, its body c37 until the head's 10 cycles are over at
		// c40, B1 c47..c48.
		occ := func(c int64) uint64 {
			v, _ := at("mc.hub.out3.occupancy", c).Uint()
			return v
		}
		Expect([]uint64{occ(28), occ(29), occ(30), occ(37), occ(39), occ(40), occ(47), occ(48)}).To(
			Equal([]uint64{0, 1, 0, 1, 1, 0, 1, 0}))
	})

	It("reports a write that crosses a page end and consumes it", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		st, as := buildStar(e, mchub.MC1().WithPorts(2), mchub.LinkConfig())
		Expect(st.Hub.Map(0, 1)).To(Succeed())
		w := &mchub.Write{Src: 0, Addr: mchub.PageSize - 8, Len: 16}
		f := link.Flit{Packet: 1, Head: true, Tail: true, Data: make([]byte, 16), Meta: w}
		as[0].script = []txWrite{{0, []link.Flit{f}}}
		startAll(as)
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("crosses the page end")))
		Expect(as[1].got).To(BeEmpty())
	})

	It("forwards thousands of random writes from every port as the reference says", func() {
		// Traced (the links' slow path) and untraced (their fast path):
		// every write reaches every receiver at the same time.
		var r randomResult
		_, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(e *env.Env) []arrivalAt {
			r = runRandom(e, 500)
			return r.arrivals
		})
		Expect(diff).To(BeEmpty(), "deliveries traced (-) and untraced (+)")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.sent).To(Equal(3000))
		Expect(r.delivered).To(Equal(r.expected))
		Expect(r.unmapped).To(BeNumerically(">", 0))
		Expect(r.delivered).To(BeNumerically(">", 3000))
	})

	It("gives the same trace whatever else ticks in the same picoseconds", func() {
		base := runWith("")
		Expect(len(base)).To(BeNumerically(">", 500))
		for _, f := range []string{"100/3MHz", "200/3MHz", "25MHz", "40MHz", "1GHz"} {
			Expect(trace.Diff(base, runWith(f))).To(BeNil(), "with an idle %s component", f)
		}
	})

	DescribeTable("rejects impossible parameters",
		func(mod func(mchub.Builder) mchub.Builder, msg string) {
			b := mod(mchub.MC1().WithEnv(env.New(env.Options{})))
			_, err := b.Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("no env", func(b mchub.Builder) mchub.Builder { return b.WithEnv(nil) }, "no env"),
		Entry("no clock", func(b mchub.Builder) mchub.Builder { return b.WithClock(clock.Clock{}) }, "no clock"),
		Entry("no ports", func(b mchub.Builder) mchub.Builder { return b.WithPorts(0) }, "ports 0"),
		Entry("empty queue", func(b mchub.Builder) mchub.Builder { return b.WithQueueDepth(0) }, "queue depth 0"),
		Entry("negative delay", func(b mchub.Builder) mchub.Builder { return b.WithDelay(-2) }, "delay -2"),
		Entry("no flit", func(b mchub.Builder) mchub.Builder { return b.WithFormat(mchub.Format{}) }, "flit size 0"),
		Entry("negative header", func(b mchub.Builder) mchub.Builder {
			return b.WithFormat(mchub.Format{FlitBytes: 32, HeaderBytes: -1})
		}, "header size -1"),
	)

	It("rejects bad mappings and attachments, naming the parameter", func() {
		e := env.New(env.Options{})
		st, err := mchub.MakeStarBuilder().WithEnv(e).Build("MC")
		Expect(err).NotTo(HaveOccurred())
		h := st.Hub
		Expect(h.Ports()).To(Equal(8))
		Expect(h.Map(1, 8)).To(MatchError(ContainSubstring("port 8")))
		Expect(h.Map(1, 3)).To(Succeed())
		Expect(h.Map(1, 3)).To(MatchError(ContainSubstring("already maps")))
		Expect(h.Attach(0, st.Ports[0].Send, st.Ports[0].Recv)).To(MatchError(ContainSubstring("already attached")))
		Expect(h.Attach(-1, nil, nil)).To(MatchError(ContainSubstring("port -1")))
		_, err = mchub.MakeStarBuilder().Build("MC2")
		Expect(err).To(MatchError(ContainSubstring("no env")))
	})
})

var _ = Describe("Memory Channel write packets", func() {
	f := mchub.Format{FlitBytes: 32, HeaderBytes: 8}

	It("splits a write into flits with the header on the head", func() {
		w := &mchub.Write{Src: 3, Addr: 2*mchub.PageSize + 100, Len: 70, Seq: 9}
		Expect(w.Page()).To(Equal(uint64(2)))
		Expect(w.Offset()).To(Equal(100))
		fl, err := f.Packet(w, fill(1, 70), 42)
		Expect(err).NotTo(HaveOccurred())
		Expect(fl).To(HaveLen(3))
		var sizes []int
		var data []byte
		for i, x := range fl {
			sizes = append(sizes, x.WireBytes())
			data = append(data, x.Data...)
			Expect(x.Head).To(Equal(i == 0))
			Expect(x.Tail).To(Equal(i == 2))
			Expect(x.Packet).To(Equal(uint64(42)))
			Expect(x.Src).To(Equal(3))
		}
		Expect(sizes).To(Equal([]int{40, 32, 6}))
		Expect(data).To(Equal(fill(1, 70)))
		Expect(fl[0].Meta).To(BeIdenticalTo(w))
		Expect(fl[1].Meta).To(BeNil())
	})

	DescribeTable("rejects bad writes",
		func(w *mchub.Write, n int, msg string) {
			_, err := f.Packet(w, make([]byte, n), 1)
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("empty", &mchub.Write{Len: 0}, 0, "length 0"),
		Entry("crossing a page", &mchub.Write{Addr: mchub.PageSize - 4, Len: 8}, 8, "crosses the page end"),
		Entry("data length", &mchub.Write{Len: 8}, 7, "7 bytes of data"),
		Entry("no write", (*mchub.Write)(nil), 0, "no write"),
	)
})

// twoWritersComments explain why the golden two-writer trace is right;
// `make golden` keeps the comments of an existing file.
var twoWritersComments = []string{
	"switch/mchub directed test: MC hub ordering with two writers. MC1 hub (bus mode, 4-byte bus) with 5",
	"ports (delay 8 cycles), MC1 links (33.33 MHz, 4 bytes/cycle, wire delay 1, credits); 32-byte flits,",
	"8-byte header on the head. Adapters 0 and 1 write to page 5 without loop-back: 0 sends A1 (64 B) and",
	"A2 (32 B) from c0, 1 sends B1 and B2 (32 B each) from c2, each write's flits back to back.",
	"Rules the records follow (package doc of switch/mchub, rtl/link):",
	"- link.packet on MC.Link<i>.AB is written when a packet's tail lands in the hub's input buffer: a flit",
	"  of s cycles (10 for a 40-byte head, 8 for a 32-byte body) started at t lands at t+s (last serialisation",
	"  cycle t+s-1, wire delay 1); the hub sees it from t+s+1: B1 c12 (seen c13), A1 c18 (body; head seen",
	"  c11), B2 c22, A2 c28 (seen c29)",
	"- the hub picks the next input round-robin when the previous tail has been taken and the head is",
	"  there, in the same cycle; the pick fixes the order; a flit of s bytes holds the bus ceil(s/4)",
	"  cycles and the next flit is taken when the bus is free; mc.order is written when the tail is taken:",
	"  A1 head c12 (bus c12..c21), body c22 (c22..c29): order 1 at c22; B1 at c30 (order 2); input 0 is next",
	"  in round-robin and has A2: order 3 at c40; B2 order 4 at c50",
	"- every write goes to every port but its writer: dests=1,2,3,4 for adapter 0's, 0,2,3,4 for adapter 1's",
	"- each flit enters the output queues 8 cycles after its last bus cycle (A1 head c29, body c37, B1 c47,",
	"  A2 c57, B2 c67) and leaves the next cycle, the link being free; mc.deliver is written when the tail",
	"  starts: A1 c40, B1 c48, A2 c58, B2 c68, on every port that gets it",
	"- link.packet on MC.Link<r>.BA when the tail lands, s cycles later: A1 c48, B1 c58, A2 c68, B2 c78; the",
	"  same order and the same hashes at every receiver",
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
	e := env.New(env.Options{Trace: rec, Seed: 11})
	if freq != "" {
		c, err := clock.ParseFreq(freq)
		Expect(err).NotTo(HaveOccurred())
		d := &idler{until: 150 * clock.Microsecond}
		d.Ticking = clock.NewTicking("Idler", e.Engine, c, d)
		d.Start()
	}
	r := runRandomMode(e, 40, true)
	Expect(r.err).NotTo(HaveOccurred())
	return rec.Records()
}

// randomResult is what runRandom saw.
type randomResult struct {
	sent, expected, delivered, unmapped int
	err                                 error
	// arrivals are the deliveries in the order they happened.
	arrivals []arrivalAt
}

// arrivalAt is a write a receiver got, and when.
type arrivalAt struct {
	Receiver, Src int
	Seq           uint64
	At            clock.Time
}

// runRandom sends perPort writes from every port of a 6-port hub, to random
// pages with random receive mappings and loop-back, with some adapters
// taking their flits slowly, and checks every delivery against a reference
// that knows each write's receivers: each receiver gets exactly its writes,
// with their data, in the hub's global order.
func runRandom(e *env.Env, perPort int) randomResult { return runRandomMode(e, perPort, false) }

// runRandomMode is runRandom on a hub in page-map mode (bus false) or bus
// mode (bus true: every write goes to every other port, and to its sender
// when its header asks for loop-back, drawn per write).
func runRandomMode(e *env.Env, perPort int, bus bool) randomResult {
	const ports, pages = 6, 8
	rng := e.Rand("Workload")
	st, as := buildStar(e, mchub.MC1().WithPorts(ports).WithQueueDepth(12).WithBroadcast(bus), mchub.LinkConfig())
	// The reference's own mapping table.
	var maps [pages][]int
	var loop [pages]bool
	if !bus {
		for pg := range pages - 1 { // the last page stays unmapped
			for p := range ports {
				if rng.IntN(2) == 0 {
					Expect(st.Hub.Map(uint64(pg), p)).To(Succeed())
					maps[pg] = append(maps[pg], p)
				}
			}
			loop[pg] = rng.IntN(3) == 0
			st.Hub.SetLoopback(uint64(pg), loop[pg])
		}
	}
	receivers := func(w *mchub.Write) []int {
		var out []int
		if bus {
			for p := range ports {
				if p != w.Src || w.Loopback {
					out = append(out, p)
				}
			}
			return out
		}
		pg := w.Page()
		for _, p := range maps[pg] {
			if p != w.Src || loop[pg] {
				out = append(out, p)
			}
		}
		return out
	}
	res := randomResult{}
	type key struct {
		src int
		seq uint64
	}
	payload := map[key][]byte{}
	cons := check.NewConservation[check.Key](e.Monitor, "Writes")
	order := check.NewOrdering[int](e.Monitor, "Receivers")
	var hubOrder []key // writes in the hub's order
	var hubDests [][]int
	st.Hub.OnOrder(func(now clock.Time, w *mchub.Write, dests []int) {
		k := key{w.Src, w.Seq}
		if want := receivers(w); !slices.Equal(dests, want) {
			e.Report(now, "Reference", "mc.ref", "%v: hub destinations %v, want %v", w, dests, want)
		}
		if uint64(len(hubOrder)+1) != w.Order {
			e.Report(now, "Reference", "mc.ref", "%v: order %d after %d ordered writes", w, w.Order, len(hubOrder))
		}
		hubOrder = append(hubOrder, k)
		hubDests = append(hubDests, slices.Clone(dests))
	})
	seen := make([][]key, ports)
	for i, a := range as {
		a.popEvery = clock.Cycle([]int{1, 1, 4, 1, 25, 1}[i])
		at := clock.Cycle(rng.IntN(20))
		for range perPort {
			pg := uint64(rng.IntN(pages))
			n := 1 + rng.IntN(128)
			off := rng.IntN(mchub.PageSize - n + 1)
			data := make([]byte, n)
			for j := range data {
				data[j] = byte(rng.IntN(256))
			}
			w := a.writeLoop(at, pg, off, data, bus && rng.IntN(3) == 0)
			payload[key{i, w.Seq}] = data
			at += clock.Cycle(rng.IntN(60))
		}
		a.onSend = func(now clock.Time, w *mchub.Write) {
			res.sent++
			rs := receivers(w)
			if !bus && len(maps[w.Page()]) == 0 {
				res.unmapped++
			}
			for _, r := range rs {
				res.expected++
				cons.Sent(now, check.Key{Flow: fmt.Sprintf("%d>%d", w.Src, r), Seq: w.Seq})
			}
		}
		a.onRecv = func(now clock.Time, d delivered) {
			res.delivered++
			res.arrivals = append(res.arrivals, arrivalAt{i, d.W.Src, d.W.Seq, now})
			k := key{d.W.Src, d.W.Seq}
			cons.Received(now, check.Key{Flow: fmt.Sprintf("%d>%d", d.W.Src, i), Seq: d.W.Seq})
			order.Observe(now, i, d.W.Order)
			if !bytes.Equal(d.Data, payload[k]) {
				e.Report(now, "Reference", "mc.ref", "adapter %d: %v arrived with the wrong data", i, d.W)
			}
			seen[i] = append(seen[i], k)
		}
	}
	startAll(as)
	out, err := e.Run()
	cons.Finish(out.End)
	// Each receiver saw exactly the hub's order restricted to its writes.
	for r := range ports {
		var want []key
		for j, k := range hubOrder {
			if slices.Contains(hubDests[j], r) {
				want = append(want, k)
			}
		}
		if !slices.Equal(seen[r], want) {
			e.Report(out.End, "Reference", "mc.ref", "adapter %d saw %d writes, not the hub's order of its %d", r, len(seen[r]), len(want))
		}
	}
	if err == nil {
		err = e.Monitor.Err()
	}
	res.err = err
	return res
}
