package waves_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/waves"
)

// gtkwDump is a dump as Registry.DumpVCD writes it: a string, a 1-bit wire,
// a 32-bit wire vector and a counter in nested scopes, initial values at 0,
// changes at 2000, 5000 and 9000 ps, end at 12000.
const gtkwDump = `$version
	nisim waves 1
$end
$comment
	nisim run demo, seed 1
$end
$timescale 1ps $end
$scope module host $end
$scope module cpu $end
$var string 1 ! state $end
$upscope $end
$scope module bus $end
$var wire 1 " wait $end
$var wire 32 # addr [31:0] $end
$upscope $end
$upscope $end
$scope module ni $end
$var integer 32 $ occupancy $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
sIDLE !
0"
b0 #
b0 $
$end
#2000
sLOAD !
b100000000 #
#5000
1"
b1 $
#9000
sIDLE !
0"
#12000
`

var _ = Describe("GTKWave save files", func() {
	It("writes the settings, the flags of each format and the group markers", func() {
		s := &waves.SaveFile{
			DumpFile: "/out/demo.vcd", SaveFile: "/out/demo.gtkw",
			Comment: []string{"nisim run demo, seed 1"},
			Start:   1000, End: 11000,
			Width: 1400, Height: 900, SSTWidth: 200, SignalsWidth: 150,
			TreeOpen: []string{"host", "host.cpu"},
			Groups: []waves.SaveGroup{
				{Name: "host", Traces: []waves.SaveTrace{
					{Name: "host.cpu.state", Alias: "cpu.state", Format: waves.FormatASCII},
					{Name: "host.bus.wait", Format: waves.FormatBinary},
					{Name: "host.bus.addr[31:0]", Format: waves.FormatHex},
				}},
				{Traces: []waves.SaveTrace{
					{Name: "ni.occupancy", Format: waves.FormatDecimal},
					{Name: "ni.signed", Format: waves.FormatSigned},
				}},
			},
		}
		text, err := s.Encode()
		Expect(err).NotTo(HaveOccurred())
		// The wave pane is 1400 - 200 - 150 - 29 (borders, scroll bar) =
		// 1021 pixels; the window starts after 0, so the zoom takes the
		// pane 1/32 wider, 1021 + 31 = 1052: 10000 ps across it is 9.5057
		// ps per pixel, and GTKWave shows 2^-z/200 ps per pixel:
		// z = -log2(9.5057*200) = -log2(1901.14) = -10.892650; the 1021
		// pixels show 10000*1021/1052 = 9705 ps, and the start moves by
		// half the 295 ps that no longer fit: [timestart] 1000 + 147 =
		// 1147; no primary marker, the 26 named markers unset (-1
		// each). [sst_vpaned_height] is 900*2/5 = 360. Flags (hex
		// TR_* bits): ascii 0x800|rjustify 0x20 = 820, binary 0x8|0x20 =
		// 28, hex 0x2|0x20 = 22, decimal 0x4|0x20 = 24, signed
		// 0x400|0x20 = 420; group begin 0x800000|blank 0x200 = 800200,
		// group end 0x1000000|0x200 = 1000200. An @ line only where the
		// flags change; the second group has no name: no markers.
		want := `[*]
[*] nisim run demo, seed 1
[*]
[dumpfile] "/out/demo.vcd"
[savefile] "/out/demo.gtkw"
[timestart] 1147
[size] 1400 900
[pos] -1 -1
*-10.892650 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
[treeopen] host.
[treeopen] host.cpu.
[sst_width] 200
[signals_width] 150
[sst_expanded] 1
[sst_vpaned_height] 360
@800200
-host
@820
+{cpu.state} host.cpu.state
@28
host.bus.wait
@22
host.bus.addr[31:0]
@1000200
-host
@24
ni.occupancy
@420
ni.signed
`
		Expect(cmp.Diff(want, string(text))).To(BeEmpty())
	})

	It("refuses what GTKWave could not read, naming the field", func() {
		ok := func() *waves.SaveFile {
			return &waves.SaveFile{DumpFile: "/d.vcd", Start: 0, End: 10, Width: 1400, Height: 900,
				SSTWidth: 200, SignalsWidth: 150,
				Groups: []waves.SaveGroup{{Name: "g", Traces: []waves.SaveTrace{{Name: "a.b"}}}}}
		}
		_, err := ok().Encode()
		Expect(err).NotTo(HaveOccurred())
		for _, c := range []struct {
			edit func(*waves.SaveFile)
			msg  string
		}{
			{func(s *waves.SaveFile) { s.DumpFile = "" }, "dump file"},
			{func(s *waves.SaveFile) { s.DumpFile = `/a"b.vcd` }, "dump file"},
			{func(s *waves.SaveFile) { s.End = 0 }, "time span"},
			{func(s *waves.SaveFile) { s.Start = -5 }, "time span"},
			{func(s *waves.SaveFile) { s.Width = 0 }, "window size"},
			{func(s *waves.SaveFile) { s.SignalsWidth = 1200 }, "no wave pane"},
			{func(s *waves.SaveFile) { s.Comment = []string{"a\nb"} }, "comment"},
			{func(s *waves.SaveFile) { s.TreeOpen = []string{"a b"} }, "tree scope"},
			{func(s *waves.SaveFile) { s.Groups[0].Name = "x\ny" }, "group name"},
			{func(s *waves.SaveFile) { s.Groups[0].Traces[0].Name = "a b" }, "trace name"},
			{func(s *waves.SaveFile) { s.Groups[0].Traces[0].Alias = "a}" }, "alias"},
		} {
			s := ok()
			c.edit(s)
			_, err := s.Encode()
			Expect(err).To(MatchError(ContainSubstring(c.msg)))
		}
	})

	It("zooms a window from time 0 to the pane as it is (GTKWave cannot move it back)", func() {
		s := &waves.SaveFile{DumpFile: "/d.vcd", Start: 0, End: 10000, Width: 1400, Height: 900,
			SSTWidth: 200, SignalsWidth: 150}
		text, err := s.Encode()
		Expect(err).NotTo(HaveOccurred())
		// 1021 pixels for 10000 ps: z = -log2(10000*200/1021) =
		// -log2(1958.86) = -10.935801.
		Expect(string(text)).To(ContainSubstring("[timestart] 0\n"))
		Expect(string(text)).To(ContainSubstring("\n*-10.935801 -1 "))
	})

	It("computes the zoom that fits a span into the wave pane", func() {
		// 2^-z/200 ps per pixel = span/pixels: z = -log2(200*span/pixels).
		// 800 ps over 800 pixels: -log2(200) = -7.643856.
		Expect(waves.Zoom(800, 800)).To(BeNumerically("~", -7.643856, 1e-6))
		// 4096 ps shown at z = -10 (seen in GTKWave: 2^10 ps per 200
		// pixels, 800 pixels): 4096*200/800 = 1024 = 2^10.
		Expect(waves.Zoom(4096, 800)).To(BeNumerically("==", -10))
	})

	It("pads the action window and clips it to the dump", func() {
		// 2000..9000: a twentieth of 7000 is 350 ps, under MinPad (1000).
		from, to := waves.Window(2000, 9000, 0, 12000)
		Expect([]clock.Time{from, to}).To(Equal([]clock.Time{1000, 10000}))
		// 100 ns..900 ns: 800000/20 = 40000 ps on each side.
		from, to = waves.Window(100000, 900000, 0, 2000000)
		Expect([]clock.Time{from, to}).To(Equal([]clock.Time{60000, 940000}))
		// Clipped at the dump's start and end.
		from, to = waves.Window(500, 11800, 0, 12000)
		Expect([]clock.Time{from, to}).To(Equal([]clock.Time{0, 12000}))
		// A single change still gets a window around it.
		from, to = waves.Window(5000, 5000, 0, 5000)
		Expect([]clock.Time{from, to}).To(Equal([]clock.Time{4000, 5000}))
		// A dump that ends where it starts: the window is not clipped to
		// nothing.
		from, to = waves.Window(0, 0, 0, 0)
		Expect([]clock.Time{from, to}).To(Equal([]clock.Time{0, 1000}))
	})
})

var _ = Describe("ScanVCD", func() {
	It("reads the variables under GTKWave's names and their first and last change", func() {
		d, err := waves.ScanVCD(strings.NewReader(gtkwDump))
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Comment).To(Equal("nisim run demo, seed 1"))
		Expect(d.Start).To(Equal(clock.Time(0)))
		Expect(d.End).To(Equal(clock.Time(12000)))
		type row struct {
			Name     string
			Kind     waves.Kind
			Width    int
			Changes  int
			From, To clock.Time
		}
		var got []row
		for _, v := range d.Vars {
			got = append(got, row{v.GTKWaveName(), v.Kind, v.Width, v.Changes, v.First, v.Last})
		}
		// $dumpvars values are not changes: state changes at 2000 (LOAD)
		// and 9000 (IDLE), wait at 5000 and 9000, addr at 2000, the
		// counter at 5000.
		Expect(cmp.Diff([]row{
			{"host.cpu.state", waves.String, 1, 2, 2000, 9000},
			{"host.bus.wait", waves.Wire, 1, 2, 5000, 9000},
			{"host.bus.addr[31:0]", waves.Wire, 32, 1, 2000, 2000},
			{"ni.occupancy", waves.Integer, 32, 1, 5000, 5000},
		}, got)).To(BeEmpty())
	})

	It("reads back the dump the registry writes", func() {
		r := waves.NewRegistry(waves.Options{})
		var buf bytes.Buffer
		Expect(r.DumpVCD(&buf, waves.VCDOptions{})).To(Succeed())
		st := r.String("n0.cpu", "state")
		occ := r.Integer("n0.ni", "occupancy", 4)
		st.SetString(0, "idle")
		st.SetString(3000, "busy")
		occ.Set(4000, 2)
		occ.Set(7000, 0)
		Expect(r.Close(8000)).To(Succeed())
		d, err := waves.ScanVCD(&buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Vars).To(HaveLen(2))
		// The state's first value (idle at 0) is in $dumpvars.
		Expect(d.Vars[0].Changes).To(Equal(1))
		Expect(d.Vars[0].First).To(Equal(clock.Time(3000)))
		Expect([]clock.Time{d.Vars[1].First, d.Vars[1].Last}).To(Equal([]clock.Time{4000, 7000}))
		Expect(d.End).To(Equal(clock.Time(8000)))
	})

	It("reads a value longer than its 64 KiB buffer", func() {
		long := strings.Repeat("x", 100000)
		text := "$timescale 1ps $end\n$scope module a $end\n$var string 1 ! s $end\n$upscope $end\n" +
			"$enddefinitions $end\n#0\n$dumpvars\nsIDLE !\n$end\n#7\ns" + long + " !\n#9\n"
		d, err := waves.ScanVCD(strings.NewReader(text))
		Expect(err).NotTo(HaveOccurred())
		Expect([]clock.Time{d.Vars[0].First, d.Vars[0].Last, d.End}).To(Equal([]clock.Time{7, 7, 9}))
	})

	It("names the line of what it does not expect", func() {
		for _, c := range []struct{ text, msg string }{
			{"$timescale 1ns $end\n$enddefinitions $end\n", "line 1: timescale"},
			{"$timescale 1ps $end\n", "before $enddefinitions"},
			{"$timescale 1ps $end\n$enddefinitions $end\n#0\n1!\n", "line 4: unknown identifier"},
			{"$scope module a $end\n$var wire 1 ! x $end\n$enddefinitions $end\n#5\n#3\n", "line 5: bad or decreasing time"},
			{"junk\n", "line 1: unexpected"},
		} {
			_, err := waves.ScanVCD(strings.NewReader(c.text))
			Expect(err).To(MatchError(ContainSubstring(c.msg)), c.text)
		}
	})
})

var _ = Describe("key signal groups", func() {
	It("resolves patterns in order, each signal once, and names the patterns that match nothing", func() {
		d, err := waves.ScanVCD(strings.NewReader(gtkwDump))
		Expect(err).NotTo(HaveOccurred())
		groups, unmatched := d.Resolve([]waves.ViewGroup{
			{Name: "host", Patterns: []string{"host.bus.addr", "host.*", "nosuch.*"}},
			{Name: "again", Patterns: []string{"host.cpu"}},
			{Name: "ni", Patterns: []string{"ni"}},
		})
		var got [][]string
		for _, g := range groups {
			names := []string{g.Name}
			for _, v := range g.Vars {
				names = append(names, v.Name)
			}
			got = append(got, names)
		}
		// addr first (its pattern comes first), then the rest of host.*
		// in declaration order; "again" holds only host.cpu.state, taken
		// by host: dropped.
		Expect(cmp.Diff([][]string{
			{"host", "host.bus.addr", "host.cpu.state", "host.bus.wait"},
			{"ni", "ni.occupancy"},
		}, got)).To(BeEmpty())
		Expect(unmatched).To(Equal([]string{"nosuch.*"}))
		first, last, ok := waves.Activity(groups)
		Expect(ok).To(BeTrue())
		Expect([]clock.Time{first, last}).To(Equal([]clock.Time{2000, 9000}))
		_, _, ok = waves.Activity(nil)
		Expect(ok).To(BeFalse())
	})

	It("lays out a save file: aliases keep the signal's scope, panes fit the names, the tree opens the top scopes of the traces", func() {
		d, err := waves.ScanVCD(strings.NewReader(gtkwDump))
		Expect(err).NotTo(HaveOccurred())
		groups, _ := d.Resolve([]waves.ViewGroup{
			{Name: "host", Patterns: []string{"host"}},
			{Name: "ni", Patterns: []string{"ni"}},
		})
		s := waves.NewSaveFile("/o/d.vcd", "/o/d.gtkw", groups, 1000, 10000)
		text, err := s.Encode()
		Expect(err).NotTo(HaveOccurred())
		// host's signals share "host.": aliases cpu/state, bus/wait,
		// bus/addr; ni.occupancy alone keeps its scope. Longest alias
		// ni/occupancy, 12 characters: 12*8+40 = 136 pixels. Wave pane
		// 1400-280-136-29 = 955 pixels, 955 + 955/32 = 984 for the zoom,
		// for 9000 ps: z = -log2(9000*200/984) = -log2(1829.27) =
		// -10.837051; the 955 pixels show 9000*955/984 = 8734.8 ps: the
		// start moves by half of 265.2, [timestart] 1000 + 132 = 1132.
		want := `[*]
[*]
[dumpfile] "/o/d.vcd"
[savefile] "/o/d.gtkw"
[timestart] 1132
[size] 1400 900
[pos] -1 -1
*-10.837051 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
[treeopen] host.
[treeopen] ni.
[sst_width] 280
[signals_width] 136
[sst_expanded] 1
[sst_vpaned_height] 360
@800200
-host
@820
+{cpu/state} host.cpu.state
@28
+{bus/wait} host.bus.wait
@22
+{bus/addr} host.bus.addr[31:0]
@1000200
-host
@800200
-ni
@24
+{ni/occupancy} ni.occupancy
@1000200
-ni
`
		Expect(cmp.Diff(want, string(text))).To(BeEmpty())
	})
})

// BenchmarkScanVCD reads back a dump of 64 counters and 200,000 value
// changes (one a nanosecond), as writeSaveFile does after a run: the
// bytes per second and allocations of the scan.
func BenchmarkScanVCD(b *testing.B) {
	r := waves.NewRegistry(waves.Options{})
	var buf bytes.Buffer
	if err := r.DumpVCD(&buf, waves.VCDOptions{}); err != nil {
		b.Fatal(err)
	}
	var sigs []*waves.Signal
	for i := range 64 {
		sigs = append(sigs, r.Integer("bench.blk", fmt.Sprintf("level%d", i), 16))
	}
	const n = 200000
	for t := 1; t <= n; t++ {
		sigs[t%64].Set(clock.Time(t)*clock.Nanosecond, uint64(t))
	}
	if err := r.Close(clock.Time(n+1) * clock.Nanosecond); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := waves.ScanVCD(bytes.NewReader(data))
		if err != nil || len(d.Vars) != 64 {
			b.Fatal(err)
		}
	}
}
