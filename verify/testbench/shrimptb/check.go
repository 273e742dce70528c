package shrimptb

import (
	"bytes"
	"fmt"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/testbench/tbutil"
	"github.com/nisim/nisim/verify/trace"
)

// Rules the checkers report (env.Report) under. The NI reports its own
// outgoing FIFO overflows as shrimp.overflow.
const (
	// RuleOnce: every AU store the snoop logic takes leaves in exactly one
	// packet, every started UDMA transfer too, and every packet reaches
	// its destination's memory exactly once, or is dropped with a reason.
	RuleOnce = "shrimp.once"
	// RuleOrder: per (source, destination), AU packets reach memory in the
	// order they left, and so do DU packets; an AU packet may pass a DU
	// one (section 4.2).
	RuleOrder = "shrimp.order"
	// RuleProtect: the NI masters no EISA transaction outside what it was
	// given: a DU read lies inside the source range of a started UDMA
	// transfer, within one page; an incoming write lies inside one
	// exported page (IPT) and inside its packet's range.
	RuleProtect = "shrimp.protect"
	// RuleNotify: a notification interrupt if and only if the packet's
	// notify bit and the destination page's interrupt bit are both set
	// (SH-P18, section 2.3).
	RuleNotify = "shrimp.notify"
	// RuleFIFO: the outgoing FIFO never holds more than its size.
	RuleFIFO = "shrimp.fifo"
	// RuleScoreboard: packets carry what their stores or source buffer
	// held, and destination memory ends equal to Ref's images.
	RuleScoreboard = "shrimp.scoreboard"
)

// recentDone is how many completed packets per destination the checker
// remembers to name a duplicate. assumed: a duplicated DMA follows its
// original within a few packets.
const recentDone = 64

// checker is the always-on check of one cluster: it feeds Ref from the
// NIs' callbacks, matches the incoming DMA's writes on each node's memory
// bus against Ref's expectations, and watches every EISA transaction the
// NIs master.
type checker struct {
	cl    *Cluster
	nodes []*nodeCheck

	onSnoop   []func(now clock.Time, node int, addr uint64, data []byte, opt shrimp.OPTEntry)
	onOut     []func(now clock.Time, node int, p *shrimp.Packet)
	onIn      []func(now clock.Time, node int, p *shrimp.Packet, hostAddr uint64)
	onDUStart []func(now clock.Time, node int, d shrimp.DUStart)
	onDrop    []func(now clock.Time, node int, d shrimp.Drop)
	onMem     []func(now clock.Time, node int, x *Expect)
}

// nodeCheck is one node's checking state.
type nodeCheck struct {
	id   int
	ni   *shrimp.NI
	path string
	// up is the bridge's master on the memory bus (the incoming DMA's
	// writes reach memory through it), mem host memory's target there; du
	// and in the NI's EISA masters.
	up, mem, du, in string
	// cur is the expectation whose bytes are arriving, got how many of
	// them have.
	cur *Expect
	got int
	// skip is a bus request whose remaining beats are ignored: its start
	// matched nothing (reported once, not once per beat).
	skip *mem.Req
	done []*Expect
	// overtaken holds expectations a later packet of their stream passed
	// (reported then, once).
	overtaken []*Expect
	// duWin is the source ranges of UDMA transfers started, oldest first;
	// a read in one retires those before it.
	duWin []shrimp.DUStart
	// rxWin is the host ranges of incoming packets whose DMA was issued and
	// not yet wholly written.
	rxWin []*rxWindow
	// notifyDue counts packets that must raise a notification interrupt
	// and have not yet.
	notifyDue int
}

// rxWindow is one incoming packet's host range and the bytes of it not
// yet written.
type rxWindow struct {
	addr uint64
	n    int
	left int
}

// maxDUWindows bounds duWin: assumed: the engine and its queue (at most
// 2, SH-P24) plus slack; older starts are long done.
const maxDUWindows = 8

func newChecker(cl *Cluster) *checker {
	c := &checker{cl: cl}
	cl.Ref.pageBytes = uint64(cl.Config.NI.PageBytes)
	for i, n := range cl.Nodes {
		name := fmt.Sprintf("N%d", i)
		nc := &nodeCheck{id: i, ni: n.NI, path: name + ".SHRIMPCheck", up: n.Bridge.Name() + ".Up",
			mem: name + ".Mem", du: name + ".NI.DU", in: name + ".NI.In"}
		c.nodes = append(c.nodes, nc)
		ni := n.NI
		ni.OnSnoop(func(now clock.Time, addr uint64, data []byte, opt shrimp.OPTEntry) {
			c.fifo(now, nc)
			for _, fn := range c.onSnoop {
				fn(now, i, addr, data, opt)
			}
		})
		ni.OnDUStart(func(now clock.Time, d shrimp.DUStart) { c.duStart(now, nc, d) })
		ni.OnPacketOut(func(now clock.Time, p *shrimp.Packet) { c.packetOut(now, nc, p) })
		ni.OnPacketIn(func(now clock.Time, p *shrimp.Packet, hostAddr uint64) { c.packetIn(now, nc, p, hostAddr) })
		ni.OnDrop(func(now clock.Time, d shrimp.Drop) { c.drop(now, nc, d) })
		n.MemBus().Observe(func(now clock.Time, o bus.Observation) { c.observe(now, nc, o) })
		n.PCI.Observe(func(now clock.Time, o bus.Observation) { c.protect(now, nc, o) })
		n.AddIRQHook(func(now clock.Time, cause shrimp.IRQCause) { c.interrupt(now, i, cause) })
	}
	return c
}

func (c *checker) report(now clock.Time, nc *nodeCheck, rule, format string, args ...any) {
	c.cl.Env.Report(now, nc.path, rule, format, args...)
}

func (c *checker) emit(now clock.Time, nc *nodeCheck, kind string, f ...trace.Field) {
	if t := c.cl.Env.Trace; t.Enabled() {
		t.Emit(now, c.cl.Nodes[nc.id].MemBus().Clock().CycleAt(now), nc.path, kind, f...)
	}
}

// fifo checks the outgoing FIFO's occupancy against its size.
func (c *checker) fifo(now clock.Time, nc *nodeCheck) {
	if occ, max := nc.ni.FIFOOccupancy(), c.cl.Config.NI.FIFOBytes; occ > max {
		c.report(now, nc, RuleFIFO, "outgoing FIFO holds %d bytes, more than its %d", occ, max)
	}
}

// duStart records a started UDMA transfer: its source snapshot in Ref,
// its range for the protection monitor. A transfer crossing a page, at
// its source or destination, is a protection violation (SH-P13).
func (c *checker) duStart(now clock.Time, nc *nodeCheck, d shrimp.DUStart) {
	pb := uint64(c.cl.Config.NI.PageBytes)
	if d.Len <= 0 || d.Src/pb != (d.Src+uint64(d.Len)-1)/pb || d.DstAddr/pb != (d.DstAddr+uint64(d.Len)-1)/pb {
		c.report(now, nc, RuleProtect, "UDMA transfer of %d bytes from %#x to %#x crosses a page", d.Len, d.Src, d.DstAddr)
	}
	// The initiating process must hold the destination's device-proxy page
	// (it imported the buffer) and the source's memory-proxy page: a
	// transfer started for another process's references (a UDMA latch
	// that survived a context switch) breaks protection.
	if pr := c.cl.Nodes[nc.id].Kernel.Current(); pr != nil {
		m := c.cl.Config.Map
		pt := pr.PageTable()
		if _, ok := pt.Allows(m.DevProxy+uint64(d.OPT)*pb, 1, true); !ok {
			c.report(now, nc, RuleProtect, "UDMA transfer to OPT entry %d started while process %s, which has not imported it, runs", d.OPT, pr.Name)
		}
		if _, ok := pt.Allows(m.MemProxy+d.Src, max(d.Len, 1), false); !ok {
			c.report(now, nc, RuleProtect, "UDMA transfer from %#x started while process %s, which may not read it, runs", d.Src, pr.Name)
		}
	}
	nc.duWin = append(nc.duWin, d)
	if len(nc.duWin) > maxDUWindows {
		nc.duWin = nc.duWin[1:]
	}
	n := c.cl.Nodes[nc.id]
	dst := nc.ni.OPT(d.OPT).DstNode
	src := make([]byte, max(d.Len, 0))
	if err := n.Memory().Storage().Read(d.Src, src); err != nil {
		c.report(now, nc, RuleProtect, "UDMA source %#x (%d bytes): %v", d.Src, d.Len, err)
	}
	if err := c.cl.Ref.DUStarted(d, dst, src, func(a uint64) bool { return tbutil.DirtyIn(n.Caches(), a) }); err != nil {
		c.report(now, nc, RuleOnce, "%v", err)
	}
	for _, fn := range c.onDUStart {
		fn(now, nc.id, d)
	}
}

// packetOut checks a packet leaving the NI against Ref.
func (c *checker) packetOut(now clock.Time, nc *nodeCheck, p *shrimp.Packet) {
	x, lost, err := c.cl.Ref.PacketOut(nc.id, p)
	for _, l := range lost {
		c.report(now, nc, RuleOnce, "snooped %s never left in a packet (a later store did)", l)
	}
	if err != nil {
		c.report(now, nc, RuleScoreboard, "%v", err)
	}
	c.fifo(now, nc)
	if x != nil && c.cl.Env.Trace.Enabled() {
		c.emit(now, nc, "shrimp.expect", trace.Str("kind", kindName(x.Kind)), trace.Int("dst", int64(x.Dst)),
			trace.Uint("seq", x.Seq), trace.Addr("addr", x.Addr), trace.Int("len", int64(len(x.Data))))
	}
	for _, fn := range c.onOut {
		fn(now, nc.id, p)
	}
}

// packetIn records an incoming packet whose DMA is issued: its range for
// the protection monitor, and whether it owes a notification.
func (c *checker) packetIn(now clock.Time, nc *nodeCheck, p *shrimp.Packet, hostAddr uint64) {
	nc.rxWin = append(nc.rxWin, &rxWindow{addr: hostAddr, n: p.Len, left: p.Len})
	pb := uint64(c.cl.Config.NI.PageBytes)
	if p.Notify && nc.ni.IPT(int(hostAddr/pb)).Interrupt {
		nc.notifyDue++
	}
	for _, fn := range c.onIn {
		fn(now, nc.id, p, hostAddr)
	}
}

// drop feeds an NI's drop to Ref.
func (c *checker) drop(now clock.Time, nc *nodeCheck, d shrimp.Drop) {
	ref := c.cl.Ref
	switch d.Reason {
	case shrimp.DropOverflow:
		if err := ref.Overflowed(nc.id, d.Pkt, d.Addr, d.Len); err != nil {
			c.report(now, nc, RuleOnce, "%v", err)
		}
	case shrimp.DropUnexported, shrimp.DropCRC:
		if d.Reason == shrimp.DropUnexported {
			ref.stats.RxUnexported++
		} else {
			ref.stats.RxCRC++
		}
		x := ref.RxDropped(nc.id, d.Pkt)
		if x != nil && x == nc.cur {
			// A long DU packet torn by a CRC error (R8): its first bursts
			// are in memory; Ref forgets the bytes it cannot know.
			ref.apply(nc.id, x.Addr, x.Data[:nc.got])
			nc.cur = nil
		}
	case shrimp.DropUDMA:
		ref.stats.DURefused++
	default:
		c.report(now, nc, RuleOnce, "drop with unknown reason %v", d.Reason)
	}
	for _, fn := range c.onDrop {
		fn(now, nc.id, d)
	}
}

// interrupt checks a notification interrupt of node's NI against the
// packets that owe one (Node.AddIRQHook).
func (c *checker) interrupt(now clock.Time, node int, cause shrimp.IRQCause) {
	nc := c.nodes[node]
	if cause&shrimp.IRQNotify == 0 {
		return
	}
	if nc.notifyDue == 0 {
		c.report(now, nc, RuleNotify, "notification interrupt with no packet asking for one (notify bit and the page's interrupt bit)")
		return
	}
	nc.notifyDue--
	c.cl.Ref.stats.Notifications++
}

// protect is the protection monitor on node nc's EISA bus: every beat of
// a transaction the NI's DU engine or incoming DMA masters.
func (c *checker) protect(now clock.Time, nc *nodeCheck, o bus.Observation) {
	if o.Err != "" || len(o.Data) == 0 {
		return
	}
	switch o.Master {
	case nc.du:
		if o.Write {
			c.report(now, nc, RuleProtect, "the DU engine wrote %d bytes at %#x (it only reads the source)", len(o.Data), o.Addr)
			return
		}
		end := o.Addr + uint64(len(o.Data))
		for k, d := range nc.duWin {
			if o.Addr >= d.Src && end <= d.Src+uint64(d.Len) {
				nc.duWin = nc.duWin[k:]
				return
			}
		}
		c.report(now, nc, RuleProtect, "DU read of %d bytes at %#x outside every started UDMA transfer's source", len(o.Data), o.Addr)
	case nc.in:
		if !o.Write {
			c.report(now, nc, RuleProtect, "the incoming DMA read %d bytes at %#x (it only writes)", len(o.Data), o.Addr)
			return
		}
		pb := uint64(c.cl.Config.NI.PageBytes)
		end := o.Addr + uint64(len(o.Data))
		if o.Addr/pb != (end-1)/pb {
			c.report(now, nc, RuleProtect, "incoming write of %d bytes at %#x crosses a page", len(o.Data), o.Addr)
		} else if !nc.ni.IPT(int(o.Addr / pb)).Exported {
			c.report(now, nc, RuleProtect, "incoming write of %d bytes at %#x into page %d, which is not exported", len(o.Data), o.Addr, o.Addr/pb)
		}
		for k, w := range nc.rxWin {
			if o.Addr >= w.addr && end <= w.addr+uint64(w.n) {
				w.left -= len(o.Data)
				if w.left <= 0 {
					nc.rxWin = append(nc.rxWin[:k], nc.rxWin[k+1:]...)
				}
				return
			}
		}
		c.report(now, nc, RuleProtect, "incoming write of %d bytes at %#x outside every incoming packet's range", len(o.Data), o.Addr)
	}
}

// observe takes one data phase of node nc's memory bus. A write to
// memory of a page whose OPT entry enables automatic update is a store
// the NI must send (Ref.Snoop): the checker looks it up itself, as the
// snoop logic should, so a store the NI loses is still expected. The
// incoming DMA's writes (the bridge's up path as master) are matched
// against Ref's expectations.
func (c *checker) observe(now clock.Time, nc *nodeCheck, o bus.Observation) {
	if !o.Write || o.Err != "" || len(o.Data) == 0 {
		return
	}
	cfg := c.cl.Config.NI
	if o.Target == nc.mem && cfg.AU && (o.Master != nc.up || cfg.SnoopDMA) {
		if page := int(o.Addr / uint64(cfg.PageBytes)); page < cfg.Entries() {
			if opt := nc.ni.OPT(page); opt.Valid && opt.AU {
				if err := c.cl.Ref.Snoop(nc.id, o.Addr, o.Data, opt); err != nil {
					c.report(now, nc, RuleOnce, "%v", err)
				}
			}
		}
	}
	if o.Master != nc.up || o.Req == nc.skip {
		return
	}
	if o.Target == nc.mem {
		c.cl.Ref.overwritten(nc.id, o.Addr, len(o.Data))
	}
	addr, data := o.Addr, o.Data
	for len(data) > 0 {
		if nc.cur == nil && !c.start(now, nc, addr, data) {
			nc.skip = o.Req
			return
		}
		x := nc.cur
		if want := x.Addr + uint64(nc.got); addr != want {
			c.report(now, nc, RuleOnce, "%v only partly reached memory (%d bytes): the incoming DMA went on at %#x", x, nc.got, addr)
			nc.cur = nil
			continue
		}
		n := min(len(data), len(x.Data)-nc.got)
		if x.Known != nil {
			// Bytes Ref does not know take what memory gets.
			for i := range n {
				if !x.Known[nc.got+i] {
					x.Data[nc.got+i] = data[i]
				}
			}
		}
		if !bytes.Equal(data[:n], x.Data[nc.got:nc.got+n]) {
			c.report(now, nc, RuleScoreboard, "incoming DMA wrote % x at %#x for %v, Ref has % x", head(data[:n]), addr, x, head(x.Data[nc.got:nc.got+n]))
		}
		nc.got += n
		addr, data = addr+uint64(n), data[n:]
		if nc.got == len(x.Data) {
			c.complete(now, nc, x)
		}
	}
}

// start finds the expectation a write starting at addr with the first
// bytes data belongs to: the head of one of the destination's (source,
// kind) streams should be it; one further back in a stream is reported
// as an order violation (the ones before it are overtaken); one seen
// already is a duplicate. It returns false when none fits.
func (c *checker) start(now clock.Time, nc *nodeCheck, addr uint64, data []byte) bool {
	ref := c.cl.Ref
	d := nc.id
	fits := func(x *Expect, match bool) bool {
		return x != nil && x.Addr == addr && (!match || prefix(x, data))
	}
	for _, match := range []bool{true, false} {
		// Heads first: any stream's oldest pending packet may come next.
		for s := range ref.nodes {
			for k := range 2 {
				q, h := ref.queue[d][s][k], ref.head[d][s][k]
				if h < len(q) && fits(q[h], match) {
					x := q[h]
					ref.remove(d, s, k, h)
					nc.cur, nc.got = x, 0
					return true
				}
			}
		}
		// Then further back in a stream: an order violation.
		for s := range ref.nodes {
			for k := range 2 {
				q, h := ref.queue[d][s][k], ref.head[d][s][k]
				for i := h + 1; i < len(q); i++ {
					x := q[i]
					if !fits(x, match) {
						continue
					}
					var passed []*Expect
					for j := h; j < i; j++ {
						if q[j] != nil {
							passed = append(passed, q[j])
							q[j] = nil
						}
					}
					nc.overtaken = append(nc.overtaken, passed...)
					more := ""
					if len(passed) > 1 {
						more = fmt.Sprintf(" and %d more earlier packets of its stream", len(passed)-1)
					}
					c.report(now, nc, RuleOrder, "%v reached memory before %v%s", x, passed[0], more)
					ref.remove(d, s, k, i)
					nc.cur, nc.got = x, 0
					return true
				}
			}
		}
		for k, x := range nc.overtaken {
			if fits(x, match) {
				nc.overtaken = append(nc.overtaken[:k], nc.overtaken[k+1:]...)
				nc.cur, nc.got = x, 0
				return true
			}
		}
		for k := len(nc.done) - 1; k >= 0; k-- {
			if x := nc.done[k]; fits(x, match) {
				c.report(now, nc, RuleOnce, "incoming DMA wrote %v a second time", x)
				return false
			}
		}
	}
	c.report(now, nc, RuleOnce, "incoming DMA wrote % x at %#x, where no packet is expected", head(data), addr)
	return false
}

// prefix reports whether data begins x's bytes, the ones Ref knows.
func prefix(x *Expect, data []byte) bool {
	for i := range min(len(data), len(x.Data)) {
		if (x.Known == nil || x.Known[i]) && data[i] != x.Data[i] {
			return false
		}
	}
	return true
}

// complete ends an expectation: all its bytes are in memory.
func (c *checker) complete(now clock.Time, nc *nodeCheck, x *Expect) {
	nc.cur = nil
	ref := c.cl.Ref
	ref.stats.Delivered++
	ref.apply(nc.id, x.Addr, x.Data)
	if len(nc.done) == recentDone {
		nc.done = append(nc.done[:0], nc.done[1:]...)
	}
	nc.done = append(nc.done, x)
	if c.cl.Env.Trace.Enabled() {
		c.emit(now, nc, "shrimp.mem", trace.Str("kind", kindName(x.Kind)), trace.Int("src", int64(x.Src)), trace.Uint("seq", x.Seq),
			trace.Addr("addr", x.Addr), trace.Int("len", int64(len(x.Data))), trace.Hash("data", x.Data))
	}
	for _, fn := range c.onMem {
		fn(now, nc.id, x)
	}
}

// finish runs the end-of-run checks: nothing pending (shrimp.once, and
// shrimp.notify for owed notifications), and every page packets wrote
// equal in memory to Ref's image (shrimp.scoreboard), except lines still
// dirty in a cache.
func (c *checker) finish(now clock.Time) {
	ref := c.cl.Ref
	for _, nc := range c.nodes {
		if p := ref.PendingStores(nc.id); p > 0 {
			s := ref.snooped[nc.id][ref.sHead[nc.id]] // the head is never a removed store
			c.report(now, nc, RuleOnce, "%d snooped AU stores never left in a packet, the first % x at %#x (to node %d at %#x)",
				p, head(s.data), s.addr, s.dst, s.dstAddr)
		}
		for _, d := range ref.Started(nc.id) {
			c.report(now, nc, RuleOnce, "UDMA transfer of %d bytes from %#x to %#x never left whole", d.Len, d.Src, d.DstAddr)
		}
		if nc.cur != nil {
			c.report(now, nc, RuleOnce, "%v only partly reached memory (%d bytes)", nc.cur, nc.got)
		}
		for _, x := range append(nc.overtaken, ref.Pending(nc.id)...) {
			c.report(now, nc, RuleOnce, "%v never reached memory and was not dropped", x)
		}
		if nc.notifyDue > 0 {
			c.report(now, nc, RuleNotify, "%d packets with the notify bit to interrupting pages raised no notification interrupt", nc.notifyDue)
		}
		n := c.cl.Nodes[nc.id]
		st := n.Memory().Storage()
		line := c.cl.Config.Host.LastLevel().LineBytes
		dirty := func(a uint64) bool { return tbutil.DirtyIn(n.Caches(), a) }
		buf := make([]byte, ref.pageBytes)
		for _, im := range ref.pages[nc.id] {
			if err := st.Read(im.base, buf); err != nil {
				c.report(now, nc, RuleScoreboard, "page %#x: %v", im.base, err)
				continue
			}
			unknown := func(off int) bool { return !im.known[off] }
			if off := tbutil.FirstStale(buf, im.data, im.base, line, unknown, dirty); off >= 0 {
				c.report(now, nc, RuleScoreboard, "page %#x at %#x: memory has %#02x, Ref %#02x", im.base, im.base+uint64(off), buf[off], im.data[off])
			}
		}
	}
}

// OnSnoop adds a function called for every AU-enabled store an NI's snoop
// logic takes (after Ref has it). The testbench owns the NIs' callbacks:
// add hooks here, not with shrimp.NI's.
func (c *Cluster) OnSnoop(fn func(now clock.Time, node int, addr uint64, data []byte, opt shrimp.OPTEntry)) {
	c.chk.onSnoop = append(c.chk.onSnoop, fn)
}

// OnPacketOut adds a function called when a packet leaves an NI's
// arbiter for the NIC (after Ref has checked it).
func (c *Cluster) OnPacketOut(fn func(now clock.Time, node int, p *shrimp.Packet)) {
	c.chk.onOut = append(c.chk.onOut, fn)
}

// OnPacketIn adds a function called when an NI issues an incoming
// packet's DMA to host address hostAddr.
func (c *Cluster) OnPacketIn(fn func(now clock.Time, node int, p *shrimp.Packet, hostAddr uint64)) {
	c.chk.onIn = append(c.chk.onIn, fn)
}

// OnDUStart adds a function called when an NI starts a UDMA transfer.
func (c *Cluster) OnDUStart(fn func(now clock.Time, node int, d shrimp.DUStart)) {
	c.chk.onDUStart = append(c.chk.onDUStart, fn)
}

// OnDrop adds a function called for every NI drop, with the node.
func (c *Cluster) OnDrop(fn func(now clock.Time, node int, d shrimp.Drop)) {
	c.chk.onDrop = append(c.chk.onDrop, fn)
}

// OnMemory adds a function called when a packet's last byte reaches its
// destination's memory (the memory-bus data phase of the incoming DMA's
// write through the bridge): the point a polling load can see it.
func (c *Cluster) OnMemory(fn func(now clock.Time, node int, x *Expect)) {
	c.chk.onMem = append(c.chk.onMem, fn)
}
