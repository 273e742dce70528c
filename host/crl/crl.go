// Package crl is CRL, the region-based software DSM of
// lci-myrinet-cluster-protocols.txt section 6.2, «simple enough to be
// implemented directly on top of LCI»: «Processes can share memory regions
// of a user-defined size. Processes enclose their accesses to shared
// regions by calls to the CRL runtime system, which implements coherent
// region caching. Most communication results from read and write misses,
// which generate a small request to a region's home node, zero or more
// invalidations from the home node to other sharers, and a reply from the
// home node to the node that missed. Whether a reply carries region data
// depends on the type of miss. This single-threaded CRL implementation
// blocks the application during a pending region miss.»
//
// Every region has a home node that keeps its directory (the sharers, the
// exclusive owner) and the master copy. A read miss asks the home, which
// takes the region back from an exclusive owner first; a write miss asks
// the home, which invalidates every other copy first (an owner's
// acknowledgement carries the data back) and replies with the data, or
// without it when the writer already held a shared copy. A node invalidates
// a copy it is using (between a start and an end operation) only at the
// end of that operation; the home serves one miss per region at a time and
// queues the others. Requests are served whenever the node polls: in its
// blocking operations, and in Serve (a node with nothing else to do; the
// paper's CRL also takes them by interrupt, which the benchmarks do not
// need: their homes poll).
//
// Messages are LCI packets: a control message is 8 bytes (the region and an
// argument), the kind and the region travel in the tag; a data message is
// the same 8-byte header followed by the region's bytes, as packets of the
// MTU (lcilib's SendMessage), so a 1 KB region is «just over 1 Kbyte»
// (section 7.3: Radix's «dominant message size is just over 1 Kbyte. As a
// result, all messages require one full and one nearly empty data packet»
// with a 1 KB MTU). CRL's code is charged in host CPU cycles (Costs) in the
// program that runs it.
package crl

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/env"
)

// Costs are CRL's code paths in host CPU cycles (both platforms).
type Costs struct {
	// Op: a start or end operation's call (the region table lookup, the
	// state test, the counters). assumed: 30 cycles.
	Op int
	// Handler: a protocol message handled (the region's state machine at
	// the home or the requester, the directory update, building the next
	// message). calibrated: 214 cycles, fitted to CRL's +2.9 µs over LCI
	// in the PPro I-pio clean write miss of a 16-byte region (Table V,
	// 20.4/23.3 µs): see DefaultCosts.
	Handler int
}

// DefaultCosts returns CRL's costs: the model's LCI round trip (16 bytes
// each way) is 23.41 µs, the clean write miss 26.33 µs (+2.92): two
// messages handled (the request at the home, the reply at the writer), two
// operations (start and end write), the request's 8 bytes and the reply's
// 24 (the header and the region). The reply's header costs I-pio a second
// write-combined line (40 bytes with LCI's 16-byte header): the fit moved
// from 281 cycles (a 16-byte reply) to 214.
func DefaultCosts() Costs { return Costs{Op: 30, Handler: 214} }

// Region is a shared region as every node declares it.
type Region struct {
	Home, Size int
}

// Message kinds (the tag's top byte).
const (
	kindReadReq uint8 = iota + 1
	kindWriteReq
	kindReadAck
	kindWriteAck     // with data
	kindWriteAckNone // an upgrade: no data
	kindInval
	kindInvalAck     // without data
	kindInvalAckData // from an exclusive owner: the data
)

// ControlBytes is a control message's body: the region and an argument.
const ControlBytes = 8

// Copy states.
const (
	invalid = iota
	shared
	exclusive
)

type request struct {
	from  int
	write bool
}

// region is one node's state of one region.
type region struct {
	id   int
	home int
	data []byte
	// The local copy (at the home: what the home itself may do).
	state   int
	readers int
	writing bool
	// deferred is an invalidation that waits for the operation's end.
	deferred bool
	// waiting: this node's miss is out.
	waiting bool
	// Directory, at the home: the remote copies.
	sharers []bool
	owner   int
	busy    bool // a miss is being served (acks outstanding)
	// localGranted: the home's own miss is served and its operation has
	// not started yet.
	localGranted bool
	acks         int       // invalidation acks outstanding
	cur          request   // the miss being served (from = home: the home's own)
	queue        []request // misses waiting for the region
	// in is a data message being reassembled.
	in []byte
}

// Node is one node's CRL.
type Node struct {
	host    *lcilib.Host
	node    int
	nodes   int
	mtu     int
	costs   Costs
	regions []*region
	sizes   []int
	check   *Checker
	noInval bool
	// Counters.
	ReadMisses, WriteMisses, Invalidations, Handled uint64
}

// mutNoInval is a test-only fault (see env.DeclareMutation).
var mutNoInval = env.DeclareMutation("crl.noinval",
	"a CRL home grants a write miss without invalidating the other sharers "+
		"(caught by crl.coherence: a reader sees a stale copy, or reads while another node writes)")

// New returns node's CRL on its LCI host h (of nodes, packets of mtu
// bytes), with the regions every node declares, and the shared checker
// (nil: none).
func New(e *env.Env, h *lcilib.Host, nodes, mtu int, costs Costs, regions []Region, check *Checker) (*Node, error) {
	n := &Node{host: h, node: h.Node(), nodes: nodes, mtu: mtu, costs: costs, check: check, noInval: e.Mutation(mutNoInval) != 0}
	for i, r := range regions {
		if r.Home < 0 || r.Home >= nodes || r.Size < 1 {
			return nil, fmt.Errorf("crl: region %d: home %d of %d nodes, %d bytes", i, r.Home, nodes, r.Size)
		}
		st := &region{id: i, home: r.Home, owner: -1, sharers: make([]bool, nodes)}
		if r.Home == n.node {
			st.data = make([]byte, r.Size)
			st.state = exclusive
		}
		n.regions = append(n.regions, st)
		n.sizes = append(n.sizes, r.Size)
	}
	if len(regions) >= 1<<24 {
		return nil, fmt.Errorf("crl: %d regions: the tag holds 24 bits", len(regions))
	}
	return n, nil
}

// Size returns region r's size.
func (n *Node) Size(r int) int { return n.sizes[r] }

func tag(kind uint8, r int) uint32 { return uint32(kind)<<24 | uint32(r) }

// dataMsg is a data message: the control header (the region, 0) and the
// region's bytes.
func dataMsg(r int, data []byte) []byte { return append(ctl(r, 0), data...) }

func ctl(r int, arg uint32) []byte {
	b := make([]byte, ControlBytes)
	binary.LittleEndian.PutUint32(b[0:], uint32(r))
	binary.LittleEndian.PutUint32(b[4:], arg)
	return b
}

// Poll handles every message already there.
func (n *Node) Poll(s *lcilib.Seq) { s.TryRecv(n.upcall) }

// Serve polls until done holds: a node with nothing else to do serving the
// misses of others. done is evaluated after every message and whenever
// the processor is woken (cpu.CPU.Wake).
func (n *Node) Serve(s *lcilib.Seq, done func() bool) {
	for !done() && s.RecvOr(n.upcall, done) {
	}
}

func (n *Node) wait(s *lcilib.Seq, cond func() bool) {
	for !cond() {
		s.Recv(n.upcall)
	}
}

// StartRead is rgn_start_read: it returns the region's data once the
// node holds a valid copy (a read miss asks the home).
func (n *Node) StartRead(s *lcilib.Seq, r int) []byte {
	s.Compute(n.costs.Op)
	st := n.regions[r]
	if st.home == n.node {
		if st.owner >= 0 || st.busy {
			n.localMiss(s, st, false)
		}
	} else if st.state == invalid {
		n.ReadMisses++
		st.waiting = true
		s.Send(st.home, ctl(r, 0), tag(kindReadReq, r))
		n.wait(s, func() bool { return !st.waiting })
	}
	st.readers++
	if n.check != nil {
		n.check.StartRead(s.Now(), n.host, r, st.data)
	}
	return st.data
}

// EndRead is rgn_end_read.
func (n *Node) EndRead(s *lcilib.Seq, r int) {
	s.Compute(n.costs.Op)
	st := n.regions[r]
	st.readers--
	if n.check != nil {
		n.check.EndRead(r)
	}
	n.ended(s, st)
}

// StartWrite is rgn_start_write: it returns the region's data, which the
// caller may change until EndWrite, once the node holds the only copy (a
// write miss asks the home).
func (n *Node) StartWrite(s *lcilib.Seq, r int) []byte {
	s.Compute(n.costs.Op)
	st := n.regions[r]
	if st.home == n.node {
		if st.owner >= 0 || slices.Contains(st.sharers, true) || st.busy {
			n.localMiss(s, st, true)
		}
	} else if st.state != exclusive {
		n.WriteMisses++
		st.waiting = true
		s.Send(st.home, ctl(r, uint32(st.state)), tag(kindWriteReq, r))
		n.wait(s, func() bool { return !st.waiting })
	}
	st.writing = true
	if n.check != nil {
		n.check.StartWrite(s.Now(), n.host, r)
	}
	return st.data
}

// EndWrite is rgn_end_write: the write is complete.
func (n *Node) EndWrite(s *lcilib.Seq, r int) {
	s.Compute(n.costs.Op)
	st := n.regions[r]
	st.writing = false
	if n.check != nil {
		n.check.EndWrite(r, st.data)
	}
	n.ended(s, st)
}

// ended runs what waited for the end of an operation: a deferred
// invalidation (a remote copy), or the home's queued misses.
func (n *Node) ended(s *lcilib.Seq, st *region) {
	if st.readers > 0 || st.writing {
		return
	}
	if st.deferred {
		st.deferred = false
		n.invalidate(s, st)
	}
	if st.home == n.node && !st.busy {
		n.next(s, st)
	}
}

// localMiss is the home's own miss: it takes the region back from the
// remote copies (all of them for a write, the owner's for a read) and
// waits.
func (n *Node) localMiss(s *lcilib.Seq, st *region, write bool) {
	st.queue = append(st.queue, request{from: n.node, write: write})
	if !st.busy && st.readers == 0 && !st.writing {
		n.next(s, st)
	}
	n.wait(s, func() bool { return st.localGranted })
	st.localGranted = false
}

// next starts serving the home's next queued miss on st.
func (n *Node) next(s *lcilib.Seq, st *region) {
	for !st.busy && !st.localGranted && len(st.queue) > 0 && st.readers == 0 && !st.writing {
		q := st.queue[0]
		st.queue = st.queue[1:]
		st.cur, st.busy, st.acks = q, true, 0
		for k := range n.nodes {
			if k == q.from || k == n.node {
				continue
			}
			if k == st.owner || (q.write && st.sharers[k] && !n.noInval) {
				st.acks++
				n.Invalidations++
				s.Send(k, ctl(st.id, 0), tag(kindInval, st.id))
			}
		}
		if st.acks == 0 {
			n.grant(s, st)
		}
	}
}

// grant completes the miss being served: the home's own (its operation
// may start; the region's next miss waits for its end), or a reply: the
// data, or none to a writer that still holds a shared copy (an upgrade).
func (n *Node) grant(s *lcilib.Seq, st *region) {
	q := st.cur
	st.busy = false
	upgrade := q.write && st.sharers[q.from]
	if q.write {
		clear(st.sharers)
	}
	switch {
	case q.from == n.node:
		st.localGranted = true
	case q.write && upgrade:
		st.owner = q.from
		s.Send(q.from, ctl(st.id, 0), tag(kindWriteAckNone, st.id))
	case q.write:
		st.owner = q.from
		s.SendMessage(q.from, dataMsg(st.id, st.data), tag(kindWriteAck, st.id))
	default:
		st.sharers[q.from] = true
		s.SendMessage(q.from, dataMsg(st.id, st.data), tag(kindReadAck, st.id))
	}
}

// invalidate drops the node's copy of st and acknowledges to the home,
// with the data if the copy was exclusive.
func (n *Node) invalidate(s *lcilib.Seq, st *region) {
	was := st.state
	st.state = invalid
	if was == exclusive {
		s.SendMessage(st.home, dataMsg(st.id, st.data), tag(kindInvalAckData, st.id))
		return
	}
	s.Send(st.home, ctl(st.id, 0), tag(kindInvalAck, st.id))
}

// upcall handles one LCI packet of CRL's.
func (n *Node) upcall(s *lcilib.Seq, m *lcilib.Msg) {
	kind, r := uint8(m.Tag>>24), int(m.Tag&0xffffff)
	if r >= len(n.regions) {
		n.host.Report(s.Now(), "crl.protocol", "message of kind %d for region %d of %d", kind, r, len(n.regions))
		return
	}
	st := n.regions[r]
	switch kind {
	case kindReadAck, kindWriteAck, kindInvalAckData:
		// Data: the header and the region's bytes, packet by packet;
		// handled when whole.
		st.in = append(st.in, m.Data...)
		s.Compute(s.Host().CopyCycles(len(m.Data), false))
		if len(st.in) < ControlBytes+n.Size(r) {
			return
		}
		st.in = st.in[ControlBytes:]
	}
	s.Compute(n.costs.Handler)
	n.Handled++
	switch kind {
	case kindReadReq, kindWriteReq:
		if st.home != n.node {
			n.host.Report(s.Now(), "crl.protocol", "miss on region %d sent to node %d, not its home %d", r, n.node, st.home)
			return
		}
		q := request{from: m.Src, write: kind == kindWriteReq}
		st.queue = append(st.queue, q)
		if !st.busy {
			n.next(s, st)
		}
	case kindReadAck, kindWriteAck, kindWriteAckNone:
		if kind != kindWriteAckNone {
			st.data, st.in = st.in, nil
		}
		st.state = shared
		if kind != kindReadAck {
			st.state = exclusive
		}
		st.waiting = false
	case kindInval:
		if st.readers > 0 || st.writing {
			st.deferred = true
			return
		}
		n.invalidate(s, st)
	case kindInvalAck, kindInvalAckData:
		if kind == kindInvalAckData {
			st.data, st.in = st.in, nil
		}
		if m.Src == st.owner {
			st.owner = -1
		}
		st.sharers[m.Src] = false
		st.acks--
		if st.acks == 0 && st.busy {
			n.grant(s, st)
			n.next(s, st)
		}
	default:
		n.host.Report(s.Now(), "crl.protocol", "unknown message kind %d", kind)
	}
}
