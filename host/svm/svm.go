// Package svm is shared virtual memory on SHRIMP (shrimp-design-choices.txt
// section 4.2, Figure 4; the protocols' own papers are the paper's
// references [47] HLRC, [26] AURC and [35] the SHRIMP SVM): home-based lazy
// release consistency on VMMC (host/vmmc), one runtime with three
// protocols (Config.Protocol):
//
//   - HLRC «uses only deliberate update communication»: twins at the first
//     write, diffs at a release sent to the page's home in deliberate-update
//     messages and applied by the home's notification handler, which
//     acknowledges them; write notices with vector timestamps travel with
//     lock grants and barrier releases; an acquire invalidates the pages they
//     name; a fault on an invalid page fetches the whole page from its home.
//   - HLRC-AU «is similar to the first except that it uses automatic update
//     to propagate the diffs transparently as they are produced, instead of
//     buffering them and sending them explicitly»: each diff word is stored
//     into a page bound for automatic update to the home's copy.
//   - AURC «eliminates diffs entirely and uses automatic update mappings to
//     propagate updates eagerly to home pages»: every non-home copy is bound
//     to the home's copy (write-through), no twins, no diffs.
//
// Under the two automatic-update protocols a release ends with a flush: the
// releaser stores its new interval number into a timestamp word at every
// node through pages bound to them, which the NI's outgoing FIFO delivers
// behind the data (assumed: the timestamp scheme the issue names, «timestamps
// or flush messages»); a home serves a page only when every writer's
// timestamp has reached the requester's vector time, and a home reads its own
// pages after an acquire only when the writers' timestamps have.
//
// The runtime is software (docs/host-programs.md): every byte it moves
// between nodes is a VMMC send or an automatic-update store, every twin and
// diff is loads and stores on the cycle model, faults and mprotect are the
// platform's. The testbench (verify/testbench/shrimptb) builds the cluster
// and gives the runtime one vmmc.Process and CPU per node (Install); the
// runtime makes its own exports, imports and bindings before time 0. The
// per-node handle Process has host/cashapps.Proc's method set. Design:
// docs/svm-design.md.
package svm

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// The protocols (section 4.2).
const (
	HLRC   = "hlrc"
	HLRCAU = "hlrc-au"
	AURC   = "aurc"
)

// Protocols lists the protocols in the paper's order.
func Protocols() []string { return []string{HLRC, HLRCAU, AURC} }

// MaxNodes is the most nodes: SHRIMP's sixteen (section 2) and a
// message's node mask of one word.
const MaxNodes = 16

// Config is one run's runtime parameters.
type Config struct {
	// Protocol is HLRC, HLRCAU or AURC.
	Protocol string
	// Nodes is the number of nodes, one process each.
	Nodes int
	// Pages is the number of shared pages of PageBytes.
	Pages int
	// PageBytes is the coherence unit: the NI's and the processor's page
	// (4 KB on the Pentium, SH-P13).
	PageBytes int
	// Locks and Flags are the application's.
	Locks, Flags int
}

// Validate checks the configuration; an error names the field.
func (c Config) Validate() error {
	switch {
	case c.Protocol != HLRC && c.Protocol != HLRCAU && c.Protocol != AURC:
		return fmt.Errorf("svm: Protocol %q must be %s, %s or %s", c.Protocol, HLRC, HLRCAU, AURC)
	case c.Nodes < 1 || c.Nodes > MaxNodes:
		return fmt.Errorf("svm: Nodes %d must be in 1..%d", c.Nodes, MaxNodes)
	case c.PageBytes < 1024 || c.PageBytes&(c.PageBytes-1) != 0:
		return fmt.Errorf("svm: PageBytes %d must be a power of two of at least 1024", c.PageBytes)
	case c.Pages < 1 || c.Pages > c.maxPages():
		return fmt.Errorf("svm: Pages %d must be in 1..%d (a grant's write notices fill one %d-byte reply slot)", c.Pages, c.maxPages(), c.PageBytes)
	case c.Locks < 0 || c.Flags < 0:
		return fmt.Errorf("svm: Locks %d and Flags %d must not be negative", c.Locks, c.Flags)
	}
	return nil
}

// bitmapWords is the words of a page bitmap.
func (c Config) bitmapWords() int { return (c.Pages + 63) / 64 }

// maxPages is the most pages whose notices fit a reply slot: the seal, a
// header of 2 + Nodes words and a bitmap per node.
func (c Config) maxPages() int {
	n := max(c.Nodes, 1)
	words := c.PageBytes/8 - 3 - n
	return max(words/n, 0) * 64
}

func (c Config) au() bool { return c.Protocol == HLRCAU || c.Protocol == AURC }

// Hooks are the testbench's views.
type Hooks struct {
	// LocalWrite is told of every store the runtime or the program makes
	// into a node's exported memory (shared pages, the diffs a home
	// applies), so the testbench's reference images follow them.
	LocalWrite func(node int, addr uint64, data []byte)
	// Peek returns n bytes of node's memory without an access: the
	// checkers' view (nil turns the memory checks off).
	Peek func(node int, addr uint64, n int) []byte
	// Event is told of every protocol event (nil: none).
	Event func(Event)
}

// Runtime is one cluster's SVM.
type Runtime struct {
	env   *env.Env
	cfg   Config
	lay   Layout
	hooks Hooks
	procs []*Process
	chk   *checker
	mut   mutations
	err   error
	setup bool
}

// New makes the runtime; Install adds the nodes' processes.
func New(e *env.Env, c Config, h Hooks) (*Runtime, error) {
	if e == nil {
		return nil, errors.New("svm: no env")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	lay, err := NewLayout(c)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{env: e, cfg: c, lay: lay, hooks: h, mut: readMutations(e)}
	rt.chk = newChecker(rt)
	return rt, nil
}

// Config returns the runtime's configuration.
func (rt *Runtime) Config() Config { return rt.cfg }

// Layout returns the node memory map.
func (rt *Runtime) Layout() Layout { return rt.lay }

// Procs returns the processes by node.
func (rt *Runtime) Procs() []*Process { return rt.procs }

// Err returns the first runtime error (a program's bad access, a broken
// invariant), nil if none.
func (rt *Runtime) Err() error { return rt.err }

func (rt *Runtime) fail(err error) {
	if rt.err == nil {
		rt.err = err
	}
}

// Install makes node's process: vp is its VMMC process (the kernel's
// running one), c its processor; the runtime takes the processor's fault
// handler. Nodes are installed in order 0, 1, ...; the last one's Install
// makes every export, import and binding (untimed, before time 0).
func (rt *Runtime) Install(node int, vp *vmmc.Process, c *cpu.CPU) (*Process, error) {
	switch {
	case node != len(rt.procs):
		return nil, fmt.Errorf("svm: Install node %d: next is %d", node, len(rt.procs))
	case node >= rt.cfg.Nodes:
		return nil, fmt.Errorf("svm: Install node %d: only %d nodes", node, rt.cfg.Nodes)
	case vp == nil || c == nil:
		return nil, fmt.Errorf("svm: Install node %d: no VMMC process or CPU", node)
	}
	pr := newProcess(rt, node, vp, c)
	rt.procs = append(rt.procs, pr)
	c.SetFaultHandler(cpu.Sequential(pr.pageFault))
	vp.OnNotify(pr.notified)
	if node == rt.cfg.Nodes-1 {
		if err := rt.connect(); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// Finish runs the end-of-run checks at now.
func (rt *Runtime) Finish(now clock.Time) { rt.chk.finish(now) }

// Home returns page pg's home node.
func (rt *Runtime) Home(pg int) int { return rt.lay.Home(pg) }

// Dump describes every node's synchronisation state (for a stuck run's
// diagnosis): the locks it waits for, holds or has the token of, their
// queued requester, and each manager's last requester.
func (rt *Runtime) Dump() string {
	var b []byte
	for _, pr := range rt.procs {
		b = fmt.Appendf(b, "node %d: vc %v, reqID %d, local %v, sent %v recvd %v\n", pr.id, pr.vc, pr.reqID, pr.local != nil, pr.sent, pr.recvd)
		for l, ls := range pr.locks {
			if ls.waiting || ls.held || ls.token || ls.next >= 0 {
				b = fmt.Appendf(b, "  lock %d: waiting %v held %v token %v asked %d next %d\n", l, ls.waiting, ls.held, ls.token, ls.asked, ls.next)
			}
		}
		for l, last := range pr.mgr.last {
			if last >= 0 && l%rt.cfg.Nodes == pr.id {
				b = fmt.Appendf(b, "  manages lock %d: last %d asked %v\n", l, last, pr.mgr.asked[l])
			}
		}
		if pr.mgr.arrived > 0 {
			b = fmt.Appendf(b, "  barrier: %d arrived\n", pr.mgr.arrived)
		}
	}
	return string(b)
}
