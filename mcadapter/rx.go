package mcadapter

import (
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
)

// rxPath is the receive side: the link receiver with its CRC check, the
// receive filter, the RX FIFO and the DMA master. SCAFFOLD: the interface
// is frozen; the blocks are being built (issue 13 section 1).
type rxPath struct{}

func (a *Adapter) buildRx() error { return nil }

func (a *Adapter) attachRx(_ *bus.Bus) error { return nil }

func (a *Adapter) tickRx(_ clock.Time) bool { return false }

func (a *Adapter) idleRx() bool { return true }

func (a *Adapter) stateRx() string { return "idle" }
