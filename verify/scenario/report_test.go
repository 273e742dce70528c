package scenario_test

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Report.Print", func() {
	long := "telegraphos.txt 3.2 «a stream of 100 remote write operations takes less than 50 µsec», measured with the hardware counters of both workstations"
	rep := func() *scenario.Report {
		r := &scenario.Report{Title: "t"}
		r.Add("short", "1 µs", "1 µs", "paper.txt 1")
		r.Add(strings.Repeat("m", 80), strings.Repeat("v", 70), strings.Repeat("p", 30), long)
		return r
	}

	It("keeps every table line within TableWidth and cells under their caps unchanged", func() {
		var b bytes.Buffer
		rep().Print(&b)
		lines := strings.Split(b.String(), "\n")
		Expect(lines[3]).To(HavePrefix("metric"))
		for _, l := range lines[3:6] {
			Expect(utf8.RuneCountInString(l)).To(BeNumerically("<=", scenario.TableWidth), l)
		}
		Expect(lines[4]).To(MatchRegexp(`^short\s+1 µs\s+1 µs\s+paper\.txt 1$`))
		Expect(lines[5]).To(ContainSubstring("…[1]"))
		Expect(lines[5]).To(ContainSubstring("…[4]"))
		// 160 = 50 + 36 + 12 + 56 + 3 gutters of 2.
		Expect(scenario.TableWidth).To(Equal(160))
	})

	It("prints the full text of every capped cell as a numbered note, wrapped", func() {
		var b bytes.Buffer
		rep().Print(&b)
		out := b.String()
		notes := out[strings.Index(out, "\n[1] "):]
		for _, l := range strings.Split(notes, "\n") {
			Expect(utf8.RuneCountInString(l)).To(BeNumerically("<=", scenario.NoteWidth), l)
		}
		Expect(notes).To(ContainSubstring("[1] " + strings.Repeat("m", 80) + "\n"))
		Expect(notes).To(ContainSubstring("[2] " + strings.Repeat("v", 70) + "\n"))
		Expect(notes).To(ContainSubstring("[3] " + strings.Repeat("p", 30) + "\n"))
		i := strings.Index(notes, "[4] ")
		Expect(i).To(BeNumerically(">=", 0))
		joined := strings.Join(strings.Fields(notes[i+4:strings.Index(notes[i:], "\n\n")+i]), " ")
		Expect(joined).To(Equal(long))
	})

	It("lends a narrow column's spare width to a wide one, cutting nothing when the table fits", func() {
		r := &scenario.Report{Title: "t"}
		// Natural widths 6 ("metric"), 60, 5 ("paper"), 80: spare 44 + 7 = 51
		// covers model's 24 and source's 24 over their caps.
		r.Add("m", strings.Repeat("v", 60), "", strings.Repeat("s", 80))
		var b bytes.Buffer
		r.Print(&b)
		Expect(b.String()).NotTo(ContainSubstring("…["))
		Expect(b.String()).To(ContainSubstring(strings.Repeat("v", 60) + "  -      " + strings.Repeat("s", 80) + "\n"))
	})

	It("uses one note for a text cut in several rows", func() {
		r := rep()
		r.Add("again", "1", "1", long)
		var b bytes.Buffer
		r.Print(&b)
		Expect(strings.Count(b.String(), "…[4]")).To(Equal(2))
		Expect(b.String()).NotTo(ContainSubstring("[5]"))
	})

	It("cuts a cell to exactly its cap, the mark included", func() {
		c, cut := scenario.Cap("abcdefghij", 8, 3)
		Expect(cut).To(BeTrue())
		Expect(c).To(Equal("abcd…[3]")) // 4 runes kept + "…[3]" (4 runes) = 8
		c, cut = scenario.Cap("µµµ", 3, 1)
		Expect(cut).To(BeFalse())
		Expect(c).To(Equal("µµµ"))
	})
})

var _ = Describe("Catalog", func() {
	cat := scenario.Catalog{
		(&scenario.Scenario{Name: "a", Summary: "first"}).In("X", "1 s"),
		(&scenario.Scenario{Name: "bb", Summary: "second"}).In("Y", "< 0.1 s"),
		(&scenario.Scenario{Name: "ccc", Summary: strings.Repeat("s", 120)}).In("X", "50 s"),
	}

	It("groups by system in order of first appearance", func() {
		gs := cat.Groups()
		Expect(gs).To(HaveLen(2))
		Expect(gs[0].System).To(Equal("X"))
		Expect(gs[0].Scenarios).To(HaveLen(2))
		Expect(gs[0].Scenarios[1].Name).To(Equal("ccc"))
		Expect(gs[1].System).To(Equal("Y"))
	})

	It("prints a header per system, aligned lines, an over-long one cut to ListWidth", func() {
		var b bytes.Buffer
		cat.PrintList(&b)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		Expect(lines[:2]).To(Equal([]string{"X", "  a    1 s   first"}))
		Expect(utf8.RuneCountInString(lines[2])).To(Equal(scenario.ListWidth))
		Expect(lines[2]).To(HaveSuffix("…"))
		Expect(lines[3:]).To(Equal([]string{"", "Y", "  bb  < 0.1 s  second"}))
	})
})
