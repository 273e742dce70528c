package cpu

import (
	"encoding/binary"
	"errors"
	"iter"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
)

// Go makes a sequential program: an Op that runs fn as a coroutine
// (iter.Pull). When the processor reaches the Op it resumes fn until fn
// issues an operation (p.Store, p.Load, p.Compute, ...), runs that
// operation in the Op's place, and resumes fn with its result when the
// processor comes to fetch the next operation (Proc.Now says which cycle
// that is); the Op is done when fn returns. The coroutine runs
// synchronously inside the processor's tick, so no goroutine scheduling
// can change a result: the same program gives the same trace.
//
// An Op made by Go runs once; put it in one program, or call Go again.
// Operations that fn's callbacks Insert run after the operation that
// inserted them, before fn resumes.
func Go(fn func(p *Proc)) Op { return Op{Kind: Program, prog: &coroutine{fn: fn}} }

// coroutine is a sequential program's state.
type coroutine struct {
	fn   func(p *Proc)
	p    *Proc
	next func() (Op, bool)
	stop func()
	done bool
}

// errStopped unwinds a program whose processor was closed.
var errStopped = errors.New("cpu: program stopped")

// pull resumes the program until it issues its next operation; false once
// it has returned.
func (c *CPU) pull(now clock.Time, co *coroutine) (Op, bool) {
	if co.done {
		return Op{}, false
	}
	if co.next == nil {
		co.p = &Proc{cpu: c}
		co.next, co.stop = iter.Pull(func(yield func(Op) bool) {
			defer func() {
				if r := recover(); r != nil && r != errStopped { //nolint:errorlint // a sentinel panic value
					panic(r)
				}
			}()
			co.p.yield = yield
			co.fn(co.p)
		})
		c.live = append(c.live, co)
	}
	co.p.now = now
	op, ok := co.next()
	if !ok {
		co.done = true
		c.live = slices.DeleteFunc(c.live, func(x *coroutine) bool { return x == co })
	}
	return op, ok
}

// Close ends the sequential programs that have not returned (a program
// still waiting when the simulation ends); their coroutines are released.
func (c *CPU) Close() {
	for _, co := range c.live {
		co.done = true
		co.stop()
	}
	c.live = nil
}

// Programs returns the number of sequential programs started and not yet
// returned.
func (c *CPU) Programs() int { return len(c.live) }

// Proc is a sequential program's handle on its processor: each method
// issues one operation (or a short sequence of them) and returns when it
// has retired, with its result.
type Proc struct {
	cpu    *CPU
	yield  func(Op) bool
	now    clock.Time
	data   []byte
	status uint64
	label  string
}

// CPU returns the processor the program runs on.
func (p *Proc) CPU() *CPU { return p.cpu }

// Now returns the simulated time at which the program's Go code is
// running: when the processor comes to fetch the program's next operation
// (after what its last operation's callbacks inserted ran, before any
// interrupt handler taken then). After an operation of n >= 1 cycles that
// is the cycle after it executed, one cycle after its Done (an Op list's
// continuation) ran; after a load or a zero-cycle operation it is the
// cycle the operation retired. Inside a WaitUntil's or PollUntil's
// condition it is the cycle of the evaluation.
func (p *Proc) Now() clock.Time { return p.now }

// As labels the next operation (its cpu.retire trace record) and returns
// p: p.As("flag").Store(a, d).
func (p *Proc) As(label string) *Proc {
	p.label = label
	return p
}

// Do runs op and returns a load's data and a Trap's or
// StoreConditional's status. op's own Done and Status still run. Do of an
// Op made by Go runs that program to its end in place (a subroutine
// written as a program); it returns no data.
func (p *Proc) Do(op Op) ([]byte, uint64) {
	done, status := op.Done, op.Status
	op.Done = func(now clock.Time, d []byte) {
		p.now, p.data = now, d
		if done != nil {
			done(now, d)
		}
	}
	op.Status = func(now clock.Time, s uint64) {
		p.status = s
		if status != nil {
			status(now, s)
		}
	}
	if op.Label == "" {
		op.Label = p.label
	}
	p.label = ""
	p.data, p.status = nil, 0
	if !p.yield(op) {
		panic(errStopped)
	}
	return p.data, p.status
}

// Store writes data at addr (one bus beat; a store that spans more is
// reported).
func (p *Proc) Store(addr uint64, data []byte) { p.Do(Op{Kind: Store, Addr: addr, Data: data}) }

// Load reads n bytes at addr.
func (p *Proc) Load(addr uint64, n int) []byte {
	d, _ := p.Do(Op{Kind: Load, Addr: addr, Len: n})
	return d
}

// Store32 writes a little-endian 32-bit word (Alpha and x86 byte order).
func (p *Proc) Store32(addr uint64, v uint32) { p.Store(addr, le32(v)) }

// Load32 reads a little-endian 32-bit word.
func (p *Proc) Load32(addr uint64) uint32 { return word32(p.Load(addr, 4)) }

// Compute spends n processor cycles.
func (p *Proc) Compute(n int) { p.Do(Op{Kind: Compute, Cycles: n}) }

// Fence waits until every earlier store has completed.
func (p *Proc) Fence() { p.Do(Op{Kind: Fence}) }

// WaitUntil sleeps until cond holds: cond is evaluated now, whenever the
// processor is woken, and after each interrupt handler (a handler that
// sets the flag ends the wait).
func (p *Proc) WaitUntil(cond func() bool) {
	p.Do(Op{Kind: Wait, Fn: func(now clock.Time) bool { p.now = now; return cond() }})
}

// PollUntil evaluates cond every cycle until it holds.
func (p *Proc) PollUntil(cond func() bool) {
	p.Do(Op{Kind: Call, Fn: func(now clock.Time) bool { p.now = now; return cond() }})
}

// Trap enters the kernel's handler n with args and returns its status.
func (p *Proc) Trap(n int, args ...uint64) uint64 {
	_, s := p.Do(Op{Kind: Trap, Trap: n, Args: args})
	return s
}

// Mprotect sets the permission of the pages covering [addr, addr+n).
func (p *Proc) Mprotect(addr uint64, n int, perm Perm) {
	p.Do(Op{Kind: Mprotect, Addr: addr, Len: n, Perm: perm})
}

// LoadLocked reads n bytes at addr and sets the processor's reservation.
func (p *Proc) LoadLocked(addr uint64, n int) []byte {
	d, _ := p.Do(Op{Kind: LoadLocked, Addr: addr, Len: n})
	return d
}

// StoreConditional writes data at addr if the reservation still holds;
// it reports whether it did.
func (p *Proc) StoreConditional(addr uint64, data []byte) bool {
	_, s := p.Do(Op{Kind: StoreConditional, Addr: addr, Data: data})
	return s == 1
}

// LoadLocked32 is LoadLocked of a little-endian 32-bit word.
func (p *Proc) LoadLocked32(addr uint64) uint32 { return word32(p.LoadLocked(addr, 4)) }

// StoreConditional32 is StoreConditional of a little-endian 32-bit word.
func (p *Proc) StoreConditional32(addr uint64, v uint32) bool {
	return p.StoreConditional(addr, le32(v))
}

// FetchAdd adds delta to the 32-bit word at addr atomically and returns
// its old value: an LL/SC loop, retried until the store-conditional
// succeeds (Alpha Architecture Handbook's atomic update sequence).
func (p *Proc) FetchAdd(addr uint64, delta uint32) uint32 {
	for {
		old := p.LoadLocked32(addr)
		if p.StoreConditional32(addr, old+delta) {
			return old
		}
	}
}

// TestAndSet sets the 32-bit word at addr to 1 atomically and returns its
// old value (an LL/SC loop).
func (p *Proc) TestAndSet(addr uint64) uint32 {
	for {
		old := p.LoadLocked32(addr)
		if p.StoreConditional32(addr, 1) {
			return old
		}
	}
}

// Step runs a costed code step and returns the data of its loads, one
// slice per load in order.
func (p *Proc) Step(s Step) [][]byte {
	d, _ := p.Do(Op{Kind: CodeStep, Step: &s})
	var out [][]byte
	for _, a := range s.Accesses {
		if a.Write {
			continue
		}
		n := min(a.Len, len(d))
		out = append(out, d[:n:n])
		d = d[n:]
	}
	return out
}

// EnableInterrupts unmasks interrupts (a handler that allows nesting).
func (p *Proc) EnableInterrupts() { p.Do(Op{Kind: EnableInterrupts}) }

// DisableInterrupts masks interrupts.
func (p *Proc) DisableInterrupts() { p.Do(Op{Kind: DisableInterrupts}) }

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func word32(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}
