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
	// Procs, when not 0, is the total processors P, and the nodes are
	// P/C (cpus must divide it): a sweep over cpus at a fixed P is
	// section 3.3.3's clustering («With the total number of processors
	// fixed, the level of clustering refers to the number of processes
	// per node»). 0 uses nodes.
	Procs int `toml:"procs"`
	// Variant is the protocol of the programs' runs (one of
	// variantColumns).
	Variant string `toml:"variant"`
	// Interrupts serves the protocol's requests by interrupts instead of
	// polling (section 2.3's alternative; cashmere.Config.Interrupts) in
	// the programs' runs.
	Interrupts bool `toml:"interrupts"`
	// Variants runs every program under every variant of variantColumns
	// on VariantNodes x VariantCPUs too, with Table 3's columns and the
	// paper's findings as checks.
	Variants     bool `toml:"variants"`
	VariantNodes int  `toml:"variant_nodes"`
	VariantCPUs  int  `toml:"variant_cpus"`
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
// size on 8:1 (the paper's eight nodes, one processor each) under 2L, the
// 1:1 runs for the speedup and the costs; the variant runs are off
// (variants=true: 2 x 4), their 30 runs take longer than make run's budget.
//
// Not the paper's 32:4: at the CI sizes 32:4 takes several minutes
// (docs/cashmere-validation.md, "Default configuration"); `--set cpus=4`
// runs it.
func ReportDefaults() *ReportParams {
	sor, g, lu, clu, em, w := cashapps.DefaultSOR(), cashapps.DefaultGauss(), cashapps.DefaultLU(), cashapps.DefaultCLU(), cashapps.DefaultEm3d(), cashapps.DefaultWater()
	return &ReportParams{App: "all", Nodes: 8, CPUs: 1, Variant: "2L", Speedup: true, Costs: true,
		VariantNodes: 2, VariantCPUs: 4,
		SOR:   SORKeys{sor.Rows, sor.Cols, sor.Iters},
		Gauss: GaussKeys{g.N, g.RowWords},
		LU:    LUKeys{lu.N, lu.Block},
		CLU:   LUKeys{clu.N, clu.Block},
		Em3d:  Em3dKeys{em.Nodes, em.Degree, em.Span, em.Iters, int(em.Seed)},
		Water: WaterKeys{w.Molecules, w.Steps, w.Groups}}
}

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
		scenario.Key("cpus", "processors per node (C)").Range(1, 4).From("1: the paper's 4 takes minutes at the CI sizes (docs/cashmere-validation.md)"),
		scenario.Key("procs", "total processors P (0: nodes x cpus)").Range(0, cashmere.MaxNodes*4).Also("a multiple of cpus; nodes = procs/cpus").From("0"),
		scenario.Key("variant", "protocol of the programs' runs").OneOf(variantColumns...).Also("1LD and 1L: at most 8 processors").From(paper + " 2: Cashmere-2L"),
		scenario.Key("interrupts", "true: the programs' runs serve requests by interrupts instead of polling (docs/cashmere-design.md section 8, Interrupts)"),
		scenario.Key("variants", "true: also run every program under every variant on variant_nodes x variant_cpus, with Table 3's columns and the findings"),
		scenario.Key("variant_nodes", "AlphaServers of the variant runs").Range(1, cashmere.MaxNodes).From("2: 1LD and 1L take at most 8 processors (the lock array's entries)"),
		scenario.Key("variant_cpus", "processors per node of the variant runs").Range(1, 4).Also("variant_nodes x variant_cpus at most 8").From("4: the paper's node"),
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
	if p.Procs != 0 && (p.Procs%p.CPUs != 0 || p.Procs/p.CPUs > cashmere.MaxNodes) {
		return &scenario.KeyError{Key: "procs", Msg: fmt.Sprintf("%d is not cpus (%d) times a node count in 1..%d", p.Procs, p.CPUs, cashmere.MaxNodes)}
	}
	if (p.Variant == cashmere.Variant1LD || p.Variant == cashmere.Variant1L) && p.nodes()*p.CPUs > cashmere.MaxNodes {
		return &scenario.KeyError{Key: "variant", Msg: fmt.Sprintf("%s takes at most %d processors (every processor a protocol node of the lock array), not %d", p.Variant, cashmere.MaxNodes, p.nodes()*p.CPUs)}
	}
	if p.Variants && p.VariantNodes*p.VariantCPUs > cashmere.MaxNodes {
		return &scenario.KeyError{Key: "variant_cpus", Msg: fmt.Sprintf("variant_nodes x variant_cpus = %d: 1LD and 1L take at most %d processors", p.VariantNodes*p.VariantCPUs, cashmere.MaxNodes)}
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

// nodes is the run's node count: procs/cpus when procs is set, else
// nodes.
func (p *ReportParams) nodes() int {
	if p.Procs != 0 {
		return p.Procs / p.CPUs
	}
	return p.Nodes
}

// Metrics implements scenario.MetricLister (a sweep checks its --y against
// them): the costs (µs), and per program its time, speedup and Table 3
// counts on the configured P:C, and per variant of variantColumns its
// time, transfers and twins (variants=true). Every name is declared
// whatever app, costs and variants select, so a sweep's --y is checked
// against one list.
func (p *ReportParams) Metrics() []scenario.MetricDef {
	var defs []scenario.MetricDef
	for _, m := range []string{"page_transfer_us", "twin_us", "diff_us", "lock_us", "barrier2_us", "barrier32_us",
		"page_transfer_1ld_us", "page_transfer_local_1ld_us", "lock_1ld_us", "barrier2_1ld_us", "barrier8_1ld_us", "diff_local_1ld_us",
		"resident_fault_us", "dir_locked_us", "dir_unlocked_us", "incoming_diff_us"} {
		defs = append(defs, scenario.MetricDef{Name: m, Unit: "µs"})
	}
	for _, name := range cashapps.Names() {
		defs = append(defs, scenario.MetricDef{Name: name + "_ms", Unit: "ms"}, scenario.MetricDef{Name: name + "_speedup"},
			scenario.MetricDef{Name: name + "_transfers"}, scenario.MetricDef{Name: name + "_twins"},
			scenario.MetricDef{Name: name + "_notices"}, scenario.MetricDef{Name: name + "_data_mb", Unit: "MB"})
		for _, v := range variantColumns {
			lv := strings.ToLower(v)
			defs = append(defs, scenario.MetricDef{Name: name + "_" + lv + "_ms", Unit: "ms"},
				scenario.MetricDef{Name: name + "_" + lv + "_transfers"}, scenario.MetricDef{Name: name + "_" + lv + "_twins"})
		}
	}
	return defs
}
