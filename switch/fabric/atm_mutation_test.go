package fabric_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/vtest"
)

// The ATM endpoints' checkers against the faults they exist to catch, each
// a test-only fault of the switch: a payload corrupted inside the switch
// (atm.payload; the links' CRCs are computed per link and cannot see it),
// two cells of one VC swapped (per-VC order), a cell dropped without being
// counted (conservation: lost). Four hosts send uniform traffic at 40% of
// the line rate for 20000 cycles (about 600 cells).
var _ = Describe("ATM checkers against switch mutations", func() {
	run := func(mut map[string]int) []check.Violation {
		GinkgoHelper()
		e := vtest.NewEnv(vtest.Options{Clock: atm.LinkClock(), Mutations: mut, Seed: 5})
		_, sh, _ := atmStar(e, atm.ASX100(), atm.LinkConfig(), mustPattern("uniform", 4, traffic.Options{}),
			[]float64{0.4, 0.4, 0.4, 0.4}, nil, 20000)
		_ = runATM(e, sh)
		sent, recv, dropped := sh.Cells.Counts()
		Expect(sent).To(BeNumerically(">", 400))
		GinkgoWriter.Printf("cells sent %d, received %d, dropped %d\n", sent, recv, dropped)
		return e.Monitor.Violations()
	}
	// only returns the violations of rule, failing on any other.
	only := func(v []check.Violation, rule string) []check.Violation {
		GinkgoHelper()
		for _, x := range v {
			Expect(x.Check).To(Equal(rule), x.String())
		}
		return v
	}

	It("is clean without a mutation", func() {
		Expect(run(nil)).To(BeEmpty())
	})

	It("atm.corrupt: a payload corrupted in the switch fails the receiver's payload check", func() {
		v := only(run(map[string]int{"atm.corrupt": 25}), "atm.payload")
		Expect(len(v)).To(BeNumerically(">=", 16)) // one cell in 25
		for _, x := range v {
			Expect(x.Path).To(MatchRegexp(`^Net\.Host[0-3]$`))
			Expect(x.Msg).To(MatchRegexp(`^cell \d+ \d->\d #\d+ arrived with a different payload$`))
		}
	})

	It("atm.swap: two cells of a VC swapped break the per-VC order", func() {
		v := only(run(map[string]int{"atm.swap": 25}), "order")
		Expect(len(v)).To(BeNumerically(">=", 10))
		for _, x := range v {
			Expect(x.Path).To(Equal("Net.Order"))
			Expect(x.Msg).To(MatchRegexp(`^flow \[\d \d\]: seq (\d+) arrived after seq \d+$`))
		}
	})

	It("atm.discard: a cell the switch drops without counting it is lost", func() {
		// The conservation checker still holds the discarded cells when
		// events run out: the watchdog reports it busy, Finish the cells
		// lost.
		v := run(map[string]int{"atm.discard": 25})
		Expect(v).To(HaveLen(2))
		Expect(only(v[:1], "deadlock")[0].Path).To(Equal("Watchdog"))
		Expect(only(v[1:], "lost")[0].Path).To(Equal("Net.Cells"))
		Expect(v[1].Msg).To(MatchRegexp(`^\d+ of \d+ sent never arrived \(first: \[\d+( \d+){9}\]\)$`))
	})
})
