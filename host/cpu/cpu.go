// Package cpu models the host processor as a bus master that issues
// uncached (programmed I/O) loads and stores, one at a time in program
// order: a store retires when its write buffer (the bus master channel)
// takes it, or, if stores are not posted, when the target acknowledges it;
// a load stalls the processor until its data returns; a fence waits until
// every earlier store has left the write buffer and been acknowledged. The
// protocol stacks of later boards (Telegraphos, VMMC, Cashmere, LCI) run as
// programs of such operations.
package cpu

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Kind is an operation's type.
type Kind uint8

// Operations.
const (
	// Store writes Data to Addr: one bus beat, or, if Burst is set, one
	// write transaction of several beats (a write-combining buffer
	// flushed as a burst).
	Store Kind = iota
	// Load reads Len bytes at Addr and stalls until they arrive.
	Load
	// Fence waits until all earlier stores have completed.
	Fence
	// Compute spends Cycles cycles without touching the bus.
	Compute
	// Call runs Fn; it retires when Fn returns true (Fn is called once
	// per cycle until then), so a program can wait for a flag.
	Call
	// Wait is a Call that sleeps: Fn is evaluated when the processor is
	// woken (Wake, by whatever changes the condition) instead of every
	// cycle; a program waiting for an event costs no simulation time.
	Wait
)

// Op is one operation of a program.
type Op struct {
	Kind   Kind
	Addr   uint64
	Data   []byte
	Len    int
	Cycles int
	// CyclesFn, if set, gives a Compute's cycles when it starts (a cost
	// that depends on the state then, such as cache misses).
	CyclesFn func(now clock.Time) int
	// Burst lets a Store span several bus beats (write-combining).
	Burst bool
	Fn    func(now clock.Time) bool
	// Done runs when the operation retires, with a load's data.
	Done func(now clock.Time, data []byte)
	// Label names the operation in traces ("" omits the record).
	Label string
	// Chained ops follow the previous op with no interrupt taken in
	// between (an Alpha PAL-code sequence runs uninterrupted).
	Chained bool
}

// Builder configures a CPU.
type Builder struct {
	env    *env.Env
	clk    clock.Clock
	issue  int
	posted bool
}

// MakeBuilder returns a builder: 1 issue cycle per operation, posted
// stores.
func MakeBuilder() Builder { return Builder{issue: 1, posted: true} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithClock sets the processor clock (required).
func (b Builder) WithClock(c clock.Clock) Builder { b.clk = c; return b }

// WithIssueCycles sets the processor cycles spent issuing each load or
// store (instruction overhead before it reaches the write buffer).
func (b Builder) WithIssueCycles(n int) Builder { b.issue = n; return b }

// WithPostedStores sets whether stores retire at the write buffer (true) or
// wait for the target's acknowledgement.
func (b Builder) WithPostedStores(p bool) Builder { b.posted = p; return b }

// Build creates the processor; attach it to a bus with Attach.
func (b Builder) Build(name string) (*CPU, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case !b.clk.Valid():
		return nil, errors.New(name + ": no clock")
	case b.issue < 1:
		return nil, fmt.Errorf("%s: issue cycles %d must be at least 1", name, b.issue)
	}
	c := &CPU{env: b.env, issue: b.issue, posted: b.posted}
	c.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, c)
	c.sigState = b.env.Waves.String(name, "state")
	c.sigState.SetString(0, "IDLE")
	b.env.Register(c)
	return c, nil
}

// CPU is a clocked in-order processor issuing uncached accesses.
type CPU struct {
	*clock.Ticking
	env    *env.Env
	ch     *mem.Channel
	issue  int
	posted bool

	// cur is the operation being executed (while busy), rest the program
	// after it: a deque, so that Insert (after cur) and an interrupt
	// handler (before the next operation) cost the operations they add,
	// not the length of the program still queued.
	cur      Op
	busy     bool
	rest     queue.Queue[Op]
	fetched  uint64 // operations taken from the program so far
	state    state
	readyAt  clock.Time // issue or compute countdown end
	startAt  clock.Time // when the current op began
	waitReq  *mem.Req
	acksDue  int // non-posted stores not yet acknowledged
	seq      uint64
	loadData []byte
	beats    []mem.Beat // a burst store's beats not yet in the write buffer

	retired   uint64
	stallTime clock.Time

	irq        bool                      // an interrupt is pending
	irqHandler func(now clock.Time) []Op // the handler's operations
	irqs       uint64

	sigState *waves.Signal
}

type state uint8

const (
	sFetch state = iota
	sIssue
	sWait
)

// Attach connects the processor to its bus master channel.
func (c *CPU) Attach(ch *mem.Channel) {
	c.ch = ch
	ch.ConnectMaster(c)
}

// Run sets the program up before the simulation runs: the processor
// starts it at its first edge.
func (c *CPU) Run(ops ...Op) {
	for _, op := range ops {
		c.rest.Push(op)
	}
	c.Start()
}

// Append adds operations while the simulation runs (from another
// component's tick at now); the processor sees them at its next edge.
func (c *CPU) Append(now clock.Time, ops ...Op) {
	for _, op := range ops {
		c.rest.Push(op)
	}
	c.Wake(now)
}

// Insert puts ops right after the operation being executed (call it from
// an operation's Fn or Done): a library call that decides its next steps
// when it runs (which buffer it got, whether a message was there).
//
// Called while no operation is being executed, it puts ops after the next
// one (or at the end of a finished program).
func (c *CPU) Insert(ops ...Op) {
	if !c.busy && c.rest.Len() > 0 {
		next := c.rest.Pop()
		c.pushFront(ops)
		c.rest.PushFront(next)
		return
	}
	c.pushFront(ops)
}

// pushFront puts ops, in their order, before the rest of the program.
func (c *CPU) pushFront(ops []Op) {
	for i := len(ops) - 1; i >= 0; i-- {
		c.rest.PushFront(ops[i])
	}
}

// SetInterruptHandler sets what the processor runs when interrupted: fn
// returns the handler's operations, which run before the next operation of
// the program (or at once if the program is done).
func (c *CPU) SetInterruptHandler(fn func(now clock.Time) []Op) { c.irqHandler = fn }

// Interrupt raises the interrupt line at now; the handler runs at the next
// operation boundary that is not inside a chained sequence. A second
// interrupt before the handler runs is merged with the first.
func (c *CPU) Interrupt(now clock.Time) {
	c.irq = true
	c.Wake(now)
}

// Interrupts returns the number of interrupt handlers run.
func (c *CPU) Interrupts() uint64 { return c.irqs }

// takeInterrupt splices the handler in before the next operation.
func (c *CPU) takeInterrupt(now clock.Time) {
	if !c.irq || c.irqHandler == nil || (c.rest.Len() > 0 && c.rest.Front().Chained) {
		return
	}
	c.irq = false
	c.irqs++
	c.pushFront(c.irqHandler(now))
}

// Retired returns the number of operations retired.
func (c *CPU) Retired() uint64 { return c.retired }

// StallTime returns the time spent waiting on loads, stores and fences.
func (c *CPU) StallTime() clock.Time { return c.stallTime }

// Tick implements clock.Ticker.
func (c *CPU) Tick(now clock.Time) bool {
	c.collect(now)
	for {
		if c.state == sFetch {
			c.takeInterrupt(now)
			if c.rest.Len() == 0 {
				c.sigState.SetString(now, "IDLE")
				return false
			}
			// The operation leaves the program: what it inserts goes
			// after it, in front of the rest.
			c.cur, c.busy = c.rest.Pop(), true
			c.fetched++
		}
		op := &c.cur
		switch c.state {
		case sFetch:
			c.startAt = now
			c.state = sIssue
			n := c.issue
			if op.Kind == Compute {
				n = op.Cycles
				if op.CyclesFn != nil {
					n = op.CyclesFn(now)
				}
			}
			if op.Kind == Fence || op.Kind == Call || op.Kind == Wait {
				n = 0
			}
			c.readyAt = c.Clock().After(now, clock.Cycle(max(n-1, 0)))
			c.sigState.SetString(now, "ISSUE")
			continue
		case sIssue:
			if now < c.readyAt {
				c.WakeAt(c.readyAt)
				return false
			}
			if !c.execute(now, op) {
				// A full write buffer wakes the processor when it drains
				// (the channel registered it); a Call's condition is polled.
				c.sigState.SetString(now, "STALL")
				return op.Kind == Call || (op.Kind != Wait && (c.ch == nil || c.ch.Down.Free(now) > 0))
			}
			continue
		case sWait:
			if !c.waitDone(now, op) {
				c.sigState.SetString(now, "STALL")
				return c.ch == nil || op.Kind == Fence
			}
			c.retire(now, op)
			continue
		}
	}
}

// collect takes upstream beats: load data and store acknowledgements.
func (c *CPU) collect(now clock.Time) {
	if c.ch == nil {
		return
	}
	for {
		b, ok := c.ch.Up.Pop(now)
		if !ok {
			return
		}
		if b.Err != "" {
			c.env.Report(now, c.Name(), "cpu.buserror", "%v: %s", b.Req, b.Err)
		}
		if b.Req.Op == mem.Write {
			c.acksDue--
			continue
		}
		if b.Req == c.waitReq {
			c.loadData = append(c.loadData, b.Data...)
			if b.Last {
				c.waitReq = nil
			}
		}
	}
}

// execute issues the operation; false if it must retry next cycle.
func (c *CPU) execute(now clock.Time, op *Op) bool {
	switch op.Kind {
	case Store, Load:
		if c.ch == nil {
			c.env.Report(now, c.Name(), "cpu.config", "access with no bus attached")
			c.state = sWait
			return true
		}
		if len(c.beats) > 0 { // the rest of a burst store
			if !c.pushBeats(now) {
				return false
			}
			break
		}
		if !c.ch.Down.CanPush(now) {
			return false // write buffer full: the processor stalls
		}
		c.seq++
		if op.Kind == Store {
			req := &mem.Req{Op: mem.Write, Addr: op.Addr, Len: len(op.Data), Posted: c.posted,
				Class: "pio", Master: c.Name(), Seq: c.seq}
			beats := mem.WriteBeats(req, op.Data, c.ch.Width)
			if len(beats) != 1 && !op.Burst {
				c.env.Report(now, c.Name(), "cpu.store", "store of %d bytes at %#x spans %d bus beats; split it", len(op.Data), op.Addr, len(beats))
			}
			c.ch.Down.Push(now, beats[0])
			if !c.posted {
				c.acksDue++
				c.waitReq = req
			}
			c.beats = nil
			if op.Burst && len(beats) > 1 {
				c.beats = beats[1:]
				if !c.pushBeats(now) {
					return false
				}
				break
			}
		} else {
			req := &mem.Req{Op: mem.Read, Addr: op.Addr, Len: op.Len, Class: "pio", Master: c.Name(), Seq: c.seq}
			c.ch.Down.Push(now, mem.Beat{Req: req, First: true, Last: true})
			c.waitReq = req
			c.loadData = nil
		}
	case Call, Wait:
		if !op.Fn(now) {
			return false
		}
	}
	c.state = sWait
	return true
}

// pushBeats moves a burst store's remaining beats into the write buffer as
// far as it has room; it reports whether all are in.
func (c *CPU) pushBeats(now clock.Time) bool {
	for len(c.beats) > 0 && c.ch.Down.CanPush(now) {
		c.ch.Down.Push(now, c.beats[0])
		c.beats = c.beats[1:]
	}
	return len(c.beats) == 0
}

func (c *CPU) waitDone(now clock.Time, op *Op) bool {
	switch op.Kind {
	case Load:
		return c.waitReq == nil
	case Store:
		return c.posted || c.acksDue == 0
	case Fence:
		return c.acksDue == 0 && (c.ch == nil || c.ch.Down.Occupancy(now) == 0)
	}
	return true
}

func (c *CPU) retire(now clock.Time, op *Op) {
	c.env.Monitor.Progress(now)
	c.retired++
	if op.Kind != Compute {
		c.stallTime += now - c.startAt
	}
	if op.Label != "" && c.env.Trace.Enabled() {
		fields := []trace.Field{trace.Str("op", op.Label), trace.Uint("cycles", uint64(c.Clock().CycleAt(now)-c.Clock().CycleAt(c.startAt)))}
		switch op.Kind {
		case Store:
			fields = append(fields, trace.Addr("addr", op.Addr), trace.Hash("hash", op.Data))
		case Load:
			fields = append(fields, trace.Addr("addr", op.Addr), trace.Hash("hash", c.loadData))
		}
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cpu.retire", fields...)
	}
	if op.Done != nil {
		op.Done(now, c.loadData)
	}
	c.cur, c.busy = Op{}, false
	c.state = sFetch
}

// Idle implements check.Unit.
func (c *CPU) Idle() bool { return !c.busy && c.rest.Len() == 0 && c.acksDue == 0 }

// State implements check.Unit.
func (c *CPU) State() string {
	if !c.busy && c.rest.Len() == 0 {
		return fmt.Sprintf("program done, %d store acks due", c.acksDue)
	}
	if !c.busy {
		return fmt.Sprintf("before op %d (%d queued, next a %v)", c.fetched, c.rest.Len(), c.rest.Front().Kind)
	}
	s := fmt.Sprintf("at op %d, a %v%s (%s; %d more queued)", c.fetched-1, c.cur.Kind, label(c.cur.Label), c.state, c.rest.Len())
	if c.waitReq != nil {
		s += fmt.Sprintf(", waiting for %v", c.waitReq)
	}
	return s
}

func label(l string) string {
	if l == "" {
		return ""
	}
	return " " + strconv.Quote(l)
}

var kindNames = [...]string{Store: "store", Load: "load", Fence: "fence", Compute: "compute", Call: "call", Wait: "wait"}

// String names the operation kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

var stateNames = [...]string{sFetch: "fetching", sIssue: "issuing", sWait: "waiting to retire"}

func (s state) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state %d", uint8(s))
}
