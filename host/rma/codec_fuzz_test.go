package rma_test

import (
	"testing"

	"github.com/nisim/nisim/host/rma"
)

// FuzzDecode: Decode never panics, and whatever it accepts Encode packs
// back to the same first 46 bytes (bytes 46-47 are the board's CRC-10).
func FuzzDecode(f *testing.F) {
	f.Add(make([]byte, 48))
	f.Add([]byte{0x32, 7, 2, 1, 0xEF, 0xBE, 0x44, 0x33, 0x22, 0x11})
	f.Add([]byte{0x81, 3, 9, 0, 5, 0, 1, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		var b [48]byte
		copy(b[:], in)
		p, err := rma.Decode(b)
		if err != nil {
			return
		}
		out, err := p.Encode()
		if err != nil {
			t.Fatalf("Decode accepted %x but Encode refused %+v: %v", b, p, err)
		}
		if string(out[:46]) != string(b[:46]) {
			t.Fatalf("round trip: in %x out %x", b[:46], out[:46])
		}
	})
}
