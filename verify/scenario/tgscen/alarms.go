package tgscen

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// alarmFirstPage is node 1's first page with counters; the page after the
// monitored ones gets the same accesses and no counters.
const alarmFirstPage = 3

// alarmPages is how many pages may have counters: node 1's pages from
// alarmFirstPage on, less the one after them that gets the same accesses
// without counters (the model's limit: tg.PagesPerNode, 2048).
const alarmPages = tg.PagesPerNode - alarmFirstPage - 1

// AlarmsParams are the parameters of telegraphos-alarms.
type AlarmsParams struct {
	// ReadCounters and WriteCounters are the initial read and write
	// access counters node 0's HIB keeps for node 1's pages 3, 4, ...
	// (one entry per page; 0 counts nothing and never fires, 2.2.6).
	ReadCounters  []int `toml:"read_counters"`
	WriteCounters []int `toml:"write_counters"`
	// Reads and Writes are the remote reads and writes node 0 makes to
	// each of these pages (and to one more page without counters), in
	// rounds over the pages.
	Reads  int `toml:"reads"`
	Writes int `toml:"writes"`
	// Version is the HIB version.
	Version int `toml:"version"`
}

// AlarmsDefaults are four pages whose counters run out at different
// accesses, or never.
func AlarmsDefaults() *AlarmsParams {
	return &AlarmsParams{ReadCounters: []int{3, 8, 0, 5}, WriteCounters: []int{2, 1, 4, 0}, Reads: 5, Writes: 2, Version: 1}
}

// Validate implements scenario.Params.
func (p *AlarmsParams) Validate() error {
	return scenario.FirstError(
		scenario.Check(len(p.ReadCounters) < 1, "read_counters", "must list 1..%d pages (got %d)", alarmPages, len(p.ReadCounters)),
		scenario.CheckKeys(p),
		scenario.Check(len(p.WriteCounters) != len(p.ReadCounters), "write_counters",
			"must list as many pages as read_counters (%d, got %d)", len(p.ReadCounters), len(p.WriteCounters)),
		scenario.Check(p.Reads+p.Writes < 1, "reads", "reads + writes must be at least 1"),
		// Every access to every page (and to the page after them) is
		// queued before the run.
		checkQueued("reads", int64(len(p.ReadCounters)+1)*int64(p.Reads+p.Writes), "queued access ((pages + 1) x (reads + writes))"),
	)
}

// AlarmsScenario is telegraphos-alarms.
func AlarmsScenario() *scenario.Scenario {
	return scenario.Typed("telegraphos-alarms",
		"2.2.6: page access counters raise an alarm when one runs out",
		AlarmsDefaults, RunAlarms)
}

// access is one remote access of the alarm experiment.
type access struct {
	Page  int  // node 1's page
	Write bool // a write (else a read)
	N     int  // the page's Nth access of its kind
	Index int  // the experiment's Nth access
}

func (a access) String() string {
	k := "read"
	if a.Write {
		k = "write"
	}
	return fmt.Sprintf("%s %d of page %d (access #%d)", k, a.N, a.Page, a.Index)
}

// alarm is an alarm and the access it came after.
type alarm struct {
	Global int // the global page number the HIB reported
	After  access
	At     clock.Time // when the handler ran
}

// RunAlarms runs the page-counter experiment in e: node 0 reads and
// writes node 1's pages; each access is finished before the next begins
// (a read stalls, a write is followed by MEMORY_BARRIER), so an alarm's
// interrupt is taken before the next access and names the access that
// caused it. The testbench keeps its own copy of the counters by the
// paper's rule (decrement unless 0, alarm on 1 to 0) and expects exactly
// those alarms.
func RunAlarms(e *env.Env, p *AlarmsParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cl, pr, err := build(e, config(2, p.Version))
	if err != nil {
		return nil, err
	}
	h := cl.Nodes[0].HIB
	monitored := len(p.ReadCounters)
	pages := monitored + 1 // the last has no counters
	ref := make([][2]int, pages)
	for i := range monitored {
		gp := tg.GlobalPage(1, uint32(alarmFirstPage+i)*tg.PageBytes)
		h.SetPageCounters(gp, uint32(p.ReadCounters[i]), uint32(p.WriteCounters[i]))
		ref[i] = [2]int{p.ReadCounters[i], p.WriteCounters[i]}
	}

	var pending access // the access in flight
	var got []alarm
	p0 := pr[0]
	p0.OnPageAlarm(func(now clock.Time, gp uint32) {
		got = append(got, alarm{Global: int(gp), After: pending, At: now})
	})
	var want []alarm
	var ops []cpu.Op
	idx := 0
	for a := range max(p.Reads, p.Writes) {
		for pg := range pages {
			page := alarmFirstPage + pg
			off := uint32(page)*tg.PageBytes + uint32(4*a)
			for _, write := range []bool{false, true} {
				if (!write && a >= p.Reads) || (write && a >= p.Writes) {
					continue
				}
				idx++
				acc := access{Page: page, Write: write, N: a + 1, Index: idx}
				k := 0
				if write {
					k = 1
				}
				if ref[pg][k] > 0 {
					ref[pg][k]--
					if ref[pg][k] == 0 {
						want = append(want, alarm{Global: tg.GlobalPage(1, off), After: acc})
					}
				}
				ops = append(ops, p0.Do(func(clock.Time) { pending = acc }))
				if write {
					ops = append(ops, p0.Store(1, off, uint32(idx)))
					ops = append(ops, p0.Fence()...)
				} else {
					ops = append(ops, p0.Load(1, off, nil))
				}
			}
		}
	}
	p0.Start(ops...)
	res, runErr := run(e, cl)

	rep := &scenario.Report{Title: fmt.Sprintf("telegraphos-alarms: node 0 (%s HIB) makes %d reads and %d writes to each of node 1's pages %d..%d; read counters %v, write counters %v, page %d without counters",
		versionName(p.Version), p.Reads, p.Writes, alarmFirstPage, alarmFirstPage+monitored-1, p.ReadCounters, p.WriteCounters, alarmFirstPage+monitored)}
	src := paper + " 2.2.6 «When the counter is decremented from one to zero, an interrupt is sent to the operating system»"
	for pg := range monitored {
		page := alarmFirstPage + pg
		gp := tg.GlobalPage(1, uint32(page)*tg.PageBytes)
		r, w := h.PageCounters(gp)
		for k, kind := range []string{"read", "write"} {
			start, accesses, left := p.ReadCounters[pg], p.Reads, r
			if k == 1 {
				start, accesses, left = p.WriteCounters[pg], p.Writes, w
			}
			model := fmt.Sprintf("no alarm, %d left", left)
			for _, a := range got {
				if a.Global == gp && a.After.Write == (k == 1) {
					model = fmt.Sprintf("alarm after %s at %s", a.After, us(a.At))
				}
			}
			expect := "no alarm"
			if start > 0 && start <= accesses {
				expect = fmt.Sprintf("alarm after %s %d", kind, start)
			}
			rep.Add(fmt.Sprintf("page %d (global %d), %s counter %d, %d %ss", page, gp, kind, start, accesses, kind), model, expect, src)
		}
	}
	rep.Add(fmt.Sprintf("page %d, no counters", alarmFirstPage+monitored), "no alarm", "no alarm", "")

	completed(rep, res)
	diff := cmp.Diff(want, got, cmpopts.IgnoreFields(alarm{}, "At"))
	rep.Check("exactly one alarm per counter that runs out, none for others", diff == "",
		"%d alarms, want %d (each after the access that takes a counter from 1 to 0)%s", len(got), len(want), oneLine(diff))
	var left []string
	for pg := range monitored {
		gp := tg.GlobalPage(1, uint32(alarmFirstPage+pg)*tg.PageBytes)
		r, w := h.PageCounters(gp)
		if int(r) != ref[pg][0] || int(w) != ref[pg][1] {
			left = append(left, fmt.Sprintf("page %d: %d/%d, want %d/%d", alarmFirstPage+pg, r, w, ref[pg][0], ref[pg][1]))
		}
	}
	gp := tg.GlobalPage(1, uint32(alarmFirstPage+monitored)*tg.PageBytes)
	if r, w := h.PageCounters(gp); r != 0 || w != 0 {
		left = append(left, fmt.Sprintf("page %d: counters %d/%d appeared", alarmFirstPage+monitored, r, w))
	}
	rep.Check("counters end as the paper's rule says", len(left) == 0,
		"%d of %d pages' counters match the testbench's copy (decremented unless 0); differing: %v", monitored-len(left), monitored, left)
	st := h.Stats()
	rep.Check("one interrupt per alarm", st.PageAlarms == uint64(len(want)) && cl.Nodes[0].CPU.Interrupts() == uint64(len(want)),
		"the HIB raised %d page alarms, the processor ran %d handlers, want %d", st.PageAlarms, cl.Nodes[0].CPU.Interrupts(), len(want))
	rep.Measure("alarms", float64(len(got)), "")
	rep.Measure("expected_alarms", float64(len(want)), "")
	rep.Result = res
	return rep, runErr
}

// oneLine makes a cmp.Diff fit a check's line ("" stays "").
func oneLine(diff string) string {
	if diff == "" {
		return ""
	}
	return fmt.Sprintf(" (-want +got: %q)", diff)
}
