package tgscen_test

import (
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/tgscen"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The protection checks of telegraphos-protection against a HIB that
// accepts a shadow store whatever its key (tg.acceptkey): the forged
// fetch-and-inc goes through, the intruder's shadow store lands in a
// context it does not own.
var _ = Describe("Protection checks against a HIB that accepts wrong keys", func() {
	run := func(mut map[string]int) map[string]scenario.CheckResult {
		GinkgoHelper()
		rep, err := tgscen.RunProtection(env.New(env.Options{Seed: 1, Mutations: mut}), tgscen.ProtectionDefaults())
		Expect(err).NotTo(HaveOccurred())
		out := map[string]scenario.CheckResult{}
		for _, c := range rep.Checks {
			out[c.Name] = c
		}
		return out
	}

	It("passes every check without the mutation and fails the key checks with it", func() {
		for name, c := range run(nil) {
			Expect(c.OK).To(BeTrue(), "%s: %s", name, c.Detail)
		}
		got := run(map[string]int{"tg.acceptkey": 1})
		Expect(got["wrong key refused"].OK).To(BeFalse())
		Expect(got["wrong key refused"].Detail).To(Equal(
			"the shadow store and then the launch refused: 0 refusals (want 2), the launch returned 5 (want 0)"))
		Expect(got["memory untouched"].OK).To(BeFalse())
		Expect(got["memory untouched"].Detail).To(HavePrefix("node 1's words 0x40, 0x80, 0xc0 hold 6, "))
		Expect(got["foreign context faulted and refused"].OK).To(BeFalse())
		Expect(got["out-of-range accesses refused"].OK).To(BeTrue()) // no key involved
	})
})
