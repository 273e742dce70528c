package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nisim/nisim/internal/atomicfile"
)

// Context is the number of records shown on each side of the first
// divergence.
const Context = 5

// Mismatch describes where two traces first differ.
type Mismatch struct {
	// Index is the position of the first differing record (0-based); it
	// equals the shorter length when one trace is a prefix of the other.
	Index     int
	Want, Got []Record
	WantLabel string
	GotLabel  string
}

// Diff compares two traces record by record (on their formatted lines) and
// returns nil when they are identical.
func Diff(want, got []Record) *Mismatch {
	n := min(len(want), len(got))
	for i := 0; i < n; i++ {
		if want[i].Format() != got[i].Format() {
			return &Mismatch{Index: i, Want: want, Got: got, WantLabel: "want", GotLabel: "got"}
		}
	}
	if len(want) != len(got) {
		return &Mismatch{Index: n, Want: want, Got: got, WantLabel: "want", GotLabel: "got"}
	}
	return nil
}

// Error implements error with the full report.
func (m *Mismatch) Error() string { return m.Report() }

// Report renders the first divergence: the counts on both sides, the
// Context records before it (common to both), then up to Context+1 records
// of each side from the divergence on, and the per-kind counts that differ.
func (m *Mismatch) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "traces differ at record %d (%s: %d records, %s: %d records)\n",
		m.Index+1, m.WantLabel, len(m.Want), m.GotLabel, len(m.Got))
	start := max(0, m.Index-Context)
	if start < m.Index {
		b.WriteString("  common context:\n")
		for i := start; i < m.Index; i++ {
			fmt.Fprintf(&b, "    %6d  %s\n", i+1, m.Want[i].Format())
		}
	}
	side := func(label string, recs []Record) {
		fmt.Fprintf(&b, "  %s:\n", label)
		if m.Index >= len(recs) {
			b.WriteString("    (ends here)\n")
			return
		}
		for i := m.Index; i < len(recs) && i <= m.Index+Context; i++ {
			mark := " "
			if i == m.Index {
				mark = ">"
			}
			fmt.Fprintf(&b, "  %s %6d  %s\n", mark, i+1, recs[i].Format())
		}
	}
	side(m.WantLabel, m.Want)
	side(m.GotLabel, m.Got)
	if counts := kindCountDiff(m.Want, m.Got); counts != "" {
		fmt.Fprintf(&b, "  record counts by kind (%s/%s): %s\n", m.WantLabel, m.GotLabel, counts)
	}
	return b.String()
}

func kindCountDiff(want, got []Record) string {
	cw, cg := map[string]int{}, map[string]int{}
	for _, r := range want {
		cw[r.Kind]++
	}
	for _, r := range got {
		cg[r.Kind]++
	}
	var kinds []string
	for k := range cw {
		kinds = append(kinds, k)
	}
	for k := range cg {
		if _, ok := cw[k]; !ok {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	var parts []string
	for _, k := range kinds {
		if cw[k] != cg[k] {
			parts = append(parts, fmt.Sprintf("%s %d/%d", k, cw[k], cg[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// ErrNotTrace is DiffFiles' error for a file that holds no record and
// does not start with Header: every trace nisim writes starts with Header,
// even one of a run that recorded nothing, so an empty (or comment-only)
// file without it is not a trace, and comparing two of them would call
// "identical" what may be two failed writes. A file with records but no
// Header is accepted: the records say what it is (hand-written traces and
// the traffic replays of switch/traffic have no header).
var ErrNotTrace = errors.New("not a trace: no record and no \"" + Header + "\" header")

// DiffFiles compares two trace files. A file that is not a trace
// (ErrNotTrace) is an error naming it.
func DiffFiles(a, b string) (*Mismatch, error) {
	ra, err := readTrace(a)
	if err != nil {
		return nil, err
	}
	rb, err := readTrace(b)
	if err != nil {
		return nil, err
	}
	m := Diff(ra, rb)
	if m != nil {
		m.WantLabel, m.GotLabel = a, b
	}
	return m, nil
}

// readTrace is ReadFile refusing a file that is not a trace.
func readTrace(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, comments, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 && (len(comments) == 0 || strings.TrimSpace(comments[0]) != Header) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotTrace)
	}
	return recs, nil
}

// ReadFile reads a trace file; errors name the file and line.
func ReadFile(path string) ([]Record, error) {
	recs, _, err := ReadFileComments(path)
	return recs, err
}

// ReadFileComments reads a trace file and its comment lines (as Read);
// errors name the file and line.
func ReadFileComments(path string) ([]Record, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	recs, comments, err := Read(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, comments, nil
}

// UpdateEnv is the environment variable that makes CheckGolden rewrite
// golden files instead of comparing with them. Only `make golden` sets it;
// CI never does.
const UpdateEnv = "NISIM_UPDATE_GOLDEN"

// Updating reports whether goldens are being regenerated.
func Updating() bool { return os.Getenv(UpdateEnv) == "1" }

// CheckGolden compares got with the golden trace file at path and returns a
// *Mismatch (or a read error) if they differ. Given comments are the
// golden's derivation, kept in the test's source: the file's comment lines
// must be exactly them, so a derivation edited in the source and not
// recorded (or a file whose header was never written) fails too. When
// UpdateEnv is set it rewrites the file instead, with the given comments
// or, when none are given, the file's existing comment lines (the human
// explanation of why the golden is right).
func CheckGolden(path string, got []Record, comments ...string) error {
	if Updating() {
		return writeGolden(path, got, comments)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("golden %s does not exist: run `make golden`, review the file and commit it", path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	want, have, err := Read(f)
	if err != nil {
		return fmt.Errorf("golden %s: %w", path, err)
	}
	if m := Diff(want, got); m != nil {
		m.WantLabel, m.GotLabel = "golden "+path, "this run"
		return m
	}
	return CheckHeader(path, have, comments)
}

// CheckHeader compares a golden file's comment lines (as Read returns them)
// with the comments the test gives (none: nothing to compare) and names
// the first line that differs.
func CheckHeader(path string, have, comments []string) error {
	if len(comments) == 0 {
		return nil
	}
	file := headerLines(have)
	var want []string
	for _, c := range comments {
		want = append(want, strings.Split(c, "\n")...)
	}
	for i := range max(len(file), len(want)) {
		var f, w string
		if i < len(file) {
			f = file[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if f != w {
			return fmt.Errorf("golden %s: header line %d is %q, the test's derivation says %q: run `make golden`, review the file and commit it", path, i+2, f, w)
		}
	}
	return nil
}

// headerLines strips the comment marks off a file's comment lines, less
// the format line.
func headerLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "#") && l != Header {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
		}
	}
	return out
}

func writeGolden(path string, got []Record, comments []string) error {
	if old, err := os.ReadFile(path); err == nil && len(comments) == 0 {
		comments = headerLines(strings.Split(string(old), "\n"))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	if err := Write(&b, got, comments...); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, []byte(b.String()))
}
