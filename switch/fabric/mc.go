package fabric

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/scoreboard"
	"github.com/nisim/nisim/verify/trace"
)

// MCPageMap is one page's receive mappings: the ports that map the page for
// receiving, and whether writes go back to a writer that maps it
// (loop-back, MC-P8).
type MCPageMap struct {
	Page      uint64
	Receivers []int
	Loopback  bool
}

// Destinations returns the ports a write from src to the page must reach,
// ascending: the receivers, without src unless loop-back is on.
func (m MCPageMap) Destinations(src int) []int {
	var out []int
	for _, r := range m.Receivers {
		if r != src || m.Loopback {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// MCBroadcastPages maps pages 0..pages-1 at every one of ports ports: a write
// reaches every other adapter (and its writer too with loop-back).
func MCBroadcastPages(pages, ports int, loopback bool) []MCPageMap {
	out := make([]MCPageMap, pages)
	for pg := range out {
		m := MCPageMap{Page: uint64(pg), Loopback: loopback}
		for p := range ports {
			m.Receivers = append(m.Receivers, p)
		}
		out[pg] = m
	}
	return out
}

// MCSinglePages maps each of pages 0..pages-1 at one port drawn from r.
func MCSinglePages(pages, ports int, r *rand.Rand, loopback bool) []MCPageMap {
	out := make([]MCPageMap, pages)
	for pg := range out {
		out[pg] = MCPageMap{Page: uint64(pg), Receivers: []int{r.IntN(ports)}, Loopback: loopback}
	}
	return out
}

// MCDelivery identifies one copy of a write: the write (source and its
// sequence number) at one receiver.
type MCDelivery struct {
	Src, Dst int
	Seq      uint64
}

// String formats the delivery for messages.
func (d MCDelivery) String() string { return fmt.Sprintf("write %d#%d at %d", d.Src, d.Seq, d.Dst) }

// MCSeen is a write as one receiver saw it; the scoreboard compares it with
// the hub's global order.
type MCSeen struct {
	Receiver int
	Page     uint64
	Src      int
	Seq      uint64
	Order    uint64
	Offset   int
	Len      int
	Hash     uint64
}

// seenKey keys the order scoreboard by receiver: every receiver must see
// its writes in the hub's one global order, whatever their pages.
func seenKey(s MCSeen) string { return fmt.Sprintf("receiver %d", s.Receiver) }

// MCPortCounts are one port's write counts, from the endpoints' view.
type MCPortCounts struct {
	// Writes and Bytes count the writes endpoint p sent (their data bytes).
	Writes, Bytes uint64
	// Received and ReceivedBytes count the writes endpoint p received
	// (accepted by its receive filter).
	Received, ReceivedBytes uint64
	// Filtered counts the writes endpoint p's receive filter dropped: the
	// hub brought them, but p's page map does not map their page for it
	// (the hub brings every write to every port).
	Filtered uint64
}

// written is a write on its way, for statistics.
type written struct {
	created, injected uint64
	measured          bool
	left              int // destinations still to receive it
}

type writeKey struct {
	src int
	seq uint64
}

// MCShared is what the traffic endpoints of one Memory Channel star share: the page map,
// the statistics collector (nil for none), per-port counts and the
// always-on checkers:
//
//   - Deliveries: every write reaches every destination its page map gives
//     exactly once, after the receivers' filters (conservation; the
//     reference is the PageMap, not the hub);
//   - Pages: every receiver sees its writes in the hub's global order, so
//     all receivers see the writes to a page in the same order (MC-P9): an
//     out-of-order scoreboard keyed by receiver, in order within a key, fed
//     with the reference destinations of every write the hub orders
//     (Attach) and with what each receiver accepts;
//   - Sources: each source's writes arrive in the order it sent them.
type MCShared struct {
	env   *env.Env
	clk   clock.Clock // the hub's
	pages []MCPageMap
	byNum map[uint64]int // page -> index in pages; lookup only
	// Stats receives every delivery's creation and arrival (nil: none).
	Stats *stats.Collector
	// Deliveries is the conservation checker of (write, receiver) pairs.
	Deliveries *check.Conservation[MCDelivery]
	// Pages compares each receiver's writes with the hub's order.
	Pages *scoreboard.Scoreboard[MCSeen]
	// Sources checks per-source order at each receiver.
	Sources *check.Ordering[[2]int]
	// OnDeliver, if set, runs for every write a receiver gets.
	OnDeliver func(now clock.Time, w *mchub.Write, receiver int)

	ports    []MCPortCounts
	inflight map[writeKey]*written // lookup only, never iterated
	// measured deliveries still to arrive
	open int
	// offered, ordered and delivered count the data bytes of the writes
	// generated, ordered by the hub and received (each copy) in the
	// measurement window.
	offered, ordered, delivered uint64
}

// NewMCShared returns the shared state of a star of ports endpoints writing
// to pages; the checkers report to e's monitor under name.Deliveries,
// name.Pages and name.Sources.
func NewMCShared(e *env.Env, name string, ports int, pages []MCPageMap, st *stats.Collector) (*MCShared, error) {
	sh := &MCShared{env: e, pages: pages, byNum: map[uint64]int{}, Stats: st, ports: make([]MCPortCounts, ports),
		inflight:   map[writeKey]*written{},
		Deliveries: check.NewConservation[MCDelivery](e.Monitor, name+".Deliveries"),
		Pages:      scoreboard.New[MCSeen](name+".Pages", scoreboard.OutOfOrder, seenKey),
		Sources:    check.NewOrdering[[2]int](e.Monitor, name+".Sources")}
	for i, m := range pages {
		if _, dup := sh.byNum[m.Page]; dup {
			return nil, fmt.Errorf("%s: page %d is mapped twice", name, m.Page)
		}
		for _, r := range m.Receivers {
			if r < 0 || r >= ports {
				return nil, fmt.Errorf("%s: page %d: receiver %d is not in 0..%d", name, m.Page, r, ports-1)
			}
		}
		sh.byNum[m.Page] = i
	}
	return sh, nil
}

// Attach makes the hub report every write it orders to the page
// scoreboard (it sets the hub's OnOrder callback). The hub has no page map:
// it brings every write to every adapter, and the endpoints filter by the
// page map.
func (sh *MCShared) Attach(h *mchub.Hub) error {
	if h.Ports() != len(sh.ports) {
		return fmt.Errorf("%s: the hub has %d ports, the shared state %d", h.Name(), h.Ports(), len(sh.ports))
	}
	sh.clk = h.Clock()
	h.OnOrder(sh.hubOrdered)
	return nil
}

// PageMaps returns the page map.
func (sh *MCShared) PageMaps() []MCPageMap { return sh.pages }

// Ports returns the per-port counts.
func (sh *MCShared) Ports() []MCPortCounts { return sh.ports }

// Open returns the measured deliveries that have not arrived yet.
func (sh *MCShared) Open() int { return sh.open }

// OfferedBytes returns the data bytes of the writes generated during the
// measurement window (all writes without Stats).
func (sh *MCShared) OfferedBytes() uint64 { return sh.offered }

// DeliveredBytes returns the data bytes all receivers got during the
// measurement window (all writes without Stats).
func (sh *MCShared) DeliveredBytes() uint64 { return sh.delivered }

// OrderedBytes returns the data bytes of the writes the hub put into its
// global order during the measurement window (all writes without Stats).
func (sh *MCShared) OrderedBytes() uint64 { return sh.ordered }

// Finish runs the end-of-run checks: every delivery arrived, and every
// write the hub ordered reached each of its receivers in order. Call it
// after a run that was not stopped early.
func (sh *MCShared) Finish(t clock.Time) {
	sh.Deliveries.Finish(t)
	sh.Pages.ReportTo(sh.env.Monitor, t)
}

// Filtered returns the writes all endpoints' receive filters dropped.
func (sh *MCShared) Filtered() uint64 {
	var n uint64
	for _, pc := range sh.ports {
		n += pc.Filtered
	}
	return n
}

func (sh *MCShared) destinations(src int, page uint64) []int {
	i, ok := sh.byNum[page]
	if !ok {
		return nil
	}
	return sh.pages[i].Destinations(src)
}

// loopback reports whether the page map turns loop-back on for page.
func (sh *MCShared) loopback(page uint64) bool {
	i, ok := sh.byNum[page]
	return ok && sh.pages[i].Loopback
}

// accepts reports whether receiver r's filter takes w: its page map maps
// w's page at r (and loop-back is on if r wrote it).
func (sh *MCShared) accepts(r int, w *mchub.Write) bool {
	return slices.Contains(sh.destinations(w.Src, w.Page()), r)
}

func (sh *MCShared) hubOrdered(now clock.Time, w *mchub.Write, dests []int) {
	want := sh.destinations(w.Src, w.Page())
	// The bus brings every write to every adapter but its writer, and to
	// the writer too when the header asks for loop-back.
	hubWant := make([]int, 0, len(sh.ports))
	for p := range sh.ports {
		if p != w.Src || w.Loopback {
			hubWant = append(hubWant, p)
		}
	}
	if !slices.Equal(dests, hubWant) {
		sh.env.Report(now, sh.Pages.Name(), "mc.dests", "%v: the hub forwards to %v, it should to %v", w, dests, hubWant)
	}
	if w.Loopback != sh.loopback(w.Page()) {
		sh.env.Report(now, sh.Pages.Name(), "mc.loopback", "%v: loop-back bit %t, the page map says %t", w, w.Loopback, sh.loopback(w.Page()))
	}
	if sh.Stats == nil || sh.Stats.Measured(uint64(sh.clk.CycleAt(now))) {
		sh.ordered += uint64(w.Len)
	}
	for _, r := range want {
		sh.Pages.Expect(MCSeen{Receiver: r, Page: w.Page(), Src: w.Src, Seq: w.Seq, Order: w.Order,
			Offset: w.Offset(), Len: w.Len, Hash: hashBytes(MCPayload(w.Src, w.Seq, w.Len))})
	}
}

// MCEndpointBuilder configures an MCEndpoint.
type MCEndpointBuilder struct {
	env     *env.Env
	port    star.Port
	lnk     link.Config
	format  mchub.Format
	id      int
	hasPort bool
	rate    float64
	sizes   traffic.Sizes
	traffic bool
	shared  *MCShared
}

// MakeMCEndpointBuilder returns a builder of an endpoint that writes nothing
// (add WithTraffic) and only receives.
func MakeMCEndpointBuilder() MCEndpointBuilder { return MCEndpointBuilder{} }

// WithEnv sets the simulation (required).
func (b MCEndpointBuilder) WithEnv(e *env.Env) MCEndpointBuilder { b.env = e; return b }

// WithStar attaches the endpoint to port i of st: it is adapter i, runs on
// the clock of link i and uses the hub's packet format.
func (b MCEndpointBuilder) WithStar(st *mchub.Star, i int) MCEndpointBuilder {
	b.id, b.hasPort = i, false
	if st != nil && i >= 0 && i < len(st.Ports) {
		b.port, b.lnk, b.format, b.hasPort = st.Ports[i], st.Links[i].Config(), st.Hub.Format(), true
	}
	return b
}

// WithTraffic sets the offered load and the write sizes: rate is the
// fraction of the link's bandwidth the endpoint offers in data bytes (a
// Bernoulli process in link cycles), sizes the write lengths in bytes.
func (b MCEndpointBuilder) WithTraffic(rate float64, sizes traffic.Sizes) MCEndpointBuilder {
	b.rate, b.sizes, b.traffic = rate, sizes, true
	return b
}

// WithShared sets the shared page map, statistics and checkers (required).
func (b MCEndpointBuilder) WithShared(sh *MCShared) MCEndpointBuilder { b.shared = sh; return b }

// Build creates the endpoint named name, connects it to its port and
// registers it with the watchdog.
func (b MCEndpointBuilder) Build(name string) (*MCEndpoint, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": mc endpoint: no env")
	case !b.hasPort:
		return nil, fmt.Errorf("%s: mc endpoint: no star port %d", name, b.id)
	case b.shared == nil:
		return nil, errors.New(name + ": mc endpoint: no shared page map and checkers")
	case b.id >= len(b.shared.ports):
		return nil, fmt.Errorf("%s: mc endpoint: port %d, but the shared state has %d ports", name, b.id, len(b.shared.ports))
	}
	ep := &MCEndpoint{format: b.format, sizes: b.sizes, sh: b.shared}
	ep.endpoint = endpoint{env: b.env, id: b.id, port: b.port, gen: true, rng: b.env.Rand(name)}
	if b.traffic && b.rate > 0 {
		if b.rate > 1 {
			return nil, fmt.Errorf("%s: mc endpoint: rate %g of the link bandwidth must be in [0, 1]", name, b.rate)
		}
		if mx := b.sizes.Max(); mx > mchub.PageSize {
			return nil, fmt.Errorf("%s: mc endpoint: writes of %d bytes do not fit a page of %d", name, mx, mchub.PageSize)
		}
		// Writes per cycle: rate x bytes per cycle / mean write length.
		inj, err := traffic.NewBernoulliPackets(b.rate * float64(b.lnk.BytesPerCycle) / b.sizes.Mean())
		if err != nil {
			return nil, fmt.Errorf("%s: mc endpoint: rate %g needs more than one write per cycle", name, b.rate)
		}
		ep.inj = inj
		for _, m := range b.shared.pages {
			if len(m.Destinations(b.id)) > 0 {
				ep.pages = append(ep.pages, m.Page)
			}
		}
		if len(ep.pages) == 0 {
			return nil, fmt.Errorf("%s: mc endpoint: no page reaches an adapter other than %d", name, b.id)
		}
	}
	// Without traffic the process never fires (a zero Bernoulli).
	ep.init(name, b.lnk.Clock, ep, "writes")
	b.env.Register(ep)
	return ep, nil
}

// MCEndpoint is a traffic source and sink on one port of a Memory Channel
// star: an adapter reduced to its writes. It generates writes by a
// Bernoulli process, each of a length from its size distribution at a
// random offset (aligned to the largest power of two up to 64 dividing the
// length) of a page drawn uniformly from those that reach some other
// adapter (or itself, with loop-back). Writes wait in an unbounded source
// queue (the creation cycle starts their latency) and are sent flit by
// flit as the link's serialiser and credits allow, each with the header's
// loop-back bit from the page map. Arriving flits are taken one per cycle
// and reassembled into writes; the receive filter drops (and counts in
// Filtered) a write whose page the page map does not map here, as an
// adapter's receive table does (the hub brings every write to every
// adapter).
//
// Timing, in link cycles: Tick runs send, receive, generate. A write
// generated at edge c sends its head flit from c+1.
type MCEndpoint struct {
	endpoint
	format mchub.Format
	sizes  traffic.Sizes
	sh     *MCShared
	pages  []uint64 // pages this endpoint writes to

	queue   []*mchub.Write // generated, not yet sent
	seq     uint64
	cur     []link.Flit // flits of the write being sent
	curFlit int

	rxW    *mchub.Write // write being received
	rxData []byte
	rxDrop bool // the receive filter drops rxW
}

// Queued returns the writes waiting in the source queue.
func (ep *MCEndpoint) Queued() int { return len(ep.queue) }

func (ep *MCEndpoint) queued() int { return len(ep.queue) }

// wakeSender: a busy serialiser is waited for; a missing credit wakes the
// endpoint when it returns.
func (ep *MCEndpoint) wakeSender(now clock.Time) {
	if ep.cur != nil || len(ep.queue) > 0 {
		if !ep.port.Send.Idle(now) {
			ep.WakeAt(ep.port.Send.BusyUntil())
		} else if ep.port.Send.Available(now, 0) > 0 {
			ep.Wake(now)
		}
	}
}

func (ep *MCEndpoint) send(now clock.Time, c uint64) {
	if ep.cur == nil {
		if len(ep.queue) == 0 {
			return
		}
		w := ep.queue[0]
		ep.queue = ep.queue[1:]
		if len(ep.queue) == 0 {
			ep.queue = nil
		}
		// Packet ids: src x 10^9 + seq, readable in traces.
		fl, err := ep.format.Packet(w, MCPayload(w.Src, w.Seq, w.Len), uint64(ep.id)*1_000_000_000+w.Seq)
		if err != nil {
			ep.env.Report(now, ep.Name(), "mc.endpoint", "%v: %v", w, err)
			return
		}
		ep.cur, ep.curFlit = fl, 0
		ep.sigQueue.Set(now, uint64(len(ep.queue)))
	}
	if !ep.port.Send.CanSend(now, 0) {
		return
	}
	f := ep.cur[ep.curFlit]
	f.Stamp = now
	ep.port.Send.Send(now, &f)
	if f.Head {
		w := f.Meta().(*mchub.Write)
		if x := ep.sh.inflight[writeKey{ep.id, w.Seq}]; x != nil {
			x.injected = c
		}
		pc := &ep.sh.ports[ep.id]
		pc.Writes++
		pc.Bytes += uint64(w.Len)
		ep.sigSent.Set(now, pc.Writes)
		if ep.env.Trace.Enabled() {
			ep.env.Trace.Emit(now, clock.Cycle(c), ep.Name(), "mc.write", trace.Uint("seq", w.Seq), trace.Uint("page", w.Page()),
				trace.Int("offset", int64(w.Offset())), trace.Int("len", int64(w.Len)))
		}
	}
	ep.curFlit++
	if ep.curFlit == len(ep.cur) {
		ep.cur = nil
	}
}

func (ep *MCEndpoint) receive(now clock.Time, c uint64) {
	f, ok := ep.port.Recv.Rx(0).Pop(now)
	if !ok {
		return
	}
	if f.Head {
		if ep.rxW != nil {
			ep.env.Report(now, ep.Name(), "mc.protocol", "head of packet %d inside %v", f.Packet(), ep.rxW)
		}
		w, ok := f.Meta().(*mchub.Write)
		if !ok {
			ep.env.Report(now, ep.Name(), "mc.protocol", "packet %d carries %T, not a *mchub.Write", f.Packet(), f.Meta())
			w = nil
		}
		ep.rxW, ep.rxData = w, ep.rxData[:0]
		// The receive filter: the adapter's own page map decides, at the
		// head, whether it takes the write (receive filtering is the
		// adapter's job, section 2.1).
		ep.rxDrop = w != nil && !ep.sh.accepts(ep.id, w)
		if ep.rxDrop {
			ep.sh.ports[ep.id].Filtered++
		}
	}
	w := ep.rxW
	if w == nil || ep.rxDrop {
		if f.Tail {
			ep.rxW, ep.rxDrop = nil, false
			ep.rxData = ep.rxData[:0]
		}
		return
	}
	if f.Dst() != ep.id {
		ep.env.Report(now, ep.Name(), "misroute", "a flit of %v addressed to port %d", w, f.Dst())
	}
	ep.rxData = append(ep.rxData, f.Data...)
	x := ep.sh.inflight[writeKey{w.Src, w.Seq}]
	if x != nil && ep.sh.Stats != nil {
		ep.sh.Stats.FlitArrived(c, uint64(ep.Clock().CycleAt(f.Stamp)), x.created)
	}
	if f.Tail {
		ep.rxW = nil
		ep.deliver(now, c, w, x)
	}
}

func (ep *MCEndpoint) deliver(now clock.Time, c uint64, w *mchub.Write, x *written) {
	sh := ep.sh
	pc := &sh.ports[ep.id]
	pc.Received++
	pc.ReceivedBytes += uint64(len(ep.rxData))
	if sh.Stats == nil || sh.Stats.Measured(c) {
		sh.delivered += uint64(len(ep.rxData))
	}
	ep.sigRecv.Set(now, pc.Received)
	sh.Deliveries.Received(now, MCDelivery{Src: w.Src, Dst: ep.id, Seq: w.Seq})
	sh.Sources.Observe(now, [2]int{w.Src, ep.id}, w.Seq)
	sh.Pages.Actual(MCSeen{Receiver: ep.id, Page: w.Page(), Src: w.Src, Seq: w.Seq, Order: w.Order,
		Offset: w.Offset(), Len: len(ep.rxData), Hash: hashBytes(ep.rxData)})
	if x != nil {
		if x.measured {
			sh.open--
		}
		if sh.Stats != nil {
			sh.Stats.Delivered(stats.Packet{Src: w.Src, Dst: ep.id, Flits: ep.format.Flits(w.Len), Created: x.created,
				Injected: x.injected, Delivered: c, Hops: 1})
		}
		x.left--
		if x.left == 0 {
			delete(sh.inflight, writeKey{w.Src, w.Seq})
		}
	} else {
		ep.env.Report(now, ep.Name(), "mc.endpoint", "%v arrived but no endpoint generated it", w)
	}
	if ep.env.Trace.Enabled() {
		fields := []trace.Field{trace.Int("src", int64(w.Src)), trace.Uint("seq", w.Seq), trace.Uint("order", w.Order),
			trace.Uint("page", w.Page()), trace.Int("len", int64(w.Len)), trace.Hash("hash", ep.rxData)}
		if x != nil {
			fields = append(fields, trace.Uint("latency", c-x.created))
		}
		ep.env.Trace.Emit(now, clock.Cycle(c), ep.Name(), "mc.recv", fields...)
	}
	if sh.OnDeliver != nil {
		sh.OnDeliver(now, w, ep.id)
	}
}

// create makes the write of the Bernoulli success at cycle at.
func (ep *MCEndpoint) create(at uint64) {
	size := ep.sizes.Draw(ep.rng)
	page := ep.pages[ep.rng.IntN(len(ep.pages))]
	// assumed: writes are naturally aligned, up to a 64-byte cache line
	// («A cache line is 64 bytes.», MC-P17), as the stores an adapter
	// collects would be.
	align := min(size&-size, 64)
	off := ep.rng.IntN((mchub.PageSize-size)/align+1) * align
	ep.seq++
	w := &mchub.Write{Src: ep.id, Addr: page*mchub.PageSize + uint64(off), Len: size, Seq: ep.seq,
		Loopback: ep.sh.loopback(page)}
	dests := ep.sh.destinations(ep.id, page)
	x := &written{created: at, left: len(dests)}
	t := ep.Clock().TimeOf(clock.Cycle(at))
	for _, d := range dests {
		if ep.sh.Stats != nil && ep.sh.Stats.Created(at, ep.format.Flits(size)) {
			x.measured = true
			ep.sh.open++
		}
		ep.sh.Deliveries.Sent(t, MCDelivery{Src: ep.id, Dst: d, Seq: ep.seq})
	}
	if ep.sh.Stats == nil || ep.sh.Stats.Measured(at) {
		ep.sh.offered += uint64(size)
	}
	ep.sh.inflight[writeKey{ep.id, ep.seq}] = x
	ep.queue = append(ep.queue, w)
}

// MCPayload returns the n data bytes of write seq from src: a pattern
// derived from both, so that receivers can check every byte.
func MCPayload(src int, seq uint64, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seq>>(8*(i%8))) ^ byte(src*53+i*29+11)
	}
	return b
}

func hashBytes(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// Idle implements check.Unit: writes queued or being sent, and a write
// half received, are unfinished work.
func (ep *MCEndpoint) Idle() bool { return len(ep.queue) == 0 && ep.cur == nil && ep.rxW == nil }

// State implements check.Unit.
func (ep *MCEndpoint) State() string {
	if ep.Idle() {
		return "idle"
	}
	s := fmt.Sprintf("%d writes queued", len(ep.queue))
	if ep.cur != nil {
		s += fmt.Sprintf("; sending flit %d of %d of %v", ep.curFlit, len(ep.cur), ep.cur[0].Meta())
	}
	if ep.rxW != nil {
		s += fmt.Sprintf("; receiving %v (%d bytes so far)", ep.rxW, len(ep.rxData))
	}
	return s
}
