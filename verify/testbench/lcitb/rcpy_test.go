package lcitb_test

import (
	"bytes"
	"encoding/binary"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// I-rcpy end to end on two PPro nodes (section 5.2.3): the library's
// RemoteCopy, both NIs' NTLBs, the misses on first touch, the completion
// check, with the NTLB checker (lci.ntlb) after every run.
var _ = Describe("I-rcpy on a cluster", func() {
	rcpyConfig := func() lcitb.Config {
		c := lcitb.DefaultConfig()
		c.Variant = lci.RCPY
		return c
	}
	// run builds two nodes, sets their programs up and runs them; it
	// returns the cluster and the run's error, the NTLB checker's reports
	// included.
	run := func(e *env.Env, setup func(cl *lcitb.Cluster)) (*lcitb.Cluster, error) {
		cl, err := lcitb.Build(e, rcpyConfig())
		Expect(err).NotTo(HaveOccurred())
		setup(cl)
		_, err = e.Run()
		cl.Close()
		cl.CheckNTLBs()
		if err == nil {
			err = e.Monitor.Err()
		}
		return cl, err
	}
	// data is n recognisable bytes whose last word is 0 (the flag).
	data := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		binary.LittleEndian.PutUint32(b[n-4:], 0)
		return b
	}

	// A 10000-byte copy from 0x1000_0100 to 0x2010_07c0 crosses three
	// source pages and three destination pages: SplitPages cuts it at
	// every page boundary of either side and at the 2 KB MTU.
	const (
		src = 0x1000_0100
		dst = 0x2010_07c0
		n   = 10000
	)

	It("copies a multi-page block on first touch (send and receive misses) and again warm (none), the destination equal to the source each time", func() {
		xs, err := lcilib.SplitPages(src, dst, n, lci.BaseMTU)
		Expect(err).NotTo(HaveOccurred())
		// derived: source pages 0x10000-0x10002, destination pages
		// 0x20100-0x20102; boundaries at src 0x1000/0x2000 (dst 0x16c0,
		// 0x26c0), dst 0x1000/0x2000 (src 0x940, 0x1940) and 2048 bytes
		// after each cut: 0x100-0x900, 0x900-0x940, 0x940-0x1000,
		// 0x1000-0x1800, 0x1800-0x1940, 0x1940-0x2000, 0x2000-0x2800,
		// 0x2800-0x2810: 8 page transfers.
		Expect(xs).To(HaveLen(8))
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
		msg := data(n, 3)
		var first, warm lcilib.RcpyStats
		var done []bool
		cl, err := run(e, func(cl *lcitb.Cluster) {
			cl.Nodes[0].Host.VirtWrite(src, msg)
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
				for round := uint32(1); round <= 2; round++ {
					s.VirtStore32(src+n-4, round)
					hd := s.RemoteCopy(1, src, dst, n)
					s.RcpyWaitDone(hd)
					done = append(done, s.RcpyDone(hd))
					if round == 1 {
						first = s.Host().RcpyStats()
					}
				}
				warm = s.Host().RcpyStats()
			})
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
				for round := uint32(1); round <= 2; round++ {
					s.RcpyWait(dst+n-4, round)
					want := append([]byte(nil), msg...)
					binary.LittleEndian.PutUint32(want[n-4:], round)
					if !bytes.Equal(s.Host().VirtRead(dst, n), want) {
						s.Host().Report(s.Now(), "lci.data", "round %d: the destination differs from the source", round)
					}
				}
			})
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(Equal([]bool{true, true}))
		// First touch: a send miss per source page (its first page
		// transfer; the HTLB has it after), the rest hits.
		Expect(first).To(Equal(lcilib.RcpyStats{Xfers: 8, SendMisses: 3, RecvMisses: 0, Pins: 3}))
		// Warm: 8 more page transfers, no miss.
		Expect(warm).To(Equal(lcilib.RcpyStats{Xfers: 16, SendMisses: 3, RecvMisses: 0, Pins: 3}))
		// The receiver: one receive miss per destination page (the
		// page's first transfer; the later ones to a locked entry wait
		// in the NI until the host has unlocked it), each pinned.
		Expect(cl.Nodes[1].Host.RcpyStats()).To(Equal(lcilib.RcpyStats{RecvMisses: 3, Pins: 3}))
		// Both NIs fetched only the hits' data by DMA: 5 + 8.
		Expect(cl.Nodes[0].FW.Counts().Fetches).To(Equal(13))
	})

	It("recovers when the receive misses outrun the 16 anonymous pages: 20 first-touch pages, the destination equal to the source", func() {
		const pages = 20
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
		msg := data(pages*lci.PageBytes, 9)
		ok := false
		cl, err := run(e, func(cl *lcitb.Cluster) {
			cl.Nodes[0].Host.VirtWrite(0x1000_0000, msg)
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
				s.VirtStore32(0x1000_0000+pages*lci.PageBytes-4, 1)
				s.RcpyWaitDone(s.RemoteCopy(1, 0x1000_0000, 0x2010_0000, pages*lci.PageBytes))
			})
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
				s.RcpyWait(0x2010_0000+pages*lci.PageBytes-4, 1)
				binary.LittleEndian.PutUint32(msg[len(msg)-4:], 1)
				ok = bytes.Equal(s.Host().VirtRead(0x2010_0000, len(msg)), msg)
			})
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		// A receive miss per destination page (16 anonymous pages: the
		// 17th page's first transfer waits in the NI for an unlock).
		Expect(cl.Nodes[1].Host.RcpyStats().RecvMisses).To(Equal(pages))
	})

	It("is deterministic: the same seed gives the same trace", func() {
		trc := func() []trace.Record {
			e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 7, Trace: true})
			_, err := lcitb.RcpyPingPong(e, rcpyConfig(), lcitb.Bench{Size: 64, Warm: 1, Iters: 3, Stream: 8})
			Expect(err).NotTo(HaveOccurred())
			return e.Trace.Records()
		}
		a := trc()
		Expect(a).NotTo(BeEmpty())
		Expect(cmp.Diff(a, trc())).To(BeEmpty())
	})

	It("measures a warm ping-pong and stream whose data the receiver checks", func() {
		r, err := lcitb.RcpyPingPong(nil, rcpyConfig(), lcitb.Bench{Size: 16, Warm: 2, Iters: 4, Stream: 8})
		Expect(err).NotTo(HaveOccurred())
		// derived: os is the library's page-transfer code (Costs.Send,
		// 337 cycles) and the descriptor's 32-byte PIO store, four
		// 8-byte beats one a cycle (the I-sdma golden's descriptor takes
		// 6, two of its beats waiting behind the address field's store,
		// which I-rcpy has not): 341 cycles of 5 ns = 1.705 µs. The send
		// buffer is free (the completions came back during the wait).
		Expect(r.Os).To(Equal(1705 * clock.Nanosecond))
		Expect(r.Or).To(BeNumerically(">", 0))
		Expect(r.E2E).To(Equal(r.Os + r.L + r.Or))
		t, err := lcitb.RcpyStream(nil, rcpyConfig(), lcitb.Bench{Size: 16, Warm: 2, Iters: 4, Stream: 40})
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Gap).To(BeNumerically(">", 0))
		_, err = lcitb.RcpyPingPong(nil, lcitb.DefaultConfig(), lcitb.DefaultBench())
		Expect(err).To(MatchError("rcpy ping-pong: variant I-sdma, not I-rcpy"))
		_, err = lcitb.RcpyPingPong(nil, rcpyConfig(), lcitb.Bench{Size: 6, Iters: 2, Stream: 4})
		Expect(err).To(MatchError(ContainSubstring("a multiple of 4, at least 4")))
	})

	It("refuses a bad RemoteCopy with a one-line report (lci.api)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
		var hs []lcilib.RcpyHandle
		_, err := run(e, func(cl *lcitb.Cluster) {
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
				hs = append(hs, s.RemoteCopy(1, src+2, dst, 16), s.RemoteCopy(0, src, dst, 16))
			})
		})
		Expect(hs).To(Equal([]lcilib.RcpyHandle{0, 0}))
		Expect(err).To(HaveOccurred())
		var msgs []string
		for _, v := range e.Monitor.Violations() {
			msgs = append(msgs, v.Check+": "+v.Msg)
		}
		Expect(msgs).To(Equal([]string{
			"lci.api: lcilib: RCPY of 16 bytes from 0x10000102 to 0x201007c0: addresses and size must be 4-byte aligned, size at least 4",
			"lci.api: RemoteCopy to node 0 from node 0 of 2",
		}))
	})

	// lci.ntlbstale: every NTLB update maps the page one physical page
	// off. The sender's send miss updates its NTLB wrongly, so the next
	// (warm) transfer from that page is DMAed from the wrong page (the
	// node's own destination page, backed second): its flag is not the
	// one the receiver waits for, which waits for ever, and the NTLB
	// checker names the entries.
	It("lci.ntlbstale: a stale NTLB entry is caught by lci.ntlb (the receiver waits for ever)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1, Mutations: map[string]int{"lci.ntlbstale": 1}})
		_, err := lcitb.RcpyPingPong(e, rcpyConfig(), lcitb.Bench{Size: 16, Warm: 1, Iters: 2, Stream: 4})
		Expect(err).To(HaveOccurred())
		got := map[string][]string{}
		for _, v := range e.Monitor.Violations() {
			got[v.Check] = append(got[v.Check], v.Path+": "+v.Msg)
		}
		Expect(got["deadlock"]).To(HaveLen(1))
		Expect(err).To(MatchError(ContainSubstring("the NTLB checker (lci.ntlb) found 2 bad entries")))
		// Both senders' source page 0x10000 (entry 0), pinned at the
		// first physical page from lcilib.RcpyPhysBase (0x5000) but
		// mapped at 0x5001.
		Expect(got["lci.ntlb"]).To(ConsistOf(
			"N0.NI.FW: NTLB entry 0 maps virtual page 0x10000 to physical page 0x5001; the host pinned it at 0x5000",
			"N1.NI.FW: NTLB entry 0 maps virtual page 0x10000 to physical page 0x5001; the host pinned it at 0x5000"))
		Expect(got).To(HaveLen(2))
	})
})
