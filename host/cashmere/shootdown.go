package cashmere

import (
	"github.com/nisim/nisim/host/cpu"
)

// The 2LS variant (section 2.6 «Shootdown»; section 3.3.4): «The shootdown
// protocol avoids races between a processor incurring a page fault and
// concurrent local writers by shooting down all other write mappings on the
// node, flushing outstanding changes, and then creating a new twin only on a
// subsequent write page fault. It behaves in a similar fashion at releases:
// to avoid races with concurrent writers, it shoots down all write mappings,
// flushes outstanding changes, and throws away the twin.» A shootdown is an
// intra-node message to each other local processor with a write mapping
// (section 3.3.4: «the Cashmere-2L second-level directories indicate the
// local processors that are modifying a page. Thus the shootdown can be
// focused directly on the affected processors»), served when the target
// polls (section 3.3.4 «polling-based messaging»): a mailbox line per
// (sender, target) pair in node memory, the target's mprotect, an
// acknowledgement the sender waits for. Its cost (the paper measures 72 µs
// per processor) emerges from the target's next poll, the mprotect and the
// cache lines' coherence traffic.

// shootFlush is the fault side: every other local write mapping of pg shot
// down, the node's outstanding changes to pg flushed to its home (the diff
// against the twin, no flush-update, the MC flush), the twin dropped, so
// that the fetch that follows copies the page in whole (no incoming diff).
// The caller holds pg's page lock. The flush sends no write notices: the
// writers' dirty-list entries stay, and their releases send them.
func (pr *Process) shootFlush(p *cpu.Proc, pg, home int) {
	pr.shootdown(p, pg, home)
	pr.flushTwin(p, pg, home)
}

// flushTwin sends pg's changes against its twin to home without updating
// the twin, MC-flushes, and drops the twin (2LS).
func (pr *Process) flushTwin(p *cpu.Proc, pg, home int) {
	rt := pr.rt
	pr.alias(p, pg, func() { pr.outgoingDiff(p, pg, home, false) })
	p.Fence()
	if rt.mut.skipFlush == 0 {
		pr.mcFlush(p)
	}
	pr.ns.twin[pg] = false
}

// shootdown removes the write mapping of pg from every other local
// processor that has one: a message into each one's mailbox, then a wait
// (polling, so that shootdowns aimed at this processor are served) for
// every acknowledgement. The node's directory word follows when its
// loosest permission changed. The caller holds pg's page lock, which is
// what keeps a target from taking a new write mapping meanwhile.
func (pr *Process) shootdown(p *cpu.Proc, pg, home int) {
	rt, ns := pr.rt, pr.ns
	before := ns.loosest(pg)
	var to []int
	for q := range rt.cfg.CPUs {
		if q != pr.local && ns.perm[q][pg]&cpu.PermWrite != 0 {
			to = append(to, q)
		}
	}
	if len(to) == 0 || rt.mut.skipShootdown != 0 {
		return
	}
	t := p.Now()
	for _, q := range to {
		step(p, "cm.shoot", instrShootdown)
		pr.shootSent[q]++
		slot := pr.shootSlot(pr.local, q)
		p.Store32(slot+shootPage, uint32(pg))
		p.Fence()
		p.Store32(slot+shootSeq, pr.shootSent[q])
		pr.stats.Shootdowns++
		if rt.cfg.Interrupts {
			p.Fence() // the message is in node memory before the interrupt
			pr.ipi(p, q)
		}
	}
	p.Fence()
	for _, q := range to {
		slot, seq := pr.shootSlot(pr.local, q), pr.shootSent[q]
		pr.spin(p, "cm.shootwait", func() bool { return p.As("cm.shootwait").Load32(slot+shootAck) == seq })
	}
	pr.times.Shootdown = p.Now() - t
	if after := ns.loosest(pg); after != before {
		pr.writeDir(p, pg, after, home)
	}
}

// serveShootdowns is the target's side, at every poll (2LS): each local
// sender's mailbox looked at; a new message drops this processor's write
// mapping of its page (the mprotect) and is acknowledged.
func (pr *Process) serveShootdowns(p *cpu.Proc) {
	rt, ns := pr.rt, pr.ns
	for s := range rt.cfg.CPUs {
		if s == pr.local {
			continue
		}
		slot := pr.shootSlot(s, pr.local)
		seq := p.As("cm.shootpoll").Load32(slot + shootSeq)
		if seq == pr.shootSeen[s] {
			continue
		}
		pg := int(p.Load32(slot + shootPage))
		if pr.faultWindow(pg) {
			pr.shootLater = true
			continue
		}
		pr.shootSeen[s] = seq
		step(p, "cm.shootserve", instrShootdown)
		if pg < rt.cfg.Pages && ns.perm[pr.local][pg]&cpu.PermWrite != 0 {
			ns.perm[pr.local][pg] &^= cpu.PermWrite
			p.Mprotect(pr.pageAddr(pg), PageBytes, ns.perm[pr.local][pg])
		}
		p.Fence()
		p.Store32(slot+shootAck, seq)
	}
}
