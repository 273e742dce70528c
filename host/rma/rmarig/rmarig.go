// Package rmarig builds the two-node TURBOchannel rig that host/rma's and
// host/rpc's specs and benchmarks run the RMA kernel on: per node an
// R3000-like CPU (CPI 1, the DECstation preset's zero OS costs: Table 1's
// crossing and dispatcher are the kernel's own counted steps, issue 15
// design section 3.4) as the only master of its own TURBOchannel, a
// memory and a TCA-100 on that bus, the two boards on one direct ATM link
// (section 2.3: «two hosts connected directly without a switch»), and the
// RMA kernel on each.
//
// The rig has no cache and no memory bus: the specs on it check
// instruction counts, accesses and protocols, not the DECstation's times.
// The real node is assembled once, in verify/testbench/atmtb.
package rmarig

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/trace"
)

// Nodes is the rig's node count: two hosts on one direct link.
const Nodes = 2

// The default rig's address map (DefaultConfig).
const (
	// BoardBase is where each board's window sits on its TURBOchannel.
	// assumed: 256 MB, TURBOchannel space far above the memory (the
	// paper gives no address map; atmtb uses the same base).
	BoardBase = 0x1000_0000
	// KernelBase is where the kernel's data starts in memory. assumed:
	// 256 KB, above the specs' segments.
	KernelBase = 0x4_0000
)

// Clock is the default rig's CPU and memory clock: «The DECstations
// contain 25 MHz MIPS R3000 processors» (AT-P2).
var Clock = clock.MHz(25)

// Config is every parameter of the rig.
type Config struct {
	// Clock is the CPUs' and memories' clock.
	Clock clock.Clock
	// MemBytes is each node's memory, mapped at TURBOchannel address 0;
	// MemLatency its latency in Clock cycles.
	MemBytes, MemLatency int
	// Board is the TCA-100 of each node.
	Board fore.Config
	// Link is the direct link between the boards.
	Link link.Config
	// BoardBase is where each board's window sits on its TURBOchannel;
	// KernelBase is where the kernel's data starts in memory.
	BoardBase, KernelBase uint64
	// RMA is the kernel's parameters.
	RMA rma.Params
}

// UnitBoard is the TCA-100 preset with CellLatency pinned at 9 link
// cycles each side: the hand-worked cycles of the rig's specs count
// these, and the preset's value is calibrated (fore.TCA100) and may
// move.
func UnitBoard() fore.Config {
	c := fore.TCA100()
	// assumed: 9 link cycles (514 ns) each side, issue 15 design section
	// 5.1's first-principles estimate, the value the specs were worked
	// with.
	c.CellLatency = 9
	return c
}

// DefaultConfig returns the rig of the specs.
func DefaultConfig() Config {
	return Config{
		Clock: Clock,
		// assumed: 1 MB, room for the kernel's data at KernelBase and the
		// specs' segments below it.
		MemBytes: 1 << 20,
		// derived: the paper's «assuming 200 ns access time» (AT-P18) at
		// 25 MHz: 200 / 40 = 5 cycles.
		MemLatency: 5,
		Board:      UnitBoard(),
		// AT-P1/AT-P11: the 140 Mb/s link, one byte per 17.5 MHz cycle.
		Link:       atm.LinkConfig(),
		BoardBase:  BoardBase,
		KernelBase: KernelBase,
		RMA:        rma.Defaults(),
	}
}

// Validate checks the rig's own parameters (the parts validate theirs
// when built); an error names the field.
func (c Config) Validate() error {
	switch {
	case !c.Clock.Valid():
		return errors.New("rmarig: Clock is not set")
	case c.MemBytes < 1:
		return fmt.Errorf("rmarig: MemBytes %d must be positive", c.MemBytes)
	case c.KernelBase >= uint64(c.MemBytes):
		return fmt.Errorf("rmarig: KernelBase %#x must be below MemBytes %#x", c.KernelBase, c.MemBytes)
	case c.BoardBase < uint64(c.MemBytes):
		return fmt.Errorf("rmarig: BoardBase %#x must be at or above MemBytes %#x (the memory's window)", c.BoardBase, c.MemBytes)
	}
	return nil
}

// Node is one host of the rig.
type Node struct {
	CPU    *cpu.CPU
	Mem    *mem.Memory
	Board  *fore.Board
	Kernel *rma.Kernel
}

// Rig is the two nodes and their link.
type Rig struct {
	Env   *env.Env
	Nodes []*Node
	Link  *link.Link
}

// Build builds the rig of c in e: node i's parts are named "N<i>.TC",
// "N<i>.Mem", "N<i>.Fore" and "N<i>.CPU", the link "Link" (node 0 on its
// side A).
func Build(e *env.Env, c Config) (*Rig, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	r := &Rig{Env: e}
	for i := range Nodes {
		n, err := buildNode(e, c, i)
		if err != nil {
			return nil, fmt.Errorf("rmarig: node %d: %w", i, err)
		}
		r.Nodes = append(r.Nodes, n)
	}
	l, err := link.MakeBuilder().WithEnv(e).WithConfig(c.Link).Build("Link")
	if err != nil {
		return nil, fmt.Errorf("rmarig: Link: %w", err)
	}
	r.Link = l
	if err := r.Nodes[0].Board.ConnectLink(star.Port{Send: l.From(link.A), Recv: l.From(link.B)}); err != nil {
		return nil, fmt.Errorf("rmarig: node 0: %w", err)
	}
	if err := r.Nodes[1].Board.ConnectLink(star.Port{Send: l.From(link.B), Recv: l.From(link.A)}); err != nil {
		return nil, fmt.Errorf("rmarig: node 1: %w", err)
	}
	return r, nil
}

// buildNode builds node i: its TURBOchannel, memory, board, CPU and
// kernel, in that order (the order their halves tick in a clock domain).
func buildNode(e *env.Env, c Config, i int) (*Node, error) {
	tc, err := bus.MakeBuilder().WithEnv(e).WithConfig(bus.TurboChannel25()).Build(fmt.Sprintf("N%d.TC", i))
	if err != nil {
		return nil, err
	}
	m, err := mem.MakeBuilder().WithEnv(e).WithClock(c.Clock).WithSize(uint64(c.MemBytes)).WithLatency(c.MemLatency).WithPortWidth(4).Build(fmt.Sprintf("N%d.Mem", i))
	if err != nil {
		return nil, err
	}
	if err := tc.AddTarget(fmt.Sprintf("N%d.Mem", i), 0, uint64(c.MemBytes), m.Port(0)); err != nil {
		return nil, err
	}
	b, err := fore.MakeBuilder().WithEnv(e).WithConfig(c.Board).WithNode(i).Build(fmt.Sprintf("N%d.Fore", i))
	if err != nil {
		return nil, err
	}
	if err := b.AttachTC(tc, c.BoardBase); err != nil {
		return nil, err
	}
	cp, err := cpu.MakeBuilder().WithEnv(e).WithClock(c.Clock).Build(fmt.Sprintf("N%d.CPU", i))
	if err != nil {
		return nil, err
	}
	ch, err := tc.AddMaster(fmt.Sprintf("N%d.CPU", i))
	if err != nil {
		return nil, err
	}
	cp.Attach(ch)
	b.OnInterrupt(cp.Interrupt)
	k, err := rma.NewKernel(rma.Hardware{CPU: cp, Memory: m, Board: b, BoardBase: c.BoardBase, KernelBase: c.KernelBase,
		Node: i, Nodes: Nodes}, c.RMA)
	if err != nil {
		return nil, err
	}
	return &Node{CPU: cp, Mem: m, Board: b, Kernel: k}, nil
}

// Run runs the simulation to its end, then closes the CPUs' programs; it
// returns the run's error (checker violations, the time limit).
func (r *Rig) Run() (env.Result, error) {
	res, err := r.Env.Run()
	for _, n := range r.Nodes {
		n.CPU.Close()
	}
	return res, err
}

// Records returns the trace records of kind, in order.
func (r *Rig) Records(kind string) []trace.Record {
	var out []trace.Record
	for _, rec := range r.Env.Trace.Records() {
		if rec.Kind == kind {
			out = append(out, rec)
		}
	}
	return out
}

// Steps returns node i's cpu.step records, in order.
func (r *Rig) Steps(i int) []trace.Record {
	path := fmt.Sprintf("N%d.CPU", i)
	var out []trace.Record
	for _, rec := range r.Records("cpu.step") {
		if rec.Path == path {
			out = append(out, rec)
		}
	}
	return out
}

// Seq returns the n words from, from+1, ...: the specs' argument and
// message patterns.
func Seq(n int, from uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = from + uint32(i)
	}
	return out
}

// Field returns a record's field (empty if absent).
func Field(rec trace.Record, key string) string {
	v, _ := rec.Get(key)
	return v
}
