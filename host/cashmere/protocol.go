package cashmere

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
)

// pageFault is the SIGSEGV handler (section 2.4.1): the second-level
// entry, the global entry if the node's loosest permission changes, a
// fetch if there is no valid copy or it is stale by the timestamps, on a
// write the dirty list and the twin, and the mprotect.
func (pr *Process) pageFault(p *cpu.Proc, f *cpu.Frame) {
	rt, ns := pr.rt, pr.ns
	pg := int((f.Addr - pr.pageAddr(0)) / PageBytes)
	if f.Addr < pr.pageAddr(0) || pg >= rt.cfg.Pages {
		rt.fail(errAddr(pr.id, f.Addr))
		return
	}
	if f.Write {
		pr.stats.WriteFaults++
	} else {
		pr.stats.ReadFaults++
	}
	pr.faultEvent(p, pg, f.Write)
	if rt.cfg.Interrupts {
		pr.faulting, pr.faultPg = true, pg
		p.EnableInterrupts() // requests are served inside the handler's waits (interrupt.go)
	}
	pr.lockLocal(p, pr.pageLock(pg))
	home := pr.homeOf(p, pg)
	step(p, "cm.fault", instrFault)
	cur := ns.perm[pr.local][pg]
	want := cur | cpu.PermRead
	if f.Write {
		want |= cpu.PermWrite
	}
	before := ns.loosest(pg)
	ns.perm[pr.local][pg] = want
	holder := -1
	if after := ns.loosest(pg); after != before {
		pr.writeDir(p, pg, after, home)
		if before == cpu.PermNone {
			// The node starts sharing: once its word is everywhere (the
			// MC flush), an exclusive holder elsewhere must be asked
			// for the page (section 2.4.1 «Exclusive Mode»). An
			// exclusive writer checks the other way round, so one of
			// the two sees the other.
			pr.mcFlush(p)
			holder = pr.exclHolder(p, pg)
		}
	}
	if rt.cfg.migrating() && f.Write && home == pr.node && before&cpu.PermWrite == 0 {
		// 2LMigr: the home starts writing; a migration may be taking
		// the page (migr.go).
		home = pr.homeStartsWriting(p, pg)
	}
	switch {
	case holder >= 0:
		pr.beforeFetch(p, pg, home)
		pr.fetchFrom(p, pg, holder, reqBreak)
	case home != pr.node && cur == cpu.PermNone:
		if !ns.valid[pg] || ns.updateTS[pg] < min(ns.wnTS[pg], pr.acqTS) {
			pr.beforeFetch(p, pg, home)
			pr.fetch(p, pg, home)
		} else if ns.updateTS[pg] < ns.wnTS[pg] && !ns.wnBit[pr.local][pg] {
			// The copy predates a write notice the node distributed
			// after this processor's last acquire, so it may map the
			// copy now (the paper's «whichever is earlier»); but the
			// notice went only to the processors that had mappings
			// then, so this processor takes it on its own list, where
			// its next acquire finds it and invalidates the page.
			// Without it a later acquire (a flag naming this very
			// write) kept the stale mapping: Gauss at 16 processes
			// read x[j] as 0 after x[j]'s flag.
			ns.wnBit[pr.local][pg] = true
			ns.wnq[pr.local] = append(ns.wnq[pr.local], pg)
			step(p, "cm.distribute", instrDistribute)
		}
	}
	if rt.cfg.migrating() && f.Write && home != pr.node && !ns.twin[pg] && !ns.writers(pg, pr.local) {
		home = pr.migrate(p, pg, home)
	}
	if f.Write && home != pr.node && ns.excl[pg] < 0 && !ns.twin[pg] && !ns.writers(pg, pr.local) && !rt.cfg.doubling() && !rt.cfg.migrating() {
		pr.tryExclusive(p, pg, home)
	}
	if f.Write && ns.excl[pg] < 0 {
		if home != pr.node && !ns.twin[pg] && !rt.cfg.doubling() {
			pr.makeTwin(p, pg)
		}
		if !ns.dirtyBit[pr.local][pg] {
			ns.dirtyBit[pr.local][pg] = true
			ns.dirty[pr.local] = append(ns.dirty[pr.local], pg)
			step(p, "cm.dirty", instrDirtyInsert)
		}
	}
	p.Mprotect(pr.pageAddr(pg), PageBytes, want)
	pr.event(p, EvMapped, pg, -1, int(want))
	rt.chk.twinRule(p.Now(), pr, pg)
	pr.unlockLocal(p, pr.pageLock(pg))
}

// beforeFetch is 2LS's part of a fetch into a page with local writers
// (section 2.6): their write mappings shot down, their changes flushed,
// the twin dropped (shootFlush); 2L keeps the twin for the incoming diff.
func (pr *Process) beforeFetch(p *cpu.Proc, pg, home int) {
	if pr.rt.cfg.shootdown() && pr.ns.twin[pg] {
		pr.shootFlush(p, pg, home)
	}
}

// homeOf returns page pg's home node from the directory: the node's own
// word once the superpage's home is fixed, else the other nodes' words;
// if no node has fixed it, this is the first touch and the home moves here
// (section 2.3: «re-assigned dynamically after program initialization to
// the node that first touches a page. To relocate a master page, a
// processor must acquire a global lock and explicitly request a remapping
// from the initial home node»).
func (pr *Process) homeOf(p *cpu.Proc, pg int) int {
	rt, ns := pr.rt, pr.ns
	if rt.cfg.migrating() {
		return pr.migrHome(p, pg)
	}
	if w := ns.dirWord[pg]; w&dirFixed != 0 {
		return dirHome(w) / rt.cfg.CPUs
	}
	if h, ok := pr.readHome(p, pg); ok {
		return h
	}
	pr.lockGlobal(p, 0)
	h, ok := pr.readHome(p, pg)
	if !ok {
		sp := pg / rt.cfg.SuperpagePages
		h = pr.node
		if from := rt.home[sp]; from != h {
			if !rt.cfg.offMC() {
				// 2LOffMC's data is in node memory: no receive
				// mapping to move, the directory says it all.
				if err := rt.hooks.Remap(sp, from, h); err != nil {
					rt.fail(err)
				}
				p.As("cm.remap").Compute(rt.cfg.RemapCycles)
			}
			rt.home[sp] = h
		}
		pr.stats.Relocations++
		for q := sp * rt.cfg.SuperpagePages; q < min((sp+1)*rt.cfg.SuperpagePages, rt.cfg.Pages); q++ {
			pr.writeDirWord(p, q, dirWord(ns.loosest(q), h*rt.cfg.CPUs, true))
		}
		p.Fence()
		pr.event(p, EvHome, pg, h, -1)
	}
	pr.unlockGlobal(p, 0)
	return h
}

// readHome loads every node's directory word of pg and returns the home a
// fixed one names.
func (pr *Process) readHome(p *cpu.Proc, pg int) (int, bool) {
	rt := pr.rt
	rx := rt.lay.DirRx[pr.node]
	home, ok := 0, false
	for n := range rt.cfg.Nodes {
		w := p.As("cm.dirread").Load32(rx + rt.dirOff(pg, n))
		if w&dirFixed != 0 && !ok {
			home, ok = dirHome(w)/rt.cfg.CPUs, true
		}
	}
	if ok {
		pr.ns.dirWord[pg] |= dirFixed
		pr.ns.dirWord[pg] = pr.ns.dirWord[pg]&^(0x3f<<dirHomeShift) | uint32(home*rt.cfg.CPUs)<<dirHomeShift
	}
	return home, ok
}

// writeDir writes the node's directory word of pg with permission perm.
func (pr *Process) writeDir(p *cpu.Proc, pg int, perm cpu.Perm, home int) {
	excl := noProc
	if e := pr.ns.excl[pg]; e >= 0 {
		excl = e
	}
	pr.writeDirWord(p, pg, dirWordX(perm, excl, home*pr.rt.cfg.CPUs, true))
	if perm == cpu.PermNone && home != pr.node {
		pr.ns.valid[pg] = false
	}
}

// writeDirWord broadcasts the node's word of pg by doubling (section 2.3:
// «Writes are written to both the transmit and receive regions. Loopback
// mode is disabled»).
func (pr *Process) writeDirWord(p *cpu.Proc, pg int, w uint32) {
	rt := pr.rt
	node := pr.node
	if rt.mut.dirOther != 0 {
		node = (node + 1) % rt.cfg.Nodes
	}
	off := rt.dirOff(pg, node)
	pr.ns.dirWord[pg] = w
	rt.chk.dirWrite(pr, pg, off)
	pr.double(p, rt.lay.DirRx[pr.node]+off, rt.lay.DirTx[pr.node]+off, le32(w), "cm.dir")
	pr.event(p, EvDir, pg, -1, int(dirPerm(w)))
	pr.stats.DirUpdates++
}

// fetch gets pg from home by an explicit request (section 2.3: «Cashmere-2L
// only uses explicit inter-node requests to request a copy of the page
// from its home node»): the request into the node's bin at the home, the
// home's poll flag, a wait for the reply (serving others meanwhile), then
// the copy in, through the twin when local writers exist (the incoming
// diff, section 2.2).
func (pr *Process) fetch(p *cpu.Proc, pg, home int) { pr.fetchFrom(p, pg, home, reqFetch) }

// Request kinds, in the request word's top bit.
const (
	reqFetch = 0
	reqBreak = 1 << 31
)

// fetchFrom asks node home (the home, or an exclusive holder with kind
// reqBreak) for pg.
func (pr *Process) fetchFrom(p *cpu.Proc, pg, home int, kind uint32) {
	rt, ns := pr.rt, pr.ns
	lay := rt.lay
	pr.lockLocal(p, pr.meta(metaFetchLock))
	t := p.Now()
	ts := pr.tick(p)
	ns.reqSeq[home]++
	seq := ns.reqSeq[home]
	step(p, "cm.request", instrRequest)
	at := lay.MsgTx[home][pr.node] + rt.bin(pr.node)
	pr.txStore(p, at+binReqPage, le32(uint32(pg)|kind), "cm.request")
	pr.txStore(p, at+binReqSeq, le32(seq), "cm.request")
	pr.txStore(p, lay.PollTx[home][pr.node], le32(pollValue(pr.node, seq)), "cm.pollset")
	p.Fence()
	pr.event(p, EvFetchRequest, pg, home, b2i(kind == reqBreak))
	reply := lay.MsgRx[pr.node] + rt.bin(home)
	pr.spin(p, "cm.replywait", func() bool { return p.As("cm.replywait").Load32(reply+binReplySeq) == seq })
	pr.event(p, EvFetchReply, pg, home, PageBytes)
	pr.alias(p, pg, func() {
		if ns.twin[pg] && rt.mut.skipIncoming == 0 {
			pr.incomingDiff(p, pg, reply+binReply)
		} else {
			pr.copyPage(p, reply+binReply, pr.pageAddr(pg), "cm.fetchcopy")
		}
	})
	pr.event(p, EvFetchCopied, pg, -1, b2i(ns.twin[pg] && rt.mut.skipIncoming == 0))
	pr.times.Fetch = p.Now() - t
	ns.updateTS[pg] = ts
	ns.valid[pg] = true
	pr.stats.PageTransfers++
	pr.unlockLocal(p, pr.meta(metaFetchLock))
}

// pollValue is what a request writes into the home's poll flag: unique to
// the requester and its request, so a change of the flag's value is a new
// message and the home never clears it (deviation: the paper's handler
// resets the flag, which a remote write can race with; docs section 7).
func pollValue(node int, seq uint32) uint32 { return uint32(node+1)<<24 | seq&0xffffff }

// poll is Figure 3: a load of the poll flag; when it changed, the request
// handler.
func (pr *Process) poll(p *cpu.Proc) {
	rt := pr.rt
	if rt.cfg.Interrupts {
		return // requests and shootdowns interrupt instead (interrupt.go)
	}
	if rt.cfg.shootdown() {
		pr.serveShootdowns(p)
	}
	v := p.As("cm.poll").Load32(rt.lay.PollRx[pr.node])
	if v == pr.lastPoll && !pr.ns.pendingServe {
		return
	}
	if !pr.tryLocal(p, pr.meta(metaServeLock)) {
		return // another processor is serving; look again next time
	}
	pr.lastPoll = v
	pr.serve(p)
	pr.unlockLocal(p, pr.meta(metaServeLock))
}

// serve answers every new page request in the node's bins: the home copy
// written, 32-byte write-combined block by block, into the requester's
// reply buffer through the transmit window, then the reply's sequence
// number (the Memory Channel's order puts it after the page).
func (pr *Process) serve(p *cpu.Proc) {
	rt, ns := pr.rt, pr.ns
	lay := rt.lay
	if rt.cfg.offMC() {
		pr.applyDiffs(p)
	}
	ns.pendingServe = false
	for s := range rt.cfg.Nodes {
		if s == pr.node {
			continue
		}
		in := lay.MsgRx[pr.node] + rt.bin(s)
		seq := p.As("cm.serve").Load32(in + binReqSeq)
		if seq == ns.served[s] {
			continue
		}
		w := p.Load32(in + binReqPage)
		pg := int(w &^ reqBreak)
		step(p, "cm.serve", instrRequest)
		if pg >= rt.cfg.Pages {
			ns.served[s] = seq
			continue
		}
		if w&reqBreak != 0 {
			if pr.faultWindow(pg) || !pr.tryLocal(p, pr.pageLock(pg)) {
				ns.pendingServe = true
				continue
			}
			ns.served[s] = seq
			pr.breakExclusive(p, pg, s, seq)
			pr.unlockLocal(p, pr.pageLock(pg))
			continue
		}
		ns.served[s] = seq
		pr.reply(p, s, pg, seq)
	}
}

// reply sends the node's copy of pg to node s's reply buffer through the
// transmit window, then the request's sequence number (the Memory
// Channel's order puts it after the page).
func (pr *Process) reply(p *cpu.Proc, s, pg int, seq uint32) {
	pr.event(p, EvServe, pg, s, -1)
	out := pr.rt.lay.MsgTx[s][pr.node] + pr.rt.bin(pr.node)
	pr.alias(p, pg, func() { pr.sendPage(p, pr.pageAddr(pg), out+binReply) })
	pr.txStore(p, out+binReplySeq, le32(seq), "cm.reply")
	p.Fence()
	pr.stats.Served++
	pr.stats.DataBytes += PageBytes
}

// wordsPerBlock is a write-combined block's words: the 21064A's write
// buffer merges stores to one aligned 32-byte block
// (platform.AlphaServer2100().CPU.WriteCombineBytes), which the adapter
// sends as one packet.
const wordsPerBlock = 4

// sendPage writes the page at src through the transmit address dst: loads
// of 8-byte words, a 32-byte store per block.
func (pr *Process) sendPage(p *cpu.Proc, src, dst uint64) {
	blk := make([]byte, 0, 8*wordsPerBlock)
	for off := uint64(0); off < PageBytes; off += 8 * wordsPerBlock {
		blk = blk[:0]
		for w := range uint64(wordsPerBlock) {
			blk = append(blk, p.As("cm.sendload").Load(src+off+8*w, 8)...)
		}
		pr.txStore(p, dst+off, append([]byte(nil), blk...), "cm.send")
		step(p, "cm.sendloop", instrCopyWord*wordsPerBlock)
	}
}

// copyPage copies a page in node memory, word by word.
func (pr *Process) copyPage(p *cpu.Proc, src, dst uint64, label string) {
	for off := uint64(0); off < PageBytes; off += 8 {
		pr.store(p, dst+off, p.As(label).Load(src+off, 8))
		if (off/8)%wordsPerBlock == wordsPerBlock-1 {
			step(p, label, instrCopyWord*wordsPerBlock)
		}
	}
}

// makeTwin creates pg's twin: a copy of the node's page (section 2.2 «a
// pristine copy of the page, called a twin»).
func (pr *Process) makeTwin(p *cpu.Proc, pg int) {
	t := p.Now()
	pr.alias(p, pg, func() { pr.copyPage(p, pr.pageAddr(pg), pr.twinAddr(pg), "cm.twin") })
	pr.times.Twin = p.Now() - t
	pr.ns.twin[pg] = true
	pr.stats.Twins++
	pr.event(p, EvTwin, pg, -1, -1)
}

// incomingDiff merges a fetched page through the twin (section 2.2: «The
// incoming data is simply compared to the twin, and any differences are
// written to both the working copy and the twin»).
func (pr *Process) incomingDiff(p *cpu.Proc, pg int, src uint64) {
	page, twin := pr.pageAddr(pg), pr.twinAddr(pg)
	for off := uint64(0); off < PageBytes; off += 8 {
		in := p.As("cm.indiff").Load(src+off, 8)
		tw := p.As("cm.indiff").Load(twin+off, 8)
		if binary.LittleEndian.Uint64(in) != binary.LittleEndian.Uint64(tw) {
			pr.store(p, page+off, in)
			pr.store(p, twin+off, in)
		}
		if (off/8)%wordsPerBlock == wordsPerBlock-1 {
			step(p, "cm.indiff", instrDiffWord*wordsPerBlock)
		}
	}
	pr.stats.IncomingDiffs++
}

// outgoingDiff sends pg's modifications to the home copy through the
// transmit window: every word that differs from the twin, contiguous
// changed words of one 32-byte block in one write-combined store, and
// writes them into the twin too when update (the flush-update, section
// 2.5: «A flush-update operation writes all local modifications to both
// the home node and the twin»; 2LS drops the twin instead). It returns the
// bytes sent.
func (pr *Process) outgoingDiff(p *cpu.Proc, pg, home int, update bool) int {
	rt := pr.rt
	tx := rt.homeTx(pr.node, pg)
	rt.chk.diffStart(pr, pg)
	sent := pr.diffRuns(p, pg, "cm.outdiff", true, update, func(off uint64, run []byte) {
		pr.txStore(p, tx+off, run, "cm.diff")
	})
	pr.event(p, EvDiff, pg, home, sent/8)
	pr.stats.Diffs++
	if update {
		pr.stats.FlushUpdates++
	}
	pr.stats.DataBytes += sent
	return sent
}

// diffRuns scans pg word by word and hands send each run of words to send
// (contiguous, within one 32-byte block: one write-combined store):
// against the twin, the words that differ from it, written into the twin
// too when update is set (the flush-update); without the twin
// (byTwin false), every word. label names the loads and the loop's
// costed steps. It returns the bytes sent.
func (pr *Process) diffRuns(p *cpu.Proc, pg int, label string, byTwin, update bool, send func(off uint64, run []byte)) int {
	rt := pr.rt
	page, twin := pr.pageAddr(pg), pr.twinAddr(pg)
	sent := 0
	var run []byte
	var runAt uint64
	flushRun := func() {
		if len(run) > 0 {
			send(runAt, append([]byte(nil), run...))
			rt.chk.diffSent(pr, pg, runAt, run)
			sent += len(run)
			run = run[:0]
		}
	}
	for off := uint64(0); off < PageBytes; off += 8 {
		if off%(8*wordsPerBlock) == 0 {
			flushRun()
			if off > 0 {
				step(p, label, instrDiffWord*wordsPerBlock)
			}
		}
		w := p.As(label).Load(page+off, 8)
		if byTwin {
			t := p.As(label).Load(twin+off, 8)
			if binary.LittleEndian.Uint64(w) == binary.LittleEndian.Uint64(t) {
				flushRun()
				continue
			}
			if update && rt.mut.skipFlushUpdate == 0 {
				pr.store(p, twin+off, w)
			}
		}
		if len(run) == 0 {
			runAt = off
		}
		run = append(run, w...)
	}
	flushRun()
	step(p, label, instrDiffWord*wordsPerBlock)
	return sent
}

func errAddr(id int, a uint64) error {
	return fmt.Errorf("cashmere: process %d: fault at %#x outside the shared pages", id, a)
}

// exclHolder returns the node whose directory word of pg names an
// exclusive holder, -1 when none.
func (pr *Process) exclHolder(p *cpu.Proc, pg int) int {
	rt := pr.rt
	rx := rt.lay.DirRx[pr.node]
	for n := range rt.cfg.Nodes {
		if n == pr.node {
			continue
		}
		// A word never written (0, no fixed bit) names nobody.
		w := p.As("cm.dirread").Load32(rx + rt.dirOff(pg, n))
		if e := dirExclOf(w); w&dirFixed != 0 && e != noProc {
			return e / rt.cfg.CPUs
		}
	}
	return -1
}

// alone reports whether no other node maps pg (the home included: its
// processors read the master, which an exclusive page leaves stale).
func (pr *Process) alone(p *cpu.Proc, pg int) bool {
	rt := pr.rt
	rx := rt.lay.DirRx[pr.node]
	for n := range rt.cfg.Nodes {
		if n != pr.node && dirPerm(p.As("cm.dirread").Load32(rx+rt.dirOff(pg, n))) != cpu.PermNone {
			return false
		}
	}
	return true
}

// tryExclusive puts pg in exclusive mode when no other node shares it
// (section 2.4.1: «If there are any other sharers, the processor adds the
// page to its (private) per-processor dirty list and possibly creates a
// twin of the page; otherwise it shifts the page into exclusive mode»):
// the holder in the node's directory word, then, once the word is
// everywhere (the MC flush), a second look: a node that began sharing
// meanwhile makes it give exclusive mode up again.
func (pr *Process) tryExclusive(p *cpu.Proc, pg, home int) {
	ns := pr.ns
	if !pr.alone(p, pg) {
		return
	}
	ns.excl[pg] = pr.id
	pr.writeDir(p, pg, ns.loosest(pg), home)
	pr.mcFlush(p)
	if !pr.alone(p, pg) {
		ns.excl[pg] = -1
		pr.writeDir(p, pg, ns.loosest(pg), home)
		return
	}
	pr.stats.Exclusive++
	pr.event(p, EvExclEnter, pg, -1, -1)
}

// breakExclusive answers node s's request seq for pg, which this node held
// exclusively (section 2.4.1: «the holder flushes the entire page to the
// home node, removes the page from exclusive-mode, and then returns the
// latest copy of the page to the requestor»): local writers left keep a
// twin and find the page on their No-Longer-Exclusive lists; the
// responding processor downgrades its own mapping. A page no longer
// exclusive is answered with the node's copy.
func (pr *Process) breakExclusive(p *cpu.Proc, pg, s int, seq uint32) {
	rt, ns := pr.rt, pr.ns
	if ns.excl[pg] >= 0 {
		home := pr.homeOf(p, pg)
		if rt.cfg.offMC() {
			pr.alias(p, pg, func() { pr.explicitDiff(p, pg, home, 1) })
		} else {
			pr.alias(p, pg, func() { pr.sendPage(p, pr.pageAddr(pg), rt.homeTx(pr.node, pg)) })
			p.Fence()
			pr.stats.DataBytes += PageBytes
		}
		ns.excl[pg] = -1
		pr.writeDir(p, pg, ns.loosest(pg), home)
		var others []int
		for q := range rt.cfg.CPUs {
			if q != pr.local && ns.perm[q][pg]&cpu.PermWrite != 0 {
				others = append(others, q)
			}
		}
		if len(others) > 0 {
			pr.makeTwin(p, pg)
			for _, q := range others {
				ns.nle[q] = append(ns.nle[q], pg)
			}
		}
		pr.stats.Breaks++
		pr.event(p, EvExclBreak, pg, s, -1)
	}
	pr.reply(p, s, pg, seq)
	if ns.perm[pr.local][pg]&cpu.PermWrite != 0 {
		ns.perm[pr.local][pg] &^= cpu.PermWrite
		p.Mprotect(pr.pageAddr(pg), PageBytes, ns.perm[pr.local][pg])
	}
	rt.chk.twinRule(p.Now(), pr, pg)
}
