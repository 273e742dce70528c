// Package cam is nisim's content-addressable table: a fixed number of
// entries, each a valid bit, a key (the tag the match lines compare) and a
// value, searched by key in one step as a hardware CAM compares every tag in
// parallel. When a new key finds no free entry the table either refuses it,
// so the owner stalls and retries, or evicts a victim chosen by a
// replacement policy (least recently used, or oldest allocation).
//
// Two network interfaces build on it:
//
//   - the Telegraphos counter cache, a CAM of 16 to 32 pending-write
//     counters keyed by word address, which stalls the processor when it is
//     full (telegraphos.txt section 2.3.4: «If there is no free entry in the
//     cache, the processor is stalled.»); its entries are outstanding work,
//     so it is built with the watchdog on;
//   - the LCI NI's TLB, direct-mapped with 1024 entries, of which a CAM with
//     eviction is the general case; a cached translation left at the end of
//     a run is not unfinished work, so it runs without the watchdog.
//
// A CAM is a part that a clocked component embeds, not a ticking component:
// the owner decides how many lookups it makes per cycle and how many cycles
// each takes. Operations take effect immediately, in the order the owner
// calls them; a CAM shared by two components that act at the same instant
// must be ordered by its owner.
//
// Results never depend on Go map iteration: allocation takes the lowest free
// slot, victims are chosen from stamps of a monotonic counter (no ties), and
// Entries and State list entries in slot order.
package cam

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/waves"
)

// Policy says what Allocate does when every entry is valid.
type Policy uint8

const (
	// Stall refuses the allocation (the default): the owner stalls and
	// retries after an entry is freed, as the Telegraphos counter cache
	// stalls the processor.
	Stall Policy = iota
	// EvictLRU replaces the least recently used entry: the one whose last
	// allocation or Lookup hit is oldest.
	EvictLRU
	// EvictFIFO replaces the oldest allocation, however recently it was
	// looked up.
	EvictFIFO
)

// String returns the policy's name.
func (p Policy) String() string {
	switch p {
	case Stall:
		return "stall"
	case EvictLRU:
		return "evict-lru"
	case EvictFIFO:
		return "evict-fifo"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// Builder configures a CAM.
type Builder[K comparable, V any] struct {
	env      *env.Env
	entries  int
	policy   Policy
	watchdog bool
}

// MakeBuilder returns a builder with defaults: 16 entries, the Stall
// policy, no watchdog.
func MakeBuilder[K comparable, V any]() Builder[K, V] {
	return Builder[K, V]{entries: 16, policy: Stall}
}

// WithEnv sets the simulation the CAM belongs to (required).
func (b Builder[K, V]) WithEnv(e *env.Env) Builder[K, V] { b.env = e; return b }

// WithEntries sets the number of entries.
func (b Builder[K, V]) WithEntries(n int) Builder[K, V] { b.entries = n; return b }

// WithPolicy sets what Allocate does on a full table.
func (b Builder[K, V]) WithPolicy(p Policy) Builder[K, V] { b.policy = p; return b }

// WithWatchdog registers the CAM with the env's completion watchdog: valid
// entries left when the run ends count as unfinished work (a counter cache
// wants this; a TLB does not).
func (b Builder[K, V]) WithWatchdog(on bool) Builder[K, V] { b.watchdog = on; return b }

// Validate checks the parameters.
func (b Builder[K, V]) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("cam: no env")
	case b.entries < 1:
		return fmt.Errorf("cam entries %d must be at least 1", b.entries)
	case b.policy > EvictFIFO:
		return fmt.Errorf("cam %v is unknown", b.policy)
	}
	return nil
}

// Build creates the CAM named name (a hierarchical component name such as
// "Demo.NI.CounterCache") and, if asked to, registers it with the watchdog.
func (b Builder[K, V]) Build(name string) (*CAM[K, V], error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &CAM[K, V]{
		name:   name,
		env:    b.env,
		policy: b.policy,
		slots:  make([]slot[K, V], b.entries),
		index:  make(map[K]int, b.entries),
		free:   make([]uint64, (b.entries+63)/64),
	}
	for i := range b.entries {
		c.free[i/64] |= 1 << uint(i%64)
	}
	reg := b.env.Waves
	c.sigOcc = reg.Integer(name, "occupancy", waves.WidthFor(uint64(b.entries)))
	c.sigFull = reg.Wire(name, "full", 1)
	if b.watchdog {
		b.env.Register(c)
	}
	return c, nil
}

type slot[K comparable, V any] struct {
	valid bool
	key   K
	val   V
	since clock.Time // allocation time, for State
	last  clock.Time // time of the last Lookup hit or Update, for State
	alloc uint64     // stamp of the allocation (FIFO order)
	used  uint64     // stamp of the allocation or last Lookup hit (LRU order)
}

// CAM is a content-addressable table of entries with keys of type K and
// values of type V.
type CAM[K comparable, V any] struct {
	name   string
	env    *env.Env
	policy Policy
	slots  []slot[K, V]
	index  map[K]int // key -> slot, lookup only, never iterated
	free   []uint64  // bit i set: slot i is free
	n      int
	stamp  uint64 // monotonic counter for alloc and used stamps

	lookups, hits, misses uint64
	allocs, frees, evicts uint64
	fullStalls            uint64
	maxOcc                int
	sigOcc, sigFull       *waves.Signal
}

// Result is the outcome of Allocate.
type Result[K comparable, V any] struct {
	// Slot is the slot the key now occupies, or -1 if OK is false.
	Slot int
	// OK is false when the key was already present (a checker
	// violation) or the table was full under the Stall policy.
	OK bool
	// Evicted is true when a valid entry was replaced to make room;
	// EvictedKey and EvictedVal are that entry.
	Evicted    bool
	EvictedKey K
	EvictedVal V
}

// Entry is one valid entry, as listed by Entries.
type Entry[K comparable, V any] struct {
	Slot int
	Key  K
	Val  V
}

// Stats are a CAM's counters. Lookups = Hits + Misses. Allocs counts
// successful allocations, including those that evicted; FullStalls counts
// refused allocations under the Stall policy (one per call, so an owner
// that retries every cycle counts its stall cycles). MaxOccupancy is the
// largest number of valid entries seen.
type Stats struct {
	Lookups, Hits, Misses uint64
	Allocs, Frees         uint64
	Evictions, FullStalls uint64
	MaxOccupancy          int
}

// Name returns the CAM's name.
func (c *CAM[K, V]) Name() string { return c.name }

// Policy returns the replacement policy.
func (c *CAM[K, V]) Policy() Policy { return c.policy }

// Len returns the number of valid entries.
func (c *CAM[K, V]) Len() int { return c.n }

// Cap returns the number of entries.
func (c *CAM[K, V]) Cap() int { return len(c.slots) }

// Full reports whether every entry is valid.
func (c *CAM[K, V]) Full() bool { return c.n == len(c.slots) }

// Lookup searches for k at now. A hit returns the value and makes the entry
// the most recently used (now is kept as its last use, for State); hits and
// misses are counted.
func (c *CAM[K, V]) Lookup(now clock.Time, k K) (V, bool) {
	c.lookups++
	i, ok := c.index[k]
	if !ok {
		c.misses++
		var zero V
		return zero, false
	}
	c.hits++
	c.stamp++
	c.slots[i].used = c.stamp
	c.slots[i].last = now
	return c.slots[i].val, true
}

// Peek returns the value of k without counting a lookup or refreshing its
// age, for checkers and reports.
func (c *CAM[K, V]) Peek(k K) (V, bool) {
	i, ok := c.index[k]
	if !ok {
		var zero V
		return zero, false
	}
	return c.slots[i].val, true
}

// Allocate enters k with value v at now, in the lowest free slot. If k is
// already present that is a checker violation ("cam.duplicate") and nothing
// changes. If the table is full, the Stall policy refuses (counting a full
// stall) and the eviction policies replace their victim, which the result
// returns.
func (c *CAM[K, V]) Allocate(now clock.Time, k K, v V) Result[K, V] {
	if i, dup := c.index[k]; dup {
		c.env.Report(now, c.name, "cam.duplicate", "key %v allocated while already in slot %d", k, i)
		return Result[K, V]{Slot: -1}
	}
	var res Result[K, V]
	i := c.lowestFree()
	if i < 0 {
		if c.policy == Stall {
			c.fullStalls++
			return Result[K, V]{Slot: -1}
		}
		i = c.victim()
		old := &c.slots[i]
		res.Evicted, res.EvictedKey, res.EvictedVal = true, old.key, old.val
		delete(c.index, old.key)
		c.evicts++
	} else {
		c.free[i/64] &^= 1 << uint(i%64)
		c.n++
		c.maxOcc = max(c.maxOcc, c.n)
	}
	c.stamp++
	c.slots[i] = slot[K, V]{valid: true, key: k, val: v, since: now, last: now, alloc: c.stamp, used: c.stamp}
	c.index[k] = i
	c.allocs++
	c.changed(now)
	res.Slot, res.OK = i, true
	return res
}

// Update sets the value of k at now, without refreshing its age. It
// returns false if k is not present.
func (c *CAM[K, V]) Update(now clock.Time, k K, v V) bool {
	i, ok := c.index[k]
	if !ok {
		return false
	}
	c.slots[i].val = v
	c.slots[i].last = now
	return true
}

// Free invalidates k's entry at now. It returns false if k is not present.
func (c *CAM[K, V]) Free(now clock.Time, k K) bool {
	i, ok := c.index[k]
	if !ok {
		return false
	}
	delete(c.index, k)
	c.slots[i] = slot[K, V]{}
	c.free[i/64] |= 1 << uint(i%64)
	c.n--
	c.frees++
	c.changed(now)
	return true
}

// Entries returns the valid entries in slot order.
func (c *CAM[K, V]) Entries() []Entry[K, V] {
	out := make([]Entry[K, V], 0, c.n)
	for i := range c.slots {
		if s := &c.slots[i]; s.valid {
			out = append(out, Entry[K, V]{Slot: i, Key: s.key, Val: s.val})
		}
	}
	return out
}

// Stats returns the counters.
func (c *CAM[K, V]) Stats() Stats {
	return Stats{
		Lookups: c.lookups, Hits: c.hits, Misses: c.misses,
		Allocs: c.allocs, Frees: c.frees, Evictions: c.evicts, FullStalls: c.fullStalls,
		MaxOccupancy: c.maxOcc,
	}
}

// Idle implements check.Unit: the CAM is idle when no entry is valid.
func (c *CAM[K, V]) Idle() bool { return c.n == 0 }

// stateKeys is how many entries State lists.
const stateKeys = 4

// State implements check.Unit: the occupancy and the first few entries in
// slot order, with the times they were allocated and last used.
func (c *CAM[K, V]) State() string {
	if c.n == 0 {
		return "empty"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d entries:", c.n, len(c.slots))
	shown := 0
	for i := range c.slots {
		s := &c.slots[i]
		if !s.valid {
			continue
		}
		if shown == stateKeys {
			fmt.Fprintf(&b, " ... and %d more", c.n-shown)
			break
		}
		if shown > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " slot %d key %v (allocated %v, last used %v)", i, s.key, s.since, s.last)
		shown++
	}
	return b.String()
}

// lowestFree returns the lowest free slot, or -1.
func (c *CAM[K, V]) lowestFree() int {
	for w, word := range c.free {
		if word != 0 {
			return w*64 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// victim returns the slot to replace in a full table.
func (c *CAM[K, V]) victim() int {
	best, bestStamp := -1, uint64(0)
	for i := range c.slots {
		st := c.slots[i].used
		if c.policy == EvictFIFO {
			st = c.slots[i].alloc
		}
		if best < 0 || st < bestStamp {
			best, bestStamp = i, st
		}
	}
	return best
}

func (c *CAM[K, V]) changed(now clock.Time) {
	c.sigOcc.Set(now, uint64(c.n))
	c.sigFull.SetBool(now, c.Full())
}
