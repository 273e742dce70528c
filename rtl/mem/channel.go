package mem

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
)

// Op is a transaction's direction.
type Op uint8

// Operations.
const (
	Read Op = iota
	Write
)

func (o Op) String() string {
	if o == Read {
		return "read"
	}
	return "write"
}

// Req is one memory-mapped transaction: a PIO load or store, a DMA burst.
// Its master fills it in; components that forward it (a bus) pass a copy
// with the address translated to the target's local space.
type Req struct {
	Op   Op
	Addr uint64
	Len  int
	// Posted writes get no completion: the master is done once the write
	// is handed over. Non-posted writes and all reads get a response.
	Posted bool
	// Class tags the traffic for traces ("pio", "dma").
	Class string
	// Master is the issuing component's name.
	Master string
	// Seq is the master's own sequence number for the request.
	Seq uint64
	// Atomic marks one half of a load-locked/store-conditional pair; the
	// component that keeps reservations (a host cache) honours it, others
	// treat the request as a plain read or write.
	Atomic Atomic
	// Lost marks an address-only claim (a cache's upgrade of a line it
	// held shared) whose master saw another master claim or write the
	// line first, while the upgrade still waited for the bus: it claims a
	// copy its master no longer holds, so it invalidates nothing, and the
	// caches that observe it ignore it (host/memsys). Its master sets it.
	Lost bool
	// Poll marks a read of a spin loop waiting for a value to change: it
	// is not forward progress, so components do not record progress
	// (check.Monitor.Progress) for it, and a program that spins for ever
	// is stopped by the stall watchdog (rtl/env) instead of running to the
	// time limit. A bus carries it to its target; a bridge's own far-side
	// reads (a delayed read, a prefetch stream shared by several masters)
	// do not, and no component records progress for a far-side read.
	Poll bool
}

// Atomic qualifies a request as part of a load-locked/store-conditional
// pair (Alpha LDL_L/STL_C, which Cashmere-2L's locks use).
type Atomic uint8

// Atomic qualifiers.
const (
	// NotAtomic is a plain access.
	NotAtomic Atomic = iota
	// LoadLocked is a read that also sets the issuing master's reservation
	// on the cache line it reads.
	LoadLocked
	// StoreConditional is a non-posted write that takes effect only if the
	// master's reservation on the line still holds (no other CPU or DMA
	// wrote the line since the LoadLocked); its completion beat has
	// CondFailed set, and nothing written, if it did not.
	StoreConditional
)

func (r *Req) String() string {
	return fmt.Sprintf("%s %s %#x+%d seq=%d", r.Master, r.Op, r.Addr, r.Len, r.Seq)
}

// Beat is one transfer on a Channel. Downstream (master to target) a
// transaction is its request beat (First, carrying the Req and, for a write,
// the first data) followed by the remaining data beats; upstream it is the
// read data beats or, for a non-posted write, one completion beat without
// data. Every beat points to its Req.
type Beat struct {
	Req   *Req
	Data  []byte
	First bool
	Last  bool
	// Err is set on an error response (an address nothing decodes, an
	// access outside a memory); the data is then meaningless.
	Err string
	// CondFailed is set on the completion of a StoreConditional that did
	// not take effect.
	CondFailed bool
}

func (b Beat) String() string {
	var s strings.Builder
	if b.Req != nil {
		s.WriteString(b.Req.String())
	}
	fmt.Fprintf(&s, " beat %dB", len(b.Data))
	if b.First {
		s.WriteString(" first")
	}
	if b.Last {
		s.WriteString(" last")
	}
	if b.Err != "" {
		s.WriteString(" err=" + b.Err)
	}
	return s.String()
}

// Channel is the memory-mapped link between a master and a target: a
// downstream FIFO of request and write-data beats and an upstream FIFO of
// read-data and completion beats, each beat at most Width bytes. The FIFOs
// are registers, so a beat takes at least one cycle to cross.
type Channel struct {
	Name  string
	Width int
	Down  *fifo.FIFO[Beat]
	Up    *fifo.FIFO[Beat]
}

// NewChannel creates a channel of beats of at most width bytes, each FIFO
// depth entries deep.
func NewChannel(e *env.Env, name string, width, depth int) (*Channel, error) {
	if width < 1 {
		return nil, fmt.Errorf("%s: channel width %d bytes must be at least 1", name, width)
	}
	down, err := fifo.MakeBuilder[Beat]().WithEnv(e).WithDepth(depth).WithWidth(8 * width).Build(name + ".Down")
	if err != nil {
		return nil, err
	}
	up, err := fifo.MakeBuilder[Beat]().WithEnv(e).WithDepth(depth).WithWidth(8 * width).Build(name + ".Up")
	if err != nil {
		return nil, err
	}
	return &Channel{Name: name, Width: width, Down: down, Up: up}, nil
}

// ConnectMaster names the master: it produces downstream and consumes
// upstream beats.
func (c *Channel) ConnectMaster(m clock.Waker) {
	c.Down.SetProducer(m)
	c.Up.SetConsumer(m)
}

// ConnectTarget names the target.
func (c *Channel) ConnectTarget(t clock.Waker) {
	c.Down.SetConsumer(t)
	c.Up.SetProducer(t)
}

// Chunks splits [addr, addr+n) at width-aligned boundaries, the way a data
// path of width bytes moves it: the first and last chunks may be partial.
// It returns the chunk lengths.
func Chunks(addr uint64, n, width int) []int {
	var out []int
	if k := chunkCount(addr, n, width); k > 0 {
		out = make([]int, 0, k)
	}
	for n > 0 {
		room := width - int(addr%uint64(width))
		c := min(room, n)
		out = append(out, c)
		addr += uint64(c)
		n -= c
	}
	return out
}

// chunkCount is len(Chunks(addr, n, width)) without building the list.
func chunkCount(addr uint64, n, width int) int {
	if n <= 0 {
		return 0
	}
	first := FirstChunk(addr, n, width)
	return 1 + (n-first+width-1)/width
}

// FirstChunk is Chunks(addr, n, width)[0] without building the list.
func FirstChunk(addr uint64, n, width int) int {
	return min(width-int(addr%uint64(width)), n)
}

// WriteBeats returns the downstream beats of a write of data at req.Addr
// over a channel of the given width.
func WriteBeats(req *Req, data []byte, width int) []Beat {
	// The beats of Chunks(req.Addr, len(data), width), in one allocation.
	beats := make([]Beat, chunkCount(req.Addr, len(data), width))
	addr, off := req.Addr, 0
	for i := range beats {
		c := FirstChunk(addr, len(data)-off, width)
		beats[i] = Beat{Req: req, Data: data[off : off+c], First: i == 0, Last: i == len(beats)-1}
		addr += uint64(c)
		off += c
	}
	return beats
}
