package memsys

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// NodeBuilder configures a Node: one memory on a memory bus and a cache per
// CPU (the AlphaServer 2100 4/233 of Cashmere-2L has four CPUs on one
// memory system). The CPUs themselves are the caller's: each attaches to
// its cache's Port.
type NodeBuilder struct {
	env       *env.Env
	cpuClocks []clock.Clock
	cache     CacheConfig
	busCfg    bus.Config
	busDepth  int
	memClock  clock.Clock
	memSize   uint64
	memBase   uint64
	memLat    int
	memBPC    int
	devPorts  int
	policies  []region
	haveBus   bool
	haveClock bool
}

// MakeNodeBuilder returns a builder with DefaultCacheConfig, 16 MiB of
// memory at bus address 0 with a latency of 1 memory cycle, streaming a bus
// width per cycle, and bus master channels 4 deep.
func MakeNodeBuilder() NodeBuilder {
	return NodeBuilder{cache: DefaultCacheConfig(), memSize: 16 << 20, memLat: 1, busDepth: 4}
}

// WithEnv sets the simulation (required).
func (b NodeBuilder) WithEnv(e *env.Env) NodeBuilder { b.env = e; return b }

// WithCPUs sets n CPUs (and caches), all on clock clk.
func (b NodeBuilder) WithCPUs(n int, clk clock.Clock) NodeBuilder {
	b.cpuClocks = make([]clock.Clock, n)
	for i := range b.cpuClocks {
		b.cpuClocks[i] = clk
	}
	return b
}

// WithCPUClocks sets one CPU (and cache) per clock given.
func (b NodeBuilder) WithCPUClocks(clks ...clock.Clock) NodeBuilder {
	b.cpuClocks = append([]clock.Clock(nil), clks...)
	return b
}

// WithCache sets every cache's geometry and timing.
func (b NodeBuilder) WithCache(c CacheConfig) NodeBuilder { b.cache = c; return b }

// WithBus sets the memory bus's timing (required: the platform's memory
// bus, an rtl/bus Config).
func (b NodeBuilder) WithBus(c bus.Config) NodeBuilder { b.busCfg, b.haveBus = c, true; return b }

// WithBusMasterDepth sets the depth of the bus master channels: the bus
// transactions a cache (or another master) can queue.
func (b NodeBuilder) WithBusMasterDepth(n int) NodeBuilder { b.busDepth = n; return b }

// WithMemoryClock sets the memory's clock (default: the bus clock).
func (b NodeBuilder) WithMemoryClock(c clock.Clock) NodeBuilder {
	b.memClock, b.haveClock = c, true
	return b
}

// WithMemory sets the memory's size, its bus address, its latency in memory
// cycles and its data rate in bytes per memory cycle (0: the bus width).
func (b NodeBuilder) WithMemory(size, base uint64, latency, bytesPerCycle int) NodeBuilder {
	b.memSize, b.memBase, b.memLat, b.memBPC = size, base, latency, bytesPerCycle
	return b
}

// WithDevicePorts adds n memory ports beside the bus's (port 0), for
// devices wired to memory without crossing the memory bus; their writes
// invalidate the caches' lines as bus writes do (Node.DevicePort).
func (b NodeBuilder) WithDevicePorts(n int) NodeBuilder { b.devPorts = n; return b }

// WithPolicy sets the write policy of [base, base+size) in every cache.
func (b NodeBuilder) WithPolicy(base, size uint64, p Policy) NodeBuilder {
	b.policies = append(append([]region(nil), b.policies...), region{base, size, p})
	return b
}

// Node is a host's memory system: Memory behind Bus, and Caches, one per
// CPU, as masters and observers of the bus.
type Node struct {
	Memory *mem.Memory
	Bus    *bus.Bus
	Caches []*Cache
	base   uint64
}

// Build creates the node's hardware: name.Mem, name.Bus and
// name.Cache[i].
func (b NodeBuilder) Build(name string) (*Node, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case len(b.cpuClocks) == 0:
		return nil, errors.New(name + ": CPUs: a node needs at least one CPU")
	case !b.haveBus:
		return nil, errors.New(name + ": no memory bus configuration")
	case b.devPorts < 0:
		return nil, fmt.Errorf("%s: device ports %d must not be negative", name, b.devPorts)
	case b.memBPC < 0:
		return nil, fmt.Errorf("%s: memory bytes per cycle %d must not be negative", name, b.memBPC)
	}
	bs, err := bus.MakeBuilder().WithEnv(b.env).WithConfig(b.busCfg).WithMasterChannelDepth(b.busDepth).Build(name + ".Bus")
	if err != nil {
		return nil, err
	}
	mclk := b.busCfg.Clock
	if b.haveClock {
		mclk = b.memClock
	}
	bpc := b.memBPC
	if bpc == 0 {
		bpc = b.busCfg.WidthBytes
	}
	m, err := mem.MakeBuilder().WithEnv(b.env).WithClock(mclk).WithSize(b.memSize).WithLatency(b.memLat).
		WithBytesPerCycle(bpc).WithPorts(1 + b.devPorts).WithPortWidth(b.busCfg.WidthBytes).Build(name + ".Mem")
	if err != nil {
		return nil, err
	}
	if err := bs.AddTarget(name+".Mem", b.memBase, b.memSize, m.Port(0)); err != nil {
		return nil, err
	}
	n := &Node{Memory: m, Bus: bs, base: b.memBase}
	for i, clk := range b.cpuClocks {
		cb := MakeCacheBuilder().WithEnv(b.env).WithClock(clk).WithConfig(b.cache).WithBus(bs).WithMemory(m, b.memBase)
		for _, r := range b.policies {
			cb = cb.WithPolicy(r.base, r.size, r.policy)
		}
		c, err := cb.Build(fmt.Sprintf("%s.Cache[%d]", name, i))
		if err != nil {
			return nil, err
		}
		n.Caches = append(n.Caches, c)
	}
	if b.devPorts > 0 {
		m.SubscribeWrites(func(now clock.Time, w mem.WriteEvent) {
			if w.Port == 0 {
				return // seen on the bus
			}
			for _, c := range n.Caches {
				c.SnoopWrite(now, n.base+w.Addr, len(w.Data), w.Master)
			}
		})
	}
	return n, nil
}

// DevicePort returns memory port i+1, the i-th device port.
func (n *Node) DevicePort(i int) *mem.Channel { return n.Memory.Port(i + 1) }

// SetPolicy sets the write policy of [base, base+size) in every cache (see
// Cache.SetPolicy).
func (n *Node) SetPolicy(base, size uint64, p Policy) error {
	for _, c := range n.Caches {
		if err := c.SetPolicy(base, size, p); err != nil {
			return err
		}
	}
	return nil
}

// CheckCoherence checks the single-writer rule over the node's caches: a
// line dirty in one cache is present in no other. Call it when the node is
// quiet (between snoops a cache applies at its next edge, a line can be
// held in two caches for a cycle); it returns an error naming the first
// offending line.
func (n *Node) CheckCoherence() error {
	type holders struct{ present, dirty int }
	lines := map[uint64]*holders{}
	for _, c := range n.Caches {
		for _, w := range c.ways {
			if w.state == invalid {
				continue
			}
			h := lines[w.line<<c.lineShift]
			if h == nil {
				h = &holders{}
				lines[w.line<<c.lineShift] = h
			}
			h.present++
			if w.state == modified {
				h.dirty++
			}
		}
	}
	var bad []uint64
	for addr, h := range lines {
		if h.dirty > 0 && h.present > 1 {
			bad = append(bad, addr)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	h := lines[bad[0]]
	return fmt.Errorf("line %#x is dirty in %d caches and present in %d (%d lines break the single-writer rule)", bad[0], h.dirty, h.present, len(bad))
}
