package cashmere

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
)

// Process is one application process, pinned to one CPU: the programs'
// handle (the method set of host/cashapps.Proc, docs/cashmere-design.md
// section 2). Shared addresses are byte offsets in [0, Pages*PageBytes),
// 8-byte words.
type Process struct {
	rt    *Runtime
	ns    *nodeState
	node  int
	local int
	id    int
	// phys is the cluster node the process runs on (node is its
	// protocol node: the same but under 1LD); off displaces its
	// node-memory data (its page copies, twins, protocol words: 0 but
	// under 1LD, the per-process address translation a TLB would do).
	phys int
	off  uint64
	cpu  *cpu.CPU
	p    *cpu.Proc
	// acqTS is the logical time of the process's last acquire.
	acqTS uint64
	// lastPoll is the poll flag's value this process last acted on (a
	// register, Figure 3 keeps the flag's address in $13).
	lastPoll uint32
	// flushSeq is the value of the process's next MC flush.
	flushSeq uint32
	// barEpisode counts the barriers the process has entered.
	barEpisode uint32
	// shootSent counts the shootdowns this process sent to each local
	// processor, shootSeen those of each local processor it has served
	// (2LS).
	shootSent, shootSeen []uint32
	// inIntr is set while the CPU runs the process's interrupt handler
	// (Config.Interrupts); faulting from a page fault's start until its
	// access has retired, faultPg its page; shootLater that a shootdown
	// of faultPg waits for that access (interrupt.go).
	inIntr, faulting, shootLater bool
	faultPg                      int
	done                         bool
	end                          clock.Time
	stats                        Stats
	times                        Times
}

// ID returns the process number: node*CPUs + the CPU's index.
func (pr *Process) ID() int { return pr.id }

// Procs returns the number of processes.
func (pr *Process) Procs() int { return pr.rt.cfg.Procs() }

// Node returns the process's node (its protocol node under 1LD).
func (pr *Process) Node() int { return pr.node }

// The process's own node-memory data, translated by its offset (1LD).
func (pr *Process) pageAddr(pg int) uint64 { return pr.off + pr.rt.pageAddr(pg) }
func (pr *Process) twinAddr(pg int) uint64 { return pr.off + pr.rt.twinAddr(pg) }
func (pr *Process) pageLock(pg int) uint64 { return pr.off + pr.rt.pageLock(pg) }
func (pr *Process) meta(word int) uint64   { return pr.off + pr.rt.meta(word) }
func (pr *Process) shootSlot(s, q int) uint64 {
	return pr.off + pr.rt.shootSlot(s, q)
}

// Stats returns the process's counters.
func (pr *Process) Stats() Stats { return pr.stats }

// Times are the durations of the process's last protocol operations of
// each kind (section 3.1's costs, measured on the model): the twin copy,
// the fetch (request to the page copied in), the outgoing diff with its MC
// flush, the shootdown (2LS: the messages sent to every acknowledgement),
// the migration (2LMigr: the migration lock tried to the lock released,
// the home taken).
type Times struct {
	Twin, Fetch, Diff, Shootdown, Migration clock.Time
}

// Times returns the durations of the last operations.
func (pr *Process) Times() Times { return pr.times }

// Now returns the simulated time in the process's program.
func (pr *Process) Now() clock.Time { return pr.p.Now() }

// End returns when the process finished (its exit barrier's departure).
func (pr *Process) End() clock.Time { return pr.end }

// CPU returns the processor the process runs on.
func (pr *Process) CPU() *cpu.CPU { return pr.cpu }

func (pr *Process) sharedAddr(addr uint64, words int) (uint64, bool) {
	size := uint64(pr.rt.cfg.Pages) * PageBytes
	if addr%8 != 0 || addr+8*uint64(words) > size {
		pr.rt.fail(fmt.Errorf("cashmere: process %d: %d words at shared address %#x are not 8-aligned inside [0, %#x)", pr.id, words, addr, size))
		return 0, false
	}
	return pr.pageAddr(0) + addr, true
}

// Load reads len(dst) words from shared address addr: one 8-byte load
// each, which faults when the page is not mapped for reading.
func (pr *Process) Load(addr uint64, dst []uint64) {
	a, ok := pr.sharedAddr(addr, len(dst))
	if !ok {
		return
	}
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(pr.p.Load(a+8*uint64(i), 8))
		if pr.faulting {
			pr.faulted(pr.p)
		}
	}
}

// Store writes src at shared address addr: one 8-byte store each, which
// faults when the page is not mapped for writing.
func (pr *Process) Store(addr uint64, src []uint64) {
	a, ok := pr.sharedAddr(addr, len(src))
	if !ok {
		return
	}
	for i, v := range src {
		// The copy rule's record goes first: a long Store's early words
		// reach memory (and another processor's barrier-exit check)
		// before its last one is issued.
		pr.rt.chk.store(pr, addr+8*uint64(i), 1)
		pr.store(pr.p, a+8*uint64(i), le64(v))
		if pr.faulting {
			pr.faulted(pr.p)
		}
		if pr.rt.cfg.doubling() {
			pr.double1L(pr.p, addr+8*uint64(i), le64(v))
		}
	}
}

// double1L is 1L's write doubling (section 3.3.1: «The 1L executable is
// instrumented with in-line code to ... » write each shared store also to
// the home node's copy): off the home, the same word through the
// transmit mapping of the page's home copy, an uncached store the write
// buffer may combine with its neighbours. The home is the one the write
// fault found (the node's directory word holds it: no access).
func (pr *Process) double1L(p *cpu.Proc, addr uint64, data []byte) {
	pg := int(addr / PageBytes)
	w := pr.ns.dirWord[pg]
	if w&dirFixed == 0 {
		return // not reached: the store's write fault fixed the home
	}
	home := dirHome(w) / pr.rt.cfg.CPUs
	if home == pr.node {
		return
	}
	pr.txStore(p, pr.rt.homeTx(pr.node, pg)+addr%PageBytes, data, "cm.double")
	pr.stats.DataBytes += len(data)
	pr.rt.chk.doubled(pr, pg, addr%PageBytes, data)
}

// Compute spends cycles CPU cycles of the program's own work.
func (pr *Process) Compute(cycles int) {
	if cycles > 0 {
		pr.p.Compute(cycles)
	}
}

// Poll is Figure 3's check at a loop top: a load of the poll flag, and the
// request handler when it changed.
func (pr *Process) Poll() { pr.poll(pr.p) }

// store is a store into node memory, told to the LocalWrite hook.
func (pr *Process) store(p *cpu.Proc, addr uint64, data []byte) {
	p.Store(addr, data)
	if h := pr.rt.hooks.LocalWrite; h != nil {
		h(pr.phys, addr, data)
	}
}

// txStore is a store into the transmit window: uncached, posted, one
// write transaction (a write-combined block when it is 32 bytes,
// platform.AlphaServer2100's WriteCombineBytes).
func (pr *Process) txStore(p *cpu.Proc, addr uint64, data []byte, label string) {
	p.Do(cpu.Op{Kind: cpu.Store, Addr: addr, Data: data, Burst: true, Label: label})
}

// double writes a broadcast word: the node's own receive copy and the
// transmit window (Figure 1(a): «explicitly though doubling—two writes to
// both the transmit and receive regions»).
func (pr *Process) double(p *cpu.Proc, rx, tx uint64, data []byte, label string) {
	pr.store(p, rx, data)
	pr.txStore(p, tx, data, label)
}

// step charges instrs instructions of bookkeeping.
func step(p *cpu.Proc, label string, instrs int) {
	if instrs > 0 {
		p.Step(cpu.Step{Label: label, Instrs: instrs})
	}
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// alias runs fn with the processor's mapping of page pg opened for the
// protocol's own loads and stores (copies into a page the faulting
// process may not yet touch, a home copy served by a processor that has
// not mapped it), then puts the mapping back. It stands for the
// protocol's second, always read-write mapping of every shared page
// (assumed: the paper's handlers copy into pages they have not yet
// mprotected and serve pages the serving processor has not mapped, which
// needs such a mapping; the model has no address translation, so the
// alias is the same addresses with the permission lifted, at no cost).
func (pr *Process) alias(p *cpu.Proc, pg int, fn func()) {
	pt := p.CPU().PageTable()
	if pt == nil {
		fn()
		return
	}
	a := pr.pageAddr(pg)
	was := pt.Perm(a)
	pt.Protect(a, PageBytes, cpu.PermReadWrite)
	fn()
	pt.Protect(a, PageBytes, was)
}
