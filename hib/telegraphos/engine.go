package telegraphos

import (
	"encoding/binary"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/waves"
)

// An engine is one of the HIB's state machines (the TURBOchannel side of
// the central control, the request server, the response sink). It works
// on one job at a time: a list of steps, each of which either completes in
// the current cycle (and the next step runs at once) or asks to be called
// again at a later edge. Steps that take time say so: a wait of n cycles, a
// memory access (as long as the memory takes), a word pushed into or
// popped from a link FIFO per cycle. The current step's name is the
// engine's state signal.
type engine struct {
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

	// word-by-word packet transfer in progress
	words   int // sent
	rxWords int // received
}

// step is one state of a job: run returns true when the step is complete.
type step struct {
	name string
	run  func(now clock.Time) bool
}

func newEngine(h *HIB, id int, name string) *engine {
	e := &engine{h: h, id: id, name: name}
	e.sig = h.env.Waves.String(name, "state")
	e.sig.SetString(0, "IDLE")
	e.state = "IDLE"
	return e
}

// busy reports whether the engine has a job.
func (e *engine) busy() bool { return e.steps != nil }

// start gives the engine a job.
func (e *engine) start(now clock.Time, steps ...step) {
	e.steps, e.pc, e.readyAt = steps, 0, now
}

// run advances the job as far as it can at now. It returns whether
// anything happened.
func (e *engine) run(now clock.Time) bool {
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
			return progress
		}
		e.pc++
		progress = true
	}
	return progress
}

func (e *engine) setState(now clock.Time, s string) {
	if e.state != s {
		e.state = s
		e.sig.SetString(now, s)
	}
}

// wait is a step of n cycles.
func (e *engine) wait(name string, n int) step {
	return step{name, func(now clock.Time) bool {
		if n > 0 {
			e.readyAt = e.h.Clock().After(now, clock.Cycle(n))
		}
		return true
	}}
}

// do is a step of logic that takes no time of its own.
func (e *engine) do(name string, fn func(now clock.Time)) step {
	return step{name, func(now clock.Time) bool { fn(now); return true }}
}

// until is a step that waits for cond, checked every edge something
// changes (the HIB ticks while any engine is busy).
func (e *engine) until(name string, cond func(now clock.Time) bool) step {
	return step{name, cond}
}

// memAccess is a step that reads or writes one word of the local shared
// memory at the offset off() and, for a read, stores it in *val. It waits
// while another engine holds the memory for an atomic operation.
func (e *engine) memAccess(name string, write bool, off func() uint32, val *uint32) step {
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

// lock and unlock bracket an atomic read-modify-write: no other engine
// starts a memory access in between.
func (e *engine) lock(name string) step {
	return step{name, func(clock.Time) bool {
		if e.h.memLock >= 0 && e.h.memLock != e.id {
			return false
		}
		e.h.memLock = e.id
		return true
	}}
}

func (e *engine) unlock(name string) step {
	return e.do(name, func(clock.Time) { e.h.memLock = -1 })
}

// send is a step that writes the packet p() into the outgoing link FIFO of
// its class, a word per cycle, after the central control's ControlCycles
// of header work. The FIFO is held from the first word to the last so that
// packets of one class never interleave.
func (e *engine) send(name string, p func() *Packet) step {
	var pk *Packet
	return step{name, func(now clock.Time) bool {
		h := e.h
		if pk == nil {
			pk = p()
			pk.Src = h.node
			h.seq++
			pk.ID = uint64(h.node)<<40 | h.seq
			e.words = 0
			e.readyAt = h.Clock().After(now, clock.Cycle(h.cfg.ControlCycles))
			return false
		}
		c := int(pk.Kind.Class())
		if e.words == 0 {
			if h.txOwner[c] >= 0 && h.txOwner[c] != e.id {
				return false
			}
			h.txOwner[c] = e.id
		}
		tx := h.out.Tx(c)
		if !tx.CanPush(now) {
			return false
		}
		n := pk.Words()
		tx.Push(now, link.Flit{Packet: pk.ID, Seq: e.words, VC: c, Head: e.words == 0, Tail: e.words == n-1,
			Src: h.node, Dst: pk.Dst, Size: WordBytes, Meta: pk, Stamp: now})
		e.words++
		if e.words < n {
			e.readyAt = h.Clock().After(now, 1)
			return false
		}
		h.txOwner[c] = -1
		h.sent(now, pk)
		pk = nil
		return true
	}}
}

// receive is a step that takes the next packet of class c from the
// incoming link FIFO, a word per cycle, and stores it in *into.
func (e *engine) receive(name string, c Class, into **Packet) step {
	return step{name, func(now clock.Time) bool {
		rx := e.h.in.Rx(int(c))
		f, ok := rx.Pop(now)
		if !ok {
			return false
		}
		if f.Bad {
			e.h.env.Report(now, e.name, "hib.crc", "packet %d failed the link CRC check", f.Packet)
		}
		e.rxWords++
		if !f.Tail {
			return false // the next word at the next edge
		}
		pk, _ := f.Meta.(*Packet)
		if pk == nil {
			e.h.env.Report(now, e.name, "hib.protocol", "flit %v without a packet", f)
			e.rxWords = 0
			return false
		}
		if e.rxWords != pk.Words() {
			e.h.env.Report(now, e.name, "hib.protocol", "%v arrived in %d words, want %d", pk, e.rxWords, pk.Words())
		}
		e.rxWords = 0
		*into = pk
		e.h.received(now, pk)
		return true
	}}
}
