package lcitb_test

import (
	"os"
	"strings"

	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rxGolden keeps the records of I-nirx's recovery a reviewer reads: the
// packets each NI sends and receives (ni.sent, ni.received), the link's
// loss of a packet (link.drop), the protocol's events (lci.rx: a drop and
// why, a go-back, a resend, a retransmission request) and the firmware
// transitions of the retransmission, fetch-and-add and multicast modules.
func rxGolden(recs []trace.Record) []trace.Record {
	var out []trace.Record
	for _, r := range recs {
		switch {
		case r.Kind == "lci.rx", r.Kind == "link.drop", r.Kind == "ni.sent", r.Kind == "ni.received",
			r.Kind == "fw.state" && (strings.HasSuffix(r.Path, ".rx") || strings.HasSuffix(r.Path, ".fa") || strings.HasSuffix(r.Path, ".mc")):
			out = append(out, r)
		}
	}
	return out
}

// rxHeader is a directed-fault golden's header: what every one shares,
// then its own lines.
func rxHeader(own ...string) []string {
	return append([]string{
		"I-nirx (firmware/lci/rx.go) on the PPro platform: W = 4, so a receiver acknowledges at once",
		"after W/2 = 2 packets in order, else when its delayed-ack timer expires, 70 us (2310 LANai",
		"cycles of 30.303 ns: lci.RxAckDelay, the PPro watchdog) after the first unacknowledged one; a",
		"sender resends its whole window 700 us (23100 cycles: lci.RxRetransmit, 10 x 70 us) after",
		"the transmit handler of its oldest unacknowledged packet. Timers count from the end of the",
		"handler that sets them (its commands commit there), so they fire a handler's length (up to",
		"~100 cycles) after the deadline the firmware computes, and lazily: a deadline that passes",
		"with nothing due is not cancelled, its tick finds nothing and the run ends after it.",
		"Records: packets the NIs send and receive (ni.sent at the end of the packet on the link;",
		"16-byte header + payload), link.drop, the protocol's events (lci.rx) and the transitions",
		"of the rx machine (acked: an acknowledgment in a header, RxAck 12 instructions = 15",
		"cycles at CPI 1.25; tick: the shared timer, Timer 20 = 25), fa and mc.",
	}, own...)
}

// rxDirected builds nodes PPro nodes running I-nirx, traced, gives the
// direction out(cluster) the plan, and returns the cluster to program.
func rxDirected(nodes int, out func(*lcitb.Cluster) *link.Dir, plan link.FaultPlan) (*lcitb.Cluster, func() []trace.Record) {
	c := lcitb.DefaultConfig()
	c.Nodes, c.Reliability = nodes, fw.NIRetransmit
	return rxDirectedConfig(c, out, plan)
}

// rxDirectedConfig is rxDirected on configuration c.
func rxDirectedConfig(c lcitb.Config, out func(*lcitb.Cluster) *link.Dir, plan link.FaultPlan) (*lcitb.Cluster, func() []trace.Record) {
	e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Trace: true, Seed: 1})
	cl, err := lcitb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	if out != nil {
		Expect(out(cl).SetFaultPlan(plan)).To(Succeed())
	}
	return cl, func() []trace.Record {
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		for _, n := range cl.Nodes {
			Expect(n.FW.Idle()).To(BeTrue(), n.FW.State())
		}
		return rxGolden(e.Trace.Records())
	}
}

var _ = Describe("I-nirx goldens: directed faults", Label("golden"), func() {
	It("fails when a golden is wrong", func() {
		data, err := os.ReadFile("testdata/nirx_lost_ack.trace")
		Expect(err).NotTo(HaveOccurred())
		// The duplicate taken as new.
		bad := strings.Replace(string(data), "peer=0 seq=1 why=duplicate", "peer=0 seq=1 why=order", 1)
		Expect(bad).NotTo(Equal(string(data)))
		path := GinkgoT().TempDir() + "/nirx_lost_ack.trace"
		Expect(os.WriteFile(path, []byte(bad), 0o644)).To(Succeed())
		if os.Getenv(trace.UpdateEnv) != "" {
			Skip("regenerating goldens")
		}
		cl, run := rxDirected(2, func(cl *lcitb.Cluster) *link.Dir { return cl.Nodes[1].Out }, link.FaultPlan{{N: 1, Kind: link.Drop}})
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.As("boot-wait").Compute(2000)
			s.Send(1, []byte("0123456789abcdef"), 7)
		})
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) { s.Recv(func(*lcilib.Seq, *lcilib.Msg) {}) })
		Expect(vtest.Golden(path, run())).To(MatchError(ContainSubstring("why=duplicate")))
	})

	It("recovers a lost data packet by timeout and go-back-N", func() {
		cl, run := rxDirected(2, func(cl *lcitb.Cluster) *link.Dir { return cl.Nodes[0].Out }, link.FaultPlan{{N: 2, Kind: link.Drop}})
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.As("boot-wait").Compute(2000)
			for tag := uint32(1); tag <= 3; tag++ {
				s.Send(1, []byte("0123456789abcdef"), tag)
			}
		})
		var tags []uint32
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			for range 3 {
				s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) { tags = append(tags, m.Tag) })
			}
		})
		recs := run()
		Expect(tags).To(Equal([]uint32{1, 2, 3}))
		Expect(vtest.Golden("testdata/nirx_lost_data.trace", recs, rxHeader(
			"A lost data packet: node 0 sends three 16-byte messages (tags 1-3, sequences 1-3) to node",
			"1; the plan drops node 0's second packet on its link to its switch (link.drop pkt=2 on",
			"Net.LinkH[0].AB). Sequence 1 arrives in order; 3 arrives where 2 is due and is dropped",
			"(why=order: go-back-N keeps nothing out of order). Node 1's delayed-ack timer, started by",
			"sequence 1 (RecvDone at 19.7 us), ticks at 92.6 us and the explicit ack (16 bytes, ack = 1)",
			"frees sequence 1 at node 0 (acked, 96.2 us). Node 0's timer, set for sequence 1's",
			"deadline, ticks at 719.1 us with nothing due and is set for sequence 2's: at 730.1 us node",
			"0 goes back to 2 (why=timeout) and resends 2 and 3 (resend at each transmit handler). Both",
			"arrive in order, which makes W/2: node 1 acknowledges at once (ni.sent dst=0 at 741.1 us)",
			"and node 0 frees both (acked). Lazy ticks end the run: node 1's delayed-ack deadline from",
			"sequence 2's arrival (the half-window ack went first) and node 0's from the resend. Node 1's",
			"process gets tags 1, 2, 3 in order (the spec asserts it).")...)).To(Succeed())
	})

	It("recovers a lost acknowledgment: the resent packet is a duplicate, dropped and acknowledged", func() {
		cl, run := rxDirected(2, func(cl *lcitb.Cluster) *link.Dir { return cl.Nodes[1].Out }, link.FaultPlan{{N: 1, Kind: link.Drop}})
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.As("boot-wait").Compute(2000)
			s.Send(1, []byte("0123456789abcdef"), 7)
		})
		n := 0
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) { s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) { n++ }) })
		recs := run()
		Expect(n).To(Equal(1))
		Expect(cl.Nodes[1].FW.RxStats().Duplicates).To(BeEquivalentTo(1))
		Expect(vtest.Golden("testdata/nirx_lost_ack.trace", recs, rxHeader(
			"A lost acknowledgment: node 0 sends one 16-byte message to node 1, which delivers it; node",
			"1's delayed ack (its timer ticks 70 us + a handler after the arrival, at 92.5 us) is its first",
			"packet and the plan drops it (link.drop on Net.LinkH[1].AB). Node 0's timeout, 700 us after",
			"its transmit handler, resends sequence 1 (718.97 us); node 1 already has it: dropped",
			"(why=duplicate) and acknowledged at once (ni.sent dst=0 at 725.8 us), which frees it at node",
			"0 (acked). The message reaches node 1's process once (the spec asserts it, and one",
			"duplicate in node 1's counters). The last tick is node 0's lazy deadline from the resend.")...)).To(Succeed())
	})

	It("adds a resent fetch-and-add request once", func() {
		// Node 1's first packet is its reply; it is lost.
		cl, run := rxDirected(2, func(cl *lcitb.Cluster) *link.Dir { return cl.Nodes[1].Out }, link.FaultPlan{{N: 1, Kind: link.Drop}})
		var old uint32 = 99
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.As("boot-wait").Compute(2000)
			old = s.FetchAndAdd(1, 5)
		})
		recs := run()
		Expect(old).To(BeEquivalentTo(0))
		Expect(cl.Nodes[1].FW.FetchAddValue()).To(BeEquivalentTo(5))
		Expect(vtest.Golden("testdata/nirx_resent_fa.trace", recs, rxHeader(
			"A resent fetch-and-add request, added once: node 0 adds 5 to node 1's variable (a 16-byte",
			"request with the addend in its header, sequence 1 of 0 -> 1). Node 1's fa module serves it",
			"(FetchAdd 24 = 30 cycles) and replies with the old value 0 in a control buffer (sequence 1",
			"of 1 -> 0, carrying ack = 1 for the request); the plan drops the reply, node 1's first",
			"packet. Node 1's delayed-ack tick at 89.5 us finds nothing: the reply carried the ack.",
			"Node 0 never saw it: its timeout resends the request (714.9 us); node 1's own timeout",
			"resends the reply (716.5 us). The resent request is a duplicate at node 1: dropped, not",
			"added again, and acknowledged at once; the acknowledgment goes ahead of the queued reply",
			"(ni.sent at 719.1 us from control buffer 0xe40, the reply at 723.9 us from 0xe60). Node 0",
			"frees its request on the ack (acked) and takes the reply (acked again, nothing new); it",
			"returns 0 to the process and its delayed ack (tick at 794.2 us, ni.sent at 797.3 us) frees",
			"the reply at node 1. Node 1's variable is 5 (the spec asserts it). The last tick is node 1's",
			"lazy deadline from the reply's resend.")...)).To(Succeed())
	})

	It("recovers a multicast forward corrupted in the middle of the tree", func() {
		// Binary tree rooted at 0 over 4 nodes: 0 -> 1, 2; 1 -> 3. Node
		// 1's first packet is its forward to node 3; it is corrupted.
		cl, run := rxDirected(4, func(cl *lcitb.Cluster) *link.Dir { return cl.Nodes[1].Out }, link.FaultPlan{{N: 1, Kind: link.Corrupt}})
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.As("boot-wait").Compute(2000)
			s.Multicast([]byte("0123456789abcdef"), 9)
		})
		got := make([]int, 4)
		for i := 1; i < 4; i++ {
			cl.Nodes[i].Host.Run(func(s *lcilib.Seq) { s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) { got[i]++ }) })
		}
		recs := run()
		Expect(got).To(Equal([]int{0, 1, 1, 1}))
		Expect(cl.Nodes[3].FW.RxStats().CRCDrops).To(BeEquivalentTo(1))
		Expect(vtest.Golden("testdata/nirx_corrupt_forward.trace", recs, rxHeader(
			"A corrupted forward in the middle of the tree: node 0 multicasts 16 bytes to 4 nodes",
			"along the binary tree rooted at 0 (0 -> 1, 2; 1 -> 3). Nodes 1 and 2 take the packet (mc)",
			"and node 1 forwards it to node 3 from its receive buffer (ni.sent sram=0x9840, a receive",
			"buffer); the plan corrupts it, node 1's first packet, on node 1's link: it reaches node 3",
			"with a bad CRC (bad=1) and is dropped (why=crc; its header is not trusted, so seq=0). Nodes",
			"1 and 2's delayed acks (ticks at 96.3 and 95.6 us) free the root's two packets (acked at",
			"node 0). Node 1's timeout, 700 us after the forward's transmit handler, resends it from the",
			"same receive buffer, which it held for the child (723.1 us); node 3 takes it (mc: no",
			"children) and its delayed ack frees the buffer at node 1 (acked, 802.8 us). Each of nodes",
			"1-3 delivers the message once (the spec asserts it). The other ticks are lazy deadlines.")...)).To(Succeed())
	})

	It("drops a packet it has no receive buffer for and asks for it again when a buffer is free", func() {
		// A pool small enough to run dry in a few packets: 8 receive
		// buffers, 4 of them spare, reserved for one other node, so
		// W = (8 - 4) / 1 = 4 as on the 64-node PPro; 2 host slots.
		c := lcitb.DefaultConfig()
		c.Nodes, c.Reliability = 2, fw.NIRetransmit
		c.ClusterSize, c.HostSlots = 2, 2
		c.Platform.RecvBufs = 8
		cl, run := rxDirectedConfig(c, nil, nil)
		var tags []uint32
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.As("boot-wait").Compute(2000)
			for tag := uint32(1); tag <= 10; tag++ {
				s.Send(1, []byte("0123456789abcdef"), tag)
			}
			// Polls (its send completions need its host slots) until
			// node 1 has everything.
			s.RecvOr(func(*lcilib.Seq, *lcilib.Msg) {}, func() bool { return len(tags) == 10 })
		})
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			s.As("busy").Compute(100_000)
			for range 10 {
				s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) { tags = append(tags, m.Tag) })
			}
		})
		recs := run()
		Expect(tags).To(Equal([]uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}))
		rx0, rx1 := cl.Nodes[0].FW.RxStats(), cl.Nodes[1].FW.RxStats()
		Expect(rx1.NoBufDrops).To(BeEquivalentTo(1))
		Expect(rx1.NacksSent).To(BeEquivalentTo(1))
		Expect(rx0.NacksReceived).To(BeEquivalentTo(1))
		Expect(rx0.Timeouts).To(BeZero())
		Expect(rx0.Retransmitted).To(BeEquivalentTo(1))
		Expect(vtest.Golden("testdata/nirx_no_buffer.trace", recs, rxHeader(
			"A no-buffer drop: node 1's pool is 8 receive buffers, 4 spare, reserved for one sender",
			"(ClusterSize 2, so W = (8 - 4) / 1 = 4), and its host has 2 receive slots. Node 0 sends ten",
			"16-byte messages (tags and sequences 1-10); node 1's process computes 100,000 cycles (500",
			"us at 200 MHz) before it polls. Sequences 1 and 2 go to the two host slots (their buffers",
			"are free again; half-window ack at 42.0 us); 3-9 arrive in order and are acknowledged (a",
			"half-window ack after every second one, at 78.6, 85.5 and 101.2 us, and 9's by its",
			"delayed-ack timer at 176.6 us) but stay in 7 buffers waiting for a host slot: the",
			"receiver acknowledges what it has stored. Sequence 10 lands in the eighth, the last free",
			"buffer, which must stay the landing zone: dropped (why=nobuf at 104.3 us), nothing",
			"acknowledged for it. At 508.4 us node 1's process polls, takes a message and hands a",
			"slot back; the NI moves a stored packet to it, which frees a buffer, and at once asks",
			"node 0 for what it dropped (event=nack; a 16-byte retransmission request, ni.sent at",
			"511.0 us), long before node 0's retransmission timeout. Node 0 goes back to 10",
			"(why=request) and resends it (514.5 us); it arrives in order and node 1's delayed ack",
			"(tick at 587.1 us) frees it at node 0. Node 1's process gets tags 1-10 in order; node 1",
			"counts one no-buffer drop and one request, node 0 one request received, one packet",
			"resent and no timeout (the spec asserts them). The other ticks are lazy deadlines.")...)).To(Succeed())
	})
})
