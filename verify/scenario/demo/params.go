package demo

import (
	"fmt"
	"unsafe"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/demotb"
)

// Params are the demo's parameters. The defaults model a Pentium Pro host
// with a 32-bit PCI bus and a LANai 4.1-class NI (the PPro platform of
// lci-myrinet-cluster-protocols.txt Table I); where a figure is not in the
// papers the comment says so.
type Params struct {
	Host     HostParams     `toml:"host"`
	Bus      BusParams      `toml:"bus"`
	NI       NIParams       `toml:"ni"`
	Link     LinkParams     `toml:"link"`
	Workload WorkloadParams `toml:"workload"`
}

// HostParams describe the host processor and memory.
type HostParams struct {
	// Clock is the processor clock: «Intel Pentium Pro, 200 MHz» (MY-P2).
	Clock string `toml:"clock"`
	// IssueCycles is the processor cycles to issue one uncached access.
	// assumed: 4.
	IssueCycles int `toml:"issue_cycles"`
	// WriteBuffer is how many posted stores may wait for the bus.
	// assumed: 4.
	WriteBuffer int `toml:"write_buffer"`
	// MemClock and MemLatencyNS: «128 MB EDO RAM (66 MHz)» with «a measured
	// latency of 236 ns» (MY-P5, MY-P6).
	MemClock     string `toml:"mem_clock"`
	MemLatencyNS int    `toml:"mem_latency_ns"`
	// MemBytesPerCycle: a 64-bit EDO data path. assumed.
	MemBytesPerCycle int `toml:"mem_bytes_per_cycle"`
}

// BusParams select the I/O bus.
type BusParams struct {
	// Preset is pci32, pci64, turbochannel or eisa: «32 bit, 33 MHz PCI»
	// (MY-P7).
	Preset string `toml:"preset"`
	// MaxBurst overrides the preset's maximum burst in bytes (0: keep).
	MaxBurst int `toml:"max_burst"`
}

// NIParams describe the network interface.
type NIParams struct {
	// Clock: «LANai 4.1, 33 MHz» (MY-P11).
	Clock string `toml:"clock"`
	// SRAM latency and width, in NI cycles and bytes per cycle. assumed:
	// single-cycle 32-bit SRAM.
	SramLatency       int `toml:"sram_latency"`
	SramBytesPerCycle int `toml:"sram_bytes_per_cycle"`
	// DMA engines: setup cycles per descriptor, burst and staging buffer
	// in bytes, descriptor queue depth. assumed.
	DMASetup  int `toml:"dma_setup"`
	DMABurst  int `toml:"dma_burst"`
	DMABuffer int `toml:"dma_buffer"`
	DMAQueue  int `toml:"dma_queue"`
	// The transmit and receive FIFOs between the DMA engines and the link:
	// depth in entries of width bytes. assumed.
	FifoDepth int `toml:"fifo_depth"`
	FifoWidth int `toml:"fifo_width"`
}

// LinkParams describe the network link.
type LinkParams struct {
	// Clock and BytesPerCycle give the rate: 1 byte at 160 MHz = 1.28
	// Gbit/s, «Myrinet, SAN cabling 1.28 Gbit/s full duplex» (MY-P9/P10).
	Clock         string `toml:"clock"`
	BytesPerCycle int    `toml:"bytes_per_cycle"`
	// DelayCycles is the wire delay. assumed: 16 cycles = 100 ns, about
	// one «switch delay is approximately 100 ns» hop (MY-P18).
	DelayCycles int `toml:"delay_cycles"`
	// Credit flow control: receive buffer per VC in flits, credit return
	// delay in cycles. assumed.
	BufferFlits int `toml:"buffer_flits"`
	CreditDelay int `toml:"credit_delay"`
	// FlitBytes and PacketBytes: payload per flit and per packet.
	FlitBytes   int `toml:"flit_bytes"`
	PacketBytes int `toml:"packet_bytes"`
	// CorruptProb injects bit errors (detected by the link CRC).
	CorruptProb float64 `toml:"corrupt_prob"`
}

// WorkloadParams size the transfers.
type WorkloadParams struct {
	// PIOBytes are written by the processor with StoreBytes-wide stores.
	PIOBytes   int `toml:"pio_bytes"`
	StoreBytes int `toml:"store_bytes"`
	// DMABytes are moved from host memory by the NI's host DMA engine.
	DMABytes int `toml:"dma_bytes"`
}

// Defaults returns the embedded defaults.
func Defaults() *Params {
	return &Params{
		Host: HostParams{Clock: "200MHz", IssueCycles: 4, WriteBuffer: 4,
			MemClock: "66MHz", MemLatencyNS: 236, MemBytesPerCycle: 8},
		Bus: BusParams{Preset: "pci32"},
		NI: NIParams{Clock: "33MHz", SramLatency: 1, SramBytesPerCycle: 4,
			DMASetup: 4, DMABurst: 256, DMABuffer: 512, DMAQueue: 4, FifoDepth: 64, FifoWidth: 8},
		Link: LinkParams{Clock: "160MHz", BytesPerCycle: 1, DelayCycles: 16,
			BufferFlits: 8, CreditDelay: 16, FlitBytes: 32, PacketBytes: 512},
		Workload: WorkloadParams{PIOBytes: 256, StoreBytes: 4, DMABytes: 2048},
	}
}

// resolved holds the parsed clocks and bus configuration.
type resolved struct {
	host, hostMem, ni, link clock.Clock
	bus                     bus.Config
}

func (p *Params) resolve() (resolved, error) {
	var r resolved
	var err error
	for _, c := range []struct {
		key string
		val string
		dst *clock.Clock
	}{{"host.clock", p.Host.Clock, &r.host}, {"host.mem_clock", p.Host.MemClock, &r.hostMem},
		{"ni.clock", p.NI.Clock, &r.ni}, {"link.clock", p.Link.Clock, &r.link}} {
		if *c.dst, err = clock.ParseFreq(c.val); err != nil {
			return r, &scenario.KeyError{Key: c.key, Msg: err.Error()}
		}
	}
	if r.bus, err = bus.Preset(p.Bus.Preset); err != nil {
		return r, &scenario.KeyError{Key: "bus.preset", Msg: err.Error()}
	}
	if p.Bus.MaxBurst != 0 {
		r.bus.MaxBurstBytes = p.Bus.MaxBurst
	}
	if err := r.bus.Validate(); err != nil {
		return r, &scenario.KeyError{Key: "bus.max_burst", Msg: err.Error()}
	}
	return r, nil
}

// Validate implements scenario.Params: every impossible value is an error
// naming its key.
func (p *Params) Validate() error {
	r, err := p.resolve()
	if err != nil {
		return err
	}
	w, n, l, h := p.Workload, p.NI, p.Link, p.Host
	return scenario.FirstError(
		// The upper bounds first: a product below (fifo_depth x
		// fifo_width) must not overflow into a misleading message.
		p.checkSizes(),
		scenario.Check(h.IssueCycles < 1, "host.issue_cycles", "must be at least 1 (got %d)", h.IssueCycles),
		scenario.Check(h.WriteBuffer < 1, "host.write_buffer", "must be at least 1 (got %d)", h.WriteBuffer),
		scenario.Check(h.MemLatencyNS < 0, "host.mem_latency_ns", "must not be negative (got %d)", h.MemLatencyNS),
		scenario.Check(h.MemBytesPerCycle < 1, "host.mem_bytes_per_cycle", "must be at least 1 (got %d)", h.MemBytesPerCycle),
		scenario.Check(n.SramLatency < 0, "ni.sram_latency", "must not be negative (got %d)", n.SramLatency),
		scenario.Check(n.SramBytesPerCycle < 1, "ni.sram_bytes_per_cycle", "must be at least 1 (got %d)", n.SramBytesPerCycle),
		scenario.Check(n.DMASetup < 0, "ni.dma_setup", "must not be negative (got %d)", n.DMASetup),
		scenario.Check(n.DMABurst < 1, "ni.dma_burst", "must be at least 1 (got %d)", n.DMABurst),
		scenario.Check(n.FifoDepth < 1, "ni.fifo_depth", "must be at least 1 (got %d)", n.FifoDepth),
		scenario.Check(n.FifoWidth < 1 || n.FifoWidth > 512, "ni.fifo_width", "must be 1..512 bytes (got %d)", n.FifoWidth),
		scenario.Check(n.DMABurst > n.FifoDepth*n.FifoWidth, "ni.dma_burst",
			"a burst of %d bytes is larger than the FIFO (%d x %d bytes)", n.DMABurst, n.FifoDepth, n.FifoWidth),
		scenario.Check(n.DMABuffer < n.DMABurst, "ni.dma_buffer", "must hold one burst of %d bytes (got %d)", n.DMABurst, n.DMABuffer),
		scenario.Check(n.DMAQueue < 2, "ni.dma_queue", "must be at least 2 (got %d)", n.DMAQueue),
		scenario.Check(l.BytesPerCycle < 1, "link.bytes_per_cycle", "must be at least 1 (got %d)", l.BytesPerCycle),
		scenario.Check(l.DelayCycles < 0, "link.delay_cycles", "must not be negative (got %d)", l.DelayCycles),
		scenario.Check(l.BufferFlits < 1, "link.buffer_flits", "must be at least 1 (got %d)", l.BufferFlits),
		scenario.Check(l.CreditDelay < 1, "link.credit_delay", "must be at least 1 (got %d)", l.CreditDelay),
		scenario.Check(l.FlitBytes < 1, "link.flit_bytes", "must be at least 1 (got %d)", l.FlitBytes),
		scenario.Check(l.PacketBytes < l.FlitBytes, "link.packet_bytes", "must hold at least one flit of %d bytes (got %d)", l.FlitBytes, l.PacketBytes),
		scenario.Check(l.CorruptProb < 0 || l.CorruptProb > 1, "link.corrupt_prob", "must be in [0, 1] (got %g)", l.CorruptProb),
		scenario.Check(w.StoreBytes < 1 || w.StoreBytes&(w.StoreBytes-1) != 0, "workload.store_bytes", "must be a power of two (got %d)", w.StoreBytes),
		scenario.Check(w.PIOBytes < 0 || w.PIOBytes%max(w.StoreBytes, 1) != 0, "workload.pio_bytes",
			"must be a non-negative multiple of the store size %d (got %d)", w.StoreBytes, w.PIOBytes),
		scenario.Check(w.DMABytes < 1, "workload.dma_bytes", "must be at least 1 (got %d)", w.DMABytes),
		// Each size alone first: their sum overflowed and let 2^63 through.
		scenario.Check(w.DMABytes > sramRegion, "workload.dma_bytes", "must be at most %d (got %d)", sramRegion, w.DMABytes),
		scenario.Check(w.PIOBytes > sramRegion, "workload.pio_bytes", "must be at most %d (got %d)", sramRegion, w.PIOBytes),
		scenario.Check(w.PIOBytes+w.DMABytes > sramRegion, "workload",
			"pio_bytes + dma_bytes = %d exceed the %d bytes of NI SRAM the demo uses", w.PIOBytes+w.DMABytes, sramRegion),
		// A link FIFO is bytes_per_cycle wide, at most 4096 bits.
		scenario.Check(l.BytesPerCycle > 512, "link.bytes_per_cycle", "must be at most 512 (got %d)", l.BytesPerCycle),
		p.checkStoreWidth(),
		p.checkCycles(r),
	)
}

// Bytes one unit of each size parameter costs in the demo's model, for the
// bounds of checkSizes against scenario.MemoryBudget.
var (
	// derived: a FIFO slot is rtl/fifo's entry of a []byte (a 24-byte
	// slice header and an 8-byte push time) plus the fifo_width bytes it
	// points to; the demo has two FIFOs (NI.TxFifo, Remote.RxFifo).
	fifoSlotBytes = int64(unsafe.Sizeof([]byte(nil))) + int64(unsafe.Sizeof(clock.Time(0)))
	// derived: a queued descriptor is a dma.Descriptor plus the 8-byte
	// FIFO push time; the demo has three engines (NI.HDMA,
	// NI.SDMA, Remote.RDMA) built with the same queue depth.
	descBytes = int64(unsafe.Sizeof(dma.Descriptor{})) + int64(unsafe.Sizeof(clock.Time(0)))
	// derived: a posted store waits as a mem.Req (with its data, at most
	// the bus width of 8 bytes) in a master channel FIFO; both bus masters
	// (Cpu, HDMA) get write_buffer-deep request and response FIFOs.
	reqBytes = int64(unsafe.Sizeof(mem.Req{})) + int64(unsafe.Sizeof(clock.Time(0))) + 8
)

// linkFlitOverhead is what the link keeps per buffered flit besides its
// payload. derived: an rtl/link Flit (its fixed fields and slice headers)
// and the 8-byte time it arrived.
var linkFlitOverhead = int64(unsafe.Sizeof(link.Flit{})) + int64(unsafe.Sizeof(clock.Time(0)))

// checkSizes bounds every size and count: what is allocated per unit
// against scenario.MemoryBudget, and lengths beyond what the demo moves.
// fifo_depth = 10^12 and buffer_flits, dma_queue and write_buffer = 10^9
// passed validation (issue 12); the FIFOs now allocate as they fill, but a
// run is only as safe as its largest queue filled.
func (p *Params) checkSizes() error {
	n, l, h := p.NI, p.Link, p.Host
	return scenario.FirstError(
		scenario.CheckBudget("ni.fifo_depth", int64(n.FifoDepth), 2*(fifoSlotBytes+int64(n.FifoWidth)),
			fmt.Sprintf("entry of %d+%d B in each of 2 FIFOs", fifoSlotBytes, n.FifoWidth)),
		scenario.CheckBudget("link.buffer_flits", int64(l.BufferFlits), 2*(linkFlitOverhead+int64(l.FlitBytes)),
			fmt.Sprintf("flit of %d+%d B in each direction of the link", linkFlitOverhead, l.FlitBytes)),
		scenario.CheckBudget("ni.dma_queue", int64(n.DMAQueue), 3*descBytes,
			fmt.Sprintf("descriptor of %d B in each of 3 DMA engines", descBytes)),
		scenario.CheckBudget("host.write_buffer", int64(h.WriteBuffer), 4*reqBytes,
			fmt.Sprintf("request of %d B in each of 2 masters' request and response FIFOs", reqBytes)),
		scenario.CheckBudget("ni.dma_buffer", int64(n.DMABuffer), 3, "byte of staging buffer in each of 3 DMA engines"),
		// A burst, a packet or a flit longer than the whole transfer
		// region carries nothing more: the structural limit.
		scenario.CheckLimit("ni.dma_burst", int64(n.DMABurst), sramRegion, "the NI SRAM region the demo moves"),
		scenario.CheckLimit("link.packet_bytes", int64(l.PacketBytes), sramRegion, "the NI SRAM region the demo moves"),
		scenario.CheckLimit("link.flit_bytes", int64(l.FlitBytes), sramRegion, "the NI SRAM region the demo moves"),
		scenario.CheckLimit("bus.max_burst", int64(p.Bus.MaxBurst), demotb.HostMemSize, "the host memory, 16 MiB"),
		// A memory cannot move more than all of itself in one cycle.
		scenario.CheckLimit("host.mem_bytes_per_cycle", int64(h.MemBytesPerCycle), demotb.HostMemSize, "the host memory, 16 MiB"),
		scenario.CheckLimit("ni.sram_bytes_per_cycle", int64(n.SramBytesPerCycle), demotb.SRAMSize, "the NI SRAM, 1 MiB"),
	)
}

// checkCycles refuses latencies and delays beyond scenario.MaxDelay (2^63
// cycles overflowed Time and the clocks panicked).
func (p *Params) checkCycles(r resolved) error {
	var errs []error
	for _, d := range []struct {
		key string
		n   int
		clk clock.Clock
	}{{"host.issue_cycles", p.Host.IssueCycles, r.host}, {"ni.sram_latency", p.NI.SramLatency, r.ni},
		{"ni.dma_setup", p.NI.DMASetup, r.ni}, {"link.delay_cycles", p.Link.DelayCycles, r.link},
		{"link.credit_delay", p.Link.CreditDelay, r.link}} {
		errs = append(errs, scenario.CheckCycles(d.key, int64(d.n), d.clk, scenario.MaxDelay))
	}
	errs = append(errs, scenario.Check(p.Host.MemLatencyNS > int(scenario.MaxDelay/clock.Nanosecond), "host.mem_latency_ns",
		"must be at most %d (got %d)", scenario.MaxDelay/clock.Nanosecond, p.Host.MemLatencyNS))
	return scenario.FirstError(errs...)
}

func (p *Params) checkStoreWidth() error {
	r, _ := p.resolve()
	if p.Workload.StoreBytes > r.bus.WidthBytes {
		return &scenario.KeyError{Key: "workload.store_bytes",
			Msg: fmt.Sprintf("a %d-byte store is wider than the %d-byte bus", p.Workload.StoreBytes, r.bus.WidthBytes)}
	}
	return nil
}
