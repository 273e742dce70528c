package cpu

import (
	"fmt"
	"math/bits"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/trace"
)

// OSCosts are the processor cycles the operating system and the exception
// hardware spend around handlers: what the papers measure as a protection
// crossing, an interrupt dispatch, a page fault or an mprotect call. The
// handlers' own work is their operations. A platform sets them (with a
// source per value); the zero value, the Builder's default, makes every
// exception free, for unit tests and for hosts whose stacks never take one.
type OSCosts struct {
	// InterruptEntry is the dispatch from the interrupt to the handler's
	// first operation (saving state, finding the device);
	// InterruptReturn the way back to the interrupted program.
	InterruptEntry, InterruptReturn int
	// InterruptDelay is the recognition of an interrupt: the cycles from
	// the line rising (CPU.Interrupt) to the processor taking it, during
	// which the program runs on (the interrupt controller and the
	// processor's recognition; SHRIMP's outgoing-FIFO bound is «the memory
	// write bandwidth multiplied by the time it takes the CPU to recognize
	// the threshold interrupt», shrimp-design-choices.txt section 4.5.2,
	// so the writer must go on writing meanwhile). 0 takes it at the next
	// edge.
	InterruptDelay int
	// TrapEntry is the kernel entry of a Trap (a system call, an emulated
	// instruction) up to its handler; TrapReturn the exit back to the
	// program with the status.
	TrapEntry, TrapReturn int
	// FaultEntry is the protection fault's kernel entry: the trap, finding
	// the mapping and deciding to signal the process.
	FaultEntry int
	// SignalDelivery is the kernel delivering the fault to the process's
	// handler (a Unix SIGSEGV handler: Cashmere-2L's fault handlers run at
	// user level, cashmere-2l-memory-channel.txt section 2.3).
	SignalDelivery int
	// FaultReturn is the return from the handler (sigreturn) up to the
	// restarted access.
	FaultReturn int
	// Mprotect is an mprotect call: the system call and the page-table
	// and TLB update.
	Mprotect int
}

// Validate returns an error naming the first negative cost.
func (o OSCosts) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"InterruptEntry", o.InterruptEntry}, {"InterruptReturn", o.InterruptReturn},
		{"InterruptDelay", o.InterruptDelay},
		{"TrapEntry", o.TrapEntry}, {"TrapReturn", o.TrapReturn}, {"FaultEntry", o.FaultEntry},
		{"SignalDelivery", o.SignalDelivery}, {"FaultReturn", o.FaultReturn}, {"Mprotect", o.Mprotect}} {
		if f.v < 0 {
			return fmt.Errorf("os costs: %s %d cycles must not be negative", f.name, f.v)
		}
	}
	return nil
}

// Perm is a page's access permission.
type Perm uint8

// Permissions.
const (
	// PermNone faults on every access (a page not present, or invalidated
	// by a write notice in Cashmere-2L).
	PermNone Perm = 0
	// PermRead allows loads.
	PermRead Perm = 1
	// PermWrite allows stores.
	PermWrite Perm = 2
	// PermReadWrite allows both.
	PermReadWrite = PermRead | PermWrite
)

// String names the permission.
func (p Perm) String() string {
	switch p {
	case PermNone:
		return "none"
	case PermRead:
		return "read"
	case PermWrite:
		return "write"
	case PermReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("perm %d", uint8(p))
}

// PageTable is one process's virtual-memory permissions: a permission per
// page of PageSize bytes, Default for pages never protected. Addresses are
// the processor's (no translation is modelled: a page is protected where
// it is accessed).
type PageTable struct {
	shift uint
	def   Perm
	pages map[uint64]Perm // looked up by page, never iterated
}

// NewPageTable returns a page table of pages of pageSize bytes (a power
// of two; the 21064A's 8 KB, the R3000's 4 KB), every page at def.
func NewPageTable(pageSize uint64, def Perm) (*PageTable, error) {
	if pageSize == 0 || pageSize&(pageSize-1) != 0 {
		return nil, fmt.Errorf("page table: page size %d must be a power of two", pageSize)
	}
	if def > PermReadWrite {
		return nil, fmt.Errorf("page table: default permission %d is not a Perm", def)
	}
	return &PageTable{shift: uint(bits.TrailingZeros64(pageSize)), def: def, pages: map[uint64]Perm{}}, nil
}

// PageSize returns the page size in bytes.
func (t *PageTable) PageSize() uint64 { return 1 << t.shift }

// Perm returns the permission of the page holding addr.
func (t *PageTable) Perm(addr uint64) Perm {
	if p, ok := t.pages[addr>>t.shift]; ok {
		return p
	}
	return t.def
}

// Protect sets the permission of every page that [addr, addr+n) touches
// (the page of addr if n is 0).
func (t *PageTable) Protect(addr uint64, n int, p Perm) {
	first, last := t.span(addr, n)
	for pg := first; pg <= last; pg++ {
		t.pages[pg] = p
	}
}

// Allows reports whether an access of n bytes at addr is permitted; if
// not, it returns the first address (of a page) that refuses it.
func (t *PageTable) Allows(addr uint64, n int, write bool) (uint64, bool) {
	need := PermRead
	if write {
		need = PermWrite
	}
	first, last := t.span(addr, n)
	for pg := first; pg <= last; pg++ {
		p, ok := t.pages[pg]
		if !ok {
			p = t.def
		}
		if p&need == 0 {
			return max(addr, pg<<t.shift), false
		}
	}
	return 0, true
}

func (t *PageTable) span(addr uint64, n int) (uint64, uint64) {
	last := addr
	if n > 0 {
		last = addr + uint64(n) - 1
	}
	return addr >> t.shift, last >> t.shift
}

// SetPageTable makes pt the current process's page table (a context
// switch); nil turns protection checks off (every access allowed), the
// default.
func (c *CPU) SetPageTable(pt *PageTable) { c.pt = pt }

// PageTable returns the current page table.
func (c *CPU) PageTable() *PageTable { return c.pt }

// Frame is what an exception handler sees and returns: the trap's number,
// arguments and status, or the faulting access.
type Frame struct {
	// Now is the last cycle of the exception's entry: a Trap's last
	// TrapEntry cycle (its own cycle if TrapEntry is 0), a fault's
	// FaultEntry+SignalDelivery cycles after the faulting access's cycle.
	// The handler's first operation begins in the next cycle (in the same
	// one for a Trap with TrapEntry 0).
	Now clock.Time
	// Trap and Args are a Trap's number and arguments; the handler sets
	// Status, which the Trap's Status callback (Proc.Trap's result) gets.
	Trap   int
	Args   []uint64
	Status uint64
	// Addr is the first address a faulting access had no permission for;
	// Write whether it was a store.
	Addr  uint64
	Write bool
}

// Handler is a trap or fault handler: it returns the operations to run,
// which may read and set f (a closure, or a sequential program made with
// Sequential).
type Handler func(f *Frame) []Op

// Sequential makes a Handler that runs fn as a sequential program.
func Sequential(fn func(p *Proc, f *Frame)) Handler {
	return func(f *Frame) []Op { return []Op{Go(func(p *Proc) { fn(p, f) })} }
}

// SetTrapHandler registers the handler of trap n.
func (c *CPU) SetTrapHandler(n int, h Handler) { c.traps[n] = h }

// SetFaultHandler registers the protection-fault handler (the process's
// SIGSEGV handler: a protocol's page-fault routine). It runs with
// interrupts masked; when it returns, the access restarts.
func (c *CPU) SetFaultHandler(h Handler) { c.faultHandler = h }

type frameKind uint8

const (
	frameIRQ frameKind = iota
	frameTrap
	frameFault
)

// frame is an exception in progress: what its return restores and does.
type frame struct {
	kind    frameKind
	masked  bool       // the mask before entry, restored at return
	startAt clock.Time // when the exception began (a trap's issue)
	op      Op         // the Trap, or the faulting access to restart
	f       *Frame
}

func (f *frame) returnCycles(o OSCosts) int {
	switch f.kind {
	case frameTrap:
		return o.TrapReturn
	case frameFault:
		return o.FaultReturn
	}
	return o.InterruptReturn
}

// enter masks interrupts and splices the handler in front of the program:
// its entry cost, its operations and the frame's return.
func (c *CPU) enter(fr *frame, entry int, ops []Op) {
	c.masked = true
	c.rest.PushFront(Op{Kind: kindReturn, frame: fr})
	c.pushFront(ops)
	if entry > 0 {
		c.rest.PushFront(Op{Kind: Compute, Cycles: entry})
	}
}

// trap enters the handler of the current Trap (its entry cost is spent).
func (c *CPU) trap(now clock.Time, op *Op) {
	h := c.traps[op.Trap]
	if h == nil {
		c.env.Report(now, c.Name(), "cpu.trap", "trap %d has no handler", op.Trap)
		c.state = sWait
		return
	}
	c.ntraps++
	if c.env.Trace.Enabled() {
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cpu.trap", trace.Int("trap", int64(op.Trap)), trace.Int("args", int64(len(op.Args))))
	}
	fr := &frame{kind: frameTrap, masked: c.masked, startAt: c.startAt, op: *op,
		f: &Frame{Now: now, Trap: op.Trap, Args: op.Args}}
	c.cur, c.busy = Op{}, false
	c.state = sFetch
	c.enter(fr, 0, h(fr.f))
}

// fault enters the fault handler for the current access, which restarts
// when the handler returns.
func (c *CPU) fault(now clock.Time, op *Op, at uint64, write bool) {
	rw := "read"
	if write {
		rw = "write"
	}
	if c.faultHandler == nil || op.restarted {
		why := "no fault handler"
		if op.restarted {
			why = "the fault handler returned without granting it"
		}
		c.env.Report(now, c.Name(), "cpu.fault", "%s of %#x without permission (%v): %s; access dropped", rw, at, c.pt.Perm(at), why)
		c.state = sWait
		return
	}
	c.faults++
	if c.env.Trace.Enabled() {
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cpu.fault", trace.Addr("addr", at), trace.Str("access", rw))
	}
	restart := *op
	restart.restarted = true
	// The access executed in this cycle, its last issue cycle (issue
	// cycles are at least 1), so the entry's cycles are the next ones:
	// now+1 .. now+entry, and the handler begins in now+entry+1.
	entry := c.os.FaultEntry + c.os.SignalDelivery
	fr := &frame{kind: frameFault, masked: c.masked, startAt: now, op: restart,
		f: &Frame{Now: c.Clock().After(now, clock.Cycle(entry)), Addr: at, Write: write}}
	c.cur, c.busy = Op{}, false
	c.state = sFetch
	c.enter(fr, entry, c.faultHandler(fr.f))
}

// ret ends an exception frame (its return cost is spent): interrupts are
// unmasked as they were before it, a Trap retires with its status, a
// faulting access restarts. A pending interrupt is taken at the next
// fetch, before anything else.
func (c *CPU) ret(now clock.Time, op *Op) {
	fr := op.frame
	c.masked = fr.masked
	switch fr.kind {
	case frameTrap:
		t := &fr.op
		c.retired++
		c.env.Monitor.Progress(now)
		if t.Label != "" && c.env.Trace.Enabled() {
			c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cpu.retire", trace.Str("op", t.Label),
				trace.Uint("cycles", uint64(c.Clock().CycleAt(now)-c.Clock().CycleAt(fr.startAt))),
				trace.Int("trap", int64(t.Trap)), trace.Uint("status", fr.f.Status))
		}
		if t.Done != nil {
			t.Done(now, nil)
		}
		if t.Status != nil {
			t.Status(now, fr.f.Status)
		}
	case frameFault:
		c.rest.PushFront(fr.op)
	}
	c.cur, c.busy = Op{}, false
	c.state = sFetch
}
