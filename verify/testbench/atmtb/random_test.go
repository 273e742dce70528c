package atmtb_test

import (
	"runtime"

	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/atmtb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// tcClock is the TURBOchannel's 25 MHz: the failure window's unit.
var tcClock = clock.MHz(25)

// trafficResult is what a random run left.
type trafficResult struct {
	cl             *atmtb.Cluster
	tr             *atmtb.TrafficRun
	runErr, finErr error
	recs           []trace.Record
}

// trafficRun runs t on nodes nodes (switched above 2, or if switched),
// with mutations mut and the config changed by mod, traced if traced.
func trafficRun(nodes int, switched bool, seed uint64, mut map[string]int, t atmtb.Traffic, mod func(c *atmtb.Config), traced bool) trafficResult {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: tcClock, Trace: traced, Seed: seed, Mutations: mut})
	c := atmtb.DefaultConfig()
	c.Nodes, c.Switched = nodes, switched || nodes > 2
	if mod != nil {
		mod(&c)
	}
	cl, err := atmtb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	tr, err := atmtb.StartTraffic(cl, t)
	Expect(err).NotTo(HaveOccurred())
	_, runErr := e.Run()
	finErr := cl.Finish()
	cl.Close()
	var recs []trace.Record
	if traced {
		recs = e.Trace.Records()
	}
	return trafficResult{cl: cl, tr: tr, runErr: runErr, finErr: finErr, recs: recs}
}

// expectClean expects a run with no violation that did all its work.
func expectClean(r trafficResult) atmtb.RefStats {
	GinkgoHelper()
	Expect(r.runErr).NotTo(HaveOccurred())
	Expect(r.finErr).NotTo(HaveOccurred())
	Expect(r.tr.Done).To(Equal(len(r.cl.Nodes)))
	s := atmtb.RefOf(r.cl).Stats()
	GinkgoWriter.Printf("ops %d, ref %+v\n", r.tr.Operations(), s)
	Expect(s.Mismatches).To(BeZero())
	return s
}

// lossy is a link with the design's fault rates (6.4): one cell in a
// thousand dropped, one in a thousand corrupted.
func lossy(c *atmtb.Config) { c.Link.DropProb, c.Link.CorruptProb = 1e-3, 1e-3 }

var _ = Describe("Random traffic", func() {
	It("2 nodes joined directly, every kind of operation and every refusal reason: no mismatch", func() {
		r := trafficRun(2, false, 3, nil, atmtb.DefaultTraffic(400), nil, false)
		s := expectClean(r)
		Expect(r.tr.Operations()).To(BeNumerically(">=", 2*400))
		Expect(s.Delivered[rma.OpWrite]).To(BeNumerically(">", 200))
		Expect(s.Delivered[rma.OpReadReply]).To(Equal(s.Issued[rma.OpReadReq]))
		Expect(s.CASExec).To(BeNumerically(">", 40))
		Expect(s.Delivered[rma.OpBlock]).To(BeNumerically(">", 50))
		// Every reason at the sender (desc, rights, bounds, count,
		// pointer) and at the receiver (desc, vci, rights, bounds,
		// unpinned) was met.
		for _, st := range []rma.Status{rma.ErrDesc, rma.ErrRights, rma.ErrBounds, rma.ErrCount, rma.ErrPointer} {
			Expect(s.RefusedSend[st]).To(BeNumerically(">", 0), st.String())
		}
		for _, st := range []rma.Status{rma.ErrDesc, rma.ErrSrcVCI, rma.ErrRights, rma.ErrBounds, rma.ErrUnpinned} {
			Expect(s.RefusedRecv[st]).To(BeNumerically(">", 0), st.String())
		}
		Expect(s.Lost()).To(BeZero())
	})

	It("4 nodes on the ASX-100 with lossy links: every loss counted, CAS loses nothing, no mismatch", func() {
		t := atmtb.DefaultTraffic(300)
		r := trafficRun(4, true, 5, nil, t, lossy, false)
		s := expectClean(r)
		Expect(s.LostLink + s.LostCRC).To(BeNumerically(">", 0))
		// A CAS whose request or reply was lost is resent and executed
		// once: the counters hold every swap (checked at Finish).
		Expect(s.CASExec).To(BeNumerically(">", 50))
	})

	It("gives a byte-identical trace in two runs with the same seed, and with GOMAXPROCS 1 and 2", func() {
		t := atmtb.DefaultTraffic(60)
		prev := runtime.GOMAXPROCS(1)
		a := trafficRun(3, true, 11, nil, t, lossy, true)
		runtime.GOMAXPROCS(2)
		b := trafficRun(3, true, 11, nil, t, lossy, true)
		runtime.GOMAXPROCS(prev)
		expectClean(a)
		expectClean(b)
		Expect(len(a.recs)).To(BeNumerically(">", 10000))
		Expect(trace.Diff(a.recs, b.recs)).To(BeNil())
		c := trafficRun(3, true, 12, nil, t, lossy, true)
		Expect(trace.Diff(a.recs, c.recs)).NotTo(BeNil(), "another seed gives another run")
	})
})

// writesOnly is WRITE and block traffic: nothing waits for a reply, so a
// lost interrupt shows as cells left in an RX FIFO.
var writesOnly = atmtb.Traffic{Ops: 150, Write: 1, Block: 1, MaxGap: 500, MaxBlockWords: 30}

// The checkers against broken models: each mutation must be caught, first
// by the rule that exists for it; without it the same run is clean.
var _ = Describe("Checkers against mutations", func() {
	DescribeTable("catch the fault on random traffic",
		func(mutation string, n, nodes int, t atmtb.Traffic, mod func(c *atmtb.Config), rule string) {
			if !declared(mutation) {
				Skip(mutation + " is not declared by the model yet")
			}
			expectClean(trafficRun(nodes, true, 7, nil, t, mod, false))
			r := trafficRun(nodes, true, 7, map[string]int{mutation: n}, t, mod, false)
			Expect(r.finErr).To(HaveOccurred())
			v := r.cl.Env.Monitor.Violations()
			Expect(v).NotTo(BeEmpty())
			Expect(v[0].Check).To(Equal(rule), v[0].String())
		},
		Entry("fore.no-irq: every 3rd interrupt edge lost: cells wait in the RX FIFO (lost wake-up)",
			"fore.no-irq", 3, 2, writesOnly, nil, atmtb.RuleIRQ),
		Entry("fore.crc-off with corrupting links: a corrupted payload accepted (scoreboard)",
			"fore.crc-off", 1, 2, writesOnly, func(c *atmtb.Config) { c.Link.CorruptProb = 0.02 }, atmtb.RuleScoreboard),
		Entry("fore.rx-count: STATUS counts one cell too many: the handler reads an empty RX port",
			"fore.rx-count", 5, 2, writesOnly, nil, "fore.rxempty"),
		Entry("atm.discard: the switch loses every 50th cell uncounted (conservation)",
			"atm.discard", 50, 3, writesOnly, nil, atmtb.RuleCells),
		Entry("link.lose: every 40th cell vanishes on a link uncounted (conservation)",
			"link.lose", 40, 3, writesOnly, nil, atmtb.RuleCells),
		Entry("atm.swap: the switch holds a cell back behind the next of its VC (per-VC order)",
			"atm.swap", 20, 3, writesOnly, nil, atmtb.RuleOrder),
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
