package cashtb

import (
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
)

// Costs are section 3.1's and Table 1's basic operations as the model
// gives them (measured, never fitted): Table 1 «All times are for
// interactions between two processors».
type Costs struct {
	// PageTransfer is a read of a page whose home is another node, as the
	// program sees it: the fault, the request, the home's reply of 8 KB,
	// the copy in, the directory update and the mprotect (Table 1 «Page
	// Transfer (Remote)», 824 µs for 2L).
	PageTransfer clock.Time
	// Fetch is the runtime's part of it: request to page copied in.
	Fetch clock.Time
	// WriteFault is the first write to that page: the fault, the twin,
	// the dirty list and the mprotect.
	WriteFault clock.Time
	// Twin is the twin copy alone (section 3.1 «The cost of a twinning
	// operation on an 8K page is 199 μs»).
	Twin clock.Time
	// Diff is the outgoing diff of a page whose every word changed, to a
	// remote home, with its MC flush (section 3.1: «If the home node is
	// remote, the diff is written to uncacheable I/O space, and the cost
	// ranges from only 290 to 363 μs per page»).
	Diff clock.Time
	// Lock is an uncontended Lock call whose last holder was the other
	// node (Table 1 «Lock Acquire», 19 µs for 2L), its acquire actions
	// included.
	Lock clock.Time
	// Barrier is the slowest process's time in a barrier all processes
	// enter together with nothing to flush (Table 1 «Barrier», 58 µs for
	// two processors, 321 µs for 32).
	Barrier clock.Time
}

// CostProgram measures Costs on two or more processes: process 0 is the
// home of two pages; process 1 reads the first (the page transfer), writes
// it (the write fault and twin), fetches the second and writes every word
// of it; the barrier that follows flushes both (the full-page diff is the
// second); then process 1 and process 0 take lock 0 in turn; finally two
// barriers, the second timed. With BarrierOnly only the timed barrier is
// run (any number of processes).
type CostProgram struct {
	BarrierOnly bool
	// Out receives the measurements.
	Out *Costs
}

// Name implements Program.
func (CostProgram) Name() string { return "costs" }

// SharedBytes implements Program: two pages.
func (CostProgram) SharedBytes() uint64 { return 2 * cashmere.PageBytes }

// Locks implements Program.
func (CostProgram) Locks() int { return 1 }

// Flags implements Program.
func (CostProgram) Flags() int { return 0 }

// Run implements Program.
func (c CostProgram) Run(p *cashmere.Process) {
	if !c.BarrierOnly && p.Procs() >= 2 {
		c.transfers(p)
	}
	p.Barrier()
	t := p.Now()
	p.Barrier()
	c.Out.Barrier = max(c.Out.Barrier, p.Now()-t)
}

func (c CostProgram) transfers(p *cashmere.Process) {
	const words = cashmere.PageBytes / 8
	id := p.ID()
	if id == 0 {
		p.Store(0, make([]uint64, 2*words))
	}
	p.Barrier()
	if id == 1 {
		v := make([]uint64, 1)
		t := p.Now()
		p.Load(0, v)
		c.Out.PageTransfer = p.Now() - t
		c.Out.Fetch = p.Times().Fetch
		t = p.Now()
		p.Store(0, []uint64{1})
		c.Out.WriteFault = p.Now() - t
		c.Out.Twin = p.Times().Twin
		p.Load(cashmere.PageBytes, v)
		all := make([]uint64, words)
		for i := range all {
			all[i] = uint64(i + 1)
		}
		p.Store(cashmere.PageBytes, all)
	}
	p.Barrier()
	if id == 1 {
		c.Out.Diff = p.Times().Diff
	}
	// The lock: process 1 takes it first, then process 0 (its last holder
	// on the other node), timed.
	if id == 1 {
		p.Lock(0)
		p.Unlock(0)
	}
	p.Barrier()
	if id == 0 {
		t := p.Now()
		p.Lock(0)
		c.Out.Lock = p.Now() - t
		p.Unlock(0)
	}
}
