package atmtb_test

import (
	"encoding/binary"
	"errors"
	"runtime"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rpc"
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
	// Build set the cluster's Ref, the one its checker feeds.
	Expect(r.cl.Ref).NotTo(BeNil())
	Expect(r.cl.Ref).To(BeIdenticalTo(atmtb.Checks(r.cl).Ref()))
	Expect(atmtb.RefOf(r.cl)).To(BeIdenticalTo(r.cl.Ref))
	s := r.cl.Ref.Stats()
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

// writesIllegal is WRITEs and illegal operations: each refusal reason at
// one end or the other in turn (Traffic), among them the receiver's
// bounds check.
var writesIllegal = atmtb.Traffic{Ops: 100, Write: 1, Illegal: 1, MaxGap: 500, MaxBlockWords: 30}

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
		Entry("rma.no-bounds: the receiving kernel skips its bounds check: its verdict on a cell past the segment is not Ref's",
			"rma.no-bounds", 1, 2, writesIllegal, nil, atmtb.RuleProtect),
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

// boundsRun has node 0 WRITE words 20..29 of a 100-byte (25-word)
// segment node 1 exports at 0x30_0000, through a descriptor that claims
// a page (so the sender's bounds check passes and the receiver's must
// refuse): words 25..29 lie past the segment, in the same pinned page.
// It returns the cluster after Finish, the run's error joined with
// Finish's, and the memory word just past the segment.
func boundsRun(mut map[string]int) (*atmtb.Cluster, error, uint32) {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: tcClock, Seed: 1, Mutations: mut})
	cl, err := atmtb.Build(e, atmtb.DefaultConfig())
	Expect(err).NotTo(HaveOccurred())
	defer cl.Close()
	const base, segBytes = 0x30_0000, 100
	seg, err := cl.Nodes[1].Kernel.Export(base, segBytes, rma.RightWrite, 0)
	Expect(err).NotTo(HaveOccurred())
	Expect(cl.Nodes[0].Kernel.Import(0, 1, seg, rma.PageBytes, rma.RightWrite)).To(Succeed())
	words := []uint32{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}
	var st rma.Status
	cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { st = cl.Nodes[0].Kernel.Write(p, 0, 20, 10, false, words) }))
	_, runErr := e.Run()
	Expect(st).To(Equal(rma.OK), "the sender's check passes: the descriptor claims a page")
	finErr := errors.Join(runErr, cl.Finish())
	b, err := cl.Nodes[1].Memory().Storage().Bytes(base+segBytes, 4)
	Expect(err).NotTo(HaveOccurred())
	return cl, finErr, binary.LittleEndian.Uint32(b)
}

var _ = Describe("rma.protect against a kernel without its bounds check", func() {
	It("refuses a WRITE past the segment's end (ErrBounds), nothing written; with rma.no-bounds the words land past it and rma.protect fires", func() {
		cl, finErr, past := boundsRun(nil)
		Expect(finErr).NotTo(HaveOccurred())
		Expect(past).To(BeZero())
		Expect(cl.Ref.Stats().RefusedRecv[rma.ErrBounds]).To(Equal(uint64(1)))

		cl, finErr, past = boundsRun(map[string]int{"rma.no-bounds": 1})
		Expect(finErr).To(HaveOccurred())
		// Word 25 (the first past the 25-word segment) is the 6th sent.
		Expect(past).To(Equal(uint32(15)))
		v := cl.Env.Monitor.Violations()
		Expect(v).NotTo(BeEmpty())
		Expect(v[0].Check).To(Equal(atmtb.RuleProtect), v[0].String())
		GinkgoWriter.Println(v[0].String())
	})
})

// rpcOnceRun has node 1 make 3 Simple calls (atmtb.RPCSum of 4 words) to
// node 0's server on the default cluster, with node 0's first reply
// dropped at its board: the client re-sends cell 0 after ResendTimeout
// and the server sees a duplicate of the call it executed. It returns
// the server, the run's error joined with Finish's, and the results the
// calls returned.
func rpcOnceRun(mut map[string]int) (*atmtb.Cluster, *atmtb.RPCServer, error, []uint32) {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: tcClock, Seed: 1, Mutations: mut})
	cl, err := atmtb.Build(e, atmtb.DefaultConfig())
	Expect(err).NotTo(HaveOccurred())
	defer cl.Close()
	srv, err := atmtb.NewRPCServer(cl, 0, 1, atmtb.RPCStackBytes, map[uint16]rpc.Proc{atmtb.RPCProc: atmtb.RPCSum})
	Expect(err).NotTo(HaveOccurred())
	b, err := rpc.Bind(cl.Nodes[1].Kernel, cl.Config.RPC, 0, srv.Server)
	Expect(err).NotTo(HaveOccurred())
	cl.Nodes[0].Board.DropNextTx(func(c *fore.Cell) bool {
		p, err := rma.Decode(c.Payload)
		return err == nil && p.Op == rma.OpWrite && p.Offset == 0
	})
	done := false
	var got []uint32
	var errs []error
	cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { srv.Serve(p, func() bool { return done }) }))
	cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
		defer func() { done = true }()
		for r := range 3 {
			args, _ := atmtb.RPCArgs(r, 4)
			v, err := srv.Call(b, p, atmtb.RPCProc, args)
			errs = append(errs, err)
			got = append(got, v)
		}
	}))
	_, runErr := e.Run()
	Expect(errors.Join(errs...)).NotTo(HaveOccurred())
	return cl, srv, errors.Join(runErr, cl.Finish()), got
}

var _ = Describe("rpc.once against a server without exactly-once execution", func() {
	It("answers a duplicate from the cache (each call once, each result the procedure's); with rpc.dup-exec the duplicate runs again and rpc.once fires", func() {
		var want []uint32
		for r := range 3 {
			_, w := atmtb.RPCArgs(r, 4)
			want = append(want, w)
		}
		cl, srv, err, got := rpcOnceRun(nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
		Expect(srv.Stats().DupCalls).To(Equal(uint64(1)))
		Expect(srv.Stats().Calls).To(Equal(uint64(3)))
		Expect(srv.Checked).To(Equal(uint64(3)))
		for seq := uint32(1); seq <= 3; seq++ {
			Expect(srv.Execs(seq)).To(Equal(1), "call %#x", seq) // binding 0: ids 1..3
		}
		Expect(cl.Env.Monitor.Violations()).To(BeEmpty())

		cl, srv, err, _ = rpcOnceRun(map[string]int{"rpc.dup-exec": 1})
		Expect(err).To(HaveOccurred())
		Expect(srv.Execs(1)).To(Equal(2))
		v := cl.Env.Monitor.Violations()
		Expect(v).NotTo(BeEmpty())
		Expect(v[0].Check).To(Equal(atmtb.RuleRPC), v[0].String())
		GinkgoWriter.Println(v[0].String())
	})

	It("with rpc.stale-result (every 2nd reply keeps the previous result) rpc.once fires on the call that returned it", func() {
		_, want0 := atmtb.RPCArgs(0, 4)
		cl, srv, err, got := rpcOnceRun(map[string]int{"rpc.stale-result": 2})
		Expect(err).To(HaveOccurred())
		// Call 2 (seq 2) returned call 1's sum; it executed once.
		Expect(got[1]).To(Equal(want0))
		Expect(srv.Execs(2)).To(Equal(1))
		v := cl.Env.Monitor.Violations()
		Expect(v).NotTo(BeEmpty())
		Expect(v[0].Check).To(Equal(atmtb.RuleRPC), v[0].String())
		GinkgoWriter.Println(v[0].String())
	})
})
