package svm

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
)

// Locks (assumed: the distributed queue of the LRC systems the paper
// cites, TreadMarks-style: section 4.2 names only the protocols): lock l's
// manager, node l mod Nodes, remembers the last requester and forwards each
// request to it; the last requester grants when it has released the lock,
// sending the write notices the acquirer has not seen with the grant. A
// node's state of a lock it has asked for or held:
type lockState struct {
	// waiting: asked for, not yet granted; held: in the critical section;
	// token: released here and not passed on.
	waiting, held, token bool
	// asked counts this node's requests for the lock.
	asked uint32
	// next is the requester to grant at release (-1 none), its request
	// ID and vector time.
	next    int
	nextTag uint32
	nextVC  []uint32
}

// manager is a node's state as lock, flag and barrier manager.
type manager struct {
	// last is each managed lock's last requester (-1 none), by lock;
	// asked each node's requests for it the manager has handled.
	last  []int
	asked [][]uint32
	// flag values and setters (-1: never set), by flag; waiters.
	val     []uint64
	setter  []int
	waiters [][]flagWaiter
	// The barrier (node 0): arrivals so far, each arrival's node, tag
	// and vector time.
	arrived int
	bar     []barArrival
}

type flagWaiter struct {
	node int
	want uint64
	tag  uint32
	vc   []uint32
}

type barArrival struct {
	tag uint32
	vc  []uint32
}

func (m *manager) init(c Config, id int) {
	m.last = make([]int, c.Locks)
	m.asked = make([][]uint32, c.Locks)
	for i := range m.last {
		m.last[i] = -1
	}
	m.val = make([]uint64, c.Flags)
	m.setter = make([]int, c.Flags)
	for i := range m.setter {
		m.setter[i] = -1
	}
	m.waiters = make([][]flagWaiter, c.Flags)
	m.bar = make([]barArrival, c.Nodes)
}

// instrSync is a synchronisation operation's own bookkeeping (a lock's
// state, a manager's table). assumed: 40.
const instrSync = 40

func (pr *Process) newTag() uint32 {
	pr.reqID++
	return pr.reqID
}

// localGrant holds a grant this node gave itself (its manager role or
// its token), by tag.
type localGrant struct {
	tag     uint32
	payload []uint64
}

// awaitGrant waits for the grant of request tag: given locally, or in the
// reply slot.
func (pr *Process) awaitGrant(p *cpu.Proc, tag uint32, label string) []uint64 {
	for {
		if g := pr.local; g != nil && g.tag == tag {
			pr.local = nil
			return g.payload
		}
		l := pr.rt.lay
		sl := l.Reply + uint64(l.page) - 8
		w := pr.poll(p, label, sl, func(w uint64) bool {
			_, _, _, seq := unseal(w)
			return (seq == tag && w != 0) || (pr.local != nil && pr.local.tag == tag)
		})
		if pr.local != nil && pr.local.tag == tag {
			continue
		}
		t, _, _, _ := unseal(w)
		if t != rGrant {
			pr.rt.fail(fmt.Errorf("svm: node %d: request %d answered by a type %d reply", pr.id, tag, t))
		}
		_, _, payload := pr.awaitReply(p, tag, label)
		return payload
	}
}

// grantTo grants node dst's request tag: the write notices of the
// intervals between dst's vector time and this node's.
func (pr *Process) grantTo(p *cpu.Proc, dst int, tag uint32, vc []uint32) {
	payload := pr.notices(vc, pr.vc)
	step(p, "svm.grant", instrSync+instrNoticeWord*len(payload))
	pr.stats.Grants++
	pr.event(p, EvGrant, -1, dst, int(tag))
	if dst == pr.id {
		pr.local = &localGrant{tag: tag, payload: payload}
		return
	}
	pr.replyTo(p, dst, tag, rGrant, payload)
}

// emptyGrant grants with no notices (a lock never held, a flag never
// set, or a lock whose last holder is the requester).
func (pr *Process) emptyGrant(p *cpu.Proc, dst int, tag uint32, vc []uint32) {
	payload := append(vcWords(vc), 0)
	pr.stats.Grants++
	if dst == pr.id {
		pr.local = &localGrant{tag: tag, payload: payload}
		return
	}
	pr.replyTo(p, dst, tag, rGrant, payload)
}

// Lock acquires lock l.
func (pr *Process) Lock(l int) {
	p := pr.p
	if l < 0 || l >= len(pr.locks) {
		pr.rt.fail(fmt.Errorf("svm: process %d: lock %d of %d", pr.id, l, len(pr.locks)))
		return
	}
	pr.timer.to(p.Now(), kindLock, &pr.times)
	ls := &pr.locks[l]
	tag := pr.newTag()
	ls.waiting = true
	ls.asked++
	step(p, "svm.lock", instrSync)
	if m := l % pr.rt.cfg.Nodes; m == pr.id {
		pr.lockReq(p, pr.id, l, tag, append([]uint32(nil), pr.vc...))
	} else {
		pr.request(p, m, mLockReq, append([]uint64{uint64(l), uint64(tag)}, vcWords(pr.vc)...))
	}
	payload := pr.awaitGrant(p, tag, "svm.lockwait")
	pr.acquire(p, payload)
	ls.waiting, ls.held, ls.token = false, true, true
	pr.rt.chk.lockAcquired(p.Now(), pr, l)
	pr.event(p, EvLock, -1, -1, l)
	pr.timer.to(p.Now(), kindCompute, &pr.times)
}

// Unlock releases lock l: the release, then the grant to a queued
// requester.
func (pr *Process) Unlock(l int) {
	p := pr.p
	if l < 0 || l >= len(pr.locks) || !pr.locks[l].held {
		pr.rt.fail(fmt.Errorf("svm: process %d: unlock of lock %d not held", pr.id, l))
		return
	}
	pr.timer.to(p.Now(), kindLock, &pr.times)
	pr.event(p, EvUnlock, -1, -1, l)
	ls := &pr.locks[l]
	if pr.rt.mut.grantHeld != 0 && ls.next >= 0 {
		y, tag, vc := ls.next, ls.nextTag, ls.nextVC
		ls.next, ls.token = -1, false
		pr.grantTo(p, y, tag, vc)
	}
	later := pr.release(p)
	ls.held = false
	pr.rt.chk.lockReleased(pr, l)
	step(p, "svm.unlock", instrSync)
	if ls.next >= 0 {
		y, tag, vc := ls.next, ls.nextTag, ls.nextVC
		ls.next, ls.token = -1, false
		pr.grantTo(p, y, tag, vc)
	}
	if later != nil {
		later()
	}
	pr.timer.to(p.Now(), kindCompute, &pr.times)
}

// lockReq is the manager's side of a lock request.
func (pr *Process) lockReq(p *cpu.Proc, y, l int, tag uint32, vc []uint32) {
	step(p, "svm.mgr", instrSync)
	m := &pr.mgr
	if m.asked[l] == nil {
		m.asked[l] = make([]uint32, pr.rt.cfg.Nodes)
	}
	prev := m.last[l]
	m.last[l] = y
	m.asked[l][y]++
	switch {
	case prev < 0 || prev == y:
		pr.emptyGrant(p, y, tag, vc)
	case prev == pr.id:
		pr.lockFwd(p, l, y, tag, vc, m.asked[l][prev])
	default:
		pr.request(p, prev, mLockFwd, append([]uint64{uint64(l), uint64(y), uint64(tag), uint64(m.asked[l][prev])}, vcWords(vc)...))
	}
}

// lockFwd is the last requester's side of a forwarded request: grant now
// if the lock is released here, else at the release. asked is how many of
// this node's requests for the lock the manager had handled when it
// forwarded: fewer than the node has made means the forwarded request came
// before the node's latest one (which the manager sent further down the
// queue), so a node that still has the token grants now even though it is
// waiting (queueing it would wait on a node that waits on this one); as
// many means it came after, and waits for this node's turn.
func (pr *Process) lockFwd(p *cpu.Proc, l, y int, tag uint32, vc []uint32, asked uint32) {
	ls := &pr.locks[l]
	if ls.held || (ls.waiting && asked == ls.asked) {
		if ls.next >= 0 {
			pr.rt.fail(fmt.Errorf("svm: node %d: lock %d forwarded twice", pr.id, l))
		}
		ls.next, ls.nextTag, ls.nextVC = y, tag, vc
		return
	}
	if !ls.token {
		pr.rt.fail(fmt.Errorf("svm: node %d: lock %d forwarded here without its token", pr.id, l))
	}
	ls.token = false
	pr.grantTo(p, y, tag, vc)
}

// SetFlag sets flag f to v: a release, then the flag's manager told.
func (pr *Process) SetFlag(f int, v uint64) {
	p := pr.p
	if f < 0 || f >= len(pr.mgr.val) {
		pr.rt.fail(fmt.Errorf("svm: process %d: flag %d of %d", pr.id, f, len(pr.mgr.val)))
		return
	}
	pr.timer.to(p.Now(), kindLock, &pr.times)
	later := pr.release(p)
	step(p, "svm.setflag", instrSync)
	if m := f % pr.rt.cfg.Nodes; m == pr.id {
		pr.flagSet(p, pr.id, f, v)
	} else {
		pr.request(p, m, mFlagSet, []uint64{uint64(f), v})
	}
	if later != nil {
		later()
	}
	pr.timer.to(p.Now(), kindCompute, &pr.times)
}

// WaitFlag waits until flag f is v: the grant from its setter is the
// acquire.
func (pr *Process) WaitFlag(f int, v uint64) {
	p := pr.p
	if f < 0 || f >= len(pr.mgr.val) {
		pr.rt.fail(fmt.Errorf("svm: process %d: flag %d of %d", pr.id, f, len(pr.mgr.val)))
		return
	}
	pr.timer.to(p.Now(), kindLock, &pr.times)
	tag := pr.newTag()
	step(p, "svm.waitflag", instrSync)
	if m := f % pr.rt.cfg.Nodes; m == pr.id {
		pr.flagWait(p, pr.id, f, v, tag, append([]uint32(nil), pr.vc...))
	} else {
		pr.request(p, m, mFlagWait, append([]uint64{uint64(f), v, uint64(tag)}, vcWords(pr.vc)...))
	}
	pr.acquire(p, pr.awaitGrant(p, tag, "svm.flagwait"))
	pr.timer.to(p.Now(), kindCompute, &pr.times)
}

// flagSet is the manager's side of a set: the waiters for the value are
// forwarded to the setter, which grants.
func (pr *Process) flagSet(p *cpu.Proc, s, f int, v uint64) {
	m := &pr.mgr
	m.val[f], m.setter[f] = v, s
	ws := m.waiters[f][:0]
	for _, w := range m.waiters[f] {
		if w.want != v {
			ws = append(ws, w)
			continue
		}
		pr.flagForward(p, s, f, w)
	}
	m.waiters[f] = ws
}

func (pr *Process) flagForward(p *cpu.Proc, s, f int, w flagWaiter) {
	if s == pr.id {
		pr.grantTo(p, w.node, w.tag, w.vc)
		return
	}
	pr.request(p, s, mFlagFwd, append([]uint64{uint64(f), uint64(w.node), uint64(w.tag)}, vcWords(w.vc)...))
}

// flagWait is the manager's side of a wait.
func (pr *Process) flagWait(p *cpu.Proc, y, f int, v uint64, tag uint32, vc []uint32) {
	m := &pr.mgr
	w := flagWaiter{node: y, want: v, tag: tag, vc: vc}
	switch {
	case m.val[f] != v:
		m.waiters[f] = append(m.waiters[f], w)
	case m.setter[f] < 0:
		pr.emptyGrant(p, y, tag, vc)
	default:
		pr.flagForward(p, m.setter[f], f, w)
	}
}

// Barrier is a release, an arrival at node 0 with this node's notices
// since its last barrier, and the release's notices as the acquire.
func (pr *Process) Barrier() {
	p := pr.p
	pr.timer.to(p.Now(), kindBarrier, &pr.times)
	later := pr.release(p)
	tag := pr.newTag()
	step(p, "svm.barrier", instrSync)
	own := pr.union(pr.id, pr.barVC, pr.vc[pr.id])
	from := pr.barVC
	pr.barVC = pr.vc[pr.id]
	if pr.id == 0 {
		pr.arrive(p, 0, tag, from, append([]uint32(nil), pr.vc...), own)
	} else {
		pr.request(p, 0, mArrive, append(append([]uint64{uint64(tag), uint64(from)}, vcWords(pr.vc)...), own...))
	}
	if later != nil {
		later()
	}
	pr.acquire(p, pr.awaitGrant(p, tag, "svm.barwait"))
	pr.stats.Barriers++
	pr.timer.to(p.Now(), kindCompute, &pr.times)
}

// arrive is the barrier manager's side of an arrival; the last one
// releases every node with the notices it has not seen.
func (pr *Process) arrive(p *cpu.Proc, src int, tag, from uint32, vc []uint32, own []uint64) {
	m := &pr.mgr
	if src != pr.id {
		pr.addEntry(src, from, vc[src], own)
	}
	m.bar[src] = barArrival{tag: tag, vc: vc}
	m.arrived++
	step(p, "svm.mgr", instrSync)
	if m.arrived < pr.rt.cfg.Nodes {
		return
	}
	m.arrived = 0
	top := make([]uint32, pr.rt.cfg.Nodes)
	for _, a := range m.bar {
		for j, v := range a.vc {
			top[j] = max(top[j], v)
		}
	}
	pr.rt.chk.barrier(p.Now(), m.bar, top)
	for k, a := range m.bar {
		payload := pr.notices(a.vc, top)
		step(p, "svm.grant", instrNoticeWord*len(payload))
		if k == pr.id {
			pr.local = &localGrant{tag: a.tag, payload: payload}
			continue
		}
		pr.replyTo(p, k, a.tag, rGrant, payload)
	}
}

// handle dispatches one request, in the notification handler.
func (pr *Process) handle(p *cpu.Proc, src, t int, pl []uint64) {
	n := pr.rt.cfg.Nodes
	bad := func(need int) bool {
		if len(pl) < need {
			pr.rt.fail(fmt.Errorf("svm: node %d: a type %d request of %d words from node %d", pr.id, t, len(pl), src))
			return true
		}
		return false
	}
	switch t {
	case mPageReq:
		if !bad(2 + n) {
			pr.serve(p, src, int(pl[0]), uint32(pl[1]), wordsVC(pl[2:2+n]))
		}
	case mDiff:
		if !bad(1) {
			pr.applyDiff(p, src, pl)
		}
	case mLockReq:
		if !bad(2 + n) {
			pr.lockReq(p, src, int(pl[0]), uint32(pl[1]), wordsVC(pl[2:2+n]))
		}
	case mLockFwd:
		if !bad(4 + n) {
			pr.lockFwd(p, int(pl[0]), int(pl[1]), uint32(pl[2]), wordsVC(pl[4:4+n]), uint32(pl[3]))
		}
	case mFlagSet:
		if !bad(2) {
			pr.flagSet(p, src, int(pl[0]), pl[1])
		}
	case mFlagWait:
		if !bad(3 + n) {
			pr.flagWait(p, src, int(pl[0]), pl[1], uint32(pl[2]), wordsVC(pl[3:3+n]))
		}
	case mFlagFwd:
		if !bad(3 + n) {
			pr.grantTo(p, int(pl[1]), uint32(pl[2]), wordsVC(pl[3:3+n]))
		}
	case mArrive:
		if !bad(2 + n + pr.rt.cfg.bitmapWords()) {
			pr.arrive(p, src, uint32(pl[0]), uint32(pl[1]), wordsVC(pl[2:2+n]), pl[2+n:])
		}
	default:
		pr.rt.fail(fmt.Errorf("svm: node %d: request type %d from node %d", pr.id, t, src))
	}
}
