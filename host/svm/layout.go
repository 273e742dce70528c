package svm

import "fmt"

// Layout is every node's memory map (the same addresses on every node: the
// shared pages sit at one address everywhere, as the SVM systems map the
// shared address space, so a page's copy, its home copy and its binding
// have one offset).
type Layout struct {
	// Shared is the shared pages; Twin their twins; Mirror HLRC-AU's diff
	// pages (page pg's bound to its home's copy).
	Shared, Twin, Mirror uint64
	// Inbox is the request rings: a ring of Ring slots of SlotBytes per
	// sending node (exported with notifications).
	Inbox uint64
	// Reply is the reply slot (grants, barrier releases, a page reply's
	// seal): one page, its seal in the last word.
	Reply uint64
	// Ack is the acknowledgement words, one per node (a home's count of
	// this node's acknowledged messages), written by deliberate update.
	Ack uint64
	// TS is the timestamp words, one per node, written by automatic update
	// through the writers' TSOut pages; TSOut's page j is bound to node
	// j's TS page.
	TS, TSOut uint64
	// OutMain and OutIntr stage outgoing messages of the program and of
	// the notification handler.
	OutMain, OutIntr uint64
	// End is the first address past the map.
	End uint64
	// Ring is the slots per sender, SlotBytes their size.
	Ring, SlotBytes int

	nodes, pages, page int
}

// layoutBase is where the map starts. assumed: above the low megabyte
// (the PC's conventional memory and the kernel's own pages).
const layoutBase = 0x10_0000

// SlotBytes is a request slot's size. assumed: 1 KB, four a page, room for
// a request's vector time and 120 diff words.
const SlotBytes = 1024

// ringSpare is the slots of a sender's ring beyond the messages the
// handlers send without waiting for room (lock and flag forwards, at most
// one per other node's outstanding request): the window of the messages
// a sender counts and waits on. assumed: 4.
const ringSpare = 4

// NewLayout lays out c's regions from layoutBase.
func NewLayout(c Config) (Layout, error) {
	pb := uint64(c.PageBytes)
	l := Layout{nodes: c.Nodes, pages: c.Pages, page: c.PageBytes, SlotBytes: SlotBytes, Ring: c.Nodes + ringSpare}
	s := uint64(c.Pages) * pb
	l.Shared = layoutBase
	l.Twin = l.Shared + s
	l.Mirror = l.Twin + s
	l.Inbox = l.Mirror + s
	inbox := (uint64(c.Nodes*l.Ring*SlotBytes) + pb - 1) / pb * pb
	l.Reply = l.Inbox + inbox
	l.Ack = l.Reply + pb
	l.TS = l.Ack + pb
	l.TSOut = l.TS + pb
	l.OutMain = l.TSOut + uint64(c.Nodes)*pb
	l.OutIntr = l.OutMain + pb
	l.End = l.OutIntr + pb
	if pb < 8*uint64(c.Nodes) {
		return Layout{}, fmt.Errorf("svm: %d-byte pages cannot hold %d acknowledgement words", pb, c.Nodes)
	}
	return l, nil
}

// Home returns page pg's home node. assumed: the shared pages split in
// contiguous blocks, block i homed at node i (the SPLASH-2 programs give
// each process a contiguous partition of their arrays, which a first-touch
// placement would home there; the paper does not say how its homes were
// chosen).
func (l Layout) Home(pg int) int { return pg * l.nodes / l.pages }

// Block returns the pages homed at node b: [first, end).
func (l Layout) Block(b int) (first, end int) {
	first = (b*l.pages + l.nodes - 1) / l.nodes
	end = ((b+1)*l.pages + l.nodes - 1) / l.nodes
	return first, end
}

// ImportPages is the most OPT entries a node's imports take: from every
// other node j, its copy of this node's home pages (the page replies land
// there) and, under the automatic-update protocols, j's home pages (the
// bindings' targets) and its timestamp page; j's inbox, reply and
// acknowledgement pages.
func (l Layout) ImportPages(c Config) int {
	pb := uint64(c.PageBytes)
	fixed := int((l.Reply-l.Inbox)/pb) + 2
	if c.au() {
		fixed++
	}
	most := 0
	for i := range c.Nodes {
		fi, ei := l.Block(i)
		n := 0
		for j := range c.Nodes {
			if j == i {
				continue
			}
			n += fixed + ei - fi
			if c.au() {
				fj, ej := l.Block(j)
				n += ej - fj
			}
		}
		most = max(most, n)
	}
	return most
}

// Page returns the shared address of page pg.
func (l Layout) Page(pg int) uint64 { return l.Shared + uint64(pg)*uint64(l.page) }

// slot returns the address of slot k of sender src's ring in an inbox.
func (l Layout) slot(src, k int) uint64 {
	return l.Inbox + uint64((src*l.Ring+k)*l.SlotBytes)
}
