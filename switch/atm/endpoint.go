package atm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// FirstVCI is the first VCI the traffic endpoints use: VCIs 0..31 are
// reserved for signalling and OAM cells (ITU-T I.361), so a permanent VC
// to or from port p uses VCI FirstVCI+p.
const FirstVCI = 32

// PeerVCI returns the VCI of the VC between an endpoint and port peer: an
// endpoint sends to peer on PeerVCI(peer), and the switch translates it so
// that the receiver gets the cell on PeerVCI(source) and knows where it
// came from.
func PeerVCI(peer int) uint16 { return uint16(FirstVCI + peer) }

// SetupVCs fills the routing table of sw with one permanent VC per ordered
// pair of distinct ports: input i, VCI PeerVCI(j) leaves on port j with
// VCI PeerVCI(i).
func SetupVCs(sw *Switch) error {
	n := sw.Ports()
	if FirstVCI+n > math.MaxUint16 {
		return fmt.Errorf("%s: %d ports need more VCIs than a header holds", sw.Name(), n)
	}
	for i := range n {
		for j := range n {
			if i == j {
				continue
			}
			if err := sw.AddRoute(i, PeerVCI(j), j, PeerVCI(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Cell is what a traffic endpoint knows about a cell it generated; it
// travels as the cell flit's Meta (the switch passes Meta through).
type Cell struct {
	// ID is the cell's id: CellID(source, the source's cell number).
	ID uint64
	// Src and Dst are the endpoints; Seq numbers the cells of the VC from
	// Src to Dst (1, 2, ...).
	Src, Dst int
	Seq      uint64
	// Created is the cycle the Bernoulli source generated the cell and
	// Injected the cycle its first byte went onto the link.
	Created, Injected uint64
	// Measured is set for cells created in the measurement window.
	Measured bool
}

// String formats the cell for messages.
func (c *Cell) String() string { return fmt.Sprintf("cell %d %d->%d #%d", c.ID, c.Src, c.Dst, c.Seq) }

// PortCounts are one port's cell counts, from the endpoints' view.
type PortCounts struct {
	// Sent counts the cells endpoint p put on its link, SentTo the cells
	// any endpoint sent to p.
	Sent, SentTo uint64
	// Received counts the cells endpoint p received intact.
	Received uint64
	// DeliveredFrom and DroppedFrom count the cells from p that were
	// delivered and that were dropped (by the switch, or corrupted on a
	// link and discarded by the receiver).
	DeliveredFrom, DroppedFrom uint64
	// Corrupted counts cells that reached endpoint p with a bad CRC; they
	// are discarded and counted in DroppedFrom of their source.
	Corrupted uint64
}

// Shared is what the traffic endpoints of one star share: the statistics
// collector (nil for none), the always-on checkers and per-port counts.
//
// The checkers: every cell generated is delivered exactly once or dropped
// by the switch (Cells, a conservation checker fed by the switch's drop
// callback, see Attach), and the cells of every VC arrive in order (Order).
// A cell lost on a link itself (a link configured with DropProb, or a
// receive-buffer overflow, which endpoints that pop every cycle never
// cause) has no id the endpoints can learn, so Cells reports it as lost.
type Shared struct {
	env *env.Env
	// Stats receives every cell's creation and delivery (nil: none).
	Stats *stats.Collector
	// Cells is the conservation checker of cell ids.
	Cells *check.Conservation[uint64]
	// Order checks the per-VC sequence numbers at the receivers.
	Order *check.Ordering[[2]int]
	// OnResolve, if set, runs when a cell has been delivered or dropped.
	OnResolve func(now clock.Time, c *Cell, delivered bool)

	ports           []PortCounts
	measuredDropped int
}

// NewShared returns the shared state of a star of ports endpoints; the
// checkers report to e's monitor under name.Cells and name.Order.
func NewShared(e *env.Env, name string, ports int, st *stats.Collector) *Shared {
	return &Shared{env: e, Stats: st, ports: make([]PortCounts, ports),
		Cells: check.NewConservation[uint64](e.Monitor, name+".Cells"),
		Order: check.NewOrdering[[2]int](e.Monitor, name+".Order")}
}

// Attach makes the switch report its dropped cells to the checkers and
// counts (it sets the switch's OnDrop callback).
func (sh *Shared) Attach(sw *Switch) {
	sw.OnDrop(func(now clock.Time, _ int, f link.Flit, _ DropReason) { sh.dropped(now, f) })
}

// Ports returns the per-port counts.
func (sh *Shared) Ports() []PortCounts { return sh.ports }

// MeasuredDropped returns how many measured cells were dropped.
func (sh *Shared) MeasuredDropped() int { return sh.measuredDropped }

// Open returns the measured cells neither delivered nor dropped yet.
func (sh *Shared) Open() int {
	if sh.Stats == nil {
		return 0
	}
	return sh.Stats.Outstanding() - sh.measuredDropped
}

// Finish runs the end-of-run checks: every cell sent was delivered or
// dropped. Call it after a run that was not stopped early.
func (sh *Shared) Finish(t clock.Time) { sh.Cells.Finish(t) }

func (sh *Shared) dropped(now clock.Time, f link.Flit) {
	c, ok := f.Meta.(*Cell)
	if !ok {
		// Not one of ours: the conservation checker knows nothing of it.
		return
	}
	sh.Cells.Dropped(now, c.ID)
	sh.ports[c.Src].DroppedFrom++
	if c.Measured {
		sh.measuredDropped++
	}
	if sh.OnResolve != nil {
		sh.OnResolve(now, c, false)
	}
}

// EndpointBuilder configures an Endpoint.
type EndpointBuilder struct {
	env     *env.Env
	port    Port
	lnk     link.Config
	id      int
	hasPort bool
	pattern traffic.Pattern
	rate    float64
	shared  *Shared
}

// MakeEndpointBuilder returns a builder of an endpoint that generates no
// traffic (add WithTraffic) and only receives.
func MakeEndpointBuilder() EndpointBuilder { return EndpointBuilder{} }

// WithEnv sets the simulation (required).
func (b EndpointBuilder) WithEnv(e *env.Env) EndpointBuilder { b.env = e; return b }

// WithStar attaches the endpoint to port i of st: it is endpoint i, runs
// on the clock of link i and sends at its rate.
func (b EndpointBuilder) WithStar(st *Star, i int) EndpointBuilder {
	b.id, b.hasPort = i, false
	if st != nil && i >= 0 && i < len(st.Ports) {
		b.port, b.lnk, b.hasPort = st.Ports[i], st.Links[i].Config(), true
	}
	return b
}

// WithTraffic sets the destinations (pattern) and the offered load: rate
// is the fraction of the link's cell rate the endpoint offers (1: a cell
// every cell time), a Bernoulli process in link cycles.
func (b EndpointBuilder) WithTraffic(p traffic.Pattern, rate float64) EndpointBuilder {
	b.pattern, b.rate = p, rate
	return b
}

// WithShared sets the shared statistics and checkers (required).
func (b EndpointBuilder) WithShared(sh *Shared) EndpointBuilder { b.shared = sh; return b }

// Build creates the endpoint named name, connects it to its port and
// registers it with the watchdog.
func (b EndpointBuilder) Build(name string) (*Endpoint, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": atm endpoint: no env")
	case !b.hasPort:
		return nil, fmt.Errorf("%s: atm endpoint: no star port %d", name, b.id)
	case b.shared == nil:
		return nil, errors.New(name + ": atm endpoint: no shared checkers")
	case b.id >= len(b.shared.ports):
		return nil, fmt.Errorf("%s: atm endpoint: port %d, but the shared state has %d ports", name, b.id, len(b.shared.ports))
	}
	// A cell occupies the serialiser for this many link cycles.
	cellCycles := (CellBytes + b.lnk.BytesPerCycle - 1) / b.lnk.BytesPerCycle
	inj, err := traffic.NewBernoulli(b.rate, traffic.Fixed(cellCycles))
	if err != nil {
		return nil, fmt.Errorf("%s: atm endpoint: %w", name, err)
	}
	ep := &Endpoint{env: b.env, id: b.id, port: b.port, pattern: b.pattern, inj: inj, sh: b.shared,
		rng: b.env.Rand(name), vcSeq: make([]uint64, len(b.shared.ports))}
	ep.Ticking = clock.NewTicking(name, b.env.Engine, b.lnk.Clock, ep)
	ep.nextGen = ep.gap(0)
	b.port.Connect(ep)
	reg := b.env.Waves
	ep.sigQueue = reg.Integer(name, "queue", 32)
	ep.sigSent = reg.Integer(name, "sent", 32)
	ep.sigRecv = reg.Integer(name, "received", 32)
	b.env.Register(ep)
	return ep, nil
}

// Endpoint is a traffic source and sink on one port of an ATM star: a
// host interface reduced to its cell traffic. It generates cells by a
// Bernoulli process (each goes to a destination from its traffic pattern
// on the permanent VC of SetupVCs), queues them in an unbounded source
// queue (the creation cycle starts a cell's latency, so source queueing
// counts, as in BookSim), sends the head cell whenever the link's
// serialiser is free (line rate) and takes every cell that arrives.
//
// Timing, in link cycles: Tick runs send, receive, generate. A cell
// generated at edge c is sent from c+1 (the source queue is a register);
// it arrives at the receiver as the switch's package doc says and is
// taken the edge it becomes visible.
type Endpoint struct {
	*clock.Ticking
	env     *env.Env
	id      int
	port    Port
	pattern traffic.Pattern
	inj     traffic.Bernoulli
	sh      *Shared
	rng     *rand.Rand

	nextGen uint64 // cycle of the next Bernoulli success
	stopGen bool
	queue   []*Cell
	seq     uint64   // cells generated
	vcSeq   []uint64 // per destination

	sigQueue, sigSent, sigRecv *waves.Signal
}

// ID returns the endpoint's port number.
func (ep *Endpoint) ID() int { return ep.id }

// Start begins generating; call it before the simulation runs.
func (ep *Endpoint) Start() {
	if ep.nextGen == math.MaxUint64 {
		return
	}
	ep.WakeAt(ep.Clock().TimeOf(clock.Cycle(ep.nextGen)))
}

// StopGenerating ends generation; cells already generated are still sent.
func (ep *Endpoint) StopGenerating() { ep.stopGen = true }

// Queued returns the cells waiting in the source queue.
func (ep *Endpoint) Queued() int { return len(ep.queue) }

// gap returns the cycle of the next Bernoulli success after cycle c
// (geometric inter-arrival times: the same process as one trial per cycle,
// without an event per cycle).
func (ep *Endpoint) gap(c uint64) uint64 {
	if ep.pattern == nil {
		return math.MaxUint64
	}
	return ep.inj.Next(c, ep.rng)
}

// Tick implements clock.Ticker: send (output), receive (input), generate.
func (ep *Endpoint) Tick(now clock.Time) bool {
	c := uint64(ep.Clock().CycleAt(now))
	ep.send(now, c)
	ep.receive(now, c)
	ep.generate(now, c)
	if len(ep.queue) > 0 {
		// The serialiser is free again at BusyUntil (a link without flow
		// control never wakes its sender).
		ep.WakeAt(ep.port.Send.BusyUntil())
	}
	if !ep.stopGen && ep.nextGen != math.MaxUint64 {
		ep.WakeAt(ep.Clock().TimeOf(clock.Cycle(ep.nextGen)))
	}
	return false
}

func (ep *Endpoint) send(now clock.Time, c uint64) {
	if len(ep.queue) == 0 || !ep.port.Send.CanSend(now, 0) {
		return
	}
	cell := ep.queue[0]
	ep.queue = ep.queue[1:]
	if len(ep.queue) == 0 {
		ep.queue = nil
	}
	cell.Injected = c
	f, _ := NewCell(cell.ID, Header{VCI: PeerVCI(cell.Dst)}, Payload(cell.ID)) // a valid header and a 48-byte payload
	f.Src, f.Dst, f.Meta, f.Stamp = cell.Src, cell.Dst, cell, now
	ep.port.Send.Send(now, f)
	pc := &ep.sh.ports[ep.id]
	pc.Sent++
	ep.sh.ports[cell.Dst].SentTo++
	ep.sigSent.Set(now, pc.Sent)
	ep.sigQueue.Set(now, uint64(len(ep.queue)))
	if ep.env.Trace.Enabled() {
		ep.env.Trace.Emit(now, clock.Cycle(c), ep.Name(), "atm.send", trace.Uint("cell", cell.ID),
			trace.Int("dst", int64(cell.Dst)), trace.Uint("vci", uint64(PeerVCI(cell.Dst))), trace.Uint("seq", cell.Seq))
	}
}

func (ep *Endpoint) receive(now clock.Time, c uint64) {
	f, ok := ep.port.Recv.Rx(0).Pop(now)
	if !ok {
		return
	}
	sh := ep.sh
	pc := &sh.ports[ep.id]
	cell, ok := f.Meta.(*Cell)
	if !ok {
		ep.env.Report(now, ep.Name(), "atm.endpoint", "cell %d without a *atm.Cell", f.Packet)
		return
	}
	if f.Bad {
		// Corrupted on a link: discarded and counted, never delivered.
		pc.Corrupted++
		sh.dropped(now, f)
		return
	}
	pc.Received++
	ep.sigRecv.Set(now, pc.Received)
	h, err := CellHeader(f)
	switch {
	case err != nil:
		ep.env.Report(now, ep.Name(), "atm.endpoint", "%v: %v", cell, err)
	case cell.Dst != ep.id:
		ep.env.Report(now, ep.Name(), "misroute", "%v delivered to port %d", cell, ep.id)
	case h.VCI != PeerVCI(cell.Src):
		ep.env.Report(now, ep.Name(), "atm.vci", "%v arrived on VCI %d, want %d", cell, h.VCI, PeerVCI(cell.Src))
	case !samePayload(f.Data, cell.ID):
		ep.env.Report(now, ep.Name(), "atm.payload", "%v arrived with a different payload", cell)
	}
	sh.Cells.Received(now, cell.ID)
	sh.Order.Observe(now, [2]int{cell.Src, cell.Dst}, cell.Seq)
	sh.ports[cell.Src].DeliveredFrom++
	if sh.Stats != nil {
		sh.Stats.FlitArrived(c, cell.Injected, cell.Created)
		sh.Stats.Delivered(stats.Packet{Src: cell.Src, Dst: cell.Dst, Flits: 1, Created: cell.Created,
			Injected: cell.Injected, Delivered: c, Hops: 1})
	}
	if ep.env.Trace.Enabled() {
		ep.env.Trace.Emit(now, clock.Cycle(c), ep.Name(), "atm.recv", trace.Uint("cell", cell.ID),
			trace.Int("src", int64(cell.Src)), trace.Uint("vci", uint64(h.VCI)), trace.Uint("seq", cell.Seq),
			trace.Uint("latency", c-cell.Created))
	}
	if sh.OnResolve != nil {
		sh.OnResolve(now, cell, true)
	}
}

func (ep *Endpoint) generate(now clock.Time, c uint64) {
	n := len(ep.queue)
	for !ep.stopGen && ep.nextGen <= c {
		if d := ep.pattern.Dest(ep.id, ep.rng); d >= 0 && d != ep.id && d < len(ep.vcSeq) {
			ep.seq++
			ep.vcSeq[d]++
			cell := &Cell{ID: CellID(ep.id, ep.seq), Src: ep.id, Dst: d, Seq: ep.vcSeq[d], Created: ep.nextGen}
			if ep.sh.Stats != nil {
				cell.Measured = ep.sh.Stats.Created(ep.nextGen, 1)
			}
			ep.sh.Cells.Sent(ep.Clock().TimeOf(clock.Cycle(ep.nextGen)), cell.ID)
			ep.queue = append(ep.queue, cell)
		}
		ep.nextGen = ep.gap(ep.nextGen + 1)
	}
	if len(ep.queue) != n {
		ep.sigQueue.Set(now, uint64(len(ep.queue)))
	}
}

// CellID returns the id of the n-th cell (from 1) of source src:
// src x 10^9 + n, readable in traces.
func CellID(src int, n uint64) uint64 { return uint64(src)*1_000_000_000 + n }

// Payload returns the 48 payload bytes of cell id: a pattern derived from
// the id, so that a receiver can check every byte.
func Payload(id uint64) []byte {
	b := make([]byte, PayloadBytes)
	for i := range b {
		b[i] = byte(id>>(8*(i%8))) ^ byte(29*i+7)
	}
	return b
}

func samePayload(data []byte, id uint64) bool {
	if len(data) != PayloadBytes {
		return false
	}
	for i, v := range data {
		if v != byte(id>>(8*(i%8)))^byte(29*i+7) {
			return false
		}
	}
	return true
}

// Idle implements check.Unit: cells waiting in the source queue are
// unfinished work.
func (ep *Endpoint) Idle() bool { return len(ep.queue) == 0 }

// State implements check.Unit.
func (ep *Endpoint) State() string {
	if len(ep.queue) == 0 {
		return "idle"
	}
	return fmt.Sprintf("%d cells queued; next %v", len(ep.queue), ep.queue[0])
}
