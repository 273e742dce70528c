package lcilib

import (
	"fmt"

	"github.com/nisim/nisim/lanai"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/switch/myrinet"
)

// Platform is a cluster's hardware (Table I of
// lci-myrinet-cluster-protocols.txt). The two presets differ only here:
// software and firmware costs are in cycles and are the same on both.
type Platform struct {
	Name string
	// CPU is the host processor clock (MY-P2).
	CPU clock.Clock
	// MemLatencyNs is the measured host memory latency (MY-P6): a cache
	// line the NI's DMA has overwritten costs this much to read, and so
	// does a DMA read of host memory behind the PCI bridge.
	MemLatencyNs int
	// LineBytes is the cache line size. assumed: 32 bytes, the P6
	// family's line (both platforms).
	LineBytes int
	// L2Bytes is the second-level cache: «256 KB I+D» on both (MY-P4).
	L2Bytes int
	// CopyMBps is memcpy's rate for buffers larger than L2 (MY-P34 on the
	// PPro); CachedCopyBytesPerCycle the rate within the caches.
	CopyMBps                int
	CachedCopyBytesPerCycle int
	// Bus is the I/O bus (MY-P7).
	Bus bus.Config
	// BridgeReadCycles is what a DMA read of host memory waits in the
	// PCI-to-memory bridge beyond the memory latency (the delayed read:
	// the bridge fetches the line while the master is told to retry),
	// in bus cycles. calibrated: 60 cycles (1.8 µs), fitted to the PPro
	// I-sdma gap g = 11.1 µs (Table III); the P3's 33 MHz PCI keeps the
	// same count. DMA writes are posted in the bridge and take
	// BridgeWriteCycles (assumed: 2), as do reads that continue the
	// previous one (the bridge has prefetched their data).
	BridgeReadCycles, BridgeWriteCycles int
	// WCBytes is the write-combining buffer: consecutive PIO stores
	// leave as one burst of this many bytes. assumed: 32, a line (P6).
	// The processor's posted-write buffer holds one such line
	// (WriteBufferBeats).
	WCBytes int
	// NI is the network interface card, Net the Myrinet generation.
	NI  lanai.Config
	Net myrinet.Platform
	// RecvBufs is the NI receive buffers (MY-P22).
	RecvBufs int
	// WatchdogUs is the polling watchdog's timeout (MY-P26).
	WatchdogUs int
	// Topology is the 64-node network: grid (PPro, MY-P17) or clos (P3,
	// MY-P20).
	Topology string
}

// bridgeRead is BridgeReadCycles on both platforms (see Platform).
const bridgeRead = 60

// PPro is the PPro platform of Table I.
func PPro() Platform {
	return Platform{
		Name: "PPro",
		// «Intel Pentium Pro, 200 MHz» (MY-P2)
		CPU: clock.MHz(200),
		// «66 MHz EDO ram with a measured latency of 236 ns» (MY-P6)
		MemLatencyNs: 236,
		LineBytes:    32,
		L2Bytes:      256 << 10,
		// «the Pentium Pro's low memcpy speed for large buffers (52
		// Mbyte/s)» (MY-P34)
		CopyMBps: 52,
		// assumed: one byte per cycle within the caches.
		CachedCopyBytesPerCycle: 1,
		// «32 bit, 33 MHz PCI 127.2 Mbyte/s» (MY-P7)
		Bus:               bus.PCI32(),
		BridgeReadCycles:  bridgeRead,
		BridgeWriteCycles: 2,
		WCBytes:           32,
		NI:                lanai.LANai4(),
		Net:               myrinet.PPro(),
		// «the PPro platform has space for 256 buffers of 2 Kbyte» (MY-P22)
		RecvBufs: 256,
		// «70 µs on the PPro platform» (MY-P26)
		WatchdogUs: 70,
		Topology:   "grid",
	}
}

// P3 is the P3 platform of Table I.
func P3() Platform {
	return Platform{
		Name: "P3",
		// «Intel Pentium-III, 1 GHz» (MY-P2)
		CPU: clock.MHz(1000),
		// «133 MHz SDRAM with a measured latency of 113 ns» (MY-P6)
		MemLatencyNs: 113,
		LineBytes:    32,
		L2Bytes:      256 << 10,
		// assumed: 400 MB/s for large copies; the paper says only that
		// «The P3 platform has enough spare memory bandwidth to
		// accommodate the additional copying» (section 5.2.4).
		CopyMBps:                400,
		CachedCopyBytesPerCycle: 1,
		// «64 bit, 33 MHz PCI 254.3 Mbyte/s» (MY-P7)
		Bus:               bus.PCI64(),
		BridgeReadCycles:  bridgeRead,
		BridgeWriteCycles: 2,
		WCBytes:           32,
		NI:                lanai.LANai9(),
		Net:               myrinet.P3(),
		// «on the P3 platform the number of buffers is doubled» (MY-P22)
		RecvBufs: 512,
		// «30 µs on the P3 platform» (MY-P26)
		WatchdogUs: 30,
		Topology:   "clos",
	}
}

// PlatformPreset returns the named platform: ppro or p3.
func PlatformPreset(name string) (Platform, error) {
	switch name {
	case "ppro", "PPro":
		return PPro(), nil
	case "p3", "P3":
		return P3(), nil
	}
	return Platform{}, fmt.Errorf("unknown platform %q (have ppro, p3)", name)
}

// WriteBufferBeats is the processor's posted-write buffer in bus beats:
// one write-combining line (8 beats on 32-bit PCI, 4 on 64-bit).
func (p Platform) WriteBufferBeats() int { return p.WCBytes / p.Bus.WidthBytes }

// MemLatencyCycles is the memory latency in CPU cycles.
func (p Platform) MemLatencyCycles() int {
	return int(p.CPU.Cycles(clock.Time(p.MemLatencyNs) * clock.Nanosecond))
}

// MemLatencyBusCycles is the memory latency in I/O bus cycles (what a DMA
// read waits behind the bridge).
func (p Platform) MemLatencyBusCycles() int {
	return int(p.Bus.Clock.Cycles(clock.Time(p.MemLatencyNs) * clock.Nanosecond))
}

// WatchdogCycles is the watchdog timeout in NI cycles.
func (p Platform) WatchdogCycles() int {
	return int(p.NI.Clock.Cycles(clock.Time(p.WatchdogUs) * clock.Microsecond))
}

// Validate checks the platform.
func (p Platform) Validate() error {
	switch {
	case !p.CPU.Valid():
		return fmt.Errorf("platform %s: no CPU clock", p.Name)
	case p.MemLatencyNs < 1 || p.LineBytes < 4 || p.L2Bytes < p.LineBytes:
		return fmt.Errorf("platform %s: memory latency %d ns, line %d bytes, L2 %d bytes", p.Name, p.MemLatencyNs, p.LineBytes, p.L2Bytes)
	case p.CopyMBps < 1 || p.CachedCopyBytesPerCycle < 1:
		return fmt.Errorf("platform %s: copy rates %d MB/s and %d bytes/cycle must be positive", p.Name, p.CopyMBps, p.CachedCopyBytesPerCycle)
	case p.WCBytes < p.Bus.WidthBytes || p.WCBytes%p.Bus.WidthBytes != 0:
		return fmt.Errorf("platform %s: write-combining %d bytes must be a multiple of the bus width %d", p.Name, p.WCBytes, p.Bus.WidthBytes)
	case p.BridgeReadCycles < 0 || p.BridgeWriteCycles < 0:
		return fmt.Errorf("platform %s: bridge read %d and write %d cycles must not be negative", p.Name, p.BridgeReadCycles, p.BridgeWriteCycles)
	case p.RecvBufs < 2 || p.WatchdogUs < 1:
		return fmt.Errorf("platform %s: %d receive buffers, watchdog %d µs", p.Name, p.RecvBufs, p.WatchdogUs)
	case p.Topology != "grid" && p.Topology != "clos":
		return fmt.Errorf("platform %s: unknown topology %q (have grid, clos)", p.Name, p.Topology)
	}
	if err := p.Bus.Validate(); err != nil {
		return fmt.Errorf("platform %s: %w", p.Name, err)
	}
	return p.NI.Validate()
}
