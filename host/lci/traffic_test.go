package lci_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/lci"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/nisim/nisim/firmware/lci"
)

var _ = Describe("randomised traffic with the checkers on", func() {
	DescribeTable("delivers everything exactly once, in order, with unique F&A values",
		func(nodes, ops, maxSize int, platform lci.Platform, v fw.Variant, tree fw.Tree, seed uint64) {
			c := lci.DefaultConfig()
			c.Nodes, c.Platform, c.Variant, c.Tree = nodes, platform, v, tree
			e := env.New(env.Options{Seed: seed})
			r, err := lci.RunTraffic(e, c, lci.Traffic{Ops: ops, MaxSize: maxSize, McastPct: 15, FAPct: 15})
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Unicasts + r.Multicasts + r.FetchAdds).To(Equal(uint64(nodes * ops)))
			// Every unicast once, every multicast at every other node.
			Expect(r.Deliveries).To(Equal(r.Unicasts + r.Multicasts*uint64(nodes-1)))
			Expect(r.Multicasts).To(BeNumerically(">", 0))
			Expect(r.FetchAdds).To(BeNumerically(">", 0))
		},
		Entry("2 PPro nodes, I-sdma, seed 1", 2, 40, 512, lci.PPro(), fw.SDMA, fw.Binary, uint64(1)),
		Entry("2 PPro nodes, I-pio, seed 2", 2, 40, 2048, lci.PPro(), fw.PIO, fw.Binary, uint64(2)),
		Entry("8 PPro nodes, I-sdma, binary, seed 3", 8, 30, 512, lci.PPro(), fw.SDMA, fw.Binary, uint64(3)),
		Entry("8 P3 nodes, I-pio, binomial, seed 4", 8, 30, 512, lci.P3(), fw.PIO, fw.Binomial, uint64(4)),
		Entry("8 P3 nodes, I-sdma, binary, seed 5", 8, 30, 1024, lci.P3(), fw.SDMA, fw.Binary, uint64(5)),
		Entry("64 PPro nodes (grid), I-sdma, seed 6", 64, 4, 64, lci.PPro(), fw.SDMA, fw.Binary, uint64(6)),
		Entry("64 P3 nodes (Clos), I-pio, binomial, seed 7", 64, 4, 64, lci.P3(), fw.PIO, fw.Binomial, uint64(7)),
	)

	It("gives the same trace for the same seed", func() {
		runOnce := func() []trace.Record {
			rec := trace.NewRecorder()
			e := env.New(env.Options{Seed: 9, Trace: rec})
			c := lci.DefaultConfig()
			c.Nodes = 4
			_, err := lci.RunTraffic(e, c, lci.Traffic{Ops: 10, MaxSize: 256, McastPct: 20, FAPct: 20})
			Expect(err).NotTo(HaveOccurred())
			return rec.Records()
		}
		a, b := runOnce(), runOnce()
		Expect(len(a)).To(BeNumerically(">", 1000))
		Expect(cmp.Diff(a, b)).To(BeEmpty())
	})
})

var _ = Describe("the base implementation on an unreliable link", func() {
	It("aborts with an error naming the link and the packet", func() {
		c := lci.DefaultConfig()
		c.Platform.Net.Link.CorruptProb = 1
		e := env.New(env.Options{Seed: 1})
		_, err := lci.PingPong(e, c, lci.DefaultBench())
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("lci.crc"), ContainSubstring("failed the CRC check on link Net.LH[1]"),
			ContainSubstring("from node 0 (32 bytes")))
	})
})

var _ = Describe("the polling watchdog", func() {
	It("interrupts a host that does not poll, and the signal handler receives", func() {
		c := lci.DefaultConfig()
		c.Interrupts = true
		e := env.New(env.Options{})
		cl, err := lci.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		var got []clock.Time
		h1.OnSignal(func(now clock.Time, m *lci.Msg) []cpu.Op { got = append(got, now); return nil })
		var sent clock.Time
		h0.CPU.Run(h0.Send(1, []byte("wake up"), 7, func(now clock.Time) { sent = now })...)
		// Node 1 computes for 500 µs without polling.
		h1.CPU.Run(cpu.Op{Kind: cpu.Compute, Cycles: 100_000})
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(1))
		Expect(cl.Nodes[1].Card.Stats().Interrupts).To(Equal(uint64(1)))
		// The interrupt comes the watchdog's 70 µs (MY-P26) after the
		// delivery, and the signal costs its cycles on top: not before.
		Expect(got[0] - sent).To(BeNumerically(">", 70*clock.Microsecond))
	})

	It("does not interrupt a host that polls in time", func() {
		c := lci.DefaultConfig()
		c.Interrupts = true
		e := env.New(env.Options{})
		cl, err := lci.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		h1.OnSignal(func(now clock.Time, m *lci.Msg) []cpu.Op { return nil })
		h0.CPU.Run(h0.Send(1, []byte("hello"), 7, nil)...)
		h1.CPU.Run(h1.Recv(nil)...)
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Nodes[1].Card.Stats().Interrupts).To(BeZero())
	})
})
