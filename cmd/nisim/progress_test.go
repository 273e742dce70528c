package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/env"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("progress on standard error", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	// A mesh run of about 41000 events (73 us simulated): many
	// env.ProgressEvery, so the hook fires mid-run.
	long := []string{"run", "mesh", "--set", "k=4", "--set", "measure_periods=40"}

	It("is forced by --progress for a run: the live count mid-run, then the end; stdout and trace unchanged", func() {
		// One trace and one VCD path for both runs: stdout names them.
		tr, vcd := filepath.Join(dir, "t.trace"), filepath.Join(dir, "w.vcd")
		code, plainOut, plainErr := nisim(append(long, "--trace", tr, "--vcd", vcd)...)
		Expect(code).To(Equal(0))
		// The test's stderr is a buffer, not a terminal: no progress.
		Expect(plainErr).To(BeEmpty())
		a, err := os.ReadFile(tr)
		Expect(err).NotTo(HaveOccurred())
		va, err := os.ReadFile(vcd)
		Expect(err).NotTo(HaveOccurred())

		code, progOut, progErr := nisim(append(long, "--trace", tr, "--vcd", vcd, "--progress")...)
		Expect(code).To(Equal(0))
		// The first hook call, after event env.ProgressEvery (no time
		// limit: a count).
		Expect(progErr).To(ContainSubstring(fmt.Sprintf(", %d events", env.ProgressEvery)))
		// The end as the report gives it (the VCD's events included).
		m := regexp.MustCompile(`simulated (\S+) \((\d+) events\)`).FindStringSubmatch(progOut)
		Expect(m).To(HaveLen(3))
		Expect(progErr).To(ContainSubstring("simulated " + m[1] + ", " + m[2] + " events"))
		Expect(cmp.Diff(plainOut, progOut)).To(BeEmpty())
		b, err := os.ReadFile(tr)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(string(a), string(b))).To(BeEmpty())
		vb, err := os.ReadFile(vcd)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(string(va), string(vb))).To(BeEmpty())
	})

	It("measures a run against its --time-limit", func() {
		code, _, errOut := nisim(append(long, "--time-limit", "50us", "--progress")...)
		Expect(code).To(Equal(0))
		Expect(errOut).To(MatchRegexp(fmt.Sprintf(`simulated \S+ of 50us, %d events`, env.ProgressEvery)))
		Expect(errOut).To(ContainSubstring("100%"))
	})

	It("counts the measurements of a run that reports phases (lci-throughput), changing no output", func() {
		// Two sizes: two streams, the second in an env of its own that
		// the event hook cannot see; the phases count them.
		tr := filepath.Join(dir, "t.trace")
		args := []string{"run", "lci-throughput", "--set", "sizes=[64,256]", "--set", "messages=8", "--trace", tr}
		code, plainOut, plainErr := nisim(args...)
		Expect(code).To(Equal(0))
		Expect(plainErr).To(BeEmpty())
		a, err := os.ReadFile(tr)
		Expect(err).NotTo(HaveOccurred())
		code, progOut, progErr := nisim(append(args, "--progress")...)
		Expect(code).To(Equal(0))
		Expect(progErr).To(ContainSubstring("0 of 2 measurements, now 64 bytes; simulated "))
		Expect(progErr).To(ContainSubstring("1 of 2 measurements, now 256 bytes; simulated "))
		Expect(progErr).To(MatchRegexp(`2 of 2 measurements; simulated [^\r\n]* 100%`))
		Expect(cmp.Diff(plainOut, progOut)).To(BeEmpty())
		b, err := os.ReadFile(tr)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(string(a), string(b))).To(BeEmpty())
	})

	It("is off with --progress=false", func() {
		code, _, errOut := nisim(append(long, "--progress=false")...)
		Expect(code).To(Equal(0))
		Expect(errOut).To(BeEmpty())
	})

	It("counts the points of a sweep with --progress and leaves the table unchanged", func() {
		args := []string{"sweep", "mesh", "--set", "k=3", "--set", "sample_period=300", "--values", "0.05,0.2"}
		code, plainOut, plainErr := nisim(args...)
		Expect(code).To(Equal(0))
		Expect(plainErr).To(BeEmpty())
		code, progOut, progErr := nisim(append(args, "--progress")...)
		Expect(code).To(Equal(0))
		Expect(progErr).To(ContainSubstring("sweep: 1 of 2 points"))
		Expect(progErr).To(ContainSubstring("sweep: 2 of 2 points 100%"))
		Expect(cmp.Diff(plainOut, progOut)).To(BeEmpty())
	})
})
