package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/waves"
	"github.com/nisim/nisim/waves/vcd"
)

// saveTraces returns the variable names of a save file's traces (aliases
// dropped) and its group names, in order.
func saveTraces(text string) (traces, groups []string) {
	blank := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "@"):
			f, err := strconv.ParseUint(l[1:], 16, 32)
			Expect(err).NotTo(HaveOccurred(), l)
			blank = f&(1<<9) != 0 // TR_BLANK: a group marker follows
		case strings.HasPrefix(l, "-"):
			Expect(blank).To(BeTrue(), "a blank trace without TR_BLANK: "+l)
			if len(groups) == 0 || groups[len(groups)-1] != l[1:] {
				groups = append(groups, l[1:])
			}
		case strings.HasPrefix(l, "+{"):
			traces = append(traces, l[strings.Index(l, "} ")+2:])
		case l != "" && !strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "*"):
			traces = append(traces, l)
		}
	}
	return traces, groups
}

var _ = Describe("waveform views", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("every scenario declares key signals, and each pattern (and default --select) matches a signal of its dump", func() {
		// A signal's name changing (a board renamed) must fail here
		// rather than leave a save file or a default dump silently empty.
		// The run is cut at 1 ns: the signals are declared when the
		// system is built, before it runs.
		for _, s := range catalog() {
			p := s.Defaults()
			view := s.View(p)
			Expect(view.Groups).NotTo(BeEmpty(), s.Name+" declares no key signals")
			_, e, _, _ := scenario.Exec(s, p, scenario.Options{Seed: 1, VCD: filepath.Join(dir, s.Name+".vcd"),
				Select: view.Select, TimeLimit: 1000})
			Expect(e).NotTo(BeNil(), s.Name)
			var names []string
			for _, sig := range e.Waves.Signals() {
				names = append(names, sig.Name())
			}
			matches := func(p string) bool {
				for _, n := range names {
					if waves.Selects(p, n) {
						return true
					}
				}
				return false
			}
			for _, p := range view.Select {
				Expect(matches(p)).To(BeTrue(), "%s: default --select %q matches no signal", s.Name, p)
			}
			for _, g := range view.Groups {
				Expect(g.Patterns).NotTo(BeEmpty(), "%s: group %q", s.Name, g.Name)
				for _, p := range g.Patterns {
					Expect(matches(p)).To(BeTrue(), "%s: key signal %q (group %q) matches no signal of the dump (default selection %q)",
						s.Name, p, g.Name, view.Select)
				}
			}
		}
	})

	It("writes the demo's save file beside its VCD: every trace a variable of the dump, grouped, zoomed inside the run", func() {
		vcdPath := filepath.Join(dir, "out", "demo.vcd")
		code, out, errOut := nisim("run", "demo", "--vcd", vcdPath)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("GTKWave save file: " + filepath.Join(dir, "out", "demo.gtkw")))
		text, err := os.ReadFile(filepath.Join(dir, "out", "demo.gtkw"))
		Expect(err).NotTo(HaveOccurred())
		f, err := vcd.ParseFile(vcdPath)
		Expect(err).NotTo(HaveOccurred())
		vars := map[string]bool{}
		for _, v := range f.Vars {
			vars[v.FullName()+v.Range] = true
		}
		traces, groups := saveTraces(string(text))
		Expect(traces).To(HaveLen(17))
		for _, t := range traces {
			Expect(vars).To(HaveKey(t))
		}
		Expect(groups).To(Equal([]string{"host and PCI", "NI", "link", "remote"}))
		abs, err := filepath.Abs(vcdPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(text)).To(ContainSubstring("[dumpfile] \"" + abs + "\"\n"))
		Expect(string(text)).To(ContainSubstring("[*] nisim run demo, seed 1; signals: all\n"))
		start := 0
		for _, l := range strings.Split(string(text), "\n") {
			if v, ok := strings.CutPrefix(l, "[timestart] "); ok {
				start, err = strconv.Atoi(v)
				Expect(err).NotTo(HaveOccurred())
			}
		}
		Expect(start).To(BeNumerically("<", f.EndTime))
	})

	It("writes no save file with --gtkw=false, with the VCD on standard output, or without a VCD", func() {
		code, _, _ := nisim("run", "demo", "--vcd", filepath.Join(dir, "a.vcd"), "--gtkw=false")
		Expect(code).To(Equal(0))
		code, _, _ = nisim("run", "demo", "--vcd", "-", "--trace", filepath.Join(dir, "b.trace"))
		Expect(code).To(Equal(0))
		code, _, _ = nisim("run", "demo", "--trace", filepath.Join(dir, "c.trace"))
		Expect(code).To(Equal(0))
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		Expect(names).To(ConsistOf("a.vcd", "b.trace", "c.trace"))
	})

	It("checks the save file's path with the other outputs, before the run", func() {
		Expect(os.Mkdir(filepath.Join(dir, "x.gtkw"), 0o755)).To(Succeed())
		code, out, errOut := nisim("run", "demo", "--vcd", filepath.Join(dir, "x.vcd"))
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(Equal("nisim: run: --gtkw " + filepath.Join(dir, "x.gtkw") + ": is a directory\n"))
		Expect(filepath.Join(dir, "x.vcd")).NotTo(BeAnExistingFile())
		// The trace and the JSON report may not take the save file's name
		// either; nothing is written (the JSON report was, when the save
		// file was checked after the others).
		code, _, errOut = nisim("run", "demo", "--vcd", filepath.Join(dir, "y.vcd"), "--trace", filepath.Join(dir, "y.gtkw"))
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("the same file as --trace"))
		code, _, errOut = nisim("run", "demo", "--vcd", filepath.Join(dir, "z.vcd"), "--json", filepath.Join(dir, "z.gtkw"))
		Expect(code).To(Equal(2))
		Expect(errOut).To(Equal("nisim: run: --gtkw " + filepath.Join(dir, "z.gtkw") + ": the same file as --json " + filepath.Join(dir, "z.gtkw") + "\n"))
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(1)) // x.gtkw, the directory
	})

	It("says in the VCD's comment which signals were selected", func() {
		comment := func(args ...string) string {
			p := filepath.Join(dir, "s.vcd")
			code, _, _ := nisim(append([]string{"run", "demo", "--vcd", p}, args...)...)
			Expect(code).To(Equal(0))
			f, err := vcd.ParseFile(p)
			Expect(err).NotTo(HaveOccurred())
			return f.Comment
		}
		Expect(comment()).To(Equal("nisim run demo, seed 1; signals: all"))
		Expect(comment("--select", "ni", "--select", "host.cpu")).To(Equal(`nisim run demo, seed 1; signals: --select "ni" "host.cpu"`))
		sel, c := selection(scenario.WaveView{Select: []string{"n0", "n1"}}, nil, "nisim run x, seed 1")
		Expect(sel).To(Equal([]string{"n0", "n1"}))
		Expect(c).To(Equal(`nisim run x, seed 1; signals: the scenario's default selection "n0" "n1" (--select '*' dumps everything)`))
		// A pattern holding $end would end the VCD's comment section.
		_, c = selection(scenario.WaveView{}, []string{"a$end"}, "x")
		Expect(c).To(Equal(`x; signals: --select "a$ end"`))
	})

	It("says nothing of the key signals a user's --select or --exclude leaves out", func() {
		for _, args := range [][]string{{"--select", "ni"}, {"--exclude", "link"}} {
			code, _, errOut := nisim(append([]string{"run", "demo", "--vcd", filepath.Join(dir, "n.vcd")}, args...)...)
			Expect(code).To(Equal(0))
			Expect(errOut).To(BeEmpty(), args[0])
			text, err := os.ReadFile(filepath.Join(dir, "n.gtkw"))
			Expect(err).NotTo(HaveOccurred())
			_, groups := saveTraces(string(text))
			// --select ni keeps the NI group alone; --exclude link drops
			// the link group.
			if args[0] == "--select" {
				Expect(groups).To(Equal([]string{"NI"}))
			} else {
				Expect(groups).To(Equal([]string{"host and PCI", "NI", "remote"}))
			}
		}
	})

	It("warns about key signals the dump lacks and falls back to the selected signals", func() {
		vcdPath := filepath.Join(dir, "d.vcd")
		code, _, _ := nisim("run", "demo", "--vcd", vcdPath, "--gtkw=false")
		Expect(code).To(Equal(0))
		var warn bytes.Buffer
		save := filepath.Join(dir, "d.gtkw")
		view := scenario.WaveView{Groups: []waves.ViewGroup{scenario.KeyGroup("g", "nosuch.state")}}
		Expect(writeSaveFile(&warn, "demo", vcdPath, save, view, []string{"link.ab", "remote.rdma.state"})).To(Succeed())
		Expect(warn.String()).To(Equal(`nisim: run: warning: demo's key signal pattern "nosuch.state" matched no signal in ` +
			vcdPath + ": " + save + " leaves it out\n"))
		text, err := os.ReadFile(save)
		Expect(err).NotTo(HaveOccurred())
		traces, groups := saveTraces(string(text))
		// link.ab holds 7 signals (credits0, busy, vc, tx0 and rx0
		// occupancy and full), then the rdma state.
		Expect(groups).To(Equal([]string{"link.ab", "remote.rdma.state"}))
		Expect(traces).To(HaveLen(8))
		Expect(traces[7]).To(Equal("remote.rdma.state"))
	})

	It("names the default selections in 'nisim run --help'", func() {
		code, out, _ := nisim("run", "--help")
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("--vcd F.vcd also writes the GTKWave save file F.gtkw"))
		Expect(out).To(ContainSubstring("--select '*' dumps"))
		// Each scenario's line, its patterns wrapped under the first one
		// within 100 columns.
		lines := strings.Split(out, "\n")
		for _, s := range catalog() {
			sel := s.View(s.Defaults()).Select
			if len(sel) == 0 {
				continue
			}
			i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  "+s.Name+" ") })
			Expect(i).To(BeNumerically(">=", 0), s.Name)
			text := lines[i]
			for _, l := range lines[i+1:] {
				if !strings.HasPrefix(l, strings.Repeat(" ", 19)) {
					break
				}
				text += l
			}
			Expect(strings.Fields(text)).To(Equal(append([]string{s.Name}, sel...)))
		}
		for _, l := range lines {
			if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "      --") {
				Expect(len(l)).To(BeNumerically("<=", 100), l)
			}
		}
		Expect(out).To(ContainSubstring("also write the GTKWave save file F.gtkw beside it"))
	})
})

var _ = Describe("the save file's window", func() {
	// A dump with one key signal changing at 10, 20 and 90 ns and a
	// signal that never changes, ending at 100 ns.
	const dump = `$timescale 1ps $end
$scope module top $end
$var string 1 ! s $end
$var wire 1 " quiet $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
sIDLE !
0"
$end
#10000
sA !
#20000
sB !
#90000
sIDLE !
#100000
`
	window := func(view scenario.WaveView) (string, string) {
		dir := GinkgoT().TempDir()
		vcdPath, save := filepath.Join(dir, "w.vcd"), filepath.Join(dir, "w.gtkw")
		Expect(os.WriteFile(vcdPath, []byte(dump), 0o644)).To(Succeed())
		Expect(writeSaveFile(GinkgoWriter, "w", vcdPath, save, view, nil)).To(Succeed())
		text, err := os.ReadFile(save)
		Expect(err).NotTo(HaveOccurred())
		var start, shows string
		for _, l := range strings.Split(string(text), "\n") {
			if v, ok := strings.CutPrefix(l, "[timestart] "); ok {
				start = v
			}
			if v, ok := strings.CutPrefix(l, "[*] shows "); ok {
				shows = v
			}
		}
		return start, shows
	}

	// The wave pane: one trace aliased top/s (5 characters: the signal
	// pane's 120-pixel minimum), 1400 - 280 - 120 - 29 = 971 pixels; a
	// window after 0 is zoomed for 971 + 971/32 = 1001 and its start
	// moved by half of what the 971 pixels leave out
	// (waves.SaveFile.Encode).
	It("spans the key signals' first to last change, padded by a twentieth", func() {
		// 10..90 ns: a twentieth of 80 ns is 4 ns on each side, 6..94 ns;
		// 88000*971/1001 = 85362.6 ps shown, half of 2637.4 left out:
		// 6000 + 1318 = 7318.
		start, shows := window(scenario.WaveView{Groups: []waves.ViewGroup{scenario.KeyGroup("g", "top.s")}})
		Expect(start).To(Equal("7318"))
		Expect(shows).To(Equal("6ns to 94ns"))
	})

	It("spans the scenario's Span from the first change", func() {
		// 10 ns + 20 ns = 30 ns; a twentieth of 20 ns is 1 ns (MinPad),
		// 9..31 ns; 22000*971/1001 = 21340.7 ps shown, half of 659.3 left
		// out: 9000 + 329 = 9329.
		start, shows := window(scenario.WaveView{Groups: []waves.ViewGroup{scenario.KeyGroup("g", "top.s")}, Span: 20000})
		Expect(start).To(Equal("9329"))
		Expect(shows).To(Equal("9ns to 31ns"))
	})

	It("shows the whole dump when no key signal changes", func() {
		start, shows := window(scenario.WaveView{Groups: []waves.ViewGroup{scenario.KeyGroup("g", "top.quiet")}})
		Expect(start).To(Equal("0"))
		Expect(shows).To(Equal("0ps to 100ns"))
	})
})
