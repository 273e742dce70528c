package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The --config file is read with a limit (issue 12 section 1): a
// multi-GB file or /dev/zero was read whole before the first key was
// looked at, and a FIFO without a writer blocked the command in open.
var _ = Describe("reading the --config file", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })
	defaults := func() *params { p := &params{}; p.Fifo.Depth = 4; return p }
	oneLine := func(err error) string {
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).NotTo(ContainSubstring("\n"))
		return err.Error()
	}

	It("refuses a file one byte over MaxConfigBytes, though it is valid TOML", func() {
		// A comment line of MaxConfigBytes bytes and its newline: the
		// old reader took it (a comment is valid TOML) after reading all
		// of it.
		path := filepath.Join(dir, "big.toml")
		Expect(os.WriteFile(path, []byte("#"+strings.Repeat("x", scenario.MaxConfigBytes-1)+"\n"), 0o644)).To(Succeed())
		Expect(oneLine(scenario.Configure(defaults(), path, nil))).To(Equal(
			"config " + path + ": larger than the limit of 1048576 bytes (1048577 bytes; a configuration is a few KiB)"))
	})

	It("takes a file of exactly MaxConfigBytes", func() {
		path := filepath.Join(dir, "full.toml")
		Expect(os.WriteFile(path, []byte("#"+strings.Repeat("x", scenario.MaxConfigBytes-2)+"\n"), 0o644)).To(Succeed())
		Expect(scenario.Configure(defaults(), path, nil)).To(Succeed())
	})

	It("refuses a sparse 8 GiB file from its size without reading it", func() {
		path := filepath.Join(dir, "huge.toml")
		f, err := os.Create(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Truncate(8 << 30)).To(Succeed())
		Expect(f.Close()).To(Succeed())
		Expect(oneLine(scenario.Configure(defaults(), path, nil))).To(Equal(
			"config " + path + ": larger than the limit of 1048576 bytes (8589934592 bytes; a configuration is a few KiB)"))
	})

	It("refuses /dev/zero as a device, before opening it", func() {
		Expect(oneLine(scenario.Configure(defaults(), "/dev/zero", nil))).To(Equal(
			"config /dev/zero: not a regular file (a character device); give - to read standard input"))
	})

	It("refuses a directory", func() {
		Expect(oneLine(scenario.Configure(defaults(), dir, nil))).To(Equal("config " + dir + ": is a directory"))
	})

	It("refuses a FIFO without a writer instead of blocking in open", func() {
		path := filepath.Join(dir, "fifo")
		Expect(syscall.Mkfifo(path, 0o600)).To(Succeed())
		Expect(oneLine(scenario.Configure(defaults(), path, nil))).To(Equal(
			"config " + path + ": not a regular file (a pipe); give - to read standard input"))
	})

	It("refuses a missing file with one line", func() {
		path := filepath.Join(dir, "nosuch.toml")
		Expect(oneLine(scenario.Configure(defaults(), path, nil))).To(Equal("config " + path + ": no such file or directory"))
	})

	Context("given - (standard input)", func() {
		var saved *os.File
		BeforeEach(func() { saved = os.Stdin })
		AfterEach(func() { os.Stdin = saved })

		It("reads a pipe to its end", func() {
			r, w, err := os.Pipe()
			Expect(err).NotTo(HaveOccurred())
			defer r.Close()
			_, err = w.WriteString("name = \"piped\"\n[fifo]\ndepth = 7\n")
			Expect(err).NotTo(HaveOccurred())
			Expect(w.Close()).To(Succeed())
			os.Stdin = r
			p := defaults()
			Expect(scenario.Configure(p, "-", nil)).To(Succeed())
			Expect(p.Name).To(Equal("piped"))
			Expect(p.Fifo.Depth).To(Equal(7))
		})

		It("stops an endless input (/dev/zero) at the limit", func() {
			z, err := os.Open("/dev/zero")
			Expect(err).NotTo(HaveOccurred())
			defer z.Close()
			os.Stdin = z
			Expect(oneLine(scenario.Configure(defaults(), "-", nil))).To(Equal(
				"config standard input: larger than the limit of 1048576 bytes (more; a configuration is a few KiB)"))
		})
	})
})
