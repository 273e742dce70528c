package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The README's exit-status list, one case per status, with the one line
// each error prints: exactly one "nisim:" prefix, then the path of the
// subcommand, and hints that name the real command path.
var _ = Describe("exit status and error lines", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	// in writes a file under dir and returns its path.
	in := func(name, text string) string {
		p := filepath.Join(dir, name)
		Expect(os.WriteFile(p, []byte(text), 0o644)).To(Succeed())
		return p
	}
	// D stands for the spec's temporary directory in args and want.
	expand := func(s string) string { return strings.ReplaceAll(s, "D/", dir+"/") }

	DescribeTable("as the README lists them",
		func(code int, stderr string, args ...string) {
			in("empty.trace", "")
			in("a.trace", "10 1 X k a=1\n")
			in("b.trace", "10 1 X k a=2\n")
			in("bad.vcd", "$timescale 1ps $end\n$enddefinitions $end\n#10\n#5\n")
			Expect(os.Mkdir(filepath.Join(dir, "sub"), 0o755)).To(Succeed())
			for i := range args {
				args[i] = expand(args[i])
			}
			got, _, errOut := nisim(args...)
			Expect(got).To(Equal(code))
			if stderr == "" {
				Expect(errOut).To(BeEmpty())
				return
			}
			Expect(errOut).To(Equal(expand(stderr) + "\n"))
			Expect(errOut).NotTo(ContainSubstring("nisim: nisim"))
		},
		Entry("0: success", 0, "", "list"),
		// It simulated 0 ps and passed every check.
		Entry("1: a run that measured nothing (atm-star cut off by --time-limit)", 1,
			"nisim: run: atm-star: a check failed", "run", "atm-star", "--time-limit", "1us"),
		// It exited 2, as if the input were bad.
		Entry("1: a run stopped before it could report (lci-logp cut off by --time-limit)", 1,
			"nisim: run: lci-logp: ping-pong: 1 of 60 round trips started (run with --time-limit 1us)",
			"run", "lci-logp", "--time-limit", "1us"),
		Entry("1: traces differ", 1, "nisim: trace diff: traces differ at record 1", "trace", "diff", "D/a.trace", "D/b.trace"),
		Entry("1: a VCD with errors", 1, "nisim: vcd lint: D/bad.vcd: 1 error(s), first at line 4: time #5 goes backwards (previous #10)",
			"vcd", "lint", "D/bad.vcd"),
		// It exited 1 and printed the path twice.
		Entry("2: vcd lint of a directory", 2, "nisim: vcd lint: D/sub: is a directory, not a VCD file", "vcd", "lint", "D/sub"),
		Entry("2: vcd lint of a missing file, its path once", 2, "nisim: vcd lint: D/none.vcd: no such file or directory",
			"vcd", "lint", "D/none.vcd"),
		// Two empty files were "identical".
		Entry("2: trace diff of an empty file", 2,
			`nisim: trace diff: D/empty.trace: not a trace: no record and no "# nisim trace v1" header`,
			"trace", "diff", "D/empty.trace", "D/empty.trace"),
		// The hint said 'nisim nisim --help'.
		Entry("2: an unknown flag of the root", 2, "nisim: unknown flag: --frob (see 'nisim --help')", "--frob"),
		// The hint said 'nisim lint --help'.
		Entry("2: an unknown flag of a nested command", 2, "nisim: vcd lint: unknown flag: --frob (see 'nisim vcd lint --help')",
			"vcd", "lint", "--frob"),
		// The line said "nisim: nisim run: want ...".
		Entry("2: a missing argument", 2, "nisim: run: want a scenario name, got 0 argument(s) (see 'nisim run --help')", "run"),
		Entry("2: a missing argument of a nested command", 2,
			"nisim: trace diff: want two trace files, got 1 argument(s) (see 'nisim trace diff --help')", "trace", "diff", "D/a.trace"),
		// Both printed the group's help and exited 0.
		Entry("2: a command group without its subcommand", 2,
			"nisim: vcd: want a subcommand (lint) (see 'nisim vcd --help')", "vcd"),
		Entry("2: a misspelt subcommand", 2,
			`nisim: trace: unknown subcommand "dif", want diff (see 'nisim trace --help')`, "trace", "dif", "D/a.trace"),
		// It printed "Unknown help topic" and exited 0.
		Entry("2: help about a command that does not exist", 2,
			`nisim: help: unknown help topic "vcd frob" (see 'nisim --help')`, "help", "vcd", "frob"),
		Entry("2: an unknown command", 2, `nisim: unknown command "nosuch" for "nisim"`, "nosuch"),
	)

	It("prints FAIL, not PASS, for a run that measured nothing", func() {
		code, out, _ := nisim("run", "atm-star", "--time-limit", "1us")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("FAIL  measured: nothing measured: 0 cells delivered in the measurement window"))
		Expect(out).To(ContainSubstring("FAIL  no loss or duplication: nothing measured: 0 cells sent"))
	})

	It("warns on stderr, one line each, about a --select that matches nothing and a --from after the end", func() {
		vcdPath := filepath.Join(dir, "d.vcd")
		code, _, errOut := nisim("run", "demo", "--vcd", vcdPath, "--select", "Nope*", "--select", "*")
		Expect(code).To(Equal(0))
		Expect(errOut).To(Equal("nisim: run: warning: --select \"Nope*\" matched no signal: the VCD holds nothing from it\n"))
		code, _, errOut = nisim("run", "demo", "--vcd", vcdPath, "--select", "Nope")
		Expect(code).To(Equal(0))
		Expect(errOut).To(Equal("nisim: run: warning: --select \"Nope\" matched no signal: the VCD holds nothing from it\n"))
		code, _, errOut = nisim("run", "demo", "--vcd", vcdPath, "--from", "1s", "--to", "2s")
		Expect(code).To(Equal(0))
		Expect(errOut).To(MatchRegexp(`^nisim: run: warning: --from 1s is after the end of the run \(\S+\): the VCD holds no value change\n$`))
		code, _, errOut = nisim("run", "demo", "--vcd", vcdPath, "--from", "1ns")
		Expect(code).To(Equal(0))
		Expect(errOut).To(BeEmpty())
	})

	It("prints help about a command", func() {
		code, out, errOut := nisim("help", "vcd", "lint")
		Expect(code).To(Equal(0))
		Expect(errOut).To(BeEmpty())
		Expect(out).To(ContainSubstring("nisim vcd lint FILE"))
	})

	It("prints its version from the build info", func() {
		code, out, _ := nisim("--version")
		Expect(code).To(Equal(0))
		Expect(out).To(MatchRegexp(`^nisim \S.*, go1\.\d+\S*\n$`))
		info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/nisim/nisim", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "e657930"}, {Key: "vcs.modified", Value: "true"}}}
		Expect(versionOf(info, true)).To(Equal("(devel), revision e657930 (modified), go1.26.0"))
		info.Main.Version, info.Settings = "v1.2.3", nil
		Expect(versionOf(info, true)).To(Equal("v1.2.3, go1.26.0"))
		Expect(versionOf(nil, false)).To(Equal("unknown (no build information)"))
	})
})
