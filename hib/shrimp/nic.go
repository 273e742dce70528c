package shrimp

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
)

// nicPath is the outgoing arbiter, NIC port, NIC FIFOs and link state.
type nicPath struct{}

// buildNIC creates the NIC.
func (n *NI) buildNIC() error { return nil }

// connectNIC connects the NIC to its link directions.
func (n *NI) connectNIC(out, in *link.Dir) error { return nil }

// tickNIC advances the NIC by one link cycle.
func (n *NI) tickNIC(now clock.Time) bool { return false }

// idleNIC reports whether the NIC holds nothing.
func (n *NI) idleNIC() bool { return true }

// stateNIC describes the NIC.
func (n *NI) stateNIC() string { return "" }
