package cpu_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// llscTarget is a test-only stand-in for the host memory system that keeps
// LL/SC reservations (host/memsys's cache does this in the real
// platform): a memory behind one channel per processor that takes one
// request beat per port per cycle (ports in order) and answers it lat
// cycles later. A LoadLocked sets its port's reservation on the line of
// line bytes; any write to a line (a store from any port, or Poke, a DMA
// stand-in) clears every reservation on it; a StoreConditional writes only
// if its port's reservation holds, and its completion says CondFailed if
// not. Requests are single-beat (the processor's accesses here are).
type llscTarget struct {
	*clock.Ticking
	env   *env.Env
	ports []*mem.Channel
	store *mem.Storage
	lat   int
	line  uint64
	resv  []int64 // reserved line per port, -1 none
	due   []reply // answers not yet sent, in the order made
}

type reply struct {
	at   clock.Time
	port int
	beat mem.Beat
}

func newTarget(e *env.Env, clk clock.Clock, ports, lat int) *llscTarget {
	t := &llscTarget{env: e, store: mem.NewStorage(1 << 20), lat: lat, line: 64}
	t.Ticking = clock.NewTicking("Mem", e.Engine, clk, t)
	for i := range ports {
		ch, err := mem.NewChannel(e, fmt.Sprintf("Mem.P%d", i), 8, 2)
		if err != nil {
			panic(err)
		}
		ch.ConnectTarget(t)
		t.ports = append(t.ports, ch)
		t.resv = append(t.resv, -1)
	}
	return t
}

// Poke writes data as another master would (a DMA), breaking reservations.
func (t *llscTarget) Poke(addr uint64, data []byte) {
	t.breakLine(addr, -1)
	if err := t.store.Write(addr, data); err != nil {
		panic(err)
	}
}

func (t *llscTarget) breakLine(addr uint64, except int) {
	for i, r := range t.resv {
		if i != except && r == int64(addr/t.line) {
			t.resv[i] = -1
		}
	}
}

func (t *llscTarget) Tick(now clock.Time) bool {
	busy := false
	// Answers due now leave first, in the order they were made.
	for len(t.due) > 0 && t.due[0].at <= now && t.ports[t.due[0].port].Up.CanPush(now) {
		t.ports[t.due[0].port].Up.Push(now, t.due[0].beat)
		t.due = t.due[1:]
		busy = true
	}
	for i, ch := range t.ports {
		b, ok := ch.Down.Pop(now)
		if !ok {
			continue
		}
		busy = true
		r := b.Req
		at := t.Clock().After(now, clock.Cycle(t.lat))
		line := int64(r.Addr / t.line)
		if r.Op == mem.Read {
			if r.Atomic == mem.LoadLocked {
				t.resv[i] = line
			}
			d, err := t.store.Bytes(r.Addr, r.Len)
			if err != nil {
				panic(err)
			}
			t.due = append(t.due, reply{at, i, mem.Beat{Req: r, Data: d, First: true, Last: true}})
			continue
		}
		failed := r.Atomic == mem.StoreConditional && t.resv[i] != line
		if r.Atomic == mem.StoreConditional {
			t.resv[i] = -1
		}
		if !failed {
			t.breakLine(r.Addr, i)
			if err := t.store.Write(r.Addr, b.Data); err != nil {
				panic(err)
			}
		}
		if !r.Posted {
			t.due = append(t.due, reply{at, i, mem.Beat{Req: r, First: true, Last: true, CondFailed: failed}})
		}
	}
	if len(t.due) > 0 {
		t.WakeAt(t.due[0].at)
	}
	return busy
}
