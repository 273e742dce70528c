package fore

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/star"
)

// DropReason says why the board discarded a cell.
type DropReason uint8

const (
	// DropRxFull: a received cell found the RX FIFO full (issue 15
	// section 1 «a full RX FIFO drops and counts»).
	DropRxFull DropReason = iota + 1
	// DropHEC: a received cell's header HEC did not match its first four
	// bytes (ITU-T I.432).
	DropHEC
	// DropCRC: a received cell's payload failed the CRC-10 (assumed,
	// issue 15 design D3).
	DropCRC
	// DropTest: a transmitted cell dropped at the wire by DropNextTx (a
	// directed fault for goldens and fault specs).
	DropTest
)

// String names the reason as traces print it: "rxfull", "hec", "crc",
// "test".
func (r DropReason) String() string {
	switch r {
	case DropRxFull:
		return "rxfull"
	case DropHEC:
		return "hec"
	case DropCRC:
		return "crc"
	case DropTest:
		return "test"
	}
	return fmt.Sprintf("drop-%d", uint8(r))
}

// Cell is a cell as the hooks see it. Hooks must not keep the pointer.
type Cell struct {
	// ID is the link flit's Packet: node<<40 | seq, unique per sending
	// board (a forged cell keeps the id it was injected with).
	ID uint64
	// Node is the board that saw the cell.
	Node int
	// Header is the cell's header (for a cell dropped for its HEC, the
	// fields as decoded without the check).
	Header atm.Header
	// Payload is the 48-byte payload, CRC-10 included.
	Payload [48]byte
	// At is when the event happened.
	At clock.Time
}

// Counters are the board's event counters (the RX drops and the cell
// counts are also readable through the registers).
type Counters struct {
	// TxCells counts cells handed to the link; RxCells cells that entered
	// the RX FIFO.
	TxCells, RxCells uint64
	// RxDropFull, RxDropHEC and RxDropCRC count received cells discarded
	// for a full RX FIFO, a bad HEC and a bad CRC-10.
	RxDropFull, RxDropHEC, RxDropCRC uint64
	// IRQs counts rising edges of the interrupt line.
	IRQs uint64
	// TxOverflow counts words written to TxPort while the TX FIFO was
	// full (each also a fore.txfull checker error); RxUnderrun counts
	// reads of RxPort while the RX FIFO was empty (fore.rxempty).
	TxOverflow, RxUnderrun uint64
	// TxMax and RxMax are the highest FIFO occupancies seen, in cells.
	TxMax, RxMax int
}

// Builder configures a Board. It is a value type: every With method
// returns a changed copy.
type Builder struct {
	env  *env.Env
	cfg  Config
	node int
}

// MakeBuilder returns a builder with TCA100 and node 0; WithEnv is
// required.
func MakeBuilder() Builder { return Builder{cfg: TCA100()} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithConfig sets the hardware parameters.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithNode sets the board's node number: the high bits of its cell ids
// and the node field of its trace records and signals.
func (b Builder) WithNode(id int) Builder { b.node = id; return b }

// MaxNode is the largest node number (cell ids keep the node above bit
// 40).
const MaxNode = 1<<23 - 1

// Validate checks every parameter; the error names it.
func (b Builder) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("fore: no env (WithEnv)")
	case b.node < 0 || b.node > MaxNode:
		return fmt.Errorf("fore: node %d must be in 0..%d", b.node, MaxNode)
	}
	return b.cfg.Validate()
}

// Board is one FORE TCA-100: a TURBOchannel slave with the TX and RX data
// ports and the registers, the TX FIFO and pipe to the link, the RX pipe,
// checks and FIFO from it, and the interrupt line.
type Board struct {
	name string
	env  *env.Env
	cfg  Config
	node int

	onIRQ  func(now clock.Time)
	onTx   func(now clock.Time, c *Cell)
	onWire func(now clock.Time, c *Cell)
	onRx   func(now clock.Time, c *Cell)
	onPop  func(now clock.Time, c *Cell)
	onDrop func(now clock.Time, c *Cell, why DropReason)

	counters Counters
}

// Build creates the board named name (by convention "N<i>.Fore");
// AttachTC and ConnectLink wire it.
func (b Builder) Build(name string) (*Board, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &Board{name: name, env: b.env, cfg: b.cfg, node: b.node}
	return f, nil
}

// Name returns the board's hierarchical name.
func (f *Board) Name() string { return f.name }

// Node returns the board's node number.
func (f *Board) Node() int { return f.node }

// Config returns the hardware parameters.
func (f *Board) Config() Config { return f.cfg }

// AttachTC makes the board a zero-wait-state target (AT-P4) on tc for the
// window [base, base+WindowBytes). Call it once, before the run.
func (f *Board) AttachTC(tc *bus.Bus, base uint64) error {
	return fmt.Errorf("%s: AttachTC: not built yet", f.name)
}

// ConnectLink connects the board to its link: p.Send is the direction it
// sends on, p.Recv the one it receives from (a port of an atm.Star). For a
// direct two-board link l (atm.LinkConfig()), board A takes
// star.Port{Send: l.From(link.A), Recv: l.From(link.B)} and board B the
// converse; the board names itself only as the sender of p.Send and the
// receiver of p.Recv, so the far end may be a switch or another board.
func (f *Board) ConnectLink(p star.Port) error {
	return fmt.Errorf("%s: ConnectLink: not built yet", f.name)
}

// OnInterrupt sets the function called on every rising edge of the
// interrupt line (enabled && RX FIFO non-empty).
func (f *Board) OnInterrupt(fn func(now clock.Time)) { f.onIRQ = fn }

// OnTx sets the function called when a cell enters the TX FIFO (its word
// 13 was written).
func (f *Board) OnTx(fn func(now clock.Time, c *Cell)) { f.onTx = fn }

// OnWire sets the function called when a cell is handed to the link.
func (f *Board) OnWire(fn func(now clock.Time, c *Cell)) { f.onWire = fn }

// OnRx sets the function called when a received cell, having passed the
// HEC and the CRC-10, enters the RX FIFO.
func (f *Board) OnRx(fn func(now clock.Time, c *Cell)) { f.onRx = fn }

// OnPop sets the function called when software reads word 13 of the
// head cell (the cell leaves the RX FIFO).
func (f *Board) OnPop(fn func(now clock.Time, c *Cell)) { f.onPop = fn }

// OnDrop sets the function called for every discarded cell.
func (f *Board) OnDrop(fn func(now clock.Time, c *Cell, why DropReason)) { f.onDrop = fn }

// Inject delivers flit as if it had arrived from the wire at now: it goes
// through the RX pipe and the checks like any cell (negative specs forge
// cells with it). flit must be an ATM cell flit (atm.NewCell); its Route
// is taken as the 5 header bytes without checking the HEC.
func (f *Board) Inject(now clock.Time, flit link.Flit) {}

// DropNextTx arms a directed fault: the next TX cell for which match
// returns true is dropped at the wire (counted as DropTest, reported to
// OnDrop, never sent). A nil match disarms it.
func (f *Board) DropNextTx(match func(c *Cell) bool) {}

// Counters returns the event counters.
func (f *Board) Counters() Counters { return f.counters }

// RxLen returns the cells in the RX FIFO (what STATUS bits 0-9 read).
func (f *Board) RxLen() int { return 0 }

// TxFree returns the free cells of the TX FIFO (STATUS bits 16-21).
func (f *Board) TxFree() int { return f.cfg.TxCells }

// IRQEnabled returns CONTROL's interrupt enable bit.
func (f *Board) IRQEnabled() bool { return false }
