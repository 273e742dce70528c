package traffic_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nisim/nisim/switch/traffic"
)

// FuzzReadTrace checks the traffic trace reader on any file and node
// count: a node count below one is refused, naming it; any other error is
// one line naming a line of the file; accepted records
// have non-decreasing cycles, nodes in range and sizes in 1..2^20, one per
// line that is not blank or a comment, and written back in the documented
// format they read as the same records.
func FuzzReadTrace(f *testing.F) {
	paths, err := filepath.Glob("testdata/*.trace")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no traffic traces to seed the corpus: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 4)
		f.Add(b, 64)
	}
	f.Add([]byte("0 0 1 1\n5 1 0 1048576\n5 1 0 1048577\n"), 2)
	f.Add([]byte("3 0 1 1\n2 0 1 1\n"), 2)
	f.Add([]byte("18446744073709551615 0 1 1 # max cycle\n"), 2)
	f.Add([]byte("0 0 1 1"), 0)
	f.Add([]byte("0 0 1 1"), -1)
	f.Add([]byte("0 -1 1 1\n"), 4)
	f.Fuzz(func(t *testing.T, data []byte, nodes int) {
		recs, err := traffic.ReadTrace(bytes.NewReader(data), nodes)
		if err != nil && nodes < 1 {
			if msg := err.Error(); !strings.Contains(msg, strconv.Itoa(nodes)+" nodes") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error %q does not name the node count %d", msg, nodes)
			}
			return
		}
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "line ") {
				t.Fatalf("error %q is not one line naming the line", msg)
			}
			num, _, _ := strings.Cut(strings.TrimPrefix(msg, "line "), ":")
			if n, err := strconv.Atoi(num); err != nil || n < 1 || n > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("error %q names no line of the file", msg)
			}
			return
		}
		lines := 0
		for _, l := range strings.Split(string(data), "\n") {
			if i := strings.IndexByte(l, '#'); i >= 0 {
				l = l[:i]
			}
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if len(recs) != lines {
			t.Fatalf("%d records from %d lines", len(recs), lines)
		}
		var out bytes.Buffer
		for i, r := range recs {
			if i > 0 && r.Cycle < recs[i-1].Cycle {
				t.Fatalf("record %d at cycle %d before %d", i, r.Cycle, recs[i-1].Cycle)
			}
			if r.Src < 0 || r.Src >= nodes || r.Dst < 0 || r.Dst >= nodes || r.Size < 1 || r.Size > 1<<20 {
				t.Fatalf("record %d %+v out of range (%d nodes)", i, r, nodes)
			}
			fmt.Fprintf(&out, "%d %d %d %d\n", r.Cycle, r.Src, r.Dst, r.Size)
		}
		back, err := traffic.ReadTrace(&out, nodes)
		if err != nil {
			t.Fatalf("written back, the trace does not read: %v", err)
		}
		if d := cmp.Diff(recs, back, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("written back, the trace reads differently:\n%s", d)
		}
	})
}

// FuzzParseSizes checks the packet size list on any string: an error is
// one line; an accepted distribution has a largest size that is one of the
// listed sizes, a finite mean between the smallest and largest listed
// size, draws only listed sizes (with a positive weight), and gives a
// Bernoulli process a per-cycle probability in [0, 1].
func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"20", "5", "16", "1:0.5,20:0.5", "4:0.5,64:0.5", " 1 : 2 , 3 ", "1:0", "0", "-3",
		"1:NaN", "1:+Inf", "2:1e308,3:1e308", "1,2,3", "", "1:", ":1", "9223372036854775807", "1:1e-320,2:1"} {
		f.Add(s, uint64(1), 0.5)
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64, rate float64) {
		z, err := traffic.ParseSizes(s)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("ParseSizes(%q): error %q is not one line", s, msg)
			}
			return
		}
		listed := map[int]float64{}
		lo, hi := math.MaxInt, 0
		for _, part := range strings.Split(s, ",") {
			sz, w, hasW := strings.Cut(part, ":")
			n, err := strconv.Atoi(strings.TrimSpace(sz))
			if err != nil {
				t.Fatalf("ParseSizes(%q) accepted the size %q", s, sz)
			}
			wt := 1.0
			if hasW {
				wt, _ = strconv.ParseFloat(strings.TrimSpace(w), 64)
			}
			listed[n] += wt
			lo, hi = min(lo, n), max(hi, n)
		}
		if z.Max() != hi {
			t.Fatalf("ParseSizes(%q): Max %d, want %d", s, z.Max(), hi)
		}
		if m := z.Mean(); math.IsNaN(m) || m < float64(lo)*(1-1e-9) || m > float64(hi)*(1+1e-9) {
			t.Fatalf("ParseSizes(%q): mean %g is not in [%d, %d]", s, m, lo, hi)
		}
		r := rand.New(rand.NewPCG(seed, 1))
		for range 64 {
			if d := z.Draw(r); listed[d] <= 0 {
				t.Fatalf("ParseSizes(%q): drew %d, which is not a listed size of positive weight", s, d)
			}
		}
		if b, err := traffic.NewBernoulli(rate, z); err == nil {
			if p := b.P(); !(p >= 0 && p <= 1) {
				t.Fatalf("ParseSizes(%q) at rate %g: probability %g per cycle", s, rate, p)
			}
		} else if rate >= 0 && rate <= 1 {
			t.Fatalf("ParseSizes(%q) at rate %g refused: %v", s, rate, err)
		}
	})
}
