package mcadapter

import (
	"errors"
	"fmt"
	"math/bits"
)

// Header is the header of one Memory Channel packet: the part of a remote
// write that travels ahead of its data from the sending adapter's
// packetiser, through the hub, to every receiving adapter (issue 13 design
// section 1.1: «header: gaddr,len,src,seq,loop»). A write to a transmit
// region «is collected by the source MC adapter, forwarded to destination MC
// adapters through a hub» (cashmere-2l-memory-channel.txt section 2.1,
// MC-P4); the receivers match it by its global address alone (section 2.1:
// regions are connected by the «same global identifier»).
//
// A packet lies in one page: mappings are per page (MC-P6), so the
// packetiser cuts a burst at page ends (TxPageTable.SplitAtPages) and a
// receiver looks up one receive entry per packet (RxPageTable.Lookup).
type Header struct {
	// Addr is the global MC address of the first data byte:
	// GlobalPage x PageBytes + offset (TxPageTable.Translate).
	Addr uint64
	// Len is the number of data bytes, 1..PageBytes, all in Addr's page.
	Len int
	// Src is the source adapter (node number, 0..MaxAdapters-1).
	Src int
	// Seq is the source adapter's sequence number of its packets (1, 2,
	// ...), so a receiver and a checker can name a packet by (Src, Seq).
	Seq uint64
	// Loopback says the hub also delivers the packet to its source: the
	// transmit entry's loop-back flag (MC-P8: «only if loop-back through the
	// hub has been enabled for the region», section 2.1).
	Loopback bool
}

// MaxAdapters bounds Header.Src. assumed: 256, an 8-bit source field.
// The paper's hub has 8 ports (MC-P12, «a cluster of eight 4-processor
// AlphaServer nodes»); the field is wider so larger test clusters fit, and
// narrow enough that a corrupted source number is caught.
const MaxAdapters = 256

// ErrBadHeader is wrapped by Header.Validate for every refused header.
var ErrBadHeader = errors.New("bad mc packet header")

// Page returns the global page of the header's address for pages of
// pageBytes bytes (a power of two).
func (h Header) Page(pageBytes int) uint64 { return h.Addr / uint64(pageBytes) }

// Offset returns the offset of the header's address in its page.
func (h Header) Offset(pageBytes int) int { return int(h.Addr % uint64(pageBytes)) }

// String formats the header for messages and traces.
func (h Header) String() string {
	return fmt.Sprintf("mc packet src %d seq %d addr %#x len %d loopback %t", h.Src, h.Seq, h.Addr, h.Len, h.Loopback)
}

// Validate checks the header against pages of pageBytes bytes and globalPages
// pages of global space: a length of at least 1 and at most one page, a
// packet that does not cross its page's end (MC-P6: mappings are per page),
// an address inside the global space (MC-P7, MC-P20: 128 MB) and a source
// in 0..MaxAdapters-1. The error names the first bad field and wraps
// ErrBadHeader. A page size that is not a power of two in
// MinPageBytes..MaxPageBytes, or globalPages outside 1..MaxTxPages, is
// refused too (a caller's configuration error).
func (h Header) Validate(pageBytes, globalPages int) error {
	switch {
	case pageBytes < MinPageBytes || pageBytes > MaxPageBytes || bits.OnesCount(uint(pageBytes)) != 1:
		return fmt.Errorf("%v: page bytes %d must be a power of two in %d..%d: %w", h, pageBytes, MinPageBytes, MaxPageBytes, ErrBadHeader)
	case globalPages < 1 || globalPages > MaxTxPages:
		return fmt.Errorf("%v: global pages %d must be in 1..%d: %w", h, globalPages, MaxTxPages, ErrBadHeader)
	case h.Len < 1:
		return fmt.Errorf("%v: length %d must be at least 1: %w", h, h.Len, ErrBadHeader)
	case h.Len > pageBytes:
		return fmt.Errorf("%v: length %d exceeds the %d-byte page: %w", h, h.Len, pageBytes, ErrBadHeader)
	case h.Page(pageBytes) >= uint64(globalPages):
		return fmt.Errorf("%v: global page %d is outside the %d-page space: %w", h, h.Page(pageBytes), globalPages, ErrBadHeader)
	case h.Offset(pageBytes)+h.Len > pageBytes:
		return fmt.Errorf("%v: %d bytes at offset %d cross the end of page %d: %w", h, h.Len, h.Offset(pageBytes), h.Page(pageBytes), ErrBadHeader)
	case h.Src < 0 || h.Src >= MaxAdapters:
		return fmt.Errorf("%v: source adapter %d must be in 0..%d: %w", h, h.Src, MaxAdapters-1, ErrBadHeader)
	}
	return nil
}
