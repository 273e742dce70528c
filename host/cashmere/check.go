package cashmere

import (
	"bytes"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Rules the protocol checkers report under (env.Report; design section 6).
const (
	// RuleCopy: at every barrier exit (issue 18 section 4) and at the end
	// of a run every readable copy of a page equals its master copy (the
	// home's, or an exclusive holder's).
	RuleCopy = "cashmere.copy"
	// RuleTwin: a twin exists exactly when section 2.5 says: off the home
	// node, while a local processor may write the page or has it dirty.
	RuleTwin = "cashmere.twin"
	// RuleDir: a directory word is written only by its node.
	RuleDir = "cashmere.dir"
	// RuleLock: a global lock has one holder at a time.
	RuleLock = "cashmere.lock"
	// RuleDiff: a page's outgoing diff has reached the home when the
	// write notices that depend on it are sent (section 2.2: «the diff be
	// applied before any related write notices are processed»).
	RuleDiff = "cashmere.diff"
)

// Test-only faults (env.DeclareMutation), each caught by a checker.
var (
	mutSkipFlush = env.DeclareMutation("cashmere.skipflush",
		"a release does not MC-flush after its outgoing diff: write notices leave while the diff is in flight "+
			"(caught by cashmere.diff)")
	mutSkipIncoming = env.DeclareMutation("cashmere.skipincoming",
		"a fetch with local writers copies the page over the working copy instead of the incoming diff: "+
			"local modifications not yet flushed are lost (caught by the testbench's sequential comparison, cashmere.result)")
	mutNoticesFirst = env.DeclareMutation("cashmere.noticesfirst",
		"a release sends its write notices before its outgoing diff (caught by cashmere.diff)")
	mutSkipFlushUpdate = env.DeclareMutation("cashmere.skipflushupdate",
		"an outgoing diff does not update the twin: the next release sends the words again, over newer "+
			"modifications from other nodes (caught by the testbench's sequential comparison)")
	mutKeepTwin = env.DeclareMutation("cashmere.keeptwin",
		"a downgrade keeps the twin when no local writer is left (caught by cashmere.twin)")
	mutLockAlone = env.DeclareMutation("cashmere.lockalone",
		"a global lock's acquirer does not read the other nodes' entries: it always thinks itself alone "+
			"(caught by cashmere.lock)")
	mutDirOther = env.DeclareMutation("cashmere.dirother",
		"a node writes its directory words into the next node's slots (caught by cashmere.dir)")
	mutSkipShootdown = env.DeclareMutation("cashmere.skipshootdown",
		"2LS: a shootdown sends no messages: other local writers keep their write mappings while the twin "+
			"is dropped (caught by cashmere.twin)")
	mutNoDiffAck = env.DeclareMutation("cashmere.nodiffack",
		"2LOffMC: an explicit diff's sender does not wait for the home's acknowledgement: its write notices "+
			"leave before the home has applied the diff (caught by cashmere.diff)")
	mutSkipInvalidate = env.DeclareMutation("cashmere.skipinvalidate",
		"an acquire distributes the write notices but invalidates nothing: stale copies stay readable "+
			"(caught by cashmere.copy)")
)

type mutations struct {
	skipFlush, skipIncoming, noticesFirst, skipFlushUpdate, keepTwin, lockAlone, skipInvalidate, dirOther int
	skipShootdown, noDiffAck                                                                              int
}

func readMutations(e *env.Env) mutations {
	return mutations{skipFlush: e.Mutation(mutSkipFlush), skipIncoming: e.Mutation(mutSkipIncoming),
		noticesFirst: e.Mutation(mutNoticesFirst), skipFlushUpdate: e.Mutation(mutSkipFlushUpdate),
		keepTwin: e.Mutation(mutKeepTwin), lockAlone: e.Mutation(mutLockAlone),
		skipInvalidate: e.Mutation(mutSkipInvalidate), dirOther: e.Mutation(mutDirOther),
		skipShootdown: e.Mutation(mutSkipShootdown), noDiffAck: e.Mutation(mutNoDiffAck)}
}

// checker holds the checkers' state: lock holders, and each process's
// diff of the page it is flushing.
type checker struct {
	rt     *Runtime
	holder []*Process
	// diff[id] is the words process id's current flush sent to the home
	// (offset, value), pending its notices; diffPg the page, -1 none.
	diff   [][][2]uint64
	diffPg []int
	// dbl[id][pg] is process id's doubled stores (1L) to page pg since
	// its last flush of pg, in order.
	dbl [][][][2]uint64
	// stored[pg][w] is the barrier episode the process that last stored
	// word w of page pg had left when it stored it (0: before the first
	// barrier or never; nil: no store to the page yet): the copy rule's
	// mask of the words that may have changed since a barrier.
	stored [][]uint32
}

// doubled records a 1L doubled store for the diff rule.
func (c *checker) doubled(pr *Process, pg int, off uint64, data []byte) {
	if c.dbl[pr.id] == nil {
		c.dbl[pr.id] = make([][][2]uint64, c.rt.cfg.Pages)
	}
	c.dbl[pr.id][pg] = append(c.dbl[pr.id][pg], [2]uint64{off, le64v(data)})
}

// flushDoubled begins pr's 1L flush of pg: its doubled stores, the last
// value of each word, are what the home must hold when the notices go.
func (c *checker) flushDoubled(pr *Process, pg int) {
	c.diffStart(pr, pg)
	if c.dbl[pr.id] == nil {
		return
	}
	l := c.dbl[pr.id][pg]
	last := make(map[uint64]int, len(l))
	for i, w := range l {
		last[w[0]] = i
	}
	for i, w := range l {
		if last[w[0]] == i {
			c.diff[pr.id] = append(c.diff[pr.id], w)
		}
	}
	c.dbl[pr.id][pg] = nil
}

func newChecker(rt *Runtime) *checker {
	c := &checker{rt: rt, holder: make([]*Process, rt.cfg.Locks+1), stored: make([][]uint32, rt.cfg.Pages)}
	for range rt.cfg.Procs() {
		c.diff = append(c.diff, nil)
		c.diffPg = append(c.diffPg, -1)
		c.dbl = append(c.dbl, nil)
	}
	return c
}

func (c *checker) report(now clock.Time, pr *Process, rule, format string, args ...any) {
	c.rt.env.Report(now, pr.cpu.Name(), rule, format, args...)
}

func (c *checker) locked(now clock.Time, l int, pr *Process) {
	if h := c.holder[l]; h != nil {
		c.report(now, pr, RuleLock, "process %d acquired lock %d held by process %d", pr.id, l, h.id)
	}
	c.holder[l] = pr
}

func (c *checker) unlocked(now clock.Time, l int, pr *Process) {
	if c.holder[l] != pr {
		c.report(now, pr, RuleLock, "process %d released lock %d it does not hold", pr.id, l)
	}
	c.holder[l] = nil
}

// dirWrite checks that the directory word at offset off, which pr is
// about to write, is its own node's (section 2.3: «Each word is written
// by a unique node»).
func (c *checker) dirWrite(pr *Process, pg int, off uint64) {
	n := c.rt.cfg.Nodes
	if owner := int(off/4) % n; owner != pr.node || int(off/4)/n != pg {
		c.report(c.rt.env.Now(), pr, RuleDir, "process %d of node %d writes node %d's directory word of page %d", pr.id, pr.node, owner, int(off/4)/n)
	}
}

func (c *checker) twinRule(now clock.Time, pr *Process, pg int) {
	ns := pr.ns
	want := c.rt.Home(pg) != pr.node && ns.writers(pg, -1) && ns.excl[pg] < 0 && !c.rt.cfg.doubling()
	if c.rt.cfg.shootdown() && want && !ns.twin[pg] {
		// 2LS drops the twin at a shootdown flush while the shot-down
		// processors keep their dirty entries: the twin is then needed
		// only while some local processor may write the page.
		want = false
		for q := range ns.perm {
			want = want || ns.perm[q][pg]&cpu.PermWrite != 0
		}
	}
	if ns.twin[pg] != want {
		c.report(now, pr, RuleTwin, "node %d page %d: twin %v, but local writers %v and home %d", pr.node, pg, ns.twin[pg], ns.writers(pg, -1), c.rt.Home(pg))
	}
}

// diffStart begins pr's diff of pg (which may send nothing: another
// local processor's flush-update may have carried every change already).
func (c *checker) diffStart(pr *Process, pg int) {
	c.diffPg[pr.id] = pg
	c.diff[pr.id] = c.diff[pr.id][:0]
}

func (c *checker) diffSent(pr *Process, pg int, off uint64, data []byte) {
	for i := 0; i+8 <= len(data); i += 8 {
		c.diff[pr.id] = append(c.diff[pr.id], [2]uint64{off + uint64(i), le64v(data[i : i+8])})
	}
}

// noticeSent checks, when pr sends the write notices of a flush of pg to
// a remote home, that the flush's diff has reached the home in the MC's
// order (the MC flush's purpose, section 2.2: «the diff be applied before
// any related write notices are processed ... Rather than using an
// explicit acknowledgement scheme ... MC flush»), and that no local
// modification of pr's is still unsent (a notice before its diff). A
// diff word reached the home when the home's memory holds it or the hub
// has ordered it for the home and the home's receive FIFO or DMA still
// holds it (Hooks.PeekOrdered): every later packet to the home, a fetch
// request or the notices' effects, is ordered after it and written to
// memory after it, so a word on its way is not a protocol error. A word
// the hub has not ordered (a release that skips the MC flush), or one the
// home processor has not applied (2LOffMC's explicit diff, whose words
// are a message until then), is.
func (c *checker) noticeSent(now clock.Time, pr *Process, pg, home int) {
	rt := c.rt
	peek := rt.hooks.Peek
	if home == pr.node || peek == nil {
		return
	}
	if c.diffPg[pr.id] != pg {
		c.report(now, pr, RuleDiff, "process %d sends write notices for page %d before its diff", pr.id, pg)
		return
	}
	base := rt.PageAddr(home, pg)
	for _, w := range c.diff[pr.id] {
		if got := peek(rt.PhysNode(home), base+w[0], 8); len(got) == 8 && le64v(got) == w[1] {
			continue
		}
		if po := rt.hooks.PeekOrdered; po != nil {
			if got := po(rt.PhysNode(home), base+w[0], 8); len(got) == 8 && le64v(got) == w[1] {
				continue
			}
		}
		c.report(now, pr, RuleDiff, "process %d sends write notices for page %d while its diff's word at +%#x has not reached home node %d", pr.id, pg, w[0], home)
		break
	}
	c.diffPg[pr.id] = -1
}

// store notes a store of words 8-byte words of pr's at shared address
// addr for the copy rule.
func (c *checker) store(pr *Process, addr uint64, words int) {
	for a := addr; a < addr+8*uint64(words); a += 8 {
		pg := int(a / PageBytes)
		if c.stored[pg] == nil {
			c.stored[pg] = make([]uint32, PageBytes/8)
		}
		c.stored[pg][a%PageBytes/8] = pr.barEpisode
	}
}

// barrierExit is the copy rule at pr's exit from a barrier (issue 18
// section 4: «at each barrier exit every readable copy of a page equals the
// master copy»): every page pr may read, off its node's copy, equals the
// master, the holder's copy (Runtime.Holder). Every process has arrived, so
// every modification made before the barrier has been flushed to its home
// (section 2.3: each arriving processor «performs page flushes for those
// (non-exclusive) pages for which it is the last arriving local writer»),
// each diff followed by its MC flush before the node's arrival was written,
// and pr's departure acquire has invalidated every page a write notice
// named (section 2.4.2); a processor's copy may lag the master only between
// an acquire and its invalidation, and no barrier passes there. The words
// some process has stored since it left this barrier are not compared: a
// process that left earlier may already have changed the master (a home
// writer's store, a later release's diff) or pr's node's copy (a local
// store, a fetch of the changed master), which it may; every other word of
// both copies is as the barrier left it. The master is read as the home's
// memory will be once the writes the hub has ordered for it land
// (Hooks.PeekOrdered, as RuleDiff): a diff the MC flush ordered may still
// be in the home's receive path.
func (c *checker) barrierExit(now clock.Time, pr *Process) {
	rt := c.rt
	if rt.hooks.Peek == nil {
		return
	}
	for pg := range rt.cfg.Pages {
		if pr.ns.perm[pr.local][pg]&cpu.PermRead == 0 {
			continue
		}
		if h := rt.Holder(pg); h != pr.node {
			c.copyRule(now, pr, pg, h, pr.barEpisode)
		}
	}
}

// copyRule reports when pr's node's copy of pg differs from holder's
// (memory, or the image of what the hub has ordered for it) at the exit
// of barrier episode, in a word no process has stored since it left that
// barrier (episode 0: at the end of the run, every word).
func (c *checker) copyRule(now clock.Time, pr *Process, pg, holder int, episode uint32) {
	rt := c.rt
	mine := rt.hooks.Peek(rt.PhysNode(pr.node), rt.PageAddr(pr.node, pg), PageBytes)
	master := rt.hooks.Peek(rt.PhysNode(holder), rt.PageAddr(holder, pg), PageBytes)
	if bytes.Equal(mine, master) {
		return
	}
	var ord []byte
	if po := rt.hooks.PeekOrdered; po != nil {
		ord = po(rt.PhysNode(holder), rt.PageAddr(holder, pg), PageBytes)
	}
	st := c.stored[pg]
	for off := 0; off+8 <= len(mine) && off+8 <= len(master); off += 8 {
		w := mine[off : off+8]
		if bytes.Equal(w, master[off:off+8]) || ord != nil && bytes.Equal(w, ord[off:off+8]) ||
			episode > 0 && st != nil && st[off/8] >= episode {
			continue
		}
		if episode > 0 {
			c.report(now, pr, RuleCopy, "process %d's readable copy of page %d (node %d) differs at barrier %d's exit from node %d's master at +%#x", pr.id, pg, pr.node, episode, holder, off)
			return
		}
		c.report(now, pr, RuleCopy, "node %d's readable copy of page %d differs at the end from node %d's master at +%#x", pr.node, pg, holder, off)
		return
	}
}

// Finish runs the end-of-run checks: every readable copy equals its
// master (RuleCopy), every twin is where section 2.5 says (RuleTwin).
func (rt *Runtime) Finish(now clock.Time) {
	for _, ns := range rt.nodes {
		var pr *Process
		for _, q := range rt.procs {
			if q.node == ns.id {
				pr = q
				break
			}
		}
		if pr == nil {
			continue
		}
		for pg := range rt.cfg.Pages {
			rt.chk.twinRule(now, pr, pg)
			home := rt.Holder(pg)
			if rt.hooks.Peek == nil || home == ns.id || ns.loosest(pg)&cpu.PermRead == 0 {
				continue
			}
			rt.chk.copyRule(now, pr, pg, home, 0)
		}
	}
}
