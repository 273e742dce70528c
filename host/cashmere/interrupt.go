package cashmere

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// mutNoInterrupt drops every request interrupt (Config.Interrupts): a
// requester then waits for ever, which the testbench reports as a process
// that did not finish (or the progress watchdog as a stuck model).
var mutNoInterrupt = env.DeclareMutation("cashmere.nointerrupt",
	"Config.Interrupts: a request's arrival interrupts nobody (caught: the requester never finishes)")

// Interrupt-driven requests (Config.Interrupts): the alternative to
// Figure 3's polling that section 2.3 sets polling against («All
// processors must check the polling flag frequently»), and that section
// 3.3.4 measures for the 2LS shootdown («If intra-node interrupts are used
// instead of polling, the cost rises to 142 μs»). With it on:
//
//   - No process polls: Poll at a loop top is free and the wait loops
//     (spin, the MC flush, an explicit diff's acknowledgement) spin on
//     their own flags only.
//   - A request to a node (a page fetch, an exclusive-break request,
//     2LOffMC's diff: every message that writes the node's poll flag)
//     interrupts the node's request processor, its first (local 0,
//     assumed: the kernel routes the adapter's interrupt to one fixed
//     processor, as Digital UNIX sent device interrupts to the primary
//     CPU; the paper does not say which processor took them). The
//     testbench raises it when the poll flag's packet has been written
//     into the node's memory (mcadapter's receive interrupt on the
//     poll-flag page, an assumed page attribute) by calling
//     RequestInterrupt.
//   - A 2LS shootdown is an inter-processor interrupt to its target
//     (section 3.3.4's «intra-node interrupts»), sent when its mailbox
//     line is written.
//   - The handler (interrupt, an interrupt program on the CPU) is charged
//     the platform's OSCosts.InterruptEntry and InterruptReturn by the CPU
//     model; no SignalDelivery is added: the AlphaServer preset derives
//     InterruptEntry from the 142 vs 72 µs difference, which already holds
//     the signal that takes the interrupt to the user-level protocol
//     (host/platform/presets.go). The sender of an inter-processor
//     interrupt pays nothing beyond its stores (assumed: its kernel call
//     is inside that same 70 µs difference, which the preset puts on the
//     receiving side).
//   - Masking: an interrupt handler runs masked (the CPU's interrupt
//     frame); a page-fault handler unmasks at its start (the real
//     SIGSEGV handler runs with the request signal deliverable, else two
//     nodes faulting on each other's pages would wait for each other's
//     replies for ever). A handler that needs a lock held by the code it
//     interrupted (a page lock, for an exclusive break) does not wait for
//     it: the request stays pending (nodeState.pendingServe) and is
//     delivered again, as a masked interrupt is when unmasked, by the
//     release of that lock (unlockLocal) with another interrupt of the
//     request processor.
//   - One window more: between a page fault's end and its restarted
//     access's retirement the CPU takes a pending interrupt (the fault
//     frame's return unmasks), and a handler that took the page's write
//     mapping away there (a shootdown, an exclusive break's downgrade)
//     would make the restarted access fault again. The handler leaves
//     that page alone (faultWindow) and the access's retirement delivers
//     it again (faulted), as a masked interrupt.

// interrupt is the handler every CPU runs when interrupted (Config.Interrupts):
// under 2LS the shootdowns aimed at it, and on the node's request
// processor the requests in the node's bins.
func (pr *Process) interrupt(p *cpu.Proc) {
	pr.stats.Interrupts++
	pr.inIntr = true
	if pr.rt.cfg.shootdown() {
		pr.serveShootdowns(p)
	}
	if pr.local == requestCPU {
		pr.serveRequests(p)
	}
	pr.inIntr = false
}

// requestCPU is the local processor a node's request interrupt goes to
// (assumed: the first; see the comment above).
const requestCPU = 0

// serveRequests is the handler's request part: Figure 3's flag check and
// the request handler, or, when the serving lock is held, the request
// left pending for that lock's release.
func (pr *Process) serveRequests(p *cpu.Proc) {
	rt, ns := pr.rt, pr.ns
	v := p.As("cm.intrflag").Load32(rt.lay.PollRx[pr.node])
	if v == pr.lastPoll && !ns.pendingServe {
		return // served already (a redelivery, or a merged interrupt)
	}
	if !pr.tryLocal(p, pr.meta(metaServeLock)) {
		ns.pendingServe = true
		return
	}
	pr.lastPoll = v
	pr.serve(p)
	pr.unlockLocal(p, pr.meta(metaServeLock))
}

// RequestInterrupt interrupts protocol node node's request processor at
// now: a request has arrived (the testbench calls it when the adapter
// has written a packet for the node's poll flag into its memory).
func (rt *Runtime) RequestInterrupt(node int, now clock.Time) {
	if rt.env.Mutation(mutNoInterrupt) != 0 {
		return
	}
	if id := node*rt.cfg.CPUs + requestCPU; rt.cfg.Interrupts && node >= 0 && node < rt.cfg.Nodes && id < len(rt.procs) {
		rt.procs[id].cpu.Interrupt(now)
	}
}

// ipi interrupts local processor q of the process's node (a 2LS
// shootdown under Config.Interrupts).
func (pr *Process) ipi(p *cpu.Proc, q int) {
	if id := pr.node*pr.rt.cfg.CPUs + q; id < len(pr.rt.procs) {
		pr.rt.procs[id].cpu.Interrupt(p.Now())
	}
}

// redeliver is unlockLocal's part under Config.Interrupts: releasing a
// page lock or the serving lock while a request waits for one
// (pendingServe) interrupts the request processor again. Not from inside
// a handler, which holds only locks it took itself: the lock its request
// waits for is held by another context, which will redeliver.
func (pr *Process) redeliver(p *cpu.Proc, addr uint64) {
	rt := pr.rt
	if !pr.ns.pendingServe || pr.inIntr {
		return
	}
	lo, hi := pr.pageLock(0), pr.pageLock(rt.cfg.Pages)
	if (addr >= lo && addr < hi) || addr == pr.meta(metaServeLock) {
		rt.RequestInterrupt(pr.node, p.Now())
	}
}

// faultWindow reports, inside an interrupt handler, that the interrupted
// program is completing a page fault on pg (its access has not yet
// retired): the handler must not change pg's mapping now.
func (pr *Process) faultWindow(pg int) bool { return pr.inIntr && pr.faulting && pr.faultPg == pg }

// faulted is the retirement of a faulting access (Config.Interrupts):
// what a handler left for it is delivered again.
func (pr *Process) faulted(p *cpu.Proc) {
	pr.faulting = false
	if pr.shootLater {
		pr.shootLater = false
		pr.cpu.Interrupt(p.Now())
	}
	if pr.ns.pendingServe {
		pr.rt.RequestInterrupt(pr.node, p.Now())
	}
}
