package shrimptb_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/svm"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// runSVM runs prog on nodes nodes under protocol and compares the final
// memory with the sequential run (a program planned for a process count,
// cashapps.Random, has its own check: seq false).
func runSVM(protocol string, nodes int, prog cashapps.Program, seq bool, muts ...string) (shrimptb.SVMResult, error) {
	var want []byte
	if seq {
		var err error
		want, err = cashapps.RunSequential(prog)
		Expect(err).NotTo(HaveOccurred())
	}
	mut := map[string]int{}
	for _, m := range muts {
		mut[m] = 1
	}
	e := env.New(env.Options{Seed: 1, TimeLimit: 5 * clock.Second, Mutations: mut})
	c := shrimptb.DefaultSVM(protocol)
	c.Cluster.Nodes = nodes
	res, err := shrimptb.RunSVM(e, c, prog)
	if err == nil && seq && !cmp.Equal(res.Memory, want) {
		err = fmt.Errorf("final memory differs from the sequential run")
	}
	return res, err
}

var _ = Describe("SVM on SHRIMP (issue 19)", func() {
	for _, proto := range svm.Protocols() {
		It(fmt.Sprintf("runs SOR bit-exact on 4 nodes under %s", proto), func() {
			prog, err := cashapps.NewSOR(cashapps.SORConfig{Rows: 34, Cols: 64, Iters: 2})
			Expect(err).NotTo(HaveOccurred())
			res, err := runSVM(proto, 4, prog, true)
			Expect(err).NotTo(HaveOccurred())
			GinkgoWriter.Printf("%s: %v, %+v\n", proto, res.Time, res.Total)
			Expect(res.Total.Fetches).To(BeNumerically(">", 0))
		})
	}

	for i, proto := range svm.Protocols() {
		seed := uint64(i + 1)
		It(fmt.Sprintf("runs randomised data-race-free programs (seed %d) on 16 nodes under %s bit-exact against the replay in lock order", seed, proto), func() {
			rc := cashapps.RandomConfig{Seed: seed, Procs: 16, DataPages: 2, Granule: 16, Phases: 2,
				Locks: 2, BlockWords: 8, Sections: 1, WriteShare: 128, Compute: 200}
			prog, err := cashapps.NewRandom(rc)
			Expect(err).NotTo(HaveOccurred())
			res, err := runSVM(proto, 16, prog, false)
			Expect(err).NotTo(HaveOccurred())
			Expect(prog.Check(res.Memory)).To(Succeed())
			GinkgoWriter.Printf("%s: %v, %+v\n", proto, res.Time, res.Total)
			t := res.Total
			Expect(t.Barriers).To(Equal(uint64(16 * (rc.Phases + 1))))
			Expect([]uint64{t.Fetches, t.Invalidations, t.Grants, t.Intervals}).To(HaveEach(BeNumerically(">", 0)))
		})
	}

	// Each checker fails on a broken model (issue 19 section 4: «drop a
	// diff, apply a write notice before its diff, skip a home-copy flush in
	// AURC»).
	mutants := []struct{ proto, mutation, rule string }{
		{svm.HLRC, "svm.dropdiff", svm.RuleCopy},
		{svm.HLRC, "svm.noticesfirst", svm.RuleDiff},
		{svm.AURC, "svm.noflush", svm.RuleDiff},
		{svm.HLRCAU, "svm.noflush", svm.RuleDiff},
		{svm.HLRC, "svm.skipinvalidate", svm.RuleCopy},
	}
	for _, m := range mutants {
		It(fmt.Sprintf("catches %s under %s with %s", m.mutation, m.proto, m.rule), func() {
			prog, err := cashapps.NewSOR(cashapps.SORConfig{Rows: 34, Cols: 64, Iters: 2})
			Expect(err).NotTo(HaveOccurred())
			_, err = runSVM(m.proto, 4, prog, true, m.mutation)
			Expect(err).To(MatchError(ContainSubstring("[" + m.rule + "]")))
		})
	}

	It("catches svm.grantheld under hlrc with svm.lock (Random, 16 nodes, one lock, seed 1)", func() {
		prog, err := cashapps.NewRandom(cashapps.RandomConfig{Seed: 1, Procs: 16, DataPages: 2, Granule: 16, Phases: 2,
			Locks: 1, BlockWords: 8, Sections: 4, WriteShare: 128, Compute: 200})
		Expect(err).NotTo(HaveOccurred())
		_, err = runSVM(svm.HLRC, 16, prog, false, "svm.grantheld")
		Expect(err).To(MatchError(ContainSubstring("[" + svm.RuleLock + "]")))
	})
	It("catches svm.nowindow under hlrc with svm.ring (Radix's scattered diffs, 4 nodes)", func() {
		prog, err := cashapps.NewRadix(cashapps.RadixConfig{Keys: 8192, RadixBits: 6, KeyBits: 12, Seed: 1})
		Expect(err).NotTo(HaveOccurred())
		res, err := runSVM(svm.HLRC, 4, prog, true)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("radix hlrc: %v, %+v\n", res.Time, res.Total)
		_, err = runSVM(svm.HLRC, 4, prog, true, "svm.nowindow")
		Expect(err).To(MatchError(ContainSubstring("[" + svm.RuleRing + "]")))
	})
})
