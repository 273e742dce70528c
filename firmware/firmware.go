// Package firmware is the framework NI control programs are written in: a
// program is a set of explicit state machines (one per module of the
// control program, figure 4 of lci-myrinet-cluster-protocols.txt) that the
// NI processor drives from its main loop.
//
// The processor (lanai.Card's) polls its hardware event sources in the
// order the program gives (PollOrder) and hands the first event it finds to
// the program's Handle. Handle fires transitions of its machines; each
// transition is charged a cost in NI processor cycles (a parameter of the
// program, with a source or a `calibrated:` mark) and may charge more for
// work that depends on the data (Ctx.Charge). The program reads and writes
// NI SRAM at once (functionally) but its SRAM traffic is timed through the
// processor's SRAM port, where it competes with the DMA engines, while its
// cycles run (the loads and stores are among its instructions, so SRAM
// adds time only when the engines hold it). Hardware commands (start a
// DMA, transmit a packet, arm the receive engine, raise the interrupt, set
// the timer) are issued when the handler is done, as the real code would
// issue them at its end; the processor handles nothing else meanwhile. A
// handler may also make the processor busy-wait on one event source
// (Ctx.SpinUntil), as code that polls a DMA's done bit.
//
// A program sees only what the real control program sees: NI SRAM, the DMA
// engines and their completions, packet arrivals, the timer and the
// interrupt line (the NI interface below). Host memory is reachable only
// through the host DMA engine.
//
// Every machine's state is a waveform signal, every state change a trace
// record (fw.state), and a transition the table does not allow is a checker
// error (fw.transition), never a silent no-op. The machine is rtl/fsm's,
// driven here by the handler context (Ctx is its fsm.Driver); hardware
// controllers drive the same machine from their own clock.
package firmware

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
)

// EventKind is a hardware event source the main loop polls.
type EventKind uint8

// Hardware events.
const (
	// HostWrite: the host wrote (by PIO) into a part of SRAM the program
	// watches (Addr, Len: the watched range): the main loop's poll of a
	// host queue finds something new. Writes coalesce: until the event
	// is handled, further writes to the range raise no other.
	HostWrite EventKind = iota
	// HostDMADone: a host DMA has completed (Tag).
	HostDMADone
	// SendDone: the send DMA engine has handed a packet's tail to the
	// link (Tag); its SRAM buffer may be reused.
	SendDone
	// RecvDone: the receive DMA engine has stored a whole packet (Addr,
	// Len; Bad if its CRC failed) in the buffer it was armed with.
	RecvDone
	// Timer: the interval timer expired.
	Timer
	// NumEventKinds is the number of event kinds.
	NumEventKinds
)

var kindNames = [...]string{"HostWrite", "HostDMADone", "SendDone", "RecvDone", "Timer"}

func (k EventKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// HWEvent is one hardware event.
type HWEvent struct {
	Kind EventKind
	// Tag is a DMA's or a sent packet's tag; for RecvDone, the link-level
	// packet number.
	Tag  uint64
	Addr uint32
	Len  int
	Bad  bool
	// Src is, for RecvDone, the sending node as the link layer knows it
	// (trustworthy even when the packet's CRC failed).
	Src int
	// At is when the hardware raised it.
	At clock.Time
}

// Dir is a host DMA direction.
type Dir uint8

// Host DMA directions.
const (
	ToNI   Dir = iota // host memory to SRAM
	ToHost            // SRAM to host memory
)

// HostDMA is a host DMA request.
type HostDMA struct {
	Dir      Dir
	HostAddr uint64
	SRAM     uint32
	Len      int
	// Tag comes back in the HostDMADone event every transfer raises.
	Tag uint64
}

// Packet is a transmit request for the send DMA engine: Len bytes at SRAM
// go to node Dst (the card adds the source route).
type Packet struct {
	Dst  int
	SRAM uint32
	Len  int
	Tag  uint64
}

// NI is the hardware as the control program sees it. Queries answer for
// the moment the handler started; the lanai card implements it.
type NI interface {
	// Node is this NI's node number; Nodes the cluster size.
	Node() int
	Nodes() int
	// SRAMSize is the size of NI memory in bytes.
	SRAMSize() uint32
	// ReadSRAM and WriteSRAM access NI memory (untimed: the Ctx charges
	// the bytes to the processor's SRAM port).
	ReadSRAM(addr uint32, n int) ([]byte, error)
	WriteSRAM(addr uint32, data []byte) error
	// Watch makes host PIO writes into [addr, addr+n) raise HostWrite.
	Watch(addr uint32, n int)
	// HostDMAFree and SendFree are the free descriptor slots of the host
	// and send DMA engines.
	HostDMAFree() int
	SendFree() int
	// RecvArmed reports whether the receive engine has a buffer.
	RecvArmed() bool
	// Commands, issued at the end of a handler.
	StartHostDMA(now clock.Time, d HostDMA)
	StartSend(now clock.Time, p Packet)
	ArmRecv(now clock.Time, sram uint32, max int)
	SetTimer(now clock.Time, cycles int)
	CancelTimer(now clock.Time)
	Interrupt(now clock.Time)
}
