package cashmere

import (
	"bytes"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// The 2LMigr variant (section 2.6 «Treatment of Application Data»):
// 2LOffMC's data placement and explicit diffs (offmc.go), plus home
// migration: «Cashmere-2LMigr also replaces the first-touch home node
// assignment policy with a migratory policy that re-assigns the master
// page location after a home node has completed its modifications. Since
// twins are not needed on the home node, twinning overhead can be
// reduced by migrating the home node to an active writer.»
//
// The directory (MC-P24): «Each entry still consists of one word per
// node, with each word containing two bits indicating the page status and
// one bit indicating if the node is performing a diff. In addition, an
// extra word is added to the entry and is shared by all nodes. This word
// contains five bits to indicate the home node, one bit to indicate
// exclusive mode, and one bit to signal that a migration is in progress.»
// The per-node words are 2L's (permission bits, dirDiff); the shared
// words follow them in the broadcast directory (DirBytes), one per page,
// written by doubling and only by the holder of the page's migration lock.
//
// The per-page global migration lock: section 2.6 gives «a per-page
// global migration lock» but not its structure. assumed: one 8-entry
// loop-back array per page after the flush words in the sync region
// (SyncBytes), taken as section 2.3's lock (own entry set, its loop-back
// awaited, the array read) but conditionally: «If another process is
// holding the lock, then a migration is already in progress and the lock
// attempt, along with the migration attempt, is aborted.» The node-level
// test-and-set of section 2.3's lock is the page's node lock, which the
// fault handler already holds.
//
// Deviations (docs/cashmere-design.md section 8): homes start round-robin
// and move only by migration (no first-touch relocation); exclusive mode
// is off (a lone writer off the home migrates the home instead: the same
// saving of twins and notices; the shared word's exclusive bit is never
// set); a node migrates only a page it has no twin of (no other local
// writer); the home's own write fault closes the race with a migrator
// (its word with the write bit, an MC flush, then the shared word: it
// waits while a migration is in progress and writes as a non-home if the
// home moved), which the paper does not describe.

// The shared word's fields (MC-P24) and the per-node word's diff bit.
const (
	sharedHomeMask = 0x1f
	// sharedExcl is the exclusive bit; unused (exclusive mode is off
	// under 2LMigr).
	sharedExcl = 1 << 5
	// sharedMigrating: a migration is in progress.
	sharedMigrating = 1 << 6
	// sharedSet marks a written word (deviation, as dirFixed: a word
	// never written names the round-robin home).
	sharedSet = 1 << 7
	// dirDiff is the per-node word's «one bit indicating if the node is
	// performing a diff».
	dirDiff = 1 << 15
)

// instrMigrate is a migration attempt's bookkeeping besides its accesses
// (the second-level entry, the home and diff-bit tests, the notice list
// search's loop). assumed: 40, as a release's per-page work (instrRelease).
const instrMigrate = 40

// RuleMigr: a migration takes the home only when no diff to the page is
// in progress and with the old home's master copy (section 2.6: «the
// process next verifies that the home node is still not modifying the
// page and that no diffs for the page are in progress. To ensure that its
// copy is up-to-date, the process searches the write notice list ... and
// issues a page fetch request if such a write notice exists»); the shared
// word is written only under the page's migration lock, which has one
// holder at a time.
const RuleMigr = "cashmere.migr"

var (
	mutMigrNoDiffWait = env.DeclareMutation("cashmere.migrnodiffwait",
		"2LMigr: a migration does not look for diffs in progress: the home moves while a diff to the old home "+
			"is on its way (caught by cashmere.migr)")
	mutMigrNoFetch = env.DeclareMutation("cashmere.migrnofetch",
		"2LMigr: a migrating node does not fetch the page despite a write notice for it: its stale copy "+
			"becomes the master (caught by cashmere.migr)")
)

// migrState is 2LMigr's checker state and mutations.
type migrState struct {
	// holder[pg] is the process holding page pg's migration lock.
	holder []*Process
	// inflight[pg] counts the explicit diffs of pg begun and not yet
	// acknowledged by their home.
	inflight            []int
	noDiffWait, noFetch int
}

func newMigrState(rt *Runtime) *migrState {
	return &migrState{holder: make([]*Process, rt.cfg.Pages), inflight: make([]int, rt.cfg.Pages),
		noDiffWait: rt.env.Mutation(mutMigrNoDiffWait), noFetch: rt.env.Mutation(mutMigrNoFetch)}
}

// sharedOff is page pg's shared word in the directory, after every
// per-node word.
func (rt *Runtime) sharedOff(pg int) uint64 { return 4 * uint64(rt.cfg.Pages*rt.cfg.Nodes+pg) }

// migrLockEntry is node's entry of page pg's migration lock array in
// the sync region, after the locks and the flush words.
func (rt *Runtime) migrLockEntry(pg, node int) uint64 {
	return uint64((rt.cfg.Locks+1)*lockBytes+4*rt.cfg.Procs()+pg*lockBytes) + 4*uint64(node)
}

// readShared loads page pg's shared word from the node's replica.
func (pr *Process) readShared(p *cpu.Proc, pg int) uint32 {
	return p.As("cm.dirread").Load32(pr.rt.lay.DirRx[pr.node] + pr.rt.sharedOff(pg))
}

// sharedHome is the home a shared word names.
func (rt *Runtime) sharedHome(w uint32, pg int) int {
	if w&sharedSet == 0 {
		return initialHome(pg, rt.cfg.Nodes)
	}
	return int(w & sharedHomeMask)
}

// migrHome is homeOf under 2LMigr: the shared word's home.
func (pr *Process) migrHome(p *cpu.Proc, pg int) int {
	return pr.rt.sharedHome(pr.readShared(p, pg), pg)
}

// writeShared broadcasts page pg's shared word by doubling; only the
// holder of the page's migration lock may.
func (pr *Process) writeShared(p *cpu.Proc, pg int, w uint32) {
	rt := pr.rt
	if h := rt.mig.holder[pg]; h != pr {
		rt.chk.report(p.Now(), pr, RuleMigr, "process %d writes page %d's shared directory word without its migration lock", pr.id, pg)
	}
	off := rt.sharedOff(pg)
	pr.double(p, rt.lay.DirRx[pr.node]+off, rt.lay.DirTx[pr.node]+off, le32(w), "cm.dirshared")
	pr.stats.DirUpdates++
}

// writing reports whether node n's directory word of pg says it writes
// the page.
func (pr *Process) writing(p *cpu.Proc, pg, n int) bool {
	rt := pr.rt
	w := p.As("cm.dirread").Load32(rt.lay.DirRx[pr.node] + rt.dirOff(pg, n))
	return dirPerm(w)&cpu.PermWrite != 0
}

// diffsInProgress reports whether another node's word of pg has its
// diff bit set.
func (pr *Process) diffsInProgress(p *cpu.Proc, pg int) bool {
	rt := pr.rt
	busy := false
	for n := range rt.cfg.Nodes {
		if n != pr.node && p.As("cm.dirread").Load32(rt.lay.DirRx[pr.node]+rt.dirOff(pg, n))&dirDiff != 0 {
			busy = true
		}
	}
	return busy
}

// tryMigrLock is the conditional acquire of page pg's migration lock:
// the node's entry set and its loop-back awaited, the array read; any
// other entry set aborts (the entry cleared again).
func (pr *Process) tryMigrLock(p *cpu.Proc, pg int) bool {
	rt := pr.rt
	tx, rx := rt.lay.SyncTx[pr.node], rt.lay.SyncRx[pr.node]
	own := rt.migrLockEntry(pg, pr.node)
	pr.setMigrEntry(p, tx+own, rx+own, 1)
	for n := range rt.cfg.Nodes {
		if n != pr.node && p.As("cm.lockread").Load32(rx+rt.migrLockEntry(pg, n)) != 0 {
			pr.setMigrEntry(p, tx+own, rx+own, 0)
			return false
		}
	}
	p.Fence()
	if h := rt.mig.holder[pg]; h != nil {
		rt.chk.report(p.Now(), pr, RuleMigr, "process %d took page %d's migration lock held by process %d", pr.id, pg, h.id)
	}
	rt.mig.holder[pg] = pr
	return true
}

// unlockMigr frees page pg's migration lock: the entry cleared and the
// clear seen back (every write before it, the shared word's, is then
// everywhere).
func (pr *Process) unlockMigr(p *cpu.Proc, pg int) {
	rt := pr.rt
	rt.mig.holder[pg] = nil
	p.Fence()
	own := rt.migrLockEntry(pg, pr.node)
	pr.setMigrEntry(p, rt.lay.SyncTx[pr.node]+own, rt.lay.SyncRx[pr.node]+own, 0)
}

func (pr *Process) setMigrEntry(p *cpu.Proc, tx, rx uint64, v uint32) {
	pr.txStore(p, tx, le32(v), "cm.migrlock")
	p.Fence()
	pr.spin(p, "cm.lockloop", func() bool { return p.As("cm.lockloop").Load32(rx) == v })
}

// waitMigration waits (polling) while a migration of pg is in progress
// and returns the home the shared word then names.
func (pr *Process) waitMigration(p *cpu.Proc, pg int) int {
	for {
		w := pr.readShared(p, pg)
		if w&sharedMigrating == 0 {
			return pr.rt.sharedHome(w, pg)
		}
		pr.poll(p)
		p.As("cm.migrwait").Compute(spinCycles)
	}
}

// homeStartsWriting is the home's side of the race with a migrator: its
// word, already written with the write bit, made visible everywhere (the
// MC flush), then the shared word: a migrator that has not yet looked at
// the home's word will see it writing and abort; one that already has
// sets the migrating bit first, so the home waits for it and returns the
// home as it leaves it (another node if it moved: the fault goes on as a
// non-home write with a twin).
func (pr *Process) homeStartsWriting(p *cpu.Proc, pg int) int {
	pr.mcFlush(p)
	return pr.waitMigration(p, pg)
}

// migrate is section 2.6's migration in the write fault handler of a node
// that is not pg's home and has no other local writer: «if the home node
// is not writing the page, a conditional acquire on a per-page global
// migration lock ... verifies that the home node is still not modifying
// the page and that no diffs for the page are in progress ... searches
// the write notice list for the entries for the page and issues a page
// fetch request if such a write notice exists. Finally the process
// assumes ownership by updating the home node indication in the directory
// entry and then releases the migration lock.» It returns the home as it
// leaves it. Its caller holds the page's node lock.
func (pr *Process) migrate(p *cpu.Proc, pg, home int) int {
	rt, ns := pr.rt, pr.ns
	t := p.Now()
	step(p, "cm.migr", instrMigrate)
	if pr.writing(p, pg, home) || !pr.tryMigrLock(p, pg) {
		return home
	}
	// The lock held: the migrating bit, everywhere (the MC flush) before
	// the second look, so that a diff that starts now waits and one in
	// progress is seen.
	home = rt.sharedHome(pr.readShared(p, pg), pg)
	pr.writeShared(p, pg, uint32(home)|sharedSet|sharedMigrating)
	pr.mcFlush(p)
	ok := home != pr.node && !pr.writing(p, pg, home)
	if ok && rt.mig.noDiffWait == 0 && pr.diffsInProgress(p, pg) {
		ok = false
	}
	if ok {
		// The write notice list: the node's global bins into the
		// per-processor lists, then the page's timestamps.
		pr.distribute(p)
		step(p, "cm.migr", instrInvalidate)
		if (!ns.valid[pg] || ns.updateTS[pg] < ns.wnTS[pg]) && rt.mig.noFetch == 0 {
			pr.fetch(p, pg, home)
		}
		rt.mig.taken(p.Now(), pr, pg, home)
		rt.home[pg] = pr.node
		// The node's copy is the master now; should the home move on,
		// the copy is refetched before it is mapped again.
		ns.valid[pg] = false
		home = pr.node
		pr.stats.Migrations++
	}
	pr.writeShared(p, pg, uint32(home)|sharedSet)
	pr.unlockMigr(p, pg)
	if ok {
		pr.times.Migration = p.Now() - t
	}
	return home
}

// taken checks a migration as it takes pg's home from old: no explicit
// diff of the page on its way, and the new home's copy the old home's
// master (no diff in progress and the old home not writing, so that copy
// is the master).
func (m *migrState) taken(now clock.Time, pr *Process, pg, old int) {
	rt := pr.rt
	if m.inflight[pg] > 0 {
		rt.chk.report(now, pr, RuleMigr, "process %d takes page %d's home from node %d while %d diffs to it are in progress", pr.id, pg, old, m.inflight[pg])
		return
	}
	peek := rt.hooks.Peek
	if peek == nil {
		return
	}
	mine := peek(rt.PhysNode(pr.node), rt.PageAddr(pr.node, pg), PageBytes)
	master := peek(rt.PhysNode(old), rt.PageAddr(old, pg), PageBytes)
	if !bytes.Equal(mine, master) {
		off := 0
		for off < len(mine) && off < len(master) && mine[off] == master[off] {
			off++
		}
		rt.chk.report(now, pr, RuleMigr, "process %d takes page %d's home with a copy that differs from node %d's master at +%#x", pr.id, pg, old, off&^7)
	}
}

// migrDiff is a release's explicit diff under 2LMigr: «Before starting a
// diff, a process asserts the diff bit in its word of the directory
// entry. Then the process checks the shared word in the directory entry
// and waits if a migration is in progress.» The bit goes everywhere (the
// MC flush) before the look, so that a migrator either sees it or is
// seen; the diff goes to the home the shared word names after the wait.
// diffDone resets the bit after the write notices. It returns the home.
func (pr *Process) migrDiff(p *cpu.Proc, pg, home int) int {
	rt, ns := pr.rt, pr.ns
	pr.writeDirWord(p, pg, ns.dirWord[pg]|dirDiff)
	pr.mcFlush(p)
	home = pr.waitMigration(p, pg)
	if home == pr.node {
		// Not reached: only this node's own fault migrates a page to
		// it, and the page's node lock is held.
		rt.chk.diffStart(pr, pg)
		return home
	}
	rt.mig.inflight[pg]++
	pr.alias(p, pg, func() { pr.explicitDiff(p, pg, home, 0) })
	rt.mig.inflight[pg]--
	return home
}

// diffDone resets the node's diff bit of pg after a flush's notices
// (section 2.6: «Upon completion, the process resets its node's diff
// bit»; after the notices, which the Memory Channel then delivers before
// the reset, so a migrator that sees the bit clear finds them in its
// bins).
func (pr *Process) diffDone(p *cpu.Proc, pg int) {
	if w := pr.ns.dirWord[pg]; w&dirDiff != 0 {
		pr.writeDirWord(p, pg, w&^dirDiff)
	}
}
