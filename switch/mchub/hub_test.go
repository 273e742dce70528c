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
				a.cur, _ = f.Meta().(*mchub.Write)
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
	a.port.Send.Send(now, &f)
	if f.Head && a.onSend != nil {
		a.onSend(now, f.Meta().(*mchub.Write))
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

var _ = Describe("Memory Channel hub", func() {
	clk := mchub.LinkClock()

	// twoWriters is the directed test: adapters 0 and 1 write
	// interleaved to page 5; every write goes to every adapter but its
	// writer (bus_test.go works its cycles out).
	twoWriters := func(e *env.Env) (*mchub.Star, []*adapter) {
		st, as := buildStar(e, mchub.MC1().WithPorts(5), mchub.LinkConfig())
		as[0].write(0, 5, 0, fill(1, 64))   // A1: 2 flits
		as[0].write(0, 5, 64, fill(2, 32))  // A2: right after A1
		as[1].write(2, 5, 0, fill(3, 32))   // B1
		as[1].write(2, 5, 128, fill(4, 32)) // B2: right after B1
		startAll(as)
		return st, as
	}

	It("matches the golden trace of the two-writer test", Label("golden"), func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		twoWriters(e)
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(vtest.Golden("testdata/two_writers.trace", e.Trace.Records(), twoWritersComments...)).To(Succeed())
	})

	It("shows its state, the input served and the queue occupancies in the waveform", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		twoWriters(e)
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
		_, as := buildStar(e, mchub.MC1().WithPorts(2), mchub.LinkConfig())
		w := &mchub.Write{Src: 0, Addr: mchub.PageSize - 8, Len: 16}
		f := link.Flit{Head: true, Tail: true, Data: make([]byte, 16), Info: &link.PacketInfo{ID: 1, Meta: w}, Carries: link.HasMeta}
		as[0].script = []txWrite{{0, []link.Flit{f}}}
		startAll(as)
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("crosses the page end")))
		Expect(as[1].got).To(BeEmpty())
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
		Entry("no bus", func(b mchub.Builder) mchub.Builder { return b.WithBusBytesPerCycle(0) }, "bus width 0"),
		Entry("no flit", func(b mchub.Builder) mchub.Builder { return b.WithFormat(mchub.Format{}) }, "flit size 0"),
		Entry("negative header", func(b mchub.Builder) mchub.Builder {
			return b.WithFormat(mchub.Format{FlitBytes: 32, HeaderBytes: -1})
		}, "header size -1"),
	)

	It("rejects bad attachments, naming the parameter", func() {
		e := env.New(env.Options{})
		st, err := mchub.MakeStarBuilder().WithEnv(e).Build("MC")
		Expect(err).NotTo(HaveOccurred())
		h := st.Hub
		Expect(h.Ports()).To(Equal(8))
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
			Expect(x.Packet()).To(Equal(uint64(42)))
			Expect(x.Src()).To(Equal(3))
		}
		Expect(sizes).To(Equal([]int{40, 32, 6}))
		Expect(data).To(Equal(fill(1, 70)))
		Expect(fl[0].Meta()).To(BeIdenticalTo(w))
		Expect(fl[1].Meta()).To(BeNil())
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
	r := runRandom(e, 40)
	Expect(r.err).NotTo(HaveOccurred())
	return rec.Records()
}

// randomResult is what runRandom saw.
type randomResult struct {
	sent, expected, delivered int
	err                       error
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
// pages and offsets, a third of them with loop-back, with some adapters
// taking their flits slowly, and checks every delivery against a reference
// that knows each write's receivers (every port but the writer, the writer
// too with loop-back): each receiver gets exactly its writes, with their
// data, in the hub's global order.
func runRandom(e *env.Env, perPort int) randomResult {
	const ports, pages = 6, 8
	rng := e.Rand("Workload")
	st, as := buildStar(e, mchub.MC1().WithPorts(ports).WithQueueDepth(12), mchub.LinkConfig())
	receivers := func(w *mchub.Write) []int {
		var out []int
		for p := range ports {
			if p != w.Src || w.Loopback {
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
			w := a.writeLoop(at, pg, off, data, rng.IntN(3) == 0)
			payload[key{i, w.Seq}] = data
			at += clock.Cycle(rng.IntN(60))
		}
		a.onSend = func(now clock.Time, w *mchub.Write) {
			res.sent++
			for _, r := range receivers(w) {
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
