// Package fabric holds what every switched network of nisim shares: the
// packet record, the network terminal (an endpoint that generates traffic
// or replays a trace, injects one flit per cycle into its switch and ejects
// what arrives, with the always-on conservation and ordering checkers) and
// the experiment harness that runs warm-up, measurement and drain, and the
// traffic endpoints of the star networks (ATMEndpoint on a switch/atm
// switch, MCEndpoint on a switch/mchub hub), which share one endpoint core
// (endpoint.go).
//
// The terminal follows BookSim's: a packet is created by a Bernoulli trial
// (its creation cycle starts its latency, so source queueing counts), waits
// in an unbounded source queue, and is injected one flit per cycle; a new
// head takes the next free VC round-robin; an injection VC is free again
// once the tail's credit is back; ejected flits are consumed at once.
package fabric

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
)

// Test-only faults (see env.DeclareMutation).
var (
	mutDuplicate = env.DeclareMutation("fabric.duplicate",
		"a network terminal delivers every Nth packet it ejects twice (caught by the conservation checker: duplicate)")
	mutSwap = env.DeclareMutation("fabric.swap",
		"a network terminal holds back every Nth packet it ejects and delivers it after the next packet of the same "+
			"source (caught by the per-flow order checker)")
)

// Packet is one packet in flight.
type Packet struct {
	ID       uint64
	Src, Dst int
	Flits    int
	Created  uint64 // cycle of its creation (source queueing counts)
	Injected uint64 // cycle its head entered the network
	Hops     int    // switches crossed
	Measured bool
}

// NumFlits implements wormhole.Packet.
func (p *Packet) NumFlits() int { return p.Flits }

// AddHop implements wormhole.Packet.
func (p *Packet) AddHop() { p.Hops++ }

func (p *Packet) String() string { return fmt.Sprintf("pkt %d %d->%d", p.ID, p.Src, p.Dst) }

// Shared is what the terminals of one network share: statistics and the
// checkers.
type Shared struct {
	Stats   *stats.Collector
	Packets *check.Conservation[uint64]
	// Order checks in-order delivery per (source, destination) when the
	// network promises it (nil otherwise).
	Order *check.Ordering[[2]int]
	// OnDeliver, if set, runs for every packet delivered; OnDrop for every
	// packet discarded at its destination for a failed CRC.
	OnDeliver func(now clock.Time, p *Packet)
	OnDrop    func(now clock.Time, p *Packet)
}

// TerminalConfig configures a terminal.
type TerminalConfig struct {
	// VCs the terminal may inject on.
	VCs int
	// FlitBytes is the wire size of a flit.
	FlitBytes int
	// Pattern, Injection and Sizes generate synthetic traffic (Pattern nil:
	// none).
	Pattern   traffic.Pattern
	Injection traffic.Bernoulli
	Sizes     traffic.Sizes
	// Replay is a traffic trace's records for this terminal (cycles
	// ascending), replayed instead of or besides synthetic traffic.
	Replay []traffic.Record
	// Route, for source-routed networks, returns the route bytes a packet
	// from src to dst carries in its head flit.
	Route func(src, dst int) []byte
	// Payload fills every flit with FlitBytes of data derived from the
	// packet id (so link CRCs and error injection have bytes to work on).
	Payload bool
}

// Terminal is a network endpoint.
type Terminal struct {
	*clock.Ticking
	env    *env.Env
	id     int
	cfg    TerminalConfig
	shared *Shared
	rng    *rand.Rand
	out    *link.Dir
	in     *link.Dir
	// rxVCs has bit v set while ejection VC v may hold a flit (set when
	// one lands, cleared when eject empties it): eject looks only there.
	rxVCs uint64

	nextGen  uint64 // cycle of the next Bernoulli success
	replayAt int
	queue    []*Packet
	seq      uint64
	cur      *Packet
	curFlit  int
	curVC    int
	curInfo  *link.PacketInfo // the current packet's shared part (its flits carry it)
	lastVC   int
	vcBusy   []bool
	vcTail   []bool

	sent, received uint64
	crcDrops       uint64
	stopGen        bool
	stopAfter      uint64 // with stopGen: the last cycle that still generates

	// test-only faults: every dupEvery-th / swapEvery-th packet ejected
	dupEvery, swapEvery int
	ejected             int
	held                map[int]*Packet // fabric.swap: per source, the packet held back
}

// NewTerminal creates terminal id of a network.
func NewTerminal(e *env.Env, name string, clk clock.Clock, id int, cfg TerminalConfig, sh *Shared) (*Terminal, error) {
	if cfg.VCs < 1 || cfg.FlitBytes < 1 {
		return nil, errors.New(name + ": a terminal needs at least one VC and one byte per flit")
	}
	if cfg.FlitBytes > link.MaxFlitBytes {
		return nil, fmt.Errorf("%s: flit of %d bytes, at most %d", name, cfg.FlitBytes, link.MaxFlitBytes)
	}
	t := &Terminal{env: e, id: id, cfg: cfg, shared: sh, rng: e.Rand(name), lastVC: cfg.VCs - 1,
		vcBusy: make([]bool, cfg.VCs), vcTail: make([]bool, cfg.VCs)}
	t.Ticking = clock.NewTicking(name, e.Engine, clk, t)
	t.nextGen = t.gap(0)
	t.dupEvery, t.swapEvery = e.Mutation(mutDuplicate), e.Mutation(mutSwap)
	if t.swapEvery > 0 {
		t.held = map[int]*Packet{}
	}
	e.Register(t)
	return t, nil
}

// ID returns the terminal's number.
func (t *Terminal) ID() int { return t.id }

// Connect attaches the injection direction (the terminal sends) and the
// ejection direction (the terminal receives).
func (t *Terminal) Connect(out, in *link.Dir) {
	t.out, t.in = out, in
	out.SetSender(t)
	in.SetReceiver(t)
	in.OnArrive(func(_ clock.Time, vc int) { t.rxVCs |= 1 << uint(vc) }) // a link has at most 64 VCs
}

// Start begins generating and replaying traffic; call it before the
// simulation runs (a packet due at cycle 0 is injected at cycle 0).
func (t *Terminal) Start() {
	if t.cfg.Pattern == nil && len(t.cfg.Replay) == 0 {
		return
	}
	if at := t.Clock().TimeOf(clock.Cycle(t.firstEvent())); at > t.Now() {
		t.WakeAt(at)
	} else {
		t.Ticking.Start()
	}
}

// SetReplay sets the packets the terminal replays (before Start).
func (t *Terminal) SetReplay(recs []traffic.Record) { t.cfg.Replay = recs }

// StopGenerating ends synthetic generation after the current cycle:
// packets of this cycle are still created, whether the terminal has ticked
// in it yet or not, so the result does not depend on tick order. Packets
// already created are still sent, and trace records are still replayed.
func (t *Terminal) StopGenerating() {
	if !t.stopGen {
		t.stopGen, t.stopAfter = true, uint64(t.Clock().CycleAt(t.Now()))
	}
}

// generating reports whether synthetic traffic is due at cycle c.
func (t *Terminal) generating(c uint64) bool { return !t.stopGen || c <= t.stopAfter }

// Inject hands the terminal a packet at now (from an NI or a test); the
// terminal takes it at its next edge, which is the packet's creation cycle.
func (t *Terminal) Inject(now clock.Time, dst, flits int) *Packet {
	p := t.newPacket(uint64(t.Clock().CycleAt(t.Clock().NextEdge(now))), dst, flits)
	t.queue = append(t.queue, p)
	t.Wake(now)
	return p
}

// CRCDrops counts packets that arrived with a failed CRC.
func (t *Terminal) CRCDrops() uint64 { return t.crcDrops }

// Sent and Received count flits.
func (t *Terminal) Sent() uint64     { return t.sent }
func (t *Terminal) Received() uint64 { return t.received }

// gap returns the cycle of the next Bernoulli success after cycle c
// (geometric inter-arrival times: the same process as a trial per cycle,
// without an event per cycle).
func (t *Terminal) gap(c uint64) uint64 {
	if t.cfg.Pattern == nil {
		return math.MaxUint64
	}
	return t.cfg.Injection.Next(c, t.rng)
}

func (t *Terminal) firstEvent() uint64 {
	c := uint64(math.MaxUint64)
	if t.generating(t.nextGen) {
		c = t.nextGen
	}
	if t.replayAt < len(t.cfg.Replay) {
		c = min(c, t.cfg.Replay[t.replayAt].Cycle)
	}
	return c
}

func (t *Terminal) newPacket(created uint64, dst, flits int) *Packet {
	t.seq++
	p := &Packet{ID: uint64(t.id)<<40 | t.seq, Src: t.id, Dst: dst, Flits: flits, Created: created}
	if t.shared != nil && t.shared.Stats != nil {
		p.Measured = t.shared.Stats.Created(created, flits)
	}
	if t.shared != nil && t.shared.Packets != nil {
		t.shared.Packets.Sent(t.Clock().TimeOf(clock.Cycle(created)), p.ID)
	}
	return p
}

// Tick implements clock.Ticker: eject, create, inject.
func (t *Terminal) Tick(now clock.Time) bool {
	c := uint64(t.Clock().CycleAt(now))
	t.eject(now, c)
	t.generate(c)
	t.inject(now, c)
	if t.cur != nil || len(t.queue) > 0 {
		return true
	}
	if next := t.firstEvent(); next != math.MaxUint64 {
		t.WakeAt(t.Clock().TimeOf(clock.Cycle(next)))
	}
	return false
}

func (t *Terminal) generate(c uint64) {
	for t.nextGen <= c && t.generating(t.nextGen) {
		if d := t.cfg.Pattern.Dest(t.id, t.rng); d >= 0 {
			t.queue = append(t.queue, t.newPacket(t.nextGen, d, t.cfg.Sizes.Draw(t.rng)))
		}
		t.nextGen = t.gap(t.nextGen + 1)
	}
	for t.replayAt < len(t.cfg.Replay) && t.cfg.Replay[t.replayAt].Cycle <= c {
		r := t.cfg.Replay[t.replayAt]
		t.queue = append(t.queue, t.newPacket(r.Cycle, r.Dst, r.Size))
		t.replayAt++
	}
}

// freeVC reports whether injection VC v can take a new packet: not held,
// or held by a packet whose tail's credit is back.
func (t *Terminal) freeVC(now clock.Time, v int) bool {
	if t.vcBusy[v] && t.vcTail[v] && t.out.Outstanding(now, v) == 0 {
		t.vcBusy[v] = false
	}
	return !t.vcBusy[v]
}

func (t *Terminal) inject(now clock.Time, c uint64) {
	if t.cur == nil && len(t.queue) > 0 {
		n := t.cfg.VCs
		for i := 1; i <= n; i++ {
			v := (t.lastVC + i) % n
			if t.freeVC(now, v) && t.out.Available(now, v) > 0 {
				t.cur, t.queue = t.queue[0], t.queue[1:]
				t.curFlit, t.curVC, t.lastVC = 0, v, v
				t.vcBusy[v], t.vcTail[v] = true, false
				break
			}
		}
	}
	if t.cur == nil || !t.out.CanSend(now, t.curVC) {
		return
	}
	p := t.cur
	if t.curFlit == 0 {
		t.curInfo = &link.PacketInfo{ID: p.ID, Src: p.Src, Dst: p.Dst, Meta: p}
	}
	f := link.Flit{Info: t.curInfo, Seq: int32(t.curFlit), VC: uint8(t.curVC), Head: t.curFlit == 0, Tail: t.curFlit == p.Flits-1,
		Size: int32(t.cfg.FlitBytes), Stamp: now, Carries: link.HasMeta}
	if f.Head && t.cfg.Route != nil {
		t.curInfo.Route = t.cfg.Route(p.Src, p.Dst) // on the head only
		f.Carries |= link.HasRoute
	}
	if t.cfg.Payload {
		f.Data = make([]byte, t.cfg.FlitBytes)
		for i := range f.Data {
			f.Data[i] = byte(p.ID>>(8*(i%8))) ^ byte(t.curFlit+i)
		}
	}
	if f.Head {
		p.Injected = c // the head enters the network
	}
	t.out.Send(now, &f)
	t.sent++
	t.curFlit++
	if f.Tail {
		t.vcTail[t.curVC] = true
		t.cur = nil
	}
}

func (t *Terminal) eject(now clock.Time, c uint64) {
	// The VCs in ascending order, as a scan of all of them, skipping those
	// with nothing received.
	for m := t.rxVCs; m != 0; m &= m - 1 {
		v := bits.TrailingZeros64(m)
		rx := t.in.Rx(v)
		t.ejectVC(now, c, rx)
		if rx.Len() == 0 {
			t.rxVCs &^= 1 << uint(v)
		}
	}
}

// ejectVC takes the visible flits of one ejection VC.
func (t *Terminal) ejectVC(now clock.Time, c uint64, rx *fifo.FIFO[link.Flit]) {
	for rx.Front(now) != nil {
		f, ok := rx.Pop(now)
		if !ok {
			break
		}
		t.received++
		p, _ := f.Meta().(*Packet)
		if p == nil {
			t.env.Report(now, t.Name(), "terminal.protocol", "flit %v without a packet", f)
			continue
		}
		if p.Dst != t.id {
			t.env.Report(now, t.Name(), "misroute", "%v delivered to terminal %d", p, t.id)
		}
		sh := t.shared
		if sh != nil && sh.Stats != nil {
			sh.Stats.FlitArrived(c, uint64(t.Clock().CycleAt(f.Stamp)), p.Created)
		}
		if !f.Tail {
			continue
		}
		if f.Bad {
			// The CRC caught an error on the way: counted, never
			// delivered.
			t.crcDrops++
			if sh != nil && sh.Packets != nil {
				sh.Packets.Dropped(now, p.ID)
			}
			if sh != nil && sh.Stats != nil {
				sh.Stats.Dropped(p.Created)
			}
			if sh != nil && sh.OnDrop != nil {
				sh.OnDrop(now, p)
			}
			if t.env.Trace.Enabled() {
				t.env.Trace.Emit(now, t.Clock().CycleAt(now), t.Name(), "net.crcdrop", trace.Uint("pkt", p.ID),
					trace.Int("src", int64(p.Src)), trace.Int("dst", int64(p.Dst)))
			}
			continue
		}
		t.ejected++
		switch {
		case t.swapEvery > 0 && t.held[p.Src] == nil && t.ejected%t.swapEvery == 0:
			t.held[p.Src] = p // mutation: delivered after the next one
		case t.swapEvery > 0 && t.held[p.Src] != nil:
			t.deliver(now, c, p)
			t.deliver(now, c, t.held[p.Src])
			delete(t.held, p.Src)
		default:
			t.deliver(now, c, p)
			if t.dupEvery > 0 && t.ejected%t.dupEvery == 0 {
				t.deliver(now, c, p) // mutation
			}
		}
	}
}

// deliver hands a packet whose tail arrived intact to the checkers, the
// statistics and the hooks, and traces it.
func (t *Terminal) deliver(now clock.Time, c uint64, p *Packet) {
	sh := t.shared
	if sh != nil {
		if sh.Packets != nil {
			sh.Packets.Received(now, p.ID)
		}
		if sh.Order != nil {
			sh.Order.Observe(now, [2]int{p.Src, p.Dst}, p.ID&(1<<40-1))
		}
		if sh.Stats != nil {
			sh.Stats.Delivered(stats.Packet{Src: p.Src, Dst: p.Dst, Flits: p.Flits, Created: p.Created,
				Injected: p.Injected, Delivered: c, Hops: p.Hops})
		}
		if sh.OnDeliver != nil {
			sh.OnDeliver(now, p)
		}
	}
	if t.env.Trace.Enabled() {
		t.env.Trace.Emit(now, t.Clock().CycleAt(now), t.Name(), "net.deliver", trace.Uint("pkt", p.ID),
			trace.Int("src", int64(p.Src)), trace.Int("dst", int64(p.Dst)), trace.Int("flits", int64(p.Flits)),
			trace.Uint("created", p.Created), trace.Int("hops", int64(p.Hops)))
	}
}

// Idle implements check.Unit.
// Trace records not yet replayed are work left undone.
func (t *Terminal) Idle() bool {
	return t.cur == nil && len(t.queue) == 0 && t.replayAt == len(t.cfg.Replay)
}

// State implements check.Unit.
func (t *Terminal) State() string {
	return fmt.Sprintf("%d packets queued, sending %v (flit %d)", len(t.queue), t.cur, t.curFlit)
}
