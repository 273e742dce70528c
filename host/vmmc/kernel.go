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
	// Deschedules is the threshold interrupts (and re-checks that found
	// the FIFO above the threshold, LostThreshold) that found an
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
	// Rechecks is the interrupts whose RegStatus lacked a cause the
	// previous handler's acknowledgement cleared, on which the handler
	// re-read that cause's level (RegOccupancy, RegNotify);
	// LostThreshold and LostNotify those where the level showed the
	// acknowledgement had cleared a cause raised after its handler read
	// RegStatus (a crossing above the threshold, a queued record), which
	// the handler then served.
	Rechecks, LostThreshold, LostNotify uint64
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
	// acked is the level causes (IRQThreshold, IRQNotify) the last
	// handler's RegIRQAck cleared: the next handler re-checks their
	// levels if RegStatus no longer shows them (see interrupt).
	acked shrimp.IRQCause
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
	k.proxyBase = n - n/ProxyPoolFraction
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

// interrupt is the NI's interrupt handler (the kernel): it reads the
// causes, delivers notifications, deschedules an automatic-update writer
// above the FIFO threshold until the FIFO has drained to Resume (section
// 4.5.2: «The system software is then responsible for de-scheduling all
// processes that perform automatic update until the FIFO drains
// sufficiently»), and acknowledges the causes it saw.
//
// The acknowledgement races with the NI. RegIRQAck is write-1-to-clear on
// latched causes (hib/shrimp/csr.go) and the handler writes it last,
// posted, after it served what it read at its start; a cause the NI
// raises again after that read and before the write reaches the NI is
// cleared with the old one. With the design's deschedule (issue14-design
// R6: the handler itself holds the writer, so it resumes the moment the
// handler returns) the threshold's case is real: the resumed writer's
// stores reach the snoop on the Xpress while the posted acknowledgement
// still waits behind the bridge and the EISA bus, the FIFO crosses the
// threshold again, the acknowledgement lands and clears the new crossing,
// and the next handler finds no threshold cause: the writer is never
// held and the FIFO overflows (shrimp-traffic --seed 5, 16 nodes, FIFO
// 8 KB, threshold 32 B: on node 5 a crossing at 1280.133 µs, the ack of
// the previous handler's threshold at 1280.160 µs). A notification record
// queued after the handler's last RegNotify pop is lost the same way.
//
// The NI cannot lose the interrupt itself: every cause it raises raises
// the processor's line (the processor merges only raises it has not yet
// taken), so a handler always runs after the cleared raise, and its
// RegStatus read is ordered after the earlier acknowledgement (the
// processor's write buffer is in order and a read does not pass a posted
// write in the bridge, PCI 2.1 appendix E). So that handler knows what
// may have been cleared: the causes the previous handler acknowledged.
// For each of those RegStatus no longer shows, it re-checks the cause's
// level, which the acknowledgement cannot clear: RegOccupancy above the
// threshold (then it holds the writer as for a threshold interrupt, if
// one runs) and the notification queue (the RegNotify pops). The error
// cause has no level to re-check (its count is only on the NI), so the
// handler acknowledges it at once, before serving anything: an error
// raised later sets it again. Acknowledging every cause first (the usual
// driver order) would be as correct but moves the acknowledgement's bus
// transaction in every interrupt (the threshold and notify goldens): the
// re-check costs a register read only after a handler acknowledged a
// level cause and only if the next interrupt no longer shows it.
func (k *Kernel) interrupt(p *cpu.Proc) {
	k.privileged(func() {
		k.stats.Interrupts++
		cause := causes(p.As("vmmc.irq.cause").Load32(k.csr(shrimp.RegStatus)))
		cleared := k.acked &^ cause
		k.acked = 0
		if cause&shrimp.IRQError != 0 {
			p.As("vmmc.irq.ack").Store32(k.csr(shrimp.RegIRQAck), uint32(shrimp.IRQError))
		}
		p.Step(cpu.Step{Label: "vmmc.irq", Instrs: k.p.KernelInstrs})
		if cause&shrimp.IRQNotify != 0 {
			k.stats.Notify++
			k.notifications(p)
		} else if cleared&shrimp.IRQNotify != 0 {
			k.stats.Rechecks++
			if k.notifications(p) > 0 {
				k.stats.LostNotify++
			}
		}
		if cause&shrimp.IRQError != 0 {
			k.stats.Error++
		}
		hold := false
		if cause&shrimp.IRQThreshold != 0 {
			k.stats.Threshold++
			hold = k.current != nil && k.current.auWriter
		} else if cleared&shrimp.IRQThreshold != 0 && k.current != nil && k.current.auWriter {
			// The threshold the NI compares is the one the kernel
			// leaves programmed: RegThreshold's reset value.
			k.stats.Rechecks++
			if int(p.As("vmmc.occupancy").Load32(k.csr(shrimp.RegOccupancy))) > k.cfg.FIFOThreshold {
				k.stats.LostThreshold++
				hold = true
			}
		}
		if hold {
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
		rest := cause &^ shrimp.IRQError
		if rest != 0 || cause == 0 {
			p.As("vmmc.irq.ack").Store32(k.csr(shrimp.RegIRQAck), uint32(rest))
		}
		k.acked = rest & (shrimp.IRQThreshold | shrimp.IRQNotify)
	})
}

// notifications pops the NI's notification records and hands each to
// its buffer's process: queued while the process blocks notifications,
// else delivered to its handler (section 2.2: «it does provide queueing of
// multiple notifications»). A record for a buffer whose process set no
// handler is dropped (Table 4's null kernel handler). It returns the
// records popped.
func (k *Kernel) notifications(p *cpu.Proc) int {
	for got := 0; ; got++ {
		rec := p.As("vmmc.notify").Load(k.csr(shrimp.RegNotify), 8)
		n, ok := decodeNotification(rec)
		if !ok {
			return got
		}
		p.Step(cpu.Step{Label: "vmmc.notify", Instrs: k.p.KernelInstrs})
		x := k.dir.exportAt(k.hw.Node, uint64(n.Page)*k.page)
		if x == nil || x.proc == nil || x.proc.onNotify == nil {
			k.stats.Dropped++
			continue
		}
		x.proc.deliver(p, n)
	}
}
