package cashmere_test

import (
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/env"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("2LMigr's configuration and layout (section 2.6, MC-P24)", func() {
	It("needs one-page superpages (homes migrate page by page), with a one-line error naming the field", func() {
		c := config()
		c.Variant, c.SuperpagePages = cashmere.Variant2LMigr, 2
		err := c.Validate()
		Expect(err).To(MatchError(ContainSubstring("SuperpagePages must be 1, not 2")))
		Expect(err.Error()).NotTo(ContainSubstring("\n"))
		c.SuperpagePages = 1
		Expect(c.Validate()).To(Succeed())
	})

	It("adds a shared directory word and a migration lock array per page, and 2LOffMC's diff channels", func() {
		c := config() // 2 nodes x 2 CPUs, 4 pages, 1 lock
		m := c
		m.Variant = cashmere.Variant2LMigr
		// Directory: 4 pages x 2 nodes x 4 bytes = 32; plus one shared
		// word a page: 4 x 3 x 4 = 48.
		Expect(cashmere.DirBytes(c)).To(Equal(32))
		Expect(cashmere.DirBytes(m)).To(Equal(48))
		// Sync: (1 lock + the protocol's) x 32 + 4 processes x 4 = 80;
		// plus a 32-byte array a page: 80 + 4 x 32 = 208.
		Expect(cashmere.SyncBytes(c)).To(Equal(80))
		Expect(cashmere.SyncBytes(m)).To(Equal(208))
		// Message region: 2 bins of 5 pages (2LOffMC's explicit diffs).
		Expect(cashmere.MsgBytes(m)).To(Equal(2 * 5 * 8192))
		// Application data off MC space: no home-copy transmit windows.
		l := layout(m)
		l.DataTx = nil
		Expect(l.Validate(m)).To(Succeed())
	})

	It("starts every page at its round-robin home and moves none before the run", func() {
		c := config()
		c.Variant = cashmere.Variant2LMigr
		l := layout(c)
		l.DataTx = nil
		rt, err := cashmere.New(env.New(env.Options{}), c, l, cashmere.Hooks{Remap: func(int, int, int) error { return nil }})
		Expect(err).NotTo(HaveOccurred())
		Expect([]int{rt.Home(0), rt.Home(1), rt.Home(2), rt.Home(3)}).To(Equal([]int{0, 1, 0, 1}))
	})
})
