package check_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/check"
)

// owner is a busy unit owning transactions, the oldest sent at since.
type owner struct {
	unit
	oldest string
	since  clock.Time
}

func (o *owner) Oldest() (string, clock.Time, bool) { return o.oldest, o.since, o.oldest != "" }

var _ = Describe("StuckReport and Snapshot", func() {
	var m *check.Monitor
	BeforeEach(func() {
		m = check.NewMonitor()
		m.Register(&unit{name: "Net.R0", state: "VC 0 holds pkt 7 flit 2"})
		m.Register(&owner{unit: unit{name: "Net.Packets", state: "2 outstanding"}, oldest: "pkt 9", since: 300})
		m.Register(&unit{name: "Net.R1", idle: true, state: "empty"})
		m.Register(&owner{unit: unit{name: "Host.Ops", state: "1 outstanding"}, oldest: "send #4", since: 200})
		m.Register(&owner{unit: unit{name: "Idle.Ops", state: "none"}})
	})

	It("keeps the latest progress time", func() {
		m.Progress(50)
		m.Progress(20) // an older time never moves it back
		Expect(m.LastProgress()).To(Equal(clock.Time(50)))
	})

	It("lists the oldest outstanding transaction first, then every busy unit, and records one violation", func() {
		m.Progress(400)
		err := m.StuckReport(1000, "no progress for more than 500ps")
		Expect(err).To(MatchError("stuck: no progress for more than 500ps at 1ns (last progress at 400ps) with 4 busy unit(s):\n" +
			"  oldest outstanding transaction: send #4, since 200ps (800ps ago)\n" +
			"  Net.R0: VC 0 holds pkt 7 flit 2\n" +
			"  Net.Packets: 2 outstanding\n" +
			"  Host.Ops: 1 outstanding\n" +
			"  Idle.Ops: none"))
		Expect(m.Violations()).To(Equal([]check.Violation{{Time: 1000, Path: "Watchdog", Check: "stuck",
			Msg: "4 busy unit(s) after no progress for more than 500ps"}}))
	})

	It("describes the same state without a violation for a run stopped on purpose", func() {
		s := m.Snapshot(1000, "drain limit hit")
		Expect(s).To(HavePrefix("drain limit hit at 1ns (last progress at 0ps) with 4 busy unit(s):\n" +
			"  oldest outstanding transaction: send #4"))
		Expect(m.Count()).To(BeZero())
	})

	It("says nothing when no unit is busy", func() {
		q := check.NewMonitor()
		q.Register(&unit{name: "A", idle: true})
		Expect(q.StuckReport(5, "x")).To(Succeed())
		Expect(q.Snapshot(5, "x")).To(BeEmpty())
		Expect(q.Count()).To(BeZero())
	})

	It("counts violations per reporting path for verdicts", func() {
		m.Report(1, "Net.Packets", "lost", "pkt 9")
		m.Report(2, "Net.Order", "order", "pkt 3 before 2")
		m.Report(3, "Net.Packets", "duplicate", "pkt 4")
		Expect(m.CountPath("Net.Packets")).To(Equal(2))
		Expect(m.CountPath("Net.Packets", "Net.Order")).To(Equal(3))
		Expect(m.CountPath("Other")).To(BeZero())
	})
})
