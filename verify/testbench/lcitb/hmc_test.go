package lcitb_test

import (
	"slices"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/nisim/nisim/firmware/lci"
)

// hopCounts is what one node did for a multicast: its host's forwards
// and their descriptors, its NI's host-to-NI DMA fetches and data
// packets sent, and the bytes its PCI bridge carried each way: PIO
// stores to the card (down) and the card's DMA reads of host memory (up).
type hopCounts struct {
	Forwarded, FwdDescs   uint64
	Fetches, DataSends    int
	PIOBytes, DMAReadByte uint64
}

// Section 5.4: «I-sdma-hmc, uses an aggressive form of host-level packet
// forwarding. When a host must forward a packet to a set of children,
// I-sdma-hmc issues a data transfer to NI memory only once and transmits
// the same NI buffer multiple times», and «I-sdma-hmc adds two data copies
// per internal tree node to the critical path: from the NI to the host
// and back».
var _ = Describe("host-level multicast forwarding (I-sdma-hmc)", func() {
	// One 16-byte multicast of node 0 on 6 PPro nodes, binary tree: node
	// 0 sends to 1 and 2; node 1 forwards to 3 and 4, node 2 to 5; 3, 4
	// and 5 are leaves. Each receiver takes one packet (Recv).
	oneMulticast := func(v fw.Variant, hmc bool) ([]hopCounts, clock.Time) {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
		cl := build(e, func(c *lcitb.Config) { c.Nodes, c.Variant, c.HostForward = 6, v, hmc })
		data := []byte("0123456789abcdef")
		var last clock.Time
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.Compute(2000)
			s.Multicast(data, 9)
		})
		for _, n := range cl.Nodes[1:] {
			n.Host.Run(func(s *lcilib.Seq) {
				s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
					Expect(m.Src).To(Equal(0))
					Expect(m.Tag).To(BeEquivalentTo(9))
					Expect(m.Seq).To(BeEquivalentTo(1))
					Expect(string(m.Data)).To(Equal(string(data)))
					last = max(last, s.Now())
				})
			})
		}
		runAll(e)
		var out []hopCounts
		for _, n := range cl.Nodes {
			down, up := n.Bridge.Stats()
			k := n.FW.Counts()
			out = append(out, hopCounts{Forwarded: n.Host.Forwarded, FwdDescs: n.Host.FwdDescs, Fetches: k.Fetches, DataSends: k.DataSends,
				PIOBytes: down.BytesWritten, DMAReadByte: up.BytesRead})
		}
		return out, last
	}

	It("forwards on the hosts of the inner nodes: one host-to-NI transfer and one NI send per child each, counted", func() {
		got, hmcLast := oneMulticast(fw.SDMA, true)
		// PIO bytes: the root's address and size field (8) and
		// descriptor (32); an inner node's buffer return (16), field (8)
		// and a descriptor per child (32 each); a leaf's buffer return
		// (16). DMA reads: the 16 data bytes, once per node that sends.
		want := []hopCounts{
			{Fetches: 1, DataSends: 2, PIOBytes: 8 + 32, DMAReadByte: 16},
			{Forwarded: 1, FwdDescs: 2, Fetches: 1, DataSends: 2, PIOBytes: 16 + 8 + 2*32, DMAReadByte: 16},
			{Forwarded: 1, FwdDescs: 1, Fetches: 1, DataSends: 1, PIOBytes: 16 + 8 + 32, DMAReadByte: 16},
			{PIOBytes: 16}, {PIOBytes: 16}, {PIOBytes: 16},
		}
		Expect(cmp.Diff(want, got)).To(BeEmpty())

		// I-sdma, for comparison: the NI forwards from its receive
		// buffer; the inner hosts only return the buffer.
		got, niLast := oneMulticast(fw.SDMA, false)
		want = []hopCounts{
			{Fetches: 1, DataSends: 2, PIOBytes: 8 + 32, DMAReadByte: 16},
			{DataSends: 2, PIOBytes: 16}, {DataSends: 1, PIOBytes: 16},
			{PIOBytes: 16}, {PIOBytes: 16}, {PIOBytes: 16},
		}
		Expect(cmp.Diff(want, got)).To(BeEmpty())
		// Two hops to the last receiver, one of them through a host:
		// host-level forwarding is later.
		Expect(hmcLast).To(BeNumerically(">", niLast))
		GinkgoWriter.Printf("6 nodes, last receiver: I-sdma-hmc %.2f µs after start, I-sdma %.2f µs\n", us(hmcLast), us(niLast))
	})

	It("forwards by PIO with I-pio-hmc: the data written into the NI send buffer once, no DMA", func() {
		got, _ := oneMulticast(fw.PIO, true)
		// PIO bytes: the data (16) and the descriptors (32 each), plus
		// an inner node's buffer return (16).
		want := []hopCounts{
			{DataSends: 2, PIOBytes: 16 + 32},
			{Forwarded: 1, FwdDescs: 2, DataSends: 2, PIOBytes: 16 + 16 + 2*32},
			{Forwarded: 1, FwdDescs: 1, DataSends: 1, PIOBytes: 16 + 16 + 32},
			{PIOBytes: 16}, {PIOBytes: 16}, {PIOBytes: 16},
		}
		Expect(cmp.Diff(want, got)).To(BeEmpty())
	})

	// «With host-level forwarding a packet or message is not forwarded
	// unless the forwarding host polls or takes an interrupt.» 4 PPro
	// nodes with interrupts: node 1 (node 3's parent in root 0's binary
	// tree) computes for 500 µs without polling, so node 3 gets the
	// packet only after node 1's watchdog (70 µs, MY-P26) raises the
	// signal and the signal handler forwards it; with NI forwarding node
	// 3 gets it at once.
	DescribeTable("forwards only when the forwarding host polls or takes a signal",
		func(hmc bool, after, before clock.Time) {
			e := env.New(env.Options{})
			cl := build(e, func(c *lcitb.Config) { c.Nodes, c.Interrupts, c.HostForward = 4, true, hmc })
			var sent, got3 clock.Time
			cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
				s.Compute(2000)
				sent = s.Now()
				s.Multicast([]byte("0123456789abcdef"), 1)
			})
			var signals int
			cl.Nodes[1].Host.OnSignal(func(*lcilib.Seq, *lcilib.Msg) { signals++ })
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) { s.Compute(100_000) })
			cl.Nodes[2].Host.Run(func(s *lcilib.Seq) { s.Recv(nil) })
			cl.Nodes[3].Host.Run(func(s *lcilib.Seq) { s.Recv(func(s *lcilib.Seq, _ *lcilib.Msg) { got3 = s.Now() }) })
			runAll(e)
			GinkgoWriter.Printf("hmc %v: node 3 after %.2f µs\n", hmc, us(got3-sent))
			Expect(signals).To(Equal(1))
			Expect(got3 - sent).To(BeNumerically(">", after))
			Expect(got3 - sent).To(BeNumerically("<", before))
		},
		// Not before the watchdog's 70 µs and the signal's 4000 cycles
		// (20 µs at 200 MHz) on top of the first hop (125.22 µs when
		// written); well before node 1's compute ends (500 µs).
		Entry("I-sdma-hmc: after node 1's signal", true, 90*clock.Microsecond, 200*clock.Microsecond),
		// Two NI hops of about 10 µs (20.23 µs when written).
		Entry("I-sdma: at once, the NI forwards", false, clock.Time(0), 30*clock.Microsecond),
	)

	// Node 1 has no free send buffer when root 0's multicast reaches it:
	// its 90 sends to node 2, which computes for 2 ms before it polls,
	// fill node 2's 64 host slots and its W = 4 receive buffers for node
	// 1, and the next 16 hold node 1's 16 send buffers (blocked on
	// credits) while its Send of the 83rd waits for one (from about 770
	// µs when written: the window's round trips pace the sends). The multicast, found by that
	// wait, goes to the upcall at once and is queued for forwarding; it
	// is forwarded to node 3 (node 1's child in root 0's tree) once a send
	// completion frees a buffer, ahead of the waiting Send, i.e. after
	// node 2 starts to poll.
	It("queues a multicast found with no send buffer free, passes it to the upcall, and forwards it when a buffer is free", func() {
		e := env.New(env.Options{})
		cl := build(e, func(c *lcitb.Config) { c.Nodes, c.HostForward = 4, true })
		const sends, pause = 90, 400_000 // 2 ms at 200 MHz
		var upcall1, got3 clock.Time
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.Compute(200_000) // 1 ms: node 1 is stuck by then
			s.Multicast([]byte("0123456789abcdef"), 5)
		})
		h1 := cl.Nodes[1].Host
		h1.SetUpcall(func(s *lcilib.Seq, m *lcilib.Msg) {
			Expect(m.Type).To(BeEquivalentTo(fw.TypeMcast))
			upcall1 = s.Now()
		})
		h1.Run(func(s *lcilib.Seq) {
			for i := range sends {
				s.Send(2, []byte("data"), uint32(i))
			}
		})
		n2 := 0
		cl.Nodes[2].Host.Run(func(s *lcilib.Seq) {
			s.Compute(pause)
			for range sends + 1 {
				s.Recv(func(*lcilib.Seq, *lcilib.Msg) { n2++ })
			}
		})
		cl.Nodes[3].Host.Run(func(s *lcilib.Seq) {
			s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
				Expect(m.Src).To(Equal(0))
				Expect(string(m.Data)).To(Equal("0123456789abcdef"))
				got3 = s.Now()
			})
		})
		runAll(e)
		Expect(n2).To(Equal(sends + 1))
		Expect(h1.Forwarded).To(BeEquivalentTo(1))
		Expect(h1.FwdDescs).To(BeEquivalentTo(1))
		GinkgoWriter.Printf("node 1's upcall at %.2f µs, node 3 got it at %.2f µs\n", us(upcall1), us(got3))
		Expect(upcall1).To(BeNumerically(">", 1000*clock.Microsecond))
		Expect(upcall1).To(BeNumerically("<", 2000*clock.Microsecond), "the upcall does not wait for the forward")
		Expect(got3).To(BeNumerically(">", 2000*clock.Microsecond), "the forward waits for node 2 to poll")
	})

	DescribeTable("passes randomised traffic with multicasts, every checker on",
		func(pl lcilib.Platform, v fw.Variant, tree fw.Tree, seed uint64) {
			c := lcitb.DefaultConfig()
			c.Nodes, c.Platform, c.Variant, c.Tree, c.HostForward = 8, pl, v, tree, true
			Expect(c.FirmwareConfig().Name()).To(HaveSuffix("-hmc"))
			e := env.New(env.Options{Seed: seed})
			t := uniform(30, 512)
			t.McastPct = 40
			r, err := lcitb.RunTraffic(e, c, t)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Multicasts).To(BeNumerically(">", 0))
			Expect(r.MulticastsDone).To(Equal(r.Multicasts))
			Expect(r.Deliveries).To(Equal(r.Unicasts + r.Multicasts*7))
			// The Multicast module never ran.
			for _, cv := range r.Coverage {
				if cv.Machine == "N0.NI.FW.mc" {
					Expect(cv.Count).To(BeZero())
				}
			}
		},
		Entry("8 PPro nodes, I-sdma-hmc, binary", lcilib.PPro(), fw.SDMA, fw.Binary, uint64(11)),
		Entry("8 PPro nodes, I-pio-hmc, binary", lcilib.PPro(), fw.PIO, fw.Binary, uint64(12)),
		Entry("8 P3 nodes, I-sdma-hmc, binomial", lcilib.P3(), fw.SDMA, fw.Binomial, uint64(13)),
		Entry("8 P3 nodes, I-pio-hmc, binary", lcilib.P3(), fw.PIO, fw.Binary, uint64(14)),
	)

	It("lci.hmcearly: a forward's buffer reported free after its first child's send is sent again after that (lci.refs)", func() {
		c := lcitb.DefaultConfig()
		c.Nodes, c.HostForward = 8, true
		t := uniform(30, 512)
		t.McastPct = 40
		e := env.New(env.Options{Seed: 11, Mutations: map[string]int{"lci.hmcearly": 1}})
		_, err := lcitb.RunTraffic(e, c, t)
		Expect(err).To(HaveOccurred())
		got := map[string][]string{}
		for _, v := range e.Monitor.Violations() {
			got[v.Check] = append(got[v.Check], v.Msg)
		}
		GinkgoWriter.Printf("lci.hmcearly: %d violations by rule: %v\n", len(e.Monitor.Violations()), keysOf(got))
		Expect(got["lci.refs"]).NotTo(BeEmpty())
		for _, m := range got["lci.refs"] {
			Expect(m).To(MatchRegexp(`^send buffer \d+ sent to node \d after its send completion was reported$`))
		}
	})
})

// keysOf lists a map's keys, sorted.
func keysOf(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
