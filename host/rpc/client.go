package rpc

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/verify/trace"
)

// Binding is a client's binding to a server: the server's stacks it
// imported (descriptor registers) and its reply area, a segment of the
// client's node the server imported (section 3.1.1: «the server exports
// stacks that are then imported by clients at bind time»).
type Binding struct {
	end
	s      *Server
	client int      // the call id's top byte
	stacks []*stack // the server's stacks claimed by this binding
	regs   []int    // the client's descriptor register of each
	busy   []bool
	area   uint64 // the reply area on the client's node
	seq    uint16
	last   uint32 // the id of the last call made
	stats  Stats
	// yield runs once per iteration of Call's waits (SetYield);
	// yielding is set while it runs.
	yield    func(p *cpu.Proc)
	yielding bool
}

// Bind binds the client on k's node to s on node server, claiming one of
// its stacks (Bind is BindStacks with 1).
func Bind(k *rma.Kernel, p Params, server int, s *Server) (*Binding, error) {
	return BindStacks(k, p, server, s, 1)
}

// BindStacks binds the client on k's node to s on node server, claiming
// n of its unclaimed stacks (one per call the client has in progress at
// once). The descriptors are exchanged untimed, at set-up: the client
// exports a reply area of 20 words at the first free 128-byte slot from
// Params.ClientBase, granted to the server; the server imports it, the
// client imports the stacks (write right only).
func BindStacks(k *rma.Kernel, p Params, server int, s *Server, n int) (*Binding, error) {
	switch {
	case k == nil || s == nil:
		return nil, fmt.Errorf("rpc: Bind: no kernel or server")
	case server != s.Node():
		return nil, fmt.Errorf("rpc: Bind server %d is not the server's node %d", server, s.Node())
	case k.Hardware().Node == server:
		return nil, fmt.Errorf("rpc: Bind: client and server are both node %d (RPC is cross-machine)", server)
	case n < 1:
		return nil, fmt.Errorf("rpc: Bind stacks %d must be at least 1", n)
	case s.nextClient > 0xff:
		return nil, fmt.Errorf("rpc: Bind: the server has %d bindings, the call id's byte is full", s.nextClient)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.N != s.p.N {
		return nil, fmt.Errorf("rpc: Bind N %d differs from the server's %d", p.N, s.p.N)
	}
	var free []*stack
	for _, st := range s.stacks {
		if !st.bound && len(free) < n {
			free = append(free, st)
		}
	}
	if len(free) < n {
		return nil, fmt.Errorf("rpc: Bind: the server has %d unclaimed stacks, %d wanted", len(free), n)
	}
	me := k.Hardware().Node
	area := p.ClientBase
	for overlaps(k, area, replyStride) {
		area += replyStride
	}
	seg, err := k.Export(area, 4*replyWords, rma.RightWrite, server)
	if err != nil {
		return nil, fmt.Errorf("rpc: Bind reply area: %w", err)
	}
	sreg, err := freeReg(s.k)
	if err != nil {
		return nil, err
	}
	if err := s.k.Import(sreg, me, seg, 4*replyWords, rma.RightWrite); err != nil {
		return nil, fmt.Errorf("rpc: Bind: %w", err)
	}
	b := &Binding{end: newEnd(k, p), s: s, client: s.nextClient, area: area}
	for _, st := range free {
		reg, err := freeReg(k)
		if err != nil {
			return nil, err
		}
		if err := k.Import(reg, server, st.seg, s.stackBytes, rma.RightWrite); err != nil {
			return nil, fmt.Errorf("rpc: Bind: %w", err)
		}
		st.bound, st.replyReg = true, sreg
		b.stacks = append(b.stacks, st)
		b.regs = append(b.regs, reg)
		b.busy = append(b.busy, false)
	}
	s.nextClient++
	return b, nil
}

// Stats returns the binding's counts.
func (b *Binding) Stats() Stats { return b.stats }

// LastCall returns the id of the last call Call made (client<<24 | seq;
// 0 before the first): a checker matches Call's result with the server's
// execution of that id (rpc.Server.OnExec).
func (b *Binding) LastCall() uint32 { return b.last }

// SetYield sets fn (nil: none) to run once per iteration of Call's spin
// loops, after each poll of the acknowledgement or reply words that
// found nothing to act on: the
// client thread yields to its node's other user-level threads while it
// waits (section 3.1.3: «The entire implementation is at user level and
// employs a user-level threads package ... we chose to spin wait the
// threads at user level»). A node that is both a client and a server
// sets it to its server's Once, so two nodes calling each other at the
// same time each serve the other's call while waiting for their own
// (without it each spins until MaxTries re-sends went unanswered). fn
// is not re-entered: a Call made from inside fn (a procedure fn runs
// that calls out) waits without yielding.
func (b *Binding) SetYield(fn func(p *cpu.Proc)) { b.yield = fn }

// wait is the yield of one iteration of Call's spin loops.
func (b *Binding) wait(p *cpu.Proc) {
	if b.yield == nil || b.yielding {
		return
	}
	b.yielding = true
	defer func() { b.yielding = false }()
	b.yield(p)
}

// MaxArgs returns the most argument words a call through b can carry
// (its stacks' cell slots).
func (b *Binding) MaxArgs() int { return b.s.maxCells()*FrameWordsPerCell - HeaderWords }

// Call calls procedure proc of the server with args and returns its
// result: the client stub, the frame's cells sent message by message with
// their acknowledgements, then a spin on the reply. It fails only when the
// call cannot be sent (too many arguments, no free stack, a WRITE refused
// by the client's kernel), the server has no such procedure, or MaxTries
// re-sends went unanswered.
func (b *Binding) Call(p *cpu.Proc, proc uint16, args []uint32) (uint32, error) {
	if len(args) > b.MaxArgs() || len(args) > 0xffff {
		return 0, fmt.Errorf("rpc: Call: %d arguments, the stack holds %d", len(args), b.MaxArgs())
	}
	si := -1
	for i, busy := range b.busy {
		if !busy {
			si = i
			break
		}
	}
	if si < 0 {
		return 0, fmt.Errorf("rpc: Call: all %d stacks of the binding are in use", len(b.busy))
	}
	b.busy[si] = true
	defer func() { b.busy[si] = false }()
	reg := b.regs[si]
	b.seq++
	if b.seq == 0 {
		b.seq = 1
	}
	seq := b.seq
	id := uint32(b.client)<<24 | uint32(seq)
	b.last = id
	frame := make([]uint32, HeaderWords+len(args))
	frame[0], frame[1] = id, uint32(proc)|uint32(len(args))<<16
	copy(frame[HeaderWords:], args)
	n := Cells(len(args))
	tries := make([]int, n)
	total := 0
	b.stats.Calls++
	b.compute(p, LabelClientStub, b.p.StubInstrs/2, nil)
	b.emit(p.Now(), "rpc.call", trace.Uint("call", uint64(id)), trace.Int("cells", int64(n)))
	send := func(i int) error {
		w := make([]uint32, SlotWords)
		copy(w, frame[min(i*FrameWordsPerCell, len(frame)):min((i+1)*FrameWordsPerCell, len(frame))])
		w[SlotWords-1] = Stamp(seq, tries[i], i)
		b.stats.Cells++
		if st := b.write(p, reg, SlotWords*i, w); st != rma.OK {
			return fmt.Errorf("rpc: Call %#x: WRITE of cell %d refused: %v", id, i, st)
		}
		return nil
	}
	resend := func(i int) error {
		total++
		if total > b.p.MaxTries {
			return fmt.Errorf("rpc: Call %#x: no answer after %d re-sends", id, b.p.MaxTries)
		}
		tries[i]++
		b.stats.Resent++
		b.emit(p.Now(), "rpc.resend", trace.Uint("call", uint64(id)), trace.Int("cell", int64(i)))
		return send(i)
	}
	N := b.p.N
	replied := false
	for m := 0; m*N < n && !replied; m++ {
		first, last := m*N, min((m+1)*N, n)
		for i := first + 1; i < last; i++ {
			if err := send(i); err != nil {
				return 0, err
			}
		}
		if err := send(first); err != nil {
			return 0, err
		}
		if n == 1 {
			break
		}
		// Wait for the message's mask (or the reply: it implies all).
		deadline := p.Now() + b.p.ResendTimeout
		lastAck := uint32(0)
		for {
			v := b.poll(p, []uint64{b.area, b.area + 4*ackWord, b.area + 4*(ackWord+1), b.area + 4*(ackWord+2)})
			if v[0] == id {
				replied = true
				break
			}
			if v[1] == id && int(v[2]>>16) == m && v[2]&0xffff != lastAck {
				lastAck = v[2] & 0xffff
				b.stats.Acks++
				mask := v[3]
				missing := 0
				for i := first; i < last; i++ {
					if mask&(1<<uint(i-first)) == 0 {
						missing++
						if err := resend(i); err != nil {
							return 0, err
						}
					}
				}
				if missing == 0 {
					break
				}
				deadline = p.Now() + b.p.ResendTimeout
				continue
			}
			b.wait(p)
			if p.Now() >= deadline {
				b.stats.Timeouts++
				if err := resend(first); err != nil {
					return 0, err
				}
				deadline = p.Now() + b.p.ResendTimeout
			}
		}
	}
	// Spin on the reply; re-send cell 0 when it is late (the server
	// answers a duplicate from its cache).
	deadline := p.Now() + b.p.ResendTimeout
	for {
		v := b.poll(p, []uint64{b.area, b.area + 4, b.area + 8})
		if v[0] == id {
			b.emit(p.Now(), "rpc.reply", trace.Uint("call", uint64(id)), trace.Uint("result", uint64(v[1])))
			switch v[2] {
			case statusOK:
				return v[1], nil
			case statusNoProc:
				return 0, fmt.Errorf("rpc: Call %#x: procedure %d: %w", id, proc, ErrNoProc)
			default:
				return 0, fmt.Errorf("rpc: Call %#x: %w", id, ErrBadCall)
			}
		}
		b.wait(p)
		if p.Now() >= deadline {
			b.stats.Timeouts++
			if err := resend(0); err != nil {
				return 0, err
			}
			deadline = p.Now() + b.p.ResendTimeout
		}
	}
}
