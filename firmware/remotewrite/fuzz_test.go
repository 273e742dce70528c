package remotewrite_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware/remotewrite"
	"github.com/nisim/nisim/host/cpu"
	hostlci "github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// FuzzDesc checks the descriptor codec: any descriptor encodes to
// DescBytes bytes that decode to it, and any DescBytes bytes decode to a
// descriptor that encodes back to them with the unused bytes [21:28]
// cleared.
func FuzzDesc(f *testing.F) {
	f.Add(uint64(remotewrite.SrcBase), uint64(remotewrite.DstBase), uint32(100), uint8(1), uint32(1), make([]byte, remotewrite.DescBytes))
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

// FuzzPost has node 0's host post one descriptor with any fields to the
// firmware of a two-node cluster, as Node.Post does (the descriptor store
// into the card's ring once the cards have booted). The firmware must take
// any descriptor without panicking and the run must end on its own: a
// descriptor for no other node of the cluster, of no bytes or of more than
// max_len is reported (rw.desc) and nothing is written; any other whose
// source and destination lie in host memory clear of the completion
// counter delivers the source bytes intact and sets node 1's counter to 1
// with no checker complaint.
func FuzzPost(f *testing.F) {
	f.Add(uint8(1), uint64(remotewrite.SrcBase), uint64(remotewrite.DstBase), uint32(100))
	f.Add(uint8(7), uint64(remotewrite.SrcBase), uint64(remotewrite.DstBase), uint32(8))
	f.Add(uint8(0), uint64(remotewrite.SrcBase), uint64(remotewrite.DstBase), uint32(8))
	f.Add(uint8(1), uint64(remotewrite.SrcBase), uint64(remotewrite.DstBase), uint32(0))
	f.Add(uint8(1), uint64(remotewrite.SrcBase), uint64(remotewrite.DstBase), uint32(4097))
	f.Add(uint8(1), uint64(hostlci.HostMemBytes-3), uint64(remotewrite.DstBase), uint32(4))
	f.Add(uint8(1), uint64(remotewrite.SrcBase), uint64(1<<40), uint32(16))
	f.Add(uint8(1), uint64(remotewrite.SrcBase), uint64(0xffc), uint32(8))
	f.Fuzz(func(t *testing.T, node uint8, src, dst uint64, n uint32) {
		e := env.New(env.Options{Seed: 1, TimeLimit: 10 * clock.Millisecond})
		c := remotewrite.DefaultClusterConfig()
		cl, err := remotewrite.Build(e, c)
		if err != nil {
			t.Fatal(err)
		}
		s, d := cl.Nodes[0], cl.Nodes[1]
		inMem := func(a uint64) bool { return a <= hostlci.HostMemBytes && uint64(n) <= hostlci.HostMemBytes-a }
		data := make([]byte, min(int(n), 1<<13))
		for i := range data {
			data[i] = byte(i*7 + 1)
		}
		if inMem(src) && n >= 1 && int(n) <= len(data) {
			if err := s.Mem.Storage().Write(src, data[:n]); err != nil {
				t.Fatal(err)
			}
		}
		booted := c.Platform.NI.Clock.TimeOf(clock.Cycle(c.Firmware.Costs.Boot))
		post := s.Post(int(node), src, dst, int(n))
		// Post takes the length as an int; the descriptor carries 32 bits.
		binary.LittleEndian.PutUint32(post[0].Data[16:], n)
		s.CPU.Run(append([]cpu.Op{{Kind: cpu.Call, Fn: func(now clock.Time) bool { return now >= booted }}}, post...)...)
		res, runErr := e.Run()
		if res.Stopped {
			t.Fatalf("descriptor to node %d, %d bytes %#x -> %#x: still running at %v (%v)", node, n, src, dst, res.End, runErr)
		}
		rejected := node != 1 || n < 1 || int(n) > c.Firmware.MaxLen
		counter := c.Firmware.Counter
		switch {
		case rejected:
			if runErr == nil || !strings.Contains(runErr.Error(), "[rw.desc] bad descriptor") {
				t.Fatalf("descriptor to node %d of %d bytes: not reported (%v)", node, n, runErr)
			}
			if v := d.Counter(); v != 0 {
				t.Fatalf("a rejected descriptor set node 1's counter to %d", v)
			}
		case inMem(src) && inMem(dst) && (dst+uint64(n) <= counter || dst >= counter+4):
			if runErr != nil {
				t.Fatalf("%d bytes %#x -> %#x: %v", n, src, dst, runErr)
			}
			got, _ := d.Mem.Storage().Bytes(dst, int(n))
			if !bytes.Equal(got, data[:n]) {
				t.Fatalf("%d bytes %#x -> %#x did not arrive intact", n, src, dst)
			}
			if v := d.Counter(); v != 1 {
				t.Fatalf("%d bytes %#x -> %#x: node 1's counter is %d", n, src, dst, v)
			}
		}
	})
}
