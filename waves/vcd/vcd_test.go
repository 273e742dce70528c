package vcd_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing/iotest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/waves/vcd"
)

// nisimExample is a dump as nisim's waves package writes it.
const nisimExample = `$version
	nisim waves 1
$end
$timescale 1ps $end
$scope module Demo $end
$scope module Bus[0] $end
$var wire 1 ! req $end
$var wire 8 " addr [7:0] $end
$var integer 32 # count $end
$var real 64 $ lat $end
$var string 1 % state $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
0!
b0 "
b0 #
r0 $
sIDLE %
$end
#30000
1!
b1010 "
b11 #
r2.5 $
sDATA %
#60000
`

// hdr declares one variable of each kind in lines 1-9; a body appended to
// it starts at line 10.
const hdr = `$timescale 1ps $end
$scope module top $end
$var wire 1 ! a $end
$var wire 4 " b [3:0] $end
$var real 64 # r $end
$var string 1 $ s $end
$var integer 32 % n $end
$upscope $end
$enddefinitions $end
`

func mustParse(src string) *vcd.File {
	GinkgoHelper()
	f, err := vcd.Parse(strings.NewReader(src))
	Expect(err).NotTo(HaveOccurred())
	Expect(f).NotTo(BeNil())
	return f
}

func valueAt(f *vcd.File, name string, t int64) vcd.Value {
	GinkgoHelper()
	v, err := f.ValueAt(name, t)
	Expect(err).NotTo(HaveOccurred())
	return v
}

func lint(src string) []vcd.Error {
	return vcd.Lint(strings.NewReader(src))
}

var _ = Describe("Parse", func() {
	Context("on the dump nisim writes", func() {
		var f *vcd.File
		BeforeEach(func() { f = mustParse(nisimExample) })

		It("reads the header", func() {
			Expect(f.Version).To(Equal("nisim waves 1"))
			Expect(f.Date).To(BeEmpty())
			Expect(f.Comment).To(BeEmpty())
			Expect(f.TimescaleNum).To(Equal(1))
			Expect(f.TimescaleUnit).To(Equal("ps"))
			Expect(f.EndTime).To(Equal(int64(60000)))
		})

		It("gives a variable's history as text: numbers in decimal, strings as they are", func() {
			for name, want := range map[string][]string{
				"Demo.Bus[0].addr":  {"0", "10"},
				"Demo.Bus[0].count": {"0", "3"},
				"Demo.Bus[0].state": {"IDLE", "DATA"},
				"Demo.Bus[0].lat":   {"r0", "r2.5"},
			} {
				got, err := f.Values(name)
				Expect(err).NotTo(HaveOccurred())
				Expect(got).To(Equal(want), name)
			}
			_, err := f.Values("Demo.Bus[0].nothing")
			Expect(err).To(MatchError(ContainSubstring("no variable")))
		})

		It("reads the declarations in order", func() {
			var got []string
			for _, v := range f.Vars {
				got = append(got, fmt.Sprintf("%s|%s|%s|%s|%d|%s|%s|%d",
					v.Scope, v.Name, v.Type, v.Kind, v.Width, v.ID, v.Range, v.Line))
			}
			Expect(got).To(Equal([]string{
				"Demo.Bus[0]|req|wire|wire|1|!||7",
				`Demo.Bus[0]|addr|wire|wire|8|"|[7:0]|8`,
				"Demo.Bus[0]|count|integer|integer|32|#||9",
				"Demo.Bus[0]|lat|real|real|64|$||10",
				"Demo.Bus[0]|state|string|string|1|%||11",
			}))
			Expect(f.Vars[1].FullName()).To(Equal("Demo.Bus[0].addr"))
			Expect(f.Lookup("Demo.Bus[0].addr")).To(BeIdenticalTo(f.Vars[1]))
			Expect(f.Lookup("Demo.Bus[0].nope")).To(BeNil())
			Expect(f.Lookup("addr")).To(BeNil())
		})

		It("answers ValueAt", func() {
			v := valueAt(f, "Demo.Bus[0].addr", 45000)
			Expect(v.Kind).To(Equal(vcd.Vector))
			Expect(v.Bits).To(Equal("00001010"))
			n, ok := v.Uint()
			Expect(ok).To(BeTrue())
			Expect(n).To(Equal(uint64(10)))
			Expect(v.String()).To(Equal("b00001010"))

			Expect(valueAt(f, "Demo.Bus[0].state", 29999)).To(Equal(vcd.Value{Kind: vcd.StringValue, Str: "IDLE"}))
			Expect(valueAt(f, "Demo.Bus[0].state", 30000)).To(Equal(vcd.Value{Kind: vcd.StringValue, Str: "DATA"}))
			Expect(valueAt(f, "Demo.Bus[0].req", 0)).To(Equal(vcd.Value{Kind: vcd.Scalar, Bits: "0"}))
			Expect(valueAt(f, "Demo.Bus[0].req", 1<<62)).To(Equal(vcd.Value{Kind: vcd.Scalar, Bits: "1"}))
			Expect(valueAt(f, "Demo.Bus[0].addr", 29999).Bits).To(Equal("00000000"))
			Expect(valueAt(f, "Demo.Bus[0].lat", 30000)).To(Equal(vcd.Value{Kind: vcd.RealValue, Real: 2.5}))
			Expect(valueAt(f, "Demo.Bus[0].lat", 0)).To(Equal(vcd.Value{Kind: vcd.RealValue, Real: 0}))

			count := valueAt(f, "Demo.Bus[0].count", 60000)
			Expect(count.Bits).To(Equal(strings.Repeat("0", 30) + "11"))
			n, ok = count.Uint()
			Expect(ok).To(BeTrue())
			Expect(n).To(Equal(uint64(3)))
		})

		It("rejects ValueAt before the first change or for an unknown name", func() {
			_, err := f.ValueAt("Demo.Bus[0].req", -1)
			Expect(err).To(MatchError(ContainSubstring("no value at time -1")))
			_, err = f.ValueAt("Demo.Bus.req", 0)
			Expect(err).To(MatchError(ContainSubstring(`no variable "Demo.Bus.req"`)))
		})

		It("lists the changes of a variable in file order", func() {
			ch, err := f.Changes("Demo.Bus[0].req")
			Expect(err).NotTo(HaveOccurred())
			Expect(ch).To(Equal([]vcd.Change{
				{Time: 0, Value: vcd.Value{Kind: vcd.Scalar, Bits: "0"}, Line: 17},
				{Time: 30000, Value: vcd.Value{Kind: vcd.Scalar, Bits: "1"}, Line: 24},
			}))
			ch, err = f.Changes("Demo.Bus[0].state")
			Expect(err).NotTo(HaveOccurred())
			Expect(ch).To(HaveLen(2))
			Expect(ch[1]).To(Equal(vcd.Change{Time: 30000, Value: vcd.Value{Kind: vcd.StringValue, Str: "DATA"}, Line: 28}))
			_, err = f.Changes("nope")
			Expect(err).To(HaveOccurred())
		})

		It("gives the same result whatever the read sizes", func() {
			for _, r := range []io.Reader{
				iotest.OneByteReader(strings.NewReader(nisimExample)),
				iotest.HalfReader(strings.NewReader(nisimExample)),
				iotest.DataErrReader(strings.NewReader(nisimExample)),
			} {
				g, err := vcd.Parse(r)
				Expect(err).NotTo(HaveOccurred())
				Expect(g.Vars).To(HaveLen(5))
				for _, v := range f.Vars {
					want, _ := f.Changes(v.FullName())
					got, _ := g.Changes(v.FullName())
					Expect(got).To(Equal(want))
				}
			}
		})

		It("finds nothing to lint", func() {
			Expect(lint(nisimExample)).To(BeEmpty())
		})
	})

	It("extends vectors to the declared width per IEEE 1364-2005 18.2.1", func() {
		f := mustParse(hdr + "#0\nb1 \"\n#1\nbx \"\n#2\nbZ1 \"\n#3\nB01 \"\n#4\nb1X \"\n#5\nb1010 \"\n")
		want := []string{"0001", "xxxx", "zzz1", "0001", "001x", "1010"}
		for i, w := range want {
			Expect(valueAt(f, "top.b", int64(i)).Bits).To(Equal(w), "time %d", i)
		}
		_, ok := valueAt(f, "top.b", 1).Uint()
		Expect(ok).To(BeFalse())
	})

	It("accepts upper-case scalar values and lower-cases them", func() {
		f := mustParse(hdr + "#0\nX!\n#1\nZ!\n#2\nx!\n#3\nz!\n#4\n1!\n")
		for i, w := range []string{"x", "z", "x", "z", "1"} {
			Expect(valueAt(f, "top.a", int64(i))).To(Equal(vcd.Value{Kind: vcd.Scalar, Bits: w}))
		}
	})

	It("keeps every change of one time and lets the last one win", func() {
		f := mustParse(hdr + "#0\n0!\n1!\n0!\n#0\n1!\n#5\n")
		ch, err := f.Changes("top.a")
		Expect(err).NotTo(HaveOccurred())
		Expect(ch).To(HaveLen(4))
		for _, c := range ch {
			Expect(c.Time).To(BeZero())
		}
		Expect(valueAt(f, "top.a", 0).Bits).To(Equal("1"))
		Expect(valueAt(f, "top.a", 4).Bits).To(Equal("1"))
		Expect(f.EndTime).To(Equal(int64(5)))
	})

	It("applies a change to every alias of an identifier code", func() {
		f := mustParse(`$timescale 10 ns $end
$scope module top $end
$var wire 4 ! bus [3:0] $end
$scope module sub $end
$var reg 4 ! port [3:0] $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
b101 !
`)
		Expect(f.Vars).To(HaveLen(2))
		Expect(f.Vars[1].FullName()).To(Equal("top.sub.port"))
		Expect(valueAt(f, "top.bus", 0).Bits).To(Equal("0101"))
		Expect(valueAt(f, "top.sub.port", 0).Bits).To(Equal("0101"))
		Expect(f.TimescaleNum).To(Equal(10))
		Expect(f.TimescaleUnit).To(Equal("ns"))
	})

	It("lets white space separate tokens anywhere", func() {
		src := "$date Mon Jan  1 $end $version\r\n\tv\t1\r\n$end\r\n" +
			"$timescale\n\t100\n\tfs\n$end $scope\nmodule\nm\n$end $var\twire 2 ab\n" +
			"w [1:0]\n$end $upscope $end\n$enddefinitions\n$end #7 b11 ab #8\r\nb1 ab\n\n"
		f := mustParse(src)
		Expect(f.Date).To(Equal("Mon Jan  1"))
		Expect(f.Version).To(Equal("v\t1"))
		Expect(f.TimescaleNum).To(Equal(100))
		Expect(f.TimescaleUnit).To(Equal("fs"))
		Expect(valueAt(f, "m.w", 7).Bits).To(Equal("11"))
		ch, _ := f.Changes("m.w")
		Expect(ch[1]).To(Equal(vcd.Change{Time: 8, Value: vcd.Value{Kind: vcd.Vector, Bits: "01"}, Line: 15}))
	})

	DescribeTable("accepts every timescale form",
		func(ts string, num int, unit string) {
			f := mustParse(strings.Replace(hdr, "$timescale 1ps $end", ts, 1))
			Expect(f.TimescaleNum).To(Equal(num))
			Expect(f.TimescaleUnit).To(Equal(unit))
		},
		Entry(nil, "$timescale 1ps $end", 1, "ps"),
		Entry(nil, "$timescale 1 ps $end", 1, "ps"),
		Entry(nil, "$timescale 10 ns $end", 10, "ns"),
		Entry(nil, "$timescale 100us $end", 100, "us"),
		Entry(nil, "$timescale\n\t1 ms\n$end", 1, "ms"),
		Entry(nil, "$timescale 10s $end", 10, "s"),
		Entry(nil, "$timescale 100 fs $end", 100, "fs"),
	)

	It("keeps header comments and accepts comments anywhere", func() {
		f := mustParse(`$comment
  scenario: smoke, seed 7
$end
$timescale $comment inside $end 1ps $end
$comment second $end
$scope module top $comment in scope $end $end
$var wire 1 ! a $comment in var $end $end
$upscope $end
$enddefinitions $end
$comment body $end
#0
$dumpvars
$comment in dumpvars $end
1!
$end
$comment $var wire 1 " fake $end
#1
`)
		Expect(f.Comment).To(Equal("scenario: smoke, seed 7\nsecond"))
		Expect(f.Vars).To(HaveLen(1))
		Expect(valueAt(f, "top.a", 0).Bits).To(Equal("1"))
		Expect(f.EndTime).To(Equal(int64(1)))
	})

	It("accepts $dumpall, $dumpoff and $dumpon sections", func() {
		f := mustParse(hdr + `#0
$dumpvars 1! b0 " r1e3 # sA $ b0 % $end
#10
$dumpoff x! bx " $end
#20
$dumpon 0! b1 " $end
#30
$dumpall 0! b1 " r-0.5 # sB $ b1 % $end
`)
		Expect(valueAt(f, "top.b", 15).Bits).To(Equal("xxxx"))
		Expect(valueAt(f, "top.b", 20).Bits).To(Equal("0001"))
		Expect(valueAt(f, "top.r", 5).Real).To(Equal(1000.0))
		Expect(valueAt(f, "top.r", 30).Real).To(Equal(-0.5))
	})

	It("accepts IEEE and extension types, reals of size 32 and empty strings", func() {
		var b strings.Builder
		b.WriteString("$timescale 1ns $end\n$scope module top $end\n")
		types := []string{"event", "integer", "parameter", "reg", "supply0", "supply1", "time", "tri",
			"triand", "trior", "trireg", "tri0", "tri1", "wand", "wire", "wor", "logic", "bit", "int"}
		for i, t := range types {
			fmt.Fprintf(&b, "$var %s 1 %c v%d $end\n", t, '!'+i, i)
		}
		b.WriteString("$var real 32 R x $end\n$var realtime 64 T y $end\n$var string 0 S z $end\n")
		for _, s := range []string{"begin", "fork", "function", "task", "generate", "struct", "union",
			"class", "interface", "package", "program"} {
			fmt.Fprintf(&b, "$scope %s %s $end $upscope $end\n", s, s)
		}
		b.WriteString("$upscope $end\n$enddefinitions $end\n#0\n1!\nr1 R\nr2 T\ns S\n")
		f := mustParse(b.String())
		Expect(f.Vars).To(HaveLen(len(types) + 3))
		Expect(f.Lookup("top.v1").Kind).To(Equal(vcd.Integer))
		Expect(f.Lookup("top.x").Kind).To(Equal(vcd.Real))
		Expect(valueAt(f, "top.z", 0)).To(Equal(vcd.Value{Kind: vcd.StringValue}))
		Expect(valueAt(f, "top.z", 0).String()).To(Equal("s"))
	})

	It("reads a file without value changes", func() {
		f := mustParse(hdr)
		Expect(f.EndTime).To(BeZero())
		_, err := f.ValueAt("top.a", 0)
		Expect(err).To(MatchError(ContainSubstring("never changes")))
		ch, err := f.Changes("top.a")
		Expect(err).NotTo(HaveOccurred())
		Expect(ch).To(BeEmpty())
	})

	It("handles tokens longer than the read buffer", func() {
		long := strings.Repeat("Q", 200_000)
		digits := strings.Repeat("1", 100_000)
		src := strings.Replace(hdr, "$var integer 32 % n $end", "$var wire 100000 % n $end", 1) +
			"#0\ns" + long + " $\nb" + digits + " %\n#1\n"
		f := mustParse(src)
		Expect(valueAt(f, "top.s", 1).Str).To(Equal(long))
		v := valueAt(f, "top.n", 0)
		Expect(v.Bits).To(Equal(digits))
		_, ok := v.Uint()
		Expect(ok).To(BeFalse())
		ch, _ := f.Changes("top.n")
		Expect(ch[0].Line).To(Equal(12))
	})

	It("reads many changes across buffer boundaries", func() {
		var b strings.Builder
		b.WriteString(hdr)
		for t := 0; t < 20000; t++ {
			fmt.Fprintf(&b, "#%d\n%d!\nb%b \"\nr%d.5 #\nsS%d $\nb%b %%\n", t*10, t%2, t%16, t, t, t)
		}
		f := mustParse(b.String())
		Expect(f.EndTime).To(Equal(int64(199990)))
		for _, t := range []int64{0, 12345, 99999, 199990} {
			i := t / 10
			n, ok := valueAt(f, "top.n", t).Uint()
			Expect(ok).To(BeTrue())
			Expect(n).To(Equal(uint64(i)))
			n, _ = valueAt(f, "top.b", t).Uint()
			Expect(n).To(Equal(uint64(i % 16)))
			Expect(valueAt(f, "top.s", t).Str).To(Equal(fmt.Sprintf("S%d", i)))
			Expect(valueAt(f, "top.r", t).Real).To(Equal(float64(i) + 0.5))
		}
		ch, _ := f.Changes("top.a")
		Expect(ch).To(HaveLen(20000))
		Expect(ch[19999].Line).To(Equal(9 + 19999*6 + 2))
	})
})

var _ = Describe("Value", func() {
	It("formats like a dump", func() {
		Expect(vcd.Value{Kind: vcd.Scalar, Bits: "1"}.String()).To(Equal("1"))
		Expect(vcd.Value{Kind: vcd.Vector, Bits: "1010"}.String()).To(Equal("b1010"))
		Expect(vcd.Value{Kind: vcd.RealValue, Real: 2.5}.String()).To(Equal("r2.5"))
		Expect(vcd.Value{Kind: vcd.StringValue, Str: "IDLE"}.String()).To(Equal("sIDLE"))
		Expect(vcd.Value{}.String()).To(BeEmpty())
	})

	It("converts 0/1 digits to a number", func() {
		for _, c := range []struct {
			v  vcd.Value
			n  uint64
			ok bool
		}{
			{vcd.Value{Kind: vcd.Scalar, Bits: "1"}, 1, true},
			{vcd.Value{Kind: vcd.Vector, Bits: "00001010"}, 10, true},
			{vcd.Value{Kind: vcd.Vector, Bits: strings.Repeat("1", 64)}, 1<<64 - 1, true},
			{vcd.Value{Kind: vcd.Vector, Bits: strings.Repeat("0", 100) + "101"}, 5, true},
			{vcd.Value{Kind: vcd.Vector, Bits: "1" + strings.Repeat("0", 64)}, 0, false},
			{vcd.Value{Kind: vcd.Vector, Bits: "10x1"}, 0, false},
			{vcd.Value{Kind: vcd.Scalar, Bits: "z"}, 0, false},
			{vcd.Value{Kind: vcd.RealValue, Real: 1}, 0, false},
			{vcd.Value{Kind: vcd.StringValue, Str: "1"}, 0, false},
			{vcd.Value{}, 0, false},
		} {
			n, ok := c.v.Uint()
			Expect(ok).To(Equal(c.ok), "%#v", c.v)
			Expect(n).To(Equal(c.n), "%#v", c.v)
		}
	})

	It("names its kinds", func() {
		Expect(vcd.Vector.String()).To(Equal("vector"))
		Expect(vcd.StringValue.String()).To(Equal("string"))
		Expect(vcd.Integer.String()).To(Equal("integer"))
		Expect(vcd.Real.String()).To(Equal("real"))
	})
})

var _ = Describe("errors", func() {
	It("returns an *ErrorList from Parse with all errors in line order", func() {
		src := hdr + "#0\n1&\n#5\n#3\nb2 \"\n"
		f, err := vcd.Parse(strings.NewReader(src))
		Expect(f).To(BeNil())
		var el *vcd.ErrorList
		Expect(errors.As(err, &el)).To(BeTrue())
		Expect(*el).To(Equal(vcd.ErrorList{
			{Line: 11, Msg: `undeclared identifier "&"`},
			{Line: 13, Msg: "time #3 goes backwards (previous #5)"},
			{Line: 14, Msg: `invalid digit '2' in vector value "b2" (want 0, 1, x or z)`},
		}))
		Expect(err.Error()).To(Equal(`line 11: undeclared identifier "&" (and 2 more)`))
		Expect((*el)[0].Error()).To(Equal(`line 11: undeclared identifier "&"`))
		Expect(lint(src)).To(Equal([]vcd.Error(*el)))
	})

	It("sorts errors reported late by line", func() {
		errs := lint(hdr + "#0\n$dumpvars\n1&\n")
		Expect(errs).To(Equal([]vcd.Error{
			{Line: 11, Msg: "$dumpvars section has no $end (end of file)"},
			{Line: 12, Msg: `undeclared identifier "&"`},
		}))
		Expect(vcd.ErrorList(errs[:1]).Error()).To(Equal("line 11: $dumpvars section has no $end (end of file)"))
	})

	It("stops Parse at 100 errors but lets Lint report them all", func() {
		src := hdr + "#0\n" + strings.Repeat("1&\n", 250)
		_, err := vcd.Parse(strings.NewReader(src))
		var el *vcd.ErrorList
		Expect(errors.As(err, &el)).To(BeTrue())
		Expect(*el).To(HaveLen(100))
		Expect(err.Error()).To(HaveSuffix("(and 99 more)"))
		Expect(lint(src)).To(HaveLen(250))
	})

	It("reports read errors", func() {
		r := io.MultiReader(strings.NewReader(hdr+"#0\n"), iotest.ErrReader(errors.New("disk on fire")))
		errs := vcd.Lint(r)
		Expect(errs).To(Equal([]vcd.Error{{Line: 11, Msg: "read error: disk on fire"}}))
	})

	It("LintFile tells a path that cannot be linted from a VCD with problems, naming the path once", func() {
		// A directory used to be linted as a file: one "read error" at
		// line 1 that repeated the path, exit status 1 instead of 2.
		dir := GinkgoT().TempDir()
		errs, err := vcd.LintFile(dir)
		Expect(errs).To(BeNil())
		Expect(err).To(MatchError(dir + ": is a directory, not a VCD file"))
		missing := filepath.Join(dir, "none.vcd")
		_, err = vcd.LintFile(missing)
		Expect(err).To(MatchError(missing + ": no such file or directory"))
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
		good, bad := filepath.Join(dir, "good.vcd"), filepath.Join(dir, "bad.vcd")
		Expect(os.WriteFile(good, []byte(hdr+"#0\n"), 0o644)).To(Succeed())
		Expect(os.WriteFile(bad, []byte(hdr+"#10\n#5\n"), 0o644)).To(Succeed())
		errs, err = vcd.LintFile(good)
		Expect(err).NotTo(HaveOccurred())
		Expect(errs).To(BeEmpty())
		errs, err = vcd.LintFile(bad)
		Expect(err).NotTo(HaveOccurred())
		Expect(errs).To(HaveLen(1))
	})

	It("reports binary data once and stops", func() {
		bin := make([]byte, 4096)
		for i := range bin {
			bin[i] = byte(i * 7)
		}
		errs := vcd.Lint(bytes.NewReader(bin))
		Expect(errs).To(HaveLen(1))
		Expect(errs[0].Msg).To(ContainSubstring("binary data"))
	})
})

var _ = Describe("ParseFile", func() {
	It("parses a file and wraps errors with its path", func() {
		dir := GinkgoT().TempDir()
		good := filepath.Join(dir, "good.vcd")
		Expect(os.WriteFile(good, []byte(nisimExample), 0o644)).To(Succeed())
		f, err := vcd.ParseFile(good)
		Expect(err).NotTo(HaveOccurred())
		Expect(valueAt(f, "Demo.Bus[0].addr", 45000).Bits).To(Equal("00001010"))

		bad := filepath.Join(dir, "bad.vcd")
		Expect(os.WriteFile(bad, []byte(hdr+"#0\n1&\n"), 0o644)).To(Succeed())
		_, err = vcd.ParseFile(bad)
		Expect(err).To(MatchError(bad + `: line 11: undeclared identifier "&"`))
		var el *vcd.ErrorList
		Expect(errors.As(err, &el)).To(BeTrue())

		_, err = vcd.ParseFile(filepath.Join(dir, "missing.vcd"))
		Expect(err).To(MatchError(os.ErrNotExist))
	})
})

// hdrWith returns hdr with one line replaced.
func hdrWith(old, new string) string {
	if !strings.Contains(hdr, old) {
		panic("hdrWith: no " + old)
	}
	return strings.Replace(hdr, old, new, 1)
}

const scopeTop = "$timescale 1ps $end\n$scope module top $end\n" // lines 1-2

var _ = DescribeTable("rejects malformed input",
	func(src string, line int, msg string, count int) {
		errs := lint(src)
		Expect(errs).To(ContainElement(vcd.Error{Line: line, Msg: msg}), "all errors: %v", errs)
		Expect(errs).To(HaveLen(count), "all errors: %v", errs)
		_, err := vcd.Parse(strings.NewReader(src))
		var el *vcd.ErrorList
		Expect(errors.As(err, &el)).To(BeTrue())
		Expect([]vcd.Error(*el)).To(Equal(errs))
	},
	// Files as a whole.
	Entry("empty file", "", 1, "empty file", 1),
	Entry("white space only", "\n \t\n", 1, "empty file", 1),
	Entry("NUL bytes", "$date\x00\x01 $end", 1, "control character 0x00: binary data, not a VCD text file", 1),
	Entry("control character in the body", hdr+"#0\n1\x01!\n", 11,
		"control character 0x01: binary data, not a VCD text file", 1),
	Entry("invalid UTF-8", "$comment caf\xe9 $end\n", 1, "invalid UTF-8: not a VCD text file", 1),

	// Sections.
	Entry("unknown keyword in the header", "$timescale 1ps $end\n$foo bar $end\n"+hdr[20:], 2,
		`unknown keyword "$foo"`, 1),
	Entry("unknown keyword in the body", hdr+"#0\n$dumpports 1! $end\n", 11, `unknown keyword "$dumpports"`, 1),
	Entry("end of file inside a header section", scopeTop+"$var wire 1 ! a\n", 3,
		"$var section has no $end (end of file)", 3),
	Entry("end of file inside a comment", hdr+"#0\n$comment never closed\n1!\n", 11,
		"$comment section has no $end (end of file)", 1),
	Entry("$scope without $end before the next keyword", "$timescale 1ps $end\n$scope module top\n"+hdr[43:], 2,
		"$scope section has no $end", 1),
	Entry("$end without a section in the header", scopeTop+"$end\n$upscope $end\n$enddefinitions $end\n", 3,
		"$end without a section", 1),
	Entry("$end without a section in the body", hdr+"#0\n$end\n", 11, "$end without a section", 1),
	Entry("junk in the header", "$timescale 1ps $end\nhello world\nagain\n$scope module top $end\n"+hdr[43:], 2,
		`unexpected text "hello" outside a section`, 1),
	Entry("duplicate $date", "$date a $end\n$date b $end\n"+hdr, 2, "duplicate $date (first at line 1)", 1),
	Entry("duplicate $version", "$version a $end\n$version b $end\n"+hdr, 2,
		"duplicate $version (first at line 1)", 1),

	// $timescale.
	Entry("missing $timescale", hdr[20:], 8, "missing $timescale", 1),
	Entry("timescale 2ps", hdrWith("1ps", "2ps"), 1,
		`malformed $timescale "2ps": want 1, 10 or 100 followed by s, ms, us, ns, ps or fs`, 1),
	Entry("timescale 1 xs", hdrWith("1ps", "1 xs"), 1,
		`malformed $timescale "1 xs": want 1, 10 or 100 followed by s, ms, us, ns, ps or fs`, 1),
	Entry("timescale without unit", hdrWith("1ps", "10"), 1,
		`malformed $timescale "10": want 1, 10 or 100 followed by s, ms, us, ns, ps or fs`, 1),
	Entry("timescale with three tokens", hdrWith("1ps", "1 ps x"), 1,
		`malformed $timescale "1 ps x": want 1, 10 or 100 followed by s, ms, us, ns, ps or fs`, 1),
	Entry("empty timescale", hdrWith("1ps ", ""), 1,
		`malformed $timescale "": want 1, 10 or 100 followed by s, ms, us, ns, ps or fs`, 1),
	Entry("upper-case unit", hdrWith("1ps", "1PS"), 1,
		`malformed $timescale "1PS": want 1, 10 or 100 followed by s, ms, us, ns, ps or fs`, 1),
	Entry("duplicate $timescale", "$timescale 1ps $end\n"+hdr, 2, "duplicate $timescale (first at line 1)", 1),

	// Scopes.
	Entry("$scope without a name", hdrWith("$scope module top $end", "$scope module $end"), 2,
		"$scope needs a scope type and a name, got 1 token(s)", 1),
	Entry("$scope with three tokens", hdrWith("$scope module top $end", "$scope module top x $end"), 2,
		"$scope needs a scope type and a name, got 3 token(s)", 1),
	Entry("unknown scope type", hdrWith("$scope module top $end", "$scope entity top $end"), 2,
		`unknown scope type "entity"`, 1),
	Entry("$upscope without an open scope", hdrWith("$upscope $end", "$upscope $end\n$upscope $end"), 9,
		"$upscope without an open $scope", 1),
	Entry("text in $upscope", hdrWith("$upscope $end", "$upscope top $end"), 8, "unexpected text in $upscope", 1),
	Entry("scopes open at $enddefinitions", hdrWith("$upscope $end\n", ""), 8,
		`1 scope(s) still open at the end of the definitions (innermost "top", opened at line 2)`, 1),

	// Variables.
	Entry("$var with three tokens", hdrWith("$var wire 1 ! a $end", "$var wire 1 ! $end"), 3,
		"$var needs a type, a size, an identifier code and a reference (and an optional bit-select), got 3 token(s)", 1),
	Entry("$var with six tokens", hdrWith("$var wire 1 ! a $end", "$var wire 1 ! a [0] x $end"), 3,
		"$var needs a type, a size, an identifier code and a reference (and an optional bit-select), got 6 token(s)", 1),
	Entry("unknown variable type", hdrWith("$var wire 1 ! a $end", "$var wyre 1 ! a $end"), 3,
		`unknown variable type "wyre"`, 1),
	Entry("size not a number", hdrWith("$var wire 1 ! a $end", "$var wire x ! a $end"), 3,
		`size "x" is not a positive decimal integer`, 1),
	Entry("size zero", hdrWith("$var wire 1 ! a $end", "$var wire 0 ! a $end"), 3,
		`size "0" is not a positive decimal integer`, 1),
	Entry("negative size", hdrWith("$var wire 1 ! a $end", "$var wire -1 ! a $end"), 3,
		`size "-1" is not a positive decimal integer`, 1),
	Entry("signed size", hdrWith("$var wire 1 ! a $end", "$var wire +1 ! a $end"), 3,
		`size "+1" is not a positive decimal integer`, 1),
	Entry("huge size", hdrWith("$var wire 1 ! a $end", "$var wire 99999999999 ! a $end"), 3,
		"size 16777217 is too large (at most 16777216)", 1),
	Entry("real of size 16", hdrWith("$var real 64 # r $end", "$var real 16 # r $end"), 5,
		"real variable must have size 32 or 64, not 16", 1),
	Entry("identifier code outside '!'..'~'", hdrWith("$var wire 1 ! a $end", "$var wire 1 é a $end"), 3,
		`identifier code "é" has a character outside '!'..'~'`, 1),
	Entry("$var outside any scope", "$timescale 1ps $end\n$var wire 1 ! a $end\n$enddefinitions $end\n", 2,
		"$var outside any $scope", 1),
	Entry("same full name twice", hdrWith("$var wire 1 ! a $end", "$var wire 1 ! a $end\n$var wire 1 & a $end"), 4,
		`"top.a" is already declared at line 3`, 1),
	Entry("bit-select narrower than the size", hdrWith(`$var wire 4 " b [3:0] $end`, `$var wire 8 " b [3:0] $end`), 4,
		"bit-select [3:0] is 4 bit(s) wide but the size is 8", 1),
	Entry("single-bit select on a vector", hdrWith(`$var wire 4 " b [3:0] $end`, `$var wire 4 " b [3] $end`), 4,
		"bit-select [3] is 1 bit(s) wide but the size is 4", 1),
	Entry("malformed bit-select", hdrWith(`$var wire 4 " b [3:0] $end`, `$var wire 4 " b [3-0] $end`), 4,
		`malformed bit-select "[3-0]"`, 1),
	Entry("alias with another size", hdrWith(`$var wire 4 " b [3:0] $end`, `$var wire 4 ! b [3:0] $end`), 4,
		`identifier code "!" is already declared at line 3 as wire 1; an alias needs the same size and value kind`, 1),

	// $enddefinitions.
	Entry("missing $enddefinitions at the end of the file", hdr[:len(hdr)-21], 8,
		"missing $enddefinitions (end of file in the header)", 1),
	Entry("missing $enddefinitions before #0", hdr[:len(hdr)-21]+"#0\n1!\n", 9,
		"missing $enddefinitions before the first #time", 1),
	Entry("missing $enddefinitions before $dumpvars", hdr[:len(hdr)-21]+"$dumpvars 1! $end\n", 9,
		"missing $enddefinitions before $dumpvars", 2),
	Entry("text in $enddefinitions", hdrWith("$enddefinitions $end", "$enddefinitions now $end"), 9,
		"unexpected text in $enddefinitions", 1),
	Entry("$var after $enddefinitions", hdr+"$var wire 1 & c $end\n", 10, "$var after $enddefinitions", 1),
	Entry("$scope after $enddefinitions", hdr+"#0\n$scope module x $end\n", 11, "$scope after $enddefinitions", 1),
	Entry("$upscope after $enddefinitions", hdr+"$upscope $end\n", 10, "$upscope after $enddefinitions", 1),
	Entry("$timescale after $enddefinitions", hdr+"$timescale 1ns $end\n", 10,
		"$timescale after $enddefinitions", 1),
	Entry("$version after $enddefinitions", hdr+"$version x $end\n", 10, "$version after $enddefinitions", 1),
	Entry("duplicate $enddefinitions", hdr+"$enddefinitions $end\n", 10, "duplicate $enddefinitions", 1),

	// Times.
	Entry("change before the first #time", hdr+"1!\n0!\n#0\n", 10, "value change before the first #time", 1),
	Entry("$dumpvars before the first #time", hdr+"$dumpvars\n1!\n$end\n", 11,
		"value change before the first #time", 1),
	Entry("# alone", hdr+"#\n", 10, `malformed time "#": want # followed by a non-negative decimal`, 1),
	Entry("negative time", hdr+"#-5\n", 10, `malformed time "#-5": want # followed by a non-negative decimal`, 1),
	Entry("time with letters", hdr+"#10ns\n", 10, `malformed time "#10ns": want # followed by a non-negative decimal`, 1),
	Entry("time too large", hdr+"#99999999999999999999\n", 10, `time "#99999999999999999999" is too large`, 1),
	Entry("time going backwards", hdr+"#10\n#10\n#9\n", 12, "time #9 goes backwards (previous #10)", 1),

	// Value changes.
	Entry("undeclared identifier", hdr+"#0\n1&\n", 11, `undeclared identifier "&"`, 1),
	Entry("undeclared identifier after a vector", hdr+"#0\nb1 &\n", 11, `undeclared identifier "&"`, 1),
	Entry("scalar without identifier", hdr+"#0\n1 !\n", 11, `scalar value change "1" has no identifier code (it must follow the value without a space)`, 1),
	Entry("scalar without identifier at the end of the file", hdr+"#0\n1", 11,
		`scalar value change "1" has no identifier code (it must follow the value without a space)`, 1),
	Entry("malformed value change", hdr+"#0\nq!\n", 11, `malformed value change "q!"`, 1),
	Entry("scalar on a vector", hdr+"#0\n1\"\n", 11, `scalar value change on "top.b", which has size 4`, 1),
	Entry("scalar on an integer", hdr+"#0\n0%\n", 11, `scalar value change on "top.n", which has size 32`, 1),
	Entry("scalar on a real", hdr+"#0\n0#\n", 11, `scalar value change on real variable "top.r"`, 1),
	Entry("scalar on a string", hdr+"#0\n1$\n", 11, `scalar value change on string variable "top.s"`, 1),
	Entry("vector with a bad digit", hdr+"#0\nb10u1 \"\n", 11,
		`invalid digit 'u' in vector value "b10u1" (want 0, 1, x or z)`, 1),
	Entry("vector without digits", hdr+"#0\nb \"\n", 11, `vector value "b" has no digits`, 1),
	Entry("vector without identifier", hdr+"#0\nb1010\n#10\n", 11,
		`value change "b1010" has no identifier code on its line`, 1),
	Entry("vector without identifier at the end of the file", hdr+"#0\nb1010", 11,
		`value change "b1010" has no identifier code on its line`, 1),
	Entry("vector too wide", hdr+"#0\nb10101 \"\n", 11,
		`width mismatch: vector value "b10101" has 5 digits but "top.b" has size 4`, 1),
	Entry("vector on a real", hdr+"#0\nb1 #\n", 11, `vector value change on real variable "top.r"`, 1),
	Entry("vector on a string", hdr+"#0\nb1 $\n", 11, `vector value change on string variable "top.s"`, 1),
	Entry("real on a wire", hdr+"#0\nr1.5 \"\n", 11, `real value change on wire variable "top.b"`, 1),
	Entry("real on a string", hdr+"#0\nr1.5 $\n", 11, `real value change on string variable "top.s"`, 1),
	Entry("unparsable real", hdr+"#0\nr1.5.2 #\n", 11, `malformed real value "r1.5.2"`, 1),
	Entry("real without digits", hdr+"#0\nr #\n", 11, `malformed real value "r"`, 1),
	Entry("real out of range", hdr+"#0\nr1e999 #\n", 11, `malformed real value "r1e999"`, 1),
	Entry("string on an integer", hdr+"#0\nsIDLE %\n", 11, `string value change on integer variable "top.n"`, 1),
	Entry("string on a real", hdr+"#0\nsIDLE #\n", 11, `string value change on real variable "top.r"`, 1),
	Entry("string without identifier", hdr+"#0\nsIDLE\n#1\n", 11,
		`value change "sIDLE" has no identifier code on its line`, 1),

	// Dump sections.
	Entry("$dumpvars without $end before #", hdr+"#0\n$dumpvars\n1!\n#10\n", 11, "$dumpvars section has no $end", 1),
	Entry("$dumpvars without $end at the end of the file", hdr+"#0\n$dumpvars\n1!\n", 11,
		"$dumpvars section has no $end (end of file)", 1),
	Entry("$dumpall without $end", hdr+"#0\n$dumpall 1!\n$dumpoff x! $end\n", 11, "$dumpall section has no $end", 1),
	Entry("$dumpoff without $end", hdr+"#0\n$dumpoff x!\n#5\n", 11, "$dumpoff section has no $end", 1),
	Entry("$dumpon without $end", hdr+"#0\n$dumpon 1!\n$var wire 1 & c $end\n", 11, "$dumpon section has no $end", 2),
)
