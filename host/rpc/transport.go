package rpc

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/trace"
)

// Step labels (cpu.step records) of the RPC layer's user code.
const (
	LabelPoll        = "rpc.poll"         // a spin-loop iteration
	LabelClientStub  = "rpc.client-stub"  // the client stub's half of StubInstrs
	LabelServerStub  = "rpc.server-stub"  // the server stub's half, with the frame's loads
	LabelProto       = "rpc.proto"        // transport work per cell (ProtoInstrsPerCell)
	LabelServerCheck = "rpc.server-check" // reading a message's stamps
)

// end is one node's side of the RPC layer: its kernel, parameters and
// trace path.
type end struct {
	k    *rma.Kernel
	p    Params
	path string
}

func newEnd(k *rma.Kernel, p Params) end {
	if en := k.Hardware().CPU.Env(); en != nil {
		// Both ends spin (poll steps, not progress) while a timer runs:
		// derived: the longest wait with nothing moving is the client's
		// ResendTimeout (its re-send is progress), and the server's
		// AckTimeout may have started just before it, so the watchdog
		// allows their sum.
		en.AllowQuiet(p.ResendTimeout + p.AckTimeout)
	}
	return end{k: k, p: p, path: fmt.Sprintf("N%d.RPC", k.Hardware().Node)}
}

func (e *end) emit(now clock.Time, kind string, f ...trace.Field) {
	en := e.k.Hardware().CPU.Env()
	if en != nil && en.Trace.Enabled() {
		en.Trace.Emit(now, e.k.Hardware().CPU.Clock().CycleAt(now), e.path, kind, f...)
	}
}

func (e *end) report(now clock.Time, kind, format string, args ...any) {
	if en := e.k.Hardware().CPU.Env(); en != nil {
		en.Report(now, e.path, kind, format, args...)
	}
}

// poll runs one spin-loop iteration watching the words at addrs: a code
// step of PollInstrs instructions per word with the word's load. It
// returns the words.
func (e *end) poll(p *cpu.Proc, addrs []uint64) []uint32 {
	acc := make([]cpu.Access, len(addrs))
	for i, a := range addrs {
		acc[i] = cpu.Access{Addr: a, Len: 4}
	}
	out := p.Step(cpu.Step{Label: LabelPoll, Instrs: e.p.PollInstrs * max(len(addrs), 1), Accesses: acc, Poll: true})
	w := make([]uint32, len(out))
	for i, b := range out {
		w[i] = word(b)
	}
	return w
}

// compute runs a code step of n instructions with the loads of addrs
// (n raised to the loads if fewer); it returns the words loaded.
func (e *end) compute(p *cpu.Proc, label string, n int, addrs []uint64) []uint32 {
	acc := make([]cpu.Access, len(addrs))
	for i, a := range addrs {
		acc[i] = cpu.Access{Addr: a, Len: 4}
	}
	n = max(n, len(addrs))
	if n == 0 {
		return nil
	}
	out := p.Step(cpu.Step{Label: label, Instrs: n, Accesses: acc})
	w := make([]uint32, len(out))
	for i, b := range out {
		w[i] = word(b)
	}
	return w
}

// write is one remote WRITE of words at word offset off of descriptor
// register reg, preceded by ProtoInstrsPerCell of transport work; a full
// TX FIFO (rma.ErrTxFull) is retried after a spin-loop iteration (the
// FIFO drains at the link's rate). Any other refusal is returned.
func (e *end) write(p *cpu.Proc, reg, off int, words []uint32) rma.Status {
	if e.p.ProtoInstrsPerCell > 0 {
		e.compute(p, LabelProto, e.p.ProtoInstrsPerCell, nil)
	}
	for {
		st := e.k.Write(p, reg, off, len(words), false, words)
		if st != rma.ErrTxFull {
			return st
		}
		e.poll(p, nil)
	}
}

func word(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}
