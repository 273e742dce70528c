package scenario_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

type params struct {
	Name string  `toml:"name"`
	Rate float64 `toml:"rate"`
	On   bool    `toml:"on"`
	Fifo struct {
		Depth int `toml:"depth"`
	} `toml:"fifo"`
}

func (p *params) Validate() error {
	return scenario.Check(p.Fifo.Depth < 1, "fifo.depth", "must be at least 1 (got %d)", p.Fifo.Depth)
}

func defaults() *params {
	p := &params{Name: "x", Rate: 0.5}
	p.Fifo.Depth = 4
	return p
}

var _ = Describe("Configure", func() {
	It("keeps defaults, applies the file, then each --set in order", func() {
		dir := GinkgoT().TempDir()
		f := filepath.Join(dir, "c.toml")
		Expect(os.WriteFile(f, []byte("rate = 2.5\n[fifo]\ndepth = 8\n"), 0o644)).To(Succeed())
		p := defaults()
		Expect(scenario.Configure(p, f, []string{"fifo.depth=16", "name=pci64", "on=true", "fifo.depth=32"})).To(Succeed())
		Expect(p.Rate).To(Equal(2.5))
		Expect(p.Fifo.Depth).To(Equal(32))
		Expect(p.Name).To(Equal("pci64")) // unquoted strings are taken as strings
		Expect(p.On).To(BeTrue())
	})

	It("takes a bare number or boolean given to a string key as written", func() {
		p := defaults()
		Expect(scenario.Configure(p, "", []string{"name=20"})).To(Succeed())
		Expect(p.Name).To(Equal("20"))
		Expect(scenario.Configure(p, "", []string{"name=true"})).To(Succeed())
		Expect(p.Name).To(Equal("true"))
		// The other way round stays an error: a word is not a number.
		err := scenario.Configure(p, "", []string{"rate=fast"})
		Expect(err).To(MatchError(ContainSubstring("rate")))
	})

	DescribeTable("rejects bad input, naming the key and the place",
		func(file string, sets []string, msg string) {
			dir := GinkgoT().TempDir()
			path := ""
			if file != "" {
				path = filepath.Join(dir, "c.toml")
				Expect(os.WriteFile(path, []byte(file), 0o644)).To(Succeed())
			}
			err := scenario.Configure(defaults(), path, sets)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(msg))
		},
		Entry("unknown key in a file", "[fifo]\ndepht = 3\n", nil, "c.toml:2: unknown key fifo.depht"),
		Entry("wrong type in a file", "\n\nrate = \"fast\"\n", nil, "c.toml:3: key rate: want a number, got a TOML string"),
		Entry("malformed file", "[fifo\n", nil, "c.toml:1:"),
		Entry("unknown key in --set", "", []string{"fifo.width=3"}, "--set fifo.width=3: unknown key fifo.width"),
		Entry("wrong type in --set", "", []string{"fifo.depth=1.5"}, "key fifo.depth: want an integer, got a TOML float"),
		Entry("table given a value", "", []string{"fifo=3"}, "key fifo: want a table"),
		Entry("no =", "", []string{"fifo.depth"}, "want key=value"),
		Entry("bad key", "", []string{"fifo..depth=1"}, "malformed key"),
		Entry("impossible value", "", []string{"fifo.depth=0"}, "invalid parameter fifo.depth: must be at least 1 (got 0)"),
		Entry("impossible value from the file", "[fifo]\ndepth = 0\n", nil, "invalid parameter fifo.depth: must be at least 1 (got 0)"),
		Entry("unknown key in an inline table", "fifo = {depth = 2, width = 3}\n", nil, "c.toml:1: unknown key fifo.width"),
		Entry("unknown key under a table header", "[fifo]\ndepth = 2\n\n[fifo.x]\n", nil, "c.toml:4: unknown key fifo.x"),
	)

	// Issue 12: 200k unknown keys hung the run (go-toml's strict mode
	// computes every unknown key's line from the start of the document:
	// 10k keys 3 s, 20k 11.6 s). Configure now stops at the first unknown
	// key: the error names exactly that one, on its line, so nothing after
	// it was looked at (BenchmarkConfigureKeys measures the cost per key).
	It("refuses 200k unknown keys at the first one", func() {
		var b strings.Builder
		b.WriteString("rate = 1.5\n[fifo]\ndepth = 2\n")
		for i := range 200_000 {
			fmt.Fprintf(&b, "bogus%d = %d\n", i, i)
		}
		// 3.9 MB: given as data, since a --config file is refused above
		// scenario.MaxConfigBytes before it is decoded (configread_test).
		err := scenario.ConfigureData(defaults(), "c.toml", []byte(b.String()), nil)
		Expect(err).To(MatchError("config c.toml:4: unknown key fifo.bogus0"))
	})

	It("names the per-run memory budget and the derivation in a bound's one-line error", func() {
		// 1 GiB / 32 B = 33554432 units.
		Expect(scenario.BudgetLimit(32)).To(Equal(int64(33554432)))
		Expect(scenario.CheckBudget("ni.fifo_depth", 33554432, 32, "flit")).To(Succeed())
		err := scenario.CheckBudget("ni.fifo_depth", 1_000_000_000_000, 32, "flit")
		Expect(err).To(MatchError("ni.fifo_depth: above the limit 33554432 (got 1000000000000; 32 B per flit x 33554432 = 1024 MiB, the per-run memory budget)"))
		Expect(scenario.CheckLimit("nodes", 17, 16, "4 node bits")).To(MatchError("nodes: above the limit 16 (got 17; 4 node bits)"))
	})

	It("keeps a key error on one line when its message echoes a file name with a newline (fuzz seed c65a6a51c7b5ca6d)", func() {
		err := &scenario.KeyError{Key: "graph_file", Msg: "open 0\n0: no such file or directory"}
		Expect(err.Error()).To(Equal(`graph_file: open 0\n0: no such file or directory`))
		Expect((&scenario.KeyError{Key: "k", Msg: "tab\there, bell\a, é"}).Error()).To(Equal(`k: tab\there, bell\a, é`))
	})

	It("reports an unreadable file", func() {
		err := scenario.Configure(defaults(), "/nonexistent/c.toml", nil)
		Expect(err).To(MatchError("config /nonexistent/c.toml: no such file or directory"))
	})

	It("dumps parameters that read back to the same values", func() {
		p := defaults()
		p.Fifo.Depth = 9
		text, err := scenario.Dump(p)
		Expect(err).NotTo(HaveOccurred())
		f := filepath.Join(GinkgoT().TempDir(), "d.toml")
		Expect(os.WriteFile(f, []byte(text), 0o644)).To(Succeed())
		q := &params{}
		Expect(scenario.Configure(q, f, nil)).To(Succeed())
		Expect(q).To(Equal(p))
	})
})

var _ = Describe("Exec", func() {
	tiny := &scenario.Scenario{
		Name:     "tiny",
		Defaults: func() scenario.Params { return defaults() },
		Run: func(e *env.Env, p scenario.Params) (*scenario.Report, error) {
			s := e.Waves.Integer("Tiny", "depth", 8)
			s.Set(0, uint64(p.(*params).Fifo.Depth))
			e.Trace.Emit(1000, 1, "Tiny", "tiny.done", trace.Int("depth", int64(p.(*params).Fifo.Depth)))
			res, err := e.Run()
			rep := &scenario.Report{Title: "tiny", Result: res}
			rep.Check("ran", true, "yes")
			return rep, err
		},
	}

	It("writes complete outputs and nothing else", func() {
		dir := GinkgoT().TempDir()
		v, t := filepath.Join(dir, "t.vcd"), filepath.Join(dir, "t.trace")
		rep, _, viol, err := scenario.Exec(tiny, defaults(), scenario.Options{VCD: v, Trace: t, Seed: 3})
		Expect(err).NotTo(HaveOccurred())
		Expect(viol).NotTo(HaveOccurred())
		Expect(rep.Seed).To(Equal(uint64(3)))
		entries, _ := os.ReadDir(dir)
		Expect(entries).To(HaveLen(2))
		recs, err := trace.ReadFile(t)
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(1))
		b, _ := os.ReadFile(v)
		Expect(string(b)).To(ContainSubstring("$var integer 32 ! depth $end"))
	})

	It("leaves no file behind when the scenario cannot be built", func() {
		dir := GinkgoT().TempDir()
		broken := *tiny
		broken.Run = func(*env.Env, scenario.Params) (*scenario.Report, error) { return nil, errors.New("no such board") }
		_, _, _, err := scenario.Exec(&broken, defaults(), scenario.Options{VCD: filepath.Join(dir, "t.vcd"), Trace: filepath.Join(dir, "t.trace")})
		Expect(err).To(MatchError("tiny: no such board"))
		entries, _ := os.ReadDir(dir)
		Expect(entries).To(BeEmpty())
	})

	It("computes the checkers verdict from the monitor: a run whose checkers fired never reads PASS", func() {
		for _, fire := range []bool{false, true} {
			sc := *tiny
			sc.Run = func(e *env.Env, p scenario.Params) (*scenario.Report, error) {
				if fire {
					e.Report(5, "Tiny.Link", "link.credits", "credit returned twice")
				}
				res, err := e.Run()
				rep := &scenario.Report{Title: "tiny", Result: res}
				rep.Check("ran", true, "yes")
				return rep, err
			}
			rep, _, viol, err := scenario.Exec(&sc, defaults(), scenario.Options{})
			Expect(err).NotTo(HaveOccurred())
			last := rep.Checks[len(rep.Checks)-1]
			Expect(last.Name).To(Equal("checkers"))
			Expect(last.OK).To(Equal(!fire))
			Expect(rep.Failed()).To(Equal(fire))
			if fire {
				Expect(viol).To(HaveOccurred())
				Expect(last.Detail).To(Equal("1 violation(s); first: 5ps Tiny.Link [link.credits] credit returned twice"))
			} else {
				Expect(viol).NotTo(HaveOccurred())
			}
		}
	})

	It("finds scenarios by name and lists the known ones otherwise", func() {
		c := scenario.Catalog{tiny}
		s, err := c.Lookup("tiny")
		Expect(err).NotTo(HaveOccurred())
		Expect(s).To(BeIdenticalTo(tiny))
		_, err = c.Lookup("big")
		Expect(err).To(MatchError(`unknown scenario "big" (known: tiny)`))
	})
})

var _ = Describe("CheckWaveNames", func() {
	named := func(signal string) *scenario.Scenario {
		return &scenario.Scenario{
			Name:     "named",
			Defaults: func() scenario.Params { return defaults() },
			Run: func(e *env.Env, p scenario.Params) (*scenario.Report, error) {
				e.Waves.Integer("Tiny", signal, 8)
				res, err := e.Run()
				return &scenario.Report{Title: "named", Result: res}, err
			},
		}
	}

	It("passes a scenario whose names follow the convention", func() {
		Expect(scenario.CheckWaveNames(named("depth"), GinkgoT().TempDir())).To(Succeed())
	})

	It("names the scenario and the signal that breaks it (a long form of a listed abbreviation)", func() {
		err := scenario.CheckWaveNames(named("host_dma"), GinkgoT().TempDir())
		Expect(err).To(MatchError(And(ContainSubstring("named: "), ContainSubstring("host_dma"))))
	})
})
