// Package demotb is the testbench of nisim's demo system: a host on a PCI
// bus writes a few kilobytes into a network interface's SRAM, first by
// programmed I/O (the processor's stores) and then by DMA (the NI's host
// DMA engine, started by a doorbell write); the NI's send DMA engine then
// streams both through a transmit FIFO onto a credit-flow-controlled link,
// and a receive DMA engine at the far end writes them into a second
// memory. It exercises every rtl block. Build assembles the system, Run
// runs it with its checkers; the demo scenario (verify/scenario/demo)
// turns its parameters into a Config and reports on the run.
//
// The NI logic here (doorbell, packetiser LinkOut, depacketiser LinkIn) is
// demo glue, not a model of a paper's NI; the real ones live in hib/,
// lanai/ and firmware/.
package demotb

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/check"
)

// Bus address map of the demo.
const (
	HostMemBase = 0x0000_0000
	HostMemSize = 16 << 20
	HostBuffer  = 0x0010_0000 // DMA source in host memory
	SRAMBase    = 0x1000_0000
	SRAMSize    = 1 << 20 // «1 MB SRAM» (MY-P12)
	RegsBase    = 0x1010_0000
	RegsSize    = 0x1000
	// SRAMRegion is the part of the SRAM the demo uses: the PIO and DMA
	// data together must fit in it.
	SRAMRegion = 512 << 10

	// The doorbell registers: source, destination and length of the host
	// DMA; writing the length starts it.
	RegSrc = 0x0
	RegDst = 0x4
	RegLen = 0x8
)

// Config is the demo system: the host, its I/O bus, the NI, the link and
// the workload. Every figure is the scenario's (verify/scenario/demo's
// Params say where each comes from).
type Config struct {
	Host     HostConfig
	Bus      bus.Config
	NI       NIConfig
	Link     LinkConfig
	Workload Workload
}

// HostConfig is the host processor and memory.
type HostConfig struct {
	// Clock is the processor clock, IssueCycles its cycles to issue one
	// uncached access, WriteBuffer the posted stores that may wait for the
	// bus.
	Clock       clock.Clock
	IssueCycles int
	WriteBuffer int
	// MemClock, MemLatency and MemBytesPerCycle are host memory's clock,
	// access latency (rounded to its cycles) and data path.
	MemClock         clock.Clock
	MemLatency       clock.Time
	MemBytesPerCycle int
}

// NIConfig is the network interface: its clock, its SRAM (latency in
// cycles, bytes per cycle), its DMA engines (setup cycles per descriptor,
// burst and staging buffer in bytes, descriptor queue depth) and the FIFOs
// between the DMA engines and the link (depth in entries of FifoWidth
// bytes).
type NIConfig struct {
	Clock             clock.Clock
	SramLatency       int
	SramBytesPerCycle int
	DMASetup          int
	DMABurst          int
	DMABuffer         int
	DMAQueue          int
	FifoDepth         int
	FifoWidth         int
}

// LinkConfig is the network link: its clock and bytes per cycle, wire
// delay, credit flow control (receive buffer in flits, credit return
// delay), the payload per flit and per packet, and injected bit errors.
type LinkConfig struct {
	Clock         clock.Clock
	BytesPerCycle int
	DelayCycles   int
	BufferFlits   int
	CreditDelay   int
	FlitBytes     int
	PacketBytes   int
	CorruptProb   float64
}

// Workload sizes the transfers: PIOBytes written by the processor in
// StoreBytes-wide stores, then DMABytes moved from host memory by the NI's
// host DMA engine.
type Workload struct {
	PIOBytes   int
	StoreBytes int
	DMABytes   int
}

// Validate checks what the blocks' own builders cannot: the workload
// against the address map and the bus, and the link's packets against its
// flits. The error names the field.
func (c Config) Validate() error {
	w := c.Workload
	switch {
	case w.StoreBytes < 1 || w.StoreBytes&(w.StoreBytes-1) != 0:
		return fmt.Errorf("demotb: Workload.StoreBytes = %d: not a power of two", w.StoreBytes)
	case w.StoreBytes > c.Bus.WidthBytes:
		return fmt.Errorf("demotb: Workload.StoreBytes = %d: wider than the %d-byte bus", w.StoreBytes, c.Bus.WidthBytes)
	case w.PIOBytes < 0 || w.PIOBytes%w.StoreBytes != 0:
		return fmt.Errorf("demotb: Workload.PIOBytes = %d: not a non-negative multiple of the store size %d", w.PIOBytes, w.StoreBytes)
	case w.DMABytes < 1:
		return fmt.Errorf("demotb: Workload.DMABytes = %d: must be at least 1", w.DMABytes)
	case w.PIOBytes > SRAMRegion || w.DMABytes > SRAMRegion || w.PIOBytes+w.DMABytes > SRAMRegion:
		return fmt.Errorf("demotb: Workload: PIOBytes + DMABytes = %d + %d exceed the %d bytes of NI SRAM the demo uses",
			w.PIOBytes, w.DMABytes, SRAMRegion)
	case c.Link.FlitBytes < 1:
		return fmt.Errorf("demotb: Link.FlitBytes = %d: must be at least 1", c.Link.FlitBytes)
	case c.Link.PacketBytes < c.Link.FlitBytes:
		return fmt.Errorf("demotb: Link.PacketBytes = %d: must hold one flit of %d bytes", c.Link.PacketBytes, c.Link.FlitBytes)
	}
	return c.checkDepths()
}

// memoryBudget is the heap a demo may give to its queues, the same 1 GiB
// as the scenarios' per-run budget (verify/scenario.MemoryBudget, which
// explains it): the last line of defence for a Config built without the
// demo scenario's Validate.
const memoryBudget = 1 << 30

// checkDepths refuses queue depths whose entries, filled, would exceed
// memoryBudget, counting the least an entry costs (the demo scenario
// counts each struct's full size, so it refuses first, naming its key):
// 32 B a FIFO slot (a slice header and a push time) plus FifoWidth bytes
// in each of the two FIFOs; 64 B a link flit plus FlitBytes in each
// direction; 64 B a queued descriptor or bus request in each of three
// engines or four master FIFOs.
func (c Config) checkDepths() error {
	for _, d := range []struct {
		field string
		n     int
		per   int
	}{{"NI.FifoDepth", c.NI.FifoDepth, 2 * (32 + max(c.NI.FifoWidth, 0))},
		{"Link.BufferFlits", c.Link.BufferFlits, 2 * (64 + max(c.Link.FlitBytes, 0))},
		{"NI.DMAQueue", c.NI.DMAQueue, 3 * 64}, {"Host.WriteBuffer", c.Host.WriteBuffer, 4 * 64}} {
		if limit := memoryBudget / max(d.per, 1); d.n > limit {
			return fmt.Errorf("demotb: %s = %d: above the limit %d (%d B per entry x %d = 1 GiB, the memory budget)", d.field, d.n, limit, d.per, limit)
		}
	}
	return nil
}

// System is the built demo model.
type System struct {
	CPU     *cpu.CPU
	Bus     *bus.Bus
	HostMem *mem.Memory
	Sram    *mem.Memory
	Regs    *mem.Registers
	HostDMA *dma.Engine
	SendDMA *dma.Engine
	TxFifo  *fifo.FIFO[[]byte]
	Out     *LinkOut
	Link    *link.Link
	In      *LinkIn
	RxFifo  *fifo.FIFO[[]byte]
	RecvDMA *dma.Engine
	Remote  *mem.Memory
	// Packets is the always-on checker that every packet on the link
	// arrives exactly once ("Demo.Packets"; "Demo.PacketOrder" checks
	// their order).
	Packets *check.Conservation[uint64]
	// PIOData and DMAData are the bytes the host stores and the host DMA
	// moves; Readback is what the processor's load after the stores
	// returned.
	PIOData  []byte
	DMAData  []byte
	Readback []byte
	// Times are the run's milestones.
	Times Times
}

// Times are the milestones of a run, and whether each DMA engine took its
// descriptor.
type Times struct {
	// FirstStore is when the first PIO store completed, PIODone when the
	// fence after the stores retired, LoadStart and LoadDone the read-back
	// load's issue and completion.
	FirstStore, PIODone, LoadStart, LoadDone clock.Time
	// Doorbell is the write of the length register, DMADone the host DMA's
	// completion (and SendStart the send DMA's start), RecvDone the
	// receive DMA's completion.
	Doorbell, DMADone, SendStart, RecvDone clock.Time
	// DMASubmitted, SendSubmitted and RecvAccepted say each descriptor
	// found room in its engine's queue.
	DMASubmitted, SendSubmitted, RecvAccepted bool
}

// Build creates the model of c in e, with the host program and the NI's
// control logic loaded: the run starts with the first PIO store.
func Build(e *env.Env, c Config) (*System, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &System{}
	var err, first error
	// must keeps the first build error: err itself is overwritten by the
	// next Build (a refused link was lost and its nil Link dereferenced).
	must := func(e error) {
		if first == nil && e != nil {
			first = e
		}
	}
	width := c.Bus.WidthBytes
	h, n, l := c.Host, c.NI, c.Link

	s.CPU, err = cpu.MakeBuilder().WithEnv(e).WithClock(h.Clock).WithIssueCycles(h.IssueCycles).Build("Host.Cpu")
	must(err)
	busB := bus.MakeBuilder().WithEnv(e).WithConfig(c.Bus).WithMasterChannelDepth(h.WriteBuffer)
	s.Bus, err = busB.Build("Host.Bus")
	if err != nil {
		return nil, err
	}
	memLatency := int(h.MemClock.Cycles(h.MemLatency))
	s.HostMem, err = mem.MakeBuilder().WithEnv(e).WithClock(h.MemClock).WithSize(HostMemSize).
		WithLatency(memLatency).WithBytesPerCycle(h.MemBytesPerCycle).WithPortWidth(width).Build("Host.Mem")
	must(err)
	s.Sram, err = mem.MakeBuilder().WithEnv(e).WithClock(n.Clock).WithSize(SRAMSize).WithPorts(3).
		WithLatency(n.SramLatency).WithBytesPerCycle(n.SramBytesPerCycle).WithPortWidth(width).Build("NI.Sram")
	must(err)
	s.Regs, err = mem.MakeRegistersBuilder().WithEnv(e).WithClock(n.Clock).WithWidth(width).Build("NI.Doorbell")
	must(err)
	dmaB := dma.MakeBuilder().WithEnv(e).WithClock(n.Clock).WithSetupCycles(n.DMASetup).
		WithBurst(n.DMABurst).WithBuffer(n.DMABuffer).WithQueueDepth(n.DMAQueue).WithStreamWidth(n.FifoWidth)
	s.HostDMA, err = dmaB.Build("NI.HDMA")
	must(err)
	s.SendDMA, err = dmaB.Build("NI.SDMA")
	must(err)
	fifoB := fifo.MakeBuilder[[]byte]().WithEnv(e).WithDepth(n.FifoDepth).WithWidth(8 * n.FifoWidth)
	s.TxFifo, err = fifoB.Build("NI.TxFifo")
	must(err)
	s.RxFifo, err = fifoB.Build("Remote.RxFifo")
	must(err)
	lcfg := link.Config{Clock: l.Clock, BytesPerCycle: l.BytesPerCycle, DelayCycles: l.DelayCycles,
		VCs: 1, FlowControl: link.Credits, BufferFlits: l.BufferFlits, CreditDelay: l.CreditDelay,
		TxDepth: 2, CorruptProb: l.CorruptProb}
	s.Link, err = link.MakeBuilder().WithEnv(e).WithConfig(lcfg).Build("Link")
	must(err)
	s.RecvDMA, err = dmaB.Build("Remote.RDMA")
	must(err)
	s.Remote, err = mem.MakeBuilder().WithEnv(e).WithClock(n.Clock).WithSize(SRAMSize).
		WithLatency(n.SramLatency).WithBytesPerCycle(n.SramBytesPerCycle).WithPortWidth(width).Build("Remote.Sram")
	must(err)
	if first != nil {
		return nil, first
	}
	total := c.Workload.PIOBytes + c.Workload.DMABytes
	s.Out = newLinkOut(e, "NI.LinkOut", n.Clock, s.TxFifo, s.Link.From(link.A), l.FlitBytes, l.PacketBytes, total)
	s.In = newLinkIn(e, "Remote.LinkIn", n.Clock, s.Link.From(link.A), s.RxFifo, n.FifoWidth)
	// Always-on checkers: every packet arrives exactly once, in order.
	s.Packets = check.NewConservation[uint64](e.Monitor, "Demo.Packets")
	s.Out.packets, s.In.packets = s.Packets, s.Packets
	s.In.order = check.NewOrdering[int](e.Monitor, "Demo.PacketOrder")
	if err := s.wire(c.Workload); err != nil {
		return nil, err
	}
	return s, nil
}

// wire connects the blocks and programs the NI and the host.
func (s *System) wire(w Workload) error {
	cpuCh, err := s.Bus.AddMaster("Cpu")
	if err != nil {
		return err
	}
	s.CPU.Attach(cpuCh)
	dmaCh, err := s.Bus.AddMaster("HDMA")
	if err != nil {
		return err
	}
	for _, t := range []struct {
		name       string
		base, size uint64
		ch         *mem.Channel
	}{{"HostMem", HostMemBase, HostMemSize, s.HostMem.Port(0)}, {"Sram", SRAMBase, SRAMSize, s.Sram.Port(0)},
		{"Doorbell", RegsBase, RegsSize, s.Regs.Port()}} {
		if err := s.Bus.AddTarget(t.name, t.base, t.size, t.ch); err != nil {
			return err
		}
	}
	hostPort := s.HostDMA.AddMemPort("Bus", dmaCh)
	sramPort := s.HostDMA.AddMemPort("Sram", s.Sram.Port(1))
	sendSrc := s.SendDMA.AddMemPort("Sram", s.Sram.Port(2))
	sendDst := s.SendDMA.AddStreamOut("TxFifo", s.TxFifo)
	s.TxFifo.SetConsumer(s.Out)
	recvSrc := s.RecvDMA.AddStreamIn("RxFifo", s.RxFifo)
	recvDst := s.RecvDMA.AddMemPort("Sram", s.Remote.Port(0))
	s.RxFifo.SetProducer(s.In)
	s.Link.From(link.A).Connect(s.Out, s.In)

	total := w.PIOBytes + w.DMABytes
	s.PIOData = pattern(w.PIOBytes, 0x11)
	s.DMAData = pattern(w.DMABytes, 0x5a)
	if err := s.HostMem.Storage().Write(HostBuffer, s.DMAData); err != nil {
		return err
	}

	// The NI's control logic: the doorbell starts the host DMA into SRAM
	// right after the PIO data; its completion starts the send, and the
	// receiving NI posts a receive descriptor for the whole message.
	var src, dst uint32
	s.Regs.OnWrite(func(now clock.Time, addr uint64, data []byte) {
		v := binary.LittleEndian.Uint32(pad4(data))
		switch addr {
		case RegSrc:
			src = v
		case RegDst:
			dst = v
		case RegLen:
			s.Times.Doorbell = now
			d := dma.Descriptor{Src: dma.Mem(hostPort, uint64(src)), Dst: dma.Mem(sramPort, uint64(dst)), Len: int(v), Tag: 1}
			s.Times.DMASubmitted = s.HostDMA.Submit(now, d)
		}
	})
	s.HostDMA.OnDone(func(now clock.Time, d dma.Descriptor, errMsg string) {
		s.Times.DMADone = now
		s.Times.SendStart = now
		s.Times.SendSubmitted = s.SendDMA.Submit(now, dma.Descriptor{Src: dma.Mem(sendSrc, 0), Dst: dma.StreamPort(sendDst), Len: total, Tag: 2})
	})
	s.RecvDMA.OnDone(func(now clock.Time, d dma.Descriptor, errMsg string) { s.Times.RecvDone = now })
	// The receive descriptor is posted before anything arrives.
	s.Times.RecvAccepted = s.RecvDMA.Submit(0, dma.Descriptor{Src: dma.StreamPort(recvSrc), Dst: dma.Mem(recvDst, 0), Len: total, Tag: 3})

	// The host program: PIO stores, a fence, a read-back load, the doorbell.
	var ops []cpu.Op
	for off := 0; off < w.PIOBytes; off += w.StoreBytes {
		op := cpu.Op{Kind: cpu.Store, Addr: SRAMBase + uint64(off), Data: s.PIOData[off : off+w.StoreBytes]}
		if off == 0 {
			op.Done = func(now clock.Time, _ []byte) { s.Times.FirstStore = now }
		}
		ops = append(ops, op)
	}
	ops = append(ops,
		cpu.Op{Kind: cpu.Fence, Label: "pio-fence", Done: func(now clock.Time, _ []byte) { s.Times.PIODone = now }},
		cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { s.Times.LoadStart = now; return true }},
		cpu.Op{Kind: cpu.Load, Addr: SRAMBase, Len: w.StoreBytes, Label: "pio-readback",
			Done: func(now clock.Time, data []byte) { s.Times.LoadDone = now; s.Readback = append([]byte(nil), data...) }},
		cpu.Op{Kind: cpu.Store, Addr: RegsBase + RegSrc, Data: le32(HostBuffer), Label: "doorbell-src"},
		cpu.Op{Kind: cpu.Store, Addr: RegsBase + RegDst, Data: le32(uint32(w.PIOBytes)), Label: "doorbell-dst"},
		cpu.Op{Kind: cpu.Store, Addr: RegsBase + RegLen, Data: le32(uint32(w.DMABytes)), Label: "doorbell-len"},
	)
	s.CPU.Run(ops...)
	return nil
}

// Run builds the demo of c in e and runs it to the end. A build error
// returns a nil system; otherwise the error is the run's, joined with the
// packet checker's violations at the end (a packet never delivered).
func Run(e *env.Env, c Config) (*System, env.Result, error) {
	s, err := Build(e, c)
	if err != nil {
		return nil, env.Result{}, err
	}
	res, runErr := e.Run()
	before := e.Monitor.Count()
	s.Packets.Finish(res.End)
	if e.Monitor.Count() > before {
		runErr = errors.Join(runErr, e.Monitor.Err())
	}
	return s, res, runErr
}

// pattern returns n bytes of a linear congruential sequence from seed.
func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	x := uint32(seed)
	for i := range p {
		x = x*1103515245 + 12345
		p[i] = byte(x >> 16)
	}
	return p
}

func le32(v uint32) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, v)
	return b
}

func pad4(b []byte) []byte {
	if len(b) >= 4 {
		return b[:4]
	}
	out := make([]byte, 4)
	copy(out, b)
	return out
}
