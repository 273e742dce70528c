package cashmere

import (
	"encoding/binary"

	"github.com/nisim/nisim/host/cpu"
)

// The 2LOffMC variant (section 2.6 «Treatment of Application Data»:
// «These variants place application data in regular node shared memory
// and then use explicit messages to perform diff operations»; section
// 3.3.5: «The cost of an explicit diff, depending on the size, ranges
// from 485–760 μs»). The home copies are plain node memory (no MC
// receive mapping, no remapping at first touch); a diff is a message into
// the sender's bin at the home (the changed words at their offsets in an
// 8 KB image, a bitmap of them, the page, a sequence number, the poll
// flag); the home applies it when it polls (its serving processor: the
// bitmap's words copied into the home copy) and acknowledges it; the
// sender waits for the acknowledgement before its write notices, which
// replaces the MC flush of 2L.

// explicitDiff sends pg's modifications to home on channel ch and waits
// until the home has applied them: channel 0 a flush's diff against the
// twin with its flush-update (under the node's fetch lock, one message
// per node at a time); channel 1 the whole page, an exclusive holder's
// (its caller holds the serving lock, so it applies the diffs sent to its
// own node while it waits).
func (pr *Process) explicitDiff(p *cpu.Proc, pg, home, ch int) {
	rt, ns := pr.rt, pr.ns
	lay := rt.lay
	if ch == 0 {
		pr.lockLocal(p, pr.meta(metaFetchLock))
	}
	at := lay.MsgTx[home][pr.node] + rt.bin(pr.node)
	rt.chk.diffStart(pr, pg)
	var bits [diffBitmapBytes / 8]uint64
	sent := pr.diffRuns(p, pg, "cm.xdiff", ch == 0, ch == 0, func(off uint64, run []byte) {
		pr.txStore(p, at+binDiffImage(ch)+off, run, "cm.xdiff")
		for w := off / 8; w < (off+uint64(len(run)))/8; w++ {
			bits[w/64] |= 1 << (w % 64)
		}
	})
	blk := make([]byte, 0, 8*wordsPerBlock)
	for i := 0; i < len(bits); i += wordsPerBlock {
		blk = blk[:0]
		for _, b := range bits[i : i+wordsPerBlock] {
			blk = binary.LittleEndian.AppendUint64(blk, b)
		}
		pr.txStore(p, at+binDiffBits(ch)+8*uint64(i), append([]byte(nil), blk...), "cm.xdiff")
	}
	ns.diffSent[home][ch]++
	seq := ns.diffSent[home][ch]
	ns.reqSeq[home]++
	pr.txStore(p, at+binDiffPage(ch), le32(uint32(pg)), "cm.xdiff")
	pr.txStore(p, at+binDiffSeq(ch), le32(seq), "cm.xdiff")
	pr.txStore(p, lay.PollTx[home][pr.node], le32(pollValue(pr.node, ns.reqSeq[home])), "cm.pollset")
	p.Fence()
	pr.event(p, EvDiff, pg, home, sent/8)
	ack := lay.MsgRx[pr.node] + rt.bin(home) + binDiffAck(ch)
	for rt.mut.noDiffAck == 0 && p.As("cm.xdiffwait").Load32(ack) != seq {
		if ch == 0 {
			pr.poll(p)
		} else {
			pr.applyDiffs(p)
		}
		p.As("cm.xdiffwait").Compute(spinCycles)
	}
	pr.stats.Diffs++
	if ch == 0 {
		pr.stats.FlushUpdates++
	}
	pr.stats.DataBytes += sent + diffBitmapBytes
	if ch == 0 {
		pr.unlockLocal(p, pr.meta(metaFetchLock))
	}
}

// applyDiffs is the home's side: every new explicit diff in its bins
// copied, word by bitmap word, into the home copy, then acknowledged. Its
// caller holds the node's serving lock.
func (pr *Process) applyDiffs(p *cpu.Proc) {
	rt, ns := pr.rt, pr.ns
	lay := rt.lay
	for s := range rt.cfg.Nodes {
		if s == pr.node {
			continue
		}
		in := lay.MsgRx[pr.node] + rt.bin(s)
		for ch := range 2 {
			seq := p.As("cm.xapply").Load32(in + binDiffSeq(ch))
			if seq == ns.diffSeen[s][ch] {
				continue
			}
			ns.diffSeen[s][ch] = seq
			pg := int(p.Load32(in + binDiffPage(ch)))
			step(p, "cm.xapply", instrRequest)
			if pg < rt.cfg.Pages {
				pr.alias(p, pg, func() {
					dst := pr.pageAddr(pg)
					for i := uint64(0); i < diffBitmapBytes/8; i++ {
						b := binary.LittleEndian.Uint64(p.As("cm.xapply").Load(in+binDiffBits(ch)+8*i, 8))
						n := 0
						for b != 0 {
							n++
							k := uint64(0)
							for b&(1<<k) == 0 {
								k++
							}
							b &^= 1 << k
							off := 8 * (64*i + k)
							pr.store(p, dst+off, p.As("cm.xapply").Load(in+binDiffImage(ch)+off, 8))
						}
						// The bitmap word's test and its words'
						// copy loop (instrCopyWord each).
						step(p, "cm.xapply", instrDiffWord*wordsPerBlock+instrCopyWord*n)
					}
				})
			}
			p.Fence()
			pr.txStore(p, lay.MsgTx[s][pr.node]+rt.bin(pr.node)+binDiffAck(ch), le32(seq), "cm.xack")
			p.Fence()
		}
	}
}
