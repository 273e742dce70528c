package lcitb_test

import (
	"fmt"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// message is one host message of the fault specs, the conservation
// checker's key.
type message struct {
	src, dst int
	tag      uint32
}

func (m message) String() string {
	return fmt.Sprintf("message %d (node %d to %d)", m.tag, m.src, m.dst)
}

// A planned link fault in the base implementation (issue 17 section 2,
// «I-sdma/I-pio: a drop gives a clear error, not a hang»). LCI's base
// implementation «assumes reliable network hardware with FIFO
// communication paths», keeps no sequence numbers, and «aborts if it
// detects that one of these assumptions has been violated (e.g., if it
// discovers a bad CRC on a packet)» (lci-myrinet-cluster-protocols.txt
// section 4): a corrupted packet gives the firmware's lci.crc report; a
// lost one is noticed by nothing in the firmware, so the run ends when
// its events run out, with the deadlock watchdog naming the host left
// waiting and the conservation checker the message that never came.
var _ = Describe("LCI base implementation against a planned link fault", func() {
	// node0 is node 0's link direction to the network; midPath the
	// switch-to-switch direction of the route from node 0 to node 1 on the
	// PPro 3-D grid (host 0 to Switch[0], LinkX[0] A to B, Switch[1] to
	// host 1), between two wormhole switches' STOP/GO ports.
	node0 := func(cl *lcitb.Cluster) *link.Dir { return cl.Nodes[0].Out }
	midPath := func(cl *lcitb.Cluster) *link.Dir {
		for _, l := range cl.Net.Links {
			if d := l.From(link.A); d.Name() == "Net.LinkX[0].AB" {
				return d
			}
		}
		Fail("no link Net.LinkX[0]")
		return nil
	}
	// run builds 2 PPro nodes (variant v) where the direction chosen by
	// where has the plan, sends 4 messages from node 0 to node 1 (the
	// direction's packets 1..4: nothing else goes from node 0 to node 1)
	// and receives them at node 1, with a
	// conservation checker from the send to the upcall. It returns the
	// tags received, the run's error, the checker's violations after
	// Finish, and the cluster.
	type outcome struct {
		got  []uint32
		err  error
		res  string
		viol []check.Violation
		cl   *lcitb.Cluster
		recs []trace.Record
		dir  *link.Dir // the direction with the plan
	}
	run := func(v lci.Variant, interrupts bool, where func(*lcitb.Cluster) *link.Dir, plan link.FaultPlan) outcome {
		c := lcitb.DefaultConfig()
		c.Variant, c.Interrupts = v, interrupts
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Trace: true, Seed: 1})
		cl, err := lcitb.Build(e, c)
		Expect(err).NotTo(HaveOccurred())
		o := outcome{dir: where(cl)}
		Expect(o.dir.SetFaultPlan(plan)).To(Succeed())
		cons := check.NewConservation[message](e.Monitor, "N0->N1 messages")
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range uint32(4) {
				cons.Sent(s.Now(), message{0, 1, i})
				s.Send(1, []byte(fmt.Sprintf("message %d", i)), i)
			}
		})
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			for range 4 {
				s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
					cons.Received(s.Now(), message{m.Src, 1, m.Tag})
					o.got = append(o.got, m.Tag)
				})
			}
		})
		res, err := e.Run()
		cl.Close()
		// The run ended by itself, its events run out, well before the
		// vtest time limit: no hang.
		Expect(res.Stopped).To(BeFalse())
		Expect(res.End).To(BeNumerically("<", 200*clock.Microsecond))
		cons.Finish(e.Now())
		o.err, o.viol, o.cl, o.recs = err, e.Monitor.Violations(), cl, e.Trace.Records()
		return o
	}
	// rules returns the violations' rules in order.
	rules := func(vs []check.Violation) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Check)
		}
		return out
	}
	// linkRecords returns the link.packet and link.drop records of a
	// direction, as "kind pkt=N" (crc=bad appended).
	linkRecords := func(recs []trace.Record, path string) []string {
		var out []string
		for _, r := range recs {
			if r.Path == path && (r.Kind == "link.packet" || r.Kind == "link.drop") {
				p, _ := r.Get("pkt")
				s := r.Kind + " pkt=" + p
				if crc, ok := r.Get("crc"); ok {
					s += " crc=" + crc
				}
				out = append(out, s)
			}
		}
		return out
	}

	DescribeTable("a dropped data packet: the run ends, the watchdog names the waiting host and the checker the lost message",
		func(v lci.Variant, interrupts bool, where func(*lcitb.Cluster) *link.Dir) {
			o := run(v, interrupts, where, link.FaultPlan{{N: 2, Kind: link.Drop}})
			out := o.dir
			Expect(linkRecords(o.recs, out.Name())).To(Equal([]string{
				"link.packet pkt=1", "link.drop pkt=2", "link.packet pkt=3", "link.packet pkt=4"}))
			Expect(out.Stats().Dropped).To(Equal(uint64(1)))
			// The firmware delivers what comes, in order, without a
			// sequence check: messages 0, 2 and 3 arrive, node 1's host
			// waits for its 4th.
			Expect(o.got).To(Equal([]uint32{0, 2, 3}))
			Expect(o.err).To(MatchError(ContainSubstring("deadlock or unfinished work: the simulation ran out of events at")))
			Expect(o.err.Error()).To(MatchRegexp(`\n  N1\.CPU: at op \d+, a wait`))
			Expect(o.err.Error()).To(ContainSubstring("\n  oldest outstanding transaction: message 1 (node 0 to 1), since "))
			Expect(o.err.Error()).To(MatchRegexp(
				`\n  N0->N1 messages: 1 outstanding \(4 sent, 3 received, 0 dropped\), the oldest message 1 \(node 0 to 1\) sent at \S+`))
			Expect(rules(o.viol)).To(Equal([]string{"deadlock", "lost"}))
			Expect(o.viol[1].Msg).To(Equal("1 of 4 sent never arrived (first: [message 1 (node 0 to 1)])"))
		},
		Entry("I-sdma", lci.SDMA, false, node0),
		Entry("I-pio", lci.PIO, false, node0),
		// The polling watchdog's timer does not keep the run alive.
		Entry("I-sdma with interrupts", lci.SDMA, true, node0),
		Entry("I-pio with interrupts", lci.PIO, true, node0),
		// Lost between two switches: the downstream switch never sees
		// the packet, and the later ones pass its STOP/GO port.
		Entry("I-sdma, lost between two switches", lci.SDMA, false, midPath),
		Entry("I-pio, lost between two switches", lci.PIO, false, midPath),
	)

	DescribeTable("a corrupted data packet: the firmware's CRC check aborts",
		func(v lci.Variant, where func(*lcitb.Cluster) *link.Dir) {
			o := run(v, false, where, link.FaultPlan{{N: 2, Kind: link.Corrupt}})
			out := o.dir
			Expect(linkRecords(o.recs, out.Name())).To(Equal([]string{
				"link.packet pkt=1", "link.packet pkt=2 crc=bad", "link.packet pkt=3", "link.packet pkt=4"}))
			Expect(out.Stats().Corrupted).To(Equal(uint64(1)))
			Expect(out.Stats().CRCErrors).To(Equal(uint64(1)))
			// The switches forward the Bad tail as it is: node 1's link
			// records it bad too, but only the corrupting hop counts a
			// CRC error.
			in := o.cl.Nodes[1].In
			Expect(linkRecords(o.recs, in.Name())[1]).To(Equal("link.packet pkt=2 crc=bad"))
			if in != out {
				Expect(in.Stats().CRCErrors).To(BeZero())
			}
			// Node 1's NI takes the Bad packet off its link (the switch
			// forwards a packet whatever its CRC) and reports it; it aborts,
			// so nothing after message 0 reaches its host.
			Expect(o.got).To(Equal([]uint32{0}))
			Expect(rules(o.viol)).To(Equal([]string{"lci.crc", "deadlock", "lost"}))
			Expect(o.viol[0].Path).To(Equal("N1.NI.FW"))
			Expect(o.viol[0].Msg).To(Equal(fmt.Sprintf("packet 2 from node 0 (25 bytes; its header, not to be trusted, reads type 0, sequence 2) "+
				"failed the CRC check on link %s: the base implementation assumes a reliable network and aborts", o.cl.Nodes[1].In.Name())))
			Expect(o.err).To(MatchError(ContainSubstring("N1.NI.FW [lci.crc] packet 2 from node 0")))
			Expect(o.err.Error()).To(ContainSubstring("deadlock or unfinished work"))
			Expect(o.viol[2].Msg).To(Equal("3 of 4 sent never arrived (first: [message 1 (node 0 to 1) message 2 (node 0 to 1) message 3 (node 0 to 1)])"))
		},
		Entry("I-sdma", lci.SDMA, node0),
		Entry("I-pio", lci.PIO, node0),
		Entry("I-sdma, corrupted between two switches", lci.SDMA, midPath),
	)
})
