package scenario_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/pelletier/go-toml/v2"
)

// unknownKeys returns a config of n lines, each an unknown key.
func unknownKeys(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "bogus%d = %d\n", i, i)
	}
	return b.Bytes()
}

// BenchmarkConfigureKeys measures Configure on a file of n unknown keys,
// as the cost per key of the file (metric ns/key): Configure stops at the
// first, so the cost per key falls as n grows (only reading the file is
// linear). Beside it, gotoml-strict is go-toml's strict decoding that
// Configure relied on before, whose cost per key grows with n (quadratic
// in all: it computes each unknown key's line from the document's start).
func BenchmarkConfigureKeys(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		// The decoding alone: 100k keys (1.8 MB) are over
		// scenario.MaxConfigBytes as a file.
		data := unknownKeys(n)
		b.Run(fmt.Sprintf("configure/%d", n), func(b *testing.B) {
			for b.Loop() {
				if scenario.ConfigureData(defaults(), "c.toml", data, nil) == nil {
					b.Fatal("unknown keys accepted")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
		if n > 10_000 {
			continue // 100k keys take minutes the old way
		}
		b.Run(fmt.Sprintf("gotoml-strict/%d", n), func(b *testing.B) {
			for b.Loop() {
				d := toml.NewDecoder(bytes.NewReader(data))
				d.DisallowUnknownFields()
				if d.Decode(defaults()) == nil {
					b.Fatal("unknown keys accepted")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
