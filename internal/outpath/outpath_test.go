package outpath_test

import (
	"os"
	"path/filepath"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/internal/outpath"
)

var _ = Describe("Check", func() {
	var dir string
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "in.toml"), nil, 0o644)).To(Succeed())
		Expect(os.Link(filepath.Join(dir, "in.toml"), filepath.Join(dir, "hard"))).To(Succeed())
		Expect(os.Mkdir(filepath.Join(dir, "d"), 0o755)).To(Succeed())
		Expect(os.Symlink("in.toml", filepath.Join(dir, "sym"))).To(Succeed())
		Expect(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644)).To(Succeed())
	})
	p := func(flag, name string) outpath.Path {
		if name == "" || name == "-" || filepath.IsAbs(name) {
			return outpath.Path{Flag: flag, Path: name}
		}
		return outpath.Path{Flag: flag, Path: dir + "/" + name} // not Join: it would clean the ..
	}

	DescribeTable("refuses, naming the flag and the path, and creates nothing",
		func(outs []string, in string, msg string) {
			var os_ []outpath.Path
			for i, o := range outs {
				os_ = append(os_, p([]string{"--a", "--b"}[i], o))
			}
			err := outpath.Check(os_, []outpath.Path{p("--config", in)})
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(MatchRegexp(msg))
			Expect(filepath.Join(dir, "new")).NotTo(BeADirectory())
		},
		Entry("a device", []string{"/dev/null"}, "", `^--a /dev/null: not a regular file$`),
		Entry("a FIFO", []string{"fifo"}, "", `^--a .*/fifo: not a regular file$`),
		Entry("a directory", []string{"d"}, "", `^--a .*/d: is a directory$`),
		Entry("a symbolic link", []string{"sym"}, "", `^--a .*/sym: is a symbolic link$`),
		Entry("the same path twice", []string{"new/x", "new/../new/x"}, "", `^--b .*/new/\.\./new/x: the same file as --a .*/new/x$`),
		Entry("a hard link of another output", []string{"in.toml", "hard"}, "", `^--b .*/hard: the same file as --a .*/in.toml$`),
		Entry("an input", []string{"new/x", "in.toml"}, "in.toml", `^--b .*/in.toml: the same file as the input --config .*/in.toml$`),
		Entry("a hard link of an input", []string{"hard"}, "in.toml", `^--a .*/hard: the same file as the input --config`),
		Entry("an output through an input's symbolic link", []string{"in.toml"}, "sym", `^--a .*/in.toml: the same file as the input --config .*/sym$`),
		Entry("standard output twice", []string{"-", "-"}, "", `^--b -: standard output is already the output of --a$`),
		Entry("a parent that is a file", []string{"in.toml/x"}, "", `^--a .*/in.toml/x: not a directory$`),
	)

	It("accepts new files, existing regular ones and one -, and creates missing parents", func() {
		Expect(outpath.Check([]outpath.Path{p("--a", "new/sub/x.vcd"), p("--b", "-"), p("--c", ""), p("--d", "in.toml")}, nil)).To(Succeed())
		Expect(filepath.Join(dir, "new", "sub")).To(BeADirectory())
	})
})
