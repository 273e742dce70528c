package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Issue 12, bounded inputs: sizes that passed validation and ran the
// process out of memory, and a configuration of 200k unknown keys that
// hung (quadratic), each refused before the run with one line on stderr
// and exit status 2.
var _ = Describe("bounded inputs", func() {
	oneLine := func(code int, out, errs string) string {
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(strings.Count(errs, "\n")).To(Equal(1), "one line: %q", errs)
		return errs
	}

	DescribeTable("refuses a size above its limit, naming the key and the limit",
		func(scen, set, want string) {
			errs := oneLine(nisim("run", scen, "--set", set))
			Expect(errs).To(HavePrefix("nisim: "))
			Expect(errs).To(ContainSubstring(want))
		},
		Entry("ni.fifo_depth", "demo", "ni.fifo_depth=1000000000000",
			"ni.fifo_depth: above the limit 13421772 (got 1000000000000; 80 B per entry of 32+8 B in each of 2 FIFOs x 13421772 = 1023 MiB, the per-run memory budget)"),
		Entry("link.buffer_flits", "demo", "link.buffer_flits=1000000000", "link.buffer_flits: above the limit "),
		Entry("ni.dma_queue", "demo", "ni.dma_queue=1000000000", "ni.dma_queue: above the limit "),
		Entry("host.write_buffer", "demo", "host.write_buffer=1000000000", "host.write_buffer: above the limit "),
		Entry("router.vc_buf_size", "mesh", "router.vc_buf_size=1000000000", "router.vc_buf_size: above the limit "),
		Entry("queue_depth", "atm-star", "queue_depth=1000000000000", "queue_depth: above the limit "),
	)

	// unknownKeys writes a config of n unknown keys after a known one.
	unknownKeys := func(n int) string {
		var b strings.Builder
		b.WriteString("k = 4\n")
		for i := range n {
			fmt.Fprintf(&b, "bogus%d = %d\n", i, i)
		}
		path := filepath.Join(GinkgoT().TempDir(), "c.toml")
		Expect(os.WriteFile(path, []byte(b.String()), 0o644)).To(Succeed())
		return path
	}

	It("stops at the first of 50k unknown keys", func() {
		// 50k keys are 0.9 MB, under scenario.MaxConfigBytes.
		path := unknownKeys(50_000)
		errs := oneLine(nisim("run", "mesh", "--config", path))
		Expect(errs).To(ContainSubstring("config " + path + ":2: unknown key bogus0"))
		Expect(errs).NotTo(ContainSubstring("bogus1"))
	})

	It("refuses 200k unknown keys by the file's size, before decoding", func() {
		// 200k keys are 3977786 bytes: over the 1 MiB limit.
		path := unknownKeys(200_000)
		Expect(oneLine(nisim("run", "mesh", "--config", path))).To(Equal("nisim: run: config " + path +
			": larger than the limit of 1048576 bytes (3977786 bytes; a configuration is a few KiB)\n"))
	})
})
