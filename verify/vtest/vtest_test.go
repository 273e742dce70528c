package vtest_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves/vcd"
	"github.com/onsi/ginkgo/v2/types"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("vtest", func() {
	It("derives a stable seed per spec", func() {
		a, b := vtest.Seed(), vtest.Seed()
		Expect(a).To(Equal(b))
		Expect(a).NotTo(BeZero())
	})

	It("writes the waveform of a failing spec and links it from the report", func() {
		if os.Getenv("NISIM_RUN_FAILING") != "" {
			Skip("nested run")
		}
		dir := GinkgoT().TempDir()
		report := filepath.Join(dir, "report.json")
		cmd := exec.Command("go", "test", "./testdata/failing", "-count=1", "-ginkgo.json-report="+report)
		cmd.Env = append(os.Environ(), "NISIM_RUN_FAILING=1")
		out, err := cmd.CombinedOutput()
		Expect(err).To(HaveOccurred(), "the nested spec must fail")
		Expect(string(out)).To(ContainSubstring("failure waveform:"))
		Expect(string(out)).To(ContainSubstring("reproduce: go test ./verify/vtest/testdata/failing -ginkgo.seed="))

		raw, err := os.ReadFile(report)
		Expect(err).NotTo(HaveOccurred())
		var reports []types.Report
		Expect(json.Unmarshal(raw, &reports)).To(Succeed())
		var path string
		for _, s := range reports[0].SpecReports {
			for _, e := range s.ReportEntries {
				if e.Name == "waveform" {
					path = strings.Trim(e.Value.Representation, `"`)
				}
			}
		}
		Expect(path).To(HaveSuffix("out/failures/fails_after_filling_a_FIFO.vcd"))
		DeferCleanup(os.Remove, path)
		f, err := vcd.ParseFile(path)
		Expect(err).NotTo(HaveOccurred())
		// The FIFO filled to 3 entries on cycles 0..2 (pushes visible in the
		// waveform at 0, 10 and 20 ns).
		v, err := f.ValueAt("bench.fifo.occupancy", int64(25*clock.Nanosecond))
		Expect(err).NotTo(HaveOccurred())
		n, _ := v.Uint()
		Expect(n).To(Equal(uint64(3)))
	})
})
