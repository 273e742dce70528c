// Package panda is Panda, the portable communication layer of the
// parallel-programming systems (lci-myrinet-cluster-protocols.txt section
// 6.1), as protocol code over the LCI host library (host/lcilib): «Panda
// provides a message datatype, Remote Procedure Call (RPC), message
// passing, unordered broadcast, and totally ordered broadcast.»
//
// Every byte goes through the modelled NI and network: a message is an
// I/O vector that Panda copies «directly into NI send buffers» (an LCI
// send of each fragment: the fragment's bytes are the packet's data, as
// lcilib's Send writes them by PIO or copies them to the host send queue),
// cut into packets of the MTU less Panda's header and reassembled at the
// receiver, which copies each fragment out of the LCI receive area into
// the message («Panda queues incoming LCI packets until they can be
// copied to a destination specified by the receiver»). A totally ordered
// broadcast fetches a global sequence number from the sequencer node with
// LCI's fetch-and-add, then multicasts; receivers reorder by it.
//
// Panda's own code is charged in host CPU cycles (Costs, the same on both
// platforms, as lcilib's), as computes in the program that sends or
// receives. Panda-ST and Panda-MT are one package with an option
// (Config.MT): «Panda-ST performs no locking and is faster than
// Panda-MT. Also, Panda-ST disables network interrupts and relies on
// polling by its clients to receive messages. Panda-MT polls automatically
// when all threads are idle»: MT adds a lock and unlock around every send
// and every packet handled, and a thread switch whenever a blocked thread
// is woken by a message. The model runs one program per node (the
// process's threads are not separate programs): a blocking call polls
// until its condition holds, which is what Panda-MT does «when all threads
// are idle».
package panda

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/env"
)

// Costs are Panda's code paths in host CPU cycles (both platforms).
type Costs struct {
	// Send: building a message's header from its I/O vector and the send
	// call's bookkeeping, per message. assumed: 100 cycles (about 70
	// instructions: the vector's lengths summed, the header's fields,
	// the destination's state; the PPro's CPI is about 1.4).
	Send int
	// Fragment: per packet sent or received, the fragment's header and
	// the reassembly state (the offset, the last-fragment test). assumed:
	// 40 cycles.
	Fragment int
	// Deliver: per message delivered to a client's handler, the
	// demultiplexing to the port, the message object's set-up and
	// release, and the procedure calls between Panda's modules
	// («demultiplexing, fragmentation and reassembly, locking, and
	// procedure calls», section 6.3). calibrated: 341 cycles, fitted to
	// Panda-ST's +6.6 µs over LCI in the PPro I-pio round trip of 16-byte
	// messages (Table V, 20.4/27.0 µs): the model's LCI round trip is
	// 23.41 µs, Panda-ST's 30.02 µs (+6.60; each message pays Deliver
	// once, 1.71 µs of the 3.30 per message; the rest is Send, Fragment,
	// the copy out and the 8-byte header's PIO).
	Deliver int
	// Lock: Panda-MT's lock and unlock of its state (a pthread mutex
	// pair), around each send and each packet handled. assumed: 40
	// cycles (two uncontended atomic operations and the calls).
	Lock int
	// Switch: Panda-MT waking a thread blocked on a message (signal the
	// condition variable, the scheduler's switch to it). calibrated:
	// 224 cycles, fitted to Panda-MT's +8.5 µs over LCI in the PPro I-pio
	// null-RPC round trip of 16 bytes each way (Table V, 20.4/28.9 µs):
	// the model's is 31.92 µs against LCI's 23.41 (+8.51), one switch per
	// round trip (the client's), four Locks.
	Switch int
}

// DefaultCosts returns Panda's costs. The two calibrated values were
// fitted in this order: Deliver with Panda-ST's message round trip, then
// Switch with Panda-MT's RPC round trip (Deliver, Lock and the rest held).
func DefaultCosts() Costs {
	return Costs{Send: 100, Fragment: 40, Deliver: 341, Lock: 40, Switch: 224}
}

// Config configures a node's Panda.
type Config struct {
	// MT selects Panda-MT (locks, thread switches); false is Panda-ST.
	MT bool
	// Sequencer is the node whose fetch-and-add variable hands out the
	// global sequence numbers of totally ordered broadcasts.
	Sequencer int
	Costs     Costs
	// Order, if set, checks that every node delivers the totally ordered
	// broadcasts in the same order (one checker shared by the nodes).
	Order *OrderChecker
}

// Kinds of Panda messages (the LCI tag's top byte).
const (
	KindMsg uint8 = iota + 1
	KindRPCReq
	KindRPCRep
	KindBcast
	KindOrdered
)

// HeaderBytes is Panda's header in every packet's data: the argument (an
// RPC's id, an ordered broadcast's sequence number) and the message's
// total length. The kind, the port and the fragment number travel in the
// LCI tag.
const HeaderBytes = 8

// Message is a received message.
type Message struct {
	Kind uint8
	Port uint8
	// Src is the sender (the root, for a broadcast).
	Src int
	// Arg is the RPC id or the ordered broadcast's sequence number.
	Arg  uint32
	Data []byte
}

// Handler is a port's upcall: sequential code in the program that polled.
type Handler func(s *lcilib.Seq, m *Message)

// RPCHandler serves an RPC request and returns the reply's I/O vector.
type RPCHandler func(s *lcilib.Seq, req *Message) [][]byte

// partial is a message being reassembled.
type partial struct {
	kind, port uint8
	arg        uint32
	frag       uint16
	data       []byte
	total      int
}

// Node is one node's Panda.
type Node struct {
	env  *env.Env
	host *lcilib.Host
	cfg  Config
	mtu  int

	ports   [256]Handler
	servers [256]RPCHandler
	// uni and multi reassemble per sender: LCI delivers each sender's
	// packets to a destination in order, and its multicasts in order, so
	// one message at a time per sender and stream.
	uni, multi []*partial

	rpcID       uint32
	replies     map[uint32]*Message // by RPC id; looked up, never iterated
	ordered     map[uint32]*Message // ordered broadcasts waiting for their turn
	nextDeliver uint32

	noReorder bool

	// Counters.
	Sent, Delivered, Packets uint64
}

// mutNoReorder is a test-only fault (see env.DeclareMutation).
var mutNoReorder = env.DeclareMutation("panda.noreorder",
	"Panda delivers totally ordered broadcasts in the order they arrive, not by sequence number "+
		"(caught by panda.order when two senders broadcast at once)")

// New returns node's Panda over its LCI host h on a cluster of nodes with
// the given MTU. Panda leaves h's upcall unset (lcilib.Host.SetUpcall):
// packets that arrive while the LCI library waits (for a send buffer, a
// fetch-and-add reply) are kept for Panda's next poll, so a handler never
// runs inside another one's send.
func New(e *env.Env, h *lcilib.Host, nodes, mtu int, cfg Config) (*Node, error) {
	if mtu <= HeaderBytes {
		return nil, fmt.Errorf("panda: MTU %d leaves no room after the %d-byte header", mtu, HeaderBytes)
	}
	if nodes < 2 || nodes > 256 {
		return nil, fmt.Errorf("panda: %d nodes: 2 to 256", nodes)
	}
	if cfg.Sequencer < 0 || cfg.Sequencer >= nodes {
		return nil, fmt.Errorf("panda: sequencer %d is not a node of %d", cfg.Sequencer, nodes)
	}
	return &Node{env: e, host: h, cfg: cfg, mtu: mtu, uni: make([]*partial, nodes), multi: make([]*partial, nodes),
		replies: map[uint32]*Message{}, ordered: map[uint32]*Message{},
		noReorder: e.Mutation(mutNoReorder) != 0}, nil
}

// Host returns the LCI library underneath.
func (n *Node) Host() *lcilib.Host { return n.host }

// Config returns the configuration.
func (n *Node) Config() Config { return n.cfg }

// Handle registers the upcall of a port for messages and broadcasts.
func (n *Node) Handle(port uint8, fn Handler) { n.ports[port] = fn }

// Serve registers the RPC server of a port.
func (n *Node) Serve(port uint8, fn RPCHandler) { n.servers[port] = fn }

// maxFragments is the most fragments a message may have: the tag's 15-bit
// fragment number (a last-fragment bit beside it).
const maxFragments = 1 << 15

func tag(kind, port uint8, frag int, last bool) uint32 {
	t := uint32(kind)<<24 | uint32(port)<<16 | uint32(frag&0x7fff)
	if last {
		t |= 0x8000
	}
	return t
}

// lock charges Panda-MT's lock and unlock pair.
func (n *Node) lock(s *lcilib.Seq) {
	if n.cfg.MT && n.cfg.Costs.Lock > 0 {
		s.Compute(n.cfg.Costs.Lock)
	}
}

// fragments cuts the I/O vector into packets' data: each Panda's header
// followed by up to MTU - HeaderBytes bytes of client data, taken from the
// vector's pieces in order (no staging copy: the packet's bytes are what
// LCI's send writes into the NI).
func (n *Node) fragments(iov [][]byte, arg uint32) [][]byte {
	total := 0
	for _, v := range iov {
		total += len(v)
	}
	room := n.mtu - HeaderBytes
	var pkts [][]byte
	cur := make([]byte, HeaderBytes, HeaderBytes+min(room, total))
	for _, v := range iov {
		for len(v) > 0 {
			k := min(len(v), room-(len(cur)-HeaderBytes))
			cur = append(cur, v[:k]...)
			v = v[k:]
			if len(cur)-HeaderBytes == room {
				pkts = append(pkts, cur)
				cur = make([]byte, HeaderBytes, HeaderBytes+room)
			}
		}
	}
	if len(cur) > HeaderBytes || len(pkts) == 0 {
		pkts = append(pkts, cur)
	}
	for _, p := range pkts {
		binary.LittleEndian.PutUint32(p[0:], arg)
		binary.LittleEndian.PutUint32(p[4:], uint32(total))
	}
	return pkts
}

// send sends a message of kind to dst (or multicasts it if mcast).
func (n *Node) send(s *lcilib.Seq, kind, port uint8, dst int, mcast bool, arg uint32, iov [][]byte) {
	n.lock(s)
	s.Compute(n.cfg.Costs.Send)
	pkts := n.fragments(iov, arg)
	if len(pkts) > maxFragments {
		n.host.Report(s.Now(), "panda.api", "message of %d packets exceeds Panda's %d fragments", len(pkts), maxFragments)
		return
	}
	for i, p := range pkts {
		s.Compute(n.cfg.Costs.Fragment)
		t := tag(kind, port, i, i == len(pkts)-1)
		if mcast {
			s.Multicast(p, t)
		} else {
			s.Send(dst, p, t)
		}
	}
	n.Sent++
}

// Send sends a message (the I/O vector's pieces in order) to dst's port.
func (n *Node) Send(s *lcilib.Seq, dst int, port uint8, iov ...[]byte) {
	n.send(s, KindMsg, port, dst, false, 0, iov)
}

// Broadcast sends a message to port on every other node, unordered (LCI's
// multicast); the local handler is not called.
func (n *Node) Broadcast(s *lcilib.Seq, port uint8, iov ...[]byte) {
	n.send(s, KindBcast, port, 0, true, 0, iov)
}

// OrderedBroadcast sends a message to port on every node, this one
// included, in one global order: «the sender fetches a global sequence
// number from a central sequencer node using LCI's fetch-and-add. Next,
// the sender broadcasts the message with the sequence number, allowing the
// receivers to reorder messages when needed.» It returns the sequence
// number; this node delivers its own message in its turn (at once, or
// during a later poll). The sequencer's own broadcasts fetch their numbers
// from its own NI («can be accessed by any host», section 4.3).
func (n *Node) OrderedBroadcast(s *lcilib.Seq, port uint8, iov ...[]byte) uint32 {
	g := s.FetchAndAdd(n.cfg.Sequencer, 1)
	n.send(s, KindOrdered, port, 0, true, g, iov)
	var data []byte
	for _, v := range iov {
		data = append(data, v...)
	}
	n.ordered[g] = &Message{Kind: KindOrdered, Port: port, Src: n.host.Node(), Arg: g, Data: data}
	if n.noReorder {
		n.deliverNow(s, n.ordered[g])
		delete(n.ordered, g)
		return g
	}
	n.drainOrdered(s)
	return g
}

// RPC calls port's server on dst with the request's I/O vector and
// returns the reply, polling until it arrives.
func (n *Node) RPC(s *lcilib.Seq, dst int, port uint8, iov ...[]byte) *Message {
	n.rpcID++
	id := n.rpcID
	n.send(s, KindRPCReq, port, dst, false, id, iov)
	n.WaitUntil(s, func() bool { return n.replies[id] != nil })
	m := n.replies[id]
	delete(n.replies, id)
	return m
}

// Poll handles every packet already there (no wait).
func (n *Node) Poll(s *lcilib.Seq) int { return s.TryRecv(n.upcall) }

// WaitUntil polls until cond holds (Panda-ST's client polling, Panda-MT's
// poll when every thread is idle); cond is evaluated after every packet and
// whenever the processor is woken (cpu.CPU.Wake). Under MT a wait that had
// to receive ends with a thread switch: the blocked thread is woken.
func (n *Node) WaitUntil(s *lcilib.Seq, cond func() bool) {
	waited := false
	for !cond() && s.RecvOr(n.upcall, cond) {
		waited = true
	}
	if waited && n.cfg.MT {
		s.Compute(n.cfg.Costs.Switch)
	}
}

// upcall is the LCI upcall: one packet of some message.
func (n *Node) upcall(s *lcilib.Seq, m *lcilib.Msg) {
	n.Packets++
	n.lock(s)
	s.Compute(n.cfg.Costs.Fragment)
	if len(m.Data) < HeaderBytes {
		n.host.Report(s.Now(), "panda.packet", "packet of %d bytes from %d is shorter than Panda's header", len(m.Data), m.Src)
		return
	}
	kind, port := uint8(m.Tag>>24), uint8(m.Tag>>16)
	frag, last := int(m.Tag&0x7fff), m.Tag&0x8000 != 0
	arg := binary.LittleEndian.Uint32(m.Data[0:])
	total := int(binary.LittleEndian.Uint32(m.Data[4:]))
	streams := n.uni
	if m.Type == lci.TypeMcast {
		streams = n.multi
	}
	p := streams[m.Src]
	if p == nil {
		if frag != 0 {
			n.host.Report(s.Now(), "panda.frag", "fragment %d from %d without its first", frag, m.Src)
			return
		}
		p = &partial{kind: kind, port: port, arg: arg, total: total, data: make([]byte, 0, total)}
		streams[m.Src] = p
	} else if frag != int(p.frag)+1 || kind != p.kind {
		n.host.Report(s.Now(), "panda.frag", "fragment %d of kind %d from %d after fragment %d of kind %d", frag, kind, m.Src, p.frag, p.kind)
	}
	p.frag = uint16(frag)
	body := m.Data[HeaderBytes:]
	// The copy out of the LCI receive area into the message.
	s.Compute(n.host.CopyCycles(len(body), false))
	p.data = append(p.data, body...)
	if !last {
		return
	}
	streams[m.Src] = nil
	if len(p.data) != p.total {
		n.host.Report(s.Now(), "panda.frag", "message from %d reassembled to %d bytes, header says %d", m.Src, len(p.data), p.total)
	}
	msg := &Message{Kind: p.kind, Port: p.port, Src: m.Src, Arg: p.arg, Data: p.data}
	n.dispatch(s, msg)
}

// dispatch hands a complete message to its client.
func (n *Node) dispatch(s *lcilib.Seq, m *Message) {
	switch m.Kind {
	case KindRPCRep:
		s.Compute(n.cfg.Costs.Deliver)
		n.Delivered++
		n.replies[m.Arg] = m
	case KindRPCReq:
		srv := n.servers[m.Port]
		if srv == nil {
			n.host.Report(s.Now(), "panda.port", "RPC to port %d of node %d, which serves none", m.Port, n.host.Node())
			return
		}
		s.Compute(n.cfg.Costs.Deliver)
		n.Delivered++
		rep := srv(s, m)
		n.send(s, KindRPCRep, m.Port, m.Src, false, m.Arg, rep)
	case KindOrdered:
		if n.noReorder {
			n.deliverNow(s, m)
			return
		}
		if m.Arg < n.nextDeliver || n.ordered[m.Arg] != nil {
			n.host.Report(s.Now(), "panda.order", "ordered broadcast %d from %d arrived twice", m.Arg, m.Src)
			return
		}
		n.ordered[m.Arg] = m
		n.drainOrdered(s)
	default:
		n.deliverNow(s, m)
	}
}

// drainOrdered delivers the ordered broadcasts whose turn has come.
func (n *Node) drainOrdered(s *lcilib.Seq) {
	for {
		m := n.ordered[n.nextDeliver]
		if m == nil {
			return
		}
		delete(n.ordered, n.nextDeliver)
		n.deliverNow(s, m)
	}
}

// deliverNow calls the port's handler.
func (n *Node) deliverNow(s *lcilib.Seq, m *Message) {
	if m.Kind == KindOrdered {
		n.nextDeliver = max(n.nextDeliver, m.Arg+1)
		if n.cfg.Order != nil {
			n.cfg.Order.Delivered(s.Now(), n.host, m.Src, m.Arg)
		}
	}
	s.Compute(n.cfg.Costs.Deliver)
	n.Delivered++
	if fn := n.ports[m.Port]; fn != nil {
		fn(s, m)
		return
	}
	n.host.Report(s.Now(), "panda.port", "message of kind %d to port %d of node %d, which has no handler", m.Kind, m.Port, n.host.Node())
}
