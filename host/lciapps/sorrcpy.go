package lciapps

import (
	"encoding/binary"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/env"
)

// SOR on I-rcpy (lci-myrinet-cluster-protocols.txt section 7.2, figure
// 14): «To further investigate the impact of the data-transfer method at
// the application level we conducted several experiments with SOR, since
// this application exhibits a relatively high data rate, even though its
// packet rate is modest ... These conditions are in principle most
// favorable for RCPY transfers». RCPY is not an MPI transfer («implementing
// RCPY as an alternative data-transfer method would require significant
// changes to the internals of all PPSs used»), so the skeleton does what
// such a port does: each border row goes by RemoteCopy from the node's own
// row straight into the neighbour's ghost row (no copy into a host send
// queue, no receive upcall, no copy out of a receive slot), the one-element
// reduction stays on MPI.
//
// Arrival: the row is followed by a 4-byte flag word (the iteration + 1)
// in the same RemoteCopy; the receiver polls it with RcpyWait. The flag
// and not a small LCI message: a message would cost a send and a receive
// upcall per row (I-sdma's overheads the zero-copy path avoids), while the
// flag rides in the row's last page transfer, which the NI's one DMA
// engine writes after the row's earlier ones (the ordering RcpyWait
// relies on, host/lcilib); RcpyWait also handles the receive misses of the
// first iteration (the ghost pages are pinned then and warm after).
// Source reuse: a node rewrites its border row only after RcpyWaitDone of
// the row's previous RemoteCopy.

// Virtual layout of a node's SOR rows (the same at every node, so a
// sender knows the neighbour's ghost-row address): four regions from
// sorVA, each the row and its flag rounded up to whole pages: 0 the row
// sent up (to k-1), 1 the row sent down (to k+1), 2 the ghost row from
// k-1, 3 the ghost row from k+1. Contiguous pages map to different
// entries of the direct-mapped TLBs (lci.NTLBEntries) as long as the four
// regions span at most 1024 pages: SORMaxColSize keeps them under.
const sorVA = 0x1000_0000

// SORMaxColSize is the largest column size: 16 x the paper's 1536 (four
// regions of 48 pages, well inside the TLBs' 1024 entries).
const SORMaxColSize = 16 * sorRows

// mutGhost: a test-only fault the ghost-row check (apps.data) must catch.
var mutGhost = env.DeclareMutation("lciapps.badghost",
	"SOR on I-rcpy: node 0's first border rows carry their first byte flipped (caught by apps.data at node 1's ghost row)")

// colSize is SOR's column size (the paper's 1536 unless set).
func (w *World) colSize() int {
	if w.opt.ColSize == 0 {
		return sorRows
	}
	return w.opt.ColSize
}

// sorRowBytes is a border row: the column size in doubles.
func (w *World) sorRowBytes() int { return w.colSize() * 8 }

// sorRegion is the virtual address of layout region j.
func (w *World) sorRegion(j int) uint32 {
	stride := (w.sorRowBytes() + 4 + lci.PageBytes - 1) / lci.PageBytes * lci.PageBytes
	return sorVA + uint32(j*stride)
}

// sorRcpySend is node k's border row of iteration i to neighbour d by
// RemoteCopy into d's ghost row: wait for the row's previous copy to
// complete, write the row (the relaxation's stores, charged with its
// computation: untimed) and its flag (a timed store), copy.
func (w *World) sorRcpySend(k int, s *lcilib.Seq, d, i int) {
	j := 1 // down, into d's ghost row from above (region 2)
	if d == k-1 {
		j = 0 // up, into d's ghost row from below (region 3)
	}
	if hd := w.sent[k][j]; hd != 0 {
		s.RcpyWaitDone(hd)
	}
	n := w.sorRowBytes()
	src := w.sorRegion(j)
	row := pattern(n, k, i)
	if k == 0 && i == 0 && w.badGhost {
		row[0] ^= 1
	}
	s.Host().VirtWrite(src, row)
	s.VirtStore32(src+uint32(n), uint32(i+1))
	w.sent[k][j] = s.RemoteCopy(d, src, w.sorRegion(3-j), n+4)
}

// sorRcpyRecv waits for neighbour d's border row of iteration i in node
// k's ghost row (its flag) and checks the ghost row's bytes against what
// d sent (apps.data).
func (w *World) sorRcpyRecv(k int, s *lcilib.Seq, d, i int) {
	j := 3
	if d == k-1 {
		j = 2
	}
	n := w.sorRowBytes()
	at := w.sorRegion(j)
	s.RcpyWait(at+uint32(n), uint32(i+1))
	expect(s, "sor ghost row (I-rcpy)", s.Host().VirtRead(at, n), pattern(n, d, i))
	if f := binary.LittleEndian.Uint32(s.Host().VirtRead(at+uint32(n), 4)); f != uint32(i+1) {
		s.Host().Report(s.Now(), "apps.data", "sor ghost row from %d: flag %d, want %d", d, f, i+1)
	}
}
