package demo_test

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/demo"
	"github.com/nisim/nisim/waves"
)

var _ = Describe("waveform names", func() {
	for _, s := range []*scenario.Scenario{demo.Scenario()} {
		It(s.Name+" declares every signal under the naming convention", func() {
			// Every signal is declared when the system is built, so a 1 ns
			// run sees them all; the registry refuses a name that breaks
			// waves.CheckName or is both a scope and a signal (Err).
			path := filepath.Join(GinkgoT().TempDir(), "names.vcd")
			_, e, _, _ := scenario.Exec(s, s.Defaults(), scenario.Options{Seed: 1, VCD: path, TimeLimit: clock.Nanosecond})
			Expect(e).NotTo(BeNil())
			Expect(e.Waves.Err()).NotTo(HaveOccurred())
			sigs := e.Waves.Signals()
			Expect(sigs).NotTo(BeEmpty())
			for _, sig := range sigs {
				Expect(waves.CheckName(sig.Name())).To(Succeed())
			}
		})
	}
})
