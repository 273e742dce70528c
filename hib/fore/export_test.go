package fore

// Internals the specs check directly.
var (
	CRC10Bits = crc10Bits
	CRCOK     = crcOK
)
