// Package atmtb is the testbench of the FORE ATM remote-memory cluster of
// atm-remote-memory-access.txt sections 2.2 and 2.3 (AT-P1..P22): two to
// four DECstation 5000/200 workstations (verify/testbench/smptb on
// host/platform's DECstation5000: a 25 MHz R3000 with its write-through
// cache on the 3max memory bus, 32 MB of memory, the 3max-tc bridge to a
// 25 MHz TURBOchannel), each with a FORE TCA-100 interface (hib/fore) on
// its TURBOchannel as a slave with no DMA (AT-P3), the interfaces joined
// by one direct 140 Mb/s link («between two hosts connected directly
// without a switch», section 2.3) or by the four-port ASX-100 switch
// (switch/atm, AT-P8), and on every node the remote-memory kernel
// (host/rma) taking the interface's interrupt on the CPU.
//
// Address map (issue 15 design section 2.1; assumed: free TURBOchannel
// space above the 32 MB of memory): memory [0, 32 MB), user data below
// KernelBase, the kernel's stack, segment table and translation pages
// from KernelBase; the TCA-100's 64 KB window at BoardBase, the bridge's
// PIO window. Every memory page is write-through (the preset's
// «write-through D-cache», design F6).
//
// The measurement drivers of atm-report are in measure.go, the host
// programs they run in programs.go.
package atmtb

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/testbench/smptb"
)

// IOBusName is the name of every node's I/O bus: the TURBOchannel
// (AT-P3), so that its signals read N<i>.TC.* (smptb.Builder.WithIOBusName).
const IOBusName = "TC"

// MaxNodes is the most nodes: the ASX-100's four ports (AT-P8 «a FORE
// ASX-100 switch with 4 ports»).
const MaxNodes = 4

// MaxMemCycles bounds MemCycles. assumed: 250 cycles (10 µs), fifty times
// the paper's «200 ns access time» (AT-P18): beyond it a write-through
// store would cost more than a whole raw write.
const MaxMemCycles = 250

// Config is the cluster's hardware and the kernel's parameters.
type Config struct {
	// Nodes is the number of workstations, 2 to MaxNodes.
	Nodes int
	// Switched puts the ASX-100 between the interfaces; false joins two
	// nodes by one direct link (Nodes must then be 2).
	Switched bool
	// Host is every node's platform; Build sets its memory latency from
	// MemCycles.
	Host platform.Host
	// MemCycles is host memory's load-to-use latency in cycles of the
	// memory bus (Host.Memory.LatencyNs = MemCycles × its period; smptb
	// takes the cache and bus cycles it times itself out of it, so every
	// value up to 7 gives memory its smallest access, one cycle).
	MemCycles int
	// Board is every node's TCA-100 (Build sets its Link to Link).
	Board fore.Config
	// Switch is the ASX-100 (its port count becomes Nodes).
	Switch atm.Builder
	// Link is every link: the direct one or each switch port's.
	Link link.Config
	// RMA is every kernel's parameters.
	RMA rma.Params
	// RPC is the RPC layer's parameters (host/rpc), for the programs that
	// bind and call (MeasureRPC).
	RPC rpc.Params
	// BoardBase is the TCA-100's window on the TURBOchannel (and the
	// bridge's PIO window, one to one).
	BoardBase uint64
	// KernelBase is where the kernel keeps its stack, segment table and
	// translation pages; user data lies below it.
	KernelBase uint64
}

// DefaultConfig is the paper's testbed for the figures of section 2.3:
// two DECstation 5000/200s (AT-P2) joined directly (L111), each with a
// TCA-100 (AT-P3..P7), the ASX-100 preset for the switched runs (AT-P8,
// AT-P9), 140 Mb/s links (AT-P1) and the kernel's Table 1 costs.
func DefaultConfig() Config {
	return Config{
		Nodes:    2,
		Switched: false,
		Host:     platform.DECstation5000(),
		// calibrated: C2, 18 cycles (720 ns load to use), fitted to the
		// protected 40-byte WRITE, «a remote write operation containing
		// one ATM cell (40 data bytes) takes 30 µs» direct (section
		// 2.3, L111; MeasureWrite, atm-report's rounds): 30.00 µs
		// (0.0%) at CellLatency 2; neighbours 17 → 28.80, 19 → 31.12 µs
		// (raw write 11.58, 12.30). The first C1 round's CellLatency 1
		// gave 18 too (29.80 µs); before 8e23296 and 255622c the fit
		// was 16 (27.76 µs, −7.5%). The paper's «assuming 200 ns access
		// time» (AT-P18) is 5: the fit is 3.6 times it
		// (docs/atm-validation.md).
		MemCycles: 18,
		// The TCA-100 preset, CellLatency calibrated there (C1).
		Board:  fore.TCA100(),
		Switch: atm.ASX100(),
		Link:   atm.LinkConfig(),
		RMA:    rma.Defaults(),
		// host/rpc's Defaults, StubInstrs calibrated there (C3).
		RPC: rpc.Defaults(),
		// assumed: 256 MB, free TURBOchannel space far above the 32 MB of
		// memory (the paper gives no address map).
		BoardBase: 0x1000_0000,
		// assumed: 24 MB, the top 8 MB of the 32 MB memory for the
		// kernel's data; user segments below.
		KernelBase: 24 << 20,
	}
}

// Validate checks the cluster's own parameters (the parts validate theirs
// when built); an error names the field.
func (c Config) Validate() error {
	if err := c.Host.Validate(); err != nil {
		return fmt.Errorf("atmtb: Host: %w", err)
	}
	mem := c.Host.Memory.SizeBytes
	switch {
	case c.Nodes < 2 || c.Nodes > MaxNodes:
		return fmt.Errorf("atmtb: Nodes %d must be in 2..%d (the ASX-100's ports, AT-P8)", c.Nodes, MaxNodes)
	case !c.Switched && c.Nodes != 2:
		return fmt.Errorf("atmtb: Nodes %d must be 2 without the switch (Switched false: one direct link)", c.Nodes)
	case c.Host.CPU.Count < 1:
		return fmt.Errorf("atmtb: Host.CPU.Count %d must be at least 1", c.Host.CPU.Count)
	case c.MemCycles < 1 || c.MemCycles > MaxMemCycles:
		return fmt.Errorf("atmtb: MemCycles %d must be in 1..%d", c.MemCycles, MaxMemCycles)
	case c.Board.Clock != c.Host.IOBus.Clock:
		return fmt.Errorf("atmtb: Board.Clock %v must be the TURBOchannel's clock %v", c.Board.Clock, c.Host.IOBus.Clock)
	case c.BoardBase < mem:
		return fmt.Errorf("atmtb: BoardBase %#x must lie beyond host memory (%#x bytes)", c.BoardBase, mem)
	case c.BoardBase%fore.WindowBytes != 0 || c.BoardBase+fore.WindowBytes > 1<<32:
		return fmt.Errorf("atmtb: BoardBase %#x must be %d-aligned and the window inside 32-bit TURBOchannel space", c.BoardBase, fore.WindowBytes)
	case c.KernelBase == 0 || c.KernelBase >= mem || c.KernelBase%uint64(c.Host.LastLevel().PageBytes) != 0:
		return fmt.Errorf("atmtb: KernelBase %#x must be page-aligned and inside host memory (%#x bytes), above user data", c.KernelBase, mem)
	}
	if err := c.Link.Validate(); err != nil {
		return fmt.Errorf("atmtb: Link: %w", err)
	}
	if err := c.RPC.Validate(); err != nil {
		return fmt.Errorf("atmtb: RPC: %w", err)
	}
	b := c.Board
	b.Link = c.Link
	if err := b.Validate(); err != nil {
		return fmt.Errorf("atmtb: Board: %w", err)
	}
	return nil
}

// host returns Host with its memory latency set from MemCycles.
func (c Config) host() platform.Host {
	h := c.Host
	h.Memory.LatencyNs = int(int64(c.MemCycles) * int64(h.MemBus.Clock.Period()) / int64(clock.Nanosecond))
	return h
}

// Cluster is the built system.
type Cluster struct {
	// Env is the simulation.
	Env *env.Env
	// Config is what it was built from.
	Config Config
	// Nodes are the nodes, node i on switch port i (or side A of the
	// direct link for node 0, side B for node 1).
	Nodes []*Node
	// Star is the ASX-100 and its links (nil without the switch).
	Star *atm.Star
	// Direct is the direct link (nil with the switch).
	Direct *link.Link
	// Ref is the untimed reference model of remote memory the always-on
	// checkers feed (design 3.6, 6.2), set by Build.
	Ref *Ref

	// checker is the always-on checking Build attached (Checks).
	checker *Checker

	finishers []func(now clock.Time)
}

// Node is one DECstation with its TCA-100 and kernel.
type Node struct {
	*smptb.Node
	// ID is the node number: its switch port and its cells' source.
	ID int
	// Board is the node's TCA-100 (N<i>.Fore).
	Board *fore.Board
	// Kernel is the node's remote-memory kernel; it owns the CPU's traps
	// and its interrupt program.
	Kernel *rma.Kernel
	// IRQs counts rising edges of the board's interrupt line (each raises
	// the CPU's line; the processor merges those it has not yet taken).
	IRQs int
	// irqHooks see every rising edge after the CPU's line rose.
	irqHooks []func(now clock.Time)
}

// AddIRQHook adds fn to the functions called at every rising edge of the
// board's interrupt line (the board has one OnInterrupt, which the
// cluster takes to raise the CPU's line): checkers watch interrupts here.
func (n *Node) AddIRQHook(fn func(now clock.Time)) { n.irqHooks = append(n.irqHooks, fn) }

// OnFinish adds fn to the end-of-run checks Finish runs, in the order
// added.
func (c *Cluster) OnFinish(fn func(now clock.Time)) { c.finishers = append(c.finishers, fn) }

// Build builds the cluster on e: nodes N0..N<n-1> (smptb names; the
// TURBOchannel N<i>.TC, the board N<i>.Fore, the kernel's records
// N<i>.RMA), the network (ATM.Switch and ATM.Link<i>, or the direct link
// ATM.Link), every board's interrupt to its CPU, the kernels, and the
// always-on checkers with their reference model (Cluster.Ref).
func Build(e *env.Env, c Config) (*Cluster, error) {
	if e == nil {
		return nil, errors.New("atmtb: no env")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	h := c.host()
	bc := c.Board
	bc.Link = c.Link
	cl := &Cluster{Env: e, Config: c}
	var ports []star.Port
	if c.Switched {
		st, err := atm.MakeStarBuilder().WithEnv(e).WithSwitch(c.Switch.WithPorts(c.Nodes)).WithLink(c.Link).Build("ATM")
		if err != nil {
			return nil, fmt.Errorf("atmtb: %w", err)
		}
		// One permanent VC per ordered pair (rma.VCI), the same VCI on
		// both sides of the switch.
		for s := range c.Nodes {
			for d := range c.Nodes {
				if s == d {
					continue
				}
				v := rma.VCI(s, d)
				if err := st.Switch.AddRoute(s, v, d, v); err != nil {
					return nil, fmt.Errorf("atmtb: route %d->%d: %w", s, d, err)
				}
			}
		}
		cl.Star, ports = st, st.Ports
	} else {
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(c.Link).Build("ATM.Link")
		if err != nil {
			return nil, fmt.Errorf("atmtb: %w", err)
		}
		cl.Direct = l
		ports = []star.Port{
			{Send: l.From(link.A), Recv: l.From(link.B)},
			{Send: l.From(link.B), Recv: l.From(link.A)},
		}
	}
	for i := range c.Nodes {
		name := fmt.Sprintf("N%d", i)
		sn, err := smptb.MakeBuilder().WithEnv(e).WithHost(h).WithCPUs(1).WithoutDMA().
			WithIOBusName(IOBusName).WithPIOWindow(c.BoardBase, fore.WindowBytes).Build(name)
		if err != nil {
			return nil, fmt.Errorf("atmtb: %w", err)
		}
		// The preset's write-through D-cache (design F6: memsys's default
		// policy is write-back).
		if err := sn.Mem.SetPolicy(0, h.Memory.SizeBytes, memsys.WriteThrough); err != nil {
			return nil, fmt.Errorf("atmtb: %w", err)
		}
		b, err := fore.MakeBuilder().WithEnv(e).WithConfig(bc).WithNode(i).Build(name + ".Fore")
		if err != nil {
			return nil, fmt.Errorf("atmtb: %w", err)
		}
		if err := b.AttachTC(sn.PCI, c.BoardBase); err != nil {
			return nil, fmt.Errorf("atmtb: %w", err)
		}
		if err := b.ConnectLink(ports[i]); err != nil {
			return nil, fmt.Errorf("atmtb: %w", err)
		}
		n := &Node{Node: sn, ID: i, Board: b}
		c0 := sn.CPUs[0]
		b.OnInterrupt(func(now clock.Time) {
			n.IRQs++
			c0.Interrupt(now)
			for _, fn := range n.irqHooks {
				fn(now)
			}
		})
		k, err := rma.NewKernel(rma.Hardware{CPU: c0, Memory: sn.Memory(), Board: b, BoardBase: c.BoardBase,
			KernelBase: c.KernelBase, Node: i, Nodes: c.Nodes}, c.RMA)
		if err != nil {
			return nil, fmt.Errorf("atmtb: node %d: %w", i, err)
		}
		n.Kernel = k
		cl.Nodes = append(cl.Nodes, n)
	}
	attachChecker(cl)
	return cl, nil
}

// Node returns node i.
func (c *Cluster) Node(i int) *Node { return c.Nodes[i] }

// DropNext makes node's board drop the next cell it transmits whose
// payload carries op, at the wire, counted as a DropTest drop
// (fore.Board.DropNextTx): the directed fault of the CAS golden and the
// fault specs.
func (c *Cluster) DropNext(node int, op rma.Op) {
	c.Nodes[node].Board.DropNextTx(func(cell *fore.Cell) bool {
		p, err := rma.Decode(cell.Payload)
		return err == nil && p.Op == op
	})
}

// Close ends the host programs still running (smptb.Node.Close).
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		n.Close()
	}
}

// Finish runs the end-of-run checks once the simulation has ended (those
// added by OnFinish); violations go to the Env's monitor, and the error
// joins them, nil when the run was clean.
func (c *Cluster) Finish() error {
	now := c.Env.Now()
	for _, fn := range c.finishers {
		fn(now)
	}
	return c.Env.Monitor.Err()
}
