package remotewritetb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nisim/nisim/firmware/remotewrite"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/lanai"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/topology"
	"github.com/nisim/nisim/verify/testbench/lcitb"
)

// Host memory map of a node (bus addresses).
const (
	HostMemBytes = lcilib.HostMemBytes
	// SrcBase is where Write puts the data to send, DstBase where it asks
	// for it to be written at the destination.
	SrcBase = 0x0010_0000
	DstBase = 0x0020_0000
	// NIBase is the PCI address of the card's SRAM window.
	NIBase = lcilib.NIBase
)

// ClusterConfig is a cluster to build: Nodes hosts of the PPro platform's
// 64-node Myrinet grid, each with a LANai card running the program.
type ClusterConfig struct {
	// Platform is the hardware: host/lcilib's PPro (Table I of
	// lci-myrinet-cluster-protocols.txt: 200 MHz Pentium Pro, 32-bit
	// 33 MHz PCI, LANai 4.1 at 33 MHz, 160 MB/s Myrinet), whose parameters
	// carry their sources there.
	Platform lcilib.Platform
	Nodes    int
	Firmware remotewrite.Config
}

// DefaultClusterConfig is two nodes of the PPro platform.
func DefaultClusterConfig() ClusterConfig {
	return ClusterConfig{Platform: lcilib.PPro(), Nodes: 2, Firmware: remotewrite.DefaultConfig()}
}

// Validate checks the configuration.
func (c ClusterConfig) Validate() error {
	if err := c.Platform.Validate(); err != nil {
		return err
	}
	if c.Nodes < 2 || c.Nodes > 64 {
		return fmt.Errorf("remotewrite cluster: nodes = %d: the grid has 2 to 64", c.Nodes)
	}
	return c.Firmware.Validate(uint32(c.Platform.NI.SRAMBytes))
}

// Node is one host with its NI.
type Node struct {
	ID   int
	CPU  *cpu.CPU
	Bus  *bus.Bus
	Mem  *mem.Memory
	Card *lanai.Card
	FW   *remotewrite.Program
	cfg  remotewrite.Config // the program's configuration
	seq  uint32             // descriptors posted
}

// Cluster is a built cluster.
type Cluster struct {
	Config ClusterConfig
	Nodes  []*Node
	Net    *topology.SourceNet
}

// Build builds the cluster in e: a bus, host memory, CPU and card per node,
// on the first Nodes hosts of the grid (the switches of all 64 are built).
func Build(e *env.Env, c ClusterConfig) (*Cluster, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cl := &Cluster{Config: c}
	var routeOf func(src, dst int) []byte
	mc := topology.MyrinetConfig{Platform: c.Platform.Net}
	mc.Attach = func(h int, out, in *link.Dir) (bool, error) {
		if h >= c.Nodes {
			return false, nil
		}
		n, err := cl.buildNode(e, h)
		if err != nil {
			return false, err
		}
		n.Card.ConnectLink(out, in, func(dst int) []byte { return routeOf(h, dst) })
		cl.Nodes = append(cl.Nodes, n)
		return true, nil
	}
	net, err := topology.MyrinetGrid(e, "Net", mc, nil)
	if err != nil {
		return nil, err
	}
	cl.Net, routeOf = net, net.Route
	for _, n := range cl.Nodes {
		n.Card.Start()
	}
	return cl, nil
}

func (cl *Cluster) buildNode(e *env.Env, h int) (*Node, error) {
	name := fmt.Sprintf("N%d", h)
	prog, err := remotewrite.New(e, name+".NI.FW", cl.Config.Firmware)
	if err != nil {
		return nil, err
	}
	// The node's hardware (PCI bus, host memory behind its bridge, CPU,
	// LANai card) is the LCI testbench's (lcitb.BuildHardware), with this program on
	// the card.
	hw, err := lcitb.BuildHardware(e, name, cl.Config.Platform, h, cl.Config.Nodes, prog)
	if err != nil {
		return nil, err
	}
	return &Node{ID: h, CPU: hw.CPU, Bus: hw.Bus, Mem: hw.Mem, Card: hw.Card, FW: prog, cfg: cl.Config.Firmware}, nil
}

// Post returns the host operations that ask n's NI to write length bytes
// from host address from to host address to of node dst: one
// write-combined 32-byte store of the descriptor into the next ring slot
// (the valid mark, the last word, goes last). Post checks nothing: the NI
// does, and a bad descriptor is a checker error (rw.desc).
func (n *Node) Post(dst int, from, to uint64, length int) []cpu.Op {
	n.seq++
	d := remotewrite.Desc{Src: from, Dst: to, Len: uint32(length), Node: uint8(dst), Seq: n.seq}
	slot := n.FW.Layout().Ring + uint32(int(n.seq-1)%n.cfg.Slots*remotewrite.DescBytes)
	return []cpu.Op{{Kind: cpu.Store, Addr: NIBase + uint64(slot), Data: d.Encode(), Burst: true, Label: "post"}}
}

// Counter returns the completion counter in n's host memory.
func (n *Node) Counter() uint32 {
	b, _ := n.Mem.Storage().Bytes(n.cfg.Counter, 4)
	return binary.LittleEndian.Uint32(b)
}

// Result is what a remote write measured.
type Result struct {
	// Latency is from the sending host's descriptor store to the counter
	// landing in the destination's host memory (Landed - Start).
	Latency       clock.Time
	Start, Landed clock.Time
	// Seen is when the destination host's poll of the counter saw it
	// (the poll itself costs nothing here: no cache miss is modelled).
	Seen clock.Time
	// Run is the simulation's result, Cluster the built cluster.
	Run     env.Result
	Cluster *Cluster
}

// pattern is the data Write sends: bytes that differ from their neighbours
// and from zero, so a shifted, truncated or missing byte shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

// Write builds the cluster c in e and runs one remote write of n bytes
// from node src to node dst: once the NIs have booted, src's host stores
// the descriptor, and dst's host waits for its counter. It returns the latency, and an error if the run
// broke a checker rule, the data did not arrive intact (or bytes around it
// were touched) or the counter is wrong.
func Write(e *env.Env, c ClusterConfig, src, dst, n int) (Result, error) {
	var r Result
	if n < 1 || n > c.Firmware.MaxLen {
		return r, fmt.Errorf("remotewrite: size %d: need 1 to max_len = %d", n, c.Firmware.MaxLen)
	}
	if src < 0 || dst < 0 || src >= c.Nodes || dst >= c.Nodes || src == dst {
		return r, fmt.Errorf("remotewrite: src %d, dst %d: need two different nodes of %d", src, dst, c.Nodes)
	}
	cl, err := Build(e, c)
	if err != nil {
		return r, err
	}
	r.Cluster = cl
	s, d := cl.Nodes[src], cl.Nodes[dst]
	data := pattern(n)
	if err := s.Mem.Storage().Write(SrcBase, data); err != nil {
		return r, err
	}
	counter := c.Firmware.Counter
	d.Mem.OnWrite(func(now clock.Time, _ int, addr uint64, k int) {
		if addr <= counter && counter+4 <= addr+uint64(k) && r.Landed == 0 {
			r.Landed = now
		}
		d.CPU.Wake(now) // the polling host looks again
	})
	// The NIs boot at time 0 for Costs.Boot cycles; the host starts once
	// they have, so the latency does not include the boot.
	booted := c.Platform.NI.Clock.TimeOf(clock.Cycle(c.Firmware.Costs.Boot))
	ops := []cpu.Op{{Kind: cpu.Call, Fn: func(now clock.Time) bool { r.Start = now; return now >= booted }}}
	s.CPU.Run(append(ops, s.Post(dst, SrcBase, DstBase, n)...)...)
	d.CPU.Run(cpu.Op{Kind: cpu.Wait, Label: "poll", Fn: func(now clock.Time) bool {
		if d.Counter() == 0 {
			return false
		}
		r.Seen = now
		return true
	}})
	r.Run, err = e.Run()
	if err != nil {
		return r, err
	}
	got, _ := d.Mem.Storage().Bytes(DstBase-4, n+8)
	var errs []error
	if !bytes.Equal(got[4:4+n], data) {
		errs = append(errs, fmt.Errorf("remotewrite: the %d bytes at node %d's %#x differ from those sent", n, dst, DstBase))
	}
	if !bytes.Equal(got[:4], make([]byte, 4)) || !bytes.Equal(got[4+n:], make([]byte, 4)) {
		errs = append(errs, fmt.Errorf("remotewrite: bytes next to the %d written at node %d's %#x were touched", n, dst, DstBase))
	}
	if v := d.Counter(); v != 1 || r.Landed == 0 || r.Seen == 0 {
		errs = append(errs, fmt.Errorf("remotewrite: node %d's counter is %d (want 1), landed at %v, seen at %v", dst, v, r.Landed, r.Seen))
	}
	r.Latency = r.Landed - r.Start
	return r, errors.Join(errs...)
}

// OneWay is Write from node 0 to node 1.
func OneWay(e *env.Env, c ClusterConfig, n int) (Result, error) { return Write(e, c, 0, 1, n) }
