package telegraphos

import (
	"fmt"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
)

// Replicate sets up page page of every node in nodes as copies of one
// replicated page owned by owner (the first-listed node need not be the
// owner): the owner maps the page out to the others, each other node holds
// a copy whose writes go to the owner (or, without owner ordering, to every
// other copy).
func (cl *Cluster) Replicate(page, owner int, nodes []int) error {
	var copies []Copy
	for _, n := range nodes {
		if n != owner {
			copies = append(copies, Copy{Node: n, Page: page})
		}
	}
	if err := cl.Nodes[owner].HIB.MapOut(page, copies...); err != nil {
		return err
	}
	for _, n := range nodes {
		if n == owner {
			continue
		}
		var peers []Copy
		for _, m := range nodes {
			if m != n {
				peers = append(peers, Copy{Node: m, Page: page})
			}
		}
		if err := cl.Nodes[n].HIB.SetReplica(page, Copy{Node: owner, Page: page}, peers...); err != nil {
			return err
		}
	}
	return nil
}

// Coherence records, for every word of a replicated page, the sequence of
// writes each copy applies, and checks the guarantee of the counter-based
// protocol (2.3.3): every node sees a subsequence of the values the owner
// sees, in the owner's order, and all copies end equal. A write is named by
// its origin node and that node's write number, so equal values written
// twice are told apart.
type Coherence struct {
	owner  int
	page   int
	nodes  []int
	seen   map[[2]int][]write // (node, word) -> applied writes, in order
	final  map[[2]int]write
	ignore int
}

type write struct {
	origin int
	seq    uint64
	value  uint32
}

func (w write) String() string { return fmt.Sprintf("%d#%d=%d", w.origin, w.seq, w.value) }

// WatchCoherence hooks the checker onto the HIBs of nodes for page page
// owned by owner.
func (cl *Cluster) WatchCoherence(page, owner int, nodes []int) *Coherence {
	c := &Coherence{owner: owner, page: page, nodes: slices.Clone(nodes), seen: map[[2]int][]write{}, final: map[[2]int]write{}}
	for _, n := range nodes {
		n := n
		h := cl.Nodes[n].HIB
		prev := h.hooks
		h.SetHooks(Hooks{
			Applied: func(now clock.Time, off, v uint32, origin int, seq uint64) {
				if prev.Applied != nil {
					prev.Applied(now, off, v, origin, seq)
				}
				if int(off/PageBytes) != page {
					return
				}
				k := [2]int{n, int(off % PageBytes)}
				c.seen[k] = append(c.seen[k], write{origin, seq, v})
			},
			Ignored: func(now clock.Time, off, v uint32, origin int, seq uint64, own bool) {
				if prev.Ignored != nil {
					prev.Ignored(now, off, v, origin, seq, own)
				}
				c.ignore++
			},
		})
	}
	return c
}

// Ignored returns how many reflected writes the copies ignored.
func (c *Coherence) Ignored() int { return c.ignore }

// Sequence returns the writes node applied to word off of the page, as
// "origin#seq=value" strings.
func (c *Coherence) Sequence(node int, off uint32) []string {
	var s []string
	for _, w := range c.seen[[2]int{node, int(off % PageBytes)}] {
		s = append(s, w.String())
	}
	return s
}

// Violations returns every breach of the guarantee, word by word in order:
// a node whose sequence is not a subsequence of the owner's, and a word
// whose copies end different (the value each node's memory holds is read
// with final(node, off)).
func (c *Coherence) Violations(final func(node int, off uint32) uint32) []string {
	var out []string
	words := map[int]bool{}
	for k := range c.seen {
		words[k[1]] = true
	}
	var offs []int
	for w := range words {
		offs = append(offs, w)
	}
	slices.Sort(offs)
	for _, off := range offs {
		own := c.seen[[2]int{c.owner, off}]
		for _, n := range c.nodes {
			if n == c.owner {
				continue
			}
			s := c.seen[[2]int{n, off}]
			if !subsequence(s, own) {
				out = append(out, fmt.Sprintf("word %#x: node %d saw %v, not in the owner's order %v", off, n, s, own))
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

// subsequence reports whether s is a subsequence of t.
func subsequence(s, t []write) bool {
	i := 0
	for _, w := range t {
		if i < len(s) && s[i] == w {
			i++
		}
	}
	return i == len(s)
}
