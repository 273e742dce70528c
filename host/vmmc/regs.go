package vmmc

import "github.com/nisim/nisim/hib/shrimp"

// The NI's register offsets and word layouts the kernel and the library
// use. PENDING: hib/shrimp/csr.go (E2) exports the real ones; until then
// these are placeholders and the kernel's register accesses are not
// meaningful (the freeze commit compiles the signatures only).
const (
	csrBytes     = 128 << 10
	regInval     = 0x18000
	regCAMQuery  = 0x18004
	regCAMResult = 0x18008
	regIRQCause  = 0x1800c
	regOccupancy = 0x18010
	regIRQAck    = 0x18014
	regNotify    = 0x18018
)

// udmaCount is a UDMA STORE's data word: the count and the notify bit
// (hib/shrimp/udma.go's layout).
func udmaCount(n int, notify bool) uint32 {
	v := uint32(n) & (1<<24 - 1)
	if notify {
		v |= 1 << 31
	}
	return v
}

// decodeNotification decodes a notification record read from the NI;
// false when the queue was empty.
func decodeNotification(v uint32) (shrimp.Notification, bool) { return shrimp.Notification{}, false }
