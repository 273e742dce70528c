// Package vtest is the glue between nisim models and Ginkgo specs: per-spec
// seeds with a reproduce command, simulation contexts whose waveform
// history is dumped (and linked from the report) when a spec fails, golden
// trace checks, and a scriptable clocked agent for driving components in
// unit tests.
package vtest

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
	"github.com/onsi/ginkgo/v2"
)

// HistoryChanges is how many value changes a test Env keeps for its
// failure waveform.
const HistoryChanges = 1 << 18

// FailureWindow is how far back a failure waveform reaches, in cycles of
// the clock given to NewEnv.
const FailureWindow = 2000

// Seed derives the current spec's seed from the suite seed
// (GinkgoRandomSeed, set with -ginkgo.seed) and the spec's full text, and
// prints a one-line command that reproduces the spec with it.
func Seed() uint64 {
	rep := ginkgo.CurrentSpecReport()
	name := rep.FullText()
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", ginkgo.GinkgoRandomSeed(), name)
	seed := h.Sum64()
	pkg := "./" + packageDir(rep.FileName())
	ginkgo.GinkgoWriter.Printf("seed %d; reproduce: go test %s -ginkgo.seed=%d -ginkgo.focus=%q\n",
		seed, pkg, ginkgo.GinkgoRandomSeed(), "^"+regexp.QuoteMeta(name)+"$")
	return seed
}

// packageDir returns the spec file's directory relative to the module root.
func packageDir(file string) string {
	dir := filepath.Dir(file)
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			rel, err := filepath.Rel(d, dir)
			if err == nil {
				return filepath.ToSlash(rel)
			}
		}
	}
	return "."
}

// Options tune NewEnv.
type Options struct {
	// Clock sets the failure window's unit (FailureWindow cycles of it);
	// default 100 MHz.
	Clock clock.Clock
	// Trace keeps a transaction trace in memory.
	Trace bool
	// TimeLimit bounds the run.
	TimeLimit clock.Time
	// Seed overrides the derived seed (0: use Seed()).
	Seed uint64
	// Mutations switch on test-only faults (env.Options.Mutations); an
	// undeclared name or a negative parameter fails the spec.
	Mutations map[string]int
}

// NewEnv returns a simulation context for the current spec: its seed comes
// from Seed, every signal is recorded in a bounded in-memory history, and if
// the spec fails the last FailureWindow cycles are written as a VCD under
// out/failures/ (relative to the module root) and linked from the spec
// report with AddReportEntry.
func NewEnv(o Options) *env.Env {
	if !o.Clock.Valid() {
		o.Clock = clock.MHz(100)
	}
	seed := o.Seed
	if seed == 0 {
		seed = Seed()
	}
	reg := waves.NewRegistry(waves.Options{History: HistoryChanges})
	var rec *trace.Recorder
	if o.Trace {
		rec = trace.NewRecorder()
	}
	if err := env.CheckMutations(o.Mutations); err != nil {
		ginkgo.Fail(err.Error())
	}
	e := env.New(env.Options{Waves: reg, Trace: rec, Seed: seed, TimeLimit: o.TimeLimit, Mutations: o.Mutations})
	window := o.Clock.TimeOf(FailureWindow)
	ginkgo.DeferCleanup(func() {
		if !ginkgo.CurrentSpecReport().Failed() {
			return
		}
		path, err := dumpFailure(reg, window)
		if err != nil {
			ginkgo.AddReportEntry("waveform", "could not write failure waveform: "+err.Error())
			return
		}
		ginkgo.AddReportEntry("waveform", path)
		ginkgo.GinkgoWriter.Printf("failure waveform: %s\n", path)
	})
	return e
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func dumpFailure(reg *waves.Registry, window clock.Time) (string, error) {
	rep := ginkgo.CurrentSpecReport()
	name := strings.Trim(unsafeChars.ReplaceAllString(rep.FullText(), "_"), "_")
	if len(name) > 120 {
		name = name[:120]
	}
	root := moduleRoot(filepath.Dir(rep.FileName()))
	dir := filepath.Join(root, "out", "failures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".vcd")
	f, err := atomicfile.Create(path)
	if err != nil {
		return "", err
	}
	_, _, err = reg.WriteHistory(f, window, waves.VCDOptions{Comment: "failure of: " + rep.FullText()})
	if err != nil {
		f.Abort()
		return "", err
	}
	return path, f.Commit()
}

func moduleRoot(dir string) string {
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}

// Golden compares the records with the golden file at path (relative to the
// spec's package directory, usually "testdata/NAME.trace"). Under
// `make golden` it rewrites the file instead.
func Golden(path string, recs []trace.Record, comments ...string) error {
	return trace.CheckGolden(path, recs, comments...)
}

// WriteWaves writes everything the env's waveform history holds as a VCD
// file at path (for specs that check waveforms with waves/vcd) and returns
// the path.
func WriteWaves(e *env.Env, path string) string {
	f, err := atomicfile.Create(path)
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	if _, _, err := e.Waves.WriteHistory(f, clock.Never, waves.VCDOptions{}); err != nil {
		f.Abort()
		ginkgo.Fail(err.Error())
	}
	if err := f.Commit(); err != nil {
		ginkgo.Fail(err.Error())
	}
	return path
}
