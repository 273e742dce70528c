package shrimptb

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/nisim/nisim/hib/shrimp"
)

// Expect is one packet a destination's memory must see: the packet's
// kind, source and destination nodes, Ref's number of it within its
// (Src, Dst, Kind) stream (from 1: the order the destination must keep),
// the NI's Packet.Seq, and its bytes Data at host address Addr of Dst.
type Expect struct {
	Kind     shrimp.Kind
	Src, Dst int
	Seq      uint64
	PktSeq   uint64
	Addr     uint64
	Data     []byte
	Notify   bool
	// Known marks the bytes of Data Ref knows (nil: all): a DU source
	// byte a cache held dirty when the transfer started is taken from
	// memory as it arrives.
	Known []bool
}

// String formats the expectation for messages.
func (x *Expect) String() string {
	return fmt.Sprintf("%s packet %d of %d->%d (%d bytes at %#x)", kindName(x.Kind), x.Seq, x.Src, x.Dst, len(x.Data), x.Addr)
}

// kindName is "AU" or "DU".
func kindName(k shrimp.Kind) string {
	if k == shrimp.KindDU {
		return "DU"
	}
	return "AU"
}

// kindIndex is the order domain of k: 0 AU, 1 DU.
func kindIndex(k shrimp.Kind) int {
	if k == shrimp.KindDU {
		return 1
	}
	return 0
}

// RefStats counts what the reference model has seen.
type RefStats struct {
	// Snooped is store beats to AU-enabled pages on the memory buses,
	// Stores those that left in a packet, LostStores those dropped with
	// their packet by an outgoing FIFO overflow.
	Snooped, Stores, LostStores uint64
	// DUStarts is UDMA transfers started, DURefused UDMA initiations the
	// NI refused (DropUDMA).
	DUStarts, DURefused uint64
	// AUPackets and DUPackets are packets that left an NI, Expected the
	// packets Ref expects in a destination's memory, Delivered those the
	// checker saw there whole.
	AUPackets, DUPackets, Expected, Delivered uint64
	// Overflows, RxUnexported and RxCRC count drops by reason; Lost is
	// expected packets a destination dropped (Expected = Delivered + Lost
	// once all is done).
	Overflows, RxUnexported, RxCRC, Lost uint64
	// Notifications is notification interrupts the checker matched to a
	// packet with its notify bit set to an interrupting page.
	Notifications uint64
}

// Ref is the untimed reference model of the SHRIMP cluster (issue 14
// design section 5). Automatic update: every AU-enabled store the snoop
// logic takes (OnSnoop) is queued at its source; a packet leaving the
// NI (OnPacketOut) must carry the oldest queued stores, translated by
// the OPT entry each was snooped with, consecutive (combining, SH-P17).
// Deliberate update: a started UDMA transfer (OnDUStart) snapshots its
// source bytes; its packet must carry them (a page replaced under a
// queued transfer shows here). Each packet is then expected at its
// destination, in order per (source, destination, kind): «AU and DU
// packets may be reordered» (section 4.2), so AU and DU are separate
// order domains. Drops remove what they drop, with a reason. Ref's maps
// are for lookup only; nothing it outputs comes from iterating one.
type Ref struct {
	nodes     int
	pageBytes uint64
	// snooped[s] is node s's AU stores not yet in a packet, from sHead[s].
	snooped [][]*store
	sHead   []int
	// started[s] is node s's UDMA transfers whose bytes have not all left
	// in packets, oldest first; the head has sent duSent bytes.
	started [][]*duStart
	duSent  []int
	// recentDU is each node's last finished transfers (overwritten).
	recentDU [][]*duStart
	// queue[d][s][k] is what destination d expects from s of kind k, not
	// yet seen in memory, from head[d][s][k].
	queue [][][2][]*Expect
	head  [][][2]int
	// next[d][s][k] is Ref's last packet number of that stream.
	next [][][2]uint64
	// images[d] is the bytes destination d's memory must hold, per page
	// (lookup only); pages[d] the same pages in first-write order.
	images []map[uint64]*image
	pages  [][]*image
	stats  RefStats
}

// store is one snooped AU store: its source address and bytes, and where
// the OPT entry sends them.
type store struct {
	addr    uint64
	data    []byte
	dst     int
	dstAddr uint64
}

// duStart is a started UDMA transfer with its source snapshot; known[i]
// is false for a byte a cache held dirty (memory's copy is stale: Ref
// takes the packet's byte).
type duStart struct {
	d     shrimp.DUStart
	dst   int
	data  []byte
	known []bool
	// exps are the expectations of the packets that have left, each at
	// its byte offset in the transfer (overwritten marks them too).
	exps []duExp
}

// duExp is a DU packet's expectation and its offset in its transfer.
type duExp struct {
	x   *Expect
	off int
}

// maxRecentDU is how many finished transfers per node overwritten still
// marks (their last packets' data may still be being read). assumed: the
// engine and its queue (SH-P24) plus slack, as maxDUWindows.
const maxRecentDU = 8

// image is one page of a destination's memory as Ref expects it: known
// bytes only (the bytes packets or local stores wrote).
type image struct {
	base  uint64
	data  []byte
	known []bool
}

// NewRef returns an empty reference model of nodes nodes, with the NI's
// 4096-byte pages (SH-P13) until the cluster's checker sets the
// configured size.
func NewRef(nodes int) *Ref {
	r := &Ref{nodes: nodes, pageBytes: 4096, snooped: make([][]*store, nodes), sHead: make([]int, nodes),
		started: make([][]*duStart, nodes), duSent: make([]int, nodes), recentDU: make([][]*duStart, nodes),
		queue: make([][][2][]*Expect, nodes), head: make([][][2]int, nodes), next: make([][][2]uint64, nodes),
		images: make([]map[uint64]*image, nodes), pages: make([][]*image, nodes)}
	for d := range nodes {
		r.queue[d] = make([][2][]*Expect, nodes)
		r.head[d] = make([][2]int, nodes)
		r.next[d] = make([][2]uint64, nodes)
		r.images[d] = map[uint64]*image{}
	}
	return r
}

// Stats returns the counters.
func (r *Ref) Stats() RefStats { return r.stats }

// node checks a node number from the NI.
func (r *Ref) node(what string, n int) error {
	if n < 0 || n >= r.nodes {
		return fmt.Errorf("%s node %d outside 0..%d", what, n, r.nodes-1)
	}
	return nil
}

// Snoop records an AU-enabled store beat to node src's memory at addr
// (the checker sees it on the memory bus, where the snoop logic must take
// it), with the OPT entry of its page.
func (r *Ref) Snoop(src int, addr uint64, data []byte, opt shrimp.OPTEntry) error {
	if err := r.node("snoop's OPT destination", opt.DstNode); err != nil {
		return err
	}
	r.stats.Snooped++
	dstAddr := uint64(opt.DstPage)*r.pageBytes + addr%r.pageBytes
	r.snooped[src] = append(r.snooped[src], &store{addr: addr, data: bytes.Clone(data), dst: opt.DstNode, dstAddr: dstAddr})
	return nil
}

// PendingStores returns how many of node src's snooped stores have not
// left in a packet.
func (r *Ref) PendingStores(src int) int {
	n := 0
	for _, s := range r.snooped[src][r.sHead[src]:] {
		if s != nil {
			n++
		}
	}
	return n
}

// DUStarted records a UDMA transfer node src's NI started, to node dst,
// with a snapshot of its source bytes: src is the source node's memory
// contents, and dirty(a) says a cache holds byte a's line dirty.
func (r *Ref) DUStarted(d shrimp.DUStart, dst int, src []byte, dirty func(a uint64) bool) error {
	if err := r.node("UDMA destination", dst); err != nil {
		return err
	}
	r.stats.DUStarts++
	s := &duStart{d: d, dst: dst, data: bytes.Clone(src), known: make([]bool, len(src))}
	for i := range s.known {
		s.known[i] = !dirty(d.Src + uint64(i))
	}
	r.started[d.Node] = append(r.started[d.Node], s)
	return nil
}

// Started returns node's UDMA transfers whose bytes have not all left.
func (r *Ref) Started(node int) []shrimp.DUStart {
	var out []shrimp.DUStart
	for _, s := range r.started[node] {
		out = append(out, s.d)
	}
	return out
}

// PacketOut checks a packet leaving node src's NI against what Ref
// expects it to carry and queues it at its destination. It returns the
// expectation (nil if the packet matched nothing) and an error naming
// the first difference; lost lists snooped stores the packet skipped
// (they never left: the once rule).
func (r *Ref) PacketOut(src int, p *shrimp.Packet) (x *Expect, lost []string, err error) {
	if err := r.node("packet destination", p.Dst); err != nil {
		return nil, nil, err
	}
	if p.Src != src {
		return nil, nil, fmt.Errorf("node %d sent a packet with source %d", src, p.Src)
	}
	if p.Kind == shrimp.KindDU {
		// A DU packet leaves as its header: its data follows from the
		// engine's reads, so Ref expects the source as it was at the start
		// (the bytes a packet holds already are checked against it here).
		s, off, err := r.duOut(src, p)
		if err != nil {
			return nil, nil, err
		}
		x := r.expect(p, s.data[off:off+p.Len], slices.Clone(s.known[off:off+p.Len]))
		s.exps = append(s.exps, duExp{x, off})
		return x, nil, nil
	}
	if len(p.Data) != p.Len {
		return nil, nil, fmt.Errorf("AU packet header length %d, %d data bytes", p.Len, len(p.Data))
	}
	if lost, err = r.auOut(src, p); err != nil {
		return nil, lost, err
	}
	return r.expect(p, p.Data, nil), lost, nil
}

// expect queues packet p with its data at its destination.
func (r *Ref) expect(p *shrimp.Packet, data []byte, known []bool) *Expect {
	k := kindIndex(p.Kind)
	r.next[p.Dst][p.Src][k]++
	x := &Expect{Kind: p.Kind, Src: p.Src, Dst: p.Dst, Seq: r.next[p.Dst][p.Src][k], PktSeq: p.Seq, Addr: p.DstAddr,
		Data: bytes.Clone(data), Notify: p.Notify, Known: known}
	r.queue[p.Dst][p.Src][k] = append(r.queue[p.Dst][p.Src][k], x)
	r.stats.Expected++
	return x
}

// auOut takes from node src's snooped stores the ones AU packet p carries:
// the oldest pending, consecutive at the destination, p.Len bytes in all.
// Stores ahead of the first one p carries are returned as lost.
func (r *Ref) auOut(src int, p *shrimp.Packet) (lost []string, err error) {
	r.stats.AUPackets++
	stores, lost, err := r.take(src, p, false)
	if err != nil {
		return lost, err
	}
	r.stats.Stores += uint64(stores)
	return lost, nil
}

// take removes the stores packet p carries from src's queue and returns
// how many; see auOut. A packet that leaves takes the oldest pending
// stores (any before its first are lost); one an overflow dropped
// (dropped) is the newest packetised, so the stores ahead of it may still
// be in the FIFO: they stay pending. (Should two pending stores have the
// same destination address and bytes, the older is taken: they are the
// same expectation.)
func (r *Ref) take(src int, p *shrimp.Packet, dropped bool) (n int, lost []string, err error) {
	q, h := r.snooped[src], r.sHead[src]
	// The first store the packet carries: the oldest one at p's address
	// and destination whose bytes begin p's.
	first := -1
	for i := h; i < len(q); i++ {
		if s := q[i]; s != nil && s.dst == p.Dst && s.dstAddr == p.DstAddr && bytes.HasPrefix(p.Data, s.data) {
			first = i
			break
		}
	}
	if first < 0 {
		for i := h; i < len(q); i++ {
			if s := q[i]; s != nil {
				return 0, nil, fmt.Errorf("AU packet to node %d carries % x at %#x, but the next snooped store is % x at %#x (to node %d at %#x)",
					p.Dst, head(p.Data), p.DstAddr, head(s.data), s.addr, s.dst, s.dstAddr)
			}
		}
		return 0, nil, fmt.Errorf("AU packet to node %d carries %d bytes at %#x, but no snooped store is pending", p.Dst, p.Len, p.DstAddr)
	}
	off := 0
	var took []int
	for i := first; off < p.Len; i++ {
		if i == len(q) {
			return 0, nil, fmt.Errorf("AU packet to node %d at %#x carries %d bytes, the stores snooped only %d", p.Dst, p.DstAddr, p.Len, off)
		}
		s := q[i]
		if s == nil {
			continue
		}
		want := p.DstAddr + uint64(off)
		if s.dst != p.Dst || s.dstAddr != want || !bytes.HasPrefix(p.Data[off:], s.data) {
			return 0, nil, fmt.Errorf("AU packet to node %d at %#x has % x at byte %d, the next snooped store is % x at %#x (to node %d at %#x)",
				p.Dst, p.DstAddr, head(p.Data[off:]), off, head(s.data), s.addr, s.dst, s.dstAddr)
		}
		off += len(s.data)
		took = append(took, i)
	}
	if !dropped {
		for i := h; i < first; i++ {
			if s := q[i]; s != nil {
				lost = append(lost, fmt.Sprintf("store of % x at %#x (to node %d at %#x)", head(s.data), s.addr, s.dst, s.dstAddr))
				q[i] = nil
			}
		}
	}
	for _, i := range took {
		q[i] = nil
	}
	for h < len(q) && q[h] == nil {
		h++
	}
	r.sHead[src] = h
	r.compactStores(src)
	return len(took), lost, nil
}

// compactStores drops the consumed prefix of src's store queue when it is
// large.
func (r *Ref) compactStores(src int) {
	q, h := r.snooped[src], r.sHead[src]
	if h > 1024 && h*2 > len(q) {
		r.snooped[src] = append(q[:0], q[h:]...)
		r.sHead[src] = 0
	}
}

// head returns at most 16 bytes of b for messages.
func head(b []byte) []byte { return b[:min(len(b), 16)] }

// duOut checks DU packet p against the oldest started transfer of src
// and returns the bytes it must deliver (and which of them Ref knows).
func (r *Ref) duOut(src int, p *shrimp.Packet) (s *duStart, off int, err error) {
	r.stats.DUPackets++
	if len(r.started[src]) == 0 {
		return nil, 0, fmt.Errorf("DU packet to node %d at %#x (%d bytes) left, but no UDMA transfer was started", p.Dst, p.DstAddr, p.Len)
	}
	s = r.started[src][0]
	off = r.duSent[src]
	switch {
	case p.Dst != s.dst || p.DstAddr != s.d.DstAddr+uint64(off):
		return nil, 0, fmt.Errorf("DU packet goes to node %d at %#x, the started transfer (source %#x, %d bytes) to node %d at %#x",
			p.Dst, p.DstAddr, s.d.Src, s.d.Len, s.dst, s.d.DstAddr+uint64(off))
	case p.Len <= 0 || off+p.Len > len(s.data):
		return nil, 0, fmt.Errorf("DU packet carries %d bytes from byte %d of a started transfer of %d", p.Len, off, len(s.data))
	case len(p.Data) > p.Len:
		return nil, 0, fmt.Errorf("DU packet header length %d, %d data bytes", p.Len, len(p.Data))
	}
	data, known := s.data[off:off+p.Len], s.known[off:off+p.Len]
	// The bytes the packet holds already (its data follows the header as
	// the engine reads it) must be the source's.
	for i := range len(p.Data) {
		if known[i] && p.Data[i] != data[i] {
			return nil, 0, fmt.Errorf("DU packet to node %d at %#x has %#02x at byte %d, the source had %#02x at %#x when the transfer started",
				p.Dst, p.DstAddr, p.Data[i], i, data[i], s.d.Src+uint64(off+i))
		}
	}
	r.duSent[src] += p.Len
	if r.duSent[src] == len(s.data) {
		r.started[src] = r.started[src][1:]
		r.duSent[src] = 0
		r.recentDU[src] = append(r.recentDU[src], s)
		if len(r.recentDU[src]) > maxRecentDU {
			r.recentDU[src] = r.recentDU[src][1:]
		}
	}
	return s, off, nil
}

// Overflowed records an outgoing FIFO overflow at node src: AU packet p
// dropped (or, without the packet, the stores of n bytes snooped at local
// address addr): its stores are lost, with the reason.
func (r *Ref) Overflowed(src int, p *shrimp.Packet, addr uint64, n int) error {
	r.stats.Overflows++
	if p == nil {
		q := r.snooped[src]
		for i := r.sHead[src]; i < len(q); i++ {
			if q[i] != nil && q[i].addr == addr {
				p = &shrimp.Packet{Src: src, Dst: q[i].dst, DstAddr: q[i].dstAddr, Len: n}
				for j := i; j < len(q) && len(p.Data) < n; j++ {
					if q[j] != nil {
						p.Data = append(p.Data, q[j].data...)
					}
				}
				p.Data = p.Data[:min(n, len(p.Data))]
				break
			}
		}
		if p == nil {
			return fmt.Errorf("node %d: overflow dropped %d bytes snooped at %#x, which Ref has not seen pending", src, n, addr)
		}
	}
	stores, _, err := r.take(src, p, true)
	if err != nil {
		return err
	}
	r.stats.LostStores += uint64(stores)
	return nil
}

// RxDropped records packet p dropped at destination dst (unexported page
// or CRC): its expectation is removed. It returns the expectation (nil
// when Ref did not expect the packet, e.g. one it already matched).
func (r *Ref) RxDropped(dst int, p *shrimp.Packet) *Expect {
	if p == nil || p.Src < 0 || p.Src >= r.nodes {
		return nil
	}
	k := kindIndex(p.Kind)
	q := r.queue[dst][p.Src][k]
	for i := r.head[dst][p.Src][k]; i < len(q); i++ {
		x := q[i]
		if x != nil && x.Addr == p.DstAddr && len(x.Data) == p.Len && (p.Seq == 0 || x.PktSeq == p.Seq) {
			r.remove(dst, p.Src, k, i)
			r.stats.Lost++
			return x
		}
	}
	return nil
}

// remove takes expectation i of queue (dst, src, k) out.
func (r *Ref) remove(dst, src, k, i int) {
	q := r.queue[dst][src][k]
	q[i] = nil
	h := r.head[dst][src][k]
	for h < len(q) && q[h] == nil {
		h++
	}
	if h > 1024 && h*2 > len(q) {
		q = append(q[:0], q[h:]...)
		h = 0
	}
	r.queue[dst][src][k], r.head[dst][src][k] = q, h
}

// Pending returns dst's expectations not yet seen in memory, by source,
// AU before DU, each stream in order (a copy).
func (r *Ref) Pending(dst int) []*Expect {
	var out []*Expect
	for s := range r.nodes {
		for k := range 2 {
			for _, x := range r.queue[dst][s][k][r.head[dst][s][k]:] {
				if x != nil {
					out = append(out, x)
				}
			}
		}
	}
	return out
}

// apply writes delivered bytes into dst's image.
func (r *Ref) apply(dst int, addr uint64, data []byte) {
	r.overwritten(dst, addr, len(data))
	for len(data) > 0 {
		off := addr % r.pageBytes
		n := min(len(data), int(r.pageBytes-off))
		base := addr - off
		im := r.images[dst][base]
		if im == nil {
			im = &image{base: base, data: make([]byte, r.pageBytes), known: make([]bool, r.pageBytes)}
			r.images[dst][base] = im
			r.pages[dst] = append(r.pages[dst], im)
		}
		copy(im.data[off:], data[:n])
		for i := range n {
			im.known[int(off)+i] = true
		}
		addr, data = addr+uint64(n), data[n:]
	}
}

// overwritten marks the bytes [addr, addr+n) of node's started UDMA
// transfers whose packets have not left as unknown: the source changed
// after the start (a local store or an incoming packet; the SVM protocols
// serve a page whose other words other nodes' updates are still reaching,
// host/svm), so the engine reads whichever value is there.
func (r *Ref) overwritten(node int, addr uint64, n int) {
	mark := func(s *duStart, from int) {
		lo := max(addr, s.d.Src+uint64(from))
		hi := min(addr+uint64(n), s.d.Src+uint64(len(s.data)))
		for a := lo; a < hi; a++ {
			s.known[a-s.d.Src] = false
		}
		for _, e := range s.exps {
			lo := max(addr, s.d.Src+uint64(e.off))
			hi := min(addr+uint64(n), s.d.Src+uint64(e.off+len(e.x.Data)))
			for a := lo; a < hi; a++ {
				e.x.Known[int(a-s.d.Src)-e.off] = false
			}
		}
	}
	for _, s := range r.recentDU[node] {
		mark(s, len(s.data))
	}
	for _, s := range r.started[node] {
		mark(s, 0)
	}
}

// LocalWrite records a store a destination's own program made to bytes
// packets also write (a flag it resets): Ref's image takes the bytes.
func (r *Ref) LocalWrite(dst int, addr uint64, data []byte) { r.apply(dst, addr, data) }

// Forget makes n bytes at addr of dst's image unknown (a program wrote
// them in a way Ref cannot follow): the scoreboard skips them.
func (r *Ref) Forget(dst int, addr uint64, n int) {
	for n > 0 {
		off := addr % r.pageBytes
		k := min(n, int(r.pageBytes-off))
		if im := r.images[dst][addr-off]; im != nil {
			clear(im.known[off : int(off)+k])
		}
		addr, n = addr+uint64(k), n-k
	}
}
