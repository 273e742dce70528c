package mchub

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/link"
)

// PageSize is the Memory Channel's mapping granularity in bytes: «MC has
// page-level connection granularity, which is 8 Kbytes for our Alpha
// cluster.» (MC-P6)
const PageSize = 8192

// Write is one remote write as it travels through the Memory Channel: the
// Meta of its packet's head flit.
type Write struct {
	// Src is the source adapter (node number).
	Src int
	// Addr is the MC address: page*PageSize + offset.
	Addr uint64
	// Len is the number of bytes written.
	Len int
	// Seq is the source adapter's sequence number for its writes.
	Seq uint64
	// Order is the hub's global sequence number (1, 2, ...), set on the
	// copy of the Write the hub forwards; 0 on the way to the hub.
	Order uint64
	// Loopback is the header bit asking the hub to deliver the write to
	// its source too: «only if loop-back through the hub has been enabled
	// for the region» (MC-P8, section 2.1).
	Loopback bool
}

// Page returns the MC page the write falls in.
func (w *Write) Page() uint64 { return w.Addr / PageSize }

// Offset returns the write's offset in its page.
func (w *Write) Offset() int { return int(w.Addr % PageSize) }

// String formats the write for messages.
func (w *Write) String() string {
	return fmt.Sprintf("write src %d seq %d page %d offset %d len %d order %d", w.Src, w.Seq, w.Page(), w.Offset(), w.Len, w.Order)
}

// Validate checks that the write has data and stays in one page (pages are
// mapped independently, so a write cannot span two).
func (w *Write) Validate() error {
	switch {
	case w.Len < 1:
		return fmt.Errorf("mc write length %d must be at least 1", w.Len)
	case w.Offset()+w.Len > PageSize:
		return fmt.Errorf("mc write of %d bytes at offset %d of page %d crosses the page end", w.Len, w.Offset(), w.Page())
	}
	return nil
}

// Format is how writes travel as packets of flits on one link VC (0): the
// head flit carries the header and the first FlitBytes of data, every
// other flit up to FlitBytes of data.
type Format struct {
	// FlitBytes is the data each flit carries.
	FlitBytes int
	// HeaderBytes is the wire size of the packet header (address and
	// command), sent with the head flit.
	HeaderBytes int
}

// Validate checks the format.
func (f Format) Validate() error {
	switch {
	case f.FlitBytes < 1:
		return fmt.Errorf("mc flit size %d bytes must be at least 1", f.FlitBytes)
	case f.HeaderBytes < 0:
		return fmt.Errorf("mc header size %d bytes must not be negative", f.HeaderBytes)
	case f.FlitBytes+f.HeaderBytes > link.MaxFlitBytes:
		return fmt.Errorf("mc flit of %d + %d header bytes is more than %d", f.FlitBytes, f.HeaderBytes, link.MaxFlitBytes)
	}
	return nil
}

// Flits returns the number of flits of a write of n bytes.
func (f Format) Flits(n int) int { return max((n+f.FlitBytes-1)/f.FlitBytes, 1) }

// Packet returns the flits of write w carrying data, with packet id id
// (unique per source): VC 0, Src w.Src, Dst -1 (the hub decides), Meta w
// on the head flit.
func (f Format) Packet(w *Write, data []byte, id uint64) ([]link.Flit, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errors.New("mc packet: no write")
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if len(data) != w.Len {
		return nil, fmt.Errorf("mc packet: %d bytes of data for a write of length %d", len(data), w.Len)
	}
	n := f.Flits(w.Len)
	fl := make([]link.Flit, n)
	info := &link.PacketInfo{ID: id, Src: w.Src, Dst: -1, Meta: w}
	for i := range fl {
		d := data[i*f.FlitBytes : min((i+1)*f.FlitBytes, len(data))]
		size := len(d)
		if i == 0 {
			size += f.HeaderBytes
		}
		fl[i] = link.Flit{Info: info, Seq: int32(i), Head: i == 0, Tail: i == n-1, Data: d, Size: int32(size)}
	}
	fl[0].Carries = link.HasMeta // the write rides on the head
	return fl, nil
}
