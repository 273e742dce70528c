package bus_test

import (
	"testing"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// BenchmarkBridgeDMARead has a PCI master read 64 KiB of host memory in
// 256-byte bursts through a PCIHostBridge onto a 66 MHz memory bus (the
// first read delayed, the rest prefetched) and reports simulated PCI
// cycles per second.
func BenchmarkBridgeDMARead(b *testing.B) {
	memClk, _ := clock.Ratio(200_000_000, 3)
	mc := bus.Config{Name: "membus", Clock: memClk, WidthBytes: 8, ArbCycles: 1, AddrCycles: 1, MaxBurstBytes: 32}
	pciCfg := bus.PCI32()
	const total, burst = 64 << 10, 256
	var cycles uint64
	for b.Loop() {
		e := env.New(env.Options{})
		mb, _ := bus.MakeBuilder().WithEnv(e).WithConfig(mc).Build("MemBus")
		pci, _ := bus.MakeBuilder().WithEnv(e).WithConfig(pciCfg).Build("PCI")
		m, _ := mem.MakeBuilder().WithEnv(e).WithClock(memClk).WithSize(total).WithPortWidth(8).WithBytesPerCycle(8).
			WithLatency(16).WithSequentialReadLatency(2).Build("Mem")
		if err := mb.AddTarget("Mem", 0, total, m.Port(0)); err != nil {
			b.Fatal(err)
		}
		if _, err := bus.MakeBridgeBuilder().WithEnv(e).WithBuses(mb, pci).WithDMAWindow(0, total, 0).Build("Br"); err != nil {
			b.Fatal(err)
		}
		ch, _ := pci.AddMaster("NI")
		next, got := 0, 0
		a := newDriver(e, pciCfg.Clock, func(now clock.Time) bool {
			if beat, ok := ch.Up.Pop(now); ok {
				got += len(beat.Data)
			}
			if next < total && next == got && ch.Down.CanPush(now) {
				ch.Down.Push(now, mem.Beat{Req: &mem.Req{Op: mem.Read, Addr: uint64(next), Len: burst, Class: "dma"}, First: true, Last: true})
				next += burst
			}
			return got < total
		})
		ch.ConnectMaster(a)
		a.Start()
		res, err := e.Run()
		if err != nil {
			b.Fatal(err)
		}
		cycles += uint64(pciCfg.Clock.CycleAt(res.End))
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
}

// driver is a clocked benchmark master (vtest.Agent needs a Ginkgo spec).
type driver struct {
	*clock.Ticking
	step func(now clock.Time) bool
}

func newDriver(e *env.Env, clk clock.Clock, step func(now clock.Time) bool) *driver {
	d := &driver{step: step}
	d.Ticking = clock.NewTicking("Drv", e.Engine, clk, d)
	return d
}

// Tick implements clock.Ticker.
func (d *driver) Tick(now clock.Time) bool { return d.step(now) }
