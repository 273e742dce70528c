package main

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// completions drives cobra's hidden __complete command, as the shell
// scripts do, and returns the suggestions (without descriptions) and the
// directive line.
func completions(args ...string) ([]string, string) {
	code, out, _ := nisim(append([]string{"__complete"}, args...)...)
	ExpectWithOffset(1, code).To(Equal(0))
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var got []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		got = append(got, name)
	}
	return got, lines[len(lines)-1]
}

var _ = Describe("shell completion", func() {
	It("completes scenario names for run, config and sweep", func() {
		for _, cmd := range []string{"run", "config", "sweep"} {
			got, dir := completions(cmd, "telegraphos-c")
			Expect(got).To(Equal([]string{"telegraphos-calibration", "telegraphos-coherence"}), cmd)
			Expect(dir).To(Equal(":4")) // no file completion
		}
		got, _ := completions("run", "")
		Expect(got).To(HaveLen(len(catalog())))
	})

	It("completes --set keys of the scenario as key=, without a space after", func() {
		got, dir := completions("run", "demo", "--set", "ni.fifo")
		Expect(got).To(Equal([]string{"ni.fifo_depth=", "ni.fifo_width="}))
		Expect(dir).To(Equal(":6")) // no space, no file completion
		got, _ = completions("config", "remotewrite", "--set", "firmware.costs.t")
		Expect(got).To(Equal([]string{"firmware.costs.transmit="}))
		got, _ = completions("sweep", "mesh", "--set", "router.vc_")
		Expect(got).To(Equal([]string{"router.vc_buf_size=", "router.vc_alloc_delay=", "router.vc_allocator="}))
	})

	It("completes the values of a key that lists them", func() {
		got, _ := completions("run", "mesh", "--set", "topology=myr")
		Expect(got).To(Equal([]string{"topology=myrinet-grid", "topology=myrinet-clos"}))
		got, _ = completions("run", "lci-logp", "--set", "variant=")
		Expect(got).To(Equal([]string{"variant=sdma", "variant=pio", "variant=nirx", "variant=hrx", "variant=rcpy",
			"variant=I-sdma", "variant=I-pio", "variant=I-nirx", "variant=I-hrx", "variant=I-rcpy"}))
		// lci-logp alone takes I-rcpy.
		got, _ = completions("run", "lci-traffic", "--set", "variant=")
		Expect(got).To(Equal([]string{"variant=sdma", "variant=pio", "variant=nirx", "variant=hrx", "variant=I-sdma", "variant=I-pio", "variant=I-nirx", "variant=I-hrx"}))
	})

	It("completes --mutate names", func() {
		got, dir := completions("run", "mesh", "--mutate", "link.")
		Expect(got).To(ContainElements("link.leak=", "link.lose="))
		Expect(dir).To(Equal(":6"))
	})

	It("offers nothing for --set before a scenario is named", func() {
		got, _ := completions("run", "--set", "")
		Expect(got).To(BeEmpty())
	})

	It("writes the bash, zsh, fish and powershell scripts", func() {
		for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
			code, out, _ := nisim("completion", sh)
			Expect(code).To(Equal(0), sh)
			Expect(out).To(ContainSubstring("__complete"), sh)
		}
	})
})
