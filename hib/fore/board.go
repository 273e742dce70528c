package fore

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
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
	// RxPort words read while the RX FIFO was empty (fore.rxempty).
	TxOverflow, RxUnderrun uint64
	// TxDropTest counts TX cells dropped at the wire by DropNextTx.
	TxDropTest uint64
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

// Test-only faults (see env.DeclareMutation).
var (
	mutNoIRQ = env.DeclareMutation("fore.no-irq",
		"every Nth rising edge of a FORE TCA-100's interrupt condition (enabled && RX FIFO non-empty) is not raised: "+
			"the line stays low and OnInterrupt is not called, a lost wake-up (caught by the lost-RX-interrupt checker, fore.irq)")
	mutCRCOff = env.DeclareMutation("fore.crc-off",
		"a FORE TCA-100 does not check the payload CRC-10 of received cells (any N > 0): a corrupted payload is delivered "+
			"to software (caught by the remote-memory scoreboard, rma.scoreboard)")
	mutRxCount = env.DeclareMutation("fore.rx-count",
		"every Nth read of a FORE TCA-100's STATUS register reports one RX cell more than the FIFO holds: software reads "+
			"an empty receive port (caught by fore.rxempty)")
)

// Board is one FORE TCA-100: a TURBOchannel slave with the TX and RX data
// ports and the registers (tc.go), the TX cell assembler, FIFO and pipe to
// the link (tx.go), the RX pipe, checks and FIFO from it (rx.go), and the
// interrupt line. It has two clocked halves: the slave logic on the
// TURBOchannel clock (Config.Clock) and the link logic on the link clock
// (Config.Link.Clock); the FIFOs cross between them (rtl/fifo entries are
// visible from the consumer's first edge after the push).
type Board struct {
	name string
	env  *env.Env
	cfg  Config
	node int

	tcSide, lnSide *clock.Ticking

	port tcPort
	tx   txPath
	rx   rxPath

	// control is CONTROL's value (bit 0: RX interrupt enable).
	control uint32
	// irqCond is the settled level of enabled && RX non-empty; irqLine
	// the interrupt line (equal unless the no-irq mutation swallowed an
	// edge); irqPending an evaluation is scheduled after this picosecond.
	irqCond, irqLine, irqPending bool
	// edges counts rising edges of irqCond (for the mutation).
	edges uint64

	noIRQ, rxCount int
	crcOff         bool
	statusReads    uint64

	onIRQ  func(now clock.Time)
	onTx   func(now clock.Time, c *Cell)
	onWire func(now clock.Time, c *Cell)
	onRx   func(now clock.Time, c *Cell)
	onPop  func(now clock.Time, c *Cell)
	onDrop func(now clock.Time, c *Cell, why DropReason)

	counters Counters

	sigIRQ, sigEnable, sigRxDrops *waves.Signal
}

// tcTicker and lnTicker are the board's two clocked halves.
type tcTicker struct{ f *Board }
type lnTicker struct{ f *Board }

// Tick runs one TURBOchannel cycle: the slave port.
func (t tcTicker) Tick(now clock.Time) bool { return t.f.tickTC(now) }

// Tick runs one link cycle: the RX side (link to pipe to FIFO), then the
// TX side (FIFO to pipe to link).
func (t lnTicker) Tick(now clock.Time) bool {
	rx := t.f.tickRx(now)
	tx := t.f.tickTx(now)
	return rx || tx
}

// Build creates the board named name (by convention "N<i>.Fore");
// AttachTC and ConnectLink wire it.
func (b Builder) Build(name string) (*Board, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e := b.env
	f := &Board{name: name, env: e, cfg: b.cfg, node: b.node,
		noIRQ: e.Mutation(mutNoIRQ), rxCount: e.Mutation(mutRxCount), crcOff: e.Mutation(mutCRCOff) > 0}
	f.tcSide = clock.NewTicking(name+".TC", e.Engine, b.cfg.Clock, tcTicker{f})
	f.lnSide = clock.NewTicking(name+".Link", e.Engine, b.cfg.Link.Clock, lnTicker{f})
	if err := f.buildTx(); err != nil {
		return nil, err
	}
	if err := f.buildRx(); err != nil {
		return nil, err
	}
	reg := e.Waves
	// irq: the interrupt line; irq_enable: CONTROL bit 0; rx_drops:
	// received cells discarded (RX FIFO full, HEC, CRC-10).
	f.sigIRQ = reg.Wire(name, "irq", 1)
	f.sigEnable = reg.Wire(name, "irq_enable", 1)
	f.sigRxDrops = reg.Integer(name, "rx_drops", 32)
	e.Register(f)
	return f, nil
}

// Name returns the board's hierarchical name.
func (f *Board) Name() string { return f.name }

// Node returns the board's node number.
func (f *Board) Node() int { return f.node }

// Config returns the hardware parameters.
func (f *Board) Config() Config { return f.cfg }

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

// Counters returns the event counters.
func (f *Board) Counters() Counters {
	c := f.counters
	c.TxMax = f.tx.fifo.Stats().MaxOccupancy
	c.RxMax = f.rx.fifo.Stats().MaxOccupancy
	return c
}

// RxLen returns the cells in the RX FIFO (what STATUS bits 0-9 read).
func (f *Board) RxLen() int { return f.rx.fifo.Len() }

// TxFree returns the free cells of the TX FIFO (STATUS bits 16-21).
func (f *Board) TxFree() int { return f.cfg.TxCells - f.tx.fifo.Len() }

// IRQEnabled returns CONTROL's interrupt enable bit.
func (f *Board) IRQEnabled() bool { return f.control&ControlIRQEnable != 0 }

// IRQ returns the interrupt line.
func (f *Board) IRQ() bool { return f.irqLine }

// Idle reports whether the board holds no cell on its way: nothing being
// assembled or queued to send, nothing in the RX pipe. Cells waiting in
// the RX FIFO for software are the RX FIFO's own (it reports itself).
func (f *Board) Idle() bool { return f.idleTx() && len(f.rx.pipe) == 0 && f.port.cur == nil }

// State describes what the board holds (for the deadlock watchdog).
func (f *Board) State() string {
	return fmt.Sprintf("tx fifo %d cells, assembling word %d; rx pipe %d cells, rx fifo %d cells; irq enable %t line %t",
		f.tx.fifo.Len(), f.tx.next, len(f.rx.pipe), f.rx.fifo.Len(), f.IRQEnabled(), f.irqLine)
}

// changed schedules one evaluation of the interrupt condition after the
// current picosecond has settled, so that a push and a pop of the RX FIFO
// at the same time (the link and TURBOchannel clocks share an edge every
// 400 ns) give the same line whatever order the two halves ticked in.
func (f *Board) changed(now clock.Time) {
	if f.irqPending {
		return
	}
	f.irqPending = true
	f.env.Engine.AfterStep(now, f.evalIRQ)
}

// evalIRQ updates the interrupt line from enable && RX non-empty: a
// rising edge of the condition asserts it and calls OnInterrupt (AT-P16
// «If cells arrive back-to-back, only the first arrival would interrupt»);
// enabling with cells already waiting is such an edge, so no wake-up is
// lost.
func (f *Board) evalIRQ(now clock.Time) {
	f.irqPending = false
	cond := f.IRQEnabled() && f.rx.fifo.Len() > 0
	if cond == f.irqCond {
		return
	}
	f.irqCond = cond
	if !cond {
		f.irqLine = false
		f.sigIRQ.SetBool(now, false)
		return
	}
	f.edges++
	if f.noIRQ > 0 && f.edges%uint64(f.noIRQ) == 0 {
		return // mutation: the edge is lost
	}
	f.irqLine = true
	f.sigIRQ.SetBool(now, true)
	f.counters.IRQs++
	if f.env.Trace.Enabled() {
		f.env.Trace.Emit(now, f.cfg.Clock.CycleAt(now), f.name, "fore.irq", trace.Int("rx", int64(f.rx.fifo.Len())))
	}
	if f.onIRQ != nil {
		f.onIRQ(now)
	}
}

// cellOf fills the hooks' view of a cell flit.
func (f *Board) cellOf(now clock.Time, fl *link.Flit, c *Cell) {
	*c = Cell{ID: fl.Packet(), Node: f.node, At: now}
	c.Header, _ = headerOf(fl.Route())
	copy(c.Payload[:], fl.Data)
}

// headerOf decodes a cell's 5 header bytes without checking the HEC (a
// cell dropped for its HEC still shows its fields); ok is false if the
// HEC does not match or the header is not 5 bytes.
func headerOf(route []byte) (atm.Header, bool) {
	if len(route) != atm.HeaderBytes {
		return atm.Header{}, false
	}
	b := [atm.HeaderBytes]byte(route)
	ok := atm.HEC(b[:4]) == b[4]
	b[4] = atm.HEC(b[:4])
	h, _ := atm.DecodeHeader(b[:])
	return h, ok
}

// emitCell writes a cell record (fore.tx, fore.wire, fore.rx, fore.pop).
func (f *Board) emitCell(now clock.Time, clk clock.Clock, kind string, c *Cell, occ int) {
	f.env.Trace.Emit(now, clk.CycleAt(now), f.name, kind, trace.Uint("cell", c.ID), trace.Int("vci", int64(c.Header.VCI)),
		trace.Int("occ", int64(occ)), trace.Hash("payload", c.Payload[:]))
}
