package shrimp

// SCAFFOLD: being built (E2: EISA target, UDMA, CSRs, DU engine). These
// hooks only let ni.go compile; E2 replaces this file.

import (
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
)

// duPath is the EISA target, UDMA, CSR block and DU engine's state.
type duPath struct{}

// buildDU creates the EISA-side blocks.
func (n *NI) buildDU() error { return nil }

// attachDUTarget makes the NI a target on eisa for m's windows and adds the
// DU engine as a master.
func (n *NI) attachDUTarget(eisa *bus.Bus, m AddressMap) error { return nil }

// tickDU advances the target, UDMA and DU engine by one EISA cycle; DU
// packets go to n.duStream.
func (n *NI) tickDU(now clock.Time) bool { return false }

// idleDU reports whether no transfer is running or queued.
func (n *NI) idleDU() bool { return true }

// stateDU describes the UDMA and DU engine.
func (n *NI) stateDU() string { return "scaffold" }

// duPending reports whether a DU from local page page is running or queued.
func (n *NI) duPending(page int) bool { return false }
