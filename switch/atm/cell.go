package atm

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/link"
)

// Cell sizes in bytes: a standard ATM cell is a 5-byte header and a 48-byte
// payload, «a standard 53 byte ATM cell» (atm-remote-memory-access.txt
// section 2.2, AT-P5).
const (
	HeaderBytes  = 5
	PayloadBytes = 48
	CellBytes    = HeaderBytes + PayloadBytes
)

// Header is an ATM UNI cell header. The fifth byte on the wire is the HEC,
// a CRC-8 of the first four (Encode computes it, DecodeHeader checks it).
type Header struct {
	// GFC is the 4-bit generic flow control field (UNI only).
	GFC uint8
	// VPI is the 8-bit virtual path identifier (UNI).
	VPI uint8
	// VCI is the 16-bit virtual channel identifier; the switch routes and
	// translates it.
	VCI uint16
	// PT is the 3-bit payload type.
	PT uint8
	// CLP is the cell loss priority bit.
	CLP bool
}

// String formats the header fields for messages.
func (h Header) String() string {
	clp := 0
	if h.CLP {
		clp = 1
	}
	return fmt.Sprintf("gfc %d vpi %d vci %d pt %d clp %d", h.GFC, h.VPI, h.VCI, h.PT, clp)
}

// Encode returns the 5 header bytes: GFC(4) VPI(8) VCI(16) PT(3) CLP(1) in
// network order, then the HEC.
func (h Header) Encode() ([]byte, error) {
	switch {
	case h.GFC > 0xf:
		return nil, fmt.Errorf("atm header GFC %d does not fit in 4 bits", h.GFC)
	case h.PT > 7:
		return nil, fmt.Errorf("atm header PT %d does not fit in 3 bits", h.PT)
	}
	b := make([]byte, HeaderBytes)
	b[0] = h.GFC<<4 | h.VPI>>4
	b[1] = h.VPI<<4 | byte(h.VCI>>12)
	b[2] = byte(h.VCI >> 4)
	b[3] = byte(h.VCI&0xf)<<4 | h.PT<<1
	if h.CLP {
		b[3] |= 1
	}
	b[4] = HEC(b[:4])
	return b, nil
}

// DecodeHeader parses 5 header bytes and checks the HEC.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) != HeaderBytes {
		return Header{}, fmt.Errorf("atm header is %d bytes, want %d", len(b), HeaderBytes)
	}
	if hec := HEC(b[:4]); hec != b[4] {
		return Header{}, fmt.Errorf("atm header HEC %#02x, want %#02x", b[4], hec)
	}
	return Header{
		GFC: b[0] >> 4,
		VPI: b[0]<<4 | b[1]>>4,
		VCI: uint16(b[1]&0xf)<<12 | uint16(b[2])<<4 | uint16(b[3]>>4),
		PT:  b[3] >> 1 & 7,
		CLP: b[3]&1 == 1,
	}, nil
}

// HEC returns the header error control byte of the first four header
// bytes: the CRC-8 with generator x^8+x^2+x+1, XORed with 0x55 (ITU-T
// I.432). The idle cell header 00 00 00 01 has HEC 0x52.
func HEC(b []byte) byte {
	var crc byte
	for _, v := range b {
		crc ^= v
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x07
			} else {
				crc <<= 1
			}
		}
	}
	return crc ^ 0x55
}

// NewCell returns a cell as the one flit that carries it: Head and Tail
// set, Size 53, Route the encoded header, Data the payload padded with
// zeros to 48 bytes, Packet the cell id (used in traces), in a fresh
// PacketInfo of its own. Src, Dst and Meta are left for the caller.
func NewCell(id uint64, h Header, payload []byte) (link.Flit, error) {
	if len(payload) > PayloadBytes {
		return link.Flit{}, fmt.Errorf("atm cell payload %d bytes is longer than %d", len(payload), PayloadBytes)
	}
	route, err := h.Encode()
	if err != nil {
		return link.Flit{}, err
	}
	data := make([]byte, PayloadBytes)
	copy(data, payload)
	return link.Flit{Head: true, Tail: true, Size: CellBytes, Data: data, Info: &link.PacketInfo{ID: id, Route: route}, Carries: link.HasRoute}, nil
}

// CellHeader decodes the header a cell flit carries in Route.
func CellHeader(f link.Flit) (Header, error) {
	if !f.Head || !f.Tail {
		return Header{}, errors.New("atm cell flit must be both head and tail")
	}
	return DecodeHeader(f.Route())
}
