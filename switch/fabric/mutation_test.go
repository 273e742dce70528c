package fabric_test

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/switch/wormhole"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"
)

// The terminals' checkers against the faults they exist to catch: a packet
// lost on a link (conservation: lost), delivered twice (conservation:
// duplicate) or overtaken by the next one of its flow (order). Terminal 0
// sends 24 two-flit packets (ids 1..24) to terminal 1 through one
// mesh88_lat router with one VC, which delivers them in order.
var _ = Describe("Terminal checkers against mutations", func() {
	run := func(mut map[string]int) ([]uint64, []check.Violation) {
		GinkgoHelper()
		e := vtest.NewEnv(vtest.Options{Clock: clk, Mutations: mut})
		var got []delivery
		sh := recorder(e, &got, nil)
		sh.Order = check.NewOrdering[[2]int](e.Monitor, "Order")
		rc := wormhole.Mesh88Lat()
		rc.NumVCs, rc.InputSpeedup = 1, 1
		ts, _ := routedPair(e, rc, 1, nil, fabric.TerminalConfig{}, sh)
		var recs []traffic.Record
		for i := range 24 {
			recs = append(recs, traffic.Record{Cycle: uint64(3 * i), Src: 0, Dst: 1, Size: 2})
		}
		ts[0].SetReplay(recs)
		ts[0].Start()
		_, _ = e.Run()
		sh.Packets.Finish(e.Now())
		var ids []uint64
		for _, d := range got {
			ids = append(ids, d.ID)
		}
		return ids, e.Monitor.Violations()
	}
	seq := func(from, to int) []uint64 {
		var s []uint64
		for i := from; i <= to; i++ {
			s = append(s, uint64(i))
		}
		return s
	}

	It("is clean without a mutation: 24 packets, in order", func() {
		ids, v := run(nil)
		Expect(v).To(BeEmpty())
		Expect(ids).To(Equal(seq(1, 24)))
	})

	It("link.lose: packets a link loses uncounted are reported lost", func() {
		// Every 5th head on each link direction: packets 5, 10, 15 and 20
		// on the terminal's injection link; of the rest, the 5th, 10th, 15th
		// and 20th on the router's output link: 6, 12, 18 and 24.
		// When events run out the conservation checker still holds them
		// (the watchdog reports it busy); Finish reports them lost.
		ids, v := run(map[string]int{"link.lose": 5})
		Expect(ids).To(HaveLen(16))
		Expect(v).To(HaveLen(2))
		Expect(cmp.Diff([]check.Violation{{Time: v[0].Time, Path: "Watchdog", Check: "deadlock",
			Msg: "1 busy unit(s) when events ran out"}, {Time: v[1].Time, Path: "Packets", Check: "lost",
			Msg: "8 of 24 sent never arrived (first: [5 6 10 12 15 18 20 24])"}}, v)).To(BeEmpty())
	})

	It("fabric.duplicate: a packet delivered twice is a duplicate", func() {
		ids, v := run(map[string]int{"fabric.duplicate": 8})
		Expect(ids).To(HaveLen(27))
		var want []check.Violation
		for _, k := range []int{8, 16, 24} {
			want = append(want, check.Violation{Path: "Packets", Check: "duplicate", Msg: fmt.Sprintf("%d received twice", k)})
		}
		// The order checker sees the same sequence number again, too.
		var dups []check.Violation
		for _, x := range v {
			if x.Check == "duplicate" {
				x.Time = 0
				dups = append(dups, x)
			} else {
				Expect(x.Check).To(Equal("order"))
				Expect(x.Msg).To(MatchRegexp(`^flow \[0 1\]: seq (8|16|24) arrived after seq (8|16|24)$`))
			}
		}
		Expect(cmp.Diff(want, dups)).To(BeEmpty())
	})

	It("fabric.swap: a packet delivered after the next one of its flow breaks the order", func() {
		ids, v := run(map[string]int{"fabric.swap": 5})
		// The 5th, 10th, 15th and 20th ejected (ids 5, 10, 15, 20) come
		// after their successors; nothing is lost.
		Expect(ids).To(Equal([]uint64{1, 2, 3, 4, 6, 5, 7, 8, 9, 11, 10, 12, 13, 14, 16, 15, 17, 18, 19, 21, 20, 22, 23, 24}))
		var msgs []string
		for _, x := range v {
			Expect(x.Path).To(Equal("Order"))
			Expect(x.Check).To(Equal("order"))
			msgs = append(msgs, x.Msg)
		}
		Expect(msgs).To(Equal([]string{
			"flow [0 1]: seq 5 arrived after seq 6", "flow [0 1]: seq 10 arrived after seq 11",
			"flow [0 1]: seq 15 arrived after seq 16", "flow [0 1]: seq 20 arrived after seq 21",
		}))
	})
})
