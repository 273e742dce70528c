package tgscen

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
)

// The producer/consumer's words: the data at node 3 (the consumer's own
// memory), the flag at node 2, the background writes' region at node 3.
const (
	pcData, pcFlag, pcNoise = 0x100, 0x200, 0x4000
	pcValue                 = 42
)

// ProdConsParams are the parameters of telegraphos-prodcons.
type ProdConsParams struct {
	// Seeds is how many seeds to run, each with and without the barrier:
	// the run seed and the ones after it. The seeds move the background
	// writes and the moment the producer starts; the stale reads the paper
	// warns of (2.3.5) need a seed on which the data write is still queued
	// at the busy node when the flag write has landed, which the default
	// 12 seeds from 1 show several times (fewer seeds may show none, and
	// the check that the hazard was seen then fails).
	Seeds int `toml:"seeds"`
	// Background is the number of random writes each of nodes 4 and 5
	// makes to node 3 (the data's node), keeping its HIB busy.
	Background int `toml:"background"`
	// Version is the HIB version.
	Version int `toml:"version"`
}

// ProdConsDefaults are the spec's experiment: 12 seeds, 60 background
// writes from each of two nodes, Telegraphos I.
func ProdConsDefaults() *ProdConsParams {
	return &ProdConsParams{Seeds: 12, Background: 60, Version: 1}
}

// Validate implements scenario.Params.
func (p *ProdConsParams) Validate() error {
	return scenario.FirstError(
		scenario.CheckKeys(p),
	)
}

// ProdConsScenario is telegraphos-prodcons.
func ProdConsScenario() *scenario.Scenario {
	return scenario.Typed("telegraphos-prodcons",
		"2.3.5: data then flag; stale reads only without MEMORY_BARRIER",
		ProdConsDefaults, RunProdCons)
}

// pcOutcome is what one producer/consumer run saw.
type pcOutcome struct {
	data     uint32     // what the consumer read
	gap      clock.Time // the producer's time from its data write to its flag write
	consumed bool       // the consumer got past the flag and read the data
}

// producerConsumer runs one producer/consumer in e (its seed moves the
// background writes and the producer's start). Processor A (node 0)
// writes the data into node 3's memory and then the flag into node 2's;
// processor B (node 3) spins on the flag and then reads the data from its
// own memory. Nodes 4 and 5 keep node 3's HIB busy with random writes, so
// that A's data write can still be queued there when its flag write has
// landed on the idle node 2. With fence, A's flag write is UNLOCK(flag):
// MEMORY_BARRIER, then the write (hib/telegraphos protect_test.go).
func producerConsumer(e *env.Env, p *ProdConsParams, fence bool) (pcOutcome, env.Result, error) {
	var o pcOutcome
	cl, pr, err := build(e, config(6, p.Version))
	if err != nil {
		return o, env.Result{}, err
	}
	rng := e.Rand("Background")
	for _, n := range []int{4, 5} {
		var ops []cpu.Op
		for range p.Background {
			ops = append(ops, pr[n].Compute(rng.IntN(100)), pr[n].Store(3, uint32(pcNoise+4*rng.IntN(64)), 1))
		}
		pr[n].Start(ops...)
	}
	var tData clock.Time
	a := []cpu.Op{pr[0].Compute(1000 + rng.IntN(2000)), pr[0].Do(func(now clock.Time) { tData = now }), pr[0].Store(3, pcData, pcValue)}
	flagged := pr[0].Do(func(now clock.Time) { o.gap = now - tData })
	if fence {
		// UNLOCK(flag): the fence, then the flag's release (0).
		u := pr[0].Unlock(2, pcFlag)
		a = append(append(append(a, u[:len(u)-1]...), flagged), u[len(u)-1])
	} else {
		a = append(a, flagged, pr[0].Store(2, pcFlag, 0))
	}
	pr[0].Start(a...)
	pr[2].Start(pr[2].Store(2, pcFlag, 1)) // the flag starts "held"
	pr[3].Start(pr[3].Compute(300), pr[3].SpinUntil(2, pcFlag, func(v uint32) bool { return v == 0 }, func(now clock.Time, _ uint32) {
		pr[3].Run(now, pr[3].Load(3, pcData, func(_ clock.Time, v uint32) { o.data, o.consumed = v, true }))
	}))
	res, err := run(e, cl)
	return o, res, err
}

// RunProdCons runs the first seed without the barrier in e (the captured
// run) and everything else in envs of its own.
func RunProdCons(e *env.Env, p *ProdConsParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var errs []error
	var res env.Result
	type variant struct {
		fence bool
		stale []uint64   // seeds on which B read the old data
		odd   []string   // runs in which B read neither the old nor the new value, or nothing
		gap   clock.Time // sum over the seeds of the producer's data-to-flag time
	}
	vs := []*variant{{fence: false}, {fence: true}}
	for i := range p.Seeds {
		seed := e.Seed + uint64(i)
		for _, v := range vs {
			what := fmt.Sprintf("seed %d, %s", seed, barrierName(v.fence))
			var o pcOutcome
			var err error
			if i == 0 && !v.fence {
				o, res, err = producerConsumer(e, p, false)
			} else {
				o, _, err = producerConsumer(side(seed), p, v.fence)
			}
			if err != nil {
				errs = append(errs, label(what, err))
				continue
			}
			v.gap += o.gap
			switch {
			case !o.consumed || (o.data != 0 && o.data != pcValue):
				v.odd = append(v.odd, fmt.Sprintf("%s: read %d (consumed %v)", what, o.data, o.consumed))
			case o.data == 0:
				v.stale = append(v.stale, seed)
			}
		}
	}

	rep := &scenario.Report{Title: fmt.Sprintf("telegraphos-prodcons: 6 nodes with %s HIBs; A (node 0) writes data to node 3 then a flag to node 2, B (node 3) spins on the flag and reads the data; %d background writes from each of nodes 4 and 5 to node 3; seeds %d..%d",
		versionName(p.Version), p.Background, e.Seed, e.Seed+uint64(p.Seeds)-1)}
	src := paper + " 2.3.5 «it is possible that the flag variable is written before the data variable is written»"
	for _, v := range vs {
		rep.Add(fmt.Sprintf("stale reads %s", barrierName(v.fence)), fmt.Sprintf("%d of %d seeds%s", len(v.stale), p.Seeds, seedList(v.stale)),
			map[bool]string{false: "possible", true: "never"}[v.fence], src)
	}
	for _, v := range vs {
		rep.Add(fmt.Sprintf("producer: data write to flag write, mean, %s", barrierName(v.fence)),
			us(v.gap/clock.Time(p.Seeds)), "", paper+" 2.3.5 «This approach makes synchronization more expensive»")
	}
	rep.Add("waveform and trace show", fmt.Sprintf("seed %d, %s", e.Seed, barrierName(false)), "", "")
	completed(rep, res)
	rep.Check("with the barrier, never stale", len(vs[1].stale) == 0,
		"B read the old data on %d of %d seeds with UNLOCK's MEMORY_BARRIER%s", len(vs[1].stale), p.Seeds, seedList(vs[1].stale))
	rep.Check("without the barrier, stale data seen", len(vs[0].stale) > 0,
		"B read the old data on %d of %d seeds without the barrier%s (the hazard the paper describes; a run of few seeds may not show it)",
		len(vs[0].stale), p.Seeds, seedList(vs[0].stale))
	odd := append(vs[0].odd, vs[1].odd...)
	oddText := ""
	if len(odd) > 0 {
		oddText = "; but: " + strings.Join(odd, "; ")
	}
	rep.Check("B read the old or the new value", len(odd) == 0, "B read 0 (old) or %d (new) in every run%s", pcValue, oddText)
	rep.Measure("stale_without_barrier", float64(len(vs[0].stale)), "seeds")
	rep.Measure("stale_with_barrier", float64(len(vs[1].stale)), "seeds")
	rep.Measure("gap_without_barrier_us", usf(vs[0].gap/clock.Time(p.Seeds)), "µs")
	rep.Measure("gap_with_barrier_us", usf(vs[1].gap/clock.Time(p.Seeds)), "µs")
	rep.Result = res
	return rep, errors.Join(errs...)
}

func barrierName(fence bool) string {
	if fence {
		return "with the barrier (UNLOCK)"
	}
	return "without the barrier"
}

// seedList lists seeds in parentheses after a space ("" for none).
func seedList(s []uint64) string {
	if len(s) == 0 {
		return ""
	}
	var b []string
	for _, x := range s {
		b = append(b, fmt.Sprint(x))
	}
	return " (seeds " + strings.Join(b, ", ") + ")"
}
