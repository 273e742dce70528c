// Package cpu models the host processor as a bus master that issues loads
// and stores one at a time in program order: a store retires when its
// write buffer (the bus master channel) takes it, or, if stores are not
// posted, when the target acknowledges it; a load stalls the processor
// until its data returns; a fence waits until every earlier store has left
// the write buffer and been acknowledged. Whatever the processor is
// attached to (a bus for uncached programmed I/O, a cache model) decides
// what an access costs. The protocol stacks of the boards (Telegraphos,
// VMMC, Cashmere, LCI, the FORE ATM remote-memory operations) run as
// programs of such operations.
//
// Timing: an operation of n >= 1 cycles (a Compute of n, a load or store
// of its issue cycles, an Mprotect, an exception's entry or return) that
// begins in cycle s executes in cycle e = s+n-1 (a store that found the
// write buffer full: in the cycle the buffer takes it), and the next
// operation begins in e+1 at the earliest, so a code step of k
// instructions at CPI 1 takes k cycles. A load (a non-posted store, a
// store-conditional) retires in the cycle t > e its data (acknowledgement)
// arrives, and the next operation may begin in t. Zero-cycle operations (a
// Fence with nothing outstanding, a Call or Wait whose condition holds,
// Enable/DisableInterrupts, a Trap with no entry cost) retire in the cycle
// they begin and add no cycle. An interrupt inside a Compute suspends it
// with the cycles it has left: the program takes the handler's cycles
// longer, no more.
//
// A program is a list of Ops (with continuation closures that insert what
// comes next) or a plain Go function run as a coroutine (Go, Proc): the
// function calls p.Store, p.Load, p.Compute, p.WaitUntil, p.Trap and reads
// like the papers' pseudo-code; the processor pulls one operation at a time
// from it (iter.Pull, synchronous: no goroutine scheduling decides
// anything).
//
// The processor also models what the stacks need from the operating
// system and the instruction set (issue 11, section 2):
//   - interrupts, taken between operations and inside Compute, Call and
//     Wait (the operation resumes after the handler);
//   - kernel entry: Trap enters a registered handler with arguments and
//     returns a status (the FORE ATM remote-memory instructions are
//     emulated this way: atm-remote-memory-access.txt, section 2.2);
//     exception entry masks interrupts, the return unmasks them and takes a
//     pending one at once;
//   - page protection: a per-process page table with read and write
//     permissions; an access without permission enters the fault handler
//     (Cashmere-2L's and the SVM protocols' page-fault handlers,
//     cashmere-2l-memory-channel.txt section 2.4.1), which may Mprotect the
//     page, and the access restarts;
//   - load-locked / store-conditional (mem.Req.Atomic) and fetch-and-op
//     built from them;
//   - costed code steps: instructions at a CPI, memory and I/O accesses
//     issued for their real time, retired instructions counted (the ATM
//     paper's Table 1 is in instruction counts).
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
	// Compute spends Cycles cycles without touching the bus. An interrupt
	// taken inside it suspends it; it resumes with the cycles it had left.
	Compute
	// Call runs Fn; it retires when Fn returns true (Fn is called once
	// per cycle until then), so a program can wait for a flag. An
	// interrupt is taken inside it (while Fn returns false); Fn is
	// evaluated again after the handler.
	Call
	// Wait is a Call that sleeps: Fn is evaluated when the processor is
	// woken (Wake, by whatever changes the condition) instead of every
	// cycle; a program waiting for an event costs no simulation time. An
	// interrupt is taken inside it, and Fn is evaluated again after the
	// handler (a handler that sets the flag ends the wait).
	Wait
	// LoadLocked reads Len bytes at Addr as a load-locked (Alpha LDL_L):
	// the request carries mem.LoadLocked, so the cache that keeps
	// reservations sets this processor's reservation on the line.
	LoadLocked
	// StoreConditional writes Data to Addr as a store-conditional (Alpha
	// STL_C): never posted, it retires on its completion beat, and Status
	// gets 1 if it took effect, 0 if the completion says CondFailed (like
	// STL_C's result register).
	StoreConditional
	// Trap enters the kernel: handler Trap (SetTrapHandler) runs with Args
	// and interrupts masked; the operation retires at the handler's
	// return, and Status gets the handler's Frame.Status. Entry and return
	// cost OSCosts.TrapEntry and TrapReturn cycles.
	Trap
	// Mprotect sets the permissions of the pages covering [Addr, Addr+Len)
	// in the current page table to Perm, for OSCosts.Mprotect cycles.
	Mprotect
	// CodeStep runs Step: its memory and I/O accesses, then its other
	// instructions at the processor's CPI; it retires when all are done
	// and counts Step.Instrs retired instructions.
	CodeStep
	// EnableInterrupts unmasks interrupts (a handler that asks for
	// nesting); a pending one is taken at once.
	EnableInterrupts
	// DisableInterrupts masks interrupts until EnableInterrupts or the
	// return of the exception that masked them.
	DisableInterrupts
	// Program runs a sequential program (an Op made by Go): its operations
	// run in its place, one at a time, as it issues them.
	Program

	// kindReturn ends an exception frame (interrupt, trap or fault).
	kindReturn
	// kindStepEnd retires a code step.
	kindStepEnd
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
	// Status runs when a StoreConditional (1 success, 0 failure) or a Trap
	// (the handler's status) retires, after Done.
	Status func(now clock.Time, status uint64)
	// Trap is a Trap's handler number; Args its arguments.
	Trap int
	Args []uint64
	// Perm is an Mprotect's new permission.
	Perm Perm
	// Step is a CodeStep's declaration.
	Step *Step
	// Label names the operation in traces ("" omits the record).
	Label string
	// Chained ops follow the previous op with no interrupt taken in
	// between (an Alpha PAL-code sequence runs uninterrupted); a chained
	// Compute, Call or Wait is not interrupted inside either.
	Chained bool

	prog  *coroutine // Program
	frame *frame     // kindReturn
	step  *stepRun   // kindStepEnd
	// restarted marks an access restarted by a fault handler: a second
	// fault on it means the handler did not grant the access.
	restarted bool
	// poll marks the operations of a spin loop's code step (Step.Poll).
	poll bool
}

// Builder configures a CPU.
type Builder struct {
	env      *env.Env
	clk      clock.Clock
	issue    int
	posted   bool
	os       OSCosts
	cpiCyc   int
	cpiInstr int
}

// MakeBuilder returns a builder: 1 issue cycle per operation, posted
// stores, no OS costs (OSCosts{}: a platform sets them) and a CPI of 1.
func MakeBuilder() Builder {
	return Builder{issue: 1, posted: true, cpiCyc: 1, cpiInstr: 1}
}

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

// WithOSCosts sets the costs of exception entry and return, mprotect and
// signal delivery.
func (b Builder) WithOSCosts(o OSCosts) Builder { b.os = o; return b }

// WithCPI sets the cycles per instruction of a code step's instructions
// other than its accesses, as cycles/instrs (3, 2 is a CPI of 1.5).
func (b Builder) WithCPI(cycles, instrs int) Builder {
	b.cpiCyc, b.cpiInstr = cycles, instrs
	return b
}

// Build creates the processor; attach it to a bus with Attach.
func (b Builder) Build(name string) (*CPU, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case !b.clk.Valid():
		return nil, errors.New(name + ": no clock")
	case b.issue < 1:
		return nil, fmt.Errorf("%s: issue cycles %d must be at least 1", name, b.issue)
	case b.cpiCyc < 1 || b.cpiInstr < 1:
		return nil, fmt.Errorf("%s: cpi %d/%d: cycles and instructions must be at least 1", name, b.cpiCyc, b.cpiInstr)
	}
	if err := b.os.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &CPU{env: b.env, issue: b.issue, posted: b.posted, os: b.os, cpiCyc: b.cpiCyc, cpiInstr: b.cpiInstr,
		traps: map[int]Handler{}}
	c.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, c)
	c.sigState = b.env.Waves.String(name, "state")
	c.sigState.SetString(0, "IDLE")
	b.env.Register(c)
	return c, nil
}

// CPU is a clocked in-order processor.
type CPU struct {
	*clock.Ticking
	env    *env.Env
	ch     *mem.Channel
	issue  int
	posted bool
	os     OSCosts

	cpiCyc, cpiInstr int

	// cur is the operation being executed (while busy), rest the program
	// after it: a deque, so that Insert (after cur), an interrupt handler
	// (before the next operation, or before the suspended one) and a
	// sequential program's next operation cost the operations they add,
	// not the length of the program still queued.
	cur     Op
	busy    bool
	rest    queue.Queue[Op]
	fetched uint64 // operations taken from the program so far
	state   state
	readyAt clock.Time // issue or compute countdown end
	startAt clock.Time // when the current op began
	// issueN is the current operation's issue cycles; fetchAt the earliest
	// time the next operation may begin: an operation of n >= 1 cycles
	// that began in cycle s occupies cycles s..s+n-1 and executes in the
	// last (or, a store that found the write buffer full, in the cycle it
	// is taken), so its successor begins in the cycle after that at the
	// earliest (one instruction a cycle at CPI 1), never in the cycle the
	// operation executes in.
	issueN   int
	fetchAt  clock.Time
	waitReq  *mem.Req
	acksDue  int // non-posted stores not yet acknowledged
	seq      uint64
	loadData []byte
	beats    []mem.Beat // a burst store's beats not yet in the write buffer
	scReq    *mem.Req   // the store-conditional waiting for its completion
	scFailed bool

	retired   uint64
	stallTime clock.Time
	instrs    uint64

	irq        bool                      // an interrupt is pending
	irqDue     bool                      // an interrupt is being recognised (InterruptDelay)
	irqAt      clock.Time                // the edge it is recognised at
	irqHandler func(now clock.Time) []Op // the handler's operations
	irqs       uint64
	masked     bool // interrupts masked (inside an exception, or asked for)

	traps          map[int]Handler // looked up by number, never iterated
	faultHandler   Handler
	pt             *PageTable
	ntraps, faults uint64

	live []*coroutine // sequential programs started and not finished

	sigState *waves.Signal
}

type state uint8

const (
	sFetch state = iota
	sIssue
	sWait
)

// Attach connects the processor to its bus master channel (a bus, or the
// CPU side of a cache model).
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

// pushFront puts ops, in their order, before the rest of the program: one
// deque push each, never a copy of the program.
func (c *CPU) pushFront(ops []Op) {
	for i := len(ops) - 1; i >= 0; i-- {
		c.rest.PushFront(ops[i])
	}
}

// SetInterruptHandler sets what the processor runs when interrupted: fn
// returns the handler's operations, which run with interrupts masked
// (OSCosts.InterruptEntry and InterruptReturn around them) before the next
// operation of the program, inside a Compute, Call or Wait that is then
// resumed, or at once if the program is done.
func (c *CPU) SetInterruptHandler(fn func(now clock.Time) []Op) { c.irqHandler = fn }

// SetInterruptProgram sets a sequential interrupt handler: fn runs as a
// program (Go) for each interrupt.
func (c *CPU) SetInterruptProgram(fn func(p *Proc)) {
	c.irqHandler = func(clock.Time) []Op { return []Op{Go(fn)} }
}

// Interrupt raises the interrupt line at now. The processor recognises it
// OSCosts.InterruptDelay cycles after the edge that follows now (the
// program runs on meanwhile); the handler then runs at the next operation
// boundary that is not inside a chained sequence, or inside a Compute,
// Call or Wait, once interrupts are not masked. A second interrupt before
// the handler runs (also one still being recognised) is merged with the
// first.
func (c *CPU) Interrupt(now clock.Time) {
	if c.os.InterruptDelay == 0 {
		c.irq = true
		c.Wake(now)
		return
	}
	if c.irq || c.irqDue {
		return
	}
	c.irqDue = true
	c.irqAt = c.Clock().After(now, clock.Cycle(c.os.InterruptDelay+1))
	c.WakeAt(c.irqAt)
}

// recognise makes an interrupt whose recognition delay is over pending.
func (c *CPU) recognise(now clock.Time) {
	if c.irqDue && now >= c.irqAt {
		c.irqDue, c.irq = false, true
	}
}

// Interrupts returns the number of interrupt handlers run.
func (c *CPU) Interrupts() uint64 { return c.irqs }

// Traps returns the number of traps taken; Faults the number of
// protection faults.
func (c *CPU) Traps() uint64 { return c.ntraps }

// Faults returns the number of protection faults taken.
func (c *CPU) Faults() uint64 { return c.faults }

// Masked reports whether interrupts are masked.
func (c *CPU) Masked() bool { return c.masked }

// interruptible reports whether a pending interrupt can be taken now, with
// next the operation it would go in front of (nil: none).
func (c *CPU) interruptible(next *Op) bool {
	return c.irq && c.irqHandler != nil && !c.masked && (next == nil || !next.Chained)
}

// takeInterrupt splices the handler in before the next operation: its
// operations and the frame's return are pushed on the front of the deque.
func (c *CPU) takeInterrupt(now clock.Time, in string) {
	var next *Op
	if c.rest.Len() > 0 {
		next = c.rest.Front()
	}
	if !c.interruptible(next) {
		return
	}
	c.irq = false
	c.irqs++
	if c.env.Trace.Enabled() {
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cpu.irq", trace.Str("in", in))
	}
	c.enter(&frame{kind: frameIRQ, masked: c.masked, startAt: now}, c.os.InterruptEntry, c.irqHandler(now))
}

// suspend gives the current Compute, Call or Wait back to the program to
// be resumed (a Compute with the cycles it has left) and takes the pending
// interrupt in front of it; false if no interrupt can be taken now.
func (c *CPU) suspend(now clock.Time) bool {
	op := c.cur
	if !c.interruptible(&op) || (op.Kind != Compute && op.Kind != Call && op.Kind != Wait) {
		return false
	}
	in := op.Kind.String()
	if op.Label != "" {
		in += " " + op.Label
	}
	if op.Kind == Compute {
		// The compute would retire at readyAt; resumed at a cycle r with
		// n cycles it retires at r+n-1, so n = readyAt-now+1 cycles keep
		// its end where it was plus the handler's time.
		op.Cycles = int(c.Clock().CycleAt(c.readyAt)-c.Clock().CycleAt(now)) + 1
		op.CyclesFn = nil
	}
	c.rest.PushFront(op)
	c.cur, c.busy = Op{}, false
	c.fetched--
	c.state = sFetch
	c.takeInterrupt(now, in)
	return true
}

// Retired returns the number of operations retired.
func (c *CPU) Retired() uint64 { return c.retired }

// Instructions returns the instructions retired by code steps.
func (c *CPU) Instructions() uint64 { return c.instrs }

// StallTime returns the time spent waiting on loads, stores and fences.
func (c *CPU) StallTime() clock.Time { return c.stallTime }

// Tick implements clock.Ticker.
func (c *CPU) Tick(now clock.Time) bool {
	c.collect(now)
	c.recognise(now)
	for {
		if c.state == sFetch && now < c.fetchAt {
			c.WakeAt(c.fetchAt)
			return false
		}
		if c.state == sFetch {
			// A sequential program in front gives its next operation first,
			// so that an interrupt sees whether it is chained (and the
			// program's code runs when its last operation retired, before a
			// handler, as an Op list's continuation does).
			c.prefetch(now)
			c.takeInterrupt(now, "")
			if !c.fetch(now) {
				c.sigState.SetString(now, "IDLE")
				return false
			}
		}
		op := &c.cur
		switch c.state {
		case sFetch:
			c.startAt = now
			c.state = sIssue
			if op.Kind == CodeStep {
				c.expandStep(now, op)
				continue
			}
			n := c.issue
			switch op.Kind {
			case Compute:
				n = op.Cycles
				if op.CyclesFn != nil {
					n = op.CyclesFn(now)
				}
			case Fence, Call, Wait, EnableInterrupts, DisableInterrupts, kindStepEnd:
				n = 0
			case Trap:
				n = c.os.TrapEntry
			case Mprotect:
				n = c.os.Mprotect
			case kindReturn:
				n = op.frame.returnCycles(c.os)
			}
			c.readyAt = c.Clock().After(now, clock.Cycle(max(n-1, 0)))
			c.issueN = n
			if op.Kind == Compute && !op.poll {
				// The program's own work retires at readyAt (later only
				// if an interrupt's handler, which makes progress of its
				// own, is spliced in): the processor is busy, not stuck,
				// until then, however long the work (a program may charge
				// milliseconds at once).
				c.env.Monitor.Progress(c.readyAt)
			}
			c.sigState.SetString(now, "ISSUE")
			continue
		case sIssue:
			if now < c.readyAt {
				if op.Kind == Compute && c.suspend(now) {
					continue
				}
				c.WakeAt(c.readyAt)
				return false
			}
			if !c.execute(now, op) {
				if (op.Kind == Call || op.Kind == Wait) && c.suspend(now) {
					continue
				}
				// A full write buffer wakes the processor when it drains
				// (the channel registered it); a Call's condition is polled.
				c.sigState.SetString(now, "STALL")
				return op.Kind == Call || (op.Kind != Wait && (c.ch == nil || c.ch.Down.Free(now) > 0))
			}
			if c.issueN > 0 {
				// It executed in this cycle, its last: what follows
				// begins in the next one.
				c.fetchAt = c.Clock().After(now, 1)
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

// prefetch makes sure the front of the program is not a sequential
// program: one in front gives its next operation, which goes in front of
// it; one that has returned leaves.
func (c *CPU) prefetch(now clock.Time) {
	for c.rest.Len() > 0 && c.rest.Front().Kind == Program {
		co := c.rest.Front().prog
		if co == nil {
			c.env.Report(now, c.Name(), "cpu.program", "a Program op not made by Go; skipped")
			c.rest.Discard()
			continue
		}
		op, ok := c.pull(now, co)
		if !ok {
			c.rest.Discard()
			continue
		}
		// The operation leaves the program: what it inserts goes after
		// it, in front of the program's next operation. A program it
		// issued (Proc.Do of a Go op) runs here, before the rest of it.
		c.rest.PushFront(op)
	}
}

// fetch takes the next operation of the program into cur; false if there
// is none.
func (c *CPU) fetch(now clock.Time) bool {
	c.prefetch(now)
	if c.rest.Len() == 0 {
		return false
	}
	c.cur, c.busy = c.rest.Pop(), true
	c.fetched++
	return true
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
			if b.Req == c.scReq {
				c.scFailed = b.CondFailed
				c.scReq = nil
			}
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
	case Store, Load, LoadLocked, StoreConditional:
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
		if c.pt != nil {
			write := op.Kind == Store || op.Kind == StoreConditional
			n := op.Len
			if write {
				n = len(op.Data)
			}
			if at, ok := c.pt.Allows(op.Addr, n, write); !ok {
				c.fault(now, op, at, write)
				return true
			}
		}
		if !c.ch.Down.CanPush(now) {
			return false // write buffer full: the processor stalls
		}
		c.seq++
		switch op.Kind {
		case Store, StoreConditional:
			sc := op.Kind == StoreConditional
			req := &mem.Req{Op: mem.Write, Addr: op.Addr, Len: len(op.Data), Posted: c.posted && !sc,
				Class: "pio", Master: c.Name(), Seq: c.seq}
			if sc {
				req.Atomic = mem.StoreConditional
			}
			beats := mem.WriteBeats(req, op.Data, c.ch.Width)
			if len(beats) != 1 && (!op.Burst || sc) {
				c.env.Report(now, c.Name(), "cpu.store", "store of %d bytes at %#x spans %d bus beats; split it", len(op.Data), op.Addr, len(beats))
			}
			c.ch.Down.Push(now, beats[0])
			if !req.Posted {
				c.acksDue++
				c.waitReq = req
			}
			if sc {
				c.scReq, c.scFailed = req, false
			}
			c.beats = nil
			if op.Burst && !sc && len(beats) > 1 {
				c.beats = beats[1:]
				if !c.pushBeats(now) {
					return false
				}
				break
			}
		default:
			req := &mem.Req{Op: mem.Read, Addr: op.Addr, Len: op.Len, Class: "pio", Master: c.Name(), Seq: c.seq, Poll: op.poll}
			if op.Kind == LoadLocked {
				req.Atomic = mem.LoadLocked
			}
			c.ch.Down.Push(now, mem.Beat{Req: req, First: true, Last: true})
			c.waitReq = req
			c.loadData = nil
		}
	case Call, Wait:
		if !op.Fn(now) {
			return false
		}
	case Trap:
		c.trap(now, op)
		return true
	case Mprotect:
		if c.pt == nil {
			c.env.Report(now, c.Name(), "cpu.mprotect", "mprotect %#x+%d with no page table set", op.Addr, op.Len)
		} else {
			c.pt.Protect(op.Addr, op.Len, op.Perm)
		}
	case EnableInterrupts:
		c.masked = false
	case DisableInterrupts:
		c.masked = true
	case kindReturn:
		c.ret(now, op)
		return true
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
	case Load, LoadLocked:
		return c.waitReq == nil
	case Store:
		return c.posted || c.acksDue == 0
	case StoreConditional:
		return c.scReq == nil
	case Fence:
		return c.acksDue == 0 && (c.ch == nil || c.ch.Down.Occupancy(now) == 0)
	}
	return true
}

func (c *CPU) retire(now clock.Time, op *Op) {
	if !op.poll {
		// A spin loop's iteration is not forward progress (Step.Poll).
		c.env.Monitor.Progress(now)
	}
	c.retired++
	if op.Kind != Compute {
		c.stallTime += now - c.startAt
	}
	if op.Kind == kindStepEnd {
		c.endStep(now, op)
		op = &op.step.op
	} else if op.Label != "" && c.env.Trace.Enabled() {
		fields := []trace.Field{trace.Str("op", op.Label), trace.Uint("cycles", uint64(c.Clock().CycleAt(now)-c.Clock().CycleAt(c.startAt)))}
		switch op.Kind {
		case Store, StoreConditional:
			fields = append(fields, trace.Addr("addr", op.Addr), trace.Hash("hash", op.Data))
		case Load, LoadLocked:
			fields = append(fields, trace.Addr("addr", op.Addr), trace.Hash("hash", c.loadData))
		}
		if op.Kind == StoreConditional {
			fields = append(fields, trace.Bool("ok", !c.scFailed))
		}
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cpu.retire", fields...)
	}
	// Done and Status run while the operation is still the current one, so
	// that what they Insert goes right after it.
	if op.Done != nil {
		op.Done(now, c.loadData)
	}
	if op.Kind == StoreConditional && op.Status != nil {
		st := uint64(1)
		if c.scFailed {
			st = 0
		}
		op.Status(now, st)
	}
	c.cur, c.busy = Op{}, false
	c.state = sFetch
}

// Idle implements check.Unit.
func (c *CPU) Idle() bool { return !c.busy && c.rest.Len() == 0 && c.acksDue == 0 && !c.irqDue }

// State implements check.Unit.
func (c *CPU) State() string {
	if !c.busy && c.rest.Len() == 0 {
		return fmt.Sprintf("program done, %d store acks due", c.acksDue)
	}
	if !c.busy {
		s := fmt.Sprintf("before op %d (%d queued, next a %v)", c.fetched, c.rest.Len(), c.rest.Front().Kind)
		if c.rest.Front().poll {
			s += ", polling (a spin loop's step: not progress)"
		}
		return s
	}
	s := fmt.Sprintf("at op %d, a %v%s (%s; %d more queued)", c.fetched-1, c.cur.Kind, label(c.cur.Label), c.state, c.rest.Len())
	if c.waitReq != nil {
		s += fmt.Sprintf(", waiting for %v", c.waitReq)
	}
	if c.cur.poll {
		s += ", polling (a spin loop's step: not progress)"
	}
	return s
}

func label(l string) string {
	if l == "" {
		return ""
	}
	return " " + strconv.Quote(l)
}

var kindNames = [...]string{Store: "store", Load: "load", Fence: "fence", Compute: "compute", Call: "call", Wait: "wait",
	LoadLocked: "load-locked", StoreConditional: "store-conditional", Trap: "trap", Mprotect: "mprotect",
	CodeStep: "step", EnableInterrupts: "enable-interrupts", DisableInterrupts: "disable-interrupts",
	Program: "program", kindReturn: "return", kindStepEnd: "step-end"}

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
