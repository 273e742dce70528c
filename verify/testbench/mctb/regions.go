package mctb

import (
	"fmt"
	"math/rand/v2"

	"github.com/nisim/nisim/host/cpu"
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

// MapAt maps a region whose receive frames the caller chooses: tx[i] says
// whether node i transmits into it, rxFrames[i] is node i's host frame of
// the region's first page (page-aligned; the region's pages follow it), 0
// when node i does not receive it. Cashmere-2L places a home node's master
// copy of a superpage at the shared pages' own address (Figure 1(c)), so
// the frame is not the bump allocator's. The frames are not reserved:
// the caller keeps them apart from RxBase's.
func (c *Cluster) MapAt(name string, bytes int, loopback bool, tx []bool, rxFrames []uint64) (Region, error) {
	if len(tx) != len(c.Nodes) || len(rxFrames) != len(c.Nodes) {
		return Region{}, fmt.Errorf("mctb: region %s: tx and rxFrames must have one entry per node (%d)", name, len(c.Nodes))
	}
	pb := uint64(c.Config.Adapter.PageBytes)
	mem := c.Config.Host.Memory.SizeBytes
	rx := make([]bool, len(c.Nodes))
	for i, f := range rxFrames {
		if f == 0 {
			continue
		}
		pages := (uint64(max(bytes, 1)) + pb - 1) / pb
		if f%pb != 0 || f+pages*pb > mem {
			return Region{}, fmt.Errorf("mctb: region %s: node %d's frame %#x must be page-aligned with %d pages inside memory (%#x bytes)", name, i, f, pages, mem)
		}
		rx[i] = true
	}
	return c.mapRegionAt(name, bytes, loopback, tx, rx, rxFrames)
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
	return c.mapRegionAt(name, bytes, loopback, tx, rx, nil)
}

// mapRegionAt is mapRegion with the receive frames given (at[i], for the
// nodes in rx) instead of the bump allocator's when at is not nil.
func (c *Cluster) mapRegionAt(name string, bytes int, loopback bool, tx, rx []bool, at []uint64) (Region, error) {
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
		if rx[i] && at == nil && c.nextRx[i]+uint64(pages*pb) > mem {
			return Region{}, fmt.Errorf("mctb: region %s: node %d's receive frames would pass the end of memory (%#x)", name, i, mem)
		}
	}
	r := Region{Name: name, Bytes: bytes, Pages: pages, GlobalPage: c.nextGlobal, Loopback: loopback,
		Tx: make([]uint64, len(c.Nodes)), Rx: make([]uint64, len(c.Nodes))}
	for i, n := range c.Nodes {
		rxBase := c.nextRx[i]
		if at != nil {
			rxBase = at[i]
		}
		for k := range pages {
			g := r.GlobalPage + k
			if tx[i] {
				if err := n.Adapter.MapTx(c.nextTx[i]+k, g, loopback); err != nil {
					return Region{}, fmt.Errorf("mctb: region %s: %w", name, err)
				}
			}
			if rx[i] {
				frame := rxBase + uint64(k*pb)
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
			r.Rx[i] = rxBase
			if at == nil {
				c.nextRx[i] += uint64(pages * pb)
			}
		}
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

// RandomRegions maps a random set of regions for Traffic (the randomised
// spec and the benchmark): two broadcast regions and one point-to-point
// region per node, each with loop-back at random, and one loop-back
// region; each of 128 bytes (hot words), 1 KB or 8.5 KB (two pages, so
// that bursts cross a page end), at random.
func (c *Cluster) RandomRegions(rng *rand.Rand) ([]Region, error) {
	sizes := []int{128, 1024, 8192 + 512}
	size := func() int { return sizes[rng.IntN(len(sizes))] }
	var out []Region
	add := func(r Region, err error) error {
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	}
	for i := range 2 {
		if err := add(c.Broadcast(fmt.Sprintf("bcast%d", i), size(), rng.IntN(2) == 1)); err != nil {
			return nil, err
		}
	}
	for i := range c.Nodes {
		tx := c.all()
		tx[i] = false
		rx := make([]bool, len(c.Nodes))
		rx[i] = true
		lb := rng.IntN(2) == 1
		if lb {
			tx[i] = true // loop-back only matters if the owner writes too
		}
		if err := add(c.Map(fmt.Sprintf("p2p%d", i), size(), lb, tx, rx)); err != nil {
			return nil, err
		}
	}
	if err := add(c.Loopback("loop", size())); err != nil {
		return nil, err
	}
	return out, nil
}

// Traffic is a random load of Memory Channel writes: every CPU of every
// node makes Writes writes of MinBytes..MaxBytes (word multiples, at
// word-aligned offsets) to regions it transmits into, chosen at random,
// with 0..MaxGap CPU cycles of work before each; with LoadEvery > 0 about
// one operation in LoadEvery is instead a 32-bit load of a random word of
// a region the node receives, checked against Ref (CheckLoad32; needs
// Ref.KeepHistory).
type Traffic struct {
	Writes             int
	MinBytes, MaxBytes int
	MaxGap             int
	LoadEvery          int
}

// Validate checks the traffic's parameters; an error names the field.
func (t Traffic) Validate() error {
	switch {
	case t.Writes < 0:
		return fmt.Errorf("mctb: traffic Writes %d must not be negative", t.Writes)
	case t.MinBytes < 4 || t.MinBytes%4 != 0:
		return fmt.Errorf("mctb: traffic MinBytes %d must be a positive multiple of 4", t.MinBytes)
	case t.MaxBytes < t.MinBytes || t.MaxBytes%4 != 0:
		return fmt.Errorf("mctb: traffic MaxBytes %d must be a multiple of 4 of at least MinBytes %d", t.MaxBytes, t.MinBytes)
	case t.MaxGap < 0:
		return fmt.Errorf("mctb: traffic MaxGap %d must not be negative", t.MaxGap)
	case t.LoadEvery < 0:
		return fmt.Errorf("mctb: traffic LoadEvery %d must not be negative", t.LoadEvery)
	}
	return nil
}

// StartTraffic gives every CPU of every node its program of random writes
// to regions (Traffic). Each CPU draws from its own stream of the Env's
// seed (Env.Rand, named after the CPU), so the load is the same in every
// run with the same seed, whatever the order the CPUs run in. The program
// ends with a fence (every store performed). A region a node neither
// transmits into nor receives is skipped for that node.
func (c *Cluster) StartTraffic(t Traffic, regions []Region) error {
	if err := t.Validate(); err != nil {
		return err
	}
	for _, r := range regions {
		if r.Bytes < t.MaxBytes {
			return fmt.Errorf("mctb: traffic MaxBytes %d exceeds region %s (%d bytes)", t.MaxBytes, r.Name, r.Bytes)
		}
	}
	for _, n := range c.Nodes {
		var tx, rx []Region
		for _, r := range regions {
			if r.Tx[n.ID] != 0 {
				tx = append(tx, r)
			}
			if r.Rx[n.ID] != 0 {
				rx = append(rx, r)
			}
		}
		if len(tx) == 0 {
			continue
		}
		for _, cp := range n.CPUs {
			rng := c.Env.Rand(fmt.Sprintf("%s.traffic", cp.Name()))
			id := n.ID
			cp.Run(cpu.Go(func(p *cpu.Proc) {
				for range t.Writes {
					if t.MaxGap > 0 {
						if g := rng.IntN(t.MaxGap + 1); g > 0 {
							p.Compute(g)
						}
					}
					if t.LoadEvery > 0 && len(rx) > 0 && rng.IntN(t.LoadEvery) == 0 {
						r := rx[rng.IntN(len(rx))]
						a := r.Rx[id] + 4*uint64(rng.IntN(r.Bytes/4))
						v := p.Load32(a)
						c.CheckLoad32(p.Now(), id, a, v)
						continue
					}
					r := tx[rng.IntN(len(tx))]
					size := t.MinBytes + 4*rng.IntN((t.MaxBytes-t.MinBytes)/4+1)
					off := 4 * rng.IntN((r.Bytes-size)/4+1)
					data := make([]byte, size)
					for i := range data {
						data[i] = byte(rng.Uint32())
					}
					p.Do(cpu.Op{Kind: cpu.Store, Addr: r.Tx[id] + uint64(off), Data: data, Burst: true})
				}
				p.Fence()
			}))
		}
	}
	return nil
}
