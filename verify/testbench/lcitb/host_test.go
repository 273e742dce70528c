package lcitb_test

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The library's receive path on the assembled host: the NI's DMA into the
// slot crosses the bridge onto the memory bus, and the receiver's loads of
// the slot go through its cache.
var _ = Describe("an LCI host on the platform", func() {
	It("misses on the slot lines the NI's DMA wrote, fills them over the memory bus, and sends PIO through the bridge", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
		cl := build(e, nil)
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		h0.CPU.Run(append([]cpu.Op{{Kind: cpu.Compute, Cycles: 2000}},
			h0.Send(1, []byte("0123456789abcdef"), 42, nil)...)...)
		var got *lcilib.Msg
		h1.CPU.Run(h1.Recv(func(now clock.Time, m *lcilib.Msg) []cpu.Op { got = m; return nil })...)
		runAll(e)
		Expect(string(got.Data)).To(Equal("0123456789abcdef"))

		// Slot 0 is at 0x100000, 2112 bytes (the MTU 2048 and the 16-byte
		// header rounded up to 64): the header at 0x100800 and the data
		// just below it, [0x1007f0, 0x100800). The receiver loads one word
		// of each line: the header's line 0x100800 and the data's line
		// 0x1007e0. Neither was in its cache (the DMA wrote them), so both
		// miss and are filled: 2 misses, 2 fills, no hit.
		st := cl.Nodes[1].Cache.Stats()
		Expect(st.Misses).To(Equal(uint64(2)))
		Expect(st.Fills).To(Equal(uint64(2)))
		Expect(st.Hits).To(BeZero())
		for _, a := range []uint64{0x100800, 0x1007e0} {
			present, dirty := cl.Nodes[1].Cache.Holds(a)
			Expect(present).To(BeTrue(), "line %#x", a)
			Expect(dirty).To(BeFalse(), "line %#x", a)
		}
		// Every store of either host went to the card (uncached, I/O
		// space) and through the bridge's posted-write buffer: node 0's
		// 32-byte descriptor, node 1's 16-byte buffer return.
		Expect(cl.Nodes[0].Cache.Stats().Uncached).To(Equal(uint64(1)))
		Expect(cl.Nodes[1].Cache.Stats().Uncached).To(Equal(uint64(1)))
		down, _ := cl.Nodes[1].Bridge.Stats()
		Expect(down.BytesWritten).To(Equal(uint64(16)))
		down, up := cl.Nodes[0].Bridge.Stats()
		Expect(down.BytesWritten).To(Equal(uint64(32)))
		// Node 0's NI read the 16 data bytes through the bridge (and
		// wrote its own send completion's slot header through it).
		Expect(up.BytesRead).To(Equal(uint64(16)))
		Expect(up.BytesWritten).To(Equal(uint64(16)))
	})

	It("misses again on a slot it reuses: the NI's DMA into it invalidates the lines the cache held", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
		cl := build(e, nil)
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		// 65 messages: the 65th reuses slot 0 (64 host slots), whose lines
		// the receiver's cache holds from the first; the NI's DMA of the
		// 65th invalidates them, so its loads miss again.
		ops := []cpu.Op{{Kind: cpu.Compute, Cycles: 2000}}
		rx := []cpu.Op{}
		for i := range 65 {
			ops = append(ops, h0.Send(1, []byte("0123456789abcdef"), uint32(i), nil)...)
			rx = append(rx, h1.Recv(nil)...)
		}
		h0.CPU.Run(ops...)
		h1.CPU.Run(rx...)
		runAll(e)
		st := cl.Nodes[1].Cache.Stats()
		// Two lines per message, all misses; the 65th's two were held and
		// are invalidated by the DMA before they are read.
		Expect(st.Misses).To(Equal(uint64(130)))
		Expect(st.Invalidations).To(Equal(uint64(2)))
	})
})
