package lcilib

import (
	"fmt"

	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/lanai"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/switch/myrinet"
)

// Platform is a cluster's hardware (Table I of
// lci-myrinet-cluster-protocols.txt): the host node as host/platform gives
// it (CPU, caches, memory, memory bus, PCI bridge and PCI bus), the card,
// the network, and the few host properties the library's cost model reads
// that are not a component's parameter (the memcpy rates). The two presets
// differ only here: software and firmware costs are in cycles and are the
// same on both.
type Platform struct {
	// Name is the platform as the paper's tables name it (PPro, P3).
	Name string
	// Host is the host node: host/platform's PPro or P3 preset. A
	// testbench builds it as CPU -> last-level cache (memsys) -> memory
	// bus with host memory -> PCI bridge -> PCI with the card.
	Host platform.Host
	// CopyMBps is memcpy's rate for buffers larger than L2 (MY-P34 on the
	// PPro); CachedCopyBytesPerCycle the rate within the caches.
	CopyMBps                int
	CachedCopyBytesPerCycle int
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

// PPro is the PPro platform of Table I.
func PPro() Platform {
	return Platform{
		Name: "PPro",
		// The host: «Intel Pentium Pro, 200 MHz» (MY-P2), «66 MHz EDO ram
		// with a measured latency of 236 ns» (MY-P6), «32 bit, 33 MHz PCI
		// 127.2 Mbyte/s» (MY-P7); host/platform gives every value its
		// source, the bridge's calibration included.
		Host: platform.PPro(),
		// «the Pentium Pro's low memcpy speed for large buffers (52
		// Mbyte/s)» (MY-P34)
		CopyMBps: 52,
		// assumed: one byte per cycle within the caches.
		CachedCopyBytesPerCycle: 1,
		NI:                      lanai.LANai4(),
		Net:                     myrinet.PPro(),
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
		// The host: «Intel Pentium-III, 1 GHz» (MY-P2), «133 MHz SDRAM
		// with a measured latency of 113 ns» (MY-P6), «64 bit, 33 MHz PCI
		// 254.3 Mbyte/s» (MY-P7); sources in host/platform.
		Host: platform.P3(),
		// assumed: 400 MB/s for large copies; the paper says only that
		// «The P3 platform has enough spare memory bandwidth to
		// accommodate the additional copying» (section 5.2.4).
		CopyMBps:                400,
		CachedCopyBytesPerCycle: 1,
		NI:                      lanai.LANai9(),
		Net:                     myrinet.P3(),
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

// CPU is the host processor's clock (MY-P2).
func (p Platform) CPU() clock.Clock { return p.Host.CPU.Clock }

// L2Bytes is the host's last-level cache: «256 KB I+D» on both (MY-P4).
func (p Platform) L2Bytes() int { return p.Host.LastLevel().CapacityBytes }

// WCBytes is the processor's write-combining buffer: consecutive PIO stores
// to the card leave as one burst of this many bytes (host/platform's
// CPU.WriteCombineBytes).
func (p Platform) WCBytes() int { return p.Host.CPU.WriteCombineBytes }

// WatchdogCycles is the watchdog timeout in NI cycles.
func (p Platform) WatchdogCycles() int {
	return int(p.NI.Clock.Cycles(clock.Time(p.WatchdogUs) * clock.Microsecond))
}

// Validate checks the platform.
func (p Platform) Validate() error {
	if err := p.Host.Validate(); err != nil {
		return fmt.Errorf("platform %s: %w", p.Name, err)
	}
	switch {
	case p.CopyMBps < 1 || p.CachedCopyBytesPerCycle < 1:
		return fmt.Errorf("platform %s: copy rates %d MB/s and %d bytes/cycle must be positive", p.Name, p.CopyMBps, p.CachedCopyBytesPerCycle)
	case p.Host.Memory.SizeBytes < HostMemBytes:
		return fmt.Errorf("platform %s: Host.Memory.SizeBytes %d is below the library's memory map (%d bytes)", p.Name, p.Host.Memory.SizeBytes, HostMemBytes)
	case p.RecvBufs < 2 || p.WatchdogUs < 1:
		return fmt.Errorf("platform %s: %d receive buffers, watchdog %d µs", p.Name, p.RecvBufs, p.WatchdogUs)
	case p.Topology != "grid" && p.Topology != "clos":
		return fmt.Errorf("platform %s: unknown topology %q (have grid, clos)", p.Name, p.Topology)
	}
	return p.NI.Validate()
}
