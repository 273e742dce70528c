// Package platform holds every host of the five papers as hardware
// parameters, each value with its source: the DEC 3000 model 300 of
// Telegraphos (telegraphos.txt), the Pentium Pro 200 and Pentium III 1 GHz
// of LCI (lci-myrinet-cluster-protocols.txt, Table I), the four-processor
// AlphaServer 2100 4/233 of Memory Channel and Cashmere-2L
// (cashmere-2l-memory-channel.txt, section 3), the DEC 560ST Pentium node
// with its Xpress memory bus and EISA I/O bus of SHRIMP
// (shrimp-design-choices.txt, section 2) and the DECstation 5000/200 with
// its 25 MHz TURBOchannel of the FORE ATM remote-memory prototype
// (atm-remote-memory-access.txt, section 2). ../../../shared/reference/
// parameters.md collects the papers' quotes.
//
// A Host is plain data: the presets differ only in their values, and the
// sub-structs are the component configurations the builders take, so a
// testbench passes them on as they are: the caches as memsys.CacheConfig
// (innermost level first; memsys models one cache per CPU, the last level,
// which sits on the memory bus and snoops it), the memory bus and the I/O
// bus as rtl/bus Configs, the bridge between them as a bus.BridgeConfig, the
// operating system's exception costs as a cpu.OSCosts. The package builds
// nothing.
//
// Every value in presets.go carries a source comment: a paper quote in
// guillemets, `derived:` with the arithmetic, `assumed:` with the reason, or
// `calibrated:` where host/lcilib already fitted the value (the comment is
// copied). A spec parses presets.go and fails on a field without one, and
// another checks that every quote is in the papers; a third that no preset
// leaves a field of a struct it writes out unset.
package platform

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
)

// Host is one host node of a paper as hardware parameters.
type Host struct {
	// Name is the registry key (Lookup).
	Name string
	// Model is the machine as the paper names it, for reports.
	Model string
	// Source is the paper the host comes from and its parameter IDs in
	// parameters.md.
	Source string
	// CPU is the processors of the node.
	CPU CPU
	// Caches are the data caches of each CPU, innermost level first. Each
	// level is a memsys.CacheConfig; its cycle counts are in the CPU's
	// clock. The last level sits on the memory bus (LastLevel).
	Caches []memsys.CacheConfig
	// Memory is the node's main memory.
	Memory Memory
	// MemBus is the memory bus (the processor/system bus) on which cache
	// misses, write-backs, write-throughs, uncached accesses and I/O DMA
	// are transactions.
	MemBus bus.Config
	// IOBus is the I/O bus the network interface plugs into.
	IOBus bus.Config
	// Bridge is the bridge between MemBus and IOBus.
	Bridge bus.BridgeConfig
	// OS is the operating system's and the exception hardware's cost of
	// interrupts, traps, faults, signals and mprotect, in CPU cycles.
	OS cpu.OSCosts
}

// CPU is the node's processors: Count identical CPUs, each with the
// parameters a cpu.Builder takes.
type CPU struct {
	// Count is the number of processors sharing the memory system.
	Count int
	// Clock is each processor's clock.
	Clock clock.Clock
	// IssueCycles is what a load or store costs the processor before it
	// reaches the write buffer (cpu.Builder.WithIssueCycles).
	IssueCycles int
	// PostedStores: stores retire at the write buffer rather than waiting
	// for the target (cpu.Builder.WithPostedStores).
	PostedStores bool
	// CPICycles/CPIInstrs is the cycles per instruction of a code step's
	// instructions other than its accesses (cpu.Builder.WithCPI).
	CPICycles, CPIInstrs int
	// WriteBufferEntries is the number of posted uncached stores the
	// processor can have on their way to the bus, WriteCombineBytes what
	// one entry holds (consecutive stores merged into one burst). Their
	// product over the I/O bus width is the depth of the processor's bus
	// master channel (WriteBufferBeats).
	WriteBufferEntries, WriteCombineBytes int
	// LoadLocked tells whether the processor has load-locked /
	// store-conditional (mem.Req.Atomic); without it, atomics are locked
	// read-modify-write sequences.
	LoadLocked bool
}

// Memory is the node's main memory as memsys.NodeBuilder.WithMemory and
// WithMemoryClock take it.
type Memory struct {
	// SizeBytes is the memory's size.
	SizeBytes uint64
	// Clock is the memory's clock.
	Clock clock.Clock
	// LatencyNs is the memory latency: a load that misses every cache
	// waits this long for its data. Where a paper gives it, it is measured
	// load to use, so it includes the cache lookup, the bus phases and the
	// line transfer that memsys models on their own: a memsys memory given
	// all of it (LatencyCycles) makes a cold miss that much longer (the
	// assembly spec prints by how much on each host).
	LatencyNs int
	// BytesPerCycle is the memory's data rate once the access has started.
	BytesPerCycle int
}

// LatencyCycles is LatencyNs in memory clock cycles, rounded up.
func (m Memory) LatencyCycles() int { return cyclesOf(m.Clock, m.LatencyNs) }

func cyclesOf(c clock.Clock, ns int) int {
	if !c.Valid() {
		return 0
	}
	return int(c.Cycles(clock.Time(ns) * clock.Nanosecond))
}

// LastLevel is the outermost cache level: the one memsys models per CPU,
// on the memory bus.
func (h Host) LastLevel() memsys.CacheConfig {
	if len(h.Caches) == 0 {
		return memsys.CacheConfig{}
	}
	return h.Caches[len(h.Caches)-1]
}

// MemLatencyCycles is the memory latency in cycles of clock c, rounded up
// (in CPU cycles with h.CPU.Clock, in I/O bus cycles with h.IOBus.Clock).
func (h Host) MemLatencyCycles(c clock.Clock) int { return cyclesOf(c, h.Memory.LatencyNs) }

// WriteBufferBeats is the processor's posted-write buffer in I/O bus beats:
// the depth of its bus master channel.
func (h Host) WriteBufferBeats() int {
	if h.IOBus.WidthBytes < 1 {
		return 0
	}
	return h.CPU.WriteBufferEntries * h.CPU.WriteCombineBytes / h.IOBus.WidthBytes
}

// Validate checks every parameter; an error names the host and the field
// (CPU.Count, Caches[1], Memory.LatencyNs, MemBus, ...).
func (h Host) Validate() error {
	if h.Name == "" {
		return errors.New("platform: Name is empty")
	}
	if err := h.validate(); err != nil {
		return fmt.Errorf("platform %s: %w", h.Name, err)
	}
	return nil
}

func (h Host) validate() error {
	c := h.CPU
	switch {
	case c.Count < 1:
		return fmt.Errorf("CPU.Count %d must be at least 1", c.Count)
	case !c.Clock.Valid():
		return errors.New("CPU.Clock is not set")
	case c.IssueCycles < 1:
		return fmt.Errorf("CPU.IssueCycles %d must be at least 1", c.IssueCycles)
	case c.CPICycles < 1 || c.CPIInstrs < 1:
		return fmt.Errorf("CPU.CPICycles/CPIInstrs %d/%d must both be at least 1", c.CPICycles, c.CPIInstrs)
	case c.WriteBufferEntries < 1:
		return fmt.Errorf("CPU.WriteBufferEntries %d must be at least 1", c.WriteBufferEntries)
	case c.WriteCombineBytes < 1:
		return fmt.Errorf("CPU.WriteCombineBytes %d must be at least 1", c.WriteCombineBytes)
	}
	if len(h.Caches) == 0 {
		return errors.New("Caches: a host needs at least one cache level")
	}
	for i, l := range h.Caches {
		if err := l.Validate(); err != nil {
			return fmt.Errorf("Caches[%d]: %w", i, err)
		}
		if i == 0 {
			continue
		}
		in := h.Caches[i-1]
		switch {
		case l.LineBytes < in.LineBytes:
			return fmt.Errorf("Caches[%d].LineBytes %d must be at least the inner level's %d", i, l.LineBytes, in.LineBytes)
		case l.CapacityBytes <= in.CapacityBytes:
			return fmt.Errorf("Caches[%d].CapacityBytes %d must exceed the inner level's %d", i, l.CapacityBytes, in.CapacityBytes)
		case l.PageBytes != in.PageBytes:
			return fmt.Errorf("Caches[%d].PageBytes %d must equal the inner level's %d (one page size per host)", i, l.PageBytes, in.PageBytes)
		}
	}
	m := h.Memory
	switch {
	case m.SizeBytes < uint64(h.LastLevel().PageBytes):
		return fmt.Errorf("Memory.SizeBytes %d must hold at least a page (%d bytes)", m.SizeBytes, h.LastLevel().PageBytes)
	case !m.Clock.Valid():
		return errors.New("Memory.Clock is not set")
	case m.LatencyNs < 1:
		return fmt.Errorf("Memory.LatencyNs %d must be at least 1", m.LatencyNs)
	case m.BytesPerCycle < 1:
		return fmt.Errorf("Memory.BytesPerCycle %d must be at least 1", m.BytesPerCycle)
	}
	if err := h.MemBus.Validate(); err != nil {
		return fmt.Errorf("MemBus: %w", err)
	}
	if err := h.IOBus.Validate(); err != nil {
		return fmt.Errorf("IOBus: %w", err)
	}
	if err := h.Bridge.Validate(); err != nil {
		return fmt.Errorf("Bridge: %w", err)
	}
	if err := h.OS.Validate(); err != nil {
		return fmt.Errorf("OS: %w", err)
	}
	ll := h.LastLevel()
	switch {
	case ll.LineBytes%h.MemBus.WidthBytes != 0:
		return fmt.Errorf("Caches[%d].LineBytes %d must be a multiple of MemBus.WidthBytes %d (a fill is whole bus beats)",
			len(h.Caches)-1, ll.LineBytes, h.MemBus.WidthBytes)
	case h.Bridge.LineBytes%h.MemBus.WidthBytes != 0 || h.Bridge.LineBytes%h.IOBus.WidthBytes != 0:
		return fmt.Errorf("Bridge.LineBytes %d must be a multiple of MemBus.WidthBytes %d and IOBus.WidthBytes %d",
			h.Bridge.LineBytes, h.MemBus.WidthBytes, h.IOBus.WidthBytes)
	case c.WriteCombineBytes%h.IOBus.WidthBytes != 0:
		return fmt.Errorf("CPU.WriteCombineBytes %d must be a multiple of IOBus.WidthBytes %d", c.WriteCombineBytes, h.IOBus.WidthBytes)
	}
	return nil
}

// preset is one registry entry.
type preset struct {
	name string
	fn   func() Host
}

// presets is the registry in the order of issue 11 section 3 (Telegraphos,
// LCI, Memory Channel, SHRIMP, ATM); Names and Lookup read it.
var presets = []preset{
	{"dec3000-300", DEC3000Model300},
	{"ppro", PPro},
	{"p3", P3},
	{"alphaserver2100", AlphaServer2100},
	{"dec560st", DEC560ST},
	{"decstation5000-200", DECstation5000},
}

// Names returns the preset names in a fixed order: the papers' order in
// issue 11 (Telegraphos, LCI's two, Memory Channel, SHRIMP, FORE ATM).
func Names() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.name
	}
	return out
}

// Lookup returns the named preset (case-insensitive); an unknown name is an
// error listing the names there are.
func Lookup(name string) (Host, error) {
	for _, p := range presets {
		if strings.EqualFold(p.name, name) {
			return p.fn(), nil
		}
	}
	return Host{}, fmt.Errorf("unknown host platform %q (have %s)", name, strings.Join(Names(), ", "))
}
