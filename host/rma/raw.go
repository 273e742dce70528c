package rma

import (
	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/switch/atm"
)

// Raw is raw mode (section 2.3, L115): «The device was mapped into an
// address space, which accessed the network directly ... We removed
// interrupt handling costs as well, because the address space polls the
// network constantly»: no trap, no checks; the first use turns the RX
// interrupt off.
type Raw struct {
	k   *Kernel
	off bool
}

// Raw returns the node's raw-mode handle.
func (k *Kernel) Raw() *Raw {
	if k.raw == nil {
		k.raw = &Raw{k: k}
	}
	return k.raw
}

func (r *Raw) irqOff(p *cpu.Proc) {
	if !r.off {
		r.off = true
		p.As("rma.raw-irq-off").Store32(r.k.hw.BoardBase+fore.RegControl, 0)
	}
}

// Send polls STATUS until the TX FIFO has room (RawPollInstrs each),
// then writes the cell as one 56-byte burst store (RawSendInstrs to build
// it besides its 14 stores). The board makes the HEC and the CRC-10.
func (r *Raw) Send(p *cpu.Proc, h atm.Header, payload [46]byte) {
	r.irqOff(p)
	k := r.k
	for {
		out := p.Step(cpu.Step{Label: LabelRawPoll, Instrs: k.p.RawPollInstrs, Accesses: []cpu.Access{k.statusAcc()}, Poll: true})
		k.noteStatus(word(out[0]))
		if k.txFree > 0 {
			break
		}
	}
	k.txFree--
	cell := make([]byte, fore.CellBytes)
	if hb, err := h.Encode(); err == nil {
		copy(cell, hb[:4])
	} else {
		k.env.Report(p.Now(), k.path, "rma.raw", "header: %v", err)
	}
	copy(cell[8:], payload[:])
	p.Step(cpu.Step{Label: LabelRawSend, Instrs: k.p.RawSendInstrs + fore.CellWords, Accesses: []cpu.Access{k.cellStoreAcc(cell)}})
}

// Poll reads STATUS (RawPollInstrs); if a cell waits it reads it with
// one 56-byte load (14 instructions) and returns its payload and header.
func (r *Raw) Poll(p *cpu.Proc) (payload [48]byte, h atm.Header, ok bool) {
	r.irqOff(p)
	k := r.k
	out := p.Step(cpu.Step{Label: LabelRawPoll, Instrs: k.p.RawPollInstrs, Accesses: []cpu.Access{k.statusAcc()}, Poll: true})
	if word(out[0])&fore.StatusRxMask == 0 {
		return payload, h, false
	}
	out = p.Step(cpu.Step{Label: LabelRawRecv, Instrs: fore.CellWords, Accesses: []cpu.Access{k.cellLoadAcc()}})
	c := out[0]
	if len(c) < fore.CellBytes {
		return payload, h, false
	}
	hd, err := atm.DecodeHeader([]byte{c[0], c[1], c[2], c[3], c[4]})
	if err != nil {
		// The board checked the HEC; decode the fields without it.
		hd = atm.Header{VCI: vciOf(c)}
	}
	copy(payload[:], c[8:])
	return payload, hd, true
}
