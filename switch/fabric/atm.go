package fabric

import (
	"errors"
	"fmt"
	"math"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
)

// ATMFirstVCI is the first VCI the ATM traffic endpoints use: VCIs 0..31 are
// reserved for signalling and OAM cells (ITU-T I.361), so a permanent VC
// to or from port p uses VCI ATMFirstVCI+p.
const ATMFirstVCI = 32

// ATMPeerVCI returns the VCI of the VC between an endpoint and port peer: an
// endpoint sends to peer on ATMPeerVCI(peer), and the switch translates it so
// that the receiver gets the cell on ATMPeerVCI(source) and knows where it
// came from.
func ATMPeerVCI(peer int) uint16 { return uint16(ATMFirstVCI + peer) }

// SetupATMVCs fills the routing table of sw with one permanent VC per ordered
// pair of distinct ports: input i, VCI ATMPeerVCI(j) leaves on port j with
// VCI ATMPeerVCI(i).
func SetupATMVCs(sw *atm.Switch) error {
	n := sw.Ports()
	if ATMFirstVCI+n > math.MaxUint16 {
		return fmt.Errorf("%s: %d ports need more VCIs than a header holds", sw.Name(), n)
	}
	for i := range n {
		for j := range n {
			if i == j {
				continue
			}
			if err := sw.AddRoute(i, ATMPeerVCI(j), j, ATMPeerVCI(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ATMCell is what an ATM traffic endpoint knows about a cell it generated; it
// travels as the cell flit's Meta (the switch passes Meta through).
type ATMCell struct {
	// ID is the cell's id: ATMCellID(source, the source's cell number).
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
func (c *ATMCell) String() string {
	return fmt.Sprintf("cell %d %d->%d #%d", c.ID, c.Src, c.Dst, c.Seq)
}

// ATMPortCounts are one port's cell counts, from the endpoints' view.
type ATMPortCounts struct {
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

// ATMShared is what the traffic endpoints of one ATM star share: the statistics
// collector (nil for none), the always-on checkers and per-port counts.
//
// The checkers: every cell generated is delivered exactly once or dropped
// by the switch (Cells, a conservation checker fed by the switch's drop
// callback, see Attach), and the cells of every VC arrive in order (Order).
// A cell lost on a link itself (a link configured with DropProb, or a
// receive-buffer overflow, which endpoints that pop every cycle never
// cause) has no id the endpoints can learn, so Cells reports it as lost.
type ATMShared struct {
	env *env.Env
	// Stats receives every cell's creation and delivery (nil: none).
	Stats *stats.Collector
	// Cells is the conservation checker of cell ids.
	Cells *check.Conservation[uint64]
	// Order checks the per-VC sequence numbers at the receivers.
	Order *check.Ordering[[2]int]
	// OnResolve, if set, runs when a cell has been delivered or dropped.
	OnResolve func(now clock.Time, c *ATMCell, delivered bool)

	ports           []ATMPortCounts
	measuredDropped int
}

// NewATMShared returns the shared state of a star of ports endpoints; the
// checkers report to e's monitor under name.Cells and name.Order.
func NewATMShared(e *env.Env, name string, ports int, st *stats.Collector) *ATMShared {
	return &ATMShared{env: e, Stats: st, ports: make([]ATMPortCounts, ports),
		Cells: check.NewConservation[uint64](e.Monitor, name+".Cells"),
		Order: check.NewOrdering[[2]int](e.Monitor, name+".Order")}
}

// Attach makes the switch report its dropped cells to the checkers and
// counts (it sets the switch's OnDrop callback).
func (sh *ATMShared) Attach(sw *atm.Switch) {
	sw.OnDrop(func(now clock.Time, _ int, f link.Flit, _ atm.DropReason) { sh.dropped(now, f) })
}

// Ports returns the per-port counts.
func (sh *ATMShared) Ports() []ATMPortCounts { return sh.ports }

// MeasuredDropped returns how many measured cells were dropped.
func (sh *ATMShared) MeasuredDropped() int { return sh.measuredDropped }

// Open returns the measured cells neither delivered nor dropped yet.
func (sh *ATMShared) Open() int {
	if sh.Stats == nil {
		return 0
	}
	return sh.Stats.Outstanding() - sh.measuredDropped
}

// Finish runs the end-of-run checks: every cell sent was delivered or
// dropped. Call it after a run that was not stopped early.
func (sh *ATMShared) Finish(t clock.Time) { sh.Cells.Finish(t) }

func (sh *ATMShared) dropped(now clock.Time, f link.Flit) {
	c, ok := f.Meta().(*ATMCell)
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

// ATMEndpointBuilder configures an ATMEndpoint.
type ATMEndpointBuilder struct {
	env     *env.Env
	port    star.Port
	lnk     link.Config
	id      int
	hasPort bool
	pattern traffic.Pattern
	rate    float64
	shared  *ATMShared
}

// MakeATMEndpointBuilder returns a builder of an endpoint that generates no
// traffic (add WithTraffic) and only receives.
func MakeATMEndpointBuilder() ATMEndpointBuilder { return ATMEndpointBuilder{} }

// WithEnv sets the simulation (required).
func (b ATMEndpointBuilder) WithEnv(e *env.Env) ATMEndpointBuilder { b.env = e; return b }

// WithStar attaches the endpoint to port i of st: it is endpoint i, runs
// on the clock of link i and sends at its rate.
func (b ATMEndpointBuilder) WithStar(st *atm.Star, i int) ATMEndpointBuilder {
	b.id, b.hasPort = i, false
	if st != nil && i >= 0 && i < len(st.Ports) {
		b.port, b.lnk, b.hasPort = st.Ports[i], st.Links[i].Config(), true
	}
	return b
}

// WithTraffic sets the destinations (pattern) and the offered load: rate
// is the fraction of the link's cell rate the endpoint offers (1: a cell
// every cell time), a Bernoulli process in link cycles.
func (b ATMEndpointBuilder) WithTraffic(p traffic.Pattern, rate float64) ATMEndpointBuilder {
	b.pattern, b.rate = p, rate
	return b
}

// WithShared sets the shared statistics and checkers (required).
func (b ATMEndpointBuilder) WithShared(sh *ATMShared) ATMEndpointBuilder { b.shared = sh; return b }

// Build creates the endpoint named name, connects it to its port and
// registers it with the watchdog.
func (b ATMEndpointBuilder) Build(name string) (*ATMEndpoint, error) {
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
	cellCycles := (atm.CellBytes + b.lnk.BytesPerCycle - 1) / b.lnk.BytesPerCycle
	inj, err := traffic.NewBernoulli(b.rate, traffic.Fixed(cellCycles))
	if err != nil {
		return nil, fmt.Errorf("%s: atm endpoint: %w", name, err)
	}
	ep := &ATMEndpoint{pattern: b.pattern, sh: b.shared, vcSeq: make([]uint64, len(b.shared.ports))}
	ep.endpoint = endpoint{env: b.env, id: b.id, port: b.port, inj: inj, gen: b.pattern != nil, rng: b.env.Rand(name)}
	ep.init(name, b.lnk.Clock, ep, "cells")
	b.env.Register(ep)
	return ep, nil
}

// ATMEndpoint is a traffic source and sink on one port of an ATM star: a
// host interface reduced to its cell traffic. It generates cells by a
// Bernoulli process (each goes to a destination from its traffic pattern
// on the permanent VC of SetupATMVCs), queues them in an unbounded source
// queue (the creation cycle starts a cell's latency, so source queueing
// counts, as in BookSim), sends the head cell whenever the link's
// serialiser is free (line rate) and takes every cell that arrives.
//
// Timing, in link cycles: Tick runs send, receive, generate. A cell
// generated at edge c is sent from c+1 (the source queue is a register);
// it arrives at the receiver as switch/atm's package doc says and is
// taken the edge it becomes visible.
type ATMEndpoint struct {
	endpoint
	pattern traffic.Pattern
	sh      *ATMShared

	queue []*ATMCell
	seq   uint64   // cells generated
	vcSeq []uint64 // per destination
}

// Queued returns the cells waiting in the source queue.
func (ep *ATMEndpoint) Queued() int { return len(ep.queue) }

func (ep *ATMEndpoint) queued() int { return len(ep.queue) }

// wakeSender: the serialiser is free again at BusyUntil (a link without
// flow control never wakes its sender).
func (ep *ATMEndpoint) wakeSender(clock.Time) {
	if len(ep.queue) > 0 {
		ep.WakeAt(ep.port.Send.BusyUntil())
	}
}

func (ep *ATMEndpoint) send(now clock.Time, c uint64) {
	if len(ep.queue) == 0 || !ep.port.Send.CanSend(now, 0) {
		return
	}
	cell := ep.queue[0]
	ep.queue = ep.queue[1:]
	if len(ep.queue) == 0 {
		ep.queue = nil
	}
	cell.Injected = c
	f, _ := atm.NewCell(cell.ID, atm.Header{VCI: ATMPeerVCI(cell.Dst)}, ATMPayload(cell.ID)) // a valid header and a 48-byte payload
	// NewCell made a fresh PacketInfo: fill it in.
	f.Info.Src, f.Info.Dst, f.Info.Meta, f.Stamp = cell.Src, cell.Dst, cell, now
	f.Carries |= link.HasMeta
	ep.port.Send.Send(now, &f)
	pc := &ep.sh.ports[ep.id]
	pc.Sent++
	ep.sh.ports[cell.Dst].SentTo++
	ep.sigSent.Set(now, pc.Sent)
	ep.sigQueue.Set(now, uint64(len(ep.queue)))
	if ep.env.Trace.Enabled() {
		ep.env.Trace.Emit(now, clock.Cycle(c), ep.Name(), "atm.send", trace.Uint("cell", cell.ID),
			trace.Int("dst", int64(cell.Dst)), trace.Uint("vci", uint64(ATMPeerVCI(cell.Dst))), trace.Uint("seq", cell.Seq))
	}
}

func (ep *ATMEndpoint) receive(now clock.Time, c uint64) {
	f, ok := ep.port.Recv.Rx(0).Pop(now)
	if !ok {
		return
	}
	sh := ep.sh
	pc := &sh.ports[ep.id]
	cell, ok := f.Meta().(*ATMCell)
	if !ok {
		ep.env.Report(now, ep.Name(), "atm.endpoint", "cell %d without a *fabric.ATMCell", f.Packet())
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
	h, err := atm.CellHeader(f)
	switch {
	case err != nil:
		ep.env.Report(now, ep.Name(), "atm.endpoint", "%v: %v", cell, err)
	case cell.Dst != ep.id:
		ep.env.Report(now, ep.Name(), "misroute", "%v delivered to port %d", cell, ep.id)
	case h.VCI != ATMPeerVCI(cell.Src):
		ep.env.Report(now, ep.Name(), "atm.vci", "%v arrived on VCI %d, want %d", cell, h.VCI, ATMPeerVCI(cell.Src))
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

// create makes the cell of the Bernoulli success at cycle at, if the
// pattern gives it a destination other than this endpoint.
func (ep *ATMEndpoint) create(at uint64) {
	d := ep.pattern.Dest(ep.id, ep.rng)
	if d < 0 || d == ep.id || d >= len(ep.vcSeq) {
		return
	}
	ep.seq++
	ep.vcSeq[d]++
	cell := &ATMCell{ID: ATMCellID(ep.id, ep.seq), Src: ep.id, Dst: d, Seq: ep.vcSeq[d], Created: at}
	if ep.sh.Stats != nil {
		cell.Measured = ep.sh.Stats.Created(at, 1)
	}
	ep.sh.Cells.Sent(ep.Clock().TimeOf(clock.Cycle(at)), cell.ID)
	ep.queue = append(ep.queue, cell)
}

// ATMCellID returns the id of the n-th cell (from 1) of source src:
// src x 10^9 + n, readable in traces.
func ATMCellID(src int, n uint64) uint64 { return uint64(src)*1_000_000_000 + n }

// ATMPayload returns the 48 payload bytes of cell id: a pattern derived
// from the id, so that a receiver can check every byte.
func ATMPayload(id uint64) []byte {
	b := make([]byte, atm.PayloadBytes)
	for i := range b {
		b[i] = byte(id>>(8*(i%8))) ^ byte(29*i+7)
	}
	return b
}

func samePayload(data []byte, id uint64) bool {
	if len(data) != atm.PayloadBytes {
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
func (ep *ATMEndpoint) Idle() bool { return len(ep.queue) == 0 }

// State implements check.Unit.
func (ep *ATMEndpoint) State() string {
	if len(ep.queue) == 0 {
		return "idle"
	}
	return fmt.Sprintf("%d cells queued; next %v", len(ep.queue), ep.queue[0])
}
