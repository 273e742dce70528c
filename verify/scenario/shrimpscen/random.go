package shrimpscen

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/svm"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// RandomParams are svm-random's parameters: the nodes, the protocol and
// cashapps.Random's sizes (cashapps.RandomConfig).
type RandomParams struct {
	// Seed is the program's seed; 0 derives it from the run's seed.
	Seed     int    `toml:"seed"`
	Nodes    int    `toml:"nodes"`
	Protocol string `toml:"protocol"`
	// The program's sizes (cashapps.RandomConfig).
	DataPages  int `toml:"data_pages"`
	Granule    int `toml:"granule"`
	Phases     int `toml:"phases"`
	Locks      int `toml:"locks"`
	BlockWords int `toml:"block_words"`
	Sections   int `toml:"sections"`
	WriteShare int `toml:"write_share"`
	Compute    int `toml:"compute"`
}

// RandomDefaults are cashapps.DefaultRandom's sizes on 16 nodes under
// HLRC.
func RandomDefaults() *RandomParams {
	d := cashapps.DefaultRandom(0, 16)
	return &RandomParams{Nodes: 16, Protocol: svm.HLRC, DataPages: d.DataPages, Granule: d.Granule, Phases: d.Phases,
		Locks: d.Locks, BlockWords: d.BlockWords, Sections: d.Sections, WriteShare: d.WriteShare, Compute: d.Compute}
}

// randomMax bounds the sizes. assumed: 2^16, cashmere-random's bound.
const randomMax = 1 << 16

// Keys implements scenario.Keyed.
func (p *RandomParams) Keys() []scenario.KeySpec {
	d := "host/cashapps's DefaultRandom"
	return []scenario.KeySpec{
		scenario.Key("seed", "program seed (0: from --seed)").Range(0, 1<<31).From("0"),
		scenario.Key("nodes", "nodes (one process each)").Range(1, 16).From(paper + " Figure 4: 16"),
		scenario.Key("protocol", "SVM protocol (4.2)").OneOf(svm.Protocols()...).From("hlrc"),
		scenario.Key("data_pages", "8 KB data pages (even)").Range(2, randomMax).From(d),
		scenario.Key("granule", "words a process writes together").Range(1, 1024).Also("a divisor of 1024").From(d),
		scenario.Key("phases", "barrier-separated phases").Range(1, randomMax).From(d),
		scenario.Key("locks", "locks").Range(1, randomMax).From(d),
		scenario.Key("block_words", "words each lock guards").Range(1, randomMax).From(d),
		scenario.Key("sections", "critical sections per process per phase").Range(0, randomMax).From(d),
		scenario.Key("write_share", "granules written, in 1/256").Range(0, 256).From(d),
		scenario.Key("compute", "CPU cycles per granule written").Range(0, randomMax).From(d),
	}
}

func (p *RandomParams) config(seed uint64) cashapps.RandomConfig {
	return cashapps.RandomConfig{Seed: seed, Procs: p.Nodes, DataPages: p.DataPages, Granule: p.Granule, Phases: p.Phases,
		Locks: p.Locks, BlockWords: p.BlockWords, Sections: p.Sections, WriteShare: p.WriteShare, Compute: p.Compute}
}

// Validate implements scenario.Params: the keys, the program's sizes and
// whether it fits the nodes (shrimptb.CheckSVM), before any run.
func (p *RandomParams) Validate() error {
	if err := scenario.CheckKeys(p); err != nil {
		return err
	}
	prog, err := cashapps.NewRandom(p.config(1))
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "random: ")
		key := "data_pages"
		if k, _, ok := strings.Cut(msg, " = "); ok && !strings.Contains(k, " ") {
			key = k
		}
		return &scenario.KeyError{Key: key, Msg: msg}
	}
	c := shrimptb.DefaultSVM(p.Protocol)
	c.Cluster.Nodes = p.Nodes
	if err := shrimptb.CheckSVM(c, prog); err != nil {
		return &scenario.KeyError{Key: "data_pages", Msg: err.Error()}
	}
	return nil
}

// RandomScenario is svm-random.
func RandomScenario() *scenario.Scenario {
	return scenario.Typed("svm-random", "SVM: a random data-race-free program, checked against its replay",
		RandomDefaults, RunRandom)
}

// RunRandom runs one cashapps.Random program under the protocol in e
// (issue 19 section 4: «Randomised data-race-free programs on all three
// protocols, 16 nodes, against the reference»), checks its final memory
// by Random.Check and reports the packets the NIs carried (each checked at
// its destination's memory by the scoreboard: shrimp.once, shrimp.order,
// shrimp.scoreboard) and the protocol's counters.
func RunRandom(e *env.Env, p *RandomParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	seed := uint64(p.Seed)
	if seed == 0 {
		seed = e.Rand("svm-random").Uint64()
	}
	prog, err := cashapps.NewRandom(p.config(seed))
	if err != nil {
		return nil, err
	}
	c := shrimptb.DefaultSVM(p.Protocol)
	c.Cluster.Nodes = p.Nodes
	b, err := shrimptb.BuildSVM(e, c, prog)
	if err != nil {
		return nil, err
	}
	res, runErr := b.Run()
	checkErr := prog.Check(res.Memory)
	s := b.Cluster.Ref.Stats()
	rep := &scenario.Report{Title: fmt.Sprintf("svm-random: a random data-race-free program (seed %d) on %d SHRIMP nodes under %s, every checker on, against its replay in lock order",
		seed, p.Nodes, p.Protocol)}
	rep.Result = res.Run
	rep.Add("program", fmt.Sprintf("%d bytes: %d data pages in %d-word granules, %d phases, %d locks of %d words, %d sections a phase",
		prog.SharedBytes(), p.DataPages, p.Granule, p.Phases, p.Locks, p.BlockWords, p.Sections), "", "host/cashapps Random; program seed "+fmt.Sprint(seed))
	rep.Add("simulated time", fmt.Sprintf("%.3f ms", msOf(res.Time)), "", "the last process's end")
	rep.Add("packets delivered and checked", fmt.Sprintf("%d of %d expected (AU %d, DU %d)", s.Delivered, s.Expected, s.AUPackets, s.DUPackets), "",
		"the transactions: every packet checked at its destination's memory (shrimp.once, shrimp.order, shrimp.scoreboard)")
	t := res.Total
	rep.Add("  messages / notifications", fmt.Sprintf("%d / %d", t.Messages, res.Notifications), "", "host/svm's counters")
	rep.Add("  faults, fetches, twins, diffs, intervals, invalidations", fmt.Sprintf("%d, %d, %d, %d, %d, %d",
		t.ReadFaults+t.WriteFaults, t.Fetches, t.Twins, t.Diffs, t.Intervals, t.Invalidations), "", "host/svm's counters, summed")
	rep.Check("no checker violation, every process finished", runErr == nil, "%s", oneLine(runErr))
	rep.Check("final memory equals the replay in lock order (Random.Check)", checkErr == nil, "%s", oneLine(checkErr))
	rep.Check("every packet expected was delivered", s.Delivered == s.Expected, "%d of %d", s.Delivered, s.Expected)
	rep.Check("the plan's barriers", t.Barriers == uint64(p.Nodes*(p.Phases+1)), "%d (plan %d)", t.Barriers, p.Nodes*(p.Phases+1))
	rep.Measure("packets", float64(s.Delivered), "")
	rep.Measure("sim_ms", msOf(res.Time), "ms")
	rep.Measure("fetches", float64(t.Fetches), "")
	return rep, nil
}
