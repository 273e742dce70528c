package lciscen

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nisim/nisim/host/lciapps"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/lcitb"
)

// --- lci-apps ---

// AppsParams are lci-apps's parameters.
type AppsParams struct {
	// App is one application of Table VII (lciapps.Names) or all.
	App string `toml:"app"`
	// Variant is one of lcitb.VariantsOf(app) or all; I-sdma always runs
	// too (the baseline of the relative time).
	Variant string `toml:"variant"`
	// Platform is both, ppro or p3.
	Platform string `toml:"platform"`
	// Nodes is the cluster size (the paper's 64).
	Nodes int `toml:"nodes"`
	// Warm and Steps are the steps ignored and measured.
	Warm  int `toml:"warm"`
	Steps int `toml:"steps"`
	// ColSize is SOR's column size (figure 14's axis: the doubles of a
	// border row; the paper's problem is 1536).
	ColSize int `toml:"colsize"`
	// Fig14 runs figure 14 instead: SOR at every column size of
	// fig14Cols, I-sdma, +async, I-rcpy and I-rcpy + async, each
	// relative to I-sdma at its column size, and section 7.2's findings.
	Fig14 bool `toml:"fig14"`
}

// AppsDefaults are one application on both platforms, 64 nodes, 2 + 3
// steps. The full matrix (app=all, variant=all) is for a sweep on many
// machines (README «Sweeps across machines») or 8 nodes.
func AppsDefaults() *AppsParams {
	return &AppsParams{App: lciapps.QR, Variant: "all", Platform: "both", Nodes: 64, Warm: 2, Steps: 3, ColSize: sorPaperCols}
}

// maxAppSteps bounds warm + steps: a full-size run at 64 nodes (Radix's
// 58,590 region moves are 916 steps per processor, Barnes's 65,536 bodies
// 1,024; host/lciapps keeps a time and a count per node and step and CRL
// a region per read).
const maxAppSteps = 2000

// allVariants are every variant any application takes (rcpy and
// rcpy-async are SOR's on I-rcpy, figure 14; variant=all leaves them out:
// fig14=true runs them).
var allVariants = []string{lcitb.AppSDMA, lcitb.AppPIO, lcitb.AppNIRX, lcitb.AppHRX, lcitb.App1K, lcitb.App4K,
	lcitb.AppHMC, lcitb.AppBinomial, lcitb.AppAsync, lcitb.AppRCPY, lcitb.AppRcpyAsync}

// sorPaperCols is SOR's column size in the paper («a 1536×1536 matrix»).
const sorPaperCols = 1536

// fig14Cols are figure 14's column sizes in the model: the paper's 1536
// and its double and quadruple (the figure's axis values are not in the
// text). Larger ones are left out: at 8 nodes I-sdma's MPI messages to
// both neighbours at once deadlock the LCI library at 12288 on the PPro
// and 9216 on the P3 (the NIs hold packets «waiting for host buffers»
// while every CPU waits: the Puzzle-64 failure of docs/lci-validation.md).
var fig14Cols = []int{sorPaperCols, 2 * sorPaperCols, 4 * sorPaperCols}

// fig14Variants are figure 14's bars, I-sdma (the 1.0) first.
var fig14Variants = []string{lcitb.AppSDMA, lcitb.AppAsync, lcitb.AppRCPY, lcitb.AppRcpyAsync}

// Keys implements scenario.Keyed.
func (p *AppsParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("app", "application (Table VII)").OneOf(append(append([]string{"all"}, lciapps.Names...), numbered(len(lciapps.Names))...)...).
			Also("or its column of Table VII, 1-9 (a sweep's grid is numbers)").From("QR, the multicast-latency-bound one"),
		scenario.Key("variant", "LCI implementation of section 7's figures").OneOf(append(append([]string{"all"}, allVariants...), numbered(len(allVariants))...)...).
			Also("or its number 1-11 in that order; binomial is ASP's, async, rcpy and rcpy-async SOR's (all: without rcpy and rcpy-async)"),
		scenario.Key("platform", "Table VII's").OneOf("both", "ppro", "p3").From("both, as the paper"),
		nodesKey().From("the paper's 64"),
		scenario.Key("warm", "steps ignored").AtLeast(0).Limit(maxAppSteps, "with steps, a full-size run's"),
		scenario.Key("steps", "steps measured").AtLeast(1).Limit(maxAppSteps, "a full-size run's: Radix at 64 nodes is 916 steps, Barnes 1,024").
			Also(fmt.Sprintf("warm + steps at most %d", maxAppSteps)),
		scenario.Key("colsize", "SOR's column size (doubles per border row), figure 14's axis").AtLeast(1).Limit(lciapps.SORMaxColSize, "16 x the paper's: the I-rcpy rows' pages in the TLBs").
			From("the paper's 1536").Also("SOR only; at least one row per node"),
		scenario.Key("fig14", "figure 14: SOR at column sizes 1536, 3072, 6144 with sdma, async, rcpy, rcpy-async").Also("app=sor; ignores variant and colsize"),
	}
}

// numbered are "1" to "n": the numbers the app and variant keys take for
// their values (nisim sweep's grids are numbers; a string key given a
// bare number takes it as written).
func numbered(n int) []string {
	var out []string
	for i := range n {
		out = append(out, strconv.Itoa(i+1))
	}
	return out
}

// byNumber resolves a number 1..len(names) to its name.
func byNumber(v string, names []string) string {
	if i, err := strconv.Atoi(v); err == nil && i >= 1 && i <= len(names) {
		return names[i-1]
	}
	return v
}

// app and variant are the keys' values as names.
func (p *AppsParams) app() string     { return byNumber(p.App, lciapps.Names) }
func (p *AppsParams) variant() string { return byNumber(p.Variant, allVariants) }

// Validate implements scenario.Params.
func (p *AppsParams) Validate() error {
	if err := scenario.CheckKeys(p); err != nil {
		return err
	}
	if p.Warm+p.Steps > maxAppSteps {
		return &scenario.KeyError{Key: "steps", Msg: fmt.Sprintf("warm + steps = %d, more than %d", p.Warm+p.Steps, maxAppSteps)}
	}
	app, v := p.app(), p.variant()
	if slices.Contains(lcitb.RcpyVariants, v) && app != lciapps.SOR {
		return &scenario.KeyError{Key: "variant", Msg: fmt.Sprintf("%s is SOR's (figure 14), not %s's: set app=sor", v, app)}
	}
	if v != "all" && app != "all" && !slices.Contains(lcitb.VariantsOf(app), v) && !slices.Contains(lcitb.RcpyVariants, v) {
		return &scenario.KeyError{Key: "variant", Msg: fmt.Sprintf("%s is not one of %s's variants %v", v, app, lcitb.VariantsOf(app))}
	}
	if p.ColSize != sorPaperCols && app != lciapps.SOR {
		return &scenario.KeyError{Key: "colsize", Msg: fmt.Sprintf("%d: a column size is SOR's (figure 14), not %s's: set app=sor", p.ColSize, app)}
	}
	if p.Fig14 && app != lciapps.SOR {
		return &scenario.KeyError{Key: "fig14", Msg: fmt.Sprintf("figure 14 is SOR's, not %s's: set app=sor", app)}
	}
	cols := []int{p.ColSize}
	if p.Fig14 {
		cols = fig14Cols
	}
	for _, c := range cols {
		if app == lciapps.SOR && 1536*1536/c < p.Nodes {
			return &scenario.KeyError{Key: "colsize", Msg: fmt.Sprintf("%d on %d nodes: fewer rows of the 1536 x 1536 grid than nodes", c, p.Nodes)}
		}
	}
	return nil
}

// apps and variants are the runs' applications and each one's variants
// (I-sdma first).
func (p *AppsParams) apps() []string {
	if p.app() == "all" {
		return lciapps.Names
	}
	return []string{p.app()}
}

func (p *AppsParams) variants(app string) []string {
	all, v := lcitb.VariantsOf(app), p.variant()
	if v == "all" {
		return all
	}
	if app == lciapps.SOR && slices.Contains(lcitb.RcpyVariants, v) {
		return []string{lcitb.AppSDMA, v}
	}
	if !slices.Contains(all, v) {
		return nil
	}
	if v == lcitb.AppSDMA {
		return []string{lcitb.AppSDMA}
	}
	return []string{lcitb.AppSDMA, v}
}

func (p *AppsParams) platforms() []string {
	if p.Platform == "both" {
		return []string{"ppro", "p3"}
	}
	return []string{p.Platform}
}

// single is a run of one application and one variant: its metrics have
// short names (a sweep's columns).
func (p *AppsParams) single() bool { return p.app() != "all" && p.variant() != "all" }

// Metrics implements scenario.MetricLister: per platform the variant's
// time per step (µs), I-sdma's, the ratio and the packet rate, measured
// when the run has one application and one variant; otherwise one time
// and ratio per application and variant.
func (p *AppsParams) Metrics() []scenario.MetricDef {
	var defs []scenario.MetricDef
	if p.Fig14 {
		return p.fig14Metrics()
	}
	for _, pl := range p.platforms() {
		// The short names are declared whatever app and variant are: a
		// sweep over them (--grid app=...,variant=...) checks its --y
		// against the defaults' declaration.
		defs = append(defs, scenario.MetricDef{Name: pl + "_step_us", Unit: "µs"}, scenario.MetricDef{Name: pl + "_sdma_step_us", Unit: "µs"},
			scenario.MetricDef{Name: pl + "_rel", Unit: "x I-sdma"}, scenario.MetricDef{Name: pl + "_packet_rate", Unit: "packets/s/node"})
		if p.single() {
			continue
		}
		for _, a := range p.apps() {
			for _, v := range p.variants(a) {
				defs = append(defs, scenario.MetricDef{Name: appMetric(pl, a, v, "us"), Unit: "µs"}, scenario.MetricDef{Name: appMetric(pl, a, v, "rel"), Unit: "x I-sdma"})
			}
		}
	}
	return defs
}

func appMetric(pl, app, variant, what string) string {
	return strings.Join([]string{pl, app, variant, what}, "_")
}

// AppsScenario is lci-apps.
func AppsScenario() *scenario.Scenario {
	return scenario.Typed("lci-apps", "section 7's applications as skeletons: time per step vs I-sdma, findings",
		AppsDefaults, RunApps)
}

// appsPaper are the relative run times section 7's text gives (figures 12
// to 16 print no numbers): variant, application, platform ("" both) and
// the value, an upper bound when upTo.
var appsPaper = []struct {
	variant, app, platform string
	rel                    float64
	upTo                   bool
	quote                  string
}{
	{lcitb.AppNIRX, lciapps.Barnes, "", 1.15, true, "7.1 «they run up to 15% more slowly on I-nirx»"},
	{lcitb.AppNIRX, lciapps.Radix, "", 1.15, true, "7.1 «they run up to 15% more slowly on I-nirx»"},
	{lcitb.AppNIRX, lciapps.LEQ, "", 1.23, false, "7.1 «For LEQ, this slowdown is even 23%»"},
	{lcitb.App4K, lciapps.Barnes, "PPro", 1.26, true, "7.3 «Barnes, LEQ, and QR ... up to 26% worse with a 4-Kbyte MTU on the PPro»"},
	{lcitb.App4K, lciapps.LEQ, "PPro", 1.26, true, "7.3 «Barnes, LEQ, and QR ... up to 26% worse»"},
	{lcitb.App4K, lciapps.QR, "PPro", 1.26, true, "7.3 «Barnes, LEQ, and QR ... up to 26% worse»"},
	{lcitb.AppHMC, lciapps.QR, "PPro", 1.34, false, "7.4 «QR runs up to 34% more slowly on I-sdma-hmc on the PPro»"},
	{lcitb.AppHMC, lciapps.QR, "P3", 1.51, false, "7.4 «on the P3 platform this slowdown is even 51%»"},
	{lcitb.AppBinomial, lciapps.ASP, "", 1.58, false, "7.4 «58% worse» (the paper's baseline is MPICH with binary trees, I-sdma-mpimc)"},
}

// appCell is one application run's result.
type appCell struct {
	step, sdma clock.Time
	rate       float64
}

func (c appCell) rel() float64 { return float64(c.step) / float64(c.sdma) }

// RunApps runs the skeletons: per platform, application and variant a
// run of p.Warm + p.Steps steps on p.Nodes nodes (I-sdma first, the
// baseline), the first in e, the others each in a fresh env of e's seed.
func RunApps(e *env.Env, p *AppsParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Fig14 {
		return runFig14(e, p)
	}
	rep := &scenario.Report{Title: fmt.Sprintf("lci-apps: section 7's applications as skeletons on %d nodes (Table VII's PPS and pattern, paper-size messages, compute from T1), "+
		"time per step over %d steps after %d, relative to I-sdma; the paper's relative values where its text gives them", p.Nodes, p.Steps, p.Warm)}
	if p.ColSize != sorPaperCols {
		rep.Title += fmt.Sprintf("; SOR at column size %d (%d-byte border rows, computation and iterations as at 1536: figure 14)", p.ColSize, 8*p.ColSize)
	}
	total := 0
	for _, a := range p.apps() {
		total += len(p.variants(a)) * len(p.platforms())
	}
	phase := 0
	first := e
	for _, pl := range p.platforms() {
		c, err := config(pl, "sdma", p.Nodes)
		if err != nil {
			return nil, err
		}
		name := c.Platform.Name
		cells := map[string]map[string]appCell{}
		for _, a := range p.apps() {
			cells[a] = map[string]appCell{}
			var sdma clock.Time
			for _, v := range p.variants(a) {
				e.Phase(phase, total, fmt.Sprintf("%s %s %s", name, a, v))
				phase++
				run := first
				if run == nil {
					run = env.New(env.Options{Seed: e.Seed})
				}
				first = nil
				col := 0
				if a == lciapps.SOR && p.ColSize != sorPaperCols {
					col = p.ColSize
				}
				r, err := lcitb.RunAppCol(run, c, a, v, col, p.Warm, p.Steps)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				if run == e {
					rep.Result = r.Run
				}
				if v == lcitb.AppSDMA {
					sdma = r.StepTime
				}
				cells[a][v] = appCell{step: r.StepTime, sdma: sdma, rate: r.PacketRate}
			}
			addAppRows(rep, p, pl, name, a, cells[a])
		}
		if p.app() == "all" && p.variant() == "all" {
			addAppFindings(rep, name, cells)
		}
	}
	e.Phase(total, total, "")
	spec, _ := lciapps.Lookup(lciapps.Barnes)
	rep.Add("calibrated parameter", fmt.Sprintf("Barnes: %d region reads per body", lciapps.BarnesReads), "≈10,000 packets/s/processor",
		paper+" 7 (fitted on the PPro, I-sdma, 8 nodes: host/lciapps BarnesReads); "+spec.Derivation)
	return rep, nil
}

// addAppRows prints an application's variants on a platform.
func addAppRows(rep *scenario.Report, p *AppsParams, pl, name, app string, cells map[string]appCell) {
	spec, _ := lciapps.Lookup(app)
	for _, v := range p.variants(app) {
		c := cells[v]
		model := fmt.Sprintf("%.1f µs/step", usf(c.step))
		paperCell, src := "-", paper+" 7, Table VII ("+spec.PPS+", "+spec.Pattern+")"
		if v != lcitb.AppSDMA {
			model = fmt.Sprintf("%.3f x I-sdma (%.1f µs/step)", c.rel(), usf(c.step))
			for _, q := range appsPaper {
				if q.variant == v && q.app == app && (q.platform == "" || q.platform == name) {
					bound := ""
					if q.upTo {
						bound = "≤ "
					}
					paperCell = fmt.Sprintf("%s%.2f", bound, q.rel)
					switch {
					case !q.upTo:
						model += fmt.Sprintf(" (%+.0f%%)", pct(c.rel(), q.rel))
					case c.rel() <= q.rel:
						model += " (within the bound)"
					default:
						model += " (above the bound)"
					}
					src = paper + " " + q.quote
				}
			}
		}
		rep.Add(fmt.Sprintf("%s %s %s", name, spec.Title, v), model, paperCell, src)
		if p.single() {
			key := strings.ToLower(name)
			if v == lcitb.AppSDMA {
				rep.Measure(key+"_sdma_step_us", usf(c.step), "µs")
				if p.variant() == lcitb.AppSDMA {
					rep.Measure(key+"_step_us", usf(c.step), "µs")
					rep.Measure(key+"_rel", 1, "x I-sdma")
					rep.Measure(key+"_packet_rate", c.rate, "packets/s/node")
				}
				continue
			}
			rep.Measure(key+"_step_us", usf(c.step), "µs")
			rep.Measure(key+"_rel", c.rel(), "x I-sdma")
			rep.Measure(key+"_packet_rate", c.rate, "packets/s/node")
			continue
		}
		rep.Measure(appMetric(strings.ToLower(name), app, v, "us"), usf(c.step), "µs")
		rep.Measure(appMetric(strings.ToLower(name), app, v, "rel"), c.rel(), "x I-sdma")
	}
	if app == lciapps.Barnes && cells[lcitb.AppSDMA].rate > 0 {
		rep.Add(name+" Barnes packet rate, I-sdma", fmt.Sprintf("%.0f packets/s/node", cells[lcitb.AppSDMA].rate), "≈10,000",
			paper+" 7 «The packet rate, however, is high (≈ 10,000 packets/s/processor)» (64 nodes; calibrated on the PPro at 8)")
	}
}

// approxEqual is the band of «little or no difference» (section 7.2):
// assumed 3% either way.
const approxEqual = 0.03

// addAppFindings prints section 7's findings on one platform: each
// direction with holds or fails and its size beside the paper's.
func addAppFindings(rep *scenario.Report, name string, cells map[string]map[string]appCell) {
	rel := func(a, v string) float64 { return cells[a][v].rel() }
	holds := func(ok bool) string {
		if ok {
			return "holds"
		}
		return "fails"
	}
	src := paper + " 7 (finding: direction checked, size reported)"
	add := func(what string, ok bool, model, paperText string) {
		rep.Add(name+" finding: "+what, holds(ok)+": "+model, paperText, src)
	}
	// 7.2: SDMA vs PIO (rel of pio: below 1 means PIO is faster).
	var sdmaWins, pioWins []string
	for _, a := range lciapps.Names {
		if rel(a, lcitb.AppPIO) > 1 {
			sdmaWins = append(sdmaWins, fmt.Sprintf("%s %+.1f%%", a, 100*(rel(a, lcitb.AppPIO)-1)))
		} else {
			pioWins = append(pioWins, a)
		}
	}
	if name == "PPro" {
		add("SDMA wins no application", len(sdmaWins) == 0, fmt.Sprintf("SDMA faster on %d of %d %v", len(sdmaWins), len(lciapps.Names), sdmaWins),
			"«For none of the applications in our suite, the SDMA-based implementation has better performance on the PPro platform»")
	} else {
		add("SDMA wins most applications", len(sdmaWins) > len(lciapps.Names)/2, fmt.Sprintf("SDMA faster on %d of %d %v", len(sdmaWins), len(lciapps.Names), sdmaWins),
			"«on the P3 platform SDMA-based transfers are more efficient than PIO for most applications»")
		for _, a := range []string{lciapps.Barnes, lciapps.LEQ} {
			add("SDMA loses "+a, rel(a, lcitb.AppPIO) < 1, fmt.Sprintf("I-pio %.3f x I-sdma", rel(a, lcitb.AppPIO)), "«for Barnes and LEQ ... using SDMA results in poor performance»")
		}
		for _, a := range []string{lciapps.QR, lciapps.Awari} {
			r := rel(a, lcitb.AppPIO)
			add(a+": SDMA ≈ PIO", math.Abs(r-1) <= approxEqual, fmt.Sprintf("I-pio %.3f x I-sdma (band ±%.0f%%)", r, 100*approxEqual), "«for QR and Awari we see little or no difference»")
		}
	}
	// 7.1: I-nirx and I-hrx.
	for _, q := range []struct {
		app   string
		paper string
	}{{lciapps.Barnes, "up to 15%"}, {lciapps.Radix, "up to 15%"}, {lciapps.LEQ, "23%"}} {
		r := rel(q.app, lcitb.AppNIRX)
		add("I-nirx slows "+q.app, r > 1, fmt.Sprintf("%+.1f%%", 100*(r-1)), q.paper)
	}
	p4, p64 := rel(lciapps.Puzzle4, lcitb.AppHRX), rel(lciapps.Puzzle64, lcitb.AppHRX)
	add("I-hrx hurts Puzzle-4 more than Puzzle-64", p4 > p64 && p4 > 1, fmt.Sprintf("Puzzle-4 %+.1f%%, Puzzle-64 %+.1f%%", 100*(p4-1), 100*(p64-1)),
		"«Puzzle-4 ... suffers more than Puzzle-64»")
	// 7.3: MTU.
	worst, worstApp := 0.0, ""
	for _, a := range lciapps.Names {
		if r := rel(a, lcitb.App4K); r > worst {
			worst, worstApp = r, a
		}
	}
	bound := map[string]string{"PPro": "up to 26% (Barnes, LEQ, QR)", "P3": "up to 13%"}[name]
	add("I-4k's largest slowdown", worst > 1, fmt.Sprintf("%+.1f%% (%s)", 100*(worst-1), worstApp), bound)
	r1k := rel(lciapps.Radix, lcitb.App1K)
	add("I-1k slows Radix", r1k > 1, fmt.Sprintf("%+.1f%%", 100*(r1k-1)), "«Radix suffers slightly with a small, 1-Kbyte MTU»")
	// 7.4: multicast.
	hmc := rel(lciapps.QR, lcitb.AppHMC)
	add("I-sdma-hmc slows QR", hmc > 1, fmt.Sprintf("%+.1f%%", 100*(hmc-1)), map[string]string{"PPro": "34%", "P3": "51%"}[name])
	bin := rel(lciapps.ASP, lcitb.AppBinomial)
	add("binomial MPICH broadcast slows ASP", bin > 1, fmt.Sprintf("%+.1f%% vs I-sdma", 100*(bin-1)), "58% (vs binary-tree MPICH)")
}
