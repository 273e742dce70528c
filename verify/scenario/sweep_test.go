package scenario_test

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/jobs"
	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// loadParams drive a fake load-latency scenario: latency 20 + 200*rate
// cycles (plus the seed), saturation from rate 0.8 on (its "drained"
// check fails), and a failed check when rate equals Fail.
type loadParams struct {
	Rate float64 `toml:"rate" unit:"packets/cycle"`
	Fail float64 `toml:"fail"`
	Net  struct {
		Delay int `toml:"delay" unit:"ns"`
	} `toml:"net"`
}

func (p *loadParams) Validate() error {
	return scenario.Check(p.Rate < 0, "rate", "must not be negative (got %g)", p.Rate)
}

// declared is loadParams with its metrics declared.
type declared struct{ loadParams }

func (p *declared) Metrics() []scenario.MetricDef {
	return []scenario.MetricDef{
		{Name: "latency", Unit: "cycles", Ref: "zero_load_latency"},
		{Name: "latency_p99", Unit: "cycles"},
		{Name: "accepted", Unit: "packets/cycle"},
		{Name: "zero_load_latency", Unit: "cycles"},
		{Name: "saturated"},
	}
}

// loadRuns counts the fake scenario's runs (atomic: sweeps run points on
// several workers).
var loadRuns atomic.Int64

func loadRun(e *env.Env, p *loadParams) (*scenario.Report, error) {
	loadRuns.Add(1)
	rep := &scenario.Report{Title: "load"}
	sat := p.Rate >= 0.8
	lat := 20 + 200*p.Rate + float64(e.Seed%4)
	rep.Measure("latency", lat, "cycles")
	rep.Measure("latency_p99", 2*lat, "cycles")
	rep.Measure("accepted", math.Min(p.Rate, 0.8), "packets/cycle")
	rep.Measure("zero_load_latency", 20, "cycles")
	rep.Measure("saturated", map[bool]float64{true: 1}[sat], "")
	rep.Check("drained", !sat, "undelivered packets")
	rep.Check("answer", p.Rate != p.Fail, "wrong answer at rate %g", p.Rate)
	return rep, nil
}

func loadScenario(declare bool) *scenario.Scenario {
	s := &scenario.Scenario{Name: "load", Summary: "fake load-latency curve"}
	if declare {
		s.Defaults = func() scenario.Params { return &declared{loadParams{Fail: -1}} }
		s.Run = func(e *env.Env, p scenario.Params) (*scenario.Report, error) {
			return loadRun(e, &p.(*declared).loadParams)
		}
	} else {
		s.Defaults = func() scenario.Params { return &loadParams{Fail: -1} }
		s.Run = func(e *env.Env, p scenario.Params) (*scenario.Report, error) { return loadRun(e, p.(*loadParams)) }
	}
	return s
}

// svgText is a <text> element of a plot.
type svgText struct {
	x, y float64
	s    string
}

// parseSVG reads an SVG with encoding/xml, checks every number in every
// attribute (coordinates, paths, transforms) is finite and smaller than
// 1e6 in size, and returns the text elements.
func parseSVG(b []byte) []svgText {
	num := regexp.MustCompile(`[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|NaN|Inf`)
	d := xml.NewDecoder(bytes.NewReader(b))
	var texts []svgText
	var cur *svgText
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		Expect(err).NotTo(HaveOccurred())
		switch t := tok.(type) {
		case xml.StartElement:
			var st svgText
			for _, a := range t.Attr {
				if a.Name.Local == "style" || a.Name.Space == "xmlns" || a.Name.Local == "xmlns" || a.Name.Local == "xlink" {
					continue
				}
				for _, m := range num.FindAllString(a.Value, -1) {
					v, err := strconv.ParseFloat(m, 64)
					Expect(err).NotTo(HaveOccurred(), "%s=%q", a.Name.Local, a.Value)
					Expect(math.IsNaN(v) || math.IsInf(v, 0)).To(BeFalse(), "%s=%q", a.Name.Local, a.Value)
					Expect(math.Abs(v)).To(BeNumerically("<", 1e6), "%s=%q", a.Name.Local, a.Value)
				}
				switch a.Name.Local {
				case "x":
					st.x, _ = strconv.ParseFloat(a.Value, 64)
				case "y":
					st.y, _ = strconv.ParseFloat(a.Value, 64)
				}
			}
			if t.Name.Local == "text" {
				cur = &st
			}
		case xml.CharData:
			if cur != nil {
				cur.s += string(t)
			}
		case xml.EndElement:
			if t.Name.Local == "text" && cur != nil {
				texts = append(texts, *cur)
				cur = nil
			}
		}
	}
	return texts
}

// ticks splits the numeric text elements into the x axis's labels (the
// largest row sharing one y) and the y axis's (the others).
func ticks(texts []svgText) (xs, ys []svgText) {
	rows := map[float64][]svgText{}
	for _, t := range texts {
		if _, err := strconv.ParseFloat(t.s, 64); err == nil {
			rows[t.y] = append(rows[t.y], t)
		}
	}
	best := math.NaN()
	for y, r := range rows {
		if math.IsNaN(best) || len(r) > len(rows[best]) || (len(r) == len(rows[best]) && y < best) {
			best = y
		}
	}
	for y, r := range rows {
		if y == best {
			xs = append(xs, r...)
		} else {
			ys = append(ys, r...)
		}
	}
	return xs, ys
}

func readCSV(b []byte) [][]string {
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	Expect(err).NotTo(HaveOccurred())
	return rows
}

// runSweep runs a sweep of s on two workers through the jobs package's
// local path (plan, run, merge), as nisim sweep does.
func runSweep(s *scenario.Scenario, spec jobs.SweepSpec) (*scenario.SweepResult, error) {
	_, res, err := jobs.Sweep(scenario.Catalog{s}, s, spec, 2, nil)
	return res, err
}

// rate is a grid of the fake scenario's one swept key.
func rate(vs ...float64) []scenario.Axis { return []scenario.Axis{{Key: "rate", Values: vs}} }

var _ = Describe("Sweep", func() {
	BeforeEach(func() { loadRuns.Store(0) })

	It("refuses an unknown metric before running anything, listing the declared ones", func() {
		_, err := runSweep(loadScenario(true), jobs.SweepSpec{Grid: rate(0.1, 0.2), Y: []string{"nosuch"}})
		var ue *scenario.UsageError
		Expect(errors.As(err, &ue)).To(BeTrue())
		Expect(err).To(MatchError(`--y: unknown metric "nosuch" (available: latency, latency_p99, accepted, zero_load_latency, saturated)`))
		Expect(loadRuns.Load()).To(BeZero())
	})

	It("checks --y against the runs' metrics for a scenario that declares none, when merging", func() {
		_, err := runSweep(loadScenario(false), jobs.SweepSpec{Grid: rate(0.1, 0.2), Y: []string{"nosuch"}})
		Expect(err).To(MatchError(ContainSubstring(`unknown metric "nosuch" (available: latency,`)))
		Expect(loadRuns.Load()).To(Equal(int64(2)))
	})

	It("refuses a value the scenario refuses, a bad seed count and metrics of two units before running", func() {
		s := loadScenario(true)
		_, err := runSweep(s, jobs.SweepSpec{Grid: rate(0.1, -1), Y: []string{"latency"}})
		Expect(err).To(MatchError(ContainSubstring("rate")))
		_, err = runSweep(s, jobs.SweepSpec{Grid: rate(0.1), Seeds: scenario.MaxSeeds + 1, Y: []string{"latency"}})
		Expect(err).To(MatchError(ContainSubstring("--seeds: must be in [1, 32]")))
		_, err = runSweep(s, jobs.SweepSpec{Grid: rate(0.1), Y: []string{"latency", "accepted"}})
		Expect(err).To(MatchError(ContainSubstring("one plot takes one unit")))
		Expect(loadRuns.Load()).To(BeZero())
	})

	It("always writes the CSV, one row per run with its status, even when no run is good", func() {
		s := loadScenario(true)
		res, err := runSweep(s, jobs.SweepSpec{Grid: rate(0.1, 0.5, 0.9), Seed: 4, Y: []string{"latency"},
			Sets: []string{"fail=0.5"}})
		Expect(err).NotTo(HaveOccurred())
		var b bytes.Buffer
		Expect(scenario.WriteCSV(&b, res)).To(Succeed())
		rows := readCSV(b.Bytes())
		Expect(rows[0]).To(Equal([]string{"rate (packets/cycle)", "seed", "latency (cycles)", "latency_p99 (cycles)",
			"accepted (packets/cycle)", "zero_load_latency (cycles)", "saturated", "status"}))
		Expect(rows).To(HaveLen(4))
		// Seed 4 adds 4%4 = 0: latency 20 + 200*0.1 = 40.
		Expect(rows[1]).To(Equal([]string{"0.1", "4", "40", "80", "0.1", "20", "0", "ok"}))
		Expect(rows[2][7]).To(Equal("failed: answer: wrong answer at rate 0.5"))
		Expect(rows[3][7]).To(Equal("saturated"))
		Expect(res.Failed()).To(HaveLen(1))

		// One failed run only: the CSV still has it.
		res, err = runSweep(s, jobs.SweepSpec{Grid: rate(0.3), Y: []string{"latency"}, Sets: []string{"fail=0.3"}})
		Expect(err).NotTo(HaveOccurred())
		b.Reset()
		Expect(scenario.WriteCSV(&b, res)).To(Succeed())
		rows = readCSV(b.Bytes())
		Expect(rows).To(HaveLen(2))
		Expect(rows[1][len(rows[1])-1]).To(HavePrefix("failed: answer:"))
	})

	It("reports each finished point to Done, failed points included, and the same result as without it", func() {
		s := loadScenario(true)
		spec := jobs.SweepSpec{Grid: rate(0.1, 0.5), Seed: 1, Seeds: 2, Y: []string{"latency"},
			Sets: []string{"fail=0.5"}}
		plain, err := runSweep(s, spec)
		Expect(err).NotTo(HaveOccurred())
		var calls [][2]int
		_, res, err := jobs.Sweep(scenario.Catalog{s}, s, spec, 3, func(done, total int) { calls = append(calls, [2]int{done, total}) })
		Expect(err).NotTo(HaveOccurred())
		// 2 values times 2 seeds: 4 points, the last two failed; calls
		// are serialised whatever the workers.
		Expect(calls).To(Equal([][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}}))
		Expect(res).To(Equal(plain))
	})

	It("runs every value with each seed and takes units from the parameters' tags", func() {
		res, err := runSweep(loadScenario(true), jobs.SweepSpec{Grid: rate(0.1, 0.2), Seed: 1, Seeds: 3, Y: []string{"latency"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Points).To(HaveLen(6))
		Expect(res.Grid[0].Unit).To(Equal("packets/cycle"))
		var seeds []uint64
		for _, p := range res.Points[:3] {
			seeds = append(seeds, p.Seed)
		}
		Expect(seeds).To(Equal([]uint64{1, 2, 3}))
		Expect(scenario.ParamUnit(&loadParams{}, "net.delay")).To(Equal("ns"))
		Expect(scenario.ParamUnit(&loadParams{}, "fail")).To(BeEmpty())
		Expect(scenario.ParamUnit(&loadParams{}, "nosuch.key")).To(BeEmpty())
	})
})

var _ = Describe("WriteSVG", func() {
	sweep := func(spec jobs.SweepSpec, values ...float64) *scenario.SweepResult {
		if spec.Grid == nil {
			spec.Grid = rate(values...)
		}
		if spec.Y == nil {
			spec.Y = []string{"latency"}
		}
		res, err := runSweep(loadScenario(true), spec)
		Expect(err).NotTo(HaveOccurred())
		return res
	}
	svg := func(res *scenario.SweepResult, o scenario.PlotOptions) []byte {
		if o.Y == nil {
			o.Y = []string{"latency"}
		}
		var b bytes.Buffer
		Expect(scenario.WriteSVG(&b, res, o)).To(Succeed())
		return b.Bytes()
	}
	texts := func(ts []svgText) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.s)
		}
		return out
	}

	It("labels both axes with units, puts the y axis on the left with round ticks, and has no absurd coordinate", func() {
		res := sweep(jobs.SweepSpec{Seed: 4}, 0.05, 0.2, 0.35, 0.45)
		ts := parseSVG(svg(res, scenario.PlotOptions{Title: "load"}))
		all := strings.Join(texts(ts), "\n")
		Expect(all).To(ContainSubstring("rate (packets/cycle)"))
		Expect(all).To(ContainSubstring("latency (cycles)"))
		Expect(all).To(ContainSubstring("zero_load_latency = 20 cycles"))
		xs, ys := ticks(ts)
		Expect(len(xs)).To(BeNumerically(">=", 3))
		Expect(len(ys)).To(BeNumerically(">=", 3))
		left := math.Inf(1)
		for _, t := range xs {
			left = math.Min(left, t.x)
		}
		for _, t := range ys {
			// Every y tick label starts left of the x axis's first
			// label, which is centred on the data area's left edge.
			Expect(t.x).To(BeNumerically("<", left), t.s)
		}
		// Latency 30..110 cycles from 0: steps of 20, integer labels;
		// rate 0.05..0.45: steps of 0.1, one decimal.
		Expect(texts(ys)).To(ConsistOf("0", "20", "40", "60", "80", "100", "120"))
		Expect(texts(xs)).To(ConsistOf("0.0", "0.1", "0.2", "0.3", "0.4", "0.5"))
	})

	It("draws saturated points in the legend and lists failed runs under the title", func() {
		res := sweep(jobs.SweepSpec{Sets: []string{"fail=0.5"}}, 0.1, 0.5, 0.8, 0.9)
		all := strings.Join(texts(parseSVG(svg(res, scenario.PlotOptions{Title: "load"}))), "\n")
		Expect(all).To(ContainSubstring("saturated (did not drain)"))
		Expect(all).To(ContainSubstring("failed, not drawn: rate=0.5: answer: wrong answer at rate 0.5"))
	})

	It("draws the identity line under a metric counted in the swept key's unit (accepted against offered)", func() {
		res := sweep(jobs.SweepSpec{Y: []string{"accepted"}}, 0.2, 0.5, 0.9)
		all := strings.Join(texts(parseSVG(svg(res, scenario.PlotOptions{Y: []string{"accepted"}}))), "\n")
		Expect(all).To(ContainSubstring("accepted = rate"))
		Expect(all).To(ContainSubstring("accepted (packets/cycle)"))
		all = strings.Join(texts(parseSVG(svg(res, scenario.PlotOptions{}))), "\n")
		Expect(all).NotTo(ContainSubstring("latency = rate"))
	})

	It("gives a figure that says so when no run can be drawn", func() {
		res := sweep(jobs.SweepSpec{Sets: []string{"fail=0.3"}}, 0.3)
		all := strings.Join(texts(parseSVG(svg(res, scenario.PlotOptions{}))), "\n")
		Expect(all).To(ContainSubstring("no point to draw"))
		Expect(all).To(ContainSubstring("failed, not drawn: rate=0.3"))
	})

	It("draws several metrics and seeds with a legend, and a log y axis labelled by decades", func() {
		res := sweep(jobs.SweepSpec{Seeds: 3, Y: []string{"latency", "latency_p99"}}, 0.1, 0.4, 0.7)
		ts := parseSVG(svg(res, scenario.PlotOptions{Y: []string{"latency", "latency_p99"}, LogY: true}))
		all := strings.Join(texts(ts), "\n")
		Expect(all).To(ContainSubstring("points: mean over 3 seeds; bars: 95% confidence interval of the mean (Student t, n-1 dof)"))
		Expect(texts(ts)).To(ContainElements("latency", "latency_p99"))
		Expect(all).To(ContainSubstring("latency, latency_p99 (cycles)"))
		// Values 20..~320 cycles: decades 10 to 1000 with 2 and 5 between.
		_, ys := ticks(ts)
		Expect(texts(ys)).To(ConsistOf("10", "20", "50", "100", "200", "500", "1000"))
	})
})

var _ = Describe("seed statistics", func() {
	It("gives Student's t quantile for a two-sided 95% interval as printed tables do", func() {
		// Two-sided 95% critical values of t, to the 3 decimals tables
		// print (any statistics textbook's t table).
		for dof, want := range map[int]float64{1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 9: 2.262, 15: 2.131, 31: 2.040} {
			Expect(scenario.TQuantile975(dof)).To(BeNumerically("~", want, 5e-4), "dof %d", dof)
		}
		Expect(math.IsNaN(scenario.TQuantile975(0))).To(BeTrue())
	})

	It("gives the mean and the interval's half-width, none for one value", func() {
		// 1, 2, 3: mean 2, s = 1, standard error 1/sqrt(3) = 0.57735,
		// times t(0.975, 2) = 4.3027: 2.4841.
		mean, hw := scenario.MeanCI95([]float64{1, 2, 3})
		Expect(mean).To(Equal(2.0))
		Expect(hw).To(BeNumerically("~", 2.4841, 1e-4))
		mean, hw = scenario.MeanCI95([]float64{7})
		Expect(mean).To(Equal(7.0))
		Expect(hw).To(BeZero())
	})
})

var _ = Describe("a grid of several keys", func() {
	grid := []scenario.Axis{{Key: "rate", Values: []float64{0.1, 0.3, 0.9}}, {Key: "net.delay", Values: []float64{1, 2}}}

	It("writes one CSV column per key with its unit, the last key fastest", func() {
		res, err := runSweep(loadScenario(true), jobs.SweepSpec{Grid: grid, Y: []string{"latency"}})
		Expect(err).NotTo(HaveOccurred())
		var b bytes.Buffer
		Expect(scenario.WriteCSV(&b, res)).To(Succeed())
		rows := readCSV(b.Bytes())
		Expect(rows[0][:3]).To(Equal([]string{"rate (packets/cycle)", "net.delay (ns)", "seed"}))
		var keys [][]string
		for _, r := range rows[1:] {
			keys = append(keys, r[:2])
		}
		Expect(keys).To(Equal([][]string{{"0.1", "1"}, {"0.1", "2"}, {"0.3", "1"}, {"0.3", "2"}, {"0.9", "1"}, {"0.9", "2"}}))
	})

	It("plots the first key on x and a series per value of the others, per metric when there are several", func() {
		res, err := runSweep(loadScenario(true), jobs.SweepSpec{Grid: grid, Seeds: 2, Y: []string{"latency", "latency_p99"}})
		Expect(err).NotTo(HaveOccurred())
		var b bytes.Buffer
		Expect(scenario.WriteSVG(&b, res, scenario.PlotOptions{Y: []string{"latency", "latency_p99"}})).To(Succeed())
		var all []string
		for _, t := range parseSVG(b.Bytes()) {
			all = append(all, t.s)
		}
		Expect(all).To(ContainElements("latency, net.delay=1", "latency, net.delay=2", "latency_p99, net.delay=1", "latency_p99, net.delay=2",
			"rate (packets/cycle)", "saturated (did not drain)",
			// A reference line per combination of the other keys.
			"zero_load_latency = 20 cycles (net.delay=1)", "zero_load_latency = 20 cycles (net.delay=2)"))
	})

	It("clips a confidence interval that reaches below zero at a log axis' bottom instead of failing", func() {
		// Latencies 1 and 60: mean 30.5, s = 41.7, standard error 29.5,
		// half-width 12.706 * 29.5 = 375, so the bar reaches -344 (this
		// panicked in the plotting library's log scale).
		res := &scenario.SweepResult{Scenario: "x", Seeds: 2, Grid: []scenario.Axis{{Key: "rate", Values: []float64{0.1}}},
			Defs: []scenario.MetricDef{{Name: "latency", Unit: "cycles"}},
			Points: []scenario.Point{
				{Grid: []float64{0.1}, Seed: 1, Metrics: []scenario.Metric{{Name: "latency", Value: 1, Unit: "cycles"}}},
				{Grid: []float64{0.1}, Seed: 2, Metrics: []scenario.Metric{{Name: "latency", Value: 60, Unit: "cycles"}}},
			}}
		var b bytes.Buffer
		Expect(scenario.WriteSVG(&b, res, scenario.PlotOptions{Y: []string{"latency"}, LogY: true})).To(Succeed())
		parseSVG(b.Bytes())
	})

	It("tabulates one row per point with the mean ± the interval's half-width and the statuses counted", func() {
		res, err := runSweep(loadScenario(true), jobs.SweepSpec{Grid: rate(0.1, 0.5), Seed: 1, Seeds: 3, Y: []string{"latency"}, Sets: []string{"fail=0.5"}})
		Expect(err).NotTo(HaveOccurred())
		var b bytes.Buffer
		Expect(scenario.WriteTable(&b, res, []string{"latency"})).To(Succeed())
		// Seeds 1, 2, 3 add 1, 2, 3 to 20+200*0.1 = 40: 41, 42, 43, mean
		// 42, s = 1, half-width 4.3027/sqrt(3) = 2.48.
		want := "# mean ± half-width of the 95% confidence interval (Student t) over 3 seeds\n" +
			"rate  latency       accepted         status    \n" +
			"0.1   42.00 ± 2.48  0.1000 ± 0.0000  ok        \n" +
			"0.5   -             -                3 failed  \n"
		Expect(cmp.Diff(want, b.String())).To(BeEmpty())
	})
})
