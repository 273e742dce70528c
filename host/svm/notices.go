package svm

import "fmt"

// entry is a write notice record: the pages node j wrote in its intervals
// (From, To] (one interval when j made it; a union of several when it
// came in a grant or a barrier arrival).
type entry struct {
	from, to uint32
	bm       []uint64
}

// instrNoticeWord is the bookkeeping per bitmap word of a notice merge or
// union (load, or, store, loop). assumed: 4.
const instrNoticeWord = 4

// addEntry records node j's intervals (from, to] with pages bm, if they
// extend what the log knows (entries are kept in increasing To).
func (pr *Process) addEntry(j int, from, to uint32, bm []uint64) {
	lg := pr.log[j]
	if to <= from || (len(lg) > 0 && lg[len(lg)-1].to >= to) {
		return
	}
	pr.log[j] = append(lg, entry{from: from, to: to, bm: bm})
}

// union returns the pages node j wrote in its intervals (a, b], from the
// log; the log must cover them.
func (pr *Process) union(j int, a, b uint32) []uint64 {
	bm := make([]uint64, pr.rt.cfg.bitmapWords())
	if b <= a {
		return bm
	}
	lg := pr.log[j]
	low := b
	if len(lg) == 0 || lg[len(lg)-1].to < b {
		// (The last entry reaches furthest: entries are kept in
		// increasing To.)
		pr.rt.fail(fmt.Errorf("svm: node %d: the log of node %d's notices ends before interval %d", pr.id, j, b))
		return bm
	}
	for i := len(lg) - 1; i >= 0 && lg[i].to > a; i-- {
		if lg[i].from >= b {
			continue // after (a, b]: not wanted
		}
		for w, v := range lg[i].bm {
			bm[w] |= v
		}
		low = min(low, lg[i].from)
	}
	if low > a {
		pr.rt.fail(fmt.Errorf("svm: node %d: the log of node %d's notices has a gap in (%d, %d]", pr.id, j, a, low))
	}
	return bm
}

// notices builds a grant's payload for a node at vector time from, up to
// vector time to: to, the mask of nodes with a bitmap, the bitmaps.
func (pr *Process) notices(from, to []uint32) []uint64 {
	n := pr.rt.cfg.Nodes
	out := make([]uint64, 0, n+1)
	for _, v := range to {
		out = append(out, uint64(v))
	}
	var mask uint64
	var bms []uint64
	for j := range n {
		if to[j] > from[j] {
			bm := pr.union(j, from[j], to[j])
			mask |= 1 << j
			bms = append(bms, bm...)
		}
	}
	return append(append(out, mask), bms...)
}

// parseNotices splits a grant's payload: the vector time and each node's
// bitmap (nil where none).
func (pr *Process) parseNotices(payload []uint64) ([]uint32, [][]uint64, error) {
	n, bw := pr.rt.cfg.Nodes, pr.rt.cfg.bitmapWords()
	if len(payload) < n+1 {
		return nil, nil, fmt.Errorf("svm: node %d: a %d-word grant is shorter than its header", pr.id, len(payload))
	}
	vc := make([]uint32, n)
	for j := range n {
		vc[j] = uint32(payload[j])
	}
	mask, rest := payload[n], payload[n+1:]
	bms := make([][]uint64, n)
	for j := range n {
		if mask&(1<<j) == 0 {
			continue
		}
		if len(rest) < bw {
			return nil, nil, fmt.Errorf("svm: node %d: a grant's bitmaps are cut short", pr.id)
		}
		bms[j], rest = rest[:bw], rest[bw:]
	}
	return vc, bms, nil
}

func vcWords(vc []uint32) []uint64 {
	out := make([]uint64, len(vc))
	for i, v := range vc {
		out[i] = uint64(v)
	}
	return out
}

func wordsVC(w []uint64) []uint32 {
	out := make([]uint32, len(w))
	for i, v := range w {
		out[i] = uint32(v)
	}
	return out
}

func bitmapOf(pages []int, words int) []uint64 {
	bm := make([]uint64, words)
	for _, pg := range pages {
		bm[pg/64] |= 1 << (pg % 64)
	}
	return bm
}

func hasBit(bm []uint64, pg int) bool { return bm[pg/64]&(1<<(pg%64)) != 0 }
