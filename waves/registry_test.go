package waves_test

import (
	"bytes"
	"math"
	"strings"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/waves"
	"github.com/nisim/nisim/waves/vcd"
)

// dump runs fn on a fresh registry that writes a VCD into a buffer, closes
// the registry at end and returns the text.
func dump(opts waves.Options, end clock.Time, fn func(r *waves.Registry)) string {
	GinkgoHelper()
	r := waves.NewRegistry(opts)
	var buf bytes.Buffer
	Expect(r.DumpVCD(&buf, waves.VCDOptions{})).To(Succeed())
	fn(r)
	Expect(r.Close(end)).To(Succeed())
	return buf.String()
}

// body returns the part of a dump after "$enddefinitions $end\n".
func body(text string) string {
	GinkgoHelper()
	_, after, found := strings.Cut(text, "$enddefinitions $end\n")
	Expect(found).To(BeTrue(), "no $enddefinitions in\n%s", text)
	return after
}

func parse(text string) *vcd.File {
	GinkgoHelper()
	f, err := vcd.Parse(strings.NewReader(text))
	Expect(err).NotTo(HaveOccurred(), "dump:\n%s", text)
	return f
}

var _ = Describe("Registry declarations", func() {
	var r *waves.Registry
	BeforeEach(func() { r = waves.NewRegistry(waves.Options{}) })

	DescribeTable("kinds and widths",
		func(declare func(r *waves.Registry) *waves.Signal, name string, kind waves.Kind, kindName string, width int) {
			s := declare(r)
			Expect(s).NotTo(BeNil())
			Expect(s.Name()).To(Equal(name))
			Expect(s.Kind()).To(Equal(kind))
			Expect(s.Kind().String()).To(Equal(kindName))
			Expect(s.Width()).To(Equal(width))
			Expect(r.Lookup(name)).To(BeIdenticalTo(s))
			Expect(r.Err()).NotTo(HaveOccurred())
		},
		Entry("a 1-bit wire", func(r *waves.Registry) *waves.Signal { return r.Wire("demo.bus", "req", 1) },
			"demo.bus.req", waves.Wire, "wire", 1),
		Entry("a 64-bit wire", func(r *waves.Registry) *waves.Signal { return r.Wire("demo", "data", 64) },
			"demo.data", waves.Wire, "wire", 64),
		Entry("an integer", func(r *waves.Registry) *waves.Signal { return r.Integer("demo", "occ", 5) },
			"demo.occ", waves.Integer, "integer", 5),
		// Reals always hold a float64: width 64 whatever the caller wants.
		Entry("a real", func(r *waves.Registry) *waves.Signal { return r.Real("demo", "lat") },
			"demo.lat", waves.Real, "real", 64),
		// Strings are declared with size 1, as GTKWave writes them.
		Entry("a string", func(r *waves.Registry) *waves.Signal { return r.String("demo", "state") },
			"demo.state", waves.String, "string", 1),
		// No scope: the name is the whole hierarchical name.
		Entry("a signal without a scope", func(r *waves.Registry) *waves.Signal { return r.Wire("", "clk", 1) },
			"clk", waves.Wire, "wire", 1),
	)

	It("names unknown kinds by number", func() {
		Expect(waves.Kind(7).String()).To(Equal("kind(7)"))
	})

	DescribeTable("rejects invalid declarations with a nil signal and an error",
		func(declare func(r *waves.Registry) *waves.Signal, msg string) {
			Expect(declare(r)).To(BeNil())
			Expect(r.Err()).To(MatchError(msg))
		},
		Entry("width 0", func(r *waves.Registry) *waves.Signal { return r.Wire("demo", "w", 0) },
			"waves: signal demo.w has width 0, want 1..64"),
		Entry("width 65", func(r *waves.Registry) *waves.Signal { return r.Wire("demo", "w", 65) },
			"waves: signal demo.w has width 65, want 1..64"),
		Entry("an integer of width 65", func(r *waves.Registry) *waves.Signal { return r.Integer("demo", "n", 65) },
			"waves: signal demo.n has width 65, want 1..64"),
		Entry("a negative width", func(r *waves.Registry) *waves.Signal { return r.Integer("", "n", -1) },
			"waves: signal n has width -1, want 1..64"),
		Entry("an empty name", func(r *waves.Registry) *waves.Signal { return r.Wire("demo", "", 1) },
			`waves: invalid signal name "demo."`),
		Entry("white space in the name", func(r *waves.Registry) *waves.Signal { return r.Wire("demo", "a b", 1) },
			`waves: invalid signal name "demo.a b"`),
		Entry("white space in the scope", func(r *waves.Registry) *waves.Signal { return r.String("De\tmo", "s") },
			`waves: invalid signal name "de\tmo.s"`),
	)

	It("rejects a duplicate name and keeps the first signal and the first error", func() {
		a := r.Wire("demo", "x", 1)
		Expect(a).NotTo(BeNil())
		// Same full name, different kind: still a duplicate.
		Expect(r.Integer("demo", "x", 8)).To(BeNil())
		Expect(r.Err()).To(MatchError("waves: signal demo.x declared twice"))
		// A later error does not replace the first one.
		Expect(r.Wire("demo", "y", 0)).To(BeNil())
		Expect(r.Err()).To(MatchError("waves: signal demo.x declared twice"))
		Expect(r.Lookup("demo.x")).To(BeIdenticalTo(a))
		Expect(r.Signals()).To(HaveLen(1))
	})

	It("rejects declarations after Start", func() {
		Expect(r.Wire("demo", "a", 1)).NotTo(BeNil())
		r.Start()
		Expect(r.Wire("demo", "b", 1)).To(BeNil())
		Expect(r.Err()).To(MatchError("waves: signal demo.b declared after the simulation started"))
		Expect(r.Signals()).To(HaveLen(1))
	})

	It("starts by itself when the first step is emitted", func() {
		a := r.Wire("demo", "a", 1)
		a.SetBool(0, true)
		a.SetBool(10, false) // time advances: the step at 0 is emitted
		Expect(r.String("demo", "late")).To(BeNil())
		Expect(r.Err()).To(MatchError(ContainSubstring("declared after the simulation started")))
	})

	It("refuses DumpVCD after Start and a second DumpVCD", func() {
		var buf bytes.Buffer
		Expect(r.DumpVCD(&buf, waves.VCDOptions{})).To(Succeed())
		Expect(r.DumpVCD(&buf, waves.VCDOptions{})).To(MatchError("waves: registry already dumps a VCD"))
		r2 := waves.NewRegistry(waves.Options{})
		r2.Start()
		Expect(r2.DumpVCD(&buf, waves.VCDOptions{})).To(MatchError("waves: DumpVCD called after the simulation started"))
	})

	It("lists the signals in declaration order", func() {
		c := r.Wire("z", "c", 1)
		a := r.Integer("A", "a", 3)
		b := r.Real("m", "b")
		Expect(r.Signals()).To(Equal([]*waves.Signal{c, a, b}))
		Expect(r.Lookup("A.b")).To(BeNil())
	})

	Context("a nil registry", func() {
		var nr *waves.Registry

		It("declares nil signals and answers every query", func() {
			Expect(nr.Wire("demo", "a", 1)).To(BeNil())
			Expect(nr.Integer("demo", "b", 8)).To(BeNil())
			Expect(nr.Real("demo", "c")).To(BeNil())
			Expect(nr.String("demo", "d")).To(BeNil())
			// Even an invalid declaration is silently nil.
			Expect(nr.Wire("demo", "e", 0)).To(BeNil())
			Expect(nr.Signals()).To(BeNil())
			Expect(nr.Lookup("demo.a")).To(BeNil())
			Expect(nr.Err()).NotTo(HaveOccurred())
			Expect(nr.Changes()).To(BeZero())
			nr.Start()
			nr.Flush()
			Expect(nr.Close(100)).To(Succeed())
			Expect(nr.DumpVCD(&bytes.Buffer{}, waves.VCDOptions{})).To(MatchError("waves: no registry"))
			_, _, err := nr.WriteHistory(&bytes.Buffer{}, 100, waves.VCDOptions{})
			Expect(err).To(MatchError("waves: registry keeps no history"))
		})

		It("makes every Set on its signals a no-op", func() {
			s := nr.Wire("demo", "a", 8)
			Expect(func() {
				s.Set(0, 1)
				s.SetBool(1, true)
				s.SetReal(2, 2.5)
				s.SetString(3, "IDLE")
				// Even invalid input: time backwards, a string with a space.
				s.Set(0, 7)
				s.SetString(4, "not a state")
			}).NotTo(Panic())
			Expect(s.Value()).To(BeZero())
		})
	})

	It("needs WriteHistory to be enabled by Options.History", func() {
		_, _, err := r.WriteHistory(&bytes.Buffer{}, 100, waves.VCDOptions{})
		Expect(err).To(MatchError("waves: registry keeps no history"))
	})

	DescribeTable("WidthFor",
		func(maxValue uint64, want int) { Expect(waves.WidthFor(maxValue)).To(Equal(want)) },
		// Bits needed for 0..max, never less than one.
		Entry("0 still needs a bit", uint64(0), 1),
		Entry("1", uint64(1), 1),
		Entry("2 = b10", uint64(2), 2),
		Entry("3 = b11", uint64(3), 2),
		Entry("4 = b100", uint64(4), 3),
		Entry("255 = 8 ones", uint64(255), 8),
		Entry("256 = b1 followed by 8 zeros", uint64(256), 9),
		Entry("the largest uint64", uint64(math.MaxUint64), 64),
	)
})

var _ = Describe("Selection", func() {
	DescribeTable("Match",
		func(pattern, name string, want bool) {
			Expect(waves.Match(pattern, name)).To(Equal(want))
		},
		Entry("exact", "demo.bus.state", "demo.bus.state", true),
		Entry("a prefix alone does not match", "demo.bus", "demo.bus.state", false),
		Entry("'*' matches everything", "*", "demo.bus.state", true),
		Entry("'*' matches the empty name", "*", "", true),
		Entry("the empty pattern matches only the empty name", "", "", true),
		Entry("the empty pattern and a name", "", "a", false),
		Entry("'*' crosses dots", "demo.*", "demo.bus[0].fifo.occ", true),
		Entry("'*' in the middle", "demo.*.state", "demo.bus[0].state", true),
		Entry("'*' in the middle crossing dots", "demo.*.state", "demo.ni.Rx.state", true),
		Entry("'*' needs the rest to match", "demo.*.state", "demo.bus.occ", false),
		Entry("a leading '*'", "*state", "demo.bus.state", true),
		Entry("'*.x' needs a dot", "*.state", "state", false),
		Entry("several stars backtrack", "a*b*c", "aXbYbZc", true),
		Entry("several stars, missing last part", "a*b*c", "aXbYbZ", false),
		Entry("doubled stars", "a**b", "ab", true),
		Entry("'?' matches one character", "demo.?us", "demo.bus", true),
		Entry("'?' matches a dot", "demo?bus", "demo.bus", true),
		Entry("'?' does not match two", "demo.?us", "demo.Buus", false),
		Entry("'?' does not match none", "demo.?bus", "demo.bus", false),
		Entry("'?' does not match the empty name", "?", "", false),
		Entry("brackets are literal", "bus[0].*", "bus[0].addr", true),
		Entry("brackets are not a class", "bus[0].*", "Bus0.addr", false),
		Entry("a trailing star after the whole name", "demo.bus*", "demo.bus", true),
		// A literal '*' in the name must not stop the pattern's '*' from
		// being a wildcard: "*b" matches "*ab" ('*' = "*a").
		Entry("a pattern star against a literal star", "*b", "*ab", true),
		Entry("a literal star is matched by '?'", "?a", "*a", true),
		Entry("case matters", "demo.*", "Demo.x", false),
	)

	// names declares the same set of signals in every spec below.
	names := []string{
		"demo.bus.state", "demo.bus.fifo.occ", "demo.bus2.state",
		"demo.busy", "other.bus.state", "demo.ni.debug_events", "top_clk",
	}
	declareAll := func(r *waves.Registry) map[string]*waves.Signal {
		sigs := map[string]*waves.Signal{}
		for _, n := range names {
			scope, name := "", n
			if i := strings.LastIndexByte(n, '.'); i >= 0 {
				scope, name = n[:i], n[i+1:]
			}
			sigs[n] = r.Integer(scope, name, 4)
		}
		return sigs
	}
	selectedNames := func(sigs map[string]*waves.Signal) []string {
		var out []string
		for _, n := range names {
			if sigs[n] != nil {
				out = append(out, n)
			}
		}
		return out
	}

	DescribeTable("Select and Exclude",
		func(sel, excl []string, want []string) {
			r := waves.NewRegistry(waves.Options{Select: sel, Exclude: excl})
			got := selectedNames(declareAll(r))
			Expect(cmp.Diff(want, got)).To(BeEmpty())
			Expect(r.Signals()).To(HaveLen(len(want)))
			Expect(r.Err()).NotTo(HaveOccurred())
		},
		Entry("no patterns select everything", nil, nil, names),
		// "demo.bus" matches the scope of demo.bus.state and an enclosing
		// scope of demo.bus.fifo.occ, but neither demo.bus2 nor demo.busy.
		Entry("a scope selects everything below it", []string{"demo.bus"}, nil,
			[]string{"demo.bus.state", "demo.bus.fifo.occ"}),
		Entry("a glob over whole names", []string{"*.state"}, nil,
			[]string{"demo.bus.state", "demo.bus2.state", "other.bus.state"}),
		// "demo.bus*" matches demo.bus, demo.bus2 and demo.busy themselves.
		Entry("a glob over scopes", []string{"demo.bus*"}, nil,
			[]string{"demo.bus.state", "demo.bus.fifo.occ", "demo.bus2.state", "demo.busy"}),
		Entry("'?' in a scope", []string{"demo.bus?"}, nil,
			[]string{"demo.bus2.state", "demo.busy"}),
		Entry("several patterns are a union", []string{"other", "top_clk"}, nil,
			[]string{"other.bus.state", "top_clk"}),
		Entry("exclude alone removes from everything", nil, []string{"*debug*", "demo.bus"},
			[]string{"demo.bus2.state", "demo.busy", "other.bus.state", "top_clk"}),
		// Select demo (5 signals) then drop the ni scope.
		Entry("exclude applies after select", []string{"demo"}, []string{"demo.ni"},
			[]string{"demo.bus.state", "demo.bus.fifo.occ", "demo.bus2.state", "demo.busy"}),
		Entry("a pattern matching nothing selects nothing", []string{"nope"}, nil, nil),
	)

	It("names the Select patterns that leave no signal in the dump", func() {
		// "nope" matches nothing; "demo.ni" matches only what Exclude
		// then removes; "other" and "*.state" keep signals.
		r := waves.NewRegistry(waves.Options{Select: []string{"nope", "other", "demo.ni", "*.state"}, Exclude: []string{"demo.ni"}})
		declareAll(r)
		Expect(r.UnusedSelects()).To(Equal([]string{"nope", "demo.ni"}))
		Expect(waves.NewRegistry(waves.Options{}).UnusedSelects()).To(BeEmpty())
		var nilReg *waves.Registry
		Expect(nilReg.UnusedSelects()).To(BeNil())
	})

	It("gives unselected signals nil and keeps them out of the dump", func() {
		var sigs map[string]*waves.Signal
		text := dump(waves.Options{Select: []string{"demo.bus"}, Exclude: []string{"*.occ"}}, 100, func(r *waves.Registry) {
			sigs = declareAll(r)
			// Select keeps demo.bus.state and demo.bus.fifo.occ, Exclude
			// drops the occupancy: only names[0] is left, the others are nil.
			for i, n := range names {
				sigs[n].Set(10, uint64(i+1)) // nil signals ignore this
			}
		})
		Expect(selectedNames(sigs)).To(Equal([]string{"demo.bus.state"}))
		for _, n := range names[1:] {
			leaf := n[strings.LastIndexByte(n, '.')+1:]
			if leaf != "state" {
				Expect(text).NotTo(ContainSubstring(" "+leaf+" "), "signal %s leaked into the dump", n)
			}
		}
		Expect(text).NotTo(ContainSubstring("bus2"))
		Expect(text).NotTo(ContainSubstring("other"))
		f := parse(text)
		Expect(f.Vars).To(HaveLen(1))
		Expect(f.Vars[0].FullName()).To(Equal("demo.bus.state"))
		Expect(f.Lookup("demo.bus2.state")).To(BeNil())
		// demo.bus.state was names[0]: set to 1 at 10.
		v, err := f.ValueAt("demo.bus.state", 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(uintOf(v)).To(Equal(uint64(1)))
	})

	It("gives identifier codes only to selected signals, in declaration order", func() {
		text := dump(waves.Options{Exclude: []string{"x.skip*"}}, 0, func(r *waves.Registry) {
			r.Wire("x", "skip1", 1)
			r.Wire("x", "a", 1)
			r.Wire("x", "skip2", 1)
			r.Wire("x", "b", 1)
		})
		// a and b are the first and second selected signals: "!" and '"'.
		Expect(text).To(ContainSubstring("$var wire 1 ! a $end\n$var wire 1 \" b $end\n"))
	})
})

var _ = Describe("Value semantics", func() {
	It("keeps the last value set within one picosecond", func() {
		text := dump(waves.Options{}, 20, func(r *waves.Registry) {
			n := r.Integer("u", "n", 8) // "!"
			n.Set(10, 1)
			n.Set(10, 5)
			n.Set(10, 3)
		})
		// #0 holds the initial 0 ($dumpvars before the first step at 10),
		// #10 only the last value 3 = b11, then the end time.
		Expect(body(text)).To(Equal("#0\n$dumpvars\nb0 !\n$end\n#10\nb11 !\n#20\n"))
	})

	It("writes nothing for a value set back to its previous value within the picosecond", func() {
		text := dump(waves.Options{}, 40, func(r *waves.Registry) {
			a := r.Wire("u", "a", 1)    // "!"
			b := r.Integer("u", "b", 4) // '"'
			a.SetBool(10, true)
			// At 20 a glitches to 0 and back, b goes 0 -> 6 -> 0: nothing
			// changes, so there is no #20 line at all.
			a.SetBool(20, false)
			b.Set(20, 6)
			a.SetBool(20, true)
			b.Set(20, 0)
			// At 30 a glitches and b really changes: only b's line.
			a.SetBool(30, false)
			b.Set(30, 9)
			a.SetBool(30, true)
		})
		Expect(body(text)).To(Equal("#0\n$dumpvars\n0!\nb0 \"\n$end\n#10\n1!\n#30\nb1001 \"\n#40\n"))
	})

	It("emits the changes of one picosecond in declaration order, whatever the Set order", func() {
		text := dump(waves.Options{}, 0, func(r *waves.Registry) {
			a := r.Integer("u", "a", 4) // "!", declared first
			b := r.Integer("u", "b", 4) // '"'
			c := r.Integer("u", "c", 4) // "#"
			b.Set(10, 2)
			c.Set(10, 3)
			a.Set(10, 1)
			c.Set(20, 4)
			b.Set(20, 5)
		})
		// #10: a, b, c although set b, c, a; #20: b before c. Close(0) is
		// before the last change, so no end time is added.
		Expect(body(text)).To(Equal(
			"#0\n$dumpvars\nb0 !\nb0 \"\nb0 #\n$end\n" +
				"#10\nb1 !\nb10 \"\nb11 #\n" +
				"#20\nb101 \"\nb100 #\n"))
	})

	It("reports time going backwards", func() {
		r := waves.NewRegistry(waves.Options{})
		a := r.Integer("u", "a", 4)
		a.Set(10, 1)
		a.Set(5, 2)
		Expect(r.Err()).To(MatchError("waves: value change at 5ps after a change at 10ps"))
	})

	It("drops bits above the width", func() {
		r := waves.NewRegistry(waves.Options{})
		w := r.Wire("u", "w", 4)
		w.Set(0, 0x1f) // 0b11111 & 0b1111
		Expect(w.Value()).To(Equal(uint64(0xf)))
		full := r.Wire("u", "full", 64)
		full.Set(0, math.MaxUint64)
		Expect(full.Value()).To(Equal(uint64(math.MaxUint64)))
		// A flag holds only bit 0: Set(2) = b10 is 0.
		f := r.Wire("u", "f", 1)
		f.Set(0, 2)
		Expect(f.Value()).To(BeZero())
	})

	It("counts the emitted changes, not the Set calls", func() {
		r := waves.NewRegistry(waves.Options{})
		a := r.Integer("u", "a", 4)
		b := r.Integer("u", "b", 4)
		a.Set(1, 1)
		a.Set(1, 2)                      // same step: one change of a
		b.Set(1, 0)                      // unchanged: none
		Expect(r.Changes()).To(BeZero()) // the step is still open
		a.Set(2, 2)                      // unchanged
		b.Set(2, 3)                      // one change
		r.Flush()
		Expect(r.Changes()).To(Equal(uint64(2)))
	})

	It("formats raw values as they appear in a dump", func() {
		r := waves.NewRegistry(waves.Options{})
		flag := r.Wire("u", "flag", 1)
		vec := r.Wire("u", "vec", 8)
		n := r.Integer("u", "n", 16)
		lat := r.Real("u", "lat")
		st := r.String("u", "st")
		st.SetString(0, "IDLE")
		Expect(r.Format(flag, 1)).To(Equal("1"))
		Expect(r.Format(vec, 5)).To(Equal("b101"))
		Expect(r.Format(n, 0)).To(Equal("b0"))
		Expect(r.Format(lat, math.Float64bits(2.5))).To(Equal("r2.5"))
		Expect(r.Format(st, st.Value())).To(Equal("sIDLE"))
		// Index 0 is the unset string, shown as x.
		Expect(r.Format(st, 0)).To(Equal("sx"))
	})

	It("reports string values with white space and writes them with underscores", func() {
		r := waves.NewRegistry(waves.Options{})
		var buf bytes.Buffer
		Expect(r.DumpVCD(&buf, waves.VCDOptions{})).To(Succeed())
		st := r.String("u", "st")
		st.SetString(10, "WAIT ACK")
		const msg = `waves: string value "WAIT ACK" is empty or has white space`
		Expect(r.Err()).To(MatchError(msg))
		// Close returns the registry's first error but still writes a dump
		// that a strict reader accepts.
		Expect(r.Close(0)).To(MatchError(msg))
		Expect(body(buf.String())).To(HaveSuffix("#10\nsWAIT_ACK !\n"))
		parse(buf.String())
	})
})

// uintOf returns the numeric value of a scalar or vector of 0s and 1s.
func uintOf(v vcd.Value) uint64 {
	GinkgoHelper()
	n, ok := v.Uint()
	Expect(ok).To(BeTrue(), "value %s is not a number", v)
	return n
}
