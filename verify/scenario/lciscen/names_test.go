package lciscen_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/lciscen"
)

var _ = Describe("waveform names", func() {
	for _, s := range lciscen.Scenarios() {
		It(s.Name+" declares every signal under the naming convention", func() {
			// Every signal is declared when the system is built, so a 1 ns
			// run sees them all (scenario.CheckWaveNames).
			Expect(scenario.CheckWaveNames(s, GinkgoT().TempDir())).To(Succeed())
		})
	}
})
