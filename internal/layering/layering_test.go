package layering_test

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nisim/nisim/internal/layering"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// lines prints violations one per line for a failure message.
func lines[T interface{ String() string }](vs []T) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("\n  " + v.String())
	}
	return b.String()
}

var _ = Describe("the layering of the real tree", Ordered, func() {
	var (
		root  string
		graph layering.Graph
		names map[string]string
	)
	BeforeAll(func() {
		wd, err := os.Getwd()
		Expect(err).NotTo(HaveOccurred())
		root, err = layering.Root(wd)
		Expect(err).NotTo(HaveOccurred())
		graph, names, err = layering.Load(root)
		Expect(err).NotTo(HaveOccurred())
		Expect(graph.Module).To(Equal("github.com/nisim/nisim"))
	})

	It("has no forbidden import", func() {
		v := layering.Check(layering.Rules, graph)
		Expect(v).To(BeEmpty(), "forbidden imports:%s", lines(v))
	})

	It("has no file importing two packages of one name, or one of its own package's name", func() {
		files, err := layering.ParseFiles(root)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(files)).To(BeNumerically(">", 100))
		v := layering.CheckNames(files, names)
		Expect(v).To(BeEmpty(), "files:%s", lines(v))
	})

	It("applies every rule to some package of the tree, with a name and a reason", func() {
		for _, r := range layering.Rules {
			Expect(r.Name).NotTo(BeEmpty())
			Expect(r.Reason).NotTo(BeEmpty(), r.Name)
			n := 0
			for _, p := range graph.Packages {
				if r.Applies(p.Path) {
					n++
				}
			}
			Expect(n).To(BeNumerically(">", 0), "%s applies to no package", r.Name)
		}
	})

	It("fails on one deliberately added forbidden edge, rtl/fifo -> host/lcilib, naming the rule and its reason", func() {
		v := layering.Check(layering.Rules, graph.With("rtl/fifo", "host/lcilib"))
		Expect(v).To(HaveLen(2), lines(v))
		Expect(v[0].String()).To(Equal("rtl/fifo -> host/lcilib: rtl/ imports no system package " +
			"(shared blocks are reused by every board; one that knew a board, host, program, network or testbench could not be, and would hide system behaviour in a library)"))
		Expect(v[1].From).To(Equal("rtl/fifo"))
		Expect(v[1].Rule.Name).To(Equal("hardware never imports software"))
	})

	It("fails on a board importing a firmware program, but lets it import the framework and host hardware", func() {
		v := layering.Check(layering.Rules, graph.With("lanai", "firmware/lci"))
		Expect(v).To(HaveLen(2), lines(v))
		Expect(v[0].Rule.Name).To(Equal("boards import no host stack, firmware program, scenario or testbench"))
		Expect(layering.Check(layering.Rules, graph.With("lanai", "firmware").With("hib/telegraphos", "host/cpu"))).To(BeEmpty())
	})

	It("fails on a firmware program importing a board", func() {
		v := layering.Check(layering.Rules, graph.With("firmware/remotewrite", "lanai"))
		Expect(v).To(HaveLen(1), lines(v))
		Expect(v[0].String()).To(HavePrefix("firmware/remotewrite -> lanai: firmware programs import only "))
	})

	It("fails on a stack importing a testbench, and on a board's test importing one", func() {
		v := layering.Check(layering.Rules, graph.With("host/lcilib", "verify/testbench/lcitb"))
		Expect(v).To(HaveLen(1), lines(v))
		Expect(v[0].Rule.Name).To(HavePrefix("only testbenches"))
		v = layering.Check(layering.Rules, graph.WithTest("hib/telegraphos", "verify/testbench/tgtb"))
		Expect(v).To(HaveLen(1), lines(v))
		Expect(v[0].String()).To(HavePrefix("hib/telegraphos -> verify/testbench/tgtb (tests): only testbenches"))
	})

	It("fails on a scenario importing a network builder, in its code or its tests, but lets it import traffic and statistics", func() {
		v := layering.Check(layering.Rules, graph.With("verify/scenario/noc", "switch/wormhole"))
		Expect(v).To(HaveLen(1), lines(v))
		Expect(v[0].String()).To(Equal("verify/scenario/noc -> switch/wormhole: scenarios import no network package but the traffic and statistics libraries " +
			"(a scenario gets its network built and run by a testbench (verify/testbench/noctb) and keeps parameters, report and verdicts; " +
			"switch/traffic (patterns, injection, trace files) and switch/stats (latency statistics) build no hardware)"))
		v = layering.Check(layering.Rules, graph.WithTest("verify/scenario/tgscen", "switch/fabric"))
		Expect(v).To(HaveLen(1), lines(v))
		Expect(v[0].String()).To(HavePrefix("verify/scenario/tgscen -> switch/fabric (tests): scenarios import no network package"))
		Expect(layering.Check(layering.Rules, graph.With("verify/scenario/lciscen", "switch/traffic").
			With("verify/scenario/lciscen", "switch/stats").With("verify/testbench/lcitb", "switch/topology"))).To(BeEmpty())
	})

	It("fails on a verification library importing the environment, and on waves importing a block", func() {
		v := layering.Check(layering.Rules, graph.With("verify/check", "rtl/env").With("waves", "rtl/fifo"))
		Expect(v).To(HaveLen(2), lines(v))
		Expect(v[0].String()).To(HavePrefix("verify/check -> rtl/env: verification libraries import nothing above rtl/clock and waves"))
		Expect(v[1].String()).To(HavePrefix("waves -> rtl/fifo: waves imports no hardware"))
	})

	It("fails on a synthetic file importing two packages of one name, and one importing its own name", func() {
		dir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(dir, "a"), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "a", "two.go"), []byte(`package a

import (
	"crypto/rand"
	mrand "math/rand"
	lib "github.com/nisim/nisim/host/lcilib"
	_ "embed"
)
`), 0o644)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "a", "own.go"), []byte(`package lci

import "github.com/nisim/nisim/firmware/lci"
`), 0o644)).To(Succeed())
		files, err := layering.ParseFiles(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(lines(layering.CheckNames(files, names))).To(Equal(lines([]layering.NameViolation{
			{File: "a/own.go", Name: "lci", Paths: []string{"github.com/nisim/nisim/firmware/lci"}, Own: true},
			{File: "a/two.go", Name: "rand", Paths: []string{"crypto/rand", "math/rand"}},
		})))
		Expect(layering.CheckNames(files, names)[1].String()).To(Equal("a/two.go: imports crypto/rand and math/rand, all named rand"))
	})
})

var _ = Describe("Match", func() {
	DescribeTable("matches a package, a subtree or everything",
		func(pattern, path string, want bool) { Expect(layering.Match(pattern, path)).To(Equal(want)) },
		Entry("exact", "firmware", "firmware", true),
		Entry("exact is not a prefix", "firmware", "firmware/lci", false),
		Entry("subtree includes its root", "rtl/...", "rtl", true),
		Entry("subtree includes what is below", "rtl/...", "rtl/fifo", true),
		Entry("subtree is by element, not by string", "host/cpu/...", "host/cpus", false),
		Entry("everything", "...", "cmd/nisim", true),
	)
})
