package lci_test

import (
	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// newRigWith is newRig with test-only faults switched on.
func newRigWith(cfg lci.Config, node, nodes int, mut map[string]int) *rig {
	e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Mutations: mut})
	p, err := lci.New(e, "FW", cfg, node, nodes, "link")
	Expect(err).NotTo(HaveOccurred())
	return &rig{e: e, ni: newFakeNI(node, nodes, sramBytes), p: p, cfg: cfg, l: p.Layout(), clk: clock.MHz(33),
		host: mem.NewStorage(hostBytes), descSeq: 1, freeSeq: 1}
}

// pioRig is an I-pio NI of testConfig (W = 4) booted with host buffers.
func pioRig(node int, slots int, mut map[string]int) *rig {
	cfg := testConfig()
	cfg.Variant = lci.PIO
	r := newRigWith(cfg, node, 8, mut)
	r.hostInit(slots)
	r.boot()
	return r
}

// The flow-control checkers against faults of the flow control itself,
// with two NIs: node 0 sends to node 1, whose packets are handed over by
// the spec (the link).
var _ = Describe("Flow-control checkers against mutations", func() {
	// sendBurst has node 0 send n empty packets to node 1 and returns the
	// packets it put on the wire (nothing comes back from node 1).
	sendBurst := func(s *rig, n int) []sentPkt {
		for i := range n {
			s.writeDesc(lci.Desc{Type: lci.TypeData, Dst: 1, Len: 8, Buf: uint32(i)})
		}
		s.pokeSendQ()
		s.settle()
		return s.ni.sends
	}
	// deliverAll hands the packets to node 1, whose host has no buffers:
	// every packet stays in an NI receive buffer.
	deliverAll := func(sends []sentPkt) *rig {
		r := pioRig(1, 0, nil)
		for _, s := range sends {
			h := s.Hdr()
			r.arriveLink(0, h, s.Bytes[lci.HeaderBytes:], false)
		}
		return r
	}

	It("lci.overdraw: a sender with W+1 packets in flight fills W+1 of the receiver's buffers", func() {
		// Without the fault node 0 sends W = 4 and blocks the fifth and
		// sixth: the receiver holds 4, its window.
		s := pioRig(0, 8, nil)
		sends := sendBurst(s, 6)
		Expect(sends).To(HaveLen(4))
		s.clean()
		r := deliverAll(sends)
		r.clean()

		// With it node 0 goes one credit below zero: the fifth packet
		// leaves, and node 1's window checker sees it.
		s = pioRig(0, 8, map[string]int{"lci.overdraw": 1})
		sends = sendBurst(s, 6)
		Expect(sends).To(HaveLen(5))
		s.clean() // the sender has no checker of its own credits
		r = deliverAll(sends)
		Expect(r.violations()).To(Equal([]string{"lci.window FW: node 0 holds 5 receive buffers, more than its W = 4"}))
	})

	It("lci.extracredit: a receiver that counts a release twice returns a credit never spent", func() {
		// Node 1 receives two packets from node 0 and releases both (its
		// host takes them at once): W/2 = 2 releases make an explicit ack.
		ack := func(mut map[string]int) lci.Header {
			r := pioRig(1, 8, mut)
			r.autoReturn = true
			r.arrive(lci.Header{Type: lci.TypeData, Src: 0, Seq: 1}, payload(8, 0))
			r.arrive(lci.Header{Type: lci.TypeData, Src: 0, Seq: 2}, payload(8, 0))
			r.settle()
			Expect(r.ni.sends).To(HaveLen(1))
			r.clean()
			return r.ni.lastSend().Hdr()
		}
		Expect(ack(nil)).To(Equal(lci.Header{Type: lci.TypeAck, Src: 1, Credits: 2}))
		bad := ack(map[string]int{"lci.extracredit": 2})
		Expect(bad).To(Equal(lci.Header{Type: lci.TypeAck, Src: 1, Credits: 3}))

		// Node 0 spent two credits on those packets: the honest ack brings
		// it back to W, the inflated one beyond.
		for _, h := range []lci.Header{{Type: lci.TypeAck, Src: 1, Credits: 2}, bad} {
			s := pioRig(0, 8, nil)
			Expect(sendBurst(s, 2)).To(HaveLen(2))
			s.arrive(h, nil)
			if h == bad {
				Expect(s.violations()).To(Equal([]string{"lci.credits FW: node 1 returned credits beyond the window: 5 > W = 4"}))
			} else {
				s.clean()
				Expect(s.p.Credits(1)).To(Equal(4))
			}
		}
	})
})
