package cashmere

import (
	"github.com/nisim/nisim/host/cpu"
	"slices"
)

// nodeState is a node's protocol meta-data (section 2.3 «Node Protocol
// Meta-Data»): the second-level directory (per-processor sharing state and
// the three timestamps), the twins' presence, the per-processor dirty lists
// and write-notice lists with their bitmaps, the Last-Release time, the
// bins' indices. It is node memory shared by the node's processors; the
// runtime keeps it as Go values and charges its reads and updates as
// costed code steps (costs.go), and protects multi-step updates with the
// node's LL/SC locks, which are real words in node memory (Layout.MetaBase).
type nodeState struct {
	id int
	// perm[cpu][page] is each local processor's mapping.
	perm [][]cpu.Perm
	// valid: the node holds an up-to-date-when-fetched copy (not the home);
	// cleared when the node's last mapping goes (the directory then says
	// invalid and no write notices come).
	valid []bool
	// twin: a twin exists (section 2.5: «whenever at least one local
	// processor, not on the home node, has write permissions for the
	// page»; kept while the page is on a dirty list).
	twin []bool
	// The second-level directory's timestamps (section 2.3): the last
	// home-node flush, the last local update, the last write notice.
	flushTS, updateTS, wnTS []uint64
	// lastRelease is the start of the node's most recent release.
	lastRelease uint64
	// dirty[cpu] is a processor's dirty list, dirtyBit its membership.
	dirty    [][]int
	dirtyBit [][]bool
	// wnq[cpu] is a processor's write-notice queue, wnBit its bitmap
	// (Figure 2).
	wnq   [][]int
	wnBit [][]bool
	// wnHead[s] counts the notices consumed from sender s's bin; wnSent[r]
	// the notices this node put in its bin at r.
	wnHead, wnSent []uint32
	// served[s] is the last request of node s this node served; reqSeq[h]
	// the last request it sent to home h.
	served, reqSeq []uint32
	// arrived[cpu]: the processor has arrived at the current barrier.
	arrived []bool
	// excl[page] is the processor holding the page in exclusive mode on
	// this node, -1 when none (section 2.4.1 «Exclusive Mode»).
	excl []int
	// nle[cpu] is a processor's No-Longer-Exclusive list (section 2.3),
	// written by the processor that broke the page out of exclusive mode.
	nle [][]int
	// pendingServe: a request could not be served yet (its page was
	// locked); the next poll looks again whatever the flag says.
	pendingServe bool
	// dirWord[page] is this node's own word of the global directory, as
	// it last wrote it (the writer keeps its value in a register; readers
	// load the replicas).
	dirWord []uint32
	// diffSent[h][ch] counts the explicit diffs sent to node h on
	// channel ch, diffSeen[s][ch] the last one applied from node s
	// (2LOffMC).
	diffSent, diffSeen [][2]uint32
}

func newNodeState(id int, cfg Config) *nodeState {
	ns := &nodeState{id: id,
		valid: make([]bool, cfg.Pages), twin: make([]bool, cfg.Pages),
		flushTS: make([]uint64, cfg.Pages), updateTS: make([]uint64, cfg.Pages), wnTS: make([]uint64, cfg.Pages),
		wnHead: make([]uint32, cfg.Nodes), wnSent: make([]uint32, cfg.Nodes),
		served: make([]uint32, cfg.Nodes), reqSeq: make([]uint32, cfg.Nodes),
		arrived: make([]bool, cfg.CPUs), dirWord: make([]uint32, cfg.Pages), excl: make([]int, cfg.Pages),
		diffSent: make([][2]uint32, cfg.Nodes), diffSeen: make([][2]uint32, cfg.Nodes)}
	for range cfg.CPUs {
		ns.perm = append(ns.perm, make([]cpu.Perm, cfg.Pages))
		ns.dirtyBit = append(ns.dirtyBit, make([]bool, cfg.Pages))
		ns.wnBit = append(ns.wnBit, make([]bool, cfg.Pages))
		ns.dirty = append(ns.dirty, nil)
		ns.wnq = append(ns.wnq, nil)
		ns.nle = append(ns.nle, nil)
	}
	for pg := range ns.excl {
		ns.excl[pg] = -1
	}
	for pg := range ns.dirWord {
		ns.dirWord[pg] = dirExcl(noProc)
	}
	return ns
}

// loosest returns the loosest mapping of any local processor.
func (ns *nodeState) loosest(pg int) cpu.Perm {
	var p cpu.Perm
	for _, m := range ns.perm {
		p |= m[pg]
	}
	return p
}

// writers reports whether a local processor other than except has a write
// mapping of pg or has it on its dirty or No-Longer-Exclusive list (an
// entry of either is a change its next release still flushes, even after
// an acquire has taken the mapping away).
func (ns *nodeState) writers(pg, except int) bool {
	for c := range ns.perm {
		if c != except && (ns.perm[c][pg]&cpu.PermWrite != 0 || ns.dirtyBit[c][pg] || slices.Contains(ns.nle[c], pg)) {
			return true
		}
	}
	return false
}

// Directory words (section 2.3): permissions (2 bits: invalid, read-only,
// read-write), the exclusive holder (6 bits), the home processor (6 bits).
// Bit 14 marks the home as fixed by first touch: the paper's relocation
// happens once per superpage (section 2.3), and a node that has not yet
// touched a superpage learns from this bit that another did (deviation,
// docs/cashmere-design.md section 8).
const (
	dirPermMask  = 0x3
	dirHomeShift = 8
	dirFixed     = 1 << 14
	noProc       = 0x3f
)

func dirPerm(w uint32) cpu.Perm { return cpu.Perm(w & dirPermMask) }
func dirExcl(proc int) uint32   { return uint32(proc&0x3f) << 2 }
func dirHome(w uint32) int      { return int(w>>dirHomeShift) & 0x3f }
func dirExclOf(w uint32) int    { return int(w>>2) & 0x3f }
func dirWord(perm cpu.Perm, home int, fixed bool) uint32 {
	return dirWordX(perm, noProc, home, fixed)
}

// dirWordX is dirWord with an exclusive holder (noProc: none).
func dirWordX(perm cpu.Perm, excl, home int, fixed bool) uint32 {
	w := uint32(perm)&dirPermMask | dirExcl(excl) | uint32(home&0x3f)<<dirHomeShift
	if fixed {
		w |= dirFixed
	}
	return w
}

// Stats are one process's protocol counters (Table 3's rows).
type Stats struct {
	LockAcquires, FlagAcquires, Barriers int
	ReadFaults, WriteFaults              int
	// PageTransfers are pages fetched from a home; DirUpdates directory
	// words written; WriteNotices notices sent.
	PageTransfers, DirUpdates, WriteNotices int
	// DataBytes is the bytes of application data sent through the
	// Memory Channel (page replies and diffs).
	DataBytes int
	// Twins created, outgoing diffs (page flushes to a remote home),
	// incoming diffs (fetches merged through the twin), flush-updates
	// (twin words updated at a flush), invalidations at acquires.
	Twins, Diffs, IncomingDiffs, FlushUpdates, Invalidations int
	// Relocations are first-touch home moves this process made; Served
	// the page requests it answered.
	Relocations, Served int
	// Exclusive counts pages this process put in exclusive mode, Breaks
	// those it took out of it at another node's request.
	Exclusive, Breaks int
	// Shootdowns are the write mappings of other local processors this
	// process shot down (2LS: Table 3's «Shootdowns», one intra-node
	// message each).
	Shootdowns int
	// Interrupts are the interrupt handlers this process's CPU ran
	// (Config.Interrupts: requests, shootdowns, redeliveries).
	Interrupts int
	// Migrations are the homes this process took (2LMigr: Table 3's
	// «Migrations», section 2.6).
	Migrations int
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.LockAcquires += o.LockAcquires
	s.FlagAcquires += o.FlagAcquires
	s.Barriers += o.Barriers
	s.ReadFaults += o.ReadFaults
	s.WriteFaults += o.WriteFaults
	s.PageTransfers += o.PageTransfers
	s.DirUpdates += o.DirUpdates
	s.WriteNotices += o.WriteNotices
	s.DataBytes += o.DataBytes
	s.Twins += o.Twins
	s.Diffs += o.Diffs
	s.IncomingDiffs += o.IncomingDiffs
	s.FlushUpdates += o.FlushUpdates
	s.Invalidations += o.Invalidations
	s.Relocations += o.Relocations
	s.Served += o.Served
	s.Exclusive += o.Exclusive
	s.Breaks += o.Breaks
	s.Shootdowns += o.Shootdowns
	s.Interrupts += o.Interrupts
	s.Migrations += o.Migrations
}
