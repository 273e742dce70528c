package vmmc

import (
	"fmt"
	"math/bits"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
)

// Process is a user process of VMMC on one node: its page table (its
// imported proxy pages), its automatic-update bindings and its
// notifications.
type Process struct {
	k    *Kernel
	Name string
	pt   *cpu.PageTable

	// auWriter is whether the process has an automatic-update binding:
	// the threshold handler deschedules only such processes.
	auWriter bool

	onNotify func(p *cpu.Proc, n shrimp.Notification)
	// blocked is the process's own block (Block); inHandler that its
	// handler is running (further notifications wait for its return).
	blocked, inHandler bool
	// queued is the kernel's queue of the process's notifications.
	queued []shrimp.Notification

	// lastSrc is the source address of the last piece started and not
	// yet seen done (pending): Wait polls its page.
	lastSrc uint64
	pending bool

	stats ProcStats
}

// ProcStats count a process's VMMC calls.
type ProcStats struct {
	// Sends is Send calls; Pieces the UDMA transfers they made; Busy the
	// LOADs the NI answered busy (the library retries the LOAD);
	// Retried the pairs made again after a context switch invalidated the
	// STORE (CauseNoDest).
	Sends, Pieces, Busy, Retried uint64
	// Notifications is those delivered to the handler.
	Notifications uint64
}

// Stats returns the process's counts.
func (pr *Process) Stats() ProcStats { return pr.stats }

// PageTable returns the process's page table.
func (pr *Process) PageTable() *cpu.PageTable { return pr.pt }

// Proxy is an imported receive buffer: the OPT entries the kernel gave
// its pages, whose device-proxy pages the process may store to.
type Proxy struct {
	Buffer Buffer
	// Addr and Len are the remote buffer's physical range.
	Addr uint64
	Len  int
	// OPT is the OPT index of each remote page the buffer touches, in
	// order.
	OPT []int
	// owner is the process that imported the buffer: only its page
	// table maps the OPT entries' device-proxy pages.
	owner *Process
}

// remotePage is the index in OPT of the page holding byte off.
func (px *Proxy) remotePage(off, page uint64) int {
	return int((px.Addr%page + off) / page)
}

// Export makes [addr, addr+n) a receive buffer: its pages are pinned and
// marked exported in the IPT, with the interrupt bit if notify (section
// 2.3). p runs the kernel call (nil: untimed, before the simulation runs).
func (pr *Process) Export(p *cpu.Proc, addr uint64, n int, notify bool) (Buffer, error) {
	k := pr.k
	if n < 1 {
		return Buffer{}, fmt.Errorf("vmmc: export of %d bytes: the size must be at least 1", n)
	}
	if addr+uint64(n) > k.UserLimit() {
		return Buffer{}, fmt.Errorf("vmmc: export [%#x, +%d) reaches the kernel's pages at %#x", addr, n, k.UserLimit())
	}
	var b Buffer
	err := k.trapSetup(p, func() error {
		first, last := addr/k.page, (addr+uint64(n)-1)/k.page
		irq := notify || k.p.RecvInterrupt != RecvNone
		for pg := first; pg <= last; pg++ {
			e := k.hw.NI.IPT(int(pg))
			e.Exported = true
			e.Interrupt = e.Interrupt || irq
			if err := k.hw.NI.SetIPT(int(pg), e); err != nil {
				return err
			}
		}
		b = k.dir.add(k.hw.Node, addr, n, notify, pr).Buffer
		return nil
	})
	if err != nil {
		return Buffer{}, fmt.Errorf("vmmc: export: %w", err)
	}
	return b, nil
}

// Import makes a proxy of buffer b: one OPT entry per remote page, from
// the kernel's pool, pointing at it, and the entry's device-proxy page
// mapped read-write in the process (section 2.3).
func (pr *Process) Import(p *cpu.Proc, b Buffer) (*Proxy, error) {
	k := pr.k
	x, ok := k.dir.Lookup(b)
	if !ok {
		return nil, fmt.Errorf("vmmc: import of buffer %v: not exported", b)
	}
	px := &Proxy{Buffer: b, Addr: x.Addr, Len: x.Len, owner: pr}
	err := k.trapSetup(p, func() error {
		first, last := x.Addr/k.page, (x.Addr+uint64(x.Len)-1)/k.page
		if k.proxyNext+int(last-first)+1 > k.cfg.Entries() {
			return fmt.Errorf("the kernel's %d proxy OPT entries are used up", k.cfg.Entries()-k.proxyBase)
		}
		for pg := first; pg <= last; pg++ {
			i := k.proxyNext
			k.proxyNext++
			if err := k.hw.NI.SetOPT(i, shrimp.OPTEntry{Valid: true, DstNode: b.Node, DstPage: uint32(pg)}); err != nil {
				return err
			}
			px.OPT = append(px.OPT, i)
			pr.pt.Protect(k.hw.Map.DevProxy+uint64(i)*k.page, int(k.page), cpu.PermReadWrite)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vmmc: import of buffer %v: %w", b, err)
	}
	return px, nil
}

// Bind binds local pages [local, local+n) to bytes [off, off+n) of the
// proxy buffer for automatic update: page-aligned on both sides (section
// 2.2: «automatic update bindings ... must be page-aligned on both the
// sender and receiver»), the local pages turned write-through (so that
// every store reaches the memory bus, SH-P9) and their OPT entries (one
// per physical page, section 2.3) pointing at the remote pages, with
// combining and the sub-page size (section 4.5.1). A page with a dirty
// line is refused (memsys.SetPolicy does not flush: a workload binds
// before it writes, design R5).
func (pr *Process) Bind(p *cpu.Proc, local uint64, px *Proxy, off uint64, n int, combine bool, subpage int) error {
	k := pr.k
	switch {
	case px == nil:
		return fmt.Errorf("vmmc: bind at %#x: no proxy", local)
	case n < 1:
		return fmt.Errorf("vmmc: bind at %#x: size %d must be at least 1", local, n)
	case local%k.page != 0:
		return fmt.Errorf("vmmc: bind at %#x: the local address is not page-aligned (%d-byte pages)", local, k.page)
	case (px.Addr+off)%k.page != 0:
		return fmt.Errorf("vmmc: bind at %#x: remote address %#x is not page-aligned (%d-byte pages)", local, px.Addr+off, k.page)
	case off+uint64(n) > uint64(px.Len):
		return fmt.Errorf("vmmc: bind at %#x: bytes [%d, %d) lie outside the %d-byte buffer %v", local, off, off+uint64(n), px.Len, px.Buffer)
	case local+uint64(n) > k.UserLimit():
		return fmt.Errorf("vmmc: bind at %#x: reaches the kernel's pages at %#x", local, k.UserLimit())
	}
	pages := (uint64(n) + k.page - 1) / k.page
	for _, c := range k.hw.Mem.Caches {
		line := uint64(c.Config().LineBytes)
		for a := local; a < local+pages*k.page; a += line {
			if _, dirty := c.Holds(a); dirty {
				return fmt.Errorf("vmmc: bind at %#x: line %#x is dirty in %s (bind before writing)", local, a, c.Name())
			}
		}
	}
	err := k.trapSetup(p, func() error {
		if err := k.hw.Mem.SetPolicy(local, pages*k.page, memsys.WriteThrough); err != nil {
			return err
		}
		for i := range pages {
			rp := px.remotePage(off+i*k.page, k.page)
			e := shrimp.OPTEntry{Valid: true, AU: true, Notify: k.p.RecvInterrupt == RecvPacket, Combine: combine,
				Subpage: subpage, DstNode: px.Buffer.Node, DstPage: uint32(px.Addr/k.page) + uint32(rp)}
			if err := k.hw.NI.SetOPT(int(local/k.page+i), e); err != nil {
				return err
			}
		}
		pr.auWriter = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("vmmc: bind at %#x: %w", local, err)
	}
	return nil
}

// Send is a deliberate update of n bytes from local address src to byte
// off of the proxy buffer (section 2.2): the library's checks, a system
// call first if SendSyscall (Table 2), then per piece (Pieces: no local or
// remote page crossed, at most DUMaxBytes) the two-reference UDMA
// initiation (section 2.3: «a two-instruction load/store sequence to
// special I/O-mapped addresses»): a store of the count and notify bit to
// the destination's device-proxy address, then a load of the source's
// memory-proxy address that returns the status; a busy engine is retried.
// The notify bit goes with the last piece (a message's notification), and
// with every piece under RecvInterrupt packet. Unless AsyncSend, Send
// returns when the last piece is done. A send by a process the kernel is
// not running (ErrNotRunning) or through a proxy another process imported
// (ErrNotImporter) is refused before any reference: its STORE would fault
// and the pair be remade for ever (CauseNoDest every time).
func (pr *Process) Send(p *cpu.Proc, src uint64, px *Proxy, off uint64, n int, notify bool) error {
	k := pr.k
	switch {
	case px == nil:
		return fmt.Errorf("vmmc: send from %#x: no proxy", src)
	case n < 1:
		return fmt.Errorf("vmmc: send from %#x: size %d must be at least 1", src, n)
	case off+uint64(n) > uint64(px.Len):
		return fmt.Errorf("vmmc: send from %#x: bytes [%d, %d) lie outside the %d-byte buffer %v", src, off, off+uint64(n), px.Len, px.Buffer)
	case px.owner != pr:
		return fmt.Errorf("vmmc: send from %#x by process %s: buffer %v was not imported by it (%w)", src, pr.Name, px.Buffer, ErrNotImporter)
	case k.current != pr:
		return fmt.Errorf("vmmc: send from %#x by process %s while the kernel runs %s (%w)", src, pr.Name, k.current.Name, ErrNotRunning)
	}
	pieces := Pieces(src, px.Addr, off, n, int(k.page), k.cfg.DUMaxBytes)
	for i, pc := range pieces {
		if a := px.Addr + pc.Off; a%8 > 4 {
			return fmt.Errorf("vmmc: send from %#x: piece %d of %d (%d bytes from %#x) goes to byte %d of an 8-byte word at %v+%d (%w)",
				src, i+1, len(pieces), pc.Len, pc.Src, a%8, px.Buffer, pc.Off, ErrAlign)
		}
	}
	pr.stats.Sends++
	p.Step(cpu.Step{Label: "vmmc.send", Instrs: k.p.SendInstrs})
	if k.p.SendSyscall {
		p.As("vmmc.syscall").Trap(TrapSend)
	}
	for i, pc := range pieces {
		last := i == len(pieces)-1
		nb := (notify || k.p.RecvInterrupt == RecvMessage) && last || k.p.RecvInterrupt == RecvPacket
		rp := px.remotePage(pc.Off, k.page)
		dst := k.hw.Map.DevProxy + uint64(px.OPT[rp])*k.page + (px.Addr+pc.Off)%k.page
		msrc := k.hw.Map.MemProxy + pc.Src
		store := true
		for {
			if store {
				p.As("vmmc.udma.store").Store32(dst, udmaCount(pc.Len, nb))
			}
			st := laneStatus(p.As("vmmc.udma.load").Load32(msrc), msrc)
			if st&shrimp.StatusStarted != 0 {
				break
			}
			if st == shrimp.StatusError|shrimp.CauseNoDest {
				// A context switch between the two references
				// invalidated the STORE: the pair is made again.
				store = true
				pr.stats.Retried++
				continue
			}
			if st&shrimp.StatusError != 0 {
				return fmt.Errorf("vmmc: send piece %d of %d (%d bytes from %#x to %v+%d): %w: %v", i+1, len(pieces), pc.Len, pc.Src, px.Buffer, pc.Off, ErrUDMA, st)
			}
			// Busy: the destination stays latched; the LOAD is retried.
			store = false
			pr.stats.Busy++
		}
		pr.stats.Pieces++
		pr.lastSrc, pr.pending = pc.Src, true
	}
	if !k.p.AsyncSend {
		pr.Wait(p)
	}
	return nil
}

// laneStatus is the UDMA status from a proxy LOAD's 32-bit value v read
// at addr: the NI drives the status word on the EISA's byte lanes, so a
// LOAD whose address (the source) is not a multiple of 4 returns its
// bytes rotated by the address's lane (hib/shrimp memLoad); the library
// puts them back. (Read as the plain value, the status of a source at +2
// or +3 never showed Started or the NoDest error, and Send retried the
// LOAD for ever.)
func laneStatus(v uint32, addr uint64) shrimp.Status {
	return shrimp.Status(bits.RotateLeft32(v, 8*int(addr%4)))
}

// Wait returns when the process's last started piece has been read from
// memory (the engine takes transfers in order, so every earlier piece is
// done too): the NI's CAM (shrimp.NI.DUPending) no longer names its source
// page. assumed: the library polls a completion status the NI keeps per
// transfer; the poll is modelled without bus transactions (a LOAD of the
// memory proxy outside an initiation is an error, CauseNoDest, so it
// cannot be the status), evaluated every processor cycle.
func (pr *Process) Wait(p *cpu.Proc) {
	if !pr.pending {
		return
	}
	ni, page := pr.k.hw.NI, int(pr.lastSrc/pr.k.page)
	p.PollUntil(func() bool { return !ni.DUPending(page) })
	pr.pending = false
}

// OnNotify sets the process's notification handler (section 2.2: «a
// control transfer to a specified user-level handler whenever a message
// is received for that buffer»; «similar in semantics to Unix signals»).
// It runs at the return of the interrupt that popped the record, in user
// mode (the process's page table) with interrupts enabled, before the
// interrupted code resumes; the process's further notifications are held
// while it runs and delivered, in order, when it returns.
func (pr *Process) OnNotify(fn func(p *cpu.Proc, n shrimp.Notification)) { pr.onNotify = fn }

// Block holds notifications in the process's queue (section 2.2:
// «Exporting processes can optionally block and un-block notifications,
// but not for individual receive buffers»).
func (pr *Process) Block(p *cpu.Proc) { pr.blocked = true }

// Unblock delivers the queued notifications in order (as the handler's
// upcall does, with interrupts enabled), then lets new ones through.
func (pr *Process) Unblock(p *cpu.Proc) {
	pr.blocked = false
	if len(pr.queued) > 0 && !pr.inHandler {
		pr.upcall(p)
	}
}

// Queued returns the notifications waiting while blocked.
func (pr *Process) Queued() int { return len(pr.queued) }

// upcall runs the handler for each queued notification, in order, with
// interrupts enabled (an interrupt taken meanwhile queues its records
// behind them) and the process's page table, then puts the mask and the
// table back as they were. From an interrupt (masked), the queue is
// looked at again once interrupts are masked, so a record queued by an
// interrupt taken just before the masking is not left behind.
func (pr *Process) upcall(p *cpu.Proc) {
	c := pr.k.hw.CPU
	was, masked := c.PageTable(), c.Masked()
	c.SetPageTable(pr.pt)
	pr.inHandler = true
	for len(pr.queued) > 0 && !pr.blocked {
		if masked {
			p.EnableInterrupts()
		}
		for len(pr.queued) > 0 && !pr.blocked {
			n := pr.queued[0]
			pr.queued = pr.queued[1:]
			pr.run(p, n)
		}
		if masked {
			p.DisableInterrupts()
		}
	}
	pr.inHandler = false
	c.SetPageTable(was)
}
func (pr *Process) run(p *cpu.Proc, n shrimp.Notification) {
	pr.stats.Notifications++
	pr.k.stats.Delivered++
	pr.onNotify(p, n)
}
