package svm

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Rules the checkers report under (env.Report; issue 19 section 4).
const (
	// RuleCopy: when a barrier completes, every valid copy the barrier's
	// release will not invalidate, and (HLRC) every home copy, equals the
	// shared memory as the program wrote it; at the end of a run every
	// home copy and every valid copy does.
	RuleCopy = "svm.copy"
	// RuleDiff: a home serves a page (or reads its own after an acquire)
	// only once the updates of every interval the requester's vector time
	// covers are in its copy: HLRC's diffs applied, the automatic-update
	// protocols' timestamps seen.
	RuleDiff = "svm.diff"
	// RuleLock: a lock has one holder at a time.
	RuleLock = "svm.lock"
	// RuleRing: a request never overwrites one its receiver has not
	// consumed.
	RuleRing = "svm.ring"
)

// Test-only faults (env.DeclareMutation), each caught by a checker.
var (
	mutDropDiff = env.DeclareMutation("svm.dropdiff",
		"HLRC: a release sends no diffs (caught by svm.copy: the home copy misses the updates)")
	mutNoticesFirst = env.DeclareMutation("svm.noticesfirst",
		"HLRC: a release sends its grant or barrier arrival before its diffs (caught by svm.diff)")
	mutNoFlush = env.DeclareMutation("svm.noflush",
		"AURC and HLRC-AU: no timestamp flush at a release, and homes do not wait for timestamps "+
			"(caught by svm.diff and svm.copy)")
	mutSkipInvalidate = env.DeclareMutation("svm.skipinvalidate",
		"an acquire invalidates nothing: stale copies stay readable (caught by svm.copy)")
	mutGrantHeld = env.DeclareMutation("svm.grantheld",
		"an unlock grants the queued requester before its own release, while it still holds the lock (caught by svm.lock)")
	mutNoWindow = env.DeclareMutation("svm.nowindow",
		"acknowledged requests (diffs, flag sets) do not wait for room in the receiver's ring (caught by svm.ring)")
)

type mutations struct{ dropDiff, noticesFirst, noFlush, skipInvalidate, grantHeld, noWindow int }

func readMutations(e *env.Env) mutations {
	return mutations{dropDiff: e.Mutation(mutDropDiff), noticesFirst: e.Mutation(mutNoticesFirst),
		noFlush: e.Mutation(mutNoFlush), skipInvalidate: e.Mutation(mutSkipInvalidate),
		grantHeld: e.Mutation(mutGrantHeld), noWindow: e.Mutation(mutNoWindow)}
}

// pend is an interval's update of a page not yet in the home's copy.
type pend struct {
	writer int
	t      uint32
}

// checker holds the checkers' state.
type checker struct {
	rt *Runtime
	// shadow is the shared memory as the program wrote it, by word.
	shadow []uint64
	// pending[pg] are the intervals that wrote page pg whose updates the
	// home has not been seen to hold.
	pending [][]pend
	// seenTS[h][j] is the largest timestamp of node j home h has read.
	seenTS [][]uint32
	holder []int
	early  []early
}

func newChecker(rt *Runtime) *checker {
	c := &checker{rt: rt, shadow: make([]uint64, rt.cfg.Pages*rt.cfg.PageBytes/8),
		pending: make([][]pend, rt.cfg.Pages), holder: make([]int, rt.cfg.Locks)}
	for i := range c.holder {
		c.holder[i] = -1
	}
	c.seenTS = make([][]uint32, rt.cfg.Nodes)
	for i := range c.seenTS {
		c.seenTS[i] = make([]uint32, rt.cfg.Nodes)
	}
	return c
}

func (c *checker) report(now clock.Time, node int, rule, format string, args ...any) {
	c.rt.env.Report(now, fmt.Sprintf("svm.N%d", node), rule, format, args...)
}

// store records a program store.
func (c *checker) store(pr *Process, addr, v uint64) { c.shadow[addr/8] = v }

// ring checks a request's slot is free at its receiver.
func (c *checker) ring(pr *Process, dst int, seq uint32) {
	r := c.rt.procs[dst]
	if seq > r.recvd[pr.id]+uint32(c.rt.lay.Ring) {
		c.report(pr.p.Now(), pr.id, RuleRing, "request %d to node %d overwrites slot of request %d, not yet consumed (consumed %d)",
			seq, dst, seq-uint32(c.rt.lay.Ring), r.recvd[pr.id])
	}
}

// interval records the pages node pr's interval t wrote: updates the
// homes owe (the home's own pages excepted).
func (c *checker) interval(pr *Process, t uint32, pages []int) {
	for _, pg := range pages {
		if c.rt.lay.Home(pg) != pr.id && !c.done(pg, pr.id, t) {
			c.pending[pg] = append(c.pending[pg], pend{pr.id, t})
		}
	}
}

// applied records that home holds writer's interval t's update of pg
// (HLRC: a diff applied or empty; HLRC-AU: its words stored to the
// mirror, proved by the timestamp later: au).
func (c *checker) applied(home, writer int, t uint32, pg int, au bool) {
	if au {
		return
	}
	c.appliedSet(pg, writer, t)
}

// appliedSet removes (writer, t) from pg's pending list, or remembers it
// as applied before its interval was recorded (a diff applied while its
// release is still running).
func (c *checker) appliedSet(pg, writer int, t uint32) {
	ps := c.pending[pg]
	for i, x := range ps {
		if x.writer == writer && x.t == t {
			c.pending[pg] = append(ps[:i], ps[i+1:]...)
			return
		}
	}
	c.early = append(c.early, early{pg, writer, t})
}

// early is an update applied before its interval was recorded.
type early struct {
	pg, writer int
	t          uint32
}

func (c *checker) done(pg, writer int, t uint32) bool {
	for i, e := range c.early {
		if e.pg == pg && e.writer == writer && e.t == t {
			c.early = append(c.early[:i], c.early[i+1:]...)
			return true
		}
	}
	return false
}

// tsSeen records that home pr read node j's timestamp w: every interval
// of j up to w is in its copies.
func (c *checker) tsSeen(pr *Process, j int, w uint32) {
	if w <= c.seenTS[pr.id][j] {
		return
	}
	c.seenTS[pr.id][j] = w
	for pg := range c.pending {
		if c.rt.lay.Home(pg) != pr.id {
			continue
		}
		ps := c.pending[pg][:0]
		for _, x := range c.pending[pg] {
			if !(x.writer == j && x.t <= w) {
				ps = append(ps, x)
			}
		}
		c.pending[pg] = ps
	}
}

// serve checks a page served to a requester at vector time vc.
func (c *checker) serve(pr *Process, src, pg int, vc []uint32) {
	for _, x := range c.pending[pg] {
		if x.t <= vc[x.writer] {
			c.report(pr.p.Now(), pr.id, RuleDiff, "serves page %d to node %d, whose notices cover node %d's interval %d, before that interval's update reached the home",
				pg, src, x.writer, x.t)
			return
		}
	}
}

// homeRead checks that a node's own home pages named by an acquire's
// notices hold the updates.
func (c *checker) homeRead(pr *Process, inval []uint64) {
	for pg := range c.pending {
		if c.rt.lay.Home(pg) != pr.id || !hasBit(inval, pg) {
			continue
		}
		for _, x := range c.pending[pg] {
			if x.t <= pr.vc[x.writer] {
				c.report(pr.p.Now(), pr.id, RuleDiff, "reads its home page %d after an acquire naming node %d's interval %d, before that update arrived",
					pg, x.writer, x.t)
				return
			}
		}
	}
}

// lockAcquired and lockReleased check exclusion.
func (c *checker) lockAcquired(now clock.Time, pr *Process, l int) {
	if h := c.holder[l]; h >= 0 {
		c.report(now, pr.id, RuleLock, "acquires lock %d held by node %d", l, h)
	}
	c.holder[l] = pr.id
}

func (c *checker) lockReleased(pr *Process, l int) {
	if c.holder[l] == pr.id {
		c.holder[l] = -1
	}
}

// barrier is the copy rule when a barrier completes (every node arrived,
// none released): node k's valid copies outside the pages the release
// will invalidate equal the program's memory, and under HLRC every home
// copy does (its diffs were acknowledged before the arrivals).
func (c *checker) barrier(now clock.Time, arr []barArrival, top []uint32) {
	rt := c.rt
	if rt.hooks.Peek == nil {
		return
	}
	mgr := rt.procs[0]
	for k, pr := range rt.procs {
		inval := make([]uint64, rt.cfg.bitmapWords())
		for j := range rt.cfg.Nodes {
			if j != k && top[j] > arr[k].vc[j] {
				for w, v := range mgr.union(j, arr[k].vc[j], top[j]) {
					inval[w] |= v
				}
			}
		}
		for pg := range rt.cfg.Pages {
			home := rt.lay.Home(pg) == k
			switch {
			case home && rt.cfg.au():
				continue
			case !home && (pr.perm[pg] == cpu.PermNone || hasBit(inval, pg)):
				continue
			}
			if !c.equal(now, k, pg, "at a barrier") {
				return
			}
		}
	}
}

// equal compares node k's copy of pg with the shadow, reporting the first
// difference.
func (c *checker) equal(now clock.Time, k, pg int, when string) bool {
	rt := c.rt
	pb := rt.cfg.PageBytes
	got := rt.hooks.Peek(k, rt.lay.Page(pg), pb)
	if got == nil {
		return true
	}
	for w := range pb / 8 {
		v := binary.LittleEndian.Uint64(got[8*w:])
		if want := c.shadow[pg*pb/8+w]; v != want {
			c.report(now, k, RuleCopy, "%s node %d's copy of page %d (home %d) has word %d = %#x, the program wrote %#x",
				when, k, pg, rt.lay.Home(pg), w, v, want)
			return false
		}
	}
	return true
}

// finish is the end-of-run copy rule: every home copy and every valid
// copy equals the program's memory.
func (c *checker) finish(now clock.Time) {
	rt := c.rt
	if rt.hooks.Peek == nil {
		return
	}
	for k, pr := range rt.procs {
		for pg := range rt.cfg.Pages {
			if rt.lay.Home(pg) != k && pr.perm[pg] == cpu.PermNone {
				continue
			}
			if !c.equal(now, k, pg, "at the end") {
				return
			}
		}
	}
}

// Memory returns the final shared memory from the homes' copies (nil
// without Peek).
func (rt *Runtime) Memory() []byte {
	if rt.hooks.Peek == nil {
		return nil
	}
	var out []byte
	for pg := range rt.cfg.Pages {
		out = append(out, rt.hooks.Peek(rt.lay.Home(pg), rt.lay.Page(pg), rt.cfg.PageBytes)...)
	}
	return out
}
