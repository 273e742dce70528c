package rma

import (
	"encoding/binary"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/verify/trace"
)

// Step labels (cpu.step records): one per Table 1 row, plus the costs
// the paper omits.
const (
	LabelCrossIn   = "rma.cross-in"   // Protection Crossing, entry (13)
	LabelCrossOut  = "rma.cross-out"  // Protection Crossing, exit (12)
	LabelWriteTx   = "rma.write-tx"   // Access Check & Writing Data to Device (32)
	LabelReadTx    = "rma.read-tx"    // Access Check & Writing Read Request to Device (37)
	LabelDispatch  = "rma.dispatch"   // MIPS Interrupt Dispatcher (73)
	LabelHandler   = "rma.handler"    // Device Interrupt Handler (21)
	LabelRxWrite   = "rma.rx-write"   // Reading Data and Writing Destination Addr (58)
	LabelRxReadReq = "rma.rx-readreq" // Reading Request, Accessing Memory & Writing Data to Device (67)
	LabelRxCAS     = "rma.rx-cas"     // the CAS target: READ's shape (67), assumed
	LabelBlockChk  = "rma.block-check"
	LabelInhibit   = "rma.inhibit"
	LabelTxWait    = "rma.tx-wait"
	LabelRawPoll   = "rma.raw-poll"
	LabelRawSend   = "rma.raw-send"
	LabelRawRecv   = "rma.raw-recv"
)

// txWaitInstrs is a STATUS poll for TX room when the FIFO is full
// (assumed: load, mask, branch: 3 instructions; Table 1 has none, its
// FIFO never fills).
const txWaitInstrs = 3

// pad says what fills a step's memory instructions up to half its count
// (AT-P14 «nearly 50% of the instructions perform memory loads or
// stores»): saves on the kernel stack at entry, restores at exit.
type pad uint8

const (
	padSaves pad = iota
	padRestores
	padNone
)

// step runs one costed code step: label, instrs instructions, the real
// accesses acc in order, then kernel-stack saves or restores until the
// memory and I/O instructions are ⌊instrs/2⌋. instrs below what the
// accesses stand for is raised to it (a short op never costs less than
// its accesses; with Defaults no Table 1 step is ever raised, the specs
// check the counts). It returns the loads' data in order.
func (k *Kernel) step(p *cpu.Proc, label string, instrs int, acc []cpu.Access, pd pad) [][]byte {
	held := 0
	for _, a := range acc {
		held += max(a.Instrs, 1)
	}
	instrs = max(instrs, held)
	if pd != padNone {
		for i := 0; held < instrs/2; i++ {
			addr := k.hw.KernelBase + offStack + 4*uint64(i%NumSaveWords)
			if pd == padSaves {
				acc = append(acc, cpu.Access{Addr: addr, Data: le32(uint32(i)), Write: true})
			} else {
				acc = append(acc, cpu.Access{Addr: addr, Len: 4})
			}
			held++
		}
	}
	return p.Step(cpu.Step{Label: label, Instrs: instrs, Accesses: acc})
}

// dataInstrs is a data step's count for an n-word operation: Table 1's
// 10-word count less PerWord per missing word (AT-P15).
func (k *Kernel) dataInstrs(table, n int) int {
	if n < 1 || n > MaxWords {
		n = MaxWords
	}
	return table - k.p.PerWord*(MaxWords-n)
}

// Accesses of the board.
func (k *Kernel) statusAcc() cpu.Access {
	return cpu.Access{Addr: k.hw.BoardBase + fore.RegStatus, Len: 4, IO: true}
}

func (k *Kernel) cellLoadAcc() cpu.Access {
	return cpu.Access{Addr: k.hw.BoardBase + fore.RxPort, Len: fore.CellBytes, IO: true, Instrs: fore.CellWords}
}

func (k *Kernel) cellStoreAcc(cell []byte) cpu.Access {
	return cpu.Access{Addr: k.hw.BoardBase + fore.TxPort, Data: cell, Write: true, IO: true, Burst: true, Instrs: fore.CellWords}
}

func load32(addr uint64) cpu.Access { return cpu.Access{Addr: addr, Len: 4} }

func store32(addr uint64, v uint32) cpu.Access {
	return cpu.Access{Addr: addr, Data: le32(v), Write: true}
}

// noteStatus keeps the TX free count a loaded STATUS word shows: the
// kernel is the only writer of the TX FIFO, so the count is a lower bound
// until the next store.
func (k *Kernel) noteStatus(st uint32) {
	k.txFree = int(st >> fore.StatusTxShift & fore.StatusTxMask)
}

// cellBytes is the 56 bytes written to the TX port: header word, HEC slot
// (the board makes the HEC), the 48-byte payload (CRC-10 left zero).
func cellBytes(dst, src int, pl [PayloadBytes]byte) []byte {
	b := make([]byte, fore.CellBytes)
	h, _ := atm.Header{VCI: VCI(src, dst)}.Encode() // GFC 0 and PT 0 always fit
	copy(b, h[:4])
	copy(b[8:], pl[:])
	return b
}

// vciOf extracts the VCI from a port header word.
func vciOf(b []byte) uint16 {
	return uint16(b[1]&0xf)<<12 | uint16(b[2])<<4 | uint16(b[3]>>4)
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func word(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// Trace and hook helpers.

func (k *Kernel) emit(now clock.Time, kind string, f ...trace.Field) {
	if k.env != nil && k.env.Trace.Enabled() {
		k.env.Trace.Emit(now, k.hw.CPU.Clock().CycleAt(now), k.path, kind, f...)
	}
}

func (k *Kernel) event(now clock.Time, ev Event) {
	ev.Node = k.hw.Node
	if k.onEvent != nil {
		k.onEvent(now, ev)
	}
}

func (k *Kernel) traceCell(now clock.Time, kind string, pl *Payload, src, dst int) {
	k.emit(now, kind, trace.Str("op", pl.Op.String()), trace.Int("src", int64(src)), trace.Int("dst", int64(dst)),
		trace.Int("desc", int64(pl.Desc)), trace.Int("off", int64(pl.Offset)), trace.Int("count", int64(pl.Count)),
		trace.Uint("req", uint64(pl.ReqID)))
}

func (k *Kernel) refuse(now clock.Time, side string, why Status, op Op, desc uint8, off, n int, src, dst int, req uint16) {
	if side == "send" {
		k.counters.RefusedSend[why]++
	} else {
		k.counters.RefusedRecv[why]++
	}
	k.emit(now, "rma.refuse", trace.Str("side", side), trace.Str("reason", why.String()), trace.Str("op", op.String()),
		trace.Int("desc", int64(desc)), trace.Int("off", int64(off)), trace.Int("count", int64(n)))
	kind := EvRefuseSend
	if side != "send" {
		kind = EvRefuseRecv
	}
	k.event(now, Event{Kind: kind, Src: src, Dst: dst, Op: op, Desc: desc, Offset: off, Count: n, ReqID: req, Reason: why})
}
