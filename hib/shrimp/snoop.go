package shrimp

import (
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
)

// mutSnoopSkip loses snooped beats (test-only fault).
var mutSnoopSkip = env.DeclareMutation("shrimp.snoop-skip",
	"every Nth write beat the SHRIMP memory-bus board snoops is lost before the OPT lookup: its store never "+
		"becomes an AU packet and nothing counts it (caught by the exactly-once checker: an expected store never arrives)")

// snoopBeat is one write beat the memory-bus board latched: its physical
// address and a copy of its data.
type snoopBeat struct {
	addr uint64
	data []byte
}

// attachSnoop subscribes the snoop register to mb's data phases (SH-P7:
// «The memory-bus board simply snoops all main-memory writes»). The
// observer never stalls the bus (L261: the Xpress connector «does not
// allow a memory write to be stalled»): it copies every write beat to
// memTarget into the snoop queue, which the core pops one beat per cycle,
// as fast as the bus can write. Beats mastered by dmaMaster (the incoming
// DMA's bridge) are ignored unless SnoopDMA. The memory target's bus
// address is taken as the physical address (memory at bus address 0).
func (n *NI) attachSnoop(mb *bus.Bus, memTarget, dmaMaster string) error {
	o := &n.out
	if o.mb != nil {
		return fmt.Errorf("memory bus already attached (%s)", o.mb.Name())
	}
	bc := mb.Config()
	if bc.WidthBytes > n.cfg.FIFOWidthBytes {
		return fmt.Errorf("memory bus %s: beats of %d B are wider than the Outgoing FIFO's FIFOWidthBytes %d", mb.Name(), bc.WidthBytes, n.cfg.FIFOWidthBytes)
	}
	// The core takes one beat per cycle: it must be at least as fast as
	// the bus (a/b > c/d compared as a·d > c·b).
	bn, bd := bc.Clock.Hz()
	cn, cd := n.cfg.CoreClock.Hz()
	if bn*cd > cn*bd {
		return fmt.Errorf("memory bus %s: its clock %v is faster than CoreClock %v (the snoop takes a beat per core cycle)", mb.Name(), bc.Clock, n.cfg.CoreClock)
	}
	o.mb, o.memTarget, o.dmaMaster = mb, memTarget, dmaMaster
	mb.Observe(n.snoop)
	return nil
}

// snoop is the memory-bus observer.
func (n *NI) snoop(now clock.Time, ob bus.Observation) {
	o := &n.out
	if !ob.Write || ob.Err != "" || ob.Target != o.memTarget || len(ob.Data) == 0 {
		return
	}
	if ob.Master == o.dmaMaster && o.dmaMaster != "" && !n.cfg.SnoopDMA {
		return
	}
	if ob.Addr+uint64(len(ob.Data)) > n.cfg.MemoryBytes {
		return // beyond the OPT (not memory the NI maps)
	}
	n.counters.Snooped++
	if o.skipEvery > 0 {
		if o.skipped++; o.skipped%o.skipEvery == 0 {
			return // mutation: the beat is lost
		}
	}
	b := snoopBeat{addr: ob.Addr, data: append([]byte(nil), ob.Data...)}
	if !o.snoopQ.CanPush(now) {
		// The core pops one beat per cycle and never stalls, so this is a
		// model error, not a hardware condition.
		n.env.Report(now, n.name, "shrimp.snoop", "snoop queue full at %#x: the core fell behind the bus", ob.Addr)
		return
	}
	o.snoopQ.Push(now, b)
}

// buildSnoop creates the snoop queue. assumed: 4 beats; the core takes one
// beat per core cycle and the bus gives at most one per bus cycle (the
// same 30 MHz), so two suffice: the rest is margin for a bus clocked a
// little faster.
func (n *NI) buildSnoop() error {
	q, err := fifo.MakeBuilder[snoopBeat]().WithEnv(n.env).WithDepth(4).WithWidth(64 + 32).Build(n.name + ".Snoop")
	if err != nil {
		return err
	}
	q.SetConsumer(n)
	n.out.snoopQ = q
	n.out.skipEvery = n.env.Mutation(mutSnoopSkip)
	return nil
}

// tickSnoop is the snoop register and the OPT lookup: one beat per core
// cycle leaves the snoop queue and its OPT entry is read; the packetiser
// takes it OPTCycles later.
func (n *NI) tickSnoop(now clock.Time, c clock.Cycle) bool {
	o := &n.out
	b, ok := o.snoopQ.Pop(now)
	if !ok {
		return false
	}
	page := int(b.addr / uint64(n.cfg.PageBytes))
	o.look = append(o.look, lookBeat{beat: b, opt: n.optEntry(page), ready: c + clock.Cycle(n.cfg.OPTCycles)})
	return true
}
