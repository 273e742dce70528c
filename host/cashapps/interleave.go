package cashapps

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
)

// Stats counts what a RunInterleaved run did: the synchronisation rows of
// Table 3 (cashmere-2l-memory-channel.txt section 3.3: «the number of lock
// and barrier synchronization operations ... aggregated over all 32
// processors») and the program's accesses.
type Stats struct {
	Procs int
	// Barriers is the number of barrier episodes (every process arrives
	// once per episode; Table 3's «Barriers» row counts episodes: SOR's 48
	// is the same at any processor count).
	Barriers int
	// LockAcquires and FlagAcquires are Lock and WaitFlag calls summed over
	// the processes (Table 3's «Lock/Flag Acq.» is their sum).
	LockAcquires, FlagAcquires int
	// LoadWords and StoreWords are the 8-byte words loaded and stored.
	LoadWords, StoreWords int64
	// ComputeCycles is the sum of Compute's arguments.
	ComputeCycles int64
	// Steps is the number of operations the scheduler chose.
	Steps int64
}

// SyncAcquires is Table 3's «Lock/Flag Acq.» row.
func (s Stats) SyncAcquires() int { return s.LockAcquires + s.FlagAcquires }

// opKind is the operation a process has asked the scheduler for.
type opKind uint8

const (
	opRun opKind = iota
	opLoad
	opStore
	opCompute
	opPoll
	opLock
	opUnlock
	opBarrier
	opSetFlag
	opWaitFlag
)

// stopSignal unwinds a process the scheduler has stopped (its yield
// returned false).
type stopSignal struct{}

// RunInterleaved runs prog as procs processes, untimed, each a coroutine
// (iter.Pull), switching at every Proc operation to a process chosen by a
// random generator seeded with seed among those that can go on: a lock
// waiter only when the lock is free, a flag waiter only when the flag holds
// its value, a barrier waiter only when every process has arrived. The same
// seed gives the same interleaving.
//
// It checks the program's rules on the way: every pair of conflicting
// accesses to a word by two processes must be ordered by a lock hand-off, a
// barrier or a flag (a vector-clock race detector after FastTrack: one
// last-write epoch per word, one read epoch or, for concurrent readers, a
// read vector), and it reports a deadlock, a lock released by a process not
// holding it or held at return, or an access outside the shared space as an
// error naming the processes and the word. The final memory is the reference's
// form (little-endian words), to compare with RunSequential.
func RunInterleaved(prog Program, procs int, seed uint64) ([]byte, Stats, error) {
	if err := checkProgram(prog); err != nil {
		return nil, Stats{}, err
	}
	if procs < 1 {
		return nil, Stats{}, fmt.Errorf("cashapps: %s: procs = %d: need at least 1", prog.Name(), procs)
	}
	w := newWorld(prog, procs)
	defer w.stopAll()
	if err := w.run(rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))); err != nil {
		return nil, w.stats, fmt.Errorf("%s: %w", prog.Name(), err)
	}
	return toBytes(w.mem), w.stats, nil
}

// world is RunInterleaved's shared state. Only one coroutine runs at a time
// (iter.Pull hands control over synchronously), so it needs no locking.
type world struct {
	prog  Program
	procs []*iproc
	mem   []uint64

	// The race detector's shadow memory: one entry per word, and the read
	// vectors of words read by processes not ordered with each other.
	shadow  []shadowWord
	readVCs [][]uint32
	freeVCs []int32

	holder []int      // per lock: the process holding it, -1 if free
	lockVC [][]uint32 // per lock: the clock of its last release
	flags  []uint64
	flagVC [][]uint32 // per flag: the clock of its last SetFlag

	gen     int // barrier episodes completed
	arrived int // processes in the current episode

	stats Stats
}

// shadowWord is one word's access history: the epoch (process, clock) of
// its last write, and of its last read or, when rVec > 0, readVCs[rVec-1]
// holds a read clock per process.
type shadowWord struct {
	wProc, rProc   int32
	wClock, rClock uint32
	rVec           int32
}

// iproc is one process of RunInterleaved.
type iproc struct {
	w  *world
	id int
	vc []uint32

	yield func(struct{}) bool
	next  func() (struct{}, bool)
	stop  func()

	op  opKind
	arg int
	val uint64

	inBarrier bool
	barGen    int
	done      bool
	err       error
}

func newWorld(prog Program, procs int) *world {
	words := prog.SharedBytes() / 8
	w := &world{
		prog:   prog,
		mem:    make([]uint64, words),
		shadow: make([]shadowWord, words),
		holder: make([]int, prog.Locks()),
		lockVC: make([][]uint32, prog.Locks()),
		flags:  make([]uint64, prog.Flags()),
		flagVC: make([][]uint32, prog.Flags()),
		stats:  Stats{Procs: procs},
	}
	for i := range w.shadow {
		w.shadow[i] = shadowWord{wProc: -1, rProc: -1}
	}
	for l := range w.holder {
		w.holder[l] = -1
		w.lockVC[l] = make([]uint32, procs)
	}
	for f := range w.flagVC {
		w.flagVC[f] = make([]uint32, procs)
	}
	for id := 0; id < procs; id++ {
		p := &iproc{w: w, id: id, vc: make([]uint32, procs), op: opRun}
		p.vc[id] = 1
		p.next, p.stop = iter.Pull(func(yield func(struct{}) bool) {
			p.yield = yield
			defer recoverFault(p.id, &p.err)
			prog.Run(p)
		})
		w.procs = append(w.procs, p)
	}
	return w
}

func (w *world) stopAll() {
	for _, p := range w.procs {
		p.stop()
	}
}

// run is the scheduler.
func (w *world) run(rng *rand.Rand) error {
	cands := make([]*iproc, 0, len(w.procs))
	for {
		cands = cands[:0]
		live := 0
		for _, p := range w.procs {
			if p.done {
				continue
			}
			live++
			if w.enabled(p) {
				cands = append(cands, p)
			}
		}
		if live == 0 {
			return nil
		}
		if len(cands) == 0 {
			return w.deadlock()
		}
		p := cands[rng.IntN(len(cands))]
		w.stats.Steps++
		if p.op == opBarrier && !p.inBarrier {
			w.arrive(p)
			continue
		}
		if _, ok := p.next(); !ok {
			p.done = true
		}
		if p.err != nil {
			return p.err
		}
		if p.done {
			for l, h := range w.holder {
				if h == p.id {
					return fmt.Errorf("cashapps: process %d returned holding lock %d", p.id, l)
				}
			}
		}
	}
}

// enabled says whether p's pending operation can go on now.
func (w *world) enabled(p *iproc) bool {
	switch p.op {
	case opLock:
		return w.holder[p.arg] < 0
	case opWaitFlag:
		return w.flags[p.arg] == p.val
	case opBarrier:
		return !p.inBarrier || w.gen > p.barGen
	}
	return true
}

// arrive enters p into the current barrier episode; the last arrival ends it:
// every process's clock becomes the join of all, then each ticks its own.
func (w *world) arrive(p *iproc) {
	p.inBarrier, p.barGen = true, w.gen
	w.arrived++
	if w.arrived < len(w.procs) {
		return
	}
	all := make([]uint32, len(w.procs))
	for _, q := range w.procs {
		join(all, q.vc)
	}
	for _, q := range w.procs {
		copy(q.vc, all)
		q.vc[q.id]++
	}
	w.gen++
	w.arrived = 0
	w.stats.Barriers++
}

// deadlock describes every blocked process, on one line.
func (w *world) deadlock() error {
	var parts []string
	for _, p := range w.procs {
		switch {
		case p.done:
			parts = append(parts, fmt.Sprintf("process %d has returned", p.id))
		case p.op == opLock:
			parts = append(parts, fmt.Sprintf("process %d waits for lock %d (held by process %d)", p.id, p.arg, w.holder[p.arg]))
		case p.op == opWaitFlag:
			parts = append(parts, fmt.Sprintf("process %d waits for flag %d == %d (it is %d)", p.id, p.arg, p.val, w.flags[p.arg]))
		case p.op == opBarrier:
			parts = append(parts, fmt.Sprintf("process %d is in barrier %d (%d of %d arrived)", p.id, w.gen, w.arrived, len(w.procs)))
		}
	}
	return fmt.Errorf("cashapps: deadlock: %s", strings.Join(parts, "; "))
}

// join sets a to the element-wise maximum of a and b.
func join(a, b []uint32) {
	for i, v := range b {
		if v > a[i] {
			a[i] = v
		}
	}
}

// step hands p's next operation to the scheduler and returns when the
// scheduler has chosen it.
func (p *iproc) step(op opKind, arg int, val uint64) {
	p.op, p.arg, p.val = op, arg, val
	if !p.yield(struct{}{}) {
		panic(stopSignal{})
	}
}

func (p *iproc) ID() int    { return p.id }
func (p *iproc) Procs() int { return len(p.w.procs) }

func (p *iproc) Load(addr uint64, dst []uint64) {
	w := p.w
	base := wordRange("Load", p.id, addr, len(dst), uint64(len(w.mem)))
	p.step(opLoad, 0, 0)
	for i := range dst {
		w.read(p, base+uint64(i))
		dst[i] = w.mem[base+uint64(i)]
	}
	w.stats.LoadWords += int64(len(dst))
}

func (p *iproc) Store(addr uint64, src []uint64) {
	w := p.w
	base := wordRange("Store", p.id, addr, len(src), uint64(len(w.mem)))
	p.step(opStore, 0, 0)
	for i, v := range src {
		w.write(p, base+uint64(i))
		w.mem[base+uint64(i)] = v
	}
	w.stats.StoreWords += int64(len(src))
}

func (p *iproc) Compute(cycles int) {
	if cycles < 0 {
		fault("cashapps: process %d: Compute(%d): negative", p.id, cycles)
	}
	p.step(opCompute, 0, 0)
	p.w.stats.ComputeCycles += int64(cycles)
}

func (p *iproc) Poll() { p.step(opPoll, 0, 0) }

func (p *iproc) Lock(l int) {
	w := p.w
	checkIndex("lock", p.id, l, len(w.holder))
	if w.holder[l] == p.id {
		fault("cashapps: process %d: deadlock: Lock(%d) while holding it", p.id, l)
	}
	p.step(opLock, l, 0)
	w.holder[l] = p.id
	join(p.vc, w.lockVC[l])
	w.stats.LockAcquires++
}

func (p *iproc) Unlock(l int) {
	w := p.w
	checkIndex("lock", p.id, l, len(w.holder))
	p.step(opUnlock, l, 0)
	if w.holder[l] != p.id {
		fault("cashapps: process %d: Unlock(%d) of a lock it does not hold", p.id, l)
	}
	copy(w.lockVC[l], p.vc)
	p.vc[p.id]++
	w.holder[l] = -1
}

func (p *iproc) Barrier() {
	p.step(opBarrier, 0, 0)
	p.inBarrier = false
}

func (p *iproc) SetFlag(f int, v uint64) {
	w := p.w
	checkIndex("flag", p.id, f, len(w.flags))
	p.step(opSetFlag, f, v)
	w.flags[f] = v
	copy(w.flagVC[f], p.vc)
	p.vc[p.id]++
}

func (p *iproc) WaitFlag(f int, v uint64) {
	w := p.w
	checkIndex("flag", p.id, f, len(w.flags))
	p.step(opWaitFlag, f, v)
	join(p.vc, w.flagVC[f])
	w.stats.FlagAcquires++
}

// race stops p with the report of an unordered pair.
func (w *world) race(x uint64, first int32, firstOp string, p *iproc, op string) {
	fault("cashapps: data race on word %d (address %#x): process %d's %s and process %d's %s are not ordered by a lock, barrier or flag",
		x, x*8, first, firstOp, p.id, op)
}

// read records p's read of word x after checking it against the last write.
func (w *world) read(p *iproc, x uint64) {
	s := &w.shadow[x]
	me := int32(p.id)
	if s.wProc >= 0 && s.wProc != me && s.wClock > p.vc[s.wProc] {
		w.race(x, s.wProc, "write", p, "read")
	}
	now := p.vc[p.id]
	switch {
	case s.rVec > 0:
		w.readVCs[s.rVec-1][p.id] = now
	case s.rProc < 0 || s.rProc == me || s.rClock <= p.vc[s.rProc]:
		s.rProc, s.rClock = me, now
	default:
		// two reads not ordered with each other: keep both
		var v []uint32
		if n := len(w.freeVCs); n > 0 {
			s.rVec = w.freeVCs[n-1] + 1
			w.freeVCs = w.freeVCs[:n-1]
			v = w.readVCs[s.rVec-1]
			clear(v)
		} else {
			v = make([]uint32, len(w.procs))
			w.readVCs = append(w.readVCs, v)
			s.rVec = int32(len(w.readVCs))
		}
		v[s.rProc], v[p.id] = s.rClock, now
		s.rProc = -1
	}
}

// write records p's write of word x after checking it against the last
// write and every read since.
func (w *world) write(p *iproc, x uint64) {
	s := &w.shadow[x]
	me := int32(p.id)
	if s.wProc >= 0 && s.wProc != me && s.wClock > p.vc[s.wProc] {
		w.race(x, s.wProc, "write", p, "write")
	}
	if s.rVec > 0 {
		for u, c := range w.readVCs[s.rVec-1] {
			if u != p.id && c > p.vc[u] {
				w.race(x, int32(u), "read", p, "write")
			}
		}
		w.freeVCs = append(w.freeVCs, s.rVec-1)
		s.rVec = 0
	} else if s.rProc >= 0 && s.rProc != me && s.rClock > p.vc[s.rProc] {
		w.race(x, s.rProc, "read", p, "write")
	}
	s.wProc, s.wClock = me, p.vc[p.id]
	s.rProc = -1
}
