package mctb

import (
	"fmt"
)

// Region is a range of the global Memory Channel address space mapped on
// the nodes as Cashmere-2L maps it (Figure 1). Every region starts on a
// page boundary and takes whole pages (MC-P6 «page-level connection
// granularity»), in every node's transmit window and in host memory alike.
type Region struct {
	// Name is the caller's name for the region (messages, traces).
	Name string
	// Bytes is the size asked for; Pages whole pages are mapped.
	Bytes int
	// Pages is the number of 8 KB pages mapped.
	Pages int
	// GlobalPage is the first global MC page; the region covers
	// GlobalPage..GlobalPage+Pages-1.
	GlobalPage int
	// Loopback is set when the transmit entries ask the hub to deliver
	// the region's writes to their writer too (MC-P8).
	Loopback bool
	// Tx[i] is node i's CPU (memory bus and PCI) address of the region in
	// its transmit window, 0 when node i does not transmit into it.
	Tx []uint64
	// Rx[i] is node i's host physical address of its receive copy (the
	// process's address too: identity-mapped), 0 when node i does not
	// receive the region.
	Rx []uint64
}

// TxAddr returns node's transmit address of byte off of the region, or an
// error when node does not transmit into it or off is outside it.
func (r Region) TxAddr(node, off int) (uint64, error) { return r.addr(r.Tx, "transmit", node, off) }

// RxAddr returns node's host address of byte off of its receive copy, or
// an error when node does not receive the region or off is outside it.
func (r Region) RxAddr(node, off int) (uint64, error) { return r.addr(r.Rx, "receive", node, off) }

func (r Region) addr(a []uint64, what string, node, off int) (uint64, error) {
	switch {
	case node < 0 || node >= len(a):
		return 0, fmt.Errorf("mctb: region %s: node %d is not in 0..%d", r.Name, node, len(a)-1)
	case a[node] == 0:
		return 0, fmt.Errorf("mctb: region %s: node %d has no %s mapping", r.Name, node, what)
	case off < 0 || off >= r.Bytes:
		return 0, fmt.Errorf("mctb: region %s: offset %d is not in 0..%d", r.Name, off, r.Bytes-1)
	}
	return a[node] + uint64(off), nil
}

// Broadcast maps a region every node transmits into and receives, with or
// without loop-back. Cashmere-2L's shared pages: a process writes its own
// receive copy and the transmit window (doubling, Figure 1: two stores),
// so the others' copies follow through the hub, its own through its
// store.
func (c *Cluster) Broadcast(name string, bytes int, loopback bool) (Region, error) {
	all := c.all()
	return c.mapRegion(name, bytes, loopback, all, all)
}

// PointToPoint maps a region that owner receives and every other node
// transmits into, without loop-back: Cashmere-2L's per-processor
// message and write-notice regions.
func (c *Cluster) PointToPoint(name string, owner, bytes int) (Region, error) {
	if owner < 0 || owner >= len(c.Nodes) {
		return Region{}, fmt.Errorf("mctb: region %s: owner %d is not in 0..%d", name, owner, len(c.Nodes)-1)
	}
	tx := make([]bool, len(c.Nodes))
	rx := make([]bool, len(c.Nodes))
	for i := range tx {
		tx[i] = i != owner
	}
	rx[owner] = true
	return c.mapRegion(name, bytes, false, tx, rx)
}

// Loopback maps a region every node transmits into and receives, with
// loop-back: a node sees its own writes come back through the hub, in the
// global order. The MC lock's array and the MC flush use it (section 2.1:
// «loop-back to see one's own write»).
func (c *Cluster) Loopback(name string, bytes int) (Region, error) {
	all := c.all()
	return c.mapRegion(name, bytes, true, all, all)
}

// Map maps a region with explicit sets: tx[i] and rx[i] say whether node
// i transmits into and receives it (the negative tests' odd mappings).
func (c *Cluster) Map(name string, bytes int, loopback bool, tx, rx []bool) (Region, error) {
	if len(tx) != len(c.Nodes) || len(rx) != len(c.Nodes) {
		return Region{}, fmt.Errorf("mctb: region %s: tx and rx must have one entry per node (%d)", name, len(c.Nodes))
	}
	return c.mapRegion(name, bytes, loopback, tx, rx)
}

func (c *Cluster) all() []bool {
	a := make([]bool, len(c.Nodes))
	for i := range a {
		a[i] = true
	}
	return a
}

// mapRegion allocates the region's global pages, and on every node in tx
// its transmit window pages, on every node in rx its receive frames
// (bump allocators, nothing is ever freed), and writes the adapters'
// tables through their back doors (set-up before the run).
func (c *Cluster) mapRegion(name string, bytes int, loopback bool, tx, rx []bool) (Region, error) {
	a := c.Config.Adapter
	pb := a.PageBytes
	if bytes < 1 {
		return Region{}, fmt.Errorf("mctb: region %s: size %d must be at least 1", name, bytes)
	}
	pages := (bytes + pb - 1) / pb
	if c.nextGlobal+pages > a.GlobalPages {
		return Region{}, fmt.Errorf("mctb: region %s: %d pages exceed the %d global pages (%d used)", name, pages, a.GlobalPages, c.nextGlobal)
	}
	mem := c.Config.Host.Memory.SizeBytes
	for i := range c.Nodes {
		if tx[i] && c.nextTx[i]+pages > a.TxPages {
			return Region{}, fmt.Errorf("mctb: region %s: node %d's transmit window has %d of %d pages left", name, i, a.TxPages-c.nextTx[i], a.TxPages)
		}
		if rx[i] && c.nextRx[i]+uint64(pages*pb) > mem {
			return Region{}, fmt.Errorf("mctb: region %s: node %d's receive frames would pass the end of memory (%#x)", name, i, mem)
		}
	}
	r := Region{Name: name, Bytes: bytes, Pages: pages, GlobalPage: c.nextGlobal, Loopback: loopback,
		Tx: make([]uint64, len(c.Nodes)), Rx: make([]uint64, len(c.Nodes))}
	for i, n := range c.Nodes {
		for k := range pages {
			g := r.GlobalPage + k
			if tx[i] {
				if err := n.Adapter.MapTx(c.nextTx[i]+k, g, loopback); err != nil {
					return Region{}, fmt.Errorf("mctb: region %s: %w", name, err)
				}
			}
			if rx[i] {
				frame := c.nextRx[i] + uint64(k*pb)
				if err := c.MapRx(i, g, frame); err != nil {
					return Region{}, fmt.Errorf("mctb: region %s: %w", name, err)
				}
			}
		}
		if tx[i] {
			r.Tx[i] = c.Config.TxBase + uint64(c.nextTx[i]*pb)
			c.nextTx[i] += pages
		}
		if rx[i] {
			r.Rx[i] = c.nextRx[i]
			c.nextRx[i] += uint64(pages * pb)
		}
	}
	if err := c.mapHub(r, tx, rx); err != nil {
		return Region{}, fmt.Errorf("mctb: region %s: %w", name, err)
	}
	c.nextGlobal += pages
	c.regions = append(c.regions, r)
	return r, nil
}

// MapRx maps global page gpage for receive on node into the host frame at
// frame, in the adapter's table and in Ref.
func (c *Cluster) MapRx(node, gpage int, frame uint64) error {
	if err := c.Nodes[node].Adapter.MapRx(gpage, frame); err != nil {
		return err
	}
	c.Ref.MapRx(node, gpage, frame)
	return nil
}

// UnmapRx stops node receiving global page gpage, in the adapter's table
// and in Ref (a page not mapped for receive: its packets are dropped by
// the receive filter, and nothing is expected of them).
func (c *Cluster) UnmapRx(node, gpage int) error {
	if err := c.Nodes[node].Adapter.UnmapRx(gpage); err != nil {
		return err
	}
	c.Ref.UnmapRx(node, gpage)
	return nil
}
