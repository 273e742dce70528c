package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// nisim runs the command line in-process and returns the exit status,
// standard output and standard error.
func nisim(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

var _ = Describe("nisim", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	files := func() []string {
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	It("lists the scenarios", func() {
		code, out, _ := nisim("list")
		Expect(code).To(Equal(0))
		Expect(out).To(MatchRegexp(`(?m)^  demo\s+\S.*\s+PIO and DMA over PCI`))
	})

	It("runs the demo, writes a waveform and a trace, and both check out", func() {
		vcdPath, tracePath := filepath.Join(dir, "d.vcd"), filepath.Join(dir, "d.trace")
		code, out, errOut := nisim("run", "demo", "--vcd", vcdPath, "--trace", tracePath)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("PASS  bytes arrived"))
		Expect(out).To(ContainSubstring("host DMA bandwidth"))
		code, out, _ = nisim("vcd", "lint", vcdPath)
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("ok"))
		code, out, _ = nisim("trace", "diff", "../../verify/scenario/demo/testdata/demo.trace", tracePath)
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("identical"))
	})

	It("applies a config file and --set in that order", func() {
		cfg := filepath.Join(dir, "c.toml")
		Expect(os.WriteFile(cfg, []byte("[ni]\nfifo_depth = 32\n[workload]\ndma_bytes = 1024\n"), 0o644)).To(Succeed())
		code, out, _ := nisim("run", "demo", "--config", cfg, "--set", "workload.dma_bytes=512", "--print-config")
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("fifo_depth = 32"))
		Expect(out).To(ContainSubstring("dma_bytes = 512"))
		Expect(out).To(ContainSubstring("512 B by DMA"))
	})

	It("prints the defaults as a config file it accepts back", func() {
		code, out, _ := nisim("config", "demo")
		Expect(code).To(Equal(0))
		cfg := filepath.Join(dir, "defaults.toml")
		Expect(os.WriteFile(cfg, []byte(out), 0o644)).To(Succeed())
		code, _, errOut := nisim("run", "demo", "--config", cfg)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
	})

	DescribeTable("bad input: one line naming the problem, exit status 2, no output file",
		func(args []string, msg string) {
			full := append(args, "--vcd", filepath.Join(dir, "x.vcd"), "--trace", filepath.Join(dir, "x.trace"))
			code, _, errOut := nisim(full...)
			Expect(code).To(Equal(2))
			Expect(strings.Count(errOut, "\n")).To(Equal(1))
			Expect(errOut).To(HavePrefix("nisim: "))
			Expect(errOut).To(ContainSubstring(msg))
			Expect(files()).To(BeEmpty())
		},
		Entry("unknown scenario", []string{"run", "nosuch"}, `unknown scenario "nosuch"`),
		Entry("unknown key", []string{"run", "demo", "--set", "ni.fifo_dpth=4"}, "unknown key ni.fifo_dpth"),
		Entry("wrong type", []string{"run", "demo", "--set", "ni.fifo_depth=deep"}, "key ni.fifo_depth: want an integer"),
		Entry("zero depth", []string{"run", "demo", "--set", "ni.fifo_depth=0"}, "ni.fifo_depth: must be at least 1"),
		Entry("negative width", []string{"run", "demo", "--set", "ni.fifo_width=-4"}, "ni.fifo_width"),
		Entry("zero frequency", []string{"run", "demo", "--set", "link.clock=0Hz"}, "link.clock"),
		Entry("burst larger than the FIFO", []string{"run", "demo", "--set", "ni.dma_burst=1024"}, "larger than the FIFO"),
		Entry("set without =", []string{"run", "demo", "--set", "ni.fifo_depth"}, "want key=value"),
		Entry("missing config", []string{"run", "demo", "--config", "/nonexistent/c.toml"}, "config /nonexistent/c.toml"),
		Entry("unknown flag", []string{"run", "demo", "--frobnicate"}, "unknown flag: --frobnicate"),
		Entry("no scenario", []string{"run"}, "want a scenario name"),
		Entry("bad time", []string{"run", "demo", "--from", "soon"}, `malformed time "soon"`),
	)

	It("reports a malformed config file with its line", func() {
		cfg := filepath.Join(dir, "bad.toml")
		Expect(os.WriteFile(cfg, []byte("[ni]\nfifo_depth = 8\nfifo_width = \"wide\"\n"), 0o644)).To(Succeed())
		code, _, errOut := nisim("run", "demo", "--config", cfg)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(cfg + ":3: key ni.fifo_width: want an integer"))
		Expect(os.WriteFile(cfg, []byte("[ni\nfifo_depth = 8\n"), 0o644)).To(Succeed())
		code, _, errOut = nisim("run", "demo", "--config", cfg)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(cfg + ":1:"))
	})

	It("refuses an unwritable output before running and leaves nothing behind", func() {
		// A missing directory is created (outputs_test.go); one under a
		// regular file cannot be.
		Expect(os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)).To(Succeed())
		code, out, errOut := nisim("run", "demo", "--trace", filepath.Join(dir, "t.trace"), "--vcd", filepath.Join(dir, "f", "sub", "dir.vcd"))
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("dir.vcd: not a directory"))
		Expect(files()).To(ConsistOf("f"))
	})

	It("fails with status 1 when a check fails", func() {
		// Corrupt every packet: the link CRC catches it and the bytes do
		// not match.
		code, out, errOut := nisim("run", "demo", "--set", "link.corrupt_prob=1", "--trace", filepath.Join(dir, "t.trace"))
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("FAIL  link CRC"))
		Expect(errOut).To(ContainSubstring("demo.crc"))
	})

	It("reports a malformed VCD and diverging traces with status 1", func() {
		bad := filepath.Join(dir, "bad.vcd")
		Expect(os.WriteFile(bad, []byte("$timescale 1ps $end\n$scope module A $end\n$var wire 1 ! a $end\n$upscope $end\n$enddefinitions $end\n#10\n1\"\n#5\n"), 0o644)).To(Succeed())
		code, out, errOut := nisim("vcd", "lint", bad)
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring(bad + ":7:"))
		Expect(out).To(ContainSubstring(bad + ":8:"))
		Expect(errOut).To(ContainSubstring("2 error(s)"))

		a, b := filepath.Join(dir, "a.trace"), filepath.Join(dir, "b.trace")
		Expect(os.WriteFile(a, []byte("10 1 X k a=1\n20 2 X k a=2\n"), 0o644)).To(Succeed())
		Expect(os.WriteFile(b, []byte("10 1 X k a=1\n20 2 X k a=3\n"), 0o644)).To(Succeed())
		code, out, errOut = nisim("trace", "diff", a, b)
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("traces differ at record 2"))
		Expect(errOut).To(ContainSubstring("traces differ at record 2"))
		code, _, errOut = nisim("trace", "diff", a, filepath.Join(dir, "none.trace"))
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("none.trace"))
	})

	It("sweeps a parameter into a table, a CSV file and an SVG plot", func() {
		csvPath, svgPath := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.svg")
		code, out, errOut := nisim("sweep", "mesh", "--set", "k=3", "--set", "sample_period=300", "--values", "0.05,0.2",
			"--csv", csvPath, "--svg", svgPath)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(MatchRegexp(`(?m)^0\.05\s+\d+\.\d+\s+0\.0\d+\s+ok`))
		b, err := os.ReadFile(csvPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(strings.TrimSpace(string(b)), "\n")).To(HaveLen(3))
		svg, err := os.ReadFile(svgPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(svg)).To(ContainSubstring("<svg"))
		code, _, errOut = nisim("sweep", "mesh", "--values", "0.1,x")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`--values: "x" is not a number`))
	})

	It("has --help everywhere", func() {
		for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"list", "--help"}, {"vcd", "lint", "--help"}, {"trace", "diff", "--help"}, {"config", "--help"}} {
			code, out, _ := nisim(args...)
			Expect(code).To(Equal(0), strings.Join(args, " "))
			Expect(out).To(ContainSubstring("Usage:"))
		}
	})
})
