package demo_test

import (
	"io"
	"testing"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario/demo"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// BenchmarkDemo runs the demo scenario on its defaults with no waveform,
// with every signal dumped to a VCD (written to io.Discard), and with the
// transaction trace on, and reports simulated PCI cycles per second.
func BenchmarkDemo(b *testing.B) {
	for _, mode := range []string{"waves-off", "waves-on", "trace-on"} {
		b.Run(mode, func(b *testing.B) {
			var cycles uint64
			for b.Loop() {
				var reg *waves.Registry
				var rec *trace.Recorder
				switch mode {
				case "waves-on":
					reg = waves.NewRegistry(waves.Options{})
					if err := reg.DumpVCD(io.Discard, waves.VCDOptions{}); err != nil {
						b.Fatal(err)
					}
				case "trace-on":
					rec = trace.NewStreamRecorder(io.Discard)
				}
				e := env.New(env.Options{Waves: reg, Trace: rec, Seed: 1})
				p := demo.Defaults()
				rep, err := demo.Run(e, p)
				if err != nil || rep.Failed() {
					b.Fatal(err)
				}
				if err := reg.Close(e.Now()); err != nil {
					b.Fatal(err)
				}
				cycles += uint64(e.Now() / 30_000) // 33.33 MHz PCI cycles
			}
			b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "pci-cycles/s")
		})
	}
}
