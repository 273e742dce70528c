package mctb

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
)

// The host programs of the Memory Channel measurements (issue 13 section
// 4, design sections 3.1 to 3.4), written as sequential programs
// (docs/host-programs.md). They know addresses only, not the cluster: a
// region's transmit address on the writing node (its PCI window, MC-P1
// «The virtual addresses for a transmit region map to addresses in I/O
// space») and its receive address on a reading node (host memory, «Receive
// regions are backed by physical RAM»), so the same programs run on any
// mapping of section 2.3's Figure 1.

// BurstBytes is what one write-combined store of a streaming program
// carries: the 21064A write buffer merges stores into one 32-byte block
// (platform.AlphaServer2100().CPU.WriteCombineBytes), which the adapter
// sends as one packet (mcadapter.Config.MaxPacketBytes).
const BurstBytes = 32

// WriteRounds is what a one-way write measurement saw: for round r
// (0-based), Sent[r] is when the writer's store retired and Seen[r][i]
// when reader i's load first returned the round's value. A round not yet
// written, or not seen by a reader, has Unseen there (the first store can
// retire at time 0).
type WriteRounds struct {
	Sent []clock.Time
	Seen [][]clock.Time
}

// Unseen marks a round not written or not seen.
const Unseen clock.Time = -1

// NewWriteRounds makes the record of rounds rounds with readers readers,
// every entry Unseen.
func NewWriteRounds(rounds, readers int) *WriteRounds {
	w := &WriteRounds{Sent: make([]clock.Time, rounds), Seen: make([][]clock.Time, rounds)}
	for r := range w.Seen {
		w.Sent[r] = Unseen
		w.Seen[r] = make([]clock.Time, readers)
		for i := range w.Seen[r] {
			w.Seen[r][i] = Unseen
		}
	}
	return w
}

// Latency returns round r's latency to its last reader (the multicast
// figure: a write has arrived when every receiver has it) and to its
// first, and whether every reader saw the round.
func (w *WriteRounds) Latency(r int) (last, first clock.Time, ok bool) {
	for i, t := range w.Seen[r] {
		if t == Unseen || w.Sent[r] == Unseen {
			return 0, 0, false
		}
		d := t - w.Sent[r]
		if i == 0 || d > last {
			last = d
		}
		if i == 0 || d < first {
			first = d
		}
	}
	return last, first, len(w.Seen[r]) > 0
}

// OneWay is the one-way 4-byte write of design section 3.1 (section 2.1:
// «Unicast and multicast process-to-process writes have a latency of 5.2
// μs on our system»): the writer stores round r's value (r+1) to Tx and
// executes a memory barrier (the Alpha MB that pushes the write buffer
// out); each reader polls its receive copy of the word, a load per
// iteration, until the value appears. The latency of a round is the
// store's retirement to the load that returned the new value, both on the
// simulation's one clock (no ping-pong halving is needed). Gap is the
// writer's CPU cycles between rounds, longer than a round's latency, so
// the rounds do not overlap. A reader gives up (and leaves the rest of
// its rounds unseen) when a round's value has not come Patience after it
// started polling for it, so that a write that never arrives ends the
// run instead of spinning forever (a polling CPU keeps the progress
// watchdog fed).
type OneWay struct {
	Tx       uint64
	Rounds   int
	Gap      int
	Patience clock.Time
}

// Validate checks the program's parameters; the error names the field.
func (o OneWay) Validate() error {
	switch {
	case o.Rounds < 1:
		return fmt.Errorf("mctb: OneWay.Rounds %d must be at least 1", o.Rounds)
	case o.Gap < 0:
		return fmt.Errorf("mctb: OneWay.Gap %d must not be negative", o.Gap)
	case o.Patience <= 0:
		return fmt.Errorf("mctb: OneWay.Patience %v must be positive", o.Patience)
	case o.Tx%4 != 0:
		return fmt.Errorf("mctb: OneWay.Tx %#x must be 4-byte aligned (a longword, MC-P18)", o.Tx)
	}
	return nil
}

// Writer returns the writing node's program; it fills w.Sent.
func (o OneWay) Writer(w *WriteRounds) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for r := range o.Rounds {
			p.As("mc.write").Store32(o.Tx, uint32(r+1))
			w.Sent[r] = p.Now()
			p.Fence()
			p.Compute(o.Gap)
		}
	}
}

// Reader returns reader i's program, polling the receive address rx; it
// fills w.Seen[r][i]. Values arrive in order (MC-P9), so it waits for each
// round in turn.
func (o OneWay) Reader(w *WriteRounds, i int, rx uint64) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for r := range o.Rounds {
			from := p.Now()
			for p.Load32(rx) < uint32(r+1) {
				if p.Now()-from > o.Patience {
					return
				}
			}
			w.Seen[r][i] = p.Now()
		}
	}
}

// Stream is the bandwidth program of design sections 3.2 and 3.3: one CPU
// writing Bytes bytes as write-combined 32-byte stores (BurstBytes) to the
// transmit range [Tx, Tx+Span), wrapping, then a memory barrier. Each
// longword carries a count (Seed, Seed+1, ...) so the receivers' copies
// can be checked.
type Stream struct {
	Tx    uint64
	Span  int
	Bytes int
	Seed  uint32
}

// Validate checks the program's parameters; the error names the field.
func (s Stream) Validate() error {
	switch {
	case s.Bytes < BurstBytes || s.Bytes%BurstBytes != 0:
		return fmt.Errorf("mctb: Stream.Bytes %d must be a positive multiple of %d", s.Bytes, BurstBytes)
	case s.Span < BurstBytes || s.Span%BurstBytes != 0:
		return fmt.Errorf("mctb: Stream.Span %d must be a positive multiple of %d", s.Span, BurstBytes)
	case s.Tx%BurstBytes != 0:
		return fmt.Errorf("mctb: Stream.Tx %#x must be %d-byte aligned (one write-buffer block)", s.Tx, BurstBytes)
	}
	return nil
}

// Program returns the writer; done (if not nil) gets the time its last
// store retired and its barrier completed.
func (s Stream) Program(done *clock.Time) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		v := s.Seed
		for off := 0; off < s.Bytes; off += BurstBytes {
			d := make([]byte, 0, BurstBytes)
			for range BurstBytes / 4 {
				d = binary.LittleEndian.AppendUint32(d, v)
				v++
			}
			p.Do(cpu.Op{Kind: cpu.Store, Addr: s.Tx + uint64(off%s.Span), Data: d, Burst: true, Label: "mc.stream"})
		}
		p.Fence()
		if done != nil {
			*done = p.Now()
		}
	}
}

// Flush is Cashmere-2L's MC flush (section 2.3: «By writing to a loopback
// region and waiting for the result, a processor can ensure that all
// packets on the network prior to the loopback write have been received
// at their destinations»): a store of v to Tx in a region with loop-back,
// a memory barrier, and loads of the node's own receive copy Rx until v
// appears (each load labelled poll, so a trace can keep only the polls
// whose value changed). v must differ from the word's current value. The
// poll gives up after Patience (OneWay says why).
type Flush struct {
	Tx, Rx   uint64
	Patience clock.Time
}

// Do performs the flush with value v and returns the store's retirement
// time (the flush's latency is p.Now() minus it when Do returns) and
// whether v came back within Patience.
func (f Flush) Do(p *cpu.Proc, v uint32) (clock.Time, bool) {
	p.As("mc.flush").Store32(f.Tx, v)
	t := p.Now()
	p.As("mb").Fence()
	for p.As("poll").Load32(f.Rx) != v {
		if p.Now()-t > f.Patience {
			return t, false
		}
	}
	return t, true
}

// Lock is a Cashmere-2L global lock (section 2.3): «Application locks ...
// consist of a test-and-set flag on each node and an 8-entry array in
// Memory Channel space. To acquire a lock, a process first acquires the
// per-node test-and-set flag using ll/sc. Then the process sets the array
// entry for its node, waits for the write to appear via loop-back, and
// reads the whole array. If its entry is the only one set, then the
// process has acquired the lock. Otherwise it clears its entry, backs
// off, and tries again.» Flag is the node's test-and-set flag in its own
// memory; the array is Nodes longwords, Tx on this node's transmit
// window (a region with loop-back) and Rx its receive copy; Node is this
// node's entry; Backoff the CPU cycles a loser waits before trying again,
// times its node number plus one and the rounds it has lost (assumed: the
// paper says only «backs off»; growing with the attempts and differing by
// node, two nodes that collided do not collide again in lock step);
// Patience bounds each wait for a loop-back (Flush). Each step's
// operations carry a label, so a trace shows the algorithm: lock.test
// (the flag read until free), lock.ll and lock.sc, the flush's mc.flush,
// mb and poll, lock.read (the other entries), lock.mb, lock.backoff and,
// releasing, lock.free (the flag cleared).
//
// WaitRelease: assumed: true. The paper does not say whether a release
// waits for its clear to come back; the Digital UNIX lock, «essentially
// the same as ours», returns when the lock is free everywhere, which is
// the loop-back of the clear (an MC flush). The report measures both.
type Lock struct {
	Flag        uint64
	Tx, Rx      uint64
	Node, Nodes int
	Backoff     int
	WaitRelease bool
	Patience    clock.Time
}

// Validate checks the lock's parameters; the error names the field.
func (l Lock) Validate() error {
	switch {
	case l.Nodes < 1:
		return fmt.Errorf("mctb: Lock.Nodes %d must be at least 1", l.Nodes)
	case l.Node < 0 || l.Node >= l.Nodes:
		return fmt.Errorf("mctb: Lock.Node %d must be in 0..%d", l.Node, l.Nodes-1)
	case l.Backoff < 0:
		return fmt.Errorf("mctb: Lock.Backoff %d must not be negative", l.Backoff)
	case l.Patience <= 0:
		return fmt.Errorf("mctb: Lock.Patience %v must be positive", l.Patience)
	case l.Flag%4 != 0 || l.Tx%4 != 0 || l.Rx%4 != 0:
		return fmt.Errorf("mctb: Lock addresses (Flag %#x, Tx %#x, Rx %#x) must be 4-byte aligned", l.Flag, l.Tx, l.Rx)
	}
	return nil
}

// entry is the offset of node n's array entry.
func entry(n int) uint64 { return 4 * uint64(n) }

// own is the flush on this node's array entry.
func (l Lock) own() Flush {
	return Flush{Tx: l.Tx + entry(l.Node), Rx: l.Rx + entry(l.Node), Patience: l.Patience}
}

// Acquire takes the lock and returns how many times it lost the global
// round (found another entry set) before it won; ok is false when a
// loop-back did not come within Patience (the lock is then not held).
func (l Lock) Acquire(p *cpu.Proc) (lost int, ok bool) {
	// The per-node flag: read until free (hits while held), then LL/SC
	// (smptb.Lock's loop, docs/host-programs.md).
	for {
		for p.As("lock.test").Load32(l.Flag) != 0 {
			p.As("lock.backoff").Compute(l.Backoff)
		}
		if p.As("lock.ll").LoadLocked32(l.Flag) == 0 && p.As("lock.sc").StoreConditional32(l.Flag, 1) {
			break
		}
	}
	own := l.own()
	for {
		// Set the own entry and wait for it to come back.
		if _, ok := own.Do(p, 1); !ok {
			return lost, false
		}
		alone := true
		for n := range l.Nodes {
			if n != l.Node && p.As("lock.read").Load32(l.Rx+entry(n)) != 0 {
				alone = false
			}
		}
		if alone {
			p.As("lock.mb").Fence() // the critical section stays after the acquire
			return lost, true
		}
		// Clear the entry and see the clear come back before trying
		// again, so the next round cannot read its own stale 1.
		if _, ok := own.Do(p, 0); !ok {
			return lost, false
		}
		lost++
		p.As("lock.backoff").Compute(l.Backoff * (l.Node + 1) * lost)
	}
}

// Release frees the lock: clear the node's array entry (waiting for the
// clear's loop-back if WaitRelease), then the per-node flag. It reports
// false when the clear did not come back within Patience.
func (l Lock) Release(p *cpu.Proc) (ok bool) {
	p.As("lock.mb").Fence() // the critical section's stores complete first
	ok = true
	if l.WaitRelease {
		_, ok = l.own().Do(p, 0)
	} else {
		p.As("mc.unlock").Store32(l.Tx+entry(l.Node), 0)
		p.As("mb").Fence()
	}
	p.As("lock.free").Store32(l.Flag, 0)
	return ok
}

// LockRound is one acquire and release of LockProgram: when the acquire
// started, when it returned (the critical section begins), when the
// critical section ended (the release begins), when the release returned,
// and how many global rounds it lost.
type LockRound struct {
	Start, Acquired, Unlock, Released clock.Time
	Lost                              int
}

// LockProgram returns a program that takes l, holds it hold CPU cycles
// (the critical section), releases it, and computes gap cycles, rounds
// times; it appends each completed round to out and stops at the first
// loop-back that does not come.
func LockProgram(l Lock, rounds, hold, gap int, out *[]LockRound) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for range rounds {
			r := LockRound{Start: p.Now()}
			lost, ok := l.Acquire(p)
			if !ok {
				return
			}
			r.Lost, r.Acquired = lost, p.Now()
			p.Compute(hold)
			r.Unlock = p.Now()
			if !l.Release(p) {
				return
			}
			r.Released = p.Now()
			*out = append(*out, r)
			p.Compute(gap)
		}
	}
}

// FlushProgram returns a program doing rounds MC flushes on f (values 1,
// 2, ...), gap cycles apart, appending each one's latency (store
// retirement to the load that saw the value) to out; it stops at the
// first flush that does not come back.
func FlushProgram(f Flush, rounds, gap int, out *[]clock.Time) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for r := range rounds {
			t, ok := f.Do(p, uint32(r+1))
			if !ok {
				return
			}
			*out = append(*out, p.Now()-t)
			p.Compute(gap)
		}
	}
}
