// Package shrimptb is the testbench of the SHRIMP multicomputer
// (shrimp-design-choices.txt section 2; SH-P1..P25): sixteen DEC 560ST
// PCs (verify/testbench/smptb on host/platform's DEC560ST: a 60 MHz
// Pentium with its board cache on the Xpress memory bus, 32 MB of memory,
// the EISA bus behind the Xpress-EISA bridge), each with a SHRIMP network
// interface (hib/shrimp) that snoops the Xpress and sits on the EISA bus
// as target (proxies and CSRs) and as DMA master (the DU engine and the
// incoming DMA), the NIs joined by the Paragon routing backplane
// (switch/topology's Paragon(4): a 4 x 4 mesh, NI i on router i's local
// port), and on every node the VMMC kernel (host/vmmc) taking the NI's
// interrupt on CPU 0.
//
// Address map (issue 14 design section 1.2; assumed: free 32-bit EISA
// space above the 32 MB of memory): memory [0, 32 MB); the memory proxy
// at 0x4000_0000 + phys; the device proxy at 0x4200_0000 + OPT index ×
// 4096 + offset; the CSRs at 0x4400_0000. The bridge's PIO window covers
// the three; the caches treat every address beyond memory as uncached.
package shrimptb

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/topology"
	"github.com/nisim/nisim/verify/testbench/smptb"
)

// IOBusName is the name of every node's I/O bus: the EISA bus (SH-P6), so
// that its signals read N<i>.EISA.* (smptb.Builder.WithIOBusName).
const IOBusName = "EISA"

// Config is the cluster's hardware and the VMMC software's parameters.
type Config struct {
	// Nodes is the number of nodes, NI i on router i of the mesh (1 to
	// Mesh.K²; routers beyond Nodes have nothing on their local port).
	Nodes int
	// Host is every node's platform (one CPU is used).
	Host platform.Host
	// NI is every node's network interface.
	NI shrimp.Config
	// Mesh is the routing backplane (its Attach is set by Build).
	Mesh topology.MeshConfig
	// Map places the NI's EISA windows.
	Map shrimp.AddressMap
	// Params are the VMMC library's and kernel's costs and switches.
	Params vmmc.Params
	// HoldMemoryBus makes an EISA DMA burst hold the Xpress for its whole
	// length (SH-P10 «the memory bus does not cycle-share between the CPU
	// and any other main memory master»); it overrides
	// Host.Bridge.HoldMemoryBus. The report key membus_cycle_share is its
	// negation.
	HoldMemoryBus bool
}

// DefaultConfig is the paper's system: «sixteen PC nodes» (SH-P1) on a
// 4 x 4 Paragon backplane (SH-P2, SH-P3), the DEC 560ST preset (SH-P8),
// the SHRIMP NI (hib/shrimp.SHRIMP), the design's address map, VMMC's
// default costs and the Xpress held for an EISA burst (SH-P10).
func DefaultConfig() Config {
	return Config{
		Nodes:         16,
		Host:          platform.DEC560ST(),
		NI:            shrimp.SHRIMP(),
		Mesh:          topology.Paragon(4),
		Map:           shrimp.DefaultAddressMap(),
		Params:        vmmc.DefaultParams(),
		HoldMemoryBus: true,
	}
}

// window is one of the NI's EISA windows, for the checks.
type window struct {
	name       string
	base, size uint64
}

// windows returns the NI's three EISA windows.
func (c Config) windows() []window {
	return []window{
		{"Map.MemProxy", c.Map.MemProxy, c.NI.MemoryBytes},
		{"Map.DevProxy", c.Map.DevProxy, uint64(c.NI.Entries()) * uint64(c.NI.PageBytes)},
		{"Map.CSR", c.Map.CSR, uint64(shrimp.CSRBytes(c.NI))},
	}
}

// pioWindow returns the bus range the bridge forwards to EISA: the three
// windows and what lies between them.
func (c Config) pioWindow() (base, size uint64) {
	ws := c.windows()
	lo, hi := ws[0].base, ws[0].base+ws[0].size
	for _, w := range ws[1:] {
		lo, hi = min(lo, w.base), max(hi, w.base+w.size)
	}
	return lo, hi - lo
}

// Validate checks the cluster's own parameters (the parts validate theirs
// when built); an error names the field.
func (c Config) Validate() error {
	if err := c.Mesh.Validate(); err != nil {
		return fmt.Errorf("shrimptb: Mesh: %w", err)
	}
	if err := c.NI.Validate(); err != nil {
		return fmt.Errorf("shrimptb: NI: %w", err)
	}
	if err := c.Params.Validate(); err != nil {
		return fmt.Errorf("shrimptb: Params: %w", err)
	}
	if err := c.Host.Validate(); err != nil {
		return fmt.Errorf("shrimptb: Host: %w", err)
	}
	mem := c.Host.Memory.SizeBytes
	routers := c.Mesh.K * c.Mesh.K
	switch {
	case c.Nodes < 1 || c.Nodes > routers || c.Nodes > shrimp.MaxNodes:
		return fmt.Errorf("shrimptb: Nodes %d must be in 1..%d (the mesh's routers)", c.Nodes, min(routers, shrimp.MaxNodes))
	case c.NI.MemoryBytes != mem:
		return fmt.Errorf("shrimptb: NI.MemoryBytes %d must be Host.Memory.SizeBytes %d (one OPT entry per page, SH-P14)", c.NI.MemoryBytes, mem)
	}
	ws := c.windows()
	for i, w := range ws {
		switch {
		case w.base < mem:
			return fmt.Errorf("shrimptb: %s %#x must lie beyond host memory (%#x bytes)", w.name, w.base, mem)
		case w.base%uint64(c.NI.PageBytes) != 0:
			return fmt.Errorf("shrimptb: %s %#x must be page-aligned (%d)", w.name, w.base, c.NI.PageBytes)
		case w.base+w.size > 1<<32:
			return fmt.Errorf("shrimptb: %s [%#x, %#x) must fit EISA's 32-bit addresses", w.name, w.base, w.base+w.size)
		}
		for _, o := range ws[:i] {
			if w.base < o.base+o.size && o.base < w.base+w.size {
				return fmt.Errorf("shrimptb: %s [%#x, %#x) overlaps %s [%#x, %#x)", w.name, w.base, w.base+w.size, o.name, o.base, o.base+o.size)
			}
		}
	}
	return nil
}

// Cluster is the built system.
type Cluster struct {
	// Env is the simulation.
	Env *env.Env
	// Config is what it was built from.
	Config Config
	// Nodes are the nodes, node i's NI on router i.
	Nodes []*Node
	// Net is the Paragon mesh (no terminals: the NIs are on its local
	// ports).
	Net *topology.Network
	// Ref is the reference model the checkers compare against.
	Ref *Ref
	// Dir is the VMMC export directory shared by the kernels (untimed).
	Dir *vmmc.Directory
	chk *checker
}

// Node is one DEC 560ST with its NI and kernel.
type Node struct {
	*smptb.Node
	// ID is the node number: its router and its packets' Src.
	ID int
	// NI is the node's network interface (N<i>.NI).
	NI *shrimp.NI
	// Kernel is the node's VMMC kernel; it owns CPU 0's interrupt program.
	Kernel *vmmc.Kernel
	// IRQs counts the causes the NI raised on its interrupt line (each
	// raises CPU 0's line; the processor merges those it has not yet
	// taken).
	IRQs int
	// irqHooks see every cause after the CPU's line rose (AddIRQHook).
	irqHooks []func(now clock.Time, c shrimp.IRQCause)
}

// AddIRQHook adds fn to the functions called for each cause the NI raises
// (the NI has one OnInterrupt, which the cluster takes to raise CPU 0's
// line): checkers watch interrupts here.
func (n *Node) AddIRQHook(fn func(now clock.Time, c shrimp.IRQCause)) {
	n.irqHooks = append(n.irqHooks, fn)
}

// Build builds the cluster on e: nodes N0..N<n-1> (smptb names; the I/O
// bus N<i>.EISA, the NI N<i>.NI), the mesh Mesh (Mesh.Router[i],
// Mesh.LinkT[i] the NI's link), the VMMC kernels and the checkers.
func Build(e *env.Env, c Config) (*Cluster, error) {
	if e == nil {
		return nil, errors.New("shrimptb: no env")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	h := c.Host
	h.Bridge.HoldMemoryBus = c.HoldMemoryBus
	cl := &Cluster{Env: e, Config: c, Dir: vmmc.NewDirectory(), Ref: NewRef(c.Nodes)}
	base, size := c.pioWindow()
	for i := range c.Nodes {
		name := fmt.Sprintf("N%d", i)
		sn, err := smptb.MakeBuilder().WithEnv(e).WithHost(h).WithCPUs(1).WithoutDMA().
			WithPIOWindow(base, size).WithIOBusName(IOBusName).Build(name)
		if err != nil {
			return nil, fmt.Errorf("shrimptb: %w", err)
		}
		ni, err := shrimp.MakeBuilder().WithEnv(e).WithConfig(c.NI).WithNode(i, c.Nodes).Build(name + ".NI")
		if err != nil {
			return nil, fmt.Errorf("shrimptb: %w", err)
		}
		// The snooping board sees the Xpress's writes to memory; the
		// bridge's Up master carries the EISA DMA (the NI's own incoming
		// writes), snooped only with SnoopDMA.
		if err := ni.AttachMemoryBus(sn.Mem.Bus, name+".Mem", name+".Bridge.Up"); err != nil {
			return nil, fmt.Errorf("shrimptb: %w", err)
		}
		if err := ni.AttachEISA(sn.PCI, c.Map); err != nil {
			return nil, fmt.Errorf("shrimptb: %w", err)
		}
		n := &Node{Node: sn, ID: i, NI: ni}
		c0 := sn.CPUs[0]
		ni.OnInterrupt(func(now clock.Time, cause shrimp.IRQCause) {
			n.IRQs++
			c0.Interrupt(now)
			for _, fn := range n.irqHooks {
				fn(now, cause)
			}
		})
		k, err := vmmc.NewKernel(vmmc.Hardware{CPU: c0, Mem: sn.Mem, NI: ni, Map: c.Map, Node: i, Env: e}, cl.Dir, c.Params)
		if err != nil {
			return nil, fmt.Errorf("shrimptb: node %d: %w", i, err)
		}
		n.Kernel = k
		cl.Nodes = append(cl.Nodes, n)
	}
	mc := c.Mesh
	mc.Attach = func(host int, out, in *link.Dir) (bool, error) {
		if host >= c.Nodes {
			return false, nil
		}
		return true, cl.Nodes[host].NI.ConnectLink(out, in)
	}
	net, err := topology.Mesh(e, "Mesh", mc, &fabric.Shared{})
	if err != nil {
		return nil, fmt.Errorf("shrimptb: %w", err)
	}
	cl.Net = net
	cl.chk = newChecker(cl)
	return cl, nil
}

// Node returns node i.
func (c *Cluster) Node(i int) *Node { return c.Nodes[i] }

// Close ends the host programs still running (smptb.Node.Close).
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		n.Close()
	}
}

// Finish runs the end-of-run checks once the simulation has ended (the
// checkers' and Ref's); violations go to the Env's monitor, and the error
// joins them, nil when the run was clean.
func (c *Cluster) Finish() error {
	c.chk.finish(c.Env.Now())
	return c.Env.Monitor.Err()
}
