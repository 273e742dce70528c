package lcitb_test

import (
	"encoding/binary"

	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/crl"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/mpi"
	"github.com/nisim/nisim/host/multigame"
	"github.com/nisim/nisim/host/orca"
	"github.com/nisim/nisim/host/panda"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// pproPIO is Table V's PPro configuration: I-pio.
func pproPIO(nodes int) lcitb.Config {
	c := lcitb.DefaultConfig()
	c.Variant, c.Nodes = fw.PIO, nodes
	return c
}

// run builds c in a fresh env, lets setup program it and runs it.
func run(c lcitb.Config, mut map[string]int, setup func(e *env.Env, cl *lcitb.Cluster)) (*env.Env, error) {
	e := env.New(env.Options{Mutations: mut})
	cl, err := lcitb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	setup(e, cl)
	_, err = e.Run()
	cl.Close()
	return e, err
}

var _ = Describe("Panda over LCI", func() {
	pc := panda.Config{Costs: panda.DefaultCosts()}

	It("RPC: the client gets the reply its request asked for (Panda-MT)", func() {
		var got []uint32
		_, err := run(pproPIO(2), nil, func(_ *env.Env, cl *lcitb.Cluster) {
			mt := pc
			mt.MT = true
			pn, err := lcitb.PandaNodes(cl, mt)
			Expect(err).NotTo(HaveOccurred())
			pn[1].Serve(5, func(s *lcilib.Seq, req *panda.Message) [][]byte {
				v := binary.LittleEndian.Uint32(req.Data)
				return [][]byte{binary.LittleEndian.AppendUint32(nil, v*v)}
			})
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
				for v := range uint32(4) {
					rep := pn[0].RPC(s, 1, 5, binary.LittleEndian.AppendUint32(nil, v+2))
					got = append(got, binary.LittleEndian.Uint32(rep.Data))
				}
			})
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) { pn[1].WaitUntil(s, func() bool { return pn[1].Delivered == 4 }) })
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]uint32{4, 9, 16, 25}))
	})

	It("reassembles a 5000-byte message sent as three LCI packets, intact", func() {
		var got []byte
		_, err := run(pproPIO(2), nil, func(_ *env.Env, cl *lcitb.Cluster) {
			pn, err := lcitb.PandaNodes(cl, pc)
			Expect(err).NotTo(HaveOccurred())
			pn[1].Handle(1, func(s *lcilib.Seq, m *panda.Message) { got = m.Data })
			msg := make([]byte, 5000)
			for i := range msg {
				msg[i] = byte(i * 31)
			}
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) { pn[0].Send(s, 1, 1, msg[:10], msg[10:]) })
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
				pn[1].WaitUntil(s, func() bool { return got != nil })
				Expect(pn[1].Packets).To(Equal(uint64(3)))
			})
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(5000))
		Expect(got[4999]).To(Equal(byte(4999 * 31 % 256)))
	})

	It("totally ordered broadcast: 6 senders (the sequencer too) x 4 at once on 6 nodes, one order everywhere (panda.order)", func() {
		c := pproPIO(6)
		r, err := lcitb.RunOrdered(nil, c, pc, 4, 16)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Delivered).To(Equal([]int{24, 24, 24, 24, 24, 24}))
		// Every node but the first to deliver each position is compared.
		Expect(r.Checked).To(Equal(5 * 24))
		Expect(r.Violations).To(BeZero())
	})

	It("panda.noreorder: delivering in arrival order breaks the total order, which panda.order catches", func() {
		e := env.New(env.Options{Mutations: map[string]int{"panda.noreorder": 1}})
		r, err := lcitb.RunOrdered(e, pproPIO(6), pc, 4, 16)
		Expect(err).To(HaveOccurred())
		Expect(r.Violations).To(BeNumerically(">", 0))
		for _, v := range e.Monitor.Violations() {
			Expect(v.Check).To(Equal("panda.order"))
			Expect(v.Msg).To(MatchRegexp(`^node \d delivered ordered broadcast \d+ from \d as its #\d+; another node delivered \d+ from \d there$`))
		}
	})

	// The send side's cost, worked by hand: Panda's send of 16 bytes is
	// LCI's send of the 24-byte packet (the 8-byte header in front) plus
	// Panda's code, Send (100) + Fragment (40) = 140 cycles = 700 ns at
	// 200 MHz; Panda-MT adds Lock (40): 180 cycles = 900 ns. Each is the
	// first send of a fresh cluster, so the hardware's state is the same.
	It("charges Send + Fragment (+ Lock under MT) on top of LCI's send of the packet", func() {
		first := func(send func(s *lcilib.Seq, pn []*panda.Node)) clock.Time {
			var d clock.Time
			_, err := run(pproPIO(2), nil, func(_ *env.Env, cl *lcitb.Cluster) {
				mt := pc
				mt.MT = true
				pn, err := lcitb.PandaNodes(cl, mt)
				Expect(err).NotTo(HaveOccurred())
				st, err := lcitb.PandaNodes(cl, pc)
				Expect(err).NotTo(HaveOccurred())
				cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
					t0 := s.Now()
					send(s, []*panda.Node{st[0], pn[0]})
					d = s.Now() - t0
				})
			})
			Expect(err).NotTo(HaveOccurred())
			return d
		}
		lci := first(func(s *lcilib.Seq, _ []*panda.Node) { s.Send(1, make([]byte, 24), 0) })
		st := first(func(s *lcilib.Seq, pn []*panda.Node) { pn[0].Send(s, 1, 1, make([]byte, 16)) })
		mt := first(func(s *lcilib.Seq, pn []*panda.Node) { pn[1].Send(s, 1, 1, make([]byte, 16)) })
		Expect(st - lci).To(Equal(700 * clock.Nanosecond))
		Expect(mt - lci).To(Equal(900 * clock.Nanosecond))
	})
})

var _ = Describe("MPI over Panda-ST", func() {
	pc := panda.Config{Costs: panda.DefaultCosts()}

	It("matches by source and tag, keeping early messages in the unexpected queue", func() {
		var order []int
		var srcs []int
		_, err := run(pproPIO(3), nil, func(_ *env.Env, cl *lcitb.Cluster) {
			cm, err := lcitb.MPINodes(cl, pc, mpi.DefaultConfig())
			Expect(err).NotTo(HaveOccurred())
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
				for t := 1; t <= 3; t++ {
					cm[1].Send(s, 0, t, []byte{byte(t)})
				}
			})
			cl.Nodes[2].Host.Run(func(s *lcilib.Seq) { cm[2].Send(s, 0, 9, []byte{9}) })
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
				d, _ := cm[0].Recv(s, 1, 3) // tags 1 and 2 arrive first: unexpected
				order = append(order, int(d[0]))
				d, _ = cm[0].Recv(s, 2, mpi.AnyTag)
				order = append(order, int(d[0]))
				for range 2 {
					d, st := cm[0].Recv(s, mpi.AnySource, mpi.AnyTag)
					order = append(order, int(d[0]))
					srcs = append(srcs, st.Source)
				}
				Expect(cm[0].Unexpected).To(BeNumerically(">=", 2))
			})
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(order).To(Equal([]int{3, 9, 1, 2}))
		Expect(srcs).To(Equal([]int{1, 1}))
	})

	DescribeTable("MPI_Bcast and MPI_Allreduce on 5 ranks",
		func(bcast string) {
			sums := make([][]int64, 5)
			got := make([][]byte, 5)
			_, err := run(pproPIO(5), nil, func(_ *env.Env, cl *lcitb.Cluster) {
				mc := mpi.DefaultConfig()
				mc.Bcast = bcast
				cm, err := lcitb.MPINodes(cl, pc, mc)
				Expect(err).NotTo(HaveOccurred())
				for k, n := range cl.Nodes {
					n.Host.Run(func(s *lcilib.Seq) {
						var in []byte
						if k == 2 {
							in = []byte("from two")
						}
						got[k] = cm[k].Bcast(s, 2, in)
						sums[k] = cm[k].Allreduce(s, []int64{int64(k), 10})
					})
				}
			})
			Expect(err).NotTo(HaveOccurred())
			for k := range 5 {
				Expect(string(got[k])).To(Equal("from two"))
				Expect(sums[k]).To(Equal([]int64{0 + 1 + 2 + 3 + 4, 50}))
			}
		},
		Entry("over Panda's broadcast", mpi.BcastPanda),
		Entry("MPICH's binomial tree (mpimc)", mpi.BcastBinomial),
	)

	// Worked by hand: MPI_Send of 16 bytes is Panda's send of the 32-byte
	// message (the 16-byte envelope in front) plus Call, 706 cycles =
	// 3.53 µs at 200 MHz.
	It("charges Call on top of Panda's send of envelope and data", func() {
		first := func(mpiSend bool) clock.Time {
			var d clock.Time
			_, err := run(pproPIO(2), nil, func(_ *env.Env, cl *lcitb.Cluster) {
				cm, err := lcitb.MPINodes(cl, pc, mpi.DefaultConfig())
				Expect(err).NotTo(HaveOccurred())
				pn, err := lcitb.PandaNodes(cl, pc)
				Expect(err).NotTo(HaveOccurred())
				cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
					t0 := s.Now()
					if mpiSend {
						cm[0].Send(s, 1, 0, make([]byte, 16))
					} else {
						pn[0].Send(s, 1, 2, make([]byte, 32))
					}
					d = s.Now() - t0
				})
			})
			Expect(err).NotTo(HaveOccurred())
			return d
		}
		Expect(first(true) - first(false)).To(Equal(3530 * clock.Nanosecond))
	})
})

var _ = Describe("CRL on LCI", func() {
	w := lcitb.CRLWork{Regions: 6, Size: 64, Ops: 50, WritePct: 40, PauseUs: 20}

	It("random reads and writes on 4 nodes: coherent, and every region's counter equals its writes", func() {
		r, err := lcitb.RunCRL(nil, pproPIO(4), crl.DefaultCosts(), w)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Violations).To(BeZero())
		Expect(r.Checked).To(Equal(4*w.Ops + w.Regions))
		Expect(r.Final).To(Equal(r.Writes))
		Expect(r.ReadMisses).To(BeNumerically(">", 0))
		Expect(r.WriteMisses).To(BeNumerically(">", 0))
		Expect(r.Invalidations).To(BeNumerically(">", 0))
	})

	It("crl.noinval: a write granted without invalidating the sharers leaves stale copies (crl.coherence)", func() {
		e := env.New(env.Options{Mutations: map[string]int{"crl.noinval": 1}})
		r, err := lcitb.RunCRL(e, pproPIO(4), crl.DefaultCosts(), w)
		Expect(err).To(HaveOccurred())
		Expect(r.Violations).To(BeNumerically(">", 0))
		for _, v := range e.Monitor.Violations() {
			Expect(v.Check).To(Equal("crl.coherence"))
		}
	})
})

var _ = Describe("Orca over Panda-MT", func() {
	pc := panda.Config{Costs: panda.DefaultCosts()}

	It("keeps a replicated object the same everywhere under concurrent updates, and ships non-replicated operations to the owner", func() {
		var vals []int64
		var rpc []int64
		_, err := run(pproPIO(4), nil, func(_ *env.Env, cl *lcitb.Cluster) {
			on, err := lcitb.OrcaNodes(cl, pc, orca.DefaultCosts(), []orca.Object{{Replicated: true}, {Owner: 3}})
			Expect(err).NotTo(HaveOccurred())
			applied := make([]int, 4)
			for k := range on {
				on[k].Applied = func(*lcilib.Seq, int, int, uint32) { applied[k]++ }
			}
			for k, n := range cl.Nodes {
				n.Host.Run(func(s *lcilib.Seq) {
					if k < 3 { // node 3 is the sequencer
						for i := range 3 {
							on[k].Invoke(s, 0, orca.OpAdd, int64(k+1), nil)
							if k == 0 {
								rpc = append(rpc, on[0].Invoke(s, 1, orca.OpAdd, int64(i+1), nil))
							}
						}
					}
					on[k].Serve(s, func() bool { return applied[k] == 9 && (k != 3 || on[3].Served == 3) })
					vals = append(vals, on[k].Value(0))
				})
			}
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(vals).To(Equal([]int64{18, 18, 18, 18})) // 3 x (1 + 2 + 3)
		Expect(rpc).To(Equal([]int64{1, 3, 6}))
	})
})

var _ = Describe("Table V's fitted rows (PPro I-pio, 16 bytes)", func() {
	// Each layer's one calibrated cost is fitted to its delta over the
	// level below; the model's values (µs) are those of the costs' source
	// comments, within 0.05 µs of the paper's deltas.
	It("reproduces the paper's deltas: CRL +2.9, Panda-ST +6.6, MPI +15.3, Panda-MT +8.5, Orca +17.1", func() {
		c, b := pproPIO(2), lcitb.DefaultPPSBench()
		pc := panda.Config{Costs: panda.DefaultCosts()}
		lci, err := lcitb.LCIRoundTrip(nil, c, b)
		Expect(err).NotTo(HaveOccurred())
		crlT, err := lcitb.CRLWriteMiss(nil, c, crl.DefaultCosts(), b)
		Expect(err).NotTo(HaveOccurred())
		st, err := lcitb.PandaRoundTrip(nil, c, pc, b)
		Expect(err).NotTo(HaveOccurred())
		m, err := lcitb.MPIRoundTrip(nil, c, pc, mpi.DefaultConfig(), b)
		Expect(err).NotTo(HaveOccurred())
		mtc := pc
		mtc.MT = true
		mt, err := lcitb.PandaRoundTrip(nil, c, mtc, b)
		Expect(err).NotTo(HaveOccurred())
		o, err := lcitb.OrcaRoundTrip(nil, c, pc, orca.DefaultCosts(), b)
		Expect(err).NotTo(HaveOccurred())
		Expect(us(lci)).To(BeNumerically("~", 23.41, 0.01))
		Expect(us(crlT - lci)).To(BeNumerically("~", 2.9, 0.05))
		Expect(us(st - lci)).To(BeNumerically("~", 6.6, 0.05))
		Expect(us(m - st)).To(BeNumerically("~", 15.3, 0.05))
		Expect(us(mt - lci)).To(BeNumerically("~", 8.5, 0.05))
		Expect(us(o - mt)).To(BeNumerically("~", 17.1, 0.05))
	})
})

var _ = Describe("Multigame's job traffic", func() {
	DescribeTable("every 32-byte descriptor reaches its owner intact, aggregated or not",
		func(aggregate int, messages uint64) {
			mc := multigame.DefaultConfig()
			mc.Aggregate = aggregate
			r, err := lcitb.RunMultigame(nil, pproPIO(4), mc, 40)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Sent).To(Equal(uint64(4 * 40)))
			Expect(r.Received).To(Equal(r.Sent))
			Expect(r.Bad).To(BeZero())
			Expect(r.Messages).To(BeNumerically("<=", messages))
		},
		// Without aggregation one message per descriptor; with 8, at most
		// 40/8 full ones plus one partial per destination, per node:
		// 4 x (5 + 3) = 32.
		Entry("one per message", 1, uint64(160)),
		Entry("8 per message", 8, uint64(32)),
	)
})

var _ = Describe("CRL's clean write miss, worked by hand", func() {
	// The miss is LCI's exchange of the same packets (an 8-byte request,
	// the 8-byte header and the 16-byte region back) plus CRL's code, all
	// on the critical path: the start operation (Op 30) before the
	// request; the home's Handler (214) before the reply; at the writer
	// the copy of the 24 bytes (24 cycles at 1 byte a cycle), the Handler
	// (214) and the end operation (Op 30). 512 cycles = 2.56 µs at 200
	// MHz, per round trip, to within one 33 MHz PCI cycle (30 ns): the
	// work shifts when the next PIO stores reach the PCI clock, which
	// takes them on its own edges (measured: 2.574 µs).
	It("costs 512 cycles more per round trip than LCI's exchange of the same packets", func() {
		c, b := pproPIO(2), lcitb.DefaultPPSBench()
		b.Iters = 10
		var raw []clock.Time
		_, err := run(c, nil, func(_ *env.Env, cl *lcitb.Cluster) {
			total := b.Warm + b.Iters
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
				for range total + 1 {
					raw = append(raw, s.Now())
					if len(raw) <= total {
						s.Send(1, make([]byte, crl.ControlBytes), 0)
						s.Recv(func(*lcilib.Seq, *lcilib.Msg) {})
					}
				}
			})
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
				for range total {
					s.Recv(func(*lcilib.Seq, *lcilib.Msg) {})
					s.Send(0, make([]byte, crl.ControlBytes+16), 0)
				}
			})
		})
		Expect(err).NotTo(HaveOccurred())
		lci := (raw[len(raw)-1] - raw[b.Warm]) / clock.Time(b.Iters)
		miss, err := lcitb.CRLWriteMiss(nil, c, crl.DefaultCosts(), b)
		Expect(err).NotTo(HaveOccurred())
		Expect(miss - lci).To(BeNumerically("~", 2560*clock.Nanosecond, 30*clock.Nanosecond))
	})
})
