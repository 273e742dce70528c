package cashmere

import (
	"github.com/nisim/nisim/host/cpu"
)

// release is section 2.4.3's release: the node's Last-Release time, then
// every page of the processor's dirty list flushed to its home (diff,
// flush-update, MC flush), write notices to the sharers but the home, and
// the mapping downgraded.
func (pr *Process) release(p *cpu.Proc) {
	pr.event(p, EvRelease, -1, -1, -1)
	start := pr.tick(p)
	pr.ns.lastRelease = max(pr.ns.lastRelease, start)
	pr.flushDirty(p, func(int) bool { return true })
}

// flushDirty takes the processor's dirty pages: those mine says to flush
// are flushed; every one is downgraded to read-only. A barrier's arrival
// leaves to a later-arriving local writer the pages it will flush (section
// 2.3 «Each processor within the node, as it arrives, performs page
// flushes for those (non-exclusive) pages for which it is the last
// arriving local writer»).
func (pr *Process) flushDirty(p *cpu.Proc, mine func(pg int) bool) {
	rt, ns := pr.rt, pr.ns
	// The No-Longer-Exclusive list joins the dirty list (section 2.4.3:
	// «These pages are found in the processor's (private) dirty list and
	// in its no-longer-exclusive list»).
	for _, pg := range ns.nle[pr.local] {
		if !ns.dirtyBit[pr.local][pg] {
			ns.dirtyBit[pr.local][pg] = true
			ns.dirty[pr.local] = append(ns.dirty[pr.local], pg)
		}
	}
	ns.nle[pr.local] = nil
	list := ns.dirty[pr.local]
	ns.dirty[pr.local] = nil
	for _, pg := range list {
		// The dirty bit goes under the page lock: while the processor
		// waits for it (another's fault holds it), its changes are still
		// only in the node's copy and the twin must stay for them
		// (cashmere.twin; cashapps.Random 4x4 found the window).
		pr.lockLocal(p, pr.pageLock(pg))
		ns.dirtyBit[pr.local][pg] = false
		step(p, "cm.release", instrRelease)
		if mine(pg) {
			pr.flushPage(p, pg)
		}
		pr.downgrade(p, pg)
		rt.chk.twinRule(p.Now(), pr, pg)
		pr.unlockLocal(p, pr.pageLock(pg))
	}
}

// flushPage flushes pg unless a flush that began after the node's last
// release began already carries its modifications (section 2.4.3: «It
// skips the flush and the sending of write notices if the latter precedes
// the former»); the page lock, held, makes the caller wait for an active
// flush.
func (pr *Process) flushPage(p *cpu.Proc, pg int) {
	rt, ns := pr.rt, pr.ns
	if ns.flushTS[pg] > ns.lastRelease {
		return
	}
	ns.flushTS[pg] = pr.tick(p)
	home := pr.homeOf(p, pg)
	if home == pr.node {
		// «If a processor is on the home node, then the flush can be
		// skipped»: its writes are in the master copy.
		pr.sendNotices(p, pg, home)
		return
	}
	if rt.mut.noticesFirst != 0 {
		pr.sendNotices(p, pg, home)
	}
	t := p.Now()
	switch {
	case rt.cfg.shootdown() && ns.twin[pg]:
		// 2LS (section 2.6): «it shoots down all write mappings,
		// flushes outstanding changes, and throws away the twin».
		pr.shootFlush(p, pg, home)
	case rt.cfg.shootdown():
		// 2LS: no twin, so no change since a shootdown flushed the
		// page (this processor's entry is left from before it); only
		// the notices are due.
		rt.chk.diffStart(pr, pg)
	case rt.cfg.migrating():
		home = pr.migrDiff(p, pg, home)
	case rt.cfg.offMC():
		pr.alias(p, pg, func() { pr.explicitDiff(p, pg, home, 0) })
	case rt.cfg.doubling():
		// 1L: the stores went home as they were made; the MC flush
		// puts them there before the notices.
		rt.chk.flushDoubled(pr, pg)
		if rt.mut.skipFlush == 0 {
			pr.mcFlush(p)
		}
	default:
		pr.alias(p, pg, func() { pr.outgoingDiff(p, pg, home, true) })
		p.Fence()
		if rt.mut.skipFlush == 0 {
			pr.mcFlush(p)
		}
	}
	pr.times.Diff = p.Now() - t
	if rt.mut.noticesFirst == 0 {
		pr.sendNotices(p, pg, home)
	}
	if rt.cfg.migrating() {
		pr.diffDone(p, pg)
	}
}

// downgrade makes the processor's mapping of pg read-only after a flush,
// drops the twin when no local writer is left (section 2.5), and
// updates the directory when the node's loosest permission changed.
func (pr *Process) downgrade(p *cpu.Proc, pg int) {
	ns := pr.ns
	cur := ns.perm[pr.local][pg]
	if cur&cpu.PermWrite == 0 {
		// An acquire invalidated the page while it was dirty here (its
		// dirty bit kept the changes for this flush): nothing to
		// downgrade, but the twin goes with the last local writer all
		// the same.
		pr.dropTwin(pg)
		return
	}
	before := ns.loosest(pg)
	ns.perm[pr.local][pg] = cur &^ cpu.PermWrite
	p.Mprotect(pr.pageAddr(pg), PageBytes, ns.perm[pr.local][pg])
	pr.dropTwin(pg)
	if after := ns.loosest(pg); after != before {
		pr.writeDir(p, pg, after, pr.homeOf(p, pg))
	}
}

// dropTwin drops pg's twin when no local processor writes the page or
// has it dirty any more (section 2.5: the twin serves the node's local
// writers).
func (pr *Process) dropTwin(pg int) {
	if !pr.ns.writers(pg, -1) && pr.rt.mut.keepTwin == 0 {
		pr.ns.twin[pg] = false
	}
}

// sendNotices sends a write notice for pg to every node that has a copy
// by the directory, but this one and the home (section 2.4.3: «send write
// notices to all other nodes, excluding the home node, that have copies
// of the dirty page»).
func (pr *Process) sendNotices(p *cpu.Proc, pg, home int) {
	rt := pr.rt
	rx := rt.lay.DirRx[pr.node]
	var to []int
	for n := range rt.cfg.Nodes {
		if n == pr.node || n == home {
			continue
		}
		if dirPerm(p.As("cm.dirread").Load32(rx+rt.dirOff(pg, n))) != cpu.PermNone {
			to = append(to, n)
		}
	}
	if len(to) == 0 {
		return
	}
	rt.chk.noticeSent(p.Now(), pr, pg, home)
	pr.lockLocal(p, pr.meta(metaSendLock))
	for _, n := range to {
		pr.sendNotice(p, n, pg)
	}
	p.Fence()
	pr.unlockLocal(p, pr.meta(metaSendLock))
}

// sendNotice puts pg in this node's bin at node n: the entry, then the
// bin's tail, waiting while the circular queue is full.
func (pr *Process) sendNotice(p *cpu.Proc, n, pg int) {
	rt, ns := pr.rt, pr.ns
	step(p, "cm.notice", instrNotice)
	ack := rt.lay.MsgRx[pr.node] + rt.bin(n) + binAck
	pr.spin(p, "cm.noticefull", func() bool { return ns.wnSent[n]-p.As("cm.noticefull").Load32(ack) < binQueue })
	at := rt.lay.MsgTx[n][pr.node] + rt.bin(pr.node)
	slot := uint64(ns.wnSent[n] % binQueue)
	pr.txStore(p, at+binNotices+4*slot, le32(uint32(pg)), "cm.notice")
	ns.wnSent[n]++
	pr.txStore(p, at+binTail, le32(ns.wnSent[n]), "cm.notice")
	pr.stats.WriteNotices++
	pr.event(p, EvNoticeSend, pg, n, -1)
}

// acquire is section 2.4.2: the node's global bins distributed to the
// per-processor lists of the processors with mappings (each page's
// write-notice timestamp set to the node's time), then the processor's
// own list: a page whose update timestamp precedes its write-notice
// timestamp is invalidated.
func (pr *Process) acquire(p *cpu.Proc) {
	rt, ns := pr.rt, pr.ns
	pr.event(p, EvAcquire, -1, -1, -1)
	pr.distribute(p)
	pr.acqTS = pr.tick(p)
	q := ns.wnq[pr.local]
	ns.wnq[pr.local] = nil
	for _, pg := range q {
		ns.wnBit[pr.local][pg] = false
		step(p, "cm.invalidate", instrInvalidate)
		if ns.updateTS[pg] >= ns.wnTS[pg] || ns.perm[pr.local][pg] == cpu.PermNone || rt.mut.skipInvalidate != 0 {
			continue
		}
		pr.lockLocal(p, pr.pageLock(pg))
		before := ns.loosest(pg)
		ns.perm[pr.local][pg] = cpu.PermNone
		p.Mprotect(pr.pageAddr(pg), PageBytes, cpu.PermNone)
		if after := ns.loosest(pg); after != before {
			pr.writeDir(p, pg, after, pr.homeOf(p, pg))
		}
		pr.stats.Invalidations++
		pr.event(p, EvInvalidate, pg, -1, -1)
		pr.unlockLocal(p, pr.pageLock(pg))
	}
}

// distribute empties the node's global write-notice bins into the
// per-processor lists (Figure 2), under the node's notice lock, and gives
// each sender back its consumption index.
func (pr *Process) distribute(p *cpu.Proc) {
	rt, ns := pr.rt, pr.ns
	lay := rt.lay
	pr.lockLocal(p, pr.meta(metaNoticeLock))
	var ts uint64
	for s := range rt.cfg.Nodes {
		if s == pr.node {
			continue
		}
		in := lay.MsgRx[pr.node] + rt.bin(s)
		tail := p.As("cm.bins").Load32(in + binTail)
		if tail == ns.wnHead[s] {
			continue
		}
		if ts == 0 {
			ts = pr.tick(p)
		}
		for i := ns.wnHead[s]; i != tail; i++ {
			pg := int(p.As("cm.bins").Load32(in + binNotices + 4*uint64(i%binQueue)))
			step(p, "cm.distribute", instrDistribute)
			if pg < 0 || pg >= rt.cfg.Pages {
				continue
			}
			pr.event(p, EvNoticeRecv, pg, s, -1)
			ns.wnTS[pg] = ts
			for c := range rt.cfg.CPUs {
				if ns.perm[c][pg] != cpu.PermNone && !ns.wnBit[c][pg] {
					ns.wnBit[c][pg] = true
					ns.wnq[c] = append(ns.wnq[c], pg)
					pr.event(p, EvNoticeDist, pg, -1, pr.node*rt.cfg.CPUs+c)
				}
			}
		}
		ns.wnHead[s] = tail
		pr.txStore(p, lay.MsgTx[s][pr.node]+rt.bin(pr.node)+binAck, le32(tail), "cm.ack")
	}
	pr.unlockLocal(p, pr.meta(metaNoticeLock))
}
