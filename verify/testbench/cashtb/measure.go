package cashtb

import (
	"fmt"
	"strconv"

	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
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

// Rows are the operations of section 3.1 that CostProgram's intervals do
// not isolate, measured by RowsProgram on 2 nodes of 2 processors under 2L
// from the processors' own trace records (cpu.retire and cpu.step: each
// carries its retire time and its cycles), so the interval is exactly the
// operations named, nothing of the program around them.
type Rows struct {
	// DirLocked is a directory entry modification under the directory
	// lock (section 3.1: «Directory entry modification takes 16 μs for
	// Cashmere if locking is required»): process 0's first touch of page
	// 0, from the end of its lock-free directory read (the last
	// cm.dirread before the lock) to the start of the fault handler's
	// next step (cm.fault): the node's LL/SC flag, the lock's MC
	// loop-back round, the second directory read, the word's doubled
	// write, the fence, the clear's loop-back round and the flag's
	// release. Page 0's superpage starts at node 0, so no remap is in it.
	DirLocked clock.Time
	// DirUnlocked is a directory entry modification without the lock
	// («and 5 μs otherwise»): in the same fault, from the end of the
	// cm.fault step to the retire of the doubled word's transmit store
	// (cm.dir): the store into the node's own receive copy and the
	// store into the transmit window.
	DirUnlocked clock.Time
	// ResidentFault is a read of a page whose copy the node already
	// holds (section 3.1: «Page faults on already-resident pages cost
	// 72 μs»): process 3's load of page 0 after process 2 (same node)
	// fetched it, from the load to its return: the platform's fault
	// entry, signal and return, the page lock, the handler's step and
	// the mprotect; no directory write (the node's loosest permission
	// does not change) and no fetch.
	ResidentFault clock.Time
	// IncomingDiff is section 3.1's «incoming diff operation»: process
	// 3's fetch of page 1 while process 2 of its node holds the twin
	// (its write of word 0), after process 1 (the home node) wrote the
	// other 1023 words; from the start of the first cm.indiff operation
	// to the retire of the last: the comparison of the incoming page
	// with the twin, word by word, and the writes of every differing
	// word to both the page and the twin (1023 words).
	IncomingDiff clock.Time
	// FetchIncoming is that fetch as a whole (request to page merged in),
	// the runtime's own clock.
	FetchIncoming clock.Time
	// Incoming is how many incoming diffs the run made (1 expected).
	Incoming int
}

// RowsProgram is the program of Rows: on 2 nodes of 2 processors
// (processes 0 and 1 on node 0, 2 and 3 on node 1); see Rows for what each
// process does.
type RowsProgram struct {
	// Out receives the runtime-clock figures (FetchIncoming, Incoming);
	// MeasureRows fills the rest from the trace.
	Out *Rows
}

// Name implements Program.
func (RowsProgram) Name() string { return "rows" }

// SharedBytes implements Program: two pages.
func (RowsProgram) SharedBytes() uint64 { return 2 * cashmere.PageBytes }

// Locks implements Program.
func (RowsProgram) Locks() int { return 0 }

// Flags implements Program.
func (RowsProgram) Flags() int { return 1 }

// Run implements Program. Processes other than 0-3 only take the barriers.
func (r RowsProgram) Run(p *cashmere.Process) {
	const words = cashmere.PageBytes / 8
	id := p.ID()
	if id == 0 {
		p.Store(0, make([]uint64, 2*words)) // first touch: both pages home at node 0
	}
	p.Barrier()
	v := make([]uint64, 1)
	if id == 2 {
		p.Load(0, v) // node 1 fetches page 0
	}
	p.Barrier()
	if id == 3 {
		t := p.Now()
		p.Load(0, v) // node 1's copy is resident: a fault without a fetch
		r.Out.ResidentFault = p.Now() - t
	}
	// The incoming diff (the pattern of the twoway spec, section 2.2):
	// process 2 writes word 0 of page 1 and keeps its mapping (and the
	// node's twin) while process 1 of the home node, 1.7 ms later (after
	// process 2's fetch and twin, about 0.6 ms), writes the other words
	// and releases them with flag 0; process 3 acquires the flag and
	// reads page 1.
	if id == 2 {
		p.Store(cashmere.PageBytes, []uint64{1})
	}
	if id == 1 {
		p.Compute(400000)
		all := make([]uint64, words-1)
		for i := range all {
			all[i] = uint64(i + 2)
		}
		p.Store(cashmere.PageBytes+8, all)
		p.SetFlag(0, 1)
	}
	if id == 3 {
		p.WaitFlag(0, 1)
		p.Load(cashmere.PageBytes+8, v)
		r.Out.FetchIncoming = p.Times().Fetch
		r.Out.Incoming = p.Stats().IncomingDiffs
	}
	if id == 2 {
		// assumed: 100 polls 10,000 cycles apart (4.3 ms) outlast process
		// 1's 1.7 ms and process 3's fetch; the write mapping stays.
		for range 100 {
			p.Poll()
			p.Compute(10000)
		}
		p.Store(cashmere.PageBytes+16*8, []uint64{words + 2})
	}
}

// MeasureRows runs RowsProgram on 2 nodes of 2 processors under 2L in an
// env of its own made from o (its Trace is replaced by an in-memory
// recorder of the processors' records) and returns Rows; an error is the
// run's (checkers included) or a marker the trace did not show.
func MeasureRows(o env.Options) (Rows, error) {
	var r Rows
	o.Trace = trace.NewRecorder().OnlyKinds("cpu.")
	e := env.New(o)
	c := DefaultConfig()
	c.Nodes, c.CPUs = 2, 2
	b, err := Build(e, c, RowsProgram{Out: &r})
	if err != nil {
		return r, err
	}
	if _, err := b.Run(); err != nil {
		return r, err
	}
	ops := func(pid int) []op { return opsOf(e.Trace.Records(), b.Procs[pid].CPU()) }
	// Process 0's first fault: the locked and the unlocked directory
	// writes.
	p0 := ops(0)
	lock := find(p0, 0, "cm.lockset")
	read := findLast(p0, lock, "cm.dirread")
	fault := find(p0, lock, "cm.fault")
	dir := find(p0, fault+1, "cm.dir")
	p3 := ops(3)
	in0 := find(p3, 0, "cm.indiff")
	in1 := findLast(p3, len(p3), "cm.indiff")
	if lock < 0 || read < 0 || fault < 0 || dir < 0 || in0 < 0 || in1 < 0 {
		return r, fmt.Errorf("cashtb: rows: a marker is missing from the trace (lockset %d, dirread %d, fault %d, dir %d, indiff %d..%d)", lock, read, fault, dir, in0, in1)
	}
	r.DirLocked = p0[fault].start - p0[read].end
	r.DirUnlocked = p0[dir].end - p0[fault].end
	r.IncomingDiff = p3[in1].end - p3[in0].start
	return r, nil
}

// op is one traced operation of a processor: its label and when it
// started and retired.
type op struct {
	label      string
	start, end clock.Time
}

// opsOf is the labelled operations and steps of processor c, in order.
func opsOf(recs []trace.Record, c *cpu.CPU) []op {
	var out []op
	clk := c.Clock()
	for _, rec := range recs {
		if rec.Path != c.Name() {
			continue
		}
		label, ok := rec.Get("op")
		if !ok {
			label, ok = rec.Get("step")
		}
		cy, ok2 := rec.Get("cycles")
		if !ok || !ok2 {
			continue
		}
		n, err := strconv.ParseUint(cy, 10, 64)
		if err != nil {
			continue
		}
		out = append(out, op{label: label, start: clk.TimeOf(rec.Cycle - clock.Cycle(n)), end: rec.Time})
	}
	return out
}

// find is the index of the first op labelled label at or after from, -1
// if none.
func find(ops []op, from int, label string) int {
	if from < 0 {
		return -1
	}
	for i := from; i < len(ops); i++ {
		if ops[i].label == label {
			return i
		}
	}
	return -1
}

// findLast is the index of the last op labelled label before before, -1
// if none.
func findLast(ops []op, before int, label string) int {
	for i := min(before, len(ops)) - 1; i >= 0; i-- {
		if ops[i].label == label {
			return i
		}
	}
	return -1
}
