package cashscen_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/cashscen"
)

// small is cashmere-random at the cashtb specs' size (three pages, two
// phases) on 2 x 2 with program seed 1: a run with an incoming diff.
var small = []string{"seed=1", "nodes=2", "cpus=2", "data_pages=2", "phases=2", "locks=2", "block_words=8", "sections=1"}

var _ = Describe("cashmere-random", func() {
	It("refuses bad keys with one-line errors naming the key", func() {
		for set, key := range map[string]string{
			"variant=3L":      "variant",
			"nodes=9":         "nodes",
			"variant=1LD":     "nodes", // 4 x 4 = 16 processes, above 1LD's 8
			"cpus=5":          "cpus",
			"granule=3":       "granule",
			"data_pages=3":    "data_pages",
			"data_pages=8192": "data_pages", // more than the bench's 4096 pages
			"write_share=300": "write_share",
			"phases=0":        "phases",
			"seed=-1":         "seed",
		} {
			p := cashscen.RandomDefaults()
			err := scenario.Configure(p, "", []string{set})
			if err == nil {
				err = p.Validate()
			}
			Expect(err).To(HaveOccurred(), set)
			Expect(err.Error()).To(MatchRegexp(`(^|parameter )`+key+`:`), set)
			Expect(err.Error()).NotTo(ContainSubstring("\n"), set)
		}
		Expect(cashscen.RandomDefaults().Validate()).To(Succeed())
	})

	It("runs a program to the replay's memory, every check passing, and counts the MC writes the hub ordered", func() {
		p := cashscen.RandomDefaults()
		Expect(scenario.Configure(p, "", small)).To(Succeed())
		rep, err := cashscen.RunRandom(env.New(env.Options{Seed: 1}), p)
		Expect(err).NotTo(HaveOccurred())
		for _, c := range rep.Checks {
			Expect(c.OK).To(BeTrue(), c.Name+": "+c.Detail)
		}
		writes := -1.0
		for _, m := range rep.Metrics {
			if m.Name == "writes" {
				writes = m.Value
			}
		}
		Expect(writes).To(BeNumerically(">", 1000))
		GinkgoWriter.Printf("cashmere-random 2x2 seed 1: %v MC writes\n", writes)
	})

	It("fails a check with a one-line reason when the protocol is broken (cashmere.skipincoming)", func() {
		p := cashscen.RandomDefaults()
		Expect(scenario.Configure(p, "", small)).To(Succeed())
		rep, err := cashscen.RunRandom(env.New(env.Options{Seed: 1, Mutations: map[string]int{"cashmere.skipincoming": 1}}), p)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeTrue())
		for _, c := range rep.Checks {
			if strings.Contains(c.Name, "Random.Check") {
				Expect(c.OK).To(BeFalse())
				Expect(c.Detail).To(HavePrefix("random: "))
				Expect(c.Detail).NotTo(ContainSubstring("\n"))
			}
		}
	})
})
