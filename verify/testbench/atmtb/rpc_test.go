package atmtb_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/atmtb"
)

// RPC end to end on the paper's testbed (section 3.1.3: «two otherwise
// idle workstations connected by an ATM network»): the default cluster,
// node 0 the server, node 1 the client, the cluster's RPC parameters
// (host/rpc's Defaults, StubInstrs calibrated: C3). The server has
// MeasureRPC's stack (atmtb.RPCStackBytes: 25 cell slots, MW-128's 15
// fit) and procedure (atmtb.RPCSum, number atmtb.RPCProc: the sum of its
// arguments; section 3.1.3: «The actual computation time for each RPC is
// again negligible»).

// rpcStack is the server's stack.
const rpcStack = atmtb.RPCStackBytes

// rpcSum is the one procedure's number.
const rpcSum = atmtb.RPCProc

// sumProcs is the server's procedures: atmtb.RPCSum alone.
func sumProcs() map[uint16]rpc.Proc { return map[uint16]rpc.Proc{rpcSum: atmtb.RPCSum} }

// rpcRun runs rounds calls of words argument words on the default
// cluster, changed by mod, then drop (nil: none) arms a fault before the
// first call. It returns each call's time and the server's executions
// per call id.
func rpcRun(words, rounds int, mod func(c *atmtb.Config), drop func(cl *atmtb.Cluster, s *atmtb.RPCServer)) (
	times []clock.Time, execs map[uint32]int, srv *atmtb.RPCServer, b *rpc.Binding) {
	GinkgoHelper()
	e := env.New(env.Options{Seed: 1, TimeLimit: 500 * clock.Millisecond})
	cl := build(e, mod)
	defer cl.Close()
	_, err := atmtb.Connect(cl)
	Expect(err).NotTo(HaveOccurred())
	srv, err = atmtb.NewRPCServer(cl, 0, 1, rpcStack, sumProcs())
	Expect(err).NotTo(HaveOccurred())
	execs = map[uint32]int{}
	srv.OnExec(func(_ clock.Time, _ int, call uint32) { execs[call]++ })
	b, err = rpc.Bind(cl.Nodes[1].Kernel, cl.Config.RPC, 0, srv.Server)
	Expect(err).NotTo(HaveOccurred())
	if drop != nil {
		drop(cl, srv)
	}
	done := false
	var errs []error
	cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { srv.Serve(p, func() bool { return done }) }))
	cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
		for r := range rounds {
			args, want := atmtb.RPCArgs(r, words)
			start := p.Now()
			got, err := srv.Call(b, p, rpcSum, args)
			times = append(times, p.Now()-start)
			if err == nil && got != want {
				err = fmt.Errorf("call %d: result %d, want %d", r, got, want)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		done = true
	}))
	res, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Stopped).To(BeFalse(), "the run hit its time limit")
	Expect(done).To(BeTrue())
	Expect(errs).To(BeEmpty())
	Expect(cl.Finish()).To(Succeed())
	Expect(srv.Checked).To(Equal(uint64(rounds)))
	return times, execs, srv, b
}

func meanAfter(ts []clock.Time, warm int) clock.Time {
	var s clock.Time
	for _, t := range ts[warm:] {
		s += t
	}
	return s / clock.Time(len(ts)-warm)
}

var _ = Describe("RPC on the cluster", func() {
	It("runs Simple and MW-32/64/128 with the right results, each call once; reports the latencies against Table 4", func() {
		// Table 4 (DEC 5000/200): Simple 93, MW-32 300, MW-64 488, MW-128
		// 698 µs. The model's figures are reported, not asserted: C3 fits
		// Simple only (atm-report's calibration table), and the issue
		// design's section 5.3 predicts the MW rows well below the paper.
		const rounds, warm = 12, 2
		for _, row := range []struct {
			name  string
			words int
			paper float64
		}{{"Simple", 4, 93}, {"MW-32", 32, 300}, {"MW-64", 64, 488}, {"MW-128", 128, 698}} {
			times, execs, srv, b := rpcRun(row.words, rounds, nil, nil)
			Expect(execs).To(HaveLen(rounds))
			for id, n := range execs {
				Expect(n).To(Equal(1), "call %#x", id)
			}
			Expect(b.Stats().Resent).To(BeZero())
			Expect(b.Stats().Timeouts).To(BeZero())
			Expect(srv.Stats().DupCalls).To(BeZero())
			m := meanAfter(times, warm)
			us := float64(m) / float64(clock.Microsecond)
			AddReportEntry(fmt.Sprintf("RPC %s", row.name), fmt.Sprintf("%.1f µs (paper %.0f µs, %+.0f%%)", us, row.paper, 100*(us-row.paper)/row.paper))
			GinkgoWriter.Printf("RPC %-7s %7.1f us  paper %4.0f us  %+5.0f%%\n", row.name, us, row.paper, 100*(us-row.paper)/row.paper)
			Expect(m).To(BeNumerically(">", 0))
		}
	})

	It("loses nothing under cell loss on the real nodes: a lost argument cell, a lost reply", func() {
		// Node 1's next cell to word 20 of the stack (MW-32's cell 2) is
		// dropped at its board; then node 0's first reply.
		_, execs, srv, b := rpcRun(32, 3, nil, func(cl *atmtb.Cluster, s *atmtb.RPCServer) {
			seg, _ := s.Stack(0)
			cl.Nodes[1].Board.DropNextTx(dropWrite(seg, 2*rpc.SlotWords))
		})
		Expect(execs).To(HaveLen(3))
		for _, n := range execs {
			Expect(n).To(Equal(1))
		}
		Expect(b.Stats().Resent).To(Equal(uint64(1)))
		Expect(srv.Stats().Acks).To(Equal(uint64(4))) // 3 calls + the mask with a hole

		_, execs, srv, b = rpcRun(4, 3, nil, func(cl *atmtb.Cluster, _ *atmtb.RPCServer) {
			cl.Nodes[0].Board.DropNextTx(func(c *fore.Cell) bool {
				p, err := rma.Decode(c.Payload)
				return err == nil && p.Op == rma.OpWrite && p.Offset == 0
			})
		})
		Expect(execs).To(HaveLen(3))
		for _, n := range execs {
			Expect(n).To(Equal(1))
		}
		Expect(srv.Stats().DupCalls).To(Equal(uint64(1)))
		Expect(b.Stats().Timeouts).To(Equal(uint64(1)))
	})
})

var _ = Describe("RPC on the cluster, more", func() {
	It("serves two clients through the ASX-100, a stack each, every call once", func() {
		e := env.New(env.Options{Seed: 1, TimeLimit: 500 * clock.Millisecond})
		cl := build(e, func(c *atmtb.Config) { c.Nodes, c.Switched = 3, true })
		defer cl.Close()
		srv, err := atmtb.NewRPCServer(cl, 0, 2, rpcStack, sumProcs())
		Expect(err).NotTo(HaveOccurred())
		execs := map[uint32]int{}
		srv.OnExec(func(_ clock.Time, _ int, call uint32) { execs[call]++ })
		const calls = 4
		left := 2
		var errs []error
		for c := 1; c <= 2; c++ {
			b, err := rpc.Bind(cl.Nodes[c].Kernel, cl.Config.RPC, 0, srv.Server)
			Expect(err).NotTo(HaveOccurred())
			cl.Nodes[c].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
				for r := range calls {
					// Client 1 makes MW-32 calls, client 2 Simple ones.
					args := make([]uint32, 4+28*(2-c))
					var want uint32
					for i := range args {
						args[i] = uint32(100*c + 10*r + i)
						want += args[i]
					}
					got, err := srv.Call(b, p, rpcSum, args)
					if err == nil && got != want {
						err = fmt.Errorf("client %d call %d: result %d, want %d", c, r, got, want)
					}
					if err != nil {
						errs = append(errs, err)
					}
				}
				left--
			}))
		}
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { srv.Serve(p, func() bool { return left == 0 }) }))
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse())
		Expect(left).To(BeZero())
		Expect(errs).To(BeEmpty())
		Expect(cl.Finish()).To(Succeed())
		// Call ids: binding 0 (node 1) 0x1..0x4, binding 1 (node 2)
		// 0x1000001..0x1000004.
		Expect(execs).To(HaveLen(2 * calls))
		for id, n := range execs {
			Expect(n).To(Equal(1), "call %#x", id)
		}
		Expect(srv.Stats().Calls).To(Equal(uint64(2 * calls)))
	})

	It("refuses a re-sent argument cell hitting the write-protected stack (ErrInhibit), harmlessly", func() {
		// A procedure of 1 ms (25,000 cycles at 25 MHz) > ResendTimeout
		// 600 µs: the client re-sends cell 0 while the stack is inhibited.
		e := env.New(env.Options{Seed: 1, TimeLimit: 500 * clock.Millisecond})
		cl := build(e, nil)
		defer cl.Close()
		srv, err := atmtb.NewRPCServer(cl, 0, 1, rpcStack, map[uint16]rpc.Proc{
			rpcSum: func(p *cpu.Proc, args []uint32) uint32 { p.Compute(25_000); return args[0] + args[3] }})
		Expect(err).NotTo(HaveOccurred())
		execs := 0
		srv.OnExec(func(clock.Time, int, uint32) { execs++ })
		b, err := rpc.Bind(cl.Nodes[1].Kernel, cl.Config.RPC, 0, srv.Server)
		Expect(err).NotTo(HaveOccurred())
		done := false
		var got uint32
		var cerr error
		cl.Nodes[0].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) { srv.Serve(p, func() bool { return done }) }))
		cl.Nodes[1].CPUs[0].Run(cpu.Go(func(p *cpu.Proc) {
			got, cerr = srv.Call(b, p, rpcSum, []uint32{1, 2, 3, 4})
			done = true
		}))
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(cerr).NotTo(HaveOccurred())
		Expect(got).To(Equal(uint32(5)))
		Expect(execs).To(Equal(1))
		Expect(cl.Nodes[0].Kernel.Counters().RefusedRecv[rma.ErrInhibit]).To(Equal(uint64(1)))
		Expect(srv.Stats().Refused).To(Equal(uint64(1)))
		Expect(srv.Stats().DupCalls).To(BeZero())
		Expect(b.Stats().Resent).To(Equal(uint64(1)))
		Expect(cl.Finish()).To(Succeed())
	})
})

// dropWrite matches a WRITE cell to word offset off of segment seg.
func dropWrite(seg uint8, off int) func(c *fore.Cell) bool {
	return func(c *fore.Cell) bool {
		p, err := rma.Decode(c.Payload)
		return err == nil && p.Op == rma.OpWrite && p.Desc == seg && int(p.Offset) == off
	}
}
