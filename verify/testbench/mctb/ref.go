package mctb

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nisim/nisim/mcadapter"
	"github.com/nisim/nisim/switch/mchub"
)

// Expect is one write a receiver must see in memory: the hub's global
// Order, the writer (Src, Seq), and the bytes Data at host address Addr.
type Expect struct {
	Order uint64
	Src   int
	Seq   uint64
	Addr  uint64
	Data  []byte
}

// String formats the expectation for messages.
func (x *Expect) String() string {
	return fmt.Sprintf("order %d (src %d seq %d, %d bytes at %#x)", x.Order, x.Src, x.Seq, len(x.Data), x.Addr)
}

// RefStats counts what the reference model has seen.
type RefStats struct {
	// Sent is packets handed to a link (adapters' OnTx), Ordered those
	// the hub put in its global order, Expected the (write, receiver)
	// pairs Ref expects in memory, Delivered those the checker saw there.
	Sent, Ordered, Expected, Delivered uint64
	// TxInvalid, RxUnmapped and RxCRC count the adapters' drops by reason.
	TxInvalid, RxUnmapped, RxCRC uint64
	// Lost counts expected (write, receiver) pairs a receiver dropped
	// with a reason (RxCRC): Expected = Delivered + Lost once all is done.
	Lost uint64
}

// Ref is the untimed reference model of the Memory Channel (issue 13
// design section 5): it applies every write the hub orders, in the hub's
// global order, to the receive images of every node whose receive table
// maps the write's page (its writer only with loop-back, MC-P8), and
// queues for each such node what its memory must see, in that order
// («will appear in the same order in every receive region», MC-P9). Its
// maps are for lookup only; nothing it outputs comes from iterating one.
type Ref struct {
	nodes int
	// rx[n] maps a global page to node n's receive frame (lookup only).
	rx []map[int]uint64
	// frames[n] is node n's receive pages in mapping order (the
	// scoreboard's iteration order), byFrame[n] the lookup by frame.
	frames  [][]*image
	byFrame []map[uint64]*image
	// sent holds the data of packets sent and not yet ordered, by (Src,
	// Seq) (lookup only).
	sent map[sentKey][]byte
	// queue[n] is node n's expectations not yet seen in memory, in global
	// order; head[n] the index of the first one still pending.
	queue [][]*Expect
	head  []int
	// history, when kept, holds every value each 32-bit word of a
	// receive image has had, per node (lookup only): CheckLoad32.
	history []map[uint64][]uint32
	stats   RefStats
}

type sentKey struct {
	src int
	seq uint64
}

// image is one receive page of one node as Ref expects it in memory.
type image struct {
	gpage int
	frame uint64
	data  []byte
	// unknown marks bytes Ref cannot predict (a write dropped at this
	// receiver after it was applied, a local store); nil when none.
	unknown []bool
}

// NewRef returns an empty reference model for nodes nodes.
func NewRef(nodes int) *Ref {
	r := &Ref{nodes: nodes, sent: map[sentKey][]byte{}, rx: make([]map[int]uint64, nodes),
		frames: make([][]*image, nodes), byFrame: make([]map[uint64]*image, nodes),
		queue: make([][]*Expect, nodes), head: make([]int, nodes)}
	for i := range nodes {
		r.rx[i] = map[int]uint64{}
		r.byFrame[i] = map[uint64]*image{}
	}
	return r
}

// KeepHistory makes Ref remember every value of every word of the
// receive images from now on (CheckLoad32). It costs memory in proportion
// to the writes; the short specs use it, the regression does not.
func (r *Ref) KeepHistory() {
	if r.history == nil {
		r.history = make([]map[uint64][]uint32, r.nodes)
		for i := range r.history {
			r.history[i] = map[uint64][]uint32{}
		}
	}
}

// Stats returns the counters.
func (r *Ref) Stats() RefStats { return r.stats }

// MapRx records that node receives global page gpage into the host frame
// at frame.
func (r *Ref) MapRx(node, gpage int, frame uint64) {
	r.rx[node][gpage] = frame
	if r.byFrame[node][frame] == nil {
		im := &image{gpage: gpage, frame: frame, data: make([]byte, mchub.PageSize)}
		r.byFrame[node][frame] = im
		r.frames[node] = append(r.frames[node], im)
	}
}

// UnmapRx records that node no longer receives gpage.
func (r *Ref) UnmapRx(node, gpage int) { delete(r.rx[node], gpage) }

// Sent records a packet leaving src's adapter: its header w (Order 0)
// and bytes.
func (r *Ref) Sent(w *mchub.Write, data []byte) error {
	r.stats.Sent++
	k := sentKey{w.Src, w.Seq}
	if _, dup := r.sent[k]; dup {
		return fmt.Errorf("src %d sent seq %d twice", w.Src, w.Seq)
	}
	if len(data) != w.Len {
		return fmt.Errorf("src %d seq %d: header length %d, %d data bytes", w.Src, w.Seq, w.Len, len(data))
	}
	r.sent[k] = append([]byte(nil), data...)
	return nil
}

// Ordered applies the write the hub put at w.Order in its global order:
// for every node that maps its page (the writer only if w.Loopback), in
// node order, the bytes go into the node's image and an expectation is
// queued for the node's memory.
func (r *Ref) Ordered(w *mchub.Write) error {
	k := sentKey{w.Src, w.Seq}
	data, ok := r.sent[k]
	if !ok {
		return fmt.Errorf("hub ordered %v, which no adapter sent (or it was ordered before)", w)
	}
	delete(r.sent, k)
	r.stats.Ordered++
	page := int(w.Page())
	for n := range r.nodes {
		if n == w.Src && !w.Loopback {
			continue
		}
		frame, ok := r.rx[n][page]
		if !ok {
			continue
		}
		addr := frame + uint64(w.Offset())
		r.apply(n, addr, data, false)
		r.queue[n] = append(r.queue[n], &Expect{Order: w.Order, Src: w.Src, Seq: w.Seq, Addr: addr, Data: data})
		r.stats.Expected++
	}
	return nil
}

// apply writes data at host address addr into node's images (unknown
// marks the bytes unpredictable instead).
func (r *Ref) apply(node int, addr uint64, data []byte, unknown bool) {
	for len(data) > 0 {
		off := addr % mchub.PageSize
		n := min(len(data), int(mchub.PageSize-off))
		if im := r.byFrame[node][addr-off]; im != nil {
			if unknown {
				if im.unknown == nil {
					im.unknown = make([]bool, mchub.PageSize)
				}
				for i := range n {
					im.unknown[int(off)+i] = true
				}
			} else {
				copy(im.data[off:], data[:n])
				if im.unknown != nil {
					clear(im.unknown[off : int(off)+n])
				}
				r.remember(node, addr, n, im)
			}
		}
		addr, data = addr+uint64(n), data[n:]
	}
}

// remember appends the new values of the words bytes [addr, addr+n)
// touched to the history, if kept.
func (r *Ref) remember(node int, addr uint64, n int, im *image) {
	if r.history == nil {
		return
	}
	h := r.history[node]
	for w := addr &^ 3; w < addr+uint64(n); w += 4 {
		off := int(w - im.frame)
		v := uint32(im.data[off]) | uint32(im.data[off+1])<<8 | uint32(im.data[off+2])<<16 | uint32(im.data[off+3])<<24
		if len(h[w]) == 0 {
			h[w] = append(h[w], 0)
		}
		if h[w][len(h[w])-1] != v {
			h[w] = append(h[w], v)
		}
	}
}

// LocalWrite records a store a node's own program made into its receive
// copy (doubling, Figure 1): Ref's image of node takes the bytes too.
// Call it when the store is issued; the scoreboard skips lines still
// dirty in a cache.
func (r *Ref) LocalWrite(node int, addr uint64, data []byte) {
	r.apply(node, addr, data, false)
}

// Image returns n bytes of node's receive image at host address addr:
// its memory as it will be once every write the hub has ordered for it
// has been written there (and its program's stores, LocalWrite). It
// returns nil when the bytes are not in one receive page or some are
// unknown.
func (r *Ref) Image(node int, addr uint64, n int) []byte {
	off := addr % mchub.PageSize
	im := r.byFrame[node][addr-off]
	if im == nil || off+uint64(n) > mchub.PageSize {
		return nil
	}
	if im.unknown != nil && slices.Contains(im.unknown[off:off+uint64(n)], true) {
		return nil
	}
	return slices.Clone(im.data[off : off+uint64(n)])
}

// Dropped records an adapter's drop at node. A write dropped at a
// receiver (RxCRC) consumes its expectation there, and the bytes it would
// have written become unknown in that node's image. A receive filter drop
// (RxUnmapped) is an error when Ref expected the write at that node.
func (r *Ref) Dropped(node int, d mcadapter.Drop) error {
	switch d.Reason {
	case mcadapter.TxInvalidPage:
		r.stats.TxInvalid++
		return nil
	case mcadapter.RxUnmapped:
		r.stats.RxUnmapped++
		if x := r.find(node, d.Order); x >= 0 {
			return fmt.Errorf("node %d dropped %s as unmapped, but its page is mapped for receive", node, r.queue[node][x])
		}
		return nil
	case mcadapter.RxCRC:
		r.stats.RxCRC++
		x := r.find(node, d.Order)
		if x < 0 {
			return nil // a write the node does not receive: only counted
		}
		e := r.queue[node][x]
		r.apply(node, e.Addr, e.Data, true)
		r.remove(node, x)
		r.stats.Lost++
		return nil
	}
	return fmt.Errorf("node %d: drop with unknown reason %v", node, d.Reason)
}

// find returns the index in node's queue of the pending expectation with
// the given order, or -1.
func (r *Ref) find(node int, order uint64) int {
	q := r.queue[node]
	for i := r.head[node]; i < len(q); i++ {
		if q[i] != nil && q[i].Order == order {
			return i
		}
	}
	return -1
}

// remove takes node's expectation at index i out of its queue.
func (r *Ref) remove(node, i int) {
	r.queue[node][i] = nil
	r.compact(node)
}

// compact advances node's head past removed expectations and drops the
// consumed prefix when it is large.
func (r *Ref) compact(node int) {
	q := r.queue[node]
	h := r.head[node]
	for h < len(q) && q[h] == nil {
		h++
	}
	if h > 1024 && h*2 > len(q) {
		q = append(q[:0], q[h:]...)
		h = 0
	}
	r.queue[node], r.head[node] = q, h
}

// Unordered returns the packets sent and never put in the hub's order,
// by source and sequence number: at the end of a run, each is a write
// lost before the hub.
func (r *Ref) Unordered() []*mchub.Write {
	var out []*mchub.Write
	for k, d := range r.sent {
		out = append(out, &mchub.Write{Src: k.src, Seq: k.seq, Len: len(d)})
	}
	slices.SortFunc(out, func(a, b *mchub.Write) int {
		return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Seq, b.Seq))
	})
	return out
}

// Pending returns node's expectations not yet seen in memory, in global
// order (a copy).
func (r *Ref) Pending(node int) []*Expect {
	var out []*Expect
	for _, e := range r.queue[node][r.head[node]:] {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// CheckLoad32 checks a 32-bit value a program loaded from node's receive
// copy at addr (word-aligned): it must be one of the values the word has
// had in Ref's image (no torn word, MC-P18 «32-bits is the smallest unit
// that the 21064 can access atomically»). It needs KeepHistory.
func (r *Ref) CheckLoad32(node int, addr uint64, v uint32) error {
	if r.history == nil {
		return fmt.Errorf("CheckLoad32 without KeepHistory")
	}
	if addr%4 != 0 {
		return fmt.Errorf("node %d: load of %#x is not word-aligned", node, addr)
	}
	h := r.history[node][addr]
	if len(h) == 0 {
		h = []uint32{0}
	}
	for _, x := range h {
		if x == v {
			return nil
		}
	}
	return fmt.Errorf("node %d loaded %#x from %#x, a value the word never had (it had %#x)", node, v, addr, h)
}
