package shrimptb_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/nx"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// Ocean-NX on the NX library (host/nx) at CI sizes: the result bit-exact
// against the sequential program, the messages counted by hand, and
// Tables 2 and 4's experiments reported beside the paper's figures (not
// tuned to them).

// pct is b's increase over a in percent.
func pct(a, b clock.Time) float64 { return 100 * (float64(b) - float64(a)) / float64(a) }

var _ = Describe("Ocean-NX", func() {
	It("needs OceanPaperIterations iterations at Table 1's 514 x 514 and 1e-3 (the compute per point's derivation)", func() {
		oc := shrimptb.DefaultOceanCI()
		oc.N = 514
		_, it := shrimptb.OceanSequential(oc)
		Expect(it).To(Equal(shrimptb.OceanPaperIterations))
	})

	It("relaxes 34 x 34 to 1e-3 on 16 nodes bit-exact in both variants, every checker clean; AU vs DU reported", func() {
		c := shrimptb.DefaultConfig()
		oc := shrimptb.DefaultOceanCI()
		_, seqIters := shrimptb.OceanSequential(oc)
		Expect(seqIters).To(Equal(154))
		du, _, err := shrimptb.MeasureOcean(newEnv(), c, oc)
		Expect(err).NotTo(HaveOccurred())
		Expect(du.Exact).To(BeTrue())
		Expect(du.Iterations).To(Equal(154))
		// Per iteration: two exchanges (red, black) of one message each
		// way over the 15 neighbour pairs, 2 x 2 x 15 = 60, and gdhigh's
		// 15 messages up the binomial tree and 15 down: 90; 154 x 90 =
		// 13,860, one chunk each (a 32-column row is 256 bytes).
		Expect(du.Messages).To(Equal(uint64(154 * 90)))
		Expect(du.Chunks).To(Equal(du.Messages))
		// A credit every Slots/2 = 2 chunks of a pair; every pair's
		// chunks per iteration are even (2 rows, or 1 gdhigh each way):
		// 13,860 / 2 = 6,930.
		Expect(du.Credits).To(Equal(uint64(6930)))
		Expect(du.CreditWaits).To(BeZero())
		// DU sends: a row chunk is its data and its trailer (9,240 rows
		// x 2), a gdhigh chunk (8 bytes) rides in its trailer (4,620),
		// and each credit is one: 18,480 + 4,620 + 6,930 = 30,030.
		Expect(du.Sends).To(Equal(uint64(30030)))
		// No message asks for a notification (host/nx's doc: crecv polls).
		Expect(du.Notifications).To(BeZero())
		Expect(du.Interrupts).To(BeZero())

		oc.NX.Mode = nx.AU
		au, _, err := shrimptb.MeasureOcean(newEnv(), c, oc)
		Expect(err).NotTo(HaveOccurred())
		Expect(au.Exact).To(BeTrue())
		Expect(au.Messages).To(Equal(du.Messages))
		Expect(au.Sends).To(BeZero(), "the AU variant moves everything by stores")
		Expect(au.AUPackets).To(BeNumerically(">", 0))
		Expect(au.Notifications).To(BeZero())
		// Reported, not asserted: section 4.2 says DU's DMA «often»
		// overrides AU's latency for NX, with no Ocean-NX figure; in the
		// model both paths are limited by the receiver's EISA incoming
		// DMA (about 32 MB/s for a combined AU page and a 4 KB DU
		// transfer alike, docs/shrimp-validation.md), so AU saves the
		// DU initiations and comes out ahead at these 256-byte rows.
		AddReportEntry("Ocean-NX 34x34 1e-3, 16 nodes", map[string]any{
			"DU": du.Time.String(), "AU": au.Time.String(), "AU/DU": float64(au.Time) / float64(du.Time)})
		GinkgoWriter.Printf("Ocean-NX 34x34 to 1e-3 on 16 nodes: DU %v, AU %v, AU/DU %.3f (paper: DU often better for NX, Figure 4 bars, no figure)\n",
			du.Time, au.Time, float64(au.Time)/float64(du.Time))
	})

	It("slows with a system call per send and with an interrupt per message (Tables 2 and 4), reported beside the paper", func() {
		// 82 x 82: five rows of 80 points a node on 16 nodes. derived:
		// Table 3's 1,007,342 messages over 16 nodes in about 8.65 s
		// (Table 1's 69.2 s x 2 / 16, perfect speedup assumed) is one
		// message sent per node every 137 µs; here a node sends 5.6 per
		// iteration (3.75 rows, 1.9 gdhigh) and an iteration takes 1.06
		// ms (DU), one every 190 µs: near the paper's message density,
		// where the CI size (34 x 34) sends one every 25 µs.
		oc := shrimptb.DefaultOceanCI()
		oc.N, oc.Tolerance, oc.Iterations = 82, 0, 10
		run := func(mod func(c *shrimptb.Config), mode nx.Mode) shrimptb.OceanResult {
			c := shrimptb.DefaultConfig()
			mod(&c)
			o := oc
			o.NX.Mode = mode
			r, _, err := shrimptb.MeasureOcean(newEnv(), c, o)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Exact).To(BeTrue())
			Expect(r.Iterations).To(Equal(10))
			return r
		}
		none := func(*shrimptb.Config) {}
		syscall := func(c *shrimptb.Config) { c.Params.SendSyscall = true }
		irq := func(c *shrimptb.Config) { c.Params.RecvInterrupt = vmmc.RecvMessage }
		base, sys, intr := run(none, nx.DU), run(syscall, nx.DU), run(irq, nx.DU)
		Expect(sys.Time).To(BeNumerically(">", base.Time))
		Expect(intr.Time).To(BeNumerically(">", base.Time))
		Expect(intr.Interrupts).To(BeNumerically(">", 0))
		Expect(intr.Interrupts).To(BeNumerically("<=", intr.Sends), "at most one per DU send (the processor merges raises it has not taken)")
		// The AU variant has no sends: a system call per send changes
		// nothing.
		auBase, auSys := run(none, nx.AU), run(syscall, nx.AU)
		Expect(auSys.Time).To(Equal(auBase.Time))
		GinkgoWriter.Printf("Ocean-NX 82x82, 10 iterations, 16 nodes: DU %v, AU %v (AU/DU %.3f); DU send_syscall %+.2f%% (Table 2: +10.1%%), recv_interrupt=message %+.2f%% (Table 4: +15.7%%), %d interrupts for %d sends; notifications 0 of %d messages (Table 3: 11,380 of 1,007,342, 1%%)\n",
			base.Time, auBase.Time, float64(auBase.Time)/float64(base.Time), pct(base.Time, sys.Time), pct(base.Time, intr.Time), intr.Interrupts, intr.Sends, base.Messages)
	})

	It("takes the derived compute per point at Table 1's size on two nodes: 130.4 cycles, 69.2 s over 243 iterations", func() {
		c := shrimptb.DefaultConfig()
		c.Nodes = 2
		oc := shrimptb.DefaultOceanCI()
		oc.N, oc.Tolerance, oc.Iterations = 514, 0, 1
		r, _, err := shrimptb.MeasureOcean(newEnv(), c, oc)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Exact).To(BeTrue())
		// One iteration of 256 rows x 512 points a node, and its two
		// exchanges of a 4 KB row each way (two chunks: 4,064 + 32).
		Expect(r.Chunks).To(Equal(uint64(2 * 2 * 2)))
		cycles := float64(r.Time) / float64(c.Host.CPU.Clock.TimeOf(1))
		perPoint := cycles / (256 * 512)
		projected := float64(shrimptb.OceanPaperIterations) * float64(r.Time) / float64(clock.Second)
		GinkgoWriter.Printf("Ocean-NX 514x514 on 2 nodes: %.2f cycles per point-iteration (derived from Table 1: 130.4); x 243 iterations = %.2f s (Table 1: %.1f s, %+.1f%%)\n",
			perPoint, projected, shrimptb.OceanPaperSeconds, 100*(projected-shrimptb.OceanPaperSeconds)/shrimptb.OceanPaperSeconds)
		// WorkCycles was derived from this measurement (with 128 cycles
		// of work): a consistency check, within 2%.
		Expect(perPoint).To(BeNumerically("~", 130.4, 2.6))
	})

	It("runs the same twice with the same seed (deterministic), in both variants", func() {
		oc := shrimptb.DefaultOceanCI()
		oc.Tolerance, oc.Iterations = 0, 3
		for _, m := range []nx.Mode{nx.DU, nx.AU} {
			oc.NX.Mode = m
			a, _, err := shrimptb.MeasureOcean(newEnv(), shrimptb.DefaultConfig(), oc)
			Expect(err).NotTo(HaveOccurred())
			b, _, err := shrimptb.MeasureOcean(newEnv(), shrimptb.DefaultConfig(), oc)
			Expect(err).NotTo(HaveOccurred())
			Expect(a.Exact).To(BeTrue())
			Expect(b).To(Equal(a), m.String())
		}
	})

	It("refuses bad sizes with an error naming the field", func() {
		c := shrimptb.DefaultConfig()
		oc := shrimptb.DefaultOceanCI()
		oc.N = 10 // 8 interior rows for 16 nodes
		_, _, err := shrimptb.MeasureOcean(newEnv(), c, oc)
		Expect(err).To(MatchError(ContainSubstring("ocean N 10")))
		oc = shrimptb.DefaultOceanCI()
		oc.Omega = 2
		_, _, err = shrimptb.MeasureOcean(newEnv(), c, oc)
		Expect(err).To(MatchError(ContainSubstring("Omega 2")))
		oc = shrimptb.DefaultOceanCI()
		oc.NX.Slots = 1
		_, _, err = shrimptb.MeasureOcean(newEnv(), c, oc)
		Expect(err).To(MatchError(ContainSubstring("Slots 1")))
		c.Nodes = 1
		_, _, err = shrimptb.MeasureOcean(newEnv(), c, shrimptb.DefaultOceanCI())
		Expect(err).To(MatchError(ContainSubstring("at least 2 nodes")))
	})
})

var _ = Describe("NX flow control", func() {
	// 12 messages of 5,000 bytes: two chunks each (4,064 + 936), 24
	// chunks through a 4-slot ring whose receiver starts late (100,000
	// cycles, 1.67 ms): the sender fills the ring and waits for credits.
	stream := func(mode nx.Mode) shrimptb.NXStream {
		p := nx.DefaultParams()
		p.Mode = mode
		// A failed node's peers give up in 20 ms (the stream takes about
		// 3), not the default 2 s of polling.
		p.Patience = 20 * clock.Millisecond
		return shrimptb.NXStream{Count: 12, Bytes: 5000, Delay: 100000, NX: p}
	}
	cluster := func() shrimptb.Config {
		c := shrimptb.DefaultConfig()
		c.Nodes = 4
		return c
	}
	DescribeTable("delivers every message intact through a full ring, credits holding the sender, then gsync",
		func(mode nx.Mode) {
			r, _, err := shrimptb.MeasureNXStream(newEnv(), cluster(), stream(mode))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Intact).To(BeTrue())
			// 24 chunks of the stream and gsync's two broadcasts from
			// node 0 (its children 2 and 1 of 4 nodes).
			Expect(r.Chunks).To(Equal(uint64(24 + 2)))
			// Chunks 5..24 find the ring full at least once until the
			// receiver starts; at least the fifth waits.
			Expect(r.CreditWaits).To(BeNumerically(">", 0))
			// Node 1 consumes 25 chunks from node 0 (the stream and the
			// gsync broadcast): a credit every 2, 12.
			Expect(r.Credits).To(Equal(uint64(12)))
			last := clock.Time(0)
			for _, t := range r.Entered {
				last = max(last, t)
			}
			for i, t := range r.Left {
				Expect(t).To(BeNumerically(">=", last), "node %d left gsync before every node entered it", i)
			}
		},
		Entry("deliberate update", nx.DU),
		Entry("automatic update", nx.AU),
	)

	DescribeTable("reports the overrun when senders ignore the credits (mutation nx.no-credit)",
		func(mode nx.Mode) {
			e := env.New(env.Options{Seed: 1, Mutations: map[string]int{"nx.no-credit": 1}})
			_, _, err := shrimptb.MeasureNXStream(e, cluster(), stream(mode))
			Expect(err).To(MatchError(nx.ErrOverrun))
		},
		Entry("deliberate update", nx.DU),
		Entry("automatic update", nx.AU),
	)

	DescribeTable("delivers messages of every size class intact (inline, one chunk, a chunk and a tail of 1-byte copies)",
		func(mode nx.Mode, bytes int) {
			s := stream(mode)
			s.Count, s.Bytes, s.Delay = 3, bytes, 0
			r, _, err := shrimptb.MeasureNXStream(newEnv(), cluster(), s)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Intact).To(BeTrue())
			// Chunks per message (Params.Chunks) x 3, and gsync's two.
			Expect(r.Chunks).To(Equal(uint64(3*len(nx.DefaultParams().Chunks(bytes)) + 2)))
		},
		Entry("DU, empty", nx.DU, 0),
		Entry("DU, 3 bytes inline", nx.DU, 3),
		Entry("DU, 16 bytes inline", nx.DU, 16),
		Entry("DU, 20 bytes", nx.DU, 20),
		Entry("DU, 4068 bytes: 4064 + 4", nx.DU, 4068),
		// Messages 2 and 3 start at unaligned sources: the UDMA LOAD's
		// status on rotated lanes (align_test.go); this hung before
		// vmmc's laneStatus.
		Entry("DU, 17 bytes", nx.DU, 17),
		Entry("AU, empty", nx.AU, 0),
		Entry("AU, 3 bytes inline", nx.AU, 3),
		Entry("AU, 17 bytes", nx.AU, 17),
		Entry("AU, 4067 bytes: 4064 + 3", nx.AU, 4067),
	)

	It("refuses a DU message whose unaligned source crosses a page, naming the piece", func() {
		// Messages of 4067 bytes from consecutive addresses: the second
		// starts at +3 of a word, so its first chunk's piece after the
		// source's page boundary would go to byte 5 of a word.
		s := stream(nx.DU)
		s.Count, s.Bytes, s.Delay = 3, 4067, 0
		_, _, err := shrimptb.MeasureNXStream(newEnv(), cluster(), s)
		Expect(err).To(MatchError(vmmc.ErrAlign))
		Expect(err).To(MatchError(ContainSubstring("goes to byte 5 of an 8-byte word")))
	})

	It("refuses a message of another type and one longer than the buffer, naming them", func() {
		s := stream(nx.DU)
		s.Count, s.Bytes, s.Delay, s.TypeOffset = 1, 64, 0, 1
		_, _, err := shrimptb.MeasureNXStream(newEnv(), cluster(), s)
		Expect(err).To(MatchError(nx.ErrType))
		Expect(err).To(MatchError(ContainSubstring("type 0x0, Recv wants 0x1")))
		s.TypeOffset, s.RecvMax = 0, 32
		_, _, err = shrimptb.MeasureNXStream(newEnv(), cluster(), s)
		Expect(err).To(MatchError(nx.ErrSize))
		Expect(err).To(MatchError(ContainSubstring("64 bytes and more into a 32-byte buffer")))
	})
})
