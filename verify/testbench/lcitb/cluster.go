package lcitb

import (
	"fmt"
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/host/lcilib"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/lanai"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/topology"
)

// Config is a cluster to build.
type Config struct {
	Platform lcilib.Platform
	// Nodes is how many of the 64 hosts of the network get a node (the
	// first ones); the buffers are reserved for all 64 regardless.
	Nodes   int
	Variant lci.Variant
	// Reliability is the retransmission protocol: none (the base
	// implementation), the NI's (I-nirx; its host side is I-sdma's:
	// «Since I-sdma and I-nirx perform the same work on the host», section
	// 5.1.3) or the host library's (I-hrx, section 5.1.1: the host
	// serves fetch-and-add and acknowledges, so a process that stops
	// polling while others still send to it needs Interrupts; RunTraffic
	// sets it).
	Reliability lci.Reliability
	Tree        lci.Tree
	// Interrupts enables the polling watchdog and network signals.
	Interrupts bool
	// HostForward selects host-level multicast forwarding, I-sdma-hmc
	// (I-pio-hmc with PIO; section 5.4, lci.Config.HostForward): the
	// hosts forward multicast packets when their library takes them.
	HostForward bool
	// Host are the library's costs; Firmware the control program's
	// instruction estimates, which FirmwareConfig turns into cycles at the
	// platform's LANai CPI (lanai.Config.CPI100).
	Host     lcilib.Costs
	Firmware lci.Costs
	// CorruptProb and DropProb are the probabilities that a packet is
	// corrupted, or lost, on each link it crosses (every link of the
	// network, host links included): the transient failures the
	// retransmitting variants recover from («lost, corrupted, and dropped
	// packets», section 5.1). 0 in the paper's measurements.
	CorruptProb, DropProb float64
	// MTU is the packet size: 0 for the base implementation's 2 KB
	// (lci.BaseMTU); 1024 and 4096 are I-1k and I-4k (section 5.3, Table
	// II). The platform's buffer counts are for 2 KB buffers (MY-P22):
	// FirmwareConfig rescales them to the MTU with the buffer bytes held
	// constant (lci.Config.WithMTU), so the window W follows.
	MTU int
	// ClusterSize and HostSlots, when not 0, replace the control
	// program's cluster size (the senders its receive buffers are
	// reserved for, 64 by default: lci.Config.ClusterSize) and host
	// receive slots (lci.Config.HostSlots): directed tests use them to
	// make a receive pool small enough to run dry in a few packets.
	ClusterSize, HostSlots int
}

// DefaultConfig is two PPro nodes running I-sdma.
func DefaultConfig() Config {
	return Config{Platform: lcilib.PPro(), Nodes: 2, Host: lcilib.DefaultCosts(), Firmware: lci.DefaultInstructions()}
}

// FirmwareConfig is the control program's configuration on the platform.
func (c Config) FirmwareConfig() lci.Config {
	fw := lci.DefaultConfig()
	fw.Variant, fw.Reliability, fw.Tree, fw.Interrupts, fw.HostForward = c.Variant, c.Reliability, c.Tree, c.Interrupts, c.HostForward
	fw.Costs = c.Firmware.AtCPI(c.Platform.NI.CPI100)
	fw.RecvBufs = c.Platform.RecvBufs
	fw.WatchdogCycles = c.Platform.WatchdogCycles()
	fw.AckDelayCycles, fw.RetransmitCycles = lci.RxAckDelay(fw.WatchdogCycles), lci.RxRetransmit(fw.WatchdogCycles)
	if c.MTU != 0 {
		fw = fw.WithMTU(c.MTU)
	}
	if c.ClusterSize != 0 {
		fw.ClusterSize = c.ClusterSize
	}
	if c.HostSlots != 0 {
		fw.HostSlots = c.HostSlots
	}
	if c.Variant == lci.RCPY {
		fw.AnonBase, fw.AnonPages = lcilib.RcpyAnonBase, lcilib.RcpyAnonPages
	}
	return fw
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if err := c.Platform.Validate(); err != nil {
		return err
	}
	if c.Nodes < 2 || c.Nodes > 64 {
		return fmt.Errorf("lci cluster: %d nodes: the network has 2 to 64", c.Nodes)
	}
	if c.ClusterSize < 0 || c.HostSlots < 0 || (c.ClusterSize != 0 && c.ClusterSize < c.Nodes) {
		return fmt.Errorf("lci cluster: cluster size %d and %d host slots for %d nodes: need 0 (the defaults) or a cluster size of at least the nodes and a positive slot count",
			c.ClusterSize, c.HostSlots, c.Nodes)
	}
	if c.CorruptProb < 0 || c.CorruptProb > 1 || c.DropProb < 0 || c.DropProb > 1 {
		return fmt.Errorf("lci cluster: link error probabilities (corrupt %g, drop %g) must be in [0, 1]", c.CorruptProb, c.DropProb)
	}
	if c.Host.Send < 0 || c.Host.Recv < 0 || c.Host.Signal < 0 || c.Host.Forward < 0 {
		return fmt.Errorf("lci cluster: negative host cost in %+v", c.Host)
	}
	return c.FirmwareConfig().Validate(uint32(c.Platform.NI.SRAMBytes))
}

// Node is one host with its NI.
type Node struct {
	ID     int
	Host   *lcilib.Host
	CPU    *cpu.CPU
	Cache  *memsys.Cache
	MemBus *bus.Bus
	Bus    *bus.Bus
	Bridge *bus.Bridge
	Mem    *mem.Memory
	Card   *lanai.Card
	FW     *lci.Program
	// Out and In are the link directions the NI sends on and receives
	// from (a testbench's negative test sets a link.FaultPlan on them).
	Out, In *link.Dir
}

// Cluster is a built LCI cluster.
type Cluster struct {
	Env    *env.Env
	Config Config
	Nodes  []*Node
	Net    *topology.SourceNet
}

// Close ends the host programs still running when the simulation has
// ended (a process left waiting for a packet that never came, after a
// failed run): their coroutines are released (cpu.CPU.Close).
func (cl *Cluster) Close() {
	for _, n := range cl.Nodes {
		n.CPU.Close()
	}
}

// Build builds the cluster on e.
func Build(e *env.Env, c Config) (*Cluster, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cl := &Cluster{Env: e, Config: c}
	fw := c.FirmwareConfig()
	if fw.Reliability != lci.NoRetransmit {
		// After the last packet, nothing happens until the timers
		// expire (a delayed acknowledgment, then a retransmission
		// timeout that finds nothing to resend); a loss waits a
		// timeout for its retransmission.
		e.AllowQuiet(c.Platform.NI.Clock.Period() * clock.Time(fw.RetransmitCycles+fw.AckDelayCycles))
	}
	p := c.Platform
	var routeOf func(src, dst int) []byte
	net := p.Net
	if c.CorruptProb != 0 || c.DropProb != 0 {
		net.Link.CorruptProb, net.Link.DropProb = c.CorruptProb, c.DropProb
		if net.HostLink != (link.Config{}) {
			net.HostLink.CorruptProb, net.HostLink.DropProb = c.CorruptProb, c.DropProb
		}
	}
	mc := topology.MyrinetConfig{Platform: net}
	mc.Attach = func(h int, out, in *link.Dir) (bool, error) {
		if h >= c.Nodes {
			return false, nil
		}
		n, err := cl.buildNode(e, h, fw, in.Name())
		if err != nil {
			return false, err
		}
		n.Card.ConnectLink(out, in, func(dst int) []byte { return routeOf(h, dst) })
		n.Out, n.In = out, in
		cl.Nodes = append(cl.Nodes, n)
		return true, nil
	}
	var sn *topology.SourceNet
	var err error
	if p.Topology == "grid" {
		sn, err = topology.MyrinetGrid(e, "Net", mc, nil)
	} else {
		sn, err = topology.MyrinetClos(e, "Net", mc, nil)
	}
	if err != nil {
		return nil, err
	}
	cl.Net = sn
	routeOf = sn.Route
	for _, n := range cl.Nodes {
		if err := n.Host.Init(n.Card.SRAM().Storage(), c.Tree); err != nil {
			return nil, err
		}
		n.Card.Start()
	}
	return cl, nil
}

func (cl *Cluster) buildNode(e *env.Env, h int, fw lci.Config, linkName string) (*Node, error) {
	p := cl.Config.Platform
	name := fmt.Sprintf("N%d", h)
	prog, err := lci.New(e, name+".NI.FW", fw, h, cl.Config.Nodes, linkName)
	if err != nil {
		return nil, err
	}
	hw, err := BuildHardware(e, name, p, h, cl.Config.Nodes, prog)
	if err != nil {
		return nil, err
	}
	host := lcilib.NewHost(e, name+".LCI", h, cl.Config.Nodes, p, cl.Config.Host, fw, hw.CPU, hw.Mem)
	return &Node{ID: h, Host: host, CPU: hw.CPU, Cache: hw.Cache, MemBus: hw.MemBus, Bus: hw.Bus, Bridge: hw.Bridge,
		Mem: hw.Mem, Card: hw.Card, FW: prog}, nil
}

// dramCycles is host memory's own latency in memory cycles. derived: the
// platform's LatencyNs is measured load to use («measured latency of 236
// ns», 113 ns on the P3, MY-P6), so it includes what the model times on its
// own: the CPU channel's two register cycles and the cache's lookup
// (HitCycles) in CPU cycles, and the memory bus's arbitration, address
// phase and line transfer (LineBytes/WidthBytes beats) in bus cycles; the
// memory gets the rest, rounded to the nearest memory cycle. PPro: 236 ns
// - (2+6) x 5 ns - (1+1+4) x 15 ns = 106 ns = 7 cycles of 15 ns; P3: 113
// ns - (2+7) x 1 ns - (1+1+4) x 7.5 ns = 59 ns = 8 cycles of 7.5 ns. A cold
// load then takes about the measured latency (host/platform's assembly
// spec prints the cold miss with the whole of it given to memory: 385 ns
// on the PPro).
func dramCycles(h platform.Host) int {
	ll := h.LastLevel()
	cpuSide := clock.Time(2+ll.HitCycles) * h.CPU.Clock.Period()
	busSide := clock.Time(h.MemBus.ArbCycles+h.MemBus.AddrCycles+ll.LineBytes/h.MemBus.WidthBytes) * h.MemBus.Clock.Period()
	rest := clock.Time(h.Memory.LatencyNs)*clock.Nanosecond - cpuSide - busSide
	per := h.Memory.Clock.Period()
	return max(1, int((rest+per/2)/per))
}

// Host memory timing that host/platform's Memory does not give, in
// memory-bus cycles.
const (
	// pageHitCycles is the latency of a read that continues the previous
	// one on the memory's port (the next line of an open DRAM page, EDO
	// or SDRAM page mode). assumed: 2 cycles, the value with which
	// rtl/bus's PCIHostBridge reproduces the DMA-read timing the LCI
	// calibration was fitted on (its spec "reproduces host/lcilib's
	// folded PCI bridge"); without it the first DMA read of a burst ends
	// 48 PCI cycles later on the PPro.
	pageHitCycles = 2
	// writeCycles is a write's latency: the memory controller posts it.
	// assumed: 2 cycles, as the folded model's posted bridge writes
	// (host/lcilib's former BridgeWriteCycles); with the full read
	// latency a 32-byte line would hold the memory bus 20 cycles and DMA
	// writes could not keep up with PCI.
	writeCycles = 2
)

// Hardware is one node's hardware on a platform (host/platform's PPro or
// P3): the host CPU, its last-level cache (memsys), the memory bus with
// host memory, the PCI host bridge (rtl/bus), the PCI bus and a LANai card
// (its SRAM window at NIBase) running a control program. The CPU's
// accesses go through the cache; accesses to the card are uncached and
// cross the bridge as posted writes (PIO); the card's DMA crosses it the
// other way, its writes invalidating the cache's copies of the lines they
// cover (the cache snoops the memory bus), its reads delayed and
// prefetched by the bridge. Any firmware.Program runs on it.
type Hardware struct {
	// MemBus is the memory bus, Bus the PCI bus.
	MemBus *bus.Bus
	Bus    *bus.Bus
	Bridge *bus.Bridge
	Mem    *mem.Memory
	Cache  *memsys.Cache
	CPU    *cpu.CPU
	Card   *lanai.Card
}

// BuildHardware builds node's hardware (of a cluster of nodes) named name,
// the card running prog; the caller connects the card's link and starts
// it.
func BuildHardware(e *env.Env, name string, p lcilib.Platform, node, nodes int, prog firmware.Program) (*Hardware, error) {
	h := p.Host
	if err := h.Validate(); err != nil {
		return nil, err
	}
	// The memory bus's master channels hold one write-combining line:
	// the processor's posted-write buffer (host/platform CPU).
	wb := h.CPU.WriteBufferEntries * h.CPU.WriteCombineBytes / h.MemBus.WidthBytes
	mb, err := bus.MakeBuilder().WithEnv(e).WithConfig(h.MemBus).WithMasterChannelDepth(wb).Build(name + ".MemBus")
	if err != nil {
		return nil, err
	}
	hm, err := mem.MakeBuilder().WithEnv(e).WithClock(h.Memory.Clock).WithSize(h.Memory.SizeBytes).
		WithPortWidth(h.MemBus.WidthBytes).WithBytesPerCycle(h.Memory.BytesPerCycle).
		WithLatency(dramCycles(h)).WithSequentialReadLatency(pageHitCycles).WithWriteLatency(writeCycles).
		Build(name + ".Mem")
	if err != nil {
		return nil, err
	}
	if err := mb.AddTarget(name+".Mem", 0, h.Memory.SizeBytes, hm.Port(0)); err != nil {
		return nil, err
	}
	cache, err := memsys.MakeCacheBuilder().WithEnv(e).WithClock(h.CPU.Clock).WithConfig(h.LastLevel()).
		WithBus(mb).WithMemory(hm, 0).Build(name + ".Cache")
	if err != nil {
		return nil, err
	}
	// The PCI masters' channels (the bridge's PIO side, the card's DMA
	// engine) are as deep as the processor's write buffer in PCI beats.
	b, err := bus.MakeBuilder().WithEnv(e).WithConfig(h.IOBus).WithMasterChannelDepth(h.WriteBufferBeats()).Build(name + ".PCI")
	if err != nil {
		return nil, err
	}
	br, err := bus.MakeBridgeBuilder().WithEnv(e).WithConfig(h.Bridge).WithBuses(mb, b).
		WithPIOWindow(lcilib.NIBase, uint64(p.NI.SRAMBytes), lcilib.NIBase).
		WithDMAWindow(0, h.Memory.SizeBytes, 0).Build(name + ".Bridge")
	if err != nil {
		return nil, err
	}
	c, err := cpu.MakeBuilder().WithEnv(e).WithClock(h.CPU.Clock).WithIssueCycles(h.CPU.IssueCycles).
		WithPostedStores(h.CPU.PostedStores).WithCPI(h.CPU.CPICycles, h.CPU.CPIInstrs).WithOSCosts(h.OS).
		Build(name + ".CPU")
	if err != nil {
		return nil, err
	}
	c.Attach(cache.Port())
	card, err := lanai.MakeBuilder().WithEnv(e).WithConfig(p.NI).WithNode(node, nodes).WithProgram(prog).
		WithBusWidth(h.IOBus.WidthBytes).WithLink(p.Net.Link.Clock, p.Net.FlitBytes).Build(name + ".NI")
	if err != nil {
		return nil, err
	}
	if err := card.AttachPCI(b, lcilib.NIBase); err != nil {
		return nil, err
	}
	card.OnInterrupt(c.Interrupt)
	return &Hardware{MemBus: mb, Bus: b, Bridge: br, Mem: hm, Cache: cache, CPU: c, Card: card}, nil
}
