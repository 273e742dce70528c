package atmtb_test

import (
	"runtime"

	"github.com/nisim/nisim/verify/testbench/atmtb"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rpcOnly is a load of RPC calls alone, back to back (no gap): every node
// is calling another most of the time, so calls cross (each node waits
// in its own call while another node's call to it arrives).
var rpcOnly = atmtb.Traffic{Ops: 40, RPC: 1, MaxBlockWords: 1}

// veryLossy is ten times the design's fault rates (6.4): one cell in a
// hundred dropped, one in a hundred corrupted, so multi-cell calls lose
// argument cells, masks and replies.
func veryLossy(c *atmtb.Config) { c.Link.DropProb, c.Link.CorruptProb = 1e-2, 1e-2 }

// expectCalls expects every call of r to have returned its checksum and
// run once (the servers' executions are the calls: rpc.once counts each
// id and fires on a second).
func expectCalls(r trafficResult) {
	GinkgoHelper()
	s := r.tr.RPCStats()
	GinkgoWriter.Printf("rpc calls %d, checked %d, servers %+v\n", r.tr.RPCCalls, r.tr.RPCChecked, s)
	Expect(r.tr.RPCCalls).To(BeNumerically(">", 0))
	Expect(r.tr.RPCChecked).To(Equal(r.tr.RPCCalls))
	Expect(s.Calls).To(Equal(r.tr.RPCCalls))
}

var _ = Describe("Random traffic with RPC calls", func() {
	It("2 nodes calling each other back to back: every call returns, each served while its caller's server node waits in a call of its own", func() {
		r := trafficRun(2, false, 3, nil, rpcOnly, nil, false)
		expectClean(r)
		expectCalls(r)
		Expect(r.tr.RPCCalls).To(Equal(uint64(2 * rpcOnly.Ops)))
	})

	It("4 nodes on the ASX-100, the default mix with lossy links: no call lost, none run twice, every result checked", func() {
		r := trafficRun(4, true, 5, nil, atmtb.DefaultTraffic(200), veryLossy, false)
		s := expectClean(r)
		expectCalls(r)
		Expect(s.LostLink + s.LostCRC).To(BeNumerically(">", 0))
		Expect(r.tr.RPCStats().Resent).To(BeNumerically(">", 0))
	})
})

var _ = Describe("rpc.once on random traffic", func() {
	DescribeTable("catches a server that runs a call twice or answers with a stale result",
		func(mutation string, n int, mod func(c *atmtb.Config)) {
			t := atmtb.DefaultTraffic(100)
			t.RPC = 40
			clean := trafficRun(3, true, 9, nil, t, mod, false)
			expectClean(clean)
			expectCalls(clean)
			r := trafficRun(3, true, 9, map[string]int{mutation: n}, t, mod, false)
			Expect(r.finErr).To(HaveOccurred())
			v := r.cl.Env.Monitor.Violations()
			Expect(v).NotTo(BeEmpty())
			Expect(v[0].Check).To(Equal(atmtb.RuleRPC), v[0].String())
			GinkgoWriter.Println(v[0].String())
		},
		Entry("rpc.dup-exec with lossy links: a duplicate (a re-sent head after a lost reply or mask) runs again", "rpc.dup-exec", 1, veryLossy),
		Entry("rpc.stale-result: every 3rd reply carries the stack's previous result", "rpc.stale-result", 3, nil),
	)
})

var _ = Describe("Random traffic with RPC calls, rerun", func() {
	It("gives a byte-identical trace in two runs with the same seed, with GOMAXPROCS 1 and 2", func() {
		t := atmtb.DefaultTraffic(40)
		t.RPC = 40
		prev := runtime.GOMAXPROCS(1)
		a := trafficRun(3, true, 13, nil, t, veryLossy, true)
		runtime.GOMAXPROCS(2)
		b := trafficRun(3, true, 13, nil, t, veryLossy, true)
		runtime.GOMAXPROCS(prev)
		expectClean(a)
		expectCalls(a)
		Expect(len(a.recs)).To(BeNumerically(">", 10000))
		Expect(trace.Diff(a.recs, b.recs)).To(BeNil())
	})
})

var _ = Describe("Traffic parameters", func() {
	It("refuse an RPC weight out of range, naming it", func() {
		for _, w := range []int{-1, atmtb.MaxTrafficWeight + 1} {
			t := atmtb.DefaultTraffic(10)
			t.RPC = w
			Expect(t.Validate()).To(MatchError(ContainSubstring("RPC weight")))
		}
		t := atmtb.Traffic{Ops: 1, RPC: 1, MaxBlockWords: 1}
		Expect(t.Validate()).To(Succeed(), "RPC calls alone are a mix")
	})
})

var _ = Describe("Random RPC calls through an overflowing switch", func() {
	It("4 nodes calling each other back to back through 1-cell output queues: cells lost at the switch, no call lost, none run twice", func() {
		r := trafficRun(4, true, 21, nil, rpcOnly, func(c *atmtb.Config) { c.Switch = c.Switch.WithQueueDepth(1) }, false)
		s := expectClean(r)
		expectCalls(r)
		Expect(s.LostSwitch).To(BeNumerically(">", 0))
		Expect(r.tr.RPCStats().Resent).To(BeNumerically(">", 0))
	})
})
