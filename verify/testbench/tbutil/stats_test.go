package tbutil_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/testbench/tbutil"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("StatsOf", func() {
	It("gives the truncated mean, the extremes and the count", func() {
		// mean: (10+40+23)/3 = 73/3 = 24 ps, truncated
		Expect(tbutil.StatsOf([]clock.Time{10, 40, 23})).To(Equal(tbutil.Stats{Mean: 24, Min: 10, Max: 40, N: 3}))
	})
	It("gives zero Stats for no durations", func() {
		Expect(tbutil.StatsOf(nil)).To(Equal(tbutil.Stats{}))
	})
})
