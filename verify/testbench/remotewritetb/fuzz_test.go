package remotewritetb_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/remotewritetb"
)

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
	f.Add(uint8(1), uint64(remotewritetb.SrcBase), uint64(remotewritetb.DstBase), uint32(100))
	f.Add(uint8(7), uint64(remotewritetb.SrcBase), uint64(remotewritetb.DstBase), uint32(8))
	f.Add(uint8(0), uint64(remotewritetb.SrcBase), uint64(remotewritetb.DstBase), uint32(8))
	f.Add(uint8(1), uint64(remotewritetb.SrcBase), uint64(remotewritetb.DstBase), uint32(0))
	f.Add(uint8(1), uint64(remotewritetb.SrcBase), uint64(remotewritetb.DstBase), uint32(4097))
	f.Add(uint8(1), uint64(remotewritetb.HostMemBytes-3), uint64(remotewritetb.DstBase), uint32(4))
	f.Add(uint8(1), uint64(remotewritetb.SrcBase), uint64(1<<40), uint32(16))
	f.Add(uint8(1), uint64(remotewritetb.SrcBase), uint64(0xffc), uint32(8))
	f.Fuzz(func(t *testing.T, node uint8, src, dst uint64, n uint32) {
		e := env.New(env.Options{Seed: 1, TimeLimit: 10 * clock.Millisecond})
		c := remotewritetb.DefaultClusterConfig()
		cl, err := remotewritetb.Build(e, c)
		if err != nil {
			t.Fatal(err)
		}
		s, d := cl.Nodes[0], cl.Nodes[1]
		inMem := func(a uint64) bool {
			return a <= remotewritetb.HostMemBytes && uint64(n) <= remotewritetb.HostMemBytes-a
		}
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
