package cpu

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
)

// Step is a costed piece of code: Instrs instructions, of which the
// Accesses are the loads and stores (memory accesses go through whatever
// the processor is attached to, a cache model; I/O accesses reach the
// device for their real time); the others cost the processor's CPI each.
// The ATM paper's Table 1 gives its handlers this way («Device Interrupt
// Handler 21», atm-remote-memory-access.txt section 2.2).
type Step struct {
	// Label names the step in its cpu.step trace record.
	Label string
	// Instrs is the step's instruction count, its accesses included.
	Instrs int
	// Accesses are issued in order, before the other instructions.
	Accesses []Access
	// Poll marks an iteration of a spin loop waiting for a value to
	// change (a flag, a device's status): neither its retirement nor its
	// loads (mem.Req.Poll) record forward progress, so a program that
	// spins for ever with work outstanding is stopped by the stall
	// watchdog (rtl/env) with a stuck-state report, not run to the time
	// limit. Software that polls for longer than the watchdog's limit by
	// design (a retransmission timer) raises it (env.Env.AllowQuiet).
	Poll bool
}

// Access is a load or store of a code step.
type Access struct {
	Addr uint64
	// Len is a load's size; a store writes Data.
	Len   int
	Data  []byte
	Write bool
	// IO marks an access to a device (counted apart in the trace).
	IO bool
	// Instrs is the instructions the access stands for (0 means 1): a
	// 56-byte cell load of the TCA-100's receive port is 14 loads («14 (40
	// nanosecond) I/O bus read cycles», AT-P5) issued as one transaction.
	// They count as memory or I/O instructions of the step.
	Instrs int
	// Burst makes a store of several bus beats one write transaction (a
	// cell's 14 words written to the transmit port); without it a store
	// is one beat.
	Burst bool
}

// instrs returns the instructions the access stands for.
func (a *Access) instrs() int { return max(a.Instrs, 1) }

// stepRun is a code step being executed.
type stepRun struct {
	op      Op // the CodeStep
	startAt clock.Time
	mem, io int
	reads   []byte
}

// expandStep replaces the current CodeStep by its accesses, the compute
// of its other instructions and its end, in front of the program.
func (c *CPU) expandStep(now clock.Time, op *Op) {
	s := op.Step
	if s == nil {
		s = &Step{}
		c.env.Report(now, c.Name(), "cpu.step", "code step%s has no Step", label(op.Label))
	}
	run := &stepRun{op: *op, startAt: now}
	ops := make([]Op, 0, len(s.Accesses)+2)
	held := 0
	for i, a := range s.Accesses {
		held += a.instrs()
		if a.IO {
			run.io += a.instrs()
		} else {
			run.mem += a.instrs()
		}
		if a.Write {
			if len(a.Data) == 0 {
				c.env.Report(now, c.Name(), "cpu.step", "step %q access %d: a store with no data", s.Label, i)
				continue
			}
			ops = append(ops, Op{Kind: Store, Addr: a.Addr, Data: a.Data, Burst: a.Burst, poll: s.Poll})
			continue
		}
		ops = append(ops, Op{Kind: Load, Addr: a.Addr, Len: a.Len, poll: s.Poll,
			Done: func(_ clock.Time, d []byte) { run.reads = append(run.reads, d...) }})
	}
	other := s.Instrs - held
	if other < 0 {
		c.env.Report(now, c.Name(), "cpu.step", "step %q: %d instructions cannot hold its %d accesses", s.Label, s.Instrs, held)
		other = 0
	}
	if cyc := (other*c.cpiCyc + c.cpiInstr - 1) / c.cpiInstr; cyc > 0 {
		ops = append(ops, Op{Kind: Compute, Cycles: cyc, poll: s.Poll})
	}
	ops = append(ops, Op{Kind: kindStepEnd, step: run, poll: s.Poll})
	c.cur, c.busy = Op{}, false
	c.fetched--
	c.state = sFetch
	c.pushFront(ops)
}

// endStep counts the step's instructions and traces it; the step's Done
// gets its loads' data, concatenated.
func (c *CPU) endStep(now clock.Time, op *Op) {
	run := op.step
	n := 0
	if run.op.Step != nil {
		n = run.op.Step.Instrs
	}
	c.instrs += uint64(n)
	if c.env.Trace.Enabled() {
		name := run.op.Label
		if run.op.Step != nil && run.op.Step.Label != "" {
			name = run.op.Step.Label
		}
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "cpu.step", trace.Str("step", name),
			trace.Int("instrs", int64(n)), trace.Int("mem", int64(run.mem)), trace.Int("io", int64(run.io)),
			trace.Uint("cycles", uint64(c.Clock().CycleAt(now)-c.Clock().CycleAt(run.startAt))))
	}
	c.loadData = run.reads
}

// Env returns the simulation the processor runs in: software layers whose
// programs run on it (host/rma's kernel) emit their trace records and
// checker reports there.
func (c *CPU) Env() *env.Env { return c.env }
