package remotewrite_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware/remotewrite"
)

// FuzzDesc checks the descriptor codec: any descriptor encodes to
// DescBytes bytes that decode to it, and any DescBytes bytes decode to a
// descriptor that encodes back to them with the unused bytes [21:28]
// cleared.
func FuzzDesc(f *testing.F) {
	f.Add(uint64(0x0010_0000), uint64(0x0020_0000), uint32(100), uint8(1), uint32(1), make([]byte, remotewrite.DescBytes))
	f.Add(^uint64(0), ^uint64(0), ^uint32(0), ^uint8(0), ^uint32(0), bytes.Repeat([]byte{0xff}, remotewrite.DescBytes+3))
	f.Fuzz(func(t *testing.T, src, dst uint64, n uint32, node uint8, seq uint32, raw []byte) {
		d := remotewrite.Desc{Src: src, Dst: dst, Len: n, Node: node, Seq: seq}
		b := d.Encode()
		if len(b) != remotewrite.DescBytes {
			t.Fatalf("%d bytes", len(b))
		}
		if diff := cmp.Diff(d, remotewrite.DecodeDesc(b)); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
		if len(raw) < remotewrite.DescBytes {
			return
		}
		raw = raw[:remotewrite.DescBytes]
		want := bytes.Clone(raw)
		clear(want[21:28])
		if got := remotewrite.DecodeDesc(raw).Encode(); !bytes.Equal(got, want) {
			t.Fatalf("decode-encode of %x gave %x", raw, got)
		}
	})
}
