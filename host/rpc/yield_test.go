package rpc_test

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/clock"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// procCallBack is node 1's procedure that calls back node 0's procSum
// with its own arguments (a nested call) and returns that call's result.
const procCallBack = 3

// peers is the rig with a second server, on node 1 (the client's node),
// and a binding to it from node 0: each node a client of the other.
type peers struct {
	*rig
	srv1  *rpc.Server
	bind0 *rpc.Binding // node 0's binding to node 1's server
	execs []map[uint32]int
}

// newPeers builds the rig and node 1's server (one stack at ServerBase:
// node 1 exports only its reply area, at ClientBase) with procSum and
// procCallBack, bound from node 0.
func newPeers(p rpc.Params) *peers {
	GinkgoHelper()
	r := newRig(p)
	ps := &peers{rig: r, execs: []map[uint32]int{r.execs, {}}}
	var err error
	ps.srv1, err = rpc.NewServer(r.nodes[client].kernel, p, 1, stackBytes, map[uint16]rpc.Proc{
		procSum: func(_ *cpu.Proc, args []uint32) uint32 { return sum(args) },
		procCallBack: func(p *cpu.Proc, args []uint32) uint32 {
			v, err := r.bind.Call(p, procSum, args)
			Expect(err).NotTo(HaveOccurred())
			return v
		},
	})
	Expect(err).NotTo(HaveOccurred())
	ps.srv1.OnExec(func(_ clock.Time, _ int, call uint32) { ps.execs[client][call]++ })
	ps.bind0, err = rpc.Bind(r.nodes[server].kernel, p, client, ps.srv1)
	Expect(err).NotTo(HaveOccurred())
	return ps
}

// crossed is what one node's program got from its calls.
type crossed struct {
	results []uint32
	errs    []error
	done    bool
}

// cross runs calls on both nodes at once, each node calling the other:
// node 0 through bind0 (procedure proc0), node 1 through bind (procSum);
// call i of each carries seq(words[i], 100·i + node). With yield, each
// binding yields to its own node's server's Once while it waits, and a
// node whose calls are done serves until the other's are too (without
// yield nothing serves: each node's one thread only calls).
func (ps *peers) cross(yield bool, proc0 uint16, words ...int) [2]*crossed {
	GinkgoHelper()
	out := [2]*crossed{{}, {}}
	srvs := [2]*rpc.Server{ps.srv, ps.srv1}
	binds := [2]*rpc.Binding{ps.bind0, ps.bind}
	procs := [2]uint16{proc0, procSum}
	for i := range 2 {
		if yield {
			binds[i].SetYield(srvs[i].Once)
		}
		ps.nodes[i].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			for j, w := range words {
				v, err := binds[i].Call(p, procs[i], seq(w, uint32(100*j+i)))
				out[i].results = append(out[i].results, v)
				out[i].errs = append(out[i].errs, err)
			}
			out[i].done = true
			if yield {
				srvs[i].Serve(p, func() bool { return out[0].done && out[1].done })
			}
		}))
	}
	_, err := ps.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(out[0].done && out[1].done).To(BeTrue(), "a node's calls did not all return")
	return out
}

var _ = Describe("two nodes calling each other (Binding.SetYield)", func() {
	// Simple (4 words, one cell), MW-32 (34 frame words: 4 cells, one
	// message) and MW-128 (130 frame words: 15 cells, two messages of
	// N = 8).
	words := []int{4, 32, 128}

	It("completes both nodes' calls at the same time when each waiting client yields to its node's server: every result right, every call run once", func() {
		ps := newPeers(unitParams())
		out := ps.cross(true, procSum, words...)
		for i := range 2 {
			for j, w := range words {
				Expect(out[i].errs[j]).NotTo(HaveOccurred(), "node %d call %d", i, j)
				Expect(out[i].results[j]).To(Equal(sum(seq(w, uint32(100*j+i)))), "node %d call %d", i, j)
			}
		}
		// Node 0's calls run on node 1's server and the other way round;
		// each binding numbers its calls 1, 2, 3 (the call id's top byte
		// is the binding's number at its server: 0 for both).
		for n := range 2 {
			Expect(ps.execs[n]).To(HaveLen(len(words)), "server on node %d", n)
			for id, x := range ps.execs[n] {
				Expect(x).To(Equal(1), "server on node %d call %#x", n, id)
			}
		}
		// The first calls overlapped (both began at time 0), so each was
		// served by the other node's client while it waited for its own,
		// promptly: no client timed out.
		Expect(ps.bind.Stats().Timeouts).To(BeZero())
		Expect(ps.bind0.Stats().Timeouts).To(BeZero())
	})

	It("without the yield each node spins on its own call and neither is served: both give up after MaxTries re-sends (MaxTries 3), nothing run", func() {
		p := unitParams()
		p.MaxTries = 3
		ps := newPeers(p)
		out := ps.cross(false, procSum, 4)
		for i := range 2 {
			Expect(out[i].errs[0]).To(MatchError(ContainSubstring("no answer after 3 re-sends")), "node %d", i)
		}
		Expect(ps.execs[server]).To(BeEmpty())
		Expect(ps.execs[client]).To(BeEmpty())
		// With the yield the same run completes.
		ps = newPeers(p)
		out = ps.cross(true, procSum, 4)
		for i := range 2 {
			Expect(out[i].errs[0]).NotTo(HaveOccurred(), "node %d", i)
		}
	})

	It("runs a procedure that calls back the caller's node (nested call): the caller serves it while waiting; the nested call's wait does not re-enter its own server", func() {
		ps := newPeers(unitParams())
		ps.bind0.SetYield(ps.srv.Once)
		ps.bind.SetYield(ps.srv1.Once)
		var got uint32
		var callErr error
		done := false
		ps.nodes[server].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			got, callErr = ps.bind0.Call(p, procCallBack, seq(32, 7))
			done = true
		}))
		ps.nodes[client].cpu.Run(cpu.Go(func(p *cpu.Proc) { ps.srv1.Serve(p, func() bool { return done }) }))
		_, err := ps.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(BeTrue())
		Expect(callErr).NotTo(HaveOccurred())
		Expect(got).To(Equal(sum(seq(32, 7))))
		Expect(ps.execs[server]).To(HaveLen(1))
		Expect(ps.execs[client]).To(HaveLen(1))
	})
})
