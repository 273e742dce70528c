// Package nx is a minimal NX-style message-passing library (Pierce's NX,
// shrimp-design-choices.txt reference [39]) on SHRIMP's virtual
// memory-mapped communication (host/vmmc), as section 3 uses one for
// Ocean-NX and Barnes-NX and section 4.2 compares its two bulk-data
// variants: «We have written versions of these libraries that use
// automatic update instead of deliberate update as the bulk data transfer
// mechanism».
//
// What it has: Send and Recv (NX's csend and crecv: typed messages
// between two nodes, the receive blocking by polling), Sync (gsync, a
// barrier) and High (gdhigh, the global maximum of a float64, the
// convergence test of a relaxation). What it does not have: NX's
// asynchronous receives (irecv, hrecv), any-source receives and message
// probing.
//
// Buffers (the same in both variants): every node exports, for every
// other node, a receive ring of Params.Slots slots of Params.SlotBytes
// (whole pages), and one credit page. A message is cut into chunks of at
// most SlotBytes-TrailerBytes bytes; chunk k (from 1) of a pair goes to
// slot (k-1) mod Slots, its data from the slot's first byte and a
// TrailerBytes trailer at the slot's end (type, chunk length, last-chunk
// flag and the sequence number k, written last; a chunk of at most
// InlineBytes travels inside the trailer). The receiver polls the slot's
// sequence word for k, copies the chunk out, and once it has consumed
// Slots/2 chunks it has not yet reported, writes its count into the
// sender's credit page (the word of its node). A sender never has more
// than Slots chunks of a pair unconsumed: before a chunk it polls its
// credit word until sent - consumed < Slots, so it never overwrites a
// slot the receiver has not copied out.
//
// The variants differ in how bytes move (section 4.2):
//
//   - DU: a chunk is a deliberate update of its data straight from the
//     caller's buffer (no copy on the sender), then a deliberate update
//     of the trailer, composed in a scratch block of the sender, to the
//     slot's trailer; deliberate updates of one pair arrive in order, so
//     the sequence word arrives after the data. A credit is a
//     deliberate update of one word.
//   - AU: every node keeps, for every other node, an outgoing ring bound
//     page by page for automatic update to that node's receive ring for
//     it (page-aligned on both sides, section 2.2); a chunk is the
//     sender's ordinary stores of the data into its outgoing slot (loads
//     from the caller's buffer, 8-byte stores), then of the trailer,
//     through the same binding: automatic updates of one binding leave
//     the Outgoing FIFO in order, so the sequence word arrives after the
//     data. The trailer does not go by deliberate update: «the hardware
//     does not guarantee consecutive ordering» between the two
//     mechanisms (section 4.2), so a DU trailer could overtake the AU
//     data. A credit is a store into a page bound to the sender's credit
//     page.
//
// Notifications: no message asks for one. Recv polls (section 4.4: the
// applications that poll «do not use notifications at all»); NX on
// SHRIMP needed them only outside its common case (Table 3: Ocean-NX
// notified 11,380 of 1,007,342 messages, 1%), the asynchronous receives
// this library does not have, where a message must reach a handler the
// receiving program is not polling for. Table 4's experiment (an
// interrupt per arriving message, vmmc.Params.RecvInterrupt) still
// applies to the DU variant's sends.
package nx

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
)

// Mode is the bulk-data mechanism.
type Mode int

// The two variants of section 4.2.
const (
	// DU moves chunks, trailers and credits by deliberate update.
	DU Mode = iota
	// AU moves them by automatic update (stores through bound pages).
	AU
)

// String is "DU" or "AU".
func (m Mode) String() string {
	if m == AU {
		return "AU"
	}
	return "DU"
}

// TrailerBytes is a slot's trailer: InlineBytes of inline data, then the
// type, the chunk's length, the flags and the sequence number, 4 bytes
// each, the sequence number last.
const (
	TrailerBytes = 32
	InlineBytes  = 16
	// Offsets within the trailer.
	trType  = 16
	trLen   = 20
	trFlags = 24
	trSeq   = 28
	// flagLast marks a message's last chunk.
	flagLast = 1
)

// Message types: user messages use types below TypeReserved (NX reserves
// negative types for itself); TypeAny receives any type.
const (
	TypeReserved uint32 = 1 << 31
	typeSync            = TypeReserved + 1
	typeHigh            = TypeReserved + 2
	TypeAny      uint32 = ^uint32(0)
)

// Params are the library's sizes and costs.
type Params struct {
	// Mode is the bulk-data variant.
	Mode Mode
	// Slots is each receive ring's slots. assumed: 4: a pair's messages
	// in flight in a relaxation's boundary exchange are at most two (one
	// per half-sweep), and a credit every Slots/2 = 2 chunks keeps a
	// sender from waiting for one.
	Slots int
	// SlotBytes is a slot's size, whole pages. assumed: 4096, one page
	// (SH-P13): a DU chunk's data is then one UDMA transfer when the
	// caller's buffer does not cross a page (section 4.5.3: a transfer
	// crosses no page), and the AU binding of a ring is one OPT entry
	// per slot.
	SlotBytes int
	// Combine turns on combining in the AU variant's bindings (section
	// 4.5.1: «combining is very helpful for applications that would
	// otherwise use deliberate update. These applications send large
	// messages to contiguous addresses»). assumed: on.
	Combine bool
	// SendInstrs and RecvInstrs are the library's own instructions per
	// chunk sent and received besides the modelled loads and stores
	// (choosing the slot, the credit test, composing and checking the
	// trailer). assumed: 40 each; neither the paper nor its NX reference
	// gives the library's path length (the NX paper's 12 µs for a 4-byte
	// message is what the model's Send+Recv should come near).
	SendInstrs, RecvInstrs int
	// Patience is how long Recv and a sender waiting for a credit poll
	// before giving up with an error. assumed: 2 s of simulated time, far
	// beyond any correct wait of the CI sizes (a node's compute between
	// two exchanges is milliseconds).
	Patience clock.Time
}

// DefaultParams are the assumed sizes and costs above, DU.
func DefaultParams() Params {
	return Params{Mode: DU, Slots: 4, SlotBytes: 4096, Combine: true, SendInstrs: 40, RecvInstrs: 40, Patience: 2 * clock.Second}
}

// Validate returns an error naming the first bad parameter; page is the
// NI's page size.
func (p Params) Validate(page int) error {
	switch {
	case p.Mode != DU && p.Mode != AU:
		return fmt.Errorf("nx: Mode %d must be DU or AU", p.Mode)
	case p.Slots < 2:
		return fmt.Errorf("nx: Slots %d must be at least 2 (a credit every Slots/2 chunks)", p.Slots)
	case page < 1 || p.SlotBytes < page || p.SlotBytes%page != 0:
		return fmt.Errorf("nx: SlotBytes %d must be a positive multiple of the %d-byte page", p.SlotBytes, page)
	case p.SendInstrs < 0 || p.RecvInstrs < 0:
		return fmt.Errorf("nx: SendInstrs %d and RecvInstrs %d must not be negative", p.SendInstrs, p.RecvInstrs)
	case p.Patience <= 0:
		return fmt.Errorf("nx: Patience %v must be positive", p.Patience)
	}
	return nil
}

// ChunkBytes is the most data a chunk carries.
func (p Params) ChunkBytes() int { return p.SlotBytes - TrailerBytes }

// Chunks returns the lengths of the chunks of an n-byte message (one
// empty chunk for n = 0).
func (p Params) Chunks(n int) []int {
	if n == 0 {
		return []int{0}
	}
	var out []int
	for c := p.ChunkBytes(); n > 0; n -= min(n, c) {
		out = append(out, min(n, c))
	}
	return out
}

// Layout is where the library's buffers lie in every node's memory, from
// Base: the receive rings (one per possible sender, Nodes of them), the
// credit page, the AU variant's outgoing rings (one per destination) and
// link pages (one per sender it returns credits to), and a scratch area
// (DU trailers and credit words, the collectives' value words).
type Layout struct {
	Base             uint64
	Nodes, RingBytes int
	Page             int
	Slots            int
}

// NewLayout lays out nodes nodes' buffers from base (page-aligned).
func NewLayout(base uint64, nodes int, p Params, page int) (Layout, error) {
	if err := p.Validate(page); err != nil {
		return Layout{}, err
	}
	if nodes < 1 {
		return Layout{}, fmt.Errorf("nx: %d nodes: at least 1", nodes)
	}
	if base%uint64(page) != 0 {
		return Layout{}, fmt.Errorf("nx: Base %#x must be page-aligned (%d)", base, page)
	}
	return Layout{Base: base, Nodes: nodes, RingBytes: p.Slots * p.SlotBytes, Page: page, Slots: p.Slots}, nil
}

// RecvRing is the receive ring for chunks from node src.
func (l Layout) RecvRing(src int) uint64 { return l.Base + uint64(src*l.RingBytes) }

// CreditPage is the page whose word j receiver j writes its count of
// chunks consumed from this node into.
func (l Layout) CreditPage() uint64 { return l.RecvRing(l.Nodes) }

// OutRing is the AU variant's outgoing ring to node dst.
func (l Layout) OutRing(dst int) uint64 {
	return l.CreditPage() + uint64(l.Page) + uint64(dst*l.RingBytes)
}

// Link is the AU variant's page bound to node src's credit page.
func (l Layout) Link(src int) uint64 { return l.OutRing(l.Nodes) + uint64(src*l.Page) }

// Trailer is the DU variant's scratch trailer for slot k of the ring to
// node dst (one per slot: a trailer is never rewritten before its chunk
// was consumed, so an asynchronous send's source never changes under
// it).
func (l Layout) Trailer(dst, k int) uint64 {
	return l.Link(l.Nodes) + uint64((dst*l.Slots+k)*TrailerBytes)
}

// CreditWord is the DU variant's scratch word for the c-th credit (mod
// Slots) returned to node src.
func (l Layout) CreditWord(src, c int) uint64 {
	return l.Trailer(l.Nodes, 0) + uint64(4*(src*l.Slots+c%l.Slots))
}

// Value is the collectives' 8-byte value word.
func (l Layout) Value() uint64 {
	return l.CreditWord(l.Nodes, 0)
}

// End is the first byte after the layout, page-aligned.
func (l Layout) End() uint64 {
	e := l.Value() + 8
	pg := uint64(l.Page)
	return (e + pg - 1) / pg * pg
}

// Errors of the library.
var (
	// ErrTimeout is a Recv or a credit wait that ran out of Patience.
	ErrTimeout = errors.New("nx: no message within the patience")
	// ErrType is a message whose type is not the one Recv asked for.
	ErrType = errors.New("nx: message of another type")
	// ErrOverrun is a slot found holding a later chunk than the one
	// Recv waits for: the sender reused it before it was consumed (flow
	// control broken).
	ErrOverrun = errors.New("nx: a ring slot was overwritten before it was consumed")
	// ErrSize is a message longer than the receiver's buffer.
	ErrSize = errors.New("nx: message longer than the buffer")
)
