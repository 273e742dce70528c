package mctb

import (
	"bytes"
	"fmt"

	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/verify/testbench/tbutil"
	"github.com/nisim/nisim/verify/trace"
)

// Rules the checkers report (env.Report) under.
const (
	// RuleOnce: every write reaches every receiver whose table maps its
	// page exactly once, or is dropped with a reason.
	RuleOnce = "mc.once"
	// RuleOrder: at every receiver, writes reach memory in the hub's
	// global order (MC-P9).
	RuleOrder = "mc.order"
	// RuleTorn: no 32-bit word is ever written or read in pieces (MC-P18).
	RuleTorn = "mc.torn"
	// RuleScoreboard: the bytes written, and the receive frames in memory
	// at the end, equal Ref's.
	RuleScoreboard = "mc.scoreboard"
)

// recentDone is how many completed writes per node the checker remembers
// to name a duplicate. assumed: a duplicated DMA follows its original
// within a few packets (it is the same descriptor again).
const recentDone = 64

// checker is the always-on check of one cluster: it feeds Ref from the
// adapters and the hub, and matches the receive DMA's writes on each
// node's memory bus against Ref's expectations.
type checker struct {
	cl    *Cluster
	nodes []*nodeCheck

	onTx    []func(now clock.Time, w *mchub.Write, data []byte)
	onRx    []func(now clock.Time, w *mchub.Write, hostAddr uint64, data []byte)
	onDrop  []func(now clock.Time, node int, d mcadapter.Drop)
	onOrder []func(now clock.Time, w *mchub.Write, dests []int)
	onMem   []func(now clock.Time, node int, x *Expect)
}

// nodeCheck is one node's matching state.
type nodeCheck struct {
	id     int
	path   string
	master string // the bridge's master name on the memory bus
	// cur is the expectation whose bytes are arriving, got how many of
	// them have.
	cur *Expect
	got int
	// early is set when cur's start was reported out of order already.
	early bool
	last  uint64 // Order of the last write completed in memory
	done  []*Expect
	// skip is a bus request whose remaining beats are ignored: its start
	// matched nothing (reported once, not once per beat).
	skip *mem.Req
	// overtaken holds the expectations a later write passed (reported
	// then, once): they may still come (no new report) or never (mc.once
	// at the end).
	overtaken []*Expect
}

func newChecker(cl *Cluster) *checker {
	c := &checker{cl: cl}
	for i, n := range cl.Nodes {
		nc := &nodeCheck{id: i, path: fmt.Sprintf("N%d.MCCheck", i), master: n.Bridge.Name() + ".Up"}
		c.nodes = append(c.nodes, nc)
		a := n.Adapter
		a.OnTx(func(now clock.Time, w *mchub.Write, data []byte) {
			if err := cl.Ref.Sent(w, data); err != nil {
				c.report(now, nc, RuleOnce, "%v", err)
			}
			for _, fn := range c.onTx {
				fn(now, w, data)
			}
		})
		a.OnRx(func(now clock.Time, w *mchub.Write, hostAddr uint64, data []byte) {
			for _, fn := range c.onRx {
				fn(now, w, hostAddr, data)
			}
		})
		a.OnDrop(func(now clock.Time, d mcadapter.Drop) {
			if err := cl.Ref.Dropped(i, d); err != nil {
				c.report(now, nc, RuleOnce, "%v", err)
			}
			for _, fn := range c.onDrop {
				fn(now, i, d)
			}
		})
		n.MemBus().Observe(func(now clock.Time, o bus.Observation) { c.observe(now, nc, o) })
	}
	cl.Star.Hub.OnOrder(func(now clock.Time, w *mchub.Write, dests []int) {
		if err := cl.Ref.Ordered(w); err != nil {
			c.env().Report(now, cl.Star.Hub.Name(), RuleOnce, "%v", err)
		}
		for _, fn := range c.onOrder {
			fn(now, w, dests)
		}
	})
	return c
}

func (c *checker) env() interface {
	Report(t clock.Time, path, rule, format string, args ...any)
} {
	return c.cl.Env
}

func (c *checker) report(now clock.Time, nc *nodeCheck, rule, format string, args ...any) {
	c.cl.Env.Report(now, nc.path, rule, format, args...)
}

func (c *checker) emit(now clock.Time, nc *nodeCheck, kind string, f ...trace.Field) {
	if t := c.cl.Env.Trace; t.Enabled() {
		t.Emit(now, c.cl.Nodes[nc.id].MemBus().Clock().CycleAt(now), nc.path, kind, f...)
	}
}

// observe takes one data phase of node nc's memory bus: the receive DMA's
// writes (the bridge's up path as master) are matched against Ref.
func (c *checker) observe(now clock.Time, nc *nodeCheck, o bus.Observation) {
	if !o.Write || o.Master != nc.master || o.Err != "" || o.Req == nc.skip {
		return
	}
	if o.First && (o.Req.Addr%4 != 0 || o.Req.Len%4 != 0) {
		c.report(now, nc, RuleTorn, "receive DMA write of %d bytes at %#x splits a 32-bit word", o.Req.Len, o.Req.Addr)
	}
	addr, data := o.Addr, o.Data
	for len(data) > 0 {
		if nc.cur == nil && !c.start(now, nc, addr, data) {
			nc.skip = o.Req
			return
		}
		x := nc.cur
		if want := x.Addr + uint64(nc.got); addr != want {
			c.report(now, nc, RuleOnce, "%v only partly reached memory (%d bytes): the receive DMA went on at %#x", x, nc.got, addr)
			nc.cur = nil
			continue
		}
		n := min(len(data), len(x.Data)-nc.got)
		if !bytes.Equal(data[:n], x.Data[nc.got:nc.got+n]) {
			c.report(now, nc, RuleScoreboard, "receive DMA wrote % x at %#x for %v, Ref has % x", data[:n], addr, x, x.Data[nc.got:nc.got+n])
		}
		nc.got += n
		addr, data = addr+uint64(n), data[n:]
		if nc.got == len(x.Data) {
			c.complete(now, nc, x)
		}
	}
}

// start finds the expectation a write starting at addr with the first
// bytes data belongs to: the oldest pending one should (else mc.order
// names the one it is: the oldest pending one at addr whose bytes match,
// or failing that the oldest at addr), a write seen already is a
// duplicate (mc.once). It reports false when none fits.
func (c *checker) start(now clock.Time, nc *nodeCheck, addr uint64, data []byte) bool {
	ref := c.cl.Ref
	q, h := ref.queue[nc.id], ref.head[nc.id]
	fits := func(x *Expect, match bool) bool {
		return x != nil && x.Addr == addr && (!match || bytes.HasPrefix(x.Data, data[:min(len(data), len(x.Data))]))
	}
	// A pending write with these bytes, else an overtaken one, else one
	// seen already with them (a duplicate); then the same at addr with
	// other bytes.
	for _, match := range []bool{true, false} {
		for i := h; i < len(q); i++ {
			x := q[i]
			if !fits(x, match) {
				continue
			}
			if i != h {
				// The writes still pending before x are overtaken: one
				// report for them all.
				n := 0
				for j := h; j < i; j++ {
					if q[j] != nil {
						nc.overtaken = append(nc.overtaken, q[j])
						q[j] = nil
						n++
					}
				}
				more := ""
				if n > 1 {
					more = fmt.Sprintf(" and %d more earlier writes", n-1)
				}
				c.report(now, nc, RuleOrder, "%v reached memory before %v%s", x, nc.overtaken[len(nc.overtaken)-n], more)
			}
			ref.remove(nc.id, i)
			nc.cur, nc.got, nc.early = x, 0, false
			return true
		}
		for k, x := range nc.overtaken {
			if fits(x, match) {
				nc.overtaken = append(nc.overtaken[:k], nc.overtaken[k+1:]...)
				nc.cur, nc.got, nc.early = x, 0, true
				return true
			}
		}
		for k := len(nc.done) - 1; k >= 0; k-- {
			if x := nc.done[k]; fits(x, match) {
				c.report(now, nc, RuleOnce, "receive DMA wrote %v a second time", x)
				return false
			}
		}
	}
	c.report(now, nc, RuleOnce, "receive DMA wrote %#x, where no write is expected", addr)
	return false
}

// complete ends an expectation: all its bytes are in memory.
func (c *checker) complete(now clock.Time, nc *nodeCheck, x *Expect) {
	if x.Order <= nc.last && !nc.early {
		c.report(now, nc, RuleOrder, "%v completed in memory after order %d", x, nc.last)
	}
	nc.last = max(nc.last, x.Order)
	nc.cur = nil
	c.cl.Ref.stats.Delivered++
	if len(nc.done) == recentDone {
		nc.done = append(nc.done[:0], nc.done[1:]...)
	}
	nc.done = append(nc.done, x)
	if c.cl.Env.Trace.Enabled() {
		c.emit(now, nc, "mc.mem", trace.Uint("order", x.Order), trace.Int("src", int64(x.Src)), trace.Uint("seq", x.Seq),
			trace.Addr("addr", x.Addr), trace.Int("len", int64(len(x.Data))), trace.Hash("data", x.Data))
	}
	for _, fn := range c.onMem {
		fn(now, nc.id, x)
	}
}

// finish runs the end-of-run checks: nothing pending (mc.once), and every
// receive frame in memory equal to Ref's image (mc.scoreboard), except
// bytes Ref cannot know and lines still dirty in a cache.
func (c *checker) finish(now clock.Time) {
	ref := c.cl.Ref
	for _, w := range ref.Unordered() {
		c.cl.Env.Report(now, c.cl.Star.Hub.Name(), RuleOnce, "src %d seq %d (%d bytes) left its adapter and was never ordered by the hub", w.Src, w.Seq, w.Len)
	}
	for _, nc := range c.nodes {
		if nc.cur != nil {
			c.report(now, nc, RuleOnce, "%v only partly reached memory (%d bytes)", nc.cur, nc.got)
		}
		for _, x := range append(nc.overtaken, ref.Pending(nc.id)...) {
			c.report(now, nc, RuleOnce, "%v never reached memory and was not dropped", x)
		}
		n := c.cl.Nodes[nc.id]
		st := n.Memory().Storage()
		line := c.cl.Config.Host.LastLevel().LineBytes
		dirty := func(a uint64) bool { return tbutil.DirtyIn(n.Caches(), a) }
		buf := make([]byte, mchub.PageSize)
		for _, im := range ref.frames[nc.id] {
			if err := st.Read(im.frame, buf); err != nil {
				c.report(now, nc, RuleScoreboard, "frame %#x of global page %d: %v", im.frame, im.gpage, err)
				continue
			}
			var unknown func(int) bool
			if im.unknown != nil {
				unknown = func(off int) bool { return im.unknown[off] }
			}
			if off := tbutil.FirstStale(buf, im.data, im.frame, line, unknown, dirty); off >= 0 {
				c.report(now, nc, RuleScoreboard, "global page %d at %#x: memory has %#02x, Ref %#02x", im.gpage, im.frame+uint64(off), buf[off], im.data[off])
			}
		}
	}
}

// OnTx adds a function called when a packet leaves an adapter (after Ref
// has it). The testbench owns the adapters' callbacks: add hooks here, not
// with Adapter.OnTx.
func (c *Cluster) OnTx(fn func(now clock.Time, w *mchub.Write, data []byte)) {
	c.chk.onTx = append(c.chk.onTx, fn)
}

// OnRx adds a function called when an adapter queues a received packet's
// DMA.
func (c *Cluster) OnRx(fn func(now clock.Time, w *mchub.Write, hostAddr uint64, data []byte)) {
	c.chk.onRx = append(c.chk.onRx, fn)
}

// OnDrop adds a function called for every adapter drop, with the node.
func (c *Cluster) OnDrop(fn func(now clock.Time, node int, d mcadapter.Drop)) {
	c.chk.onDrop = append(c.chk.onDrop, fn)
}

// OnOrder adds a function called when the hub orders a write (after Ref
// has applied it).
func (c *Cluster) OnOrder(fn func(now clock.Time, w *mchub.Write, dests []int)) {
	c.chk.onOrder = append(c.chk.onOrder, fn)
}

// OnMemory adds a function called when a write's last byte reaches a
// receiver's memory (the memory bus data phase of the receive DMA's write
// through the bridge): the point a polling load can see it.
func (c *Cluster) OnMemory(fn func(now clock.Time, node int, x *Expect)) {
	c.chk.onMem = append(c.chk.onMem, fn)
}

// CheckLoad32 checks a 32-bit value v a program on node loaded from its
// receive copy at addr against Ref's history of the word (Ref.KeepHistory
// must be on): a value the word never had is a torn word (mc.torn).
func (c *Cluster) CheckLoad32(now clock.Time, node int, addr uint64, v uint32) {
	if err := c.Ref.CheckLoad32(node, addr, v); err != nil {
		c.Env.Report(now, c.chk.nodes[node].path, RuleTorn, "%v", err)
	}
}
