// Package smptb is the testbench of a shared-memory multiprocessor node:
// the four-CPU AlphaServer 2100 4/233 of the Memory Channel / Cashmere-2L
// paper (cashmere-2l-memory-channel.txt section 3, «eight DEC AlphaServer
// 2100 4/233 computers», MC-P13, each with «four 21064A processors
// operating at 233 MHz and with 256MB of shared memory», MC-P14), or any
// host/platform preset. Build assembles one node: N CPUs (host/cpu), each
// with its cache (host/memsys, the preset's last level: the one that sits
// on the memory bus and snoops it), one memory bus with host memory, the
// preset's PCI host bridge (rtl/bus) and a PCI bus with a DMA master on it
// (rtl/dma), whose writes into host memory cross the bridge and invalidate
// the caches' copies of the lines they cover. That DMA master stands where
// the Memory Channel adapter's receive DMA will sit (section 2.1: writes
// are «transferred via DMA to receive regions (physical memory)», and
// «When a write appears in a receive region it invalidates any locally
// cached copies of its line»): the node's hardware, minus the adapter.
//
// The specs run sequential host programs (docs/host-programs.md) on it: a
// spin lock with load-locked / store-conditional, a sense-reversing
// barrier with fetch-and-add (Cashmere-2L's «very efficient local locks
// with ll/sc», section 2), a DMA write breaking a reservation, and the
// node's trace in every CPU creation order.
package smptb

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// DMAConfig is the PCI DMA master of the node: a DMA engine on the PCI
// clock (rtl/dma) that copies from a buffer of its own into host memory
// across the bridge. It is a stand-in for the Memory Channel adapter's
// receive DMA until mcadapter/ exists; its values are assumed, each with
// its reason.
type DMAConfig struct {
	// BufferBytes is the device's own buffer the engine reads from.
	BufferBytes int
	// SetupCycles is the engine's cost per descriptor before its first
	// read, in PCI cycles.
	SetupCycles int
	// BurstBytes is the largest PCI write burst.
	BurstBytes int
	// QueueDepth is how many descriptors may wait.
	QueueDepth int
}

// DefaultDMAConfig is the DMA master the node gets unless told otherwise.
func DefaultDMAConfig() DMAConfig {
	return DMAConfig{
		// assumed: 8 KB, one page of the Alpha (MC-P6: «page-level
		// connection granularity, which is 8 Kbytes»): the most one
		// receive-region page holds.
		BufferBytes: 8 << 10,
		// assumed: 4 PCI cycles, rtl/dma's default; the paper gives no
		// adapter DMA timing.
		SetupCycles: 4,
		// derived: a host cache line, «A cache line is 64 bytes.» (MC-P17):
		// a burst covers one line and the bridge's LineBytes.
		BurstBytes: 64,
		// assumed: 4, rtl/dma's default.
		QueueDepth: 4,
	}
}

// Validate checks the DMA master's parameters; an error names the field.
func (c DMAConfig) Validate() error {
	switch {
	case c.BufferBytes < 1:
		return fmt.Errorf("DMA.BufferBytes %d must be at least 1", c.BufferBytes)
	case c.SetupCycles < 0:
		return fmt.Errorf("DMA.SetupCycles %d must not be negative", c.SetupCycles)
	case c.BurstBytes < 1:
		return fmt.Errorf("DMA.BurstBytes %d must be at least 1", c.BurstBytes)
	case c.BurstBytes > c.BufferBytes:
		return fmt.Errorf("DMA.BurstBytes %d must be at most DMA.BufferBytes %d", c.BurstBytes, c.BufferBytes)
	case c.QueueDepth < 1:
		return fmt.Errorf("DMA.QueueDepth %d must be at least 1", c.QueueDepth)
	}
	return nil
}

// Builder configures a Node. It is a value: each With returns a copy.
type Builder struct {
	env   *env.Env
	host  platform.Host
	cpus  int
	order []int
	dma   DMAConfig
	noDMA bool
	ioBus string // the I/O bus's name within the node ("" = "PCI")
	pio   struct {
		set        bool
		base, size uint64
	}
}

// MakeBuilder returns a builder for the AlphaServer 2100 4/233 preset
// with all of its CPUs and DefaultDMAConfig; WithEnv is required.
func MakeBuilder() Builder {
	h := platform.AlphaServer2100()
	return Builder{host: h, cpus: h.CPU.Count, dma: DefaultDMAConfig()}
}

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithHost sets the platform; the CPU count becomes the host's CPU.Count.
func (b Builder) WithHost(h platform.Host) Builder { b.host, b.cpus = h, h.CPU.Count; return b }

// WithCPUs sets how many of the host's CPUs the node gets (1 to
// CPU.Count).
func (b Builder) WithCPUs(n int) Builder { b.cpus = n; return b }

// WithCreationOrder sets the order in which the CPUs are created, a
// permutation of 0..CPUs-1 (default ascending): the components of one
// clock tick in creation order, so a node whose results do not depend on
// tick order gives the same trace in every order (the determinism spec).
// The CPUs keep their names and caches whatever the order.
func (b Builder) WithCreationOrder(order []int) Builder {
	b.order = append([]int(nil), order...)
	return b
}

// WithDMA sets the PCI DMA master.
func (b Builder) WithDMA(c DMAConfig) Builder { b.dma = c; return b }

// WithoutDMA leaves the stand-in DMA master out: the node gets no DMA
// engine or buffer (Node.DMA and Node.DMABuf are nil, DMAWrite fails), so
// that a real device's DMA master (the Memory Channel adapter,
// mcadapter/) takes its place on PCI.
func (b Builder) WithoutDMA() Builder { b.noDMA = true; return b }

// WithIOBusName names the I/O bus behind the bridge: it is built as
// name.<n> (default "PCI"), so its signals and trace paths read as the
// host's bus (a SHRIMP node's EISA bus: WithIOBusName("EISA"), whose
// signals are then name.EISA.*). Node.PCI is that bus whatever its name.
func (b Builder) WithIOBusName(n string) Builder { b.ioBus = n; return b }

// WithPIOWindow gives the bridge a PIO window: CPU loads and stores to
// bus addresses [base, base+size) cross the bridge to the same PCI
// addresses, where a PCI target (a device's registers or window) answers
// them. The window must lie beyond host memory; the caches treat every
// address beyond memory as uncached (memsys.Cache.PolicyAt), so stores
// reach the bridge as they are.
func (b Builder) WithPIOWindow(base, size uint64) Builder {
	b.pio.set, b.pio.base, b.pio.size = true, base, size
	return b
}

// Validate checks every parameter; an error names it.
func (b Builder) Validate() error {
	if b.env == nil {
		return errors.New("smptb: no env (WithEnv)")
	}
	if err := b.host.Validate(); err != nil {
		return fmt.Errorf("smptb: host: %w", err)
	}
	if b.cpus < 1 || b.cpus > b.host.CPU.Count {
		return fmt.Errorf("smptb: CPUs %d must be 1 to the host's CPU.Count %d", b.cpus, b.host.CPU.Count)
	}
	if b.order != nil {
		if len(b.order) != b.cpus {
			return fmt.Errorf("smptb: creation order %v must list each of the %d CPUs once", b.order, b.cpus)
		}
		s := slices.Sorted(slices.Values(b.order))
		for i, v := range s {
			if v != i {
				return fmt.Errorf("smptb: creation order %v must list each of the %d CPUs once", b.order, b.cpus)
			}
		}
	}
	if b.ioBus != "" && strings.ContainsAny(b.ioBus, ". \t") {
		return fmt.Errorf("smptb: I/O bus name %q must be one word without dots (WithIOBusName)", b.ioBus)
	}
	if b.pio.set {
		switch {
		case b.pio.size == 0:
			return errors.New("smptb: PIO window size must be positive")
		case b.pio.base < b.host.Memory.SizeBytes:
			return fmt.Errorf("smptb: PIO window base %#x must lie beyond host memory (%#x bytes)", b.pio.base, b.host.Memory.SizeBytes)
		case b.pio.base+b.pio.size < b.pio.base:
			return fmt.Errorf("smptb: PIO window base %#x size %#x wraps around", b.pio.base, b.pio.size)
		}
	}
	if b.noDMA {
		return nil
	}
	if err := b.dma.Validate(); err != nil {
		return fmt.Errorf("smptb: %w", err)
	}
	if b.dma.BurstBytes%b.host.IOBus.WidthBytes != 0 {
		return fmt.Errorf("smptb: DMA.BurstBytes %d must be a multiple of IOBus.WidthBytes %d", b.dma.BurstBytes, b.host.IOBus.WidthBytes)
	}
	return nil
}

// Node is one SMP node's hardware: Mem is the memory system (host memory
// behind the memory bus, one cache per CPU), CPUs the processors, each
// attached to its cache, PCI the I/O bus behind Bridge, DMA the PCI DMA
// master with its buffer DMABuf (both nil for a node built WithoutDMA).
// PCI addresses [0, Memory.SizeBytes) are host memory (the bridge's DMA
// window maps them one to one).
type Node struct {
	Env    *env.Env
	Host   platform.Host
	Mem    *memsys.Node
	CPUs   []*cpu.CPU
	PCI    *bus.Bus
	Bridge *bus.Bridge
	DMA    *dma.Engine
	DMABuf *mem.Memory

	dmaCfg  DMAConfig
	bufNext int
	dmaTag  uint64
	dmaDone []DMADone
	onDone  func(now clock.Time, d DMADone)
}

// DMADone is a completed DMA write: its tag (DMAWrite's result), PCI
// address and length, and when the engine finished it (its last write
// handed to the PCI bus; the bridge posts it to the memory bus later).
type DMADone struct {
	Tag  uint64
	Addr uint64
	Len  int
	At   clock.Time
	Err  string
}

// BuildNode builds the node named "N" on e: cpus CPUs of host h (1 to
// h.CPU.Count) and DefaultDMAConfig.
func BuildNode(e *env.Env, h platform.Host, cpus int) (*Node, error) {
	return MakeBuilder().WithEnv(e).WithHost(h).WithCPUs(cpus).Build("N")
}

// memoryCycles is host memory's own latency in memory cycles. derived: the
// preset's LatencyNs is load to use (AlphaServer2100: «ten system-bus
// cycles for arbitration, address, the DRAM access and a 64-byte line»,
// assumed there), so it includes what the model times on its own: the
// CPU channel's two register cycles and the cache lookup (HitCycles) in
// CPU cycles, and the memory bus's arbitration, address, decode and line
// transfer (LineBytes/WidthBytes beats) in bus cycles; memory gets the
// rest, rounded to the nearest memory cycle, at least 1. AlphaServer2100:
// 300 ns - (2+6) x 4.292 ns - (1+1+1+4) x 30.04 ns = 300 - 34.3 - 210.3 =
// 55.4 ns = 1.84, so 2 cycles of 30.04 ns.
func memoryCycles(h platform.Host) int {
	ll := h.LastLevel()
	b := h.MemBus
	cpuSide := clock.Time(2+ll.HitCycles) * h.CPU.Clock.Period()
	busSide := clock.Time(b.ArbCycles+b.AddrCycles+b.DecodeCycles+ll.LineBytes/b.WidthBytes) * b.Clock.Period()
	rest := clock.Time(h.Memory.LatencyNs)*clock.Nanosecond - cpuSide - busSide
	per := h.Memory.Clock.Period()
	return max(1, int((rest+per/2)/per))
}

// Build creates the node's hardware: name.Mem, name.Bus (the memory bus),
// name.Cache[i], name.Cpu[i], name.PCI, name.Bridge, name.DMA and its
// buffer name.DMABuf.
func (b Builder) Build(name string) (*Node, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h := b.host
	// The memory bus's master channels (the caches', the bridge's) hold
	// BusWriteEntries requests: derived: the write buffer between the
	// chip and the bus (AlphaServer2100: the 21064A's 4 entries).
	ms, err := memsys.MakeNodeBuilder().WithEnv(b.env).WithCPUs(b.cpus, h.CPU.Clock).WithCache(h.LastLevel()).
		WithBus(h.MemBus).WithBusMasterDepth(h.LastLevel().BusWriteEntries).
		WithMemoryClock(h.Memory.Clock).WithMemory(h.Memory.SizeBytes, 0, memoryCycles(h), h.Memory.BytesPerCycle).
		Build(name)
	if err != nil {
		return nil, err
	}
	n := &Node{Env: b.env, Host: h, Mem: ms, CPUs: make([]*cpu.CPU, b.cpus), dmaCfg: b.dma}
	order := b.order
	if order == nil {
		order = make([]int, b.cpus)
		for i := range order {
			order[i] = i
		}
	}
	for _, i := range order {
		c, err := cpu.MakeBuilder().WithEnv(b.env).WithClock(h.CPU.Clock).WithIssueCycles(h.CPU.IssueCycles).
			WithPostedStores(h.CPU.PostedStores).WithCPI(h.CPU.CPICycles, h.CPU.CPIInstrs).WithOSCosts(h.OS).
			Build(fmt.Sprintf("%s.Cpu[%d]", name, i))
		if err != nil {
			return nil, err
		}
		c.Attach(ms.Caches[i].Port())
		n.CPUs[i] = c
	}
	// The PCI masters' channels (the bridge's Up side, the DMA master) are
	// as deep as the processor's write buffer in PCI beats, as in
	// verify/testbench/lcitb.
	ioName := b.ioBus
	if ioName == "" {
		ioName = "PCI"
	}
	pci, err := bus.MakeBuilder().WithEnv(b.env).WithConfig(h.IOBus).WithMasterChannelDepth(h.WriteBufferBeats()).Build(name + "." + ioName)
	if err != nil {
		return nil, err
	}
	bb := bus.MakeBridgeBuilder().WithEnv(b.env).WithConfig(h.Bridge).WithBuses(ms.Bus, pci).
		WithDMAWindow(0, h.Memory.SizeBytes, 0)
	if b.pio.set {
		bb = bb.WithPIOWindow(b.pio.base, b.pio.size, b.pio.base)
	}
	br, err := bb.Build(name + ".Bridge")
	if err != nil {
		return nil, err
	}
	n.PCI, n.Bridge = pci, br
	if b.noDMA {
		return n, nil
	}
	// The device buffer: assumed: an SRAM on the PCI clock answering a
	// PCI width per cycle after one cycle; it only feeds the engine.
	buf, err := mem.MakeBuilder().WithEnv(b.env).WithClock(h.IOBus.Clock).WithSize(uint64(b.dma.BufferBytes)).
		WithLatency(1).WithBytesPerCycle(h.IOBus.WidthBytes).WithPortWidth(h.IOBus.WidthBytes).Build(name + ".DMABuf")
	if err != nil {
		return nil, err
	}
	// The engine stages two bursts (assumed: reading the next burst from
	// its buffer while the last is written, rtl/dma's default shape) and
	// posts its PCI writes (the bridge's posted-write buffer takes them).
	eng, err := dma.MakeBuilder().WithEnv(b.env).WithClock(h.IOBus.Clock).WithQueueDepth(b.dma.QueueDepth).
		WithSetupCycles(b.dma.SetupCycles).WithBurst(b.dma.BurstBytes).WithBuffer(2 * b.dma.BurstBytes).
		Build(name + ".DMA")
	if err != nil {
		return nil, err
	}
	eng.AddMemPort(name+".DMABuf", buf.Port(0))
	pm, err := pci.AddMaster(name + ".DMA")
	if err != nil {
		return nil, err
	}
	eng.AddMemPort(name+".DMA.PCI", pm)
	eng.OnDone(func(now clock.Time, d dma.Descriptor, e string) {
		r := DMADone{Tag: d.Tag, Addr: d.Dst.Addr, Len: d.Len, At: now, Err: e}
		n.dmaDone = append(n.dmaDone, r)
		if n.onDone != nil {
			n.onDone(now, r)
		}
	})
	n.DMA, n.DMABuf = eng, buf
	return n, nil
}

// Memory returns host memory.
func (n *Node) Memory() *mem.Memory { return n.Mem.Memory }

// MemBus returns the memory bus.
func (n *Node) MemBus() *bus.Bus { return n.Mem.Bus }

// Caches returns the CPUs' caches, CPU i's at i.
func (n *Node) Caches() []*memsys.Cache { return n.Mem.Caches }

// OnDMADone sets a function called when a DMA write completes.
func (n *Node) OnDMADone(fn func(now clock.Time, d DMADone)) { n.onDone = fn }

// DMADone returns the DMA writes completed so far, in completion order.
func (n *Node) DMADone() []DMADone { return slices.Clone(n.dmaDone) }

// DMAWrite queues, at now, a DMA write of data to PCI address addr (host
// memory at the same address): the data is placed in the device buffer
// (the next free bytes, wrapping) and a descriptor from there to addr is
// submitted. It returns the write's tag, or an error if data is empty or
// larger than the buffer, or the descriptor queue is full. Call it before
// the run (now 0) or from a component's tick (a host program's code, an
// agent) at the time it runs.
func (n *Node) DMAWrite(now clock.Time, addr uint64, data []byte) (uint64, error) {
	size := n.dmaCfg.BufferBytes
	switch {
	case n.DMA == nil:
		return 0, errors.New("smptb: DMA write on a node built WithoutDMA")
	case len(data) == 0:
		return 0, errors.New("smptb: DMA write of no bytes")
	case len(data) > size:
		return 0, fmt.Errorf("smptb: DMA write of %d bytes exceeds DMA.BufferBytes %d", len(data), size)
	}
	// The source keeps the destination's offset within a burst, so the
	// engine's aligned bursts line up on both sides; the buffer is a ring
	// (the data is staged now, so the writes queued at once must fit in
	// it).
	burst := n.dmaCfg.BurstBytes
	within := int(addr % uint64(burst))
	off := (n.bufNext+burst-1)/burst*burst + within
	if off+len(data) > size {
		off = within
		if off+len(data) > size {
			off = 0
		}
	}
	if err := n.DMABuf.Storage().Write(uint64(off), data); err != nil {
		return 0, fmt.Errorf("smptb: DMA buffer: %w", err)
	}
	n.dmaTag++
	d := dma.Descriptor{Src: dma.Mem(0, uint64(off)), Dst: dma.Mem(1, addr), Len: len(data), Tag: n.dmaTag}
	if !n.DMA.Submit(now, d) {
		return 0, fmt.Errorf("smptb: DMA descriptor queue full (DMA.QueueDepth %d)", n.dmaCfg.QueueDepth)
	}
	n.bufNext = off + len(data)
	return d.Tag, nil
}

// Close ends the host programs still running when the simulation has
// ended (cpu.CPU.Close).
func (n *Node) Close() {
	for _, c := range n.CPUs {
		c.Close()
	}
}
