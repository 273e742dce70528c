package mem

import (
	"fmt"
	"slices"
)

const pageBits = 12
const pageSize = 1 << pageBits

// Storage is a sparse byte-addressable memory holding real data. Unwritten
// bytes read as zero. Pages are allocated on first write.
type Storage struct {
	size  uint64
	pages map[uint64]*[pageSize]byte // lookup only; Pages() sorts
	// lastN, lastP: the page found by the last lookup that found one
	// (lastP nil before the first). Consecutive beats of a transfer fall
	// in one page, and pages are never freed, so most lookups need no map
	// access (the map was 2% of a 64-node LCI run, issue 16).
	lastN uint64
	lastP *[pageSize]byte
}

// page returns page number n, nil when it was never written.
func (s *Storage) page(n uint64) *[pageSize]byte {
	if s.lastP != nil && s.lastN == n {
		return s.lastP
	}
	p := s.pages[n]
	if p != nil {
		s.lastN, s.lastP = n, p
	}
	return p
}

// pageForWrite returns page number n, allocating it when it was never
// written.
func (s *Storage) pageForWrite(n uint64) *[pageSize]byte {
	p := s.page(n)
	if p == nil {
		p = new([pageSize]byte)
		s.pages[n] = p
		s.lastN, s.lastP = n, p
	}
	return p
}

// NewStorage returns an empty storage of size bytes.
func NewStorage(size uint64) *Storage {
	return &Storage{size: size, pages: map[uint64]*[pageSize]byte{}}
}

// Size returns the size in bytes.
func (s *Storage) Size() uint64 { return s.size }

// Check returns an error if [addr, addr+n) is not inside the storage.
func (s *Storage) Check(addr uint64, n int) error {
	if n < 0 || addr > s.size || uint64(n) > s.size-addr {
		return fmt.Errorf("access [%#x, %#x) outside memory of %#x bytes", addr, addr+uint64(max(n, 0)), s.size)
	}
	return nil
}

// Read copies len(buf) bytes at addr into buf.
func (s *Storage) Read(addr uint64, buf []byte) error {
	if err := s.Check(addr, len(buf)); err != nil {
		return err
	}
	for done := 0; done < len(buf); {
		a := addr + uint64(done)
		off := int(a & (pageSize - 1))
		n := min(pageSize-off, len(buf)-done)
		if p := s.page(a >> pageBits); p != nil {
			copy(buf[done:done+n], p[off:off+n])
		} else {
			clear(buf[done : done+n])
		}
		done += n
	}
	return nil
}

// Write copies data to addr.
func (s *Storage) Write(addr uint64, data []byte) error {
	if err := s.Check(addr, len(data)); err != nil {
		return err
	}
	for done := 0; done < len(data); {
		a := addr + uint64(done)
		off := int(a & (pageSize - 1))
		n := min(pageSize-off, len(data)-done)
		p := s.pageForWrite(a >> pageBits)
		copy(p[off:off+n], data[done:done+n])
		done += n
	}
	return nil
}

// Bytes returns a copy of n bytes at addr.
func (s *Storage) Bytes(addr uint64, n int) ([]byte, error) {
	buf := make([]byte, n)
	return buf, s.Read(addr, buf)
}

// Pages returns the numbers of the allocated 4 KiB pages in ascending order.
func (s *Storage) Pages() []uint64 {
	out := make([]uint64, 0, len(s.pages))
	for p := range s.pages {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
