package main

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("dump flags without --vcd", func() {
	It("warns on stderr, one line for each of --select, --exclude, --from and --to", func() {
		code, _, errOut := nisim("run", "demo", "--select", "host.*", "--select", "ni.*", "--exclude", "link.*",
			"--from", "1ns", "--to", "2us")
		Expect(code).To(Equal(0))
		Expect(errOut).To(Equal("nisim: run: warning: --select does nothing without --vcd (it only shapes the waveform dump)\n" +
			"nisim: run: warning: --exclude does nothing without --vcd (it only shapes the waveform dump)\n" +
			"nisim: run: warning: --from does nothing without --vcd (it only shapes the waveform dump)\n" +
			"nisim: run: warning: --to does nothing without --vcd (it only shapes the waveform dump)\n"))
	})

	It("says nothing when there is a --vcd or no dump flag", func() {
		code, _, errOut := nisim("run", "demo", "--vcd", filepath.Join(GinkgoT().TempDir(), "d.vcd"), "--from", "1ns", "--to", "2us")
		Expect(code).To(Equal(0))
		Expect(errOut).To(BeEmpty())
		code, _, errOut = nisim("run", "demo", "--trace", filepath.Join(GinkgoT().TempDir(), "d.trace"))
		Expect(code).To(Equal(0))
		Expect(errOut).To(BeEmpty())
	})
})
