// Package demo is nisim's first scenario: a host on a PCI bus writes a few
// kilobytes into a network interface's SRAM, first by programmed I/O (the
// processor's stores) and then by DMA (the NI's host DMA engine, started by
// a doorbell write); the NI's send DMA engine then streams both through a
// transmit FIFO onto a credit-flow-controlled link, and a receive DMA engine
// at the far end writes them into a second memory. It exercises every rtl
// block, checks that the bytes arrived, and reports latency and throughput
// next to the peak figures of the LCI paper's PPro platform.
//
// The NI logic here (doorbell, packetiser, depacketiser) is demo glue, not a
// model of a paper's NI; the real ones live in hib/, lanai/ and firmware/.
package demo

import (
	"bytes"
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
	"github.com/nisim/nisim/verify/scenario"
)

// Bus address map of the demo.
const (
	hostMemBase = 0x0000_0000
	hostMemSize = 16 << 20
	hostBuffer  = 0x0010_0000 // DMA source in host memory
	sramBase    = 0x1000_0000
	sramSize    = 1 << 20 // «1 MB SRAM» (MY-P12)
	regsBase    = 0x1010_0000
	regsSize    = 0x1000
	sramRegion  = 512 << 10 // the part of the SRAM the demo uses

	regSrc = 0x0 // doorbell registers
	regDst = 0x4
	regLen = 0x8 // writing it starts the host DMA
)

// Scenario returns the demo scenario.
func Scenario() *scenario.Scenario {
	return &scenario.Scenario{
		Name:     "demo",
		Summary:  "host writes by PIO and DMA over PCI into NI SRAM, then through a FIFO and a credit link into a second memory",
		Defaults: func() scenario.Params { return Defaults() },
		Run: func(e *env.Env, p scenario.Params) (*scenario.Report, error) {
			return Run(e, p.(*Params))
		},
	}
}

// System is the built demo model.
type System struct {
	CPU      *cpu.CPU
	Bus      *bus.Bus
	HostMem  *mem.Memory
	Sram     *mem.Memory
	Regs     *mem.Registers
	HostDMA  *dma.Engine
	SendDMA  *dma.Engine
	TxFifo   *fifo.FIFO[[]byte]
	Out      *LinkOut
	Link     *link.Link
	In       *LinkIn
	RxFifo   *fifo.FIFO[[]byte]
	RecvDMA  *dma.Engine
	Remote   *mem.Memory
	packets  *check.Conservation[uint64]
	pioData  []byte
	dmaData  []byte
	times    times
	readback []byte
}

// times are the milestones the report is computed from.
type times struct {
	firstStore, pioDone, loadStart, loadDone  clock.Time
	doorbell, dmaDone, sendStart, recvDone    clock.Time
	dmaSubmitted, sendSubmitted, recvAccepted bool
}

// Build creates the model in e.
func Build(e *env.Env, p *Params) (*System, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	r, _ := p.resolve()
	s := &System{}
	var err, first error
	// must keeps the first build error: err itself is overwritten by the
	// next Build (a refused link was lost and its nil Link dereferenced).
	must := func(e error) {
		if first == nil && e != nil {
			first = e
		}
	}
	width := r.bus.WidthBytes

	s.CPU, err = cpu.MakeBuilder().WithEnv(e).WithClock(r.host).WithIssueCycles(p.Host.IssueCycles).Build("Host.Cpu")
	must(err)
	busB := bus.MakeBuilder().WithEnv(e).WithConfig(r.bus).WithMasterChannelDepth(p.Host.WriteBuffer)
	s.Bus, err = busB.Build("Host.Bus")
	if err != nil {
		return nil, err
	}
	memLatency := int(r.hostMem.Cycles(clock.Time(p.Host.MemLatencyNS) * clock.Nanosecond))
	s.HostMem, err = mem.MakeBuilder().WithEnv(e).WithClock(r.hostMem).WithSize(hostMemSize).
		WithLatency(memLatency).WithBytesPerCycle(p.Host.MemBytesPerCycle).WithPortWidth(width).Build("Host.Mem")
	must(err)
	s.Sram, err = mem.MakeBuilder().WithEnv(e).WithClock(r.ni).WithSize(sramSize).WithPorts(3).
		WithLatency(p.NI.SramLatency).WithBytesPerCycle(p.NI.SramBytesPerCycle).WithPortWidth(width).Build("NI.Sram")
	must(err)
	s.Regs, err = mem.MakeRegistersBuilder().WithEnv(e).WithClock(r.ni).WithWidth(width).Build("NI.Doorbell")
	must(err)
	dmaB := dma.MakeBuilder().WithEnv(e).WithClock(r.ni).WithSetupCycles(p.NI.DMASetup).
		WithBurst(p.NI.DMABurst).WithBuffer(p.NI.DMABuffer).WithQueueDepth(p.NI.DMAQueue).WithStreamWidth(p.NI.FifoWidth)
	s.HostDMA, err = dmaB.Build("NI.HostDma")
	must(err)
	s.SendDMA, err = dmaB.Build("NI.SendDma")
	must(err)
	fifoB := fifo.MakeBuilder[[]byte]().WithEnv(e).WithDepth(p.NI.FifoDepth).WithWidth(8 * p.NI.FifoWidth)
	s.TxFifo, err = fifoB.Build("NI.TxFifo")
	must(err)
	s.RxFifo, err = fifoB.Build("Remote.RxFifo")
	must(err)
	lcfg := link.Config{Clock: r.link, BytesPerCycle: p.Link.BytesPerCycle, DelayCycles: p.Link.DelayCycles,
		VCs: 1, FlowControl: link.Credits, BufferFlits: p.Link.BufferFlits, CreditDelay: p.Link.CreditDelay,
		TxDepth: 2, CorruptProb: p.Link.CorruptProb}
	s.Link, err = link.MakeBuilder().WithEnv(e).WithConfig(lcfg).Build("Link")
	must(err)
	s.RecvDMA, err = dmaB.Build("Remote.RecvDma")
	must(err)
	s.Remote, err = mem.MakeBuilder().WithEnv(e).WithClock(r.ni).WithSize(sramSize).
		WithLatency(p.NI.SramLatency).WithBytesPerCycle(p.NI.SramBytesPerCycle).WithPortWidth(width).Build("Remote.Sram")
	must(err)
	if first != nil {
		return nil, first
	}
	total := p.Workload.PIOBytes + p.Workload.DMABytes
	s.Out = newLinkOut(e, "NI.LinkOut", r.ni, s.TxFifo, s.Link.From(link.A), p.Link.FlitBytes, p.Link.PacketBytes, total)
	s.In = newLinkIn(e, "Remote.LinkIn", r.ni, s.Link.From(link.A), s.RxFifo, p.NI.FifoWidth)
	// Always-on checkers: every packet arrives exactly once, in order.
	s.packets = check.NewConservation[uint64](e.Monitor, "Demo.Packets")
	s.Out.packets, s.In.packets = s.packets, s.packets
	s.In.order = check.NewOrdering[int](e.Monitor, "Demo.PacketOrder")
	if err := s.wire(p); err != nil {
		return nil, err
	}
	return s, nil
}

// wire connects the blocks and programs the NI and the host.
func (s *System) wire(p *Params) error {
	cpuCh, err := s.Bus.AddMaster("Cpu")
	if err != nil {
		return err
	}
	s.CPU.Attach(cpuCh)
	dmaCh, err := s.Bus.AddMaster("HostDma")
	if err != nil {
		return err
	}
	for _, t := range []struct {
		name       string
		base, size uint64
		ch         *mem.Channel
	}{{"HostMem", hostMemBase, hostMemSize, s.HostMem.Port(0)}, {"Sram", sramBase, sramSize, s.Sram.Port(0)},
		{"Doorbell", regsBase, regsSize, s.Regs.Port()}} {
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

	w := p.Workload
	total := w.PIOBytes + w.DMABytes
	s.pioData = pattern(w.PIOBytes, 0x11)
	s.dmaData = pattern(w.DMABytes, 0x5a)
	if err := s.HostMem.Storage().Write(hostBuffer, s.dmaData); err != nil {
		return err
	}

	// The NI's control logic: the doorbell starts the host DMA into SRAM
	// right after the PIO data; its completion starts the send, and the
	// receiving NI posts a receive descriptor for the whole message.
	var src, dst uint32
	s.Regs.OnWrite(func(now clock.Time, addr uint64, data []byte) {
		v := binary.LittleEndian.Uint32(pad4(data))
		switch addr {
		case regSrc:
			src = v
		case regDst:
			dst = v
		case regLen:
			s.times.doorbell = now
			d := dma.Descriptor{Src: dma.Mem(hostPort, uint64(src)), Dst: dma.Mem(sramPort, uint64(dst)), Len: int(v), Tag: 1}
			s.times.dmaSubmitted = s.HostDMA.Submit(now, d)
		}
	})
	s.HostDMA.OnDone(func(now clock.Time, d dma.Descriptor, errMsg string) {
		s.times.dmaDone = now
		s.times.sendStart = now
		s.times.sendSubmitted = s.SendDMA.Submit(now, dma.Descriptor{Src: dma.Mem(sendSrc, 0), Dst: dma.StreamPort(sendDst), Len: total, Tag: 2})
	})
	s.RecvDMA.OnDone(func(now clock.Time, d dma.Descriptor, errMsg string) { s.times.recvDone = now })
	// The receive descriptor is posted before anything arrives.
	s.times.recvAccepted = s.RecvDMA.Submit(0, dma.Descriptor{Src: dma.StreamPort(recvSrc), Dst: dma.Mem(recvDst, 0), Len: total, Tag: 3})

	// The host program: PIO stores, a fence, a read-back load, the doorbell.
	var ops []cpu.Op
	for off := 0; off < w.PIOBytes; off += w.StoreBytes {
		op := cpu.Op{Kind: cpu.Store, Addr: sramBase + uint64(off), Data: s.pioData[off : off+w.StoreBytes]}
		if off == 0 {
			op.Done = func(now clock.Time, _ []byte) { s.times.firstStore = now }
		}
		ops = append(ops, op)
	}
	ops = append(ops,
		cpu.Op{Kind: cpu.Fence, Label: "pio-fence", Done: func(now clock.Time, _ []byte) { s.times.pioDone = now }},
		cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { s.times.loadStart = now; return true }},
		cpu.Op{Kind: cpu.Load, Addr: sramBase, Len: w.StoreBytes, Label: "pio-readback",
			Done: func(now clock.Time, data []byte) { s.times.loadDone = now; s.readback = append([]byte(nil), data...) }},
		cpu.Op{Kind: cpu.Store, Addr: regsBase + regSrc, Data: le32(hostBuffer), Label: "doorbell-src"},
		cpu.Op{Kind: cpu.Store, Addr: regsBase + regDst, Data: le32(uint32(w.PIOBytes)), Label: "doorbell-dst"},
		cpu.Op{Kind: cpu.Store, Addr: regsBase + regLen, Data: le32(uint32(w.DMABytes)), Label: "doorbell-len"},
	)
	s.CPU.Run(ops...)
	return nil
}

// Run builds the demo in e, runs it and reports.
func Run(e *env.Env, p *Params) (*scenario.Report, error) {
	s, err := Build(e, p)
	if err != nil {
		return nil, err
	}
	res, runErr := e.Run()
	before := e.Monitor.Count()
	s.packets.Finish(res.End)
	if e.Monitor.Count() > before {
		runErr = errors.Join(runErr, e.Monitor.Err())
	}
	rep := s.report(p, res)
	rep.Result = res
	return rep, runErr
}

func (s *System) report(p *Params, res env.Result) *scenario.Report {
	r, _ := p.resolve()
	t := s.times
	w := p.Workload
	total := w.PIOBytes + w.DMABytes
	rep := &scenario.Report{Title: fmt.Sprintf("demo: %d B by PIO and %d B by DMA over %s, then over a %s link",
		w.PIOBytes, w.DMABytes, r.bus.Name, r.link)}

	want := append(append([]byte(nil), s.pioData...), s.dmaData...)
	got, _ := s.Remote.Storage().Bytes(0, total)
	rep.Check("bytes arrived", bytes.Equal(got, want) && t.recvDone > 0,
		"%d bytes in the remote memory match the PIO and DMA data", total)
	rep.Check("PIO read-back", bytes.Equal(s.readback, s.pioData[:min(w.StoreBytes, len(s.pioData))]),
		"the load returned the first stored word")
	rep.Check("descriptors accepted", t.dmaSubmitted && t.sendSubmitted && t.recvAccepted, "every DMA queue had room")
	sent, recv, _ := s.packets.Counts()
	rep.Check("packets", sent == recv && sent > 0, "%d sent, %d received once each, in order", sent, recv)
	crc := s.Link.From(link.A).Stats().CRCErrors
	rep.Check("link CRC", crc == 0, "%d packets failed the CRC check", crc)

	nsPer := func(d clock.Time, n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f ns", float64(d)/float64(n)/1000)
	}
	mbps := func(n int, d clock.Time) string {
		if d <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f MiB/s", float64(n)/(float64(d)/1e12)/(1<<20))
	}
	stores := w.PIOBytes / w.StoreBytes
	rep.Add("PIO stores: time per store", nsPer(t.pioDone, stores), "", "")
	rep.Add("PIO write bandwidth", mbps(w.PIOBytes, t.pioDone), "", "")
	rep.Add("PIO load latency (stall)", fmt.Sprintf("%.1f ns", float64(t.loadDone-t.loadStart)/1000), "", "")
	rep.Add("host DMA bandwidth (doorbell to done)", mbps(w.DMABytes, t.dmaDone-t.doorbell),
		fmt.Sprintf("%.1f MiB/s peak", r.bus.PeakBytesPerSecond()/(1<<20)), "LCI Table I (PCI peak)")
	bs := s.Bus.Stats()
	rep.Add("bus cycles busy / data / wait", fmt.Sprintf("%d / %d / %d", bs.BusyCycles, bs.DataCycles, bs.WaitCycles), "", "")
	rep.Add("send to receive bandwidth", mbps(total, t.recvDone-t.sendStart),
		fmt.Sprintf("%.1f MiB/s link", float64(p.Link.BytesPerCycle)*r.link.HzFloat()/(1<<20)), "MY-P10 (1.28 Gbit/s)")
	rep.Add("end to end (first store to last byte)", fmt.Sprintf("%.2f us", float64(t.recvDone)/1e6), "", "")
	rep.Add("TX FIFO max occupancy", fmt.Sprintf("%d / %d", s.TxFifo.Stats().MaxOccupancy, s.TxFifo.Depth()), "", "")
	rep.Add("link credit stalls", fmt.Sprint(s.Link.From(link.A).Stats().CreditStalls), "", "")
	return rep
}

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
