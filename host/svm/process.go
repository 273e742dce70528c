package svm

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
)

// Process is one node's application process and its protocol state: the
// programs' handle (host/cashapps.Proc's method set). Shared addresses
// are byte offsets in [0, Pages*PageBytes), 8-byte words.
type Process struct {
	rt  *Runtime
	id  int
	vp  *vmmc.Process
	cpu *cpu.CPU
	p   *cpu.Proc

	// Proxies of the other nodes' regions, by node (nil for this one):
	// mine is node j's copy of this node's home pages (page replies go
	// there), homes node j's home pages (the automatic-update protocols'
	// bindings), inbox, reply and ack its message pages.
	mine, homes, inbox, reply, ack []*vmmc.Proxy

	// Page state: perm is the mapping; twin whether a twin exists; dirty
	// the pages written in the current interval (dirtyBit its set).
	perm     []cpu.Perm
	twin     []bool
	dirty    []int
	dirtyBit []bool

	// vc is the vector time: the intervals of each node this one has
	// seen (its own: those it closed); log the write notices it knows,
	// by node (notices.go); barVC its own interval at its last barrier.
	vc    []uint32
	log   [][]entry
	barVC uint32

	// Messages: sent and acked count this node's requests to each node
	// (acked read from its Ack words); window those that wait for an
	// acknowledgement; recvd the requests consumed from each node, and
	// recvAck those of them that asked for one.
	sent, window, acked, recvd, recvAck []uint32
	// ackOut is the count last written to each sender's word.
	ackOut []uint32
	// reqID numbers the program's requests (a reply's tag).
	reqID uint32

	locks []lockState
	mgr   manager
	// local is a grant this node gave itself, waiting for awaitGrant.
	local *localGrant

	inIntr bool
	done   bool
	end    clock.Time
	stats  Stats
	times  Times
	// timer is the kind of time the program is in (breakdown.go).
	timer timer
}

func newProcess(rt *Runtime, id int, vp *vmmc.Process, c *cpu.CPU) *Process {
	n, pages := rt.cfg.Nodes, rt.cfg.Pages
	pr := &Process{rt: rt, id: id, vp: vp, cpu: c,
		mine: make([]*vmmc.Proxy, n), homes: make([]*vmmc.Proxy, n), inbox: make([]*vmmc.Proxy, n),
		reply: make([]*vmmc.Proxy, n), ack: make([]*vmmc.Proxy, n),
		perm: make([]cpu.Perm, pages), twin: make([]bool, pages), dirtyBit: make([]bool, pages),
		vc: make([]uint32, n), log: make([][]entry, n),
		sent: make([]uint32, n), window: make([]uint32, n), acked: make([]uint32, n),
		recvd: make([]uint32, n), recvAck: make([]uint32, n), ackOut: make([]uint32, n),
		locks: make([]lockState, rt.cfg.Locks),
	}
	for i := range pr.locks {
		pr.locks[i].next = -1
	}
	pr.mgr.init(rt.cfg, id)
	// Every copy starts valid and read-only: the shared memory starts
	// zero everywhere, the homes' copies too.
	for pg := range pr.perm {
		pr.perm[pg] = cpu.PermRead
	}
	return pr
}

// connect makes every node's exports, then imports and bindings (untimed,
// before time 0), and sets the shared pages' protection.
func (rt *Runtime) connect() error {
	l, c := rt.lay, rt.cfg
	pb := c.PageBytes
	type exps struct {
		// blocks are the node's copies of each node's home pages, one
		// buffer each (valid where the block has pages).
		blocks                []vmmc.Buffer
		inbox, reply, ack, ts vmmc.Buffer
	}
	ex := make([]exps, c.Nodes)
	for i, pr := range rt.procs {
		var err error
		e := &ex[i]
		e.blocks = make([]vmmc.Buffer, c.Nodes)
		for b := range c.Nodes {
			if first, end := l.Block(b); end > first && err == nil {
				e.blocks[b], err = pr.vp.Export(nil, l.Page(first), (end-first)*pb, false)
			}
		}
		if err == nil {
			if e.inbox, err = pr.vp.Export(nil, l.Inbox, int(l.Reply-l.Inbox), true); err == nil {
				if e.reply, err = pr.vp.Export(nil, l.Reply, pb, false); err == nil {
					if e.ack, err = pr.vp.Export(nil, l.Ack, pb, false); err == nil {
						e.ts, err = pr.vp.Export(nil, l.TS, pb, false)
					}
				}
			}
		}
		if err != nil {
			return fmt.Errorf("svm: node %d: %w", i, err)
		}
	}
	for i, pr := range rt.procs {
		fi, ei := l.Block(i)
		for j := range c.Nodes {
			if j == i {
				continue
			}
			var err error
			if ei > fi {
				pr.mine[j], err = pr.vp.Import(nil, ex[j].blocks[i])
			}
			if err == nil {
				if pr.inbox[j], err = pr.vp.Import(nil, ex[j].inbox); err == nil {
					if pr.reply[j], err = pr.vp.Import(nil, ex[j].reply); err == nil {
						pr.ack[j], err = pr.vp.Import(nil, ex[j].ack)
					}
				}
			}
			if err == nil && c.au() {
				if fj, ej := l.Block(j); ej > fj {
					pr.homes[j], err = pr.vp.Import(nil, ex[j].blocks[j])
				}
				var ts *vmmc.Proxy
				if err == nil {
					if ts, err = pr.vp.Import(nil, ex[j].ts); err == nil {
						err = pr.vp.Bind(nil, l.TSOut+uint64(j*pb), ts, 0, pb, false, pb)
					}
				}
			}
			if err != nil {
				return fmt.Errorf("svm: node %d importing node %d: %w", i, j, err)
			}
		}
		// The bindings to the homes: AURC's copies, HLRC-AU's diff pages,
		// a run of pages with one home at a time (section 2.2: bindings
		// are page-aligned on both sides).
		if c.au() {
			local := l.Shared
			if c.Protocol == HLRCAU {
				local = l.Mirror
			}
			for h := range c.Nodes {
				first, end := l.Block(h)
				if h == i || end == first {
					continue
				}
				// Combining on (section 4.5.1: the NI combines
				// consecutive stores to one page into a packet).
				if err := pr.vp.Bind(nil, local+uint64(first*pb), pr.homes[h], 0, (end-first)*pb, true, pb); err != nil {
					return fmt.Errorf("svm: node %d binding pages %d..%d to node %d: %w", i, first, end-1, h, err)
				}
			}
		}
		if c.Nodes == 1 {
			// One node: every page is home, nobody to tell; the program
			// runs without protection, as the sequential run does.
			pr.vp.PageTable().Protect(l.Shared, c.Pages*pb, cpu.PermReadWrite)
			for pg := range pr.perm {
				pr.perm[pg] = cpu.PermReadWrite
			}
			continue
		}
		pr.vp.PageTable().Protect(l.Shared, c.Pages*pb, cpu.PermRead)
	}
	rt.setup = true
	return nil
}

// ID returns the process number, its node.
func (pr *Process) ID() int { return pr.id }

// Procs returns the number of processes.
func (pr *Process) Procs() int { return pr.rt.cfg.Nodes }

// Stats returns the process's counters.
func (pr *Process) Stats() Stats { return pr.stats }

// Times returns the process's time breakdown.
func (pr *Process) Times() Times { return pr.times }

// Done reports whether the process has finished its program and the exit
// barrier; End when.
func (pr *Process) Done() bool      { return pr.done }
func (pr *Process) End() clock.Time { return pr.end }

// CPU returns the process's processor.
func (pr *Process) CPU() *cpu.CPU { return pr.cpu }

// Start returns the operation that runs the program on the process: run,
// then the exit barrier (every node's writes reach the homes).
func (pr *Process) Start(run func(p *Process)) cpu.Op {
	return cpu.Go(func(p *cpu.Proc) {
		pr.p = p
		pr.timer.start(p.Now())
		run(pr)
		pr.Barrier()
		pr.done, pr.end = true, p.Now()
		pr.timer.stop(p.Now(), &pr.times)
	})
}

func (pr *Process) sharedAddr(addr uint64, words int) (uint64, bool) {
	size := uint64(pr.rt.cfg.Pages * pr.rt.cfg.PageBytes)
	if addr%8 != 0 || addr+8*uint64(words) > size {
		pr.rt.fail(fmt.Errorf("svm: process %d: %d words at shared address %#x are not 8-aligned inside [0, %#x)", pr.id, words, addr, size))
		return 0, false
	}
	return pr.rt.lay.Shared + addr, true
}

// Load reads len(dst) words at shared address addr: one 8-byte load each,
// which faults when the page is invalid.
func (pr *Process) Load(addr uint64, dst []uint64) {
	a, ok := pr.sharedAddr(addr, len(dst))
	if !ok {
		return
	}
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(pr.p.Load(a+8*uint64(i), 8))
	}
}

// Store writes src at shared address addr: one 8-byte store each, which
// faults when the page is not mapped for writing. Under AURC a non-home
// page is write-through and bound: the NI snoops the store and sends it to
// the home.
func (pr *Process) Store(addr uint64, src []uint64) {
	a, ok := pr.sharedAddr(addr, len(src))
	if !ok {
		return
	}
	for i, v := range src {
		pr.rt.chk.store(pr, addr+8*uint64(i), v)
		pr.store(pr.p, a+8*uint64(i), le64(v))
	}
}

// store is a store into exported memory, told to the LocalWrite hook.
func (pr *Process) store(p *cpu.Proc, addr uint64, data []byte) {
	p.Store(addr, data)
	if h := pr.rt.hooks.LocalWrite; h != nil {
		h(pr.id, addr, data)
	}
}

// Compute spends cycles CPU cycles of the program's own work.
func (pr *Process) Compute(cycles int) {
	if cycles > 0 {
		pr.p.Compute(cycles)
	}
}

// Poll is a no-op: the SVM serves requests in notification handlers
// (section 4.4: «The SVM implementation relies on the notification
// mechanism»).
func (pr *Process) Poll() {}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// step charges instrs instructions of bookkeeping.
func step(p *cpu.Proc, label string, instrs int) {
	if instrs > 0 {
		p.Step(cpu.Step{Label: label, Instrs: instrs})
	}
}
