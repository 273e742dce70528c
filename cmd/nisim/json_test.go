package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// decodeReport decodes a --json report strictly into its exported type.
func decodeReport(b []byte) scenario.JSONReport {
	var r scenario.JSONReport
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	ExpectWithOffset(1, d.Decode(&r)).To(Succeed())
	return r
}

var _ = Describe("nisim run --json", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("writes the report as JSON, the same bytes for the same run, decoding into scenario.JSONReport", func() {
		a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
		for _, f := range []string{a, b} {
			code, out, errOut := nisim("run", "remotewrite", "--seed", "3", "--set", "size=64", "--json", f)
			Expect(errOut).To(BeEmpty())
			Expect(code).To(Equal(0))
			Expect(out).To(ContainSubstring("PASS  delivered"))
			Expect(out).To(ContainSubstring("report (JSON): " + f))
		}
		ab, err := os.ReadFile(a)
		Expect(err).NotTo(HaveOccurred())
		bb, err := os.ReadFile(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(ab).To(Equal(bb))
		r := decodeReport(ab)
		Expect(r.Format).To(Equal(scenario.JSONFormat))
		Expect(r.Version).To(Equal(version()))
		Expect(r.Scenario).To(Equal("remotewrite"))
		Expect(r.Seed).To(Equal(uint64(3)))
		Expect(r.Passed).To(BeTrue())
		Expect(r.Failure).To(BeEmpty())
		Expect(r.EndPS).To(BeNumerically(">", 0))
		Expect(r.Events).To(BeNumerically(">", 0))
		Expect(r.Rows).NotTo(BeEmpty())
		Expect(r.Rows[0].Unit).To(Equal("µs"))
		Expect(r.Metrics).To(ContainElement(HaveField("Name", "latency")))
		Expect(r.Checks).To(ContainElement(scenario.JSONCheck{Name: "checkers", OK: true,
			Detail: "no violation (conservation, order, overflow, credits, protocol rules, watchdogs)"}))
		var size scenario.JSONParam
		for _, c := range r.Config {
			if c.Key == "size" {
				size = c
			}
		}
		Expect(size.Value).To(Equal(64.0)) // a JSON number
		Expect(size.Source).To(Equal("--set"))
		// Every key of the effective configuration, in nisim config's order.
		_, cfg, _ := nisim("config", "remotewrite", "--set", "size=64")
		n := 0
		for _, c := range r.Config {
			Expect(cfg).To(ContainSubstring("\n" + c.Key[lastDot(c.Key)+1:] + " = "))
			n++
		}
		keys := 0
		for _, l := range strings.Split(cfg, "\n") {
			if !strings.HasPrefix(l, "#") && strings.Contains(l, " = ") {
				keys++
			}
		}
		Expect(n).To(Equal(keys))
	})

	It("with -, writes the JSON to standard output and the report to standard error", func() {
		code, out, errOut := nisim("run", "remotewrite", "--json", "-")
		Expect(code).To(Equal(0))
		Expect(errOut).To(ContainSubstring("PASS  delivered"))
		r := decodeReport([]byte(out))
		Expect(r.Passed).To(BeTrue())
		// Standard output is one output's only.
		code, _, errOut = nisim("run", "remotewrite", "--json", "-", "--vcd", "-")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("standard output is already the output of"))
	})

	It("writes the full text of a capped source column", func() {
		code, out, _ := nisim("run", "telegraphos-calibration", "--set", "ops=100", "--json", "-")
		Expect(code).To(Equal(0))
		r := decodeReport([]byte(out))
		Expect(r.Rows[0].Source).To(Equal("telegraphos.txt 3.2 «Remote Write 0.70» µs, «by performing 10000 operations»"))
		Expect(r.Rows[0].PaperValue).NotTo(BeNil())
		Expect(*r.Rows[0].PaperValue).To(Equal(0.7))
	})

	It("marks the calibrated rows", func() {
		code, out, _ := nisim("run", "lci-logp", "--set", "iters=4", "--set", "stream=8", "--json", "-")
		Expect(code).To(BeElementOf(0, 1)) // the short loops may miss the 10%; the marks are the point
		r := decodeReport([]byte(out))
		n := 0
		for _, row := range r.Rows {
			if row.Calibrated {
				n++
				Expect(row.Source).To(ContainSubstring("(calibration)"))
				Expect(row.RelError).NotTo(BeNil())
			}
		}
		Expect(n).To(BeNumerically(">", 0))
	})

	It("still writes the JSON of a failed run, with the failure, and exits 1", func() {
		f := filepath.Join(dir, "fail.json")
		code, _, errOut := nisim("run", "atm-star", "--time-limit", "1us", "--json", f)
		Expect(code).To(Equal(1))
		Expect(errOut).To(ContainSubstring("a check failed"))
		b, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		r := decodeReport(b)
		Expect(r.Passed).To(BeFalse())
		Expect(r.Failure).To(Equal("atm-star: a check failed"))
		Expect(r.Checks).To(ContainElement(HaveField("OK", false)))
		// A run stopped before its report: the failure, no rows.
		g := filepath.Join(dir, "stopped.json")
		code, _, _ = nisim("run", "lci-logp", "--time-limit", "1us", "--json", g)
		Expect(code).To(Equal(1))
		b, err = os.ReadFile(g)
		Expect(err).NotTo(HaveOccurred())
		r = decodeReport(b)
		Expect(r.Passed).To(BeFalse())
		Expect(r.Failure).To(ContainSubstring("--time-limit 1us"))
		Expect(r.Rows).To(BeEmpty())
		Expect(r.EndPS).To(BeNumerically(">", 0))
	})

	It("carries the checkers' violations", func() {
		code, out, _ := nisim("run", "mesh", "--mutate", "link.leak=1000", "--json", "-")
		Expect(code).To(Equal(1))
		r := decodeReport([]byte(out))
		Expect(r.Passed).To(BeFalse())
		Expect(r.Violations.Count).To(BeNumerically(">", 0))
		Expect(r.Violations.Kept).NotTo(BeEmpty())
		Expect(r.Violations.Kept[0].Check).NotTo(BeEmpty())
	})

	It("checks --json with the other outputs before running", func() {
		cfg := filepath.Join(dir, "c.toml")
		Expect(os.WriteFile(cfg, []byte("size = 64\n"), 0o644)).To(Succeed())
		code, _, errOut := nisim("run", "remotewrite", "--config", cfg, "--json", cfg)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--json"))
		code, _, errOut = nisim("run", "remotewrite", "--json", dir)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--json"))
	})
})

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}
