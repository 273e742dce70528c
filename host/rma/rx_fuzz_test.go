package rma_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/vtest"
)

// FuzzForgedCell: any cell a node receives (any VCI, any 46 payload
// bytes, sealed by the board's CRC-10 so it reaches the kernel) is either
// accepted or refused with a reason; the kernel never panics, never
// reports a checker error and never writes node memory outside its
// exported segment and its own kernel memory.
func FuzzForgedCell(f *testing.F) {
	f.Add(uint16(96), []byte{0x2a, 0, 0, 0, 0, 0, 1, 2, 3, 4})                   // WRITE of 10 words from node 1
	f.Add(uint16(96), []byte{0x41, 0, 0, 0, 5, 0})                               // READ request
	f.Add(uint16(96), []byte{0x81, 0, 3, 0, 9, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}) // CAS request
	f.Add(uint16(96), []byte{0x61, 0, 0, 0, 9, 0})                               // a READ reply nobody asked for
	f.Add(uint16(5), []byte{0x21})                                               // a VCI outside the range
	f.Fuzz(func(t *testing.T, vci uint16, in []byte) {
		RegisterTestingT(t)
		r := buildRig(env.New(env.Options{Seed: 1, TimeLimit: 100 * clock.Millisecond}))
		r.share(rma.RightRead | rma.RightWrite)
		var b [48]byte
		copy(b[:46], in)
		fl := forgedRaw(1, vci, b)
		vtest.AtCycle(r.e, "Forge", cpuClock, 20, func(now clock.Time) { r.nodes[0].board.Inject(now, fl) })
		var writes []uint64
		r.nodes[0].mem.OnWrite(func(_ clock.Time, _ int, addr uint64, n int) {
			writes = append(writes, addr, uint64(n))
		})
		if err := r.run(); err != nil {
			t.Fatalf("vci %d payload %x: %v", vci, b, err)
		}
		for i := 0; i < len(writes); i += 2 {
			a, n := writes[i], writes[i+1]
			inSeg := a >= segBase && a+n <= segBase+4096
			inKernel := a >= kernelBase && a+n <= kernelBase+rma.KernelBytes
			if !inSeg && !inKernel {
				t.Fatalf("vci %d payload %x: a write of %d bytes at %#x", vci, b, n, a)
			}
		}
	})
}
