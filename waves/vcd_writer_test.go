package waves_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/waves"
	"github.com/nisim/nisim/waves/vcd"
)

// smallHeader is the header of the dump built by writeSmall, worked out
// from the declarations: identifier codes "!".."&" in declaration order;
// the unscoped clk goes into a leading "top" module; demo lists its own
// signal (lat) before its child scope bus0; only the wire vector gets a
// bit-select.
const smallHeader = `$version
	nisim waves 1
$end
$comment
	scenario demo seed 7
$end
$timescale 1ps $end
$scope module top $end
$var wire 1 & clk $end
$upscope $end
$scope module demo $end
$var real 64 $ lat $end
$scope module bus0 $end
$var wire 1 ! req $end
$var wire 8 " addr [7:0] $end
$var integer 32 # beats $end
$var string 1 % state $end
$upscope $end
$upscope $end
$enddefinitions $end
`

// smallBody is the value section of writeSmall's dump:
//
//	#0      first step: $dumpvars holds the values after it, in declaration
//	        order (req set to 1, state to IDLE, the rest initial: b0, r0, 0)
//	#30000  req 0, addr 0x1a5 masked to 8 bits = 0xa5 = b10100101, count
//	        3 = b11, lat 2.5, state DATA: declaration order
//	#40000  clk and lat glitch back, state is set to its value: no line
//	#50000  count 4 = b100, lat -0.125, clk 1
//	#60000  Close(60000): the end time
const smallBody = `#0
$dumpvars
1!
b0 "
b0 #
r0 $
sIDLE %
0&
$end
#30000
0!
b10100101 "
b11 #
r2.5 $
sDATA %
#50000
b100 #
r-0.125 $
1&
#60000
`

func writeSmall(o waves.VCDOptions) string {
	GinkgoHelper()
	r := waves.NewRegistry(waves.Options{})
	req := r.Wire("demo.bus0", "req", 1)
	addr := r.Wire("demo.bus0", "addr", 8)
	cnt := r.Integer("demo.bus0", "beats", 32)
	lat := r.Real("demo", "lat")
	st := r.String("demo.bus0", "state")
	clk := r.Wire("", "clk", 1)
	var buf bytes.Buffer
	Expect(r.DumpVCD(&buf, o)).To(Succeed())

	st.SetString(0, "IDLE")
	req.SetBool(0, true)

	st.SetString(30000, "DATA")
	cnt.Set(30000, 3)
	lat.SetReal(30000, 2.5)
	req.SetBool(30000, false)
	addr.Set(30000, 0x1a5)

	clk.SetBool(40000, true)
	lat.SetReal(40000, 1.5)
	clk.SetBool(40000, false)
	lat.SetReal(40000, 2.5)
	st.SetString(40000, "DATA")

	clk.SetBool(50000, true)
	lat.SetReal(50000, -0.125)
	cnt.Set(50000, 4)

	Expect(r.Close(60000)).To(Succeed())
	return buf.String()
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

var _ = Describe("VCD writer", func() {
	It("writes the exact text of a small dump", func() {
		text := writeSmall(waves.VCDOptions{Comment: "scenario demo seed 7"})
		Expect(cmp.Diff(smallHeader+smallBody, text)).To(BeEmpty())
	})

	It("writes $date only when asked, first", func() {
		Expect(writeSmall(waves.VCDOptions{})).NotTo(ContainSubstring("$date"))
		dated := writeSmall(waves.VCDOptions{Date: "Mon Jan  1 00:00:00 1996", Comment: "scenario demo seed 7"})
		Expect(dated).To(Equal("$date\n\tMon Jan  1 00:00:00 1996\n$end\n" + smallHeader + smallBody))
		f := parse(dated)
		Expect(f.Date).To(Equal("Mon Jan  1 00:00:00 1996"))
		Expect(f.Version).To(Equal(waves.Version))
		Expect(f.Comment).To(Equal("scenario demo seed 7"))
	})

	It("omits $comment when there is none", func() {
		text := writeSmall(waves.VCDOptions{})
		Expect(text).To(Equal(strings.Replace(smallHeader, "$comment\n\tscenario demo seed 7\n$end\n", "", 1) + smallBody))
	})

	It("refuses $end inside a header section", func() {
		r := waves.NewRegistry(waves.Options{})
		Expect(r.DumpVCD(io.Discard, waves.VCDOptions{Comment: "a $end b"})).
			To(MatchError("waves: $end inside a VCD header section"))
		Expect(r.DumpVCD(io.Discard, waves.VCDOptions{Date: "$end"})).
			To(MatchError("waves: $end inside a VCD header section"))
	})

	It("writes a dump that the strict reader accepts and reads back", func() {
		f := parse(writeSmall(waves.VCDOptions{}))
		Expect(f.TimescaleNum).To(Equal(1))
		Expect(f.TimescaleUnit).To(Equal("ps"))
		Expect(f.EndTime).To(Equal(int64(60000)))
		var names []string
		for _, v := range f.Vars {
			names = append(names, v.FullName()+" "+v.Type+" "+strconv.Itoa(v.Width)+" "+v.Range)
		}
		// File order: top first, then demo's own signal, then bus0.
		Expect(names).To(Equal([]string{
			"top.clk wire 1 ",
			"demo.lat real 64 ",
			"demo.bus0.req wire 1 ",
			"demo.bus0.addr wire 8 [7:0]",
			"demo.bus0.beats integer 32 ",
			"demo.bus0.state string 1 ",
		}))
		at := func(name string, t int64) string {
			v, err := f.ValueAt(name, t)
			Expect(err).NotTo(HaveOccurred())
			return v.String()
		}
		Expect(at("demo.bus0.addr", 29999)).To(Equal("b00000000"))
		Expect(at("demo.bus0.addr", 30000)).To(Equal("b10100101"))
		Expect(at("demo.bus0.beats", 30000)).To(Equal("b" + strings.Repeat("0", 30) + "11"))
		Expect(at("demo.bus0.state", 0)).To(Equal("sIDLE"))
		Expect(at("demo.bus0.state", 45000)).To(Equal("sDATA"))
		Expect(at("demo.lat", 45000)).To(Equal("r2.5"))
		Expect(at("demo.lat", 50000)).To(Equal("r-0.125"))
		Expect(at("top.clk", 49999)).To(Equal("0"))
		Expect(at("top.clk", 60000)).To(Equal("1"))
		ch, err := f.Changes("top.clk")
		Expect(err).NotTo(HaveOccurred())
		// $dumpvars at 0, then 1 at 50000: the glitch at 40000 left no trace.
		Expect(ch).To(HaveLen(2))
		Expect(ch[1].Time).To(Equal(int64(50000)))
	})

	It("writes the extreme values of every kind", func() {
		text := dump(waves.Options{}, 0, func(r *waves.Registry) {
			w := r.Wire("u", "w", 64)
			n := r.Integer("u", "n", 64)
			one := r.Integer("u", "one", 1)
			x := r.Real("u", "x")
			w.Set(1, math.MaxUint64)
			n.Set(1, 1<<63)
			one.Set(1, 1)
			x.SetReal(1, 1e300)
		})
		// 64 ones; 1 followed by 63 zeros; a 1-bit integer is a vector.
		Expect(body(text)).To(Equal("#0\n$dumpvars\nb0 !\nb0 \"\nb0 #\nr0 $\n$end\n#1\n" +
			"b" + strings.Repeat("1", 64) + " !\n" +
			"b1" + strings.Repeat("0", 63) + " \"\n" +
			"b1 #\n" +
			"r1e+300 $\n"))
		f := parse(text)
		v, err := f.ValueAt("u.w", 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(uintOf(v)).To(Equal(uint64(math.MaxUint64)))
		v, err = f.ValueAt("u.x", 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Real).To(Equal(1e300))
	})

	It("gives two-character identifier codes after the 94th signal", func() {
		var sigs []*waves.Signal
		text := dump(waves.Options{}, 0, func(r *waves.Registry) {
			for i := range 200 {
				sigs = append(sigs, r.Integer("u", fmt.Sprintf("s%03d", i), 8))
			}
			for i, s := range sigs {
				s.Set(5, uint64(i))
			}
		})
		// Codes are '!'+i for i < 94; then bijective base 94, least
		// significant character first: 94 -> "!!", 95 -> `"!`, 188 -> "!#".
		Expect(text).To(ContainSubstring("$var integer 32 ~ s093 $end\n"))
		Expect(text).To(ContainSubstring("$var integer 32 !! s094 $end\n"))
		Expect(text).To(ContainSubstring("$var integer 32 \"! s095 $end\n"))
		Expect(text).To(ContainSubstring("$var integer 32 !\" s188 $end\n"))
		f := parse(text)
		for i := range sigs {
			v, err := f.ValueAt(fmt.Sprintf("u.s%03d", i), 5)
			Expect(err).NotTo(HaveOccurred())
			Expect(uintOf(v)).To(Equal(uint64(i)), "signal %d", i)
		}
	})

	It("round-trips many random changes through the strict reader", func() {
		var buf bytes.Buffer
		run := randomRun(1996, &buf)
		text := buf.String()
		Expect(vcd.Lint(strings.NewReader(text))).To(BeEmpty())
		f := parse(text)
		Expect(len(run.snaps)).To(BeNumerically(">", 1000))
		for i, snap := range run.snaps {
			// The values at the step's time, and just before the next step.
			times := []clock.Time{snap.t}
			if i+1 < len(run.snaps) && run.snaps[i+1].t > snap.t+1 {
				times = append(times, run.snaps[i+1].t-1)
			}
			for _, t := range times {
				got := map[string]string{}
				for name := range snap.vals {
					v, err := f.ValueAt(name, int64(t))
					Expect(err).NotTo(HaveOccurred())
					got[name] = v.String()
				}
				if d := cmp.Diff(snap.vals, got); d != "" {
					Fail(fmt.Sprintf("values at %d (step %d) differ (-shadow +file):\n%s", t, i, d))
				}
			}
		}
		// No unchanged value is ever written: the file holds one $dumpvars
		// entry per signal (the first step is after 0) plus exactly the
		// changes the registry counted.
		recs := 0
		for _, v := range f.Vars {
			ch, err := f.Changes(v.FullName())
			Expect(err).NotTo(HaveOccurred())
			recs += len(ch)
		}
		Expect(uint64(recs)).To(Equal(uint64(len(f.Vars)) + run.changes))
		Expect(f.EndTime).To(Equal(int64(run.end)))
	})

	It("gives byte-identical output for identical runs", func() {
		var a, b, c bytes.Buffer
		randomRun(42, &a)
		randomRun(42, &b)
		randomRun(43, &c)
		Expect(a.Len()).To(BeNumerically(">", 10000))
		Expect(bytes.Equal(a.Bytes(), b.Bytes())).To(BeTrue())
		// And the seed matters, so the comparison above means something.
		Expect(bytes.Equal(a.Bytes(), c.Bytes())).To(BeFalse())
	})

	It("returns write errors from Close", func() {
		r := waves.NewRegistry(waves.Options{})
		a := r.Wire("u", "a", 1)
		Expect(r.DumpVCD(failingWriter{}, waves.VCDOptions{})).To(Succeed())
		a.SetBool(10, true)
		Expect(r.Close(20)).To(MatchError("waves: writing VCD: disk full"))
		Expect(r.Err()).To(MatchError("waves: writing VCD: disk full"))
	})

	It("writes a header and initial values when nothing ever changes", func() {
		text := dump(waves.Options{}, 100, func(r *waves.Registry) {
			r.Wire("u", "a", 1)
			r.String("u", "s")
		})
		Expect(body(text)).To(Equal("#0\n$dumpvars\n0!\nsx \"\n$end\n#100\n"))
		parse(text)
	})

	Context("with a time window", func() {
		// a: 50->1 150->2 250->3 350->4; b: 80->7 300->8.
		script := func(r *waves.Registry) {
			a := r.Integer("u", "a", 8)
			b := r.Integer("u", "b", 8)
			a.Set(50, 1)
			b.Set(80, 7)
			a.Set(150, 2)
			a.Set(250, 3)
			b.Set(300, 8)
			a.Set(350, 4)
		}

		It("folds the values before From into $dumpvars at From and writes nothing after To", func() {
			text := dump(waves.Options{From: 100, To: 300}, 400, script)
			// At 100 a = 1 and b = 7; the changes at 150, 250 and 300 (To
			// itself is inside); a's change at 350 is past To; Close(400)
			// is clipped to To = 300, already the last time.
			Expect(body(text)).To(Equal("#100\n$dumpvars\nb1 !\nb111 \"\n$end\n" +
				"#150\nb10 !\n#250\nb11 !\n#300\nb1000 \"\n"))
			f := parse(text)
			Expect(f.EndTime).To(Equal(int64(300)))
			_, err := f.ValueAt("u.a", 99)
			Expect(err).To(HaveOccurred())
			v, err := f.ValueAt("u.a", 1000)
			Expect(err).NotTo(HaveOccurred())
			Expect(uintOf(v)).To(Equal(uint64(3)))
		})

		It("writes $dumpvars with the values of a step exactly at From", func() {
			text := dump(waves.Options{From: 150}, 200, script)
			// The step at 150 is the first in the window: $dumpvars holds
			// its result (a = 2, b = 7). Close(200) is before the later
			// changes, so nothing is added after #350.
			Expect(body(text)).To(Equal("#150\n$dumpvars\nb10 !\nb111 \"\n$end\n" +
				"#250\nb11 !\n#300\nb1000 \"\n#350\nb100 !\n"))
		})

		It("clips the end time to To", func() {
			text := dump(waves.Options{To: 320}, 400, script)
			// Changes up to 300 are written; the end is clipped to 320.
			Expect(body(text)).To(Equal("#0\n$dumpvars\nb0 !\nb0 \"\n$end\n" +
				"#50\nb1 !\n#80\nb111 \"\n#150\nb10 !\n#250\nb11 !\n#300\nb1000 \"\n#320\n"))
			parse(text)
		})

		It("writes the initial values at From when the window holds no change", func() {
			text := dump(waves.Options{From: 400, To: 500}, 600, script)
			// Every change is before From: $dumpvars at 400 holds the final
			// values (a = 4, b = 8), the end is clipped to 500.
			Expect(body(text)).To(Equal("#400\n$dumpvars\nb100 !\nb1000 \"\n$end\n#500\n"))
		})
	})

	It("opens in GTKWave's vcd2fst", func() {
		tool, err := exec.LookPath("vcd2fst")
		if err != nil {
			Skip("vcd2fst not installed")
		}
		dir := GinkgoT().TempDir()
		in := filepath.Join(dir, "in.vcd")
		out := filepath.Join(dir, "out.fst")
		var buf bytes.Buffer
		randomRun(7, &buf) // every kind, scopes bus0 and bus1, a top-level signal
		Expect(os.WriteFile(in, []byte(writeSmall(waves.VCDOptions{Date: "today", Comment: "gtkwave"})), 0o644)).To(Succeed())
		cmdOut, err := exec.Command(tool, in, out).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "vcd2fst: %s", cmdOut)
		Expect(out).To(BeARegularFile())

		in2 := filepath.Join(dir, "random.vcd")
		Expect(os.WriteFile(in2, buf.Bytes(), 0o644)).To(Succeed())
		cmdOut, err = exec.Command(tool, in2, filepath.Join(dir, "random.fst")).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "vcd2fst: %s", cmdOut)

		// If fst2vcd is there too, the values must survive GTKWave's own
		// reader: convert both files back and compare every variable at
		// every time it changes in the original.
		back, err := exec.LookPath("fst2vcd")
		if err != nil {
			return
		}
		for _, pair := range [][2]string{{in, out}, {in2, filepath.Join(dir, "random.fst")}} {
			orig, err := vcd.ParseFile(pair[0])
			Expect(err).NotTo(HaveOccurred())
			text, err := exec.Command(back, pair[1]).Output()
			Expect(err).NotTo(HaveOccurred())
			conv := parse(string(text))
			Expect(conv.Vars).To(HaveLen(len(orig.Vars)))
			for _, v := range orig.Vars {
				Expect(conv.Lookup(v.FullName())).NotTo(BeNil(), "%s lost by vcd2fst", v.FullName())
				ch, err := orig.Changes(v.FullName())
				Expect(err).NotTo(HaveOccurred())
				for _, c := range ch {
					got, err := conv.ValueAt(v.FullName(), c.Time)
					Expect(err).NotTo(HaveOccurred())
					want, _ := orig.ValueAt(v.FullName(), c.Time)
					Expect(sameValue(got, want)).To(BeTrue(), "%s at %d: %s, want %s", v.FullName(), c.Time, got, want)
				}
			}
		}
	})
})

// sameValue compares values across writers: GTKWave writes a 1-bit
// integer as a scalar, nisim as a vector, so bits compare by number; and
// fst2vcd prints reals with 16 significant digits where nisim writes the
// shortest exact form (17 for some), so reals compare to 1e-15.
func sameValue(a, b vcd.Value) bool {
	na, oka := a.Uint()
	nb, okb := b.Uint()
	if oka && okb {
		return na == nb
	}
	if a.Kind == vcd.RealValue && b.Kind == vcd.RealValue && a.Real != b.Real {
		return math.Abs(a.Real-b.Real) <= 1e-15*math.Abs(b.Real)
	}
	return a.String() == b.String()
}

var _ = Describe("History", func() {
	// Two 8-bit integers, a ("!") and b ('"'):
	// a: 10->1 20->2 30->3 40->4; b: 25->9. Five changes, one per step.
	script := func(r *waves.Registry) {
		a := r.Integer("u", "a", 8)
		b := r.Integer("u", "b", 8)
		a.Set(10, 1)
		a.Set(20, 2)
		b.Set(25, 9)
		a.Set(30, 3)
		a.Set(40, 4) // not flushed: WriteHistory must include it
	}
	const hdr = "$version\n\tnisim waves 1\n$end\n$timescale 1ps $end\n" +
		"$scope module u $end\n$var integer 32 ! a $end\n$var integer 32 \" b $end\n$upscope $end\n" +
		"$enddefinitions $end\n"
	// The window 25..40: the values in effect at 25 (a = 2, b = 9: the
	// change at 25 itself is part of the initial state), then a's changes
	// at 30 and 40.
	const window25 = hdr + "#25\n$dumpvars\nb10 !\nb1001 \"\n$end\n#30\nb11 !\n#40\nb100 !\n"

	history := func(n int, span clock.Time) (string, clock.Time, clock.Time) {
		GinkgoHelper()
		r := waves.NewRegistry(waves.Options{History: n})
		script(r)
		var buf bytes.Buffer
		from, to, err := r.WriteHistory(&buf, span, waves.VCDOptions{})
		Expect(err).NotTo(HaveOccurred())
		return buf.String(), from, to
	}

	It("starts at to-span with the values in effect then and holds exactly the later changes", func() {
		text, from, to := history(100, 15)
		Expect(from).To(Equal(clock.Time(25)))
		Expect(to).To(Equal(clock.Time(40)))
		Expect(cmp.Diff(window25, text)).To(BeEmpty())
		f := parse(text)
		v, err := f.ValueAt("u.a", 25)
		Expect(err).NotTo(HaveOccurred())
		Expect(uintOf(v)).To(Equal(uint64(2)))
	})

	It("rolls back to the initial values for a span reaching time 0", func() {
		text, from, to := history(100, clock.Never)
		Expect(from).To(Equal(clock.Time(0)))
		Expect(to).To(Equal(clock.Time(40)))
		Expect(text).To(Equal(hdr + "#0\n$dumpvars\nb0 !\nb0 \"\n$end\n" +
			"#10\nb1 !\n#20\nb10 !\n#25\nb1001 \"\n#30\nb11 !\n#40\nb100 !\n"))
		parse(text)
	})

	It("starts at the oldest exactly known time once the ring has wrapped", func() {
		// A ring of 3 keeps the last three changes: b@25, a@30, a@40. The
		// state is known exactly from 25 on, so a span of 1000 is cut to
		// 25..40 and the text is the same as with span 15.
		text, from, to := history(3, 1000)
		Expect(from).To(Equal(clock.Time(25)))
		Expect(to).To(Equal(clock.Time(40)))
		Expect(cmp.Diff(window25, text)).To(BeEmpty())
		parse(text)
	})

	It("knows the state at a time whose changes were partly overwritten", func() {
		r := waves.NewRegistry(waves.Options{History: 2})
		a := r.Integer("u", "a", 8)
		b := r.Integer("u", "b", 8)
		a.Set(10, 1)
		b.Set(10, 1)
		a.Set(20, 2)
		// The ring holds b@10 and a@20; a@10 is gone. Rolling a@20 back
		// from the current state still gives the exact state after 10:
		// a = 1, b = 1.
		var buf bytes.Buffer
		from, _, err := r.WriteHistory(&buf, 100, waves.VCDOptions{Comment: "failure"})
		Expect(err).NotTo(HaveOccurred())
		Expect(from).To(Equal(clock.Time(10)))
		Expect(buf.String()).To(Equal(strings.Replace(hdr, "$timescale", "$comment\n\tfailure\n$end\n$timescale", 1) +
			"#10\n$dumpvars\nb1 !\nb1 \"\n$end\n#20\nb10 !\n"))
	})

	It("agrees with a shadow model over a long random run", func() {
		r := waves.NewRegistry(waves.Options{History: 500})
		run := randomRunOn(r, 99, io.Discard)
		// Ask for more than the ring holds: the window is cut to the
		// oldest retained change, and the values at its start must still
		// be exact.
		var buf bytes.Buffer
		from, to, err := r.WriteHistory(&buf, clock.Never, waves.VCDOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(from).To(BeNumerically(">", 0))
		Expect(to).To(Equal(run.snaps[len(run.snaps)-1].t))
		f := parse(buf.String())
		checked := 0
		for _, snap := range run.snaps {
			if snap.t < from {
				continue
			}
			got := map[string]string{}
			for name := range snap.vals {
				v, err := f.ValueAt(name, int64(snap.t))
				Expect(err).NotTo(HaveOccurred())
				got[name] = v.String()
			}
			Expect(cmp.Diff(snap.vals, got)).To(BeEmpty(), "at %d", snap.t)
			checked++
		}
		Expect(checked).To(BeNumerically(">", 10))
		// 500 changes at most: the dump holds them plus the $dumpvars.
		recs := 0
		for _, v := range f.Vars {
			ch, _ := f.Changes(v.FullName())
			recs += len(ch)
		}
		Expect(recs).To(BeNumerically("<=", 500+len(f.Vars)))
	})
})

// snapshot is the shadow model's view of every signal after one step, as
// vcd.Value.String() should print it.
type snapshot struct {
	t    clock.Time
	vals map[string]string
}

type runResult struct {
	snaps   []snapshot
	changes uint64
	end     clock.Time
}

// shadowSig is one signal of the random run and its expected value.
type shadowSig struct {
	sig   *waves.Signal
	name  string // full name in the file
	kind  waves.Kind
	width int
	dw    int // width in the dump: integers are declared 32 or 64 bits
	val   string
}

var states = []string{"IDLE", "ADDR", "DATA", "WAIT_ACK", "x"}

func randomRun(seed uint64, w io.Writer) runResult {
	GinkgoHelper()
	r := waves.NewRegistry(waves.Options{})
	return randomRunOn(r, seed, w)
}

// randomRunOn declares signals of every kind, dumps to w and applies
// random value changes (several per picosecond, some setting a value back)
// while keeping a shadow model of the expected values after each step.
func randomRunOn(r *waves.Registry, seed uint64, w io.Writer) runResult {
	GinkgoHelper()
	var sigs []*shadowSig
	add := func(s *waves.Signal, name string) {
		ss := &shadowSig{sig: s, name: name, kind: s.Kind(), width: s.Width(), dw: s.Width()}
		if ss.kind == waves.Integer {
			ss.dw = 32
			if ss.width > 32 {
				ss.dw = 64
			}
		}
		switch {
		case ss.kind == waves.Wire && ss.width == 1:
			ss.val = "0"
		case ss.kind == waves.Real:
			ss.val = "r0"
		case ss.kind == waves.String:
			ss.val = "sx"
		default:
			ss.val = "b" + strings.Repeat("0", ss.dw)
		}
		sigs = append(sigs, ss)
	}
	for i := range 2 {
		scope := fmt.Sprintf("demo.bus%d", i)
		add(r.Wire(scope, "req", 1), scope+".req")
		add(r.Wire(scope, "addr", 13), scope+".addr")
		add(r.Wire(scope, "data", 64), scope+".data")
		add(r.Integer(scope, "beats", 32), scope+".beats")
		add(r.Integer(scope, "bit", 1), scope+".bit")
		add(r.Real(scope, "lat"), scope+".lat")
		add(r.String(scope, "state"), scope+".state")
	}
	add(r.Integer("demo.ni.Rx.fifo", "occ", 5), "demo.ni.rx.fifo.occ")
	add(r.Wire("", "clk", 1), "top.clk")
	Expect(r.DumpVCD(w, waves.VCDOptions{Comment: fmt.Sprintf("seed %d", seed)})).To(Succeed())

	rnd := rand.New(rand.NewPCG(seed, 0x5eed))
	var res runResult
	t := clock.Time(0)
	for range 2000 {
		t += clock.Time(1 + rnd.IntN(1000))
		for range 1 + rnd.IntN(8) {
			s := sigs[rnd.IntN(len(sigs))]
			switch s.kind {
			case waves.Real:
				var f float64
				switch rnd.IntN(4) {
				case 0:
					f = 0
				case 1:
					f = float64(rnd.IntN(100))
				case 2:
					f = math.Inf(1 - 2*rnd.IntN(2))
				default:
					f = rnd.NormFloat64() * 1e6
				}
				s.sig.SetReal(t, f)
				s.val = "r" + strconv.FormatFloat(f, 'g', -1, 64)
			case waves.String:
				st := states[rnd.IntN(len(states))]
				s.sig.SetString(t, st)
				s.val = "s" + st
			default:
				v := rnd.Uint64()
				if rnd.IntN(2) == 0 {
					v %= 4 // small values, often unchanged
				}
				if s.kind == waves.Wire && s.width == 1 {
					s.sig.SetBool(t, v&1 == 1)
					s.val = strconv.FormatUint(v&1, 10)
				} else {
					s.sig.Set(t, v) // bits above the width are dropped
					mask := uint64(math.MaxUint64)
					if s.width < 64 {
						mask = 1<<s.width - 1
					}
					s.val = fmt.Sprintf("b%0*b", s.dw, v&mask)
				}
			}
		}
		snap := snapshot{t: t, vals: map[string]string{}}
		for _, s := range sigs {
			snap.vals[s.name] = s.val
		}
		res.snaps = append(res.snaps, snap)
	}
	res.end = t + 500
	Expect(r.Close(res.end)).To(Succeed())
	res.changes = r.Changes()
	return res
}
