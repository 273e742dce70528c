package noc_test

import (
	"fmt"
	"strconv"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/noc"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("star scenarios", func() {
	DescribeTable("run their defaults with the checkers on and drain",
		func(s *scenario.Scenario, unit string) {
			rep, err := s.Run(env.New(env.Options{Seed: 1}), s.Defaults())
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Failed()).To(BeFalse())
			Expect(metric(rep, "saturated")).To(BeZero())
			// A moderate load is accepted in full (within the noise of a
			// Bernoulli source over the window).
			Expect(metric(rep, "accepted")).To(BeNumerically("~", metric(rep, "offered"), 0.01))
			Expect(metric(rep, "latency")).To(BeNumerically(">=", metric(rep, "network_latency_min")))
			Expect(metric(rep, "latency_p99")).To(BeNumerically(">=", metric(rep, "latency_p50")))
			Expect(metric(rep, "link_utilisation_max")).To(BeNumerically(">", 0.2))
			Expect(rep.Rows).NotTo(BeEmpty())
			Expect(rep.Metrics[0].Unit).To(Equal(unit))
		},
		Entry("atm-star", noc.ATMScenario(), "link rate"),
		Entry("mchub-star", noc.MCScenario(), "link bandwidth"),
	)

	It("registers both with the other networks", func() {
		var names []string
		for _, s := range noc.Scenarios() {
			names = append(names, s.Name)
		}
		Expect(names).To(ContainElements("atm-star", "mchub-star"))
	})

	It("adds about 7 µs per cell at the ATM switch (AT-P9) and loses nothing at a moderate load", func() {
		rep, err := noc.RunATM(env.New(env.Options{Seed: 2}), noc.ATMDefaults())
		Expect(err).NotTo(HaveOccurred())
		// The smallest network latency is 176 link cycles (switch/atm's
		// endpoint spec); a direct cable takes 53: 123 cycles = 7.03 µs.
		Expect(metric(rep, "network_latency_min")).To(Equal(176.0))
		Expect(metric(rep, "switch_latency_us")).To(BeNumerically("~", 7.03, 0.005))
		Expect(metric(rep, "dropped")).To(BeZero())
		Expect(metric(rep, "sent")).To(Equal(metric(rep, "delivered")))
	})

	It("drops cells at the overloaded output of the hotspot run and accounts for every one", func() {
		p := noc.ATMDefaults()
		Expect(scenario.Configure(p, "", []string{"traffic=hotspot"})).To(Succeed())
		rep, err := noc.RunATM(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		// Hosts 1..3 send everything to host 0 at 0.4 of the link rate:
		// 1.2 times its output's rate; the 256-cell queue fills after
		// about 256 x 53 / 0.2 = 68000 cycles and loses a fifth of what
		// arrives from then on.
		dropped := metric(rep, "dropped")
		Expect(dropped).To(BeNumerically(">", 50))
		Expect(metric(rep, "sent")).To(Equal(metric(rep, "delivered") + dropped))
		Expect(metric(rep, "dropped_port0")).To(Equal(dropped))
		for _, port := range []string{"1", "2", "3"} {
			Expect(metric(rep, "dropped_port"+port)).To(BeZero())
		}
		Expect(metric(rep, "measured_dropped")).To(BeNumerically(">", 0))
		Expect(metric(rep, "accepted")).To(BeNumerically("<", metric(rep, "offered")))
	})

	It("shows every Memory Channel receiver the writes to a page in one order", func() {
		rec := trace.NewRecorder()
		p := noc.MCDefaults()
		// Loop-back on: the writers are receivers too.
		Expect(scenario.Configure(p, "", []string{"loopback=true", "measure_periods=5"})).To(Succeed())
		rep, err := noc.RunMC(env.New(env.Options{Seed: 4, Trace: rec}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		Expect(metric(rep, "ordered_deliveries")).To(Equal(metric(rep, "deliveries")))
		// Independently of the checkers, from the trace: at every
		// receiver the hub's order numbers of one page's writes rise, and
		// an order number is the same write at every receiver. With
		// broadcast and loop-back every receiver gets every write, so the
		// sequences are equal.
		type write struct{ src, seq string }
		byOrder := map[uint64]write{}
		perPage := map[string][]uint64{} // "receiver/page" -> order numbers
		n := 0
		for _, r := range rec.Records() {
			if r.Kind != "mc.recv" {
				continue
			}
			n++
			src, _ := r.Get("src")
			seq, _ := r.Get("seq")
			page, _ := r.Get("page")
			o, _ := r.Get("order")
			order, err := strconv.ParseUint(o, 10, 64)
			Expect(err).NotTo(HaveOccurred())
			if w, ok := byOrder[order]; ok {
				Expect(w).To(Equal(write{src, seq}), "order %d", order)
			}
			byOrder[order] = write{src, seq}
			k := r.Path + "/" + page
			if prev := perPage[k]; len(prev) > 0 {
				Expect(order).To(BeNumerically(">", prev[len(prev)-1]), "%s", k)
			}
			perPage[k] = append(perPage[k], order)
		}
		Expect(float64(n)).To(Equal(metric(rep, "deliveries")))
		for pg := range p.Pages {
			first := perPage[fmt.Sprintf("MC.Adapter0/%d", pg)]
			Expect(first).NotTo(BeEmpty())
			for a := 1; a < p.Ports; a++ {
				Expect(perPage[fmt.Sprintf("MC.Adapter%d/%d", a, pg)]).To(Equal(first), "adapter %d page %d", a, pg)
			}
		}
	})

	DescribeTable("limits the Memory Channel's throughput by its one hub bus, whatever the mapping",
		func(mapping string, receivers float64) {
			p := noc.MCDefaults()
			Expect(scenario.Configure(p, "", []string{"mapping=" + mapping, "write_size=64", "injection_rate=0.9",
				"warmup_periods=2", "measure_periods=5", "drain_limit=1000"})).To(Succeed())
			rep, err := noc.RunMC(env.New(env.Options{Seed: 1}), p)
			Expect(err).NotTo(HaveOccurred())
			// 8 adapters offer 0.9 of a link each, 7.2 links' worth; the bus
			// carries one packet at a time, a 64-byte write's 40-byte head and
			// 32-byte body in 10 + 8 = 18 cycles of its 4 bytes: 64/18 =
			// 3.56 data bytes per cycle for all, 3.56/8/4 = 0.111 of a link
			// per adapter, 118.5 MB/s in all at 33.33 MHz. Each adapter
			// receives the writes of the receivers-per-write share:
			// broadcast 7/8 of 118.5 = 103.7 MB/s, single 1/8 = 14.8 MB/s.
			Expect(metric(rep, "saturated")).To(Equal(1.0))
			Expect(metric(rep, "hub_busy")).To(BeNumerically(">", 0.99))
			Expect(metric(rep, "accepted")).To(BeNumerically("~", 64.0/18/8/4, 0.002))
			Expect(metric(rep, "delivered_mbps")).To(BeNumerically("~", 118.5*receivers/8, 1))
		},
		Entry("broadcast", "broadcast", 7.0),
		Entry("single", "single", 1.0),
	)

	It("runs the Memory Channel with each page at one adapter", func() {
		p := noc.MCDefaults()
		Expect(scenario.Configure(p, "", []string{"mapping=single", "measure_periods=5"})).To(Succeed())
		rep, err := noc.RunMC(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		// Unicast: a delivery per write.
		Expect(metric(rep, "deliveries")).To(BeNumerically(">", 100))
		Expect(metric(rep, "ordered_deliveries")).To(Equal(metric(rep, "deliveries")))
	})

	DescribeTable("reject impossible parameters, naming the key",
		func(defaults func() scenario.Params, set, key string) {
			err := scenario.Configure(defaults(), "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(key)))
		},
		Entry("atm unknown key", atmParams, "vci=7", "unknown key vci"),
		Entry("atm ports", atmParams, "ports=1", "ports"),
		Entry("atm latency", atmParams, "latency=-1", "latency"),
		Entry("atm queue depth", atmParams, "queue_depth=0", "queue_depth"),
		Entry("atm rate", atmParams, "injection_rate=1.2", "injection_rate"),
		Entry("atm traffic", atmParams, "traffic=tornado", "traffic"),
		Entry("atm transpose", atmParams, "traffic=transpose", "traffic"),
		Entry("atm hot spot", atmParams, "hotspots=[9]", "hotspots"),
		Entry("atm hot fraction", atmParams, "hot_fraction=0", "hot_fraction"),
		Entry("atm window", atmParams, "measure_periods=0", "measure_periods"),
		Entry("mc unknown key", mcParams, "hub.delay=3", "unknown key hub"),
		Entry("mc ports", mcParams, "ports=0", "ports"),
		Entry("mc delay", mcParams, "delay=-3", "delay"),
		Entry("mc mapping", mcParams, "mapping=ring", "mapping"),
		Entry("mc pages", mcParams, "pages=0", "pages"),
		Entry("mc rate", mcParams, "injection_rate=-0.1", "injection_rate"),
		Entry("mc write size", mcParams, `write_size="0"`, "write_size"),
		Entry("mc write beyond a page", mcParams, `write_size="9000"`, "write_size"),
		Entry("mc write beyond a queue", mcParams, `write_size="2000"`, "write_size"),
		Entry("mc drain", mcParams, "drain_limit=0", "drain_limit"),
	)
})

func atmParams() scenario.Params { return noc.ATMDefaults() }
func mcParams() scenario.Params  { return noc.MCDefaults() }
