package atmtb

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/rma"
)

// Ref is the untimed remote-memory model the checkers compare the cluster
// against (issue 15 section 5, design 3.6): per node the exported
// segments as the paper's kernel defines them (section 2.1: export with
// rights to granted nodes, pinning, write inhibit, revocation), the
// outstanding READ and CAS requests of each node, the CAS requests each
// target has executed, and a word image of what the remote operations
// wrote. It answers, for any cell a kernel handles, what the kernel must
// do with it (Verdict) and where its words must go (Addr), and keeps the
// value every remote write and CAS leaves.
//
// The segments' base, size, rights, grant and inhibit come from the
// kernels' own export records (rma.Kernel.Segment: what the set-up calls
// and the inhibit trap asked for, not the table in kernel memory the
// handler reads); revocation and unpinning, which change only that
// table, are told to Ref by whoever does them (Revoke, Unpin).
type Ref struct {
	kernels []*rma.Kernel
	revoked []map[uint8]bool
	// unpinned[n][seg<<16|page] marks an unpinned page.
	unpinned []map[uint32]bool
	// pending[n][id] is node n's outstanding READ or CAS request id.
	pending []map[uint16]*refReq
	// casDone[target][src<<16|id] is a CAS request the target executed,
	// with its result (old value, swapped).
	casDone []map[uint32]casResult
	// image[n][addr] is the value the last remote write or CAS left in
	// word addr of node n's memory (only words Ref knows).
	image []map[uint64]uint32
	stats RefStats
}

// refReq is an outstanding READ or CAS request.
type refReq struct {
	op            rma.Op // OpReadReq or OpCASReq
	target        int
	desc          uint8 // the requester's reply segment
	off, count    int
	done          bool
	old, new      uint32
	remote        uint8
	remoteOff     int
	retransmitted int
}

type casResult struct {
	old     uint32
	swapped bool
}

// RefStats counts what Ref saw.
type RefStats struct {
	// Issued counts cells kernels sent, by op (index rma.Op).
	Issued [rma.OpBlock + 1]uint64
	// Delivered counts cells a receiving kernel accepted, by op.
	Delivered [rma.OpBlock + 1]uint64
	// RefusedSend and RefusedRecv count refusals by reason (index
	// rma.Status).
	RefusedSend, RefusedRecv [16]uint64
	// MemWrites counts words the handlers wrote, each checked.
	MemWrites uint64
	// Lost counts cells lost on the way: at the switch (its queue full or
	// no route), on a link (dropped or overflowing its receive buffer),
	// at the receiving board (RX FIFO full, bad HEC, bad CRC-10) and by a
	// directed drop (DropNextTx).
	LostSwitch, LostLink, LostRxFull, LostHEC, LostCRC, LostTest uint64
	// CASExec and CASDup count CAS requests executed and answered again
	// from the cache; Retransmits CAS requests resent.
	CASExec, CASDup, Retransmits uint64
	// Forged counts injected cells (Forge).
	Forged uint64
	// Mismatches counts scoreboard, protection and CAS violations.
	Mismatches uint64
}

// Lost is the sum of the cells lost on the way.
func (s RefStats) Lost() uint64 {
	return s.LostSwitch + s.LostLink + s.LostRxFull + s.LostHEC + s.LostCRC + s.LostTest
}

// Refused is the sum of the refusals at both ends.
func (s RefStats) Refused() uint64 {
	var n uint64
	for i := range s.RefusedSend {
		n += s.RefusedSend[i] + s.RefusedRecv[i]
	}
	return n
}

// Ops is the operations the kernels issued or refused at the sender: a
// cell sent (each block cell, each READ or CAS reply, each CAS resend)
// or a trap refused.
func (s RefStats) Ops() uint64 {
	var n uint64
	for _, v := range s.Issued {
		n += v
	}
	for _, v := range s.RefusedSend {
		n += v
	}
	return n
}

// NewRef returns the model of the nodes of kernels.
func NewRef(kernels []*rma.Kernel) *Ref {
	n := len(kernels)
	r := &Ref{kernels: kernels, revoked: make([]map[uint8]bool, n), unpinned: make([]map[uint32]bool, n),
		pending: make([]map[uint16]*refReq, n), casDone: make([]map[uint32]casResult, n), image: make([]map[uint64]uint32, n)}
	for i := range n {
		r.revoked[i] = map[uint8]bool{}
		r.unpinned[i] = map[uint32]bool{}
		r.pending[i] = map[uint16]*refReq{}
		r.casDone[i] = map[uint32]casResult{}
		r.image[i] = map[uint64]uint32{}
	}
	return r
}

// Stats returns the counts.
func (r *Ref) Stats() RefStats { return r.stats }

// Revoke tells Ref that node's segment seg was revoked (rma.Kernel.Revoke):
// every later cell for it must be refused (ErrDesc).
func (r *Ref) Revoke(node int, seg uint8) { r.revoked[node][seg] = true }

// Unpin tells Ref that page (its index in the segment) of node's segment
// seg was unpinned (rma.Kernel.Unpin): a cell touching it must be refused
// (ErrUnpinned).
func (r *Ref) Unpin(node int, seg uint8, page int) {
	r.unpinned[node][uint32(seg)<<16|uint32(page)] = true
}

// segment returns node's exported segment seg as exported (nil: none or
// revoked).
func (r *Ref) segment(node int, seg uint8) *rma.Segment {
	if r.revoked[node][seg] {
		return nil
	}
	return r.kernels[node].Segment(seg)
}

// Issue records a cell node sent (rma.EvSend): a READ or CAS request
// becomes outstanding (a CAS resent with its id stays the same request).
func (r *Ref) Issue(node int, ev rma.Event) {
	r.stats.Issued[ev.Op]++
	if ev.Op != rma.OpReadReq && ev.Op != rma.OpCASReq {
		return
	}
	pl := rma.Payload{Op: ev.Op}
	copy(pl.Data[:], ev.Data)
	rd, roff := pl.Reply()
	q := &refReq{op: ev.Op, target: ev.Dst, desc: rd, off: int(roff), count: ev.Count,
		remote: ev.Desc, remoteOff: ev.Offset}
	if ev.Op == rma.OpCASReq {
		q.count = 1
		q.old, q.new = pl.Word(0), pl.Word(1)
	}
	if old := r.pending[node][ev.ReqID]; old != nil && ev.Op == rma.OpCASReq && !old.done {
		old.retransmitted++
		return
	}
	r.pending[node][ev.ReqID] = q
}

// words is the words a cell's op touches in the target segment.
func opWords(pl *rma.Payload) int {
	if pl.Op == rma.OpCASReq || pl.Op == rma.OpCASReply {
		return 1
	}
	return pl.Count
}

// Verdict is what node's kernel must do with a cell that arrived on vci
// with payload b (as the kernel read it): OK or the refusal reason, in
// the order the paper's checks apply (section 2.3 «checks the validity of
// all accesses»): a payload that does not decode, the source VC, a reply
// matching no outstanding request, then the segment: exported and not
// revoked, granted to the source, rights, bounds, write inhibit, pinned
// pages.
func (r *Ref) Verdict(node int, vci uint16, b [48]byte) rma.Status {
	pl, err := rma.Decode(b)
	if err != nil {
		if pl.Op >= rma.OpWrite && pl.Op <= rma.OpBlock {
			return rma.ErrCount
		}
		return rma.ErrOp
	}
	src, dst, ok := rma.SourceOf(vci)
	if !ok || dst != node || src >= len(r.kernels) || src == node {
		return rma.ErrSrcVCI
	}
	local := pl.Op == rma.OpReadReply || pl.Op == rma.OpCASReply
	n := opWords(&pl)
	if local {
		q := r.pending[node][pl.ReqID]
		if q == nil || q.done || q.target != src || q.op+1 != pl.Op || q.desc != pl.Desc || q.off != int(pl.Offset) || q.count != pl.Count {
			return rma.ErrNoRequest
		}
	}
	s := r.segment(node, pl.Desc)
	need := rma.RightWrite
	switch pl.Op {
	case rma.OpReadReq:
		need = rma.RightRead
	case rma.OpCASReq:
		need = rma.RightRead | rma.RightWrite
	}
	switch {
	case s == nil:
		return rma.ErrDesc
	case !local && !granted(s, src):
		return rma.ErrSrcVCI
	case !local && s.Rights&need != need:
		return rma.ErrRights
	case (int(pl.Offset)+n)*4 > s.Bytes:
		return rma.ErrBounds
	case pl.Op != rma.OpReadReq && s.Inhibited:
		return rma.ErrInhibit
	}
	for i := range n {
		if r.unpinned[node][uint32(pl.Desc)<<16|uint32(pageOf(s, int(pl.Offset)+i))] {
			return rma.ErrUnpinned
		}
	}
	return rma.OK
}

func granted(s *rma.Segment, n int) bool {
	for _, g := range s.Grant {
		if g == n {
			return true
		}
	}
	return false
}

// pageOf is the index in segment s of the page holding its word w.
func pageOf(s *rma.Segment, w int) int {
	return int((s.Base+4*uint64(w))/rma.PageBytes - s.Base/rma.PageBytes)
}

// Addr is where word i of an accepted cell with payload pl lands in
// node's memory: the segment's base plus the word offset (the kernel's
// translation entries map a pinned page to its own frame, rma.Export).
// ok is false if the word lies outside the segment.
func (r *Ref) Addr(node int, pl *rma.Payload, i int) (uint64, bool) {
	s := r.segment(node, pl.Desc)
	if s == nil {
		return 0, false
	}
	w := int(pl.Offset) + i
	if w < 0 || (w+1)*4 > s.Bytes {
		return 0, false
	}
	return s.Base + 4*uint64(w), true
}

// Inside reports whether [addr, addr+n) lies inside one of node's
// exported (not revoked) segments granted to src for writing, not
// inhibited (src < 0: a reply, the requester's own segment, no grant).
func (r *Ref) Inside(node, src int, addr uint64, n int) bool {
	k := r.kernels[node]
	for id := range rma.NumSegments {
		s := k.Segment(uint8(id))
		if s == nil {
			break
		}
		if r.revoked[node][uint8(id)] || s.Inhibited || addr < s.Base || addr+uint64(n) > s.Base+uint64(s.Bytes) {
			continue
		}
		if src < 0 || granted(s, src) && s.Rights&rma.RightWrite != 0 {
			return true
		}
	}
	return false
}

// Accept records that node's kernel accepted a cell from src with
// payload pl: a reply completes its request.
func (r *Ref) Accept(node, src int, pl *rma.Payload) {
	r.stats.Delivered[pl.Op]++
	if pl.Op == rma.OpReadReply || pl.Op == rma.OpCASReply {
		if q := r.pending[node][pl.ReqID]; q != nil {
			q.done = true
		}
	}
}

// Write applies a remote write of word v at addr of node's memory.
func (r *Ref) Write(node int, addr uint64, v uint32) {
	r.stats.MemWrites++
	r.image[node][addr] = v
}

// Word returns the value Ref knows at word addr of node's memory.
func (r *Ref) Word(node int, addr uint64) (uint32, bool) {
	v, ok := r.image[node][addr]
	return v, ok
}

// Forget drops what Ref knows of word addr of node's memory (something
// else wrote it: a local program's store).
func (r *Ref) Forget(node int, addr uint64) { delete(r.image[node], addr) }

// CASExec checks a CAS node executed for src (request id, compare old,
// swap in new) at word addr, which held seen: executed once per request
// id (a resend is answered from the cache, CASDup), seen equal to Ref's
// value of the word if Ref knows it (the CAS is linearizable: every CAS
// and write on the word applies in the target's execution order), and
// swapped exactly when seen == old. It applies the swap to Ref's image.
func (r *Ref) CASExec(node, src int, id uint16, addr uint64, old, new, seen uint32, swapped bool) error {
	r.stats.CASExec++
	key := uint32(src)<<16 | uint32(id)
	if prev, ok := r.casDone[node][key]; ok {
		r.stats.Mismatches++
		return fmt.Errorf("CAS request %d from node %d executed a second time (first saw %#x, swapped %t)", id, src, prev.old, prev.swapped)
	}
	r.casDone[node][key] = casResult{old: seen, swapped: swapped}
	if want, ok := r.image[node][addr]; ok && want != seen {
		r.stats.Mismatches++
		return fmt.Errorf("CAS request %d from node %d saw %#x at %#x, Ref has %#x", id, src, seen, addr, want)
	}
	if swapped != (seen == old) {
		r.stats.Mismatches++
		return fmt.Errorf("CAS request %d from node %d: seen %#x, compare %#x, swapped %t", id, src, seen, old, swapped)
	}
	if swapped {
		r.image[node][addr] = new
	} else {
		r.image[node][addr] = seen
	}
	return nil
}

// CASDup checks a resent CAS answered from the cache: the request was
// executed, and the cached answer is its result.
func (r *Ref) CASDup(node, src int, id uint16, seen uint32, swapped bool) error {
	r.stats.CASDup++
	res, ok := r.casDone[node][uint32(src)<<16|uint32(id)]
	switch {
	case !ok:
		r.stats.Mismatches++
		return fmt.Errorf("CAS request %d from node %d answered from the cache, never executed", id, src)
	case res.old != seen || res.swapped != swapped:
		r.stats.Mismatches++
		return fmt.Errorf("CAS request %d from node %d answered from the cache with %#x/%t, executed with %#x/%t", id, src, seen, swapped, res.old, res.swapped)
	}
	return nil
}

// Outstanding returns node's READ and CAS requests not yet answered.
func (r *Ref) Outstanding(node int) int {
	n := 0
	for _, q := range r.pending[node] {
		if !q.done {
			n++
		}
	}
	return n
}

// le32 reads a little-endian word.
func le32(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}
