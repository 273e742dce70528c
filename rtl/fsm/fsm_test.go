package fsm_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fsm"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// udma is a plain clocked hardware controller, no processor and no
// firmware: a DMA engine's sequencer in the style of SHRIMP's UDMA. It is
// its own fsm.Driver: a transition happens at the edge it ticks on, and a
// transition of cost k keeps the engine busy for k cycles (cost 0: the
// next transition runs in the same edge).
type udma struct {
	*clock.Ticking
	m     *fsm.Machine[*udma]
	now   clock.Time
	cycle clock.Cycle
	busy  int // cycles charged by this edge's transitions

	words   int // left to move
	moved   []clock.Cycle
	doneAt  clock.Cycle
	started bool
}

func (u *udma) Edge() (clock.Time, clock.Cycle) { return u.now, u.cycle }
func (u *udma) Charge(n int)                    { u.busy += n }

// table: load a descriptor (2 cycles), move a word per cycle, the last
// word and the completion (1 cycle), acknowledge.
func table() []fsm.Transition[*udma] {
	return []fsm.Transition[*udma]{
		{From: "IDLE", On: "start", To: "LOAD", Cost: 2},
		{From: "LOAD", On: "loaded", To: "XFER"},
		{From: "XFER", On: "beat", Cost: 1, Do: func(u *udma, _ any) { u.words--; u.moved = append(u.moved, u.cycle) }},
		{From: "XFER", On: "last", To: "DONE", Cost: 1, Do: func(u *udma, _ any) {
			u.words--
			u.moved = append(u.moved, u.cycle)
			u.doneAt = u.cycle + 1
		}},
		{From: "XFER", On: "abort", To: "IDLE"},
		{From: "DONE", On: "ack", To: "IDLE"},
	}
}

func newUDMA(e *env.Env, clk clock.Clock, words int) *udma {
	u := &udma{words: words}
	u.Ticking = clock.NewTicking("Udma", e.Engine, clk, u)
	m, err := fsm.New(e, "Udma", "IDLE", table())
	Expect(err).NotTo(HaveOccurred())
	u.m = m
	return u
}

// next is the event the engine's datapath raises in its state.
func (u *udma) next() (fsm.Event, bool) {
	switch u.m.State() {
	case "IDLE":
		if !u.started {
			u.started = true
			return "start", true
		}
	case "LOAD":
		return "loaded", true
	case "XFER":
		if u.words > 1 {
			return "beat", true
		}
		return "last", true
	case "DONE":
		return "ack", true
	}
	return "", false
}

// Tick fires transitions until one costs cycles, then sleeps that long.
func (u *udma) Tick(now clock.Time) bool {
	u.now, u.cycle, u.busy = now, u.Clock().CycleAt(now), 0
	for u.busy == 0 {
		ev, ok := u.next()
		if !ok {
			return false
		}
		u.m.Fire(u, ev, nil)
	}
	u.WakeAt(u.Clock().TimeOf(u.cycle + clock.Cycle(u.busy)))
	return false
}

var _ = Describe("Machine in a hardware controller", func() {
	clk := clock.MHz(100)

	It("sequences a clocked engine: the table's costs are its cycles, with the state signal, trace records and coverage", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		u := newUDMA(e, clk, 3)
		u.Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Worked by hand: c0 start (LOAD, 2 cycles); c2 loaded (XFER, no
		// time) and the first beat (1 cycle); c3 the second beat; c4 the
		// last word (DONE, 1 cycle); c5 ack (IDLE), nothing more.
		Expect(u.moved).To(Equal([]clock.Cycle{2, 3, 4}))
		Expect(u.doneAt).To(Equal(clock.Cycle(5)))
		Expect(u.m.State()).To(Equal(fsm.State("IDLE")))
		var recs []string
		for _, r := range e.Trace.Records() {
			if r.Kind == "fsm.state" {
				f := map[string]string{}
				for _, x := range r.Fields {
					f[x.Key] = x.Val
				}
				recs = append(recs, fmt.Sprintf("%d %s %s->%s %s", r.Cycle, r.Path, f["from"], f["to"], f["cost"]))
			}
		}
		Expect(recs).To(Equal([]string{"0 Udma IDLE->LOAD 2", "2 Udma LOAD->XFER 0", "2 Udma XFER->XFER 1",
			"3 Udma XFER->XFER 1", "4 Udma XFER->DONE 1", "5 Udma DONE->IDLE 0"}))
		// The state signal changes at the same edges (10 ns cycles); a
		// beat stays in XFER and makes no change, and the dump keeps the
		// last value of a time (IDLE at 0 is overwritten by LOAD).
		f, err := vcd.ParseFile(vtest.WriteWaves(e, GinkgoT().TempDir()+"/udma.vcd"))
		Expect(err).NotTo(HaveOccurred())
		ch, err := f.Changes("udma.state")
		Expect(err).NotTo(HaveOccurred())
		var sig []string
		for _, c := range ch {
			sig = append(sig, fmt.Sprintf("%d:%s", c.Time/int64(clock.Nanosecond), c.Value.Str))
		}
		Expect(sig).To(Equal([]string{"0:LOAD", "20:XFER", "40:DONE", "50:IDLE"}))
		// Every row fired but the abort.
		Expect(fsm.Uncovered(u.m)).To(Equal([]string{"Udma: abort in XFER"}))
		cov := u.m.Coverage()
		Expect(cov[2]).To(Equal(fsm.Coverage{Machine: "Udma", From: "XFER", On: "beat", Count: 2}))
		Expect(e.Monitor.Violations()).To(BeEmpty())
	})

	It("reports a transition the table does not allow and stays where it is", func() {
		e := env.New(env.Options{Trace: trace.NewRecorder()})
		u := newUDMA(e, clk, 1)
		u.now, u.cycle = 70*clock.Nanosecond, 7
		Expect(u.m.Fire(u, "ack", nil)).To(BeFalse())
		Expect(u.m.State()).To(Equal(fsm.State("IDLE")))
		Expect(u.busy).To(BeZero())
		v := e.Monitor.Violations()
		Expect(v).To(HaveLen(1))
		Expect(v[0]).To(Equal(check.Violation{Time: 70 * clock.Nanosecond, Path: "Udma", Check: "fsm.transition",
			Msg: "no transition on ack in state IDLE"}))
		Expect(e.Trace.Records()).To(BeEmpty())
	})

	It("merges the coverage of machines built from one table", func() {
		e := env.New(env.Options{})
		a, b := newUDMA(e, clk, 1), &udma{}
		m, err := fsm.New(e, "Udma2", "XFER", table())
		Expect(err).NotTo(HaveOccurred())
		b.m = m
		a.m.Fire(a, "start", nil)
		b.m.Fire(b, "abort", nil)
		b.m.Fire(b, "start", nil)
		merged := fsm.MergeCoverage(a.m, b.m)
		Expect(merged[0]).To(Equal(fsm.Coverage{Machine: "Udma", From: "IDLE", On: "start", Count: 2}))
		Expect(merged[4]).To(Equal(fsm.Coverage{Machine: "Udma", From: "XFER", On: "abort", Count: 1}))
		Expect(fsm.MergeCoverage()).To(BeNil())
	})

	DescribeTable("refuses a bad table, naming the row",
		func(initial fsm.State, rows []fsm.Transition[*udma], want string) {
			_, err := fsm.New(env.New(env.Options{}), "M", initial, rows)
			Expect(err).To(MatchError(want))
		},
		Entry("no event", fsm.State("A"), []fsm.Transition[*udma]{{From: "A"}}, "M: row 0 has no state or event"),
		Entry("negative cost", fsm.State("A"), []fsm.Transition[*udma]{{From: "A", On: "x", Cost: -1}},
			"M: row 0 (A on x) has a negative cost -1"),
		Entry("two rows for a pair", fsm.State("A"), []fsm.Transition[*udma]{{From: "A", On: "x"}, {From: "A", On: "x", To: "B"}},
			"M: rows 0 and 1 both handle x in state A"),
		Entry("no initial state", fsm.State(""), nil, "M: fsm: no initial state"),
	)
})
