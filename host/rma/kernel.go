// Package rma is the remote-memory-access kernel of the FORE ATM
// prototype (atm-remote-memory-access.txt sections 2 and 3): segments
// exported, imported into descriptor registers and kept in a kernel table
// of translation entries of pinned pages (section 2.3); the remote WRITE,
// READ and compare-and-swap «meta-instructions» emulated in the kernel as
// traps; the vectored interrupt dispatcher and the TCA-100's handler that
// drains the receive FIFO; the checks that protect every access at both
// ends; block transfer; and raw mode, the device mapped to a user address
// space (section 2.3's 11 µs).
//
// It is software: sequential host programs (host/cpu Proc) whose costed
// code steps are Table 1's rows with exactly its instruction counts, their
// memory and I/O accesses real (the device's ports and registers over the
// TURBOchannel, the kernel's tables and stack, the destination's words),
// so the time of each operation emerges from the processor, caches, buses
// and board (hib/fore). A cell is read or written as one 56-byte access
// standing for 14 instructions (assumed, issue 15 design D1: «14 (40
// nanosecond) I/O bus read cycles», AT-P5, leave no room for per-word
// address phases; an R3000 has no block load, so the step counts 14 loads).
package rma

import (
	"fmt"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// Table1 is the instruction count of each row of Table 1
// (atm-remote-memory-access.txt section 2.3) for a 40-byte operation.
type Table1 struct {
	// CrossIn and CrossOut split «Protection Crossing» (25) (assumed 13 on
	// entry, 12 on exit, as the DECstation preset had them).
	CrossIn, CrossOut int
	// WriteTx is «Access Check & Writing Data to Device» (32).
	WriteTx int
	// ReadTx is «Access Check & Writing Read Request to Device» (37).
	ReadTx int
	// Dispatch is «MIPS Interrupt Dispatcher» (73).
	Dispatch int
	// Handler is «Device Interrupt Handler» (21).
	Handler int
	// RxWrite is «Reading Data and Writing Destination Addr» (58).
	RxWrite int
	// RxReadReq is «Reading Request, Accessing Memory & Writing Data to
	// Device» (67).
	RxReadReq int
}

// Params are the kernel's software costs.
type Params struct {
	// StepInstrs is Table 1, fixed.
	StepInstrs Table1
	// PerWord is the instructions removed per word below MaxWords from
	// each step that moves the words between the cell and memory (the
	// receiver's copy into the segment, a READ target's copy into the
	// reply): «the incremental cost per word would be 3 or 4
	// instructions» (AT-P15; the lower, Table 1's 10-word path being the
	// reference). The sender's step does not shrink: it writes the whole
	// 14-word cell whatever the count, so a WRITE costs 3 instructions a
	// word in all.
	PerWord int
	// BlockCheck is a block transfer's pointer check per cell (assumed:
	// 20 instructions; section 2.3 names «the overhead of pointer
	// checking» without a count).
	BlockCheck int
	// InhibitInstrs is the write-inhibit call's work besides its crossing
	// (assumed: 10; «efficient revocation of segment write access»,
	// section 3.1.1, gives no count).
	InhibitInstrs int
	// CASTimeout is the compare-and-swap's retransmission timeout
	// (assumed: 400 µs, about nine READ round trips of 45 µs, so a
	// loss-free run never retransmits, and below the simulation's 500 µs
	// progress watchdog, env.DefaultStallLimit, so a processor waiting
	// for a lost reply is not taken for a stuck model).
	CASTimeout clock.Time
	// RxBatch is the cells the handler drains per STATUS read and device
	// handler step (0: all the cells STATUS counts).
	RxBatch int
	// RawPollInstrs and RawSendInstrs are raw mode's user loop (assumed:
	// 6 per STATUS poll, its load included; 10 to build a cell besides the
	// cell's 14 stores; «the address space polls the network
	// constantly», section 2.3). A received cell's load is 14 more.
	RawPollInstrs, RawSendInstrs int
}

// Defaults returns Table 1 and the assumed costs above.
func Defaults() Params {
	return Params{
		// Table 1 (atm-remote-memory-access.txt section 2.3, L88-107).
		StepInstrs: Table1{CrossIn: 13, CrossOut: 12, WriteTx: 32, ReadTx: 37,
			Dispatch: 73, Handler: 21, RxWrite: 58, RxReadReq: 67},
		// «3 or 4 instructions» (AT-P15): the lower.
		PerWord: 3,
		// assumed: 20 instructions of pointer check per cell (section 2.3).
		BlockCheck: 20,
		// assumed: 10 instructions besides the crossing (section 3.1.1).
		InhibitInstrs: 10,
		// assumed: 400 µs, about 9 × the 45 µs READ (section 2.3), below
		// the 500 µs progress watchdog.
		CASTimeout: 400 * clock.Microsecond,
		// derived: 1: «the overhead on the receiving side is on a per cell
		// basis, regardless of the approach» (section 2.3): Table 1's
		// device handler (21) and its STATUS read are per cell; only the
		// dispatcher (73) is paid once per burst («only the first arrival
		// would interrupt», AT-P16).
		RxBatch: 1,
		// assumed: raw mode's user loop (section 2.3, L115).
		RawPollInstrs: 6, RawSendInstrs: 10,
	}
}

// Validate returns an error naming the first invalid parameter.
func (p Params) Validate() error {
	t := p.StepInstrs
	for _, f := range []struct {
		name string
		v    int
	}{{"StepInstrs.CrossIn", t.CrossIn}, {"StepInstrs.CrossOut", t.CrossOut}, {"StepInstrs.WriteTx", t.WriteTx},
		{"StepInstrs.ReadTx", t.ReadTx}, {"StepInstrs.Dispatch", t.Dispatch}, {"StepInstrs.Handler", t.Handler},
		{"StepInstrs.RxWrite", t.RxWrite}, {"StepInstrs.RxReadReq", t.RxReadReq}} {
		if f.v < 1 || f.v > 100000 {
			return fmt.Errorf("rma: %s %d instructions must be in 1..100000", f.name, f.v)
		}
	}
	switch {
	case p.PerWord < 0 || p.PerWord > 100:
		return fmt.Errorf("rma: PerWord %d must be in 0..100", p.PerWord)
	case p.BlockCheck < 0 || p.BlockCheck > 100000:
		return fmt.Errorf("rma: BlockCheck %d must be in 0..100000", p.BlockCheck)
	case p.InhibitInstrs < 0 || p.InhibitInstrs > 100000:
		return fmt.Errorf("rma: InhibitInstrs %d must be in 0..100000", p.InhibitInstrs)
	case p.CASTimeout <= 0 || p.CASTimeout > clock.Second:
		return fmt.Errorf("rma: CASTimeout %d ps must be in (0, 1 s]", p.CASTimeout)
	case p.RxBatch < 0 || p.RxBatch > fore.MaxRxCells:
		return fmt.Errorf("rma: RxBatch %d must be in 0..%d", p.RxBatch, fore.MaxRxCells)
	case p.RawPollInstrs < 1 || p.RawPollInstrs > 100000:
		return fmt.Errorf("rma: RawPollInstrs %d must be in 1..100000", p.RawPollInstrs)
	case p.RawSendInstrs < 1 || p.RawSendInstrs > 100000:
		return fmt.Errorf("rma: RawSendInstrs %d must be in 1..100000", p.RawSendInstrs)
	}
	return nil
}

// Hardware is what a node's kernel drives.
type Hardware struct {
	// CPU is the node's processor: the kernel installs its traps and
	// interrupt program.
	CPU *cpu.CPU
	// Memory is the node's main memory, an untimed backdoor used only by
	// the set-up calls (Export, Import, Revoke, Unpin at t=0) to fill the
	// kernel's tables.
	Memory *mem.Memory
	// Board is the node's TCA-100 and BoardBase its TURBOchannel address
	// as the processor sees it.
	Board     *fore.Board
	BoardBase uint64
	// KernelBase is the kernel's memory (KernelBytes): its stack, the
	// descriptor registers, the segment table and its translation entries.
	KernelBase uint64
	// Node is this node's number and Nodes the cluster's size.
	Node, Nodes int
}

// Trap numbers of the emulated instructions and calls (host/cpu traps).
const (
	TrapWrite = 1 + iota
	TrapRead
	TrapCAS
	TrapBlock
	TrapExport
	TrapImport
	TrapInhibit
)

// Rights are a segment's or descriptor's access rights.
type Rights uint8

// Rights bits.
const (
	// RightRead allows remote READ and CAS reads.
	RightRead Rights = 1 << iota
	// RightWrite allows remote WRITE, block and CAS writes.
	RightWrite
)

// Segment is an exported segment (section 2.1: export (base, size,
// rights)).
type Segment struct {
	ID        uint8
	Base      uint64
	Bytes     int
	Rights    Rights
	Grant     []int // nodes allowed to import it
	Inhibited bool  // write-inhibited (section 2.1 (4))
}

// Desc is a descriptor register's contents: an imported remote segment.
type Desc struct {
	Reg    int
	Node   int
	Seg    uint8
	Bytes  int
	Rights Rights
}

// Status is a trap's result: OK or the refusal reason.
type Status uint64

// Statuses.
const (
	OK Status = iota
	// ErrDesc: an invalid descriptor register or segment.
	ErrDesc
	// ErrRights: the segment does not allow the access.
	ErrRights
	// ErrBounds: offset+count exceeds the segment.
	ErrBounds
	// ErrCount: count outside 1..MaxWords.
	ErrCount
	// ErrTxFull: the TX FIFO has no room (AT-P17's overflow exception).
	ErrTxFull
	// ErrPointer: a block transfer's buffer is outside the process.
	ErrPointer
	// ErrSrcVCI: the cell came on a VC whose source may not use the segment.
	ErrSrcVCI
	// ErrInhibit: the segment is write-inhibited.
	ErrInhibit
	// ErrUnpinned: the page's translation entry is not pinned.
	ErrUnpinned
	// ErrNoRequest: a READ/CAS reply with no outstanding request
	// (receiver only).
	ErrNoRequest
	// ErrOp: a cell whose payload does not decode (receiver only; an
	// addition to the design's list, for forged cells).
	ErrOp
	numStatus
)

// String names the reason as in rma.refuse records.
func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case ErrDesc:
		return "desc"
	case ErrRights:
		return "rights"
	case ErrBounds:
		return "bounds"
	case ErrCount:
		return "count"
	case ErrTxFull:
		return "txfull"
	case ErrPointer:
		return "pointer"
	case ErrSrcVCI:
		return "vci"
	case ErrInhibit:
		return "inhibit"
	case ErrUnpinned:
		return "unpinned"
	case ErrNoRequest:
		return "noreq"
	case ErrOp:
		return "op"
	}
	return fmt.Sprintf("status%d", uint64(s))
}

// EventKind is what a testbench hook event reports.
type EventKind uint8

// Event kinds.
const (
	// EvSend: a cell was written to the TX port (Cell is its id-to-be: 0,
	// the board numbers it).
	EvSend EventKind = iota
	// EvRefuseSend: a trap refused an operation (Reason).
	EvRefuseSend
	// EvRecv: the handler read a cell and accepted it.
	EvRecv
	// EvRefuseRecv: the handler refused a cell (Reason); nothing written.
	EvRefuseRecv
	// EvMemWrite: the handler wrote Data at Addr (physical).
	EvMemWrite
	// EvMemRead: the handler read Data at Addr for a READ or CAS.
	EvMemRead
	// EvCASExec: a CAS executed at its target (Data: old value, then 1 if
	// swapped).
	EvCASExec
	// EvCASDup: a retransmitted CAS answered from the cache.
	EvCASDup
	// EvRetransmit: a CAS request resent after a timeout.
	EvRetransmit
	// EvNotify: an intr=1 delivery notified the owning process.
	EvNotify
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case EvSend:
		return "send"
	case EvRefuseSend:
		return "refuse-send"
	case EvRecv:
		return "recv"
	case EvRefuseRecv:
		return "refuse-recv"
	case EvMemWrite:
		return "mem-write"
	case EvMemRead:
		return "mem-read"
	case EvCASExec:
		return "cas-exec"
	case EvCASDup:
		return "cas-dup"
	case EvRetransmit:
		return "retransmit"
	case EvNotify:
		return "notify"
	}
	return fmt.Sprintf("event%d", uint8(k))
}

// Event is one hook event (synchronous; hooks never change behaviour).
type Event struct {
	Kind EventKind
	// Node is the kernel that reports; Src and Dst the cell's source and
	// destination nodes (Dst -1 for a block refused before any cell).
	Node, Src, Dst int
	Op             Op
	// Desc and Offset (words) are the cell's segment and offset (for a
	// reply, the requester's reply location); Count its words.
	Desc          uint8
	Offset, Count int
	ReqID         uint16
	// Reason is a refusal's.
	Reason Status
	// Addr and Data: EvMemWrite/EvMemRead the physical word and its
	// bytes; EvSend the data bytes the cell's op uses (Payload.UsedBytes);
	// EvCASExec/EvCASDup the old value (4 bytes) and the swapped flag (1
	// byte).
	Addr uint64
	Data []byte
	// Cell is always 0: the board numbers cells (fore.Cell.ID), the
	// kernel never sees the number. A testbench pairs EvRecv with the
	// board's OnPop (the cell the handler read last on that node) and
	// EvSend with its OnTx.
	Cell uint64
}

// Counters count what the kernel did.
type Counters struct {
	// Sent and Received count cells by op (index Op).
	Sent, Received [OpBlock + 1]uint64
	// RefusedSend and RefusedRecv count refusals by reason (index Status).
	RefusedSend, RefusedRecv [numStatus]uint64
	// Interrupts taken; Spurious those that found the RX FIFO empty.
	Interrupts, Spurious uint64
	// Drained[i] counts interrupts that drained i cells (the last bucket
	// i or more).
	Drained [16]uint64
	// CASExec counts CAS requests executed here, CASDup those answered
	// from the cache; Retransmits the CAS requests this node resent and
	// CASFailed those it gave up after MaxCASTries resends; Notifies the
	// intr=1 deliveries.
	CASExec, CASDup, Retransmits, CASFailed, Notifies uint64
}

// Kernel is one node's RMA kernel: its tables live in kernel memory
// (segment records with translation entries, descriptor registers, the
// per-source CAS cache); the Go fields below are bookkeeping the paper's
// kernel keeps in registers or that the set-up calls need.
type Kernel struct {
	hw   Hardware
	p    Params
	env  *env.Env
	path string

	segs    [NumSegments]*Segment
	nextSeg int
	// txFree is the TX FIFO room the last loaded STATUS showed, less the
	// cells stored since.
	txFree int
	// pending are the outstanding READ and CAS requests by id (looked
	// up, never iterated).
	pending map[uint16]*pending
	nextReq uint16
	// lastCAS is the id of the last CAS request sent to each node.
	lastCAS [MaxNodes]uint16
	// inflight are the kernel's word stores not yet in memory (looked
	// up, never iterated).
	inflight map[uint64]*inflightWord
	raw      *Raw

	onNotify func(p *cpu.Proc, seg uint8, off, n int)
	onEvent  func(now clock.Time, ev Event)
	counters Counters
	// noBounds is the rma.no-bounds mutation (a test-only fault).
	noBounds bool
}

// mutNoBounds is a test-only fault (see env.DeclareMutation).
var mutNoBounds = env.DeclareMutation("rma.no-bounds",
	"the RMA kernel's receive handler skips its bounds check (any N > 0): a cell's words past the end of the "+
		"exported segment are written where its translation entries point, or refused for another reason "+
		"(caught by atmtb's protection checker, rma.protect)")

// pending is an outstanding READ or CAS request.
type pending struct {
	op         Op // OpReadReq or OpCASReq
	target     int
	desc       uint8 // local reply segment
	off, count int
	done       bool
	old        uint32
	swapped    bool
	intr       bool
}

// NewKernel validates hw and p, installs traps TrapWrite..TrapInhibit and
// the interrupt program, and starts a boot program that enables the
// board's RX interrupt (one store to CONTROL).
func NewKernel(hw Hardware, p Params) (*Kernel, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	switch {
	case hw.CPU == nil:
		return nil, fmt.Errorf("rma: Hardware.CPU is nil")
	case hw.Memory == nil:
		return nil, fmt.Errorf("rma: Hardware.Memory is nil")
	case hw.Board == nil:
		return nil, fmt.Errorf("rma: Hardware.Board is nil")
	case hw.Nodes < 1 || hw.Nodes > MaxNodes:
		return nil, fmt.Errorf("rma: Hardware.Nodes %d must be in 1..%d", hw.Nodes, MaxNodes)
	case hw.Node < 0 || hw.Node >= hw.Nodes:
		return nil, fmt.Errorf("rma: Hardware.Node %d must be in 0..%d", hw.Node, hw.Nodes-1)
	case hw.KernelBase%PageBytes != 0 || hw.KernelBase+KernelBytes > hw.Memory.Storage().Size():
		return nil, fmt.Errorf("rma: Hardware.KernelBase %#x must be page aligned with %d bytes of memory after it", hw.KernelBase, KernelBytes)
	case hw.BoardBase%4 != 0:
		return nil, fmt.Errorf("rma: Hardware.BoardBase %#x must be word aligned", hw.BoardBase)
	}
	k := &Kernel{hw: hw, p: p, env: hw.CPU.Env(), path: fmt.Sprintf("N%d.RMA", hw.Node),
		pending: map[uint16]*pending{}, nextReq: 1, txFree: hw.Board.Config().TxCells,
		inflight: map[uint64]*inflightWord{}}
	k.noBounds = k.env.Mutation(mutNoBounds) > 0
	hw.Memory.SubscribeWrites(k.landed)
	// Clear the kernel's tables (untimed: the kernel's memory at boot).
	if err := hw.Memory.Storage().Write(hw.KernelBase, make([]byte, KernelBytes)); err != nil {
		return nil, fmt.Errorf("rma: kernel memory: %w", err)
	}
	c := hw.CPU
	c.SetTrapHandler(TrapWrite, cpu.Sequential(k.trapWrite))
	c.SetTrapHandler(TrapRead, cpu.Sequential(k.trapRead))
	c.SetTrapHandler(TrapCAS, cpu.Sequential(k.trapCAS))
	c.SetTrapHandler(TrapBlock, cpu.Sequential(k.trapBlock))
	c.SetTrapHandler(TrapInhibit, cpu.Sequential(k.trapInhibit))
	c.SetInterruptProgram(k.interrupt)
	c.Run(cpu.Go(func(p *cpu.Proc) {
		p.As("rma.boot").Store32(hw.BoardBase+fore.RegControl, fore.ControlIRQEnable)
	}))
	return k, nil
}

// Params returns the kernel's parameters.
func (k *Kernel) Params() Params { return k.p }

// Hardware returns what the kernel drives.
func (k *Kernel) Hardware() Hardware { return k.hw }

// OnNotify sets the intr=1 delivery hook (section 2.1 (5) interrupt
// control): the owning process is told which words of which of its
// segments landed; p is the kernel's handler program (costed work the
// hook issues runs in the handler).
func (k *Kernel) OnNotify(fn func(p *cpu.Proc, seg uint8, off, n int)) { k.onNotify = fn }

// Done reports whether the reply of READ/CAS request id has landed.
func (k *Kernel) Done(id uint16) bool {
	pd := k.pending[id]
	return pd != nil && pd.done
}

// OnEvent sets the testbench hook (synchronous; it must not change
// behaviour).
func (k *Kernel) OnEvent(fn func(now clock.Time, ev Event)) { k.onEvent = fn }

// Counters returns the kernel's counters.
func (k *Kernel) Counters() Counters { return k.counters }

// Path is the kernel's name in trace records ("N<i>.RMA").
func (k *Kernel) Path() string { return k.path }
