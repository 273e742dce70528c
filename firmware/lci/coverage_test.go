package lci_test

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Coverage of the module tables", func() {
	It("exercises every row in one mixed scenario", func() {
		// Node 1 of 8 under I-sdma with the watchdog on: an inner node
		// of node 0's binary tree (children 3 and 4), the root of its
		// own (children 2 and 3).
		cfg := testConfig()
		cfg.Interrupts = true
		r := newRig(cfg, 1, 8)
		r.hostInit(8)
		r.boot()
		r.autoReturn = true
		w := cfg.Window()

		By("hsq: fetches, a poll while fetching, packets without data in both states, forwards while fetching")
		for i := range 4 {
			Expect(r.host.Write(sendData+uint64(64*i), le4(uint32(i+1)))).To(Succeed())
		}
		r.sendFrom(lci.Desc{Type: lci.TypeData, Dst: 2, Len: 4, Buf: 0}, sendData) // hsq IDLE poll, IDLE fetch
		for i := 1; i < 4; i++ {
			d := lci.Desc{Type: lci.TypeData, Dst: 2, Len: 4, Buf: uint32(i)}
			r.writeFetch(d, sendData+uint64(64*i))
			r.writeDesc(d)
		}
		r.writeDesc(lci.Desc{Type: lci.TypeData, Dst: 6, Len: 0, Buf: 4})
		r.pokeSendQ() // FETCH poll, FETCH fetch x3, FETCH pass
		Expect(r.state("hsq")).To(BeEquivalentTo("FETCH"))
		// A multicast of node 0's tree: its two forwarding descriptors
		// (to nodes 3 and 4) are taken while the fetches run (FETCH
		// local) and wait behind the host's packets.
		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1}, payload(4, 0))
		Expect(r.state("hsq")).To(BeEquivalentTo("FETCH"))
		r.settle() // FETCH fetched, FETCH drained
		Expect(r.state("hsq")).To(BeEquivalentTo("IDLE"))
		r.send(lci.Desc{Type: lci.TypeData, Dst: 6, Len: 0, Buf: 5}) // IDLE pass
		r.settle()
		Expect(r.ni.sends).To(HaveLen(8))
		Expect(r.p.Credits(2)).To(Equal(0))

		By("rq and hrq: every receive buffer held while the host keeps its buffers")
		r.autoReturn = false
		// Node 2's F&A replies return the credits of the packets it has
		// released by then (reply k carries packet k-1's).
		for k := range 4 {
			r.arrive(lci.Header{Type: lci.TypeFARep, Src: 2, Seq: uint32(k), Arg: uint32(k), Credits: uint16(min(k, 1))}, nil)
		}
		Expect(r.p.Credits(2)).To(Equal(3))
		for _, src := range []int{0, 2, 3, 4, 5, 6, 7} {
			for seq := 1; seq <= w; seq++ {
				r.arrive(lci.Header{Type: lci.TypeData, Src: uint8(src), Seq: uint32(seq)}, payload(8, byte(src)))
			}
		}
		Expect(r.state("rq")).To(BeEquivalentTo("STARVED"))
		Expect(r.state("hrq")).To(BeEquivalentTo("WAIT"))
		// The first 8 packets took the host's 8 slots; 24 wait for more.
		r.settle()
		Expect(r.state("rq")).To(BeEquivalentTo("ARMED"))
		// Each batch of 8 returned slots takes 8 of the 24 waiting.
		for range 3 {
			Expect(r.state("hrq")).To(BeEquivalentTo("WAIT"))
			r.returnSlots(len(r.consumed))
			r.settle()
		}
		Expect(r.state("hrq")).To(BeEquivalentTo("HAVE"))
		Expect(r.freeRecvBufs()).To(Equal("31 receive buffers free"))
		r.returnSlots(len(r.consumed))
		r.autoReturn = true

		By("fc: a blocked destination, releases and an ack while blocked, credits that open it")
		for i := range w + 2 {
			r.writeDesc(lci.Desc{Type: lci.TypeData, Dst: 5, Len: 0, Buf: uint32(i)})
		}
		r.pokeSendQ()
		Expect(r.state("fc")).To(BeEquivalentTo("BLOCKED"))
		sends := len(r.ni.sends)
		r.arrive(lci.Header{Type: lci.TypeData, Src: 6, Seq: uint32(w + 1)}, payload(8, 0))
		r.arrive(lci.Header{Type: lci.TypeData, Src: 6, Seq: uint32(w + 2)}, payload(8, 0))
		r.settle()
		Expect(r.state("fc")).To(BeEquivalentTo("BLOCKED"))
		Expect(r.ni.sends[sends:]).To(ContainElement(WithTransform(func(s sentPkt) lci.Header { return s.Hdr() },
			Equal(lci.Header{Type: lci.TypeAck, Src: 1, Credits: 2}))))
		r.arrive(lci.Header{Type: lci.TypeAck, Src: 5, Credits: 2}, nil)
		Expect(r.state("fc")).To(BeEquivalentTo("OPEN"))
		r.settle()

		By("mc and fa: a multicast to forward, one to send as root, a fetch-and-add")
		r.arrive(lci.Header{Type: lci.TypeMcast, Src: 0, Root: 0, Seq: 1}, payload(16, 0))
		r.settle()
		r.send(lci.Desc{Type: lci.TypeMcast, Len: 0, Buf: 7})
		r.settle()
		r.arrive(lci.Header{Type: lci.TypeFAReq, Src: 7, Seq: 1, Arg: 9}, nil)
		r.settle()
		Expect(r.p.FetchAddValue()).To(BeEquivalentTo(9))

		By("timer: the watchdog expires with every buffer back")
		Expect(r.state("timer")).To(BeEquivalentTo("ON"))
		r.handle(firmware.HWEvent{Kind: firmware.Timer})
		Expect(r.ni.irqs).To(Equal(0))

		Expect(r.p.Idle()).To(BeTrue(), r.p.State())
		r.clean()

		ms := r.p.Machines()
		var table strings.Builder
		for _, m := range ms {
			for _, c := range m.Coverage() {
				fmt.Fprintf(&table, "%-10s %-8s %-12s %d\n", c.Machine, c.From, c.On, c.Count)
			}
		}
		AddReportEntry("coverage", table.String())
		// At least every row of the send, flow control, receive, host
		// buffer and DMA modules; in fact every row of every module.
		Expect(firmware.Uncovered(r.m("hsq"), r.m("fc"), r.m("tx"), r.m("rq"), r.m("hrq"), r.m("dma"))).To(BeEmpty())
		Expect(firmware.Uncovered(ms...)).To(BeEmpty())
	})
})
