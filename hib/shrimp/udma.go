package shrimp

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
)

// The UDMA initiation (deliberate update, SH-P12, SH-P13; the mechanism is
// the paper's reference [10], which we lack: what the project has of it is
// archvlsi.ics.forth.gr/html_papers/HPCA97/node8.html: «The STORE
// instruction is used to pass to the SHRIMP interface the physical address
// that corresponds to virtual address vdestination, and the size of the DMA
// transfer. The LOAD operation is used to pass to the SHRIMP interface the
// physical address that corresponds to virtual address vsource, and to
// return the status of the DMA initiation», and «the operating system must
// invalidate any partial initiated user-level DMA transfer on every context
// switch»). The rest is assumed, each point with its reason:
//
//   - Two states, Idle and DestLoaded. A STORE to the device proxy latches
//     the destination (OPT index and page offset, from its address) and the
//     count and notify bit (from its data) and enters DestLoaded; a STORE in
//     DestLoaded replaces them (assumed: the last STORE wins, so a process
//     that was descheduled between the references and retries needs no
//     extra reference).
//   - The STORE's data word (assumed layout): bits 0..23 the count in bytes,
//     bit 31 the notify bit (L103: DU «allows the bit to be dynamically set
//     as part of an explicit transfer initiation»). Only the first 4 bytes
//     of a STORE count; a narrower STORE reads as zero-extended.
//   - A LOAD of the memory proxy at MemProxy + phys names the source phys and
//     returns the Status word (little-endian, in every 4 bytes the LOAD
//     reads). In Idle: Error|CauseNoDest. In DestLoaded the request is
//     checked: count 0 or above DUMaxBytes: CauseSize; source or destination
//     range crossing a page (SH-P13, L279 «cannot cross local or remote page
//     boundaries»): CauseCross; destination OPT entry not Valid: CauseOPT.
//     Any cause: Error with every cause found, back to Idle, no DMA
//     (assumed: a refused request is consumed). Otherwise, if the engine
//     and the queue are full (1 + DUQueue transfers accepted and not yet
//     done, du.go): Busy, staying in DestLoaded (assumed: the process
//     retries the LOAD, or the pair). Otherwise Started: the transfer is
//     handed to the DU engine (du.go), back to Idle.
//   - The status is decided when the LOAD is served, StatusWaitCycles EISA
//     cycles after its address phase (the channel register is the first of
//     them, so 0 acts as 1; design section 2: «status after 1 EISA wait
//     state»).
//   - RegInval (csr.go) returns the FSM to Idle: the kernel's store on a
//     context switch.
//   - A LOAD of the device proxy reads zero and a STORE to the memory proxy
//     is ignored (assumed: the memory-to-network direction is the only one
//     the NI implements); both are traced.

// Test-only faults of the UDMA (see env.DeclareMutation).
var (
	mutNoInval = env.DeclareMutation("shrimp.udma-noinval",
		"every Nth RegInval store is ignored, so a destination latched by one process survives a context switch "+
			"and another process's LOAD starts a transfer to it (caught by the protection monitor)")
	mutDUCross = env.DeclareMutation("shrimp.du-cross",
		"every Nth UDMA request that crosses a local or remote page is started instead of refused "+
			"(caught by the protection monitor)")
)

// UDMA STORE data word layout (assumed).
const (
	// UDMACountMask selects the count in a UDMA STORE's data word.
	UDMACountMask uint32 = 1<<24 - 1
	// UDMANotify is the notify bit of a UDMA STORE's data word.
	UDMANotify uint32 = 1 << 31
)

// UDMAState is the UDMA initiation FSM's state.
type UDMAState uint8

const (
	// UDMAIdle: no destination latched.
	UDMAIdle UDMAState = iota
	// UDMADestLoaded: a STORE latched a destination and count.
	UDMADestLoaded
)

// String names the state as waves and traces print it.
func (s UDMAState) String() string {
	if s == UDMADestLoaded {
		return "DEST"
	}
	return "IDLE"
}

// String renders a status word as its flags and causes.
func (s Status) String() string {
	out := ""
	add := func(b Status, name string) {
		if s&b != 0 {
			if out != "" {
				out += "|"
			}
			out += name
		}
	}
	add(StatusStarted, "started")
	add(StatusBusy, "busy")
	add(StatusError, "error")
	add(CauseNoDest, "nodest")
	add(CauseCross, "cross")
	add(CauseSize, "size")
	add(CauseOPT, "opt")
	if out == "" {
		return fmt.Sprintf("status(%#x)", uint32(s))
	}
	return out
}

// udma is the initiation FSM's state.
type udma struct {
	state  UDMAState
	opt    int    // latched OPT index
	off    uint64 // latched offset in the destination page
	count  int
	notify bool
	last   Status // status of the last LOAD

	invals, crossings int // for the mutations
}

// devStore is a STORE beat to the device proxy at window offset addr.
func (n *NI) devStore(now clock.Time, addr uint64, data []byte) {
	u := &n.du.udma
	p := n.du.devPort.cur
	if addr != p.Addr {
		return // later beats of a wider STORE: only the first word counts
	}
	var w [4]byte
	copy(w[:], data)
	v := binary.LittleEndian.Uint32(w[:])
	pb := uint64(n.cfg.PageBytes)
	u.state, u.opt, u.off = UDMADestLoaded, int(addr/pb), addr%pb
	u.count, u.notify = int(v&UDMACountMask), v&UDMANotify != 0
	n.du.sigUDMA.SetString(now, u.state.String())
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.udma", trace.Str("op", "store"),
			trace.Int("opt", int64(u.opt)), trace.Uint("off", u.off), trace.Int("count", int64(u.count)),
			trace.Bool("notify", u.notify))
	}
}

// devLoad is a LOAD of the device proxy: zero.
func (n *NI) devLoad(now clock.Time, addr uint64, k int) []byte {
	n.traceIgnored(now, "devload", addr, k)
	return make([]byte, k)
}

// memStore is a STORE to the memory proxy: ignored.
func (n *NI) memStore(now clock.Time, addr uint64, data []byte) {
	n.traceIgnored(now, "memstore", addr, len(data))
}

func (n *NI) traceIgnored(now clock.Time, op string, addr uint64, k int) {
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.udma", trace.Str("op", op),
			trace.Addr("addr", addr), trace.Int("len", int64(k)))
	}
}

// memLoad is a LOAD of the memory proxy at phys: the second reference. It
// returns the status word in every 4 bytes of the k read.
func (n *NI) memLoad(now clock.Time, phys uint64, k int) []byte {
	st := n.initiate(now, phys)
	out := make([]byte, k)
	var w [4]byte
	binary.LittleEndian.PutUint32(w[:], uint32(st))
	for i := range out {
		out[i] = w[(phys+uint64(i))%4]
	}
	return out
}

// initiate runs the FSM for a LOAD naming source phys and returns the
// status.
func (n *NI) initiate(now clock.Time, phys uint64) Status {
	d := &n.du
	u := &d.udma
	c := n.cfg
	var st Status
	switch {
	case u.state == UDMAIdle:
		st = StatusError | CauseNoDest
	default:
		pb := uint64(c.PageBytes)
		if u.count < 1 || u.count > c.DUMaxBytes {
			st |= CauseSize
		}
		if phys%pb+uint64(u.count) > pb || u.off+uint64(u.count) > pb {
			u.crossings++
			// The mutation shrimp.du-cross skips the check on every Nth.
			if skip := d.crossEvery > 0 && u.crossings%d.crossEvery == 0; !skip {
				st |= CauseCross
			}
		}
		e := n.optEntry(u.opt)
		if !e.Valid {
			st |= CauseOPT
		}
		switch {
		case st != 0:
			st |= StatusError
		case n.duFull():
			st = StatusBusy
		default:
			n.duStart(now, duReq{src: phys, opt: u.opt, dstNode: e.DstNode,
				dstAddr: uint64(e.DstPage)*pb + u.off, n: u.count, notify: u.notify})
			st = StatusStarted
		}
	}
	switch {
	case st&StatusError != 0:
		n.counters.UDMAErrors++
		k := u.count
		if st&CauseNoDest != 0 {
			k = 0 // no count was latched
		}
		n.drop(now, Drop{Reason: DropUDMA, Addr: phys, Len: k})
		u.state = UDMAIdle
	case st&StatusBusy != 0:
		n.counters.UDMABusy++
	default:
		n.counters.UDMAStarts++
		u.state = UDMAIdle
	}
	u.last = st
	d.sigUDMA.SetString(now, u.state.String())
	d.sigStatus.Set(now, uint64(st))
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.udma", trace.Str("op", "load"),
			trace.Addr("src", phys), trace.Int("count", int64(u.count)), trace.Str("status", st.String()))
	}
	return st
}

// invalidate is the kernel's RegInval store: the FSM returns to Idle
// (unless the shrimp.udma-noinval mutation skips it).
func (n *NI) invalidate(now clock.Time) {
	d := &n.du
	u := &d.udma
	if u.invals++; d.noInvalEvery > 0 && u.invals%d.noInvalEvery == 0 {
		return // mutation shrimp.udma-noinval
	}
	was := u.state
	u.state = UDMAIdle
	d.sigUDMA.SetString(now, u.state.String())
	if n.env.Trace.Enabled() {
		n.env.Trace.Emit(now, n.eisa.Clock().CycleAt(now), n.name, "shrimp.udma", trace.Str("op", "inval"),
			trace.Str("was", was.String()))
	}
}

// UDMA returns the initiation FSM's state and the status of the last LOAD.
func (n *NI) UDMA() (UDMAState, Status) { return n.du.udma.state, n.du.udma.last }
