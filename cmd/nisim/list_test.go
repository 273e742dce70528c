package main

import (
	"strings"
	"unicode/utf8"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("nisim list", func() {
	It("groups every scenario once under its system, each line within 100 columns", func() {
		code, out, errOut := nisim("list")
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		seen := map[string]int{}
		var headers []string
		group := ""
		for _, l := range lines {
			Expect(utf8.RuneCountInString(l)).To(BeNumerically("<=", 100), l)
			switch {
			case l == "":
			case !strings.HasPrefix(l, " "):
				group = l
				headers = append(headers, l)
			default:
				f := strings.Fields(l)
				Expect(group).NotTo(BeEmpty(), "a scenario line before any header: %q", l)
				seen[f[0]]++
				s, err := catalog().Lookup(f[0])
				Expect(err).NotTo(HaveOccurred())
				Expect(s.System).To(Equal(group), f[0])
				Expect(l).To(ContainSubstring(s.Typical))
				Expect(l).To(HaveSuffix(s.Summary), "summary cut: rewrite it shorter where it is registered")
			}
		}
		Expect(headers).To(Equal([]string{"demo", "networks", "ATM", "Memory Channel", "Telegraphos", "Myrinet/LCI", "SHRIMP"}))
		for _, s := range catalog() {
			Expect(seen[s.Name]).To(Equal(1), s.Name)
			Expect(s.Typical).NotTo(BeEmpty(), s.Name)
		}
		Expect(seen).To(HaveLen(len(catalog())))
	})

	It("still lists the mutations with --mutations", func() {
		code, out, _ := nisim("list", "--mutations")
		Expect(code).To(Equal(0))
		for _, m := range env.Mutations() {
			Expect(out).To(MatchRegexp(`(?m)^` + strings.ReplaceAll(m.Name, ".", `\.`) + `\s`))
		}
		Expect(out).NotTo(ContainSubstring("Telegraphos\n"))
	})

	It("prints report tables within the cap, the full text of a capped cell below", func() {
		code, out, _ := nisim("run", "telegraphos-fetchinc")
		Expect(code).To(Equal(0))
		table := false
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "metric ") {
				table = true
			}
			if table && l == "" {
				break
			}
			if table {
				Expect(utf8.RuneCountInString(l)).To(BeNumerically("<=", scenario.TableWidth), l)
			}
		}
		Expect(table).To(BeTrue())
		// fetchinc's source quote is longer than the cap: cut, and in full as note 1.
		Expect(out).To(ContainSubstring("…[1]"))
		Expect(out).To(MatchRegexp(`(?m)^\[1\] telegraphos\.txt 2\.2\.3 «Telegraphos implements the fetch-`))
	})
})
