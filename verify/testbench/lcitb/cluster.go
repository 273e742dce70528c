package lcitb

import (
	"fmt"
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/host/lcilib"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/lanai"
	"github.com/nisim/nisim/rtl/bus"
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
	Tree    lci.Tree
	// Interrupts enables the polling watchdog and network signals.
	Interrupts bool
	// Host are the library's costs, Firmware the control program's.
	Host     lcilib.Costs
	Firmware lci.Costs
}

// DefaultConfig is two PPro nodes running I-sdma.
func DefaultConfig() Config {
	return Config{Platform: lcilib.PPro(), Nodes: 2, Host: lcilib.DefaultCosts(), Firmware: lci.DefaultCosts()}
}

// FirmwareConfig is the control program's configuration on the platform.
func (c Config) FirmwareConfig() lci.Config {
	fw := lci.DefaultConfig()
	fw.Variant, fw.Tree, fw.Interrupts, fw.Costs = c.Variant, c.Tree, c.Interrupts, c.Firmware
	fw.RecvBufs = c.Platform.RecvBufs
	fw.WatchdogCycles = c.Platform.WatchdogCycles()
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
	if c.Host.Send < 0 || c.Host.Recv < 0 || c.Host.Signal < 0 {
		return fmt.Errorf("lci cluster: negative host cost in %+v", c.Host)
	}
	return c.FirmwareConfig().Validate(uint32(c.Platform.NI.SRAMBytes))
}

// Node is one host with its NI.
type Node struct {
	ID   int
	Host *lcilib.Host
	CPU  *cpu.CPU
	Bus  *bus.Bus
	Mem  *mem.Memory
	Card *lanai.Card
	FW   *lci.Program
}

// Cluster is a built LCI cluster.
type Cluster struct {
	Env    *env.Env
	Config Config
	Nodes  []*Node
	Net    *topology.SourceNet
}

// Build builds the cluster on e.
func Build(e *env.Env, c Config) (*Cluster, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cl := &Cluster{Env: e, Config: c}
	fw := c.FirmwareConfig()
	p := c.Platform
	var routeOf func(src, dst int) []byte
	mc := topology.MyrinetConfig{Platform: p.Net}
	mc.Attach = func(h int, out, in *link.Dir) (bool, error) {
		if h >= c.Nodes {
			return false, nil
		}
		n, err := cl.buildNode(e, h, fw, in.Name())
		if err != nil {
			return false, err
		}
		n.Card.ConnectLink(out, in, func(dst int) []byte { return routeOf(h, dst) })
		cl.Nodes = append(cl.Nodes, n)
		return true, nil
	}
	var net *topology.SourceNet
	var err error
	if p.Topology == "grid" {
		net, err = topology.MyrinetGrid(e, "Net", mc, nil)
	} else {
		net, err = topology.MyrinetClos(e, "Net", mc, nil)
	}
	if err != nil {
		return nil, err
	}
	cl.Net = net
	routeOf = net.Route
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
	prog, err := lci.New(e, name+".FW", fw, h, cl.Config.Nodes, linkName)
	if err != nil {
		return nil, err
	}
	hw, err := BuildHardware(e, name, p, h, cl.Config.Nodes, prog)
	if err != nil {
		return nil, err
	}
	host := lcilib.NewHost(e, name+".LCI", h, cl.Config.Nodes, p, cl.Config.Host, fw, hw.CPU, hw.Mem)
	return &Node{ID: h, Host: host, CPU: hw.CPU, Bus: hw.Bus, Mem: hw.Mem, Card: hw.Card, FW: prog}, nil
}

// Hardware is one node's hardware on a platform: the PCI bus, host memory
// behind its bridge, the host CPU and a LANai card (its SRAM window at
// NIBase) running a control program. Any firmware.Program runs on it.
type Hardware struct {
	Bus  *bus.Bus
	Mem  *mem.Memory
	CPU  *cpu.CPU
	Card *lanai.Card
}

// BuildHardware builds node's hardware (of a cluster of nodes) named name,
// the card running prog; the caller connects the card's link and starts
// it.
func BuildHardware(e *env.Env, name string, p lcilib.Platform, node, nodes int, prog firmware.Program) (*Hardware, error) {
	b, err := bus.MakeBuilder().WithEnv(e).WithConfig(p.Bus).WithMasterChannelDepth(p.WriteBufferBeats()).Build(name + ".PCI")
	if err != nil {
		return nil, err
	}
	// Host memory as the NI's DMA sees it: behind the bridge, a read
	// waits the measured memory latency (MY-P6) and the bridge's delayed
	// read, but a read that continues the previous one finds its data
	// prefetched; a write is posted in the bridge.
	hm, err := mem.MakeBuilder().WithEnv(e).WithClock(p.Bus.Clock).WithSize(lcilib.HostMemBytes).WithPortWidth(p.Bus.WidthBytes).
		WithBytesPerCycle(p.Bus.WidthBytes).WithLatency(p.MemLatencyBusCycles() + p.BridgeReadCycles).
		WithSequentialReadLatency(p.BridgeWriteCycles).WithWriteLatency(p.BridgeWriteCycles).Build(name + ".Mem")
	if err != nil {
		return nil, err
	}
	if err := b.AddTarget(name+".Mem", 0, lcilib.HostMemBytes, hm.Port(0)); err != nil {
		return nil, err
	}
	c, err := cpu.MakeBuilder().WithEnv(e).WithClock(p.CPU).Build(name + ".CPU")
	if err != nil {
		return nil, err
	}
	ch, err := b.AddMaster(name + ".CPU")
	if err != nil {
		return nil, err
	}
	c.Attach(ch)
	card, err := lanai.MakeBuilder().WithEnv(e).WithConfig(p.NI).WithNode(node, nodes).WithProgram(prog).
		WithBusWidth(p.Bus.WidthBytes).WithLink(p.Net.Link.Clock, p.Net.FlitBytes).Build(name + ".NI")
	if err != nil {
		return nil, err
	}
	if err := card.AttachPCI(b, lcilib.NIBase); err != nil {
		return nil, err
	}
	card.OnInterrupt(c.Interrupt)
	return &Hardware{Bus: b, Mem: hm, CPU: c, Card: card}, nil
}
