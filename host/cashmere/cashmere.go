// Package cashmere is the Cashmere-2L runtime (cashmere-2l-memory-channel.txt,
// Stets et al., SOSP 1997, sections 2.2-2.5): a two-level, moderately lazy
// release-consistent software DSM whose inter-node level runs on the Memory
// Channel's remote writes and whose intra-node level is the SMP's hardware
// coherence. It runs as sequential host programs (docs/host-programs.md) on
// the CPUs of a cluster: every byte it moves between nodes is a store into
// an adapter's transmit window, every copy, twin and diff is loads and
// stores on the cycle model, page faults and mprotect are the platform's.
//
// The package imports no hardware: the testbench (verify/testbench/cashtb)
// hands it the addresses of its regions (Layout) and a remapping hook
// (Hooks.Remap), and starts one Process per CPU. The design is
// docs/cashmere-design.md; what is built, the variants of section 2.6
// (Config.Variant: 2L, 2LS, 1LD, 2LOffMC, 1L, 2LMigr) and the
// deviations are said in its section 8.
//
// The per-process handle (Process) has the method set of the programs'
// interface (host/cashapps.Proc, design section 2).
package cashmere

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/env"
)

// Variants of the runtime (section 2.6), options of this one runtime: 2L
// (two-way diffing), 2LS (shootdown instead of incoming diffs and
// flush-updates), 1LD (one level: every processor its own protocol
// node, twins and diffs), 2LOffMC (application data in node memory,
// explicit diff messages), 1L (one level, write doubling) and 2LMigr
// (2LOffMC with home migration, migr.go).
const (
	Variant2L      = "2L"
	Variant2LS     = "2LS"
	Variant1LD     = "1LD"
	Variant2LOffMC = "2LOffMC"
	Variant1L      = "1L"
	Variant2LMigr  = "2LMigr"
)

// PageBytes is the coherence unit: the 21064A's 8 KB virtual-memory page
// (section 2.2 «making the coherence unit equal to the size of VM page»),
// which is also the Memory Channel's page (MC-P6).
const PageBytes = 8192

// MaxNodes is the lock array's size: «an 8-entry array in Memory Channel
// space» (section 2.3).
const MaxNodes = 8

// maxProcs is what the directory word's 6-bit processor fields hold
// (section 2.3: «the id of any processor accessing the page in exclusive
// mode (6 bits), and ... the id of the home processor (6 bits)»).
const maxProcs = 64

// Config is one run's runtime parameters.
type Config struct {
	// Variant is the protocol (section 2.6): Variant2L, Variant2LS,
	// Variant1LD, Variant2LOffMC, Variant1L or Variant2LMigr.
	Variant string
	// Nodes is the number of SMP nodes, CPUs the processes per node (one
	// per CPU, section 3: «application processes are pinned to a
	// processor»).
	Nodes, CPUs int
	// Pages is the number of shared 8 KB pages.
	Pages int
	// SuperpagePages is the pages per superpage, the unit of home
	// assignment (section 2.3 «Pages are grouped together into
	// "superpages"»).
	SuperpagePages int
	// Locks and Flags are the application's locks and flags.
	Locks, Flags int
	// RemapCycles is the kernel call that moves a superpage's receive
	// mapping to its first-touch home (section 2.3 «explicitly request a
	// remapping»), in CPU cycles. The testbench sets it (assumed: the cost
	// of an mprotect, the one memory-mapping system call the paper times).
	RemapCycles int
	// Interrupts replaces polling by interrupts (section 2.3's
	// alternative; interrupt.go): no poll at loop tops or in wait loops; a
	// request's arrival interrupts a processor of its node (the testbench
	// calls Runtime.RequestInterrupt) and a 2LS shootdown is an
	// inter-processor interrupt. False: Figure 3's polling.
	Interrupts bool
}

// Validate checks the configuration; an error names the field.
func (c Config) Validate() error {
	switch {
	case c.Variant != Variant2L && c.Variant != Variant2LS && c.Variant != Variant1LD && c.Variant != Variant2LOffMC && c.Variant != Variant1L && c.Variant != Variant2LMigr:
		return fmt.Errorf("cashmere: Variant %q is not implemented (%q, %q, %q, %q, %q or %q)", c.Variant, Variant2L, Variant2LS, Variant1LD, Variant2LOffMC, Variant1L, Variant2LMigr)
	case c.migrating() && c.SuperpagePages != 1:
		return fmt.Errorf("cashmere: Variant %q migrates homes page by page: SuperpagePages must be 1, not %d", c.Variant, c.SuperpagePages)
	case c.OneLevel() && c.Nodes*c.CPUs > MaxNodes:
		return fmt.Errorf("cashmere: Variant %q needs Nodes*CPUs at most %d (every processor a protocol node of the lock array), not %d", c.Variant, MaxNodes, c.Nodes*c.CPUs)
	case c.Nodes < 1 || c.Nodes > MaxNodes:
		return fmt.Errorf("cashmere: Nodes %d must be in 1..%d (the lock array's entries)", c.Nodes, MaxNodes)
	case c.CPUs < 1 || c.Nodes*c.CPUs > maxProcs:
		return fmt.Errorf("cashmere: CPUs %d must be at least 1 with Nodes*CPUs at most %d", c.CPUs, maxProcs)
	case c.Pages < 1:
		return fmt.Errorf("cashmere: Pages %d must be at least 1", c.Pages)
	case c.SuperpagePages < 1:
		return fmt.Errorf("cashmere: SuperpagePages %d must be at least 1", c.SuperpagePages)
	case c.Locks < 0:
		return fmt.Errorf("cashmere: Locks %d must not be negative", c.Locks)
	case c.Flags < 0:
		return fmt.Errorf("cashmere: Flags %d must not be negative", c.Flags)
	case c.RemapCycles < 0:
		return fmt.Errorf("cashmere: RemapCycles %d must not be negative", c.RemapCycles)
	}
	return nil
}

// Superpages returns the number of superpages.
func (c Config) Superpages() int { return (c.Pages + c.SuperpagePages - 1) / c.SuperpagePages }

// Procs returns the number of processes.
func (c Config) Procs() int { return c.Nodes * c.CPUs }

// shootdown reports the 2LS variant (section 2.6 «Shootdown»).
func (c Config) shootdown() bool { return c.Variant == Variant2LS }

// OneLevel reports a one-level variant (1LD, 1L): every processor its own
// protocol node.
func (c Config) OneLevel() bool { return c.Variant == Variant1LD || c.Variant == Variant1L }

// doubling reports the 1L variant: every shared store also written to the
// home copy (section 3.3.1: «Cashmere-1L updates the home node with
// modifications as they occur»).
func (c Config) doubling() bool { return c.Variant == Variant1L }

// offMC reports the 2LOffMC variant and 2LMigr, which extends it (section
// 2.6 «Treatment of Application Data»: «These variants place application
// data in regular node shared memory and then use explicit messages to
// perform diff operations»).
func (c Config) offMC() bool { return c.Variant == Variant2LOffMC || c.Variant == Variant2LMigr }

// migrating reports the 2LMigr variant (section 2.6: «a migratory policy
// that re-assigns the master page location after a home node has
// completed its modifications»; migr.go).
func (c Config) migrating() bool { return c.Variant == Variant2LMigr }

// Protocol returns the protocol's view of the cluster: under 1LD and 1L every
// processor is a node of one CPU (section 2.6: the one-level protocols
// treat each processor as a separate node; section 3.3.2), otherwise c.
// The Layout's per-node slices and MetaBytes, MsgBytes, DirBytes,
// SyncBytes and BarBytes are in these nodes.
func (c Config) Protocol() Config {
	if c.OneLevel() {
		c.Nodes, c.CPUs = c.Nodes*c.CPUs, 1
	}
	return c
}

// Hooks are what the testbench does for the runtime outside the CPUs.
type Hooks struct {
	// Remap moves superpage sp's receive mapping (its global MC pages)
	// from node from to node to (the kernel's part of the first-touch
	// relocation, section 2.3).
	Remap func(sp, from, to int) error
	// LocalWrite is told of every store a process makes into its node's
	// memory (application data, twins, doubled broadcast words), so a
	// reference model of the receive frames can follow them (mctb's
	// Ref.LocalWrite); nil when nobody listens.
	LocalWrite func(node int, addr uint64, data []byte)
	// Peek returns n bytes of node's memory at addr without simulating an
	// access: the checkers' view (nil turns the memory checks off).
	Peek func(node int, addr uint64, n int) []byte
	// PeekOrdered is Peek as node's memory will be once every write the
	// MC hub has ordered for it has been written by its adapter's receive
	// DMA: the diff rule's view of a home that the MC flush has proved the
	// diff reached in order (section 2.2) but whose receive FIFO may still
	// hold it (nil: the rule reads Peek only).
	PeekOrdered func(node int, addr uint64, n int) []byte
	// Event is told of every protocol event (events.go), nil: none.
	Event func(Event)
}

// Runtime is one cluster's Cashmere-2L.
type Runtime struct {
	env *env.Env
	// cfg is the protocol's view (Config.Protocol), user the cluster's.
	cfg   Config
	user  Config
	lay   Layout
	hooks Hooks
	nodes []*nodeState
	procs []*Process
	// home is each superpage's home node as the relocations leave it (the
	// testbench's and the checkers' view; the protocol reads the
	// directory).
	home []int
	err  error
	chk  *checker
	mut  mutations
	// mig is 2LMigr's checker state (migr.go), nil under the others.
	mig *migrState
}

// New returns the runtime for cfg on the regions of lay.
func New(e *env.Env, cfg Config, lay Layout, h Hooks) (*Runtime, error) {
	if e == nil {
		return nil, errors.New("cashmere: no env")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	user := cfg
	cfg = cfg.Protocol()
	if err := lay.Validate(cfg); err != nil {
		return nil, err
	}
	if h.Remap == nil {
		return nil, errors.New("cashmere: Hooks.Remap is nil")
	}
	rt := &Runtime{env: e, cfg: cfg, user: user, lay: lay, hooks: h, home: make([]int, cfg.Superpages()), mut: readMutations(e)}
	for sp := range rt.home {
		rt.home[sp] = initialHome(sp, cfg.Nodes)
	}
	for n := range cfg.Nodes {
		rt.nodes = append(rt.nodes, newNodeState(n, cfg))
	}
	rt.chk = newChecker(rt)
	if cfg.migrating() {
		rt.mig = newMigrState(rt)
	}
	return rt, nil
}

// initialHome is the round-robin assignment before first touch (section
// 2.3 «Initially home nodes are assigned in a round robin manner»).
func initialHome(sp, nodes int) int { return sp % nodes }

// Config returns the configuration.
func (rt *Runtime) Config() Config { return rt.user }

// PhysNode returns the cluster node protocol node n runs on.
func (rt *Runtime) PhysNode(n int) int { return n * rt.cfg.CPUs / rt.user.CPUs }

// offset is protocol node n's displacement of its node-memory data (its
// copy of the pages, twins and protocol words): 0 but under 1LD.
func (rt *Runtime) offset(n int) uint64 {
	if rt.lay.Offset == nil {
		return 0
	}
	return rt.lay.Offset[n]
}

// PageAddr returns where protocol node n keeps its copy of page pg on
// its cluster node (PhysNode).
func (rt *Runtime) PageAddr(n, pg int) uint64 { return rt.offset(n) + rt.pageAddr(pg) }

// Layout returns the regions' addresses.
func (rt *Runtime) Layout() Layout { return rt.lay }

// Home returns the home node of page pg as the run left it.
func (rt *Runtime) Home(pg int) int { return rt.home[pg/rt.cfg.SuperpagePages] }

// Holder returns the node whose copy of page pg is the latest: the node
// holding it in exclusive mode, else its home.
func (rt *Runtime) Holder(pg int) int {
	for _, ns := range rt.nodes {
		if ns.excl[pg] >= 0 {
			return ns.id
		}
	}
	return rt.Home(pg)
}

// Err returns the first program error (a shared access outside the shared
// space, a lock or flag out of range), nil when none.
func (rt *Runtime) Err() error { return rt.err }

func (rt *Runtime) fail(err error) {
	if rt.err == nil {
		rt.err = err
	}
}

// Procs returns the processes installed so far, by ID.
func (rt *Runtime) Procs() []*Process { return rt.procs }

// Install makes c node's CPU local run process node*CPUs+local: its page
// table (the shared pages invalid, everything else read-write) and its
// page-fault handler. Processes are installed in ID order.
func (rt *Runtime) Install(c *cpu.CPU, node, local int) (*Process, error) {
	id := node*rt.user.CPUs + local
	switch {
	case node < 0 || node >= rt.user.Nodes:
		return nil, fmt.Errorf("cashmere: node %d is not in 0..%d", node, rt.user.Nodes-1)
	case local < 0 || local >= rt.user.CPUs:
		return nil, fmt.Errorf("cashmere: CPU %d is not in 0..%d", local, rt.user.CPUs-1)
	case id != len(rt.procs):
		return nil, fmt.Errorf("cashmere: process %d installed out of order (next is %d)", id, len(rt.procs))
	}
	pt, err := cpu.NewPageTable(PageBytes, cpu.PermReadWrite)
	if err != nil {
		return nil, fmt.Errorf("cashmere: %w", err)
	}
	pn, pl := id/rt.cfg.CPUs, id%rt.cfg.CPUs
	pr := &Process{rt: rt, ns: rt.nodes[pn], node: pn, local: pl, id: id, cpu: c, phys: node, off: rt.offset(pn),
		shootSent: make([]uint32, rt.cfg.CPUs), shootSeen: make([]uint32, rt.cfg.CPUs)}
	pt.Protect(pr.pageAddr(0), rt.cfg.Pages*PageBytes, cpu.PermNone)
	c.SetPageTable(pt)
	c.SetFaultHandler(cpu.Sequential(pr.pageFault))
	if rt.cfg.Interrupts {
		c.SetInterruptProgram(pr.interrupt)
	}
	rt.procs = append(rt.procs, pr)
	return pr, nil
}

// Start returns the process's program: run (the application), then the
// exit barrier (a release that flushes the last modifications to their
// homes, while every process keeps serving page requests until all have
// arrived).
func (pr *Process) Start(run func(p *Process)) cpu.Op {
	return cpu.Go(func(p *cpu.Proc) {
		pr.p = p
		run(pr)
		pr.Barrier()
		pr.done, pr.end = true, p.Now()
	})
}

// Done reports whether the process has finished its program and the exit
// barrier.
func (pr *Process) Done() bool { return pr.done }
