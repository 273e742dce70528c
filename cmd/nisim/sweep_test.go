package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("nisim sweep", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("refuses an unknown --y metric before running anything, naming it and listing the available ones (exit 2)", func() {
		csvPath := filepath.Join(dir, "s.csv")
		code, out, errOut := nisim("sweep", "mesh", "--y", "nosuch", "--csv", csvPath)
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring(`unknown metric "nosuch" (available: `))
		Expect(errOut).To(ContainSubstring("latency, latency_p99"))
		Expect(strings.Count(errOut, "\n")).To(Equal(1))
		Expect(csvPath).NotTo(BeAnExistingFile())
	})

	It("writes the CSV with each run's status and the SVG when runs fail, then exits 1", func() {
		csvPath, svgPath := filepath.Join(dir, "f.csv"), filepath.Join(dir, "f.svg")
		code, out, errOut := nisim("sweep", "mesh", "--set", "k=3", "--set", "sample_period=300", "--values", "0.05,0.2",
			"--mutate", "link.leak=50", "--csv", csvPath, "--svg", svgPath)
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("failed: checkers:"))
		Expect(errOut).To(ContainSubstring("mesh: 2 of 2 runs failed, first at injection_rate=0.05: checkers:"))
		f, err := os.Open(csvPath)
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(HaveLen(3))
		Expect(rows[0][0]).To(Equal("injection_rate (flits/node/cycle)"))
		Expect(rows[0][len(rows[0])-1]).To(Equal("status"))
		for _, r := range rows[1:] {
			Expect(r[len(r)-1]).To(HavePrefix("failed: checkers: "))
		}
		svg, err := os.ReadFile(svgPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(svg)).To(ContainSubstring("failed, not drawn: injection_rate=0.05"))
	})

	It("runs several seeds per value and plots on a log axis", func() {
		svgPath := filepath.Join(dir, "l.svg")
		code, out, errOut := nisim("sweep", "mesh", "--set", "k=3", "--set", "sample_period=300", "--values", "0.05,0.2",
			"--seeds", "2", "--logy", "--svg", svgPath)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		// One row per point: the mean and the half-width of its 95%
		// confidence interval over the 2 seeds.
		Expect(out).To(MatchRegexp(`(?m)^0\.05\s+\d+\.\d+ ± \d+\.\d+\s+\d+\.\d+ ± \d+\.\d+\s+ok`))
		svg, err := os.ReadFile(svgPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(svg)).To(ContainSubstring("points: mean over 2 seeds; bars: 95% confidence interval of the mean (Student t, n-1 dof)"))
		code, _, errOut = nisim("sweep", "mesh", "--seeds", "33")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--seeds: must be in [1, 32]"))
	})
})
