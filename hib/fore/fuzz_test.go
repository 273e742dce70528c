package fore_test

import (
	"testing"

	"github.com/nisim/nisim/hib/fore"
)

// FuzzSealPayload: for any payload, SealPayload leaves bytes 0..45
// alone, clears the 6 pad bits, writes CRC10 of the rest into the CRC
// field (the definition, crc10Slow, agrees), the sealed payload checks
// (its 384 bits divide by the generator), and flipping any one bit makes
// it fail.
func FuzzSealPayload(f *testing.F) {
	f.Add(make([]byte, 48), uint16(0))
	f.Add([]byte("123456789 remote memory access over ATM cells"), uint16(383))
	f.Fuzz(func(t *testing.T, in []byte, flip uint16) {
		var p [48]byte
		copy(p[:], in)
		orig := p
		fore.SealPayload(&p)
		if string(p[:fore.PayloadData]) != string(orig[:fore.PayloadData]) {
			t.Fatalf("SealPayload changed the data bytes")
		}
		if p[46]&0xfc != 0 {
			t.Fatalf("pad bits %#x not cleared", p[46]&0xfc)
		}
		crc := fore.CRC10(p[:])
		if slow := crc10Slow(p[:], 48*8-10); crc != slow {
			t.Fatalf("CRC10 %#x, the definition gives %#x", crc, slow)
		}
		if got := uint16(p[46]&3)<<8 | uint16(p[47]); got != crc {
			t.Fatalf("CRC field %#x, want %#x", got, crc)
		}
		if !fore.CRCOK(&p) || crc10Slow(p[:], 48*8) != 0 {
			t.Fatalf("sealed payload does not check")
		}
		bit := int(flip) % (48 * 8)
		q := p
		q[bit/8] ^= 0x80 >> (bit % 8)
		if fore.CRCOK(&q) {
			t.Fatalf("bit %d flipped, still checks", bit)
		}
		// Sealing is idempotent.
		r := p
		fore.SealPayload(&r)
		if r != p {
			t.Fatalf("sealing twice changed the payload")
		}
	})
}
