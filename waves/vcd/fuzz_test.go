package vcd_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/nisim/nisim/waves/vcd"
)

// FuzzParse checks that Parse and Lint never panic, agree on whether the
// input is valid, and report errors with sensible line numbers; and that
// the queries of a parsed file work.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		nisimExample,
		hdr + "#0\n$dumpvars 1! b10 \" r2.5 # sA $ b1 % $end\n#10\nx!\nbz \"\n",
		hdr + "#0\n1&\n#5\n#3\nb2 \"\nb1010\n$dumpvars\n",
		"$comment x $end $date d $end $scope task t $end $var event 1 ! e [0] $end",
		"",
		"\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := vcd.Parse(bytes.NewReader(data))
		errs := vcd.Lint(bytes.NewReader(data))
		if (err == nil) != (len(errs) == 0) {
			t.Fatalf("Parse error %v but Lint found %d problems", err, len(errs))
		}
		if err != nil {
			var el *vcd.ErrorList
			if !errors.As(err, &el) || len(*el) == 0 || len(*el) > 100 {
				t.Fatalf("Parse returned %#v", err)
			}
			if file != nil {
				t.Fatal("Parse returned a file and an error")
			}
			lines := bytes.Count(data, []byte("\n")) + 1
			for i, e := range errs {
				if e.Line < 1 || e.Line > lines || (i > 0 && e.Line < errs[i-1].Line) || e.Msg == "" {
					t.Fatalf("bad error %d: %v (file has %d lines)", i, e, lines)
				}
			}
			return
		}
		for _, v := range file.Vars {
			if file.Lookup(v.FullName()) != v {
				t.Fatalf("Lookup(%q) is not %v", v.FullName(), v)
			}
			ch, err := file.Changes(v.FullName())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range ch {
				if c.Value.String() == "" && c.Value.Kind != vcd.StringValue {
					t.Fatalf("empty value %#v", c.Value)
				}
				c.Value.Uint()
				got, err := file.ValueAt(v.FullName(), c.Time)
				if err != nil {
					t.Fatal(err)
				}
				if got.Kind == 0 {
					t.Fatalf("ValueAt returned no value")
				}
			}
		}
	})
}
