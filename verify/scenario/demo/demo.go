// Package demo is nisim's first scenario: a host on a PCI bus writes a few
// kilobytes into a network interface's SRAM, first by programmed I/O (the
// processor's stores) and then by DMA (the NI's host DMA engine, started by
// a doorbell write); the NI's send DMA engine then streams both through a
// transmit FIFO onto a credit-flow-controlled link, and a receive DMA engine
// at the far end writes them into a second memory. The system is assembled
// and run by its testbench (verify/testbench/demotb); the scenario checks
// that the bytes arrived, and reports latency and throughput next to the
// peak figures of the LCI paper's PPro platform.
package demo

import (
	"bytes"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/demotb"
)

// sramRegion is the part of the NI's SRAM the demo uses.
const sramRegion = demotb.SRAMRegion

// Scenario returns the demo scenario.
func Scenario() *scenario.Scenario {
	return &scenario.Scenario{
		Name:    "demo",
		Summary: "PIO and DMA over PCI into NI SRAM, FIFO, credit link, memory",
		System:  "demo",
		// Typical: measured once with /usr/bin/time on a 2-core machine,
		// 2026-11-27 (documentation only).
		Typical:  "< 0.1 s",
		Defaults: func() scenario.Params { return Defaults() },
		Run: func(e *env.Env, p scenario.Params) (*scenario.Report, error) {
			return Run(e, p.(*Params))
		},
		Waves: waveView,
	}
}

// config returns the system of p (after Validate) for the testbench.
func (p *Params) config() demotb.Config {
	r, _ := p.resolve()
	h, n, l, w := p.Host, p.NI, p.Link, p.Workload
	return demotb.Config{
		Host: demotb.HostConfig{Clock: r.host, IssueCycles: h.IssueCycles, WriteBuffer: h.WriteBuffer,
			MemClock: r.hostMem, MemLatency: clock.Time(h.MemLatencyNS) * clock.Nanosecond, MemBytesPerCycle: h.MemBytesPerCycle},
		Bus: r.bus,
		NI: demotb.NIConfig{Clock: r.ni, SramLatency: n.SramLatency, SramBytesPerCycle: n.SramBytesPerCycle,
			DMASetup: n.DMASetup, DMABurst: n.DMABurst, DMABuffer: n.DMABuffer, DMAQueue: n.DMAQueue,
			FifoDepth: n.FifoDepth, FifoWidth: n.FifoWidth},
		Link: demotb.LinkConfig{Clock: r.link, BytesPerCycle: l.BytesPerCycle, DelayCycles: l.DelayCycles,
			BufferFlits: l.BufferFlits, CreditDelay: l.CreditDelay, FlitBytes: l.FlitBytes, PacketBytes: l.PacketBytes,
			CorruptProb: l.CorruptProb},
		Workload: demotb.Workload{PIOBytes: w.PIOBytes, StoreBytes: w.StoreBytes, DMABytes: w.DMABytes},
	}
}

// Run builds the demo of p in e (demotb.Run), runs it and reports.
func Run(e *env.Env, p *Params) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s, res, runErr := demotb.Run(e, p.config())
	if s == nil {
		return nil, runErr
	}
	rep := p.report(s)
	rep.Result = res
	return rep, runErr
}

func (p *Params) report(s *demotb.System) *scenario.Report {
	r, _ := p.resolve()
	t := s.Times
	w := p.Workload
	total := w.PIOBytes + w.DMABytes
	rep := &scenario.Report{Title: fmt.Sprintf("demo: %d B by PIO and %d B by DMA over %s, then over a %s link",
		w.PIOBytes, w.DMABytes, r.bus.Name, r.link)}

	want := append(append([]byte(nil), s.PIOData...), s.DMAData...)
	got, _ := s.Remote.Storage().Bytes(0, total)
	rep.Check("bytes arrived", bytes.Equal(got, want) && t.RecvDone > 0,
		"%d bytes in the remote memory match the PIO and DMA data", total)
	rep.Check("PIO read-back", bytes.Equal(s.Readback, s.PIOData[:min(w.StoreBytes, len(s.PIOData))]),
		"the load returned the first stored word")
	rep.Check("descriptors accepted", t.DMASubmitted && t.SendSubmitted && t.RecvAccepted, "every DMA queue had room")
	sent, recv, _ := s.Packets.Counts()
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
	rep.Add("PIO stores: time per store", nsPer(t.PIODone, stores), "", "")
	rep.Add("PIO write bandwidth", mbps(w.PIOBytes, t.PIODone), "", "")
	rep.Add("PIO load latency (stall)", fmt.Sprintf("%.1f ns", float64(t.LoadDone-t.LoadStart)/1000), "", "")
	rep.Add("host DMA bandwidth (doorbell to done)", mbps(w.DMABytes, t.DMADone-t.Doorbell),
		fmt.Sprintf("%.1f MiB/s peak", r.bus.PeakBytesPerSecond()/(1<<20)), "LCI Table I (PCI peak)")
	bs := s.Bus.Stats()
	rep.Add("bus cycles busy / data / wait", fmt.Sprintf("%d / %d / %d", bs.BusyCycles, bs.DataCycles, bs.WaitCycles), "", "")
	rep.Add("send to receive bandwidth", mbps(total, t.RecvDone-t.SendStart),
		fmt.Sprintf("%.1f MiB/s link", float64(p.Link.BytesPerCycle)*r.link.HzFloat()/(1<<20)), "MY-P10 (1.28 Gbit/s)")
	rep.Add("end to end (first store to last byte)", fmt.Sprintf("%.2f us", float64(t.RecvDone)/1e6), "", "")
	rep.Add("TX FIFO max occupancy", fmt.Sprintf("%d / %d", s.TxFifo.Stats().MaxOccupancy, s.TxFifo.Depth()), "", "")
	rep.Add("link credit stalls", fmt.Sprint(s.Link.From(link.A).Stats().CreditStalls), "", "")
	return rep
}
