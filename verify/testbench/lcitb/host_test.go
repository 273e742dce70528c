package lcitb_test

import (
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
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
		h0.Run(func(s *lcilib.Seq) {
			s.Compute(2000)
			s.Send(1, []byte("0123456789abcdef"), 42)
		})
		var got *lcilib.Msg
		h1.Run(func(s *lcilib.Seq) { s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) { got = m }) })
		runAll(e)
		Expect(string(got.Data)).To(Equal("0123456789abcdef"))

		// Slot 0 is at 0x100000, 2112 bytes (lci.SlotBytes): the header at
		// 0x100000 + 2064 = 0x100810, 16 bytes into the 32-byte line
		// 0x100800 (lci.SlotHeaderAt), and the data just below it,
		// [0x100800, 0x100810): the same line. The receiver loads one word
		// of each line the header and the data cover: only 0x100810. The
		// line was not in its cache (the DMA wrote it), so the poll hit
		// costs one miss and one fill, no hit.
		st := cl.Nodes[1].Cache.Stats()
		Expect(st.Misses).To(Equal(uint64(1)))
		Expect(st.Fills).To(Equal(uint64(1)))
		Expect(st.Hits).To(BeZero())
		present, dirty := cl.Nodes[1].Cache.Holds(0x100800)
		Expect(present).To(BeTrue())
		Expect(dirty).To(BeFalse())
		present, _ = cl.Nodes[1].Cache.Holds(0x1007e0)
		Expect(present).To(BeFalse(), "the line before the header's holds nothing of a 16-byte message")
		// Every PIO store of either host went to the card (uncached, I/O
		// space) and through the bridge's posted-write buffer: node 0's
		// 8-byte address and size field (section 4.1: «it writes an
		// address and size field») and 32-byte descriptor, 40 bytes;
		// node 1's 16-byte buffer return.
		Expect(cl.Nodes[0].Cache.Stats().Uncached).To(Equal(uint64(2)))
		Expect(cl.Nodes[1].Cache.Stats().Uncached).To(Equal(uint64(1)))
		down, _ := cl.Nodes[1].Bridge.Stats()
		Expect(down.BytesWritten).To(Equal(uint64(16)))
		down, up := cl.Nodes[0].Bridge.Stats()
		Expect(down.BytesWritten).To(Equal(uint64(8 + 32)))
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
		h0.Run(func(s *lcilib.Seq) {
			s.Compute(2000)
			for i := range 65 {
				s.Send(1, []byte("0123456789abcdef"), uint32(i))
			}
		})
		h1.Run(func(s *lcilib.Seq) {
			for range 65 {
				s.Recv(nil)
			}
		})
		runAll(e)
		st := cl.Nodes[1].Cache.Stats()
		// One line per message (data and header share it), all misses;
		// the 65th's was held and is invalidated by the DMA before it is
		// read.
		Expect(st.Misses).To(Equal(uint64(65)))
		Expect(st.Invalidations).To(Equal(uint64(1)))
	})

	// A message of n > 16 bytes spans the header's line and ceil((n -
	// 16) / 32) lines before it (lci.SlotHeaderAt): every one misses.
	DescribeTable("costs a poll hit one miss per line of the slot the message and its header cover",
		func(n int, misses uint64) {
			e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
			cl := build(e, nil)
			h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
			h0.Run(func(s *lcilib.Seq) {
				s.Compute(2000)
				s.Send(1, make([]byte, n), 1)
			})
			h1.Run(func(s *lcilib.Seq) { s.Recv(nil) })
			runAll(e)
			Expect(cl.Nodes[1].Cache.Stats().Misses).To(Equal(misses))
		},
		Entry("0 bytes: the header's line", 0, uint64(1)),
		Entry("16 bytes: the header's line holds them", 16, uint64(1)),
		Entry("17 bytes: one byte in the line before", 17, uint64(2)),
		Entry("48 bytes: 16 + 32", 48, uint64(2)),
		Entry("49 bytes: 1 + ceil(33/32) = 3 lines", 49, uint64(3)),
		Entry("2048 bytes: 1 + ceil(2032/32) = 65 lines", 2048, uint64(65)),
	)
})

// The library's sequential form (lcilib.Seq) on a two-node cluster: what
// the measurement drivers do not exercise.
var _ = Describe("the LCI library in sequential form", func() {
	It("fragments a message at the MTU, and keeps packets for an explicit release in any order", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
		cl := build(e, nil)
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		msg := make([]byte, 5000)
		for i := range msg {
			msg[i] = byte(i * 7)
		}
		h0.Run(func(s *lcilib.Seq) {
			s.SendMessage(1, msg, 9)
			s.Send(1, []byte("after"), 10)
		})
		var kept []*lcilib.Msg
		var last string
		h1.Run(func(s *lcilib.Seq) {
			// 5000 bytes at the 2048-byte MTU: 2048 + 2048 + 904.
			for range 3 {
				s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) {
					m.Keep = true
					kept = append(kept, m)
				})
			}
			for i := len(kept) - 1; i >= 0; i-- {
				s.Release(kept[i])
			}
			s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) { last = string(m.Data) })
		})
		runAll(e)
		var sizes []int
		var got []byte
		for _, m := range kept {
			sizes = append(sizes, len(m.Data))
			got = append(got, m.Data...)
			Expect(m.Tag).To(Equal(uint32(9)))
		}
		Expect(sizes).To(Equal([]int{2048, 2048, 904}))
		Expect(got).To(Equal(msg))
		Expect(last).To(Equal("after"))
		Expect(h1.Received).To(Equal(uint64(4)))
		Expect(h1.Released).To(Equal(uint64(4)))
	})

	It("takes a network signal inside a wait: the signal handler's upcall ends the wait", func() {
		c := lcitb.DefaultConfig()
		c.Interrupts = true
		e := env.New(env.Options{})
		cl, err := lcitb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		var got *lcilib.Msg
		var upcallAt, wokeAt clock.Time
		h1.OnSignal(func(s *lcilib.Seq, m *lcilib.Msg) {
			got, upcallAt = m, s.Now()
		})
		h0.Run(func(s *lcilib.Seq) { s.Send(1, []byte("signal me"), 3) })
		// Node 1's process sleeps until its own upcall has seen a packet:
		// it never polls, so only the polling watchdog's interrupt, taken
		// inside the wait, can end it.
		h1.Run(func(s *lcilib.Seq) {
			s.WaitUntil(func() bool { return got != nil })
			wokeAt = s.Now()
		})
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).NotTo(BeNil())
		Expect(string(got.Data)).To(Equal("signal me"))
		Expect(h1.CPU.Interrupts()).To(Equal(uint64(1)))
		Expect(cl.Nodes[1].Card.Stats().Interrupts).To(Equal(uint64(1)))
		// The signal handler's poll found the packet (At) after the
		// delivery cost; the upcall ran after the slot's loads and the
		// receive path's 469 cycles (2.345 µs at 200 MHz); the wait ended
		// after that, when the handler returned; the packet was released.
		Expect(upcallAt - got.At).To(BeNumerically(">=", 2345*clock.Nanosecond))
		Expect(wokeAt).To(BeNumerically(">", upcallAt))
		Expect(h1.Released).To(Equal(uint64(1)))
	})

	It("leaves a process waiting for a packet that never comes to the watchdog, and Close releases its program", func() {
		e := env.New(env.Options{})
		cl, err := lcitb.Build(e, lcitb.DefaultConfig())
		Expect(err).NotTo(HaveOccurred())
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) { s.Recv(nil) })
		_, err = e.Run()
		Expect(err).To(MatchError(ContainSubstring("deadlock or unfinished work")))
		Expect(err.Error()).To(ContainSubstring("\n  N1.CPU: at op 0, a wait"))
		Expect(cl.Nodes[1].CPU.Programs()).To(Equal(1))
		cl.Close()
		Expect(cl.Nodes[1].CPU.Programs()).To(BeZero())
	})
})
