package trace_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/sarchlab/akita/v3/sim"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/trace"
)

// rec builds a record at i*10 ps, cycle i, with an n=i field.
func rec(i int, path, kind string, fields ...trace.Field) trace.Record {
	return trace.Record{
		Time: clock.Time(i * 10), Cycle: clock.Cycle(i), Path: path, Kind: kind,
		Fields: append([]trace.Field{trace.Int("n", int64(i))}, fields...),
	}
}

func lines(recs []trace.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Format())
	}
	return out
}

// fnv1a64 is FNV-1a 64 written out from its definition: offset basis
// 0xcbf29ce484222325, for each byte xor then multiply by 0x100000001b3.
func fnv1a64(data []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range data {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}

var _ = Describe("Fields", func() {
	DescribeTable("helpers",
		func(f trace.Field, key, val string) {
			Expect(f).To(Equal(trace.Field{Key: key, Val: val}))
		},
		Entry("Int", trace.Int("n", -42), "n", "-42"),
		Entry("Uint, the largest", trace.Uint("n", 1<<64-1), "n", "18446744073709551615"),
		Entry("Addr in lower-case hex", trace.Addr("addr", 0x1F00), "addr", "0x1f00"),
		Entry("Addr zero", trace.Addr("addr", 0), "addr", "0x0"),
		Entry("Bool true", trace.Bool("ok", true), "ok", "1"),
		Entry("Bool false", trace.Bool("ok", false), "ok", "0"),
		Entry("Str keeps the text as is", trace.Str("note", "a b=c"), "note", "a b=c"),
		// FNV-1a 64 of nothing is the offset basis itself.
		Entry("Hash of nothing", trace.Hash("h", nil), "h", "cbf29ce484222325"),
		// Well-known FNV-1a 64 test vectors.
		Entry("Hash of a", trace.Hash("h", []byte("a")), "h", "af63dc4c8601ec8c"),
		Entry("Hash of foobar", trace.Hash("h", []byte("foobar")), "h", "85944171f73967e8"),
		// fnv1a64("p6500") = 0xd4d0185f34cc9a: padded to 16 digits.
		Entry("Hash keeps leading zeros", trace.Hash("h", []byte("p6500")), "h", "00d4d0185f34cc9a"),
	)

	It("hashes like FNV-1a 64 written out by hand", func() {
		for _, s := range []string{"", "x", "payload of a packet", string(make([]byte, 1000))} {
			Expect(trace.HashBytes([]byte(s))).To(Equal(hex16(fnv1a64([]byte(s)))))
		}
		Expect(trace.HashBytes([]byte("a"))).To(Equal(trace.Hash("any", []byte("a")).Val))
	})

	It("gets fields by key", func() {
		r := rec(1, "P", "k", trace.Str("a", "x"), trace.Str("a", "second"))
		v, ok := r.Get("a")
		Expect(ok).To(BeTrue())
		Expect(v).To(Equal("x")) // the first one
		_, ok = r.Get("missing")
		Expect(ok).To(BeFalse())
	})
})

// hex16 formats v as 16 hex digits, independently of the package.
func hex16(v uint64) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 16)
	for i := 15; i >= 0; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b)
}

var _ = Describe("Format and ParseLine", func() {
	It("formats a record as one line", func() {
		r := trace.Record{Time: 30000, Cycle: 3, Path: "Demo.Bus", Kind: "bus.req", Fields: []trace.Field{
			trace.Addr("addr", 0x1f00), trace.Int("len", 64), trace.Str("note", "two words"),
			trace.Str("empty", ""), trace.Bool("posted", true),
		}}
		// Values with a space or empty ones are Go-quoted; the rest are bare.
		Expect(r.Format()).To(Equal(`30000 3 Demo.Bus bus.req addr=0x1f00 len=64 note="two words" empty="" posted=1`))
		Expect(r.String()).To(Equal(r.Format()))
		Expect(trace.Record{Path: "P", Kind: "k"}.Format()).To(Equal("0 0 P k"))
	})

	DescribeTable("round-trips field values",
		func(val, formatted string) {
			r := trace.Record{Time: 7, Cycle: 1, Path: "A.B", Kind: "x.y",
				Fields: []trace.Field{trace.Str("v", val), trace.Int("after", 1)}}
			last := trace.Record{Time: 7, Cycle: 1, Path: "A.B", Kind: "x.y",
				Fields: []trace.Field{trace.Int("before", 1), trace.Str("v", val)}}
			Expect(r.Format()).To(Equal("7 1 A.B x.y v=" + formatted + " after=1"))
			// In the middle of the line and as its last field.
			for _, want := range []trace.Record{r, last} {
				got, ok, err := trace.ParseLine(want.Format())
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeTrue())
				Expect(cmp.Diff(want, got)).To(BeEmpty())
			}
		},
		Entry("plain", "abc", "abc"),
		Entry("hex", "0xdeadbeef", "0xdeadbeef"),
		Entry("empty", "", `""`),
		Entry("a space", "two words", `"two words"`),
		Entry("only spaces", "   ", `"   "`),
		Entry("a tab", "a\tb", `"a\tb"`),
		Entry("a newline", "a\nb", `"a\nb"`),
		Entry("a carriage return", "a\r", `"a\r"`),
		Entry("quotes", `say "hi"`, `"say \"hi\""`),
		Entry("a lone quote", `"`, `"\""`),
		Entry("an equals sign", "a=b", `"a=b"`),
		Entry("a key=value lookalike", "k=v x=y", `"k=v x=y"`),
		Entry("a hash", "#1", `"#1"`),
		Entry("a backslash", `a\b`, `a\b`),
		Entry("a backslash and a quote", `\"`, `"\\\""`),
		Entry("unicode", "çà-∂", "çà-∂"),
		// TrimSpace in ParseLine strips Unicode white space at the end of
		// the line, so such values must be quoted too.
		Entry("a trailing vertical tab", "a\v", `"a\v"`),
		Entry("a trailing form feed", "a\f", `"a\f"`),
		Entry("a trailing no-break space", "a\u00a0", `"a\u00a0"`),
		Entry("a trailing next-line", "a\u0085", `"a\u0085"`),
	)

	DescribeTable("rejects malformed lines",
		func(line, msg string) {
			_, ok, err := trace.ParseLine(line)
			Expect(ok).To(BeFalse())
			Expect(err).To(MatchError(msg))
		},
		Entry("a bad time", "x 3 P k", `bad time "x"`),
		Entry("a negative time", "-1 3 P k", `bad time "-1"`),
		Entry("a bad cycle", "10 -3 P k", `bad cycle "-3"`),
		Entry("too few fields", "10 3 P", "want <ps> <cycle> <path> <kind> [key=value...], got 3 fields"),
		Entry("a field without =", "10 3 P k len=4 novalue", `field "novalue" is not key=value`),
		Entry("a field without key", "10 3 P k =v", `field "=v" is not key=value`),
		Entry("an unterminated quote", `10 3 P k a="open`, `unterminated quote in "10 3 P k a=\"open"`),
		Entry("text after a closing quote", `10 3 P k a="x"y`, `field "a=\"x\"y": bad quoted value`),
		Entry("a bad escape", `10 3 P k a="\q"`, `field "a=\"\\q\"": bad quoted value`),
		// Format writes names bare; the key `"` would be read back as a quote.
		Entry("a quote in a key (fuzz seed key_with_quote)", `0 0 0 0 "= "`, `field "\"= \"": a key cannot contain '"'`),
		Entry("a quote in a path", `0 0 "a b" k`, `bad path "\"a b\"": a name cannot contain '"'`),
		Entry("a quote in a kind", `0 0 P "k"`, `bad kind "\"k\"": a name cannot contain '"'`),
	)

	DescribeTable("skips comments and blank lines",
		func(line string) {
			r, ok, err := trace.ParseLine(line)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeFalse())
			Expect(r).To(Equal(trace.Record{}))
		},
		Entry("empty", ""),
		Entry("blank", " \t "),
		Entry("the header", trace.Header),
		Entry("an indented comment", "   # why this golden is right"),
		Entry("a comment that looks like a record", "#10 3 P k"),
	)

	It("accepts tabs and repeated spaces between fields", func() {
		r, ok, err := trace.ParseLine("  10\t3  P   k\ta=1  ")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(r.Format()).To(Equal("10 3 P k a=1"))
	})

	It("reads what Write writes, comments separately, and names the line of an error", func() {
		recs := []trace.Record{rec(1, "A", "k", trace.Str("s", "x y")), rec(2, "B", "k")}
		var buf bytes.Buffer
		Expect(trace.Write(&buf, recs, "first\nsecond", "third")).To(Succeed())
		// Header, each comment line prefixed by "# ", then the records.
		Expect(buf.String()).To(Equal(trace.Header + "\n# first\n# second\n# third\n" +
			"10 1 A k n=1 s=\"x y\"\n20 2 B k n=2\n"))
		got, comments, err := trace.Read(&buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(recs, got)).To(BeEmpty())
		Expect(comments).To(Equal([]string{trace.Header, "# first", "# second", "# third"}))

		_, _, err = trace.Read(strings.NewReader("# c\n\n10 0 P k\nbad\n"))
		Expect(err).To(MatchError("line 4: want <ps> <cycle> <path> <kind> [key=value...], got 1 fields"))
	})
})

var _ = Describe("Recorder", func() {
	It("sorts the records of one picosecond by path, keeping program order per path", func() {
		// Two emission orders of the same per-component programs: A emits
		// a1 then a2, B emits b1 then b2, all at 10 ps; C emits at 20 ps.
		orders := [][]string{
			{"B:b1", "A:a1", "B:b2", "A:a2", "C:c1"},
			{"A:a1", "A:a2", "B:b1", "B:b2", "C:c1"},
			{"B:b1", "B:b2", "A:a1", "A:a2", "C:c1"},
		}
		// Stable sort by path: A's in program order, then B's; then 20 ps.
		want := []string{
			"10 1 A a1", "10 1 A a2", "10 1 B b1", "10 1 B b2", "20 2 C c1",
		}
		for _, order := range orders {
			r := trace.NewRecorder()
			for _, pk := range order {
				path, kind, _ := strings.Cut(pk, ":")
				t := clock.Time(10)
				if path == "C" {
					t = 20
				}
				r.Emit(t, clock.Cycle(t/10), path, kind)
			}
			Expect(r.Close()).To(Succeed())
			Expect(lines(r.Records())).To(Equal(want), "emission order %v", order)
		}
	})

	It("reports a record that goes back in time from Close and drops it", func() {
		r := trace.NewRecorder()
		r.Emit(20, 2, "P", "late")
		r.Emit(10, 1, "P", "early")
		r.Emit(30, 3, "P", "next")
		Expect(r.Close()).To(MatchError("trace: record at 10ps after one at 20ps: 10 1 P early"))
		Expect(lines(r.Records())).To(Equal([]string{"20 2 P late", "30 3 P next"}))
	})

	It("reports a record that goes back in time after the records were flushed", func() {
		r := trace.NewRecorder()
		r.Emit(20, 2, "P", "a")
		Expect(r.Records()).To(HaveLen(1)) // flushes: nothing is pending
		r.Emit(10, 1, "P", "b")
		Expect(r.Close()).To(MatchError("trace: record at 10ps after one at 20ps: 10 1 P b"))
		Expect(r.Err()).To(MatchError("trace: record at 10ps after one at 20ps: 10 1 P b"))
	})

	It("keeps only the kinds asked for", func() {
		r := trace.NewRecorder().OnlyKinds("bus.", "dma.done")
		for i, k := range []string{"bus.req", "dma.start", "dma.done", "dma.done2", "link.send", "bus", "bus.grant"} {
			r.Emit(clock.Time(i), 0, "P", k)
		}
		// Prefixes: "bus" lacks the dot; "dma.done2" starts with dma.done.
		Expect(lines(r.Records())).To(Equal([]string{
			"0 0 P bus.req", "2 0 P dma.done", "3 0 P dma.done2", "6 0 P bus.grant",
		}))
		Expect(r.Count()).To(Equal(uint64(4)))
	})

	It("streams the header, comments and records", func() {
		var buf bytes.Buffer
		r := trace.NewStreamRecorder(&buf, "scenario demo", "seed 7\nline two")
		r.Emit(10, 1, "B", "k", trace.Str("s", ""))
		r.Emit(10, 1, "A", "k")
		Expect(buf.String()).To(BeEmpty()) // buffered until Close
		Expect(r.Close()).To(Succeed())
		Expect(buf.String()).To(Equal("# nisim trace v1\n# scenario demo\n# seed 7\n# line two\n" +
			"10 1 A k\n10 1 B k s=\"\"\n"))
		// Not kept in memory unless asked.
		Expect(r.Records()).To(BeEmpty())
		Expect(r.Count()).To(Equal(uint64(2)))
	})

	It("streams and keeps with KeepAlso", func() {
		var buf bytes.Buffer
		r := trace.NewStreamRecorder(&buf).KeepAlso()
		r.Emit(5, 0, "A", "k")
		Expect(r.Close()).To(Succeed())
		Expect(buf.String()).To(Equal(trace.Header + "\n5 0 A k\n"))
		Expect(lines(r.Records())).To(Equal([]string{"5 0 A k"}))
	})

	It("counts records as they are released", func() {
		r := trace.NewRecorder()
		r.Emit(1, 0, "A", "k")
		r.Emit(1, 0, "B", "k")
		Expect(r.Count()).To(BeZero()) // still pending: time has not advanced
		r.Emit(2, 0, "A", "k")
		Expect(r.Count()).To(Equal(uint64(2)))
		r.Flush()
		Expect(r.Count()).To(Equal(uint64(3)))
	})

	It("adds whole records", func() {
		r := trace.NewRecorder()
		r.Add(rec(3, "P", "k", trace.Bool("b", true)))
		Expect(lines(r.Records())).To(Equal([]string{"30 3 P k n=3 b=1"}))
	})

	It("is a no-op when nil", func() {
		var r *trace.Recorder
		Expect(r.Enabled()).To(BeFalse())
		Expect(func() {
			r.Emit(1, 0, "P", "k")
			r.Add(rec(1, "P", "k"))
			r.Flush()
		}).NotTo(Panic())
		Expect(r.Records()).To(BeNil())
		Expect(r.Count()).To(BeZero())
		Expect(r.Close()).To(Succeed())
		Expect(r.Err()).To(Succeed())
		Expect(trace.NewRecorder().Enabled()).To(BeTrue())
	})
})

var _ = Describe("Diff", func() {
	// want: 14 records n=0..13 of kind x. got: the same first 6, then a y
	// at index 6 and an x at index 7, 8 records in all.
	var want, got []trace.Record
	BeforeEach(func() {
		want, got = nil, nil
		for i := range 14 {
			want = append(want, rec(i, "P", "x"))
		}
		got = append(got, want[:6]...)
		got = append(got, rec(6, "P", "y"), rec(7, "P", "x"))
	})

	It("returns nil for identical traces", func() {
		Expect(trace.Diff(want, want)).To(BeNil())
		Expect(trace.Diff(nil, nil)).To(BeNil())
		Expect(trace.Diff(nil, []trace.Record{})).To(BeNil())
	})

	It("finds the first divergence", func() {
		m := trace.Diff(want, got)
		Expect(m).NotTo(BeNil())
		Expect(m.Index).To(Equal(6))
		Expect(m.WantLabel).To(Equal("want"))
		Expect(m.GotLabel).To(Equal("got"))
	})

	It("compares fields too, not only kinds", func() {
		g := append([]trace.Record(nil), want...)
		g[9] = rec(9, "P", "x", trace.Int("extra", 0))
		Expect(trace.Diff(want, g).Index).To(Equal(9))
	})

	It("writes the exact report of a small case", func() {
		// Divergence at record 7 (1-based). Common context: the 5 records
		// before it (2..6). Each side from the divergence: want has 8
		// left, of which 6 are shown (7..12); got has 2 (7, 8). Kinds: want
		// has 14 x, got 7 x and 1 y.
		report := trace.Diff(want, got).Report()
		Expect(cmp.Diff(`traces differ at record 7 (want: 14 records, got: 8 records)
  common context:
         2  10 1 P x n=1
         3  20 2 P x n=2
         4  30 3 P x n=3
         5  40 4 P x n=4
         6  50 5 P x n=5
  want:
  >      7  60 6 P x n=6
         8  70 7 P x n=7
         9  80 8 P x n=8
        10  90 9 P x n=9
        11  100 10 P x n=10
        12  110 11 P x n=11
  got:
  >      7  60 6 P y n=6
         8  70 7 P x n=7
  record counts by kind (want/got): x 14/7, y 0/1
`, report)).To(BeEmpty())
		Expect(trace.Diff(want, got).Error()).To(Equal(report))
	})

	It("reports a divergence at the first record without context", func() {
		a := []trace.Record{rec(0, "A", "x"), rec(1, "A", "x")}
		b := []trace.Record{rec(0, "B", "x"), rec(1, "A", "x")}
		// Same kinds on both sides: no count line.
		Expect(trace.Diff(a, b).Report()).To(Equal(`traces differ at record 1 (want: 2 records, got: 2 records)
  want:
  >      1  0 0 A x n=0
         2  10 1 A x n=1
  got:
  >      1  0 0 B x n=0
         2  10 1 A x n=1
`))
	})

	It("reports a trace that is a prefix of the other", func() {
		short := want[:3]
		m := trace.Diff(short, want[:5])
		Expect(m.Index).To(Equal(3))
		Expect(m.Report()).To(Equal(`traces differ at record 4 (want: 3 records, got: 5 records)
  common context:
         1  0 0 P x n=0
         2  10 1 P x n=1
         3  20 2 P x n=2
  want:
    (ends here)
  got:
  >      4  30 3 P x n=3
         5  40 4 P x n=4
  record counts by kind (want/got): x 3/5
`))
		Expect(trace.Diff(want[:5], short).Index).To(Equal(3))
	})
})

var _ = Describe("Golden files", func() {
	var dir, path string
	var recs []trace.Record
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		path = filepath.Join(dir, "testdata", "demo.trace")
		recs = nil
		for i := range 10 {
			recs = append(recs, rec(i, "Demo.Nic", "dma.done", trace.Addr("addr", uint64(0x1000+64*i))))
		}
	})

	write := func(p string, rs []trace.Record, comments ...string) {
		GinkgoHelper()
		Expect(os.MkdirAll(filepath.Dir(p), 0o755)).To(Succeed())
		var buf bytes.Buffer
		Expect(trace.Write(&buf, rs, comments...)).To(Succeed())
		Expect(os.WriteFile(p, buf.Bytes(), 0o644)).To(Succeed())
	}

	It("tells to run make golden when the file is missing", func() {
		err := trace.CheckGolden(path, recs)
		Expect(err).To(MatchError("golden " + path + " does not exist: run `make golden`, review the file and commit it"))
	})

	It("passes when the run matches the golden", func() {
		write(path, recs, "why this is right")
		Expect(trace.CheckGolden(path, recs)).To(Succeed())
	})

	It("fails on a wrong golden and points at the altered record", func() {
		// The golden has record 6 (index 5) with a wrong address: 0x1141
		// instead of 0x1000+64*5 = 0x1140.
		wrong := append([]trace.Record(nil), recs...)
		wrong[5] = rec(5, "Demo.Nic", "dma.done", trace.Addr("addr", 0x1141))
		write(path, wrong)
		err := trace.CheckGolden(path, recs)
		var m *trace.Mismatch
		Expect(errors.As(err, &m)).To(BeTrue(), "error %v", err)
		Expect(m.Index).To(Equal(5))
		Expect(m.WantLabel).To(Equal("golden " + path))
		Expect(m.GotLabel).To(Equal("this run"))
		Expect(m.Want[5].Format()).To(Equal("50 5 Demo.Nic dma.done n=5 addr=0x1141"))
		Expect(m.Got[5].Format()).To(Equal("50 5 Demo.Nic dma.done n=5 addr=0x1140"))
		Expect(err.Error()).To(ContainSubstring("traces differ at record 6 (golden " + path + ": 10 records, this run: 10 records)"))
		Expect(err.Error()).To(ContainSubstring("  >      6  50 5 Demo.Nic dma.done n=5 addr=0x1141\n"))
		Expect(err.Error()).To(ContainSubstring("  >      6  50 5 Demo.Nic dma.done n=5 addr=0x1140\n"))
	})

	It("fails when the run has a record more than the golden", func() {
		write(path, recs[:9])
		var m *trace.Mismatch
		Expect(errors.As(trace.CheckGolden(path, recs), &m)).To(BeTrue())
		Expect(m.Index).To(Equal(9))
	})

	It("fails when the file's header is not the test's derivation, naming the line", func() {
		write(path, recs, "derived:", "TODO")
		Expect(trace.CheckGolden(path, recs)).To(Succeed(), "no derivation given: nothing to compare")
		Expect(trace.CheckGolden(path, recs, "derived:", "  DMA completes in order.")).To(MatchError(
			"golden " + path + `: header line 3 is "TODO", the test's derivation says "  DMA completes in order.": ` +
				"run `make golden`, review the file and commit it"))
		Expect(trace.CheckGolden(path, recs, "derived:", "TODO", "more")).To(MatchError(ContainSubstring(`header line 4 is "", the test's derivation says "more"`)))
		Expect(trace.CheckGolden(path, recs, "derived:\nTODO")).To(Succeed(), "a comment's lines are the file's lines")
	})

	It("names the golden and the line of a malformed golden", func() {
		Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		Expect(os.WriteFile(path, []byte(trace.Header+"\n0 0 P k\n10 x P k\n"), 0o644)).To(Succeed())
		Expect(trace.CheckGolden(path, recs)).To(MatchError("golden " + path + `: line 3: bad cycle "x"`))
	})

	Context("when updating", func() {
		BeforeEach(func() { GinkgoT().Setenv(trace.UpdateEnv, "1") })

		It("rewrites the file and keeps its comment lines when the test gives none", func() {
			write(path, recs[:3], "Why this golden is right:", "  DMA completes in order.")
			Expect(trace.Updating()).To(BeTrue())
			Expect(trace.CheckGolden(path, recs)).To(Succeed())
			data, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			var buf bytes.Buffer
			Expect(trace.Write(&buf, recs, "Why this golden is right:", "  DMA completes in order.")).To(Succeed())
			Expect(string(data)).To(Equal(buf.String()))
		})

		It("rewrites the comment lines with the test's derivation when it gives one", func() {
			write(path, recs[:3], "TODO")
			Expect(trace.CheckGolden(path, recs, "derived:", "  DMA completes in order.")).To(Succeed())
			data, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			var buf bytes.Buffer
			Expect(trace.Write(&buf, recs, "derived:", "  DMA completes in order.")).To(Succeed())
			Expect(string(data)).To(Equal(buf.String()))
		})

		It("creates a missing file and its directory with the given comments", func() {
			Expect(trace.CheckGolden(path, recs[:2], "new golden")).To(Succeed())
			data, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(data)).To(Equal(trace.Header + "\n# new golden\n" +
				"0 0 Demo.Nic dma.done n=0 addr=0x1000\n10 1 Demo.Nic dma.done n=1 addr=0x1040\n"))
		})

		It("leaves a golden that then passes", func() {
			write(path, recs[:1], "c")
			Expect(trace.CheckGolden(path, recs)).To(Succeed())
			Expect(os.Unsetenv(trace.UpdateEnv)).To(Succeed())
			Expect(trace.Updating()).To(BeFalse())
			Expect(trace.CheckGolden(path, recs)).To(Succeed())
		})
	})

	It("does not update unless the variable is exactly 1", func() {
		GinkgoT().Setenv(trace.UpdateEnv, "yes")
		Expect(trace.Updating()).To(BeFalse())
		Expect(trace.CheckGolden(path, recs)).To(MatchError(ContainSubstring("does not exist")))
	})

	Context("DiffFiles and ReadFile", func() {
		It("labels the mismatch with the file names", func() {
			a, b := filepath.Join(dir, "a.trace"), filepath.Join(dir, "b.trace")
			write(a, recs)
			write(b, recs[:7])
			m, err := trace.DiffFiles(a, b)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Index).To(Equal(7))
			Expect(m.Report()).To(HavePrefix("traces differ at record 8 (" + a + ": 10 records, " + b + ": 7 records)\n"))
			m, err = trace.DiffFiles(a, a)
			Expect(err).NotTo(HaveOccurred())
			Expect(m).To(BeNil())
		})

		It("names the file and the line of an error", func() {
			a, b := filepath.Join(dir, "a.trace"), filepath.Join(dir, "b.trace")
			write(a, recs)
			Expect(os.WriteFile(b, []byte("# c\n0 0 P k\n0 0 P k x\n"), 0o644)).To(Succeed())
			_, err := trace.DiffFiles(a, b)
			Expect(err).To(MatchError(b + `: line 3: field "x" is not key=value`))
			_, err = trace.DiffFiles(b, a)
			Expect(err).To(MatchError(b + `: line 3: field "x" is not key=value`))
			_, err = trace.ReadFile(b)
			Expect(err).To(MatchError(b + `: line 3: field "x" is not key=value`))
			missing := filepath.Join(dir, "missing.trace")
			_, err = trace.DiffFiles(a, missing)
			Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(missing))
		})

		It("refuses an empty or headerless record-less file as not a trace, and accepts an empty trace with its header", func() {
			// Two empty files used to be "identical".
			a, b := filepath.Join(dir, "a.trace"), filepath.Join(dir, "b.trace")
			Expect(os.WriteFile(a, nil, 0o644)).To(Succeed())
			Expect(os.WriteFile(b, []byte("# just a comment\n"), 0o644)).To(Succeed())
			_, err := trace.DiffFiles(a, a)
			Expect(err).To(MatchError(a + `: not a trace: no record and no "# nisim trace v1" header`))
			Expect(errors.Is(err, trace.ErrNotTrace)).To(BeTrue())
			_, err = trace.DiffFiles(b, b)
			Expect(errors.Is(err, trace.ErrNotTrace)).To(BeTrue())
			write(a, nil)
			m, err := trace.DiffFiles(a, a)
			Expect(err).NotTo(HaveOccurred())
			Expect(m).To(BeNil())
			Expect(os.WriteFile(b, []byte("0 0 P k\n"), 0o644)).To(Succeed())
			m, err = trace.DiffFiles(b, b)
			Expect(err).NotTo(HaveOccurred())
			Expect(m).To(BeNil())
		})

		It("reads a file back", func() {
			a := filepath.Join(dir, "a.trace")
			write(a, recs, "comment")
			got, err := trace.ReadFile(a)
			Expect(err).NotTo(HaveOccurred())
			Expect(cmp.Diff(recs, got)).To(BeEmpty())
		})
	})
})

// pkt is a tiny Akita message; ctrl is one the describer does not trace.
type pkt struct {
	sim.MsgMeta
	Len     int
	Payload []byte
}

func (p *pkt) Meta() *sim.MsgMeta { return &p.MsgMeta }

type ctrl struct{ sim.MsgMeta }

func (c *ctrl) Meta() *sim.MsgMeta { return &c.MsgMeta }

// at is an engine event that runs fn at time t.
type at struct {
	t  sim.VTimeInSec
	fn func(now sim.VTimeInSec)
}

func (e *at) Time() sim.VTimeInSec   { return e.t }
func (e *at) Handler() sim.Handler   { return e }
func (e *at) IsSecondary() bool      { return false }
func (e *at) Handle(sim.Event) error { e.fn(e.t); return nil }

// describe traces pkt messages only.
func describe(m sim.Msg) (string, []trace.Field, bool) {
	if p, ok := m.(*pkt); ok {
		return "pkt", []trace.Field{trace.Int("len", int64(p.Len)), trace.Hash("data", p.Payload)}, true
	}
	return "", nil, false
}

var _ = Describe("PortHook", func() {
	It("records sends, receives and retrieves at Akita ports without message IDs", func() {
		engine := sim.NewSerialEngine()
		conn := sim.NewDirectConnection("Conn", engine, 1*sim.GHz)
		out := sim.NewLimitNumMsgPort(nil, 4, "Demo.Nic.Out")
		in := sim.NewLimitNumMsgPort(nil, 4, "Demo.Host.In")
		conn.PlugIn(out, 4)
		conn.PlugIn(in, 4)
		r := trace.NewRecorder()
		hook := trace.NewPortHook(r, engine, clock.MHz(100), describe)
		out.AcceptHook(hook)
		in.AcceptHook(hook)

		var ids []string
		send := func(now sim.VTimeInSec, m sim.Msg) {
			meta := m.Meta()
			// Akita's IDs are small counters ("1", "2"); make them
			// recognisable so that the check below means something.
			meta.ID = "akita-msg-id-" + sim.GetIDGenerator().Generate()
			meta.Src, meta.Dst, meta.SendTime = out, in, now
			ids = append(ids, meta.ID)
			Expect(out.Send(m)).To(BeNil())
		}
		// 30 ns: send a packet and a control message; the direct connection
		// delivers both at once (a secondary event at 30 ns). 40 ns: the
		// owner retrieves both.
		engine.Schedule(&at{t: clock.ToSim(30 * clock.Nanosecond), fn: func(now sim.VTimeInSec) {
			send(now, &pkt{Len: 64, Payload: []byte("a")})
			send(now, &ctrl{})
		}})
		engine.Schedule(&at{t: clock.ToSim(40 * clock.Nanosecond), fn: func(now sim.VTimeInSec) {
			Expect(in.Retrieve(now)).To(BeAssignableToTypeOf(&pkt{}))
			Expect(in.Retrieve(now)).To(BeAssignableToTypeOf(&ctrl{}))
		}})
		Expect(engine.Run()).To(Succeed())
		Expect(r.Close()).To(Succeed())

		// 100 MHz: 30 ns is cycle 3, 40 ns cycle 4. At 30 ns the send
		// (Demo.Nic.Out) was emitted before the receive (Demo.Host.In) but
		// the picosecond is sorted by path. The control message is not
		// described, so it leaves no record.
		Expect(lines(r.Records())).To(Equal([]string{
			"30000 3 Demo.Host.In pkt.recv len=64 data=af63dc4c8601ec8c",
			"30000 3 Demo.Nic.Out pkt.send len=64 data=af63dc4c8601ec8c",
			"40000 4 Demo.Host.In pkt.retrieve len=64 data=af63dc4c8601ec8c",
		}))
		Expect(ids).To(HaveLen(2))
		for _, l := range lines(r.Records()) {
			for _, id := range ids {
				Expect(l).NotTo(ContainSubstring(id))
			}
		}
	})

	It("ignores other hook positions and non-messages, and names an unnamed domain ?", func() {
		engine := sim.NewSerialEngine()
		r := trace.NewRecorder()
		hook := trace.NewPortHook(r, engine, clock.MHz(100), describe)
		hook.Func(sim.HookCtx{Pos: sim.HookPosBeforeEvent, Item: &pkt{Len: 1}})
		hook.Func(sim.HookCtx{Pos: sim.HookPosPortMsgSend, Item: "not a message"})
		hook.Func(sim.HookCtx{Pos: sim.HookPosPortMsgSend, Item: &pkt{Len: 2}})
		Expect(lines(r.Records())).To(Equal([]string{"0 0 ? pkt.send len=2 data=cbf29ce484222325"}))
	})
})
