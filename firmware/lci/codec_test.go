package lci_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Records", func() {
	It("encode a header at the documented offsets and decode it back", func() {
		h := lci.Header{Type: lci.TypeMcast, Src: 0x11, Len: 0x2233, Credits: 0x4455, Root: 0x66, Seq: 0x8899aabb, Arg: 0xccddeeff}
		b := h.Encode()
		Expect(b).To(Equal([]byte{0x02, 0x11, 0x33, 0x22, 0x55, 0x44, 0x66, 0x00, 0xbb, 0xaa, 0x99, 0x88, 0xff, 0xee, 0xdd, 0xcc}))
		Expect(cmp.Diff(h, lci.DecodeHeader(b))).To(BeEmpty())
	})

	It("encode a send descriptor with its sequence, the valid mark, last", func() {
		d := lci.Desc{Seq: 0x01020304, Type: lci.TypeMcast, Dst: 7, Len: 0x0506, Buf: 0x0708090a, Tag: 0x0b0c0d0e, Flags: lci.DescFwd}
		b := d.Encode()
		Expect(b).To(HaveLen(lci.DescBytes))
		Expect(b[0:8]).To(Equal(make([]byte, 8)), "no host address: it is the send buffer's address and size field")
		Expect(b[8:20]).To(Equal([]byte{0x02, 0x07, 0x06, 0x05, 0x0a, 0x09, 0x08, 0x07, 0x0e, 0x0d, 0x0c, 0x0b}))
		Expect(b[20:28]).To(Equal([]byte{0x01, 0, 0, 0, 0, 0, 0, 0}))
		Expect(b[28:32]).To(Equal([]byte{0x04, 0x03, 0x02, 0x01}))
		Expect(cmp.Diff(d, lci.DecodeDesc(b))).To(BeEmpty())
	})

	It("encode a host forward's root, root sequence, children and index (DescHostFwd)", func() {
		d := lci.Desc{Seq: 9, Type: lci.TypeMcast, Dst: 5, Len: 16, Buf: 3, Tag: 0x44, Flags: lci.DescHostFwd,
			Root: 2, RootSeq: 0x0a0b0c0d, Kids: 2, Index: 1}
		b := d.Encode()
		Expect(b[0:8]).To(Equal([]byte{0x0d, 0x0c, 0x0b, 0x0a, 0, 0, 0, 0}))
		Expect(b[20:28]).To(Equal([]byte{lci.DescHostFwd, 2, 2, 1, 0, 0, 0, 0}))
		Expect(cmp.Diff(d, lci.DecodeDesc(b))).To(BeEmpty())
	})

	It("encode an I-sdma send buffer's address and size field", func() {
		f := lci.Fetch{Addr: 0x01020304, Len: 0x05060708}
		b := f.Encode()
		Expect(b).To(Equal([]byte{0x04, 0x03, 0x02, 0x01, 0x08, 0x07, 0x06, 0x05}))
		Expect(cmp.Diff(f, lci.DecodeFetch(b))).To(BeEmpty())
	})

	It("encode a Free record with its sequence last", func() {
		f := lci.Free{Seq: 0xa0b0c0d0, Addr: 0x0102030405060708}
		b := f.Encode()
		Expect(b).To(Equal([]byte{0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0, 0, 0, 0, 0xd0, 0xc0, 0xb0, 0xa0}))
		Expect(cmp.Diff(f, lci.DecodeFree(b))).To(BeEmpty())
	})

	DescribeTable("place a host slot's header 16 bytes into a 32-byte block, so that 16 bytes of data share it",
		func(mtu, hdr, size int) {
			Expect(lci.SlotHeaderAt(mtu)).To(Equal(hdr))
			Expect(hdr % lci.SlotLineBytes).To(Equal(lci.SlotInlineBytes))
			Expect(hdr).To(BeNumerically(">=", mtu), "an MTU of data fits before the header")
			Expect(lci.SlotBytes(mtu)).To(Equal(size))
			Expect(size % 64).To(BeZero())
		},
		// roundup(2048, 32) + 16 = 2064; 2064 + 16 = 2080 -> 2112.
		Entry("the 2 KB MTU", 2048, 2064, 2112),
		// 64 + 16 = 80; 96 -> 128.
		Entry("the firmware specs' MTU", 64, 80, 128),
		// roundup(100, 32) = 128, + 16 = 144; 160 -> 192.
		Entry("an MTU that is not a multiple of 32", 100, 144, 192),
		// 1024 + 16 = 1040, 1056 -> 1088; 4096 + 16 = 4112, 4128 -> 4160.
		Entry("1 KB", 1024, 1040, 1088),
		Entry("4 KB", 4096, 4112, 4160),
	)

	It("encode a slot header with the full flag last", func() {
		h := lci.SlotHeader{Type: lci.TypeCompl, Src: 3, Len: 0x0102, Tag: 0x03040506, Arg: 0x0708090a, Flag: 0x0b0c0d0e}
		b := h.Encode()
		Expect(b).To(Equal([]byte{0x06, 0x03, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0a, 0x09, 0x08, 0x07, 0x0e, 0x0d, 0x0c, 0x0b}))
		Expect(cmp.Diff(h, lci.DecodeSlotHeader(b))).To(BeEmpty())
	})
})

// FuzzDesc checks that a descriptor survives encoding, and that decoding
// any 32 bytes and encoding again gives them back: every byte is used
// (DescHostFwd's fields at [0:4] and [21:24], I-hrx's at [4:8] and
// [24:28]). The host forward's and I-hrx's fields are drawn from the
// other arguments, so that the corpus keeps its shape.
func FuzzDesc(f *testing.F) {
	f.Add(uint32(1), uint8(lci.TypeData), uint8(2), uint16(20), uint32(3), uint32(0xabc), uint8(0), make([]byte, lci.DescBytes))
	f.Add(^uint32(0), ^uint8(0), ^uint8(0), ^uint16(0), ^uint32(0), ^uint32(0), ^uint8(0), bytes.Repeat([]byte{0xff}, lci.DescBytes))
	f.Fuzz(func(t *testing.T, seq uint32, typ, dst uint8, n uint16, buf, tag uint32, flags uint8, raw []byte) {
		d := lci.Desc{Seq: seq, Type: typ, Dst: dst, Len: n, Buf: buf, Tag: tag, Flags: flags,
			Root: dst ^ typ, RootSeq: tag ^ seq, Kids: flags + 1, Index: typ ^ flags,
			HSeq: seq ^ buf, HCredits: n ^ 0x5a5a, HRoot: dst + 1, HFlags: flags ^ 1}
		b := d.Encode()
		if len(b) != lci.DescBytes {
			t.Fatalf("%d bytes", len(b))
		}
		if diff := cmp.Diff(d, lci.DecodeDesc(b)); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
		if len(raw) < lci.DescBytes {
			return
		}
		raw = raw[:lci.DescBytes]
		want := bytes.Clone(raw)
		if got := lci.DecodeDesc(raw).Encode(); !bytes.Equal(got, want) {
			t.Fatalf("decode-encode of %x gave %x", raw, got)
		}
	})
}

// FuzzRecords does the same for the 16-byte records: a header (all used:
// byte 7 is the flags), a Free record ([8:12] unused) and a slot header (all used).
func FuzzRecords(f *testing.F) {
	f.Add(make([]byte, lci.HeaderBytes))
	f.Add(bytes.Repeat([]byte{0xa5}, lci.HeaderBytes))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) < lci.HeaderBytes {
			return
		}
		raw = raw[:lci.HeaderBytes]
		if got := lci.DecodeHeader(raw).Encode(); !bytes.Equal(got, raw) {
			t.Fatalf("header %x gave %x", raw, got)
		}
		want := bytes.Clone(raw)
		clear(want[8:12])
		if got := lci.DecodeFree(raw).Encode(); !bytes.Equal(got, want) {
			t.Fatalf("free record %x gave %x", raw, got)
		}
		if got := lci.DecodeSlotHeader(raw).Encode(); !bytes.Equal(got, raw) {
			t.Fatalf("slot header %x gave %x", raw, got)
		}
	})
}
