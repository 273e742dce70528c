package rma

import (
	"encoding/binary"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/trace"
)

// dispatchLoads is the dispatcher's loads besides STATUS: the cause and
// status registers and the vector table (derived: «reading the system's
// control and status registers as well as accessing the on-chip control
// co-processor's registers», section 2.2); its other memory instructions
// are saves.
const dispatchLoads = 17

// interrupt is the vectored exception handler (section 2.2: «all I/O
// interrupts, are vectored to a single handler, which must then identify
// both the type of the exception and the originating device»), then the
// TCA-100's handler draining the RX FIFO: «the interrupt handler would
// then drain the input queue of all packets without further interrupts»
// (section 2.3). The first cell of each batch is read by the handler
// step, each later one by the previous cell's step (the loop's load is
// issued before the stores of the cell in hand are decided); the last
// cell's step reads STATUS again, and the loop goes on while it counts
// cells.
func (k *Kernel) interrupt(p *cpu.Proc) {
	k.counters.Interrupts++
	acc := []cpu.Access{k.statusAcc()}
	for i := range dispatchLoads {
		acc = append(acc, load32(k.hw.KernelBase+offVector+4*uint64(i)))
	}
	out := k.step(p, LabelDispatch, k.p.StepInstrs.Dispatch, acc, padSaves)
	st := word(out[0])
	k.noteStatus(st)
	rx := int(st & fore.StatusRxMask)
	drained := 0
	if rx == 0 {
		k.counters.Spurious++
		k.step(p, LabelHandler, k.p.StepInstrs.Handler, nil, padRestores)
	}
	for rx > 0 {
		batch := rx
		if k.p.RxBatch > 0 {
			batch = min(batch, k.p.RxBatch)
		}
		out := k.step(p, LabelHandler, k.p.StepInstrs.Handler, []cpu.Access{k.cellLoadAcc()}, padRestores)
		cell := out[0]
		for i := range batch {
			var next []byte
			next, st = k.rxCell(p, cell, i < batch-1)
			drained++
			cell = next
		}
		rx = int(st & fore.StatusRxMask)
	}
	k.counters.Drained[min(drained, len(k.counters.Drained)-1)]++
}

// rxCell handles one cell read from the RX port: its checks, its table
// loads and memory accesses, its reply; the step's last access reads the
// next cell (more) or STATUS (the loop test). It returns the next cell or
// the STATUS word.
func (k *Kernel) rxCell(p *cpu.Proc, cell []byte, more bool) ([]byte, uint32) {
	now := p.Now()
	var raw [PayloadBytes]byte
	if len(cell) >= fore.CellBytes {
		copy(raw[:], cell[8:])
	}
	vci := uint16(0)
	if len(cell) >= 4 {
		vci = vciOf(cell)
	}
	pl, err := Decode(raw)
	src, dst, vok := SourceOf(vci)
	st := OK
	switch {
	case err != nil && pl.Op >= OpWrite && pl.Op <= OpBlock:
		st = ErrCount
	case err != nil:
		st = ErrOp
	case !vok || dst != k.hw.Node || src >= k.hw.Nodes || src == k.hw.Node:
		st = ErrSrcVCI
	}
	var acc []cpu.Access
	var stores []cpu.Access
	var memEv []Event
	table := k.p.StepInstrs.RxWrite
	label := LabelRxWrite
	var reply []byte
	var pd *pending
	var seg uint8
	var off, n int
	var after func(now clock.Time)
	var expect []expectLoad // data loads and the words decided on
	switch pl.Op {
	case OpReadReq:
		label, table = LabelRxReadReq, k.p.StepInstrs.RxReadReq
	case OpCASReq:
		label, table = LabelRxCAS, k.p.StepInstrs.RxReadReq
	}
	if st == OK {
		seg, off, n = pl.Desc, int(pl.Offset), pl.Count
		switch pl.Op {
		case OpReadReply, OpCASReply:
			pd = k.pending[pl.ReqID]
			if pd == nil || pd.done || pd.target != src || pd.op+1 != pl.Op || pd.desc != pl.Desc || pd.off != off || pd.count != n {
				st = ErrNoRequest
				pd = nil
			}
		}
	}
	// The segment record and translation entries (loads, checks).
	var rec segRec
	var tes []uint32
	var teAddr []uint64
	if st == OK {
		a := k.segAddr(seg)
		rec = decodeSegRec(k.peek(a, 16))
		acc = append(acc, load32(a), load32(a+4), load32(a+8), load32(a+12))
		local := pl.Op == OpReadReply || pl.Op == OpCASReply
		need := RightWrite
		switch pl.Op {
		case OpReadReq:
			need = RightRead
		case OpCASReq:
			need = RightRead | RightWrite
		}
		words := n
		if pl.Op == OpCASReq || pl.Op == OpCASReply {
			words = 1
		}
		switch {
		case !rec.valid():
			st = ErrDesc
		case !local && !rec.granted(src):
			st = ErrSrcVCI
		case !local && rec.rights()&need != need:
			st = ErrRights
		case (off+words)*4 > int(rec.bytes) && !k.noBounds:
			st = ErrBounds
		case pl.Op != OpReadReq && rec.inhibited():
			st = ErrInhibit
		}
		if st == OK {
			base := uint64(rec.base)
			first := base / PageBytes
			lastPage := -1
			for i := range words {
				va := base + 4*uint64(off+i)
				pg := int(va/PageBytes - first)
				if pg == lastPage {
					continue
				}
				lastPage = pg
				ta := k.teAddr(seg, pg)
				tes = append(tes, k.peek32(ta))
				teAddr = append(teAddr, ta)
				acc = append(acc, load32(ta))
				if tes[len(tes)-1]&tePinned == 0 {
					st = ErrUnpinned
					break
				}
			}
		}
		words = min(words, MaxWords)
		phys := func(i int) uint64 {
			va := base(rec) + 4*uint64(off+i)
			pg := int(va/PageBytes - base(rec)/PageBytes)
			for j, ta := range teAddr {
				if ta == k.teAddr(seg, pg) {
					return uint64(tes[j]>>12)*PageBytes + va%PageBytes
				}
			}
			return 0
		}
		if st == OK {
			switch pl.Op {
			case OpWrite, OpBlock, OpReadReply:
				for i := range n {
					pa := phys(i)
					d := pl.Data[4*i : 4*i+4]
					stores = append(stores, cpu.Access{Addr: pa, Data: append([]byte(nil), d...), Write: true})
					memEv = append(memEv, Event{Kind: EvMemWrite, Src: src, Dst: k.hw.Node, Op: pl.Op, Desc: seg,
						Offset: off + i, Count: 1, ReqID: pl.ReqID, Addr: pa, Data: append([]byte(nil), d...)})
				}
				if pl.Op == OpReadReply {
					after = func(clock.Time) { pd.done = true }
				}
			case OpCASReply:
				pa := phys(0)
				d := append([]byte(nil), pl.Data[0:4]...)
				stores = append(stores, cpu.Access{Addr: pa, Data: d, Write: true})
				memEv = append(memEv, Event{Kind: EvMemWrite, Src: src, Dst: k.hw.Node, Op: pl.Op, Desc: seg,
					Offset: off, Count: 1, ReqID: pl.ReqID, Addr: pa, Data: d})
				after = func(clock.Time) { pd.done, pd.old, pd.swapped = true, pl.Word(0), pl.Data[4] == 1 }
			case OpReadReq:
				rd, roff := pl.Reply()
				rp := Payload{Op: OpReadReply, Intr: pl.Intr, Count: n, Desc: rd, Offset: roff, ReqID: pl.ReqID}
				for i := range n {
					pa := phys(i)
					acc = append(acc, load32(pa))
					d := k.peek(pa, 4)
					expect = append(expect, expectLoad{len(acc) - 1, pa, word(d)})
					copy(rp.Data[4*i:], d)
					memEv = append(memEv, Event{Kind: EvMemRead, Src: src, Dst: k.hw.Node, Op: pl.Op, Desc: seg,
						Offset: off + i, Count: 1, ReqID: pl.ReqID, Addr: pa, Data: d})
				}
				b, _ := rp.Encode()
				reply = cellBytes(src, k.hw.Node, b)
			case OpCASReq:
				pa := phys(0)
				ca := k.casAddr(src)
				cache := k.peek(ca, 12)
				acc = append(acc, load32(ca), load32(ca+4), load32(ca+8))
				rp := Payload{Op: OpCASReply, Count: 1, ReqID: pl.ReqID}
				rp.Desc, rp.Offset = pl.Reply()
				if word(cache) == 1<<31|uint32(pl.ReqID) {
					// A resent request: answer from the cache, execute nothing.
					copy(rp.Data[0:4], cache[4:8])
					rp.Data[4] = cache[8]
					k.counters.CASDup++
					k.emit(now, "rma.dup", trace.Uint("req", uint64(pl.ReqID)), trace.Bool("swapped", cache[8] == 1),
						trace.Uint("old", uint64(word(cache[4:]))))
					memEv = append(memEv, Event{Kind: EvCASDup, Src: src, Dst: k.hw.Node, Op: pl.Op, Desc: seg, Offset: off,
						Count: 1, ReqID: pl.ReqID, Addr: pa, Data: append([]byte(nil), rp.Data[0:5]...)})
				} else {
					acc = append(acc, load32(pa))
					oldv := k.peek32(pa)
					expect = append(expect, expectLoad{len(acc) - 1, pa, oldv})
					swapped := oldv == pl.Word(0)
					if swapped {
						stores = append(stores, store32(pa, pl.Word(1)))
					}
					stores = append(stores, store32(ca, 1<<31|uint32(pl.ReqID)), store32(ca+4, oldv), store32(ca+8, uint32(b2u(swapped))))
					binary.LittleEndian.PutUint32(rp.Data[0:], oldv)
					rp.Data[4] = byte(b2u(swapped))
					k.counters.CASExec++
					k.emit(now, "rma.cas", trace.Uint("req", uint64(pl.ReqID)), trace.Bool("swapped", swapped), trace.Uint("old", uint64(oldv)))
					memEv = append(memEv, Event{Kind: EvCASExec, Src: src, Dst: k.hw.Node, Op: pl.Op, Desc: seg, Offset: off,
						Count: 1, ReqID: pl.ReqID, Addr: pa, Data: append([]byte(nil), rp.Data[0:5]...)})
					if swapped {
						memEv = append(memEv, Event{Kind: EvMemWrite, Src: src, Dst: k.hw.Node, Op: pl.Op, Desc: seg, Offset: off,
							Count: 1, ReqID: pl.ReqID, Addr: pa, Data: le32(pl.Word(1))})
					}
				}
				b, _ := rp.Encode()
				reply = cellBytes(src, k.hw.Node, b)
			}
		}
	}
	// A reply needs TX room: the STATUS the loop read last, less the cells
	// stored since; if none, poll STATUS (the FIFO drains).
	if reply != nil {
		for k.txFree <= 0 {
			k.txWait(p)
		}
	}
	nl := 0
	for _, a := range acc {
		if !a.Write {
			nl++
		}
	}
	acc = append(acc, stores...)
	k.track(stores)
	if reply != nil {
		acc = append(acc, k.cellStoreAcc(reply))
	}
	if more {
		acc = append(acc, k.cellLoadAcc())
	} else {
		acc = append(acc, k.statusAcc())
	}
	// The data step's count: the op's words; a CAS reply's one word; a CAS
	// request READ's whole 67 (assumed: its compare, cache lookup and
	// update stand for the copy loop it does not run); Table 1's count
	// for a cell whose count does not decode.
	wn := pl.Count
	switch pl.Op {
	case OpCASReply:
		wn = 1
	case OpCASReq:
		wn = MaxWords
	}
	out := k.step(p, label, k.dataInstrs(table, wn), acc, padRestores)
	now = p.Now()
	// Compare what the table loads returned with the words decided on.
	if st == OK && len(out) >= 4 && (word(out[0]) != rec.w0 || word(out[1]) != rec.base || word(out[2]) != rec.bytes || word(out[3]) != rec.grant) {
		k.env.Report(now, k.path, "rma.stale", "segment %d record loaded %#x, memory held %#x", seg, word(out[0]), rec.w0)
	}
	for _, x := range expect {
		if x.load < len(out) && word(out[x.load]) != x.v {
			k.env.Report(now, k.path, "rma.stale", "word %#x loaded %#x, the reply carries %#x", x.addr, word(out[x.load]), x.v)
		}
	}
	if reply != nil {
		k.txFree--
	}
	last := out[nl]
	var next []byte
	var status uint32
	if more {
		next = last
	} else {
		status = word(last)
		k.noteStatus(status)
	}
	if st != OK {
		k.refuse(now, "recv", st, pl.Op, pl.Desc, int(pl.Offset), pl.Count, src, dst, pl.ReqID)
		return next, status
	}
	recvOp := pl.Op
	k.counters.Received[recvOp]++
	k.traceCell(now, "rma.recv", &pl, src, k.hw.Node)
	k.event(now, Event{Kind: EvRecv, Src: src, Dst: k.hw.Node, Op: pl.Op, Desc: pl.Desc, Offset: int(pl.Offset),
		Count: pl.Count, ReqID: pl.ReqID})
	for _, ev := range memEv {
		if ev.Kind == EvMemWrite || ev.Kind == EvMemRead {
			k.emit(now, "rma.mem", trace.Addr("addr", ev.Addr), trace.Int("len", int64(len(ev.Data))), trace.Hash("hash", ev.Data))
		}
		k.event(now, ev)
	}
	if reply != nil {
		rp, _ := Decode([PayloadBytes]byte(reply[8:]))
		k.counters.Sent[rp.Op]++
		k.traceCell(now, "rma.send", &rp, k.hw.Node, src)
		k.event(now, Event{Kind: EvSend, Src: k.hw.Node, Dst: src, Op: rp.Op, Desc: rp.Desc, Offset: int(rp.Offset),
			Count: rp.Count, ReqID: rp.ReqID, Data: append([]byte(nil), rp.Data[:rp.UsedBytes()]...)})
	}
	if after != nil {
		after(now)
	}
	if pl.Intr && (pl.Op == OpWrite || pl.Op == OpBlock || pl.Op == OpReadReply) {
		k.counters.Notifies++
		k.event(now, Event{Kind: EvNotify, Src: src, Dst: k.hw.Node, Op: pl.Op, Desc: seg, Offset: off, Count: n, ReqID: pl.ReqID})
		if k.onNotify != nil {
			k.onNotify(p, seg, off, n)
		}
	}
	return next, status
}

func base(r segRec) uint64 { return uint64(r.base) }

// expectLoad is a data load of a step and the word the kernel decided on
// before the step (the reply it built): the two must agree.
type expectLoad struct {
	load int // index among the step's loads
	addr uint64
	v    uint32
}
