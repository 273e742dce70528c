package fabric_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"
)

// The Memory Channel's global order checker against the fault it exists to
// catch: a hub output that sends two writes in the other order than the
// hub's global order (mchub.reorder). Four adapters write 32-byte writes
// to one page every adapter maps, at 15% of the link rate each, for 20000
// cycles (about 1500 writes, each delivered to the three other adapters;
// the hub bus carries 4 x 0.15 x 40/32 = 0.75 of its bandwidth).
var _ = Describe("MC global order against a hub that reorders", func() {
	run := func(mut map[string]int) []check.Violation {
		GinkgoHelper()
		e := vtest.NewEnv(vtest.Options{Clock: mchub.LinkClock(), Mutations: mut, Seed: 3})
		_, sh := mcStar(e, mchub.MC1().WithPorts(4), fabric.MCBroadcastPages(1, 4, false), traffic.Fixed(32),
			[]float64{0.15, 0.15, 0.15, 0.15}, nil, 20000)
		_ = runMC(e, sh)
		sent, recv, _ := sh.Deliveries.Counts()
		GinkgoWriter.Printf("deliveries %d sent, %d received\n", sent, recv)
		Expect(sent).To(BeNumerically(">", 1000))
		return e.Monitor.Violations()
	}

	It("is clean without a mutation", func() {
		Expect(run(nil)).To(BeEmpty())
	})

	It("mchub.reorder: a receiver that sees two writes to a page out of the hub's order is a mismatch", func() {
		v := run(map[string]int{"mchub.reorder": 20})
		rules := map[string]int{}
		for _, x := range v {
			rules[x.Check]++
			switch x.Check {
			case "scoreboard.mismatch":
				Expect(x.Path).To(Equal("MC.Pages"))
				Expect(x.Msg).To(HavePrefix("actual #"))
				Expect(x.Msg).To(ContainSubstring("differs from the expected item (-expected +actual)"))
				// The write the receiver got is not the one next in the
				// hub's global order.
				Expect(x.Msg).To(MatchRegexp(`(?s)-\s+Order:\s+\d+,.*\+\s+Order:\s+\d+,`))
			case "order": // the two writes came from one source
				Expect(x.Path).To(Equal("MC.Sources"))
				Expect(x.Msg).To(MatchRegexp(`^flow \[\d \d\]: seq \d+ arrived after seq \d+$`))
			default:
				Fail("unexpected violation " + x.String())
			}
		}
		Expect(rules["scoreboard.mismatch"]).To(BeNumerically(">=", 50))
	})
})
