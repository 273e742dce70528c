package shrimp

import (
	"encoding/binary"
	"fmt"
)

// FlitBytes is the size of a flit on the Paragon backplane. derived:
// topology.Paragon's 2-B flits at 100 MHz = 200 MB/s, «a maximum link
// bandwidth of 200 Mbytes/second» (SH-P3).
const FlitBytes = 2

// Header layout (assumed: the paper gives no packet format; issue 14 design
// section 2): one 64-bit little-endian word,
//
//	bits  0..31  destination physical address
//	bits 32..48  data length in bytes (17 bits: up to a 64 KB page)
//	bits 49..56  source node
//	bit  57      kind (0 AU, 1 DU)
//	bit  58      notify (the sender's interrupt bit, SH-P18)
//
// padded with zeros to HeaderBytes on the wire. The route (RouteBytes)
// precedes it: the destination node, 16-bit little-endian, zero-padded.
const (
	hdrLenShift    = 32
	hdrLenMask     = 1<<17 - 1
	hdrSrcShift    = 49
	hdrSrcMask     = 1<<8 - 1
	hdrKindShift   = 57
	hdrNotifyShift = 58
)

// EncodeHeader returns the 8-byte header of p.
func EncodeHeader(p *Packet) [8]byte {
	v := p.DstAddr & 0xffff_ffff
	v |= uint64(p.Len&hdrLenMask) << hdrLenShift
	v |= uint64(p.Src&hdrSrcMask) << hdrSrcShift
	v |= uint64(p.Kind&1) << hdrKindShift
	if p.Notify {
		v |= 1 << hdrNotifyShift
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return b
}

// DecodeHeader reads a header written by EncodeHeader into a packet with
// Kind, Src, DstAddr, Len and Notify set. It fails on a header with unused
// bits set or a zero length (a corrupted header).
func DecodeHeader(b []byte) (Packet, error) {
	if len(b) < 8 {
		return Packet{}, fmt.Errorf("shrimp: header of %d bytes, want 8", len(b))
	}
	v := binary.LittleEndian.Uint64(b)
	if v>>(hdrNotifyShift+1) != 0 {
		return Packet{}, fmt.Errorf("shrimp: header %#x has reserved bits set", v)
	}
	for _, x := range b[8:] {
		if x != 0 {
			return Packet{}, fmt.Errorf("shrimp: header padding is not zero")
		}
	}
	p := Packet{
		DstAddr: v & 0xffff_ffff,
		Len:     int(v>>hdrLenShift) & hdrLenMask,
		Src:     int(v>>hdrSrcShift) & hdrSrcMask,
		Kind:    Kind(v>>hdrKindShift) & 1,
		Notify:  v>>hdrNotifyShift&1 == 1,
	}
	if p.Len == 0 {
		return Packet{}, fmt.Errorf("shrimp: header %#x has length 0", v)
	}
	return p, nil
}

// routeBytes returns the route of a packet to node dst, n bytes.
func routeBytes(dst, n int) []byte {
	b := make([]byte, n)
	b[0] = byte(dst)
	if n > 1 {
		b[1] = byte(dst >> 8)
	}
	return b
}

// WireFlits returns the number of flits a packet of n data bytes takes on
// the link: RouteBytes and HeaderBytes, then the data, in FlitBytes flits
// (a 4-B store: 1 + 4 + 2 = 7 flits, issue 14 design section 3.1).
func (c Config) WireFlits(n int) int {
	return c.RouteBytes/FlitBytes + (c.HeaderBytes+FlitBytes-1)/FlitBytes + (n+FlitBytes-1)/FlitBytes
}
