package cashtb_test

import (
	"strconv"
	"time"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/cashtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// run runs prog on nodes x cpus with mutations mut and returns the result
// and the run's error.
func run(prog cashtb.Program, nodes, cpus int, mut map[string]int) (cashtb.Result, error) {
	GinkgoHelper()
	e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), TimeLimit: 2 * clock.Second, Mutations: mut})
	c := cashtb.DefaultConfig()
	c.Nodes, c.CPUs = nodes, cpus
	b, err := cashtb.Build(e, c, prog)
	Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	res, err := b.Run()
	GinkgoWriter.Printf("%s %dx%d: %v simulated, %v wall, %+v\n", prog.Name(), nodes, cpus, res.Time, time.Since(start), res.Total)
	return res, err
}

var _ = Describe("Barriers and page coherence (2L)", func() {
	st := stencil{Rows: 34, Cols: 64, Iters: 2}

	It("gives one process the plain-Go result", func() {
		res, err := run(st, 1, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Memory).To(Equal(st.reference()))
	})

	for _, nc := range [][2]int{{2, 2}, {4, 2}} {
		It("gives the one-process result bit for bit on "+itoa(nc[0])+"x"+itoa(nc[1])+", with transfers, twins, diffs and notices", func() {
			one, err := run(st, 1, 1, nil)
			Expect(err).NotTo(HaveOccurred())
			res, err := run(st, nc[0], nc[1], nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Memory).To(Equal(one.Memory))
			t := res.Total
			Expect([]int{t.PageTransfers, t.Twins, t.Diffs, t.WriteNotices}).To(HaveEach(BeNumerically(">", 0)))
		})
	}
})

func itoa(n int) string { return strconv.Itoa(n) }
