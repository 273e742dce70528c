package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// configSets is one valid --set of every scenario of the catalog, for the
// read-back spec of a modified configuration.
var configSets = map[string]string{
	"demo":                      "ni.fifo_depth=128",
	"mesh":                      "injection_rate=0.2",
	"graph":                     "packet_size=4",
	"myrinet-grid":              "injection_rate=0.02",
	"myrinet-clos":              "traffic=bitcomp",
	"atm-star":                  "traffic=hotspot",
	"mchub-star":                "pages=8",
	"telegraphos-calibration":   "ops=100",
	"telegraphos-fetchinc":      "nodes=4",
	"telegraphos-prodcons":      "seeds=3",
	"telegraphos-alarms":        "reads=3",
	"telegraphos-multicast":     "writes=10",
	"telegraphos-inconsistency": "reads=5",
	"telegraphos-coherence":     "counter_cache=0",
	"telegraphos-protection":    "wrong_key=4660",
	"lci-logp":                  "variant=pio",
	"lci-latency":               "step=32",
	"lci-throughput":            "sizes=[64, 128]",
	"lci-broadcast":             "tree=binomial",
	"lci-traffic":               "nodes=4",
	"lci-report":                "broadcast=false",
	"lci-pps":                   "multicast=false",
	"lci-apps":                  "app=radix",
	"mc-report":                 "rounds=4",
	"mc-traffic":                "writes=10",
	"cashmere-report":           "sor.iters=2",
	"cashmere-random":           "phases=2",
	"shrimp-report":             "rounds=4",
	"shrimp-traffic":            "ops=10",
	"svm-app":                   "app=radix",
	"svm-random":                "phases=2",
	"atm-report":                "rounds=4",
	"atm-traffic":               "ops=10",
	"remotewrite":               "firmware.costs.transmit=48",
}

var _ = Describe("nisim config", func() {
	// effective returns the dump of s's parameters after Configure.
	effective := func(name, file string, sets []string) string {
		s, err := catalog().Lookup(name)
		Expect(err).NotTo(HaveOccurred())
		p := s.Defaults()
		Expect(scenario.Configure(p, file, sets)).To(Succeed())
		text, err := scenario.Dump(p)
		Expect(err).NotTo(HaveOccurred())
		return text
	}

	It("has a --set example for every scenario of the catalog", func() {
		for _, s := range catalog() {
			Expect(configSets).To(HaveKey(s.Name))
		}
	})

	for _, s := range catalog() {
		It("prints "+s.Name+"'s effective configuration in 100 columns, every key documented, and --config reads it back", func() {
			dir := GinkgoT().TempDir()
			for _, sets := range [][]string{nil, {configSets[s.Name]}} {
				args := []string{"config", s.Name}
				for _, set := range sets {
					args = append(args, "--set", set)
				}
				code, out, errOut := nisim(args...)
				Expect(errOut).To(BeEmpty())
				Expect(code).To(Equal(0))
				for _, l := range strings.Split(out, "\n") {
					Expect(utf8.RuneCountInString(l)).To(BeNumerically("<=", scenario.ConfigWidth), l)
				}
				f := filepath.Join(dir, "c.toml")
				Expect(os.WriteFile(f, []byte(out), 0o644)).To(Succeed())
				Expect(cmp.Diff(effective(s.Name, "", sets), effective(s.Name, f, nil))).To(BeEmpty())
				// Read back, every key now comes from the file.
				code, again, _ := nisim("config", s.Name, "--config", f)
				Expect(code).To(Equal(0))
				Expect(again).NotTo(ContainSubstring("; default"))
				Expect(again).To(ContainSubstring("; --config " + f + "\n"))
			}
			// Every key has its KeySpec: a unit or a range.
			p := s.Defaults()
			Expect(p.Validate()).To(Succeed())
			entries, err := scenario.EffectiveConfig(p, scenario.Sources{})
			Expect(err).NotTo(HaveOccurred())
			for _, e := range entries {
				Expect(e.Spec.Key).NotTo(BeEmpty(), "%s: key %s has no KeySpec", s.Name, e.Key)
				Expect(e.Spec.Unit+e.Spec.RangeText(e.Integer)).NotTo(BeEmpty(), "%s: key %s has no unit or range", s.Name, e.Key)
			}
		})
	}

	It("names the source of each value: default with its origin, the file, --set", func() {
		dir := GinkgoT().TempDir()
		f := filepath.Join(dir, "c.toml")
		Expect(os.WriteFile(f, []byte("[ni]\nfifo_depth = 32\n"), 0o644)).To(Succeed())
		code, out, _ := nisim("config", "demo", "--config", f, "--set", "bus.preset=pci64")
		Expect(code).To(Equal(0))
		Expect(commentOf(out, "fifo_depth = 32")).To(HaveSuffix("; --config " + f))
		Expect(commentOf(out, "preset = 'pci64'")).To(HaveSuffix("; --set"))
		Expect(commentOf(out, "issue_cycles = 4")).To(HaveSuffix("; default (assumed: 4)"))
	})

	It("names standard input as the source of --config - (read once: it cannot be read again)", func() {
		_, cfg, _ := nisim("config", "mesh", "--set", "k=4")
		f := filepath.Join(GinkgoT().TempDir(), "in.toml")
		Expect(os.WriteFile(f, []byte(cfg), 0o644)).To(Succeed())
		in, err := os.Open(f)
		Expect(err).NotTo(HaveOccurred())
		defer in.Close()
		saved := os.Stdin
		os.Stdin = in
		defer func() { os.Stdin = saved }()
		code, out, _ := nisim("config", "mesh", "--config", "-")
		Expect(code).To(Equal(0))
		Expect(commentOf(out, "k = 4")).To(HaveSuffix("; --config -"))
		Expect(out).NotTo(ContainSubstring("; default"))
	})

	It("shows the range that Validate enforces, from the same table", func() {
		// The range printed for ni.fifo_depth is the budget bound; one
		// above it is refused with that bound.
		code, out, _ := nisim("config", "demo")
		Expect(code).To(Equal(0))
		s, _ := catalog().Lookup("demo")
		p := s.Defaults()
		var limit int64
		for _, k := range scenario.KeysOf(p) {
			if k.Key == "ni.fifo_depth" {
				limit = int64(k.Max)
			}
		}
		Expect(limit).To(BeNumerically(">", 1))
		Expect(out).To(ContainSubstring("range 1..%d (memory budget)", limit))
		Expect(scenario.Configure(s.Defaults(), "", []string{"ni.fifo_depth=" + itoa(limit)})).To(Succeed())
		Expect(scenario.Configure(s.Defaults(), "", []string{"ni.fifo_depth=" + itoa(limit+1)})).To(MatchError(ContainSubstring("above the limit " + itoa(limit))))
	})

	It("refuses a bad key, value or scenario like run does", func() {
		code, _, errOut := nisim("config", "demo", "--set", "ni.nosuch=1")
		Expect(code).To(Equal(2))
		Expect(errOut).To(HavePrefix("nisim: config: "))
		Expect(errOut).To(ContainSubstring("ni.nosuch"))
		code, _, _ = nisim("config", "nosuch")
		Expect(code).To(Equal(2))
	})

	It("is what run --print-config prints before the report", func() {
		_, cfg, _ := nisim("config", "remotewrite", "--set", "size=64")
		code, out, _ := nisim("run", "remotewrite", "--set", "size=64", "--print-config")
		Expect(code).To(Equal(0))
		Expect(out).To(HavePrefix(cfg + "\n"))
	})
})

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// commentOf returns the comment above the line of a nisim config text,
// its wrapped lines joined.
func commentOf(text, line string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l != line {
			continue
		}
		var parts []string
		for j := i - 1; j >= 0 && strings.HasPrefix(lines[j], "#"); j-- {
			parts = append([]string{strings.TrimSpace(strings.TrimPrefix(lines[j], "#"))}, parts...)
			if !strings.HasPrefix(lines[j], "#  ") {
				break
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}
