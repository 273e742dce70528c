package cashscen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/verify/scenario"
)

// SORKeys are SOR's size keys (cashapps.Keys("sor")).
type SORKeys struct {
	Rows  int `toml:"rows"`
	Cols  int `toml:"cols"`
	Iters int `toml:"iters"`
}

// GaussKeys are Gauss's (cashapps.Keys("gauss")).
type GaussKeys struct {
	N        int `toml:"n"`
	RowWords int `toml:"row_words"`
}

// LUKeys are LU's and CLU's (cashapps.Keys("lu")).
type LUKeys struct {
	N     int `toml:"n"`
	Block int `toml:"block"`
}

// Em3dKeys are Em3d's (cashapps.Keys("em3d")).
type Em3dKeys struct {
	Nodes  int `toml:"nodes"`
	Degree int `toml:"degree"`
	Span   int `toml:"span"`
	Iters  int `toml:"iters"`
	Seed   int `toml:"seed"`
}

// WaterKeys are Water's (cashapps.Keys("water")).
type WaterKeys struct {
	Molecules int `toml:"molecules"`
	Steps     int `toml:"steps"`
	Groups    int `toml:"groups"`
}

// ReportParams are cashmere-report's parameters.
type ReportParams struct {
	// App is one of cashapps.Names() or all.
	App string `toml:"app"`
	// Nodes and CPUs are the P:C configuration's P/C and C (section
	// 3.3: «32:4 specifies 32-processors, 4 processors per node, and
	// eight nodes»).
	Nodes int `toml:"nodes"`
	CPUs  int `toml:"cpus"`
	// Variant is the protocol; only 2L is built.
	Variant string `toml:"variant"`
	// Speedup runs each program on one processor of the model (1:1) too,
	// for the speedup.
	Speedup bool `toml:"speedup"`
	// Costs measures section 3.1's and Table 1's operation costs.
	Costs bool `toml:"costs"`
	// The programs' sizes, the CI defaults of host/cashapps.
	SOR   SORKeys   `toml:"sor"`
	Gauss GaussKeys `toml:"gauss"`
	LU    LUKeys    `toml:"lu"`
	CLU   LUKeys    `toml:"clu"`
	Em3d  Em3dKeys  `toml:"em3d"`
	Water WaterKeys `toml:"water"`
}

// ReportDefaults are cashmere-report's defaults: every program at its CI
// size on 8:1 (the paper's eight nodes, one processor each), the 1:1 runs
// for the speedup and the costs.
//
// Not the paper's 32:4: on the runtime as merged, LU's and CLU's runs at
// 32:4 do not end (simulated time grows at about 1 ms a wall second) and
// SOR's and Water's break cashmere.diff with several writers a node
// (docs/cashmere-validation.md, "What does not work"); 8:1 runs every
// program in about a minute. `--set nodes=8 --set cpus=4` runs 32:4.
func ReportDefaults() *ReportParams {
	sor, g, lu, clu, em, w := cashapps.DefaultSOR(), cashapps.DefaultGauss(), cashapps.DefaultLU(), cashapps.DefaultCLU(), cashapps.DefaultEm3d(), cashapps.DefaultWater()
	return &ReportParams{App: "all", Nodes: 8, CPUs: 1, Variant: "2L", Speedup: true, Costs: true,
		SOR:   SORKeys{sor.Rows, sor.Cols, sor.Iters},
		Gauss: GaussKeys{g.N, g.RowWords},
		LU:    LUKeys{lu.N, lu.Block},
		CLU:   LUKeys{clu.N, clu.Block},
		Em3d:  Em3dKeys{em.Nodes, em.Degree, em.Span, em.Iters, int(em.Seed)},
		Water: WaterKeys{w.Molecules, w.Steps, w.Groups}}
}

// variants are the paper's protocols (section 2.6, 3): only 2L is built
// (docs/cashmere-design.md section 8).
var variants = []string{"2L", "2LS", "2LOffMC", "2LMigr", "1LD", "1L"}

// maxSize bounds the size keys: assumed: 1<<16, far above any size whose
// run ends in a working day, and within int arithmetic of every program
// (the pages are bounded separately by the bench's 4096).
const maxSize = 1 << 16

// Keys implements scenario.Keyed.
func (p *ReportParams) Keys() []scenario.KeySpec {
	size := func(key, unit string, lo float64) scenario.KeySpec {
		return scenario.Key(key, unit).Range(lo, maxSize).From("host/cashapps's CI default")
	}
	return []scenario.KeySpec{
		scenario.Key("app", "program (Table 2)").OneOf(append([]string{"all"}, cashapps.Names()...)...).From("all"),
		scenario.Key("nodes", "AlphaServers (P/C)").Range(1, cashmere.MaxNodes).From(paper + " 3: eight"),
		scenario.Key("cpus", "processors per node (C)").Range(1, 4).From("1: the paper's 4 breaks the runtime as merged (docs/cashmere-validation.md)"),
		scenario.Key("variant", "protocol").OneOf(variants...).Also("only 2L is built").From(paper + " 2: Cashmere-2L"),
		scenario.Key("speedup", "true: also run each program on 1:1 for the speedup"),
		scenario.Key("costs", "true: measure section 3.1's and Table 1's costs"),
		size("sor.rows", "grid rows (boundary included)", 3),
		size("sor.cols", "grid columns (even)", 4),
		size("sor.iters", "red-black iterations", 1),
		size("gauss.n", "order of A x = b", 1),
		scenario.Key("gauss.row_words", "words between rows").Range(0, maxSize).Also("0: n+1 rounded up to whole pages; else at least n+1").From("0"),
		size("lu.n", "matrix order", 1).Also("a multiple of lu.block"),
		size("lu.block", "block order", 1),
		size("clu.n", "matrix order", 1).Also("a multiple of clu.block"),
		size("clu.block", "block order", 1),
		size("em3d.nodes", "graph nodes (even; half E, half H)", 2),
		size("em3d.degree", "neighbours of each node", 1),
		scenario.Key("em3d.span", "node indices").Range(0, maxSize).Also("below em3d.nodes/2").From("assumed: 32 (host/cashapps)"),
		size("em3d.iters", "iterations", 1),
		scenario.Key("em3d.seed", "graph seed").Range(0, 1<<31).From("1"),
		size("water.molecules", "molecules (even)", 2),
		size("water.steps", "time steps", 1),
		size("water.groups", "force locks", 1).Also("a divisor of water.molecules"),
	}
}

// sets returns the size keys of program name as cashapps.Build takes
// them.
func (p *ReportParams) sets(name string) map[string]int {
	switch name {
	case "sor":
		return map[string]int{"rows": p.SOR.Rows, "cols": p.SOR.Cols, "iters": p.SOR.Iters}
	case "gauss":
		return map[string]int{"n": p.Gauss.N, "row_words": p.Gauss.RowWords}
	case "lu":
		return map[string]int{"n": p.LU.N, "block": p.LU.Block}
	case "clu":
		return map[string]int{"n": p.CLU.N, "block": p.CLU.Block}
	case "em3d":
		return map[string]int{"nodes": p.Em3d.Nodes, "degree": p.Em3d.Degree, "span": p.Em3d.Span, "iters": p.Em3d.Iters, "seed": p.Em3d.Seed}
	case "water":
		return map[string]int{"molecules": p.Water.Molecules, "steps": p.Water.Steps, "groups": p.Water.Groups}
	}
	return nil
}

// apps are the programs the report runs, in Table 2's order.
func (p *ReportParams) apps() []string {
	if p.App == "all" {
		return cashapps.Names()
	}
	return []string{p.App}
}

// build is program name at the configured size; an error is a
// *scenario.KeyError naming the size key the constructor refused.
func (p *ReportParams) build(name string) (cashapps.Program, error) {
	prog, err := cashapps.Build(name, p.sets(name))
	if err != nil {
		return nil, &scenario.KeyError{Key: keyOf(name, err), Msg: strings.TrimPrefix(err.Error(), "cashapps: ")}
	}
	if pages := prog.SharedBytes() / cashmere.PageBytes; pages > maxPages {
		return nil, &scenario.KeyError{Key: name + "." + cashapps.Keys(name)[0],
			Msg: fmt.Sprintf("%s needs %d pages of shared memory, above the limit %d (the bench's shared area, 32 MB)", name, pages, maxPages)}
	}
	return prog, nil
}

// maxPages is cashtb's shared area in pages (32 MB, its memory layout).
const maxPages = 4096

// keyOf names the key of a constructor's error ("sor: rows = 2: ...",
// cashapps's form): name.key, or name when the message names none of its
// keys.
func keyOf(name string, err error) string {
	msg := err.Error()
	for _, k := range cashapps.Keys(name) {
		if strings.Contains(msg, ": "+k+" = ") {
			return name + "." + k
		}
	}
	return name
}

// Validate implements scenario.Params.
func (p *ReportParams) Validate() error {
	if err := scenario.CheckKeys(p); err != nil {
		return err
	}
	if p.Variant != "2L" {
		return &scenario.KeyError{Key: "variant", Msg: fmt.Sprintf("%s is not built yet: only 2L (docs/cashmere-design.md section 8; the variant comparisons are later work)", p.Variant)}
	}
	if !slices.Contains(cashapps.Names(), p.App) && p.App != "all" {
		return &scenario.KeyError{Key: "app", Msg: fmt.Sprintf("%q is not all or one of %s", p.App, strings.Join(cashapps.Names(), ", "))}
	}
	// Every program's sizes are checked, run or not: a bad key is refused
	// whatever app says.
	for _, name := range cashapps.Names() {
		if _, err := p.build(name); err != nil {
			return err
		}
	}
	return nil
}
