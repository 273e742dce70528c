package shrimp

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
)

// OPTEntry is one Outgoing Page Table entry (SH-P14, SH-P17; L103: the
// sender's interrupt bit is «stored in the OPT»). Entry i describes local
// physical page i: the page it is bound to (AU) or, for a page imported by
// the kernel at that OPT index, the destination of a DU through the device
// proxy.
type OPTEntry struct {
	// Valid marks a bound or imported page; AU enables automatic update of
	// writes to the local page; Notify sets the packets' interrupt bit;
	// Combine enables combining for the page (with Config.Combine).
	Valid, AU, Notify, Combine bool
	// Subpage is the combining sub-page boundary in bytes (0: the
	// Config's SubpageBytes).
	Subpage int
	// DstNode and DstPage name the remote physical page.
	DstNode int
	DstPage uint32
}

// IPTEntry is one Incoming Page Table entry (SH-P18): whether the local page
// is exported (may be written by the network) and its interrupt bit.
type IPTEntry struct{ Exported, Interrupt bool }

// Kind is a packet's kind: automatic or deliberate update.
type Kind uint8

const (
	// KindAU is an automatic-update packet (snooped stores).
	KindAU Kind = iota
	// KindDU is a deliberate-update packet (user-level DMA).
	KindDU
)

// String names the kind as traces print it.
func (k Kind) String() string {
	switch k {
	case KindAU:
		return "au"
	case KindDU:
		return "du"
	}
	return fmt.Sprintf("kind-%d", uint8(k))
}

// Flush is the reason an AU packet was closed (SH-P16, SH-P17).
type Flush uint8

const (
	// FlushStore: no combining, one packet per store (SH-P16).
	FlushStore Flush = iota
	// FlushNonConsecutive: a store to a non-consecutive address closed the
	// open packet (SH-P17).
	FlushNonConsecutive
	// FlushPage: the packet reached the page boundary (SH-P17).
	FlushPage
	// FlushSubpage: the packet reached the sub-page boundary (SH-P17).
	FlushSubpage
	// FlushTimer: the combining timer expired (SH-P17).
	FlushTimer
	// FlushFull: the packet reached MaxPacketBytes (assumed: equal to a
	// page by default, so FlushPage comes first).
	FlushFull
)

// NumFlush is the number of flush reasons (Counters.FlushBy's length).
const NumFlush = 6

// String names the reason as traces print it.
func (f Flush) String() string {
	switch f {
	case FlushStore:
		return "store"
	case FlushNonConsecutive:
		return "nonconsecutive"
	case FlushPage:
		return "page"
	case FlushSubpage:
		return "subpage"
	case FlushTimer:
		return "timer"
	case FlushFull:
		return "full"
	}
	return fmt.Sprintf("flush-%d", uint8(f))
}

// Packet is one SHRIMP packet as the NI's blocks see it.
type Packet struct {
	Kind Kind
	// Src and Dst are node numbers.
	Src, Dst int
	// DstAddr is the destination physical address; SrcAddr the local
	// physical address of the first byte (the snooped store or the DU
	// source).
	DstAddr, SrcAddr uint64
	// Len is the number of data bytes.
	Len int
	// Notify is the header's interrupt bit (SH-P18).
	Notify bool
	// Seq numbers packets per (Src, Dst, Kind) from 1: for checkers only,
	// not on the wire.
	Seq uint64
	// Flush is the reason an AU packet was closed (FlushStore for DU).
	Flush Flush
	// Data is the packet's data (Len bytes).
	Data []byte
}

// DropReason says why data went nowhere.
type DropReason uint8

const (
	// DropOverflow: AU data snooped while the Outgoing FIFO was full
	// (SH-P21: a memory write cannot be stalled).
	DropOverflow DropReason = iota + 1
	// DropUnexported: an incoming packet for a page the IPT does not export.
	DropUnexported
	// DropCRC: an incoming packet whose tail failed the link CRC.
	DropCRC
	// DropUDMA: a UDMA initiation refused (status error).
	DropUDMA
)

// String names the reason as traces print it.
func (r DropReason) String() string {
	switch r {
	case DropOverflow:
		return "overflow"
	case DropUnexported:
		return "unexported"
	case DropCRC:
		return "crc"
	case DropUDMA:
		return "udma"
	}
	return fmt.Sprintf("drop-%d", uint8(r))
}

// Drop is one drop with its reason. Pkt is the packet (nil for a UDMA
// refusal); Addr and Len the local address and bytes concerned.
type Drop struct {
	Reason DropReason
	Node   int
	Pkt    *Packet
	Addr   uint64
	Len    int
}

// Status is the UDMA status word a LOAD of the memory proxy returns
// (archvlsi.ics.forth.gr HPCA97 node8: «LOAD … return the status»; bit
// layout assumed): flags in bits 0..7, the error cause in bits 8..15.
type Status uint32

// UDMA status flags and error causes.
const (
	// StatusStarted: the transfer was started (or queued).
	StatusStarted Status = 1 << 0
	// StatusBusy: the engine (and queue) were busy; retry.
	StatusBusy Status = 1 << 1
	// StatusError: the request was refused; the cause is in bits 8..15.
	StatusError Status = 1 << 2
	// CauseNoDest: no STORE preceded the LOAD (or it was invalidated).
	CauseNoDest Status = 1 << 8
	// CauseCross: the transfer crosses a local or remote page (SH-P13).
	CauseCross Status = 1 << 9
	// CauseSize: the count is 0 or above DUMaxBytes (SH-P13).
	CauseSize Status = 1 << 10
	// CauseOPT: the destination OPT entry is invalid.
	CauseOPT Status = 1 << 11
)

// IRQCause is a cause of the NI's interrupt line.
type IRQCause uint32

const (
	// IRQThreshold: the Outgoing FIFO crossed its threshold (SH-P21).
	IRQThreshold IRQCause = 1 << iota
	// IRQNotify: a notification record was queued (SH-P18).
	IRQNotify
	// IRQError: an error was latched (CRC drop, ...).
	IRQError
)

// Notification is one notification record: the local page written by a
// packet with its interrupt bit set, and its source node (SH-P18).
type Notification struct {
	Page int
	Src  int
}

// DUStart describes a DU transfer the UDMA accepted (OnDUStart): its node,
// local source address, destination OPT index and address, length, notify
// bit, whether it was queued behind a running transfer, and a tag unique
// per NI.
type DUStart struct {
	Node    int
	Src     uint64
	OPT     int
	DstAddr uint64
	Len     int
	Notify  bool
	Queued  bool
	Tag     uint64
}

// Counters are the NI's event counters.
type Counters struct {
	// Snooped counts snooped write beats to memory; AUIgnored those to
	// pages not AU-enabled; AUPackets and AUBytes the AU packets made and
	// their data bytes; Combined the stores that joined an open packet.
	Snooped, AUIgnored, AUPackets, AUBytes, Combined uint64
	// FlushBy counts AU packets by flush reason (index Flush).
	FlushBy [NumFlush]uint64
	// FIFOMax is the Outgoing FIFO's highest occupancy in bytes.
	FIFOMax int
	// ThresholdIRQs counts rising threshold crossings; Overflows snooped
	// AU stores dropped for a full FIFO.
	ThresholdIRQs, Overflows uint64
	// UDMAStarts, UDMABusy and UDMAErrors count UDMA initiations by
	// outcome; DUPackets and DUBytes the DU packets sent.
	UDMAStarts, UDMABusy, UDMAErrors, DUPackets, DUBytes uint64
	// RxPackets and RxBytes count packets written to memory; RxUnexported
	// and RxCRC the incoming drops; Notifies the notification records.
	RxPackets, RxBytes, RxUnexported, RxCRC, Notifies uint64
	// NICOutWaitCycles counts core cycles an outgoing word waited for the
	// NIC port (incoming had it, or the NIC TX FIFO was full).
	NICOutWaitCycles uint64
}

// streamWord is one word of a packet on an NI-internal stream (the DU
// engine's output into the arbiter, the NIC port's output into the incoming
// path): the first word of a packet carries Pkt (Data nil: the header
// word), the following words its data; Last marks the packet's last word;
// Bad marks a last word whose link CRC failed (incoming only). An incoming
// packet's Pkt.Data grows as its words are received: read each word's Data,
// or Pkt.Data only once the Last word has been popped.
type streamWord struct {
	Pkt  *Packet
	Data []byte
	Last bool
	Bad  bool
}

// Builder configures an NI. It is a value type: every With method returns a
// changed copy.
type Builder struct {
	env   *env.Env
	cfg   Config
	node  int
	nodes int
}

// MakeBuilder returns a builder with the SHRIMP configuration, node 0 of 1;
// WithEnv is required.
func MakeBuilder() Builder { return Builder{cfg: SHRIMP(), nodes: 1} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithConfig sets the hardware parameters.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithNode sets the NI's node number and the number of nodes.
func (b Builder) WithNode(id, nodes int) Builder { b.node, b.nodes = id, nodes; return b }

// Validate checks every parameter; the error names it.
func (b Builder) Validate() error {
	switch {
	case b.env == nil:
		return errors.New("shrimp: no env (WithEnv)")
	case b.nodes < 1 || b.nodes > MaxNodes:
		return fmt.Errorf("shrimp: nodes %d must be in 1..%d", b.nodes, MaxNodes)
	case b.node < 0 || b.node >= b.nodes:
		return fmt.Errorf("shrimp: node %d must be in 0..%d", b.node, b.nodes-1)
	}
	return b.cfg.Validate()
}

// NI is one SHRIMP network interface (shrimp-design-choices.txt sections 2.1,
// 4.5; block diagram in the issue 14 design, section 1.1). It has three clock
// domains, each its own clock.Ticking component: the core (the NI itself:
// snoop, OPT, packetiser, Outgoing FIFO, arbiter, NIC port) on CoreClock,
// the EISA side (target, UDMA, DU engine, incoming DMA) on EISAClock, and the
// NIC (TX/RX FIFOs, delay, link) on LinkClock. They exchange data only
// through rtl/fifo FIFOs.
type NI struct {
	*clock.Ticking
	name  string
	env   *env.Env
	cfg   Config
	node  int
	nodes int

	eisa *domain // EISA-clock side
	nic  *domain // link-clock side

	// duStream carries DU packets from the DU engine (EISA domain, du.go)
	// to the outgoing arbiter (core domain, nic.go).
	duStream *fifo.FIFO[streamWord]
	// inStream carries incoming packets from the NIC port (core domain,
	// nic.go) to the incoming path (EISA domain, incoming.go).
	inStream *fifo.FIFO[streamWord]

	out outPath // snoop, OPT, packetiser, Outgoing FIFO (core)
	nc  nicPath // arbiter, NIC port, NIC FIFOs, link (core and link)
	du  duPath  // EISA target, UDMA, CSRs, DU engine (du.go)
	in  inPath  // IPT, incoming DMA, notifications (incoming.go)

	counters Counters
	irq      IRQCause // pending causes

	onIRQ       func(now clock.Time, c IRQCause)
	onSnoop     func(now clock.Time, addr uint64, data []byte, opt OPTEntry)
	onPacketOut func(now clock.Time, p *Packet)
	onPacketIn  func(now clock.Time, p *Packet, hostAddr uint64)
	onDUStart   func(now clock.Time, d DUStart)
	onDrop      func(now clock.Time, d Drop)
}

// domain is the clocked component of one of the NI's other clock domains.
type domain struct {
	*clock.Ticking
	tick func(now clock.Time) bool
}

// Tick runs the domain's stages.
func (d *domain) Tick(now clock.Time) bool { return d.tick(now) }

// Build creates the NI named name; AttachMemoryBus, AttachEISA and
// ConnectLink wire it.
func (b Builder) Build(name string) (*NI, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := b.cfg
	n := &NI{name: name, env: b.env, cfg: c, node: b.node, nodes: b.nodes}
	n.Ticking = clock.NewTicking(name, b.env.Engine, c.CoreClock, n)
	n.eisa = &domain{tick: n.tickEISA}
	n.eisa.Ticking = clock.NewTicking(name+".EISA", b.env.Engine, c.EISAClock, n.eisa)
	n.nic = &domain{tick: n.tickNIC}
	n.nic.Ticking = clock.NewTicking(name+".Net", b.env.Engine, c.LinkClock, n.nic)
	// assumed: the DU engine's output and the incoming path's input are
	// each staged in DMAStageBytes of words (design R3: 2 bursts).
	// The NIC port moves NICPortBytes of words per core cycle.
	words, pw := c.DMAStageBytes/c.FIFOWidthBytes, c.NICPortBytes/c.FIFOWidthBytes
	var err error
	if n.duStream, err = fifo.MakeBuilder[streamWord]().WithEnv(b.env).WithDepth(words).
		WithWidth(8 * c.FIFOWidthBytes).WithDeqPerCycle(pw).Build(name + ".DUStream"); err != nil {
		return nil, err
	}
	n.duStream.Connect(n.eisa, n)
	if n.inStream, err = fifo.MakeBuilder[streamWord]().WithEnv(b.env).WithDepth(words).
		WithWidth(8 * c.FIFOWidthBytes).WithEnqPerCycle(pw).Build(name + ".InStream"); err != nil {
		return nil, err
	}
	n.inStream.Connect(n, n.eisa)
	for _, f := range []func() error{n.buildOut, n.buildNIC, n.buildDU, n.buildIn} {
		if err := f(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	b.env.Register(n)
	return n, nil
}

// Name returns the NI's hierarchical name.
func (n *NI) Name() string { return n.name }

// Node returns the NI's node number.
func (n *NI) Node() int { return n.node }

// Config returns the hardware parameters.
func (n *NI) Config() Config { return n.cfg }

// AttachMemoryBus makes the NI's memory-bus board observe mb (SH-P6, SH-P7):
// every write beat to memTarget is snooped, those mastered by dmaMaster only
// with SnoopDMA. The observer never stalls the bus. Call it once.
func (n *NI) AttachMemoryBus(mb *bus.Bus, memTarget, dmaMaster string) error {
	if mb == nil {
		return fmt.Errorf("%s: AttachMemoryBus: no bus", n.name)
	}
	if memTarget == "" {
		return fmt.Errorf("%s: AttachMemoryBus: no memory target name", n.name)
	}
	if err := n.attachSnoop(mb, memTarget, dmaMaster); err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	return nil
}

// AttachEISA makes the NI a target on eisa for the windows of m (memory
// proxy, device proxy, CSRs; target name = the NI's name) and adds its DU
// engine ("<name>.DU") and incoming DMA ("<name>.In") as masters. Call it
// once.
func (n *NI) AttachEISA(eisa *bus.Bus, m AddressMap) error {
	if eisa == nil {
		return fmt.Errorf("%s: AttachEISA: no bus", n.name)
	}
	if err := n.attachDUTarget(eisa, m); err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	if err := n.attachIn(eisa, m); err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	return nil
}

// ConnectLink connects the NIC to the network: it sends on out and receives
// from in.
func (n *NI) ConnectLink(out, in *link.Dir) error {
	if out == nil || in == nil {
		return fmt.Errorf("%s: ConnectLink: missing link direction", n.name)
	}
	if err := n.connectNIC(out, in); err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	return nil
}

// SetOPT writes OPT entry i (the kernel's CSR write, done through the back
// door for set-up).
func (n *NI) SetOPT(i int, e OPTEntry) error {
	if err := n.setOPT(i, e); err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	return nil
}

// OPT returns OPT entry i (the zero entry for an index out of range).
func (n *NI) OPT(i int) OPTEntry { return n.optEntry(i) }

// SetIPT writes the IPT entry of local page page.
func (n *NI) SetIPT(page int, e IPTEntry) error {
	if err := n.iptSet(page, e); err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	return nil
}

// IPT returns the IPT entry of local page page.
func (n *NI) IPT(page int) IPTEntry { return n.iptGet(page) }

// DUPending reports whether a DU transfer from local page page is running
// or queued (the CAM of queued pages, L281; false with DUQueue 0 and an
// idle engine).
func (n *NI) DUPending(page int) bool { return n.duPending(page) }

// FIFOOccupancy returns the Outgoing FIFO's occupancy in bytes.
func (n *NI) FIFOOccupancy() int { return n.fifoOccupancy() }

// OnInterrupt sets the function called each time a cause of the interrupt
// line is raised.
func (n *NI) OnInterrupt(fn func(now clock.Time, c IRQCause)) { n.onIRQ = fn }

// OnSnoop sets the function called for every snooped write beat to an
// AU-enabled page (data is the bus's slice: copy to keep).
func (n *NI) OnSnoop(fn func(now clock.Time, addr uint64, data []byte, opt OPTEntry)) {
	n.onSnoop = fn
}

// OnPacketOut sets the function called when a packet leaves the arbiter for
// the NIC.
func (n *NI) OnPacketOut(fn func(now clock.Time, p *Packet)) { n.onPacketOut = fn }

// OnPacketIn sets the function called when an incoming packet's DMA
// descriptor to host address hostAddr is issued.
func (n *NI) OnPacketIn(fn func(now clock.Time, p *Packet, hostAddr uint64)) { n.onPacketIn = fn }

// OnDUStart sets the function called when the UDMA accepts a transfer.
func (n *NI) OnDUStart(fn func(now clock.Time, d DUStart)) { n.onDUStart = fn }

// OnDrop sets the function called for every drop.
func (n *NI) OnDrop(fn func(now clock.Time, d Drop)) { n.onDrop = fn }

// Counters returns the event counters.
func (n *NI) Counters() Counters { return n.counters }

// IRQPending returns the pending interrupt causes.
func (n *NI) IRQPending() IRQCause { return n.irq }

// raise latches cause c and calls OnInterrupt.
func (n *NI) raise(now clock.Time, c IRQCause) {
	n.irq |= c
	if n.onIRQ != nil {
		n.onIRQ(now, c)
	}
}

// ackIRQ clears the causes c (the handler's CSR write).
func (n *NI) ackIRQ(c IRQCause) { n.irq &^= c }

// drop reports one drop.
func (n *NI) drop(now clock.Time, d Drop) {
	d.Node = n.node
	if n.onDrop != nil {
		n.onDrop(now, d)
	}
}

// Tick advances the core domain by one cycle, output first: the NIC port
// and arbiter, then the Outgoing FIFO, the packetiser and the snoop queue.
func (n *NI) Tick(now clock.Time) bool { return n.tickCore(now) }

// tickEISA advances the EISA domain: the DU engine and target, then the
// incoming path.
func (n *NI) tickEISA(now clock.Time) bool {
	du := n.tickDU(now)
	in := n.tickIn(now)
	return du || in
}

// Idle reports whether nothing is queued or in flight in the NI.
func (n *NI) Idle() bool {
	return n.idleOut() && n.idleNIC() && n.idleDU() && n.idleIn() && n.duStream.Idle() && n.inStream.Idle()
}

// State describes what the NI holds (for the deadlock watchdog).
func (n *NI) State() string {
	return fmt.Sprintf("out %s; nic %s; du %s; in %s; du stream %d; in stream %d",
		n.stateOut(), n.stateNIC(), n.stateDU(), n.stateIn(), n.duStream.Len(), n.inStream.Len())
}
