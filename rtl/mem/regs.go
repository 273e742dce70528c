package mem

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
)

// Registers is a device's memory-mapped register block: a bus target whose
// reads and writes call the device's handlers instead of touching storage
// (a doorbell that starts a DMA, a status word, the Telegraphos special
// registers). Each access takes Latency cycles; writes of several beats
// reach the handler beat by beat.
type Registers struct {
	*clock.Ticking
	env     *env.Env
	ch      *Channel
	latency int
	onWrite func(now clock.Time, addr uint64, data []byte)
	onRead  func(now clock.Time, addr uint64, n int) []byte

	cur   *Req
	ready clock.Time
	off   int
}

// RegistersBuilder configures a Registers block.
type RegistersBuilder struct {
	env     *env.Env
	clk     clock.Clock
	width   int
	latency int
	depth   int
}

// MakeRegistersBuilder returns a builder: 4-byte beats, 1 cycle latency.
func MakeRegistersBuilder() RegistersBuilder {
	return RegistersBuilder{width: 4, latency: 1, depth: 2}
}

// WithEnv sets the simulation (required).
func (b RegistersBuilder) WithEnv(e *env.Env) RegistersBuilder { b.env = e; return b }

// WithClock sets the device clock (required).
func (b RegistersBuilder) WithClock(c clock.Clock) RegistersBuilder { b.clk = c; return b }

// WithWidth sets the beat width of the block's channel in bytes.
func (b RegistersBuilder) WithWidth(n int) RegistersBuilder { b.width = n; return b }

// WithLatency sets the cycles from seeing an access to answering it.
func (b RegistersBuilder) WithLatency(n int) RegistersBuilder { b.latency = n; return b }

// Build creates the block with its target channel.
func (b RegistersBuilder) Build(name string) (*Registers, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case !b.clk.Valid():
		return nil, errors.New(name + ": no clock")
	case b.latency < 0:
		return nil, fmt.Errorf("%s: register latency %d must not be negative", name, b.latency)
	}
	r := &Registers{env: b.env, latency: b.latency}
	r.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, r)
	ch, err := NewChannel(b.env, name+".Port", b.width, b.depth)
	if err != nil {
		return nil, err
	}
	ch.ConnectTarget(r)
	r.ch = ch
	b.env.Register(r)
	return r, nil
}

// Port returns the block's target channel.
func (r *Registers) Port() *Channel { return r.ch }

// OnWrite sets the handler for written data (addr is block-relative).
func (r *Registers) OnWrite(fn func(now clock.Time, addr uint64, data []byte)) { r.onWrite = fn }

// OnRead sets the handler that produces n bytes read at addr.
func (r *Registers) OnRead(fn func(now clock.Time, addr uint64, n int) []byte) { r.onRead = fn }

// Tick implements clock.Ticker.
func (r *Registers) Tick(now clock.Time) bool {
	if r.cur == nil {
		b, ok := r.ch.Down.Peek(now)
		if !ok {
			return false
		}
		if !b.First {
			r.env.Report(now, r.Name(), "regs.protocol", "data beat without a request: %v", b)
			r.ch.Down.Pop(now)
			return true
		}
		r.cur, r.off = b.Req, 0
		r.ready = r.Clock().After(now, clock.Cycle(r.latency))
		if r.cur.Op == Read {
			r.ch.Down.Pop(now)
		}
	}
	if now < r.ready {
		r.WakeAt(r.ready)
		return false
	}
	if r.cur.Op == Read {
		return r.read(now)
	}
	return r.write(now)
}

func (r *Registers) read(now clock.Time) bool {
	if !r.ch.Up.CanPush(now) {
		return false
	}
	data := make([]byte, r.cur.Len)
	if r.onRead != nil {
		copy(data, r.onRead(now, r.cur.Addr, r.cur.Len))
	}
	chunks := Chunks(r.cur.Addr, r.cur.Len, r.ch.Width)
	if len(chunks) > 1 {
		r.env.Report(now, r.Name(), "regs.width", "read of %d bytes at %#x spans %d beats", r.cur.Len, r.cur.Addr, len(chunks))
	}
	r.ch.Up.Push(now, Beat{Req: r.cur, Data: data, First: true, Last: true})
	r.emit(now, "regs.read", data)
	r.cur = nil
	return true
}

func (r *Registers) write(now clock.Time) bool {
	b, ok := r.ch.Down.Peek(now)
	if !ok {
		return false
	}
	if b.Last && !r.cur.Posted && !r.ch.Up.CanPush(now) {
		return false
	}
	r.ch.Down.Pop(now)
	addr := r.cur.Addr + uint64(r.off)
	r.off += len(b.Data)
	r.emitAt(now, "regs.write", addr, b.Data)
	if r.onWrite != nil {
		r.onWrite(now, addr, b.Data)
	}
	if b.Last {
		if !r.cur.Posted {
			r.ch.Up.Push(now, Beat{Req: r.cur, First: true, Last: true})
		}
		r.cur = nil
	}
	return true
}

func (r *Registers) emit(now clock.Time, kind string, data []byte) {
	r.emitAt(now, kind, r.cur.Addr, data)
}

func (r *Registers) emitAt(now clock.Time, kind string, addr uint64, data []byte) {
	if r.env.Trace.Enabled() {
		r.env.Trace.Emit(now, r.Clock().CycleAt(now), r.Name(), kind,
			trace.Addr("addr", addr), trace.Int("len", int64(len(data))), trace.Hash("hash", data))
	}
}

// Idle implements check.Unit.
func (r *Registers) Idle() bool { return r.cur == nil }

// State implements check.Unit.
func (r *Registers) State() string {
	if r.cur == nil {
		return "idle"
	}
	return fmt.Sprintf("serving %v, %d bytes done", r.cur, r.off)
}
