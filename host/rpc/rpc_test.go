package rpc_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/switch/atm"
)

var _ = Describe("round trips without loss", func() {
	It("runs Simple (4 integer arguments, one cell) once and returns its result, acknowledged by the reply", func() {
		r := newRig(unitParams())
		c := &call{proc: procSum, args: []uint32{1, 2, 3, 4}}
		r.runOnce(c, uint32(10))
		Expect(r.execs[r.order[0]]).To(Equal(1))
		// 2 header words + 4 arguments = 6 frame words: one cell.
		Expect(r.bind.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 1}))
		Expect(r.srv.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 1}))
		Expect(r.records("rpc.ack")).To(BeEmpty())
		// The stubs split StubInstrs 240 evenly; the server's half also
		// loads the 4 arguments: 120 + 4.
		Expect(r.steps(client, rpc.LabelClientStub)).To(Equal([]string{"rpc.client-stub 120"}))
		Expect(r.steps(server, rpc.LabelServerStub)).To(Equal([]string{"rpc.server-stub 124"}))
		// The stack was write-protected around the procedure and
		// released: two inhibit calls on the server.
		Expect(r.steps(server, rma.LabelInhibit)).To(HaveLen(2))
	})

	DescribeTable("runs MW calls once, one bit-mask cell per message of N = 8 cells",
		func(words, cells, msgs int) {
			r := newRig(unitParams())
			c := &call{proc: procSum, args: seq(words, 1000)}
			r.runOnce(c, sum(c.args))
			Expect(rpc.Cells(words)).To(Equal(cells))
			Expect(r.bind.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: uint64(cells), Acks: uint64(msgs)}))
			Expect(r.srv.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: uint64(cells), Acks: uint64(msgs)}))
			acks := r.records("rpc.ack")
			Expect(acks).To(HaveLen(msgs))
			// Every mask full: message j's cells min(8, cells-8j).
			for j, a := range acks {
				n := min(8, cells-8*j)
				Expect(field(a, "mask")).To(Equal(itoa(1<<n - 1)))
			}
		},
		// (2 + 32) / 9 rounded up = 4 cells, one message.
		Entry("MW-32: 4 cells", 32, 4, 1),
		// (2 + 64) / 9 rounded up = 8 cells, one message.
		Entry("MW-64: 8 cells", 64, 8, 1),
		// (2 + 128) / 9 rounded up = 15 cells, messages of 8 and 7.
		Entry("MW-128: 15 cells", 128, 15, 2),
	)

	It("numbers successive calls and runs each once", func() {
		r := newRig(unitParams())
		calls := []*call{{proc: procSum, args: []uint32{1, 2, 3, 4}}, {proc: procSum, args: seq(32, 7)},
			{proc: procSum, args: []uint32{5, 6, 7, 8}}}
		r.run(calls...)
		for _, c := range calls {
			Expect(c.err).NotTo(HaveOccurred())
			Expect(c.result).To(Equal(sum(c.args)))
		}
		Expect(r.order).To(Equal([]uint32{1, 2, 3}))
	})

	It("serves from a program that calls Once between its own operations", func() {
		r := newRig(unitParams())
		done := false
		var got uint32
		var err error
		r.nodes[server].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			for !done {
				r.srv.Once(p)
				p.Compute(50) // the program's own work between polls
			}
		}))
		r.nodes[client].cpu.Run(cpu.Go(func(p *cpu.Proc) {
			got, err = r.bind.Call(p, procSum, seq(32, 5))
			done = true
		}))
		_, rerr := r.e.Run()
		Expect(rerr).NotTo(HaveOccurred())
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(sum(seq(32, 5))))
		Expect(r.order).To(HaveLen(1))
	})

	It("reports a procedure the server does not have", func() {
		r := newRig(unitParams())
		c := &call{proc: 99, args: []uint32{1}}
		r.run(c)
		Expect(c.err).To(MatchError(rpc.ErrNoProc))
		Expect(r.order).To(BeEmpty())
	})
})

var _ = Describe("cell loss", func() {
	It("re-sends only the argument cell the bit mask shows missing, and runs the call once", func() {
		r := newRig(unitParams())
		r.dropArg(0, 2)
		c := &call{proc: procSum, args: seq(32, 1)}
		r.runOnce(c, sum(c.args))
		// Cells 1, 2 (lost), 3, then the head 0: the mask 0b1011 (cell 2
		// missing); cell 2 re-sent; then the full mask 0b1111.
		acks := r.records("rpc.ack")
		Expect(acks).To(HaveLen(2))
		Expect(field(acks[0], "mask")).To(Equal("11"))
		Expect(field(acks[1], "mask")).To(Equal("15"))
		rs := r.records("rpc.resend")
		Expect(rs).To(HaveLen(1))
		Expect(field(rs[0], "cell")).To(Equal("2"))
		Expect(r.bind.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 5, Acks: 2, Resent: 1}))
		Expect(r.srv.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 4, Acks: 2}))
	})

	It("re-sends the mask after AckTimeout when the re-sent cell is lost too", func() {
		r := newRig(unitParams())
		r.dropArg(0, 2)
		drops := 0
		r.nodes[client].board.OnDrop(func(clock.Time, *fore.Cell, fore.DropReason) {
			if drops++; drops == 1 {
				r.dropArg(0, 2) // the re-sent cell 2 is lost as well
			}
		})
		c := &call{proc: procSum, args: seq(32, 1)}
		r.runOnce(c, sum(c.args))
		Expect(drops).To(Equal(2))
		// Mask 0b1011; cell 2 re-sent and lost; the server's AckTimeout
		// (300 µs, before the client's 600 µs) re-sends 0b1011; cell 2
		// re-sent again; full mask 0b1111.
		acks := r.records("rpc.ack")
		Expect(acks).To(HaveLen(3))
		Expect([]string{field(acks[0], "mask"), field(acks[1], "mask"), field(acks[2], "mask")}).To(Equal([]string{"11", "11", "15"}))
		Expect(acks[1].Time - acks[0].Time).To(BeNumerically(">=", 300*clock.Microsecond))
		Expect(r.bind.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 6, Acks: 3, Resent: 2}))
		Expect(r.srv.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 4, Acks: 3, Timeouts: 1}))
	})

	It("does not take a cell lost in a call for present because an earlier call's message had it (regression: the mask was not cleared between calls)", func() {
		r := newRig(unitParams())
		// MW-128's message 1 leaves its mask at 0b1111111 (7 cells); MW-64's
		// cell 1 is then lost: its mask must read 0b11111101.
		calls := []*call{{proc: procSum, args: seq(128, 14)},
			{proc: procSum, args: seq(64, 28), before: func() { r.dropArg(0, 1) }}}
		r.run(calls...)
		for _, c := range calls {
			Expect(c.err).NotTo(HaveOccurred())
			Expect(c.result).To(Equal(sum(c.args)))
		}
		acks := r.records("rpc.ack")
		Expect(acks).To(HaveLen(4)) // MW-128: 2; MW-64: the mask with a hole, then the full one
		Expect(field(acks[2], "mask")).To(Equal("253"))
		Expect(field(acks[3], "mask")).To(Equal("255"))
	})

	It("re-sends a lost head after ResendTimeout; the server then acknowledges the message", func() {
		r := newRig(unitParams())
		r.dropArg(0, 0)
		c := &call{proc: procSum, args: seq(32, 1)}
		r.runOnce(c, sum(c.args))
		Expect(r.bind.Stats().Timeouts).To(Equal(uint64(1)))
		Expect(r.bind.Stats().Resent).To(Equal(uint64(1)))
		// The call took at least the client's ResendTimeout.
		Expect(c.end - c.start).To(BeNumerically(">", 600*clock.Microsecond))
	})

	It("answers a call whose reply was lost from the cache: the duplicate call id runs once", func() {
		r := newRig(unitParams())
		r.dropServerWrite(0)
		c := &call{proc: procSum, args: []uint32{1, 2, 3, 4}}
		r.runOnce(c, uint32(10))
		Expect(r.bind.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 2, Resent: 1, Timeouts: 1}))
		Expect(r.srv.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 1, DupCalls: 1, Resent: 1}))
		Expect(r.records("rpc.dup")).To(HaveLen(1))
	})

	It("re-acknowledges a message whose mask was lost when its head is re-sent (MW-128), and runs the call once", func() {
		r := newRig(unitParams())
		r.dropServerWrite(rpc.SlotWords) // message 0's mask
		c := &call{proc: procSum, args: seq(128, 1)}
		r.runOnce(c, sum(c.args))
		// The client timed out on message 0's mask and re-sent cell 0;
		// the server, collecting message 1, re-sent message 0's mask.
		Expect(r.bind.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 16, Acks: 2, Resent: 1, Timeouts: 1}))
		Expect(r.srv.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 15, Acks: 3}))
	})

	It("answers a re-sent later head from the cache when the last mask and the reply are both lost (MW-128): the duplicate runs once", func() {
		r := newRig(unitParams())
		// The server's second mask (message 1's) is dropped; the reply,
		// next, too.
		acks := 0
		r.nodes[server].board.DropNextTx(func(c *fore.Cell) bool {
			p, err := rma.Decode(c.Payload)
			if err != nil || p.Op != rma.OpWrite || int(p.Offset) != rpc.SlotWords {
				return false
			}
			acks++
			return acks == 2
		})
		r.nodes[server].board.OnDrop(func(_ clock.Time, c *fore.Cell, _ fore.DropReason) {
			if p, _ := rma.Decode(c.Payload); p.Offset == rpc.SlotWords {
				r.dropServerWrite(0)
			}
		})
		c := &call{proc: procSum, args: seq(128, 1)}
		r.runOnce(c, sum(c.args))
		// The client timed out on message 1's mask and re-sent its head,
		// cell 8; the server, idle, saw the call's later head change and
		// answered from its cache.
		rs := r.records("rpc.resend")
		Expect(rs).To(HaveLen(1))
		Expect(field(rs[0], "cell")).To(Equal("8"))
		Expect(r.bind.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 16, Acks: 1, Resent: 1, Timeouts: 1}))
		Expect(r.srv.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 15, Acks: 2, Resent: 1, DupCalls: 1}))
	})

	It("refuses a re-sent argument cell hitting the write-protected stack (ErrInhibit), counts it, and runs the call once", func() {
		r := newRig(unitParams())
		// procSlow runs 1 ms > ResendTimeout 600 µs: the client re-sends
		// cell 0 while the stack is inhibited.
		c := &call{proc: procSlow, args: []uint32{1, 2, 3, 4}}
		r.runOnce(c, uint32(10))
		Expect(r.nodes[server].kernel.Counters().RefusedRecv[rma.ErrInhibit]).To(Equal(uint64(1)))
		refused := r.records("rma.refuse")
		Expect(refused).To(HaveLen(1))
		Expect(field(refused[0], "reason")).To(Equal("inhibit"))
		Expect(r.bind.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 2, Resent: 1, Timeouts: 1}))
		// Refused and harmless: no duplicate (the stamp never changed),
		// one execution, one reply.
		Expect(r.srv.Stats()).To(Equal(rpc.Stats{Calls: 1, Cells: 1, Refused: 1}))
		Expect(r.records("rpc.reply")).To(HaveLen(2)) // the server's and the client's record
	})
})

var _ = Describe("random cell loss", func() {
	// 3 % of the cells lost on the direct link in each direction (about
	// 30 times the design's fault runs' 1e-3), calls of 1 to 15 cells:
	// every recovery path at once. Every call must return its procedure's
	// result, and every call id run exactly once.
	DescribeTable("returns every call's result and runs each once",
		func(seed uint64) {
			lc := atm.LinkConfig()
			lc.DropProb = 0.03
			r := newRigLink(unitParams(), lc, seed)
			var calls []*call
			sizes := []int{4, 32, 128, 4, 64, 17, 4, 100, 9, 4}
			for i := range 30 {
				calls = append(calls, &call{proc: procSum, args: seq(sizes[i%len(sizes)], uint32(7*i))})
			}
			r.run(calls...)
			for i, c := range calls {
				Expect(c.err).NotTo(HaveOccurred(), "call %d", i)
				Expect(c.result).To(Equal(sum(c.args)), "call %d", i)
			}
			Expect(r.order).To(HaveLen(len(calls)))
			for id, n := range r.execs {
				Expect(n).To(Equal(1), "call %#x", id)
			}
			GinkgoWriter.Printf("seed %d: client %+v server %+v\n", seed, r.bind.Stats(), r.srv.Stats())
			// The faults did happen: cells were re-sent.
			Expect(r.bind.Stats().Resent).To(BeNumerically(">", 0))
		},
		Entry("seed 1", uint64(1)), Entry("seed 2", uint64(2)), Entry("seed 3", uint64(3)), Entry("seed 4", uint64(4)),
	)
})

var _ = Describe("costs and determinism", func() {
	It("costs the spin loops PollInstrs per word watched and the transport ProtoInstrsPerCell per cell (MW-32)", func() {
		r := newRig(unitParams())
		r.run(&call{proc: procSum, args: seq(32, 1)})
		// The server watches one bound stack, idle: cell 0's stamp, 6
		// instructions; collecting nothing beyond message 0 (MW-32 is one
		// message), the same.
		for _, s := range r.steps(server, rpc.LabelPoll) {
			Expect(s).To(Equal("rpc.poll 6"))
		}
		// The client spins on the reply area's ack (id, message|number,
		// mask) and the reply's id: 4 words × 6 = 24; then on the reply
		// (id, result, status): 3 × 6 = 18.
		polls := r.steps(client, rpc.LabelPoll)
		Expect(polls).NotTo(BeEmpty())
		Expect(polls[0]).To(Equal("rpc.poll 24"))
		Expect(polls[len(polls)-1]).To(Equal("rpc.poll 18"))
		// Server checks: the frame header (30, two loads), then message
		// 0's 4 cells' stamps (4 × 30 = 120, three loads).
		Expect(r.steps(server, rpc.LabelServerCheck)).To(Equal([]string{"rpc.server-check 30", "rpc.server-check 120"}))
		// One proto step per cell written: the client's 4 argument
		// cells, the server's mask and reply.
		Expect(r.steps(client, rpc.LabelProto)).To(Equal([]string{"rpc.proto 30", "rpc.proto 30", "rpc.proto 30", "rpc.proto 30"}))
		Expect(r.steps(server, rpc.LabelProto)).To(HaveLen(2))
		// The server stub's half (120) and the 32 argument loads.
		Expect(r.steps(server, rpc.LabelServerStub)).To(Equal([]string{"rpc.server-stub 152"}))
	})

	It("gives the same trace on a rerun", func() {
		trace := func() []string {
			r := newRig(unitParams())
			r.dropArg(0, 1)
			r.run(&call{proc: procSum, args: seq(64, 3)}, &call{proc: procSum, args: []uint32{1, 2, 3, 4}})
			var out []string
			for _, rec := range r.e.Trace.Records() {
				out = append(out, rec.String())
			}
			return out
		}
		a, b := trace(), trace()
		Expect(len(a)).To(BeNumerically(">", 100))
		Expect(a).To(Equal(b))
	})
})

var _ = Describe("malformed frames", func() {
	// The client's program writes cell 0 itself through a descriptor of
	// the stack, as a faulty or malicious stub would.
	forge := func(r *rig, words []uint32) {
		seg, _ := r.srv.Stack(0)
		k := r.nodes[client].kernel
		Expect(k.Import(0, server, seg, stackBytes, rma.RightWrite)).To(Succeed())
		r.runProg(func(p *cpu.Proc) { Expect(k.Write(p, 0, 0, len(words), false, words)).To(Equal(rma.OK)) })
	}

	It("ignores a cell 0 whose call id does not match its stamp, counting it", func() {
		r := newRig(unitParams())
		w := make([]uint32, rpc.SlotWords)
		w[0], w[1] = 7, procSum|4<<16 // call id seq 7
		w[rpc.SlotWords-1] = rpc.Stamp(8, 0, 0)
		forge(r, w)
		Expect(r.order).To(BeEmpty())
		Expect(r.srv.Stats()).To(Equal(rpc.Stats{Bad: 1}))
		Expect(r.records("rpc.bad")).To(HaveLen(1))
	})

	It("answers a frame claiming more cells than the stack holds with ErrBadCall, running nothing", func() {
		r := newRig(unitParams())
		w := make([]uint32, rpc.SlotWords)
		w[0], w[1] = 9, procSum|0xffff<<16 // 65535 arguments: 7282 cells > 25
		w[rpc.SlotWords-1] = rpc.Stamp(9, 0, 0)
		forge(r, w)
		Expect(r.order).To(BeEmpty())
		Expect(r.srv.Stats().Bad).To(Equal(uint64(1)))
		Expect(r.records("rpc.reply")).To(HaveLen(1)) // the server's, status ErrBadCall
	})
})

var _ = Describe("set-up", func() {
	DescribeTable("Params.Validate names the bad parameter",
		func(mod func(p *rpc.Params), want string) {
			p := rpc.Defaults()
			mod(&p)
			err := p.Validate()
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("StubInstrs", func(p *rpc.Params) { p.StubInstrs = -1 }, "StubInstrs"),
		Entry("ProtoInstrsPerCell", func(p *rpc.Params) { p.ProtoInstrsPerCell = -1 }, "ProtoInstrsPerCell"),
		Entry("N 0", func(p *rpc.Params) { p.N = 0 }, "N 0"),
		Entry("N 33", func(p *rpc.Params) { p.N = 33 }, "N 33"),
		Entry("AckTimeout", func(p *rpc.Params) { p.AckTimeout = 0 }, "AckTimeout"),
		Entry("ResendTimeout", func(p *rpc.Params) { p.ResendTimeout = 2 * clock.Second }, "ResendTimeout"),
		Entry("PollInstrs", func(p *rpc.Params) { p.PollInstrs = 0 }, "PollInstrs"),
		Entry("MaxTries", func(p *rpc.Params) { p.MaxTries = 0 }, "MaxTries"),
		Entry("ServerBase", func(p *rpc.Params) { p.ServerBase = 2 }, "ServerBase"),
	)

	It("rejects bad servers and bindings with one-line errors", func() {
		r := newRig(unitParams())
		k := r.nodes[server].kernel
		procs := map[uint16]rpc.Proc{1: func(*cpu.Proc, []uint32) uint32 { return 0 }}
		_, err := rpc.NewServer(k, rpc.Defaults(), 0, stackBytes, procs)
		Expect(err).To(MatchError(ContainSubstring("stacks 0")))
		_, err = rpc.NewServer(k, rpc.Defaults(), 1, 44, procs)
		Expect(err).To(MatchError(ContainSubstring("stackBytes 44")))
		_, err = rpc.NewServer(k, rpc.Defaults(), 1, stackBytes, nil)
		Expect(err).To(MatchError(ContainSubstring("no procedures")))
		// The rig's server already holds ServerBase.
		_, err = rpc.NewServer(k, rpc.Defaults(), 1, stackBytes, procs)
		Expect(err).To(MatchError(ContainSubstring("overlaps")))
		_, err = rpc.Bind(r.nodes[server].kernel, rpc.Defaults(), server, r.srv)
		Expect(err).To(MatchError(ContainSubstring("both node 0")))
		_, err = rpc.Bind(r.nodes[client].kernel, rpc.Defaults(), client, r.srv)
		Expect(err).To(MatchError(ContainSubstring("not the server's node")))
		p := rpc.Defaults()
		p.N = 4
		_, err = rpc.Bind(r.nodes[client].kernel, p, server, r.srv)
		Expect(err).To(MatchError(ContainSubstring("N 4")))
		_, err = rpc.BindStacks(r.nodes[client].kernel, rpc.Defaults(), server, r.srv, 2)
		Expect(err).To(MatchError(ContainSubstring("1 unclaimed stacks, 2 wanted")))
		for _, e := range []error{err} {
			Expect(strings.Count(e.Error(), "\n")).To(BeZero())
		}
	})

	It("refuses a call with more arguments than the stack holds", func() {
		r := newRig(unitParams())
		// 25 slots × 9 frame words − 2 header words = 223.
		Expect(r.bind.MaxArgs()).To(Equal(223))
		c := &call{proc: procSum, args: seq(224, 0)}
		r.run(c)
		Expect(c.err).To(MatchError(ContainSubstring("224 arguments")))
		Expect(r.order).To(BeEmpty())
	})
})
