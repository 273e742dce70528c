// Package mem models memories that hold real data (host DRAM, NI SRAM) and
// the memory-mapped channel protocol every nisim master and target speaks:
// a Channel carries request and data Beats downstream and read data or
// completions upstream.
//
// A Memory serves one transaction at a time from any of its ports, chosen
// round-robin. A transaction accepted at cycle a starts moving data at cycle
// a+Latency; from then on the memory moves BytesPerCycle bytes per cycle
// (reads: into the upstream FIFO; writes: out of the downstream FIFO),
// stalling when the channel does. Timing thus follows from two parameters
// per memory, each with a source where the model of a board sets it.
package mem

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Builder configures a Memory.
type Builder struct {
	env       *env.Env
	clk       clock.Clock
	size      uint64
	latency   int
	wlatency  *int
	slatency  *int
	bpc       int
	ports     int
	width     int
	widths    []int
	chanDepth int
}

// MakeBuilder returns a builder with defaults: 1 MiB, 1 port of 8-byte
// beats, latency 1 cycle, 8 bytes per cycle, channel FIFOs 2 deep.
func MakeBuilder() Builder {
	return Builder{size: 1 << 20, latency: 1, bpc: 8, ports: 1, width: 8, chanDepth: 2}
}

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithClock sets the memory clock (required).
func (b Builder) WithClock(c clock.Clock) Builder { b.clk = c; return b }

// WithSize sets the size in bytes.
func (b Builder) WithSize(n uint64) Builder { b.size = n; return b }

// WithLatency sets the cycles from accepting a transaction to its first
// data.
func (b Builder) WithLatency(cycles int) Builder { b.latency = cycles; return b }

// WithSequentialReadLatency sets the latency of a read that starts where
// the previous read on the same port ended (a bridge's prefetch buffer
// already holds its data); by default such reads take Latency too.
func (b Builder) WithSequentialReadLatency(cycles int) Builder { b.slatency = &cycles; return b }

// WithWriteLatency sets a different latency for writes (a posted write
// absorbed by a bridge's buffer); by default writes take Latency too.
func (b Builder) WithWriteLatency(cycles int) Builder { b.wlatency = &cycles; return b }

// WithBytesPerCycle sets the data rate once a transaction streams.
func (b Builder) WithBytesPerCycle(n int) Builder { b.bpc = n; return b }

// WithPorts sets the number of ports (channels) the memory serves.
func (b Builder) WithPorts(n int) Builder { b.ports = n; return b }

// WithPortWidth sets the beat width of the ports' channels in bytes.
func (b Builder) WithPortWidth(n int) Builder { b.width = n; return b }

// WithPortWidths sets each port's beat width (a bus slave port as wide as
// its bus next to wider internal ports); ports beyond the list take
// WithPortWidth's.
func (b Builder) WithPortWidths(ws ...int) Builder { b.widths = append([]int(nil), ws...); return b }

// WithChannelDepth sets the depth of each port channel's FIFOs.
func (b Builder) WithChannelDepth(n int) Builder { b.chanDepth = n; return b }

// Validate checks the parameters.
func (b Builder) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("memory: no env")
	case !b.clk.Valid():
		return errors.New("memory: no clock")
	case b.size == 0:
		return errors.New("memory size must be positive")
	case b.latency < 0:
		return fmt.Errorf("memory latency %d cycles must not be negative", b.latency)
	case b.slatency != nil && *b.slatency < 0:
		return fmt.Errorf("memory sequential read latency %d cycles must not be negative", *b.slatency)
	case b.wlatency != nil && *b.wlatency < 0:
		return fmt.Errorf("memory write latency %d cycles must not be negative", *b.wlatency)
	case b.bpc < 1:
		return fmt.Errorf("memory bandwidth %d bytes/cycle must be at least 1", b.bpc)
	case b.ports < 1:
		return fmt.Errorf("memory needs at least 1 port, got %d", b.ports)
	case b.width < 1:
		return fmt.Errorf("memory port width %d bytes must be at least 1", b.width)
	case len(b.widths) > b.ports:
		return fmt.Errorf("%d port widths for %d ports", len(b.widths), b.ports)
	case slices.ContainsFunc(b.widths, func(w int) bool { return w < 1 }):
		return fmt.Errorf("memory port widths %v: each must be at least 1 byte", b.widths)
	}
	return nil
}

// Build creates the memory and its port channels.
func (b Builder) Build(name string) (*Memory, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m := &Memory{env: b.env, store: NewStorage(b.size), latency: b.latency, wlatency: b.latency, bpc: b.bpc}
	if b.wlatency != nil {
		m.wlatency = *b.wlatency
	}
	m.slatency = -1
	if b.slatency != nil {
		m.slatency = *b.slatency
	}
	m.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, m)
	for i := range b.ports {
		w := b.width
		if i < len(b.widths) {
			w = b.widths[i]
		}
		ch, err := NewChannel(b.env, fmt.Sprintf("%s.Port[%d]", name, i), w, b.chanDepth)
		if err != nil {
			return nil, err
		}
		ch.ConnectTarget(m)
		m.ports = append(m.ports, ch)
		m.readEnd = append(m.readEnd, 0)
	}
	reg := b.env.Waves
	m.sigState = reg.String(name, "state")
	// port is the index i of the port (scope port<i>) whose access started
	// last; addr is that access's address inside the memory, as wide as
	// the memory's size needs (derived: bits of size-1).
	m.sigPort = reg.Integer(name, "port", waves.WidthFor(uint64(b.ports)))
	m.sigAddr = reg.Wire(name, "addr", waves.WidthFor(b.size-1))
	m.sigState.SetString(0, "IDLE")
	b.env.Register(m)
	return m, nil
}

// Memory is a clocked memory with real contents.
type Memory struct {
	*clock.Ticking
	env      *env.Env
	store    *Storage
	ports    []*Channel
	latency  int
	wlatency int
	slatency int      // -1: sequential reads take latency
	readEnd  []uint64 // per port: where the last read ended
	bpc      int

	rr     int   // next port to consider
	cur    *xfer // transaction in service
	credit int   // bytes the data path may still move this cycle

	reads, writes uint64
	bytes         uint64

	sigState, sigPort, sigAddr *waves.Signal

	writeSubs []func(now clock.Time, w WriteEvent)
}

// WriteEvent is a finished write transaction as a write subscriber sees
// it.
type WriteEvent struct {
	// Port is the memory port the write arrived on.
	Port int
	// Addr is the first byte written, in the memory's own address space.
	Addr uint64
	// Data holds the bytes written. It is a copy made for the
	// subscribers, not the storage: changing it does not change the
	// memory, but every subscriber of the write sees the same slice, so a
	// subscriber must not modify it and must copy it to keep it.
	Data []byte
	// Master is the request's Master field (the component that issued the
	// write, as forwarded by a bus).
	Master string
}

// SubscribeWrites adds fn to the functions called when a write transaction
// has finished (its data is in storage), in the cycle it finished: a
// device that watches part of its memory (a doorbell region written by
// PIO), a cache that a DMA write invalidates, a checker. Any number may
// subscribe; they are called in subscription order. A write that failed
// (outside the memory) is not announced.
func (m *Memory) SubscribeWrites(fn func(now clock.Time, w WriteEvent)) {
	m.writeSubs = append(m.writeSubs, fn)
}

// OnWrite subscribes fn to finished writes with the address and length
// only (the form older callers use); it adds a subscriber, so several
// OnWrite and SubscribeWrites calls all see every write.
func (m *Memory) OnWrite(fn func(now clock.Time, port int, addr uint64, n int)) {
	m.SubscribeWrites(func(now clock.Time, w WriteEvent) { fn(now, w.Port, w.Addr, len(w.Data)) })
}

// xfer is the transaction in service.
type xfer struct {
	port     int
	req      *Req
	startAt  clock.Time // first data edge
	done     int        // bytes moved
	data     []byte     // read: the data; write: collected for the trace
	err      string
	last     bool // write: the last data beat has arrived
	reported bool
}

// Port returns the channel of port i; a master connects to it with
// ConnectMaster.
func (m *Memory) Port(i int) *Channel { return m.ports[i] }

// Storage gives untimed access to the contents, for setting up and
// checking a run (a backdoor: no timing, no trace).
func (m *Memory) Storage() *Storage { return m.store }

// Tick implements clock.Ticker: move data of the current transaction, and
// accept the next one when idle, possibly in the cycle the previous one
// finished. A transaction accepted at edge a moves its first data at edge
// a+Latency (with Latency 0, in the accepting cycle if the memory was idle).
func (m *Memory) Tick(now clock.Time) bool {
	served, moved, again := false, false, false
	if m.cur != nil && now >= m.cur.startAt {
		served = true
		moved, again = m.serve(now)
	}
	accepted := false
	if m.cur == nil {
		accepted = m.accept(now)
	}
	if accepted && !served && now >= m.cur.startAt {
		var m2, a2 bool
		m2, a2 = m.serve(now)
		moved, again = moved || m2, again || a2
	}
	return moved || again || accepted
}

func (m *Memory) accept(now clock.Time) bool {
	for i := range m.ports {
		p := (m.rr + i) % len(m.ports)
		b, ok := m.ports[p].Down.Peek(now)
		if !ok {
			continue
		}
		if !b.First {
			m.env.Report(now, m.Name(), "mem.protocol", "port %d: data beat without a request: %v", p, b)
			m.ports[p].Down.Pop(now)
			return true
		}
		m.rr = (p + 1) % len(m.ports)
		lat := m.latency
		if b.Req.Op == Write {
			lat = m.wlatency
		} else {
			if m.slatency >= 0 && b.Req.Addr == m.readEnd[p] && b.Req.Addr != 0 {
				lat = m.slatency
			}
			m.readEnd[p] = b.Req.Addr + uint64(b.Req.Len)
		}
		x := &xfer{port: p, req: b.Req, startAt: m.Clock().After(now, clock.Cycle(lat))}
		if err := m.store.Check(b.Req.Addr, b.Req.Len); err != nil {
			x.err = err.Error()
			m.env.Report(now, m.Name(), "mem.range", "%v: %v", b.Req, err)
		}
		if b.Req.Op == Read {
			m.ports[p].Down.Pop(now) // the request beat carries no data
			x.data = make([]byte, b.Req.Len)
			if x.err == "" {
				_ = m.store.Read(b.Req.Addr, x.data)
			}
			m.sigState.SetString(now, "READ")
		} else {
			x.data = make([]byte, 0, b.Req.Len)
			m.sigState.SetString(now, "WRITE")
		}
		m.cur = x
		m.credit = 0
		m.sigPort.Set(now, uint64(p))
		m.sigAddr.Set(now, b.Req.Addr)
		if x.startAt > now {
			m.WakeAt(x.startAt)
		}
		return true
	}
	return false
}

// serve moves data of the current transaction. It returns whether it moved
// anything and whether it needs the next edge regardless (bandwidth-limited
// rather than blocked on a channel, which wakes the memory itself).
func (m *Memory) serve(now clock.Time) (moved, again bool) {
	x := m.cur
	// Unused bandwidth does not accumulate beyond one beat.
	m.credit = min(m.credit+m.bpc, max(m.bpc, m.ports[x.port].Width))
	if x.req.Op == Read {
		return m.serveRead(now, x)
	}
	return m.serveWrite(now, x)
}

func (m *Memory) serveRead(now clock.Time, x *xfer) (moved, again bool) {
	ch := m.ports[x.port]
	for x.done < x.req.Len {
		n := FirstChunk(x.req.Addr+uint64(x.done), x.req.Len-x.done, ch.Width)
		if m.credit < n {
			return moved, true
		}
		if !ch.Up.CanPush(now) {
			return moved, false // the master's pop wakes us
		}
		ch.Up.Push(now, Beat{Req: x.req, Data: x.data[x.done : x.done+n], First: x.done == 0,
			Last: x.done+n == x.req.Len, Err: x.err})
		m.credit -= n
		x.done += n
		moved = true
	}
	if x.req.Len == 0 {
		if !ch.Up.CanPush(now) {
			return false, false
		}
		ch.Up.Push(now, Beat{Req: x.req, First: true, Last: true, Err: x.err})
	}
	m.finish(now, x)
	return true, false
}

func (m *Memory) serveWrite(now clock.Time, x *xfer) (moved, again bool) {
	ch := m.ports[x.port]
	for !x.last {
		b, ok := ch.Down.Peek(now)
		if !ok {
			return moved, false // the master's push wakes us
		}
		if m.credit < len(b.Data) {
			return moved, true
		}
		ch.Down.Pop(now)
		if b.Req != x.req {
			m.env.Report(now, m.Name(), "mem.protocol", "write data of %v while serving %v", b.Req, x.req)
		}
		if x.err == "" && x.done+len(b.Data) <= x.req.Len {
			_ = m.store.Write(x.req.Addr+uint64(x.done), b.Data)
		}
		x.data = append(x.data, b.Data...)
		m.credit -= len(b.Data)
		x.done += len(b.Data)
		x.last = b.Last
		moved = true
	}
	if x.done != x.req.Len && !x.reported {
		x.reported = true
		m.env.Report(now, m.Name(), "mem.protocol", "%v: %d bytes of data for a %d-byte write", x.req, x.done, x.req.Len)
	}
	if !x.req.Posted {
		if !ch.Up.CanPush(now) {
			return moved, false
		}
		ch.Up.Push(now, Beat{Req: x.req, First: true, Last: true, Err: x.err})
	}
	m.finish(now, x)
	return true, false
}

func (m *Memory) finish(now clock.Time, x *xfer) {
	kind := "mem.read"
	if x.req.Op == Write {
		kind = "mem.write"
		m.writes++
	} else {
		m.reads++
	}
	m.bytes += uint64(x.req.Len)
	if m.env.Trace.Enabled() {
		fields := []trace.Field{trace.Addr("addr", x.req.Addr), trace.Int("len", int64(x.req.Len)),
			trace.Int("port", int64(x.port)), trace.Hash("hash", x.data)}
		if x.err != "" {
			fields = append(fields, trace.Str("err", x.err))
		}
		m.env.Trace.Emit(now, m.Clock().CycleAt(now), m.Name(), kind, fields...)
	}
	m.cur = nil
	m.sigState.SetString(now, "IDLE")
	if x.req.Op == Write && len(m.writeSubs) > 0 && x.err == "" {
		// x.data is the transaction's own buffer, collected from the
		// beats, never the storage; it is clipped to the request's length
		// so that a subscriber's append cannot reach past it.
		n := min(len(x.data), x.req.Len)
		w := WriteEvent{Port: x.port, Addr: x.req.Addr, Data: x.data[:n:n], Master: x.req.Master}
		for _, fn := range m.writeSubs {
			fn(now, w)
		}
	}
}

// Stats are a memory's counters.
type Stats struct {
	Reads, Writes, Bytes uint64
}

// Stats returns the counters.
func (m *Memory) Stats() Stats { return Stats{Reads: m.reads, Writes: m.writes, Bytes: m.bytes} }

// Idle implements check.Unit.
func (m *Memory) Idle() bool { return m.cur == nil }

// State implements check.Unit.
func (m *Memory) State() string {
	if m.cur == nil {
		return "idle"
	}
	return fmt.Sprintf("serving %v on port %d, %d/%d bytes moved", m.cur.req, m.cur.port, m.cur.done, m.cur.req.Len)
}

// View returns the n bytes at addr as a slice of the storage itself, not a
// copy, allocating their page; [addr, addr+n) must lie within one 4 KiB
// page. It is for a model that keeps no copy of the data it moves: a host
// cache's write-back carries whatever the memory holds when the bus moves
// it (a write of the bytes onto themselves), so a store performed in the
// meantime is never undone. Writing through the slice changes the memory.
func (s *Storage) View(addr uint64, n int) ([]byte, error) {
	if err := s.Check(addr, n); err != nil {
		return nil, err
	}
	off := int(addr & (pageSize - 1))
	if off+n > pageSize {
		return nil, fmt.Errorf("view [%#x, %#x) crosses a %d-byte page", addr, addr+uint64(n), pageSize)
	}
	p := s.pageForWrite(addr >> pageBits)
	return p[off : off+n : off+n], nil
}
