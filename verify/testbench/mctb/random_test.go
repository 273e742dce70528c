package mctb_test

import (
	"runtime"

	"github.com/nisim/nisim/verify/testbench/mctb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// shortTraffic is the randomised spec's load: every one of the 32 CPUs
// makes 40 writes of 4 to 32 bytes (word multiples) with up to 400 CPU
// cycles (1.7 µs) of work before each, and about one operation in 8 is a
// checked 32-bit load of a receive copy instead.
var shortTraffic = mctb.Traffic{Writes: 40, MinBytes: 4, MaxBytes: 32, MaxGap: 400, LoadEvery: 8}

// randomRun runs shortTraffic on the default cluster with mutations mut
// and returns the cluster, the run's error, Finish's error and the trace.
func randomRun(seed uint64, mut map[string]int, t mctb.Traffic) (*mctb.Cluster, error, error, []trace.Record) {
	GinkgoHelper()
	return randomRunOrder(seed, mut, t, nil)
}

// randomRunOrder is randomRun with each node's CPUs created in order.
func randomRunOrder(seed uint64, mut map[string]int, t mctb.Traffic, order []int) (*mctb.Cluster, error, error, []trace.Record) {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: pciClock, Trace: true, Seed: seed, Mutations: mut})
	cl := build(e, func(c *mctb.Config) { c.CPUOrder = order })
	cl.Ref.KeepHistory()
	regions, err := cl.RandomRegions(e.Rand("regions"))
	Expect(err).NotTo(HaveOccurred())
	Expect(cl.StartTraffic(t, regions)).To(Succeed())
	_, runErr := e.Run()
	finErr := cl.Finish()
	cl.Close()
	return cl, runErr, finErr, e.Trace.Records()
}

var _ = Describe("Random traffic", func() {
	It("8 nodes x 4 CPUs, random sizes, regions and loop-back: every write checked, no mismatch", func() {
		cl, runErr, finErr, recs := randomRun(7, nil, shortTraffic)
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		s := cl.Ref.Stats()
		GinkgoWriter.Printf("ref %+v\n", s)
		Expect(s.Ordered).To(Equal(s.Sent))
		Expect(s.Delivered).To(Equal(s.Expected))
		Expect(s.Delivered).To(BeNumerically(">", 1000))
		Expect(recs).NotTo(BeEmpty())
	})

	It("gives a byte-identical trace in two runs with the same seed", func() {
		_, err1, fin1, a := randomRun(11, nil, shortTraffic)
		_, err2, fin2, b := randomRun(11, nil, shortTraffic)
		Expect(err1).NotTo(HaveOccurred())
		Expect(err2).NotTo(HaveOccurred())
		Expect(fin1).NotTo(HaveOccurred())
		Expect(fin2).NotTo(HaveOccurred())
		Expect(len(a)).To(BeNumerically(">", 10000))
		Expect(trace.Diff(a, b)).To(BeNil())
		_, _, _, c := randomRun(12, nil, shortTraffic)
		Expect(trace.Diff(a, c)).NotTo(BeNil(), "another seed gives another run")
	})

	It("gives the same trace with GOMAXPROCS 1 and 2 and in every tested CPU creation order", func() {
		prev := runtime.GOMAXPROCS(1)
		_, err1, _, a := randomRun(11, nil, shortTraffic)
		runtime.GOMAXPROCS(2)
		_, err2, _, b := randomRun(11, nil, shortTraffic)
		runtime.GOMAXPROCS(prev)
		Expect(err1).NotTo(HaveOccurred())
		Expect(err2).NotTo(HaveOccurred())
		Expect(trace.Diff(a, b)).To(BeNil())
		for _, order := range [][]int{{3, 2, 1, 0}, {1, 3, 0, 2}} {
			_, err, fin, c := randomRunOrder(11, nil, shortTraffic, order)
			Expect(err).NotTo(HaveOccurred())
			Expect(fin).NotTo(HaveOccurred())
			Expect(trace.Diff(a, c)).To(BeNil(), "creation order %v", order)
		}
	})
})

// The checkers against broken models: each mutation of the adapter's
// receive DMA and of the hub must be caught, and first by the rule that
// exists for it (later reports may follow from the first).
var _ = Describe("Checkers against mutations", func() {
	DescribeTable("catch the fault on random traffic",
		func(mutation, rule string, also ...string) {
			cl, runErr, finErr, _ := randomRun(7, map[string]int{mutation: 5}, shortTraffic)
			Expect(runErr).To(HaveOccurred())
			Expect(finErr).To(HaveOccurred())
			v := cl.Env.Monitor.Violations()
			Expect(v).NotTo(BeEmpty())
			Expect(v[0].Check).To(Equal(rule), v[0].String())
			Expect(v[0].Path).To(MatchRegexp(`^N\d\.MCCheck$`))
			for _, r := range also {
				Expect(v).To(ContainElement(HaveField("Check", r)))
			}
		},
		Entry("mcadapter.rx-swap: a DMA held back behind the next one", "mcadapter.rx-swap", mctb.RuleOrder),
		Entry("mcadapter.rx-dup: a DMA issued twice", "mcadapter.rx-dup", mctb.RuleOnce),
		Entry("mcadapter.split-word: a DMA split 2 bytes into a word", "mcadapter.split-word", mctb.RuleTorn),
		Entry("mchub.reorder: a hub output holding a write behind the next", "mchub.reorder", mctb.RuleOrder),
		// A write lost on a downlink shows first as a gap in the order at
		// its receiver (the next write arrives before it); at the end it is
		// a write that never reached memory, and one lost on an uplink a
		// write the hub never ordered.
		Entry("link.lose: a packet vanishing on a link", "link.lose", mctb.RuleOrder, mctb.RuleOnce),
	)
})

// Random traffic on clusters at the edges of the adapter's parameters:
// the checkers must stay silent whatever the timing.
var _ = Describe("Random traffic at the parameters' edges", func() {
	DescribeTable("every write checked, no mismatch",
		func(mod func(c *mctb.Config)) {
			e := vtest.NewEnv(vtest.Options{Clock: pciClock, Seed: 3})
			cl := build(e, mod)
			cl.Ref.KeepHistory()
			regions, err := cl.RandomRegions(e.Rand("regions"))
			Expect(err).NotTo(HaveOccurred())
			Expect(cl.StartTraffic(mctb.Traffic{Writes: 60, MinBytes: 4, MaxBytes: 32, MaxGap: 300, LoadEvery: 6}, regions)).To(Succeed())
			_, err = e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(cl.Finish()).To(Succeed())
			s := cl.Ref.Stats()
			Expect(s.Ordered).To(Equal(s.Sent))
			Expect(s.Delivered).To(Equal(s.Expected))
			cl.Close()
		},
		Entry("one-packet FIFOs (TX 32 B, RX 32 B and 1 descriptor)", func(c *mctb.Config) {
			c.Adapter.TxFIFOBytes, c.Adapter.RxFIFOBytes, c.Adapter.RxFIFOPackets = 32, 32, 1
		}),
		Entry("no pipeline delay, no wait states, no DMA setup", func(c *mctb.Config) {
			c.Adapter.PipelineCycles, c.Adapter.TxBeatCycles, c.Adapter.DMASetupCycles = 0, 1, 0
		}),
		Entry("8-byte packets and 4-byte DMA bursts", func(c *mctb.Config) {
			c.Adapter.MaxPacketBytes, c.Adapter.DMABurstBytes = 8, 4
		}),
		Entry("two single-CPU nodes", func(c *mctb.Config) { c.Nodes, c.CPUs = 2, 1 }),
	)
})
