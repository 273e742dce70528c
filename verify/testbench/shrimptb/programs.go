package shrimptb

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
)

// The host programs of the SHRIMP measurements (issue 14 design section
// 7), written as sequential programs (docs/host-programs.md) over the
// VMMC library (host/vmmc). They know addresses, processes and proxies,
// not the cluster: measure.go builds the cluster, exports, imports and
// binds, and starts them.

// Unseen marks a round not written or not seen.
const Unseen clock.Time = -1

// Rounds is what a one-way measurement saw: for round r (0-based),
// Sent[r] is when the sender started (a store retired, a send was
// called) and Seen[r] when the reader's load first returned the round's
// value.
type Rounds struct {
	Sent, Seen []clock.Time
	// Done[r] is when the sender's call returned (a send's overhead is
	// Done - Sent).
	Done []clock.Time
}

// NewRounds makes the record of n rounds, every entry Unseen.
func NewRounds(n int) *Rounds {
	r := &Rounds{Sent: make([]clock.Time, n), Seen: make([]clock.Time, n), Done: make([]clock.Time, n)}
	for i := range n {
		r.Sent[i], r.Seen[i], r.Done[i] = Unseen, Unseen, Unseen
	}
	return r
}

// Latencies returns Seen - Sent of the rounds after the first skip, and
// whether all of them were seen.
func (r *Rounds) Latencies(skip int) ([]clock.Time, bool) {
	var out []clock.Time
	for i := skip; i < len(r.Sent); i++ {
		if r.Sent[i] == Unseen || r.Seen[i] == Unseen {
			return out, false
		}
		out = append(out, r.Seen[i]-r.Sent[i])
	}
	return out, true
}

// Overheads returns Done - Sent of the rounds after the first skip.
func (r *Rounds) Overheads(skip int) ([]clock.Time, bool) {
	var out []clock.Time
	for i := skip; i < len(r.Sent); i++ {
		if r.Sent[i] == Unseen || r.Done[i] == Unseen {
			return out, false
		}
		out = append(out, r.Done[i]-r.Sent[i])
	}
	return out, true
}

func word(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// Poll loads the 32-bit word at addr until it equals want or patience has
// passed since it started; it returns when the load that saw it retired
// and whether it did.
func Poll(p *cpu.Proc, addr uint64, want uint32, patience clock.Time) (clock.Time, bool) {
	start := p.Now()
	for {
		if p.As("poll").Load32(addr) == want {
			return p.Now(), true
		}
		if p.Now()-start > patience {
			return p.Now(), false
		}
	}
}

// AUOneWay is the automatic-update one-word latency (section 4.2: «The
// end-to-end latency is just 3.71 µs for a single-word transfer between
// two user-level processes»): the writer stores round r's value (r+1) to
// Local, a word of a page bound to the reader's buffer; the reader polls
// Remote, the word's copy in its exported buffer. Latency: the store's
// retirement to the load that returned the value.
type AUOneWay struct {
	Local, Remote uint64
	Rounds        int
	// Gap is the writer's CPU cycles between rounds (longer than a
	// round's latency, so rounds do not overlap).
	Gap      int
	Patience clock.Time
}

// Writer is the sending program.
func (o AUOneWay) Writer(r *Rounds) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for i := range o.Rounds {
			p.As("au.store").Store32(o.Local, uint32(i+1))
			r.Sent[i], r.Done[i] = p.Now(), p.Now()
			p.Compute(o.Gap)
		}
	}
}

// Reader is the polling program.
func (o AUOneWay) Reader(r *Rounds) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for i := range o.Rounds {
			t, ok := Poll(p, o.Remote, uint32(i+1), o.Patience)
			if !ok {
				return
			}
			r.Seen[i] = t
		}
	}
}

// DUOneWay is the deliberate-update latency (section 4.1: «SHRIMP has a
// deliberate update latency of 6 µs»; the size is not given: Bytes, one
// word by default, as the automatic-update figure): the sender writes
// round r's value (r+1) into its source buffer Src (a cached store), then
// sends Bytes from Src to byte Off of the proxy; the reader polls Remote,
// the first word's place in its exported buffer. Latency: the send call
// (after the value's store) to the load that returned the value; Done is
// when Send returned (its overhead: with AsyncSend, when the UDMA
// initiation's load returned the started status).
type DUOneWay struct {
	Proc     *vmmc.Process
	Proxy    *vmmc.Proxy
	Src, Off uint64
	Bytes    int
	Remote   uint64
	Rounds   int
	Gap      int
	Patience clock.Time
	// Err is the first send error (the program stops there).
	Err *error
}

// Sender is the sending program.
func (o DUOneWay) Sender(r *Rounds) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for i := range o.Rounds {
			p.Store32(o.Src, uint32(i+1))
			r.Sent[i] = p.Now()
			if err := o.Proc.Send(p, o.Src, o.Proxy, o.Off, o.Bytes, false); err != nil {
				if o.Err != nil && *o.Err == nil {
					*o.Err = fmt.Errorf("round %d: %w", i, err)
				}
				return
			}
			r.Done[i] = p.Now()
			p.Compute(o.Gap)
		}
	}
}

// Reader is the polling program.
func (o DUOneWay) Reader(r *Rounds) func(p *cpu.Proc) {
	return AUOneWay{Remote: o.Remote, Rounds: o.Rounds, Patience: o.Patience}.Reader(r)
}

// AUStream writes Bytes through an automatic-update binding: stores of
// StoreBytes (4 or 8) to consecutive addresses from Local, then the flag
// word at Flag (bound too, after the data: automatic-update order per
// pair makes it arrive last) set to Value. Start is when the first store
// issued.
type AUStream struct {
	Local      uint64
	Bytes      int
	StoreBytes int
	Flag       uint64
	Value      uint32
}

// Program is the writer; start gets the time of the first store.
func (s AUStream) Program(start *clock.Time) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		*start = p.Now()
		d := make([]byte, s.StoreBytes)
		for off := 0; off < s.Bytes; off += s.StoreBytes {
			binary.LittleEndian.PutUint32(d, uint32(off)|1)
			p.Store(s.Local+uint64(off), d)
		}
		p.As("au.flag").Store32(s.Flag, s.Value)
	}
}

// DUStream sends Bytes from Src to byte Off of the proxy in sends of
// Size, then sends the flag word (Flag, a word of local memory holding
// Value) to byte FlagOff of the proxy; deliberate updates of one pair
// arrive in order, so the flag arrives last.
type DUStream struct {
	Proc          *vmmc.Process
	Proxy         *vmmc.Proxy
	Src, Off      uint64
	Bytes, Size   int
	Flag, FlagOff uint64
	Value         uint32
	Err           *error
}

// Program is the sender; start gets the time of the first send call.
func (s DUStream) Program(start *clock.Time) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		p.Store32(s.Flag, s.Value)
		*start = p.Now()
		fail := func(err error) {
			if s.Err != nil && *s.Err == nil {
				*s.Err = err
			}
		}
		for off := 0; off < s.Bytes; off += s.Size {
			n := min(s.Size, s.Bytes-off)
			if err := s.Proc.Send(p, s.Src+uint64(off), s.Proxy, s.Off+uint64(off), n, false); err != nil {
				fail(err)
				return
			}
		}
		if err := s.Proc.Send(p, s.Flag, s.Proxy, s.FlagOff, 4, false); err != nil {
			fail(err)
		}
		s.Proc.Wait(p)
	}
}

// FlagReader polls Flag until it holds Value and records when.
func FlagReader(flag uint64, value uint32, patience clock.Time, seen *clock.Time) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		if t, ok := Poll(p, flag, value, patience); ok {
			*seen = t
		}
	}
}

// AUFlood is a FIFO-bound writer (section 4.5.2): Stores stores of 4
// bytes to consecutive words from Local (a page bound without
// combining: one packet per store, the lowest-latency mode of section
// 4.5.1), as fast as the processor goes; Last gets the time the last
// store retired.
type AUFlood struct {
	Local  uint64
	Stores int
	Span   int // bytes the stores cycle through (a bound range)
}

// Program is the writer.
func (f AUFlood) Program(last *clock.Time) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for i := range f.Stores {
			p.Store32(f.Local+uint64((4*i)%f.Span), uint32(i+1))
			*last = p.Now()
		}
	}
}

// AsyncBurst sends Count messages of Size bytes back to back with
// asynchronous sends (section 4.5.3's experiment), from Src to
// consecutive Size-aligned offsets of the proxy (wrapping at Span), then
// waits for them; Start and End bracket it.
type AsyncBurst struct {
	Proc        *vmmc.Process
	Proxy       *vmmc.Proxy
	Src         uint64
	Count, Size int
	Span        int
	Err         *error
}

// Program is the sender.
func (a AsyncBurst) Program(start, end *clock.Time) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		*start = p.Now()
		for i := range a.Count {
			off := uint64((i * a.Size) % a.Span)
			if err := a.Proc.Send(p, a.Src+off, a.Proxy, off, a.Size, false); err != nil {
				if a.Err != nil && *a.Err == nil {
					*a.Err = err
				}
				return
			}
		}
		a.Proc.Wait(p)
		*end = p.Now()
	}
}
