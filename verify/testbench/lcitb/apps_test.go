package lcitb_test

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/lciapps"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// appsOn is an 8-node cluster of the platform.
func appsOn(pl lcilib.Platform) lcitb.Config {
	c := lcitb.DefaultConfig()
	c.Platform, c.Nodes = pl, 8
	return c
}

var _ = Describe("LCI apps", func() {
	It("compute per step is T1 / steps (/ P): ASP on the PPro at 8 nodes, Barnes on the P3", func() {
		asp, err := lciapps.Lookup(lciapps.ASP)
		Expect(err).NotTo(HaveOccurred())
		// 63.3 s / 1024 iterations / 8 processors = 7,727,050.78 ns.
		Expect(asp.Compute(0, 8)).To(Equal(clock.Time(7727050781250) / 1000))
		barnes, err := lciapps.Lookup(lciapps.Barnes)
		Expect(err).NotTo(HaveOccurred())
		// 15.5 s / (16,384 bodies x 4 time steps) = 236.5 µs, whatever P.
		Expect(barnes.Compute(1, 8)).To(Equal(barnes.Compute(1, 64)))
		Expect(float64(barnes.Compute(1, 8)) / float64(clock.Microsecond)).To(BeNumerically("~", 236.5, 0.1))
		_, err = lciapps.Lookup("fft")
		Expect(err).To(MatchError(ContainSubstring(`unknown application "fft"`)))
	})

	// Every skeleton x variant on 8 nodes, both platforms (CI): 2 warm-up
	// and 3 measured steps, SOR 1 + 2 (its steps are 18-36 ms of
	// simulated time, the longest).
	It("apps: every skeleton x variant runs on 8 nodes, both platforms, quiescent, with a finite time per step relative to I-sdma; the robust directions hold", func() {
		start := time.Now()
		// rel[platform][app][variant] is the time per step over I-sdma's.
		rel := map[string]map[string]map[string]float64{}
		for _, pl := range []lcilib.Platform{lcilib.PPro(), lcilib.P3()} {
			rel[pl.Name] = map[string]map[string]float64{}
			for _, app := range lciapps.Names {
				warm, measured := 2, 3
				if app == lciapps.SOR {
					warm, measured = 1, 2
				}
				var sdma clock.Time
				rel[pl.Name][app] = map[string]float64{}
				for _, v := range lcitb.VariantsOf(app) {
					what := fmt.Sprintf("%s %s %s", pl.Name, app, v)
					r, err := lcitb.RunApp(nil, appsOn(pl), app, v, warm, measured)
					Expect(err).NotTo(HaveOccurred(), what)
					Expect(r.Run.Stuck).To(BeFalse(), what)
					Expect(r.Steps).To(HaveLen(measured), what)
					Expect(r.StepTime).To(BeNumerically(">", 0), what)
					Expect(r.PacketRate).To(BeNumerically(">", 0), what)
					Expect(r.CRLViolations).To(BeZero(), what)
					Expect(r.JobsReceived).To(Equal(r.JobsPushed), what)
					if v == lcitb.AppSDMA {
						sdma = r.StepTime
					}
					x := float64(r.StepTime) / float64(sdma)
					Expect(math.IsInf(x, 0) || math.IsNaN(x)).To(BeFalse(), what)
					rel[pl.Name][app][v] = x
					GinkgoWriter.Printf("%s: %.1f µs/step, %.3f x I-sdma, %.0f packets/s/node\n", what, float64(r.StepTime)/1e6, x, r.PacketRate)
				}
			}
			// Robust by mechanism, asserted: host-level forwarding changes
			// only how multicasts are forwarded, so the applications that
			// send none (Awari's RPCs, Barnes's and Radix's CRL misses,
			// Puzzle's unicasts) run the same cycles; QR, whose step
			// waits for a broadcast, is slower with it (section 7.4); and
			// I-hrx's added send and receive work costs Puzzle-4, with 16
			// times the messages, more than Puzzle-64 (section 7.1). The
			// other directions of section 7 are reported (lci-apps), not
			// asserted: at 8 nodes they are within a few percent.
			for _, app := range []string{lciapps.Awari, lciapps.Barnes, lciapps.Radix, lciapps.Puzzle4, lciapps.Puzzle64} {
				Expect(rel[pl.Name][app][lcitb.AppHMC]).To(Equal(1.0), pl.Name+" "+app+" hmc")
			}
			Expect(rel[pl.Name][lciapps.QR][lcitb.AppHMC]).To(BeNumerically(">", 1), pl.Name+" QR hmc")
			Expect(rel[pl.Name][lciapps.Puzzle4][lcitb.AppHRX]).To(BeNumerically(">", rel[pl.Name][lciapps.Puzzle64][lcitb.AppHRX]), pl.Name+" Puzzle hrx")
			Expect(rel[pl.Name][lciapps.Puzzle64][lcitb.AppHRX]).To(BeNumerically(">", 1), pl.Name+" Puzzle-64 hrx")
		}
		GinkgoWriter.Printf("wall time %v\n", time.Since(start).Round(time.Millisecond))
	})

	It("same seed, same numbers: Awari (random RPC destinations) and Puzzle-4 twice on the P3", func() {
		for _, app := range []string{lciapps.Awari, lciapps.Puzzle4} {
			a, err := lcitb.RunApp(nil, appsOn(lcilib.P3()), app, lcitb.AppHRX, 1, 2)
			Expect(err).NotTo(HaveOccurred())
			b, err := lcitb.RunApp(nil, appsOn(lcilib.P3()), app, lcitb.AppHRX, 1, 2)
			Expect(err).NotTo(HaveOccurred())
			Expect(cmp.Diff(a, b)).To(BeEmpty())
		}
	})

	It("Puzzle-4's jobs all arrive intact: pushed = received, none damaged (multigame's check)", func() {
		r, err := lcitb.RunApp(nil, appsOn(lcilib.PPro()), lciapps.Puzzle4, lcitb.AppSDMA, 0, 1)
		Expect(err).NotTo(HaveOccurred())
		// 16 x 7 jobs per node plus the prefilled buffers (0-3 per
		// destination) on 8 nodes.
		Expect(r.JobsPushed).To(BeNumerically(">=", 8*16*7))
		Expect(r.JobsPushed).To(BeNumerically("<=", 8*16*7+8*7*3))
		Expect(r.JobsReceived).To(Equal(r.JobsPushed))
	})

	It("refuses a variant that is not the application's (I-rcpy is SOR's), and a column size other than SOR's, with one line naming it", func() {
		_, err := lcitb.RunApp(nil, appsOn(lcilib.PPro()), lciapps.QR, lcitb.AppAsync, 1, 1)
		Expect(err).To(MatchError(ContainSubstring(`variant "async" is SOR's only`)))
		_, err = lcitb.RunApp(nil, appsOn(lcilib.PPro()), lciapps.ASP, lcitb.AppRCPY, 1, 1)
		Expect(err).To(MatchError(ContainSubstring(`lci app asp rcpy: variant "rcpy" is SOR's only`)))
		Expect(err.Error()).NotTo(ContainSubstring("\n"))
		_, err = lcitb.RunAppCol(nil, appsOn(lcilib.PPro()), lciapps.QR, lcitb.AppSDMA, 3072, 1, 1)
		Expect(err).To(MatchError(ContainSubstring("a column size are SOR's")))
		_, err = lcitb.RunAppCol(nil, appsOn(lcilib.PPro()), lciapps.SOR, lcitb.AppSDMA, 1536*1536, 1, 1)
		Expect(err).To(MatchError(ContainSubstring("SOR column size 2359296 on 8 nodes")))
		_, err = lcitb.RunApp(nil, appsOn(lcilib.PPro()), lciapps.SOR, "dma", 1, 1)
		Expect(err).To(MatchError(ContainSubstring(`unknown variant "dma"`)))
		Expect(err.Error()).NotTo(ContainSubstring("\n"))
	})
})

// SOR on I-rcpy (section 7.2, figure 14): border rows by RemoteCopy into
// the neighbours' ghost rows, the reduction on MPI.
var _ = Describe("LCI apps rcpy", func() {
	It("rcpy: SOR's ghost rows arrive intact by RemoteCopy on 8 nodes, the NTLBs consistent; at 1536 and 6144 (PPro) I-rcpy and +async beat I-sdma, more so at 6144", func() {
		start := time.Now()
		// rel[col][variant]: 1 warm-up step (the TLB misses: 2 rows of
		// 4 pages into each inner node, pinned then) and 1 measured.
		rel := map[int]map[string]float64{}
		for _, col := range []int{1536, 6144} {
			rel[col] = map[string]float64{}
			var sdma clock.Time
			for _, v := range []string{lcitb.AppSDMA, lcitb.AppRCPY, lcitb.AppRcpyAsync} {
				what := fmt.Sprintf("PPro SOR %d %s", col, v)
				r, err := lcitb.RunAppCol(nil, appsOn(lcilib.PPro()), lciapps.SOR, v, col, 1, 1)
				// RunAppCol fails on any checker's report: apps.data
				// (a ghost row's bytes or flag differ from the
				// neighbour's border row), lci.ntlb (after the run),
				// lci.api (a refused RemoteCopy).
				Expect(err).NotTo(HaveOccurred(), what)
				Expect(r.Run.Stuck).To(BeFalse(), what)
				if v == lcitb.AppSDMA {
					sdma = r.StepTime
				}
				rel[col][v] = float64(r.StepTime) / float64(sdma)
				GinkgoWriter.Printf("%s: %.1f µs/step, %.4f x I-sdma\n", what, float64(r.StepTime)/1e6, rel[col][v])
			}
		}
		// By mechanism: I-rcpy saves the copy into the host send queue
		// and out of the receive slots (12 KB and 48 KB per row), and
		// +async overlaps the rows' transfer with the computation.
		for _, col := range []int{1536, 6144} {
			Expect(rel[col][lcitb.AppRCPY]).To(BeNumerically("<", 1), "rcpy")
			Expect(rel[col][lcitb.AppRcpyAsync]).To(BeNumerically("<", rel[col][lcitb.AppRCPY]), "rcpy-async")
		}
		Expect(rel[6144][lcitb.AppRCPY]).To(BeNumerically("<", rel[1536][lcitb.AppRCPY]), "rcpy's advantage grows")
		GinkgoWriter.Printf("wall time %v\n", time.Since(start).Round(time.Millisecond))
	})

	It("rcpy: lciapps.badghost (node 0's first rows with a byte flipped) is caught at node 1's ghost row (apps.data)", func() {
		e := env.New(env.Options{Seed: 1, Mutations: map[string]int{"lciapps.badghost": 1}})
		c := appsOn(lcilib.PPro())
		c.Nodes = 2
		_, err := lcitb.RunAppCol(e, c, lciapps.SOR, lcitb.AppRCPY, 0, 0, 1)
		Expect(err).To(HaveOccurred())
		// Node 0 has one neighbour: one row, one report at node 1.
		Expect(strings.Count(err.Error(), "[apps.data]")).To(Equal(1))
		Expect(err.Error()).To(ContainSubstring("sor ghost row (I-rcpy)"))
	})

	It("rcpy: same seed, same numbers (SOR rcpy-async on the P3, 4 nodes)", func() {
		c := appsOn(lcilib.P3())
		c.Nodes = 4
		a, err := lcitb.RunAppCol(nil, c, lciapps.SOR, lcitb.AppRcpyAsync, 3072, 1, 1)
		Expect(err).NotTo(HaveOccurred())
		b, err := lcitb.RunAppCol(nil, c, lciapps.SOR, lcitb.AppRcpyAsync, 3072, 1, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(a, b)).To(BeEmpty())
	})
})

var _ = Describe("LCI apps mutations", func() {
	It("lciapps.badrow and lciapps.badsum are caught by the skeletons' checks (apps.data, apps.reduce) at every node", func() {
		for _, m := range []struct{ mut, app, rule string }{
			{"lciapps.badrow", lciapps.ASP, "apps.data"},
			{"lciapps.badsum", lciapps.SOR, "apps.reduce"},
		} {
			e := env.New(env.Options{Seed: 1, Mutations: map[string]int{m.mut: 1}})
			c := appsOn(lcilib.PPro())
			c.Nodes = 4
			_, err := lcitb.RunApp(e, c, m.app, lcitb.AppSDMA, 1, 1)
			Expect(err).To(HaveOccurred(), m.mut)
			// ASP: row 1 at all 4 nodes (the owner checks the row it
			// broadcast against the pattern too); SOR: every node's
			// reduction in both steps (4 x 2).
			want := map[string]int{"apps.data": 4, "apps.reduce": 8}[m.rule]
			Expect(strings.Count(err.Error(), "["+m.rule+"]")).To(Equal(want), m.mut)
		}
	})
})
