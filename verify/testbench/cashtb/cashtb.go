// Package cashtb is the testbench of Cashmere-2L on the Memory Channel
// cluster (cashmere-2l-memory-channel.txt sections 2.3-3.1; design
// docs/cashmere-design.md): it builds an mctb cluster for a P:C
// configuration (P/C nodes of C CPUs), maps the runtime's regions as
// Figure 1 does, installs a page table and the runtime's fault handler on
// every CPU, starts one process per CPU on a program, runs it to
// completion and returns the final shared memory (read from the home
// copies), the per-process statistics and the run's simulated time.
//
// The Memory Channel checkers (mctb: mc.once, mc.order, mc.torn,
// mc.scoreboard) and the runtime's (host/cashmere: cashmere.*) are always
// on; Run's error joins their violations.
package cashtb

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/mctb"
)

// Program is what the processes run: the shared space's size, its locks
// and flags, and the code every process runs (host/cashapps's programs,
// wrapped, once merged).
type Program interface {
	Name() string
	SharedBytes() uint64
	Locks() int
	Flags() int
	Run(p *cashmere.Process)
}

// Config is one run's cluster and runtime.
type Config struct {
	// Nodes and CPUs are the P:C configuration's P/C and C (section 3.3.3
	// «Effect of Clustering»).
	Nodes, CPUs int
	// SuperpagePages is the pages per superpage.
	SuperpagePages int
	// Variant is the protocol (section 2.6, cashmere.Variant2L ...);
	// empty means cashmere.Variant2L.
	Variant string
	// Interrupts is cashmere.Config.Interrupts: requests interrupt
	// instead of being polled for (interrupt.go wires the adapters).
	Interrupts bool
	// Cluster is the hardware; its Nodes and CPUs are set from the above.
	Cluster mctb.Config
	// Events, when set, is told of the runtime's protocol events
	// (cashmere.Hooks.Event; the goldens, golden_test.go).
	Events func(cashmere.Event)
}

// DefaultConfig is the paper's 32 processors: 8 nodes of 4 (section 3),
// one-page superpages (assumed: the paper sizes superpages by dividing the
// application's memory by the kernel's MC regions, a count it does not
// give; one page gives first touch its finest grain).
func DefaultConfig() Config {
	return Config{Nodes: 8, CPUs: 4, SuperpagePages: 1, Cluster: mctb.DefaultConfig()}
}

// Node memory layout. assumed: the paper gives no address map; the shared
// pages, their twins and the protocol words sit below mctb's receive
// frames (RxBase, 128 MB), each area 32 MB (4096 pages). The twins start
// half the B-cache (512 KB) and half the D-cache (8 KB) past a multiple of
// 32 MB, so that a page and its twin do not share a set of the 21064A's
// direct-mapped caches (at 32 MB apart every load of the page and store
// of the twin would evict each other: a twin copy measured 805 µs so,
// against 199 µs in section 3.1).
const (
	sharedBase = 16 << 20
	twinBase   = 48<<20 + 512<<10 + 8<<10
	metaBase   = 81 << 20
	maxPages   = 4096
)

// Validate checks the configuration; an error names the field.
func (c Config) Validate() error {
	switch {
	case c.Nodes < 1 || c.Nodes > cashmere.MaxNodes:
		return fmt.Errorf("cashtb: Nodes %d must be in 1..%d", c.Nodes, cashmere.MaxNodes)
	case c.CPUs < 1 || c.CPUs > c.Cluster.Host.CPU.Count:
		return fmt.Errorf("cashtb: CPUs %d must be in 1..%d (Cluster.Host.CPU.Count)", c.CPUs, c.Cluster.Host.CPU.Count)
	case c.SuperpagePages < 1:
		return fmt.Errorf("cashtb: SuperpagePages %d must be at least 1", c.SuperpagePages)
	}
	return nil
}

// Bench is a built cluster with its runtime.
type Bench struct {
	Env     *env.Env
	Cluster *mctb.Cluster
	Runtime *cashmere.Runtime
	Procs   []*cashmere.Process
	data    []mctb.Region
	prog    Program
	// offset is each protocol node's data displacement and cpus the CPUs
	// per node under 1LD (nil, 0 otherwise).
	offset []uint64
	cpus   int
	// poll[r] is protocol node r's poll-flag region (the receive
	// interrupts' pages under Config.Interrupts).
	poll []mctb.Region
}

// Build builds the cluster and the runtime for prog on e.
func Build(e *env.Env, c Config, prog Program) (*Bench, error) {
	if e == nil {
		return nil, errors.New("cashtb: no env")
	}
	if prog == nil {
		return nil, errors.New("cashtb: no program")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	bytes := prog.SharedBytes()
	if bytes == 0 || bytes%cashmere.PageBytes != 0 || bytes/cashmere.PageBytes > maxPages {
		return nil, fmt.Errorf("cashtb: program %s: SharedBytes %d must be a positive multiple of %d, at most %d pages", prog.Name(), bytes, cashmere.PageBytes, maxPages)
	}
	mc := c.Cluster
	mc.Nodes, mc.CPUs = c.Nodes, c.CPUs
	cl, err := mctb.Build(e, mc)
	if err != nil {
		return nil, fmt.Errorf("cashtb: %w", err)
	}
	variant := c.Variant
	if variant == "" {
		variant = cashmere.Variant2L
	}
	rc := cashmere.Config{Variant: variant, Nodes: c.Nodes, CPUs: c.CPUs,
		Pages: int(bytes / cashmere.PageBytes), SuperpagePages: c.SuperpagePages,
		Locks: prog.Locks(), Flags: prog.Flags(), Interrupts: c.Interrupts,
		// assumed: the remapping system call costs what an mprotect does
		// (55 µs, section 3.1), the one kernel memory-mapping call the
		// paper times; it happens once per superpage.
		RemapCycles: mc.Host.OS.Mprotect}
	if err := rc.Validate(); err != nil {
		return nil, err
	}
	if rc.OneLevel() && rc.Pages*c.CPUs > maxPages {
		return nil, fmt.Errorf("cashtb: program %s: %d pages times %d CPUs (1LD: a copy per processor) exceed %d", prog.Name(), rc.Pages, c.CPUs, maxPages)
	}
	b := &Bench{Env: e, Cluster: cl, prog: prog}
	lay, err := b.mapRegions(rc)
	if err != nil {
		return nil, err
	}
	hooks := cashmere.Hooks{
		Remap:       b.remap,
		LocalWrite:  func(node int, addr uint64, data []byte) { cl.Ref.LocalWrite(node, addr, data) },
		Peek:        b.peek,
		PeekOrdered: b.peekOrdered,
		Event:       c.Events,
	}
	rt, err := cashmere.New(e, rc, lay, hooks)
	if err != nil {
		return nil, err
	}
	b.Runtime = rt
	for i, n := range cl.Nodes {
		for j, cp := range n.CPUs {
			pr, err := rt.Install(cp, i, j)
			if err != nil {
				return nil, err
			}
			b.Procs = append(b.Procs, pr)
		}
	}
	if c.Interrupts {
		if err := b.wireInterrupts(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// mapRegions maps Figure 1's regions: the home copies (a point-to-point
// region per superpage, received at the shared pages' own address by its
// round-robin home, transmitted by every node), the broadcast directory,
// a message and a poll region per node, the loop-back lock region, the
// broadcast barrier and flag region.
//
// Under 1LD (every processor a protocol node, rc.Protocol()) the slices are
// by protocol node, each processor's data is displaced by its CPU's index
// times the shared pages' span (Layout.Offset), and the home-copy, message
// and poll regions loop back, so that a processor sends to another of its
// own node through the Memory Channel as to any other (no intra-node
// hardware coherence exploited); the directory and the barrier region stay
// one replica per cluster node, each word written by one protocol node.
func (b *Bench) mapRegions(rc cashmere.Config) (cashmere.Layout, error) {
	cl := b.Cluster
	n := rc.Nodes
	all := make([]bool, n)
	for i := range all {
		all[i] = true
	}
	if rc.OneLevel() {
		return b.mapRegions1(rc)
	}
	lay := cashmere.Layout{SharedBase: sharedBase, TwinBase: twinBase, MetaBase: metaBase,
		DataTx: make([]uint64, n), MsgRx: make([]uint64, n), PollRx: make([]uint64, n),
		MsgTx: make([][]uint64, n), PollTx: make([][]uint64, n)}
	for sp := range rc.Superpages() {
		if rc.Variant == cashmere.Variant2LOffMC || rc.Variant == cashmere.Variant2LMigr {
			// Application data in node memory, not MC space
			// (section 2.6): no home-copy regions.
			lay.DataTx = nil
			break
		}
		first := sp * rc.SuperpagePages
		pages := min(rc.SuperpagePages, rc.Pages-first)
		frames := make([]uint64, n)
		frames[sp%n] = sharedBase + uint64(first)*cashmere.PageBytes
		r, err := cl.MapAt(fmt.Sprintf("data%d", sp), pages*cashmere.PageBytes, false, all, frames)
		if err != nil {
			return lay, fmt.Errorf("cashtb: %w", err)
		}
		for i := range n {
			if sp == 0 {
				lay.DataTx[i] = r.Tx[i]
			} else if r.Tx[i] != lay.DataTx[i]+uint64(first)*cashmere.PageBytes {
				return lay, fmt.Errorf("cashtb: superpage %d's transmit window on node %d is not contiguous", sp, i)
			}
		}
		b.data = append(b.data, r)
	}
	dir, err := cl.Broadcast("dir", cashmere.DirBytes(rc), false)
	if err != nil {
		return lay, fmt.Errorf("cashtb: %w", err)
	}
	lay.DirTx, lay.DirRx = dir.Tx, dir.Rx
	for r := range n {
		m, err := cl.PointToPoint(fmt.Sprintf("msg%d", r), r, cashmere.MsgBytes(rc))
		if err != nil {
			return lay, fmt.Errorf("cashtb: %w", err)
		}
		p, err := cl.PointToPoint(fmt.Sprintf("poll%d", r), r, 4)
		if err != nil {
			return lay, fmt.Errorf("cashtb: %w", err)
		}
		lay.MsgTx[r], lay.MsgRx[r] = m.Tx, m.Rx[r]
		lay.PollTx[r], lay.PollRx[r] = p.Tx, p.Rx[r]
		b.poll = append(b.poll, p)
	}
	sync, err := cl.Loopback("sync", cashmere.SyncBytes(rc))
	if err != nil {
		return lay, fmt.Errorf("cashtb: %w", err)
	}
	lay.SyncTx, lay.SyncRx = sync.Tx, sync.Rx
	bar, err := cl.Broadcast("bar", cashmere.BarBytes(rc), false)
	if err != nil {
		return lay, fmt.Errorf("cashtb: %w", err)
	}
	lay.BarTx, lay.BarRx = bar.Tx, bar.Rx
	return lay, nil
}

// mapRegions1 is mapRegions under 1LD and 1L: rc's protocol nodes (processors)
// on the cluster's nodes.
func (b *Bench) mapRegions1(rc cashmere.Config) (cashmere.Layout, error) {
	cl := b.Cluster
	pc := rc.Protocol()
	n, cpus := pc.Nodes, rc.CPUs
	phys := func(p int) int { return p / cpus }
	span := uint64(rc.Pages) * cashmere.PageBytes
	all := make([]bool, rc.Nodes)
	for i := range all {
		all[i] = true
	}
	lay := cashmere.Layout{SharedBase: sharedBase, TwinBase: twinBase, MetaBase: metaBase,
		DataTx: make([]uint64, n), MsgRx: make([]uint64, n), PollRx: make([]uint64, n),
		MsgTx: make([][]uint64, n), PollTx: make([][]uint64, n), Offset: make([]uint64, n),
		DirTx: make([]uint64, n), DirRx: make([]uint64, n), SyncTx: make([]uint64, n), SyncRx: make([]uint64, n),
		BarTx: make([]uint64, n), BarRx: make([]uint64, n)}
	for p := range n {
		lay.Offset[p] = uint64(p%cpus) * span
	}
	b.offset = lay.Offset
	b.cpus = cpus
	for sp := range rc.Superpages() {
		first := sp * rc.SuperpagePages
		pages := min(rc.SuperpagePages, rc.Pages-first)
		frames := make([]uint64, rc.Nodes)
		h := sp % n
		frames[phys(h)] = sharedBase + lay.Offset[h] + uint64(first)*cashmere.PageBytes
		r, err := cl.MapAt(fmt.Sprintf("data%d", sp), pages*cashmere.PageBytes, true, all, frames)
		if err != nil {
			return lay, fmt.Errorf("cashtb: %w", err)
		}
		for p := range n {
			if sp == 0 {
				lay.DataTx[p] = r.Tx[phys(p)]
			} else if r.Tx[phys(p)] != lay.DataTx[p]+uint64(first)*cashmere.PageBytes {
				return lay, fmt.Errorf("cashtb: superpage %d's transmit window on node %d is not contiguous", sp, phys(p))
			}
		}
		b.data = append(b.data, r)
	}
	dir, err := cl.Broadcast("dir", cashmere.DirBytes(pc), false)
	if err != nil {
		return lay, fmt.Errorf("cashtb: %w", err)
	}
	sync, err := cl.Loopback("sync", cashmere.SyncBytes(pc))
	if err != nil {
		return lay, fmt.Errorf("cashtb: %w", err)
	}
	bar, err := cl.Broadcast("bar", cashmere.BarBytes(pc), false)
	if err != nil {
		return lay, fmt.Errorf("cashtb: %w", err)
	}
	for p := range n {
		lay.DirTx[p], lay.DirRx[p] = dir.Tx[phys(p)], dir.Rx[phys(p)]
		lay.SyncTx[p], lay.SyncRx[p] = sync.Tx[phys(p)], sync.Rx[phys(p)]
		lay.BarTx[p], lay.BarRx[p] = bar.Tx[phys(p)], bar.Rx[phys(p)]
	}
	for r := range n {
		rx := make([]bool, rc.Nodes)
		rx[phys(r)] = true
		m, err := cl.Map(fmt.Sprintf("msg%d", r), cashmere.MsgBytes(pc), true, all, rx)
		if err != nil {
			return lay, fmt.Errorf("cashtb: %w", err)
		}
		pl, err := cl.Map(fmt.Sprintf("poll%d", r), 4, true, all, rx)
		if err != nil {
			return lay, fmt.Errorf("cashtb: %w", err)
		}
		lay.MsgRx[r], lay.PollRx[r] = m.Rx[phys(r)], pl.Rx[phys(r)]
		b.poll = append(b.poll, pl)
		lay.MsgTx[r], lay.PollTx[r] = make([]uint64, n), make([]uint64, n)
		for s := range n {
			lay.MsgTx[r][s], lay.PollTx[r][s] = m.Tx[phys(s)], pl.Tx[phys(s)]
		}
	}
	return lay, nil
}

// remap moves superpage sp's receive mapping from (protocol) node from to
// node to: the adapters' tables and mctb's reference model (the kernel's
// part of a first-touch relocation, section 2.3).
func (b *Bench) remap(sp, from, to int) error {
	r := b.data[sp]
	frame := sharedBase + uint64(sp*b.Runtime.Config().SuperpagePages)*cashmere.PageBytes
	if b.offset != nil {
		frame += b.offset[to]
		from, to = from/b.cpus, to/b.cpus
	}
	for k := range r.Pages {
		g := r.GlobalPage + k
		if err := b.Cluster.UnmapRx(from, g); err != nil {
			return fmt.Errorf("cashtb: remap superpage %d: %w", sp, err)
		}
		if err := b.Cluster.MapRx(to, g, frame+uint64(k)*cashmere.PageBytes); err != nil {
			return fmt.Errorf("cashtb: remap superpage %d: %w", sp, err)
		}
	}
	return nil
}

// peek reads node memory without an access (the checkers' view). The
// caches keep their data in the memory's storage, so it is current.
func (b *Bench) peek(node int, addr uint64, n int) []byte {
	buf := make([]byte, n)
	if err := b.Cluster.Nodes[node].Memory().Storage().Read(addr, buf); err != nil {
		return nil
	}
	return buf
}

// peekOrdered is node's memory at addr as it will be once every write
// the hub has ordered for node has been written by its receive DMA (and
// through the memory controller): mctb's Ref image, nil where Ref does not
// know the bytes.
func (b *Bench) peekOrdered(node int, addr uint64, n int) []byte {
	return b.Cluster.Ref.Image(node, addr, n)
}

// Result is a finished run.
type Result struct {
	// Memory is the final shared memory, page by page from each page's
	// home copy, or its exclusive holder's.
	Memory []byte
	// Stats are the processes' counters, by ID; Total their sum.
	Stats []cashmere.Stats
	Total cashmere.Stats
	// Time is when the last process finished.
	Time clock.Time
}

// Run starts every process on the program, runs the simulation to its
// end, runs the end-of-run checks and returns the result; the error joins
// the checkers' violations, a process that did not finish and the
// program's own errors.
func (b *Bench) Run() (Result, error) {
	for _, pr := range b.Procs {
		pr.CPU().Run(pr.Start(b.prog.Run))
	}
	_, runErr := b.Env.Run()
	defer b.Cluster.Close()
	now := b.Env.Now()
	b.Runtime.Finish(now)
	var res Result
	var errs []error
	if runErr != nil {
		errs = append(errs, fmt.Errorf("cashtb: %w", runErr))
	}
	for _, pr := range b.Procs {
		if !pr.Done() {
			errs = append(errs, fmt.Errorf("cashtb: process %d did not finish (%s)", pr.ID(), pr.CPU().State()))
		}
		res.Stats = append(res.Stats, pr.Stats())
		res.Total.Add(pr.Stats())
		res.Time = max(res.Time, pr.End())
	}
	rc := b.Runtime.Config()
	for pg := range rc.Pages {
		h := b.Runtime.Holder(pg)
		res.Memory = append(res.Memory, b.peek(b.Runtime.PhysNode(h), b.Runtime.PageAddr(h, pg), cashmere.PageBytes)...)
	}
	if err := b.Runtime.Err(); err != nil {
		errs = append(errs, err)
	}
	if err := b.Cluster.Finish(); err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}
