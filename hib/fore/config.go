package fore

import (
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
)

// Board window on the TURBOchannel: offsets from the base given to
// AttachTC. Every register and data-port word is a little-endian 32-bit
// word.
const (
	// WindowBytes is the size of the board's TURBOchannel window.
	// assumed: 64 KB, one TURBOchannel option slot's smallest useful
	// decode; the board uses its first 160 bytes.
	WindowBytes = 64 << 10
	// CellWords is the words software moves per cell: «14 (40
	// nanosecond) I/O bus read cycles» (AT-P5) to read one; 14 to write
	// one (assumed, issue 15 section 1).
	CellWords = 14
	// CellBytes is a cell in the data ports: word 0 the header's first
	// four bytes (GFC/VPI/VCI/PT/CLP, atm.Header.Encode()[:4]), word 1 the
	// HEC slot (TX: ignored, the board makes the HEC; RX: the HEC byte in
	// its low byte), words 2..13 the 48-byte payload (its last 10 bits the
	// board's CRC-10).
	CellBytes = CellWords * 4
	// TxPort is the transmit data port: write-only, CellBytes; a cell
	// enters the TX FIFO when its word 13 is written.
	TxPort = 0x0000
	// RxPort is the receive data port: read-only, CellBytes; reading
	// word 13 pops the head cell.
	RxPort = 0x0040
	// RegStatus is read-only: bits 0-9 RX cells, bits 16-21 TX free
	// cells, bit 31 the interrupt line.
	RegStatus = 0x0080
	// RegControl is read-write: bit 0 the RX interrupt enable.
	RegControl = 0x0084
	// RegRxDrops is read-only: cells dropped because the RX FIFO was
	// full; RegRxDrops+4 cells discarded for a bad HEC, RegRxDrops+8 for
	// a bad CRC-10.
	RegRxDrops = 0x0088
	// RegCounters is read-only: cells sent (handed to the link);
	// RegCounters+4 cells received (entered the RX FIFO).
	RegCounters = 0x0094
	// PayloadData is the payload bytes software owns; bytes 46-47 hold
	// 6 zero bits and the CRC-10 (the board's).
	PayloadData = 46
)

// Register offsets derived from the map above.
const (
	// RegHECDrops counts cells discarded for a bad header HEC.
	RegHECDrops = RegRxDrops + 4
	// RegCRCDrops counts cells discarded for a bad payload CRC-10.
	RegCRCDrops = RegRxDrops + 8
	// RegTxCells counts cells handed to the link.
	RegTxCells = RegCounters
	// RegRxCells counts cells that entered the RX FIFO.
	RegRxCells = RegCounters + 4
	// regEnd is the end of the decoded registers.
	regEnd = RegRxCells + 4
)

// STATUS and CONTROL bit fields.
const (
	// StatusRxMask selects the RX cell count (bits 0-9).
	StatusRxMask = 0x3ff
	// StatusTxShift and StatusTxMask select the TX free cell count (bits
	// 16-21).
	StatusTxShift = 16
	StatusTxMask  = 0x3f
	// StatusIRQ is the interrupt line (bit 31).
	StatusIRQ = 1 << 31
	// ControlIRQEnable is the RX interrupt enable (bit 0).
	ControlIRQEnable = 1
)

// Limits of the configuration (they keep the STATUS fields honest and a
// mistyped value from wrapping the clock arithmetic).
const (
	// MaxTxCells is the most TX FIFO cells STATUS's 6-bit field counts.
	MaxTxCells = StatusTxMask
	// MaxRxCells is the most RX FIFO cells STATUS's 10-bit field counts.
	MaxRxCells = StatusRxMask
	// MaxCellLatency bounds CellLatency. assumed: 10^6 link cycles (57
	// ms), far beyond any interface (a whole raw write is 11 µs).
	MaxCellLatency = 1_000_000
)

// Config is every hardware parameter of one TCA-100.
type Config struct {
	// Clock is the TURBOchannel clock: the board's slave logic and the
	// FIFOs' host side run on it.
	Clock clock.Clock
	// TxCells is the TX FIFO's depth in cells.
	TxCells int
	// RxCells is the RX FIFO's depth in cells.
	RxCells int
	// CellLatency is the TX pipe (TX FIFO to wire) and the RX pipe (wire
	// to RX FIFO), each, in link cycles: a pure delay, occupying nothing.
	CellLatency int
	// Link is the ATM link the board sends on (its clock times the
	// pipes).
	Link link.Config
}

// TCA100 returns the board of the paper's DECstations.
func TCA100() Config {
	return Config{
		// «14 (40 nanosecond) I/O bus read cycles» (AT-P5): the 25 MHz
		// TURBOchannel of the DECstation 5000/200 (bus.TurboChannel25).
		Clock: bus.TurboChannel25().Clock,
		// AT-P7: the transmit FIFO holds «about 40» cells; assumed: 40
		// exactly.
		TxCells: 40,
		// AT-P6: «deep enough to store nearly 300 cells»; assumed: 300
		// exactly.
		RxCells: 300,
		// calibrated: C1, 2 link cycles each side, fitted to the raw
		// polled write «at about 11 µs» (section 2.3, L115; atmtb
		// MeasureRaw): 11.74 µs (+6.7%) at MemCycles 18, as at 0, 1 and
		// 3 (the receiver's STATUS poll loop quantises the arrival; 4 →
		// 12.14 µs): 2 lies inside that plateau, off the lower bound.
		// Fitted C1, C2, C1 (issue 15 design R3): 1 at MemCycles 16
		// (11.02 µs, 0-2 alike), C2 18, then 2; before the CPU's one
		// instruction a cycle (8e23296) and memsys's cut-through cell
		// load (255622c) it was 0, its bound.
		CellLatency: 2,
		// AT-P1/AT-P11: the 140 Mb/s link, one byte per 17.5 MHz cycle.
		Link: atm.LinkConfig(),
	}
}

// Validate checks every parameter; an error names the field.
func (c Config) Validate() error {
	switch {
	case !c.Clock.Valid():
		return fmt.Errorf("fore: Clock is not set")
	case c.TxCells < 1 || c.TxCells > MaxTxCells:
		return fmt.Errorf("fore: TxCells %d must be in 1..%d (STATUS bits 16-21)", c.TxCells, MaxTxCells)
	case c.RxCells < 1 || c.RxCells > MaxRxCells:
		return fmt.Errorf("fore: RxCells %d must be in 1..%d (STATUS bits 0-9)", c.RxCells, MaxRxCells)
	case c.CellLatency < 0 || c.CellLatency > MaxCellLatency:
		return fmt.Errorf("fore: CellLatency %d must be in 0..%d link cycles", c.CellLatency, MaxCellLatency)
	}
	if err := c.Link.Validate(); err != nil {
		return fmt.Errorf("fore: Link: %w", err)
	}
	return nil
}
