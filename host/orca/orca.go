// Package orca is Orca's runtime system over Panda-MT
// (lci-myrinet-cluster-protocols.txt section 6.2): «Orca is an
// object-based DSM system. To communicate, processes invoke user-defined
// operations on shared objects. Orca requires multithreading and therefore
// uses Panda-MT. Orca's runtime system stores each shared object either in
// a single processor's memory or replicates it in the memory of all
// processors that have a reference to the object. When a process performs
// an update operation on a shared object, the runtime system ships the
// operation's parameters to all processors that store the object; each
// receiving processor performs the operation. For nonreplicated objects
// Orca uses Panda RPC to ship the operation; for replicated objects Orca
// uses Panda's totally ordered broadcast.»
//
// The objects here are integers with two operations, Read (a null
// operation: it returns the value) and Add (an update: it adds its
// argument and returns the new value). A read of a replicated object is
// local; an update of one is a totally ordered broadcast that every node
// (the invoker too) applies in the same order, the invoker returning when
// its own has been applied. The runtime's code is charged in host CPU
// cycles (Costs) where it runs.
package orca

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/panda"
)

// Costs are Orca's runtime in host CPU cycles (both platforms).
type Costs struct {
	// Op: an operation's runtime path where it is invoked and again where
	// it is performed (the object's descriptor, marshalling or
	// unmarshalling the parameters, the operation's guard and dispatch,
	// the result). calibrated: 1776 cycles, fitted to Orca's +17.1 µs over
	// Panda-MT in the PPro I-pio null operation on a remote non-replicated
	// object (Table V, 28.9/46.0 µs): see DefaultCosts.
	Op int
}

// DefaultCosts returns Orca's costs: the model's Panda-MT null RPC (16
// bytes each way) is 31.92 µs, Orca's null operation 49.03 µs (+17.11):
// Op twice (invoker, owner) is 17.76 µs; the 16-byte operation record and
// the 8-byte result (8 bytes less PIO than Panda's 16-byte reply) take
// 0.65 µs off.
func DefaultCosts() Costs { return Costs{Op: 1776} }

// Operations.
const (
	// OpRead returns the value (a null operation).
	OpRead uint32 = iota + 1
	// OpAdd adds its argument and returns the new value.
	OpAdd
	// OpPut stores its data parameter in the object (copied in) and
	// returns its length: an operation with a large parameter, Table V's
	// throughput.
	OpPut
)

// Object is a shared object as every node declares it.
type Object struct {
	// Owner holds a non-replicated object.
	Owner      int
	Replicated bool
}

// Ports of Orca's Panda traffic.
const (
	portRPC   = 3
	portBcast = 4
)

// OpBytes is an operation record: object, operation, argument; an OpPut's
// data follows it.
const OpBytes = 16

type done struct {
	seq uint32
	val int64
}

// Node is one node's Orca runtime.
type Node struct {
	p       *panda.Node
	costs   Costs
	objects []Object
	values  []int64 // this node's copy (replicated) or the object (owner)
	data    [][]byte
	// mine are the results of this node's own broadcast updates by
	// sequence number; looked up, never iterated.
	mine map[uint32]int64
	// Applied is called as each replicated update is applied here
	// (benchmarks, checks).
	Applied func(s *lcilib.Seq, obj int, src int, seq uint32)
	// Counters: operations shipped by RPC, broadcast and performed
	// locally by this node's invocations; operations served for others.
	RPCs, Broadcasts, Local, Served uint64
}

// Serve polls until done holds: a node (its threads idle) serving the
// operations shipped to it and applying broadcast updates.
func (n *Node) Serve(s *lcilib.Seq, done func() bool) { n.p.WaitUntil(s, done) }

// New returns the runtime on node p (Panda-MT) with the objects every
// node declares.
func New(p *panda.Node, costs Costs, objects []Object) (*Node, error) {
	if !p.Config().MT {
		return nil, fmt.Errorf("orca: runs on Panda-MT, not Panda-ST")
	}
	n := &Node{p: p, costs: costs, objects: objects, values: make([]int64, len(objects)), data: make([][]byte, len(objects)), mine: map[uint32]int64{}}
	p.Serve(portRPC, n.serve)
	p.Handle(portBcast, n.apply)
	return n, nil
}

// Value returns this node's copy of obj (its owner's value, or a replica).
func (n *Node) Value(obj int) int64 { return n.values[obj] }

func encode(obj int, op uint32, arg int64) []byte {
	b := make([]byte, OpBytes)
	binary.LittleEndian.PutUint32(b[0:], uint32(obj))
	binary.LittleEndian.PutUint32(b[4:], op)
	binary.LittleEndian.PutUint64(b[8:], uint64(arg))
	return b
}

func decode(b []byte) (obj int, op uint32, arg int64, data []byte, ok bool) {
	if len(b) < OpBytes {
		return 0, 0, 0, nil, false
	}
	return int(binary.LittleEndian.Uint32(b[0:])), binary.LittleEndian.Uint32(b[4:]), int64(binary.LittleEndian.Uint64(b[8:])), b[OpBytes:], true
}

// perform runs op on this node's copy of obj.
func (n *Node) perform(s *lcilib.Seq, obj int, op uint32, arg int64, data []byte) int64 {
	s.Compute(n.costs.Op)
	switch op {
	case OpAdd:
		n.values[obj] += arg
	case OpPut:
		s.Compute(n.p.Host().CopyCycles(len(data), false))
		n.data[obj] = append(n.data[obj][:0], data...)
		return int64(len(data))
	}
	return n.values[obj]
}

// Data returns this node's copy of obj's data (OpPut).
func (n *Node) Data(obj int) []byte { return n.data[obj] }

// Invoke performs op (OpRead, OpAdd with arg, OpPut with data) on obj and returns its
// result: locally (a read of a replica, any operation of an object this
// node owns), by RPC to the owner, or by totally ordered broadcast (an
// update of a replicated object).
func (n *Node) Invoke(s *lcilib.Seq, obj int, op uint32, arg int64, data []byte) int64 {
	h := n.p.Host()
	if obj < 0 || obj >= len(n.objects) || op < OpRead || op > OpPut {
		h.Report(s.Now(), "orca.api", "operation %d on object %d of %d", op, obj, len(n.objects))
		return 0
	}
	o := n.objects[obj]
	switch {
	case o.Replicated && op != OpRead:
		s.Compute(n.costs.Op)
		n.Broadcasts++
		seq := n.p.OrderedBroadcast(s, portBcast, encode(obj, op, arg), data)
		n.p.WaitUntil(s, func() bool { _, ok := n.mine[seq]; return ok })
		v := n.mine[seq]
		delete(n.mine, seq)
		return v
	case o.Replicated || o.Owner == h.Node():
		n.Local++
		return n.perform(s, obj, op, arg, data)
	}
	s.Compute(n.costs.Op)
	n.RPCs++
	rep := n.p.RPC(s, o.Owner, portRPC, encode(obj, op, arg), data)
	if len(rep.Data) != 8 {
		h.Report(s.Now(), "orca.protocol", "reply of %d bytes from %d", len(rep.Data), rep.Src)
		return 0
	}
	return int64(binary.LittleEndian.Uint64(rep.Data))
}

// serve performs a shipped operation on an object this node owns.
func (n *Node) serve(s *lcilib.Seq, req *panda.Message) [][]byte {
	obj, op, arg, data, ok := decode(req.Data)
	if !ok || obj >= len(n.objects) || n.objects[obj].Replicated || n.objects[obj].Owner != n.p.Host().Node() {
		n.p.Host().Report(s.Now(), "orca.protocol", "operation for object %d shipped to node %d, not its owner", obj, n.p.Host().Node())
		return [][]byte{make([]byte, 8)}
	}
	n.Served++
	v := n.perform(s, obj, op, arg, data)
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(v))
	return [][]byte{b}
}

// apply performs a broadcast update on this node's replica.
func (n *Node) apply(s *lcilib.Seq, m *panda.Message) {
	obj, op, arg, data, ok := decode(m.Data)
	if !ok || obj >= len(n.objects) || !n.objects[obj].Replicated {
		n.p.Host().Report(s.Now(), "orca.protocol", "broadcast update of object %d, which is not replicated", obj)
		return
	}
	v := n.perform(s, obj, op, arg, data)
	if m.Src == n.p.Host().Node() {
		n.mine[m.Arg] = v
	}
	if n.Applied != nil {
		n.Applied(s, obj, m.Src, m.Arg)
	}
}
