package mcadapter

import (
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
)

// txPath is the transmit side: the PCI target of the transmit window, the
// TX FIFO, the packetiser and the link sender. SCAFFOLD: the interface is
// frozen; the blocks are being built (issue 13 section 1).
type txPath struct{}

func (a *Adapter) buildTx() error { return nil }

func (a *Adapter) attachTx(_ *bus.Bus, _ uint64) error { return nil }

func (a *Adapter) tickTx(_ clock.Time) bool { return false }

func (a *Adapter) idleTx() bool { return true }

func (a *Adapter) stateTx() string { return "idle" }
