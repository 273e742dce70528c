package vmmc

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// mutSkipCAM is a test-only fault (see env.DeclareMutation).
var mutSkipCAM = env.DeclareMutation("vmmc.skip-cam",
	"ReplacePage does not ask the NI's CAM and replaces a page a queued deliberate update still reads (the scoreboard or the protection monitor must see the wrong data)")

// Trap numbers of the kernel's VMMC calls (host/cpu traps).
const (
	// TrapSetup is export, import and bind: the kernel's table updates.
	TrapSetup = 0x5600 + iota
	// TrapSend is the kernel driver Table 2's experiment calls before each
	// message send (section 4.3).
	TrapSend
)

// Hardware is what a node's kernel drives: its processor (the kernel
// takes its interrupt line, traps and page tables), its memory system
// (per-page write policy, SH-P9), its NI and the NI's EISA windows.
type Hardware struct {
	CPU  *cpu.CPU
	Mem  *memsys.Node
	NI   *shrimp.NI
	Map  shrimp.AddressMap
	Node int
	// Env is the simulation's env, read once for the kernel's mutation
	// (vmmc.skip-cam); nil: no mutation.
	Env *env.Env
}

// KernelStats count what the kernel did.
type KernelStats struct {
	// Interrupts is the NI interrupts the handler took; Threshold,
	// Notify and Error those with each cause.
	Interrupts, Threshold, Notify, Error uint64
	// Deschedules is the threshold interrupts that found an
	// automatic-update writer running and held it; Descheduled the time
	// it was held (entry to resume).
	Deschedules uint64
	Descheduled clock.Time
	// Delivered is the notifications handed to user handlers; Dropped
	// those for a buffer without a handler (Table 4's null handler).
	Delivered, Dropped uint64
	// Replaced is the pages ReplacePage replaced; Refused those it
	// refused with ErrDUPending.
	Replaced, Refused uint64
	// Spurious is the interrupts whose RegStatus read showed no cause:
	// the processor took a raise whose cause an earlier handler had
	// acknowledged and served, because the NI raised it after the
	// processor took that handler's interrupt and before its
	// acknowledgement reached the NI (see interrupt).
	Spurious uint64
}

// Kernel is a node's VMMC kernel: the page tables of its processes, the
// OPT entries it gives imported pages, and the NI's interrupt handler.
type Kernel struct {
	hw      Hardware
	dir     *Directory
	p       Params
	cfg     shrimp.Config
	page    uint64
	resume  int
	skipCAM bool

	procs   []*Process
	current *Process
	// proxyNext is the next OPT index to give an imported page; indices
	// [proxyBase, entries) are the pool (pages the kernel never gives to
	// processes, so never AU-bound).
	proxyBase, proxyNext int

	setup func() error // the table update the running TrapSetup applies
	stats KernelStats
}

// ProxyPoolFraction is the share of physical pages whose OPT entries the
// kernel keeps for imported pages (device-proxy pages): assumed 1/4, the
// top 8 MB of the 32 MB node (section 2.3: «The import implementation
// allocates an Outgoing Page Table (OPT) entry for each page of the proxy
// receive buffer»; the OPT has one entry per physical page, so an import
// takes the entries of pages no process binds for automatic update).
const ProxyPoolFraction = 4

// NewKernel makes the kernel of a node: it takes the processor's
// interrupt program and the VMMC traps.
func NewKernel(hw Hardware, d *Directory, p Params) (*Kernel, error) {
	switch {
	case hw.CPU == nil:
		return nil, errors.New("vmmc: Hardware.CPU is nil")
	case hw.Mem == nil:
		return nil, errors.New("vmmc: Hardware.Mem is nil")
	case hw.NI == nil:
		return nil, errors.New("vmmc: Hardware.NI is nil")
	case d == nil:
		return nil, errors.New("vmmc: directory is nil")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cfg := hw.NI.Config()
	k := &Kernel{hw: hw, dir: d, p: p, cfg: cfg, page: uint64(cfg.PageBytes)}
	k.resume = p.FIFOResume
	if k.resume == 0 {
		k.resume = cfg.FIFOThreshold / 2
	}
	if hw.Env != nil {
		k.skipCAM = hw.Env.Mutation(mutSkipCAM) != 0
	}
	n := cfg.Entries()
	pool := n / ProxyPoolFraction
	if p.ProxyPages > 0 {
		if p.ProxyPages >= n {
			return nil, fmt.Errorf("vmmc: ProxyPages %d must be below the NI's %d OPT entries", p.ProxyPages, n)
		}
		pool = p.ProxyPages
	}
	k.proxyBase = n - pool
	k.proxyNext = k.proxyBase
	hw.CPU.SetInterruptProgram(k.interrupt)
	hw.CPU.SetTrapHandler(TrapSetup, cpu.Sequential(func(kp *cpu.Proc, f *cpu.Frame) {
		kp.Step(cpu.Step{Label: "vmmc.setup", Instrs: k.p.KernelInstrs})
		if k.setup != nil {
			if err := k.setup(); err != nil {
				f.Status = 1
			}
			k.setup = nil
		}
	}))
	hw.CPU.SetTrapHandler(TrapSend, cpu.Sequential(func(kp *cpu.Proc, f *cpu.Frame) {
		// Table 2's kernel driver does nothing the hardware needs: the
		// experiment measures the crossing.
	}))
	return k, nil
}

// Params returns the kernel's parameters.
func (k *Kernel) Params() Params { return k.p }

// Stats returns the kernel's counts.
func (k *Kernel) Stats() KernelStats { return k.stats }

// Resume is the FIFO occupancy in bytes at which a descheduled writer
// resumes.
func (k *Kernel) Resume() int { return k.resume }

// UserLimit is the first physical address the kernel keeps for itself
// (the pages whose OPT entries are the proxy pool): a process's buffers
// lie below it.
func (k *Kernel) UserLimit() uint64 { return uint64(k.proxyBase) * k.page }

// Current returns the process running on the processor.
func (k *Kernel) Current() *Process { return k.current }

// NewProcess makes a process: its page table allows the node's memory
// below UserLimit and those pages' memory proxies, and no device-proxy
// page until an import maps one, nor the NI's registers. The first
// process made becomes the running one.
func (k *Kernel) NewProcess(name string) *Process {
	pt, err := cpu.NewPageTable(k.page, cpu.PermReadWrite)
	if err != nil {
		panic(err) // the NI's page size is validated a power of two
	}
	mem := uint64(k.cfg.Entries()) * k.page
	pt.Protect(k.UserLimit(), int(mem-k.UserLimit()), cpu.PermNone)
	pt.Protect(k.hw.Map.MemProxy+k.UserLimit(), int(mem-k.UserLimit()), cpu.PermNone)
	pt.Protect(k.hw.Map.DevProxy, int(mem), cpu.PermNone)
	pt.Protect(k.hw.Map.CSR, csrBytes(k.cfg), cpu.PermNone)
	pr := &Process{k: k, Name: name, pt: pt}
	k.procs = append(k.procs, pr)
	if k.current == nil {
		k.current = pr
		k.hw.CPU.SetPageTable(pt)
	}
	return pr
}

// csr is the bus address of NI register off (shrimp.RegStatus...).
func (k *Kernel) csr(off uint64) uint64 { return k.hw.Map.CSR + reg(k.cfg, off) }

// privileged runs fn with the processor's protection off (kernel mode:
// the NI's registers are reachable), then gives the running process its
// page table back.
func (k *Kernel) privileged(fn func()) {
	k.hw.CPU.SetPageTable(nil)
	defer func() {
		if k.current != nil {
			k.hw.CPU.SetPageTable(k.current.pt)
		}
	}()
	fn()
}

// trapSetup runs a table update inside a TrapSetup (p not nil), or at
// once, untimed, when p is nil (a testbench building the system before
// time 0: the backdoor of a CSR write at t=0).
func (k *Kernel) trapSetup(p *cpu.Proc, fn func() error) error {
	if p == nil {
		return fn()
	}
	var err error
	k.setup = func() error { err = fn(); return err }
	p.Trap(TrapSetup)
	return err
}

// ContextSwitch makes to the running process: a store to the NI's
// invalidation register drops a half-made UDMA initiation (the UDMA
// design: «invalidate any partial initiated user-level DMA transfer on
// every context switch»), then the processor takes to's page table. Call
// it from a kernel program (a timer interrupt's handler).
func (k *Kernel) ContextSwitch(p *cpu.Proc, to *Process) {
	k.privileged(func() {
		p.As("vmmc.inval").Store32(k.csr(shrimp.RegInval), 1)
		k.current = to
	})
}

// ReplacePage replaces physical page page of the node (the VM system
// reusing the frame for another virtual page: it is zero-filled with
// 8-byte stores), unless the NI's CAM says a queued or running deliberate
// update reads it (section 4.5.3), when it returns ErrDUPending and
// changes nothing.
func (k *Kernel) ReplacePage(p *cpu.Proc, page int) error {
	if page < 0 || page >= k.proxyBase {
		return fmt.Errorf("vmmc: ReplacePage: page %d is not a user page (0..%d)", page, k.proxyBase-1)
	}
	var err error
	k.privileged(func() {
		p.Step(cpu.Step{Label: "vmmc.replace", Instrs: k.p.KernelInstrs})
		p.Store32(k.csr(shrimp.RegCAMQuery), uint32(page))
		if p.Load32(k.csr(shrimp.RegCAMResult)) != 0 && !k.skipCAM {
			k.stats.Refused++
			err = fmt.Errorf("vmmc: ReplacePage %d: %w", page, ErrDUPending)
			return
		}
		base := uint64(page) * k.page
		zero := make([]byte, 8)
		for a := base; a < base+k.page; a += 8 {
			p.Store(a, zero)
		}
		k.stats.Replaced++
	})
	return err
}

// interrupt is the NI's interrupt handler (the kernel), in the usual
// driver order: it reads the causes (RegStatus), acknowledges every cause
// it read at once (RegIRQAck is write-1-to-clear on latched causes,
// hib/shrimp/csr.go), and only then serves them: it delivers the queued
// notifications, counts an error, and deschedules an automatic-update
// writer above the FIFO threshold until the FIFO has drained to Resume
// (section 4.5.2: «The system software is then responsible for
// de-scheduling all processes that perform automatic update until the
// FIFO drains sufficiently»).
//
// The acknowledgement is a posted store, and the accesses that serve the
// level causes are reads of the same NI: the processor's write buffer is
// in order and a read does not pass a posted write in the bridge (PCI 2.1
// appendix E), so every RegNotify pop and RegOccupancy read reaches the
// NI after the acknowledgement. Serving re-reads each level cause's level
// after the acknowledgement, until it is down: the notification queue is
// popped until a pop reads it empty, the writer is held until a
// RegOccupancy read returns at most Resume. A cause the NI raises again
// between the RegStatus read and the acknowledgement's arrival is cleared
// with the old one, but its level is still up and is served by those
// reads (a record queued then is popped; a crossing then is drained before
// the writer resumes); a cause raised after the acknowledgement's arrival
// stays latched and raises the processor's line, which takes the next
// interrupt. Every raise raises the processor's line (which merges only
// raises it has not yet taken), so a raise after the processor took this
// interrupt and before the acknowledgement arrived, whose cause this
// handler acknowledged and served, takes one more interrupt; it reads no
// cause (KernelStats.Spurious), acknowledges nothing and returns at once
// (the driver has nothing to do; its dispatch is InterruptEntry's). The
// error cause has no level (the NI counts CRC drops only in its
// Counters): errors raised before the acknowledgement arrives count as
// one.
//
// Acknowledging at the end, after serving, as this handler did before
// (and commits a68412d and 38c1524 patched by re-checking the levels of
// the causes the previous handler had cleared), lost wake-ups: the
// resumed writer's stores could cross the threshold again while the
// posted acknowledgement still waited behind incoming DMA on the EISA,
// and a notification record could be queued after the last empty pop;
// the late acknowledgement cleared those raises with the old causes and
// nothing served them (threshold_race_test.go in
// verify/testbench/shrimptb reproduces both).
//
// The user-level notification handlers run after the kernel's part, at the
// interrupt's return to user mode (upcalls), as a Unix signal handler
// does: with interrupts enabled, so a later interrupt still pops the NI's
// queue into the kernel's (section 2.2: «it does provide queueing of
// multiple notifications»), and with the process's further notifications
// held until its handler returns.
func (k *Kernel) interrupt(p *cpu.Proc) {
	k.privileged(func() {
		k.stats.Interrupts++
		cause := causes(p.As("vmmc.irq.cause").Load32(k.csr(shrimp.RegStatus)))
		if cause == 0 {
			k.stats.Spurious++
			return
		}
		p.As("vmmc.irq.ack").Store32(k.csr(shrimp.RegIRQAck), uint32(cause))
		p.Step(cpu.Step{Label: "vmmc.irq", Instrs: k.p.KernelInstrs})
		if cause&shrimp.IRQNotify != 0 {
			k.stats.Notify++
			k.notifications(p)
		}
		if cause&shrimp.IRQError != 0 {
			k.stats.Error++
		}
		if cause&shrimp.IRQThreshold != 0 {
			k.stats.Threshold++
			if k.current != nil && k.current.auWriter {
				k.stats.Deschedules++
				from := p.Now()
				for {
					p.Compute(k.p.ResumePollCycles)
					if int(p.As("vmmc.occupancy").Load32(k.csr(shrimp.RegOccupancy))) <= k.resume {
						break
					}
				}
				k.stats.Descheduled += p.Now() - from
			}
		}
	})
	k.upcalls(p)
}

// upcalls runs the handlers of the processes with queued notifications,
// in the order the processes were made, skipping a process that blocks
// notifications or whose handler is already running (an interrupt taken
// inside it: the running handler's loop delivers what this one queued).
func (k *Kernel) upcalls(p *cpu.Proc) {
	for _, pr := range k.procs {
		if len(pr.queued) > 0 && !pr.blocked && !pr.inHandler {
			pr.upcall(p)
		}
	}
}

// notifications pops the NI's notification records and queues each for
// its buffer's process (section 2.2: «it does provide queueing of
// multiple notifications»), whose handler upcalls runs. A record for a
// buffer whose process set no handler is dropped (Table 4's null kernel
// handler). The last pop reads the queue empty: the level's re-read after
// serving.
func (k *Kernel) notifications(p *cpu.Proc) {
	for {
		rec := p.As("vmmc.notify").Load(k.csr(shrimp.RegNotify), 8)
		n, ok := decodeNotification(rec)
		if !ok {
			return
		}
		p.Step(cpu.Step{Label: "vmmc.notify", Instrs: k.p.KernelInstrs})
		x := k.dir.exportAt(k.hw.Node, uint64(n.Page)*k.page)
		if x == nil || x.proc == nil || x.proc.onNotify == nil {
			k.stats.Dropped++
			continue
		}
		x.proc.queued = append(x.proc.queued, n)
	}
}
