package rpc

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
)

// Proc is a remote procedure: it runs on the server's program with the
// call's argument words (loaded from the stack) and returns the result.
type Proc func(p *cpu.Proc, args []uint32) uint32

// Server is a node's RPC server: its stacks, one exported segment each,
// and per stack the last call executed and its cached reply.
type Server struct {
	end
	stackBytes  int
	stacks      []*stack
	procs       map[uint16]Proc
	onExec      func(now clock.Time, stack int, call uint32)
	stats       Stats
	refusedBase uint64
	nextClient  int
	// dupExec is the rpc.dup-exec mutation, staleResult the
	// rpc.stale-result one and finished the calls finished (test-only
	// faults).
	dupExec     bool
	staleResult int
	finished    int
	// serving is set while Once runs (Once is not re-entered).
	serving bool
}

// mutDupExec is a test-only fault (see env.DeclareMutation).
var mutDupExec = env.DeclareMutation("rpc.dup-exec",
	"an RPC server runs a duplicate of a call it has executed again instead of answering from its cached reply "+
		"(any N > 0): no exactly-once execution (caught by atmtb's RPC checker, rpc.once)")

// mutStaleResult is a test-only fault (see env.DeclareMutation).
var mutStaleResult = env.DeclareMutation("rpc.stale-result",
	"every Nth call an RPC server finishes keeps the stack's previous result in its cached reply: the client gets "+
		"a result its procedure did not return (caught by atmtb's RPC checker, rpc.once)")

// stack is one exported stack and the transport's state of its calls.
type stack struct {
	idx      int
	seg      uint8
	base     uint64
	bound    bool
	replyReg int // the server's descriptor register of the client's reply area

	// cell0 is the last value seen of cell 0's stamp.
	cell0 uint32
	// The last call executed: its seq, id, result and status, and the
	// heads of its later messages with the stamps last seen.
	done       bool
	lastSeq    uint16
	lastID     uint32
	lastResult uint32
	lastStatus uint32
	doneHeads  []watch

	// The call being collected.
	active      bool
	seq         uint16
	id          uint32
	proc        uint16
	nargs, n    int
	msgs, m     int
	heads       []uint32 // last stamp seen of each message's head (0: not yet)
	mask        uint32   // cells of message m present (bit i: cell m*N+i)
	partial     bool     // a mask with holes was sent for message m
	ackNo       uint16
	ackDeadline clock.Time
}

// watch is a word the server's poll loop watches and its last value.
type watch struct {
	addr uint64
	val  uint32
}

// NewServer exports stacks stacks of stackBytes bytes each at
// Params.ServerBase of k's node (each its own write-only segment granted
// to every other node, section 3.1.1 «The server exports each stack as a
// separate segment») and serves the procedures procs by number.
func NewServer(k *rma.Kernel, p Params, stacks, stackBytes int, procs map[uint16]Proc) (*Server, error) {
	if k == nil {
		return nil, fmt.Errorf("rpc: NewServer: no kernel")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	hw := k.Hardware()
	switch {
	case stacks < 1 || stacks > 64:
		return nil, fmt.Errorf("rpc: NewServer stacks %d must be in 1..64", stacks)
	case stackBytes < 4*SlotWords || stackBytes%(4*SlotWords) != 0 || stackBytes > 4*SlotWords*MaxCells:
		return nil, fmt.Errorf("rpc: NewServer stackBytes %d must be a multiple of %d in %d..%d (cell slots)",
			stackBytes, 4*SlotWords, 4*SlotWords, 4*SlotWords*MaxCells)
	case hw.Nodes < 2:
		return nil, fmt.Errorf("rpc: NewServer: node %d has no other node to serve", hw.Node)
	case len(procs) == 0:
		return nil, fmt.Errorf("rpc: NewServer: no procedures")
	case overlaps(k, p.ServerBase, stacks*stackBytes):
		return nil, fmt.Errorf("rpc: NewServer: ServerBase %#x + %d bytes overlaps an exported segment", p.ServerBase, stacks*stackBytes)
	}
	nilProc := -1
	for n, fn := range procs {
		if fn == nil && (nilProc < 0 || int(n) < nilProc) {
			nilProc = int(n) // the smallest, whatever the map's order
		}
	}
	if nilProc >= 0 {
		return nil, fmt.Errorf("rpc: NewServer: procedure %d is nil", nilProc)
	}
	var grant []int
	for i := range hw.Nodes {
		if i != hw.Node {
			grant = append(grant, i)
		}
	}
	s := &Server{end: newEnd(k, p), stackBytes: stackBytes, procs: procs,
		refusedBase: k.Counters().RefusedRecv[rma.ErrInhibit], dupExec: hw.CPU.Env().Mutation(mutDupExec) > 0,
		staleResult: hw.CPU.Env().Mutation(mutStaleResult)}
	for i := range stacks {
		base := p.ServerBase + uint64(i*stackBytes)
		seg, err := k.Export(base, stackBytes, rma.RightWrite, grant...)
		if err != nil {
			return nil, fmt.Errorf("rpc: NewServer stack %d: %w", i, err)
		}
		s.stacks = append(s.stacks, &stack{idx: i, seg: seg, base: base})
	}
	return s, nil
}

// Node returns the server's node.
func (s *Server) Node() int { return s.k.Hardware().Node }

// Stack returns stack i's segment and base address.
func (s *Server) Stack(i int) (seg uint8, base uint64) { return s.stacks[i].seg, s.stacks[i].base }

// OnExec sets the exactly-once checker's hook: called when the procedure
// of call id call returns on stack, before the reply is sent.
func (s *Server) OnExec(fn func(now clock.Time, stack int, call uint32)) { s.onExec = fn }

// Stats returns the server's counts.
func (s *Server) Stats() Stats {
	st := s.stats
	st.Refused = s.k.Counters().RefusedRecv[rma.ErrInhibit] - s.refusedBase
	return st
}

// maxCells is a stack's cell slots.
func (s *Server) maxCells() int { return s.stackBytes / (4 * SlotWords) }

// stampAddr is cell i's stamp word on st.
func stampAddr(st *stack, i int) uint64 { return st.base + 4*uint64(SlotWords*i+SlotWords-1) }

// frameAddr is frame word w on st (slots hold FrameWordsPerCell frame
// words and a stamp).
func frameAddr(st *stack, w int) uint64 {
	return st.base + 4*uint64(SlotWords*(w/FrameWordsPerCell)+w%FrameWordsPerCell)
}

// Serve is the server's program: it spins (a costed poll of every bound
// stack's watched words) until stop returns true, checked once per
// iteration, handling the calls as their cells land.
func (s *Server) Serve(p *cpu.Proc, stop func() bool) {
	for !stop() {
		s.Once(p)
	}
}

// Once is one iteration of Serve's loop: one costed poll of every bound
// stack's watched words, then the work what landed asks for (a program
// that serves between its own operations calls it in its loop, a client
// waiting in Call through Binding.SetYield). Once is not re-entered: a
// call made by a procedure Once runs, whose wait yields back to this
// server, serves nothing there (the server is one thread, busy with
// that procedure).
func (s *Server) Once(p *cpu.Proc) {
	if s.serving {
		return
	}
	s.serving = true
	defer func() { s.serving = false }()
	var addrs []uint64
	var owners []*stack
	var lists [][]watch
	for _, st := range s.stacks {
		if !st.bound {
			continue
		}
		ws := s.watches(st)
		lists = append(lists, ws)
		owners = append(owners, st)
		for _, w := range ws {
			addrs = append(addrs, w.addr)
		}
	}
	vals := s.poll(p, addrs)
	i := 0
	for j, ws := range lists {
		s.handle(p, owners[j], ws, vals[i:i+len(ws)])
		i += len(ws)
	}
}

// watches returns the words the poll loop reads for st, with the values
// last seen: cell 0's stamp first, then, idle, the later heads of the
// last call (a re-sent head is a duplicate); active, the heads of
// messages 1..m and, after a mask with holes, the missing cells' stamps.
func (s *Server) watches(st *stack) []watch {
	ws := []watch{{stampAddr(st, 0), st.cell0}}
	if !st.active {
		return append(ws, st.doneHeads...)
	}
	N := s.p.N
	for j := 1; j <= st.m; j++ {
		ws = append(ws, watch{stampAddr(st, j*N), st.heads[j]})
	}
	if st.partial {
		for i := st.m * N; i < min((st.m+1)*N, st.n); i++ {
			if st.mask&(1<<uint(i-st.m*N)) == 0 {
				ws = append(ws, watch{stampAddr(st, i), 0})
			}
		}
	}
	return ws
}

// handle acts on the first watched word of st that changed, or on its
// AckTimeout.
func (s *Server) handle(p *cpu.Proc, st *stack, ws []watch, vals []uint32) {
	N := s.p.N
	if vals[0] != ws[0].val {
		v := vals[0]
		st.cell0 = v
		switch {
		case v == 0 || stampIdx(v) != 0:
		case st.done && !st.active && stampSeq(v) == st.lastSeq:
			s.duplicate(p, st)
		case st.active && stampSeq(v) == st.seq:
			// Cell 0 re-sent: message 0's acknowledgement was lost.
			st.heads[0] = v
			if st.m == 0 {
				s.head(p, st)
			} else {
				s.ack(p, st, 0, s.full(st, 0))
			}
		default:
			s.start(p, st, v)
		}
		return
	}
	if !st.active {
		for j := 1; j < len(ws); j++ {
			if vals[j] != ws[j].val {
				st.doneHeads[j-1].val = vals[j]
				if stampSeq(vals[j]) == st.lastSeq {
					s.duplicate(p, st)
				}
				return
			}
		}
		return
	}
	for j := 1; j <= st.m; j++ {
		v := vals[j]
		if v == ws[j].val || stampSeq(v) != st.seq || stampIdx(v) != j*N {
			continue
		}
		st.heads[j] = v
		if j < st.m {
			s.ack(p, st, j, s.full(st, j)) // its acknowledgement was lost
		} else {
			s.head(p, st)
		}
		return
	}
	if st.partial {
		got := uint32(0)
		k := st.m + 1
		for i := st.m * N; i < min((st.m+1)*N, st.n); i++ {
			if st.mask&(1<<uint(i-st.m*N)) != 0 {
				continue
			}
			if v := vals[k]; stampSeq(v) == st.seq && stampIdx(v) == i {
				got |= 1 << uint(i-st.m*N)
			}
			k++
		}
		if got != 0 {
			st.mask |= got
			s.stats.Cells += uint64(popcount(got))
			if st.mask == s.full(st, st.m) {
				st.partial = false
				s.ack(p, st, st.m, st.mask)
				s.advance(p, st)
			}
			return
		}
		if p.Now() >= st.ackDeadline {
			s.stats.Timeouts++
			s.ack(p, st, st.m, st.mask)
			st.ackDeadline = p.Now() + s.p.AckTimeout
		}
	}
}

// full is message j's mask with every cell present.
func (s *Server) full(st *stack, j int) uint32 {
	n := min(s.p.N, st.n-j*s.p.N)
	return uint32(1)<<uint(n) - 1
}

func popcount(m uint32) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// start begins a call whose cell 0 (stamp v) landed: it reads the frame's
// header and handles message 0's head.
func (s *Server) start(p *cpu.Proc, st *stack, v uint32) {
	w := s.compute(p, LabelServerCheck, s.p.ProtoInstrsPerCell, []uint64{frameAddr(st, 0), frameAddr(st, 1)})
	id, hdr := w[0], w[1]
	seq := stampSeq(v)
	st.active, st.partial = false, false
	if uint16(id) != seq {
		// The header does not belong to the stamp: not a frame a client
		// stub wrote (cell 0 carries both, so no loss can tear them).
		// Ignore it, count and trace it.
		s.stats.Bad++
		s.emit(p.Now(), "rpc.bad", trace.Int("stack", int64(st.idx)), trace.Uint("call", uint64(id)), trace.Uint("stamp", uint64(v)))
		return
	}
	nargs := int(hdr >> 16)
	st.seq, st.id, st.proc, st.nargs = seq, id, uint16(hdr), nargs
	st.n = Cells(nargs)
	if st.n > s.maxCells() {
		s.stats.Bad++
		s.emit(p.Now(), "rpc.bad", trace.Int("stack", int64(st.idx)), trace.Uint("call", uint64(id)), trace.Int("cells", int64(st.n)))
		s.finish(p, st, 0, statusBadCall)
		return
	}
	st.msgs = (st.n + s.p.N - 1) / s.p.N
	st.m, st.ackNo, st.mask, st.active = 0, 0, 0, true
	st.heads = make([]uint32, st.msgs)
	st.heads[0] = v
	s.emit(p.Now(), "rpc.call", trace.Uint("call", uint64(id)), trace.Int("cells", int64(st.n)), trace.Int("stack", int64(st.idx)))
	s.head(p, st)
}

// head handles message m's head: it reads the stamps of the message's
// other cells (AT-P19: each has landed or is lost) and acknowledges them
// with a mask, or, for a one-cell call, runs it (its reply is the
// acknowledgement).
func (s *Server) head(p *cpu.Proc, st *stack) {
	N := s.p.N
	first, last := st.m*N, min((st.m+1)*N, st.n)
	var addrs []uint64
	for i := first + 1; i < last; i++ {
		addrs = append(addrs, stampAddr(st, i))
	}
	w := s.compute(p, LabelServerCheck, s.p.ProtoInstrsPerCell*(last-first), addrs)
	mask := uint32(1)
	for i := first + 1; i < last; i++ {
		if v := w[i-first-1]; stampSeq(v) == st.seq && stampIdx(v) == i {
			mask |= 1 << uint(i-first)
		}
	}
	s.stats.Cells += uint64(popcount(mask &^ st.mask))
	st.mask |= mask
	if st.n == 1 {
		s.execute(p, st)
		return
	}
	s.ack(p, st, st.m, st.mask)
	if st.mask == s.full(st, st.m) {
		st.partial = false
		s.advance(p, st)
		return
	}
	st.partial = true
	st.ackDeadline = p.Now() + s.p.AckTimeout
}

// advance moves to the next message, or runs the call after the last.
func (s *Server) advance(p *cpu.Proc, st *stack) {
	if st.m+1 < st.msgs {
		st.m++
		st.mask, st.partial = 0, false
		return
	}
	s.execute(p, st)
}

// ack writes message j's mask to the client's acknowledgement slot.
func (s *Server) ack(p *cpu.Proc, st *stack, j int, mask uint32) {
	st.ackNo++
	s.stats.Acks++
	s.emit(p.Now(), "rpc.ack", trace.Uint("call", uint64(st.id)), trace.Int("msg", int64(j)), trace.Uint("mask", uint64(mask)))
	s.send(p, st, ackWord, []uint32{st.id, uint32(j)<<16 | uint32(st.ackNo), mask})
}

// send WRITEs words to the client's reply area of st.
func (s *Server) send(p *cpu.Proc, st *stack, off int, words []uint32) {
	if r := s.write(p, st.replyReg, off, words); r != rma.OK {
		s.report(p.Now(), "rpc.send", "stack %d: WRITE to the client refused: %v", st.idx, r)
	}
}

// execute runs the call: the stack is write-protected (section 3.1.1),
// the server stub loads the frame's arguments, the procedure runs, the
// stack is released and the reply written.
func (s *Server) execute(p *cpu.Proc, st *stack) {
	k := s.k
	k.Inhibit(p, st.seg, true)
	half := s.p.StubInstrs - s.p.StubInstrs/2
	addrs := make([]uint64, st.nargs)
	for i := range addrs {
		addrs[i] = frameAddr(st, HeaderWords+i)
	}
	args := s.compute(p, LabelServerStub, half+st.nargs, addrs)
	fn := s.procs[st.proc]
	result, status := uint32(0), uint32(statusOK)
	if fn == nil {
		status = statusNoProc
	} else {
		result = fn(p, args)
		s.stats.Calls++
		s.emit(p.Now(), "rpc.exec", trace.Uint("call", uint64(st.id)), trace.Int("stack", int64(st.idx)), trace.Uint("result", uint64(result)))
		if s.onExec != nil {
			s.onExec(p.Now(), st.idx, st.id)
		}
	}
	k.Inhibit(p, st.seg, false)
	s.finish(p, st, result, status)
}

// finish records the call as executed and writes its reply.
func (s *Server) finish(p *cpu.Proc, st *stack, result, status uint32) {
	s.finished++
	if s.staleResult > 0 && s.finished%s.staleResult == 0 {
		result = st.lastResult // the mutation: the previous call's result
	}
	st.done, st.lastSeq, st.lastID, st.lastResult, st.lastStatus = true, st.seq, st.id, result, status
	st.doneHeads = st.doneHeads[:0]
	for j := 1; j < len(st.heads); j++ {
		st.doneHeads = append(st.doneHeads, watch{stampAddr(st, j*s.p.N), st.heads[j]})
	}
	st.active, st.partial = false, false
	s.reply(p, st)
}

// duplicate answers a call executed before with its cached reply.
func (s *Server) duplicate(p *cpu.Proc, st *stack) {
	s.stats.DupCalls++
	if s.dupExec && st.lastStatus == statusOK {
		s.execute(p, st) // the mutation: the call runs again
		return
	}
	s.stats.Resent++
	s.emit(p.Now(), "rpc.dup", trace.Uint("call", uint64(st.lastID)))
	s.reply(p, st)
}

func (s *Server) reply(p *cpu.Proc, st *stack) {
	s.emit(p.Now(), "rpc.reply", trace.Uint("call", uint64(st.lastID)), trace.Uint("result", uint64(st.lastResult)))
	s.send(p, st, 0, []uint32{st.lastID, st.lastResult, st.lastStatus})
}
