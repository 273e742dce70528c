package telegraphos

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
)

// Copy names one copy of a page: a node and the page's number in that
// node's shared memory.
type Copy struct {
	Node, Page int
}

// pageMode is a local page's part in replication.
type pageMode uint8

const (
	plainPage   pageMode = iota
	ownerPage            // this node owns the page; copies are elsewhere (2.2.7, 2.3.1)
	replicaPage          // this node holds a copy; the owner is elsewhere
)

// pageState is a local page's entry in the replication directory.
type pageState struct {
	mode   pageMode
	owner  Copy   // replicaPage: the owner's copy
	copies []Copy // ownerPage: the copies to reflect writes to; replicaPage without owner ordering: the other copies
}

// MapOut makes this node the owner of its page and maps it out to copies:
// every write to the page, by this node's processor or forwarded by a
// copy's node, is applied here and then sent to every copy (eager update,
// 2.2.7; reflected writes, 2.3.1). It errors if the multicast list
// (MulticastEntries in all) would overflow.
func (h *HIB) MapOut(page int, copies ...Copy) error {
	if err := h.checkPage(page); err != nil {
		return err
	}
	used := 0
	for _, p := range h.pagesInOrder() {
		if p != page {
			used += len(h.pages[p].copies)
		}
	}
	if used+len(copies) > h.cfg.MulticastEntries {
		return fmt.Errorf("%s: multicast list full (%d of %d entries used, %d more wanted)", h.Name(), used, h.cfg.MulticastEntries, len(copies))
	}
	for _, c := range copies {
		if err := h.checkCopy(c); err != nil {
			return err
		}
	}
	h.pages[page] = &pageState{mode: ownerPage, copies: append([]Copy(nil), copies...)}
	return nil
}

// SetReplica makes this node's page a copy of the owner's page. Writes to
// it are applied here and forwarded to the owner, which orders them. With
// OwnerOrdering off the node instead multicasts its writes to peers (every
// other copy, the owner's included) itself.
func (h *HIB) SetReplica(page int, owner Copy, peers ...Copy) error {
	if err := h.checkPage(page); err != nil {
		return err
	}
	if err := h.checkCopy(owner); err != nil {
		return err
	}
	if owner.Node == h.node {
		return fmt.Errorf("%s: page %d cannot be a copy of a page of its own node", h.Name(), page)
	}
	h.pages[page] = &pageState{mode: replicaPage, owner: owner, copies: append([]Copy(nil), peers...)}
	return nil
}

func (h *HIB) checkPage(page int) error {
	if page < 0 || page >= PagesPerNode {
		return fmt.Errorf("%s: page %d is not in 0..%d", h.Name(), page, PagesPerNode-1)
	}
	return nil
}

func (h *HIB) checkCopy(c Copy) error {
	if c.Node < 0 || c.Node >= h.nodes || c.Page < 0 || c.Page >= PagesPerNode {
		return fmt.Errorf("%s: copy %+v is not a page of nodes 0..%d", h.Name(), c, h.nodes-1)
	}
	return nil
}

// pagesInOrder returns the pages with an entry, ascending (never iterate
// the map itself where the order matters).
func (h *HIB) pagesInOrder() []int {
	var ps []int
	for p := range PagesPerNode {
		if _, ok := h.pages[p]; ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// SetPageCounters sets the read and write access counters of a remote
// page (the OS's job, 2.2.6): each remote access decrements its counter
// unless it is 0, and the 1-to-0 step raises an interrupt.
func (h *HIB) SetPageCounters(globalPage int, read, write uint32) {
	mx := uint32(1)<<h.cfg.PageCounterBits - 1
	h.counters[globalPage] = &[2]uint32{min(read, mx), min(write, mx)}
}

// PageCounters returns a remote page's read and write counters.
func (h *HIB) PageCounters(globalPage int) (read, write uint32) {
	if c := h.counters[globalPage]; c != nil {
		return c[0], c[1]
	}
	return 0, 0
}

// countAccess decrements the counter of a remote access and raises the
// alarm on the step from 1 to 0.
func (h *HIB) countAccess(now clock.Time, node int, off uint32, write bool) {
	gp := GlobalPage(node, off)
	c := h.counters[gp]
	i := 0
	if write {
		i = 1
	}
	if c == nil || c[i] == 0 {
		return
	}
	c[i]--
	if c[i] == 0 {
		h.stats.PageAlarms++
		h.intPage = uint32(gp)
		h.interrupt(now, IntPageCounter)
	}
}

// context is a Telegraphos context: the registers of one special
// operation (Telegraphos II, 2.2.4).
type context struct {
	key   uint16
	op    uint32
	data  [2]uint32
	args  [2]uint32 // physical addresses (window offsets of shared memory)
	nargs int
}

// SetContextKey sets the key of context ctx (the OS gives a context and
// its key to a process).
func (h *HIB) SetContextKey(ctx int, key uint16) error {
	if ctx < 0 || ctx >= len(h.ctxs) {
		return fmt.Errorf("%s: context %d is not in 0..%d", h.Name(), ctx, len(h.ctxs)-1)
	}
	h.ctxs[ctx].key = key
	return nil
}

// Context returns context ctx's operation, operands and addresses, for
// tests.
func (h *HIB) Context(ctx int) (op uint32, data [2]uint32, args []uint32) {
	c := h.ctxs[ctx]
	return c.op, c.data, append([]uint32(nil), c.args[:c.nargs]...)
}

// specialMode is Telegraphos I's argument latch: after a write of an
// operation to RegMode, shared-memory stores pass their addresses and data
// as arguments until RegLaunch is read (2.2.4, run in PAL code).
type specialMode struct {
	on    bool
	op    uint32
	args  [2]uint32
	data  [2]uint32
	nargs int
}
