package atm_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/switch/atm"
)

// FuzzCellHeader checks the ATM cell header codec. Any header whose fields
// fit encodes to 5 bytes that decode to the same header (and one whose GFC
// or PT does not fit is refused); any 5 bytes with a correct HEC decode to
// a header that encodes back to the same bytes, so the codec is a
// bijection on valid headers; flipping any one bit of an encoded header is
// caught by the HEC (a CRC-8 detects every single-bit error); input of any
// other length is refused; and a cell built with NewCell gives its header
// back through CellHeader with the payload zero-padded to 48 bytes.
func FuzzCellHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0x52}, uint8(0), uint8(0), uint16(0), uint8(0), false, uint16(0), []byte("payload"))
	f.Add([]byte{0xf0, 0x01, 0x23, 0x4f, 0x00}, uint8(15), uint8(255), uint16(0xffff), uint8(7), true, uint16(39), []byte(nil))
	f.Add([]byte{1, 2, 3, 4, 5, 6}, uint8(16), uint8(1), uint16(42), uint8(8), false, uint16(7), bytes.Repeat([]byte{0xa5}, 49))
	f.Add([]byte{}, uint8(0), uint8(7), uint16(1000), uint8(2), true, uint16(0), bytes.Repeat([]byte{1}, 48))
	f.Fuzz(func(t *testing.T, raw []byte, gfc, vpi uint8, vci uint16, pt uint8, clp bool, bit uint16, payload []byte) {
		h := atm.Header{GFC: gfc, VPI: vpi, VCI: vci, PT: pt, CLP: clp}
		enc, err := h.Encode()
		if fits := gfc <= 0xf && pt <= 7; fits != (err == nil) {
			t.Fatalf("Encode(%v): error %v, but the fields fit: %v", h, err, fits)
		}
		if err == nil {
			if len(enc) != atm.HeaderBytes {
				t.Fatalf("Encode(%v) = %d bytes", h, len(enc))
			}
			back, err := atm.DecodeHeader(enc)
			if err != nil {
				t.Fatalf("Decode(Encode(%v)) = %v", h, err)
			}
			if d := cmp.Diff(h, back); d != "" {
				t.Fatalf("round trip of %v (-want +got):\n%s", h, d)
			}
			flipped := bytes.Clone(enc)
			flipped[int(bit)%40/8] ^= 1 << (bit % 8)
			if got, err := atm.DecodeHeader(flipped); err == nil {
				t.Fatalf("bit %d of %x flipped (%x) decodes as %v: the HEC missed it", bit%40, enc, flipped, got)
			}
			cell, err := atm.NewCell(7, h, payload)
			if (len(payload) > atm.PayloadBytes) != (err != nil) {
				t.Fatalf("NewCell with %d payload bytes: %v", len(payload), err)
			}
			if err == nil {
				got, err := atm.CellHeader(cell)
				if err != nil || got != h {
					t.Fatalf("CellHeader(NewCell(%v)) = %v, %v", h, got, err)
				}
				want := make([]byte, atm.PayloadBytes)
				copy(want, payload)
				if !bytes.Equal(cell.Data, want) || cell.Size != atm.CellBytes || !cell.Head || !cell.Tail {
					t.Fatalf("NewCell: %v", cell)
				}
			}
		}

		dec, err := atm.DecodeHeader(raw)
		switch {
		case len(raw) != atm.HeaderBytes:
			if err == nil {
				t.Fatalf("Decode of %d bytes %x gave %v", len(raw), raw, dec)
			}
		case raw[4] != atm.HEC(raw[:4]):
			if err == nil {
				t.Fatalf("Decode of %x with a bad HEC gave %v", raw, dec)
			}
		case err != nil:
			t.Fatalf("Decode of %x with a good HEC: %v", raw, err)
		default:
			again, err := dec.Encode()
			if err != nil || !bytes.Equal(again, raw) {
				t.Fatalf("Decode(%x) = %v encodes as %x, %v", raw, dec, again, err)
			}
		}
	})
}
