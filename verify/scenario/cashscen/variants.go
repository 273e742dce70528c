package cashscen

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/cashtb"
)

// variantColumns are the protocols the report runs every program under
// with variants=true, in Table 3's order where it has them (section 2.6,
// 3.3): the runtime's six variants.
var variantColumns = []string{cashmere.Variant2L, cashmere.Variant2LS, cashmere.Variant2LMigr, cashmere.Variant1LD, cashmere.Variant2LOffMC, cashmere.Variant1L}

// varRun is one program's run under one variant.
type varRun struct {
	Total cashmere.Stats
	Time  clock.Time
	// OK: no checker violation, every process finished and the final
	// memory equals RunSequential bit for bit.
	OK bool
}

// varResults are the variant runs by program, then by variant.
type varResults map[string]map[string]varRun

// runVariants runs prog under every variant of variantColumns on the
// variant configuration, each in an env of its own, checks each against
// the sequential reference want and prints its Table 3 statistics beside
// the paper's column for that variant (Table 3 has 2L, 2LS, 2LMigr and 1LD
// at 32:4 and the paper's size; 2LOffMC and 1L have none).
func runVariants(e *env.Env, seed uint64, p *ReportParams, name string, prog cashapps.Program, want []byte, ph *scenario.Phases, rep *scenario.Report, out varResults) {
	procs := p.VariantNodes * p.VariantCPUs
	out[name] = map[string]varRun{}
	for _, v := range variantColumns {
		ph.Next(fmt.Sprintf("%s under %s on %d:%d", name, v, procs, p.VariantCPUs))
		c := config(p.VariantNodes, p.VariantCPUs)
		c.Variant = v
		res, err := cashtb.RunApp(sideEnv(e, seed), c, prog)
		ok := err == nil && bytes.Equal(res.Memory, want)
		out[name][v] = varRun{Total: res.Total, Time: res.Time, OK: ok}
		rep.Check(fmt.Sprintf("%s under %s on %d:%d: no checker violation, memory equals RunSequential", name, v, procs, p.VariantCPUs), ok,
			"%s; %s", oneLine(err), firstDiff(res.Memory, want))
		pt, hasPaper := paperColumn(name, v)
		paperOf := func(x float64) string {
			if !hasPaper || x < 0 {
				return ""
			}
			return count(x)
		}
		src := fmt.Sprintf("Table 3 %s (32:4, the paper's size)", v)
		if !hasPaper {
			src = "Table 3 has no " + v + " column"
		}
		ms := float64(res.Time) / float64(clock.Millisecond)
		rep.Add(fmt.Sprintf("%s %s on %d:%d: execution time", name, v, procs, p.VariantCPUs), fmt.Sprintf("%.3f ms", ms), paperOf(pt.ExecSec)+map[bool]string{true: " s", false: ""}[hasPaper],
			src+"; not comparable in size, no error")
		rep.Measure(fmt.Sprintf("%s_%s_ms", name, strings.ToLower(v)), ms, "ms")
		t := res.Total
		for _, s := range []struct {
			what         string
			model, paper float64
		}{
			{"read / write faults", float64(t.ReadFaults + t.WriteFaults), sumOrNeg(pt.ReadFaults, pt.WriteFaults)},
			{"page transfers", float64(t.PageTransfers), pt.Transfers},
			{"directory updates", float64(t.DirUpdates), pt.DirUpdates},
			{"write notices", float64(t.WriteNotices), pt.Notices},
			{"data (MB)", float64(t.DataBytes) / (1 << 20), pt.DataMB},
			{"twins", float64(t.Twins), pt.Twins},
			{"incoming diffs", float64(t.IncomingDiffs), pt.IncomingDiffs},
			{"shootdowns", float64(t.Shootdowns), pt.Shootdowns},
		} {
			rep.Add(fmt.Sprintf("  %s %s: %s", name, v, s.what), count(s.model), paperOf(s.paper), src+"; the model at "+fmt.Sprintf("%d:%d", procs, p.VariantCPUs)+" and the CI size (the scaling as in the program's 2L rows above)")
		}
		rep.Measure(fmt.Sprintf("%s_%s_transfers", name, strings.ToLower(v)), float64(t.PageTransfers), "")
		rep.Measure(fmt.Sprintf("%s_%s_twins", name, strings.ToLower(v)), float64(t.Twins), "")
	}
}

// sumOrNeg is a + b, or -1 (not printed) when either is.
func sumOrNeg(a, b float64) float64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

// paperColumn is Table 3's column of program name under variant v, and
// whether the table has one.
func paperColumn(name, v string) (table3, bool) {
	if v == cashmere.Variant2L {
		return papers[name].T3, true
	}
	t, ok := paperVariants[v][name]
	return t, ok
}

// finding is one of the paper's size-independent statements about the
// variants (sections 3.3.1-3.3.5, Table 3), checked on the variant runs.
type finding struct {
	// name is the statement, src where the paper makes it.
	name, src string
	// variants must all have run for the finding to be checked; apps are
	// the programs it is about (nil: every program run; at least one of
	// them must have run).
	variants, apps []string
	// holds checks it on the runs of apps (those that ran) and says why.
	holds func(r varResults, apps []string) (bool, string)
}

// findings are the statements checked, data-driven: a finding whose
// variants or programs did not run is reported as not checked.
var findings = []finding{
	{"2L performs far fewer page transfers than 1LD on Gauss (at least 2x)",
		"Table 3 Gauss: 2L 42.14 K, 1LD 205.95 K (4.9x); 3.3.2 «four-fold reductions in number of page requests»; assumed: «far» is 2x",
		[]string{cashmere.Variant2L, cashmere.Variant1LD}, []string{"gauss"},
		func(r varResults, apps []string) (bool, string) {
			a, b := r["gauss"][cashmere.Variant2L].Total.PageTransfers, r["gauss"][cashmere.Variant1LD].Total.PageTransfers
			return b >= 2*a && a > 0, fmt.Sprintf("2L %d, 1LD %d (%.2fx)", a, b, float64(b)/math.Max(1, float64(a)))
		}},
	{"only 2LS shoots down: every other variant makes 0 shootdowns on every program",
		"2.6: shootdown is 2LS's mechanism; 2L uses two-way diffing instead (Table 3 has shootdowns only under 2LS)",
		[]string{cashmere.Variant2L}, nil,
		func(r varResults, apps []string) (bool, string) {
			var bad []string
			for _, a := range apps {
				for _, v := range variantColumns {
					if x, ok := r[a][v]; ok && v != cashmere.Variant2LS && x.Total.Shootdowns != 0 {
						bad = append(bad, fmt.Sprintf("%s %s %d", a, v, x.Total.Shootdowns))
					}
				}
			}
			return len(bad) == 0, "nonzero: " + none(bad)
		}},
	{"2LS shoots down on Water (several local writers of a page under locks), 2L does not",
		"Table 3 Water 2LS «Shootdowns 183»; 3.3.4 shootdown «is only necessary when more than one local processor is modifying a page at a release or a page fault»",
		[]string{cashmere.Variant2L, cashmere.Variant2LS}, []string{"water"},
		func(r varResults, apps []string) (bool, string) {
			s, l := r["water"][cashmere.Variant2LS].Total.Shootdowns, r["water"][cashmere.Variant2L].Total.Shootdowns
			return s > 0 && l == 0, fmt.Sprintf("2LS %d, 2L %d", s, l)
		}},
	{"1LD creates at least as many twins as 2L on every program, and more in all",
		"Table 3: 1LD's twins >= 2L's in every column (SOR 2.98 K vs 0.34 K, LU 948.48 K vs 144.74 K, Water 25.64 K both); 3.3.2 LU «eight- to nine-fold reduction in ... twins created»",
		[]string{cashmere.Variant2L, cashmere.Variant1LD}, nil,
		moreIn(func(s cashmere.Stats) int { return s.Twins })},
	{"1LD transfers at least as many pages as 2L on every program, and more in all",
		"Table 3: 1LD's page transfers >= 2L's in every column; 3.3.2 «The number/amount of page fetches, page transfers, and communicated data are reduced in 2L»",
		[]string{cashmere.Variant2L, cashmere.Variant1LD}, nil,
		moreIn(func(s cashmere.Stats) int { return s.PageTransfers })},
	{"lock/flag acquires and barriers are the same under every variant",
		"Table 3: each program's «Lock/Flag Acq.» and «Barriers» rows are equal in every protocol's block (the program's synchronisation, not the protocol's)",
		[]string{cashmere.Variant2L}, nil,
		func(r varResults, apps []string) (bool, string) {
			var bad []string
			for _, a := range apps {
				ref := r[a][cashmere.Variant2L].Total
				for _, v := range variantColumns {
					x, ok := r[a][v]
					if ok && (x.Total.LockAcquires+x.Total.FlagAcquires != ref.LockAcquires+ref.FlagAcquires || x.Total.Barriers != ref.Barriers) {
						bad = append(bad, fmt.Sprintf("%s %s %d/%d against 2L %d/%d", a, v, x.Total.LockAcquires+x.Total.FlagAcquires, x.Total.Barriers, ref.LockAcquires+ref.FlagAcquires, ref.Barriers))
					}
				}
			}
			return len(bad) == 0, "differing: " + none(bad)
		}},
	{"1L makes no twins and no diffs (write doubling)",
		"3.3.1 «Cashmere-1L updates the home node with modifications as they occur»; 2.6 1LD «abandons write-through in favor of twins and (outgoing) diffs»",
		[]string{cashmere.Variant1L}, nil,
		func(r varResults, apps []string) (bool, string) {
			var bad []string
			for _, a := range apps {
				t := r[a][cashmere.Variant1L].Total
				if t.Twins != 0 || t.Diffs != 0 || t.IncomingDiffs != 0 {
					bad = append(bad, fmt.Sprintf("%s %d twins %d diffs", a, t.Twins, t.Diffs))
				}
			}
			return len(bad) == 0, "nonzero: " + none(bad)
		}},
	{"1LD is faster than 1L on the dense programs",
		"3.3.1 «The dense matrix applications all have very fine-grain access patterns that favor 1LD. CLU (66%), LU (76%), and Gauss (25%) ... Using diffs, 1LD improves performance [on SOR] by 53%»",
		[]string{cashmere.Variant1LD, cashmere.Variant1L}, []string{"clu", "lu", "gauss", "sor"},
		faster(cashmere.Variant1LD, cashmere.Variant1L)},
	{"2L is faster than 1LD on every program",
		"3.3.2 «In comparison to the best of the one-level protocols (1LD), the two-level protocols have superior performance for each application»",
		[]string{cashmere.Variant2L, cashmere.Variant1LD}, nil,
		faster(cashmere.Variant2L, cashmere.Variant1LD)},
	{"2LOffMC is slower than 2L on average (geometric mean of the time ratios above 1)",
		"3.3.5 «Due to the explicit diff messages, the performance of the nine applications on 2LOffMC averages 10% worse than on 2L»",
		[]string{cashmere.Variant2L, cashmere.Variant2LOffMC}, nil,
		func(r varResults, apps []string) (bool, string) {
			lg := 0.0
			for _, a := range apps {
				lg += math.Log(float64(r[a][cashmere.Variant2LOffMC].Time) / float64(r[a][cashmere.Variant2L].Time))
			}
			g := math.Exp(lg / float64(len(apps)))
			return g > 1, fmt.Sprintf("2LOffMC / 2L = %.3f (geometric mean of %d programs)", g, len(apps))
		}},
	{"2LMigr creates no twins on SOR and Gauss",
		"Table 3 2LMIG «Twin Creations» SOR 0, Gauss 0",
		[]string{"2LMigr"}, []string{"sor", "gauss"},
		func(r varResults, apps []string) (bool, string) {
			var bad []string
			for _, a := range apps {
				if n := r[a]["2LMigr"].Total.Twins; n != 0 {
					bad = append(bad, fmt.Sprintf("%s %d", a, n))
				}
			}
			return len(bad) == 0, "twins: " + none(bad)
		}},
}

// moreIn is a finding's check that 1LD's count (of) is at least 2L's on
// every program and above it summed over the programs.
func moreIn(of func(cashmere.Stats) int) func(varResults, []string) (bool, string) {
	return func(r varResults, apps []string) (bool, string) {
		ok, sum2, sum1 := true, 0, 0
		var parts []string
		for _, a := range apps {
			x2, x1 := of(r[a][cashmere.Variant2L].Total), of(r[a][cashmere.Variant1LD].Total)
			sum2 += x2
			sum1 += x1
			ok = ok && x1 >= x2
			parts = append(parts, fmt.Sprintf("%s %d/%d", a, x2, x1))
		}
		if sum1 == 0 && sum2 == 0 {
			// Neither protocol made any on the programs run (SOR alone
			// at CI size): «more in all» has nothing to compare, only
			// the per-program part is checked.
			return ok, "2L/1LD: " + strings.Join(parts, ", ") + "; none under either, so only «at least as many» is checked"
		}
		return ok && sum1 > sum2, "2L/1LD: " + strings.Join(parts, ", ")
	}
}

// faster is a finding's check that variant a's time is below b's on every
// program.
func faster(a, b string) func(varResults, []string) (bool, string) {
	return func(r varResults, apps []string) (bool, string) {
		ok := true
		var parts []string
		for _, app := range apps {
			ta, tb := r[app][a].Time, r[app][b].Time
			ok = ok && ta < tb
			parts = append(parts, fmt.Sprintf("%s %.2f/%.2f ms", app, float64(ta)/float64(clock.Millisecond), float64(tb)/float64(clock.Millisecond)))
		}
		return ok, a + "/" + b + ": " + strings.Join(parts, ", ")
	}
}

// none joins items, or says none.
func none(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// checkFindings reports every finding: a check when its variants ran and
// at least one of its programs did, a row saying why not otherwise. ran
// are the programs run, in order.
func checkFindings(r varResults, ran []string, rep *scenario.Report) {
	for _, f := range findings {
		apps := f.apps
		if apps == nil {
			apps = ran
		}
		var have []string
		for _, a := range apps {
			all := r[a] != nil
			for _, v := range f.variants {
				if _, ok := r[a][v]; !ok {
					all = false
				}
			}
			if all {
				have = append(have, a)
			}
		}
		if len(have) == 0 {
			rep.Add("finding not checked: "+f.name, "-", "", f.src+"; its variants ("+strings.Join(f.variants, ", ")+") or programs ("+strings.Join(apps, ", ")+") did not run")
			continue
		}
		ok, detail := f.holds(r, have)
		rep.Check("finding: "+f.name, ok, "%s (on %s; %s)", detail, strings.Join(have, ", "), f.src)
	}
}
