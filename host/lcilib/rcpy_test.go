package lcilib_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rsram is a flat NI memory holding the NTLB at 0.
type rsram []byte

func (s rsram) Read(addr uint32, n int) []byte {
	return append([]byte(nil), s[addr:addr+uint32(n)]...)
}
func (s rsram) Write(addr uint32, data []byte) { copy(s[addr:], data) }

// rnode is one node of an untimed, functional composition of I-rcpy: the
// host library's decisions (lcilib) and its NI's NTLB (firmware/lci) on
// physical memory.
type rnode struct {
	phys []byte // physical memory, 64 pages
	pt   *lcilib.PageTable
	htlb lcilib.HTLB
	sram rsram
	ntlb *lci.NTLB
	anon *lci.AnonPages
	// notes are the receive-miss notifications the host has not polled.
	notes []lcilib.RcpyMissNote
}

func newRnode() *rnode { return newRnodeWith(nil) }

// newRnodeWith is newRnode with test-only faults switched on.
func newRnodeWith(mut map[string]int) *rnode {
	e := vtest.NewEnv(vtest.Options{Mutations: mut})
	// Physical pages 0-3 are the reserved anonymous pages; process pages
	// from 8.
	n := &rnode{phys: make([]byte, 64*lci.PageBytes), pt: lcilib.NewPageTable(8), sram: make(rsram, lci.NTLBBytes),
		ntlb: lci.NewNTLB(e, 0), anon: lci.NewAnonPages([]uint32{0, lci.PageBytes, 2 * lci.PageBytes, 3 * lci.PageBytes})}
	return n
}

// virt returns the physical bytes behind virtual [v, v+k) (within a page).
func (n *rnode) virt(v uint32, k int) []byte {
	p := n.pt.Phys(v/lci.PageBytes)*lci.PageBytes + v%lci.PageBytes
	return n.phys[p : p+uint32(k)]
}

// stats of a transfer: page transfers, send misses (PIO), receive misses.
type rstats struct{ xfers, sendMiss, recvMiss int }

// rcpy copies k bytes from src at a to dst at b, as the library and both
// NIs would (the network delivers each packet unchanged), then has the
// receiving host poll and handle its misses.
func rcpy(a *rnode, src uint32, b *rnode, dst uint32, k int) rstats {
	xs, err := lcilib.SplitPages(src, dst, k, lci.BaseMTU)
	Expect(err).NotTo(HaveOccurred())
	var st rstats
	chk := lci.RcpyCheck{Node: 0, Nodes: 2, MTU: lci.BaseMTU, SendBufs: 1}
	for _, x := range xs {
		st.xfers++
		s := lcilib.PlanSend(&a.htlb, a.pt, x, 1, 0)
		Expect(chk.Check(s.Desc)).To(BeEmpty())
		var data []byte
		if s.PIO {
			st.sendMiss++
			data = append([]byte(nil), a.virt(x.Src, x.Size)...) // the PIO copy into the send buffer
		}
		phys, fetch, ok := a.ntlb.SendTranslate(a.sram, s.Desc)
		Expect(ok).To(BeTrue())
		if fetch {
			data = append([]byte(nil), a.phys[phys:phys+uint32(x.Size)]...) // the NI's DMA
		}
		d := b.ntlb.Receive(b.sram, x.Dst, b.anon)
		Expect(d.Stall).To(BeFalse())
		copy(b.phys[d.Phys:], data) // the receiving NI's DMA
		if d.Miss {
			st.recvMiss++
			b.notes = append(b.notes, lcilib.RcpyMissNote{Dst: x.Dst, Size: x.Size, Anon: d.Anon})
			// «polling is still required»: the host polls before the next
			// miss can find the entry locked.
			b.poll()
		}
	}
	return st
}

// poll handles the receive-miss notifications.
func (n *rnode) poll() {
	for _, note := range n.notes {
		lcilib.HandleMiss(&n.htlb, n.pt, n.ntlb, n.sram, n.anon, note, func(d, s uint32, k int) { copy(n.phys[d:d+uint32(k)], n.phys[s:s+uint32(k)]) })
	}
	n.notes = nil
}

// pattern fills [v, v+k) of a node's memory with a known pattern.
func pattern(n *rnode, v uint32, k int) []byte {
	want := make([]byte, k)
	for i := range want {
		want[i] = byte(i*7 + 3)
	}
	for off := 0; off < k; {
		c := min(k-off, lci.PageBytes-int((v+uint32(off))%lci.PageBytes))
		copy(n.virt(v+uint32(off), c), want[off:off+c])
		off += c
	}
	return want
}

// read returns [v, v+k) of a node's virtual memory.
func read(n *rnode, v uint32, k int) []byte {
	var out []byte
	for off := 0; off < k; {
		c := min(k-off, lci.PageBytes-int((v+uint32(off))%lci.PageBytes))
		out = append(out, n.virt(v+uint32(off), c)...)
		off += c
	}
	return out
}

var _ = Describe("I-rcpy host library (section 5.2.3)", func() {
	It("splits at source and destination page boundaries and at the MTU", func() {
		// 0x1ff0 -> 0x5008, 6000 bytes, each cut at min(left, MTU 2048,
		// rest of source page, rest of destination page):
		//   min(6000, 2048, 16, 4072) = 16     -> 0x2000, 0x5018
		//   min(5984, 2048, 4096, 4072) = 2048 -> 0x2800, 0x5818
		//   min(3936, 2048, 2048, 2024) = 2024 -> 0x2fe8, 0x6000
		//   min(1912, 2048, 24, 4096) = 24     -> 0x3000, 0x6018
		//   the last 1888.
		xs, err := lcilib.SplitPages(0x1ff0, 0x5008, 6000, 2048)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff([]lcilib.PageXfer{
			{Src: 0x1ff0, Dst: 0x5008, Size: 16},
			{Src: 0x2000, Dst: 0x5018, Size: 2048},
			{Src: 0x2800, Dst: 0x5818, Size: 2024},
			{Src: 0x2fe8, Dst: 0x6000, Size: 24},
			{Src: 0x3000, Dst: 0x6018, Size: 1888},
		}, xs)).To(BeEmpty())
		total := 0
		for _, x := range xs {
			total += x.Size
		}
		Expect(total).To(Equal(6000))
		_, err = lcilib.SplitPages(0x1002, 0x5000, 8, 2048)
		Expect(err).To(MatchError(ContainSubstring("4-byte aligned")))
	})

	It("takes the send-miss path on first touch, the optimal path after, with the data intact", func() {
		a, b := newRnode(), newRnode()
		want := pattern(a, 0x1_0000, 256)
		st := rcpy(a, 0x1_0000, b, 0x2_0000, 256)
		// First touch: one page transfer, a send miss (pin + PIO) and a
		// receive miss (anonymous page, host copy).
		Expect(st).To(Equal(rstats{xfers: 1, sendMiss: 1, recvMiss: 1}))
		Expect(cmp.Diff(want, read(b, 0x2_0000, 256))).To(BeEmpty())
		Expect(a.pt.Pins).To(Equal(1))
		Expect(b.pt.Pins).To(Equal(1))
		Expect(b.anon.Free()).To(Equal(4))
		// Warm TLBs: the optimal transfer, both ends hit.
		want = pattern(a, 0x1_0100, 512)
		st = rcpy(a, 0x1_0100, b, 0x2_0100, 512)
		Expect(st).To(Equal(rstats{xfers: 1}))
		Expect(cmp.Diff(want, read(b, 0x2_0100, 512))).To(BeEmpty())
		// Both NTLBs are consistent with their hosts' pinned pages.
		e := vtest.NewEnv(vtest.Options{})
		Expect(a.ntlb.CheckNTLB(e, "A", a.sram, a.pt.Pinned)).To(BeZero())
		Expect(b.ntlb.CheckNTLB(e, "B", b.sram, b.pt.Pinned)).To(BeZero())
		Expect(e.Monitor.Err()).NotTo(HaveOccurred())
	})

	It("copies a multi-page transfer crossing page boundaries at both ends", func() {
		a, b := newRnode(), newRnode()
		const k = 3*lci.PageBytes + 100
		want := pattern(a, 0x4_0ff0, k)
		st := rcpy(a, 0x4_0ff0, b, 0x9_0010, k)
		Expect(cmp.Diff(want, read(b, 0x9_0010, k))).To(BeEmpty())
		// derived: 12388 = 0x3064 bytes: the source 0x40ff0-0x44053 spans
		// pages 0x40-0x44 (5 send misses), the destination 0x90010-0x93073
		// pages 0x90-0x93 (4 receive misses). Page transfers: 16 bytes to
		// the end of source page 0x40; then, the destination 0x20 ahead in
		// its page, each whole source page 0x41-0x43 is 2048 (MTU), 2016
		// (to the destination page's end) and 32 (to the source page's
		// end): 9; then the 84 bytes in page 0x44: 1 + 9 + 1 = 11.
		Expect(st.xfers).To(Equal(11))
		Expect(st.sendMiss).To(Equal(5))
		Expect(st.recvMiss).To(Equal(4))
		Expect(a.pt.Pins).To(Equal(5))
		Expect(b.pt.Pins).To(Equal(4))
		e := vtest.NewEnv(vtest.Options{})
		Expect(b.ntlb.CheckNTLB(e, "B", b.sram, b.pt.Pinned)).To(BeZero())
	})

	It("is caught by lci.ntlb on a broken model (mutation lci.ntlbstale), whose warm transfer copies the wrong page", func() {
		// Every NTLB update of the sender maps its page one physical page
		// off: the first transfer's data goes by PIO (right), the second
		// is DMAed from the neighbouring physical page (wrong).
		a, b := newRnodeWith(map[string]int{"lci.ntlbstale": 1}), newRnode()
		pattern(a, 0x1_0000, 64)
		rcpy(a, 0x1_0000, b, 0x2_0000, 64)
		want := pattern(a, 0x1_0040, 64)
		rcpy(a, 0x1_0040, b, 0x2_0040, 64)
		Expect(read(b, 0x2_0040, 64)).NotTo(Equal(want))
		e := vtest.NewEnv(vtest.Options{})
		Expect(a.ntlb.CheckNTLB(e, "A", a.sram, a.pt.Pinned)).To(Equal(1))
		Expect(e.Monitor.Err()).To(MatchError(ContainSubstring("the host pinned it at")))
	})
})
