package lciapps_test

import (
	"strings"

	"github.com/nisim/nisim/host/lciapps"
	"github.com/nisim/nisim/rtl/clock"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("application specs (Table VII)", func() {
	It("has every application of Table VII, in its order, each with a derivation and what it leaves out", func() {
		Expect(lciapps.Names).To(Equal([]string{"asp", "awari", "barnes", "leq", "puzzle4", "puzzle64", "qr", "radix", "sor"}))
		for _, n := range lciapps.Names {
			s, err := lciapps.Lookup(n)
			Expect(err).NotTo(HaveOccurred())
			Expect(s.T1[0]).To(BeNumerically(">", s.T1[1]), n) // the P3 is faster
			Expect(s.Derivation).To(Or(HavePrefix("derived:"), HavePrefix("assumed:")), n)
			Expect(s.Omits).NotTo(BeEmpty(), n)
		}
		_, err := lciapps.Lookup("fft")
		Expect(err).To(MatchError(ContainSubstring(`unknown application "fft"`)))
	})

	It("charges T1 / steps (/ P for a global iteration), worked out by hand", func() {
		ms := func(t clock.Time) float64 { return float64(t) / float64(clock.Millisecond) }
		for _, c := range []struct {
			app      string
			platform int
			p        int
			want     float64 // ms
		}{
			// ASP: 63.3 s / 1024 iterations / 8 = 7.727 ms.
			{lciapps.ASP, 0, 8, 7.7271},
			// ASP at 64 nodes: 63.3 / 1024 / 64 = 0.9659 ms.
			{lciapps.ASP, 0, 64, 0.9659},
			// SOR on the P3: 13.7 s / 100 / 8 = 17.125 ms.
			{lciapps.SOR, 1, 8, 17.125},
			// Radix: 4.6 s / (5 x 11,718) region moves = 0.0785 ms, any P.
			{lciapps.Radix, 0, 8, 0.0785},
			{lciapps.Radix, 0, 64, 0.0785},
			// Barnes on the P3: 15.5 s / 65,536 bodies = 0.2365 ms.
			{lciapps.Barnes, 1, 8, 0.2365},
			// Awari: 452.4 s / 624,036 RPCs = 0.7250 ms.
			{lciapps.Awari, 0, 8, 0.7250},
			// Puzzle: 209.0 s / 2^24 jobs = 0.01246 ms per job.
			{lciapps.Puzzle64, 0, 8, 0.01246},
		} {
			s, err := lciapps.Lookup(c.app)
			Expect(err).NotTo(HaveOccurred())
			Expect(ms(s.Compute(c.platform, c.p))).To(BeNumerically("~", c.want, c.want*1e-3), "%s on %d", c.app, c.p)
		}
	})

	It("names Barnes's one calibrated parameter in its derivation", func() {
		s, _ := lciapps.Lookup(lciapps.Barnes)
		Expect(strings.Count(s.Derivation, "calibrated")).To(Equal(1))
		Expect(lciapps.BarnesReads).To(Equal(9))
	})
})
