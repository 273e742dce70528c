package scenario_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// keyed are parameters with a key table: a nested table, a list, a
// string with values, a budget and a cycle bound.
type keyed struct {
	Mode  string  `toml:"mode"`
	Rate  float64 `toml:"rate"`
	Ports []int   `toml:"ports"`
	Link  struct {
		Depth int `toml:"depth"`
		Delay int `toml:"delay"`
	} `toml:"link"`
}

func (p *keyed) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("mode", "").OneOf("fast", "slow").From("assumed: fast"),
		scenario.Key("rate", "packets/cycle").Range(0, 1),
		scenario.Key("ports", "ports").Range(0, 7).Entries(8, "one entry per port"),
		scenario.Key("link.depth", "flits").AtLeast(1).Budget(32, "flit"),
		scenario.Key("link.delay", "cycles").AtLeast(0).Cycles(clock.MHz(1000), scenario.MaxDelay),
	}
}

func (p *keyed) Validate() error { return scenario.CheckKeys(p) }

func keyedDefaults() *keyed {
	p := &keyed{Mode: "fast", Rate: 0.25, Ports: []int{1, 2}}
	p.Link.Depth, p.Link.Delay = 4, 3
	return p
}

// drifted documents a key its struct does not have.
type drifted struct {
	A int `toml:"a"`
}

func (p *drifted) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{scenario.Key("a", "").AtLeast(0), scenario.Key("b", "").AtLeast(0)}
}
func (p *drifted) Validate() error { return scenario.CheckKeys(p) }

var _ = Describe("KeySpec", func() {
	DescribeTable("CheckKeys refuses a value outside its key's range with a one-line error naming the key",
		func(set, want string) {
			Expect(scenario.Configure(keyedDefaults(), "", []string{set})).To(MatchError("invalid parameter " + want))
		},
		Entry("a value not in the list", "mode=medium", `mode: "medium" is not fast or slow`),
		Entry("a fraction above 1", "rate=1.5", "rate: must be in [0, 1] (got 1.5)"),
		Entry("a list entry out of range", "ports=[1, 9]", "ports: entry 1: must be 0..7 (got 9)"),
		Entry("a list too long", "ports=[0,0,0,0,0,0,0,0,0]", "ports: above the limit 8 (got 9; one entry per port)"),
		Entry("below the minimum", "link.depth=0", "link.depth: must be at least 1 (got 0)"),
		// 2^30 / 32 = 33554432 flits.
		Entry("above the memory budget", "link.depth=40000000",
			"link.depth: above the limit 33554432 (got 40000000; 32 B per flit x 33554432 = 1024 MiB, the per-run memory budget)"),
		Entry("negative", "link.delay=-1", "link.delay: must not be negative (got -1)"),
		// 1 s of a 1 GHz clock: 10^9 cycles.
		Entry("beyond MaxDelay", "link.delay=1000000001", "link.delay: above the limit 1000000000 (got 1000000001; 1s of 1GHz cycles)"),
	)

	It("gives the budget bound and message of CheckBudget (one rule, two callers)", func() {
		k := scenario.Key("x", "").Budget(80, "entry")
		Expect(k.CheckInt(1 << 40)).To(MatchError(scenario.CheckBudget("x", 1<<40, 80, "entry").Error()))
		Expect(k.CheckInt(scenario.BudgetLimit(80))).To(Succeed())
	})

	It("refuses a key table that names a key its struct does not have", func() {
		Expect((&drifted{}).Validate()).To(MatchError(ContainSubstring("b: documented but not a parameter")))
	})

	It("writes each range as the printer shows it", func() {
		texts := map[string]string{}
		for _, k := range keyedDefaults().Keys() {
			texts[k.Key] = k.RangeText(k.Key != "rate")
		}
		Expect(texts).To(Equal(map[string]string{
			"mode":       "one of fast, slow",
			"rate":       "range in [0, 1]",
			"ports":      "range 0..7, at most 8 entries (one entry per port)",
			"link.depth": "range 1..33554432 (memory budget)",
			"link.delay": "range 0..1000000000 (1s of 1GHz cycles)",
		}))
	})
})

var _ = Describe("WriteConfig", func() {
	It("prints every key with its unit, range and source, and reads back to the same configuration", func() {
		dir := GinkgoT().TempDir()
		in := filepath.Join(dir, "in.toml")
		Expect(os.WriteFile(in, []byte("rate = 0.5\n[link]\ndepth = 9\n"), 0o644)).To(Succeed())
		sets := []string{"link.depth=12", "mode=slow"}
		p := keyedDefaults()
		Expect(scenario.Configure(p, in, sets)).To(Succeed())
		var out bytes.Buffer
		Expect(scenario.WriteConfig(&out, "keyed", p, scenario.SourcesOf(in, sets))).To(Succeed())
		text := out.String()
		Expect(text).To(ContainSubstring("# one of fast, slow; --set\nmode = 'slow'\n"))
		Expect(text).To(ContainSubstring("# packets/cycle; range in [0, 1]; --config " + in + "\nrate = 0.5\n"))
		// Set by the file, then by --set: --set wins, as in Configure.
		Expect(text).To(ContainSubstring("# flits; range 1..33554432 (memory budget); --set\ndepth = 12\n"))
		Expect(text).To(ContainSubstring("# cycles; range 0..1000000000 (1s of 1GHz cycles); default\ndelay = 3\n"))
		for _, l := range strings.Split(text, "\n") {
			Expect(utf8.RuneCountInString(l)).To(BeNumerically("<=", scenario.ConfigWidth), l)
		}
		out2 := filepath.Join(dir, "out.toml")
		Expect(os.WriteFile(out2, out.Bytes(), 0o644)).To(Succeed())
		back := keyedDefaults()
		Expect(scenario.Configure(back, out2, nil)).To(Succeed())
		Expect(cmp.Diff(p, back)).To(BeEmpty())
	})

	It("gives a key's default origin only while the value is the default", func() {
		var out bytes.Buffer
		Expect(scenario.WriteConfig(&out, "keyed", keyedDefaults(), scenario.SourcesOf("", nil))).To(Succeed())
		Expect(out.String()).To(ContainSubstring("# one of fast, slow; default (assumed: fast)\nmode = 'fast'\n"))
	})
})

var _ = Describe("JSONReport", func() {
	run := func() scenario.JSONRun {
		rep := &scenario.Report{Title: "t", Result: env.Result{End: 1500 * clock.Nanosecond, Events: 42}}
		rep.AddCalibrated(true, "remote write", "0.694 µs (-0.8%)", "0.700 µs", "paper 3.2")
		rep.Add("stream", "46.240 µs (0.462 µs per write)", "< 50.000 µs", "paper 3.2")
		rep.Add("pairs", "12 / 13", "", "")
		rep.Add("hops", "3", "3", "")
		rep.Measure("latency", 1.5, "µs")
		rep.Measure("empty", math.NaN(), "µs")
		rep.Check("delivered", true, "all %d", 4)
		return scenario.JSONRun{Version: "v", Scenario: "keyed", Seed: 7, Params: keyedDefaults(),
			Sources: scenario.SourcesOf("", []string{"rate=0.25"}), Report: rep}
	}

	It("carries the rows' text uncut with their numbers, the metrics, checks and configuration, and decodes into its type", func() {
		j, err := scenario.NewJSONReport(run())
		Expect(err).NotTo(HaveOccurred())
		b, err := j.Marshal()
		Expect(err).NotTo(HaveOccurred())
		var back scenario.JSONReport
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		Expect(dec.Decode(&back)).To(Succeed())
		Expect(back.Format).To(Equal(scenario.JSONFormat))
		Expect(back.Seed).To(Equal(uint64(7)))
		Expect(back.EndPS).To(Equal(int64(1_500_000)))
		Expect(back.Events).To(Equal(uint64(42)))
		Expect(back.Passed).To(BeTrue())
		r := back.Rows[0]
		Expect(r.Calibrated).To(BeTrue())
		Expect(*r.ModelValue).To(Equal(0.694))
		Expect(*r.PaperValue).To(Equal(0.7))
		Expect(r.Unit).To(Equal("µs"))
		// (0.694 - 0.700) / 0.700 = -0.00857.
		Expect(*r.RelError).To(BeNumerically("~", -0.006/0.7, 1e-12))
		// A bound is not a paper value; the model's figure still reads.
		Expect(back.Rows[1].Model).To(Equal("46.240 µs (0.462 µs per write)"))
		Expect(*back.Rows[1].ModelValue).To(Equal(46.24))
		Expect(back.Rows[1].PaperValue).To(BeNil())
		Expect(back.Rows[2].ModelValue).To(BeNil())
		// Unitless figures are not numbers with a unit.
		Expect(back.Rows[3].ModelValue).To(BeNil())
		Expect(back.Metrics[1].Value).To(BeNil())
		Expect(back.Metrics[1].NonFinite).To(Equal("NaN"))
		Expect(back.Checks).To(Equal([]scenario.JSONCheck{{Name: "delivered", OK: true, Detail: "all 4"}}))
		Expect(back.Config[1]).To(Equal(scenario.JSONParam{Key: "rate", Value: 0.25, Unit: "packets/cycle", Range: "range in [0, 1]", Source: "--set"}))
		Expect(back.Config[3].Key).To(Equal("link.depth"))
		Expect(back.Violations.Kept).To(BeEmpty())
	})

	It("is the same bytes for the same run", func() {
		a, _ := scenario.NewJSONReport(run())
		b, _ := scenario.NewJSONReport(run())
		ab, _ := a.Marshal()
		bb, _ := b.Marshal()
		Expect(ab).To(Equal(bb))
	})

	It("carries a failure and a run that stopped before its report", func() {
		r := run()
		r.Report, r.Failure = nil, os.ErrDeadlineExceeded
		j, err := scenario.NewJSONReport(r)
		Expect(err).NotTo(HaveOccurred())
		Expect(j.Passed).To(BeFalse())
		Expect(j.Failure).To(Equal(os.ErrDeadlineExceeded.Error()))
		Expect(j.Rows).To(BeEmpty())
		b, err := j.Marshal()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(ContainSubstring(`"rows": []`))
	})

	DescribeTable("ParseQuantity reads a number and a unit, nothing else",
		func(s string, v float64, unit string, ok bool) {
			gv, gu, gok := scenario.ParseQuantity(s)
			Expect(gok).To(Equal(ok))
			if ok {
				Expect(gv).To(Equal(v))
				Expect(gu).To(Equal(unit))
			}
		},
		Entry(nil, "0.694 µs (-0.8%)", 0.694, "µs", true),
		Entry(nil, "12.5 us", 12.5, "µs", true),
		Entry(nil, "118.3 MB/s (1.10 µs per message)", 118.3, "MB/s", true),
		Entry(nil, "< 50.000 µs", 0.0, "", false),
		Entry(nil, "~120 MB/s", 0.0, "", false),
		Entry(nil, "12 / 13", 0.0, "", false),
		Entry(nil, "3", 0.0, "", false),
		Entry(nil, "2 cycles of 12.5MHz = 0.160 µs", 0.0, "", false),
	)
})
