// Package tglib is the Telegraphos host library: the shared-memory
// operations of telegraphos.txt as programs of the host processor
// (host/cpu) that a testbench runs on a node of a Telegraphos cluster.
// Remote reads and writes are single loads and stores (2.2.1); atomic
// operations and remote copies are launched by the sequence of the HIB's
// version (2.2.4): Telegraphos I's PAL-code sequence in special mode, or
// Telegraphos II's writes to a context, shadow stores and a launching read;
// Fence is MEMORY_BARRIER and Lock/Unlock embed it (2.3.5).
//
// Every call exists in two forms. The Op form (Store, Load, FetchAndInc,
// ... on Proc) returns operations to put in the processor's program; a
// result comes to a callback. The sequential form (Seq, from Proc.Go)
// issues the same operations from a sequential host program (cpu.Go) and
// returns the result, so control flow that depends on data (a lock's
// retry, a spin on a flag) is a plain loop. The Op forms that loop (Lock,
// SpinUntil) and the page-alarm handler are themselves sequential
// programs; both forms issue the same operations in the same cycles.
package tglib

import (
	"encoding/binary"

	"github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
)

// Proc is a process on one node.
type Proc struct {
	CPU *cpu.CPU
	// Node is the node the process runs on; Version the HIB version.
	Node, Version int
	// Ctx and Key are the Telegraphos context the OS gave the process and
	// its key (Version 2).
	Ctx int
	Key uint16
	// Contexts lists the contexts the process's page table maps (its own,
	// unless a test says otherwise): a context access outside it takes a
	// page fault in the processor's MMU and never reaches the HIB.
	Contexts []int
	// Backoff is the processor cycles a failed lock attempt waits before
	// trying again.
	Backoff int
	// Faults counts page faults the MMU raised (foreign contexts).
	Faults int
}

// New returns a process on node, running on its processor c, whose HIB
// is of version version (telegraphos.Config.Version), using context ctx
// with key key on a Telegraphos II HIB. A testbench (verify/testbench/tgtb)
// builds the node.
func New(c *cpu.CPU, version, node, ctx int, key uint16) *Proc {
	return &Proc{CPU: c, Node: node, Version: version, Ctx: ctx, Key: key,
		Contexts: []int{ctx}, Backoff: 20}
}

// Run appends ops to the process's program: before the simulation runs or
// from a callback during it.
func (p *Proc) Run(now clock.Time, ops ...cpu.Op) {
	if now < 0 {
		p.CPU.Run(ops...)
		return
	}
	p.CPU.Append(now, ops...)
}

// Start runs ops at the start of the simulation.
func (p *Proc) Start(ops ...cpu.Op) { p.CPU.Run(ops...) }

func word(v uint32) []byte { return telegraphos.Word(v) }

func value(b []byte) uint32 {
	if len(b) < telegraphos.WordBytes {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// Store writes v to word off of node's shared memory (a remote write if
// node is not the process's own, 2.2.1).
func (p *Proc) Store(node int, off, v uint32) cpu.Op {
	return cpu.Op{Kind: cpu.Store, Addr: telegraphos.Addr(node, off), Data: word(v)}
}

// Load reads word off of node's shared memory; done gets the value.
func (p *Proc) Load(node int, off uint32, done func(now clock.Time, v uint32)) cpu.Op {
	return cpu.Op{Kind: cpu.Load, Addr: telegraphos.Addr(node, off), Len: telegraphos.WordBytes,
		Done: func(now clock.Time, b []byte) {
			if done != nil {
				done(now, value(b))
			}
		}}
}

// Compute spends n processor cycles.
func (p *Proc) Compute(n int) cpu.Op { return cpu.Op{Kind: cpu.Compute, Cycles: n} }

// Do runs fn when the program reaches it (a point to take a time stamp or
// append more work).
func (p *Proc) Do(fn func(now clock.Time)) cpu.Op {
	return cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { fn(now); return true }}
}

// Fence is MEMORY_BARRIER: the processor waits until its write buffer has
// drained into the HIB and the HIB has no remote write, update or copy
// outstanding (TG-P32).
func (p *Proc) Fence() []cpu.Op {
	return []cpu.Op{{Kind: cpu.Fence},
		{Kind: cpu.Load, Addr: telegraphos.RegAddr(telegraphos.RegFence), Len: telegraphos.WordBytes}}
}

// Atomic launches atomic operation op on word off of node with operands
// d0 and d1; done gets the old value.
func (p *Proc) Atomic(op telegraphos.AtomicOp, node int, off, d0, d1 uint32, done func(now clock.Time, old uint32)) []cpu.Op {
	addr := telegraphos.SharedAddr(node, off)
	if p.Version == 1 {
		// PAL code (2.2.4): special mode, the argument stores (one, or two
		// for compare-and-swap), the launching read; uninterrupted.
		ops := []cpu.Op{p.reg(telegraphos.RegMode, uint32(op)),
			{Kind: cpu.Store, Addr: telegraphos.WindowBase + uint64(addr), Data: word(d0), Chained: true}}
		if op == telegraphos.CompareAndSwap {
			ops = append(ops, cpu.Op{Kind: cpu.Store, Addr: telegraphos.WindowBase + uint64(addr), Data: word(d1), Chained: true})
		}
		return append(ops, p.launch(telegraphos.RegAddr(telegraphos.RegLaunch), done, true))
	}
	return []cpu.Op{p.ctx(telegraphos.CtxOp, uint32(op)), p.ctx(telegraphos.CtxData0, d0), p.ctx(telegraphos.CtxData1, d1),
		p.shadow(addr), p.launch(p.ctxAddr(telegraphos.CtxLaunch), done, false)}
}

// FetchAndInc adds one to word off of node; done gets the old value.
func (p *Proc) FetchAndInc(node int, off uint32, done func(now clock.Time, old uint32)) []cpu.Op {
	return p.Atomic(telegraphos.FetchAndInc, node, off, 0, 0, done)
}

// FetchAndStore writes v to word off of node; done gets the old value.
func (p *Proc) FetchAndStore(node int, off, v uint32, done func(now clock.Time, old uint32)) []cpu.Op {
	return p.Atomic(telegraphos.FetchAndStore, node, off, v, 0, done)
}

// CompareAndSwap writes nv to word off of node if it holds old; done gets
// the value it held.
func (p *Proc) CompareAndSwap(node int, off, old, nv uint32, done func(now clock.Time, was uint32)) []cpu.Op {
	return p.Atomic(telegraphos.CompareAndSwap, node, off, old, nv, done)
}

// RemoteCopy copies word fromOff of node from to word toOff of the
// process's own node without waiting for it (2.2.2); Fence waits for it.
func (p *Proc) RemoteCopy(from int, fromOff, toOff uint32) []cpu.Op {
	src, dst := telegraphos.SharedAddr(from, fromOff), telegraphos.SharedAddr(p.Node, toOff)
	if p.Version == 1 {
		return []cpu.Op{p.reg(telegraphos.RegMode, telegraphos.OpCopy),
			{Kind: cpu.Store, Addr: telegraphos.WindowBase + uint64(src), Data: word(0), Chained: true},
			{Kind: cpu.Store, Addr: telegraphos.WindowBase + uint64(dst), Data: word(0), Chained: true},
			p.launch(telegraphos.RegAddr(telegraphos.RegLaunch), nil, true)}
	}
	return []cpu.Op{p.ctx(telegraphos.CtxOp, telegraphos.OpCopy), p.shadow(src), p.shadow(dst),
		p.launch(p.ctxAddr(telegraphos.CtxLaunch), nil, false)}
}

// Lock acquires the lock word off of node (0 free, 1 held) with
// fetch-and-store, retrying after Backoff cycles, then fences (2.3.5) and
// runs then. It is one operation: a sequential program (Seq.Lock).
func (p *Proc) Lock(node int, off uint32, then func(now clock.Time)) []cpu.Op {
	return []cpu.Op{p.Go(func(s *Seq) {
		s.Lock(node, off)
		s.P.Do(p.Do(then))
	})}
}

// Unlock fences, so that every write made in the critical section has
// completed, and frees the lock.
func (p *Proc) Unlock(node int, off uint32) []cpu.Op {
	return append(p.Fence(), p.Store(node, off, 0))
}

// SpinUntil reads word off of node until cond holds for its value
// (Backoff cycles between reads), then runs then(v) (which may append the
// program's next operations). It is one operation: a sequential program
// (Seq.SpinUntil).
func (p *Proc) SpinUntil(node int, off uint32, cond func(v uint32) bool, then func(now clock.Time, v uint32)) cpu.Op {
	return p.Go(func(s *Seq) {
		v := s.SpinUntil(node, off, cond)
		then(s.P.Now(), v)
	})
}

// OnPageAlarm makes the process's node run an interrupt handler (the OS)
// when a page access counter runs out: it reads the cause and the page,
// calls fn with the page and clears the causes it saw.
func (p *Proc) OnPageAlarm(fn func(now clock.Time, globalPage uint32)) {
	p.CPU.SetInterruptProgram(func(cp *cpu.Proc) {
		status := cp.Load(telegraphos.RegAddr(telegraphos.RegIntStatus), telegraphos.WordBytes)
		page := value(cp.Load(telegraphos.RegAddr(telegraphos.RegIntPage), telegraphos.WordBytes))
		if value(status)&telegraphos.IntPageCounter != 0 {
			fn(cp.Now(), page)
		}
		clear := make([]byte, telegraphos.WordBytes)
		copy(clear, status)
		cp.Store(telegraphos.RegAddr(telegraphos.RegIntStatus), clear)
	})
}

// Go makes a sequential program of the process: fn calls the library in
// its sequential form.
func (p *Proc) Go(fn func(s *Seq)) cpu.Op {
	return cpu.Go(func(cp *cpu.Proc) { fn(&Seq{Proc: p, P: cp}) })
}

// Seq is the library in sequential form, for a program made with Go: each
// call issues the operations of its Op form and returns when they have
// retired, with the result.
type Seq struct {
	*Proc
	// P is the sequential program's handle on the processor.
	P *cpu.Proc
}

func (s *Seq) run(ops []cpu.Op) {
	for _, op := range ops {
		s.P.Do(op)
	}
}

// Store writes v to word off of node's shared memory.
func (s *Seq) Store(node int, off, v uint32) { s.P.Do(s.Proc.Store(node, off, v)) }

// Load reads word off of node's shared memory.
func (s *Seq) Load(node int, off uint32) uint32 {
	var v uint32
	s.P.Do(s.Proc.Load(node, off, func(_ clock.Time, x uint32) { v = x }))
	return v
}

// Compute spends n processor cycles.
func (s *Seq) Compute(n int) { s.P.Do(s.Proc.Compute(n)) }

// Fence is MEMORY_BARRIER (TG-P32).
func (s *Seq) Fence() { s.run(s.Proc.Fence()) }

// Atomic runs atomic operation op on word off of node with operands d0
// and d1 and returns the old value (0 if the MMU refused the context).
func (s *Seq) Atomic(op telegraphos.AtomicOp, node int, off, d0, d1 uint32) uint32 {
	var old uint32
	s.run(s.Proc.Atomic(op, node, off, d0, d1, func(_ clock.Time, v uint32) { old = v }))
	return old
}

// FetchAndInc adds one to word off of node and returns the old value.
func (s *Seq) FetchAndInc(node int, off uint32) uint32 {
	return s.Atomic(telegraphos.FetchAndInc, node, off, 0, 0)
}

// FetchAndStore writes v to word off of node and returns the old value.
func (s *Seq) FetchAndStore(node int, off, v uint32) uint32 {
	return s.Atomic(telegraphos.FetchAndStore, node, off, v, 0)
}

// CompareAndSwap writes nv to word off of node if it holds old and
// returns the value it held.
func (s *Seq) CompareAndSwap(node int, off, old, nv uint32) uint32 {
	return s.Atomic(telegraphos.CompareAndSwap, node, off, old, nv)
}

// RemoteCopy copies word fromOff of node from to word toOff of the
// process's own node without waiting for it (2.2.2).
func (s *Seq) RemoteCopy(from int, fromOff, toOff uint32) {
	s.run(s.Proc.RemoteCopy(from, fromOff, toOff))
}

// Lock acquires the lock word off of node: fetch-and-store of 1 until the
// old value is 0 (free), Backoff cycles between tries, then the fence that
// keeps the critical section after the acquire (2.3.5).
func (s *Seq) Lock(node int, off uint32) {
	for s.FetchAndStore(node, off, 1) != 0 {
		s.Compute(s.Backoff)
	}
	s.Fence()
}

// Unlock fences, so that every write made in the critical section has
// completed, and frees the lock.
func (s *Seq) Unlock(node int, off uint32) { s.run(s.Proc.Unlock(node, off)) }

// SpinUntil reads word off of node until cond holds for its value,
// Backoff cycles between reads, and returns the value.
func (s *Seq) SpinUntil(node int, off uint32, cond func(v uint32) bool) uint32 {
	for {
		if v := s.Load(node, off); cond(v) {
			return v
		}
		s.Compute(s.Backoff)
	}
}

// reg is a store to a special register.
func (p *Proc) reg(reg, v uint32) cpu.Op {
	return cpu.Op{Kind: cpu.Store, Addr: telegraphos.RegAddr(reg), Data: word(v)}
}

// ctxAddr is the physical address of register reg of the process's
// context.
func (p *Proc) ctxAddr(reg uint32) uint64 {
	return telegraphos.WindowBase + uint64(telegraphos.ContextAddr(p.Ctx, reg))
}

// ctx is a store to a register of the process's context; a context its
// page table does not map faults in the MMU (counted, nothing issued).
func (p *Proc) ctx(reg, v uint32) cpu.Op {
	if !p.maps(p.Ctx) {
		return p.fault()
	}
	return cpu.Op{Kind: cpu.Store, Addr: p.ctxAddr(reg), Data: word(v)}
}

func (p *Proc) maps(ctx int) bool {
	for _, c := range p.Contexts {
		if c == ctx {
			return true
		}
	}
	return false
}

// fault is the page fault of an access the process's page table does not
// map: it is counted and never reaches the bus.
func (p *Proc) fault() cpu.Op {
	return cpu.Op{Kind: cpu.Call, Fn: func(clock.Time) bool { p.Faults++; return true }}
}

// shadow passes the physical address of window offset a to the process's
// context: a store to its shadow carrying the context and key (TG-P9).
func (p *Proc) shadow(a uint32) cpu.Op {
	return cpu.Op{Kind: cpu.Store, Addr: telegraphos.WindowBase + uint64(telegraphos.Shadow(a)),
		Data: word(telegraphos.ShadowData(p.Ctx, p.Key))}
}

// launch is the read that launches a special operation and returns its
// result.
func (p *Proc) launch(addr uint64, done func(now clock.Time, v uint32), chained bool) cpu.Op {
	if p.Version == 2 && !p.maps(p.Ctx) {
		return p.fault()
	}
	return cpu.Op{Kind: cpu.Load, Addr: addr, Len: telegraphos.WordBytes, Chained: chained,
		Done: func(now clock.Time, b []byte) {
			if done != nil {
				done(now, value(b))
			}
		}}
}
