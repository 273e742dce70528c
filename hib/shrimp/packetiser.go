package shrimp

import "github.com/nisim/nisim/rtl/clock"

// outPath is the AU path's state: OPT, snoop queue, packetiser and Outgoing
// FIFO (core domain).
type outPath struct {
	opt []OPTEntry
}

// buildOut creates the AU path.
func (n *NI) buildOut() error {
	n.out.opt = make([]OPTEntry, n.cfg.Entries())
	return nil
}

// tickCore advances the core domain by one cycle.
func (n *NI) tickCore(now clock.Time) bool { return false }

// idleOut reports whether the AU path holds nothing.
func (n *NI) idleOut() bool { return true }

// stateOut describes the AU path.
func (n *NI) stateOut() string { return "" }
