package cashmere_test

import (
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/env"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// proc is the programs' interface of docs/cashmere-design.md section 2
// (host/cashapps.Proc): the runtime's handle must have its method set.
type proc interface {
	ID() int
	Procs() int
	Load(addr uint64, dst []uint64)
	Store(addr uint64, src []uint64)
	Compute(cycles int)
	Poll()
	Lock(l int)
	Unlock(l int)
	Barrier()
	SetFlag(f int, v uint64)
	WaitFlag(f int, v uint64)
}

var _ proc = (*cashmere.Process)(nil)

func config() cashmere.Config {
	return cashmere.Config{Variant: "2L", Nodes: 2, CPUs: 2, Pages: 4, SuperpagePages: 1, Locks: 1, Flags: 1}
}

// layout returns a layout every field of which is set (the addresses are
// not used by these specs).
func layout(c cashmere.Config) cashmere.Layout {
	n := c.Nodes
	row := func(base uint64) []uint64 {
		a := make([]uint64, n)
		for i := range a {
			a[i] = base + uint64(i)<<20
		}
		return a
	}
	l := cashmere.Layout{SharedBase: 16 << 20, TwinBase: 48 << 20, MetaBase: 80 << 20,
		DataTx: row(1 << 30), DirTx: row(2 << 30), DirRx: row(3 << 30), MsgRx: row(4 << 30), PollRx: row(5 << 30),
		SyncTx: row(6 << 30), SyncRx: row(7 << 30), BarTx: row(8 << 30), BarRx: row(9 << 30)}
	for range n {
		l.MsgTx = append(l.MsgTx, row(10<<30))
		l.PollTx = append(l.PollTx, row(11<<30))
	}
	return l
}

var _ = Describe("Config and Layout", func() {
	It("refuse bad values with an error naming the field", func() {
		for _, x := range []struct {
			mod  func(c *cashmere.Config)
			want string
		}{
			{func(c *cashmere.Config) { c.Variant = "3L" }, `Variant "3L" is not implemented`},
			{func(c *cashmere.Config) { c.Variant, c.Nodes, c.CPUs = cashmere.Variant1LD, 8, 4 }, `Variant "1LD" needs Nodes*CPUs at most 8`},
			{func(c *cashmere.Config) { c.Nodes = 9 }, "Nodes 9"},
			{func(c *cashmere.Config) { c.CPUs = 0 }, "CPUs 0"},
			{func(c *cashmere.Config) { c.Pages = 0 }, "Pages 0"},
			{func(c *cashmere.Config) { c.SuperpagePages = 0 }, "SuperpagePages 0"},
			{func(c *cashmere.Config) { c.Locks = -1 }, "Locks -1"},
			{func(c *cashmere.Config) { c.Flags = -1 }, "Flags -1"},
			{func(c *cashmere.Config) { c.RemapCycles = -1 }, "RemapCycles -1"},
		} {
			c := config()
			x.mod(&c)
			Expect(c.Validate()).To(MatchError(ContainSubstring(x.want)))
		}
		c := config()
		Expect(c.Validate()).To(Succeed())
		Expect(layout(c).Validate(c)).To(Succeed())
		l := layout(c)
		l.SharedBase = 100
		Expect(l.Validate(c)).To(MatchError(ContainSubstring("Layout.SharedBase 0x64")))
		l = layout(c)
		l.DirRx = l.DirRx[:1]
		Expect(l.Validate(c)).To(MatchError(ContainSubstring("Layout.DirRx has 1 entries")))
		l = layout(c)
		l.MsgTx[0][1] = 0
		Expect(l.Validate(c)).To(MatchError(ContainSubstring("Layout.MsgTx[0][1] is 0")))
	})

	It("New refuses a missing env or remapping hook; Install refuses processes out of order", func() {
		c := config()
		_, err := cashmere.New(nil, c, layout(c), cashmere.Hooks{})
		Expect(err).To(MatchError(ContainSubstring("no env")))
		e := env.New(env.Options{})
		_, err = cashmere.New(e, c, layout(c), cashmere.Hooks{})
		Expect(err).To(MatchError(ContainSubstring("Hooks.Remap")))
		rt, err := cashmere.New(e, c, layout(c), cashmere.Hooks{Remap: func(int, int, int) error { return nil }})
		Expect(err).NotTo(HaveOccurred())
		_, err = rt.Install(nil, 0, 1)
		Expect(err).To(MatchError(ContainSubstring("process 1 installed out of order (next is 0)")))
		_, err = rt.Install(nil, 2, 0)
		Expect(err).To(MatchError(ContainSubstring("node 2")))
		// Initial homes are round robin by superpage (section 2.3).
		Expect([]int{rt.Home(0), rt.Home(1), rt.Home(2), rt.Home(3)}).To(Equal([]int{0, 1, 0, 1}))
	})
})

var _ = Describe("Directory words and the poll flag", func() {
	It("pack section 2.3's fields: 2 permission bits, 6 of exclusive holder, 6 of home processor", func() {
		w := cashmere.DirWordOf(cpu.PermReadWrite, 37, true)
		// perm 3 | no exclusive holder 0x3f<<2 = 0xfc | home 37<<8 = 0x2500 | fixed 0x4000.
		Expect(w).To(Equal(uint32(0x3 | 0xfc | 0x2500 | 0x4000)))
		Expect(cashmere.DirPermOf(w)).To(Equal(cpu.PermReadWrite))
		Expect(cashmere.DirHomeOf(w)).To(Equal(37))
		Expect(w & cashmere.DirFixed).NotTo(BeZero())
		Expect(cashmere.DirWordOf(cpu.PermNone, 0, false) & cashmere.DirFixed).To(BeZero())
	})

	It("gives every request of every node its own poll value, never 0", func() {
		seen := map[uint32]bool{}
		for node := range 8 {
			for seq := uint32(1); seq <= 100; seq++ {
				v := cashmere.PollValueOf(node, seq)
				Expect(v).NotTo(BeZero())
				Expect(seen[v]).To(BeFalse())
				seen[v] = true
			}
		}
	})
})
