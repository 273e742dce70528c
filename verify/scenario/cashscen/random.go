package cashscen

import (
	"fmt"
	"strings"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/cashtb"
)

// RandomParams are cashmere-random's parameters: the cluster, the
// protocol and cashapps.Random's sizes (cashapps.RandomConfig).
type RandomParams struct {
	// Seed is the program's seed; 0 derives it from the run's seed
	// (--seed), so that seeded jobs run different programs.
	Seed int `toml:"seed"`
	// Nodes and CPUs are the P:C configuration's P/C and C.
	Nodes int `toml:"nodes"`
	CPUs  int `toml:"cpus"`
	// Variant is the protocol (section 2.6).
	Variant string `toml:"variant"`
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

// RandomVariants are the protocols cashmere-random runs: the runtime's
// six variants.
var RandomVariants = []string{cashmere.Variant2L, cashmere.Variant2LS, cashmere.Variant2LOffMC, cashmere.Variant2LMigr, cashmere.Variant1LD, cashmere.Variant1L}

// RandomDefaults are cashapps.DefaultRandom's sizes on 16 processes, four
// nodes of four (section 3.3's 16:4), under 2L.
func RandomDefaults() *RandomParams {
	d := cashapps.DefaultRandom(0, 16)
	return &RandomParams{Seed: 0, Nodes: 4, CPUs: 4, Variant: cashmere.Variant2L,
		DataPages: d.DataPages, Granule: d.Granule, Phases: d.Phases, Locks: d.Locks, BlockWords: d.BlockWords,
		Sections: d.Sections, WriteShare: d.WriteShare, Compute: d.Compute}
}

// Keys implements scenario.Keyed.
func (p *RandomParams) Keys() []scenario.KeySpec {
	d := "host/cashapps's DefaultRandom"
	return []scenario.KeySpec{
		scenario.Key("seed", "program seed (0: from --seed)").Range(0, 1<<31).From("0"),
		scenario.Key("nodes", "AlphaServers (P/C)").Range(1, cashmere.MaxNodes).Also("nodes x cpus at most 8 under 1LD and 1L").From("assumed: 4 (16 processes)"),
		scenario.Key("cpus", "processors per node (C)").Range(1, 4).From(paper + " 3: four 21064A"),
		scenario.Key("variant", "protocol").OneOf(RandomVariants...).From(paper + " 2: Cashmere-2L"),
		scenario.Key("data_pages", "data pages (even)").Range(2, maxSize).From(d),
		scenario.Key("granule", "words a process writes together").Range(1, cashmere.PageBytes/8).Also("a divisor of 1024").From(d),
		scenario.Key("phases", "barrier-separated phases").Range(1, maxSize).From(d),
		scenario.Key("locks", "locks").Range(1, maxSize).From(d),
		scenario.Key("block_words", "words each lock guards").Range(1, maxSize).From(d),
		scenario.Key("sections", "critical sections per process per phase").Range(0, maxSize).From(d),
		scenario.Key("write_share", "granules written, in 1/256").Range(0, 256).From(d),
		scenario.Key("compute", "CPU cycles per granule written").Range(0, maxSize).From(d),
	}
}

// config is the program's configuration with seed.
func (p *RandomParams) config(seed uint64) cashapps.RandomConfig {
	return cashapps.RandomConfig{Seed: seed, Procs: p.Nodes * p.CPUs, DataPages: p.DataPages, Granule: p.Granule,
		Phases: p.Phases, Locks: p.Locks, BlockWords: p.BlockWords, Sections: p.Sections, WriteShare: p.WriteShare, Compute: p.Compute}
}

// Validate implements scenario.Params.
func (p *RandomParams) Validate() error {
	if err := scenario.CheckKeys(p); err != nil {
		return err
	}
	procs := p.Nodes * p.CPUs
	if (cashmere.Config{Variant: p.Variant}).OneLevel() && procs > cashmere.MaxNodes {
		return &scenario.KeyError{Key: "nodes", Msg: fmt.Sprintf("nodes x cpus = %d: %s takes at most %d processes (every processor a protocol node with an entry of the 8-entry lock array, MC-P26)", procs, p.Variant, cashmere.MaxNodes)}
	}
	prog, err := cashapps.NewRandom(p.config(1))
	if err != nil {
		return &scenario.KeyError{Key: randomKeyOf(err), Msg: strings.TrimPrefix(err.Error(), "random: ")}
	}
	pages := int(prog.SharedBytes() / cashmere.PageBytes)
	if (cashmere.Config{Variant: p.Variant}).OneLevel() {
		pages *= p.CPUs // a copy per processor of a node
	}
	if pages > maxPages {
		return &scenario.KeyError{Key: "data_pages", Msg: fmt.Sprintf("the program needs %d pages of shared memory (a copy per processor under 1LD and 1L), above the bench's %d (32 MB)", pages, maxPages)}
	}
	return nil
}

// randomKeyOf names the key of NewRandom's error ("random: granule = 3:
// ..."), or data_pages.
func randomKeyOf(err error) string {
	msg := strings.TrimPrefix(err.Error(), "random: ")
	if k, _, ok := strings.Cut(msg, " = "); ok && !strings.Contains(k, " ") {
		return k
	}
	return "data_pages"
}

// RandomScenario is cashmere-random; its waveform is cashmere-report's
// view (node 0 and node 1's CPU and PCI bus, the hub).
func RandomScenario() *scenario.Scenario {
	return scenario.Typed("cashmere-random", "Cashmere: a random data-race-free program, checked against its replay",
		RandomDefaults, RunRandom).In("Memory Channel", typicalRandom).WithWaves(view)
}

// typicalRandom is cashmere-random's typical wall time with the defaults
// (DefaultRandom on 4x4 under 2L: 94.5 ms simulated, 67,000 MC writes):
// 25 s measured on the 2-core machine shared with other jobs, 2026-11-28
// (documentation only).
const typicalRandom = "25 s"

// RunRandom runs one cashapps.Random program on the configured cluster
// and variant in e (issue 18 section 4: «Randomised data-race-free
// programs ... against the reference»), checks its final shared memory
// by Random.Check (the owned writes and the flag ring replayed phase by
// phase, each lock's sections in the order its log records) and reports
// the MC writes the hub ordered (mctb's Ref: one packet each, every one
// then checked at each receiver that maps its page by mc.once, mc.order,
// mc.torn and at the end mc.scoreboard) and the protocol's statistics
// (Table 3's counters). A failure is a failed check with a one-line
// reason.
func RunRandom(e *env.Env, p *RandomParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	seed := uint64(p.Seed)
	if seed == 0 {
		seed = e.Rand("cashmere-random").Uint64()
	}
	rc := p.config(seed)
	prog, err := cashapps.NewRandom(rc)
	if err != nil {
		return nil, err
	}
	c := config(p.Nodes, p.CPUs)
	c.Variant = p.Variant
	b, err := cashtb.BuildApp(e, c, prog)
	if err != nil {
		return nil, err
	}
	res, runErr := b.Run()
	checkErr := prog.Check(res.Memory)
	s := b.Cluster.Ref.Stats()
	procs := p.Nodes * p.CPUs
	rep := &scenario.Report{Title: fmt.Sprintf(
		"cashmere-random: a random data-race-free program (seed %d) on %d AlphaServer nodes x %d CPUs (%d:%d) under Cashmere-%s, every checker on, against its replay in lock order",
		seed, p.Nodes, p.CPUs, procs, p.CPUs, p.Variant)}
	rep.Add("program", fmt.Sprintf("%d pages: %d data pages in %d-word granules, %d phases, %d locks of %d words, %d sections a phase",
		prog.SharedBytes()/cashmere.PageBytes, p.DataPages, p.Granule, p.Phases, p.Locks, p.BlockWords, p.Sections), "",
		"host/cashapps Random: owned writes, a flag ring, critical sections; program seed "+fmt.Sprint(seed))
	rep.Add("simulated time", fmt.Sprintf("%.3f ms", float64(res.Time)/float64(clock.Millisecond)), "", "the last process's end")
	rep.Add("MC writes ordered by the hub", fmt.Sprint(s.Ordered), "",
		"the transactions: one packet each (a burst cut at 32 bytes), each checked at every receiver that maps its page (mc.once, mc.order, mc.torn, mc.scoreboard)")
	rep.Add("(write, receiver) pairs delivered to memory", fmt.Sprintf("%d of %d expected", s.Delivered, s.Expected), "", "mctb's reference model")
	t := res.Total
	for _, r := range []struct {
		what string
		n    int
	}{
		{"lock / flag acquires", t.LockAcquires + t.FlagAcquires}, {"barriers (processes' count)", t.Barriers},
		{"read faults", t.ReadFaults}, {"write faults", t.WriteFaults}, {"page transfers", t.PageTransfers},
		{"directory updates", t.DirUpdates}, {"write notices", t.WriteNotices}, {"invalidations", t.Invalidations},
		{"twins", t.Twins}, {"diffs", t.Diffs}, {"incoming diffs", t.IncomingDiffs}, {"flush-updates", t.FlushUpdates},
		{"shootdowns", t.Shootdowns}, {"exclusive entries", t.Exclusive}, {"exclusive breaks", t.Breaks}, {"relocations (first touch)", t.Relocations},
	} {
		rep.Add("  "+r.what, fmt.Sprint(r.n), "", "Table 3's counters, summed over the processes")
	}
	rep.Add("  data (bytes)", fmt.Sprint(t.DataBytes), "", "page replies and diffs")
	rep.Check("no checker violation, every process finished", runErr == nil, "%s", oneLine(runErr))
	rep.Check("final memory equals the replay in lock order (Random.Check)", checkErr == nil, "%s", oneLine(checkErr))
	rep.Check("every MC write sent was ordered and delivered", s.Ordered == s.Sent && s.Delivered == s.Expected,
		"%d sent, %d ordered; %d of %d deliveries", s.Sent, s.Ordered, s.Delivered, s.Expected)
	rep.Check("the plan's synchronisation", t.LockAcquires == procs*p.Sections*p.Phases && t.FlagAcquires == procs*p.Phases && t.Barriers == procs*(p.Phases+1),
		"%d lock acquires (plan %d), %d flag acquires (plan %d), %d barriers (plan %d)",
		t.LockAcquires, procs*p.Sections*p.Phases, t.FlagAcquires, procs*p.Phases, t.Barriers, procs*(p.Phases+1))
	rep.Measure("writes", float64(s.Ordered), "")
	rep.Measure("deliveries", float64(s.Delivered), "")
	rep.Measure("sim_ms", float64(res.Time)/float64(clock.Millisecond), "ms")
	rep.Measure("page_transfers", float64(t.PageTransfers), "")
	rep.Measure("diffs", float64(t.Diffs), "")
	return rep, nil
}
