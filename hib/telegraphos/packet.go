package telegraphos

import "fmt"

// Kind is a network packet's type.
type Kind uint8

// Packet kinds. Requests travel on the request class (VC 0) and are served
// by the home node's request server; responses on the response class (VC
// 1) and are consumed by the response sink. A request causes at most
// responses, and a response causes no packet at all, so the two classes
// never wait for each other in a cycle: the protocol is free of deadlock.
const (
	// KWrite is a remote write: Data[0] to Addr at the home node, which
	// answers with KWriteAck (telegraphos.txt 2.2.1).
	KWrite Kind = iota
	// KRead is a remote read; the home answers KReadResp with Data[0].
	KRead
	// KAtomic is a remote atomic operation Op on Addr with operands Data;
	// the home performs it atomically and answers KAtomicResp with the old
	// value (2.2.3).
	KAtomic
	// KCopyReq reads Addr for a remote copy; the home answers KCopyResp,
	// which the requester writes to its local address To (2.2.2).
	KCopyReq
	// KUpdate carries a write to a replicated page from a node that does
	// not own it to the owner, which applies it and reflects it to every
	// copy, then answers KWriteAck (2.3.1).
	KUpdate
	// KReadResp, KAtomicResp and KCopyResp answer their requests.
	KReadResp
	KAtomicResp
	KCopyResp
	// KWriteAck acknowledges a KWrite or KUpdate: the requester's
	// outstanding-operation count goes down (2.2, 2.3.5).
	KWriteAck
	// KReflect is a write the owner of a page multicasts to a copy (a
	// reflected write, 2.3.1, or an eager update of a mapped-out page,
	// 2.2.7); Origin is the node whose write it is.
	KReflect
	numKinds
)

var kindNames = [...]string{"write", "read", "atomic", "copy", "update", "read-resp", "atomic-resp",
	"copy-resp", "ack", "reflect"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Class is a packet's message class, which is also its virtual channel.
type Class uint8

// Message classes.
const (
	Request Class = iota
	Response
	numClasses
)

// Class returns the kind's message class.
func (k Kind) Class() Class {
	if k >= KReadResp {
		return Response
	}
	return Request
}

// AtomicOp is a remote atomic operation (TG-P13).
type AtomicOp uint8

// Atomic operations. Each returns the old value of the word.
const (
	// FetchAndStore writes Data[0].
	FetchAndStore AtomicOp = iota + 1
	// FetchAndInc adds one.
	FetchAndInc
	// CompareAndSwap writes Data[1] if the word equals Data[0].
	CompareAndSwap
)

func (o AtomicOp) String() string {
	switch o {
	case FetchAndStore:
		return "fetch-and-store"
	case FetchAndInc:
		return "fetch-and-inc"
	case CompareAndSwap:
		return "compare-and-swap"
	}
	return fmt.Sprintf("atomic(%d)", uint8(o))
}

// apply performs o on old with operands d and returns the new value.
func (o AtomicOp) apply(old uint32, d [2]uint32) uint32 {
	switch o {
	case FetchAndStore:
		return d[0]
	case FetchAndInc:
		return old + 1
	case CompareAndSwap:
		if old == d[0] {
			return d[1]
		}
	}
	return old
}

// Packet is one network packet between HIBs. On the wire it is a header
// word (kind, source, destination, atomic op), an address word for the
// kinds that carry one, and its data words; every word is one 4-byte flit.
type Packet struct {
	ID       uint64 // unique per source: source<<40 | sequence
	Kind     Kind
	Src, Dst int
	// Addr is the word's offset in the destination's shared memory.
	Addr uint32
	// Data are the operands (one word for a write, two for
	// compare-and-swap).
	Data [2]uint32
	// Op is the atomic operation of KAtomic.
	Op AtomicOp
	// Origin is the node whose write a KReflect or KUpdate carries.
	Origin int
	// To is the requester's local offset a KCopyResp is written to.
	To uint32
	// Seq numbers the writes of Origin (for the coherence checkers).
	Seq  uint64
	hops int
}

// Words returns the packet's length on the wire in 4-byte words.
func (p *Packet) Words() int {
	switch p.Kind {
	case KWrite, KUpdate, KReflect:
		return 3 // header, address, datum
	case KRead, KCopyReq:
		return 2 // header, address
	case KAtomic:
		if p.Op == CompareAndSwap {
			return 4
		}
		return 3
	case KCopyResp:
		return 3 // header, local address, datum
	case KReadResp, KAtomicResp:
		return 2 // header, datum
	}
	return 1 // KWriteAck: the header alone
}

// NumFlits implements wormhole.Packet.
func (p *Packet) NumFlits() int { return p.Words() }

// AddHop implements wormhole.Packet.
func (p *Packet) AddHop() { p.hops++ }

// Hops returns the switches the packet crossed.
func (p *Packet) Hops() int { return p.hops }

func (p *Packet) String() string {
	return fmt.Sprintf("%s %d->%d addr %#x data %#x id %d", p.Kind, p.Src, p.Dst, p.Addr, p.Data[0], p.ID)
}

// WordBytes is the size of a word, of a flit and of every shared-memory
// access the HIB performs: the 32-bit TURBOchannel data path (TG-P1).
const WordBytes = 4
