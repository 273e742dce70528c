package mcadapter

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/star"
)

// DropReason says why a packet (or a write) went nowhere.
type DropReason uint8

const (
	// TxInvalidPage: a PCI write into a window page whose transmit entry
	// is invalid (issue 13 section 1); nothing leaves the adapter.
	TxInvalidPage DropReason = iota + 1
	// RxUnmapped: a received packet for a global page this adapter's
	// receive table does not map (the broadcast receive filter).
	RxUnmapped
	// RxCRC: a received packet whose tail failed the link CRC.
	RxCRC
)

// String names the reason as traces and reports print it.
func (r DropReason) String() string {
	switch r {
	case TxInvalidPage:
		return "tx-invalid-page"
	case RxUnmapped:
		return "rx-unmapped"
	case RxCRC:
		return "rx-crc"
	}
	return fmt.Sprintf("drop-reason-%d", uint8(r))
}

// Drop is one write or packet dropped by the adapter, with its reason.
// For TxInvalidPage, Page is the window page and Addr the window address;
// otherwise Page is the global page, Addr the global address, and Src,
// Seq and Order name the packet.
type Drop struct {
	Reason DropReason
	Src    int
	Seq    uint64
	Order  uint64
	Page   int
	Addr   uint64
	Len    int
}

// Counters are the adapter's event counters (readable through the CSRs).
type Counters struct {
	// TxPackets and TxBytes count packets handed to the link and their
	// data bytes.
	TxPackets, TxBytes uint64
	// TxInvalid counts writes dropped on an invalid transmit page.
	TxInvalid uint64
	// PIOReads counts PIO reads of the transmit window (answered with a
	// bus error: MC1 has no remote read, MC-P3).
	PIOReads uint64
	// TxRetries counts address phases refused because the TX FIFO had no
	// room for the burst (PCI target retry).
	TxRetries uint64
	// TxWaitCycles counts wait states the TX FIFO write port inserted.
	TxWaitCycles uint64
	// RxPackets and RxBytes count received packets accepted by the filter
	// and their data bytes.
	RxPackets, RxBytes uint64
	// RxUnmapped counts received packets for pages not mapped here.
	RxUnmapped uint64
	// RxCRC counts received packets dropped for a link CRC error.
	RxCRC uint64
	// RxDMAs counts receive DMA descriptors completed (one per packet).
	RxDMAs uint64
}

// Cause bits of the status register.
const (
	// CauseTxInvalid: a write to an invalid transmit page was dropped;
	// Status.Page holds the window page.
	CauseTxInvalid uint32 = 1 << iota
	// CauseRxCRC: a received packet failed the link CRC and was dropped;
	// Status.Page holds the global page its header named.
	CauseRxCRC
)

// Status is the error status register: latched causes, the page of the
// last fault, and whether the interrupt line is asserted. Page is the
// window page of a transmit fault (CauseTxInvalid) or the global page in
// the header of a packet dropped for its link CRC (CauseRxCRC), whichever
// came last; it is 0 while neither cause is latched.
type Status struct {
	Cause   uint32
	Page    int
	Pending bool
}

// Builder configures an Adapter. It is a value type: every With method
// returns a changed copy.
type Builder struct {
	env  *env.Env
	clk  clock.Clock
	cfg  Config
	node int
}

// MakeBuilder returns a builder with MC1 and node 0; WithEnv and
// WithClock are required.
func MakeBuilder() Builder { return Builder{cfg: MC1()} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithClock sets the adapter clock: the PCI bus clock it sits on
// (assumed: one clock domain on the card; the paper gives none).
func (b Builder) WithClock(c clock.Clock) Builder { b.clk = c; return b }

// WithConfig sets the hardware parameters.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithNode sets the adapter's node number, the Src of its packets.
func (b Builder) WithNode(id int) Builder { b.node = id; return b }

// Validate checks every parameter; the error names it.
func (b Builder) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("mcadapter: no env (WithEnv)")
	case !b.clk.Valid():
		return errors.New("mcadapter: no clock (WithClock)")
	case b.node < 0 || b.node >= MaxAdapters:
		return fmt.Errorf("mcadapter: node %d must be in 0..%d", b.node, MaxAdapters-1)
	}
	return b.cfg.Validate()
}

// Adapter is one Memory Channel PCI adapter (section 2.1): a PCI target
// for the transmit window and the CSRs, the transmit page table and
// packetiser feeding its link to the hub, and the receive filter, FIFO
// and DMA master writing received packets into host memory. It ticks on
// the PCI clock.
type Adapter struct {
	*clock.Ticking
	name string
	env  *env.Env
	cfg  Config
	node int

	// TxTable and RxTable are the page tables (also written through the
	// CSRs).
	TxTable *TxPageTable
	RxTable *RxPageTable

	send, recv *link.Dir

	tx  txPath
	rx  rxPath
	csr csrBlock

	counters Counters
	status   Status

	onIRQ func(now clock.Time)
	// onRxIRQ is the receive interrupt (RxEntry.Interrupt).
	onRxIRQ func(now clock.Time, gpage int)
	onTx    func(now clock.Time, w *mchub.Write, data []byte)
	onRx    func(now clock.Time, w *mchub.Write, hostAddr uint64, data []byte)
	onDrop  func(now clock.Time, d Drop)
}

// Build creates the adapter named name; AttachPCI and ConnectLink wire it.
func (b Builder) Build(name string) (*Adapter, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := b.cfg
	tt, err := MakeTxPageTableBuilder().WithPageBytes(c.PageBytes).WithPages(c.TxPages).WithGlobalPages(c.GlobalPages).Build(name + ".TxTable")
	if err != nil {
		return nil, err
	}
	rt, err := MakeRxPageTableBuilder().WithPageBytes(c.PageBytes).WithPages(c.GlobalPages).WithHostBytes(c.HostBytes).Build(name + ".RxTable")
	if err != nil {
		return nil, err
	}
	a := &Adapter{name: name, env: b.env, cfg: c, node: b.node, TxTable: tt, RxTable: rt}
	a.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, a)
	if err := a.buildTx(); err != nil {
		return nil, err
	}
	if err := a.buildRx(); err != nil {
		return nil, err
	}
	if err := a.buildCSR(); err != nil {
		return nil, err
	}
	b.env.Register(a)
	return a, nil
}

// Name returns the adapter's hierarchical name.
func (a *Adapter) Name() string { return a.name }

// Node returns the adapter's node number.
func (a *Adapter) Node() int { return a.node }

// Config returns the hardware parameters.
func (a *Adapter) Config() Config { return a.cfg }

// AttachPCI makes the adapter a target on pci for the transmit window
// [txBase, txBase+WindowBytes) and the CSR window [csrBase,
// csrBase+CSRBytes), and adds its receive DMA as a master. Call it once,
// before the run.
func (a *Adapter) AttachPCI(pci *bus.Bus, txBase, csrBase uint64) error {
	if pci == nil {
		return fmt.Errorf("%s: AttachPCI: no bus", a.name)
	}
	if err := a.attachTx(pci, txBase); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if err := a.attachRx(pci); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if err := a.attachCSR(pci, csrBase); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	return nil
}

// ConnectLink connects the adapter to its hub port (side A of star link
// i): it sends on p.Send and receives from p.Recv.
func (a *Adapter) ConnectLink(p star.Port) error {
	if p.Send == nil || p.Recv == nil {
		return fmt.Errorf("%s: ConnectLink: port without links", a.name)
	}
	if a.send != nil {
		return fmt.Errorf("%s: ConnectLink: already connected", a.name)
	}
	p.Connect(a)
	a.send, a.recv = p.Send, p.Recv
	return nil
}

// MapTx writes transmit entry idx (window page idx sends to global page
// gpage, with loop-back or not): the CSR write software makes, done
// through the back door (for set-up before the run).
func (a *Adapter) MapTx(idx int, gpage int, loopback bool) error {
	return a.TxTable.Set(idx, TxEntry{Valid: true, GlobalPage: gpage, LoopBack: loopback})
}

// UnmapTx invalidates transmit entry idx.
func (a *Adapter) UnmapTx(idx int) error { return a.TxTable.Set(idx, TxEntry{}) }

// MapRx maps global page gpage for receive into the host frame at
// hostFrame (page-aligned host physical address).
func (a *Adapter) MapRx(gpage int, hostFrame uint64) error {
	return a.RxTable.Set(gpage, RxEntry{Valid: true, HostFrame: hostFrame})
}

// UnmapRx stops receiving global page gpage.
func (a *Adapter) UnmapRx(gpage int) error { return a.RxTable.Set(gpage, RxEntry{}) }

// MapRxInterrupt is MapRx with the page's receive interrupt on: every
// packet for it, once written into host memory, calls the function set
// by OnReceiveInterrupt (RxEntry.Interrupt: an assumed attribute).
func (a *Adapter) MapRxInterrupt(gpage int, hostFrame uint64) error {
	return a.RxTable.Set(gpage, RxEntry{Valid: true, HostFrame: hostFrame, Interrupt: true})
}

// OnReceiveInterrupt sets the function called, with the packet's global
// page, when a packet for a page mapped with RxEntry.Interrupt has been
// written into host memory (its last DMA descriptor completed, applied at
// the adapter's next edge). It is not the error line of OnInterrupt: the
// status register and its causes are untouched.
func (a *Adapter) OnReceiveInterrupt(fn func(now clock.Time, gpage int)) { a.onRxIRQ = fn }

// OnInterrupt sets the function called when the interrupt line rises.
func (a *Adapter) OnInterrupt(fn func(now clock.Time)) { a.onIRQ = fn }

// OnTx sets the function called when a packet leaves the packetiser for
// the link (w.Order is 0; data is the packet's bytes, not to be kept).
func (a *Adapter) OnTx(fn func(now clock.Time, w *mchub.Write, data []byte)) { a.onTx = fn }

// OnRx sets the function called when a received packet passes the filter
// and its DMA to host address hostAddr is queued (w carries the hub's
// Order).
func (a *Adapter) OnRx(fn func(now clock.Time, w *mchub.Write, hostAddr uint64, data []byte)) {
	a.onRx = fn
}

// OnDrop sets the function called for every drop.
func (a *Adapter) OnDrop(fn func(now clock.Time, d Drop)) { a.onDrop = fn }

// Counters returns the event counters.
func (a *Adapter) Counters() Counters { return a.counters }

// Status returns the status register.
func (a *Adapter) Status() Status { return a.status }

// ClearStatus clears the latched causes and lowers the interrupt line
// (the interrupt handler's CSR write).
func (a *Adapter) ClearStatus() {
	a.status = Status{}
	a.TxTable.ClearStatus()
	a.updateIRQ(a.Now())
}

// raise latches cause with its page (Status.Page) and asserts the
// interrupt line if the cause is enabled (csr.go: IRQ_ENABLE, every cause
// by default), calling OnInterrupt on a rising edge.
func (a *Adapter) raise(now clock.Time, cause uint32, page int) {
	a.status.Cause |= cause
	a.status.Page = page
	a.updateIRQ(now)
}

// drop counts and reports one drop.
func (a *Adapter) drop(now clock.Time, d Drop) {
	if a.onDrop != nil {
		a.onDrop(now, d)
	}
}

// Tick advances the adapter by one PCI cycle: the receive side first
// (link to FIFO to DMA), then the transmit side (PCI target to FIFO to
// link). Each side reads only state of the previous edge from the other
// components.
func (a *Adapter) Tick(now clock.Time) bool {
	rx := a.tickRx(now)
	tx := a.tickTx(now)
	return rx || tx
}

// Idle reports whether nothing is queued or in flight in the adapter.
func (a *Adapter) Idle() bool { return a.idleTx() && a.idleRx() }

// State describes what the adapter holds (for the deadlock watchdog).
func (a *Adapter) State() string { return "tx " + a.stateTx() + "; rx " + a.stateRx() }
