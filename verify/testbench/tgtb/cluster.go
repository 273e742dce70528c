package tgtb

import (
	"fmt"

	"github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/host/tglib"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/wormhole"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/waves"
)

// ClusterConfig describes a Telegraphos cluster: workstations with a HIB
// each, on one Telegraphos switch.
type ClusterConfig struct {
	Nodes int
	HIB   telegraphos.Config
	// Host is each workstation: host/platform's DEC 3000 model 300
	// (TG-P2, TG-P3). The node takes its processor (clock, issue cycles,
	// posted stores, CPI, OS costs), its write buffer (Host.WriteBufferBeats:
	// the depth of the processor's TURBOchannel master channel) and its
	// TURBOchannel (Host.IOBus) from it.
	//
	// The processor is a master on the TURBOchannel itself: «All remote
	// accesses are performed via the TurboChannel» and «Data which are not
	// shared are mapped into ... the main memory of the workstation ...
	// Telegraphos does not interfere with these accesses at all» (2.2.1),
	// so every access a Telegraphos program makes is an uncached access to
	// the HIB's window, and the paper describes no memory bus or bridge
	// between the 21064 and the TURBOchannel. The host's memory system
	// (Host.Caches, MemBus, Bridge, Memory) is not built: putting the
	// preset's membus and bridge in the path adds 0.48 µs to a remote read
	// and queues stores in the cache as well as in the write buffer, which
	// hides the producer/consumer hazard of 2.3.5 (measured with seed 1:
	// stale reads without the barrier on 0 of 12 seeds instead of 5).
	Host platform.Host
	// Switch is the Telegraphos switch's router; its clock is the link's.
	Switch wormhole.Config
}

// DefaultCluster returns n DEC 3000 model 300 workstations with
// Telegraphos I HIBs (the paper's measured set-up has n = 2, TG-P3).
func DefaultCluster(n int) ClusterConfig {
	sw := wormhole.Telegraphos()
	// Requests and responses are separate message classes: each gets
	// its own VC and its own buffer, so that a request waiting for a
	// response's room can never hold that room (deadlock freedom, TG-P5,
	// by VC-level flow control).
	sw.BufferPolicy, sw.VCBufSize = "private", telegraphos.TelegraphosLink().BufferFlits
	// calibrated: fitted to the remote read of 7.2 µs (section 3.2),
	// whose request and response each cross the switch: 54 cycles of 25
	// MHz, 2.16 µs per crossing, as a pipeline a flit takes to traverse
	// (it delays packets without limiting the switch's throughput). The
	// paper gives no switch delay and no breakdown of the read; this
	// figure also absorbs whatever of the read path the model does not
	// otherwise account for (the FPGA switch of TG-P6, the DEC 3000's
	// TURBOchannel read path).
	sw.STPrepareDelay, sw.STFinalDelay = 0, 54
	// assumed: a VC is given to the next packet as soon as the previous
	// one's tail has left, without waiting for its credit (the VC stays in
	// order, TG-P5).
	sw.WaitForTailCredit = false
	return ClusterConfig{Nodes: n, HIB: telegraphos.TelegraphosI(),
		// «two DEC 3000 model 300 workstations» (TG-P3): every value and
		// its source is in host/platform.
		Host:   platform.DEC3000Model300(),
		Switch: sw}
}

// Validate checks the configuration.
func (c ClusterConfig) Validate() error {
	switch {
	case c.Nodes < 1 || c.Nodes > telegraphos.MaxNodes:
		return fmt.Errorf("nodes: %d must be in 1..%d", c.Nodes, telegraphos.MaxNodes)
	case c.Host.CPU.Count != 1:
		return fmt.Errorf("host: CPU.Count %d: a Telegraphos node has one processor (the DEC 3000 model 300)", c.Host.CPU.Count)
	}
	if err := c.Host.Validate(); err != nil {
		return fmt.Errorf("host: %w", err)
	}
	if c.Host.WriteBufferBeats() < 1 {
		return fmt.Errorf("host: write buffer of %d TURBOchannel beats must hold at least one", c.Host.WriteBufferBeats())
	}
	if err := c.HIB.Validate(); err != nil {
		return fmt.Errorf("hib: %w", err)
	}
	if err := c.Switch.Validate(); err != nil {
		return fmt.Errorf("switch: %w", err)
	}
	if c.Switch.NumVCs < telegraphos.MessageClasses {
		return fmt.Errorf("switch: %d VCs, the two message classes need %d", c.Switch.NumVCs, telegraphos.MessageClasses)
	}
	return nil
}

// Node is one workstation.
type Node struct {
	CPU *cpu.CPU
	Bus *bus.Bus
	HIB *telegraphos.HIB
	// Shared is the node's shared memory: the board's own memory
	// (Telegraphos I) or the part of host memory set aside for it
	// (Telegraphos II).
	Shared *mem.Memory
	Link   *link.Link
}

// Cluster is a built Telegraphos cluster.
type Cluster struct {
	Config ClusterConfig
	Nodes  []*Node
	Switch *wormhole.Router
	// Packets checks that every packet is delivered exactly once; Order
	// that each message class arrives in order from a source to a
	// destination (the switch's promise, TG-P5), in the order the packets
	// were handed to the link. That is not the order of their ids: an id
	// is given when a packet is built, and two sequencers of one HIB may
	// build packets of one class in one order and win its link interface
	// in the other.
	Packets *check.Conservation[uint64]
	Order   *check.Ordering[[3]int]

	flowSent map[[3]int]uint64 // packets handed to the link per flow; lookup only
	sendNo   map[uint64]uint64 // packet id -> its number in its flow, until it arrives; lookup only
}

// BuildCluster creates the cluster in e: node i is Node[i].* (CPU, Bus,
// HIB, Shared), its link to the switch Link[i], the switch Switch.
func BuildCluster(e *env.Env, c ClusterConfig) (*Cluster, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cl := &Cluster{Config: c,
		Packets:  check.NewConservation[uint64](e.Monitor, "Telegraphos.Packets"),
		Order:    check.NewOrdering[[3]int](e.Monitor, "Telegraphos.Order"),
		flowSent: map[[3]int]uint64{}, sendNo: map[uint64]uint64{}}
	lc := c.HIB.Link
	sw, err := wormhole.MakeBuilder().WithEnv(e).WithClock(lc.Clock).WithConfig(c.Switch).WithPorts(c.Nodes).
		WithRouting(func(_, _, dst int) wormhole.Route {
			return wormhole.Route{Port: dst, VCLo: 0, VCHi: c.Switch.NumVCs - 1}
		}).
		WithVCClasses().Build("Switch")
	if err != nil {
		return nil, err
	}
	cl.Switch = sw
	for i := range c.Nodes {
		n, err := buildNode(e, c, i, cl)
		if err != nil {
			return nil, err
		}
		// Side A is the HIB, side B the switch's port i.
		n.HIB.AttachLink(n.Link.From(link.A), n.Link.From(link.B))
		sw.ConnectInput(i, n.Link.From(link.A))
		sw.ConnectOutput(i, n.Link.From(link.B))
		cl.Nodes = append(cl.Nodes, n)
	}
	return cl, nil
}

func buildNode(e *env.Env, c ClusterConfig, i int, cl *Cluster) (*Node, error) {
	name := fmt.Sprintf("N%d", i)
	n := &Node{}
	var err error
	h := c.Host
	if n.CPU, err = cpu.MakeBuilder().WithEnv(e).WithClock(h.CPU.Clock).WithIssueCycles(h.CPU.IssueCycles).
		WithPostedStores(h.CPU.PostedStores).WithCPI(h.CPU.CPICycles, h.CPU.CPIInstrs).WithOSCosts(h.OS).
		Build(name + ".Cpu"); err != nil {
		return nil, err
	}
	// derived: the HIB's window ends at WindowBase+WindowBytes-1 =
	// 0x2_FFFF_FFFF (hib/telegraphos/addr.go), so the TURBOchannel's
	// physical addresses need 34 bits.
	tcAddrBits := waves.WidthFor(telegraphos.WindowBase + telegraphos.WindowBytes - 1)
	if n.Bus, err = bus.MakeBuilder().WithEnv(e).WithConfig(h.IOBus).WithMasterChannelDepth(h.WriteBufferBeats()).
		WithAddrBits(tcAddrBits).Build(name + ".TC"); err != nil {
		return nil, err
	}
	ch, err := n.Bus.AddMaster(name + ".Cpu")
	if err != nil {
		return nil, err
	}
	n.CPU.Attach(ch)
	if n.HIB, err = telegraphos.MakeBuilder().WithEnv(e).WithConfig(c.HIB).WithNode(i, c.Nodes).Build(name + ".HIB"); err != nil {
		return nil, err
	}
	if err := n.Bus.AddTarget(name+".HIB", telegraphos.WindowBase, telegraphos.WindowBytes, n.HIB.Port()); err != nil {
		return nil, err
	}
	if n.Shared, err = mem.MakeBuilder().WithEnv(e).WithClock(c.HIB.Clock).WithSize(telegraphos.SharedBytes).WithPorts(3).WithPortWidth(telegraphos.WordBytes).
		WithLatency(c.HIB.MemLatency).WithBytesPerCycle(c.HIB.MemBytesPerCycle).Build(name + ".Shared"); err != nil {
		return nil, err
	}
	n.HIB.AttachMemory(0, [3]*mem.Channel{n.Shared.Port(0), n.Shared.Port(1), n.Shared.Port(2)})
	n.HIB.OnInterrupt(n.CPU.Interrupt)
	n.HIB.OnPacket(cl.observe)
	if n.Link, err = link.MakeBuilder().WithEnv(e).WithConfig(c.HIB.Link).Build(name + ".Link"); err != nil {
		return nil, err
	}
	return n, nil
}

// observe feeds the cluster's checkers with every packet sent and
// received. A packet's number in its flow (source, destination, class) is
// kept only while it is on its way.
func (cl *Cluster) observe(now clock.Time, p *telegraphos.Packet, sent bool) {
	flow := [3]int{p.Src, p.Dst, int(p.Kind.Class())}
	if sent {
		cl.Packets.Sent(now, p.ID)
		cl.flowSent[flow]++
		cl.sendNo[p.ID] = cl.flowSent[flow]
		return
	}
	cl.Packets.Received(now, p.ID)
	if n, ok := cl.sendNo[p.ID]; ok {
		delete(cl.sendNo, p.ID)
		cl.Order.Observe(now, flow, n)
	}
}

// Replicate sets up page page of every node in nodes as copies of one
// replicated page owned by owner (the first-listed node need not be the
// owner): the owner maps the page out to the others, each other node holds
// a copy whose writes go to the owner (or, without owner ordering, to every
// other copy), section 2.3.
func (cl *Cluster) Replicate(page, owner int, nodes []int) error {
	var copies []telegraphos.Copy
	for _, n := range nodes {
		if n != owner {
			copies = append(copies, telegraphos.Copy{Node: n, Page: page})
		}
	}
	if err := cl.Nodes[owner].HIB.MapOut(page, copies...); err != nil {
		return err
	}
	for _, n := range nodes {
		if n == owner {
			continue
		}
		var peers []telegraphos.Copy
		for _, m := range nodes {
			if m != n {
				peers = append(peers, telegraphos.Copy{Node: m, Page: page})
			}
		}
		if err := cl.Nodes[n].HIB.SetReplica(page, telegraphos.Copy{Node: owner, Page: page}, peers...); err != nil {
			return err
		}
	}
	return nil
}

// WatchCoherence hooks a coherence checker (telegraphos.Coherence) onto the
// HIBs of nodes for page page owned by owner.
func (cl *Cluster) WatchCoherence(page, owner int, nodes []int) *telegraphos.Coherence {
	c := telegraphos.NewCoherence(page, owner, nodes)
	for _, n := range nodes {
		c.Watch(n, cl.Nodes[n].HIB)
	}
	return c
}

// Proc returns a process (host/tglib) on node's processor, using context
// ctx with key key (Telegraphos II).
func (cl *Cluster) Proc(node, ctx int, key uint16) *tglib.Proc {
	return tglib.New(cl.Nodes[node].CPU, cl.Config.HIB.Version, node, ctx, key)
}
