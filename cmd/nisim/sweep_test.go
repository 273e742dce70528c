package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/verify/jobs"

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

	// A small, fast grid of the mesh: 2 loads x 2 sizes x 2 seeds.
	grid := []string{"sweep", "mesh", "--set", "sample_period=300", "--grid", "injection_rate=0.05,0.2", "--grid", "k=3,4", "--seeds", "2"}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		return string(b)
	}
	// setenv sets (or, with "", unsets) a variable for the spec.
	setenv := func(k, v string) {
		old, had := os.LookupEnv(k)
		DeferCleanup(func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		})
		if v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}

	It("writes byte-identical CSV and SVG on 1 and 4 workers, one column per grid key, a series per other key", func() {
		var csvs, svgs []string
		for _, j := range []string{"1", "4"} {
			c, s := filepath.Join(dir, "j"+j+".csv"), filepath.Join(dir, "j"+j+".svg")
			code, out, errOut := nisim(append(grid, "-j", j, "--csv", c, "--svg", s)...)
			Expect(errOut).To(BeEmpty())
			Expect(code).To(Equal(0))
			Expect(out).To(MatchRegexp(`(?m)^0\.2\s+4\s+\d+\.\d+ ± \d+\.\d+`))
			csvs, svgs = append(csvs, read(c)), append(svgs, read(s))
		}
		Expect(cmp.Diff(csvs[0], csvs[1])).To(BeEmpty())
		Expect(cmp.Diff(svgs[0], svgs[1])).To(BeEmpty())
		Expect(csvs[0]).To(HavePrefix("injection_rate (flits/node/cycle),k,seed,"))
		// 2 x 2 points x 2 seeds, the last key fastest, seeds together.
		rows := strings.Split(strings.TrimSpace(csvs[0]), "\n")
		Expect(rows).To(HaveLen(9))
		Expect(rows[3]).To(HavePrefix("0.05,4,1,"))
		Expect(rows[5]).To(HavePrefix("0.2,3,1,"))
		Expect(svgs[0]).To(ContainSubstring(">k=3<"))
		Expect(svgs[0]).To(ContainSubstring(">k=4<"))
	})

	It("plans, runs each job and merges into the same CSV and SVG as the local sweep, byte for byte", func() {
		c, s := filepath.Join(dir, "local.csv"), filepath.Join(dir, "local.svg")
		code, local, _ := nisim(append(grid, "--csv", c, "--svg", s)...)
		Expect(code).To(Equal(0))
		plan := filepath.Join(dir, "plan")
		code, out, errOut := nisim(append(grid, "--plan", plan)...)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("mesh: 8 jobs planned in " + plan))
		code, out, _ = nisim("job", plan, "--info")
		Expect(code).To(Equal(0))
		Expect(out).To(Equal("sweep 8\n"))
		for i := range 8 {
			// Job 0 from --index, 1 to 3 as a Slurm array task, the
			// rest as a Kubernetes Indexed Job.
			setenv("SLURM_ARRAY_TASK_ID", "")
			setenv("JOB_COMPLETION_INDEX", "")
			args := []string{"job", plan}
			switch {
			case i == 0:
				args = append(args, "--index", "0")
			case i < 4:
				setenv("SLURM_ARRAY_TASK_ID", fmt.Sprint(i))
			default:
				setenv("JOB_COMPLETION_INDEX", fmt.Sprint(i))
			}
			code, out, errOut := nisim(args...)
			Expect(errOut).To(BeEmpty())
			Expect(code).To(Equal(0))
			Expect(out).To(Equal(fmt.Sprintf("job %d of 8: ok: %s\n", i, filepath.Join(plan, "results", fmt.Sprintf("%06d.json", i)))))
		}
		code, merged, errOut := nisim("sweep", "merge", plan)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		// The same table; only the output paths differ.
		cut := func(s string) string { return s[:strings.Index(s, "csv: ")] }
		Expect(cmp.Diff(cut(local), cut(merged))).To(BeEmpty())
		Expect(cmp.Diff(read(c), read(filepath.Join(plan, "sweep.csv")))).To(BeEmpty())
		Expect(cmp.Diff(read(s), read(filepath.Join(plan, "sweep.svg")))).To(BeEmpty())
	})

	It("runs a failing job into a result that says why (exit 1), and merge names missing and failed jobs (exit 1)", func() {
		plan := filepath.Join(dir, "plan")
		code, _, _ := nisim("sweep", "mesh", "--set", "k=3", "--set", "sample_period=300", "--values", "0.05,0.2,0.3",
			"--mutate", "link.leak=50", "--plan", plan)
		Expect(code).To(Equal(0))
		code, out, errOut := nisim("job", plan, "--index", "1")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("job 1 of 3: failed: "))
		Expect(errOut).To(HavePrefix("nisim: job: job 1 failed: checkers: "))
		Expect(read(filepath.Join(plan, "results", "000001.json"))).To(ContainSubstring(`"status": "failed"`))
		code, out, errOut = nisim("sweep", "merge", plan, "--csv", filepath.Join(dir, "m.csv"))
		Expect(code).To(Equal(1))
		Expect(errOut).To(ContainSubstring("nisim: sweep merge: job 1 failed (injection_rate=0.2, seed 1): checkers: "))
		Expect(errOut).To(HaveSuffix("nisim: sweep merge: 2 of 3 jobs missing: 0,2\n"))
		Expect(out).To(ContainSubstring("missing"))
		rows := strings.Split(strings.TrimSpace(read(filepath.Join(dir, "m.csv"))), "\n")
		Expect(rows).To(HaveLen(4))
		Expect(rows[1]).To(HaveSuffix(",missing"))
		Expect(rows[2]).To(ContainSubstring(`,"failed: checkers: `))
		Expect(filepath.Join(plan, "sweep.svg")).To(BeAnExistingFile())
	})

	It("refuses bad input before running anything, in one line (exit 2)", func() {
		plan := filepath.Join(dir, "plan")
		code, _, _ := nisim("sweep", "mesh", "--set", "k=3", "--values", "0.05,0.2", "--plan", plan)
		Expect(code).To(Equal(0))
		manifest := filepath.Join(plan, jobs.ManifestName)
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"sweep", "mesh", "--grid", "k=3", "--values", "0.1"}, "--grid and --key/--values: give one form"},
			{[]string{"sweep", "mesh", "--grid", "nosuch=1,2"}, "nisim: sweep: --grid nosuch=1: "},
			{[]string{"sweep", "mesh", "--grid", "k="}, `--grid k: empty value in ""`},
			{[]string{"sweep", "mesh", "--grid", "k=1"}, "--grid k=1: invalid parameter k"},
			{[]string{"sweep", "mesh", "--values", "0.1", "--plan", plan}, "--plan " + plan + ": holds a plan whose jobs have run"},
			{[]string{"sweep", "mesh", "--values", "0.1", "--plan", dir}, "--plan " + dir + ": not empty (holds plan)"},
			{[]string{"sweep", "mesh", "--values", "0.1", "--plan", filepath.Join(dir, "p2"), "--csv", "x.csv"}, "--plan with --csv or --svg"},
			{[]string{"sweep", "mesh", "-j", "0"}, "-j: 0 must be at least 1"},
			{[]string{"job", plan, "--index", "2"}, "index 2 out of range: the plan has 2 jobs (0 to 1)"},
			{[]string{"job", plan, "--index", "x"}, `--index "x": want a job index`},
			{[]string{"job", plan}, "no --index and neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set"},
			{[]string{"job", dir, "--index", "0"}, filepath.Join(dir, jobs.ManifestName) + ": no such file or directory"},
		} {
			setenv("SLURM_ARRAY_TASK_ID", "")
			setenv("JOB_COMPLETION_INDEX", "")
			if tc.want == "--plan "+plan+": holds a plan whose jobs have run" {
				code, _, _ := nisim("job", plan, "--index", "0")
				Expect(code).To(Equal(0))
			}
			code, out, errOut := nisim(tc.args...)
			Expect(code).To(Equal(2), strings.Join(tc.args, " "))
			Expect(out).To(BeEmpty(), strings.Join(tc.args, " "))
			Expect(errOut).To(ContainSubstring(tc.want), strings.Join(tc.args, " "))
			Expect(strings.Count(errOut, "\n")).To(Equal(1), errOut)
		}
		// A result file that is not its entry's, a corrupt and a newer
		// manifest.
		Expect(os.Rename(filepath.Join(plan, "results", "000000.json"), filepath.Join(plan, "results", "000001.json"))).To(Succeed())
		code, _, errOut := nisim("sweep", "merge", plan)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("000001.json: does not match its manifest entry: index 0, want 1"))
		text := read(manifest)
		Expect(os.WriteFile(manifest, []byte(text[:len(text)/2]), 0o644)).To(Succeed())
		for _, args := range [][]string{{"job", plan, "--index", "0"}, {"sweep", "merge", plan}, {"job", plan, "--info"}} {
			code, _, errOut = nisim(args...)
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(manifest + ": "))
		}
		Expect(os.WriteFile(manifest, []byte(strings.Replace(text, `"version": 1`, `"version": 9`, 1)), 0o644)).To(Succeed())
		code, _, errOut = nisim("sweep", "merge", plan)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("manifest version 9 is newer than this nisim's 1"))
	})
})
