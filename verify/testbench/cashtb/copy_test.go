package cashtb_test

import (
	"github.com/nisim/nisim/host/cashmere"

	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("The copy rule at every barrier exit (cashmere.copy)", func() {
	st := stencil{Rows: 34, Cols: 64, Iters: 1}

	It("catches an acquire that invalidates nothing at the first barrier exit with a stale copy", func() {
		// Page 1 holds row 16 of process 1 (node 0) and rows 17-31 of
		// processes 2 and 3 (node 1, its home). Process 1 fetches it at its
		// write fault and diffs row 16 home at each barrier; the home
		// writers' write notices reach node 0 at each barrier, and process
		// 1's departure acquire must invalidate its copy (section 2.4.2).
		// At barrier 1 the notice is redundant (the protocol events show
		// the fetch at 481 us came after node 1's last store to the page,
		// so the copy is current); from barrier 2 on, node 1's red-point
		// updates are missing from it. Without the invalidation the rule
		// fires at barrier 2's exit (2,261 us), not at the end (2,785 us).
		_, err := run(st, 2, 2, map[string]int{"cashmere.skipinvalidate": 1})
		Expect(err).To(MatchError(ContainSubstring("[cashmere.copy]")))
		first := err.Error()
		first = first[strings.Index(first, "[cashmere.copy]"):]
		GinkgoWriter.Println(first[:strings.IndexByte(first+"\n", '\n')])
		Expect(first).To(MatchRegexp(`^\[cashmere.copy\][^\n]* at barrier 2's exit`))
	})
})

var _ = Describe("The copy rule at every barrier exit under the variants", func() {
	// Each protocol node's copy is compared with the master: under 1LD and
	// 1L every processor's own copy (Layout.Offset), under 2LOffMC the
	// home's node memory.
	for _, v := range []string{cashmere.Variant1LD, cashmere.Variant1L, cashmere.Variant2LOffMC, cashmere.Variant2LS} {
		It("catches an acquire that invalidates nothing at a barrier exit under "+v, func() {
			st := stencil{Rows: 34, Cols: 64, Iters: 1}
			_, err := runV(st, v, 2, 2, map[string]int{"cashmere.skipinvalidate": 1})
			Expect(err).To(MatchError(MatchRegexp(`\[cashmere.copy\][^\n]* at barrier \d+'s exit`)))
			first := err.Error()[strings.Index(err.Error(), "[cashmere.copy]"):]
			GinkgoWriter.Println(v, first[:strings.IndexByte(first+"\n", '\n')])
		})
	}
})
