package svm

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/nisim/nisim/host/cpu"
)

// Instruction counts of the protocol's bookkeeping (assumed: the paper gives
// no path lengths; estimates of the C each step stands for). Every access
// to memory the model has (pages, twins, messages, timestamps) is a real
// load or store besides these.
const (
	// instrFault: the SIGSEGV handler's own work: decoding the frame,
	// finding the page, its state, the decision. assumed: 60.
	instrFault = 60
	// instrCopyWord: a page copy's loop per 8-byte word besides its load
	// and store (two adds and a branch). assumed: 3.
	instrCopyWord = 3
	// instrDiffWord: a diff's compare per word besides its two loads
	// (compare, branch, two increments). assumed: 4.
	instrDiffWord = 4
	// instrRun: encoding or applying one run of a diff (its header word,
	// the bounds). assumed: 10.
	instrRun = 10
	// instrPage: a release's or an acquire's work per page (the list, the
	// state). assumed: 20.
	instrPage = 20
)

// alias runs fn with the process's mapping of pages [pg, pg+n) opened for
// the protocol's own loads and stores (a twin copy out of a page the
// process may not read yet), then puts it back. assumed: the runtime's
// second, always read-write mapping of the shared pages; the model has no
// address translation, so it is the same addresses with the permission
// lifted, at no cost.
func (pr *Process) alias(pg int, fn func()) {
	pt := pr.vp.PageTable()
	a := pr.rt.lay.Page(pg)
	was := pt.Perm(a)
	pt.Protect(a, pr.rt.cfg.PageBytes, cpu.PermReadWrite)
	fn()
	pt.Protect(a, pr.rt.cfg.PageBytes, was)
}

// pageFault is the SIGSEGV handler: an invalid page is fetched from its
// home; a write off the home makes the twin (HLRC, HLRC-AU) and puts the
// page on the dirty list; then the mprotect. Requests are served while it
// waits (its exception entry masks interrupts; it unmasks them).
func (pr *Process) pageFault(p *cpu.Proc, f *cpu.Frame) {
	rt, l := pr.rt, pr.rt.lay
	pb := uint64(rt.cfg.PageBytes)
	if f.Addr < l.Shared || f.Addr >= l.Shared+uint64(rt.cfg.Pages)*pb {
		rt.fail(fmt.Errorf("svm: node %d: protection fault at %#x outside the shared pages", pr.id, f.Addr))
		return
	}
	pg := int((f.Addr - l.Shared) / pb)
	if pr.inIntr {
		// The handler's own accesses go through alias; a fault here is
		// the runtime's bug (the handler would fetch, twin and list the
		// page as the program's write).
		rt.fail(fmt.Errorf("svm: node %d: protection fault at %#x inside the notification handler", pr.id, f.Addr))
		return
	}
	pr.timer.to(p.Now(), kindData, &pr.times)
	p.EnableInterrupts()
	step(p, "svm.fault", instrFault)
	if f.Write {
		pr.stats.WriteFaults++
	} else {
		pr.stats.ReadFaults++
	}
	pr.event(p, EvFault, pg, -1, b2i(f.Write))
	if pr.perm[pg] == cpu.PermNone {
		pr.fetch(p, pg)
		pr.perm[pg] = cpu.PermRead
	}
	want := cpu.PermRead
	if f.Write {
		want = cpu.PermReadWrite
		pr.timer.to(p.Now(), kindProtocol, &pr.times)
		if l.Home(pg) != pr.id && rt.cfg.Protocol != AURC && !pr.twin[pg] {
			pr.makeTwin(p, pg)
		}
		if !pr.dirtyBit[pg] {
			pr.dirtyBit[pg] = true
			pr.dirty = append(pr.dirty, pg)
		}
	}
	pr.perm[pg] = want
	p.Mprotect(l.Page(pg), rt.cfg.PageBytes, want)
	pr.event(p, EvMapped, pg, -1, int(want))
	pr.timer.to(p.Now(), kindCompute, &pr.times)
}

// fetch asks page pg's home for the page and waits for its reply: the
// home sends the page into this node's copy, then the reply's seal.
func (pr *Process) fetch(p *cpu.Proc, pg int) {
	home := pr.rt.lay.Home(pg)
	pr.stats.Fetches++
	pr.event(p, EvFetch, pg, home, 0)
	for {
		tag := pr.newTag()
		pr.request(p, home, mPageReq, append([]uint64{uint64(pg), uint64(tag)}, vcWords(pr.vc)...))
		t, src, _ := pr.awaitReply(p, tag, "svm.fetchwait")
		if t == rPage && src == home {
			break
		}
		if t != rRetry || src != home {
			pr.rt.fail(fmt.Errorf("svm: node %d: page %d's reply was type %d from %d", pr.id, pg, t, src))
			return
		}
		// The home's copy lacks updates this node's notices cover: ask
		// again after a pause.
		pr.stats.Retries++
		pr.event(p, EvRetry, pg, home, 0)
		p.Step(cpu.Step{Label: "svm.fetchretry", Instrs: retryInstrs, Poll: true})
	}
	pr.event(p, EvFetched, pg, home, 0)
}

// retryInstrs is the pause before a fetch the home answered «not yet»
// is asked again. assumed: 300 instructions, 5 µs at 60 MHz, about an
// automatic update's latency (3.71 µs, section 4.2) plus its FIFO wait.
const retryInstrs = 300

// serve is the home's side of a fetch, in its notification handler: under
// the automatic-update protocols it first waits until every writer's
// timestamp has reached the requester's vector time (their updates are in
// the home's copy: the NI's FIFO delivered them before the timestamp);
// then the page by deliberate update into the requester's copy, and the
// seal.
func (pr *Process) serve(p *cpu.Proc, src, pg int, tag uint32, vc []uint32) {
	rt, l := pr.rt, pr.rt.lay
	if l.Home(pg) != pr.id {
		rt.fail(fmt.Errorf("svm: node %d: asked by node %d for page %d, homed at %d", pr.id, src, pg, l.Home(pg)))
		return
	}
	if rt.cfg.au() && rt.mut.noFlush == 0 && !pr.tsReady(p, vc) {
		// The handler does not wait (it would hold every other request,
		// and the NI's notification queue, behind the timestamps): the
		// requester asks again.
		pr.stats.NotYet++
		pr.replyTo(p, src, tag, rRetry, nil)
		return
	}
	rt.chk.serve(pr, src, pg, vc)
	pr.event(p, EvServe, pg, src, 0)
	pb := rt.cfg.PageBytes
	first, _ := l.Block(pr.id)
	pr.send(p, l.Page(pg), pr.mine[src], uint64((pg-first)*pb), pb, false)
	pr.replyTo(p, src, tag, rPage, nil)
}

// tsReady loads the timestamp words and reports whether every other
// node's has reached vc.
func (pr *Process) tsReady(p *cpu.Proc, vc []uint32) bool {
	l := pr.rt.lay
	for j, v := range vc {
		if j == pr.id || v == 0 {
			continue
		}
		w := uint32(binary.LittleEndian.Uint64(p.As("svm.ts").Load(l.TS+8*uint64(j), 8)))
		pr.rt.chk.tsSeen(pr, j, w)
		if w < v {
			return false
		}
	}
	return true
}

// tsWait waits until node j's timestamp word is at least vc[j] for every
// other node j (for those with need[j] true, if need is given).
func (pr *Process) tsWait(p *cpu.Proc, vc []uint32, need []bool) {
	l := pr.rt.lay
	for j, v := range vc {
		if j == pr.id || v == 0 || (need != nil && !need[j]) {
			continue
		}
		w := pr.poll(p, "svm.tswait", l.TS+8*uint64(j), func(w uint64) bool { return uint32(w) >= v })
		pr.rt.chk.tsSeen(pr, j, uint32(w))
		pr.event(p, EvTSSeen, -1, j, int(uint32(w)))
	}
}

// makeTwin copies page pg to its twin: real loads and stores.
func (pr *Process) makeTwin(p *cpu.Proc, pg int) {
	l := pr.rt.lay
	pb := uint64(pr.rt.cfg.PageBytes)
	src, dst := l.Page(pg), l.Twin+uint64(pg)*pb
	pr.alias(pg, func() {
		for off := uint64(0); off < pb; off += 8 {
			d := p.As("svm.twin").Load(src+off, 8)
			p.As("svm.twin").Store(dst+off, d)
		}
	})
	step(p, "svm.twin", instrCopyWord*int(pb/8))
	pr.twin[pg] = true
	pr.stats.Twins++
	pr.event(p, EvTwin, pg, -1, 0)
}

// run is a diff's run of changed words: page, first word, values.
type run struct {
	pg, start int
	vals      []uint64
}

// diff compares page pg with its twin word by word (real loads) and
// returns the runs of changed words.
func (pr *Process) diff(p *cpu.Proc, pg int) []run {
	l := pr.rt.lay
	pb := uint64(pr.rt.cfg.PageBytes)
	a, t := l.Page(pg), l.Twin+uint64(pg)*pb
	var out []run
	var cur *run
	for w := 0; w < int(pb/8); w++ {
		v := binary.LittleEndian.Uint64(p.As("svm.diff").Load(a+8*uint64(w), 8))
		o := binary.LittleEndian.Uint64(p.As("svm.diff").Load(t+8*uint64(w), 8))
		if v == o {
			cur = nil
			continue
		}
		if cur == nil {
			out = append(out, run{pg: pg, start: w})
			cur = &out[len(out)-1]
		}
		cur.vals = append(cur.vals, v)
	}
	step(p, "svm.diff", instrDiffWord*int(pb/8)+instrRun*len(out))
	pr.stats.Diffs++
	return out
}

// release closes the process's interval, if it wrote anything: the
// updates reach the homes (HLRC: diffs by deliberate update, acknowledged;
// HLRC-AU: diffs by automatic update, then the timestamps; AURC: the
// timestamps behind the updates already sent), the dirty pages are made
// read-only again, and the interval's write notice joins the log. Under
// the noticesfirst mutation HLRC's diffs are returned to be sent after
// the release's synchronisation message.
func (pr *Process) release(p *cpu.Proc) (later func()) {
	rt := pr.rt
	if len(pr.dirty) == 0 {
		return nil
	}
	back := pr.timer.kind
	pr.timer.to(p.Now(), kindProtocol, &pr.times)
	defer pr.timer.to(p.Now(), back, &pr.times)
	l := rt.lay
	interval := pr.vc[pr.id] + 1
	pages := append([]int(nil), pr.dirty...)
	slices.Sort(pages) // a home's pages consecutive (sendDiffs)
	// The checker learns the interval's pages before any update leaves.
	rt.chk.interval(pr, interval, pages)
	pr.event(p, EvRelease, -1, -1, len(pages))
	step(p, "svm.release", instrPage*len(pages))
	var diffs [][]run
	for _, pg := range pages {
		if l.Home(pg) == pr.id || rt.cfg.Protocol == AURC {
			continue
		}
		runs := pr.diff(p, pg)
		pr.twin[pg] = false
		if rt.hooks.Event != nil {
			words := 0
			for _, r := range runs {
				words += len(r.vals)
			}
			pr.event(p, EvDiff, pg, -1, words)
		}
		switch {
		case rt.cfg.Protocol == HLRCAU:
			pr.auDiff(p, runs)
		case len(runs) > 0:
			diffs = append(diffs, runs)
		}
		if len(runs) == 0 || rt.cfg.Protocol == HLRCAU {
			rt.chk.applied(l.Home(pg), pr.id, interval, pg, rt.cfg.Protocol == HLRCAU)
		}
	}
	send := func() {
		pr.sendDiffs(p, interval, diffs)
	}
	if rt.cfg.au() && rt.mut.noFlush == 0 {
		pr.tsFlush(p, interval)
	}
	// Downgrade: one mprotect per run of consecutive pages.
	for _, r := range ranges(pages) {
		for pg := r[0]; pg < r[1]; pg++ {
			if pr.perm[pg] == cpu.PermReadWrite {
				pr.perm[pg] = cpu.PermRead
			}
		}
		p.Mprotect(l.Page(r[0]), (r[1]-r[0])*rt.cfg.PageBytes, cpu.PermRead)
	}
	if rt.mut.noticesFirst != 0 && len(diffs) > 0 {
		later = send
	} else {
		send()
	}
	bm := bitmapOf(pages, rt.cfg.bitmapWords())
	pr.addEntry(pr.id, pr.vc[pr.id], interval, bm)
	pr.vc[pr.id] = interval
	for _, pg := range pages {
		pr.dirtyBit[pg] = false
	}
	pr.dirty = pr.dirty[:0]
	pr.stats.Intervals++
	pr.event(p, EvInterval, -1, -1, int(interval))
	return later
}

// ranges returns the runs of consecutive pages of a sorted copy of pages,
// as [first, end) pairs.
func ranges(pages []int) [][2]int {
	s := append([]int(nil), pages...)
	for i := 1; i < len(s); i++ {
		for k := i; k > 0 && s[k] < s[k-1]; k-- {
			s[k], s[k-1] = s[k-1], s[k]
		}
	}
	var out [][2]int
	for _, pg := range s {
		if n := len(out); n > 0 && out[n-1][1] == pg {
			out[n-1][1]++
			continue
		}
		out = append(out, [2]int{pg, pg + 1})
	}
	return out
}

// sendDiffs sends HLRC's diffs to their homes, as many runs a message as
// a slot holds, and waits until every home has acknowledged them (the
// write notices must not be acted on before the diffs are applied).
func (pr *Process) sendDiffs(p *cpu.Proc, interval uint32, diffs [][]run) {
	rt, l := pr.rt, pr.rt.lay
	max := l.SlotBytes/8 - 2
	type dmsg struct {
		home    int
		payload []uint64
	}
	var msgs []dmsg
	for _, runs := range diffs {
		home := l.Home(runs[0].pg)
		if rt.mut.dropDiff != 0 {
			pr.stats.Dropped++
			continue
		}
		msg := []uint64{uint64(interval)}
		flush := func() {
			if len(msg) > 1 {
				msgs = append(msgs, dmsg{home, msg})
			}
			msg = []uint64{uint64(interval)}
		}
		for _, r := range runs {
			vals := r.vals
			start := r.start
			for len(vals) > 0 {
				if len(msg)+2 > max {
					flush()
				}
				k := min(len(vals), max-len(msg)-1)
				msg = append(msg, uint64(r.pg)<<32|uint64(start)<<16|uint64(k))
				msg = append(msg, vals[:k]...)
				pr.stats.DiffWords += uint64(k)
				vals, start = vals[k:], start+k
			}
		}
		flush()
	}
	// Diffs are in page order, so a home's are consecutive: the last to
	// each home notifies.
	for i, m := range msgs {
		last := i == len(msgs)-1 || msgs[i+1].home != m.home
		pr.requestN(p, m.home, mDiff, m.payload, last)
		pr.stats.DiffMessages++
	}
	for h := range rt.cfg.Nodes {
		for h != pr.id && pr.acked[h] != pr.window[h] {
			w := pr.poll(p, "svm.diffack", l.Ack+8*uint64(h), func(w uint64) bool { return uint32(w) != pr.acked[h] })
			pr.acked[h] = uint32(w)
		}
	}
	if len(msgs) > 0 {
		pr.event(p, EvAcked, -1, -1, len(msgs))
	}
}

// applyDiff is the home's side of a diff message, in its notification
// handler: each run's words stored into the home's copy.
func (pr *Process) applyDiff(p *cpu.Proc, src int, payload []uint64) {
	rt, l := pr.rt, pr.rt.lay
	interval := uint32(payload[0])
	rest := payload[1:]
	for len(rest) > 0 {
		h := rest[0]
		pg, start, k := int(h>>32), int(h>>16&0xffff), int(h&0xffff)
		if pg >= rt.cfg.Pages || l.Home(pg) != pr.id || k > len(rest)-1 || start+k > rt.cfg.PageBytes/8 {
			rt.fail(fmt.Errorf("svm: node %d: a bad diff run %#x from node %d", pr.id, h, src))
			return
		}
		base := l.Page(pg) + 8*uint64(start)
		// The handler runs in user mode: the home's own mapping of the
		// page may be write-protected (its writes are caught for their
		// notices), so the diff goes in through the runtime's alias.
		pr.alias(pg, func() {
			for i, v := range rest[1 : 1+k] {
				pr.store(p, base+8*uint64(i), le64(v))
			}
		})
		step(p, "svm.apply", instrRun)
		rt.chk.applied(pr.id, src, interval, pg, false)
		pr.event(p, EvApply, pg, src, int(interval))
		rest = rest[1+k:]
	}
}

// auDiff is HLRC-AU's diff: each changed word stored into the page's
// mirror, bound for automatic update to the home's copy.
func (pr *Process) auDiff(p *cpu.Proc, runs []run) {
	l := pr.rt.lay
	pb := uint64(pr.rt.cfg.PageBytes)
	for _, r := range runs {
		base := l.Mirror + uint64(r.pg)*pb + 8*uint64(r.start)
		for i, v := range r.vals {
			p.As("svm.audiff").Store(base+8*uint64(i), le64(v))
		}
		pr.stats.DiffWords += uint64(len(r.vals))
	}
}

// tsFlush stores the new interval into this node's timestamp word at
// every other node, through the pages bound to their timestamp pages: the
// outgoing FIFO sends them behind every update before them.
func (pr *Process) tsFlush(p *cpu.Proc, interval uint32) {
	l := pr.rt.lay
	pb := uint64(pr.rt.cfg.PageBytes)
	for j := range pr.rt.cfg.Nodes {
		if j != pr.id {
			p.As("svm.ts").Store(l.TSOut+uint64(j)*pb+8*uint64(pr.id), le64(uint64(interval)))
		}
	}
	pr.event(p, EvTSFlush, -1, -1, int(interval))
}

// acquire applies a grant's notices (a lock or flag grant, a barrier
// release): pages written in intervals this node has not seen are
// invalidated (after closing the node's own interval if it wrote one of
// them, so its own updates reach the home first), the log and the vector
// time take the notices, and under the automatic-update protocols the
// home waits for the writers' timestamps before it reads its own pages.
func (pr *Process) acquire(p *cpu.Proc, payload []uint64) {
	rt, l := pr.rt, pr.rt.lay
	vc, bms, err := pr.parseNotices(payload)
	if err != nil {
		rt.fail(err)
		return
	}
	bw := rt.cfg.bitmapWords()
	inval := make([]uint64, bw)
	homeNeed := make([]bool, rt.cfg.Nodes)
	if rt.hooks.Event != nil {
		writers := 0
		for j, bm := range bms {
			if bm != nil && j != pr.id {
				writers++
			}
		}
		pr.event(p, EvAcquire, -1, -1, writers)
	}
	for j, bm := range bms {
		if bm == nil || j == pr.id {
			continue
		}
		for w, v := range bm {
			inval[w] |= v
		}
		for pg := range rt.cfg.Pages {
			if hasBit(bm, pg) && l.Home(pg) == pr.id {
				homeNeed[j] = true
				break
			}
		}
	}
	step(p, "svm.acquire", instrNoticeWord*bw*rt.cfg.Nodes)
	for _, pg := range pr.dirty {
		if hasBit(inval, pg) {
			if later := pr.release(p); later != nil {
				later()
			}
			break
		}
	}
	for j := range rt.cfg.Nodes {
		if vc[j] > pr.vc[j] {
			bm := bms[j]
			if bm == nil {
				bm = make([]uint64, bw)
			}
			pr.addEntry(j, pr.vc[j], vc[j], bm)
			pr.vc[j] = vc[j]
		}
	}
	var pages []int
	for pg := range rt.cfg.Pages {
		if hasBit(inval, pg) && l.Home(pg) != pr.id && pr.perm[pg] != cpu.PermNone && rt.mut.skipInvalidate == 0 {
			pr.perm[pg] = cpu.PermNone
			pages = append(pages, pg)
		}
	}
	if len(pages) > 0 {
		step(p, "svm.invalidate", instrPage*len(pages))
		for _, r := range ranges(pages) {
			p.Mprotect(l.Page(r[0]), (r[1]-r[0])*rt.cfg.PageBytes, cpu.PermNone)
		}
		pr.stats.Invalidations += uint64(len(pages))
		pr.event(p, EvInvalidate, pages[0], -1, len(pages))
	}
	if rt.cfg.au() && rt.mut.noFlush == 0 {
		pr.tsWait(p, pr.vc, homeNeed)
	}
	rt.chk.homeRead(pr, inval)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
