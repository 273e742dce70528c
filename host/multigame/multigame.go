// Package multigame is Multigame's communication over Panda-ST
// (lci-myrinet-cluster-protocols.txt section 6.2), as a traffic generator:
// «To access a remote hash-table entry, a process sends its current
// position (a small, 32-byte job descriptor) to the entry's owner and
// starts working on another job. The owner looks up the entry and
// continues to work on the job (in the class of games discussed here, no
// results have to be reported back to the sender). Table-access messages
// are small one-way messages to arbitrary destinations. ... Multigame
// aggregates messages before transmitting them. Multigame uses polling to
// receive messages.»
//
// A node works through its jobs: each costs Costs.Work cycles, then its
// descriptor goes to the owner of the position's hash-table entry (a
// random other node), into that destination's aggregation buffer, which
// leaves as one Panda message when it holds Config.Aggregate descriptors;
// the node polls after every job. A received descriptor costs
// Costs.Lookup. The game tree itself is not modelled (the paper gives no
// Multigame figure to check: «a Multigame rule set does not correspond to
// a simple communication pattern»), so nothing here is calibrated.
package multigame

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/panda"
)

// JobBytes is a job descriptor: «a small, 32-byte job descriptor».
const JobBytes = 32

// Costs are Multigame's code in host CPU cycles.
type Costs struct {
	// Work: searching one position before its descriptor is sent.
	// assumed: 2000 cycles (10 µs on the PPro; the paper gives no
	// figure).
	Work int
	// Lookup: a received descriptor's hash-table probe and enqueueing
	// the job. assumed: 100 cycles.
	Lookup int
}

// DefaultCosts returns the assumed costs.
func DefaultCosts() Costs { return Costs{Work: 2000, Lookup: 100} }

// Config configures a node's generator.
type Config struct {
	Costs Costs
	// Aggregate is how many descriptors a message carries (1: none).
	Aggregate int
	// Port is the Panda port.
	Port uint8
}

// DefaultConfig aggregates 8 descriptors per message (assumed; the paper
// says only that Multigame aggregates).
func DefaultConfig() Config { return Config{Costs: DefaultCosts(), Aggregate: 8, Port: 6} }

// Node is one node's Multigame.
type Node struct {
	p     *panda.Node
	cfg   Config
	nodes int
	bufs  [][]byte
	// Counters: descriptors sent and received, messages sent.
	Sent, Received, Messages uint64
	// Bad counts descriptors whose content is not what their sender put
	// there.
	Bad uint64
}

// New returns node p's generator (of nodes, on Panda-ST).
func New(p *panda.Node, nodes int, cfg Config) (*Node, error) {
	if p.Config().MT {
		return nil, fmt.Errorf("multigame: runs on Panda-ST, not Panda-MT")
	}
	if cfg.Aggregate < 1 {
		return nil, fmt.Errorf("multigame: aggregate %d: at least one descriptor per message", cfg.Aggregate)
	}
	n := &Node{p: p, cfg: cfg, nodes: nodes, bufs: make([][]byte, nodes)}
	p.Handle(cfg.Port, n.upcall)
	return n, nil
}

// Descriptor is job j of node src: its first words carry both, the rest is
// a pattern of them.
func Descriptor(src, j int) []byte {
	b := make([]byte, JobBytes)
	binary.LittleEndian.PutUint32(b[0:], uint32(src))
	binary.LittleEndian.PutUint32(b[4:], uint32(j))
	for i := 8; i < JobBytes; i++ {
		b[i] = byte(src*31 + j*7 + i)
	}
	return b
}

func (n *Node) upcall(s *lcilib.Seq, m *panda.Message) {
	for off := 0; off+JobBytes <= len(m.Data); off += JobBytes {
		d := m.Data[off : off+JobBytes]
		src, j := int(binary.LittleEndian.Uint32(d[0:])), int(binary.LittleEndian.Uint32(d[4:]))
		if src != m.Src || string(d) != string(Descriptor(src, j)) {
			n.Bad++
		}
		s.Compute(n.cfg.Costs.Lookup)
		n.Received++
	}
	if len(m.Data)%JobBytes != 0 {
		n.Bad++
	}
}

// Run works through jobs jobs, sending each descriptor to a random other
// node (rng), then sends what is left in the aggregation buffers.
func (n *Node) Run(s *lcilib.Seq, jobs int, rng *rand.Rand) {
	me := n.p.Host().Node()
	for j := range jobs {
		s.Compute(n.cfg.Costs.Work)
		dst := rng.IntN(n.nodes - 1)
		if dst >= me {
			dst++
		}
		n.bufs[dst] = append(n.bufs[dst], Descriptor(me, j)...)
		n.Sent++
		if len(n.bufs[dst]) == n.cfg.Aggregate*JobBytes {
			n.flush(s, dst)
		}
		n.p.Poll(s)
	}
	for dst := range n.bufs {
		if len(n.bufs[dst]) > 0 {
			n.flush(s, dst)
		}
	}
}

func (n *Node) flush(s *lcilib.Seq, dst int) {
	n.Messages++
	n.p.Send(s, dst, n.cfg.Port, n.bufs[dst])
	n.bufs[dst] = nil
}

// Drain polls until done holds (the other nodes' jobs still arriving).
func (n *Node) Drain(s *lcilib.Seq, done func() bool) { n.p.WaitUntil(s, done) }
