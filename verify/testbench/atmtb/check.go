package atmtb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/atm"
)

// Rules the always-on checkers report (env.Report) under (issue 15
// section 5, design 6.2). The board reports its own fore.txfull,
// fore.txseq and fore.rxempty, the kernel rma.stale and an unanswered CAS
// (rma.cas); the engine's progress monitor is the watchdog.
const (
	// RuleCells: cell conservation. Every cell a board handed to the
	// network is delivered into a receiving RX FIFO or lost with a count
	// (switch drop, link drop or overflow, RX FIFO full, bad HEC, bad
	// CRC-10, a directed drop); no cell is delivered that no board sent;
	// every cell a kernel says it sent entered its board's TX FIFO; every
	// cell a kernel popped was handled (accepted or refused).
	RuleCells = "atm.cells"
	// RuleOrder: per VC, cells enter the receiver's RX FIFO in the order
	// they were sent (AT-P19).
	RuleOrder = "atm.order"
	// RuleScoreboard: a handler accepts only cells whose payload is the
	// one sent, every word it writes is the sent word at Ref's address,
	// reaches memory, and memory ends equal to Ref's image; a READ target
	// reads what Ref has.
	RuleScoreboard = "rma.scoreboard"
	// RuleProtect: the receiving kernel's verdict on every cell is Ref's
	// (section 2.3's checks), and no handler write lies outside an
	// exported, granted, writable, non-inhibited segment.
	RuleProtect = "rma.protect"
	// RuleIRQ: no lost RX interrupt: a cell does not wait in an RX FIFO
	// longer than IRQPatience while the interrupt is enabled and the CPU
	// unmasked, and no cell is left in it at the end.
	RuleIRQ = "atm.irq"
	// RuleCAS: every CAS executes once per request id, sees Ref's value
	// (linearizable in the target's execution order), and a resend is
	// answered with the first execution's result.
	RuleCAS = "rma.cas"
	// RuleRPC: every RPC call id is executed once at its server (a
	// duplicate is answered from the cached reply, section 3.1.2), and
	// every call that completes returns the result its execution's
	// procedure returned (design 6.2; servers built by NewRPCServer).
	RuleRPC = "rpc.once"
)

// IRQPatience is the longest a cell may wait in an RX FIFO with the
// interrupt enabled and the CPU unmasked. assumed: 200 µs (design 6.2),
// over 20 times one cell's handling (about 9 µs, design 5.3).
const IRQPatience = 200 * clock.Microsecond

// Checker is a cluster's always-on checking: it owns the boards' cell
// hooks, the kernels' event hooks and the switch's drop hook, feeds Ref,
// and reports violations to the Env's monitor. Build attaches one to
// every cluster (Checks returns it).
type Checker struct {
	env    *env.Env
	nodes  []*Node
	links  []*link.Dir
	ref    *Ref
	chk    []*nodeChk
	cells  map[uint64]*cellRec
	forged map[uint64]bool
	last   map[uint32]uint64

	onEvent []func(now clock.Time, ev rma.Event)
}

// cellRec is a cell between its board's TX FIFO and the receiver's RX
// FIFO.
type cellRec struct {
	sent  [48]byte
	state uint8
}

const (
	inTx uint8 = iota
	onWire
	inRx
)

// popped is a cell software read from an RX FIFO with the interrupt on,
// waiting for its kernel's verdict.
type popped struct {
	id   uint64
	vci  uint16
	got  [48]byte
	sent [48]byte
}

// nodeChk is one node's checking state.
type nodeChk struct {
	id   int
	path string
	// popped are cells read and not yet handled; cur the one accepted
	// last (its memory writes follow).
	popped []popped
	cur    *popped
	curPl  rma.Payload
	curSrc int
	// sends are EvSends not yet matched to a TX cell, txs TX cells (that
	// decode) not yet matched to an EvSend.
	sends []rma.Event
	txs   [][48]byte
	// rxAt is when each cell in the RX FIFO entered it.
	rxAt     []clock.Time
	irqFired bool
	// land tracks remote writes on their way to memory and other writes
	// to segment words (by word address).
	land map[uint64]*landing
	// lo, hi bound the node's exported segments; nsegs counts them.
	lo, hi uint64
	nsegs  int
}

// landing is one word's remote writes not yet in memory (expect) and
// memory writes no remote write has claimed (other).
type landing struct {
	expect []uint32
	other  []uint32
}

// maxOther bounds landing.other: assumed: a word is written by others
// at most a few times between two remote writes the checker compares.
const maxOther = 8

// maxTxUnmatched bounds nodeChk.txs: raw mode's cells (design 3.3) are
// never announced by an EvSend.
const maxTxUnmatched = 64

// Checks returns the checker Build attached to cl.
func Checks(cl *Cluster) *Checker { return cl.checker }

// RefOf returns cl's reference model (the Cluster.Ref field; kept for the
// specs and scenarios that take it from a function).
func RefOf(cl *Cluster) *Ref { return cl.Ref }

// attachChecker builds cl's checker and reference model (Cluster.Ref),
// and takes the hooks.
func attachChecker(cl *Cluster) {
	var ks []*rma.Kernel
	for _, n := range cl.Nodes {
		ks = append(ks, n.Kernel)
	}
	c := &Checker{env: cl.Env, nodes: cl.Nodes, ref: NewRef(ks), cells: map[uint64]*cellRec{},
		forged: map[uint64]bool{}, last: map[uint32]uint64{}}
	cl.Ref, cl.checker = c.ref, c
	if cl.Direct != nil {
		c.links = append(c.links, cl.Direct.From(link.A), cl.Direct.From(link.B))
	}
	if cl.Star != nil {
		for _, l := range cl.Star.Links {
			c.links = append(c.links, l.From(link.A), l.From(link.B))
		}
		cl.Star.Switch.OnDrop(func(now clock.Time, port int, f link.Flit, why atm.DropReason) {
			c.switchDrop(now, f)
		})
	}
	for i, n := range cl.Nodes {
		nc := &nodeChk{id: i, path: fmt.Sprintf("N%d.ATMCheck", i), land: map[uint64]*landing{}}
		c.chk = append(c.chk, nc)
		b := n.Board
		b.OnTx(func(now clock.Time, cell *fore.Cell) { c.tx(now, nc, cell) })
		b.OnWire(func(now clock.Time, cell *fore.Cell) { c.wire(now, nc, cell) })
		b.OnRx(func(now clock.Time, cell *fore.Cell) { c.rx(now, nc, cell) })
		b.OnPop(func(now clock.Time, cell *fore.Cell) { c.pop(now, nc, cell) })
		b.OnDrop(func(now clock.Time, cell *fore.Cell, why fore.DropReason) { c.drop(now, nc, cell, why) })
		n.Kernel.OnEvent(func(now clock.Time, ev rma.Event) { c.event(now, nc, ev) })
		n.Memory().SubscribeWrites(func(now clock.Time, w mem.WriteEvent) { c.landed(now, nc, w) })
	}
	cl.OnFinish(c.finish)
}

// Ref returns the reference model.
func (c *Checker) Ref() *Ref { return c.ref }

// OnEvent adds fn to the functions called with every kernel event (the
// checker owns the kernels' OnEvent hook), after the checker has seen it.
func (c *Checker) OnEvent(fn func(now clock.Time, ev rma.Event)) { c.onEvent = append(c.onEvent, fn) }

func (c *Checker) report(now clock.Time, nc *nodeChk, rule, format string, args ...any) {
	if rule == RuleScoreboard || rule == RuleProtect || rule == RuleCAS {
		c.ref.stats.Mismatches++
	}
	c.env.Report(now, nc.path, rule, format, args...)
}

// Forge registers flit as a forged cell and injects it into node's board
// as if from the wire (fore.Board.Inject): the negative specs' receiver
// checks. Its Packet must not be an id a board gives (node<<40|seq:
// choose a node above the cluster's).
func (c *Checker) Forge(now clock.Time, node int, flit link.Flit) {
	c.forged[flit.Packet()] = true
	c.ref.stats.Forged++
	c.nodes[node].Board.Inject(now, flit)
}

// tx takes a cell entering node's TX FIFO: its payload is what it must
// deliver; a cell that decodes is matched to its kernel's EvSend.
func (c *Checker) tx(now clock.Time, nc *nodeChk, cell *fore.Cell) {
	if c.cells[cell.ID] != nil {
		c.report(now, nc, RuleCells, "cell %#x entered the TX FIFO twice", cell.ID)
	}
	c.cells[cell.ID] = &cellRec{sent: cell.Payload, state: inTx}
	if _, err := rma.Decode(cell.Payload); err != nil {
		return
	}
	for i, ev := range nc.sends {
		if sendMatches(&ev, &cell.Payload) {
			nc.sends = slices.Delete(nc.sends, i, i+1)
			return
		}
	}
	nc.txs = append(nc.txs, cell.Payload)
	if len(nc.txs) > maxTxUnmatched {
		nc.txs = nc.txs[1:]
	}
}

// sendMatches reports whether payload b carries what EvSend ev announced.
func sendMatches(ev *rma.Event, b *[48]byte) bool {
	pl, err := rma.Decode(*b)
	return err == nil && pl.Op == ev.Op && pl.Desc == ev.Desc && int(pl.Offset) == ev.Offset && pl.Count == ev.Count &&
		pl.ReqID == ev.ReqID && bytes.Equal(pl.Data[:len(ev.Data)], ev.Data)
}

func (c *Checker) wire(now clock.Time, nc *nodeChk, cell *fore.Cell) {
	r := c.cells[cell.ID]
	if r == nil || r.state != inTx {
		c.report(now, nc, RuleCells, "cell %#x left for the wire without being in the TX FIFO", cell.ID)
		return
	}
	r.state = onWire
}

func (c *Checker) rx(now clock.Time, nc *nodeChk, cell *fore.Cell) {
	nc.rxAt = append(nc.rxAt, now)
	c.irqAge(now, nc)
	if c.forged[cell.ID] {
		return
	}
	r := c.cells[cell.ID]
	if r == nil || r.state != onWire {
		c.report(now, nc, RuleCells, "cell %#x entered the RX FIFO but no board sent it (or it was delivered before)", cell.ID)
		return
	}
	r.state = inRx
	// Per-VC order: the sending board numbers its cells.
	key := uint32(nc.id)<<16 | uint32(cell.Header.VCI)
	seq := cell.ID & (1<<40 - 1)
	if last, ok := c.last[key]; ok && seq <= last {
		c.report(now, nc, RuleOrder, "VC %d: cell %#x (seq %d) entered the RX FIFO after seq %d", cell.Header.VCI, cell.ID, seq, last)
	}
	c.last[key] = seq
}

// irqAge reports a cell waiting too long at the head of the RX FIFO with
// the interrupt enabled and the CPU unmasked: a lost wake-up.
func (c *Checker) irqAge(now clock.Time, nc *nodeChk) {
	n := c.nodes[nc.id]
	if nc.irqFired || len(nc.rxAt) == 0 || now-nc.rxAt[0] <= IRQPatience || !n.Board.IRQEnabled() || n.CPUs[0].Masked() {
		return
	}
	nc.irqFired = true
	c.report(now, nc, RuleIRQ, "a cell has waited %v in the RX FIFO (%d cells) with the interrupt enabled and the CPU unmasked: a lost wake-up",
		now-nc.rxAt[0], n.Board.RxLen())
}

func (c *Checker) pop(now clock.Time, nc *nodeChk, cell *fore.Cell) {
	if len(nc.rxAt) > 0 {
		nc.rxAt = nc.rxAt[1:]
	}
	p := popped{id: cell.ID, vci: cell.Header.VCI, got: cell.Payload, sent: cell.Payload}
	if r := c.cells[cell.ID]; r != nil {
		p.sent = r.sent
		delete(c.cells, cell.ID)
	}
	if !c.nodes[nc.id].Board.IRQEnabled() {
		return // raw mode's user loop, no kernel (design 3.3)
	}
	nc.popped = append(nc.popped, p)
}

func (c *Checker) drop(now clock.Time, nc *nodeChk, cell *fore.Cell, why fore.DropReason) {
	s := &c.ref.stats
	switch why {
	case fore.DropRxFull:
		s.LostRxFull++
	case fore.DropHEC:
		s.LostHEC++
	case fore.DropCRC:
		s.LostCRC++
	case fore.DropTest:
		s.LostTest++
	}
	if c.forged[cell.ID] {
		return
	}
	r := c.cells[cell.ID]
	want := onWire
	if why == fore.DropTest {
		want = inTx
	}
	if r == nil || r.state != want {
		c.report(now, nc, RuleCells, "cell %#x dropped (%v) where it was not", cell.ID, why)
		return
	}
	delete(c.cells, cell.ID)
}

func (c *Checker) switchDrop(now clock.Time, f link.Flit) {
	c.ref.stats.LostSwitch++
	if r := c.cells[f.Packet()]; r != nil && r.state == onWire {
		delete(c.cells, f.Packet())
		return
	}
	c.env.Report(now, "ATM.Check", RuleCells, "the switch dropped cell %#x, which was not on its way", f.Packet())
}

// event takes node nc's kernel events.
func (c *Checker) event(now clock.Time, nc *nodeChk, ev rma.Event) {
	c.segments(nc)
	ref := c.ref
	switch ev.Kind {
	case rma.EvSend:
		ref.Issue(nc.id, ev)
		matched := false
		for i := range nc.txs {
			if sendMatches(&ev, &nc.txs[i]) {
				nc.txs = slices.Delete(nc.txs, i, i+1)
				matched = true
				break
			}
		}
		if !matched {
			nc.sends = append(nc.sends, ev)
		}
	case rma.EvRefuseSend:
		ref.stats.RefusedSend[min(int(ev.Reason), len(ref.stats.RefusedSend)-1)]++
	case rma.EvRecv, rma.EvRefuseRecv:
		c.handled(now, nc, ev)
	case rma.EvMemWrite:
		c.memWrite(now, nc, ev)
	case rma.EvMemRead:
		if v, ok := ref.Word(nc.id, ev.Addr); ok && len(ev.Data) == 4 && le32(ev.Data) != v {
			c.report(now, nc, RuleScoreboard, "READ from node %d read %#x at %#x, Ref has %#x", ev.Src, le32(ev.Data), ev.Addr, v)
		}
	case rma.EvCASExec, rma.EvCASDup:
		seen, swapped := le32(ev.Data), len(ev.Data) > 4 && ev.Data[4] == 1
		var err error
		if ev.Kind == rma.EvCASDup {
			err = ref.CASDup(nc.id, ev.Src, ev.ReqID, seen, swapped)
		} else if nc.cur != nil && nc.curPl.Op == rma.OpCASReq {
			sent, _ := rma.Decode(nc.cur.sent)
			err = ref.CASExec(nc.id, ev.Src, ev.ReqID, ev.Addr, sent.Word(0), sent.Word(1), seen, swapped)
		} else {
			err = fmt.Errorf("CAS request %d from node %d executed with no CAS cell accepted", ev.ReqID, ev.Src)
		}
		if err != nil {
			ref.stats.Mismatches--
			c.report(now, nc, RuleCAS, "%v", err)
		}
	case rma.EvRetransmit:
		ref.stats.Retransmits++
	}
	for _, fn := range c.onEvent {
		fn(now, ev)
	}
}

// handled checks a kernel's verdict on the cell it popped first.
func (c *Checker) handled(now clock.Time, nc *nodeChk, ev rma.Event) {
	nc.cur = nil
	if len(nc.popped) == 0 {
		c.report(now, nc, RuleCells, "the kernel handled a cell (%v) it never read from the RX FIFO", ev.Kind)
		return
	}
	p := nc.popped[0]
	nc.popped = nc.popped[1:]
	got := rma.OK
	if ev.Kind == rma.EvRefuseRecv {
		got = ev.Reason
		c.ref.stats.RefusedRecv[min(int(got), len(c.ref.stats.RefusedRecv)-1)]++
	}
	want := c.ref.Verdict(nc.id, p.vci, p.got)
	if got != want {
		c.report(now, nc, RuleProtect, "cell %#x on VC %d: the kernel's verdict is %v, Ref's %v", p.id, p.vci, got, want)
	}
	if got != rma.OK {
		return
	}
	if p.got != p.sent {
		c.report(now, nc, RuleScoreboard, "cell %#x accepted with a payload that is not the one sent (a corrupted cell counted as delivered)", p.id)
	}
	pl, _ := rma.Decode(p.got)
	src, _, _ := rma.SourceOf(p.vci)
	nc.cur, nc.curPl, nc.curSrc = &p, pl, src
	c.ref.Accept(nc.id, src, &pl)
}

// memWrite checks one word a handler wrote: the cell it belongs to was
// accepted, Ref puts it at that address, it is the word the cell was
// sent with, and the address is inside a segment the source may write.
func (c *Checker) memWrite(now clock.Time, nc *nodeChk, ev rma.Event) {
	p := nc.cur
	if p == nil {
		c.report(now, nc, RuleProtect, "the handler wrote %d bytes at %#x for no accepted cell", len(ev.Data), ev.Addr)
		return
	}
	pl := &nc.curPl
	sent, _ := rma.Decode(p.sent)
	i := ev.Offset - int(pl.Offset)
	var want uint32
	src := nc.curSrc
	switch pl.Op {
	case rma.OpCASReq:
		i, want = 0, sent.Word(1)
	case rma.OpCASReply, rma.OpReadReply:
		src = -1
		want = sent.Word(i)
	default:
		want = sent.Word(i)
	}
	addr, ok := c.ref.Addr(nc.id, pl, i)
	switch {
	case !ok || i < 0 || i >= opWords(pl) || ev.Addr != addr:
		c.report(now, nc, RuleProtect, "%v cell %#x: the handler wrote word %d at %#x, Ref puts it at %#x (in segment: %t)",
			pl.Op, p.id, i, ev.Addr, addr, ok)
	case !c.ref.Inside(nc.id, src, ev.Addr, len(ev.Data)):
		c.report(now, nc, RuleProtect, "%v cell %#x: the handler wrote at %#x, outside every segment node %d may write", pl.Op, p.id, ev.Addr, nc.curSrc)
	}
	if len(ev.Data) != 4 || le32(ev.Data) != want {
		c.report(now, nc, RuleScoreboard, "%v cell %#x: the handler wrote % x at %#x, the cell was sent with %#x", pl.Op, p.id, ev.Data, ev.Addr, want)
	}
	v := le32(ev.Data)
	c.ref.Write(nc.id, ev.Addr, v)
	// Match the write with its landing in memory.
	l := nc.land[ev.Addr]
	if l == nil {
		l = &landing{}
		nc.land[ev.Addr] = l
	}
	if j := slices.Index(l.other, v); j >= 0 {
		l.other = l.other[j+1:]
	} else {
		l.expect = append(l.expect, v)
	}
}

// segments refreshes node nc's segment range from its kernel's exports.
func (c *Checker) segments(nc *nodeChk) {
	k := c.nodes[nc.id].Kernel
	for nc.nsegs < rma.NumSegments {
		s := k.Segment(uint8(nc.nsegs))
		if s == nil {
			return
		}
		if nc.nsegs == 0 || s.Base < nc.lo {
			nc.lo = s.Base
		}
		nc.hi = max(nc.hi, s.Base+uint64(s.Bytes))
		nc.nsegs++
	}
}

// landed takes a write reaching node nc's memory: a remote write's word
// arriving, or another write to a segment word (Ref forgets the word).
func (c *Checker) landed(_ clock.Time, nc *nodeChk, w mem.WriteEvent) {
	c.segments(nc)
	if w.Addr >= nc.hi || w.Addr+uint64(len(w.Data)) <= nc.lo {
		return
	}
	for a := (w.Addr + 3) &^ 3; a+4 <= w.Addr+uint64(len(w.Data)); a += 4 {
		if a < nc.lo || a >= nc.hi {
			continue
		}
		v := binary.LittleEndian.Uint32(w.Data[a-w.Addr:])
		l := nc.land[a]
		if l != nil && len(l.expect) > 0 && l.expect[0] == v {
			l.expect = l.expect[1:]
			if len(l.expect) == 0 && len(l.other) == 0 {
				delete(nc.land, a)
			}
			continue
		}
		if l == nil {
			l = &landing{}
			nc.land[a] = l
		}
		l.other = append(l.other, v)
		if len(l.other) > maxOther {
			l.other = l.other[1:]
		}
		c.ref.Forget(nc.id, a)
	}
}

// finish runs the end checks.
func (c *Checker) finish(now clock.Time) {
	// Conservation: cells still on the wire are the links' losses.
	var wire, inTxN uint64
	var firstWire, firstTx uint64
	ids := make([]uint64, 0, len(c.cells))
	for id := range c.cells {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		switch c.cells[id].state {
		case onWire:
			if wire == 0 {
				firstWire = id
			}
			wire++
		case inTx:
			if inTxN == 0 {
				firstTx = id
			}
			inTxN++
		}
	}
	var linkLost uint64
	for _, d := range c.links {
		st := d.Stats()
		linkLost += st.Dropped + st.Overflows
	}
	c.ref.stats.LostLink = linkLost
	glob := &nodeChk{path: "ATM.Check"}
	if wire != linkLost {
		c.report(now, glob, RuleCells, "%d cells left for the network and never arrived (the first %#x), the links lost %d", wire, firstWire, linkLost)
	}
	if inTxN > 0 {
		c.report(now, glob, RuleCells, "%d cells never left their TX FIFO (the first %#x)", inTxN, firstTx)
	}
	for _, nc := range c.chk {
		n := c.nodes[nc.id]
		if len(nc.sends) > 0 {
			ev := nc.sends[0]
			c.report(now, nc, RuleCells, "%d cells the kernel sent never entered the TX FIFO (the first %v to node %d, req %d)", len(nc.sends), ev.Op, ev.Dst, ev.ReqID)
		}
		if len(nc.popped) > 0 {
			c.report(now, nc, RuleCells, "%d cells read from the RX FIFO were never handled (the first %#x)", len(nc.popped), nc.popped[0].id)
		}
		if n.Board.RxLen() > 0 && n.Board.IRQEnabled() {
			c.report(now, nc, RuleIRQ, "%d cells left in the RX FIFO with the interrupt enabled: a lost wake-up", n.Board.RxLen())
		}
		// Remote writes that never reached memory, then the image.
		addrs := make([]uint64, 0, len(nc.land))
		for a := range nc.land {
			addrs = append(addrs, a)
		}
		slices.Sort(addrs)
		for _, a := range addrs {
			if l := nc.land[a]; len(l.expect) > 0 {
				c.report(now, nc, RuleScoreboard, "the handler's write of %#x at %#x never reached memory", l.expect[0], a)
				break
			}
		}
		img := c.ref.image[nc.id]
		addrs = addrs[:0]
		for a := range img {
			addrs = append(addrs, a)
		}
		slices.Sort(addrs)
		st := n.Memory().Storage()
		for _, a := range addrs {
			if l := nc.land[a]; l != nil && (len(l.other) > 0 || len(l.expect) > 0) {
				continue
			}
			b, err := st.Bytes(a, 4)
			if err != nil || le32(b) != img[a] {
				c.report(now, nc, RuleScoreboard, "memory at %#x holds %#x at the end, Ref %#x", a, le32(b), img[a])
				break
			}
		}
	}
}

// RPCServer is an RPC server (host/rpc) whose executions and whose
// clients' results the cluster's rpc.once checker watches: build servers
// with NewRPCServer and make calls with its Call.
type RPCServer struct {
	*rpc.Server
	env  *env.Env
	path string
	// execs are the executions by call id (looked up, never iterated).
	execs map[uint32]*rpcExec
	// result is what the last procedure run returned (a procedure runs on
	// the server's one program, and OnExec follows its return with no
	// other procedure in between).
	result uint32
	hooks  []func(now clock.Time, stack int, call uint32)
	// Checked counts the calls whose result Call checked.
	Checked uint64
}

// rpcExec is a call id's executions and the first one's result.
type rpcExec struct {
	n      int
	result uint32
}

// NewRPCServer builds an RPC server on node's kernel with the cluster's
// RPC parameters (rpc.NewServer: stacks stacks of stackBytes bytes,
// procedures procs) and puts it under the rpc.once checker: every
// execution is counted per call id (a second one is a violation) with
// the result its procedure returned. It takes the server's OnExec hook
// (add others with RPCServer.OnExec).
func NewRPCServer(cl *Cluster, node, stacks, stackBytes int, procs map[uint16]rpc.Proc) (*RPCServer, error) {
	if node < 0 || node >= len(cl.Nodes) {
		return nil, fmt.Errorf("atmtb: RPC server node %d must be in 0..%d", node, len(cl.Nodes)-1)
	}
	s := &RPCServer{env: cl.Env, path: fmt.Sprintf("N%d.RPCCheck", node), execs: map[uint32]*rpcExec{}}
	wrapped := make(map[uint16]rpc.Proc, len(procs))
	for n, fn := range procs {
		if fn == nil {
			wrapped[n] = nil // rpc.NewServer names it
			continue
		}
		wrapped[n] = func(p *cpu.Proc, args []uint32) uint32 {
			s.result = fn(p, args)
			return s.result
		}
	}
	srv, err := rpc.NewServer(cl.Nodes[node].Kernel, cl.Config.RPC, stacks, stackBytes, wrapped)
	if err != nil {
		return nil, fmt.Errorf("atmtb: %w", err)
	}
	s.Server = srv
	srv.OnExec(s.exec)
	return s, nil
}

// OnExec adds fn to the functions called with every execution, after the
// checker has seen it.
func (s *RPCServer) OnExec(fn func(now clock.Time, stack int, call uint32)) {
	s.hooks = append(s.hooks, fn)
}

// Execs returns how many times call id call was executed.
func (s *RPCServer) Execs(call uint32) int {
	if x := s.execs[call]; x != nil {
		return x.n
	}
	return 0
}

func (s *RPCServer) exec(now clock.Time, stack int, call uint32) {
	x := s.execs[call]
	if x == nil {
		x = &rpcExec{result: s.result}
		s.execs[call] = x
	}
	x.n++
	if x.n > 1 {
		s.env.Report(now, s.path, RuleRPC, "call %#x executed %d times (stack %d): a duplicate must be answered from the cached reply", call, x.n, stack)
	}
	for _, fn := range s.hooks {
		fn(now, stack, call)
	}
}

// Call makes a call through b (bound to this server) and checks its
// result: a call that completes returns the result of its one execution.
func (s *RPCServer) Call(b *rpc.Binding, p *cpu.Proc, proc uint16, args []uint32) (uint32, error) {
	got, err := b.Call(p, proc, args)
	if err != nil {
		return got, err
	}
	id := b.LastCall()
	s.Checked++
	switch x := s.execs[id]; {
	case x == nil:
		s.env.Report(p.Now(), s.path, RuleRPC, "call %#x returned %#x but the server never executed it", id, got)
	case got != x.result:
		s.env.Report(p.Now(), s.path, RuleRPC, "call %#x returned %#x, its procedure returned %#x", id, got, x.result)
	}
	return got, nil
}
