package rma_test

import (
	"encoding/binary"
	"fmt"

	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rma/rmarig"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
)

// The rig is host/rma/rmarig's (its package comment says what it holds
// and leaves out), with the memory latency and the boards' configuration
// a spec may change: these specs check the kernel's instruction counts
// and accesses, not the DECstation's times.
const (
	boardBase  = rmarig.BoardBase
	kernelBase = rmarig.KernelBase
	segBase    = 0x8000
	memBytes   = 1 << 20
)

var cpuClock = rmarig.Clock

type node struct {
	cpu    *cpu.CPU
	mem    *mem.Memory
	board  *fore.Board
	kernel *rma.Kernel
	events []rma.Event
}

type rig struct {
	*rmarig.Rig
	e     *env.Env
	nodes []*node
	link  *link.Link
}

// memLatency is the rig memory's latency in cycles (a spec may raise it
// to keep stores in flight longer).
var memLatency = 5

// boardConfig is the rig boards' configuration, CellLatency pinned
// (rmarig.UnitBoard; a spec may shrink the FIFOs).
var boardConfig = rmarig.UnitBoard()

func newRig(muts map[string]int) *rig {
	return buildRig(vtest.NewEnv(vtest.Options{Clock: cpuClock, Trace: true, Mutations: muts, TimeLimit: 100 * clock.Millisecond}))
}

// buildRig builds the rig in e (a fuzz target's env is not a Ginkgo
// spec's).
func buildRig(e *env.Env) *rig {
	c := rmarig.DefaultConfig()
	c.MemBytes, c.MemLatency, c.Board = memBytes, memLatency, boardConfig
	rr, err := rmarig.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	r := &rig{Rig: rr, e: e, link: rr.Link}
	for _, rn := range rr.Nodes {
		n := &node{cpu: rn.CPU, mem: rn.Mem, board: rn.Board, kernel: rn.Kernel}
		n.kernel.OnEvent(func(_ clock.Time, ev rma.Event) { n.events = append(n.events, ev) })
		r.nodes = append(r.nodes, n)
	}
	return r
}

// share exports a 4 KB read-write segment at segBase on each node to the
// other and imports it in descriptor register 0; it returns the ids.
func (r *rig) share(rights rma.Rights) [2]uint8 {
	var ids [2]uint8
	for i, n := range r.nodes {
		id, err := n.kernel.Export(segBase, 4096, rights, 1-i)
		Expect(err).NotTo(HaveOccurred())
		ids[i] = id
	}
	for i, n := range r.nodes {
		Expect(n.kernel.Import(0, 1-i, ids[1-i], 4096, rights)).To(Succeed())
	}
	return ids
}

func (r *rig) run() error {
	_, err := r.Run()
	return err
}

// steps returns node i's cpu.step records as "label instrs".
func (r *rig) steps(i int) []string {
	var out []string
	for _, rec := range r.Steps(i) {
		out = append(out, field(rec, "step")+" "+field(rec, "instrs"))
	}
	return out
}

// memShare returns, over node i's cpu.step records, the memory and I/O
// accesses and the instructions.
func (r *rig) memShare(i int) (memio, instrs int) {
	for _, rec := range r.Steps(i) {
		var m, io, n int
		fmt.Sscan(field(rec, "mem"), &m)
		fmt.Sscan(field(rec, "io"), &io)
		fmt.Sscan(field(rec, "instrs"), &n)
		memio += m + io
		instrs += n
	}
	return memio, instrs
}

func (r *rig) records(kind string) []trace.Record { return r.Records(kind) }

func (r *rig) words(i int, addr uint64, n int) []uint32 {
	b, err := r.nodes[i].mem.Storage().Bytes(addr, 4*n)
	Expect(err).NotTo(HaveOccurred())
	out := make([]uint32, n)
	for j := range out {
		out[j] = binary.LittleEndian.Uint32(b[4*j:])
	}
	return out
}

func seq(n int, from uint32) []uint32 { return rmarig.Seq(n, from) }

// forged returns a cell flit from src to dst carrying pl (sealed as the
// board's TX path seals it).
func forged(id uint64, vci uint16, pl rma.Payload) link.Flit {
	b, err := pl.Encode()
	if err != nil {
		// A payload whose fields do not encode: pack the raw bytes.
		b[0] = byte(pl.Op)<<5 | byte(pl.Count&0xf)
		b[1] = pl.Desc
	}
	fore.SealPayload(&b)
	f, err := atm.NewCell(id, atm.Header{VCI: vci}, b[:])
	Expect(err).NotTo(HaveOccurred())
	return f
}

func field(r trace.Record, key string) string { return rmarig.Field(r, key) }

func atmHeader(vci uint16) atm.Header { return atm.Header{VCI: vci} }

// forgedRaw returns a cell flit with raw payload bytes (sealed with the
// board's CRC-10 so the board accepts it).
func forgedRaw(id uint64, vci uint16, b [48]byte) link.Flit {
	fore.SealPayload(&b)
	f, err := atm.NewCell(id, atm.Header{VCI: vci}, b[:])
	Expect(err).NotTo(HaveOccurred())
	return f
}
