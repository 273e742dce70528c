package fore_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/fore"
)

// crc10Slow is the definition, one bit at a time: the remainder of the
// polynomial of bits (MSB first) times x^10 modulo x^10+x^9+x^5+x^4+x+1,
// by long division on a bit slice.
func crc10Slow(b []byte, n int) uint16 {
	bits := make([]byte, n+10)
	for i := range n {
		bits[i] = b[i/8] >> (7 - i%8) & 1
	}
	gen := []byte{1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1} // x^10 .. x^0
	for i := range n {
		if bits[i] == 1 {
			for j, g := range gen {
				bits[i+j] ^= g
			}
		}
	}
	var c uint16
	for _, v := range bits[n:] {
		c = c<<1 | uint16(v)
	}
	return c
}

var _ = Describe("CRC10", func() {
	It("matches the CRC-10/ATM catalogue check value", func() {
		// CRC-10/ATM (width 10, poly 0x233, init 0, no reflection, xorout
		// 0): check("123456789") = 0x199.
		msg := []byte("123456789")
		Expect(fore.CRC10Bits(msg, 72)).To(Equal(uint16(0x199)))
		Expect(crc10Slow(msg, 72)).To(Equal(uint16(0x199)))
	})

	It("is the remainder of the payload with a zero CRC field", func() {
		var p [48]byte
		Expect(fore.CRC10(p[:])).To(Equal(uint16(0)))
		// x^10 mod G = x^9+x^5+x^4+x+1 = 0x233: a single 1 bit just
		// above the CRC field (bit 7-5 = bit 2 of byte 46, 10 bits from
		// the end) leaves the generator's low terms.
		p[46] = 0x04
		Expect(fore.CRC10(p[:])).To(Equal(uint16(0x233)))
		p = [48]byte{}
		for i := range fore.PayloadData {
			p[i] = byte(i*37 + 11)
		}
		Expect(fore.CRC10(p[:])).To(Equal(crc10Slow(p[:], 48*8-10)))
	})

	It("bits inside the CRC field do not change it", func() {
		var p [48]byte
		p[0] = 0x80
		c := fore.CRC10(p[:])
		p[46] |= 3
		p[47] = 0xff
		Expect(fore.CRC10(p[:])).To(Equal(c))
	})

	It("seals a payload so that it checks, and any single-bit error fails", func() {
		var p [48]byte
		for i := range fore.PayloadData {
			p[i] = byte(255 - i)
		}
		p[46], p[47] = 0xff, 0xff // garbage in the CRC bytes: Seal overwrites
		fore.SealPayload(&p)
		Expect(p[46] & 0xfc).To(Equal(byte(0)))
		Expect(fore.CRCOK(&p)).To(BeTrue())
		Expect(crc10Slow(p[:], 48*8)).To(Equal(uint16(0)), "the whole sealed payload divides by the generator")
		for bit := range 48 * 8 {
			q := p
			q[bit/8] ^= 0x80 >> (bit % 8)
			Expect(fore.CRCOK(&q)).To(BeFalse(), "bit %d flipped", bit)
		}
	})

	It("gives 0 for a payload shorter than the field", func() {
		Expect(fore.CRC10(nil)).To(Equal(uint16(0)))
		Expect(fore.CRC10([]byte{0xff})).To(Equal(uint16(0)))
	})
})
