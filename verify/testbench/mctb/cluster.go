// Package mctb is the testbench of the paper's Memory Channel cluster
// (cashmere-2l-memory-channel.txt section 2.1 and section 3, MC-P12..P17):
// eight AlphaServer 2100 4/233 nodes (verify/testbench/smptb: four 21064A
// CPUs with their caches, one memory bus with 256 MB of memory, the T2
// bridge and a 32-bit PCI bus), each with a Memory Channel adapter
// (mcadapter/) on its PCI bus as target (the transmit window and the
// CSRs) and DMA master (the receive DMA), the adapters joined through an
// MC1 hub (switch/mchub) by one link each.
//
// Processes map regions as Cashmere-2L does (Figure 1): Broadcast
// regions every node transmits into and receives (doubling: a process
// writes both its own receive copy and the transmit window), PointToPoint
// regions with one receiver, and Loopback regions whose writes come back
// to their writer too (locks, the MC flush).
//
// Checkers are always on (issue 13 design section 5): a reference model
// (Ref) fed from the adapters' transmit and drop callbacks and the hub's
// global order, and a check on each node's memory bus, where the receive
// DMA's writes reach memory: every write is written exactly once at every
// receiver whose table maps its page (mc.once), in the hub's global order
// (mc.order), with no 32-bit word torn (mc.torn), and at the end the
// receive frames in memory equal Ref's images (mc.scoreboard).
package mctb

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/verify/testbench/smptb"
)

// Config is the cluster's hardware.
type Config struct {
	// Nodes is the number of nodes (and hub ports).
	Nodes int
	// CPUs is the number of CPUs per node (1 to Host.CPU.Count).
	CPUs int
	// Host is the node platform.
	Host platform.Host
	// Adapter is every node's Memory Channel adapter.
	Adapter mcadapter.Config
	// Hub is the hub (its port count becomes Nodes).
	Hub mchub.Builder
	// Link is every adapter-hub link.
	Link link.Config
	// TxBase and CSRBase are the adapter's transmit window and CSR window,
	// at the same addresses on the memory bus and on PCI (the bridge's PIO
	// window covers both).
	TxBase, CSRBase uint64
	// RxBase is where the bump allocator starts placing receive frames in
	// host memory; programs keep their own data below it.
	RxBase uint64
	// CPUOrder is the order each node's CPUs are created in (a
	// permutation of 0..CPUs-1; nil: ascending), smptb's
	// WithCreationOrder: the determinism specs run every order and expect
	// the same trace.
	CPUOrder []int
}

// DefaultConfig is the paper's cluster: eight nodes (MC-P12 «a cluster of
// eight 4-processor AlphaServer nodes connected by the Memory Channel»)
// of four CPUs (MC-P14), the AlphaServer 2100 preset, the MC1 adapter,
// hub and links.
func DefaultConfig() Config {
	h := platform.AlphaServer2100()
	return Config{
		Nodes:   8,
		CPUs:    h.CPU.Count,
		Host:    h,
		Adapter: mcadapter.MC1(),
		Hub:     mchub.MC1(),
		Link:    mchub.LinkConfig(),
		// assumed: free 32-bit PCI memory space above the 256 MB of host
		// memory (MC-P14); the paper gives no address map. 128 MB of
		// window (MC-P7) end at 0x4800_0000, where the CSRs start.
		TxBase:  0x4000_0000,
		CSRBase: 0x4800_0000,
		// assumed: receive frames from 128 MB up, half of memory, so that
		// the programs' own data (locks, flags, buffers) below 128 MB never
		// share a page with them.
		RxBase: 128 << 20,
	}
}

// Validate checks the cluster's own parameters (the parts validate
// theirs when built); an error names the field.
func (c Config) Validate() error {
	a := c.Adapter
	window := a.WindowBytes()
	mem := c.Host.Memory.SizeBytes
	switch {
	case c.Nodes < 1 || c.Nodes > mcadapter.MaxAdapters:
		return fmt.Errorf("mctb: Nodes %d must be in 1..%d", c.Nodes, mcadapter.MaxAdapters)
	case c.CPUs < 1 || c.CPUs > c.Host.CPU.Count:
		return fmt.Errorf("mctb: CPUs %d must be 1 to Host.CPU.Count %d", c.CPUs, c.Host.CPU.Count)
	case a.PageBytes != mchub.PageSize:
		return fmt.Errorf("mctb: Adapter.PageBytes %d must be the hub's page size %d", a.PageBytes, mchub.PageSize)
	case c.TxBase < mem:
		return fmt.Errorf("mctb: TxBase %#x must lie beyond host memory (%#x bytes)", c.TxBase, mem)
	case c.TxBase%uint64(a.PageBytes) != 0:
		return fmt.Errorf("mctb: TxBase %#x must be page-aligned (%d)", c.TxBase, a.PageBytes)
	case c.CSRBase < mem:
		return fmt.Errorf("mctb: CSRBase %#x must lie beyond host memory (%#x bytes)", c.CSRBase, mem)
	case c.CSRBase < c.TxBase+window && c.TxBase < c.CSRBase+a.CSRBytes:
		return fmt.Errorf("mctb: CSRBase %#x overlaps the transmit window [%#x, %#x)", c.CSRBase, c.TxBase, c.TxBase+window)
	case c.RxBase%uint64(a.PageBytes) != 0 || c.RxBase >= mem:
		return fmt.Errorf("mctb: RxBase %#x must be page-aligned and inside host memory (%#x bytes)", c.RxBase, mem)
	}
	return nil
}

// pioWindow returns the bus range the bridge forwards to PCI: the
// transmit window and the CSRs, and what lies between them.
func (c Config) pioWindow() (base, size uint64) {
	lo, hi := min(c.TxBase, c.CSRBase), max(c.TxBase+c.Adapter.WindowBytes(), c.CSRBase+c.Adapter.CSRBytes)
	return lo, hi - lo
}

// Cluster is the built system.
type Cluster struct {
	// Env is the simulation.
	Env *env.Env
	// Config is what it was built from.
	Config Config
	// Nodes are the nodes, node i on hub port i.
	Nodes []*Node
	// Star is the hub and its links.
	Star *mchub.Star
	// Ref is the reference model the checkers compare against.
	Ref *Ref

	chk *checker

	// Bump allocators: next global page, next transmit window page per
	// node, next receive frame per node.
	nextGlobal int
	nextTx     []int
	nextRx     []uint64
	regions    []Region
}

// Node is one AlphaServer with its adapter.
type Node struct {
	*smptb.Node
	// ID is the node number: its hub port and its packets' Src.
	ID int
	// Adapter is the node's Memory Channel adapter.
	Adapter *mcadapter.Adapter
	// IRQs counts rising edges of the adapter's interrupt line (the line
	// goes to CPU 0; no handler is installed by the testbench).
	IRQs int
}

// Build builds the cluster on e: nodes N0..N<n-1> (smptb names, the
// adapter N<i>.MC), the star MC (MC.Hub, MC.Link<i>), and the checkers.
func Build(e *env.Env, c Config) (*Cluster, error) {
	if e == nil {
		return nil, errors.New("mctb: no env")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := c.Adapter.Validate(); err != nil {
		return nil, fmt.Errorf("mctb: Adapter: %w", err)
	}
	st, err := mchub.MakeStarBuilder().WithEnv(e).WithHub(c.Hub.WithPorts(c.Nodes)).WithLink(c.Link).Build("MC")
	if err != nil {
		return nil, fmt.Errorf("mctb: %w", err)
	}
	cl := &Cluster{Env: e, Config: c, Star: st, Ref: NewRef(c.Nodes),
		nextTx: make([]int, c.Nodes), nextRx: make([]uint64, c.Nodes)}
	base, size := c.pioWindow()
	for i := range c.Nodes {
		name := fmt.Sprintf("N%d", i)
		nb := smptb.MakeBuilder().WithEnv(e).WithHost(c.Host).WithCPUs(c.CPUs).WithoutDMA().WithPIOWindow(base, size)
		if c.CPUOrder != nil {
			nb = nb.WithCreationOrder(c.CPUOrder)
		}
		sn, err := nb.Build(name)
		if err != nil {
			return nil, fmt.Errorf("mctb: %w", err)
		}
		a, err := mcadapter.MakeBuilder().WithEnv(e).WithClock(c.Host.IOBus.Clock).WithConfig(c.Adapter).
			WithNode(i).Build(name + ".MC")
		if err != nil {
			return nil, fmt.Errorf("mctb: %w", err)
		}
		if err := a.AttachPCI(sn.PCI, c.TxBase, c.CSRBase); err != nil {
			return nil, fmt.Errorf("mctb: %w", err)
		}
		if err := a.ConnectLink(st.Ports[i]); err != nil {
			return nil, fmt.Errorf("mctb: %w", err)
		}
		n := &Node{Node: sn, ID: i, Adapter: a}
		a.OnInterrupt(func(clock.Time) { n.IRQs++ })
		cl.Nodes = append(cl.Nodes, n)
		cl.nextRx[i] = c.RxBase
	}
	cl.chk = newChecker(cl)
	return cl, nil
}

// Node returns node i.
func (c *Cluster) Node(i int) *Node { return c.Nodes[i] }

// Regions returns the regions mapped so far, in mapping order.
func (c *Cluster) Regions() []Region { return append([]Region(nil), c.regions...) }

// Close ends the host programs still running (smptb.Node.Close).
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		n.Close()
	}
}

// Finish runs the end-of-run checks once the simulation has ended: Ref's
// (every expected write delivered or dropped with a reason) and the
// scoreboard (every receive frame in host memory equals Ref's image).
// Violations go to the Env's monitor (rules mc.once, mc.scoreboard); the
// error joins them, nil when the run was clean.
func (c *Cluster) Finish() error {
	c.chk.finish(c.Env.Now())
	return c.Env.Monitor.Err()
}
