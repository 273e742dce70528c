package telegraphos

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
)

// Coherence checks, for every word of a replicated page, the guarantee of
// the counter-based protocol (2.3.3): every node sees a subsequence of the
// values the owner sees, in the owner's order, and all copies end equal. A
// write is named by its origin node and that node's write number, so equal
// values written twice are told apart.
//
// It checks as the writes are applied and keeps, per word, only what is
// still undecided: the owner's writes that some node has not passed yet,
// and each node's writes the owner has not applied yet (a node applies its
// own writes before the owner does), plus the last SequenceKept writes of
// every copy for the reports. A node that gets more than CoherenceWindow
// writes ahead of the owner, or falls more than CoherenceWindow of the
// owner's writes behind without applying any, on one word, is reported as
// a violation (its order is no longer checked): in a correct run a node's
// writes wait for the owner only while they are on their way, and a copy
// that applies none of the owner's last CoherenceWindow writes has
// stopped taking them.
type Coherence struct {
	owner  int
	page   int
	nodes  []int
	at     map[int]int        // node -> its index in nodes; lookup only
	words  map[int]*wordCheck // word offset -> its check; lookup only (Violations sorts)
	ignore int
}

// SequenceKept is how many of the last writes of each copy of each word a
// Coherence checker keeps for Sequence and its reports.
const SequenceKept = 16

// CoherenceWindow bounds what a Coherence checker holds per node and word.
const CoherenceWindow = 4096

type write struct {
	origin int
	seq    uint64
	value  uint32
}

func (w write) String() string { return fmt.Sprintf("%d#%d=%d", w.origin, w.seq, w.value) }

// wordCheck is the check of one word.
type wordCheck struct {
	log    []write // the owner's writes from number base on
	base   uint64
	trimAt int
	peers  []peer // per entry of nodes (the owner's unused)
	tails  []tail // per entry of nodes
}

// peer is a copy's progress through the owner's order: greedily, each of
// its writes is matched with the first equal write of the owner after the
// previous match. pending holds its writes waiting for the owner (then pos
// is the owner's next write); failed says why it is no longer checked.
type peer struct {
	pos     uint64
	pending []write
	failed  string
}

// tail is the last SequenceKept writes of one copy of a word.
type tail struct {
	last  []write // a ring once full
	next  int
	total uint64
}

func (t *tail) add(w write) {
	t.total++
	if len(t.last) < SequenceKept {
		t.last = append(t.last, w)
		return
	}
	t.last[t.next] = w
	t.next = (t.next + 1) % SequenceKept
}

// writes returns the kept writes, oldest first.
func (t *tail) writes() []write {
	return append(slices.Clone(t.last[t.next:]), t.last[:t.next]...)
}

// String lists the kept writes, marking the ones no longer kept.
func (t *tail) String() string {
	s := fmt.Sprint(t.writes())
	if n := t.total - uint64(len(t.last)); n > 0 {
		s = fmt.Sprintf("[(%d earlier) %s", n, s[1:])
	}
	return s
}

// Watch hooks the checker onto h, the HIB of node (one of its nodes):
// every write h applies to the checker's page, and every reflected write it
// ignores, is fed to the checker after h's hooks already set. Hooks set on
// h later replace the checker's.
func (c *Coherence) Watch(node int, h *HIB) {
	prev := h.hooks
	h.SetHooks(Hooks{
		Applied: func(now clock.Time, off, v uint32, origin int, seq uint64) {
			if prev.Applied != nil {
				prev.Applied(now, off, v, origin, seq)
			}
			if int(off/PageBytes) != c.page {
				return
			}
			c.applied(node, int(off%PageBytes), write{origin, seq, v})
		},
		Ignored: func(now clock.Time, off, v uint32, origin int, seq uint64, own bool) {
			if prev.Ignored != nil {
				prev.Ignored(now, off, v, origin, seq, own)
			}
			c.ignore++
		},
	})
}

// NewCoherence returns a checker of page page of the copies held by
// nodes, owned by owner; Watch feeds it from the nodes' HIBs.
func NewCoherence(page, owner int, nodes []int) *Coherence {
	c := &Coherence{owner: owner, page: page, nodes: slices.Clone(nodes), at: map[int]int{}, words: map[int]*wordCheck{}}
	for i, n := range c.nodes {
		c.at[n] = i
	}
	return c
}

// word returns the check of word off, creating it.
func (c *Coherence) word(off int) *wordCheck {
	wc := c.words[off]
	if wc == nil {
		wc = &wordCheck{peers: make([]peer, len(c.nodes)), tails: make([]tail, len(c.nodes)), trimAt: 64}
		c.words[off] = wc
	}
	return wc
}

// applied takes write w that node n applied to word off.
func (c *Coherence) applied(n, off int, w write) {
	wc := c.word(off)
	i := c.at[n]
	wc.tails[i].add(w)
	if n == c.owner {
		c.ownerApplied(wc, w)
		return
	}
	p := &wc.peers[i]
	end := wc.base + uint64(len(wc.log))
	switch {
	case p.failed != "":
	case len(p.pending) > 0:
		if len(p.pending) == CoherenceWindow {
			p.failed = fmt.Sprintf("applied more than %d writes the owner has not applied", CoherenceWindow)
			p.pending = nil
			return
		}
		p.pending = append(p.pending, w)
	default:
		for j := p.pos; j < end; j++ {
			if wc.log[j-wc.base] == w {
				p.pos = j + 1
				return
			}
		}
		p.pos, p.pending = end, append(p.pending, w)
	}
}

// ownerApplied appends w to the owner's order: every copy waiting for the
// owner compares it with its next write.
func (c *Coherence) ownerApplied(wc *wordCheck, w write) {
	wc.log = append(wc.log, w)
	end := wc.base + uint64(len(wc.log))
	for i := range wc.peers {
		p := &wc.peers[i]
		if p.failed != "" || len(p.pending) == 0 {
			continue
		}
		p.pos = end
		if p.pending[0] == w {
			p.pending[0] = write{}
			p.pending = p.pending[1:]
			if len(p.pending) == 0 {
				p.pending = nil
			}
		}
	}
	if len(wc.log) >= wc.trimAt {
		c.trim(wc)
	}
}

// trim drops the owner's writes every copy has passed; a copy more than
// CoherenceWindow of them behind is no longer checked.
func (c *Coherence) trim(wc *wordCheck) {
	end := wc.base + uint64(len(wc.log))
	low := end
	for i, n := range c.nodes {
		p := &wc.peers[i]
		if n == c.owner || p.failed != "" {
			continue
		}
		if end-p.pos > CoherenceWindow {
			p.failed = fmt.Sprintf("applied none of the owner's last %d writes", CoherenceWindow)
			continue
		}
		low = min(low, p.pos)
	}
	wc.log = slices.Clone(wc.log[low-wc.base:])
	wc.base = low
	wc.trimAt = max(64, 2*len(wc.log))
}

// Ignored returns how many reflected writes the copies ignored.
func (c *Coherence) Ignored() int { return c.ignore }

// Sequence returns the last (at most SequenceKept) writes node applied to
// word off of the page, oldest first, as "origin#seq=value" strings.
func (c *Coherence) Sequence(node int, off uint32) []string {
	wc, ok := c.words[int(off%PageBytes)]
	i, in := c.at[node]
	if !ok || !in {
		return nil
	}
	var s []string
	for _, w := range wc.tails[i].writes() {
		s = append(s, w.String())
	}
	return s
}

// Violations returns every breach of the guarantee, word by word in order:
// a node whose sequence is not a subsequence of the owner's (with the last
// SequenceKept writes of both), a node that left the checker's window, and
// a word whose copies end different (the value each node's memory holds is read with
// final(node, off)).
func (c *Coherence) Violations(final func(node int, off uint32) uint32) []string {
	var out []string
	offs := slices.Sorted(maps.Keys(c.words))
	oi, hasOwner := c.at[c.owner]
	for _, off := range offs {
		wc := c.words[off]
		own := "[]"
		if hasOwner {
			own = wc.tails[oi].String()
		}
		for i, n := range c.nodes {
			p := &wc.peers[i]
			switch {
			case n == c.owner:
			case p.failed != "":
				out = append(out, fmt.Sprintf("word %#x: node %d %s: its order is no longer checked", off, n, p.failed))
			case len(p.pending) > 0:
				out = append(out, fmt.Sprintf("word %#x: node %d saw %v, not in the owner's order %v", off, n, wc.tails[i].String(), own))
			}
		}
		want := final(c.owner, uint32(c.page*PageBytes+off))
		for _, n := range c.nodes {
			if v := final(n, uint32(c.page*PageBytes+off)); v != want {
				out = append(out, fmt.Sprintf("word %#x: node %d ends with %d, the owner with %d", off, n, v, want))
			}
		}
	}
	return out
}

// Held returns the most the checker holds for one word: the owner's
// writes it keeps and the writes of one node waiting for the owner (both
// bounded by CoherenceWindow).
func (c *Coherence) Held() (log, pending int) {
	for _, wc := range c.words {
		log = max(log, len(wc.log))
		for _, p := range wc.peers {
			pending = max(pending, len(p.pending))
		}
	}
	return log, pending
}
