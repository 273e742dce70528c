// Package bus models a shared host bus, an I/O bus (PCI, TURBOchannel,
// EISA) or a memory bus: one transaction at a time, masters granted by an
// arbiter, an address phase, target decode and read turnaround cycles, one
// data phase per cycle when both sides are ready (a wait state otherwise),
// a maximum burst after which the master must re-arbitrate, and idle
// cycles between transactions. Posted writes complete for the master when
// their data phases end; non-posted writes and reads hold the bus until
// the target answers, so a PIO load stalls its issuer for the whole
// transaction, unless the target answers the address phase with a retry
// (SetTargetRetry).
//
// Masters and targets attach through mem.Channels whose beats are exactly
// one data phase wide: AddMaster creates a master's channel, AddTarget maps
// an address window onto a target's channel (a mem.Memory port, a device's
// register block).
//
// Observers (Observe) see every data phase of every transaction, the way a
// snooping device on the bus would (SHRIMP's memory-bus board «simply
// snoops all main-memory writes», and its Xpress connector «does not allow
// a memory write to be stalled», shrimp-design-choices.txt sections 2.1
// and 4.5.2; a host cache invalidates lines on I/O DMA writes): they are
// called synchronously in the data phase and cannot stall or change it.
//
// An address-only transaction (a request of class ClassUpgrade) has an
// address phase and no data phase: a cache that holds a line clean and
// shared claims it for a store, and every other cache drops its copy, with
// no line of data on the bus (the P6 bus's zero-length Memory Read and
// Invalidate; a MESI bus's upgrade or invalidate). Observers see it once,
// in its address phase, with no data.
//
// A Bridge (bridge.go) joins two buses: a target on each side that is a
// master on the other.
package bus

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Builder configures a Bus.
type Builder struct {
	env       *env.Env
	cfg       Config
	chanDepth int
	addrBits  int
}

// MakeBuilder returns a builder for a 32-bit PCI bus with 2-deep master
// channels and 32 address bits.
func MakeBuilder() Builder {
	// PCI, TURBOchannel and EISA carry 32-bit addresses (PCI 2.1 section
	// 3.2.2: «AD[31::00]» in the address phase; TurboChannel: «32 bit
	// multiplexed address and data path»; EISA: 32 address lines).
	return Builder{cfg: PCI32(), chanDepth: 2, addrBits: 32}
}

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithConfig sets the timing (a preset, possibly modified).
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithMasterChannelDepth sets the depth of master channels' FIFOs; for a
// CPU it is the number of posted writes it can have outstanding.
func (b Builder) WithMasterChannelDepth(n int) Builder { b.chanDepth = n; return b }

// WithAddrBits sets the width of the bus's address, the width of its addr
// signal (1..64; default 32, the I/O buses' width). AddTarget refuses a
// window that needs more bits, so a bus whose address map is wider (the
// DEC 3000's TURBOchannel with the Telegraphos HIB at 0x2_0000_0000) must
// say so.
func (b Builder) WithAddrBits(n int) Builder { b.addrBits = n; return b }

// Build creates the bus.
func (b Builder) Build(name string) (*Bus, error) {
	if b.env == nil {
		return nil, fmt.Errorf("%s: no env", name)
	}
	if err := b.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if b.chanDepth < 1 {
		return nil, fmt.Errorf("%s: master channel depth %d must be at least 1", name, b.chanDepth)
	}
	if b.addrBits < 1 || b.addrBits > 64 {
		return nil, fmt.Errorf("%s: address width %d bits, want 1..64", name, b.addrBits)
	}
	bus := &Bus{env: b.env, cfg: b.cfg, chanDepth: b.chanDepth, addrBits: b.addrBits, busyAt: -1}
	bus.Ticking = clock.NewTicking(name, b.env.Engine, b.cfg.Clock, bus)
	reg := b.env.Waves
	bus.sigPhase = reg.String(name, "phase")
	// master and target carry the names given to AddMaster and AddTarget
	// ("-" while the bus is idle or an address decodes to no target).
	bus.sigMaster = reg.String(name, "master")
	bus.sigTarget = reg.String(name, "target")
	bus.sigAddr = reg.Wire(name, "addr", b.addrBits)
	bus.sigWait = reg.Wire(name, "wait", 1)
	bus.sigPhase.SetString(0, "IDLE")
	bus.sigMaster.SetString(0, "-")
	bus.sigTarget.SetString(0, "-")
	b.env.Register(bus)
	return bus, nil
}

type phase uint8

const (
	pIdle phase = iota
	pArb
	pAddr
	pDecode
	pData
	pComplete
	pTurn
)

var phaseNames = [...]string{"IDLE", "ARB", "ADDR", "DECODE", "DATA", "COMPL", "TURN"}

// master is one master's attachment.
type master struct {
	name string
	ch   *mem.Channel
	// cont is the unfinished remainder of a request split at a burst
	// boundary: offset of the next byte.
	cont    *mem.Req
	contOff int
	// condFailed collects a store-conditional's failure from the bursts of
	// a split request until the final one's completion carries it back.
	condFailed bool
	// holdSplits: the bus keeps this master's tenure across the pieces of
	// a request split at MaxBurstBytes (HoldSplits).
	holdSplits bool
	stats      MasterStats
}

// target is one mapped address window.
type target struct {
	name       string
	base, size uint64
	ch         *mem.Channel
	wait       int // initial wait states beyond the bus's decode
	// claim, when set, answers a read's address phase: false terminates
	// the transaction with a retry.
	claim func(now clock.Time, req *mem.Req) bool
}

// txn is the transaction (one burst) on the bus.
type txn struct {
	m, t   int      // master and target indices; t < 0: nothing decodes
	mreq   *mem.Req // the master's request
	treq   *mem.Req // the request forwarded to the target
	off    int      // offset of this burst within mreq
	n      int      // bytes in this burst
	moved  int      // bytes moved so far
	final  bool     // this burst ends the master's request
	start  clock.Cycle
	waits  int
	data   []byte // collected for the trace
	reqSnt bool   // read: request beat delivered to the target
	err    string
	// addrOnly: an address-only transaction (ClassUpgrade), which ends
	// in its address phase.
	addrOnly bool
}

// Bus is a clocked shared bus.
type Bus struct {
	*clock.Ticking
	env       *env.Env
	cfg       Config
	chanDepth int
	addrBits  int
	masters   []*master
	targets   []*target

	phase  phase
	count  int // cycles left in pArb/pDecode/pTurn
	cur    *txn
	rr     int
	busyAt clock.Time // last edge the bus was not idle

	dataCycles, waitCycles, busyCycles, retries uint64

	observers []func(now clock.Time, o Observation)

	sigPhase, sigMaster, sigTarget, sigAddr, sigWait *waves.Signal
}

// ClassUpgrade is the request class (mem.Req.Class) of an address-only
// transaction: a master that holds [Addr, Addr+Len) (a cache line) clean
// and shared claims it for writing without reading it (a cache's store to
// a line it holds shared; host/memsys's ClassUpgrade is this value). The
// master sends one request beat (Op Read, no data); the bus arbitrates,
// runs the address phase, in which the observers see it (one observation,
// no data, First and Last set) and the master gets a completion beat
// without data, then its idle cycles: no decode, turnaround or data phase,
// and the target never sees it (memory has nothing to do). Observers that
// hold copies of the line drop them, as for a read for ownership
// (ClassRFO): the owner's stores will change memory without another bus
// transaction that they could see.
const ClassUpgrade = "upgrade"

// addressOnly reports whether req is an address-only transaction.
func addressOnly(req *mem.Req) bool { return req.Class == ClassUpgrade }

// Observation is one data phase as a bus observer sees it, or the address
// phase of an address-only transaction (ClassUpgrade: no Data).
type Observation struct {
	// Cycle is the bus cycle of the data phase (the bus clock's cycle at
	// the time the observer is called with).
	Cycle clock.Cycle
	// Master is the name the master was added with; MasterIndex its
	// number (the order of AddMaster).
	Master      string
	MasterIndex int
	// Target is the name of the target whose window decodes the address,
	// "" when nothing decodes it (master abort).
	Target string
	// Req is the master's request, its address in bus space. The same
	// pointer is seen for every beat of the request, also across the
	// bursts it is split into.
	Req *mem.Req
	// Addr is this beat's bus address.
	Addr uint64
	// Data is the beat's write data, or the read data the target returns
	// (nil for an address-only transaction, whose extent is Req.Len). It
	// is the bus's own slice: an observer must not modify it, and must
	// copy it to keep it beyond the call.
	Data []byte
	// Write is set for a write, clear for a read.
	Write bool
	// First and Last mark the first and last beats of the master's request
	// (one transaction from the master's side, even when it is split).
	First, Last bool
	// BurstFirst and BurstLast mark the first and last beats of this bus
	// tenure (a piece of a request split at MaxBurstBytes).
	BurstFirst, BurstLast bool
	// Err is set when the beat belongs to an aborted transaction (nothing
	// decodes the address); the data is then not real.
	Err string
}

// Observe subscribes fn to every data phase of the bus. Any number of
// observers may subscribe; they are called in subscription order, in the
// data phase's cycle, after the beat moved. They cannot stall the bus or
// change the beat: a snooper that needs time must queue the observation
// itself (SHRIMP: the network interface «does not allow a memory write to
// be stalled», shrimp-design-choices.txt section 4.5.2).
func (b *Bus) Observe(fn func(now clock.Time, o Observation)) {
	b.observers = append(b.observers, fn)
}

// observe tells the observers about the beat just moved at offset at
// (within the burst) of the current transaction.
func (b *Bus) observe(now clock.Time, x *txn, at int, data []byte, err string) {
	if len(b.observers) == 0 {
		return
	}
	tname := ""
	if x.t >= 0 {
		tname = b.targets[x.t].name
	}
	reqOff := x.off + at
	o := Observation{
		Cycle: b.Clock().CycleAt(now), Master: b.masters[x.m].name, MasterIndex: x.m,
		Target: tname, Req: x.mreq, Addr: x.mreq.Addr + uint64(reqOff), Data: data,
		Write: x.mreq.Op == mem.Write,
		First: reqOff == 0, Last: reqOff+len(data) == x.mreq.Len,
		BurstFirst: at == 0, BurstLast: at+len(data) >= x.n, Err: err,
	}
	if x.addrOnly {
		o.Write, o.Last, o.BurstLast = false, true, true
	}
	for _, fn := range b.observers {
		fn(now, o)
	}
}

// AddrBits returns the width of the bus's addresses (Builder.WithAddrBits),
// for devices whose address signals follow the bus.
func (b *Bus) AddrBits() int { return b.addrBits }

// Config returns the bus timing.
func (b *Bus) Config() Config { return b.cfg }

// AddMaster attaches a master and returns its channel; the master calls
// ConnectMaster on it. Masters are numbered in the order they are added
// (FixedPriority favours the first).
func (b *Bus) AddMaster(name string) (*mem.Channel, error) {
	ch, err := mem.NewChannel(b.env, fmt.Sprintf("%s.Master[%d]", b.Name(), len(b.masters)), b.cfg.WidthBytes, b.chanDepth)
	if err != nil {
		return nil, err
	}
	ch.ConnectTarget(b)
	b.masters = append(b.masters, &master{name: name, ch: ch})
	return ch, nil
}

// AddTarget maps [base, base+size) onto a target's channel; requests in the
// window reach the target with addresses relative to base. The channel must
// be as wide as the bus.
func (b *Bus) AddTarget(name string, base, size uint64, ch *mem.Channel) error {
	if ch.Width != b.cfg.WidthBytes {
		return fmt.Errorf("%s: target %s has %d-byte beats, the bus is %d bytes wide", b.Name(), name, ch.Width, b.cfg.WidthBytes)
	}
	if size == 0 || base+size < base {
		return fmt.Errorf("%s: target %s has an empty or wrapping window", b.Name(), name)
	}
	if need := waves.WidthFor(base + size - 1); need > b.addrBits {
		return fmt.Errorf("%s: window of %s [%#x,%#x) needs %d address bits, the bus has %d (WithAddrBits)",
			b.Name(), name, base, base+size, need, b.addrBits)
	}
	for _, t := range b.targets {
		if base < t.base+t.size && t.base < base+size {
			return fmt.Errorf("%s: window of %s [%#x,%#x) overlaps %s [%#x,%#x)", b.Name(), name, base, base+size, t.name, t.base, t.base+t.size)
		}
	}
	ch.ConnectMaster(b)
	b.targets = append(b.targets, &target{name: name, base: base, size: size, ch: ch})
	return nil
}

// SetTargetWait gives target name n initial wait states: cycles it keeps
// every transaction waiting, after the bus's decode, before the first
// data phase (a slow slave interface).
func (b *Bus) SetTargetWait(name string, n int) error {
	if n < 0 {
		return fmt.Errorf("%s: target %s: %d wait states", b.Name(), name, n)
	}
	for _, t := range b.targets {
		if t.name == name {
			t.wait = n
			return nil
		}
	}
	return fmt.Errorf("%s: no target %s", b.Name(), name)
}

// SetTargetRetry makes target name answer every address phase (reads and
// writes) with claim, called with the request as the target would see it
// (its address relative to the window): false is a target retry (PCI 2.1 section
// 3.3.3.2, target-initiated termination; the start of a delayed
// transaction, section 3.3.3.3): the bus ends the
// transaction after the address phase, the master keeps its request and
// arbitrates for it again (a write's data stays with the master). A bridge
// uses it so that a read it must fetch from the other bus, or a write its
// full buffer cannot take, does not hold this one.
func (b *Bus) SetTargetRetry(name string, claim func(now clock.Time, req *mem.Req) bool) error {
	for _, t := range b.targets {
		if t.name == name {
			t.claim = claim
			return nil
		}
	}
	return fmt.Errorf("%s: no target %s", b.Name(), name)
}

// HoldSplits makes the bus keep granting master name across the pieces of
// a request it splits at MaxBurstBytes: while the rest of the master's
// request is pending, the next tenure is that master's again, without
// arbitration (no other master can take the bus in between), each piece
// with an address phase of its own (the Xpress addresses every line). A
// bridge that holds the memory bus for a whole I/O burst uses it on its
// memory-bus master (BridgeConfig.HoldMemoryBus; SHRIMP's Xpress: «the
// memory bus does not cycle-share between the CPU and any other main
// memory master», SH-P10). A retried piece is re-granted the same way.
func (b *Bus) HoldSplits(name string) error {
	for _, m := range b.masters {
		if m.name == name {
			m.holdSplits = true
			return nil
		}
	}
	return fmt.Errorf("%s: HoldSplits: no master %s", b.Name(), name)
}

// Tick implements clock.Ticker: one bus cycle. The phase signal shows the
// phase executed at each edge ("WAIT" for a data or completion cycle in
// which nothing moved), held for the cycle that follows, as a state
// register would drive it.
func (b *Bus) Tick(now clock.Time) bool {
	if b.phase == pIdle && !b.grant(now) {
		b.sigPhase.SetString(now, "IDLE")
		b.sigMaster.SetString(now, "-")
		b.sigTarget.SetString(now, "-")
		return false
	}
	b.busyAt = now
	b.busyCycles++
	p, x := b.phase, b.cur
	waits := 0
	if x != nil {
		waits = x.waits
	}
	switch p {
	case pArb:
		b.countDown(now, pAddr)
	case pAddr:
		b.address(now)
	case pDecode:
		b.countDown(now, pData)
	case pData:
		b.dataPhase(now)
	case pComplete:
		b.completion(now)
	case pTurn:
		b.countDown(now, pIdle)
	}
	waited := x != nil && x.waits > waits
	b.sigWait.SetBool(now, waited)
	switch {
	case waited:
		b.sigPhase.SetString(now, "WAIT")
	case p == pAddr && b.cur == nil && !x.addrOnly:
		b.sigPhase.SetString(now, "RETRY")
	default:
		b.sigPhase.SetString(now, phaseNames[p])
	}
	return true
}

func (b *Bus) setPhase(_ clock.Time, p phase) {
	b.phase = p
}

// countDown spends one cycle of the current waiting phase and enters next
// when it is over. The first cycle was already spent by whoever entered the
// phase, so count holds the remaining cycles.
func (b *Bus) countDown(now clock.Time, next phase) {
	b.count--
	if b.count <= 0 {
		b.enter(now, next)
	}
}

// enter moves to phase p for the next cycle, skipping zero-length phases.
func (b *Bus) enter(now clock.Time, p phase) {
	switch p {
	case pDecode:
		n := b.cfg.DecodeCycles
		if b.cur.mreq.Op == mem.Read {
			n = max(n, b.cfg.ReadTurnaround)
		}
		if b.cur.t >= 0 {
			n += b.targets[b.cur.t].wait
		}
		if n == 0 {
			p = pData
		}
		b.count = n
	case pTurn:
		b.count = b.cfg.IdleCycles
		if b.count == 0 {
			p = pIdle
		}
	}
	b.setPhase(now, p)
}

// requestOf returns master m's pending request: a split remainder or a
// visible request beat.
func (b *Bus) requestOf(now clock.Time, m *master) *mem.Req {
	if m.cont != nil {
		return m.cont
	}
	beat, ok := m.ch.Down.Peek(now)
	if !ok {
		return nil
	}
	if !beat.First {
		b.env.Report(now, b.Name(), "bus.protocol", "master %s: data beat without a request: %v", m.name, beat)
		m.ch.Down.Pop(now)
		return nil
	}
	return beat.Req
}

// grant picks the next master. Arbitration is hidden when the bus was busy
// in the previous cycle; otherwise the grant takes ArbCycles, the first of
// them this cycle.
func (b *Bus) grant(now clock.Time) bool {
	// A master holding the bus across split pieces (HoldSplits) keeps it:
	// its next piece goes straight to its address phase.
	for i, m := range b.masters {
		if m.holdSplits && m.cont != nil {
			b.start(now, i)
			b.setPhase(now, pAddr)
			return true
		}
	}
	pick := -1
	for i := range b.masters {
		k := i
		if b.cfg.Arbitration == RoundRobin {
			k = (b.rr + i) % len(b.masters)
		}
		if b.requestOf(now, b.masters[k]) != nil {
			pick = k
			break
		}
	}
	if pick < 0 {
		return false
	}
	b.rr = (pick + 1) % len(b.masters)
	b.start(now, pick)
	prev := b.Clock().TimeOf(max(b.Clock().CycleAt(now), 1) - 1)
	hidden := b.cfg.HiddenArb && b.busyAt == prev && now > 0
	if b.cfg.ArbCycles == 0 || hidden {
		b.setPhase(now, pAddr)
	} else {
		b.setPhase(now, pArb)
		b.count = b.cfg.ArbCycles
	}
	return true
}

// start sets up the burst of master m's pending request.
func (b *Bus) start(now clock.Time, mi int) {
	m := b.masters[mi]
	req, off := m.cont, m.contOff
	if req == nil {
		req, off = b.requestOf(now, m), 0
	}
	addr := req.Addr + uint64(off)
	left := req.Len - off
	burst := uint64(b.cfg.MaxBurstBytes)
	n := min(left, int(burst-addr%burst))
	ao := addressOnly(req)
	if ao {
		n = left // never split: no data moves
	}
	x := &txn{m: mi, t: -1, mreq: req, off: off, n: n, final: off+n == req.Len,
		start: b.Clock().CycleAt(now), addrOnly: ao}
	for ti, t := range b.targets {
		if addr >= t.base && addr-t.base < t.size {
			x.t = ti
			break
		}
	}
	if x.t < 0 {
		x.err = fmt.Sprintf("no target at %#x", addr)
		b.env.Report(now, b.Name(), "bus.unmapped", "%v: nothing decodes %#x (master abort)", req, addr)
	} else if t := b.targets[x.t]; addr+uint64(n)-t.base > t.size {
		x.err = fmt.Sprintf("burst [%#x,%#x) leaves the window of %s", addr, addr+uint64(n), t.name)
		b.env.Report(now, b.Name(), "bus.unmapped", "%v: %s", req, x.err)
	} else {
		// The Atomic qualifier travels with the request: the target that
		// keeps reservations (a host cache, memsys) decides whether a
		// StoreConditional takes effect, and the bus only carries its
		// answer back (completion below).
		x.treq = &mem.Req{Op: req.Op, Addr: addr - t.base, Len: n, Posted: req.Posted,
			Class: req.Class, Master: req.Master, Seq: req.Seq, Atomic: req.Atomic, Poll: req.Poll}
	}
	b.cur = x
	b.sigMaster.SetString(now, b.masters[mi].name)
	if x.t >= 0 {
		b.sigTarget.SetString(now, b.targets[x.t].name)
	} else {
		b.sigTarget.SetString(now, "-")
	}
	b.sigAddr.Set(now, addr)
}

// address is the address phase. A read hands its request to the target now
// (the target starts its access while the bus decodes and turns around);
// a write's request travels with its first data beat.
func (b *Bus) address(now clock.Time) {
	x := b.cur
	if x.addrOnly {
		b.addressOnly(now, x)
		return
	}
	if x.err == "" && b.targets[x.t].claim != nil && !b.targets[x.t].claim(now, x.treq) {
		b.retry(now)
		return
	}
	if x.mreq.Op == mem.Read {
		if x.err == "" {
			tch := b.targets[x.t].ch
			if !tch.Down.CanPush(now) {
				x.waits++ // target not ready to take the address: retry
				return
			}
			tch.Down.Push(now, mem.Beat{Req: x.treq, First: true, Last: true})
			x.reqSnt = true
		}
		if x.off == 0 {
			b.masters[x.m].ch.Down.Pop(now) // the read request beat
		}
	}
	b.enter(now, pDecode)
}

// addressOnly is the address phase of an address-only transaction: the
// observers see it and the master gets its completion beat now, and the
// transaction ends (a wait state while the master's channel has no room
// for the completion).
func (b *Bus) addressOnly(now clock.Time, x *txn) {
	m := b.masters[x.m]
	if !m.ch.Up.CanPush(now) {
		x.waits++
		b.waitCycles++
		return
	}
	if x.mreq.Op != mem.Read {
		b.env.Report(now, b.Name(), "bus.protocol", "%v: an address-only (%s) request must be a read", x.mreq, ClassUpgrade)
	}
	m.ch.Down.Pop(now) // the request beat, the only one
	m.ch.Up.Push(now, mem.Beat{Req: x.mreq, First: true, Last: true, Err: x.err})
	b.observe(now, x, 0, nil, x.err)
	b.finish(now)
}

// retry ends the current transaction in its address phase: the master's
// request (or the rest of a split one) stays pending.
func (b *Bus) retry(now clock.Time) {
	x := b.cur
	m := b.masters[x.m]
	if x.off > 0 {
		m.cont, m.contOff = x.mreq, x.off
	}
	m.stats.Retries++
	b.retries++
	// No trace record: a retried attempt moves nothing, and a delayed
	// read retried every few cycles would bury the transactions; the
	// counters and the RETRY phase in the waveform show them.
	b.cur = nil
	b.enter(now, pTurn)
}

// dataPhase moves at most one beat: a wait state when either side is not
// ready.
func (b *Bus) dataPhase(now clock.Time) {
	x := b.cur
	moved := false
	if x.mreq.Op == mem.Write {
		moved = b.writeBeat(now, x)
	} else {
		moved = b.readBeat(now, x)
	}
	if !moved {
		x.waits++
		b.waitCycles++
		return
	}
	b.dataCycles++
	if x.moved < x.n {
		return
	}
	if x.mreq.Op == mem.Write && !x.mreq.Posted {
		b.setPhase(now, pComplete)
		return
	}
	b.finish(now)
}

func (b *Bus) writeBeat(now clock.Time, x *txn) bool {
	mch := b.masters[x.m].ch
	beat, ok := mch.Down.Peek(now)
	if !ok {
		return false // master not ready (IRDY# high)
	}
	if x.err == "" {
		tch := b.targets[x.t].ch
		if !tch.Down.CanPush(now) {
			return false // target not ready (TRDY# high)
		}
		tch.Down.Push(now, mem.Beat{Req: x.treq, Data: beat.Data, First: x.moved == 0, Last: x.moved+len(beat.Data) == x.n})
	}
	mch.Down.Pop(now)
	if beat.Req != x.mreq {
		b.env.Report(now, b.Name(), "bus.protocol", "master %s sent data of %v during %v", b.masters[x.m].name, beat.Req, x.mreq)
	}
	at := x.moved
	x.moved += len(beat.Data)
	if b.env.Trace.Enabled() {
		x.data = append(x.data, beat.Data...)
	}
	b.observe(now, x, at, beat.Data, x.err)
	return true
}

func (b *Bus) readBeat(now clock.Time, x *txn) bool {
	mch := b.masters[x.m].ch
	if !mch.Up.CanPush(now) {
		return false
	}
	var beat mem.Beat
	if x.err == "" {
		var ok bool
		beat, ok = b.targets[x.t].ch.Up.Pop(now)
		if !ok {
			return false
		}
	} else {
		n := mem.Chunks(x.mreq.Addr+uint64(x.off+x.moved), x.n-x.moved, b.cfg.WidthBytes)[0]
		beat = mem.Beat{Data: make([]byte, n), Err: x.err, Last: x.moved+n == x.n}
	}
	first := x.off+x.moved == 0
	at := x.moved
	x.moved += len(beat.Data)
	if beat.Last && x.moved < x.n {
		b.env.Report(now, b.Name(), "bus.protocol", "target ended a %d-byte read after %d bytes", x.n, x.moved)
		x.moved = x.n
	}
	mch.Up.Push(now, mem.Beat{Req: x.mreq, Data: beat.Data, First: first,
		Last: x.final && x.moved == x.n, Err: beat.Err})
	if b.env.Trace.Enabled() {
		x.data = append(x.data, beat.Data...)
	}
	b.observe(now, x, at, beat.Data, beat.Err)
	return true
}

// completion waits for a non-posted write's completion from the target and
// forwards it to the master once the whole request is done.
func (b *Bus) completion(now clock.Time) {
	x := b.cur
	var beat mem.Beat
	if x.err == "" {
		var ok bool
		if beat, ok = b.targets[x.t].ch.Up.Peek(now); !ok {
			x.waits++
			return
		}
	} else {
		beat = mem.Beat{Err: x.err}
	}
	m := b.masters[x.m]
	if x.final {
		if !m.ch.Up.CanPush(now) {
			x.waits++
			return
		}
		// A store-conditional's outcome reaches the master on its
		// completion beat (rtl/mem Beat.CondFailed); a split request
		// failed if any of its bursts did.
		m.ch.Up.Push(now, mem.Beat{Req: x.mreq, First: true, Last: true, Err: beat.Err,
			CondFailed: m.condFailed || beat.CondFailed})
		m.condFailed = false
	} else if beat.CondFailed {
		m.condFailed = true
	}
	if x.err == "" {
		b.targets[x.t].ch.Up.Pop(now)
	}
	b.finish(now)
}

// finish ends the burst: record it, remember a split remainder, and go
// through the idle cycles.
func (b *Bus) finish(now clock.Time) {
	x := b.cur
	m := b.masters[x.m]
	if x.final {
		m.cont = nil
		m.stats.Requests++
	} else {
		m.cont, m.contOff = x.mreq, x.off+x.n
	}
	if x.off == 0 && x.mreq.Op == mem.Read && x.err == "" && !x.reqSnt && !x.addrOnly {
		b.env.Report(now, b.Name(), "bus.protocol", "read finished without its request")
	}
	m.stats.Bursts++
	if !x.addrOnly {
		m.stats.Bytes += uint64(x.n)
	}
	m.stats.WaitCycles += uint64(x.waits)
	if b.env.Trace.Enabled() {
		b.emit(now, x)
	}
	b.cur = nil
	b.enter(now, pTurn)
}

func (b *Bus) emit(now clock.Time, x *txn) {
	class := x.mreq.Class
	if class == "" {
		class = "xfer"
	}
	tname := "none"
	if x.t >= 0 {
		tname = b.targets[x.t].name
	}
	fields := []trace.Field{
		trace.Str("master", b.masters[x.m].name), trace.Str("target", tname),
		trace.Addr("addr", x.mreq.Addr+uint64(x.off)), trace.Int("len", int64(x.n)),
		trace.Uint("start", uint64(x.start)), trace.Int("waits", int64(x.waits)),
	}
	if x.addrOnly {
		// No data: the kind says so (bus.upgrade.addr) and no hash.
		if x.err != "" {
			fields = append(fields, trace.Str("err", x.err))
		}
		b.env.Trace.Emit(now, b.Clock().CycleAt(now), b.Name(), "bus."+x.mreq.Class+".addr", fields...)
		return
	}
	if x.mreq.Op == mem.Write {
		fields = append(fields, trace.Bool("posted", x.mreq.Posted))
	}
	fields = append(fields, trace.Hash("hash", x.data))
	if x.err != "" {
		fields = append(fields, trace.Str("err", x.err))
	}
	b.env.Trace.Emit(now, b.Clock().CycleAt(now), b.Name(), "bus."+class+"."+x.mreq.Op.String(), fields...)
}

// MasterStats are one master's counters: requests finished, bursts
// (tenures that moved data), bytes, wait cycles, and address phases a
// target answered with a retry.
type MasterStats struct {
	Requests, Bursts, Bytes, WaitCycles, Retries uint64
}

// Stats are the bus's counters.
type Stats struct {
	// BusyCycles counts cycles the bus was not idle; DataCycles those that
	// moved a beat; WaitCycles the data-phase cycles that did not;
	// Retries the address phases a target answered with a retry.
	BusyCycles, DataCycles, WaitCycles, Retries uint64
	// Masters are the masters' counters in AddMaster order.
	Masters []MasterStats
}

// Stats returns the counters.
func (b *Bus) Stats() Stats {
	s := Stats{BusyCycles: b.busyCycles, DataCycles: b.dataCycles, WaitCycles: b.waitCycles, Retries: b.retries}
	for _, m := range b.masters {
		s.Masters = append(s.Masters, m.stats)
	}
	return s
}

// Idle implements check.Unit.
func (b *Bus) Idle() bool {
	if b.cur != nil {
		return false
	}
	for _, m := range b.masters {
		if m.cont != nil {
			return false
		}
	}
	return true
}

// State implements check.Unit.
func (b *Bus) State() string {
	if b.cur == nil {
		for _, m := range b.masters {
			if m.cont != nil {
				return fmt.Sprintf("idle with the rest of %v from byte %d pending", m.cont, m.contOff)
			}
		}
		return "idle"
	}
	x := b.cur
	return fmt.Sprintf("%s: %v, %d/%d bytes of the burst moved, %d wait cycles", phaseNames[b.phase], x.mreq, x.moved, x.n, x.waits)
}
