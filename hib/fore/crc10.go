package fore

// The payload check. The paper names none (issue 15 section 0); assumed:
// the AAL3/4 per-cell CRC-10 of ITU-T I.363 (generator x^10+x^9+x^5+x^4+
// x+1), the era's per-cell payload check, in the last 10 bits of the
// 48-byte payload, made by the board on transmit and checked on receive
// (issue 15 design D3). It detects every single-bit error, the only
// corruption rtl/link injects, so no corrupted payload reaches software.

// crc10Poly is the generator without its x^10 term: x^9+x^5+x^4+x+1.
const crc10Poly = 0x233

// crc10Table[b] is the register after shifting byte b into a zero
// register (MSB first).
var crc10Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 2
		for range 8 {
			if c&0x200 != 0 {
				c = c<<1 ^ crc10Poly
			} else {
				c <<= 1
			}
		}
		t[i] = c & 0x3ff
	}
	return t
}()

// crc10Bits returns the CRC-10 (MSB first, initial 0, no final XOR: the
// remainder of M(x)·x^10 modulo the generator) of the first n bits of b.
func crc10Bits(b []byte, n int) uint16 {
	var c uint16
	i := 0
	for ; (i+1)*8 <= n; i++ {
		c = (c&3)<<8 ^ crc10Table[byte(c>>2)^b[i]]
	}
	for k := range n - i*8 {
		bit := uint16(b[i]>>(7-k)) & 1
		c ^= bit << 9
		if c&0x200 != 0 {
			c = c<<1 ^ crc10Poly
		} else {
			c <<= 1
		}
		c &= 0x3ff
	}
	return c
}

// CRC10 returns the CRC-10 of payload with its last 10 bits (the CRC
// field) taken as zero: the remainder, modulo the generator, of the
// payload's bits read most significant bit first, which is the value the
// CRC field must hold for the whole payload to divide by the generator
// (ITU-T I.363's SAR-PDU CRC, here over a 48-byte payload). A payload
// shorter than two bytes has CRC 0.
func CRC10(payload []byte) uint16 {
	if len(payload) < 2 {
		return 0
	}
	return crc10Bits(payload, len(payload)*8-10)
}

// crcField returns the CRC field of a 48-byte payload (its last 10 bits).
func crcField(p *[48]byte) uint16 { return uint16(p[46]&3)<<8 | uint16(p[47]) }

// crcOK reports whether p's CRC field holds the CRC-10 of the rest.
func crcOK(p *[48]byte) bool { return CRC10(p[:]) == crcField(p) }

// SealPayload clears the 6 bits of byte 46 above the CRC field and writes
// the CRC-10 of p into its last 10 bits, as the board's TX path does;
// bytes 0..45 (PayloadData) are unchanged.
func SealPayload(p *[48]byte) {
	p[46] = 0
	c := CRC10(p[:])
	p[46], p[47] = byte(c>>8), byte(c)
}
