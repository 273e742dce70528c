package shrimpscen_test

import (
	"runtime"
	"strings"

	"github.com/google/go-cmp/cmp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/shrimpscen"
)

var _ = Describe("waveform names", func() {
	for _, s := range shrimpscen.Scenarios() {
		It(s.Name+" declares every signal under the naming convention", func() {
			Expect(scenario.CheckWaveNames(s, GinkgoT().TempDir())).To(Succeed())
		})
	}
})

var _ = Describe("shrimp-report", func() {
	It("prints every row with the paper's value, and its checks, at a reduced size", func() {
		p := shrimpscen.ReportDefaults()
		Expect(scenario.Configure(p, "", []string{"rounds=3", "stream_pages=2", "fifo_senders=3", "duq_count=2", "radix_keys=128", "radix=16",
			"svm_ocean=34", "svm_ocean_iters=1", "svm_radix_keys=1024", "svm_barnes_bodies=64", "svm_barnes_steps=1"})).To(Succeed())
		rep, err := shrimpscen.RunReport(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		var metrics []string
		for _, r := range rep.Rows {
			metrics = append(metrics, r.Metric)
		}
		all := strings.Join(metrics, "\n")
		for _, want := range []string{"fitted: AU one-word latency", "fitted: DU latency", "UDMA send overhead",
			"outgoing FIFO lower bound", "block streaming", "DU queue 2 vs 0", "AU breakdown: total", "DU breakdown: total",
			"FIFO 1 KB vs 32 KB, Radix-VMMC AU", "combining on vs off, Radix-VMMC AU", "Table 3 messages, Radix-VMMC",
			"Radix-VMMC AU vs DU speedup", "DU queue 2 vs 0, Radix-VMMC DU async", "send_syscall, Radix-VMMC DU",
			"recv_interrupt=message, Radix-VMMC DU",
			"Figure 4 Barnes-SVM speedup", "AURC over HLRC, Ocean-SVM", "HLRC-AU over HLRC, Radix-SVM", "Barnes-SVM aurc breakdown",
			"Table 2 Ocean-SVM", "Table 3 Radix-SVM", "Table 4 Barnes-SVM",
			"Ocean-NX AU / DU time", "Table 2 Ocean-NX", "Table 3 Ocean-NX", "Table 4 Ocean-NX"} {
			Expect(all).To(ContainSubstring(want))
		}
		for _, r := range rep.Rows {
			Expect(r.Model).NotTo(ContainSubstring("not measured"), r.Metric)
		}
		calibrated := 0
		for _, r := range rep.Rows {
			if r.Calibrated {
				calibrated++
			}
		}
		Expect(calibrated).To(Equal(2), "the two calibration rows, nothing else")
		checks := map[string]bool{}
		for _, c := range rep.Checks {
			checks[c.Name] = c.OK
		}
		Expect(checks).To(HaveKeyWithValue("AU latency within 10% (calibration)", true))
		Expect(checks).To(HaveKeyWithValue("AU breakdown adds up to the traced latency", true))
		Expect(checks).To(HaveKeyWithValue("DU breakdown adds up to the traced latency", true))
		Expect(checks).To(HaveKeyWithValue("no FIFO overflow with the threshold on", true))
	})

	DescribeTable("refuses a bad parameter, naming its key",
		func(set, key string) {
			p := shrimpscen.ReportDefaults()
			err := scenario.Configure(p, "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(key)))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		},
		Entry("one round", "rounds=1", "rounds"),
		Entry("rounds beyond the bound", "rounds=99999999999", "rounds"),
		Entry("a 6-byte store", "store_bytes=6", "store_bytes"),
		Entry("a DU latency beyond a page", "du_latency_bytes=5000", "du_latency_bytes"),
		Entry("no stream", "stream_pages=0", "stream_pages"),
		Entry("16 senders", "fifo_senders=16", "fifo_senders"),
		Entry("negative stores", "fifo_stores=-1", "fifo_stores"),
		Entry("a float count", "duq_count=1e30", "duq_count"),
		Entry("a word for a number", "duq_size=abc", "duq_size"),
		Entry("a radix not a power of two", "radix=12", "radix"),
		Entry("a radix beyond the matrix", "radix=512", "radix"),
	)
})

var _ = Describe("svm-app", func() {
	It("runs a program bit-exact on 4 nodes and measures only the metrics it declares (a sweep's --y is checked before the runs)", func() {
		p := shrimpscen.AppDefaults()
		Expect(scenario.Configure(p, "", []string{"app=radix", "radix_keys=1024", "nodes=4", "protocol=hlrc"})).To(Succeed())
		rep, err := shrimpscen.RunApp(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		declared := map[string]bool{}
		for _, d := range p.Metrics() {
			declared[d.Name] = true
		}
		for _, m := range rep.Metrics {
			Expect(declared).To(HaveKey(m.Name))
		}
		Expect(rep.Metrics).To(HaveLen(len(p.Metrics())))
	})
})

var _ = Describe("shrimp-traffic", func() {
	It("delivers every packet of a random load on a small cluster, every checker on", func() {
		p := shrimpscen.TrafficDefaults()
		Expect(scenario.Configure(p, "", []string{"nodes=4", "ops=30", "combine=on", "du_queue=2", "async_send=true"})).To(Succeed())
		rep, err := shrimpscen.RunTraffic(env.New(env.Options{Seed: 3}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		var tx float64
		for _, m := range rep.Metrics {
			if m.Name == "transactions" {
				tx = m.Value
			}
		}
		// 4 nodes x 30 operations, two in three AU runs of 1..4 stores
		// (2.5 on average) and one in three a send: about 4 x 30 x (0.67
		// x 2.5 + 0.33) = 240.
		Expect(tx).To(BeNumerically("~", 240, 80))
	})

	DescribeTable("refuses a bad parameter, naming its key",
		func(set, key string) {
			p := shrimpscen.TrafficDefaults()
			err := scenario.Configure(p, "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(key)))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		},
		Entry("one node", "nodes=1", "nodes"),
		Entry("seventeen nodes", "nodes=17", "nodes"),
		Entry("ops beyond the memory budget", "ops=99999999999", "ops"),
		Entry("a 6-byte store", "store_bytes=6", "store_bytes"),
		Entry("a torn DU size", "min_du=6", "min_du"),
		Entry("a size range upside down", "min_du=1024", "max_du"),
		Entry("a DU beyond a page", "max_du=8192", "max_du"),
		Entry("an unknown combining mode", "combine=maybe", "combine"),
		Entry("a sub-page not a power of two", "subpage=100", "subpage"),
		Entry("a threshold above the FIFO", "fifo_threshold=65536", "fifo_threshold"),
		Entry("a threshold at the FIFO's size", "fifo_threshold=32768", "fifo_threshold"),
		Entry("a FIFO beyond the bound", "fifo_bytes=99999999", "fifo_bytes"),
		Entry("a deep queue", "du_queue=9", "du_queue"),
		Entry("an unknown interrupt mode", "recv_interrupt=always", "recv_interrupt"),
		Entry("a word for a bool", "au=maybe", "au"),
	)
})

var _ = Describe("shrimp-report's Radix-VMMC runs", func() {
	It("give the same results on one goroutine as on several (each run a simulation of its own)", func() {
		p := shrimpscen.ReportDefaults()
		Expect(scenario.Configure(p, "", []string{"radix_keys=32", "radix=4"})).To(Succeed())
		prev := runtime.GOMAXPROCS(1)
		defer runtime.GOMAXPROCS(prev)
		one := shrimpscen.RadixBatch(1, p)
		runtime.GOMAXPROCS(4)
		four := shrimpscen.RadixBatch(1, p)
		Expect(cmp.Diff(one, four)).To(BeEmpty())
		Expect(one).To(HaveLen(8 * 6))
		for i := 5; i < len(one); i += 6 {
			Expect(one[i]).To(BeNil(), "run %d's error", i/6)
		}
	})
})
