package smptb

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
)

// Lock is a spin lock on the 32-bit word at Addr, taken with load-locked /
// store-conditional: Cashmere-2L's «very efficient local locks with ll/sc»
// (cashmere-2l-memory-channel.txt section 2.3), written as in
// docs/host-programs.md. Backoff is the cycles a waiter computes between
// two reads of a held lock.
type Lock struct {
	Addr    uint64
	Backoff int
}

// Acquire takes the lock: read it until it looks free (the reads hit the
// cache while the holder keeps it), then try to take it with a
// load-locked / store-conditional pair; a failed store-conditional
// (another CPU or a DMA wrote the line) starts again. It returns the
// number of store-conditionals that failed.
func (l Lock) Acquire(p *cpu.Proc) (failed int) {
	for {
		for p.Load32(l.Addr) != 0 {
			p.Compute(l.Backoff)
		}
		if p.LoadLocked32(l.Addr) != 0 {
			continue
		}
		if p.StoreConditional32(l.Addr, 1) {
			p.Fence() // the critical section stays after the acquire
			return failed
		}
		failed++
	}
}

// Release frees the lock once every store of the critical section has
// completed.
func (l Lock) Release(p *cpu.Proc) {
	p.Fence()
	p.Store32(l.Addr, 0)
}

// Hold is one critical section of CounterProgram: the CPU, when its
// store-conditional took the lock (the time the program resumed after
// it), when it had finished the section (before the releasing store), and
// the counter value it read.
type Hold struct {
	CPU        int
	From, Till clock.Time
	Seen       uint32
}

// CounterProgram is the lock spec's program for CPU id: k times, take
// lock, read the 32-bit counter, compute work cycles, store it plus one,
// release. record (if not nil) gets each hold; failed counts the
// store-conditionals that failed.
func CounterProgram(id int, lock Lock, counter uint64, k, work int, record func(Hold), failed *int) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for range k {
			f := lock.Acquire(p)
			if failed != nil {
				*failed += f
			}
			from := p.Now()
			v := p.Load32(counter)
			p.Compute(work)
			p.Store32(counter, v+1)
			p.Fence()
			if record != nil {
				record(Hold{CPU: id, From: from, Till: p.Now(), Seen: v})
			}
			lock.Release(p)
		}
	}
}

// Barrier is a sense-reversing barrier for N CPUs (docs/host-programs.md):
// a 32-bit arrival counter at Count incremented with fetch-and-add (an
// LL/SC loop) and a sense flag at Sense that the last arrival flips.
// Backoff is the cycles a waiter computes between two reads of the flag.
type Barrier struct {
	Count, Sense uint64
	N            uint32
	Backoff      int
}

// Wait blocks until all N CPUs have called it; sense is the caller's
// private sense, flipped on each use.
func (b Barrier) Wait(p *cpu.Proc, sense *uint32) {
	*sense ^= 1
	if p.FetchAdd(b.Count, 1) == b.N-1 { // the last to arrive
		p.Store32(b.Count, 0)
		p.Fence()
		p.Store32(b.Sense, *sense)
		return
	}
	for p.Load32(b.Sense) != *sense {
		p.Compute(b.Backoff)
	}
}
