package mchub_test

import (
	"bytes"
	"testing"

	"github.com/nisim/nisim/switch/mchub"
)

// FuzzPacket checks how a Memory Channel write becomes a packet of flits,
// for any format, write and data: Packet refuses exactly the bad formats,
// the writes with no data or crossing a page, and data of the wrong length;
// otherwise it gives Flits(len) flits whose data concatenate to the
// write's data, numbered 0.., head on the first and tail on the last only,
// each at most FlitBytes of data, sizes adding up to the data plus one
// header, VC 0, the write's source, the hub's destination -1, the packet
// id, and the write as the head flit's Meta.
func FuzzPacket(f *testing.F) {
	mc := mchub.MC1().Format()
	f.Add(mc.FlitBytes, mc.HeaderBytes, 3, uint64(5*mchub.PageSize+8), []byte("four"), 0, uint64(9))
	f.Add(mc.FlitBytes, mc.HeaderBytes, 0, uint64(mchub.PageSize-64), bytes.Repeat([]byte{7}, 64), 0, uint64(1))
	f.Add(4, 0, 1, uint64(mchub.PageSize-2), []byte("cross"), 0, uint64(2))
	f.Add(0, 4, 1, uint64(0), []byte("x"), 0, uint64(3))
	f.Add(8, -1, 1, uint64(0), []byte("x"), 0, uint64(3))
	f.Add(1, 8, 2, uint64(100), []byte{}, 0, uint64(4))
	f.Add(1<<62, 8, 2, uint64(100), []byte("abc"), 1, uint64(4))
	f.Fuzz(func(t *testing.T, flitBytes, headerBytes, src int, addr uint64, data []byte, lenDelta int, id uint64) {
		format := mchub.Format{FlitBytes: flitBytes, HeaderBytes: headerBytes}
		w := &mchub.Write{Src: src, Addr: addr, Len: len(data) + lenDelta%3, Seq: 1}
		fl, err := format.Packet(w, data, id)
		bad := format.Validate() != nil || w.Validate() != nil || w.Len != len(data)
		if bad != (err != nil) {
			t.Fatalf("Packet(%+v, %v, %d bytes): error %v, want an error: %v", format, w, len(data), err, bad)
		}
		if err != nil {
			return
		}
		if len(fl) != format.Flits(w.Len) {
			t.Fatalf("%d flits, Flits(%d) = %d", len(fl), w.Len, format.Flits(w.Len))
		}
		var got []byte
		size := 0
		for i, x := range fl {
			if int(x.Seq) != i || x.Head != (i == 0) || x.Tail != (i == len(fl)-1) || x.VC != 0 || x.Src() != src || x.Dst() != -1 || x.Packet() != id {
				t.Fatalf("flit %d of %d: %v", i, len(fl), x)
			}
			if len(x.Data) > flitBytes || (i < len(fl)-1 && len(x.Data) != flitBytes) {
				t.Fatalf("flit %d carries %d bytes with %d-byte flits", i, len(x.Data), flitBytes)
			}
			if (i == 0) != (x.Meta() != nil) || (i == 0 && x.Meta().(*mchub.Write) != w) {
				t.Fatalf("flit %d has Meta %v", i, x.Meta())
			}
			got = append(got, x.Data...)
			size += int(x.Size)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("the flits carry %x, the write %x", got, data)
		}
		if size != len(data)+headerBytes {
			t.Fatalf("flit sizes add up to %d, want %d data + %d header", size, len(data), headerBytes)
		}
	})
}
