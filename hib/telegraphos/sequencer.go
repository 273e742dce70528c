package telegraphos

import (
	"encoding/binary"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/waves"
)

// A sequencer is one of the HIB's state machines (the TURBOchannel side of
// the central control, the request server, the response sink). It works
// on one job at a time: a list of steps, each of which either completes in
// the current cycle (and the next step runs at once) or asks to be called
// again at a later edge. Steps that take time say so: a wait of n cycles, a
// memory access (as long as the memory takes), a word pushed into or
// popped from a link FIFO per cycle. The current step's name is the
// sequencer's state signal.
type sequencer struct {
	h       *HIB
	id      int
	name    string
	steps   []step
	pc      int
	readyAt clock.Time
	sig     *waves.Signal
	state   string

	// memory access in progress
	mem     *mem.Channel
	memReq  *mem.Req
	memData []byte
	memDone bool
	seq     uint64
}

// step is one state of a job: run returns true when the step is complete.
type step struct {
	name string
	run  func(now clock.Time) bool
}

func newSequencer(h *HIB, id int, name string) *sequencer {
	e := &sequencer{h: h, id: id, name: name}
	e.sig = h.env.Waves.String(name, "state")
	e.sig.SetString(0, "IDLE")
	e.state = "IDLE"
	return e
}

// busy reports whether the sequencer has a job.
func (e *sequencer) busy() bool { return e.steps != nil }

// start gives the sequencer a job.
func (e *sequencer) start(now clock.Time, steps ...step) {
	e.steps, e.pc, e.readyAt = steps, 0, now
}

// run advances the job as far as it can at now. It returns whether
// anything happened.
func (e *sequencer) run(now clock.Time) bool {
	progress := false
	for e.steps != nil {
		if now < e.readyAt {
			e.h.WakeAt(e.readyAt)
			return progress
		}
		if e.pc == len(e.steps) {
			e.steps = nil
			e.setState(now, "IDLE")
			return true
		}
		st := e.steps[e.pc]
		e.setState(now, st.name)
		if !st.run(now) {
			if e.readyAt > now {
				e.h.WakeAt(e.readyAt) // the step set itself a time to go on
			}
			return progress
		}
		e.pc++
		progress = true
	}
	return progress
}

func (e *sequencer) setState(now clock.Time, s string) {
	if e.state != s {
		e.state = s
		e.sig.SetString(now, s)
	}
}

// insert makes s the next steps of the job, after the current one: a
// dispatching step picks the rest of the job from what it found.
func (e *sequencer) insert(s []step) {
	e.steps = append(e.steps[:e.pc+1:e.pc+1], append(s, e.steps[e.pc+1:]...)...)
}

// wait is a step of n cycles.
func (e *sequencer) wait(name string, n int) step {
	return step{name, func(now clock.Time) bool {
		if n > 0 {
			e.readyAt = e.h.Clock().After(now, clock.Cycle(n))
		}
		return true
	}}
}

// do is a step of logic that takes no time of its own.
func (e *sequencer) do(name string, fn func(now clock.Time)) step {
	return step{name, func(now clock.Time) bool { fn(now); return true }}
}

// until is a step that waits for cond, checked every edge something
// changes (the HIB ticks while any sequencer is busy).
func (e *sequencer) until(name string, cond func(now clock.Time) bool) step {
	return step{name, cond}
}

// memAccess is a step that reads or writes one word of the local shared
// memory at the offset off() and, for a read, stores it in *val. It waits
// while another sequencer holds the memory for an atomic operation.
func (e *sequencer) memAccess(name string, write bool, off func() uint32, val *uint32) step {
	return step{name, func(now clock.Time) bool {
		if e.memReq == nil {
			if l := e.h.memLock; l >= 0 && l != e.id {
				return false // an atomic read-modify-write is in progress
			}
			if !e.mem.Down.CanPush(now) {
				return false
			}
			e.seq++
			addr := e.h.memBase + uint64(off())
			if write {
				e.memReq = &mem.Req{Op: mem.Write, Addr: addr, Len: WordBytes, Class: "hib", Master: e.name, Seq: e.seq}
				var b [WordBytes]byte
				binary.LittleEndian.PutUint32(b[:], *val)
				e.mem.Down.Push(now, mem.Beat{Req: e.memReq, Data: b[:], First: true, Last: true})
			} else {
				e.memReq = &mem.Req{Op: mem.Read, Addr: addr, Len: WordBytes, Class: "hib", Master: e.name, Seq: e.seq}
				e.mem.Down.Push(now, mem.Beat{Req: e.memReq, First: true, Last: true})
			}
			e.memData, e.memDone = e.memData[:0], false
			return false
		}
		for {
			b, ok := e.mem.Up.Pop(now)
			if !ok {
				return false
			}
			if b.Req != e.memReq {
				e.h.env.Report(now, e.name, "hib.memory", "response %v while waiting for %v", b, e.memReq)
				continue
			}
			if b.Err != "" {
				e.h.env.Report(now, e.name, "hib.memory", "%v: %s", b.Req, b.Err)
			}
			e.memData = append(e.memData, b.Data...)
			if b.Last {
				break
			}
		}
		if !write && len(e.memData) >= WordBytes {
			*val = binary.LittleEndian.Uint32(e.memData)
		}
		e.memReq = nil
		return true
	}}
}

// lock and unlock bracket an atomic read-modify-write: no other sequencer
// starts a memory access in between.
func (e *sequencer) lock(name string) step {
	return step{name, func(clock.Time) bool {
		if e.h.memLock >= 0 && e.h.memLock != e.id {
			return false
		}
		e.h.memLock = e.id
		return true
	}}
}

func (e *sequencer) unlock(name string) step {
	return e.do(name, func(clock.Time) { e.h.memLock = -1 })
}

// send is a step that builds the packet p() (the central control's
// ControlCycles of header work) and hands it to the outgoing link
// interface of its class, waiting while the interface still holds an
// earlier packet.
func (e *sequencer) send(name string, p func() *Packet) step {
	var pk *Packet
	return step{name, func(now clock.Time) bool {
		h := e.h
		if pk == nil {
			pk = p()
			pk.Src = h.node
			h.seq++
			pk.ID = uint64(h.node)<<40 | h.seq
			e.readyAt = h.Clock().After(now, clock.Cycle(h.cfg.ControlCycles))
			return false
		}
		o := &h.outIf[pk.Kind.Class()]
		if o.pkt != nil {
			return false // the interface is still moving the previous packet
		}
		o.pkt, o.words = pk, 0
		h.sent(now, pk)
		pk = nil
		return true
	}}
}

// receive is a step that takes the next packet of class c from the
// incoming link interface, which assembles it from the link a word per
// cycle.
func (e *sequencer) receive(name string, c Class, into **Packet) step {
	return step{name, func(now clock.Time) bool {
		in := &e.h.inIf[c]
		if in.pkt == nil || !in.done {
			return false
		}
		*into = in.pkt
		in.pkt, in.done = nil, false
		return true
	}}
}

// outIf is an outgoing link interface of one message class: it writes the
// words of the packet it holds into the link's transmit FIFO, a word per
// cycle (the 2-port FIFO between the HIB and the link clock).
type outIf struct {
	pkt   *Packet
	words int
	info  *link.PacketInfo // the packet's shared part (made at its first word)
}

// inIf is an incoming link interface of one message class: it takes a
// packet's words from the link's receive FIFO, a word per cycle, and holds
// the packet until the central control takes it.
type inIf struct {
	pkt   *Packet
	words int
	done  bool
}

// moveOut advances the outgoing interfaces by a word each.
func (h *HIB) moveOut(now clock.Time) bool {
	progress := false
	for c := range h.outIf {
		o := &h.outIf[c]
		if o.pkt == nil {
			continue
		}
		tx := h.out.Tx(c)
		if !tx.CanPush(now) {
			continue
		}
		n := o.pkt.Words()
		if o.words == 0 {
			o.info = &link.PacketInfo{ID: o.pkt.ID, Src: h.node, Dst: o.pkt.Dst, Meta: o.pkt}
		}
		tx.PushPtr(now, &link.Flit{Info: o.info, Seq: int32(o.words), VC: uint8(c), Head: o.words == 0, Tail: o.words == n-1, Size: WordBytes, Stamp: now, Carries: link.HasMeta})
		o.words++
		progress = true
		if o.words == n {
			o.pkt = nil
		}
	}
	return progress
}

// moveIn advances the incoming interfaces by a word each.
func (h *HIB) moveIn(now clock.Time) bool {
	progress := false
	for c := range h.inIf {
		in := &h.inIf[c]
		if in.done {
			continue // the central control has not taken the last packet yet
		}
		f, ok := h.in.Rx(c).Pop(now)
		if !ok {
			continue
		}
		progress = true
		if f.Bad {
			h.env.Report(now, h.Name(), "hib.crc", "packet %d failed the link CRC check", f.Packet())
		}
		in.words++
		if !f.Tail {
			continue
		}
		pk, _ := f.Meta().(*Packet)
		switch {
		case pk == nil:
			h.env.Report(now, h.Name(), "hib.protocol", "flit %v without a packet", f)
		case in.words != pk.Words():
			h.env.Report(now, h.Name(), "hib.protocol", "%v arrived in %d words, want %d", pk, in.words, pk.Words())
		default:
			in.pkt, in.done = pk, true
			h.received(now, pk)
		}
		in.words = 0
	}
	return progress
}
