// Package link models a full-duplex point-to-point link: in each direction
// flits are serialised at BytesPerCycle, cross the wire in DelayCycles and
// land in the receiver's buffer, under credit-based (per virtual channel) or
// STOP/GO (slack buffer) flow control. The transmitter appends a CRC-32 to
// every packet and the receiver checks it, so the optional seeded corruption
// is always detected, counted and flagged on the packet's tail flit, never
// delivered silently; seeded drops lose whole packets and are counted. A
// direction's FaultPlan drops or corrupts chosen packets the same way,
// deterministically (issue 17 section 2).
//
// The receive buffers belong to the link: a router or NI pops its input
// flits from Dir.Rx, and each pop returns a credit (or lowers the slack
// occupancy) towards the sender.
package link

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"

	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Test-only faults (see env.DeclareMutation); either switches the link onto
// its slow path.
var (
	mutLose = env.DeclareMutation("link.lose",
		"every Nth packet sent on a link direction vanishes on the wire: its credits come back as if it had been received, "+
			"nothing counts or traces the loss (caught by the conservation checkers: lost)")
	mutLeak = env.DeclareMutation("link.leak",
		"every Nth flit sent on a credit link direction is lost on the wire and its credit never returns "+
			"(caught by credit conservation, link.credits; the packet it belonged to is left incomplete)")
)

// PacketInfo is what every flit of a packet shares: one per packet (or
// per fan-out copy a switch makes), behind one pointer so a flit fits one
// cache line. Once the packet's head is sent it is never changed: a hop
// that must change it (an ATM switch's VCI translation, a hub's fan-out to
// another destination) gives its copies a new PacketInfo. The garbage
// collector owns it; receivers may keep it after delivery.
type PacketInfo struct {
	// ID identifies the packet (unique per sender).
	ID uint64
	// Src and Dst are endpoint numbers.
	Src, Dst int
	// Route is a source route that source-routed switches consume (one
	// byte per hop, counted in Flit.hop), or a cell's header.
	Route []byte
	// Meta is the upper layer's message; links never look at it.
	Meta any
}

// Flit is the unit a link carries. A packet is a run of flits on one VC
// from a Head to a Tail flit (a one-flit packet has both). It is 56 bytes
// (a FIFO entry with its time, 64: one cache line); what the packet's
// flits share is behind Info.
type Flit struct {
	// Info is the packet's shared part (nil reads as zero values).
	Info *PacketInfo
	// Stamp is set by the endpoint that injected the flit (its injection
	// time); links and switches pass it on, so flit latencies can be
	// measured end to end.
	Stamp clock.Time
	// Data is the payload the flit carries.
	Data []byte
	// Seq is the flit's position in its packet.
	Seq int32
	// Size is the flit's size on the wire in bytes (header and framing
	// included); 0 means len(Data).
	Size int32
	// VC is the virtual channel the flit travels on (a router rewrites it
	// on its own copy at each hop).
	VC         uint8
	Head, Tail bool
	// Bad marks a tail whose CRC check failed at the receiver (the
	// packet's CRC-32 travels in the link's own wire record, not in the
	// flit).
	Bad bool
	// Carries says which of the packet's shared Route and Meta this flit
	// carries (HasRoute, HasMeta): a producer may put them on some flits
	// only (a head), and the others read them as nil.
	Carries uint8
	// mark is the link's own note on a flit it loses on the wire
	// (markLost, markSilent); zero everywhere outside the link.
	mark uint8
	// hop counts the route bytes source-routed switches have consumed.
	hop uint16
}

// MaxFlitBytes bounds a flit's size on the wire (Flit.Size), for the
// builders of components that cut packets into flits (assumed: far above
// any flit the modelled networks carry, 4 KB at most, and well inside
// Size's int32).
const MaxFlitBytes = 1 << 20

// Flit.Carries bits.
const (
	// HasRoute: the flit carries its packet's Route.
	HasRoute uint8 = 1 << iota
	// HasMeta: the flit carries its packet's Meta.
	HasMeta
)

// Packet returns the packet's ID (0 without Info).
func (f Flit) Packet() uint64 {
	if f.Info == nil {
		return 0
	}
	return f.Info.ID
}

// Src returns the packet's source endpoint (0 without Info).
func (f Flit) Src() int {
	if f.Info == nil {
		return 0
	}
	return f.Info.Src
}

// Dst returns the packet's destination endpoint (0 without Info).
func (f Flit) Dst() int {
	if f.Info == nil {
		return 0
	}
	return f.Info.Dst
}

// Route returns what is left of the packet's route on a flit that
// carries it (nil on one that does not).
func (f Flit) Route() []byte {
	if f.Carries&HasRoute == 0 || f.Info == nil {
		return nil
	}
	return f.Info.Route[f.hop:]
}

// Meta returns the upper layer's message on a flit that carries it (nil on
// one that does not).
func (f Flit) Meta() any {
	if f.Carries&HasMeta == 0 || f.Info == nil {
		return nil
	}
	return f.Info.Meta
}

// SetRoute gives this copy of the flit the route r (a cell's rewritten
// header): it gets its own copy of the packet's shared part, so other
// flits and copies of the packet keep theirs.
func (f *Flit) SetRoute(r []byte) {
	var ni PacketInfo
	if f.Info != nil {
		ni = *f.Info
	}
	ni.Route = r
	f.Info = &ni
	f.hop = 0
	f.Carries |= HasRoute
}

// StripRoute consumes the first byte of the flit's route (a source-routed
// switch's hop), on this copy of the flit only.
func (f *Flit) StripRoute() { f.hop++ }

// WireBytes returns the flit's size on the wire.
func (f Flit) WireBytes() int {
	if f.Size > 0 {
		return int(f.Size)
	}
	return max(len(f.Data), 1)
}

func (f Flit) String() string {
	s := fmt.Sprintf("pkt %d flit %d vc %d %dB", f.Packet(), f.Seq, f.VC, f.WireBytes())
	if f.Head {
		s += " head"
	}
	if f.Tail {
		s += " tail"
	}
	return s
}

// Side names the two ends of a link.
type Side uint8

// Link ends.
const (
	A Side = iota
	B
)

// Builder configures a Link.
type Builder struct {
	env    *env.Env
	cfg    Config
	faults [2]FaultPlan
}

// MakeBuilder returns a builder; WithConfig is required.
func MakeBuilder() Builder { return Builder{} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithConfig sets the parameters.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithFaults sets the fault plan of the direction whose sender is at side
// s (see Dir.SetFaultPlan).
func (b Builder) WithFaults(s Side, p FaultPlan) Builder {
	b.faults[s] = slices.Clone(p)
	return b
}

// Build creates the link.
func (b Builder) Build(name string) (*Link, error) {
	if b.env == nil {
		return nil, fmt.Errorf("%s: no env", name)
	}
	if err := b.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i, p := range b.faults {
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", name, dirNames[i], err)
		}
	}
	cfg := b.cfg
	if cfg.FlowControl == StopGo {
		cfg.VCs = 1
	}
	l := &Link{env: b.env, cfg: cfg}
	l.Ticking = clock.NewTicking(name, b.env.Engine, cfg.Clock, l)
	for i, dn := range dirNames {
		d, err := newDir(l, name+"."+dn)
		if err != nil {
			return nil, err
		}
		if len(b.faults[i]) > 0 {
			d.plan = &dirPlan{faults: b.faults[i].sorted()}
			d.fast = false
		}
		d.creditDelay = cfg.CreditDelay
		if i == 1 && cfg.CreditDelayBA > 0 {
			d.creditDelay = cfg.CreditDelayBA
		}
		l.dirs[i] = d
	}
	b.env.Register(l)
	return l, nil
}

// dirPlan is a direction's fault plan sorted by packet number, and the
// next entry due.
type dirPlan struct {
	faults FaultPlan
	next   int
}

// dirNames are the directions' name suffixes, by sending side.
var dirNames = [2]string{"AB", "BA"}

// Link is a clocked full-duplex link.
type Link struct {
	*clock.Ticking
	env  *env.Env
	cfg  Config
	dirs [2]*Dir
}

// Config returns the link's parameters.
func (l *Link) Config() Config { return l.cfg }

// From returns the direction whose sender is at side s.
func (l *Link) From(s Side) *Dir { return l.dirs[s] }

// Dir is one direction of a link.
type Dir struct {
	l    *Link
	name string
	tx   []*fifo.FIFO[Flit] // nil when TxDepth is 0
	vc   []dirVC
	rng  *rand.Rand

	sender, receiver clock.Waker
	onArrive         func(at clock.Time, vc int)

	creditDelay int
	shared      bool // one credit pool for all VCs (index 0)
	fast        bool // flits land in the receive buffer at send time, visible later

	// transmitter
	busyUntil clock.Time // first edge the serialiser is free
	stopped   bool       // STOP seen by the sender
	waitGo    bool
	rr        int

	// wire and return path, each in time order
	wire     queue.Queue[arrival]
	creditQ  queue.Queue[creditReturn]
	controlQ queue.Queue[control]

	// receiver
	rxBytes  int
	stopSent bool

	stats Stats

	// test-only faults: every loseEvery-th packet, every leakEvery-th flit
	loseEvery, leakEvery int
	heads, flits         int
	// corruptIn counts down the heads to the packet CorruptPacket armed
	// (0: none armed).
	corruptIn int
	// plan is the fault plan (nil: none; behind a pointer to keep a
	// direction small).
	plan *dirPlan

	sigBusy, sigVC, sigStop, sigSlack *waves.Signal
}

// dirVC is a direction's state of one VC, in one slice (one allocation per
// direction rather than one per field: issue 16, a 32x32 mesh has 6,016
// directions). The credit fields of a shared buffer live in VC 0's entry
// (Dir.ci). Counts are int32: credits are bounded by BufferFlits, which
// Config.Validate keeps below 2^31.
type dirVC struct {
	rx         *fifo.FIFO[Flit]
	sigCredits *waves.Signal // nil unless selected (Credits only)
	rxData     []byte        // the packet being received, for its trace hash

	credits   int32 // per credit counter: the sender's credits
	returning int32 // per credit counter: credits on their way back
	onWire    int32 // flits on the wire
	outstand  int32 // flits sent whose credit has not been applied
	rxFlits   int32 // flits of the packet being received
	txCRC     uint32
	rxCRC     uint32
	waitCred  bool // per credit counter: the sender found no credit and wants a wake-up
	fate      fate // what happens to the packet being sent
}

type fate uint8

const (
	intact fate = iota
	corrupt
	lost
	vanish // lost by the link.lose mutation: not counted
	// corruptPlanned is a fault plan's corruption: the first data byte's
	// lowest bit flips, so that no random draw is spent on it and the
	// other packets' random fates stay those of the run without a plan.
	corruptPlanned
)

// arrival is a flit on the wire, with the CRC-32 its transmitter computed
// over the packet so far (what the receiver checks at the tail).
type arrival struct {
	at  clock.Time
	f   Flit
	crc uint32
}

type creditReturn struct {
	at clock.Time
	vc int
}

type control struct {
	at   clock.Time
	stop bool
}

// Stats are a direction's counters.
type Stats struct {
	Flits, Packets, Bytes uint64
	// CRCErrors counts packets whose check failed; Corrupted and Dropped
	// count the injected errors.
	CRCErrors, Corrupted, Dropped uint64
	// BadPackets counts packets received with a Bad tail: whose check
	// failed here or on an earlier hop of a network that keeps the mark
	// (a Myrinet switch), so that on a direction into an NI it is what
	// the NI's CRC check sees.
	BadPackets uint64
	// CreditStalls counts the times a sender ran out of credits for a VC
	// (once per wait, however long); StopStalls the times a sender found
	// itself stopped (once per wait for GO, however long, so the count does
	// not depend on how often a sender asks).
	CreditStalls, StopStalls uint64
	BusyCycles               uint64
	MaxRxBytes               int
	// Overflows counts flits dropped at a full receive buffer
	// (NoFlowControl only; with flow control an overflow is a violation).
	Overflows uint64
}

func newDir(l *Link, name string) (*Dir, error) {
	cfg := l.cfg
	d := &Dir{l: l, name: name, rng: l.env.Rand(name), shared: cfg.SharedBuffer && cfg.FlowControl == Credits}
	// Without error injection or tracing nothing needs to happen when a
	// flit lands, so it is put into the receive buffer when it is sent,
	// visible from its arrival edge on, and the link never ticks for it.
	d.loseEvery, d.leakEvery = l.env.Mutation(mutLose), l.env.Mutation(mutLeak)
	if cfg.FlowControl != Credits {
		d.leakEvery = 0 // no credits to leak
	}
	d.fast = cfg.FlowControl == Credits && cfg.CorruptProb == 0 && cfg.DropProb == 0 && !l.env.Trace.Enabled() &&
		d.loseEvery == 0 && d.leakEvery == 0
	depth := cfg.BufferFlits
	if cfg.FlowControl == StopGo {
		depth = cfg.SlackBytes // a flit is at least one byte
	}
	reg := l.env.Waves
	d.vc = make([]dirVC, cfg.VCs)
	pop := d.popped // one method value for all receive buffers
	for vc := range cfg.VCs {
		v := &d.vc[vc]
		if cfg.TxDepth > 0 {
			tx, err := fifo.MakeBuilder[Flit]().WithEnv(l.env).WithDepth(cfg.TxDepth).WithWidth(8 * max(cfg.BytesPerCycle, 1)).
				Build(fmt.Sprintf("%s.Tx[%d]", name, vc))
			if err != nil {
				return nil, err
			}
			tx.SetConsumer(l)
			d.tx = append(d.tx, tx)
		} else if reg != nil {
			// No transmit queue: waveforms show it as the queue of depth 1
			// a router's link had before, always empty (the signals a FIFO
			// declares, never set), so that a mesh's VCD keeps its rows.
			txName := fmt.Sprintf("%s.Tx[%d]", name, vc)
			reg.Integer(txName, "occupancy", waves.WidthFor(1))
			reg.Wire(txName, "full", 1)
		}
		rxb := fifo.MakeBuilder[Flit]().WithEnv(l.env).WithDepth(depth).WithWidth(8 * max(cfg.BytesPerCycle, 1))
		if cfg.FlowControl == NoFlowControl {
			rxb = rxb.WithOverflow(fifo.Drop)
		}
		rx, err := rxb.BuildNamed(d, vc) // named on demand (FIFOName)
		if err != nil {
			return nil, err
		}
		rx.OnPop(pop)
		v.rx = rx
		v.credits = int32(cfg.BufferFlits)
		if cfg.FlowControl == Credits && (vc == 0 || !d.shared) && reg != nil {
			v.sigCredits = reg.Integer(name, fmt.Sprintf("credits%d", vc), waves.WidthFor(uint64(cfg.BufferFlits)))
			v.sigCredits.Set(0, uint64(cfg.BufferFlits))
		}
	}
	// busy: a flit is being serialised; vc: the number of the virtual
	// channel whose flit it is (tx<vc>, credits<vc>); stop and slack (STOP/
	// GO links): the receiver's STOP line and the free bytes of its slack
	// buffer; credits<vc>: the sender's credits for that VC.
	d.sigBusy = reg.Wire(name, "busy", 1)
	d.sigVC = reg.Integer(name, "vc", waves.WidthFor(uint64(cfg.VCs)))
	if cfg.FlowControl == StopGo {
		d.sigStop = reg.Wire(name, "stop", 1)
		d.sigSlack = reg.Integer(name, "slack", waves.WidthFor(uint64(cfg.SlackBytes)))
	}
	return d, nil
}

// Name returns the direction's name.
func (d *Dir) Name() string { return d.name }

// FIFOName implements fifo.Namer for the receive buffers: VC i's is
// "<direction>.Rx[i]". (They keep no name strings: a 32x32 mesh has 48,128.)
func (d *Dir) FIFOName(i int) string { return fmt.Sprintf("%s.Rx[%d]", d.name, i) }

// Tx returns the transmit queue of a VC, for senders that hand flits to the
// link's own transmitter. (A router that drives the link itself uses
// CanSend and Send instead.) A link built with TxDepth 0 has no transmit
// queues: a component that needs them checks HasTx, or its configuration's
// TxDepth, when it is built; Tx on such a link is a wiring bug and panics
// with a message naming the direction.
func (d *Dir) Tx(vc int) *fifo.FIFO[Flit] {
	if d.tx == nil {
		panic(fmt.Sprintf("link %s: Tx(%d): the link was built with TxDepth 0 (no transmit queues); its sender must use CanSend and Send", d.name, vc))
	}
	return d.tx[vc]
}

// HasTx reports whether the direction has transmit queues (TxDepth > 0).
func (d *Dir) HasTx() bool { return d.tx != nil }

// Rx returns the receive buffer of a VC; the receiver pops flits from it,
// and each pop returns a credit (or frees slack) towards the sender.
func (d *Dir) Rx(vc int) *fifo.FIFO[Flit] { return d.vc[vc].rx }

// Connect names the sender (woken when a transmit queue has room, a credit
// returns or GO arrives) and the receiver (woken when a flit arrives).
func (d *Dir) Connect(sender, receiver clock.Waker) {
	d.sender, d.receiver = sender, receiver
	for _, t := range d.tx {
		t.SetProducer(sender)
	}
	for i := range d.vc {
		d.vc[i].rx.SetConsumer(receiver)
	}
}

// ci is the credit counter a VC uses: its own, or the shared pool's.
func (d *Dir) ci(vc int) int {
	if d.shared {
		return 0
	}
	return vc
}

// OnArrive sets a callback run whenever a flit is put into a receive
// buffer, with the time after which it is visible (the receiver sees it from
// its first edge after at) and its VC. A router uses it to learn which VC
// to look at instead of scanning them all.
func (d *Dir) OnArrive(fn func(at clock.Time, vc int)) { d.onArrive = fn }

// SetSender names only the sender (see Connect).
func (d *Dir) SetSender(w clock.Waker) {
	d.sender = w
	for _, t := range d.tx {
		t.SetProducer(w)
	}
}

// SetReceiver names only the receiver (see Connect).
func (d *Dir) SetReceiver(w clock.Waker) {
	d.receiver = w
	for i := range d.vc {
		d.vc[i].rx.SetConsumer(w)
	}
}

// BusyUntil returns the first edge at which the serialiser is free, so a
// direct sender waiting for it can sleep until then (WakeAt).
func (d *Dir) BusyUntil() clock.Time { return d.busyUntil }

// Credits returns the sender's credits for a VC as last applied (for
// inspection; senders use Available).
func (d *Dir) Credits(vc int) int { return int(d.vc[vc].credits) }

// Available returns the credits for vc usable at now: those returned by
// now are applied first. With Credits flow control, a zero answer
// registers the sender for a wake-up when the next credit of vc is usable.
// With STOP/GO it returns 1 while the sender may send and 0 under STOP.
func (d *Dir) Available(now clock.Time, vc int) int {
	d.applyReturns(now)
	if d.l.cfg.FlowControl == NoFlowControl {
		return 1
	}
	if d.l.cfg.FlowControl == StopGo {
		if d.stopped {
			if !d.waitGo {
				d.waitGo = true
				d.stats.StopStalls++
			}
			// A GO already on its way (sent before this query, in the
			// same picosecond or earlier) must wake the sender too.
			for i := range d.controlQ.Len() {
				if c := d.controlQ.At(i); !c.stop && d.sender != nil {
					d.sender.WakeAt(c.at)
					break
				}
			}
			return 0
		}
		return 1
	}
	k := d.ci(vc)
	c := &d.vc[k]
	if c.credits == 0 {
		if !c.waitCred {
			c.waitCred = true
			d.stats.CreditStalls++
		}
		if d.creditQ.Len() > 0 {
			d.wakeSenderForCredit(k)
		}
	}
	return int(c.credits)
}

// Outstanding returns the flits sent on vc whose credits the sender has not
// got back by now: the downstream occupancy of the VC as the sender knows it.
func (d *Dir) Outstanding(now clock.Time, vc int) int {
	d.applyReturns(now)
	return int(d.vc[vc].outstand)
}

// wakeSenderForCredit schedules the sender at the first pending return for
// credit counter k (later returns wake it through popped).
func (d *Dir) wakeSenderForCredit(k int) {
	for i := range d.creditQ.Len() {
		if c := d.creditQ.At(i); d.ci(c.vc) == k {
			if d.sender != nil {
				d.sender.WakeAt(c.at)
			}
			if d.pending(0) {
				d.l.WakeAt(c.at) // the link's own transmitter waits for it too
			}
			return
		}
	}
}

// Idle reports whether the serialiser is free at now.
func (d *Dir) Idle(now clock.Time) bool { return now >= d.busyUntil }

// CanSend reports whether a flit on vc can start at now: the serialiser is
// free and there is a credit (or GO).
func (d *Dir) CanSend(now clock.Time, vc int) bool {
	return now >= d.busyUntil && d.Available(now, vc) > 0
}

// SerialCycles returns how many cycles a flit occupies the serialiser.
func (d *Dir) SerialCycles(f *Flit) int {
	bpc := d.l.cfg.BytesPerCycle
	return (f.WireBytes() + bpc - 1) / bpc
}

// Send starts f on the wire at now (the sender must have checked
// CanSend). A flit of s serialisation cycles sent at edge t is visible to
// the receiver from edge t + s + DelayCycles: with no wire delay a one-cycle
// flit behaves like a register between the two components. The link copies
// *f and never changes the caller's flit.
func (d *Dir) Send(now clock.Time, f *Flit) bool {
	cfg := &d.l.cfg
	if !d.CanSend(now, int(f.VC)) {
		d.l.env.Report(now, d.name, "link.protocol", "send of %v without a credit or while busy", *f)
		return false
	}
	if cfg.FlowControl == Credits {
		c := &d.vc[d.ci(int(f.VC))]
		c.credits--
		d.vc[f.VC].outstand++
		c.sigCredits.Set(now, uint64(c.credits))
	}
	var crc uint32
	if !d.fast { // the fast path has no errors to inject and no CRC to check
		g := *f // the link's own copy: marks and corruption stay on it
		f = &g
		crc = d.prepare(now, f)
	}
	if v := &d.vc[f.VC]; (v.fate == corrupt || v.fate == corruptPlanned) && len(f.Data) > 0 {
		f.Data = append([]byte(nil), f.Data...)
		bit := 0
		if v.fate == corrupt {
			bit = d.rng.IntN(8 * len(f.Data))
		}
		f.Data[bit/8] ^= 1 << (bit % 8)
		v.fate = intact // one flipped bit per packet
	}
	s := d.SerialCycles(f)
	clk := cfg.Clock
	d.busyUntil = clk.After(now, clock.Cycle(s))
	d.stats.BusyCycles += uint64(s)
	d.sigVC.Set(now, uint64(f.VC))
	if d.sigBusy != nil {
		d.sigBusy.SetBool(now, true)
		d.l.WakeAt(d.busyUntil) // only to draw the busy signal falling
	}
	at := clk.After(now, clock.Cycle(s-1+cfg.DelayCycles))
	switch {
	case d.fast:
		d.land(now, at, f)
	case d.leak():
		// Mutation: gone, and its credit with it.
	case at <= now:
		d.vc[f.VC].onWire++
		d.arrive(now, f, crc)
	default:
		d.vc[f.VC].onWire++
		d.wire.Push(arrival{at: at, f: *f, crc: crc})
		d.l.WakeAt(at)
	}
	d.checkCredits(now, int(f.VC))
	return true
}

// CorruptPacket arms a directed link error, the hook a testbench's
// negative test uses to corrupt a chosen packet (CorruptProb corrupts
// seeded random ones): the n-th packet whose head this direction sends
// from now on (n = 1: the next one) has one bit of a flit's data flipped on
// the wire, as a CorruptProb error: counted in Corrupted, caught by the
// receiver's CRC check (CRCErrors, its tail flit marked Bad, link.packet
// crc=bad), never delivered as good. A packet the link loses instead
// (DropProb, the link.lose mutation) uses up the count. Arming again
// replaces the count. The error check needs the direction's slow path:
// on a link without error injection or tracing, arm it before the
// direction has sent a flit (before the run); an error says so, and n < 1
// is an error. (SetFaultPlan numbers packets from the direction's first
// instead, and drops as well as corrupts.)
func (d *Dir) CorruptPacket(n int) error {
	switch {
	case n < 1:
		return fmt.Errorf("link %s: CorruptPacket(%d): the packet number must be at least 1", d.name, n)
	case d.fast && d.stats.Flits > 0:
		return fmt.Errorf("link %s: CorruptPacket after %d flits were sent without a CRC check (arm it before the run)", d.name, d.stats.Flits)
	}
	d.fast = false
	d.corruptIn = n
	return nil
}

// SetFaultPlan gives the direction a deterministic fault plan (replacing
// any): the N-th packet whose head it sends, counted from 1 at its first
// packet, is dropped or corrupted on the wire exactly as DropProb's and
// CorruptProb's random errors are (same counters, same link.drop and
// link.packet crc=bad records, same flow control: a dropped packet's
// flits never occupy the receive buffer, their credits return at once,
// and on a STOP/GO link they never count in the slack buffer). A packet
// the link.lose mutation makes vanish keeps that fate. Packet numbers are
// counted from the direction's first packet, so the plan must be set
// before the direction sends a flit (before the run); an error says so,
// and an invalid plan (FaultPlan.Validate) is an error naming the
// direction.
func (d *Dir) SetFaultPlan(p FaultPlan) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("link %s: %w", d.name, err)
	}
	if d.stats.BusyCycles > 0 {
		return fmt.Errorf("link %s: fault plan set after the direction sent %d serialiser cycles of flits (set it before the run)", d.name, d.stats.BusyCycles)
	}
	d.plan = nil
	if len(p) > 0 {
		d.plan = &dirPlan{faults: p.sorted()}
		d.fast = false
	}
	return nil
}

// FaultPlan returns the direction's fault plan, sorted by packet number.
func (d *Dir) FaultPlan() FaultPlan {
	if d.plan == nil {
		return nil
	}
	return slices.Clone(d.plan.faults)
}

// planned returns the planned fault of the direction's head-th packet (0:
// none). Heads are counted one by one, so the entry due is the next one.
func (d *Dir) planned(head int) FaultKind {
	if d.plan == nil || d.plan.next >= len(d.plan.faults) || d.plan.faults[d.plan.next].N != head {
		return 0
	}
	d.plan.next++
	return d.plan.faults[d.plan.next-1].Kind
}

// leak counts a flit for the link.leak mutation and reports whether it is
// the one to lose.
func (d *Dir) leak() bool {
	if d.leakEvery == 0 {
		return false
	}
	d.flits++
	return d.flits%d.leakEvery == 0
}

// land puts a flit straight into the receive buffer at send time, visible
// after its arrival edge at (the fast path: no errors to inject, nothing to
// trace, credits guarantee the room).
func (d *Dir) land(now, at clock.Time, f *Flit) {
	if !d.vc[f.VC].rx.PushAtPtr(now, at, f) {
		return // overflow reported by the FIFO
	}
	size := f.WireBytes()
	d.rxBytes += size
	d.stats.MaxRxBytes = max(d.stats.MaxRxBytes, d.rxBytes)
	d.stats.Flits++
	d.stats.Bytes += uint64(size)
	if f.Tail {
		d.stats.Packets++
	}
	if d.onArrive != nil {
		d.onArrive(at, int(f.VC))
	}
}

// pump is the link's own transmitter for flits left in the transmit
// queues: round-robin over VCs with a visible flit and a credit (or GO).
// It reports whether flits still wait in the queues.
//
// It does not poll: a flit that waits for the serialiser wakes the link
// when it is free, one that waits for a credit when the credit returns
// (returnCredit), one under STOP when GO arrives (signal), and a flit
// pushed later wakes it through its FIFO.
func (d *Dir) pump(now clock.Time) bool {
	waiting := false
	for i := range d.tx {
		vc := (d.rr + i) % len(d.tx)
		if !d.tx[vc].CanPop(now) {
			continue
		}
		waiting = true
		if now < d.busyUntil {
			d.l.WakeAt(d.busyUntil)
			return false
		}
		if d.Available(now, vc) == 0 {
			continue
		}
		f := *d.tx[vc].Front(now) // copied out before the pop, as Pop does
		d.tx[vc].Drop(now)
		d.rr = (vc + 1) % len(d.tx)
		d.Send(now, &f)
		return d.pending(now)
	}
	if waiting && d.l.cfg.FlowControl == StopGo {
		return true // STOP: GO wakes only the sender it names; keep looking
	}
	return false
}

// pending reports whether a transmit queue holds a flit.
func (d *Dir) pending(now clock.Time) bool {
	for _, t := range d.tx {
		if t.Len() > 0 {
			return true
		}
	}
	return false
}

// Tick implements clock.Ticker for both directions: deliver flits whose
// wire delay has passed, apply returned credits and STOP/GO, and run the
// transmitters of flits left in the transmit queues. A link whose senders
// drive it directly with no wire delay never ticks.
func (l *Link) Tick(now clock.Time) bool {
	busy := false
	for _, d := range l.dirs {
		d.deliver(now)
		d.applyReturns(now)
		busy = d.pump(now) || busy
		if now >= d.busyUntil {
			d.sigBusy.SetBool(now, false)
		}
	}
	return busy
}

// prepare decides the packet's fate at its head, marks a flit the wire
// loses, and returns the packet's CRC-32 over its flits so far (the tail's
// is what the receiver checks).
func (d *Dir) prepare(now clock.Time, f *Flit) uint32 {
	cfg := &d.l.cfg
	v := &d.vc[f.VC]
	if f.Head {
		v.txCRC = 0
		v.fate = intact
		d.heads++
		// The random draws happen whether or not the packet is planned,
		// so a plan changes no other packet's random fate.
		if d.loseEvery > 0 && d.heads%d.loseEvery == 0 {
			v.fate = vanish
		} else if cfg.DropProb > 0 && d.rng.Float64() < cfg.DropProb {
			v.fate = lost
		} else if cfg.CorruptProb > 0 && d.rng.Float64() < cfg.CorruptProb {
			v.fate = corrupt
		}
		if k := d.planned(d.heads); k != 0 && v.fate != vanish {
			v.fate = lost
			if k == Corrupt {
				v.fate = corruptPlanned
			}
		}
		switch v.fate {
		case lost:
			d.stats.Dropped++
		case corrupt, corruptPlanned:
			d.stats.Corrupted++
		}
		if d.corruptIn > 0 {
			d.corruptIn--
			if d.corruptIn == 0 && v.fate == intact {
				v.fate = corrupt
				d.stats.Corrupted++
			}
		}
	}
	v.txCRC = crc32.Update(v.txCRC, crc32.IEEETable, f.Data)
	switch v.fate {
	case lost:
		f.mark = markLost
	case vanish:
		f.mark = markLost | markSilent
	}
	return v.txCRC
}

// Flit.mark bits: a flit lost on the wire; a silent loss (the link.lose
// mutation) leaves no trace record.
const (
	markLost uint8 = 1 << iota
	markSilent
)

// deliver moves flits whose wire delay has passed into the receive buffer.
func (d *Dir) deliver(now clock.Time) {
	for d.wire.Len() > 0 && d.wire.Front().at <= now {
		a := d.wire.Pop()
		d.arrive(now, &a.f, a.crc)
	}
}

// arrive takes a flit off the wire; f is the link's own copy.
func (d *Dir) arrive(now clock.Time, f *Flit, crc uint32) {
	cfg := &d.l.cfg
	vc := int(f.VC)
	v := &d.vc[vc]
	v.onWire--
	if f.mark&markLost != 0 {
		// Lost on the wire: the receiver never holds it, so its slot's
		// credit returns at once.
		if cfg.FlowControl == Credits {
			d.returnCredit(now, vc)
		}
		if f.Tail && f.mark&markSilent == 0 {
			d.l.emit(now, d.name, "link.drop", trace.Uint("pkt", f.Packet()), trace.Int("src", int64(f.Src())), trace.Int("dst", int64(f.Dst())))
		}
		return
	}
	if f.Head {
		v.rxCRC = 0
		v.rxFlits = 0
		v.rxData = v.rxData[:0]
	}
	v.rxCRC = crc32.Update(v.rxCRC, crc32.IEEETable, f.Data)
	v.rxFlits++
	if d.l.env.Trace.Enabled() {
		v.rxData = append(v.rxData, f.Data...)
	}
	if f.Tail && v.rxCRC != crc {
		f.Bad = true
		d.stats.CRCErrors++
	}
	size := f.WireBytes()
	if cfg.FlowControl == StopGo && d.rxBytes+size > cfg.SlackBytes {
		d.l.env.Report(now, d.name, "link.overflow", "slack buffer overflow: %d + %d bytes > %d", d.rxBytes, size, cfg.SlackBytes)
		return
	}
	if !v.rx.PushPtr(now, f) {
		if cfg.FlowControl == NoFlowControl {
			d.stats.Overflows++
			if f.Tail {
				d.l.emit(now, d.name, "link.overflow", trace.Uint("pkt", f.Packet()), trace.Int("vc", int64(vc)))
			}
		}
		return // a credit or STOP/GO overflow is reported by the FIFO
	}
	d.rxBytes += size
	d.stats.MaxRxBytes = max(d.stats.MaxRxBytes, d.rxBytes)
	d.stats.Flits++
	d.stats.Bytes += uint64(size)
	if d.onArrive != nil {
		d.onArrive(now, vc)
	}
	if cfg.FlowControl == StopGo {
		d.sigSlack.Set(now, uint64(d.rxBytes))
		if !d.stopSent && d.rxBytes > cfg.StopAt {
			d.stopSent = true
			d.signal(now, true)
		}
	}
	if cfg.TraceFlits {
		d.l.emit(now, d.name, "link.flit", trace.Uint("pkt", f.Packet()), trace.Int("seq", int64(f.Seq)),
			trace.Int("vc", int64(vc)), trace.Int("bytes", int64(size)), trace.Bool("head", f.Head), trace.Bool("tail", f.Tail))
	}
	if f.Tail {
		d.stats.Packets++
		if f.Bad {
			d.stats.BadPackets++
		}
		if d.l.env.Trace.Enabled() {
			fields := []trace.Field{trace.Uint("pkt", f.Packet()), trace.Int("src", int64(f.Src())), trace.Int("dst", int64(f.Dst())),
				trace.Int("vc", int64(vc)), trace.Int("flits", int64(v.rxFlits)), trace.Hash("hash", v.rxData)}
			if f.Bad {
				fields = append(fields, trace.Str("crc", "bad"))
			}
			d.l.emit(now, d.name, "link.packet", fields...)
		}
	}
}

// signal sends STOP or GO back to the sender; it takes the wire delay (at
// least one cycle).
func (d *Dir) signal(now clock.Time, stop bool) {
	at := d.l.cfg.Clock.After(now, clock.Cycle(max(d.l.cfg.DelayCycles, 1)))
	d.controlQ.Push(control{at: at, stop: stop})
	if d.sigStop != nil || (!stop && d.waitGo) {
		d.l.WakeAt(at)
	}
	if !stop && d.waitGo && d.sender != nil {
		d.sender.WakeAt(at)
	}
}

// popped runs when the receiver takes a flit: free its slot.
func (d *Dir) popped(now clock.Time, f *Flit) {
	cfg := &d.l.cfg
	d.rxBytes -= f.WireBytes()
	switch cfg.FlowControl {
	case Credits:
		d.returnCredit(now, int(f.VC))
		d.checkCredits(now, int(f.VC))
		return
	case NoFlowControl:
		return
	}
	d.sigSlack.Set(now, uint64(d.rxBytes))
	if d.stopSent && d.rxBytes < cfg.GoAt {
		d.stopSent = false
		d.signal(now, false)
	}
}

// returnCredit sends a credit back: usable by the sender CreditDelay
// cycles (at least one) after now.
func (d *Dir) returnCredit(now clock.Time, vc int) {
	c := &d.vc[d.ci(vc)]
	at := d.l.cfg.Clock.After(now, clock.Cycle(d.creditDelay))
	d.creditQ.Push(creditReturn{at: at, vc: vc})
	c.returning++
	if c.waitCred && d.sender != nil {
		d.sender.WakeAt(at)
	}
	if c.waitCred && d.pending(0) {
		d.l.WakeAt(at) // the link's own transmitter waits for the credit
	}
	if c.sigCredits != nil {
		d.l.WakeAt(at) // draw the credit when it lands (a queued flit keeps the link ticking anyway)
	}
}

// applyReturns applies the credits and STOP/GO symbols that have reached
// the sender by now.
func (d *Dir) applyReturns(now clock.Time) {
	if (d.creditQ.Len() == 0 || d.creditQ.Front().at > now) && (d.controlQ.Len() == 0 || d.controlQ.Front().at > now) {
		return // nothing has come back yet: the common case, kept cheap
	}
	for d.creditQ.Len() > 0 && d.creditQ.Front().at <= now {
		c := d.creditQ.Pop()
		k := &d.vc[d.ci(c.vc)]
		k.credits++
		k.returning--
		d.vc[c.vc].outstand--
		k.waitCred = false
		k.sigCredits.Set(c.at, uint64(k.credits))
	}
	for d.controlQ.Len() > 0 && d.controlQ.Front().at <= now {
		c := d.controlQ.Pop()
		d.stopped = c.stop
		if !c.stop {
			d.waitGo = false
		}
		d.sigStop.SetBool(c.at, c.stop)
	}
}

// checkCredits verifies credit conservation for a VC: the sender's credits,
// the flits on the wire, the occupied receive slots and the credits on
// their way back always add up to the buffer size.
func (d *Dir) checkCredits(now clock.Time, vc int) {
	cfg := &d.l.cfg
	if cfg.FlowControl != Credits {
		return
	}
	c := &d.vc[d.ci(vc)]
	held := int(d.vc[vc].onWire) + d.vc[vc].rx.Len()
	if d.shared {
		held = 0
		for i := range d.vc {
			held += int(d.vc[i].onWire) + d.vc[i].rx.Len()
		}
	}
	if sum := int(c.credits) + held + int(c.returning); sum != cfg.BufferFlits {
		d.l.env.Report(now, d.name, "link.credits", "VC %d: credits %d + on the wire or buffered %d + returning %d = %d, want %d",
			vc, c.credits, held, c.returning, sum, cfg.BufferFlits)
	}
}

func (l *Link) emit(now clock.Time, path, kind string, fields ...trace.Field) {
	if l.env.Trace.Enabled() {
		l.env.Trace.Emit(now, l.Clock().CycleAt(now), path, kind, fields...)
	}
}

// Idle implements check.Unit: nothing is being sent or on the wire. (Flits
// left in the queues are the FIFOs' own business.)
func (l *Link) Idle() bool {
	for _, d := range l.dirs {
		if d.wire.Len() > 0 {
			return false
		}
	}
	return true
}

// State implements check.Unit.
func (l *Link) State() string {
	s := ""
	for _, d := range l.dirs {
		credits := make([]int, len(d.vc))
		for i := range d.vc {
			credits[i] = int(d.vc[i].credits)
		}
		s += fmt.Sprintf("%s: busy until %v, %d on the wire, credits %v, stopped %v; ", d.name, d.busyUntil, d.wire.Len(), credits, d.stopped)
	}
	return s
}

// Stats returns the direction's counters.
func (d *Dir) Stats() Stats { return d.stats }

// VCs returns the number of virtual channels.
func (d *Dir) VCs() int { return len(d.vc) }
