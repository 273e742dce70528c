package shrimp

import "github.com/nisim/nisim/rtl/bus"

// attachSnoop subscribes the snoop register to mb's data phases.
func (n *NI) attachSnoop(mb *bus.Bus, memTarget, dmaMaster string) error { return nil }
