package lcitb_test

import (
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The host library's and the firmware's checkers on randomised traffic
// against the faults they exist to catch. Each runs "8 PPro nodes, I-sdma,
// binary, seed 3" of the randomised table, whose clean run is checked
// there.
var _ = Describe("LCI checkers against mutations, on randomised traffic", func() {
	x := trafficEntries[2]

	// rules returns the violations' messages by rule.
	rules := func(mut map[string]int) (map[string][]string, error) {
		_, e, err := runTraffic(x, mut)
		out := map[string][]string{}
		for _, v := range e.Monitor.Violations() {
			out[v.Check] = append(out[v.Check], v.Msg)
		}
		return out, err
	}

	It("lci.extracredit: a credit returned twice is beyond the window (lci.credits)", func() {
		got, err := rules(map[string]int{"lci.extracredit": 5})
		Expect(err).To(HaveOccurred())
		Expect(got["lci.credits"]).NotTo(BeEmpty())
		for _, m := range got["lci.credits"] {
			Expect(m).To(MatchRegexp(`^node \d returned credits beyond the window: \d+ > W = 4$`))
		}
		// The credit it never spent lets a sender put W+1 packets into
		// a receiver when the timing allows, which the receiver's window
		// checker sees too (seed 3 does once since fetch-and-add
		// requests leave without a DMA fetch); nothing else fires.
		for rule := range got {
			Expect(rule).To(BeElementOf("lci.credits", "lci.window"))
		}
		for _, m := range got["lci.window"] {
			Expect(m).To(MatchRegexp(`^node \d holds 5 receive buffers, more than its W = 4$`))
		}
	})

	It("lci.corrupt: a payload the NI corrupts after the CRC fails the host's data check (lci.data)", func() {
		got, err := rules(map[string]int{"lci.corrupt": 7})
		Expect(err).To(HaveOccurred())
		Expect(got).To(HaveLen(1))
		Expect(len(got["lci.data"])).To(BeNumerically(">=", 10))
		for _, m := range got["lci.data"] {
			Expect(m).To(MatchRegexp(`^packet from \d with tag (\d+): (\d+) bytes arrived, not the \d+ sent \(or different\)$`))
		}
	})

	It("link.lose: a packet lost on a link breaks the FIFO order per sender (lci.order) and leaves its receiver waiting", func() {
		got, err := rules(map[string]int{"link.lose": 50})
		Expect(got["lci.order"]).NotTo(BeEmpty())
		for _, m := range got["lci.order"] {
			Expect(m).To(MatchRegexp(`^packet (\d+) \(type \d\) from node \d arrived where \d+ was due: lost or out of order$`))
		}
		// The receivers poll for the packets that never come until the
		// simulation runs out of events: the watchdog lists them.
		Expect(got["deadlock"]).To(HaveLen(1))
		Expect(err).To(MatchError(ContainSubstring("deadlock or unfinished work: the simulation ran out of events")))
	})

	// An LCI node that never polls: its senders block on its window and
	// every host ends up waiting. The hosts and NIs wait for events (a
	// poll that finds nothing sleeps until the NI writes), so the model
	// falls silent rather than ticking on: the completion watchdog's
	// report, when the events run out, names every waiting unit.
	It("lci.deaf: a node that never polls ends the run with the units left waiting", func() {
		r, e, err := runTraffic(x, map[string]int{"lci.deaf": 1})
		Expect(r.Run.Stopped).To(BeFalse())
		Expect(err).To(MatchError(ContainSubstring("deadlock or unfinished work: the simulation ran out of events at")))
		Expect(err.Error()).To(ContainSubstring("\n  N0.CPU: "))
		Expect(err.Error()).To(ContainSubstring("\n  N1.CPU: "))
		Expect(e.Monitor.Violations()[0].Check).To(Equal("deadlock"))
	})
})

// The FIFO checks in a real system: the 2-node ping-pong of the LogP
// benchmark on FIFOs whose flow-control outputs lie (rtl/fifo's
// mutations). The processor, the bridge and the LANai's SRAM ports are
// among the producers that push as long as CanPush says yes.
var _ = Describe("FIFO checks in an LCI ping-pong against lying FIFOs", func() {
	DescribeTable("fire on the first lie a producer acts on",
		func(mut map[string]int, first string) {
			e := env.New(env.Options{Seed: 1})
			_, err := lcitb.PingPong(e, lcitb.DefaultConfig(), lcitb.DefaultBench())
			Expect(err).NotTo(HaveOccurred())
			e = env.New(env.Options{Seed: 1, Mutations: mut})
			_, err = lcitb.PingPong(e, lcitb.DefaultConfig(), lcitb.DefaultBench())
			Expect(err).To(HaveOccurred())
			v := e.Monitor.Violations()
			Expect(v[0].Path + " [" + v[0].Check + "] " + v[0].Msg).To(Equal(first))
		},
		// Master[1] of the memory bus is the bridge's DMA side (the
		// cache is Master[0]): the card's first DMA write into host
		// memory, 4 beats of 8 bytes, meets the lie first.
		Entry("fifo.nofull: a push into the bridge's full memory-bus port", map[string]int{"fifo.nofull": 1},
			"N0.MemBus.Master[1].Down [fifo.overflow] push into a full FIFO (4 entries)"),
		// The processor's burst stores (PIO through the write-combining
		// buffer) go into its cache's port a beat per cycle.
		Entry("fifo.norate: two pushes in a cycle into the cache's CPU port", map[string]int{"fifo.norate": 1},
			"N0.Cache.Port.Down [fifo.rate] more than 1 pushes in one cycle"),
	)
})
