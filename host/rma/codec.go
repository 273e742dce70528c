package rma

import (
	"encoding/binary"
	"fmt"
)

// Op is a remote-memory cell's operation (3 bits of payload byte 0).
type Op uint8

// Operations carried by a cell (atm-remote-memory-access.txt section 2.1:
// WRITE, READ and, section 2.3, the synthesized compare-and-swap).
const (
	// OpWrite deposits Count words at the target segment's Offset.
	OpWrite Op = 1 + iota
	// OpReadReq asks the target for Count words of segment Desc at Offset,
	// to be written back at the requester's reply descriptor and offset.
	OpReadReq
	// OpReadReply carries the words a READ asked for; Desc/Offset are the
	// requester's destination.
	OpReadReply
	// OpCASReq asks the target to compare-and-swap the word at Desc/Offset.
	OpCASReq
	// OpCASReply carries the CAS's outcome to the requester.
	OpCASReply
	// OpBlock is one cell of a block transfer; the receiver handles it as
	// OpWrite (counted apart).
	OpBlock
)

// String names the op as in trace records.
func (o Op) String() string {
	switch o {
	case OpWrite:
		return "write"
	case OpReadReq:
		return "readreq"
	case OpReadReply:
		return "readreply"
	case OpCASReq:
		return "casreq"
	case OpCASReply:
		return "casreply"
	case OpBlock:
		return "block"
	}
	return fmt.Sprintf("op%d", uint8(o))
}

// Payload layout limits.
const (
	// MaxWords is the most 32-bit words one operation carries: «each read
	// and write operation is of up to 10 4-byte words» (AT-P10, section 2.3).
	MaxWords = 10
	// SegmentMaxBytes is the largest segment a 16-bit word offset reaches
	// (assumed packing: 256 descriptors, 256 KB segments, 16-bit ids).
	SegmentMaxBytes = 4 * 65536
	// HeaderBytes is the payload's RMA header (bytes 0..5).
	HeaderBytes = 6
	// DataBytes is the payload's data field (bytes 6..45), MaxWords words.
	DataBytes = 4 * MaxWords
	// PayloadBytes is the ATM cell payload: 48 bytes, the last two the
	// board's CRC-10 (left zero by Encode).
	PayloadBytes = 48
)

// Payload is one remote-memory cell's 48-byte payload, decoded. Layout
// (assumed packing; the paper gives none):
//
//	b0: op<<5 | intr<<4 | count (words 1..10)   b1: descriptor (0..255)
//	b2-3: word offset (LE, 0..65535)            b4-5: request id (LE)
//	b6..45: data (40 bytes)                     b46-47: CRC-10 (the board's)
//
// ReadReq data: [0] reply descriptor, [2:4] reply word offset (LE).
// CASReq data: [0:4] old, [4:8] new, [8] reply descriptor, [10:12] reply
// word offset. CASReply data: [0:4] the old value seen, [4] 1 if swapped.
// ReadReply/CASReply: Desc/Offset are the requester's reply location.
type Payload struct {
	Op     Op
	Intr   bool
	Count  int
	Desc   uint8
	Offset uint16
	ReqID  uint16
	Data   [DataBytes]byte
}

// Encode packs the payload; bytes 46..47 (CRC-10) are left zero. The error
// names the field that does not fit.
func (p Payload) Encode() ([PayloadBytes]byte, error) {
	var b [PayloadBytes]byte
	if p.Op < OpWrite || p.Op > OpBlock {
		return b, fmt.Errorf("rma: payload Op %d must be %d..%d", p.Op, OpWrite, OpBlock)
	}
	if p.Count < 1 || p.Count > MaxWords {
		return b, fmt.Errorf("rma: payload Count %d must be 1..%d words", p.Count, MaxWords)
	}
	b[0] = byte(p.Op)<<5 | byte(p.Count)
	if p.Intr {
		b[0] |= 1 << 4
	}
	b[1] = p.Desc
	binary.LittleEndian.PutUint16(b[2:], p.Offset)
	binary.LittleEndian.PutUint16(b[4:], p.ReqID)
	copy(b[HeaderBytes:], p.Data[:])
	return b, nil
}

// Decode unpacks a 48-byte payload (bytes 46..47, the CRC-10, are
// ignored). It never panics; the error names the field that is invalid.
func Decode(b [PayloadBytes]byte) (Payload, error) {
	p := Payload{
		Op:     Op(b[0] >> 5),
		Intr:   b[0]&(1<<4) != 0,
		Count:  int(b[0] & 0xF),
		Desc:   b[1],
		Offset: binary.LittleEndian.Uint16(b[2:]),
		ReqID:  binary.LittleEndian.Uint16(b[4:]),
	}
	copy(p.Data[:], b[HeaderBytes:HeaderBytes+DataBytes])
	if p.Op < OpWrite || p.Op > OpBlock {
		return p, fmt.Errorf("rma: payload Op %d must be %d..%d", p.Op, OpWrite, OpBlock)
	}
	if p.Count < 1 || p.Count > MaxWords {
		return p, fmt.Errorf("rma: payload Count %d must be 1..%d words", p.Count, MaxWords)
	}
	return p, nil
}

// UsedBytes is the prefix of the data field the op uses: Count words for
// WRITE, block and READ reply; the reply location (4 bytes) of a READ
// request; old, new and the reply location (12) of a CAS request; the
// old value and the swapped flag (5) of a CAS reply.
func (p *Payload) UsedBytes() int {
	switch p.Op {
	case OpReadReq:
		return 4
	case OpCASReq:
		return 12
	case OpCASReply:
		return 5
	}
	return 4 * min(max(p.Count, 0), MaxWords)
}

// Word returns data word i (little-endian); 0 outside the data field.
func (p *Payload) Word(i int) uint32 {
	if i < 0 || i >= MaxWords {
		return 0
	}
	return binary.LittleEndian.Uint32(p.Data[4*i:])
}

// SetWord sets data word i (little-endian); ignored outside the field.
func (p *Payload) SetWord(i int, v uint32) {
	if i < 0 || i >= MaxWords {
		return
	}
	binary.LittleEndian.PutUint32(p.Data[4*i:], v)
}

// Reply returns a ReadReq's or CASReq's reply location (descriptor, word
// offset) from its data field.
func (p *Payload) Reply() (uint8, uint16) {
	switch p.Op {
	case OpCASReq:
		return p.Data[8], binary.LittleEndian.Uint16(p.Data[10:])
	default:
		return p.Data[0], binary.LittleEndian.Uint16(p.Data[2:])
	}
}

// SetReply sets a ReadReq's or CASReq's reply location.
func (p *Payload) SetReply(desc uint8, off uint16) {
	switch p.Op {
	case OpCASReq:
		p.Data[8] = desc
		binary.LittleEndian.PutUint16(p.Data[10:], off)
	default:
		p.Data[0] = desc
		binary.LittleEndian.PutUint16(p.Data[2:], off)
	}
}

// vciBase is the first VCI the RMA layer uses (assumed: VCIs 0..31 are
// reserved by ITU-T I.361 for signalling and management).
const vciBase = 32

// vciStride is the VCIs per source node (assumed: up to 64 nodes).
const vciStride = 64

// VCI returns the permanent virtual channel from node src to node dst:
// 32 + 64·src + dst (assumed: one permanent VC per ordered pair, so the
// receiver learns the source from the VCI; AT-P19 keeps order per VC).
func VCI(src, dst int) uint16 { return uint16(vciBase + vciStride*src + dst) }

// SourceOf inverts VCI; ok is false for a VCI outside the RMA range.
func SourceOf(vci uint16) (src, dst int, ok bool) {
	if vci < vciBase {
		return 0, 0, false
	}
	v := int(vci) - vciBase
	src, dst = v/vciStride, v%vciStride
	if src >= vciStride {
		return 0, 0, false
	}
	return src, dst, true
}
