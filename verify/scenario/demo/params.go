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
// naming its key. The range of each key is in Keys (scenario.CheckKeys,
// what `nisim config` prints); the rules on several keys follow.
func (p *Params) Validate() error {
	if _, err := p.resolve(); err != nil {
		return err
	}
	if err := scenario.CheckKeys(p); err != nil {
		return err
	}
	w, n, l := p.Workload, p.NI, p.Link
	return scenario.FirstError(
		scenario.Check(n.DMABurst > n.FifoDepth*n.FifoWidth, "ni.dma_burst",
			"a burst of %d bytes is larger than the FIFO (%d x %d bytes)", n.DMABurst, n.FifoDepth, n.FifoWidth),
		scenario.Check(n.DMABuffer < n.DMABurst, "ni.dma_buffer", "must hold one burst of %d bytes (got %d)", n.DMABurst, n.DMABuffer),
		scenario.Check(l.PacketBytes < l.FlitBytes, "link.packet_bytes", "must hold at least one flit of %d bytes (got %d)", l.FlitBytes, l.PacketBytes),
		scenario.Check(w.StoreBytes&(w.StoreBytes-1) != 0, "workload.store_bytes", "must be a power of two (got %d)", w.StoreBytes),
		scenario.Check(w.PIOBytes%w.StoreBytes != 0, "workload.pio_bytes",
			"must be a non-negative multiple of the store size %d (got %d)", w.StoreBytes, w.PIOBytes),
		// Each size alone first (in Keys): their sum overflowed and let
		// 2^63 through.
		scenario.Check(w.PIOBytes+w.DMABytes > sramRegion, "workload",
			"pio_bytes + dma_bytes = %d exceed the %d bytes of NI SRAM the demo uses", w.PIOBytes+w.DMABytes, sramRegion),
		p.checkStoreWidth(),
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

func (p *Params) checkStoreWidth() error {
	r, _ := p.resolve()
	if p.Workload.StoreBytes > r.bus.WidthBytes {
		return &scenario.KeyError{Key: "workload.store_bytes",
			Msg: fmt.Sprintf("a %d-byte store is wider than the %d-byte bus", p.Workload.StoreBytes, r.bus.WidthBytes)}
	}
	return nil
}
