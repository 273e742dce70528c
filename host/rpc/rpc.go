// Package rpc is the remote procedure call of the FORE ATM prototype
// (atm-remote-memory-access.txt section 3.1) built on the remote-memory
// kernel (host/rma): no marshaling, a selective-acknowledgement
// transport, exactly-once execution.
//
// Marshaling (section 3.1.1): «the server exports stacks that are then
// imported by clients at bind time. On an RPC call, the client stub picks
// an available stack for the server and builds a call frame on that stack
// using the remote write operation ... Once the stack is ready, the
// client activates the server by writing a flag word in the server, for
// which the server polls.» The server exports each stack as its own
// segment and write-protects it (rma Inhibit) while the procedure runs:
// «write-protecting a stack segment before an RPC procedure begins».
//
// Frame layout (issue 15 design 3.5): the stack is a row of cell slots of
// rma.MaxWords words; slot i holds frame words 9i..9i+8 and, in its last
// word, the cell's stamp (Stamp). Frame word 0 is the call id (client<<24
// | seq), word 1 proc | nargs<<16, then the arguments. A call of n cells
// is sent as messages of N cells (section 3.1.2: «A fixed number of cells
// (say N) are grouped into a message; the cells are then transmitted
// without waiting for an acknowledgement»); each message's first cell,
// its head, is sent last, so the head's stamp is the flag the server
// polls: «Since ATM networks guarantee cell sequencing from a particular
// source, the arrival of the last cell indicates that the previous cells
// have either arrived or been lost» (AT-P19). Message 0's head is cell 0,
// which carries the call id and the argument count, so the server learns
// the call's size from the flag's cell.
//
// Transport (section 3.1.2): a one-cell call is acknowledged by its reply
// (Simple «does not exercise most of the transport protocol code»). For a
// multi-cell call the server, on a message's head (the N-th cell sent),
// reads the stamps of the message's cells and «writes a single cell at the
// source with a bit mask indicating which cells it has received. The
// source then rewrites only the missing cells». The server re-sends the
// mask every AckTimeout while cells are missing; the client re-sends a
// message's head (with a new try number in its stamp, so the server sees
// a change) when no acknowledgement came within ResendTimeout, and cell 0
// when the reply did not. The server executes a call id once: a changed
// stamp of a call it has executed is a duplicate, answered with the
// cached reply. A re-sent cell that reaches the stack while the procedure
// runs is refused by the server's kernel (rma.ErrInhibit), counted, and
// harmless: the frame was complete before the stack was protected.
//
// Threads spin (section 3.1.3: «we chose to spin wait the threads at user
// level»): the server's and the client's waits are costed poll loops, a
// code step of PollInstrs instructions per word watched with that word's
// load, so the time an arrival takes to be noticed emerges from the loop.
package rpc

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
)

// Params are the RPC layer's software costs and timeouts.
type Params struct {
	// StubInstrs is the client and server stubs' instructions per call,
	// split evenly (the client's half before the first cell, the server's
	// half before the procedure). calibrated: C3, fitted to RPC Simple's
	// 93 µs (Table 4) by atmtb's MeasureRPC (Defaults gives the figure).
	StubInstrs int
	// ProtoInstrsPerCell is the transport's work per cell sent or
	// examined (assumed: 30; the paper publishes no protocol cost,
	// issue 15 design section 4).
	ProtoInstrsPerCell int
	// N is the cells per message (assumed: 8, «say N», section 3.1.2; a
	// byte-wide mask).
	N int
	// AckTimeout is the server's wait for missing cells before it re-sends
	// the mask; ResendTimeout the client's wait for an acknowledgement or
	// a reply before it re-sends (assumed: 300 µs and 600 µs, more than
	// three one-way WRITEs of 30 µs each, section 2.3, so a loss-free run
	// never times out).
	AckTimeout, ResendTimeout clock.Time
	// PollInstrs is one iteration of a spin loop per word it watches
	// (assumed: 6, load, compare, branch and the loop's bookkeeping;
	// «spin wait the threads at user level», section 3.1.3).
	PollInstrs int
	// MaxTries bounds a call's re-sends before Call gives up (assumed: 32,
	// 19 ms of ResendTimeouts: the server is gone, not losing cells).
	MaxTries int
	// ServerBase is where a node's server keeps its stacks and
	// ClientBase where its clients' reply areas go, on every node
	// (assumed: 3 MB and 3.5 MB, user memory clear of atmtb's segments at
	// 1 MB and 2 MB and below its kernel; the paper gives no map).
	ServerBase, ClientBase uint64
}

// Defaults returns the design's values (issue 15 design section 4).
func Defaults() Params {
	return Params{
		// calibrated: C3, 268 instructions per call (client and server
		// stubs, split evenly), fitted to Table 4's RPC Simple, 93 µs
		// (four integer arguments, an integer result, one cell each
		// way, section 3.1.3; atmtb MeasureRPC, atm-report's calls):
		// 93.00 µs (0.0%) at CellLatency 2, MemCycles 18; neighbours
		// 266 → 92.90, 270 → 93.19 µs (0 → 82.72: about a 40 ns cycle
		// per instruction). It was 425 (93.00 µs) before 8e23296 and
		// 255622c; the design's estimate 240 (section 5.3) now gives
		// 92.32 µs.
		StubInstrs: 268,
		// assumed: protocol cost unpublished (design section 4).
		ProtoInstrsPerCell: 30,
		// assumed: «say N» (section 3.1.2), 8 bits of mask.
		N: 8,
		// assumed: > 3 one-way WRITEs (30 µs each, section 2.3).
		AckTimeout:    300 * clock.Microsecond,
		ResendTimeout: 600 * clock.Microsecond,
		// assumed: a 6-instruction spin (section 3.1.3).
		PollInstrs: 6,
		// assumed: 32 re-sends.
		MaxTries: 32,
		// assumed: free user memory (see the field).
		ServerBase: 0x30_0000,
		ClientBase: 0x38_0000,
	}
}

// Validate returns an error naming the first invalid parameter.
func (p Params) Validate() error {
	switch {
	case p.StubInstrs < 0 || p.StubInstrs > 1_000_000:
		return fmt.Errorf("rpc: StubInstrs %d must be in 0..1000000", p.StubInstrs)
	case p.ProtoInstrsPerCell < 0 || p.ProtoInstrsPerCell > 100_000:
		return fmt.Errorf("rpc: ProtoInstrsPerCell %d must be in 0..100000", p.ProtoInstrsPerCell)
	case p.N < 1 || p.N > MaxN:
		return fmt.Errorf("rpc: N %d must be in 1..%d (cells per message, a byte of stamp)", p.N, MaxN)
	case p.AckTimeout <= 0 || p.AckTimeout > clock.Second:
		return fmt.Errorf("rpc: AckTimeout %d ps must be in (0, 1 s]", p.AckTimeout)
	case p.ResendTimeout <= 0 || p.ResendTimeout > clock.Second:
		return fmt.Errorf("rpc: ResendTimeout %d ps must be in (0, 1 s]", p.ResendTimeout)
	case p.PollInstrs < 1 || p.PollInstrs > 100_000:
		return fmt.Errorf("rpc: PollInstrs %d must be in 1..100000", p.PollInstrs)
	case p.MaxTries < 1 || p.MaxTries > 255:
		return fmt.Errorf("rpc: MaxTries %d must be in 1..255 (a byte of stamp)", p.MaxTries)
	case p.ServerBase%4 != 0 || p.ClientBase%4 != 0:
		return fmt.Errorf("rpc: ServerBase %#x and ClientBase %#x must be word aligned", p.ServerBase, p.ClientBase)
	}
	return nil
}

// Layout constants.
const (
	// SlotWords is a cell slot on a stack: one WRITE of rma.MaxWords
	// words.
	SlotWords = rma.MaxWords
	// FrameWordsPerCell is the frame words a cell carries: its slot less
	// the stamp (36 data bytes per cell, design 3.5).
	FrameWordsPerCell = SlotWords - 1
	// HeaderWords is the frame's call id and proc|nargs words.
	HeaderWords = 2
	// MaxN is the most cells per message (the mask is a word).
	MaxN = 32
	// MaxCells is the most cells of one call (a byte of the stamp).
	MaxCells = 255
	// MaxArgs is the most argument words of one call.
	MaxArgs = MaxCells*FrameWordsPerCell - HeaderWords
	// replyWords is a reply area's words: the reply (call id, result,
	// status) in slot 0, the acknowledgement (call id, message<<16 |
	// ack number, mask) in slot 1.
	replyWords = 2 * SlotWords
	// replyStride is the distance between two reply areas of one node.
	replyStride = 128
	// ackWord is the acknowledgement's first word in the reply area.
	ackWord = SlotWords
)

// Reply statuses (frame word 2 of a reply).
const (
	statusOK      = 0
	statusNoProc  = 1
	statusBadCall = 2
)

// ErrNoProc is a call of a procedure the server does not have.
var ErrNoProc = errors.New("rpc: no such procedure")

// ErrBadCall is a call the server refused as malformed (its argument
// count does not fit the stack).
var ErrBadCall = errors.New("rpc: malformed call")

// Stamp returns the stamp word of cell idx of call seq, try number try:
// seq (16 bits) << 16 | try << 8 | idx. A try that changes makes a re-sent
// cell visible to the server's poll.
func Stamp(seq uint16, try, idx int) uint32 {
	return uint32(seq)<<16 | uint32(try&0xff)<<8 | uint32(idx&0xff)
}

// stampSeq and stampIdx take a stamp apart.
func stampSeq(w uint32) uint16 { return uint16(w >> 16) }
func stampIdx(w uint32) int    { return int(w & 0xff) }

// Cells returns the cells of a call of nargs argument words.
func Cells(nargs int) int {
	return (HeaderWords + nargs + FrameWordsPerCell - 1) / FrameWordsPerCell
}

// Stats count what a client binding or a server did.
type Stats struct {
	// Calls made (client) or executed (server).
	Calls uint64
	// Cells written (client: argument cells, re-sends included; server:
	// argument cells it found present).
	Cells uint64
	// Acks received (client) or sent (server).
	Acks uint64
	// Resent cells (client) or replies re-sent to duplicates (server).
	Resent uint64
	// DupCalls is the calls seen again after they executed (server).
	DupCalls uint64
	// Timeouts: ResendTimeouts (client) or AckTimeouts (server).
	Timeouts uint64
	// Refused is the server node's kernel refusals of cells for a
	// write-inhibited segment since the server started
	// (rma.Counters.RefusedRecv[rma.ErrInhibit]; the node's only
	// inhibited segments are the server's stacks unless other software
	// inhibits its own).
	Refused uint64
	// Bad is the frames the server ignored or refused as malformed: a
	// call id that does not match cell 0's stamp, or more cells than the
	// stack holds (answered ErrBadCall).
	Bad uint64
}

// freeReg returns the highest descriptor register of k that holds no
// descriptor (untimed set-up; from the top, so set-up that numbers its
// registers from 0 keeps them).
func freeReg(k *rma.Kernel) (int, error) {
	for r := rma.NumRegs - 1; r >= 0; r-- {
		if _, ok := k.Desc(r); !ok {
			return r, nil
		}
	}
	return 0, fmt.Errorf("rpc: node %d has no free descriptor register", k.Hardware().Node)
}

// overlaps reports whether [base, base+n) overlaps a segment k exports.
func overlaps(k *rma.Kernel, base uint64, n int) bool {
	for i := range rma.NumSegments {
		s := k.Segment(uint8(i))
		if s != nil && base < s.Base+uint64(s.Bytes) && s.Base < base+uint64(n) {
			return true
		}
	}
	return false
}
