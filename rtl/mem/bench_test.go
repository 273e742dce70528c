package mem_test

import (
	"testing"

	"github.com/nisim/nisim/rtl/mem"
)

// BenchmarkStorageBeats writes and then reads a 2 KB packet 8 bytes at a
// time, as a memory serves a DMA's beats, over 64 KB of storage (16
// pages): the cost of one beat's storage access.
func BenchmarkStorageBeats(b *testing.B) {
	const (
		size   = 64 << 10
		packet = 2048
		beat   = 8
	)
	s := mem.NewStorage(size)
	buf := make([]byte, beat)
	addr := uint64(0)
	for b.Loop() {
		for off := uint64(0); off < packet; off += beat {
			_ = s.Write(addr+off, buf)
		}
		for off := uint64(0); off < packet; off += beat {
			_ = s.Read(addr+off, buf)
		}
		addr = (addr + packet) % size
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/(2*packet/beat), "ns/beat")
}

// BenchmarkWriteBeats splits a 64-byte burst at an unaligned address into
// the beats of an 8-byte channel (9 beats), as a DMA engine does for each
// burst it writes.
func BenchmarkWriteBeats(b *testing.B) {
	req := &mem.Req{Op: mem.Write, Addr: 0x1004, Len: 64}
	data := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		if len(mem.WriteBeats(req, data, 8)) != 9 {
			b.Fatal("want 9 beats")
		}
	}
}
