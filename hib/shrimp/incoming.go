package shrimp

// SCAFFOLD: being built (E3: incoming path: IPT filter, incoming DMA,
// notifications). These hooks only let ni.go compile; E3 replaces this file.

import (
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
)

// inPath is the incoming path's state.
type inPath struct{}

// buildIn creates the incoming path.
func (n *NI) buildIn() error { return nil }

// attachIn adds the incoming DMA as a master on eisa.
func (n *NI) attachIn(eisa *bus.Bus, m AddressMap) error { return nil }

// tickIn advances the incoming path by one EISA cycle; it pops n.inStream.
func (n *NI) tickIn(now clock.Time) bool { return false }

// idleIn reports whether no incoming packet is held.
func (n *NI) idleIn() bool { return true }

// stateIn describes the incoming path.
func (n *NI) stateIn() string { return "scaffold" }
