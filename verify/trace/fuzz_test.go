package trace_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nisim/nisim/verify/trace"
)

// goldenTraces returns the trace files of the repository (the goldens and
// the demo's reference trace), the fuzz targets' seeds.
func goldenTraces(f *testing.F) map[string][]byte {
	files := map[string][]byte{}
	for _, pat := range []string{"../../*/testdata/*.trace", "../../*/*/testdata/*.trace", "../../*/*/*/testdata/*.trace"} {
		paths, err := filepath.Glob(pat)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			files[p] = b
		}
	}
	if len(files) == 0 {
		f.Fatal("no trace files found to seed the corpus")
	}
	return files
}

// sortedKeys keeps the seed order independent of map order.
func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// FuzzParseLine checks ParseLine on any line (any string without a
// newline, as Read passes them): it never both accepts and
// fails, an error is one line, and an accepted record is written by Format
// as a line that ParseLine reads back as the same record and that Format
// writes identically (Format is ParseLine's fixed point).
func FuzzParseLine(f *testing.F) {
	files := goldenTraces(f)
	for _, p := range sortedKeys(files) {
		for i, l := range strings.Split(string(files[p]), "\n") {
			if i < 12 { // the header, comments and first records of each
				f.Add(l)
			}
		}
	}
	for _, l := range []string{
		`0 0 A.B bus.read addr=0x10 data="a b" note="" x==1`,
		"5\t6 P K k=\"tab\\there\" u=\"\\u00a0\"",
		`1 2 p k v="unterminated`,
		`-1 0 p k`, `1 -1 p k`, `1 2 p`, `# comment`, ``, `1 2 p k =v`, `1 2 p k novalue`,
	} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.Contains(line, "\n") {
			return // not a line: Read splits files at newlines
		}
		rec, ok, err := trace.ParseLine(line)
		if err != nil {
			if ok {
				t.Fatalf("ParseLine(%q) accepted and failed: %v", line, err)
			}
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("ParseLine(%q): error %q is not one line", line, msg)
			}
			return
		}
		if !ok {
			if s := strings.TrimSpace(line); s != "" && s[0] != '#' {
				t.Fatalf("ParseLine(%q) skipped a line that is neither blank nor a comment", line)
			}
			return
		}
		if rec.Time < 0 || rec.Path == "" || rec.Kind == "" {
			t.Fatalf("ParseLine(%q) = %+v", line, rec)
		}
		out := rec.Format()
		if strings.Contains(out, "\n") {
			t.Fatalf("record of %q formats as more than one line: %q", line, out)
		}
		back, ok, err := trace.ParseLine(out)
		if err != nil || !ok {
			t.Fatalf("%q parses, formats as %q, which does not parse: %v", line, out, err)
		}
		if d := cmp.Diff(rec, back, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%q formats as %q, which parses differently (-first +second):\n%s", line, out, d)
		}
		if again := back.Format(); again != out {
			t.Fatalf("Format is not a fixed point: %q then %q", out, again)
		}
	})
}

// FuzzTraceFiles checks the trace-file reader and the diff on any two
// files: a read error names the line (within the file) on one line and
// ReadFile's names the file; an accepted file written back by Write reads
// as the same records; DiffFiles finds no difference between a file and
// its rewrite, and between two files it reports the first record whose
// formatted lines differ (or the shorter length), with a report that
// starts with that record number.
func FuzzTraceFiles(f *testing.F) {
	files := goldenTraces(f)
	keys := sortedKeys(files)
	for i, p := range keys {
		f.Add(files[p], files[keys[(i+1)%len(keys)]])
		f.Add(files[p], files[p])
	}
	f.Add([]byte("# nisim trace v1\n1 2 p k a=1\n"), []byte("# nisim trace v1\n1 2 p k a=2\n3 4 q k\n"))
	f.Add([]byte("1 2 p k\n\n  # indented comment\n1 2 p k v=\"x\n"), []byte(""))
	f.Add(bytes.Repeat([]byte("x"), 70_000), []byte("1 2 p k"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		dir := t.TempDir()
		pa, pb := filepath.Join(dir, "a.trace"), filepath.Join(dir, "b.trace")
		for _, w := range []struct {
			p string
			b []byte
		}{{pa, a}, {pb, b}} {
			if err := os.WriteFile(w.p, w.b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ra, okA := readChecked(t, pa, a)
		rb, okB := readChecked(t, pb, b)
		m, err := trace.DiffFiles(pa, pb)
		// DiffFiles reads a, then b; the first that is unreadable, or
		// holds no record and does not start with the Header (not a
		// trace), is the error, named.
		for _, f := range []struct {
			p    string
			b    []byte
			recs []trace.Record
			ok   bool
		}{{pa, a, ra, okA}, {pb, b, rb, okB}} {
			if !f.ok {
				if err == nil || !strings.HasPrefix(err.Error(), f.p+": ") {
					t.Fatalf("DiffFiles with %s unreadable: error %v does not name it", f.p, err)
				}
				return
			}
			if len(f.recs) > 0 {
				continue
			}
			first := ""
			for _, l := range strings.Split(string(f.b), "\n") {
				if first = strings.TrimSpace(l); first != "" {
					break
				}
			}
			if first != trace.Header {
				if !errors.Is(err, trace.ErrNotTrace) || !strings.HasPrefix(err.Error(), f.p+": ") {
					t.Fatalf("DiffFiles with %s empty and headerless: error %v, want ErrNotTrace naming it", f.p, err)
				}
				return
			}
		}
		if err != nil {
			t.Fatalf("DiffFiles of two readable files: %v", err)
		}
		n := min(len(ra), len(rb))
		first := n
		for i := range n {
			if ra[i].Format() != rb[i].Format() {
				first = i
				break
			}
		}
		switch {
		case first == n && len(ra) == len(rb):
			if m != nil {
				t.Fatalf("identical traces, but DiffFiles reports record %d", m.Index+1)
			}
		case m == nil:
			t.Fatalf("traces differ at record %d, DiffFiles found no difference", first+1)
		case m.Index != first:
			t.Fatalf("traces differ first at record %d, DiffFiles says %d", first+1, m.Index+1)
		case !strings.HasPrefix(m.Report(), "traces differ at record "+strconv.Itoa(first+1)+" "):
			t.Fatalf("report does not start with the record: %q", m.Report())
		}
	})
}

// readChecked reads the trace file at path (content data) and checks the
// reader's properties; it returns the records and whether they were read.
func readChecked(t *testing.T, path string, data []byte) ([]trace.Record, bool) {
	t.Helper()
	recs, comments, err := trace.Read(bytes.NewReader(data))
	fromFile, fileErr := trace.ReadFile(path)
	if (err == nil) != (fileErr == nil) {
		t.Fatalf("Read error %v, ReadFile error %v", err, fileErr)
	}
	if err != nil {
		msg := err.Error()
		if strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "line ") {
			t.Fatalf("Read error %q is not one line naming the line", msg)
		}
		num, _, _ := strings.Cut(strings.TrimPrefix(msg, "line "), ":")
		lines := bytes.Count(data, []byte("\n")) + 1
		if n, err := strconv.Atoi(num); err != nil || n < 1 || n > lines {
			t.Fatalf("Read error %q: no line %s in a file of %d lines", msg, num, lines)
		}
		if !strings.HasPrefix(fileErr.Error(), path+": "+msg) {
			t.Fatalf("ReadFile error %q does not name the file", fileErr)
		}
		return nil, false
	}
	if d := cmp.Diff(recs, fromFile, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("Read and ReadFile differ:\n%s", d)
	}
	for _, r := range recs {
		if r.Time < 0 {
			t.Fatalf("record at negative time: %v", r)
		}
	}
	var buf bytes.Buffer
	if err := trace.Write(&buf, recs); err != nil {
		t.Fatal(err)
	}
	back, backComments, err := trace.Read(&buf)
	if err != nil {
		t.Fatalf("a written trace does not read back: %v", err)
	}
	if d := cmp.Diff(recs, back, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("Write then Read changed the records (-read +reread):\n%s", d)
	}
	if len(backComments) != 1 || backComments[0] != trace.Header {
		t.Fatalf("a written trace has comments %q, want the header alone", backComments)
	}
	if trace.Diff(recs, back) != nil {
		t.Fatal("Diff finds a difference between a trace and its rewrite")
	}
	for _, c := range comments {
		if !strings.HasPrefix(strings.TrimSpace(c), "#") {
			t.Fatalf("Read returned %q as a comment", c)
		}
	}
	return recs, true
}
