package memsys

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// CacheBuilder configures a Cache.
type CacheBuilder struct {
	env      *env.Env
	clk      clock.Clock
	cfg      CacheConfig
	bus      *bus.Bus
	memory   *mem.Memory
	base     uint64
	policies []region
}

// MakeCacheBuilder returns a builder with DefaultCacheConfig.
func MakeCacheBuilder() CacheBuilder { return CacheBuilder{cfg: DefaultCacheConfig()} }

// WithEnv sets the simulation (required).
func (b CacheBuilder) WithEnv(e *env.Env) CacheBuilder { b.env = e; return b }

// WithClock sets the cache's clock, its CPU's (required).
func (b CacheBuilder) WithClock(c clock.Clock) CacheBuilder { b.clk = c; return b }

// WithConfig sets the geometry and timing.
func (b CacheBuilder) WithConfig(c CacheConfig) CacheBuilder { b.cfg = c; return b }

// WithBus sets the memory bus (required): the cache becomes a master on it
// and observes it.
func (b CacheBuilder) WithBus(x *bus.Bus) CacheBuilder { b.bus = x; return b }

// WithMemory sets the node's memory (required) and the bus address of its
// first byte: bus addresses in [base, base+size) are cacheable and their
// data is the memory's Storage; every other address is I/O space.
func (b CacheBuilder) WithMemory(m *mem.Memory, base uint64) CacheBuilder {
	b.memory, b.base = m, base
	return b
}

// WithPolicy sets the write policy of the pages [base, base+size) (bus
// addresses, aligned to PageBytes); later settings override earlier ones
// and pages never set are write-back.
func (b CacheBuilder) WithPolicy(base, size uint64, p Policy) CacheBuilder {
	b.policies = append(append([]region(nil), b.policies...), region{base, size, p})
	return b
}

// Build creates the cache, adds it as a master of the bus and subscribes
// it to the bus's observations.
func (b CacheBuilder) Build(name string) (*Cache, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case !b.clk.Valid():
		return nil, errors.New(name + ": no clock")
	case b.bus == nil:
		return nil, errors.New(name + ": no memory bus")
	case b.memory == nil:
		return nil, errors.New(name + ": no memory")
	}
	if err := b.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	size := b.memory.Storage().Size()
	if b.base+size < b.base {
		return nil, fmt.Errorf("%s: memory at %#x of %#x bytes wraps the address space", name, b.base, size)
	}
	if b.base%uint64(b.cfg.PageBytes) != 0 || size%uint64(b.cfg.PageBytes) != 0 {
		return nil, fmt.Errorf("%s: memory at %#x of %#x bytes is not aligned to PageBytes %d", name, b.base, size, b.cfg.PageBytes)
	}
	for _, r := range b.policies {
		if err := checkRegion(r.base, r.size, r.policy, b.cfg.PageBytes); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	c := &Cache{env: b.env, cfg: b.cfg, store: b.memory.Storage(), memBase: b.base, memSize: size,
		policies: b.policies, bus: b.bus, sets: uint64(b.cfg.Sets()),
		lineShift: uint(log2(b.cfg.LineBytes))}
	c.ways = make([]way, b.cfg.Sets()*b.cfg.Ways)
	c.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, c)
	port, err := mem.NewChannel(b.env, name+".Port", b.cfg.PortWidthBytes, b.cfg.PortDepth)
	if err != nil {
		return nil, err
	}
	port.ConnectTarget(c)
	c.port = port
	bch, err := b.bus.AddMaster(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	bch.ConnectMaster(c)
	c.busCh = bch
	b.bus.Observe(c.observe)
	reg := b.env.Waves
	c.sigState = reg.String(name, "state")
	c.sigFill = reg.Wire(name, "fill_addr", b.bus.AddrBits()) // the memory bus's address width
	c.sigHits = reg.Integer(name, "hits", 32)
	c.sigMisses = reg.Integer(name, "misses", 32)
	c.sigState.SetString(0, "IDLE")
	b.env.Register(c)
	return c, nil
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// lineState is a line's coherence state (MSI).
type lineState uint8

const (
	invalid lineState = iota
	shared
	modified
)

// way is one line frame: which line it holds and in what state. No data:
// the bytes are in memory.
type way struct {
	line  uint64 // line number: bus address >> lineShift
	state lineState
	used  uint64 // LRU stamp
	// held: a miss status holding register owns the frame (its fill or
	// upgrade is outstanding, or its stores are not yet performed), so no
	// other miss may take it as a victim.
	held bool
}

// stage of the access in service.
type stage uint8

const (
	stGather  stage = iota // collecting a store's data beats
	stLookup               // waiting for the hit time, then deciding
	stBus                  // waiting for a fill or an uncached access
	stRespond              // answer the CPU
	stHold                 // waiting for a miss status holding register (MaxMisses)
)

var stageNames = [...]string{"GATHER", "LOOKUP", "BUS", "RESPOND", "HOLD"}

// mshr is a miss status holding register (CacheConfig.MaxMisses): a store
// miss in flight without its access, the line it claims (an RFO, or an
// upgrade of a line held shared) and the stores to that line that wait for
// it, performed in program order once the line is owned and every older
// register's stores are performed.
type mshr struct {
	req     *mem.Req
	line    uint64
	way     int
	upgrade bool
	lost    bool // upgrade: another master took the line before it was on the bus
	onBus   bool // the fill's first data beat (the upgrade's address phase) was on the bus
	stale   bool // another master wrote or claimed the line after that
	demoted bool // another master read the line after that
	done    bool // the bus transaction has completed
	fresh   bool // done at this edge: its stores may be performed as a blocking access's are
	stores  []pendStore
	buf     []byte // the stores' data
}

// pendStore is a store piece merged into an mshr: n bytes at addr, its data
// at off in the register's buf.
type pendStore struct {
	addr   uint64
	off, n int
}

// access is the CPU request in service.
type access struct {
	req      *mem.Req
	data     []byte // store data
	off      int    // next byte to look up
	readyAt  clock.Time
	stage    stage
	uncached bool

	wait     *mem.Req // bus request the access waits for
	fillLine uint64
	fillWay  int
	fillRFO  bool
	upgrade  bool // the bus request is an upgrade (address only) of a shared line
	lost     bool // upgrade: another master took the line before the upgrade was on the bus
	onBus    bool // the fill's first data beat (an upgrade's address phase) has been on the bus
	stale    bool // another master wrote the line after the fill read it
	demoted  bool // another master read the line after the fill read it
	pieceN   int  // bytes of the access the fill serves
	rdata    []byte
	sent     int // an uncached read's bytes queued for the CPU so far (forward)
	err      string
	failed   bool // a store-conditional that did not take effect
}

// snoopKind is what another master did to memory.
type snoopKind uint8

const (
	snRead snoopKind = iota
	snRFO
	snUpgrade
	snWrite
	snOwnFill  // this cache's own fill reached the bus
	snOwnWrite // the last beat of one of this cache's bus writes was on the bus
)

// snoop is an observed bus beat (or a memory write off the bus), applied
// at the cache's first edge after it.
type snoop struct {
	t      clock.Time
	kind   snoopKind
	addr   uint64
	n      int
	master string
	req    *mem.Req // snOwnFill: the cache's own request
}

// Cache is a clocked per-CPU cache: a target on its CPU's channel (Port), a
// master and an observer on the memory bus.
type Cache struct {
	*clock.Ticking
	env       *env.Env
	cfg       CacheConfig
	store     *mem.Storage
	memBase   uint64
	memSize   uint64
	policies  []region
	bus       *bus.Bus
	port      *mem.Channel
	busCh     *mem.Channel
	sets      uint64
	lineShift uint
	ways      []way
	stamp     uint64

	cur  *access // nil or &slot
	slot access
	out  []mem.Beat // bus beats not yet in the bus channel, whole transactions in order
	// outWrites is the number of bus write transactions issued whose last
	// beat the memory bus has not carried yet (seen by the cache's own
	// observer, applied at the next edge): the write buffers in use
	// (CacheConfig.BusWriteEntries).
	outWrites int
	up        []mem.Beat // CPU beats not yet in the CPU channel
	snoops    []snoop
	seq       uint64

	resvValid bool
	resvLine  uint64

	// mshrs are the store misses in flight beyond the access in service,
	// oldest first (at most MaxMisses, with the access's own fill); free
	// recycles them.
	mshrs []*mshr
	free  []*mshr

	stats Stats

	sigState, sigFill, sigHits, sigMisses *waves.Signal
}

// Stats are a cache's counters.
type Stats struct {
	// Hits and Misses count line lookups of cacheable accesses (an access
	// that spans two lines looks up two); a store to a write-back line held
	// shared counts as a miss (it needs ownership).
	Hits, Misses uint64
	// Fills counts line fills (ClassFill and ClassRFO bus reads).
	Fills uint64
	// Upgrades counts stores' claims on lines held shared (ClassUpgrade
	// address-only transactions); UpgradesLost those whose line another
	// master took first, which the cache then read for ownership.
	Upgrades, UpgradesLost uint64
	// Merged counts store pieces merged into an outstanding store miss's
	// register (MaxMisses > 1; counted as misses too).
	Merged uint64
	// WriteBacks counts dirty lines written back (evicted, or read or
	// claimed by another master).
	WriteBacks uint64
	// WriteThroughs counts stores sent to memory by write-through pages.
	WriteThroughs uint64
	// Uncached counts accesses sent to the bus as they are.
	Uncached uint64
	// Invalidations counts lines dropped because another master wrote or
	// claimed them.
	Invalidations uint64
	// ReservationsLost counts load-locked reservations cleared by another
	// master's write or the line's eviction; SCFailed the
	// store-conditionals that did not take effect.
	ReservationsLost, SCFailed uint64
}

// Port returns the CPU-side channel; the CPU attaches to it as master
// (cpu.CPU.Attach).
func (c *Cache) Port() *mem.Channel { return c.port }

// Config returns the geometry and timing.
func (c *Cache) Config() CacheConfig { return c.cfg }

// Stats returns the counters.
func (c *Cache) Stats() Stats { return c.stats }

// SetPolicy sets the write policy of the pages [base, base+size) (bus
// addresses, aligned to PageBytes), at build time or while the simulation
// runs. It does not flush: lines already present stay (a dirty line is
// still written back when evicted); accesses from now on follow the new
// policy. Software that turns a page uncached flushes it first, as on the
// real machines.
func (c *Cache) SetPolicy(base, size uint64, p Policy) error {
	if err := checkRegion(base, size, p, c.cfg.PageBytes); err != nil {
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	c.policies = append(c.policies, region{base, size, p})
	return nil
}

// PolicyAt returns the policy of the page holding bus address addr:
// Uncached outside the node's memory.
func (c *Cache) PolicyAt(addr uint64) Policy {
	if addr < c.memBase || addr-c.memBase >= c.memSize {
		return Uncached
	}
	for i := len(c.policies) - 1; i >= 0; i-- {
		r := c.policies[i]
		if addr >= r.base && addr-r.base < r.size {
			return r.policy
		}
	}
	return WriteBack
}

// Holds reports whether the line holding bus address addr is present, and
// whether it is dirty (for tests and checkers; no timing).
func (c *Cache) Holds(addr uint64) (present, dirty bool) {
	i := c.find(addr >> c.lineShift)
	if i < 0 {
		return false, false
	}
	return true, c.ways[i].state == modified
}

// Reservation returns the line address of the CPU's load-locked
// reservation and whether it is valid.
func (c *Cache) Reservation() (addr uint64, valid bool) {
	return c.resvLine << c.lineShift, c.resvValid
}

// SnoopWrite tells the cache that a master not on its memory bus (a device
// on a memory port of its own) wrote [addr, addr+n) (bus addresses) at now:
// the lines it covers are invalidated at the cache's next edge, as for a
// DMA write seen on the bus.
func (c *Cache) SnoopWrite(now clock.Time, addr uint64, n int, master string) {
	c.snoops = append(c.snoops, snoop{t: now, kind: snWrite, addr: addr, n: n, master: master})
	c.Wake(now)
}

// observe is the cache's bus observer. It only queues the beat: the state
// changes at the cache's next edge, so the result does not depend on
// whether the cache or the bus ticks first.
func (c *Cache) observe(now clock.Time, o bus.Observation) {
	if o.Master == c.Name() && o.Write && o.Last {
		// A write buffer is free (also for an aborted write).
		c.snoops = append(c.snoops, snoop{t: now, kind: snOwnWrite})
		c.Wake(now)
		return
	}
	if o.Err != "" {
		return
	}
	if o.Master == c.Name() {
		if o.First && !o.Write && (o.Req.Class == ClassFill || o.Req.Class == ClassRFO || o.Req.Class == ClassUpgrade) {
			c.snoops = append(c.snoops, snoop{t: now, kind: snOwnFill, req: o.Req})
		}
		return
	}
	if o.Addr < c.memBase || o.Addr-c.memBase >= c.memSize {
		return
	}
	k := snRead
	switch {
	case o.Write && o.Req.Class == ClassWriteBack:
		// Another cache writing back its dirty line: the bytes are those
		// memory already holds (this model keeps no second copy), and
		// copies elsewhere were either dropped when that cache took the
		// line or, when the write-back answers a read, are the reader's
		// fresh shared copy, which it must keep (with its reservation).
		return
	case o.Req.Class == ClassUpgrade && o.Req.Lost:
		// An upgrade its master lost before it reached the bus: it
		// claims nothing (its master fails the store-conditional or
		// reads the line for ownership next). Taking it as a claim
		// made contending LL/SC loops fail one another for ever: each
		// lost upgrade took the reservation of the next load-locked.
		return
	case o.Write:
		k = snWrite
		c.loseUpgrades(o.Addr, max(len(o.Data), 1))
	case o.Req.Class == ClassRFO:
		k = snRFO
		c.loseUpgrades(o.Addr, max(len(o.Data), 1))
	case o.Req.Class == ClassUpgrade:
		c.loseUpgrades(o.Req.Addr, max(o.Req.Len, 1))
		// Address only: the line it claims is the request's extent.
		c.snoops = append(c.snoops, snoop{t: now, kind: snUpgrade, addr: o.Req.Addr, n: max(o.Req.Len, 1), master: o.Master})
		c.Wake(now)
		return
	}
	c.snoops = append(c.snoops, snoop{t: now, kind: k, addr: o.Addr, n: max(len(o.Data), 1), master: o.Master})
	c.Wake(now)
}

// Tick implements clock.Ticker: drain what waits for the channels, apply
// the snoops of earlier edges, take bus responses, then advance the access
// in service (accepting the next one when it is done). It asks for the
// next edge only for what nothing else wakes it for: beats held back by a
// channel's one-push-per-cycle rate and snoops of this edge; the channels
// wake it for data and space, a lookup's end is a timer.
func (c *Cache) Tick(now clock.Time) bool {
	c.drainUp(now)
	c.drainOut(now)
	c.applySnoops(now)
	c.collect(now)
	c.step(now)
	return len(c.snoops) > 0 || len(c.up) > 0 || len(c.out) > 0
}

func (c *Cache) drainUp(now clock.Time) bool {
	moved := false
	for len(c.up) > 0 && c.port.Up.CanPush(now) {
		c.port.Up.Push(now, c.up[0])
		c.up = c.up[1:]
		moved = true
	}
	return moved
}

func (c *Cache) drainOut(now clock.Time) bool {
	moved := false
	for len(c.out) > 0 && c.busCh.Down.CanPush(now) {
		c.busCh.Down.Push(now, c.out[0])
		c.out = c.out[1:]
		moved = true
	}
	return moved
}

// send queues a bus transaction's beats and pushes what fits.
func (c *Cache) send(now clock.Time, beats ...mem.Beat) {
	if len(beats) > 0 && beats[0].Req.Op == mem.Write {
		c.outWrites++
	}
	c.out = append(c.out, beats...)
	c.drainOut(now)
}

// writeBufferFull reports whether the cache's bus writes fill its write
// buffers: it then takes no new access from the CPU.
func (c *Cache) writeBufferFull() bool { return c.outWrites >= c.cfg.BusWriteEntries }

// find returns the way index holding line, or -1.
func (c *Cache) find(line uint64) int {
	base := int(line%c.sets) * c.cfg.Ways
	for i := base; i < base+c.cfg.Ways; i++ {
		if c.ways[i].state != invalid && c.ways[i].line == line {
			return i
		}
	}
	return -1
}

func (c *Cache) touch(i int) {
	c.stamp++
	c.ways[i].used = c.stamp
}

// victim picks the frame for line: an invalid way, else the least recently
// used one, among the frames no miss status holding register holds; -1
// when every frame of the set is held.
func (c *Cache) victim(line uint64) int {
	base := int(line%c.sets) * c.cfg.Ways
	best := -1
	for i := base; i < base+c.cfg.Ways; i++ {
		if c.ways[i].held {
			continue // a miss status holding register owns it
		}
		if c.ways[i].state == invalid {
			return i
		}
		if best < 0 || c.ways[i].used < c.ways[best].used {
			best = i
		}
	}
	return best
}

// lineData is a write-back's data: the line's bytes in memory itself
// (mem.Storage.View), not a copy taken now. Memory is the only copy of the
// data, so it already holds the line; the write-back is the bus and memory
// time of one, and carries whatever the memory holds when the bus moves
// it. A snapshot would undo a store that another CPU performs after
// taking the line and before the write-back lands (a lost update, which
// the LL/SC counter spec catches). A line larger than a storage page falls
// back to a copy.
func (c *Cache) lineData(line uint64) []byte {
	addr := (line << c.lineShift) - c.memBase
	if v, err := c.store.View(addr, c.cfg.LineBytes); err == nil {
		return v
	}
	buf := make([]byte, c.cfg.LineBytes)
	_ = c.store.Read(addr, buf)
	return buf
}

// writeBack queues a bus write of the dirty line in way i and marks it
// clean.
func (c *Cache) writeBack(now clock.Time, i int, why string) {
	line := c.ways[i].line
	c.seq++
	req := &mem.Req{Op: mem.Write, Addr: line << c.lineShift, Len: c.cfg.LineBytes, Posted: true,
		Class: ClassWriteBack, Master: c.Name(), Seq: c.seq}
	c.send(now, mem.WriteBeats(req, c.lineData(line), c.busCh.Width)...)
	c.ways[i].state = shared
	c.stats.WriteBacks++
	if c.env.Trace.Enabled() {
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cache.writeback",
			trace.Addr("addr", req.Addr), trace.Str("why", why))
	}
}

// dropReservation clears the reservation if it is on line.
func (c *Cache) dropReservation(line uint64) {
	if c.resvValid && c.resvLine == line {
		c.resvValid = false
		c.stats.ReservationsLost++
	}
}

// loseUpgrades marks Lost this cache's upgrades of the lines of [addr,
// addr+n) that have not yet been on the bus, when another master claims
// or writes those lines (observed in bus order, before the upgrades can
// be): the same upgrades applySnoop marks lost at the next edge, told to
// the other caches through the request.
func (c *Cache) loseUpgrades(addr uint64, n int) {
	first, last := addr>>c.lineShift, (addr+uint64(n)-1)>>c.lineShift
	lose := func(req *mem.Req, line uint64, onBus bool) {
		if req == nil || onBus || line < first || line > last {
			return
		}
		for _, s := range c.snoops {
			if s.kind == snOwnFill && s.req == req {
				return // on the bus already, ahead of this claim
			}
		}
		req.Lost = true
	}
	if x := c.cur; x != nil && x.wait != nil && x.upgrade && !x.uncached {
		lose(x.wait, x.fillLine, x.onBus)
	}
	for _, m := range c.mshrs {
		if m.upgrade && !m.done {
			lose(m.req, m.line, m.onBus)
		}
	}
}

// applySnoops applies the observations of edges before now, in order.
func (c *Cache) applySnoops(now clock.Time) bool {
	k := 0
	for k < len(c.snoops) && c.snoops[k].t < now {
		c.applySnoop(now, c.snoops[k])
		k++
	}
	if k == 0 {
		return false
	}
	c.snoops = append(c.snoops[:0], c.snoops[k:]...)
	return true
}

func (c *Cache) applySnoop(now clock.Time, s snoop) {
	switch s.kind {
	case snOwnFill:
		if c.cur != nil && c.cur.wait == s.req {
			c.cur.onBus = true
		}
		for _, m := range c.mshrs {
			if m.req == s.req {
				m.onBus = true
			}
		}
		return
	case snOwnWrite:
		c.outWrites--
		return
	}
	first := s.addr >> c.lineShift
	last := (s.addr + uint64(s.n) - 1) >> c.lineShift
	for line := first; line <= last; line++ {
		if x := c.cur; x != nil && x.wait != nil && !x.uncached && x.fillLine == line {
			switch {
			case x.onBus && s.kind == snRead:
				// The fill already read the line (the upgrade claimed
				// it): a later read makes the copy shared, a later write
				// or claim stale.
				x.demoted = true
			case x.onBus:
				x.stale = true
			case x.upgrade && s.kind != snRead:
				// Another master claimed or wrote the line first: the
				// upgrade, still queued, claims a line the cache no longer
				// holds (fillDone reads it for ownership then).
				x.lost = true
			}
		}
		for _, m := range c.mshrs {
			if m.line != line || m.done {
				continue
			}
			switch {
			case m.onBus && s.kind == snRead:
				m.demoted = true
			case m.onBus:
				m.stale = true
			case m.upgrade && s.kind != snRead:
				m.lost = true
			}
		}
		if s.kind != snRead {
			c.dropReservation(line)
		}
		i := c.find(line)
		if i < 0 {
			continue
		}
		switch s.kind {
		case snRead:
			if c.ways[i].state == modified {
				if c.cfg.ImplicitWriteBack {
					// The reader's transaction carried the line to memory.
					c.ways[i].state = shared
					c.stats.WriteBacks++
				} else {
					c.writeBack(now, i, "snoop "+s.master)
				}
			}
		case snRFO, snUpgrade, snWrite:
			if c.ways[i].state == modified && s.kind == snUpgrade {
				// Only a lost upgrade meets a dirty copy: its master's
				// shared copy went when this cache claimed the line, and
				// it reads the line for ownership next, which this cache
				// answers then.
				continue
			}
			if c.ways[i].state == modified && s.kind == snRFO {
				c.writeBack(now, i, "snoop "+s.master)
			}
			// A write by another master replaces the bytes in memory
			// itself, so a dirty line is dropped without a write-back.
			c.ways[i].state = invalid
			c.stats.Invalidations++
			if c.env.Trace.Enabled() {
				c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cache.invalidate",
					trace.Addr("addr", line<<c.lineShift), trace.Str("by", s.master))
			}
		}
	}
}

// collect takes the bus's answers: fill data, uncached read data, write
// completions.
func (c *Cache) collect(now clock.Time) bool {
	moved := false
	for {
		b, ok := c.busCh.Up.Pop(now)
		if !ok {
			return moved
		}
		moved = true
		if m := c.mshrOf(b.Req); m != nil {
			if b.Err != "" {
				c.env.Report(now, c.Name(), "memsys.bus", "%v: %s", b.Req, b.Err)
			}
			if b.Last {
				c.mshrDone(now, m)
			}
			continue
		}
		x := c.cur
		if x == nil || b.Req != x.wait {
			c.env.Report(now, c.Name(), "memsys.protocol", "bus answer %v for no request in flight", b)
			continue
		}
		if b.Err != "" {
			x.err = b.Err
		}
		if x.uncached && b.Req.Op == mem.Read {
			x.rdata = append(x.rdata, b.Data...)
			c.forward(now, x, b.Last)
		}
		if !b.Last {
			continue
		}
		x.wait = nil
		if x.uncached {
			x.stage = stRespond
			continue
		}
		c.fillDone(now, x)
	}
}

// forward queues for the CPU the port-width beats of an uncached read
// whose bytes have arrived from the bus (cut-through): each leaves in the
// cycle the bus beat completing it is popped, as a processor's uncached
// loads retire as their words arrive (the R3000's 14 loads of a FORE cell,
// «14 (40 nanosecond) I/O bus read cycles», AT-P5), rather than after the
// whole bus read. The beat that completes the access waits for the bus's
// last beat (last), so that it is Last only when the bus read is, and an
// error seen on any bus beat is on every CPU beat from then on, the last
// one included. A bus read that ended short is padded with zeros.
func (c *Cache) forward(now clock.Time, x *access, last bool) {
	req := x.req
	if last && len(x.rdata) < req.Len {
		x.rdata = append(x.rdata, make([]byte, req.Len-len(x.rdata))...)
	}
	for x.sent < req.Len {
		n := mem.FirstChunk(req.Addr+uint64(x.sent), req.Len-x.sent, c.port.Width)
		if len(x.rdata) < x.sent+n || (x.sent+n == req.Len && !last) {
			break
		}
		c.up = append(c.up, mem.Beat{Req: req, Data: x.rdata[x.sent : x.sent+n], First: x.sent == 0,
			Last: x.sent+n == req.Len, Err: x.err})
		x.sent += n
	}
	if last && req.Len == 0 {
		c.up = append(c.up, mem.Beat{Req: req, First: true, Last: true, Err: x.err})
	}
	c.drainUp(now)
}

// fillDone installs a filled line and completes the piece it served.
func (c *Cache) fillDone(now clock.Time, x *access) {
	c.env.Monitor.Progress(now)
	if x.upgrade && x.lost && x.err == "" {
		c.stats.UpgradesLost++
		if x.req.Atomic == mem.StoreConditional {
			// The line was taken, and the reservation with it: the
			// store-conditional fails (piece) without the line.
			c.sigState.SetString(now, "LOOKUP")
			c.piece(now, x, x.pieceN)
			return
		}
		// The store still needs the line: read it for ownership now.
		c.fill(now, x, x.fillLine, c.find(x.fillLine), true, x.pieceN)
		return
	}
	if !x.stale && x.err == "" {
		w := &c.ways[x.fillWay]
		w.line = x.fillLine
		w.state = shared
		if x.fillRFO && !x.demoted {
			w.state = modified
		}
		c.touch(x.fillWay)
	}
	c.sigState.SetString(now, "LOOKUP")
	c.piece(now, x, x.pieceN)
}

// piece completes n bytes of the access at x.off: a store's bytes go to
// memory (the cache has the line as required by the page's policy).
func (c *Cache) piece(now clock.Time, x *access, n int) {
	if x.req.Op == mem.Write && !x.failed {
		addr := x.req.Addr + uint64(x.off)
		if x.req.Atomic == mem.StoreConditional && !(c.resvValid && c.resvLine == addr>>c.lineShift) {
			// The reservation was lost while the line was fetched.
			x.failed = true
		} else {
			_ = c.store.Write(addr-c.memBase, x.data[x.off:x.off+n])
		}
	}
	x.off += n
	if x.off < x.req.Len && !x.failed {
		x.stage = stLookup
		x.readyAt = c.Clock().After(now, clock.Cycle(c.cfg.HitCycles))
		return
	}
	x.stage = stRespond
}

// step advances the access in service; it returns whether anything
// happened.
func (c *Cache) step(now clock.Time) bool {
	did := false
	for {
		if c.cur == nil && !c.accept(now) {
			return did
		}
		did = true
		x := c.cur
		switch x.stage {
		case stGather:
			if !c.gather(now, x) {
				return did
			}
			x.stage = stLookup
			continue
		case stLookup, stHold:
			if x.stage == stLookup && now < x.readyAt {
				c.WakeAt(x.readyAt)
				return did
			}
			c.lookup(now, x)
			if x.stage == stLookup && x.readyAt <= now {
				continue
			}
			if x.stage == stBus || x.stage == stHold {
				// A held access looks up again when a register frees
				// (collect, woken by the bus's answer).
				return did
			}
			continue
		case stBus:
			return did
		case stRespond:
			if !c.respond(now, x) {
				return did
			}
			c.cur = nil
			c.sigState.SetString(now, "IDLE")
		}
	}
}

// accept takes the next CPU request; its lookup ends HitCycles later.
func (c *Cache) accept(now clock.Time) bool {
	if len(c.up) > 0 {
		return false // the previous answer has not left yet
	}
	if c.writeBufferFull() {
		// Every write buffer holds a bus write the bus has not taken: the
		// CPU's next access waits in the port (and the CPU behind it once
		// the port is full). drainOut frees an entry at a later edge,
		// which Tick asks for while out is not empty.
		return false
	}
	b, ok := c.port.Down.Peek(now)
	if !ok {
		return false
	}
	if !b.First {
		c.env.Report(now, c.Name(), "memsys.protocol", "data beat without a request: %v", b)
		c.port.Down.Pop(now)
		return false
	}
	// One access is in service at a time: its record and its store-data
	// buffer are reused (nothing keeps x.data once the access is done:
	// memory, write-through and uncached writes take copies).
	x := &c.slot
	*x = access{req: b.Req, stage: stLookup, readyAt: c.Clock().After(now, clock.Cycle(c.cfg.HitCycles)), data: x.data[:0]}
	if b.Req.Op == mem.Write {
		x.stage = stGather
	} else {
		c.port.Down.Pop(now)
	}
	if b.Req.Atomic == mem.StoreConditional && b.Req.Posted {
		c.env.Report(now, c.Name(), "memsys.protocol", "%v: a store-conditional must not be posted (its completion carries CondFailed)", b.Req)
	}
	c.cur = x
	c.sigState.SetString(now, "LOOKUP")
	return true
}

// gather pops a store's beats; true once the last one is in.
func (c *Cache) gather(now clock.Time, x *access) bool {
	for {
		b, ok := c.port.Down.Pop(now)
		if !ok {
			return false
		}
		if b.Req != x.req {
			c.env.Report(now, c.Name(), "memsys.protocol", "store data of %v while gathering %v", b.Req, x.req)
		}
		x.data = append(x.data, b.Data...)
		if b.Last {
			if len(x.data) != x.req.Len {
				c.env.Report(now, c.Name(), "memsys.protocol", "%v: %d bytes of data", x.req, len(x.data))
				x.data = append(x.data, make([]byte, max(x.req.Len-len(x.data), 0))...)[:x.req.Len]
			}
			return true
		}
	}
}

// lookup decides the piece of the access at x.off once the hit time is
// over: a hit completes it, a miss issues the fill, an uncached access
// goes to the bus whole.
func (c *Cache) lookup(now clock.Time, x *access) {
	req := x.req
	addr := req.Addr + uint64(x.off)
	if len(c.mshrs) > 0 && c.mustDrain(x, addr) {
		// Stores are performed in program order: this access waits until
		// every outstanding store miss has performed its stores.
		x.stage = stHold
		return
	}
	if x.off == 0 && req.Atomic == mem.StoreConditional && !(c.resvValid && c.resvLine == addr>>c.lineShift) {
		x.failed = true
		x.stage = stRespond
		return
	}
	pol := c.PolicyAt(addr)
	if x.off == 0 && (pol == Uncached || c.PolicyAt(req.Addr+uint64(max(req.Len, 1))-1) == Uncached) {
		c.uncached(now, x)
		return
	}
	line := addr >> c.lineShift
	n := min(req.Len-x.off, int(((line+1)<<c.lineShift)-addr))
	i := c.find(line)
	write := req.Op == mem.Write
	if c.cfg.MaxMisses > 1 && write && pol == WriteBack && req.Posted && req.Atomic == mem.NotAtomic {
		c.storeNonBlocking(now, x, addr, line, i, n)
		return
	}
	if len(c.mshrs) > 0 && !write {
		// A load of a line whose stores are outstanding waits for them; a
		// load miss needs a free register and a frame no register holds.
		if c.mshrFor(line) != nil || i < 0 && (len(c.mshrs) >= c.maxMisses() || c.victim(line) < 0) {
			x.stage = stHold
			return
		}
	}
	switch {
	case !write && i >= 0, write && pol == WriteBack && i >= 0 && c.ways[i].state == modified:
		c.stats.Hits++
		c.sigHits.Set(now, c.stats.Hits)
		c.touch(i)
		c.piece(now, x, n)
	case write && pol == WriteThrough:
		if i >= 0 {
			c.stats.Hits++
			c.sigHits.Set(now, c.stats.Hits)
			c.touch(i)
		} else {
			c.stats.Misses++
			c.sigMisses.Set(now, c.stats.Misses)
		}
		c.writeThrough(now, x, addr, n)
	case write && pol == WriteBack && i >= 0:
		// A store to a line held shared: claim it without its data.
		c.stats.Misses++
		c.sigMisses.Set(now, c.stats.Misses)
		c.upgrade(now, x, line, i, n)
	default:
		c.stats.Misses++
		c.sigMisses.Set(now, c.stats.Misses)
		c.fill(now, x, line, i, write, n)
	}
}

// maxMisses is the number of misses a cache may have outstanding.
func (c *Cache) maxMisses() int { return max(c.cfg.MaxMisses, 1) }

// mustDrain reports whether the access at addr must wait for the
// outstanding store misses: everything but plain loads and posted plain
// stores to write-back pages (an atomic, an uncached or write-through
// access, a non-posted store), so that stores reach memory, and I/O, in
// program order.
func (c *Cache) mustDrain(x *access, addr uint64) bool {
	req := x.req
	if req.Atomic != mem.NotAtomic || c.PolicyAt(addr) != WriteBack ||
		c.PolicyAt(req.Addr+uint64(max(req.Len, 1))-1) == Uncached || c.PolicyAt(req.Addr) == Uncached {
		return true
	}
	return req.Op == mem.Write && !req.Posted
}

// mshrFor returns the miss status holding register of line, or nil.
func (c *Cache) mshrFor(line uint64) *mshr {
	for _, m := range c.mshrs {
		if m.line == line {
			return m
		}
	}
	return nil
}

// mshrOf returns the register waiting for bus request req, or nil.
func (c *Cache) mshrOf(req *mem.Req) *mshr {
	for _, m := range c.mshrs {
		if m.req == req {
			return m
		}
	}
	return nil
}

// storeNonBlocking serves n bytes of a posted store to a write-back page
// at addr with MaxMisses > 1: a store to a line owned performs at once if
// no older store waits; a store to the line of the youngest outstanding
// miss merges into its register; a store to a line neither owned nor
// claimed allocates a register (an RFO, or an upgrade of a line held
// shared) and the access moves on without waiting for it. A store that
// would overtake an older outstanding store (to an owned line, or to the
// line of a register that is not the youngest), or that finds no free
// register or frame, waits (stHold).
func (c *Cache) storeNonBlocking(now clock.Time, x *access, addr, line uint64, i, n int) {
	m := c.mshrFor(line)
	switch {
	case m != nil && m == c.mshrs[len(c.mshrs)-1]:
		c.stats.Misses++
		c.stats.Merged++
		c.sigMisses.Set(now, c.stats.Misses)
		c.pend(m, addr, x.data[x.off:x.off+n])
		c.advance(now, x, n)
	case m != nil:
		x.stage = stHold
	case i >= 0 && c.ways[i].state == modified:
		if len(c.mshrs) > 0 {
			x.stage = stHold
			return
		}
		c.stats.Hits++
		c.sigHits.Set(now, c.stats.Hits)
		c.touch(i)
		c.piece(now, x, n)
	case len(c.mshrs) >= c.maxMisses(), i < 0 && c.victim(line) < 0:
		x.stage = stHold
	default:
		c.stats.Misses++
		c.sigMisses.Set(now, c.stats.Misses)
		m := c.allocMSHR(now, line, i)
		c.pend(m, addr, x.data[x.off:x.off+n])
		c.advance(now, x, n)
	}
}

// pend merges a store piece into register m (a copy of its data).
func (c *Cache) pend(m *mshr, addr uint64, data []byte) {
	m.stores = append(m.stores, pendStore{addr: addr, off: len(m.buf), n: len(data)})
	m.buf = append(m.buf, data...)
}

// advance completes n bytes of the access at x.off without performing
// them (a store merged into a register).
func (c *Cache) advance(now clock.Time, x *access, n int) {
	x.off += n
	if x.off < x.req.Len {
		x.stage = stLookup
		x.readyAt = c.Clock().After(now, clock.Cycle(c.cfg.HitCycles))
		return
	}
	x.stage = stRespond
}

// allocMSHR takes a register for a store miss on line: an upgrade when way
// i holds the line shared, else an RFO into a victim frame (whose dirty
// line is written back first). The caller checked that a register and a
// frame are free.
func (c *Cache) allocMSHR(now clock.Time, line uint64, i int) *mshr {
	upgrade := i >= 0
	if i < 0 {
		i = c.victim(line)
		if v := &c.ways[i]; v.state != invalid {
			if v.state == modified {
				c.writeBack(now, i, "evict")
			}
			c.dropReservation(v.line)
			v.state = invalid
		}
	}
	var m *mshr
	if k := len(c.free); k > 0 {
		m = c.free[k-1]
		c.free = c.free[:k-1]
		*m = mshr{stores: m.stores[:0], buf: m.buf[:0]}
	} else {
		m = &mshr{}
	}
	m.line, m.way = line, i
	c.ways[i].held = true
	c.mshrs = append(c.mshrs, m)
	c.issue(now, m, upgrade)
	return m
}

// issue sends register m's bus request: an upgrade or an RFO of its line.
func (c *Cache) issue(now clock.Time, m *mshr, upgrade bool) {
	c.seq++
	class := ClassRFO
	if upgrade {
		class = ClassUpgrade
	}
	req := &mem.Req{Op: mem.Read, Addr: m.line << c.lineShift, Len: c.cfg.LineBytes, Class: class,
		Master: c.Name(), Seq: c.seq}
	c.send(now, mem.Beat{Req: req, First: true, Last: true})
	m.req, m.upgrade = req, upgrade
	m.lost, m.onBus, m.stale, m.demoted, m.done, m.fresh = false, false, false, false, false, false
	c.sigFill.Set(now, req.Addr)
	if upgrade {
		c.stats.Upgrades++
	} else {
		c.stats.Fills++
	}
	if c.env.Trace.Enabled() {
		if upgrade {
			c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cache.upgrade", trace.Addr("addr", req.Addr))
		} else {
			c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cache.fill",
				trace.Addr("addr", req.Addr), trace.Str("class", class))
		}
	}
}

// mshrDone completes register m's bus transaction: a lost upgrade reads
// the line for ownership; otherwise the line is installed (modified; shared
// if another master read it since; not at all if another master wrote or
// claimed it since) and the registers' stores are performed as far as
// program order allows (commit).
func (c *Cache) mshrDone(now clock.Time, m *mshr) {
	c.env.Monitor.Progress(now)
	if m.upgrade && m.lost {
		c.stats.UpgradesLost++
		c.issue(now, m, false)
		return
	}
	m.done = true
	if !m.stale {
		w := &c.ways[m.way]
		w.line, w.state = m.line, modified
		if m.demoted {
			w.state = shared
		}
		c.touch(m.way)
	}
	m.fresh = true
	c.commit(now)
	m.fresh = false
}

// commit performs the stores of the oldest registers whose transactions
// are done, in order, and frees them. A register whose line was taken
// after its transaction completed (and before its turn) claims it again.
// One that completes at this edge performs its stores even if another
// master read or claimed the line after its transaction, as a blocking
// store does (its stores are then ordered after that transaction's).
func (c *Cache) commit(now clock.Time) {
	k := 0
	for k < len(c.mshrs) {
		m := c.mshrs[k]
		if !m.done {
			break
		}
		w := &c.ways[m.way]
		owned := w.line == m.line && w.state == modified
		if !owned && !m.fresh {
			c.issue(now, m, w.line == m.line && w.state == shared)
			break
		}
		for _, p := range m.stores {
			_ = c.store.Write(p.addr-c.memBase, m.buf[p.off:p.off+p.n])
		}
		w.held = false
		c.free = append(c.free, m)
		k++
	}
	if k > 0 {
		n := copy(c.mshrs, c.mshrs[k:])
		clear(c.mshrs[n:])
		c.mshrs = c.mshrs[:n]
	}
}

// upgrade issues the address-only claim (ClassUpgrade) on line, which the
// cache holds shared in way i, for a store of n bytes.
func (c *Cache) upgrade(now clock.Time, x *access, line uint64, i, n int) {
	req := c.claimLine(now, x, line, i, n, ClassUpgrade, true, true)
	c.stats.Upgrades++
	c.sigFill.Set(now, req.Addr)
	c.sigState.SetString(now, "UPGRADE")
	if c.env.Trace.Enabled() {
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cache.upgrade", trace.Addr("addr", req.Addr))
	}
}

// claimLine puts the line-sized bus request of class for line (way i,
// for a piece of n bytes) on the bus and makes x wait for it: a fill, a
// read for ownership (rfo) or an address-only upgrade.
func (c *Cache) claimLine(now clock.Time, x *access, line uint64, i, n int, class string, rfo, upgrade bool) *mem.Req {
	c.seq++
	req := &mem.Req{Op: mem.Read, Addr: line << c.lineShift, Len: c.cfg.LineBytes, Class: class,
		Master: c.Name(), Seq: c.seq}
	c.send(now, mem.Beat{Req: req, First: true, Last: true})
	x.wait, x.fillLine, x.fillWay, x.fillRFO, x.pieceN = req, line, i, rfo, n
	x.upgrade, x.lost, x.onBus, x.stale, x.demoted = upgrade, false, false, false, false
	x.stage = stBus
	return req
}

// writeThrough sends n bytes of the store at addr to memory; the cache's
// own copy (if any) is the memory's, so it is written at once.
func (c *Cache) writeThrough(now clock.Time, x *access, addr uint64, n int) {
	data := append([]byte(nil), x.data[x.off:x.off+n]...)
	c.seq++
	req := &mem.Req{Op: mem.Write, Addr: addr, Len: n, Posted: true, Class: ClassWriteThrough,
		Master: x.req.Master, Seq: c.seq}
	c.send(now, mem.WriteBeats(req, data, c.busCh.Width)...)
	c.stats.WriteThroughs++
	if c.env.Trace.Enabled() {
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cache.writethrough",
			trace.Addr("addr", addr), trace.Int("len", int64(n)))
	}
	c.piece(now, x, n)
}

// fill issues the line fill for a miss (or, for a store, the read for
// ownership of a line held shared), writing back a dirty victim first.
func (c *Cache) fill(now clock.Time, x *access, line uint64, i int, rfo bool, n int) {
	if i < 0 {
		i = c.victim(line)
		if v := &c.ways[i]; v.state != invalid {
			if v.state == modified {
				c.writeBack(now, i, "evict")
			}
			c.dropReservation(v.line)
			v.state = invalid
		}
	}
	class := ClassFill
	if rfo {
		class = ClassRFO
	}
	req := c.claimLine(now, x, line, i, n, class, rfo, false)
	c.stats.Fills++
	c.sigFill.Set(now, req.Addr)
	c.sigState.SetString(now, "FILL")
	if c.env.Trace.Enabled() {
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cache.fill",
			trace.Addr("addr", req.Addr), trace.Str("class", class))
	}
}

// uncached sends the whole access to the bus as it is.
func (c *Cache) uncached(now clock.Time, x *access) {
	req := *x.req
	breq := &req
	x.uncached = true
	c.stats.Uncached++
	if req.Op == mem.Read {
		c.send(now, mem.Beat{Req: breq, First: true, Last: true})
		x.wait = breq
		x.stage = stBus
	} else {
		c.send(now, mem.WriteBeats(breq, append([]byte(nil), x.data...), c.busCh.Width)...)
		if req.Posted {
			x.stage = stRespond
		} else {
			x.wait = breq
			x.stage = stBus
		}
	}
	if x.stage == stBus {
		c.sigState.SetString(now, "BUS")
	}
}

// respond answers the CPU: a load's data (read from memory now; an
// uncached load's data has already been forwarded as it arrived), a
// non-posted store's completion. It sets and consumes the reservation.
func (c *Cache) respond(now clock.Time, x *access) bool {
	req := x.req
	if req.Op == mem.Read {
		if !x.uncached {
			data := make([]byte, req.Len)
			_ = c.store.Read(req.Addr-c.memBase, data)
			off := 0
			for k, n := range mem.Chunks(req.Addr, req.Len, c.port.Width) {
				c.up = append(c.up, mem.Beat{Req: req, Data: data[off : off+n], First: k == 0,
					Last: off+n == req.Len, Err: x.err})
				off += n
			}
			if req.Len == 0 {
				c.up = append(c.up, mem.Beat{Req: req, First: true, Last: true, Err: x.err})
			}
		}
		if req.Atomic == mem.LoadLocked && x.err == "" {
			c.resvValid, c.resvLine = true, req.Addr>>c.lineShift
		}
	} else {
		if req.Atomic == mem.StoreConditional {
			c.resvValid = false
			if x.failed {
				c.stats.SCFailed++
				if c.env.Trace.Enabled() {
					c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cache.scfail", trace.Addr("addr", req.Addr))
				}
			}
		}
		if !req.Posted {
			c.up = append(c.up, mem.Beat{Req: req, First: true, Last: true, Err: x.err, CondFailed: x.failed})
		}
	}
	c.drainUp(now)
	return true
}

// Idle implements check.Unit.
func (c *Cache) Idle() bool {
	return c.cur == nil && len(c.out) == 0 && len(c.up) == 0 && len(c.snoops) == 0 && c.outWrites == 0 && len(c.mshrs) == 0
}

// State implements check.Unit.
func (c *Cache) State() string {
	misses := ""
	if len(c.mshrs) > 0 {
		m := c.mshrs[0]
		misses = fmt.Sprintf(", %d store misses outstanding (oldest %v, done %v, %d stores)", len(c.mshrs), m.req, m.done, len(m.stores))
	}
	if c.cur == nil {
		if len(c.out) > 0 || len(c.up) > 0 || c.outWrites > 0 || misses != "" {
			return fmt.Sprintf("idle, %d bus beats and %d CPU beats waiting for channel space, %d bus writes not yet on the bus%s",
				len(c.out), len(c.up), c.outWrites, misses)
		}
		return "idle"
	}
	x := c.cur
	s := fmt.Sprintf("%s: %v at byte %d", stageNames[x.stage], x.req, x.off)
	if x.wait != nil {
		s += fmt.Sprintf(", waiting for bus %v", x.wait)
	}
	return s + misses
}
