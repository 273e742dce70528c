package vmmc

import (
	"encoding/binary"

	"github.com/nisim/nisim/hib/shrimp"
)

// The NI's registers as the kernel and the library use them
// (hib/shrimp/csr.go's layout, hib/shrimp/udma.go's STORE word).

// reg is the CSR-window offset of register r of an NI configured c.
func reg(c shrimp.Config, r uint64) uint64 { return c.CSRReg(r) }

// csrBytes is the size of the NI's CSR window.
func csrBytes(c shrimp.Config) int { return int(shrimp.CSRBytes(c)) }

// udmaCount is a UDMA STORE's data word: the count and the notify bit.
func udmaCount(n int, notify bool) uint32 {
	v := uint32(n) & shrimp.UDMACountMask
	if notify {
		v |= shrimp.UDMANotify
	}
	return v
}

// causes are the pending interrupt causes in a RegStatus word (bits
// 0..2).
func causes(status uint32) shrimp.IRQCause {
	return shrimp.IRQCause(status) & (shrimp.IRQThreshold | shrimp.IRQNotify | shrimp.IRQError)
}

// decodeNotification decodes the 8 bytes of a RegNotify pop: +0 the page,
// +4 the valid bit and the source node; false when the queue was empty.
func decodeNotification(rec []byte) (shrimp.Notification, bool) {
	if len(rec) < 8 {
		return shrimp.Notification{}, false
	}
	hi := binary.LittleEndian.Uint32(rec[4:])
	if hi&shrimp.CSRNotifyValid == 0 {
		return shrimp.Notification{}, false
	}
	return shrimp.Notification{Page: int(binary.LittleEndian.Uint32(rec)), Src: int(hi & 0xff)}, true
}
