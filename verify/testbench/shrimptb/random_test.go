package shrimptb_test

import (
	"runtime"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// shortTraffic is the randomised spec's load: every node makes 60
// operations, two in three an automatic-update run of 1 to 4 stores of 4
// or 8 bytes, the rest a deliberate update of 4 to 512 bytes (5% with the
// notify bit), with up to 300 CPU cycles (5 µs) of work before each;
// combining drawn per binding.
var shortTraffic = shrimptb.Traffic{Ops: 60, AUPercent: 67, MaxRun: 4, MinDU: 4, MaxDU: 512, NotifyPercent: 5,
	MaxGap: 300, Combine: shrimptb.CombineRandom}

// randomRun runs t on a cluster of nodes nodes with mutations mut and
// returns the cluster, the run's error, Finish's error and the trace.
func randomRun(nodes int, seed uint64, mut map[string]int, t shrimptb.Traffic, mod func(c *shrimptb.Config)) (*shrimptb.Cluster, error, error, []trace.Record) {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: eisaClock, Trace: true, Seed: seed, Mutations: mut})
	c := shrimptb.DefaultConfig()
	c.Nodes = nodes
	if mod != nil {
		mod(&c)
	}
	cl, err := shrimptb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	Expect(cl.StartTraffic(t)).To(Succeed())
	_, runErr := e.Run()
	finErr := cl.Finish()
	cl.Close()
	return cl, runErr, finErr, e.Trace.Records()
}

var _ = Describe("Random traffic", func() {
	It("4 nodes, AU runs of 4- and 8-byte stores, combining per binding: every store checked, no mismatch", func() {
		cl, runErr, finErr, recs := randomRun(4, 7, nil, auTraffic, nil)
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		s := cl.Ref.Stats()
		GinkgoWriter.Printf("ref %+v\n", s)
		Expect(s.Stores).To(Equal(s.Snooped))
		Expect(s.Delivered).To(Equal(s.Expected))
		Expect(s.Stores).To(BeNumerically(">", 500))
		Expect(s.AUPackets).To(BeNumerically("<", s.Stores), "some stores combined")
		Expect(recs).NotTo(BeEmpty())
	})

	It("4 nodes, 2 senders of AU runs and 8-byte aligned DU sends (5% notifying) to 2 receivers: every store, transfer and notification checked", func() {
		t := shrimptb.Traffic{Ops: 60, AUPercent: 50, MaxRun: 4, MinDU: 8, MaxDU: 512, DUAlign: 8, NotifyPercent: 5,
			MaxGap: 300, Combine: shrimptb.CombineRandom, Senders: 2}
		cl, runErr, finErr, _ := randomRun(4, 5, nil, t, nil)
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		s := cl.Ref.Stats()
		GinkgoWriter.Printf("ref %+v\n", s)
		Expect(s.Stores).To(Equal(s.Snooped))
		Expect(s.DUPackets).To(Equal(s.DUStarts))
		Expect(s.Delivered).To(Equal(s.Expected))
		Expect(s.DUStarts).To(BeNumerically(">", 30))
		Expect(s.Stores).To(BeNumerically(">", 60))
	})

	// DU reads meet incoming DMA writes in the Xpress-EISA bridge here,
	// and DU sources 4 mod 8 (both hung the bridge before).
	It("4 nodes, AU runs and DU sends, combining per binding: every store and transfer checked, no mismatch", func() {
		cl, runErr, finErr, recs := randomRun(4, 7, nil, shortTraffic, nil)
		Expect(runErr).NotTo(HaveOccurred())
		Expect(finErr).NotTo(HaveOccurred())
		s := cl.Ref.Stats()
		GinkgoWriter.Printf("ref %+v\n", s)
		Expect(s.Stores).To(Equal(s.Snooped))
		Expect(s.DUPackets).To(Equal(s.DUStarts))
		Expect(s.Delivered).To(Equal(s.Expected))
		Expect(s.Stores).To(BeNumerically(">", 200))
		Expect(s.DUStarts).To(BeNumerically(">", 50))
		Expect(recs).NotTo(BeEmpty())
	})

	It("gives a byte-identical trace in two runs with the same seed, and with GOMAXPROCS 1 and 2", func() {
		prev := runtime.GOMAXPROCS(1)
		_, err1, fin1, a := randomRun(3, 11, nil, auTraffic, nil)
		runtime.GOMAXPROCS(2)
		_, err2, fin2, b := randomRun(3, 11, nil, auTraffic, nil)
		runtime.GOMAXPROCS(prev)
		Expect(err1).NotTo(HaveOccurred())
		Expect(err2).NotTo(HaveOccurred())
		Expect(fin1).NotTo(HaveOccurred())
		Expect(fin2).NotTo(HaveOccurred())
		Expect(len(a)).To(BeNumerically(">", 10000))
		Expect(trace.Diff(a, b)).To(BeNil())
		_, _, _, c := randomRun(3, 12, nil, auTraffic, nil)
		Expect(trace.Diff(a, c)).NotTo(BeNil(), "another seed gives another run")
	})
})

// mixTraffic is the regression tier's kind of load (verify/regress,
// system shrimp) at a unit-test size: every node of the paper's 16 makes
// 12 operations, half AU runs of 1 to 8 stores, half DU sends of 4 to 512
// bytes, 30% of them with the notify bit.
var mixTraffic = shrimptb.Traffic{Ops: 12, AUPercent: 50, MaxRun: 8, MinDU: 4, MaxDU: 512, NotifyPercent: 30, MaxGap: 300}

var _ = Describe("Random AU/DU/notification mixes on 16 nodes", func() {
	// Combining on with synchronous sends, combining off with
	// asynchronous ones: every store, transfer and notification checked,
	// and the same trace with GOMAXPROCS 1 and 2.
	DescribeTable("every store, transfer and notification checked, the same trace with GOMAXPROCS 1 and 2",
		func(combine int, async bool) {
			t := mixTraffic
			t.Combine = combine
			mod := func(c *shrimptb.Config) { c.Params.AsyncSend = async }
			prev := runtime.GOMAXPROCS(1)
			cl, runErr, finErr, a := randomRun(16, 21, nil, t, mod)
			runtime.GOMAXPROCS(2)
			_, runErr2, finErr2, b := randomRun(16, 21, nil, t, mod)
			runtime.GOMAXPROCS(prev)
			Expect(runErr).NotTo(HaveOccurred())
			Expect(finErr).NotTo(HaveOccurred())
			Expect(runErr2).NotTo(HaveOccurred())
			Expect(finErr2).NotTo(HaveOccurred())
			Expect(trace.Diff(a, b)).To(BeNil())
			s := cl.Ref.Stats()
			GinkgoWriter.Printf("ref %+v\n", s)
			Expect(s.Stores).To(Equal(s.Snooped))
			Expect(s.DUPackets).To(Equal(s.DUStarts))
			Expect(s.Delivered).To(Equal(s.Expected))
			Expect(s.LostStores + s.DURefused + s.Lost).To(BeZero())
			// 16 x 12 operations, half of them sends: about 96 transfers,
			// 30% of them notifying.
			Expect(s.DUStarts).To(BeNumerically(">", 60))
			Expect(s.Notifications).To(BeNumerically(">", 10))
			if combine == shrimptb.CombineOff {
				Expect(s.AUPackets).To(Equal(s.Stores), "without combining every store is a packet")
			} else {
				Expect(s.AUPackets).To(BeNumerically("<", s.Stores), "consecutive stores combined")
			}
		},
		Entry("combining on, synchronous sends", shrimptb.CombineOn, false),
		Entry("combining off, asynchronous sends", shrimptb.CombineOff, true),
	)
})

// auTraffic is shortTraffic without deliberate updates: automatic-update
// runs of 1 to 8 stores only, combining drawn per binding.
var auTraffic = shrimptb.Traffic{Ops: 60, AUPercent: 100, MaxRun: 8, MinDU: 4, MaxDU: 4, MaxGap: 300,
	Combine: shrimptb.CombineRandom}

// The checkers against broken models: each mutation must be caught, and
// first by the rule that exists for it.
// (shrimp.no-threshold is the negative test of the threshold turned off:
// 15-to-1 traffic, negative_test.go.)
var _ = Describe("Checkers against mutations", func() {
	DescribeTable("catch the fault on random traffic",
		func(mutation string, n int, t shrimptb.Traffic, mod func(c *shrimptb.Config), rule string) {
			if !declared(mutation) {
				Skip(mutation + " is not declared by the model yet")
			}
			// Without the mutation the same run is clean: the checker
			// discriminates.
			_, runErr, finErr, _ := randomRun(4, 7, nil, t, mod)
			Expect(runErr).NotTo(HaveOccurred())
			Expect(finErr).NotTo(HaveOccurred())
			cl, runErr, finErr, _ := randomRun(4, 7, map[string]int{mutation: n}, t, mod)
			Expect(runErr).To(HaveOccurred())
			Expect(finErr).To(HaveOccurred())
			v := cl.Env.Monitor.Violations()
			Expect(v).NotTo(BeEmpty())
			Expect(v[0].Check).To(Equal(rule), v[0].String())
			Expect(v[0].Path).To(MatchRegexp(`^N\d\.(SHRIMPCheck|NI)$`))
		},
		Entry("shrimp.snoop-skip: every 20th snooped beat lost: a store that never left", "shrimp.snoop-skip", 20, auTraffic, nil, shrimptb.RuleOnce),
		// The joined store lands where the packet's next bytes go: the
		// packet does not carry what the stores at its addresses wrote.
		Entry("shrimp.combine-gap: a non-consecutive store joins the open packet", "shrimp.combine-gap", 3, auTraffic, nil, shrimptb.RuleScoreboard),
		Entry("shrimp.rx-swap: every 5th incoming packet written after the next", "shrimp.rx-swap", 5, auTraffic, nil, shrimptb.RuleOrder),
		Entry("shrimp.notify-always: every incoming packet notifies", "shrimp.notify-always", 1, auTraffic, nil, shrimptb.RuleNotify),
	)
})

// declared reports whether a mutation is declared.
func declared(name string) bool {
	for _, m := range env.Mutations() {
		if m.Name == name {
			return true
		}
	}
	return false
}
