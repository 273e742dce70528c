package rma

import (
	"encoding/binary"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/verify/trace"
)

// MaxCASTries bounds a CAS's resends (assumed: 32 timeouts of 400 µs,
// 13 ms, mean the target refuses it, a revoked or inhibited segment; the
// paper's CAS is reliable against cell loss only).
const MaxCASTries = 32

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func arg(f *cpu.Frame, i int) int {
	if i >= len(f.Args) {
		return 0
	}
	return int(int64(f.Args[i]))
}

// Write is the WRITE instruction (section 2.1: «WRITE rd, doff, count,
// rs, intr»): n words of the message registers regs to word offset off of
// descriptor register reg's segment; intr asks the target to notify its
// process. It traps; the kernel checks the descriptor, rights, bounds and
// count, reads STATUS and writes the cell (Table 1: crossing 25, access
// check and writing data to the device 32).
func (k *Kernel) Write(p *cpu.Proc, reg int, off, n int, intr bool, regs []uint32) Status {
	args := []uint64{uint64(reg), uint64(off), uint64(n), b2u(intr)}
	for _, r := range regs {
		args = append(args, uint64(r))
	}
	return Status(p.Trap(TrapWrite, args...))
}

// Read is the non-blocking READ instruction (section 2.1: «READ rs, soff,
// count, rd, doff, intr»): n words at word offset off of descriptor
// register reg's segment, to be deposited in this node's exported segment
// dreg at word offset doff. It returns the request id (Done reports the
// reply's arrival).
func (k *Kernel) Read(p *cpu.Proc, reg int, off, n int, dreg int, doff int, intr bool) (uint16, Status) {
	s := p.Trap(TrapRead, uint64(reg), uint64(off), uint64(n), uint64(dreg), uint64(doff), b2u(intr))
	return uint16(s >> 16), Status(s & 0xff)
}

// CAS is the compare-and-swap the paper synthesized (section 2.3): «the
// compare-and-swap operation is reliable in the face of cell loss». It
// blocks until the reply lands, resending the same request (same id)
// every CASTimeout; the target executes a request id once and answers a
// resent one from its per-source cache. The old value is also deposited
// at this node's segment dreg, word doff. It returns the value the target
// saw and whether it swapped; a request the sender refuses returns (0,
// false).
func (k *Kernel) CAS(p *cpu.Proc, reg int, off int, old, new uint32, dreg int, doff int) (uint32, bool) {
	id := uint16(0)
	for try := 0; ; try++ {
		if try > MaxCASTries {
			// The target refuses it (its segment revoked, inhibited or
			// unpinned) or the network loses everything: give up, counted.
			k.counters.CASFailed++
			k.emit(p.Now(), "rma.cas-fail", trace.Uint("req", uint64(id)), trace.Int("sends", int64(MaxCASTries)))
			return 0, false
		}
		s := p.Trap(TrapCAS, uint64(reg), uint64(off), uint64(old), uint64(new), uint64(dreg), uint64(doff), uint64(id))
		st := Status(s & 0xff)
		if st == ErrTxFull && id != 0 {
			continue // a resend must go out: the FIFO drains
		}
		if st != OK {
			return 0, false
		}
		id = uint16(s >> 16)
		pd := k.pending[id]
		deadline := p.Now() + k.p.CASTimeout
		k.hw.CPU.WakeAt(deadline)
		p.WaitUntil(func() bool { return pd.done || p.Now() >= deadline })
		if pd.done {
			return pd.old, pd.swapped
		}
		k.counters.Retransmits++
		k.emit(p.Now(), "rma.retx", trace.Uint("req", uint64(id)))
		k.event(p.Now(), Event{Kind: EvRetransmit, Src: k.hw.Node, Dst: pd.target, Op: OpCASReq, ReqID: id})
	}
}

// Block is the block transfer (section 2.3): one trap for n words of the
// user buffer at src to word offset off of reg's segment; per cell a
// pointer check (BlockCheck instructions and the buffer's loads) and the
// WRITE's send step. It waits for TX room instead of failing.
func (k *Kernel) Block(p *cpu.Proc, reg int, off int, src uint64, n int, intr bool) Status {
	return Status(p.Trap(TrapBlock, uint64(reg), uint64(off), src, uint64(n), b2u(intr)))
}

// Inhibit sets or clears the write inhibit of this node's segment seg
// (section 2.1 (4) «segment write inhibit for synchronization»; section
// 3.1.1 «efficient revocation of segment write access»): a trap, the
// record's word updated and flushed from the write buffer.
func (k *Kernel) Inhibit(p *cpu.Proc, seg uint8, on bool) {
	p.Trap(TrapInhibit, uint64(seg), b2u(on))
}

func (k *Kernel) crossIn(p *cpu.Proc) {
	k.step(p, LabelCrossIn, k.p.StepInstrs.CrossIn, nil, padSaves)
}

func (k *Kernel) crossOut(p *cpu.Proc) {
	k.step(p, LabelCrossOut, k.p.StepInstrs.CrossOut, nil, padRestores)
}

// sendReq is one cell a trap sends.
type sendReq struct {
	label      string
	table      int
	op         Op
	reg        int
	off, count int
	intr       bool
	id         uint16
	data       [DataBytes]byte
	// local is a READ's or CAS's reply segment on this node (-1: none).
	local, localOff, localCount int
	// need is the right the remote segment must grant.
	need Rights
}

// checkLocal validates a reply location in this node's own segment
// table from the record's words.
func checkLocal(r segRec, off, n int) Status {
	switch {
	case !r.valid():
		return ErrDesc
	case off < 0 || n < 1 || (off+n)*4 > int(r.bytes):
		return ErrBounds
	}
	return OK
}

// send runs a trap's access-check-and-send step: descriptor register
// loads, the reply segment's record for READ/CAS, the STATUS read and,
// if every check passed and the FIFO has room, the cell's burst store.
// The checks decide on the words kernel memory holds (the step's loads
// return them: the tables change only at set-up or through a flushed
// store, and the result is compared after the step); TX room on the count
// the last STATUS read showed less the cells written since (only this
// processor fills the FIFO, so the step's STATUS read finds at least that
// room); if that count is 0 the step reads STATUS without writing, and
// the trap returns ErrTxFull only if STATUS shows no room either (AT-P17:
// «delivering an exception should the FIFO overflow»).
func (k *Kernel) send(p *cpu.Proc, r *sendReq) Status {
	for {
		var acc []cpu.Access
		var d descReg
		st := OK
		if r.count < 1 || r.count > MaxWords {
			st = ErrCount
		}
		regOK := r.reg >= 0 && r.reg < NumRegs
		if regOK {
			a := k.descAddr(r.reg)
			d = descReg{k.peek32(a), k.peek32(a + 4)}
			acc = append(acc, load32(a), load32(a+4))
		}
		switch {
		case st != OK:
		case !regOK || !d.valid() || d.node() >= k.hw.Nodes || d.node() == k.hw.Node:
			st = ErrDesc
		case d.rights()&r.need != r.need:
			st = ErrRights
		case r.off < 0 || r.off+r.count > 65536 || (r.off+r.count)*4 > int(d.bytes):
			st = ErrBounds
		}
		var local segRec
		if r.local >= 0 {
			if r.local < NumSegments {
				a := k.segAddr(uint8(r.local))
				local = decodeSegRec(k.peek(a, 16))
				acc = append(acc, load32(a), load32(a+8))
			}
			if st == OK {
				if r.local >= NumSegments {
					st = ErrDesc
				} else {
					st = checkLocal(local, r.localOff, r.localCount)
				}
			}
		}
		acc = append(acc, k.statusAcc())
		room := k.txFree > 0
		var pl Payload
		if st == OK && room {
			pl = Payload{Op: r.op, Intr: r.intr, Count: r.count, Desc: d.seg(), Offset: uint16(r.off), ReqID: r.id, Data: r.data}
			b, err := pl.Encode()
			if err != nil {
				k.env.Report(p.Now(), k.path, "rma.encode", "%v", err)
				return ErrCount
			}
			acc = append(acc, k.cellStoreAcc(cellBytes(d.node(), k.hw.Node, b)))
		}
		nloads := 0
		for _, a := range acc {
			if !a.Write {
				nloads++
			}
		}
		out := k.step(p, r.label, r.table, acc, padSaves)
		now := p.Now()
		status := word(out[nloads-1])
		k.noteStatus(status)
		if regOK && (word(out[0]) != d.w0 || word(out[1]) != d.bytes) {
			k.env.Report(now, k.path, "rma.stale", "descriptor register %d loaded %#x/%d, memory held %#x/%d", r.reg, word(out[0]), word(out[1]), d.w0, d.bytes)
		}
		if st == OK && !room {
			if k.txFree > 0 {
				continue // a cell left between the decision and the read
			}
			st = ErrTxFull
		}
		if st != OK {
			k.refuse(now, "send", st, r.op, d.seg(), r.off, r.count, k.hw.Node, d.node(), r.id)
			return st
		}
		k.txFree--
		k.counters.Sent[r.op]++
		k.traceCell(now, "rma.send", &pl, k.hw.Node, d.node())
		k.event(now, Event{Kind: EvSend, Src: k.hw.Node, Dst: d.node(), Op: r.op, Desc: d.seg(), Offset: r.off,
			Count: r.count, ReqID: r.id, Data: append([]byte(nil), pl.Data[:pl.UsedBytes()]...)})
		if r.op == OpReadReq || r.op == OpCASReq {
			k.pending[r.id] = &pending{op: r.op, target: d.node(), desc: uint8(r.local), off: r.localOff, count: r.localCount, intr: r.intr}
		}
		return OK
	}
}

func (k *Kernel) newReq() uint16 {
	id := k.nextReq
	k.nextReq++
	if k.nextReq == 0 {
		k.nextReq = 1
	}
	return id
}

func (k *Kernel) trapWrite(p *cpu.Proc, f *cpu.Frame) {
	r := &sendReq{label: LabelWriteTx, table: k.p.StepInstrs.WriteTx, op: OpWrite, reg: arg(f, 0), off: arg(f, 1),
		count: arg(f, 2), intr: arg(f, 3) != 0, local: -1, need: RightWrite}
	for i := 0; i < MaxWords && 4+i < len(f.Args); i++ {
		binary.LittleEndian.PutUint32(r.data[4*i:], uint32(f.Args[4+i]))
	}
	k.crossIn(p)
	st := k.send(p, r)
	k.crossOut(p)
	f.Status = uint64(st)
}

func (k *Kernel) trapRead(p *cpu.Proc, f *cpu.Frame) {
	r := &sendReq{label: LabelReadTx, table: k.p.StepInstrs.ReadTx, op: OpReadReq, reg: arg(f, 0), off: arg(f, 1),
		count: arg(f, 2), local: arg(f, 3), localOff: arg(f, 4), intr: arg(f, 5) != 0, need: RightRead}
	r.localCount = r.count
	if r.local < 0 {
		r.local = NumSegments // refused as ErrDesc
	}
	r.id = k.newReq()
	pl := Payload{Op: OpReadReq}
	pl.SetReply(uint8(r.local), uint16(r.localOff))
	r.data = pl.Data
	k.crossIn(p)
	st := k.send(p, r)
	k.crossOut(p)
	f.Status = uint64(st) | uint64(r.id)<<16
}

func (k *Kernel) trapCAS(p *cpu.Proc, f *cpu.Frame) {
	r := &sendReq{label: LabelReadTx, table: k.p.StepInstrs.ReadTx, op: OpCASReq, reg: arg(f, 0), off: arg(f, 1),
		count: 1, local: arg(f, 4), localOff: arg(f, 5), localCount: 1, need: RightRead | RightWrite}
	if r.local < 0 {
		r.local = NumSegments
	}
	r.id = uint16(arg(f, 6))
	resend := r.id != 0
	target := -1
	if d, ok := k.Desc(r.reg); ok && d.Node >= 0 && d.Node < MaxNodes {
		target = d.Node
	}
	if !resend {
		r.id = k.newReq()
		// The target's cache holds the last CAS it executed from this node,
		// which is the last one sent it (a CAS blocks until answered): a new
		// request must not carry that id, or a wrapped counter would be
		// answered from the cache.
		if target >= 0 && r.id == k.lastCAS[target] {
			r.id = k.newReq()
		}
	}
	pl := Payload{Op: OpCASReq}
	pl.SetWord(0, uint32(arg(f, 2)))
	pl.SetWord(1, uint32(arg(f, 3)))
	pl.SetReply(uint8(r.local), uint16(r.localOff))
	r.data = pl.Data
	var keep *pending
	if resend {
		keep = k.pending[r.id]
	}
	k.crossIn(p)
	st := k.send(p, r)
	k.crossOut(p)
	if resend && keep != nil {
		k.pending[r.id] = keep // the same outstanding request
	}
	if st == OK && target >= 0 {
		k.lastCAS[target] = r.id
	}
	f.Status = uint64(st) | uint64(r.id)<<16
}

// userBuffer reports whether [src, src+4n) is memory the process may
// hand the kernel: inside the node's memory, word aligned, not the
// kernel's (the pointer check of section 2.3).
func (k *Kernel) userBuffer(src uint64, n int) bool {
	end := src + 4*uint64(n)
	return n >= 1 && src%4 == 0 && end > src && end <= k.hw.Memory.Storage().Size() &&
		(end <= k.hw.KernelBase || src >= k.hw.KernelBase+KernelBytes)
}

func (k *Kernel) trapBlock(p *cpu.Proc, f *cpu.Frame) {
	reg, off, src, n, intr := arg(f, 0), arg(f, 1), uint64(f.Args[2]), arg(f, 3), arg(f, 4) != 0
	k.crossIn(p)
	st := OK
	if !k.userBuffer(src, n) {
		k.step(p, LabelBlockChk, k.p.BlockCheck, nil, padNone)
		st = ErrPointer
		k.refuse(p.Now(), "send", st, OpBlock, 0, off, n, k.hw.Node, -1, 0)
	}
	for c := 0; st == OK && c*MaxWords < n; c++ {
		w := min(MaxWords, n-c*MaxWords)
		var acc []cpu.Access
		for i := range w {
			acc = append(acc, load32(src+4*uint64(c*MaxWords+i)))
		}
		out := k.step(p, LabelBlockChk, k.p.BlockCheck+w, acc, padNone)
		r := &sendReq{label: LabelWriteTx, table: k.p.StepInstrs.WriteTx, op: OpBlock, reg: reg, off: off + c*MaxWords,
			count: w, intr: intr && (c+1)*MaxWords >= n, local: -1, need: RightWrite}
		for i := range w {
			copy(r.data[4*i:], out[i])
		}
		for k.txFree <= 0 {
			k.txWait(p)
		}
		st = k.send(p, r)
	}
	k.crossOut(p)
	f.Status = uint64(st)
}

// txWait polls STATUS once for TX room.
func (k *Kernel) txWait(p *cpu.Proc) {
	out := k.step(p, LabelTxWait, txWaitInstrs, []cpu.Access{k.statusAcc()}, padNone)
	k.noteStatus(word(out[0]))
}

func (k *Kernel) trapInhibit(p *cpu.Proc, f *cpu.Frame) {
	seg, on := arg(f, 0), arg(f, 1) != 0
	k.crossIn(p)
	if seg >= 0 && seg < NumSegments && k.segs[seg] != nil {
		a := k.segAddr(uint8(seg))
		w0 := k.peek32(a)
		nw := w0 &^ segInhib
		if on {
			nw |= segInhib
		}
		acc := []cpu.Access{load32(a), store32(a, nw)}
		k.track(acc)
		out := k.step(p, LabelInhibit, k.p.InhibitInstrs, acc, padNone)
		if word(out[0]) != w0 {
			k.env.Report(p.Now(), k.path, "rma.stale", "segment %d record loaded %#x, memory held %#x", seg, word(out[0]), w0)
		}
		k.segs[seg].Inhibited = on
	} else {
		k.step(p, LabelInhibit, k.p.InhibitInstrs, nil, padNone)
		k.refuse(p.Now(), "send", ErrDesc, 0, uint8(seg), 0, 0, k.hw.Node, k.hw.Node, 0)
	}
	k.crossOut(p)
}
