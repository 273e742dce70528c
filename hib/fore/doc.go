// Package fore models the FORE Systems TCA-100 ATM interface of the
// DECstation 5000/200 (atm-remote-memory-access.txt section 2.2): a
// TURBOchannel slave with no DMA (AT-P3 «does not have DMA capabilities»),
// answering with zero wait states (AT-P4), that software drives entirely
// by programmed I/O. A cell is written to the transmit port as 14 words
// (AT-P5 «14 (40 nanosecond) I/O bus read cycles» to read one; the
// 14 writes assumed, issue 15 section 1) and read from the receive port
// the same way; the board queues up to TxCells cells to send (AT-P7) and
// RxCells received cells (AT-P6), checks each received cell's header HEC and
// an assumed per-cell CRC-10 over the payload (issue 15 design D3), and
// raises its interrupt line when the receive FIFO goes from empty to
// non-empty while the interrupt is enabled (AT-P16 «only the first arrival
// would interrupt»).
//
// The slave serves any access a word per TURBOchannel cycle, so a cell
// read as one 56-byte transaction has 14 consecutive 40 ns data phases,
// the paper's 560 ns (assumed, design D1: the 14 data cycles of AT-P5
// leave no room for an address phase per word; the R3000 has no block
// load, so the kernel's code step counts such an access as 14 loads,
// host/rma). Word-at-a-time accesses work too, one bus transaction each.
//
// The board is two clocked halves: the slave logic on the TURBOchannel
// clock and the cell pipes on the link clock, joined by the TX and RX
// FIFOs (rtl/fifo). A cell takes CellLatency link cycles from the link
// side's first sight of it in the TX FIFO to the wire, and as many from
// the wire to the RX FIFO (the fitted parameter C1); on a direct
// atm.LinkConfig() link it goes from one board's TX FIFO to the other's
// RX FIFO in 53 + 2·CellLatency link cycles.
//
// Observability: trace records fore.tx, fore.wire, fore.rx, fore.pop
// (cell, vci, occ, payload hash), fore.drop (cell, vci, reason), fore.irq
// (rx), fore.control (irq_enable); signals <name>.tx_fifo.occupancy,
// .rx_fifo.occupancy, .irq, .irq_enable, .rx_drops; hooks OnTx, OnWire,
// OnRx, OnPop, OnDrop, OnInterrupt; Inject forges received cells and
// DropNextTx drops a chosen sent one. Test-only faults: fore.no-irq,
// fore.crc-off, fore.rx-count (board.go).
//
// The board is hardware only: it never imports software (the kernel that
// drives it is host/rma). The window layout, registers and behaviour are
// the team's frozen API (issue 15 design section 3.1).
package fore
