// Package vmmc is Virtual Memory-Mapped Communication on the SHRIMP
// network interface (hib/shrimp): the thin user-level library and the
// kernel parts it needs (shrimp-design-choices.txt section 2.2 «Buffers
// and Import/Export», «Deliberate Update», «Automatic Update»,
// «Notifications», and their implementation in section 2.3), written as
// sequential host programs (docs/host-programs.md) that a testbench runs
// on a node's processor.
//
//   - Export pins a receive buffer and marks its pages exported in the
//     Incoming Page Table (IPT), with the interrupt bit when the process
//     wants notifications (section 2.3 «Buffers and Import/Export»,
//     «Notifications»).
//   - Import gives each page of the remote buffer an Outgoing Page Table
//     (OPT) entry pointing at the remote physical page, and maps the
//     entry's device-proxy page into the process (section 2.3; the proxy
//     page's mapping is the protection of section 4.5.3).
//   - Bind turns a page-aligned local range write-through and enables its
//     OPT entries (one per physical page) for automatic update (sections
//     2.2, 2.3 «Automatic Update»).
//   - Send is a deliberate update: the two-reference user-level DMA
//     initiation per piece that neither crosses a local nor a remote page
//     (section 4.5.3), synchronous or asynchronous.
//   - The kernel's interrupt handler takes the outgoing FIFO's threshold
//     interrupt and deschedules the automatic-update writer until the FIFO
//     has drained to FIFOResume (section 4.5.2), and delivers
//     notifications, queued while the process blocks them (section 2.2).
//   - ContextSwitch invalidates a half-made UDMA initiation (the UDMA
//     paper via the design's header: «invalidate any partial initiated
//     user-level DMA transfer on every context switch»); ReplacePage
//     refuses a page the DU queue's CAM names (section 4.5.3).
//
// One user process runs per processor (issue 14 design R6: host/cpu has
// no scheduler): «de-scheduling» the writer is the kernel's handler
// holding the processor while it polls the FIFO's occupancy.
package vmmc

import (
	"errors"
	"fmt"
)

// The receive-interrupt modes of Table 4 (shrimp-design-choices.txt
// section 4.4): none (VMMC polls, the default), an interrupt for every
// arriving message, or for every packet.
const (
	RecvNone    = "none"
	RecvMessage = "message"
	RecvPacket  = "packet"
)

// Params are the library's and the kernel's software costs and the
// design-choice switches of sections 4.3 to 4.5.
type Params struct {
	// SendInstrs is the instructions of the library's send path before
	// its first proxy reference (proxy address arithmetic, size and
	// alignment checks), at the processor's CPI.
	SendInstrs int
	// SendSyscall makes every send a system call first (Table 2's
	// experiment, section 4.3: «call this kernel driver before each
	// message send»).
	SendSyscall bool
	// AsyncSend makes Send return once every piece has started
	// (section 4.5.3 «asynchronous sends, i.e. the send operation returned
	// without waiting until the data was sent to the network»); Wait then
	// waits for them. Otherwise Send waits for its last piece.
	AsyncSend bool
	// RecvInterrupt is RecvNone, RecvMessage or RecvPacket (Table 4).
	RecvInterrupt string
	// FIFOResume is the outgoing FIFO occupancy in bytes at or below
	// which a descheduled automatic-update writer resumes; 0 takes half
	// the NI's threshold.
	FIFOResume int
	// ResumePollCycles is the processor cycles between two reads of the
	// FIFO occupancy while the writer is descheduled.
	ResumePollCycles int
	// KernelInstrs is the instructions of a kernel handler's own work
	// (finding the process, queueing a notification, a page-table
	// update), at the processor's CPI.
	KernelInstrs int
	// ProxyPages is the number of OPT entries (the top physical pages)
	// the kernel keeps for imported pages; 0 takes 1/ProxyPoolFraction of
	// them. A system importing every node's shared region (the SVM
	// protocols, host/svm) needs more than the default quarter.
	ProxyPages int
}

// DefaultParams are the costs of issue 14 design section 2, each with its
// source.
func DefaultParams() Params {
	return Params{
		// assumed: 20 instructions (design section 2 and R13): the proxy
		// address arithmetic and the size and alignment checks of a send;
		// the paper gives the send overhead (< 2 µs, section 4.3), not the
		// library's length.
		SendInstrs: 20,
		// shrimp-design-choices.txt section 4.3: SHRIMP's sends are
		// user-level; the system call is Table 2's what-if.
		SendSyscall: false,
		// assumed: synchronous; the paper's applications' default is not
		// given, and section 4.5.3 turns asynchronous sends on for its
		// experiment.
		AsyncSend: false,
		// shrimp-design-choices.txt section 4.4: «the sockets and VMMC
		// applications do not use notifications at all. Instead, they rely
		// on polling».
		RecvInterrupt: RecvNone,
		// assumed: 0, half the NI's threshold (design section 2: «resume
		// at threshold/2»): hysteresis so that the writer is not
		// descheduled again at once.
		FIFOResume: 0,
		// assumed: 60 processor cycles, 1 µs at 60 MHz (design R6): a
		// register read over EISA takes about 0.5 µs, so the poll keeps
		// the EISA bus mostly free for the draining NI.
		ResumePollCycles: 60,
		// assumed: 50 instructions per handler (the VMMC papers give no
		// kernel path lengths; the interrupt entry and return are the
		// platform's OSCosts).
		KernelInstrs: 50,
	}
}

// Validate returns an error naming the first bad parameter.
func (p Params) Validate() error {
	switch {
	case p.SendInstrs < 0:
		return fmt.Errorf("vmmc: SendInstrs %d must not be negative", p.SendInstrs)
	case p.RecvInterrupt != RecvNone && p.RecvInterrupt != RecvMessage && p.RecvInterrupt != RecvPacket:
		return fmt.Errorf("vmmc: RecvInterrupt %q must be %s, %s or %s", p.RecvInterrupt, RecvNone, RecvMessage, RecvPacket)
	case p.FIFOResume < 0:
		return fmt.Errorf("vmmc: FIFOResume %d must not be negative", p.FIFOResume)
	case p.ResumePollCycles < 1:
		return fmt.Errorf("vmmc: ResumePollCycles %d must be at least 1", p.ResumePollCycles)
	case p.KernelInstrs < 0:
		return fmt.Errorf("vmmc: KernelInstrs %d must not be negative", p.KernelInstrs)
	case p.ProxyPages < 0:
		return fmt.Errorf("vmmc: ProxyPages %d must not be negative", p.ProxyPages)
	}
	return nil
}

// Errors of the library and the kernel.
var (
	// ErrDUPending is ReplacePage's refusal: the NI's CAM names the page
	// in a queued or running deliberate update (section 4.5.3: «the
	// operating system must avoid replacing any page that is involved in a
	// pending transfer request»).
	ErrDUPending = errors.New("vmmc: page is in a pending deliberate update")
	// ErrUDMA is a send piece the NI refused (its status had the error
	// bit); the wrapped message names the cause.
	ErrUDMA = errors.New("vmmc: user-level DMA refused")
	// ErrNotRunning is a send by a process the kernel is not running:
	// the processor has the running process's page table, where the
	// sender's device-proxy pages are not mapped, so its UDMA STORE would
	// fault and the pair be refused for ever (a testbench that made two
	// processes on one processor must ContextSwitch to the sender first).
	ErrNotRunning = errors.New("vmmc: the process is not running")
	// ErrAlign is a send with a piece whose destination lies at byte 5, 6
	// or 7 of an 8-byte word: its UDMA STORE (whose address names the
	// destination) would span two memory-bus beats, which the Pentium
	// splits into two bus writes, two STOREs to the NI. The library
	// refuses it before any reference. It happens only when an unaligned
	// source crosses a page: the piece after the crossing starts where
	// the source's page ended.
	ErrAlign = errors.New("vmmc: a UDMA STORE would span two bus beats")
	// ErrNotImporter is a send through a proxy another process imported:
	// its device-proxy pages are not in the sender's page table (section
	// 4.5.3: the proxy mapping is the protection), so the STORE would
	// fault.
	ErrNotImporter = errors.New("vmmc: the proxy belongs to another process")
)

// Piece is one user-level DMA transfer of a send: Len bytes from local
// address Src to offset Off of the proxy buffer.
type Piece struct {
	Src, Off uint64
	Len      int
}

// Pieces splits a send of n bytes from local address src to byte off of
// a remote buffer starting at physical address dst into transfers that
// cross neither a local nor a remote page and are at most maxBytes long
// (section 4.5.3: «deliberate update transfers cannot cross local or
// remote page boundaries ... large data transfers must be performed as
// multiple, individual deliberate update transfers»).
func Pieces(src, dst, off uint64, n, pageBytes, maxBytes int) []Piece {
	var out []Piece
	pb := uint64(pageBytes)
	for n > 0 {
		l := min(n, maxBytes, int(pb-src%pb), int(pb-(dst+off)%pb))
		out = append(out, Piece{Src: src, Off: off, Len: l})
		src += uint64(l)
		off += uint64(l)
		n -= l
	}
	return out
}
