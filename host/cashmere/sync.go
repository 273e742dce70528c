package cashmere

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
)

// spin waits until cond holds, polling for requests between tries
// (section 2.3: processors «must check the polling flag frequently»; a
// process waiting in the protocol serves the others).
func (pr *Process) spin(p *cpu.Proc, label string, cond func() bool) {
	for !cond() {
		pr.poll(p)
		p.As(label).Compute(spinCycles)
	}
}

// lockLocal takes a node-local LL/SC lock (section 2.3 «very efficient
// local locks with ll/sc»): read until free, then load-locked and
// store-conditional; polls while it waits.
func (pr *Process) lockLocal(p *cpu.Proc, addr uint64) {
	for {
		pr.spin(p, "cm.locallock", func() bool { return p.As("cm.locallock").Load32(addr) == 0 })
		if p.LoadLocked32(addr) == 0 && p.StoreConditional32(addr, 1) {
			p.Fence()
			return
		}
	}
}

// tryLocal takes a node-local lock if it is free, without waiting.
func (pr *Process) tryLocal(p *cpu.Proc, addr uint64) bool {
	if p.Load32(addr) != 0 {
		return false
	}
	if p.LoadLocked32(addr) == 0 && p.StoreConditional32(addr, 1) {
		p.Fence()
		return true
	}
	return false
}

// unlockLocal frees a node-local lock once the critical section's stores
// have completed.
func (pr *Process) unlockLocal(p *cpu.Proc, addr uint64) {
	p.Fence()
	p.Store32(addr, 0)
	if pr.rt.cfg.Interrupts {
		pr.redeliver(p, addr)
	}
}

// tick increments the node's logical clock with LL/SC (section 2.3 «The
// ll/sc instruction is also used to atomically increment the logical
// clocks») and returns its new value.
func (pr *Process) tick(p *cpu.Proc) uint64 {
	return uint64(p.FetchAdd(pr.meta(metaClock), 1)) + 1
}

// mcFlush is section 2.2's MC flush: a write to the process's word of the
// loop-back region, then loads of its own receive copy until the value
// comes back, when every packet this node sent before it has reached its
// destination.
func (pr *Process) mcFlush(p *cpu.Proc) {
	lay := pr.rt.lay
	off := pr.rt.flushWord(pr.id)
	pr.flushSeq++
	v := pr.flushSeq
	pr.txStore(p, lay.SyncTx[pr.node]+off, le32(v), "cm.flush")
	p.Fence()
	pr.event(p, EvFlush, -1, -1, int(v))
	rx := lay.SyncRx[pr.node] + off
	for p.As("cm.flushpoll").Load32(rx) != v {
		pr.poll(p)
	}
	pr.event(p, EvFlushed, -1, -1, int(v))
}

// lockGlobal takes global lock l (l = 0: the protocol's lock for home
// relocation; l >= 1: application lock l-1) as section 2.3 describes:
// «a process first acquires the per-node test-and-set flag using ll/sc.
// Then the process sets the array entry for its node, waits for the write
// to appear via loop-back, and reads the whole array. If its entry is the
// only one set, then the process has acquired the lock. Otherwise it
// clears its entry, backs off, and tries again.»
func (pr *Process) lockGlobal(p *cpu.Proc, l int) {
	rt := pr.rt
	pr.lockLocal(p, pr.meta(metaLockFlags+l))
	pr.lockEvent(p, EvLockNode, l, -1)
	tx := rt.lay.SyncTx[pr.node]
	rx := rt.lay.SyncRx[pr.node]
	own := rt.lockEntry(l, pr.node)
	set := func(v uint32) {
		pr.txStore(p, tx+own, le32(v), "cm.lockset")
		p.Fence()
		pr.spin(p, "cm.lockloop", func() bool { return p.As("cm.lockloop").Load32(rx+own) == v })
		pr.lockEvent(p, EvLockEntry, l, int(v))
	}
	for lost := 0; ; lost++ {
		set(1)
		alone := true
		for n := range rt.cfg.Nodes {
			if n != pr.node && p.As("cm.lockread").Load32(rx+rt.lockEntry(l, n)) != 0 && rt.mut.lockAlone == 0 {
				alone = false
			}
		}
		if alone {
			p.Fence()
			pr.lockEvent(p, EvLockHeld, l, -1)
			rt.chk.locked(p.Now(), l, pr)
			return
		}
		pr.lockEvent(p, EvLockLost, l, -1)
		set(0)
		p.As("cm.lockbackoff").Compute(lockBackoff * (pr.node + 1) * (lost + 1))
	}
}

// unlockGlobal frees global lock l: its entry cleared and the clear seen
// to come back (the release is globally performed, so the next holder
// sees every write before it), then the node's flag.
func (pr *Process) unlockGlobal(p *cpu.Proc, l int) {
	rt := pr.rt
	rt.chk.unlocked(p.Now(), l, pr)
	p.Fence()
	own := rt.lockEntry(l, pr.node)
	pr.txStore(p, rt.lay.SyncTx[pr.node]+own, le32(0), "cm.lockclear")
	p.Fence()
	rx := rt.lay.SyncRx[pr.node] + own
	pr.spin(p, "cm.lockloop", func() bool { return p.As("cm.lockloop").Load32(rx) == 0 })
	pr.lockEvent(p, EvLockEntry, l, 0)
	pr.unlockLocal(p, pr.meta(metaLockFlags+l))
	pr.lockEvent(p, EvLockFree, l, -1)
}

// Lock acquires application lock l: the global lock, then the acquire's
// consistency actions (section 2.4.2).
func (pr *Process) Lock(l int) {
	if l < 0 || l >= pr.rt.cfg.Locks {
		pr.rt.fail(fmt.Errorf("cashmere: process %d: lock %d is not in 0..%d", pr.id, l, pr.rt.cfg.Locks-1))
		return
	}
	pr.lockGlobal(pr.p, l+1)
	pr.stats.LockAcquires++
	pr.acquire(pr.p)
}

// Unlock releases application lock l: the release's consistency actions
// (section 2.4.3), then the global lock.
func (pr *Process) Unlock(l int) {
	if l < 0 || l >= pr.rt.cfg.Locks {
		pr.rt.fail(fmt.Errorf("cashmere: process %d: lock %d is not in 0..%d", pr.id, l, pr.rt.cfg.Locks-1))
		return
	}
	pr.release(pr.p)
	pr.unlockGlobal(pr.p, l+1)
}

// SetFlag sets flag f to v: a release, then the broadcast word written by
// doubling (section 2.3 «A modification is simply written to both the
// receive and transmit regions»).
func (pr *Process) SetFlag(f int, v uint64) {
	if f < 0 || f >= pr.rt.cfg.Flags {
		pr.rt.fail(fmt.Errorf("cashmere: process %d: flag %d is not in 0..%d", pr.id, f, pr.rt.cfg.Flags-1))
		return
	}
	p := pr.p
	pr.release(p)
	lay := pr.rt.lay
	pr.double(p, lay.BarRx[pr.node]+flagOff(f), lay.BarTx[pr.node]+flagOff(f), le64(v), "cm.flag")
	p.Fence()
	pr.event(p, EvFlagSet, -1, -1, f)
}

// WaitFlag waits until flag f is v (loads of the node's copy, polling),
// then acquires.
func (pr *Process) WaitFlag(f int, v uint64) {
	if f < 0 || f >= pr.rt.cfg.Flags {
		pr.rt.fail(fmt.Errorf("cashmere: process %d: flag %d is not in 0..%d", pr.id, f, pr.rt.cfg.Flags-1))
		return
	}
	p := pr.p
	rx := pr.rt.lay.BarRx[pr.node] + flagOff(f)
	pr.spin(p, "cm.flagwait", func() bool {
		b := p.As("cm.flagwait").Load(rx, 8)
		return len(b) == 8 && le64v(b) == v
	})
	pr.event(p, EvFlagSeen, -1, -1, f)
	pr.stats.FlagAcquires++
	pr.acquire(p)
}

// Barrier is section 2.3's two-level barrier: the node's processors
// synchronise through shared memory; each, as it arrives, flushes the
// dirty pages it is the last arriving local writer of; the last to finish
// writes the node's arrival to the broadcast array and waits for every
// node's; then every processor departs with an acquire (section 2.4.2
// «or the departure phase of a barrier»).
func (pr *Process) Barrier() {
	p := pr.p
	rt, ns := pr.rt, pr.ns
	c := uint32(rt.cfg.CPUs)
	pr.barEpisode++
	e := pr.barEpisode
	pr.stats.Barriers++
	pr.event(p, EvBarrierArrive, -1, -1, int(e))
	step(p, "cm.barrier", instrBarrier)
	start := pr.tick(p)
	ns.lastRelease = max(ns.lastRelease, start)
	p.FetchAdd(pr.meta(metaBarArrive), 1)
	ns.arrived[pr.local] = true
	// The pages another local writer still to arrive will flush are only
	// downgraded here; the rest are flushed.
	pr.flushDirty(p, func(pg int) bool {
		for q := range rt.cfg.CPUs {
			if q != pr.local && !ns.arrived[q] && ns.dirtyBit[q][pg] {
				return false
			}
		}
		return true
	})
	p.Fence()
	if p.FetchAdd(pr.meta(metaBarDone), 1) == e*c-1 {
		for q := range ns.arrived {
			ns.arrived[q] = false
		}
		lay := rt.lay
		off := 4 * uint64(pr.node)
		pr.double(p, lay.BarRx[pr.node]+off, lay.BarTx[pr.node]+off, le32(e), "cm.bararrive")
		p.Fence()
		pr.event(p, EvBarrierNode, -1, -1, int(e))
		for n := range rt.cfg.Nodes {
			a := lay.BarRx[pr.node] + 4*uint64(n)
			pr.spin(p, "cm.barwait", func() bool { return int32(p.As("cm.barwait").Load32(a)-e) >= 0 })
		}
		p.Store32(pr.meta(metaBarRelease), e)
		p.Fence()
	} else {
		a := pr.meta(metaBarRelease)
		pr.spin(p, "cm.barwait", func() bool { return int32(p.As("cm.barwait").Load32(a)-e) >= 0 })
	}
	pr.acquire(p)
	pr.event(p, EvBarrierExit, -1, -1, int(e))
	rt.chk.barrierExit(p.Now(), pr)
}

func le64v(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
