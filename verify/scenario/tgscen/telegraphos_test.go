package tgscen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/tgscen"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// lookup returns the named scenario.
func lookup(name string) *scenario.Scenario {
	GinkgoHelper()
	s, err := scenario.Catalog(tgscen.Scenarios()).Lookup(name)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// outputs are the files and report of one run.
type outputs struct {
	rep        *scenario.Report
	vcd, trace []byte
	text       string
}

// execute runs the named scenario through scenario.Exec, as `nisim run`
// does, with the given --set overrides, a waveform and a trace, and
// expects it to finish without setup errors or checker violations.
func execute(name string, seed uint64, sets ...string) outputs {
	GinkgoHelper()
	s := lookup(name)
	p := s.Defaults()
	Expect(scenario.Configure(p, "", sets)).To(Succeed())
	dir := GinkgoT().TempDir()
	vcdPath, tracePath := filepath.Join(dir, "run.vcd"), filepath.Join(dir, "run.trace")
	rep, _, violations, err := scenario.Exec(s, p, scenario.Options{Seed: seed, VCD: vcdPath, Trace: tracePath, Comment: name})
	Expect(err).NotTo(HaveOccurred())
	Expect(violations).NotTo(HaveOccurred())
	var o outputs
	o.rep = rep
	o.vcd, err = os.ReadFile(vcdPath)
	Expect(err).NotTo(HaveOccurred())
	o.trace, err = os.ReadFile(tracePath)
	Expect(err).NotTo(HaveOccurred())
	var b bytes.Buffer
	rep.Print(&b)
	o.text = b.String()
	return o
}

// metric returns a report's metric.
func metric(r *scenario.Report, name string) float64 {
	GinkgoHelper()
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value
		}
	}
	Fail("no metric " + name)
	return 0
}

// failed lists the failed checks.
func failed(r *scenario.Report) []scenario.CheckResult {
	var f []scenario.CheckResult
	for _, c := range r.Checks {
		if !c.OK {
			f = append(f, c)
		}
	}
	return f
}

var _ = Describe("Telegraphos scenarios", func() {
	It("registers one scenario per experiment", func() {
		var names []string
		for _, s := range tgscen.Scenarios() {
			names = append(names, s.Name)
			Expect(s.Summary).NotTo(BeEmpty())
			Expect(s.Defaults().Validate()).To(Succeed(), s.Name)
		}
		Expect(names).To(Equal([]string{"telegraphos-calibration", "telegraphos-fetchinc", "telegraphos-prodcons",
			"telegraphos-alarms", "telegraphos-multicast", "telegraphos-inconsistency", "telegraphos-coherence",
			"telegraphos-protection"}))
	})

	DescribeTable("run their defaults with every check passing, the checkers clean and a waveform that lints",
		func(name string, expect func(r *scenario.Report)) {
			o := execute(name, 1)
			Expect(failed(o.rep)).To(BeEmpty())
			Expect(o.rep.Checks).NotTo(BeEmpty())
			Expect(o.rep.Rows).NotTo(BeEmpty())
			Expect(o.rep.Result.Events).To(BeNumerically(">", 0))
			Expect(vcd.Lint(bytes.NewReader(o.vcd))).To(BeEmpty())
			Expect(o.trace).NotTo(BeEmpty())
			expect(o.rep)
		},
		Entry("calibration: write and read within 10% of section 3.2, 100 writes under 50 µs", "telegraphos-calibration", func(r *scenario.Report) {
			Expect(metric(r, "write_error_pct")).To(BeNumerically("~", 0, 10))
			Expect(metric(r, "read_error_pct")).To(BeNumerically("~", 0, 10))
			Expect(metric(r, "stream100_us")).To(BeNumerically("<", 50))
			Expect(r.Checks).To(ContainElements(HaveField("Name", "remote write within 10%"), HaveField("Name", "remote read within 10%"),
				HaveField("Name", "stream of 100 writes under 50 µs")))
			// The simulated time covers both loops of 10000 operations:
			// at least 10000 x (0.63 + 6.48) µs (the paper's figures less
			// 10%).
			Expect(r.Result.End).To(BeNumerically(">", 10000*7110*clock.Nanosecond))
		}),
		Entry("fetchinc: 8 x 25 values, each once", "telegraphos-fetchinc", func(r *scenario.Report) {
			Expect(metric(r, "results")).To(Equal(200.0))
			Expect(metric(r, "missing") + metric(r, "duplicates")).To(BeZero())
			// A remote operation crosses the switch twice, as a remote
			// read does; the local one does not.
			Expect(metric(r, "remote_latency_us")).To(BeNumerically(">", metric(r, "local_latency_us")+4))
		}),
		Entry("prodcons: stale without the barrier on some of seeds 1..12, never with it", "telegraphos-prodcons", func(r *scenario.Report) {
			Expect(metric(r, "stale_without_barrier")).To(BeNumerically(">", 0))
			Expect(metric(r, "stale_with_barrier")).To(BeZero())
			// The barrier waits for the data write's acknowledgement: a
			// round trip through the switch, microseconds.
			Expect(metric(r, "gap_with_barrier_us")).To(BeNumerically(">", metric(r, "gap_without_barrier_us")+4))
		}),
		Entry("alarms: the 4 counters that run out", "telegraphos-alarms", func(r *scenario.Report) {
			// Read counters 3, 8, 0, 5 with 5 reads: pages 3 and 6 (8 > 5,
			// 0 never counts). Write counters 2, 1, 4, 0 with 2 writes:
			// pages 3 and 4.
			Expect(metric(r, "alarms")).To(Equal(4.0))
			Expect(metric(r, "expected_alarms")).To(Equal(4.0))
		}),
		Entry("multicast: 50 writes to 3 copies", "telegraphos-multicast", func(r *scenario.Report) {
			Expect(metric(r, "reflects")).To(Equal(150.0))
			// Each write is 3 reflected packets of 3 words on node 0's
			// link, a byte per 25 MHz cycle: at least 3 x 0.48 µs.
			Expect(metric(r, "per_write_us")).To(BeNumerically(">=", 1.44))
		}),
		Entry("inconsistency: reproduced without the remedies, impossible with", "telegraphos-inconsistency", func(r *scenario.Report) {
			Expect(metric(r, "violations_without")).To(BeNumerically(">", 0))
			Expect(metric(r, "violations_with")).To(BeZero())
		}),
		Entry("coherence: no violations with the counter cache", "telegraphos-coherence", func(r *scenario.Report) {
			Expect(metric(r, "violations")).To(BeZero())
			Expect(metric(r, "ignored")).To(BeNumerically(">", 0))
			Expect(metric(r, "counter_peak")).To(BeNumerically("<=", 32))
		}),
		Entry("protection: 6 refusals and 4 faults", "telegraphos-protection", func(r *scenario.Report) {
			// Wrong key: the shadow store and the launch (2); foreign
			// context: the shadow store (1); out of range: 3.
			Expect(metric(r, "refused")).To(Equal(6.0))
			Expect(metric(r, "faults")).To(Equal(4.0))
		}),
	)

	DescribeTable("are deterministic: the same seed gives byte-identical waveforms, traces and reports",
		func(name string, sets ...string) {
			a := execute(name, 7, sets...)
			b := execute(name, 7, sets...)
			Expect(a.vcd).To(Equal(b.vcd))
			Expect(a.trace).To(Equal(b.trace))
			Expect(a.text).To(Equal(b.text))
		},
		Entry("calibration", "telegraphos-calibration", "ops=200"),
		Entry("fetchinc", "telegraphos-fetchinc", "nodes=4", "ops=5"),
		Entry("prodcons", "telegraphos-prodcons", "seeds=3"),
		Entry("alarms", "telegraphos-alarms"),
		Entry("multicast", "telegraphos-multicast", "writes=10"),
		Entry("inconsistency", "telegraphos-inconsistency", "reads=10"),
		Entry("coherence", "telegraphos-coherence", "nodes=4", "writes=20"),
		Entry("protection", "telegraphos-protection"),
	)

	DescribeTable("run Telegraphos II and other parameters with every check passing",
		func(name string, sets ...string) {
			o := execute(name, 3, sets...)
			Expect(failed(o.rep)).To(BeEmpty())
		},
		Entry("calibration, Telegraphos II (no paper checks: the paper measured Telegraphos I)", "telegraphos-calibration", "version=2", "ops=500"),
		Entry("calibration, a short loop (only the stream is held to the paper)", "telegraphos-calibration", "ops=500"),
		Entry("fetchinc, 16 Telegraphos II nodes", "telegraphos-fetchinc", "version=2", "nodes=16", "ops=4"),
		Entry("fetchinc, a single node (local operations only)", "telegraphos-fetchinc", "nodes=1", "ops=10"),
		Entry("prodcons, Telegraphos II (stale without the barrier on 6 of seeds 3..26)", "telegraphos-prodcons", "version=2", "seeds=24"),
		Entry("alarms, Telegraphos II, counters of 1", "telegraphos-alarms", "version=2", "read_counters=[1, 2]", "write_counters=[1, 0]", "reads=1", "writes=1"),
		Entry("multicast, 16 Telegraphos II nodes", "telegraphos-multicast", "version=2", "nodes=16", "writes=5"),
		Entry("inconsistency, Telegraphos II", "telegraphos-inconsistency", "version=2", "counter_cache=2"),
		Entry("coherence, a 2-entry counter cache", "telegraphos-coherence", "nodes=6", "words=64", "counter_cache=2"),
		Entry("protection, 15 nodes", "telegraphos-protection", "nodes=15", "wrong_key=0"),
	)

	It("stalls the writers when the counter cache is full, and stays coherent", func() {
		o := execute("telegraphos-coherence", 1, "nodes=6", "words=64", "counter_cache=2")
		Expect(metric(o.rep, "violations")).To(BeZero())
		Expect(metric(o.rep, "counter_peak")).To(Equal(2.0))
		Expect(metric(o.rep, "stall_cycles")).To(BeNumerically(">", 0))
	})

	It("shows violations without the counter cache, the checkers still clean", func() {
		// The coherence checker is not vacuous: the same writes without
		// the counter cache break the guarantee (hib/telegraphos
		// coherence_test.go); the scenario's check on them is
		// informational, and the packet checkers are clean (execute).
		o := execute("telegraphos-coherence", 1, "counter_cache=0")
		Expect(metric(o.rep, "violations")).To(BeNumerically(">", 0))
		Expect(failed(o.rep)).To(BeEmpty())
		Expect(o.text).To(MatchRegexp(`coherence violations +[1-9][0-9]* +possible`))
	})

	It("fails the completed check, not the packet checkers, when cut off by a time limit", func() {
		s := lookup("telegraphos-fetchinc")
		rep, _, violations, err := scenario.Exec(s, s.Defaults(), scenario.Options{Seed: 1, TimeLimit: 50 * clock.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		Expect(violations).NotTo(HaveOccurred())
		Expect(rep.Result.Stopped).To(BeTrue())
		Expect(failed(rep)).To(ContainElement(HaveField("Name", "completed")))
	})

	// 16 nodes x 100000 = 1.6M queued operations, above 2^30 / 1342 =
	// 800105 (issue 12: every count bounded by what a run can hold).
	DescribeTable("refuse more queued operations than a run can hold",
		func(name string, sets ...string) {
			err := scenario.Configure(lookup(name).Defaults(), "", sets)
			// 16 nodes x 1342 B = 21472 B per unit; 2^30 / 21472 = 50006.
			Expect(err).To(MatchError(ContainSubstring("above the limit 50006 (got 100000; 21472 B per ")))
			Expect(err).To(MatchError(ContainSubstring("(16 queued operation(s) of 1342 B: one on each node) x 50006 = 1023 MiB, the per-run memory budget)")))
		},
		Entry("fetchinc", "telegraphos-fetchinc", "nodes=16", "ops=100000"),
		Entry("coherence", "telegraphos-coherence", "nodes=16", "writes=100000"),
	)

	// Issue 12: these bounds were plain constants (4096 entries, 1000
	// seeds, 10000 reads and writes, 10^6 cycles, 16 pages); each is now
	// derived from scenario.MemoryBudget or a limit of the model, and the
	// error says which.
	DescribeTable("derive their bounds from the memory budget or the model",
		func(name, set, want string) {
			err := scenario.Configure(lookup(name).Defaults(), "", []string{set})
			Expect(err).To(MatchError("invalid parameter " + want))
		},
		// 8 HIBs x 64 B = 512 B per entry; 2^30 / 512 = 2097152.
		Entry("coherence: counter cache", "telegraphos-coherence", "counter_cache=2097153",
			"counter_cache: above the limit 2097152 (got 2097153; 512 B per entry of 64 B in each of 8 HIBs x 2097152 = 1024 MiB, the per-run memory budget)"),
		// Figure 2's 4 HIBs: 256 B per entry; 2^30 / 256 = 4194304.
		Entry("inconsistency: counter cache", "telegraphos-inconsistency", "counter_cache=4194305",
			"counter_cache: above the limit 4194304 (got 4194305; 256 B per entry of 64 B in each of 4 HIBs x 4194304 = 1024 MiB, the per-run memory budget)"),
		// 1 s of the 150 MHz Alpha: 1.5 x 10^8 cycles.
		Entry("coherence: gap", "telegraphos-coherence", "gap=150000001",
			"gap: above the limit 150000000 (got 150000001; 1s of 150MHz cycles)"),
		// 8 KB / 4 B = 2048 words.
		Entry("coherence: words", "telegraphos-coherence", "words=2049",
			"words: above the limit 2048 (got 2049; the words of an 8 KB page)"),
		// 2^30 / 1342 = 800105.
		Entry("inconsistency: reads", "telegraphos-inconsistency", "reads=800106",
			"reads: above the limit 800105 (got 800106; 1342 B per read (1 queued operation(s) of 1342 B: the read itself) x 800105 = 1023 MiB, the per-run memory budget)"),
		// 100000 / 2 runs per seed.
		Entry("prodcons: seeds", "telegraphos-prodcons", "seeds=50001",
			"seeds: above the limit 50000 (got 50001; 2 runs per seed x 50000 = scenario.MaxRuns, the runs one invocation may start)"),
		// 4 x 1342 = 5368 B; 2^30 / 5368 = 200026.
		Entry("prodcons: background", "telegraphos-prodcons", "background=200027",
			"background: above the limit 200026 (got 200027; 5368 B per background write (4 queued operation(s) of 1342 B: a compute and a store on each of nodes 4 and 5) x 200026 = 1023 MiB, the per-run memory budget)"),
		// 3 copies x 1342 = 4026 B; 2^30 / 4026 = 266701.
		Entry("multicast: writes", "telegraphos-multicast", "writes=266702",
			"writes: above the limit 266701 (got 266702; 4026 B per write (3 queued operation(s) of 1342 B: reflected to each of nodes - 1 copies) x 266701 = 1023 MiB, the per-run memory budget)"),
		// (4 + 1) pages x (2048 + 2048) accesses = 20480 operations fit;
		// 2048 - 3 - 1 = 2044 pages.
		Entry("alarms: pages", "telegraphos-alarms", "read_counters=["+strings.Repeat("1,", 2044)+"1]",
			"read_counters: above the limit 2044 (got 2045; node 1's 2048 pages from page 3, less one)"),
	)

	DescribeTable("reject impossible parameters, naming the key",
		func(name, set, key string) {
			err := scenario.Configure(lookup(name).Defaults(), "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(key)))
		},
		Entry("calibration: unknown key", "telegraphos-calibration", "nodes=3", "unknown key nodes"),
		Entry("calibration: no operations", "telegraphos-calibration", "ops=0", "ops:"),
		Entry("calibration: negative operations", "telegraphos-calibration", "ops=-5", "ops:"),
		Entry("calibration: version 3", "telegraphos-calibration", "version=3", "version:"),
		Entry("calibration: wrong type", "telegraphos-calibration", "ops=many", "key ops: want an integer"),
		Entry("fetchinc: no nodes", "telegraphos-fetchinc", "nodes=0", "nodes:"),
		Entry("fetchinc: 17 nodes", "telegraphos-fetchinc", "nodes=17", "nodes:"),
		Entry("fetchinc: negative ops", "telegraphos-fetchinc", "ops=-1", "ops:"),
		Entry("fetchinc: version 0", "telegraphos-fetchinc", "version=0", "version:"),
		Entry("prodcons: no seeds", "telegraphos-prodcons", "seeds=0", "seeds:"),
		Entry("prodcons: negative background", "telegraphos-prodcons", "background=-1", "background:"),
		Entry("prodcons: version 3", "telegraphos-prodcons", "version=3", "version:"),
		Entry("alarms: no pages", "telegraphos-alarms", "read_counters=[]", "read_counters:"),
		Entry("alarms: lists of different lengths", "telegraphos-alarms", "write_counters=[1]", "write_counters:"),
		Entry("alarms: a negative counter", "telegraphos-alarms", "read_counters=[1, -2, 3, 4]", "read_counters:"),
		Entry("alarms: a counter beyond 16 bits", "telegraphos-alarms", "write_counters=[1, 2, 65536, 4]", "write_counters:"),
		Entry("alarms: negative reads", "telegraphos-alarms", "reads=-1", "reads:"),
		Entry("alarms: more writes than a page's words", "telegraphos-alarms", "writes=2049", "writes:"),
		Entry("alarms: version 3", "telegraphos-alarms", "version=3", "version:"),
		Entry("multicast: one node, no copy", "telegraphos-multicast", "nodes=1", "nodes:"),
		Entry("multicast: 17 nodes", "telegraphos-multicast", "nodes=17", "nodes:"),
		Entry("multicast: no writes", "telegraphos-multicast", "writes=0", "writes:"),
		Entry("inconsistency: no reads", "telegraphos-inconsistency", "reads=0", "reads:"),
		Entry("inconsistency: no counter cache for the protected runs", "telegraphos-inconsistency", "counter_cache=0", "counter_cache:"),
		Entry("inconsistency: version 3", "telegraphos-inconsistency", "version=3", "version:"),
		// Issue 12: queued operations bounded by scenario.MemoryBudget at
		// 1342 B each (2 GB / 1.6M operations measured), two per op:
		// 2^30 / 2684 = 400052.
		Entry("calibration: more operations than a run can queue", "telegraphos-calibration", "ops=500000",
			"ops: above the limit 400052 (got 500000; 2684 B per op (2 queued operation(s) of 1342 B: a remote write and a remote read) x 400052 = 1023 MiB, the per-run memory budget)"),
		Entry("coherence: no nodes", "telegraphos-coherence", "nodes=0", "nodes:"),
		Entry("coherence: 17 nodes", "telegraphos-coherence", "nodes=17", "nodes:"),
		Entry("coherence: no words", "telegraphos-coherence", "words=0", "words:"),
		Entry("coherence: negative writes", "telegraphos-coherence", "writes=-3", "writes:"),
		Entry("coherence: no gap", "telegraphos-coherence", "gap=0", "gap:"),
		Entry("coherence: negative counter cache", "telegraphos-coherence", "counter_cache=-1", "counter_cache:"),
		Entry("coherence: version 3", "telegraphos-coherence", "version=3", "version:"),
		Entry("protection: no nodes", "telegraphos-protection", "nodes=0", "nodes:"),
		Entry("protection: 16 nodes leave no node outside", "telegraphos-protection", "nodes=16", "nodes:"),
		Entry("protection: the real key", "telegraphos-protection", "wrong_key=256", "wrong_key:"),
		Entry("protection: a key beyond 16 bits", "telegraphos-protection", "wrong_key=70000", "wrong_key:"),
		Entry("protection: no version key (Telegraphos II only)", "telegraphos-protection", "version=1", "unknown key version"),
	)
})
