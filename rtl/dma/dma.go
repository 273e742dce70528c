// Package dma models a DMA engine: a queue of descriptors of configurable
// depth, a fixed setup time per descriptor, and bursts of configurable size
// that move real bytes from a source to a destination through a staging
// buffer. Reads and writes overlap: the engine keeps reading while the
// buffer has room and writes a burst as soon as it has one staged. A source
// or destination is either a memory-mapped port (a mem.Channel to a bus or
// a memory) with an address, or a byte stream (a FIFO of chunks, such as a
// network link's transmit queue).
//
// The LANai's host DMA engine (host memory to and from NI SRAM, one of
// MY-P13's three) is an instance of this block. Its send and receive
// engines, which move packets between SRAM and the link flit by flit, are
// not: they are rtl/netdma's Sender and Receiver.
package dma

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Kind tells memory-mapped endpoints from streams.
type Kind uint8

const (
	// MemPort is a memory-mapped master port: an address range.
	MemPort Kind = iota
	// Stream is a FIFO of byte chunks.
	Stream
)

// Endpoint is one side of a transfer: a port of the engine and, for a
// memory-mapped port, the start address.
type Endpoint struct {
	Kind Kind
	Port int
	Addr uint64
}

// Mem returns a memory-mapped endpoint.
func Mem(port int, addr uint64) Endpoint { return Endpoint{Kind: MemPort, Port: port, Addr: addr} }

// StreamPort returns a stream endpoint.
func StreamPort(port int) Endpoint { return Endpoint{Kind: Stream, Port: port} }

func (e Endpoint) String() string {
	if e.Kind == Stream {
		return fmt.Sprintf("stream%d", e.Port)
	}
	return fmt.Sprintf("port%d:%#x", e.Port, e.Addr)
}

// Descriptor is one transfer of Len bytes.
type Descriptor struct {
	Src, Dst Endpoint
	Len      int
	// Tag is the submitter's identifier, returned on completion.
	Tag uint64
}

// Builder configures an Engine.
type Builder struct {
	env         *env.Env
	clk         clock.Clock
	queueDepth  int
	setup       int
	burst       int
	buffer      int
	outstanding int
	posted      bool
	streamWidth int
	class       string
}

// MakeBuilder returns a builder with defaults: a 4-deep descriptor queue, 4
// setup cycles, 64-byte bursts, a 128-byte staging buffer, one read
// outstanding, posted writes, 8-byte stream chunks.
func MakeBuilder() Builder {
	return Builder{queueDepth: 4, setup: 4, burst: 64, buffer: 128, outstanding: 1,
		posted: true, streamWidth: 8, class: "dma"}
}

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithClock sets the engine clock (required).
func (b Builder) WithClock(c clock.Clock) Builder { b.clk = c; return b }

// WithQueueDepth sets how many descriptors may wait.
func (b Builder) WithQueueDepth(n int) Builder { b.queueDepth = n; return b }

// WithSetupCycles sets the cycles spent on each descriptor before its
// first read.
func (b Builder) WithSetupCycles(n int) Builder { b.setup = n; return b }

// WithBurst sets the largest burst in bytes; bursts start and end on
// burst-aligned addresses.
func (b Builder) WithBurst(n int) Builder { b.burst = n; return b }

// WithBuffer sets the staging buffer size in bytes (at least one burst).
func (b Builder) WithBuffer(n int) Builder { b.buffer = n; return b }

// WithOutstandingReads sets how many read bursts may be in flight.
func (b Builder) WithOutstandingReads(n int) Builder { b.outstanding = n; return b }

// WithPostedWrites sets whether memory-mapped writes are posted; if not,
// a descriptor completes only when every write burst is acknowledged.
func (b Builder) WithPostedWrites(p bool) Builder { b.posted = p; return b }

// WithStreamWidth sets the bytes moved per cycle to or from a stream.
func (b Builder) WithStreamWidth(n int) Builder { b.streamWidth = n; return b }

// WithClass sets the traffic class written into requests ("dma").
func (b Builder) WithClass(c string) Builder { b.class = c; return b }

// Validate checks the parameters.
func (b Builder) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("dma: no env")
	case !b.clk.Valid():
		return errors.New("dma: no clock")
	case b.queueDepth < 1:
		return fmt.Errorf("dma descriptor queue depth %d must be at least 1", b.queueDepth)
	case b.setup < 0:
		return fmt.Errorf("dma setup cycles %d must not be negative", b.setup)
	case b.burst < 1:
		return fmt.Errorf("dma burst %d bytes must be at least 1", b.burst)
	case b.buffer < b.burst:
		return fmt.Errorf("dma buffer %d bytes must hold at least one burst (%d bytes)", b.buffer, b.burst)
	case b.outstanding < 1:
		return fmt.Errorf("dma outstanding reads %d must be at least 1", b.outstanding)
	case b.streamWidth < 1:
		return fmt.Errorf("dma stream width %d bytes must be at least 1", b.streamWidth)
	}
	return nil
}

// Build creates the engine.
func (b Builder) Build(name string) (*Engine, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e := &Engine{env: b.env, cfg: b}
	e.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, e)
	q, err := fifo.MakeBuilder[Descriptor]().WithEnv(b.env).WithDepth(b.queueDepth).WithWidth(128).Build(name + ".Queue")
	if err != nil {
		return nil, err
	}
	q.SetConsumer(e)
	e.queue = q
	reg := b.env.Waves
	e.sigState = reg.String(name, "state")
	e.sigStaged = reg.Integer(name, "staged", waves.WidthFor(uint64(b.buffer)))
	e.sigReads = reg.Integer(name, "reads_out", waves.WidthFor(uint64(b.outstanding)))
	e.sigState.SetString(0, "IDLE")
	b.env.Register(e)
	return e, nil
}

type port struct {
	name string
	mem  *mem.Channel
	in   *fifo.FIFO[[]byte]
	out  *fifo.FIFO[[]byte]
}

// Engine is a clocked DMA engine.
type Engine struct {
	*clock.Ticking
	env   *env.Env
	cfg   Builder
	ports []*port
	queue *fifo.FIFO[Descriptor]
	cur   *job
	seq   uint64

	onDone func(now clock.Time, d Descriptor, err string)

	descs, bytes uint64

	sigState, sigStaged, sigReads *waves.Signal
}

// job is the descriptor in progress.
type job struct {
	d        Descriptor
	setupEnd clock.Time
	readReq  int // bytes requested from the source
	readGot  int // bytes received
	reads    int // read bursts in flight
	staged   []byte
	written  int // bytes handed to the destination
	wr       []mem.Beat
	wrDone   int    // bursts whose last beat was sent
	wrAcked  int    // non-posted write completions received
	wrBursts int    // write bursts started
	all      []byte // whole payload, for the trace
	rdBurst  []byte // data of the read burst being received, for the trace
	err      string
	invalid  bool // the descriptor was refused: nothing moves
	state    string
}

// AddMemPort attaches a memory-mapped master channel (from bus.AddMaster
// or a memory's Port) and returns its port number.
func (e *Engine) AddMemPort(name string, ch *mem.Channel) int {
	ch.ConnectMaster(e)
	e.ports = append(e.ports, &port{name: name, mem: ch})
	return len(e.ports) - 1
}

// AddStreamIn attaches a stream the engine reads chunks from.
func (e *Engine) AddStreamIn(name string, f *fifo.FIFO[[]byte]) int {
	f.SetConsumer(e)
	e.ports = append(e.ports, &port{name: name, in: f})
	return len(e.ports) - 1
}

// AddStreamOut attaches a stream the engine writes chunks of at most the
// stream width into.
func (e *Engine) AddStreamOut(name string, f *fifo.FIFO[[]byte]) int {
	f.SetProducer(e)
	e.ports = append(e.ports, &port{name: name, out: f})
	return len(e.ports) - 1
}

// OnDone sets the completion notification: it runs when a descriptor's
// last byte has been written (and acknowledged, for non-posted writes);
// err is non-empty if the transfer failed.
func (e *Engine) OnDone(fn func(now clock.Time, d Descriptor, err string)) { e.onDone = fn }

// Queue returns the descriptor queue; a submitter that wants wake-ups when
// it has room calls SetProducer on it.
func (e *Engine) Queue() *fifo.FIFO[Descriptor] { return e.queue }

// Submit queues a descriptor at now; false if the queue is full.
func (e *Engine) Submit(now clock.Time, d Descriptor) bool {
	if !e.queue.CanPush(now) {
		return false
	}
	return e.queue.Push(now, d)
}

// Tick implements clock.Ticker, stages ordered output first: finish,
// write, receive read data, issue reads, start the next descriptor.
func (e *Engine) Tick(now clock.Time) bool {
	if e.cur == nil {
		return e.begin(now)
	}
	j := e.cur
	if now < j.setupEnd {
		return false // WakeAt(setupEnd) is pending
	}
	progress := e.finish(now, j)
	if e.cur == nil {
		return true
	}
	progress = e.write(now, j) || progress
	progress = e.receive(now, j) || progress
	progress = e.issueRead(now, j) || progress
	e.setState(now, j)
	// Everything the job can wait for (a FIFO with room, data, a
	// completion) wakes the engine, so it sleeps when nothing moved.
	return progress
}

func (e *Engine) begin(now clock.Time) bool {
	d, ok := e.queue.Pop(now)
	if !ok {
		e.sigState.SetString(now, "IDLE")
		return false
	}
	j := &job{d: d, setupEnd: e.Clock().After(now, clock.Cycle(e.cfg.setup))}
	if err := e.check(d); err != nil {
		j.err = err.Error()
		j.invalid = true
		e.env.Report(now, e.Name(), "dma.descriptor", "%v", err)
	}
	e.cur = j
	e.setState(now, j)
	if j.setupEnd > now {
		e.WakeAt(j.setupEnd)
		return false
	}
	return true
}

func (e *Engine) check(d Descriptor) error {
	if d.Len < 1 {
		return fmt.Errorf("descriptor %d: length %d", d.Tag, d.Len)
	}
	for _, ep := range []struct {
		ep  Endpoint
		src bool
	}{{d.Src, true}, {d.Dst, false}} {
		if ep.ep.Port < 0 || ep.ep.Port >= len(e.ports) {
			return fmt.Errorf("descriptor %d: no port %d", d.Tag, ep.ep.Port)
		}
		p := e.ports[ep.ep.Port]
		ok := (ep.ep.Kind == MemPort && p.mem != nil) ||
			(ep.ep.Kind == Stream && ep.src && p.in != nil) ||
			(ep.ep.Kind == Stream && !ep.src && p.out != nil)
		if !ok {
			return fmt.Errorf("descriptor %d: port %d (%s) cannot be the %s", d.Tag, ep.ep.Port, p.name, map[bool]string{true: "source", false: "destination"}[ep.src])
		}
	}
	return nil
}

func (e *Engine) setState(now clock.Time, j *job) {
	s := "MOVE"
	switch {
	case now < j.setupEnd:
		s = "SETUP"
	case j.readGot == j.d.Len && j.written == j.d.Len:
		s = "COMPL"
	case j.readReq == j.d.Len:
		s = "DRAIN"
	}
	e.sigState.SetString(now, s)
	e.sigStaged.Set(now, uint64(len(j.staged)))
	e.sigReads.Set(now, uint64(j.reads))
}

// chunk returns the length of the next burst at addr with left bytes to go.
func (e *Engine) chunk(addr uint64, left int) int {
	b := uint64(e.cfg.burst)
	return min(left, int(b-addr%b))
}

func (e *Engine) issueRead(now clock.Time, j *job) bool {
	if j.readReq == j.d.Len || j.err != "" {
		return false
	}
	p := e.ports[j.d.Src.Port]
	if p.in != nil {
		return false // streams push; receive pulls
	}
	if j.reads >= e.cfg.outstanding {
		return false
	}
	addr := j.d.Src.Addr + uint64(j.readReq)
	n := e.chunk(addr, j.d.Len-j.readReq)
	inFlight := j.readReq - j.readGot
	if len(j.staged)+inFlight+n > e.cfg.buffer || !p.mem.Down.CanPush(now) {
		return false
	}
	e.seq++
	req := &mem.Req{Op: mem.Read, Addr: addr, Len: n, Class: e.cfg.class, Master: e.Name(), Seq: e.seq}
	p.mem.Down.Push(now, mem.Beat{Req: req, First: true, Last: true})
	j.readReq += n
	j.reads++
	return true
}

func (e *Engine) receive(now clock.Time, j *job) bool {
	p := e.ports[j.d.Src.Port]
	if p.in != nil {
		if j.readGot == j.d.Len || j.err != "" {
			return false
		}
		chunk, ok := p.in.Peek(now)
		if !ok || len(j.staged)+len(chunk) > e.cfg.buffer {
			return false
		}
		p.in.Pop(now)
		if j.readGot+len(chunk) > j.d.Len {
			e.env.Report(now, e.Name(), "dma.stream", "stream chunk of %d bytes overruns descriptor %d", len(chunk), j.d.Tag)
			chunk = chunk[:j.d.Len-j.readGot]
		}
		j.staged = append(j.staged, chunk...)
		j.readGot += len(chunk)
		j.readReq = j.readGot
		return true
	}
	progress := false
	for _, pi := range e.memPortsOf(j) {
		ch := e.ports[pi].mem
		b, ok := ch.Up.Peek(now)
		if !ok {
			continue
		}
		if b.Req.Op == mem.Write {
			ch.Up.Pop(now)
			j.wrAcked++
			if b.Err != "" {
				e.fail(now, j, "write: "+b.Err)
			}
			progress = true
			continue
		}
		if pi != j.d.Src.Port {
			continue
		}
		ch.Up.Pop(now)
		if b.Err != "" {
			e.fail(now, j, "read: "+b.Err)
		}
		j.staged = append(j.staged, b.Data...)
		j.readGot += len(b.Data)
		if e.env.Trace.Enabled() {
			j.rdBurst = append(j.rdBurst, b.Data...)
		}
		if b.Last {
			j.reads--
			if e.env.Trace.Enabled() {
				e.emitBurst(now, "read", b.Req.Addr, b.Req.Len, j.rdBurst)
				j.rdBurst = j.rdBurst[:0]
			}
		}
		progress = true
	}
	return progress
}

// memPortsOf lists the memory-mapped ports the job uses (source first).
func (e *Engine) memPortsOf(j *job) []int {
	var out []int
	if e.ports[j.d.Src.Port].mem != nil {
		out = append(out, j.d.Src.Port)
	}
	if d := j.d.Dst.Port; e.ports[d].mem != nil && d != j.d.Src.Port {
		out = append(out, d)
	}
	return out
}

func (e *Engine) fail(now clock.Time, j *job, msg string) {
	if j.err == "" {
		j.err = msg
		e.env.Report(now, e.Name(), "dma.error", "descriptor %d: %s", j.d.Tag, msg)
	}
}

func (e *Engine) write(now clock.Time, j *job) bool {
	p := e.ports[j.d.Dst.Port]
	if p.out != nil {
		if len(j.staged) == 0 || !p.out.CanPush(now) {
			return false
		}
		n := min(len(j.staged), e.cfg.streamWidth)
		chunk := append([]byte(nil), j.staged[:n]...)
		p.out.Push(now, chunk)
		e.consume(j, n)
		return true
	}
	if len(j.wr) == 0 {
		if !e.startBurst(now, j) {
			return false
		}
	}
	if !p.mem.Down.CanPush(now) {
		return false
	}
	b := j.wr[0]
	p.mem.Down.Push(now, b)
	j.wr = j.wr[1:]
	if b.Last {
		j.wrDone++
		if e.env.Trace.Enabled() {
			e.emitBurst(now, "write", b.Req.Addr, b.Req.Len, nil)
		}
	}
	return true
}

// startBurst prepares the next write burst once it is fully staged (or the
// source is done and the rest is staged).
func (e *Engine) startBurst(now clock.Time, j *job) bool {
	if j.written == j.d.Len || j.err != "" {
		return false
	}
	addr := j.d.Dst.Addr + uint64(j.written)
	n := e.chunk(addr, j.d.Len-j.written)
	if len(j.staged) < n {
		return false
	}
	data := append([]byte(nil), j.staged[:n]...)
	e.seq++
	req := &mem.Req{Op: mem.Write, Addr: addr, Len: n, Posted: e.cfg.posted, Class: e.cfg.class, Master: e.Name(), Seq: e.seq}
	j.wr = mem.WriteBeats(req, data, e.ports[j.d.Dst.Port].mem.Width)
	j.wrBursts++
	e.consume(j, n)
	return true
}

func (e *Engine) consume(j *job, n int) {
	if e.env.Trace.Enabled() {
		j.all = append(j.all, j.staged[:n]...)
	}
	j.staged = j.staged[n:]
	j.written += n
}

// finish completes the job when everything is written (and acknowledged),
// or, after an error, once nothing of it is left in flight.
func (e *Engine) finish(now clock.Time, j *job) bool {
	if j.invalid {
		return e.complete(now, j)
	}
	if len(j.wr) > 0 {
		return false
	}
	if j.err == "" && (j.written < j.d.Len || j.readGot < j.d.Len) {
		return false
	}
	if j.err != "" && j.reads > 0 {
		return false // drain the read data still on its way
	}
	if !e.cfg.posted && e.ports[j.d.Dst.Port].mem != nil && j.wrAcked < j.wrBursts {
		return false
	}
	return e.complete(now, j)
}

func (e *Engine) complete(now clock.Time, j *job) bool {
	e.env.Monitor.Progress(now)
	e.descs++
	e.bytes += uint64(j.d.Len)
	if e.env.Trace.Enabled() {
		fields := []trace.Field{trace.Uint("tag", j.d.Tag), trace.Str("src", j.d.Src.String()),
			trace.Str("dst", j.d.Dst.String()), trace.Int("len", int64(j.d.Len)), trace.Hash("hash", j.all)}
		if j.err != "" {
			fields = append(fields, trace.Str("err", j.err))
		}
		e.env.Trace.Emit(now, e.Clock().CycleAt(now), e.Name(), "dma.done", fields...)
	}
	e.cur = nil
	e.sigState.SetString(now, "IDLE")
	e.sigStaged.Set(now, 0)
	if e.onDone != nil {
		e.onDone(now, j.d, j.err)
	}
	return true
}

func (e *Engine) emitBurst(now clock.Time, dir string, addr uint64, n int, data []byte) {
	fields := []trace.Field{trace.Str("dir", dir), trace.Addr("addr", addr), trace.Int("len", int64(n))}
	if data != nil {
		fields = append(fields, trace.Hash("hash", data))
	}
	e.env.Trace.Emit(now, e.Clock().CycleAt(now), e.Name(), "dma.burst", fields...)
}

// Stats are the engine's counters.
type Stats struct {
	Descriptors, Bytes uint64
}

// Stats returns the counters.
func (e *Engine) Stats() Stats { return Stats{Descriptors: e.descs, Bytes: e.bytes} }

// Idle implements check.Unit.
func (e *Engine) Idle() bool { return e.cur == nil }

// State implements check.Unit.
func (e *Engine) State() string {
	if e.cur == nil {
		return "idle"
	}
	j := e.cur
	return fmt.Sprintf("descriptor %d %v->%v: %d/%d bytes read (%d requested, %d bursts in flight), %d staged, %d written, %d/%d write acks",
		j.d.Tag, j.d.Src, j.d.Dst, j.readGot, j.d.Len, j.readReq, j.reads, len(j.staged), j.written, j.wrAcked, j.wrBursts)
}
