// Package fore models the FORE Systems TCA-100 ATM interface of the
// DECstation 5000/200 (atm-remote-memory-access.txt section 2.2): a
// TURBOchannel slave with no DMA (AT-P3 «does not have DMA capabilities»),
// answering with zero wait states (AT-P4), that software drives entirely
// by programmed I/O. A cell is written to the transmit port as 14 words
// (AT-P5 «14 (40 nanosecond) I/O bus read cycles» to read one; the
// 14 writes assumed, issue 15 section 1) and read from the receive port
// the same way; the board queues up to TxCells cells to send (AT-P7) and
// RxCells received cells (AT-P6), checks each received cell's header HEC
// and an assumed per-cell CRC-10 over the payload (issue 15 design D3),
// and raises its interrupt line when the receive FIFO goes from empty to
// non-empty while the interrupt is enabled (AT-P16 «only the first
// arrival would interrupt»).
//
// The board is hardware only: it never imports software (the kernel that
// drives it is host/rma). The window layout, registers and behaviour are
// the team's frozen API (issue 15 design section 3.1).
package fore
