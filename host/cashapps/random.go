package cashapps

import (
	"encoding/binary"
	"fmt"
)

// RandomConfig sizes a randomised data-race-free program (Random).
type RandomConfig struct {
	// Seed chooses every decision of every process.
	Seed uint64
	// Procs is the number of processes the program is planned for (its
	// ownership and log sizes depend on it); Run refuses another count.
	Procs int
	// DataPages is the data area, split into two halves that the phases
	// write and read in turn (at least 2, even).
	DataPages int
	// Granule is the words a process writes together (a power of two that
	// divides a page): small granules put several writers on one page
	// (false sharing, section 2.5's multiple writers).
	Granule int
	// Phases is the number of barrier-separated phases.
	Phases int
	// Locks is the number of locks, each guarding its own block of words.
	Locks int
	// BlockWords is the words each lock guards.
	BlockWords int
	// Sections is the critical sections each process runs per phase.
	Sections int
	// WriteShare is the share, in 1/256, of a phase's granules its owner
	// writes (the others stay as they were).
	WriteShare int
	// Compute is the cycles charged per granule written.
	Compute int
}

// DefaultRandom is a small program for 16 processes: 8 data pages in
// granules of 16 words (128 bytes: 64 writers' granules on a page), 6
// phases, 4 locks guarding 64 words each, 2 critical sections per process
// per phase.
func DefaultRandom(seed uint64, procs int) RandomConfig {
	return RandomConfig{Seed: seed, Procs: procs, DataPages: 8, Granule: 16, Phases: 6, Locks: 4,
		BlockWords: 64, Sections: 2, WriteShare: 128, Compute: 200}
}

// Random is a randomised data-race-free program for the protocol's
// checkers (issue 18 section 4: «data-race-free programs give sequentially
// consistent results (replay in lock order against a reference)»). Every
// process runs Phases phases separated by barriers; in each:
//
//   - Owned writes: the data area's halves swap roles every phase; the
//     granules of the written half are dealt to the processes by a hash
//     of (seed, phase, granule), and an owner writes a share of its
//     granules, each word a mix of its address, the phase and one word of
//     the read half (nobody writes the read half in that phase).
//   - A flag ring: process p stores its mailbox word, sets its flag to the
//     phase (a release), waits for process p-1's flag (an acquire), loads
//     p-1's mailbox and folds it into its own sink word. Mailboxes and
//     sinks share pages (false sharing).
//   - Critical sections: Sections times, process p takes a lock chosen by
//     its plan, reads the lock's ticket, appends (p, section) to the lock's
//     log at the ticket, bumps the ticket and rewrites one word of the
//     lock's block from its old value and one read-half word.
//
// What the locks guard depends on the order the locks were granted in, so
// the reference is not one process: Check replays the critical sections in
// the order the final memory's logs record (the lock order of the run) and
// compares every word. The rest of memory is independent of the timing.
type Random struct {
	c RandomConfig

	half     int // words in each half of the data area
	lockBase int // first word of lock 0's record
	lockRec  int // words per lock record: ticket, block, log
	logCap   int
	mailBase int // mailboxes, then sinks
	words    int

	// skipLock is a test-only fault: the critical sections run without
	// their lock, a data race the interleaving backend must catch.
	skipLock bool
}

// NewRandom checks c.
func NewRandom(c RandomConfig) (*Random, error) {
	switch {
	case c.Procs < 1:
		return nil, fmt.Errorf("random: procs = %d: need at least 1", c.Procs)
	case c.DataPages < 2 || c.DataPages%2 != 0:
		return nil, fmt.Errorf("random: data_pages = %d: need an even number of at least 2", c.DataPages)
	case c.Granule < 1 || c.Granule > pageWords || pageWords%c.Granule != 0:
		return nil, fmt.Errorf("random: granule = %d: need a divisor of a page's %d words", c.Granule, pageWords)
	case c.Phases < 1:
		return nil, fmt.Errorf("random: phases = %d: need at least 1", c.Phases)
	case c.Locks < 1:
		return nil, fmt.Errorf("random: locks = %d: need at least 1", c.Locks)
	case c.BlockWords < 1:
		return nil, fmt.Errorf("random: block_words = %d: need at least 1", c.BlockWords)
	case c.Sections < 0:
		return nil, fmt.Errorf("random: sections = %d: need at least 0", c.Sections)
	case c.WriteShare < 0 || c.WriteShare > 256:
		return nil, fmt.Errorf("random: write_share = %d: need 0 to 256", c.WriteShare)
	case c.Compute < 0:
		return nil, fmt.Errorf("random: compute = %d: need at least 0", c.Compute)
	}
	r := &Random{c: c, half: c.DataPages / 2 * pageWords}
	r.logCap = c.Procs * c.Sections * c.Phases
	r.lockRec = 1 + c.BlockWords + r.logCap
	r.lockBase = 2 * r.half
	r.mailBase = r.lockBase + c.Locks*r.lockRec
	r.words = r.mailBase + 2*c.Procs
	return r, nil
}

// Name is "random".
func (r *Random) Name() string { return "random" }

// SharedBytes is every area, rounded up to a page.
func (r *Random) SharedBytes() uint64 { return roundPages(r.words) }

// Locks is the configured count.
func (r *Random) Locks() int { return r.c.Locks }

// Flags is one per process (the ring).
func (r *Random) Flags() int { return r.c.Procs }

// Config is the program's configuration.
func (r *Random) Config() RandomConfig { return r.c }

// h mixes the seed and vals (em3d.go's mix, SplitMix64's finaliser):
// every decision and every value written is a hash of what it depends on.
func (r *Random) h(vals ...uint64) uint64 {
	x := mix(r.c.Seed)
	for _, v := range vals {
		x = mix(x ^ v)
	}
	return x
}

// Decision tags, so that no two decisions share a hash.
const (
	tagOwner = iota + 1
	tagWrite
	tagRead
	tagLock
	tagWord
	tagCSRead
	tagMail
)

// halves returns the word offsets of the halves phase ph writes and reads.
func (r *Random) halves(ph int) (write, read int) {
	if ph%2 == 0 {
		return 0, r.half
	}
	return r.half, 0
}

// granuleWrite is one granule a process writes in a phase: its first
// word and the read-half word its values mix in.
type granuleWrite struct{ word, src int }

// writes lists process p's granule writes in phase ph, in address order.
func (r *Random) writes(p, ph int) []granuleWrite {
	wbase, rbase := r.halves(ph)
	var out []granuleWrite
	for g := 0; g < r.half/r.c.Granule; g++ {
		if int(r.h(tagOwner, uint64(ph), uint64(g))%uint64(r.c.Procs)) != p {
			continue
		}
		if int(r.h(tagWrite, uint64(ph), uint64(g))%256) >= r.c.WriteShare {
			continue
		}
		src := rbase + int(r.h(tagRead, uint64(ph), uint64(g))%uint64(r.half))
		out = append(out, granuleWrite{word: wbase + g*r.c.Granule, src: src})
	}
	return out
}

// value is word w's value written in phase ph from the source word's v.
func (r *Random) value(ph, w int, v uint64) uint64 { return r.h(uint64(ph), uint64(w), v) }

// section is one critical section of a process's plan.
type section struct{ lock, word, src int }

// section returns process p's k-th critical section (k counts over every
// phase: phase ph's are ph*Sections to ph*Sections+Sections-1).
func (r *Random) section(p, k int) section {
	ph := k / max(r.c.Sections, 1)
	_, rbase := r.halves(ph)
	return section{
		lock: int(r.h(tagLock, uint64(p), uint64(k)) % uint64(r.c.Locks)),
		word: int(r.h(tagWord, uint64(p), uint64(k)) % uint64(r.c.BlockWords)),
		src:  rbase + int(r.h(tagCSRead, uint64(p), uint64(k))%uint64(r.half)),
	}
}

// sectionValue is what section k of process p writes over old, having
// read v, as the lock's t-th holder: the ticket makes every reordering of
// the log visible in the block.
func (r *Random) sectionValue(p, k, t int, old, v uint64) uint64 {
	return r.h(uint64(p), uint64(k), uint64(t), old, v)
}

func (r *Random) ticket(l int) int          { return r.lockBase + l*r.lockRec }
func (r *Random) block(l, j int) int        { return r.ticket(l) + 1 + j }
func (r *Random) logSlot(l, t int) int      { return r.ticket(l) + 1 + r.c.BlockWords + t }
func (r *Random) mailbox(p int) int         { return r.mailBase + p }
func (r *Random) sink(p int) int            { return r.mailBase + r.c.Procs + p }
func (r *Random) mail(p, ph int) uint64     { return r.h(tagMail, uint64(p), uint64(ph)) }
func logEntry(p, k int) uint64              { return uint64(p)<<32 | (uint64(k) + 1) }
func logSplit(e uint64) (p, k int, ok bool) { return int(e >> 32), int(e&0xffffffff) - 1, e != 0 }
func waddr(w int) uint64                    { return uint64(w) * 8 }

// Run is process p's program.
func (r *Random) Run(p Proc) {
	if p.Procs() != r.c.Procs {
		panic(fmt.Sprintf("random: planned for %d processes, run on %d", r.c.Procs, p.Procs()))
	}
	id, procs := p.ID(), p.Procs()
	one := make([]uint64, 1)
	gran := make([]uint64, r.c.Granule)
	load := func(w int) uint64 { p.Load(waddr(w), one); return one[0] }
	store := func(w int, v uint64) { one[0] = v; p.Store(waddr(w), one) }
	for ph := 0; ph < r.c.Phases; ph++ {
		for _, g := range r.writes(id, ph) {
			p.Poll()
			v := load(g.src)
			for i := range gran {
				gran[i] = r.value(ph, g.word+i, v)
			}
			p.Compute(r.c.Compute)
			p.Store(waddr(g.word), gran)
		}
		store(r.mailbox(id), r.mail(id, ph))
		p.SetFlag(id, uint64(ph+1))
		prev := (id + procs - 1) % procs
		p.WaitFlag(prev, uint64(ph+1))
		m := load(r.mailbox(prev))
		store(r.sink(id), mix(load(r.sink(id))^m))
		for s := 0; s < r.c.Sections; s++ {
			p.Poll()
			k := ph*r.c.Sections + s
			cs := r.section(id, k)
			if !r.skipLock {
				p.Lock(cs.lock)
			}
			t := load(r.ticket(cs.lock))
			store(r.logSlot(cs.lock, int(t)), logEntry(id, k))
			store(r.ticket(cs.lock), t+1)
			v := load(r.section(id, k).src)
			old := load(r.block(cs.lock, cs.word))
			store(r.block(cs.lock, cs.word), r.sectionValue(id, k, int(t), old, v))
			if !r.skipLock {
				p.Unlock(cs.lock)
			}
		}
		p.Barrier()
	}
}

// Check replays the run whose final shared memory is final: the owned
// writes and the flag ring phase by phase (they do not depend on the
// timing), then each lock's critical sections in the order its log
// records (the run's lock order), and compares every word. The error names
// the first word that differs and its area, or a log that is not a
// permutation of the planned sections.
func (r *Random) Check(final []byte) error {
	if len(final) < r.words*8 {
		return fmt.Errorf("random: final memory %d bytes, need %d", len(final), r.words*8)
	}
	got := func(w int) uint64 { return binary.LittleEndian.Uint64(final[w*8:]) }
	want := make([]uint64, r.words)
	// The data area and the ring, phase by phase. The read half is not
	// written in a phase, so the order of processes within it is free.
	// The critical sections read read-half words, which depend on the
	// phase, so the replay below needs the data area as each phase left
	// it (snap[ph]; the read half is unchanged within the phase).
	snap := make([][]uint64, r.c.Phases)
	for ph := 0; ph < r.c.Phases; ph++ {
		for p := 0; p < r.c.Procs; p++ {
			for _, g := range r.writes(p, ph) {
				v := want[g.src]
				for i := 0; i < r.c.Granule; i++ {
					want[g.word+i] = r.value(ph, g.word+i, v)
				}
			}
		}
		snap[ph] = append([]uint64(nil), want[:2*r.half]...)
		for p := 0; p < r.c.Procs; p++ {
			want[r.mailbox(p)] = r.mail(p, ph)
		}
		for p := 0; p < r.c.Procs; p++ {
			prev := (p + r.c.Procs - 1) % r.c.Procs
			want[r.sink(p)] = mix(want[r.sink(p)] ^ want[r.mailbox(prev)])
		}
	}
	planned := make(map[uint64]bool)
	for p := 0; p < r.c.Procs; p++ {
		for k := 0; k < r.c.Phases*r.c.Sections; k++ {
			planned[logEntry(p, k)] = false
		}
	}
	perLock := make([]int, r.c.Locks)
	for p := 0; p < r.c.Procs; p++ {
		for k := 0; k < r.c.Phases*r.c.Sections; k++ {
			perLock[r.section(p, k).lock]++
		}
	}
	for l := 0; l < r.c.Locks; l++ {
		n := got(r.ticket(l))
		if n != uint64(perLock[l]) {
			return fmt.Errorf("random: lock %d's ticket is %d, the plan has %d critical sections on it", l, n, perLock[l])
		}
		want[r.ticket(l)] = n
		for t := 0; t < perLock[l]; t++ {
			e := got(r.logSlot(l, t))
			p, k, ok := logSplit(e)
			seen, known := planned[e]
			switch {
			case !ok:
				return fmt.Errorf("random: lock %d's log slot %d is empty (ticket %d)", l, t, n)
			case !known || r.section(p, k).lock != l:
				return fmt.Errorf("random: lock %d's log slot %d holds process %d's section %d, which is not planned on it", l, t, p, k)
			case seen:
				return fmt.Errorf("random: lock %d's log slot %d repeats process %d's section %d", l, t, p, k)
			}
			planned[e] = true
			want[r.logSlot(l, t)] = e
			cs := r.section(p, k)
			ph := k / max(r.c.Sections, 1)
			w := r.block(l, cs.word)
			want[w] = r.sectionValue(p, k, t, want[w], snap[ph][cs.src])
		}
	}
	for w := 0; w < r.words; w++ {
		if got(w) != want[w] {
			return fmt.Errorf("random: word %d (address %#x, %s) is %#x, the replay in lock order gives %#x", w, waddr(w), r.area(w), got(w), want[w])
		}
	}
	for b := r.words * 8; b < len(final); b++ {
		if final[b] != 0 {
			return fmt.Errorf("random: byte %#x past the program's words is %#x, never written", b, final[b])
		}
	}
	return nil
}

// area names the area word w belongs to.
func (r *Random) area(w int) string {
	switch {
	case w < 2*r.half:
		return fmt.Sprintf("data word %d", w)
	case w < r.mailBase:
		l := (w - r.lockBase) / r.lockRec
		o := (w - r.lockBase) % r.lockRec
		switch {
		case o == 0:
			return fmt.Sprintf("lock %d's ticket", l)
		case o <= r.c.BlockWords:
			return fmt.Sprintf("lock %d's block word %d", l, o-1)
		default:
			return fmt.Sprintf("lock %d's log slot %d", l, o-1-r.c.BlockWords)
		}
	case w < r.mailBase+r.c.Procs:
		return fmt.Sprintf("process %d's mailbox", w-r.mailBase)
	default:
		return fmt.Sprintf("process %d's sink", w-r.mailBase-r.c.Procs)
	}
}
