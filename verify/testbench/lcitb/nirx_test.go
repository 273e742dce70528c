package lcitb_test

import (
	"fmt"

	"github.com/google/go-cmp/cmp"

	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rxRun is one randomised run of a retransmitting variant (I-nirx or
// I-hrx) under link faults: every link corrupts and loses each packet
// with probability p (issue 17 section 2: 10^-3 and 10^-2 on 2, 8 and 64
// nodes, with 1 KB and 4 KB MTUs, multicast and F&A).
type rxRun struct {
	rel        fw.Reliability
	platform   lcilib.Platform
	nodes, mtu int
	p          float64
	ops        int
	seed       uint64
}

func (x rxRun) String() string {
	mtu := ""
	if x.mtu != 0 {
		mtu = fmt.Sprintf(", %d B MTU", x.mtu)
	}
	return fmt.Sprintf("%d %s nodes%s, %g corrupt + %g drop per packet per link, %d ops each, seed %d", x.nodes, x.platform.Name, mtu, x.p, x.p, x.ops, x.seed)
}

func (x rxRun) config() lcitb.Config {
	c := lcitb.DefaultConfig()
	c.Platform, c.Nodes, c.Reliability, c.MTU = x.platform, x.nodes, x.rel, x.mtu
	c.CorruptProb, c.DropProb = x.p, x.p
	return c
}

// rxTraffic is the mix: payloads of 0 to 256 bytes (many packets per
// simulated second), 10% multicasts, 10% fetch-and-adds.
func rxTraffic(ops int) lcitb.Traffic {
	return lcitb.Traffic{Ops: ops, MaxSize: 256, McastPct: 10, FAPct: 10}
}

// rxFaultTable declares rel's table under faults: on each platform and
// fault rate, 2, 8 (with a 1 KB MTU at 10^-3, 4 KB at 10^-2) and 64 nodes
// doing opsByNodes[n] operations each, seeds from seed+1; every checker on,
// every operation carried out, at least 10^5 first transmissions in all.
func rxFaultTable(rel fw.Reliability, seed uint64, opsByNodes map[int]int) bool {
	name := fw.Config{Reliability: rel}.Name()
	return Describe(name+" under link faults, every checker on", Ordered, func() {
		var runs []rxRun
		for _, pl := range []lcilib.Platform{lcilib.PPro(), lcilib.P3()} {
			for _, p := range []float64{1e-3, 1e-2} {
				mtu := 1024
				if p == 1e-2 {
					mtu = 4096
				}
				for _, x := range []rxRun{{nodes: 2}, {nodes: 8, mtu: mtu}, {nodes: 64}} {
					seed++
					x.rel, x.platform, x.p, x.seed, x.ops = rel, pl, p, seed, opsByNodes[x.nodes]
					runs = append(runs, x)
				}
			}
		}
		var sent, faults uint64
		for _, x := range runs {
			It("recovers every loss: "+x.String(), func() {
				r, err := lcitb.RunTraffic(env.New(env.Options{Seed: x.seed}), x.config(), rxTraffic(x.ops))
				Expect(err).NotTo(HaveOccurred())
				// Every operation carried out: unicasts at their
				// receivers' upcalls once, multicasts at every member,
				// F&A values back.
				Expect(r.Completed()).To(Equal(uint64(x.nodes * x.ops)))
				Expect(r.Corrupted + r.Dropped).To(BeNumerically(">", 0))
				Expect(r.Rx.Retransmitted).To(BeNumerically(">", 0))
				// Every corruption is a CRC drop at an NI unless the
				// packet was also lost, or corrupted again, further on.
				Expect(r.Rx.CRCDrops).To(BeNumerically("<=", r.Corrupted))
				sent += r.Rx.Sent
				faults += r.Corrupted + r.Dropped
				AddReportEntry(x.String(), fmt.Sprintf("%+v, corrupted %d, lost %d", r.Rx, r.Corrupted, r.Dropped))
			})
		}
		It("carried at least 10^5 packets under faults", func() {
			AddReportEntry("packets", fmt.Sprintf("%d sent (first transmissions), %d corrupted or lost", sent, faults))
			Expect(sent).To(BeNumerically(">=", 100_000))
		})
	})
}

var _ = rxFaultTable(fw.NIRetransmit, 100, map[int]int{2: 2000, 8: 500, 64: 40})

var _ = Describe("I-nirx's receive buffer pool", func() {
	It("drops what it has no buffer for and asks the sender to resend when buffers are free again", func() {
		// 130 shared receive buffers (the fewest that give a window of
		// 2: (130 - 4) / 63), 7 senders towards a receiver whose host
		// computes 2 ms between polls: the receiver acknowledges what it
		// has stored, so its senders go on while its 64 host slots fill,
		// and then its pool runs dry.
		c := lcitb.DefaultConfig()
		c.Nodes, c.Reliability = 8, fw.NIRetransmit
		c.Platform.RecvBufs = 130
		t := hot(40, 512)
		t.HotPause = 2 * clock.Millisecond
		r, err := lcitb.RunTraffic(env.New(env.Options{Seed: 11}), c, t)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Completed()).To(Equal(uint64(8 * 40)))
		Expect(r.Rx.NoBufDrops).To(BeNumerically(">", 0))
		Expect(r.Rx.NacksSent).To(BeNumerically(">", 0))
		Expect(r.Rx.NacksReceived).To(BeNumerically(">", 0))
		AddReportEntry("counters", fmt.Sprintf("%+v", r.Rx))
	})
})

var _ = Describe("I-nirx's checkers against mutations", func() {
	x := rxRun{rel: fw.NIRetransmit, platform: lcilib.PPro(), nodes: 8, p: 1e-2, ops: 200, seed: 7}
	rules := func(mut map[string]int) (map[string][]string, error) {
		// The clean run takes about 20 ms; a mutation that confuses the
		// protocol (a corrupted header taken as good can leave a
		// receiver expecting a sequence its sender has not reached, and
		// the sender resending for ever) is stopped at 300 ms.
		e := env.New(env.Options{Seed: x.seed, Mutations: mut, TimeLimit: 300 * clock.Millisecond})
		_, err := lcitb.RunTraffic(e, x.config(), rxTraffic(x.ops))
		out := map[string][]string{}
		for _, v := range e.Monitor.Violations() {
			out[v.Check] = append(out[v.Check], v.Msg)
		}
		return out, err
	}
	It("passes the clean run", func() {
		got, err := rules(nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(BeEmpty())
	})
	It("lci.rxdup: a duplicate delivered again reaches an upcall twice (lci.dup)", func() {
		got, err := rules(map[string]int{"lci.rxdup": 1})
		Expect(err).To(HaveOccurred())
		Expect(got["lci.dup"]).NotTo(BeEmpty())
		for _, m := range got["lci.dup"] {
			Expect(m).To(MatchRegexp(`^packet \d+ \(type [12]\) from node \d reached the upcall again \(\d+ was due\)$`))
		}
	})
	It("lci.rxleak: a receive buffer kept leaves the NI not quiescent (lci.quiescent)", func() {
		_, err := rules(map[string]int{"lci.rxleak": 50})
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(MatchRegexp(`lci.quiescent: node \d's NI is not quiescent at the end: .*\d+ receive buffers free`))
	})
	It("lci.rxcrc: a bad packet taken makes the NI's CRC drops fall short of its link's (lci.crcsum)", func() {
		_, err := rules(map[string]int{"lci.rxcrc": 1})
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(MatchRegexp(`lci.crcsum: node \d's NI dropped 0 packets for a bad CRC, its link Net\.\S+ delivered [1-9]\d*`))
	})
	It("gives the same trace for the same seed, faults and retransmissions included", func() {
		runOnce := func() []trace.Record {
			rec := trace.NewRecorder()
			y := rxRun{rel: fw.NIRetransmit, platform: lcilib.P3(), nodes: 4, p: 2e-2, ops: 40, seed: 9}
			_, err := lcitb.RunTraffic(env.New(env.Options{Seed: y.seed, Trace: rec}), y.config(), rxTraffic(y.ops))
			Expect(err).NotTo(HaveOccurred())
			return rec.Records()
		}
		a, b := runOnce(), runOnce()
		resends := 0
		for _, r := range a {
			if v, _ := r.Get("event"); r.Kind == "lci.rx" && v == "resend" {
				resends++
			}
		}
		Expect(resends).To(BeNumerically(">", 0))
		Expect(cmp.Diff(a, b)).To(BeEmpty())
	})
})
