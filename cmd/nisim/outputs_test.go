package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Safe outputs (issue 12 section 1): every output is checked before the run
// starts; a refused one is one line, exit status 2, and nothing is written.
var _ = Describe("outputs", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	names := func() []string {
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		var n []string
		for _, e := range entries {
			n = append(n, e.Name())
		}
		return n
	}
	refused := func(msg string, args ...string) {
		GinkgoHelper()
		code, out, errOut := nisim(args...)
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty(), "the run must not start")
		Expect(strings.Count(errOut, "\n")).To(Equal(1))
		// The command's own prefix (nisim: run:) is not this spec's business.
		Expect(errOut).To(HavePrefix("nisim: "))
		Expect(errOut).To(HaveSuffix(": " + msg + "\n"))
	}

	It("refuses a device or other non-regular file and leaves it as it was", func() {
		// A FIFO stands for the device: the old code renamed a regular file
		// over /dev/full when run as root.
		fifo := filepath.Join(dir, "pipe.vcd")
		Expect(syscall.Mkfifo(fifo, 0o644)).To(Succeed())
		refused("--vcd "+fifo+": not a regular file", "run", "demo", "--vcd", fifo)
		fi, err := os.Lstat(fifo)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode() & fs.ModeNamedPipe).NotTo(BeZero())
		refused("--trace /dev/null: not a regular file", "run", "demo", "--trace", "/dev/null")
		fi, err = os.Lstat("/dev/null")
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode() & fs.ModeCharDevice).NotTo(BeZero())
		Expect(names()).To(ConsistOf("pipe.vcd"))
	})

	It("refuses a symbolic link and leaves the link and its target alone", func() {
		target, link := filepath.Join(dir, "target.vcd"), filepath.Join(dir, "link.vcd")
		Expect(os.WriteFile(target, []byte("keep"), 0o644)).To(Succeed())
		Expect(os.Symlink(target, link)).To(Succeed())
		refused("--vcd "+link+": is a symbolic link", "run", "demo", "--vcd", link)
		refused("--vcd /dev/stdout: is a symbolic link (for standard output, use -)", "run", "demo", "--vcd", "/dev/stdout")
		fi, err := os.Lstat(link)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode() & fs.ModeSymlink).NotTo(BeZero())
		Expect(os.ReadFile(target)).To(Equal([]byte("keep")))
	})

	It("refuses the same file named twice: by path, through .., and by a hard link", func() {
		x := filepath.Join(dir, "x")
		refused("--trace "+x+": the same file as --vcd "+x, "run", "demo", "--vcd", x, "--trace", x)
		y := filepath.Join(dir, "sub", "..", "x")
		refused("--trace "+y+": the same file as --vcd "+x, "run", "demo", "--vcd", x, "--trace", y)
		Expect(names()).To(BeEmpty())
		Expect(os.WriteFile(x, []byte("old"), 0o644)).To(Succeed())
		h := filepath.Join(dir, "h")
		Expect(os.Link(x, h)).To(Succeed())
		refused("--trace "+h+": the same file as --vcd "+x, "run", "demo", "--vcd", x, "--trace", h)
		Expect(os.ReadFile(x)).To(Equal([]byte("old")))
	})

	It("refuses an output that is an input", func() {
		cfg := filepath.Join(dir, "c.toml")
		text := []byte("[workload]\ndma_bytes = 1024\n")
		Expect(os.WriteFile(cfg, text, 0o644)).To(Succeed())
		refused("--vcd "+cfg+": the same file as the input --config "+cfg, "run", "demo", "--config", cfg, "--vcd", cfg)
		Expect(os.ReadFile(cfg)).To(Equal(text))
		csv := filepath.Join(dir, "s.csv")
		refused("--svg "+cfg+": the same file as the input --config "+cfg, "sweep", "mesh", "--config", cfg, "--csv", csv, "--svg", cfg)
		Expect(names()).To(ConsistOf("c.toml"))
	})

	It("refuses a directory before running, without a temporary name", func() {
		// The old code ran the whole simulation and then failed renaming
		// .d.tmpNNN onto the directory.
		d := filepath.Join(dir, "d")
		Expect(os.Mkdir(d, 0o755)).To(Succeed())
		refused("--vcd "+d+": is a directory", "run", "demo", "--vcd", d)
		refused("--csv "+d+": is a directory", "sweep", "mesh", "--csv", d)
		Expect(names()).To(ConsistOf("d"))
		Expect(os.ReadDir(d)).To(BeEmpty())
	})

	It("refuses - for two outputs and writes one - to standard output, the report to standard error", func() {
		refused("--trace -: standard output is already the output of --vcd", "run", "demo", "--vcd", "-", "--trace", "-")
		code, out, errOut := nisim("run", "demo", "--vcd", "-", "--trace", filepath.Join(dir, "t.trace"))
		Expect(code).To(Equal(0))
		Expect(out).To(HavePrefix("$version"))
		Expect(out).To(ContainSubstring("$enddefinitions $end"))
		Expect(out).NotTo(ContainSubstring("PASS"))
		Expect(errOut).To(ContainSubstring("PASS  bytes arrived"))
		Expect(names()).To(ConsistOf("t.trace"))
	})

	It("creates missing parent directories", func() {
		vcdPath, tracePath := filepath.Join(dir, "out", "sub", "a.vcd"), filepath.Join(dir, "out", "a.trace")
		code, _, errOut := nisim("run", "demo", "--vcd", vcdPath, "--trace", tracePath)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(vcdPath).To(BeARegularFile())
		Expect(tracePath).To(BeARegularFile())
	})

	It("creates files with mode 0666 less the umask", func() {
		mask := syscall.Umask(0o022)
		syscall.Umask(mask)
		p := filepath.Join(dir, "m.trace")
		code, _, _ := nisim("run", "demo", "--trace", p)
		Expect(code).To(Equal(0))
		fi, err := os.Stat(p)
		Expect(err).NotTo(HaveOccurred())
		// 0666 &^ 022 = 0644 with the usual umask; the old code gave 0600.
		Expect(fi.Mode().Perm()).To(Equal(fs.FileMode(0o666 &^ mask)))
	})

	Describe("interrupted by a signal", Ordered, func() {
		var bin string
		BeforeAll(func() {
			bin = filepath.Join(GinkgoT().TempDir(), "nisim")
			out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
		})

		DescribeTable("removes the temporary files and exits 128+signal",
			func(sig syscall.Signal, want int) {
				// lci-report runs for tens of seconds: the signal lands
				// mid-run, once both temporary outputs exist.
				cmd := exec.Command(bin, "run", "lci-report", "--vcd", filepath.Join(dir, "x.vcd"), "--trace", filepath.Join(dir, "x.trace"))
				Expect(cmd.Start()).To(Succeed())
				defer cmd.Process.Kill()
				Eventually(names).WithTimeout(30 * time.Second).WithPolling(20 * time.Millisecond).Should(HaveLen(2))
				Expect(cmd.Process.Signal(sig)).To(Succeed())
				err := cmd.Wait()
				var ee *exec.ExitError
				Expect(err).To(BeAssignableToTypeOf(ee))
				Expect(cmd.ProcessState.ExitCode()).To(Equal(want))
				Expect(names()).To(BeEmpty())
			},
			Entry("SIGINT", syscall.SIGINT, 130),
			Entry("SIGTERM", syscall.SIGTERM, 143),
		)
	})
})
