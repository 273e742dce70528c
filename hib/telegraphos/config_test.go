package telegraphos_test

import (
	tg "github.com/nisim/nisim/hib/telegraphos"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Config", func() {
	It("needs transmit queues on its link (the outgoing interfaces push into them)", func() {
		c := tg.TelegraphosI()
		Expect(c.Validate()).To(Succeed())
		c.Link.TxDepth = 0 // a link may have none (routers), a HIB's may not
		Expect(c.Validate()).To(MatchError(ContainSubstring("link: transmit queue depth 0 must be at least 1")))
	})
})
