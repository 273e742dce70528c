package platform_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// clockEq lets go-cmp compare clock.Clock values (unexported fields).
var clockEq = cmp.Comparer(func(a, b clock.Clock) bool { return a == b })

var _ = Describe("presets", func() {
	It("lists the six hosts in the papers' order, and every one validates", func() {
		Expect(platform.Names()).To(Equal([]string{
			"dec3000-300", "ppro", "p3", "alphaserver2100", "dec560st", "decstation5000-200"}))
		for _, n := range platform.Names() {
			h, err := platform.Lookup(n)
			Expect(err).NotTo(HaveOccurred())
			Expect(h.Name).To(Equal(n), "the preset's Name is its registry key")
			Expect(h.Validate()).To(Succeed(), n)
		}
	})

	It("looks names up case-insensitively, and an unknown name lists the known ones", func() {
		h, err := platform.Lookup("PPro")
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(platform.PPro(), h, clockEq)).To(BeEmpty())
		_, err = platform.Lookup("vax")
		Expect(err).To(MatchError(`unknown host platform "vax" (have dec3000-300, ppro, p3, alphaserver2100, dec560st, decstation5000-200)`))
	})

	It("returns a fresh Names slice and a fresh Host each time", func() {
		n := platform.Names()
		n[0] = "x"
		Expect(platform.Names()[0]).To(Equal("dec3000-300"))
		h := platform.AlphaServer2100()
		h.Caches[0].Ways = 9
		Expect(platform.AlphaServer2100().Caches[0].Ways).To(Equal(1), "presets share no slice")
	})

	It("puts the four CPUs of the AlphaServer 2100 4/233 on one node, one on every other host", func() {
		// «four 21064A processors operating at 233 MHz» (MC-P14)
		for _, n := range platform.Names() {
			h, _ := platform.Lookup(n)
			want := 1
			if n == "alphaserver2100" {
				want = 4
			}
			Expect(h.CPU.Count).To(Equal(want), n)
		}
	})

	It("holds the memory bus for an I/O burst only on SHRIMP's Xpress node (SH-P10)", func() {
		for _, n := range platform.Names() {
			h, _ := platform.Lookup(n)
			Expect(h.Bridge.HoldMemoryBus).To(Equal(n == "dec560st"), n)
		}
	})

	DescribeTable("derived values, worked out by hand",
		func(h platform.Host, memCycles, cpuCycles, beats int) {
			Expect(h.Memory.LatencyCycles()).To(Equal(memCycles), "memory latency in memory cycles")
			Expect(h.MemLatencyCycles(h.CPU.Clock)).To(Equal(cpuCycles), "memory latency in CPU cycles")
			Expect(h.WriteBufferBeats()).To(Equal(beats), "write buffer in I/O bus beats")
		},
		// 240 ns / 40 ns = 6 memory cycles; 240 ns × 150 MHz = 36; 4 entries × 4 B / 4 B = 4.
		Entry("DEC 3000/300", platform.DEC3000Model300(), 6, 36, 4),
		// 236 ns / 15 ns = 15.7 → 16; 236 ns × 200 MHz = 47.2 → 48; 1 × 32 B / 4 B = 8 (host/lcilib's 8).
		Entry("PPro", platform.PPro(), 16, 48, 8),
		// 113 ns / 7.5 ns = 15.07 → 16; 113 ns × 1 GHz = 113; 1 × 32 B / 8 B = 4.
		Entry("P3", platform.P3(), 16, 113, 4),
		// 300 ns / (7/233 µs = 30.04 ns) = 9.99 → 10; 300 ns × 233 MHz = 69.9 → 70; 4 × 32 B / 4 B = 32.
		Entry("AlphaServer 2100", platform.AlphaServer2100(), 10, 70, 32),
		// 240 ns / 33.3 ns = 7.2 → 8; 240 ns × 60 MHz = 14.4 → 15; 2 × 8 B / 4 B = 4.
		Entry("DEC 560ST", platform.DEC560ST(), 8, 15, 4),
		// 200 ns / 40 ns = 5; 200 ns × 25 MHz = 5; 4 × 4 B / 4 B = 4.
		Entry("DECstation 5000/200", platform.DECstation5000(), 5, 5, 4),
	)

	It("derives the OS costs the papers measure in microseconds", func() {
		a := platform.AlphaServer2100()
		// «about 55 μ s» × 233 MHz = 12815 cycles.
		Expect(a.OS.Mprotect).To(Equal(55 * 233))
		// «72 μ s» × 233 = 16776 cycles = mprotect 12815 + 3961 (1320 + 1321 + 1320).
		Expect(a.OS.Mprotect + a.OS.FaultEntry + a.OS.SignalDelivery + a.OS.FaultReturn).To(Equal(72 * 233))
		// (142 − 72) µs × 233 MHz = 16310 cycles for an interrupt in and out.
		Expect(a.OS.InterruptEntry + a.OS.InterruptReturn).To(Equal(70 * 233))
		s := platform.DEC560ST()
		// «roughly 1K bytes» / (8 B × 30 MHz) × 60 MHz = 1024 × 60 / 240 = 256 cycles.
		busHz, _ := s.MemBus.Clock.Hz()
		cpuHz, _ := s.CPU.Clock.Hz()
		// The time «to recognize the threshold interrupt» is the
		// recognition delay (the writer runs on), not the handler's entry.
		Expect(s.OS.InterruptDelay).To(Equal(int(1024 * cpuHz / (uint64(s.MemBus.WidthBytes) * busHz))))
		Expect(s.OS.InterruptEntry).To(Equal(64))
	})

	It("leaves the DECstation's crossing and dispatcher to host/rma's counted code steps", func() {
		d := platform.DECstation5000()
		// Table 1's «Protection Crossing» (25) and «MIPS Interrupt
		// Dispatcher (on Destination)» (73) are instructions host/rma
		// counts (with their loads and stores), so the exception hardware
		// charges nothing more.
		Expect([]int{d.OS.TrapEntry, d.OS.TrapReturn, d.OS.InterruptEntry, d.OS.InterruptReturn}).To(Equal([]int{0, 0, 0, 0}))
	})

	It("recognises interrupts at once on every host but the SHRIMP node", func() {
		for _, n := range platform.Names() {
			h, err := platform.Lookup(n)
			Expect(err).NotTo(HaveOccurred())
			if n == "dec560st" {
				Expect(h.OS.InterruptDelay).To(Equal(256), n)
				continue
			}
			Expect(h.OS.InterruptDelay).To(BeZero(), n)
		}
	})

	It("gives the DEC 3000/300 a kernel interrupt, not Cashmere-2L's interrupt to a user-level handler", func() {
		d, a := platform.DEC3000Model300(), platform.AlphaServer2100()
		// The Telegraphos alarm goes «to the operating system» (2.2.6):
		// the kernel's entry and return, a system call's, and no signal.
		Expect([]int{d.OS.InterruptEntry, d.OS.InterruptReturn}).To(Equal([]int{d.OS.TrapEntry, d.OS.TrapReturn}))
		// 1320 + 1320 cycles of 150 MHz = 17.6 µs in and out (lmbench's
		// null system call on OSF/1 Alphas: 9 to 17 µs).
		Expect(d.CPU.Clock.TimeOf(clock.Cycle(d.OS.InterruptEntry + d.OS.InterruptReturn))).To(Equal(clock.Time(17_600_000)))
		// Cashmere-2L's 70 µs interrupt (a signal to the protocol's
		// handler) is the AlphaServer's only.
		Expect(d.OS.InterruptEntry).To(BeNumerically("<", a.OS.InterruptEntry))
	})
})

var _ = DescribeTable("is the host host/lcilib's platforms run on",
	func(h platform.Host, p lcilib.Platform, delayedRead int) {
		Expect(cmp.Diff(h, p.Host, clockEq)).To(BeEmpty())
		// The bridge is PCIHostBridge with the delayed-read logic
		// re-fitted to the PPro I-sdma gap on the wired host (presets.go
		// lciHostBridge), the same count on both.
		want := bus.PCIHostBridge()
		want.DelayedReadCycles = delayedRead
		Expect(cmp.Diff(want, h.Bridge)).To(BeEmpty(), "the calibrated bridge")
		Expect(h.CPU.Count).To(Equal(1), "LCI nodes have one CPU")
	},
	Entry("PPro", platform.PPro(), lcilib.PPro(), 52),
	Entry("P3", platform.P3(), lcilib.P3(), 52),
)

var _ = DescribeTable("invalid values give an error naming the field",
	func(mutate func(h *platform.Host), want string) {
		h := platform.AlphaServer2100()
		mutate(&h)
		err := h.Validate()
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(HavePrefix("platform"))
		Expect(err.Error()).To(ContainSubstring(want))
		Expect(err.Error()).NotTo(ContainSubstring("\n"), "one line")
	},
	Entry("no name", func(h *platform.Host) { h.Name = "" }, "Name is empty"),
	Entry("no CPUs", func(h *platform.Host) { h.CPU.Count = 0 }, "CPU.Count 0"),
	Entry("no CPU clock", func(h *platform.Host) { h.CPU.Clock = clock.Clock{} }, "CPU.Clock"),
	Entry("issue cycles", func(h *platform.Host) { h.CPU.IssueCycles = 0 }, "CPU.IssueCycles 0"),
	Entry("CPI", func(h *platform.Host) { h.CPU.CPIInstrs = 0 }, "CPU.CPICycles/CPIInstrs 1/0"),
	Entry("write buffer", func(h *platform.Host) { h.CPU.WriteBufferEntries = 0 }, "CPU.WriteBufferEntries 0"),
	Entry("write combining", func(h *platform.Host) { h.CPU.WriteCombineBytes = 6 }, "CPU.WriteCombineBytes 6 must be a multiple of IOBus.WidthBytes 4"),
	Entry("no caches", func(h *platform.Host) { h.Caches = nil }, "Caches: a host needs at least one cache level"),
	Entry("a bad level", func(h *platform.Host) { h.Caches[1].Ways = 0 }, "Caches[1]: cache Ways 0"),
	Entry("an outer line shorter than the inner", func(h *platform.Host) { h.Caches[1].LineBytes = 16 }, "Caches[1].LineBytes 16"),
	Entry("an outer level no larger", func(h *platform.Host) { h.Caches[1].CapacityBytes = 16 << 10 }, "Caches[1].CapacityBytes 16384"),
	Entry("two page sizes", func(h *platform.Host) { h.Caches[1].PageBytes = 4096 }, "Caches[1].PageBytes 4096"),
	Entry("memory size", func(h *platform.Host) { h.Memory.SizeBytes = 100 }, "Memory.SizeBytes 100"),
	Entry("memory clock", func(h *platform.Host) { h.Memory.Clock = clock.Clock{} }, "Memory.Clock"),
	Entry("memory latency", func(h *platform.Host) { h.Memory.LatencyNs = 0 }, "Memory.LatencyNs 0"),
	Entry("memory rate", func(h *platform.Host) { h.Memory.BytesPerCycle = 0 }, "Memory.BytesPerCycle 0"),
	Entry("memory bus", func(h *platform.Host) { h.MemBus.WidthBytes = 3 }, "MemBus: bus width 3"),
	Entry("I/O bus", func(h *platform.Host) { h.IOBus.Clock = clock.Clock{} }, "IOBus: bus: no clock"),
	Entry("bridge", func(h *platform.Host) { h.Bridge.LineBytes = 3 }, "Bridge: bridge LineBytes 3"),
	Entry("bridge line against the memory bus", func(h *platform.Host) {
		h.Bridge.LineBytes, h.Bridge.ReadBufferBytes, h.Bridge.PostedWriteBytes, h.Bridge.PrefetchBytes = 8, 8, 8, 8
	}, "Bridge.LineBytes 8 must be a multiple of MemBus.WidthBytes 16"),
	Entry("a fill that is not whole bus beats", func(h *platform.Host) { h.MemBus.WidthBytes = 128; h.MemBus.MaxBurstBytes = 128 }, "Caches[1].LineBytes 64 must be a multiple of MemBus.WidthBytes 128"),
	Entry("OS costs", func(h *platform.Host) { h.OS.Mprotect = -1 }, "OS: os costs: Mprotect -1"),
)

// sourceMark is what a source comment must contain: a paper quote, a
// derivation, an assumption, a calibration, or a parameters.md ID.
var sourceMark = regexp.MustCompile(`«[^»]+»|derived:|assumed:|calibrated:|\b(TG|MC|MY|SH|AT)-P[0-9]+\b`)

// uncommented returns the field values in f's functions (keyed composite
// literal elements and field assignments) with no source comment on their
// line or on the line right above it, as "Func: Key (line n)". A value that
// is itself a composite literal is not one: its fields are.
func uncommented(fset *token.FileSet, f *ast.File) []string {
	covered := map[int]bool{}
	for _, cg := range f.Comments {
		if !sourceMark.MatchString(cg.Text()) {
			continue
		}
		covered[fset.Position(cg.Pos()).Line] = true   // a comment at the end of the value's line
		covered[fset.Position(cg.End()).Line+1] = true // a comment on the lines above it
	}
	var bad []string
	check := func(fn string, key ast.Expr) {
		if line := fset.Position(key.Pos()).Line; !covered[line] {
			bad = append(bad, fmt.Sprintf("%s: %s (line %d)", fn, types(key), line))
		}
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if _, lit := n.Value.(*ast.CompositeLit); !lit {
					check(fd.Name.Name, n.Key)
				}
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if _, sel := l.(*ast.SelectorExpr); sel {
						check(fd.Name.Name, l)
					}
				}
			}
			return true
		})
	}
	return bad
}

// structs are the struct types presets.go writes out, by their name there.
var structs = map[string]reflect.Type{
	"Host":               reflect.TypeFor[platform.Host](),
	"CPU":                reflect.TypeFor[platform.CPU](),
	"Memory":             reflect.TypeFor[platform.Memory](),
	"memsys.CacheConfig": reflect.TypeFor[memsys.CacheConfig](),
	"bus.Config":         reflect.TypeFor[bus.Config](),
	"bus.BridgeConfig":   reflect.TypeFor[bus.BridgeConfig](),
	"cpu.OSCosts":        reflect.TypeFor[cpu.OSCosts](),
}

// unset returns, for every composite literal of a type in structs (an
// element of a slice literal takes the slice's element type), the fields it
// leaves out, as "Type.Field (line n)": a field left at its zero value
// would have no source comment.
func unset(fset *token.FileSet, f *ast.File) []string {
	var out []string
	var visit func(lit *ast.CompositeLit, typ string)
	visit = func(lit *ast.CompositeLit, typ string) {
		if at, ok := lit.Type.(*ast.ArrayType); ok {
			for _, el := range lit.Elts {
				if c, ok := el.(*ast.CompositeLit); ok {
					visit(c, types(at.Elt))
				}
			}
			return
		}
		t, ok := structs[typ]
		if !ok {
			out = append(out, fmt.Sprintf("unknown literal type %q (line %d)", typ, fset.Position(lit.Pos()).Line))
			return
		}
		set := map[string]bool{}
		for _, el := range lit.Elts {
			kv := el.(*ast.KeyValueExpr)
			set[types(kv.Key)] = true
			if c, ok := kv.Value.(*ast.CompositeLit); ok {
				fld, _ := t.FieldByName(types(kv.Key))
				name := types(c.Type)
				if c.Type == nil || name == "" {
					name = fld.Type.Name()
				}
				if _, isArr := c.Type.(*ast.ArrayType); isArr {
					visit(c, "")
					continue
				}
				visit(c, name)
			}
		}
		for i := range t.NumField() {
			if fl := t.Field(i); fl.IsExported() && !set[fl.Name] {
				out = append(out, fmt.Sprintf("%s.%s (line %d)", typ, fl.Name, fset.Position(lit.Pos()).Line))
			}
		}
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if r, ok := n.(*ast.ReturnStmt); ok {
				for _, x := range r.Results {
					if c, ok := x.(*ast.CompositeLit); ok {
						visit(c, types(c.Type))
					}
				}
				return false
			}
			return true
		})
	}
	return out
}

// types prints a key expression (an identifier or a selector).
func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}

func parseFile(name string, src any) (*token.FileSet, *ast.File) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	Expect(err).NotTo(HaveOccurred())
	return fset, f
}

var space = regexp.MustCompile(`\s+`)

var _ = Describe("source comments", func() {
	It("give every field value of every preset a source", func() {
		fset, f := parseFile("presets.go", nil)
		Expect(uncommented(fset, f)).To(BeEmpty())
	})

	It("cover every field: each preset sets every field of every struct it writes out", func() {
		fset, f := parseFile("presets.go", nil)
		Expect(unset(fset, f)).To(BeEmpty())
	})

	It("catch a value without one (the check is not vacuous)", func() {
		fset, f := parseFile("snippet.go", `package p
func P() H {
	h := H{
		// «a quote»
		A: 1,
		B: 2,
		// a comment without a source
		C: 3,
		// assumed: two on a line.
		D: 4, E: 5,
		F: G{
			// derived: 2 × 3.
			X: 6,
			Y: 7,
		},
	}
	// calibrated: fitted to something.
	h.Z = 8
	h.W = 9
	return h
}`)
		Expect(uncommented(fset, f)).To(Equal([]string{
			"P: B (line 6)", "P: C (line 8)", "P: Y (line 14)", "P: h.W (line 19)"}))
	})

	It("quote only what the papers say (every «…» is in a paper, whitespace collapsed)", func() {
		dir := filepath.Join("..", "..", "..", "shared", "papers")
		files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		if len(files) < 5 {
			Skip("the papers are not next to the repository (" + dir + ")")
		}
		var corpus strings.Builder
		for _, p := range files {
			b, err := os.ReadFile(p)
			Expect(err).NotTo(HaveOccurred())
			corpus.WriteString(space.ReplaceAllString(string(b), " "))
		}
		text := corpus.String()
		_, f := parseFile("presets.go", nil)
		quote := regexp.MustCompile(`«([^»]+)»`)
		n := 0
		var missing []string
		for _, cg := range f.Comments {
			for _, m := range quote.FindAllStringSubmatch(cg.Text(), -1) {
				n++
				q := strings.TrimSpace(space.ReplaceAllString(m[1], " "))
				if !strings.Contains(text, q) {
					missing = append(missing, q)
				}
			}
		}
		Expect(missing).To(BeEmpty())
		Expect(n).To(BeNumerically(">", 40), "presets.go quotes the papers")
	})

	It("cite only parameter IDs that parameters.md has", func() {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "reference", "parameters.md"))
		if err != nil {
			Skip("parameters.md is not next to the repository: " + err.Error())
		}
		rows := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^\| ((TG|MC|MY|SH|AT)-P[0-9]+) \|`).FindAllStringSubmatch(string(b), -1) {
			rows[m[1]] = true
		}
		src, err := os.ReadFile("presets.go")
		Expect(err).NotTo(HaveOccurred())
		var unknown []string
		cited := regexp.MustCompile(`\b(TG|MC|MY|SH|AT)-P[0-9]+\b`).FindAllString(string(src), -1)
		for _, id := range cited {
			if !rows[id] {
				unknown = append(unknown, id)
			}
		}
		Expect(unknown).To(BeEmpty())
		Expect(len(cited)).To(BeNumerically(">", 40))
	})
})
